//! Resolved expressions: parameters folded to constants, indices unrolled, variables mapped to
//! state slots. Constructors simplify as they build (constant folding, flattening, `x^1 = x`,
//! `0 * x = 0`), and [`derivative`] differentiates symbolically with the same constructors.

/// A scalar function of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Fun {
    Exp,
    Log,
    Sqrt,
    Abs,
    /// `sign(x)` in `{-1, 0, 1}` (the derivative of `abs`; not in the language).
    Sign,
}

impl Fun {
    pub(crate) fn apply(self, v: f64) -> f64 {
        match self {
            Fun::Exp => v.exp(),
            Fun::Log => v.ln(),
            Fun::Sqrt => v.sqrt(),
            Fun::Abs => v.abs(),
            Fun::Sign => sign(v),
        }
    }
}

#[inline]
pub(crate) fn sign(v: f64) -> f64 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// A resolved expression in the state slots `x[i]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Const(f64),
    Var(u32),
    /// n-ary sum, at least two terms.
    Add(Vec<Node>),
    /// n-ary product, at least two factors.
    Mul(Vec<Node>),
    Neg(Box<Node>),
    Div(Box<Node>, Box<Node>),
    PowI(Box<Node>, i32),
    Pow(Box<Node>, Box<Node>),
    Fun(Fun, Box<Node>),
    Min(Box<Node>, Box<Node>),
    Max(Box<Node>, Box<Node>),
    /// `[a, b, t, e]`: `t` if `a <= b`, else `e` (derivatives of `min` and `max`).
    Cond(Box<[Node; 4]>),
}

use Node::Const;

impl Node {
    pub(crate) fn is_zero(&self) -> bool {
        matches!(self, Const(c) if *c == 0.0)
    }

    pub(crate) fn as_const(&self) -> Option<f64> {
        match self {
            Const(c) => Some(*c),
            _ => None,
        }
    }

    /// Value at the state `x` (slots).
    pub(crate) fn eval(&self, x: &[f64]) -> f64 {
        match self {
            Const(c) => *c,
            Node::Var(i) => x[*i as usize],
            Node::Add(t) => t.iter().fold(0.0, |s, t| s + t.eval(x)),
            Node::Mul(f) => f.iter().fold(1.0, |p, f| p * f.eval(x)),
            Node::Neg(a) => -a.eval(x),
            Node::Div(a, b) => a.eval(x) / b.eval(x),
            Node::PowI(a, n) => a.eval(x).powi(*n),
            Node::Pow(a, b) => a.eval(x).powf(b.eval(x)),
            Node::Fun(f, a) => f.apply(a.eval(x)),
            Node::Min(a, b) => a.eval(x).min(b.eval(x)),
            Node::Max(a, b) => a.eval(x).max(b.eval(x)),
            Node::Cond(c) => {
                if c[0].eval(x) <= c[1].eval(x) {
                    c[2].eval(x)
                } else {
                    c[3].eval(x)
                }
            }
        }
    }

    /// Number of nodes.
    pub(crate) fn size(&self) -> usize {
        1 + match self {
            Const(_) | Node::Var(_) => 0,
            Node::Add(t) | Node::Mul(t) => t.iter().map(Node::size).sum(),
            Node::Neg(a) | Node::PowI(a, _) | Node::Fun(_, a) => a.size(),
            Node::Div(a, b) | Node::Pow(a, b) | Node::Min(a, b) | Node::Max(a, b) => a.size() + b.size(),
            Node::Cond(c) => c.iter().map(Node::size).sum(),
        }
    }

    /// Appends the slots this expression reads.
    pub(crate) fn vars(&self, out: &mut Vec<u32>) {
        match self {
            Const(_) => {}
            Node::Var(i) => out.push(*i),
            Node::Add(t) | Node::Mul(t) => t.iter().for_each(|t| t.vars(out)),
            Node::Neg(a) | Node::PowI(a, _) | Node::Fun(_, a) => a.vars(out),
            Node::Div(a, b) | Node::Pow(a, b) | Node::Min(a, b) | Node::Max(a, b) => {
                a.vars(out);
                b.vars(out);
            }
            Node::Cond(c) => c.iter().for_each(|t| t.vars(out)),
        }
    }

