//! The rates one transition instance at a time, for event-driven simulation: each rate
//! expression compiled once to a flat postfix program (a short instruction list run on a small
//! stack, no recursion, no allocation), with the state slots it reads. A simulator that knows
//! which slots an event changed re-evaluates only the rates that read them (the dependency
//! graph of Gibson and Bruck's next-reaction method, J. Phys. Chem. A 104, 2000).
//!
//! The common rate shapes (a constant, `c x_i`, `c (x_i - x_j)`, `c (a - x_j)`, mass-action
//! products `c x_i x_j`, `(a + b x_i) x_j`, ...) are recognised in the compiled program and
//! evaluated by one `match` ([`Form`]) with the program's own operations in its own order, so
//! they give the interpreter's value bit for bit without its dispatch per instruction.

use super::node::{sign, Fun, Node};
use crate::RateForm;

/// Stack depth of the flat programs; deeper expressions are evaluated as trees.
const STACK: usize = 16;

#[derive(Debug, Clone, Copy)]
enum Ins {
    Const(f64),
    Var(u32),
    Add,
    Sub,
    Mul,
    Div,
    AddC(f64),
    MulC(f64),
    Neg,
    PowI(i32),
    Pow,
    Fun(Fun),
    Min,
    Max,
    /// Pops `a, b, t, e`: `t` if `a <= b`, else `e`.
    Cond,
}

/// A rate program of a common shape, evaluated without the interpreter: each variant performs
/// the operations of the postfix program it was recognised from, in the same order (so the
/// same value to the bit). `i`, `j`: state slots; `c`, `a`, `b`: constants.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    /// `c`.
    Const(f64),
    /// `x_i`.
    Var(u32),
    /// `c * x_i` (also `x_i * c`: the product is commutative to the bit).
    Scale(f64, u32),
    /// `x_i - x_j`.
    Diff(u32, u32),
    /// `c * (x_i - x_j)`.
    ScaleDiff(f64, u32, u32),
    /// `a - x_j`.
    Rsub(f64, u32),
    /// `c * (a - x_j)`.
    ScaleRsub(f64, f64, u32),
    /// `c * ((a - x_i) - x_j)` (a conservation law's eliminated entry, scaled).
    ScaleRsub2(f64, f64, u32, u32),
    /// `x_i * x_j`.
    Prod(u32, u32),
    /// `(c * x_i) * x_j`.
    ScaleProd(f64, u32, u32),
    /// `(a + b * x_i) * x_j`.
    AffineProd(f64, f64, u32, u32),
    /// `c * (x_i^2 - x_j^2)` (JSQ(2)'s arrivals; `x^2` as `powi(2)`, which is `x * x`).
    ScaleDiffSq(f64, u32, u32),
    /// Anything else: the postfix program (or the tree when too deep).
    Program,
}

impl Form {
    /// The shape of the postfix program `code`, or [`Form::Program`].
    fn of(code: &[Ins]) -> Form {
        use Ins::*;
        match *code {
            [Const(c)] => Form::Const(c),
            [Var(i)] => Form::Var(i),
            [Const(c), Var(i), Mul] | [Var(i), MulC(c)] => Form::Scale(c, i),
            [Var(i), Var(j), Sub] => Form::Diff(i, j),
            [Const(c), Var(i), Var(j), Sub, Mul] | [Var(i), Var(j), Sub, MulC(c)] => Form::ScaleDiff(c, i, j),
            [Const(a), Var(j), Sub] => Form::Rsub(a, j),
            [Const(c), Const(a), Var(j), Sub, Mul] | [Const(a), Var(j), Sub, MulC(c)] => Form::ScaleRsub(c, a, j),
            [Const(c), Const(a), Var(i), Sub, Var(j), Sub, Mul] | [Const(a), Var(i), Sub, Var(j), Sub, MulC(c)] => {
                Form::ScaleRsub2(c, a, i, j)
            }
            [Var(i), Var(j), Mul] => Form::Prod(i, j),
            [Const(c), Var(i), Mul, Var(j), Mul] | [Var(i), MulC(c), Var(j), Mul] => Form::ScaleProd(c, i, j),
            [Const(a), Const(b), Var(i), Mul, Add, Var(j), Mul] | [Const(a), Var(i), MulC(b), Add, Var(j), Mul] => {
                Form::AffineProd(a, b, i, j)
            }
            [Var(i), PowI(2), Var(j), PowI(2), Sub] => Form::ScaleDiffSq(1.0, i, j),
            [Const(c), Var(i), PowI(2), Var(j), PowI(2), Sub, Mul] | [Var(i), PowI(2), Var(j), PowI(2), Sub, MulC(c)] => {
                Form::ScaleDiffSq(c, i, j)
            }
            _ => Form::Program,
        }
    }

