//! The rates one transition instance at a time, for event-driven simulation: each rate
//! expression compiled once to a flat postfix program (a short instruction list run on a small
//! stack, no recursion, no allocation), with the state slots it reads. A simulator that knows
//! which slots an event changed re-evaluates only the rates that read them (the dependency
//! graph of Gibson and Bruck's next-reaction method, J. Phys. Chem. A 104, 2000).

use super::node::{sign, Fun, Node};

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

/// One program per transition instance: `code[ptr[l]..ptr[l + 1]]`, or the expression itself
/// when it is too deep for the stack (`deep[l]`), and the slots it reads.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlatRates {
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
            } else {
                f.deep.push(None);
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

    /// The rate of instance `l` at `x`.
    #[inline]
    pub(crate) fn rate(&self, l: usize, x: &[f64]) -> f64 {
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