    /// The structure of the expression with the slots and constants left out: two
    /// expressions with the same shape compile to one vectorised program.
    pub(crate) fn shape(&self, out: &mut Vec<u32>) {
        match self {
            Const(_) => out.push(0),
            Node::Var(_) => out.push(1),
            Node::Add(t) | Node::Mul(t) => {
                out.extend([if matches!(self, Node::Add(_)) { 2 } else { 3 }, t.len() as u32]);
                t.iter().for_each(|t| t.shape(out));
            }
            Node::Neg(a) => {
                out.push(4);
                a.shape(out);
            }
            Node::PowI(a, n) => {
                out.extend([6, *n as u32]);
                a.shape(out);
            }
            Node::Fun(f, a) => {
                out.extend([8, *f as u32]);
                a.shape(out);
            }
            Node::Div(a, b) | Node::Pow(a, b) | Node::Min(a, b) | Node::Max(a, b) => {
                out.push(match self {
                    Node::Div(..) => 5,
                    Node::Pow(..) => 7,
                    Node::Min(..) => 9,
                    _ => 10,
                });
                a.shape(out);
                b.shape(out);
            }
            Node::Cond(c) => {
                out.push(11);
                c.iter().for_each(|t| t.shape(out));
            }
        }
    }
}

/// `sum(terms)`: flattened, constants folded into one leading constant, zeros dropped.
pub(crate) fn add(terms: Vec<Node>) -> Node {
    let mut out = Vec::with_capacity(terms.len() + 1);
    let mut c = 0.0;
    let mut has_const = false;
    let mut push = |t: Node, out: &mut Vec<Node>| match t {
        Const(v) => {
            c += v;
            has_const = true;
        }
        t => out.push(t),
    };
    for t in terms {
        match t {
            Node::Add(inner) => inner.into_iter().for_each(|t| push(t, &mut out)),
            t => push(t, &mut out),
        }
    }
    if has_const && (c != 0.0 || out.is_empty()) {
        out.insert(0, Const(c));
    }
    match out.len() {
        0 => Const(0.0),
        1 => out.pop().expect("one term"),
        _ => Node::Add(out),
    }
}

/// `a - b`.
pub(crate) fn sub(a: Node, b: Node) -> Node {
    add(vec![a, neg(b)])
}

/// `-a`.
pub(crate) fn neg(a: Node) -> Node {
    match a {
        Const(v) => Const(-v),
        Node::Neg(b) => *b,
        Node::Mul(mut f) if matches!(f[0], Const(_)) => {
            if let Const(v) = &mut f[0] {
                *v = -*v;
            }
            if f[0] == Const(1.0) {
                f.remove(0);
                if f.len() == 1 {
                    return f.pop().expect("one factor");
                }
            }
            Node::Mul(f)
        }
        a => Node::Neg(Box::new(a)),
    }
}

/// `prod(factors)`: flattened, constants folded into one leading constant; a zero constant
/// makes the product zero (the state is finite).
pub(crate) fn mul(factors: Vec<Node>) -> Node {
    let mut out = Vec::with_capacity(factors.len() + 1);
    let mut c = 1.0;
    for f in factors {
        match f {
            Const(v) => c *= v,
            Node::Mul(inner) => {
                for g in inner {
                    match g {
                        Const(v) => c *= v,
                        g => out.push(g),
                    }
                }
            }
            f => out.push(f),
        }
    }
    if c == 0.0 || out.is_empty() {
        return Const(c);
    }
    let negate = c == -1.0;
    if c != 1.0 && !negate {
        out.insert(0, Const(c));
    }
    let p = if out.len() == 1 { out.pop().expect("one factor") } else { Node::Mul(out) };
    if negate {
        neg(p)
    } else {
        p
    }
}

/// `a / b`.
pub(crate) fn div(a: Node, b: Node) -> Node {
    match (&a, &b) {
        (Const(x), Const(y)) => Const(x / y),
        (_, Const(y)) if *y == 1.0 => a,
        (Const(x), _) if *x == 0.0 => Const(0.0),
        _ => Node::Div(Box::new(a), Box::new(b)),
    }
}

/// `a^n` for an integer `n`.
pub(crate) fn powi(a: Node, n: i32) -> Node {
    match (a, n) {
        (_, 0) => Const(1.0),
        (a, 1) => a,
        (Const(v), n) => Const(v.powi(n)),
        (Node::PowI(b, m), n) if m.checked_mul(n).is_some() => powi(*b, m * n),
        (a, n) => Node::PowI(Box::new(a), n),
    }
}

/// `a^b`; an integral constant exponent becomes [`powi`].
pub(crate) fn pow(a: Node, b: Node) -> Node {
    match (&a, &b) {
        (Const(x), Const(y)) => Const(x.powf(*y)),
        (_, Const(y)) if y.fract() == 0.0 && y.abs() <= 1024.0 => powi(a, *y as i32),
        (Const(x), _) if *x == 1.0 => Const(1.0),
        _ => Node::Pow(Box::new(a), Box::new(b)),
    }
}

/// `f(a)`.
pub(crate) fn fun(f: Fun, a: Node) -> Node {
    match a {
        Const(v) => Const(f.apply(v)),
        a => Node::Fun(f, Box::new(a)),
    }
}