    /// The same shape as a [`RateForm`] (`None` for [`Form::Program`]).
    fn rate_form(self) -> Option<RateForm> {
        let f = |a, b, i: Option<u32>, d, j: Option<u32>, e, k: Option<u32>| {
            let u = |i: Option<u32>| i.map(|i| i as usize);
            Some(RateForm { a, b, i: u(i), i2: None, d, j: u(j), j2: None, e, k: u(k) })
        };
        match self {
            Form::Const(c) => f(c, 0.0, None, 0.0, None, 1.0, None),
            Form::Var(i) => f(0.0, 1.0, Some(i), 0.0, None, 1.0, None),
            Form::Scale(c, i) => f(0.0, 1.0, Some(i), 0.0, None, c, None),
            Form::Diff(i, j) => f(0.0, 1.0, Some(i), 1.0, Some(j), 1.0, None),
            Form::ScaleDiff(c, i, j) => f(0.0, 1.0, Some(i), 1.0, Some(j), c, None),
            Form::Rsub(a, j) => f(a, 0.0, None, 1.0, Some(j), 1.0, None),
            Form::ScaleRsub(c, a, j) => f(a, 0.0, None, 1.0, Some(j), c, None),
            Form::ScaleRsub2(c, a, i, j) => f(a, -1.0, Some(i), 1.0, Some(j), c, None),
            Form::Prod(i, j) => f(0.0, 1.0, Some(i), 0.0, None, 1.0, Some(j)),
            Form::ScaleProd(c, i, j) => f(0.0, c, Some(i), 0.0, None, 1.0, Some(j)),
            Form::AffineProd(a, b, i, j) => f(a, b, Some(i), 0.0, None, 1.0, Some(j)),
            Form::ScaleDiffSq(c, i, j) => {
                let u = |i: u32| Some(i as usize);
                Some(RateForm { a: 0.0, b: 1.0, i: u(i), i2: u(i), d: 1.0, j: u(j), j2: u(j), e: c, k: None })
            }
            Form::Program => None,
        }
    }

    /// The value at `x` (`None` for [`Form::Program`]).
    #[inline(always)]
    fn eval(self, x: &[f64]) -> Option<f64> {
        let v = |i: u32| x[i as usize];
        Some(match self {
            Form::Const(c) => c,
            Form::Var(i) => v(i),
            Form::Scale(c, i) => c * v(i),
            Form::Diff(i, j) => v(i) - v(j),
            Form::ScaleDiff(c, i, j) => c * (v(i) - v(j)),
            Form::Rsub(a, j) => a - v(j),
            Form::ScaleRsub(c, a, j) => c * (a - v(j)),
            Form::ScaleRsub2(c, a, i, j) => c * ((a - v(i)) - v(j)),
            Form::Prod(i, j) => v(i) * v(j),
            Form::ScaleProd(c, i, j) => (c * v(i)) * v(j),
            Form::AffineProd(a, b, i, j) => (a + b * v(i)) * v(j),
            Form::ScaleDiffSq(c, i, j) => c * (v(i).powi(2) - v(j).powi(2)),
            Form::Program => return None,
        })
    }
}

/// One program per transition instance: `code[ptr[l]..ptr[l + 1]]`, or the expression itself
/// when it is too deep for the stack (`deep[l]`), its [`Form`] when it has a common shape, and
/// the slots it reads.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlatRates {
    forms: Vec<Form>,
    code: Vec<Ins>,
    ptr: Vec<usize>,
    deep: Vec<Option<Node>>,
    reads: Vec<usize>,
    reads_ptr: Vec<usize>,
}