/// `min(a, b)`.
pub(crate) fn min(a: Node, b: Node) -> Node {
    match (&a, &b) {
        (Const(x), Const(y)) => Const(x.min(*y)),
        _ if a == b => a,
        _ => Node::Min(Box::new(a), Box::new(b)),
    }
}

/// `max(a, b)`.
pub(crate) fn max(a: Node, b: Node) -> Node {
    match (&a, &b) {
        (Const(x), Const(y)) => Const(x.max(*y)),
        _ if a == b => a,
        _ => Node::Max(Box::new(a), Box::new(b)),
    }
}

/// `t` if `a <= b`, else `e`.
pub(crate) fn cond(a: Node, b: Node, t: Node, e: Node) -> Node {
    if t == e {
        return t;
    }
    match (&a, &b) {
        (Const(x), Const(y)) => {
            if x <= y {
                t
            } else {
                e
            }
        }
        _ => Node::Cond(Box::new([a, b, t, e])),
    }
}

/// The partial derivatives of `node` with respect to the slots it reads, `(slot, d node / d
/// x[slot])` in increasing slot order, each the node [`derivative`] gives. A sum differentiates
/// only the terms that read each slot, and a product only the factors, so that a sum of `n`
/// slots (a conservation law's eliminated variable, `1 - x_1 - ... - x_n`, inside a rate)
/// costs `O(n log n)` for all its derivatives instead of `O(n^2)` slot by slot.
pub(crate) fn gradient(node: &Node) -> Vec<(u32, Node)> {
    match node {
        Const(_) => Vec::new(),
        Node::Var(i) => vec![(*i, Const(1.0))],
        Node::Neg(a) => gradient(a).into_iter().map(|(j, d)| (j, neg(d))).collect(),
        Node::Add(t) => {
            let mut by_slot: std::collections::BTreeMap<u32, Vec<Node>> = std::collections::BTreeMap::new();
            for term in t {
                for (j, d) in gradient(term) {
                    by_slot.entry(j).or_default().push(d);
                }
            }
            by_slot.into_iter().map(|(j, terms)| (j, add(terms))).collect()
        }
        Node::Mul(f) => {
            let mut by_slot: std::collections::BTreeMap<u32, Vec<Node>> = std::collections::BTreeMap::new();
            for (k, fk) in f.iter().enumerate() {
                for (j, dk) in gradient(fk) {
                    if dk.is_zero() {
                        continue;
                    }
                    // the other factors cloned, not factor k (replaced by dk): a factor that
                    // reads every entry (a conservation law's eliminated variable, `1 - sum
                    // x_i`) was cloned once per entry, quadratic in the entries
                    let g: Vec<Node> = f.iter().enumerate().map(|(i, fi)| if i == k { dk.clone() } else { fi.clone() }).collect();
                    by_slot.entry(j).or_default().push(mul(g));
                }
            }
            by_slot.into_iter().map(|(j, terms)| (j, add(terms))).collect()
        }
        _ => {
            let mut vars = Vec::new();
            node.vars(&mut vars);
            vars.sort_unstable();
            vars.dedup();
            vars.into_iter().map(|j| (j, derivative(node, j))).collect()
        }
    }
}

/// `d node / d x[j]`, symbolic, simplified by the constructors above. `min`/`max` (and
/// `abs`) are differentiated piecewise: at a tie the derivative of the first argument.
pub(crate) fn derivative(node: &Node, j: u32) -> Node {
    let d = |n: &Node| derivative(n, j);
    match node {
        Const(_) => Const(0.0),
        Node::Var(i) => Const(if *i == j { 1.0 } else { 0.0 }),
        Node::Add(t) => add(t.iter().map(d).collect()),
        Node::Mul(f) => {
            let mut terms = Vec::new();
            for (k, fk) in f.iter().enumerate() {
                let dk = d(fk);
                if dk.is_zero() {
                    continue;
                }
                let mut g: Vec<Node> = f.clone();
                g[k] = dk;
                terms.push(mul(g));
            }
            add(terms)
        }
        Node::Neg(a) => neg(d(a)),
        Node::Div(a, b) => {
            let (da, db) = (d(a), d(b));
            if db.is_zero() {
                div(da, (**b).clone())
            } else {
                // (a' b - a b') / b^2
                div(sub(mul(vec![da, (**b).clone()]), mul(vec![(**a).clone(), db])), powi((**b).clone(), 2))
            }
        }
        Node::PowI(a, n) => mul(vec![Const(*n as f64), powi((**a).clone(), n - 1), d(a)]),
        Node::Pow(a, b) => {
            let (da, db) = (d(a), d(b));
            let (a, b) = ((**a).clone(), (**b).clone());
            if db.is_zero() {
                // b a^(b-1) a'
                mul(vec![b.clone(), pow(a, add(vec![b, Const(-1.0)])), da])
            } else if da.is_zero() {
                // a^b ln(a) b'
                mul(vec![pow(a.clone(), b), fun(Fun::Log, a), db])
            } else {
                // a^b (b' ln a + b a' / a)
                let inner = add(vec![mul(vec![db, fun(Fun::Log, a.clone())]), div(mul(vec![b.clone(), da]), a.clone())]);
                mul(vec![pow(a, b), inner])
            }
        }
        Node::Fun(f, a) => {
            let da = d(a);
            if da.is_zero() {
                return Const(0.0);
            }
            let a = (**a).clone();
            match f {
                Fun::Exp => mul(vec![fun(Fun::Exp, a), da]),
                Fun::Log => div(da, a),
                Fun::Sqrt => div(da, mul(vec![Const(2.0), fun(Fun::Sqrt, a)])),
                Fun::Abs => mul(vec![fun(Fun::Sign, a), da]),
                Fun::Sign => Const(0.0),
            }
        }
        Node::Min(a, b) => cond((**a).clone(), (**b).clone(), d(a), d(b)),
        Node::Max(a, b) => cond((**a).clone(), (**b).clone(), d(b), d(a)),
        Node::Cond(c) => cond(c[0].clone(), c[1].clone(), d(&c[2]), d(&c[3])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Node::Var;

    #[test]
    fn constructors_simplify() {
        assert_eq!(add(vec![Const(1.0), Const(2.0)]), Const(3.0));
        assert_eq!(add(vec![Var(0), Const(0.0)]), Var(0));
        assert_eq!(mul(vec![Const(2.0), Var(1), Const(0.5)]), Var(1));
        assert_eq!(mul(vec![Const(0.0), Var(1)]), Const(0.0));
        assert_eq!(mul(vec![Const(-1.0), Var(1)]), Node::Neg(Box::new(Var(1))));
        assert_eq!(powi(powi(Var(0), 2), 3), powi(Var(0), 6));
        assert_eq!(pow(Var(0), Const(2.0)), powi(Var(0), 2));
        assert_eq!(neg(neg(Var(0))), Var(0));
        assert_eq!(sub(Var(0), Var(0)), add(vec![Var(0), neg(Var(0))]));
    }

    /// The gradient is the slot-by-slot derivative, node for node, on sums, products,
    /// negations and the other nodes, and for a sum of many slots.
    #[test]
    fn the_gradient_is_the_derivative_slot_by_slot() {
        let (x0, x1, x2) = (Var(0), Var(1), Var(2));
        let f = add(vec![
            mul(vec![Const(0.9), x0.clone(), sub(x1.clone(), powi(x2.clone(), 2))]),
            neg(mul(vec![x1.clone(), fun(Fun::Exp, x0.clone())])),
            div(x2.clone(), add(vec![Const(1.0), x0.clone()])),
            min(x0.clone(), x2.clone()),
            Const(3.0),
        ]);
        let long = sub(Const(1.0), add((0..500).map(Var).collect()));
        for node in [f, long, mul(vec![x1.clone(), x1.clone()]), Const(2.0)] {
            let mut vars = Vec::new();
            node.vars(&mut vars);
            vars.sort_unstable();
            vars.dedup();
            let slot_by_slot: Vec<(u32, Node)> = vars.iter().map(|&j| (j, derivative(&node, j))).collect();
            assert_eq!(gradient(&node), slot_by_slot);
        }
    }

    #[test]
    fn derivatives_match_differences() {
        // f = 0.9 (x0^2 - x1^2) + exp(x0 x1) / (1 + x1) + min(x0, x1)^1.5 + sqrt(x0) + abs(x0 - 0.7)
        let x0 = Var(0);
        let x1 = Var(1);
        let f = add(vec![
            mul(vec![Const(0.9), sub(powi(x0.clone(), 2), powi(x1.clone(), 2))]),
            div(fun(Fun::Exp, mul(vec![x0.clone(), x1.clone()])), add(vec![Const(1.0), x1.clone()])),
            pow(min(x0.clone(), x1.clone()), Const(1.5)),
            fun(Fun::Sqrt, x0.clone()),
            fun(Fun::Abs, sub(x0.clone(), Const(0.7))),
            pow(x1.clone(), x0.clone()),
        ]);
        for x in [[0.3, 0.6], [0.8, 0.2], [0.55, 0.9]] {
            for j in 0..2u32 {
                let d = derivative(&f, j).eval(&x);
                let h = 1e-6;
                let (mut xp, mut xm) = (x, x);
                xp[j as usize] += h;
                xm[j as usize] -= h;
                let fd = (f.eval(&xp) - f.eval(&xm)) / (2.0 * h);
                assert!((d - fd).abs() < 1e-7, "x = {x:?}, j = {j}: {d} vs {fd}");
            }
        }
    }
}