impl FlatRates {
    /// Compiles the rate of every instance.
    pub(crate) fn compile(rates: &[Node]) -> FlatRates {
        let mut f = FlatRates { ptr: vec![0], reads_ptr: vec![0], ..Default::default() };
        let mut vars = Vec::new();
        for rate in rates {
            let start = f.code.len();
            let depth = emit(rate, &mut f.code);
            if depth > STACK {
                f.code.truncate(start);
                f.deep.push(Some(rate.clone()));
                f.forms.push(Form::Program);
            } else {
                f.deep.push(None);
                f.forms.push(Form::of(&f.code[start..]));
            }
            f.ptr.push(f.code.len());
            vars.clear();
            rate.vars(&mut vars);
            vars.sort_unstable();
            vars.dedup();
            f.reads.extend(vars.iter().map(|&v| v as usize));
            f.reads_ptr.push(f.reads.len());
        }
        f
    }

    /// The slots the rate of instance `l` reads.
    pub(crate) fn reads(&self, l: usize) -> &[usize] {
        &self.reads[self.reads_ptr[l]..self.reads_ptr[l + 1]]
    }

    /// The rate of instance `l` at `x`: its [`Form`], else its program.
    #[inline(always)]
    pub(crate) fn rate(&self, l: usize, x: &[f64]) -> f64 {
        match self.forms[l].eval(x) {
            Some(r) => r,
            None => self.program(l, x),
        }
    }

    /// The rate of instance `l` as a [`RateForm`], when it has a [`Form`].
    pub(crate) fn form(&self, l: usize) -> Option<RateForm> {
        self.forms[l].rate_form()
    }

    /// The rates of the instances `ls` at `x` into `out` (the same length), as
    /// [`rate`](Self::rate) gives them one at a time.
    pub(crate) fn rates(&self, ls: &[usize], x: &[f64], out: &mut [f64]) {
        for (o, &l) in out.iter_mut().zip(ls) {
            *o = self.rate(l, x);
        }
    }

    /// The rate of instance `l` at `x` by its postfix program (or its tree when too deep).
    #[inline(never)]
    fn program(&self, l: usize, x: &[f64]) -> f64 {
        if let Some(node) = &self.deep[l] {
            return node.eval(x);
        }
        let mut st = [0.0f64; STACK];
        let mut sp = 0usize;
        for ins in &self.code[self.ptr[l]..self.ptr[l + 1]] {
            match *ins {
                Ins::Const(c) => {
                    st[sp] = c;
                    sp += 1;
                }
                Ins::Var(i) => {
                    st[sp] = x[i as usize];
                    sp += 1;
                }
                Ins::AddC(c) => st[sp - 1] += c,
                Ins::MulC(c) => st[sp - 1] *= c,
                Ins::Neg => st[sp - 1] = -st[sp - 1],
                Ins::PowI(n) => st[sp - 1] = st[sp - 1].powi(n),
                Ins::Fun(f) => {
                    st[sp - 1] = match f {
                        Fun::Exp => st[sp - 1].exp(),
                        Fun::Log => st[sp - 1].ln(),
                        Fun::Sqrt => st[sp - 1].sqrt(),
                        Fun::Abs => st[sp - 1].abs(),
                        Fun::Sign => sign(st[sp - 1]),
                    }
                }
                Ins::Cond => {
                    sp -= 3;
                    let (a, b, t, e) = (st[sp - 1], st[sp], st[sp + 1], st[sp + 2]);
                    st[sp - 1] = if a <= b { t } else { e };
                }
                bin => {
                    sp -= 1;
                    let (a, b) = (st[sp - 1], st[sp]);
                    st[sp - 1] = match bin {
                        Ins::Add => a + b,
                        Ins::Sub => a - b,
                        Ins::Mul => a * b,
                        Ins::Div => a / b,
                        Ins::Pow => a.powf(b),
                        Ins::Min => a.min(b),
                        _ => a.max(b),
                    };
                }
            }
        }
        st[0]
    }
}

/// Appends the postfix code of `node`; returns the stack depth it needs.
fn emit(node: &Node, code: &mut Vec<Ins>) -> usize {
    match node {
        Node::Const(c) => {
            code.push(Ins::Const(*c));
            1
        }
        Node::Var(i) => {
            code.push(Ins::Var(*i));
            1
        }
        Node::Add(terms) => {
            // a sum folds left to right as `Node::eval` and the drift programs do; a constant
            // term is an immediate, a negated term a subtraction
            let mut depth = emit(&terms[0], code);
            for t in &terms[1..] {
                match t {
                    Node::Const(c) => code.push(Ins::AddC(*c)),
                    Node::Neg(a) => {
                        depth = depth.max(1 + emit(a, code));
                        code.push(Ins::Sub);
                    }
                    t => {
                        depth = depth.max(1 + emit(t, code));
                        code.push(Ins::Add);
                    }
                }
            }
            depth
        }
        Node::Mul(factors) => {
            let mut depth = emit(&factors[0], code);
            for f in &factors[1..] {
                match f {
                    Node::Const(c) => code.push(Ins::MulC(*c)),
                    f => {
                        depth = depth.max(1 + emit(f, code));
                        code.push(Ins::Mul);
                    }
                }
            }
            depth
        }
        Node::Neg(a) => {
            let d = emit(a, code);
            code.push(Ins::Neg);
            d
        }
        Node::PowI(a, n) => {
            let d = emit(a, code);
            code.push(Ins::PowI(*n));
            d
        }
        Node::Fun(f, a) => {
            let d = emit(a, code);
            code.push(Ins::Fun(*f));
            d
        }
        Node::Div(a, b) | Node::Pow(a, b) | Node::Min(a, b) | Node::Max(a, b) => {
            let da = emit(a, code);
            let db = emit(b, code);
            code.push(match node {
                Node::Div(..) => Ins::Div,
                Node::Pow(..) => Ins::Pow,
                Node::Min(..) => Ins::Min,
                _ => Ins::Max,
            });
            da.max(1 + db)
        }
        Node::Cond(c) => {
            let mut depth = 0;
            for (k, t) in c.iter().enumerate() {
                depth = depth.max(k + emit(t, code));
            }
            code.push(Ins::Cond);
            depth
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::node::{add, cond, div, fun, max, min, mul, neg, pow, powi, sub};
    use super::*;

    /// Every node kind, flat against the tree evaluation, at a few states.
    #[test]
    fn flat_programs_agree_with_the_tree() {
        let v = |i| Node::Var(i);
        let c = Node::Const;
        let exprs = vec![
            mul(vec![c(0.9), sub(v(0), v(1))]),
            add(vec![v(0), c(0.25), neg(mul(vec![v(1), v(2)]))]),
            div(powi(v(2), 3), add(vec![c(1.0), v(0)])),
            pow(add(vec![v(0), c(0.5)]), v(1)),
            fun(Fun::Exp, neg(v(2))),
            min(v(0), max(v(1), mul(vec![c(2.0), v(2)]))),
            cond(v(0), v(1), mul(vec![v(2), v(2)]), c(3.0)),
            fun(Fun::Sqrt, fun(Fun::Abs, sub(v(1), v(2)))),
        ];
        let f = FlatRates::compile(&exprs);
        for x in [[0.1, 0.7, 0.3], [0.9, 0.2, 0.6], [0.5, 0.5, 0.0]] {
            for (l, e) in exprs.iter().enumerate() {
                let (a, b) = (f.rate(l, &x), e.eval(&x));
                assert!((a - b).abs() <= 1e-15 * b.abs().max(1.0), "{l}: {a} vs {b}");
            }
        }
        assert_eq!(f.reads(0), &[0, 1]);
        assert_eq!(f.reads(4), &[2]);
    }

    /// Every [`Form`] (both orders of its constant factor where the compiler can emit either),
    /// recognised from its program, gives the interpreter's value to the bit at random states;
    /// other shapes stay programs.
    #[test]
    fn rate_forms_give_the_interpreters_value() {
        use rand::{Rng, SeedableRng};
        let v = |i| Node::Var(i);
        let c = Node::Const;
        let exprs = vec![
            (c(0.7), "Const"),
            (v(2), "Var"),
            (mul(vec![c(0.3), v(1)]), "Scale"),
            (sub(v(0), v(3)), "Diff"),
            (mul(vec![c(0.9), sub(v(2), v(3))]), "ScaleDiff"),
            (sub(c(1.0), v(1)), "Rsub"),
            (mul(vec![c(0.9), sub(c(1.0), v(0))]), "ScaleRsub"),
            (mul(vec![c(0.5), add(vec![c(1.0), neg(v(0)), neg(v(1))])]), "ScaleRsub2"),
            (mul(vec![v(0), v(2)]), "Prod"),
            (mul(vec![c(1.7), v(3), v(1)]), "ScaleProd"),
            (mul(vec![add(vec![c(0.1), mul(vec![c(2.0), v(1)])]), v(0)]), "AffineProd"),
            (mul(vec![c(0.9), sub(powi(v(0), 2), powi(v(3), 2))]), "ScaleDiffSq"),
            (sub(powi(v(2), 2), powi(v(1), 2)), "ScaleDiffSq"),
            (mul(vec![c(0.9), sub(powi(v(0), 3), powi(v(3), 3))]), "Program"),
            (add(vec![v(0), mul(vec![v(1), v(2)])]), "Program"),
            (div(v(0), add(vec![c(1.0), v(1)])), "Program"),
        ];
        let nodes: Vec<Node> = exprs.iter().map(|(e, _)| e.clone()).collect();
        let f = FlatRates::compile(&nodes);
        for (l, (_, name)) in exprs.iter().enumerate() {
            assert_eq!(format!("{:?}", f.forms[l]).split('(').next().unwrap(), *name, "{l}: {:?}", &f.code[f.ptr[l]..f.ptr[l + 1]]);
        }
        // the other emission orders of the same forms
        let code = [
            (vec![Ins::Var(1), Ins::MulC(0.3)], Form::Scale(0.3, 1)),
            (vec![Ins::Var(2), Ins::Var(3), Ins::Sub, Ins::MulC(0.9)], Form::ScaleDiff(0.9, 2, 3)),
            (vec![Ins::Const(1.0), Ins::Var(0), Ins::Sub, Ins::MulC(0.9)], Form::ScaleRsub(0.9, 1.0, 0)),
            (vec![Ins::Const(1.0), Ins::Var(0), Ins::Sub, Ins::Var(1), Ins::Sub, Ins::MulC(0.5)], Form::ScaleRsub2(0.5, 1.0, 0, 1)),
            (vec![Ins::Var(3), Ins::MulC(1.7), Ins::Var(1), Ins::Mul], Form::ScaleProd(1.7, 3, 1)),
            (vec![Ins::Const(0.1), Ins::Var(1), Ins::MulC(2.0), Ins::Add, Ins::Var(0), Ins::Mul], Form::AffineProd(0.1, 2.0, 1, 0)),
            (vec![Ins::Const(0.9), Ins::Var(0), Ins::PowI(2), Ins::Var(3), Ins::PowI(2), Ins::Sub, Ins::Mul], Form::ScaleDiffSq(0.9, 0, 3)),
        ];
        let mut g = FlatRates { ptr: vec![0], ..Default::default() };
        for (c, form) in &code {
            assert_eq!(Form::of(c), *form, "{c:?}");
            g.code.extend_from_slice(c);
            g.ptr.push(g.code.len());
            g.deep.push(None);
            g.forms.push(*form);
        }
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let mut out = vec![0.0; nodes.len()];
        let all: Vec<usize> = (0..nodes.len()).collect();
        for _ in 0..1000 {
            let x: Vec<f64> = (0..4).map(|_| rng.random::<f64>() * if rng.random::<bool>() { 1.0 } else { -3.0 }).collect();
            f.rates(&all, &x, &mut out);
            for (l, o) in out.iter().enumerate() {
                assert_eq!(f.rate(l, &x).to_bits(), f.program(l, &x).to_bits(), "{l} at {x:?}");
                assert_eq!(o.to_bits(), f.program(l, &x).to_bits(), "{l} at {x:?}");
            }
            for (l, (c, _)) in code.iter().enumerate() {
                assert_eq!(g.rate(l, &x).to_bits(), g.program(l, &x).to_bits(), "{c:?} at {x:?}");
                // the general form: the same value (a zero's sign aside)
                assert_eq!(g.form(l).unwrap().eval(&x), g.program(l, &x), "{c:?} at {x:?}");
            }
            for l in 0..nodes.len() {
                match f.form(l) {
                    Some(form) => assert_eq!(form.eval(&x), f.program(l, &x), "{l} at {x:?}"),
                    None => assert_eq!(f.forms[l], Form::Program, "{l}"),
                }
            }
        }
    }

    /// An expression deeper than the stack falls back to the tree.
    #[test]
    fn deep_expressions_fall_back_to_the_tree() {
        let mut e = Node::Var(0);
        for k in 0..40 {
            e = div(Node::Const(1.0 + k as f64), add(vec![Node::Const(1.0), e]));
        }
        let f = FlatRates::compile(std::slice::from_ref(&e));
        assert!(f.deep[0].is_some());
        assert_eq!(f.rate(0, &[0.3]), e.eval(&[0.3]));
    }
}
