//! The compiled form: expressions of the same shape (one per lane, e.g. one per `k` of a
//! `for = "k = 1..K"` transition) run as one vectorised register program.
//!
//! Each instruction writes a fresh register (SSA: register `r` is written by instruction `r`)
//! holding one value per lane; lanes run in chunks of [`CHUNK`] so the registers stay in
//! cache. Loads read the state slice directly (`Seq`: lane `l` reads `x[start + l]`) or
//! through an index list (`Gather`); constants are immediates when all lanes agree. The
//! inner loops are straight slice loops without bounds checks, which the compiler vectorises.
//! No string is looked at and nothing is allocated when a program runs: the registers live in
//! a per-thread scratch pool ([`with_scratch`]).

use std::cell::RefCell;
use std::collections::HashMap;

use super::node::{sign, Fun, Node};

/// Lanes per chunk.
pub(crate) const CHUNK: usize = 64;

#[derive(Debug, Clone)]
enum Op {
    Seq(u32),
    Gather(Box<[u32]>),
    Splat(f64),
    Lanes(Box<[f64]>),
    Add(u32, u32),
    Sub(u32, u32),
    Mul(u32, u32),
    Div(u32, u32),
    Pow(u32, u32),
    Min(u32, u32),
    Max(u32, u32),
    AddC(u32, f64),
    MulC(u32, f64),
    DivC(u32, f64),
    RSubC(f64, u32),
    RDivC(f64, u32),
    PowC(u32, f64),
    RPowC(f64, u32),
    MinC(u32, f64),
    MaxC(u32, f64),
    Neg(u32),
    Sq(u32),
    Cube(u32),
    PowI(u32, i32),
    Fun(Fun, u32),
    Cond(u32, u32, u32, u32),
}

/// One vectorised program over `lanes` expressions of one shape; `items[l]` says what lane
/// `l` is (a transition instance, or a Jacobian entry).
#[derive(Debug, Clone)]
pub(crate) struct Block {
    ops: Vec<Op>,
    out: u32,
    /// What each lane is.
    pub(crate) items: Vec<u32>,
}

#[derive(Clone, Copy)]
enum Val {
    Reg(u32),
    Imm(f64),
}

struct Emitter {
    ops: Vec<Op>,
}

impl Emitter {
    fn push(&mut self, op: Op) -> Val {
        self.ops.push(op);
        Val::Reg(self.ops.len() as u32 - 1)
    }

    fn reg(&mut self, v: Val) -> u32 {
        match v {
            Val::Reg(r) => r,
            Val::Imm(c) => match self.push(Op::Splat(c)) {
                Val::Reg(r) => r,
                Val::Imm(_) => unreachable!("push returns a register"),
            },
        }
    }

    fn binary(&mut self, kind: u8, a: Val, b: Val) -> Val {
        use Val::{Imm, Reg};
        let fold = |x: f64, y: f64| match kind {
            b'+' => x + y,
            b'-' => x - y,
            b'*' => x * y,
            b'/' => x / y,
            b'^' => x.powf(y),
            b'<' => x.min(y),
            _ => x.max(y),
        };
        match (a, b) {
            (Imm(x), Imm(y)) => Imm(fold(x, y)),
            (Reg(a), Imm(c)) => self.push(match kind {
                b'+' => Op::AddC(a, c),
                b'-' => Op::AddC(a, -c),
                b'*' => Op::MulC(a, c),
                b'/' => Op::DivC(a, c),
                b'^' => Op::PowC(a, c),
                b'<' => Op::MinC(a, c),
                _ => Op::MaxC(a, c),
            }),
            (Imm(c), Reg(b)) => self.push(match kind {
                b'+' => Op::AddC(b, c),
                b'-' => Op::RSubC(c, b),
                b'*' => Op::MulC(b, c),
                b'/' => Op::RDivC(c, b),
                b'^' => Op::RPowC(c, b),
                b'<' => Op::MinC(b, c),
                _ => Op::MaxC(b, c),
            }),
            (Reg(a), Reg(b)) => self.push(match kind {
                b'+' => Op::Add(a, b),
                b'-' => Op::Sub(a, b),
                b'*' => Op::Mul(a, b),
                b'/' => Op::Div(a, b),
                b'^' => Op::Pow(a, b),
                b'<' => Op::Min(a, b),
                _ => Op::Max(a, b),
            }),
        }
    }

    /// Emits the lane expressions `ts` (all of one shape); returns where the result is.
    // Longer than 120 lines on purpose: one match arm per node kind of the expression language,
    // each a few lines; the arms share the lane bookkeeping and read best side by side.
    fn emit(&mut self, ts: &[&Node]) -> Val {
        let child = |f: &dyn Fn(&Node) -> &Node| -> Vec<&Node> { ts.iter().map(|t| f(t)).collect() };
        match ts[0] {
            Node::Const(c0) => {
                let vals: Vec<f64> = ts.iter().map(|t| t.as_const().expect("same shape")).collect();
                if vals.iter().all(|v| v.to_bits() == c0.to_bits()) {
                    Val::Imm(*c0)
                } else {
                    self.push(Op::Lanes(vals.into()))
                }
            }
            Node::Var(_) => {
                let idx: Vec<u32> = ts
                    .iter()
                    .map(|t| match t {
                        Node::Var(i) => *i,
                        _ => unreachable!("same shape"),
                    })
                    .collect();
                if idx.iter().enumerate().all(|(l, i)| *i as usize == idx[0] as usize + l) {
                    self.push(Op::Seq(idx[0]))
                } else {
                    self.push(Op::Gather(idx.into()))
                }
            }
            Node::Add(t0) | Node::Mul(t0) => {
                let is_add = matches!(ts[0], Node::Add(_));
                let nth = |k: usize| -> Vec<&Node> {
                    ts.iter()
                        .map(|t| match t {
                            Node::Add(v) | Node::Mul(v) => &v[k],
                            _ => unreachable!("same shape"),
                        })
                        .collect()
                };
                let mut acc = self.emit(&nth(0));
                for (k, tk) in t0.iter().enumerate().skip(1) {
                    let lanes = nth(k);
                    if is_add && matches!(tk, Node::Neg(_)) {
                        let inner: Vec<&Node> = lanes
                            .iter()
                            .map(|t| match t {
                                Node::Neg(a) => &**a,
                                _ => unreachable!("same shape"),
                            })
                            .collect();
                        let v = self.emit(&inner);
                        acc = self.binary(b'-', acc, v);
                    } else {
                        let v = self.emit(&lanes);
                        acc = self.binary(if is_add { b'+' } else { b'*' }, acc, v);
                    }
                }
                acc
            }
            Node::Neg(_) => {
                let a = self.emit(&child(&|t| match t {
                    Node::Neg(a) => a,
                    _ => unreachable!("same shape"),
                }));
                match a {
                    Val::Imm(c) => Val::Imm(-c),
                    Val::Reg(r) => self.push(Op::Neg(r)),
                }
            }
            Node::PowI(_, n) => {
                let n = *n;
                let a = self.emit(&child(&|t| match t {
                    Node::PowI(a, _) => a,
                    _ => unreachable!("same shape"),
                }));
                match a {
                    Val::Imm(c) => Val::Imm(c.powi(n)),
                    Val::Reg(r) => self.push(match n {
                        2 => Op::Sq(r),
                        3 => Op::Cube(r),
                        n => Op::PowI(r, n),
                    }),
                }
            }
            Node::Fun(f, _) => {
                let f = *f;
                let a = self.emit(&child(&|t| match t {
                    Node::Fun(_, a) => a,
                    _ => unreachable!("same shape"),
                }));
                match a {
                    Val::Imm(c) => Val::Imm(f.apply(c)),
                    Val::Reg(r) => self.push(Op::Fun(f, r)),
                }
            }
            Node::Div(..) | Node::Pow(..) | Node::Min(..) | Node::Max(..) => {
                let kind = match ts[0] {
                    Node::Div(..) => b'/',
                    Node::Pow(..) => b'^',
                    Node::Min(..) => b'<',
                    _ => b'>',
                };
                let side = |right: bool| -> Vec<&Node> {
                    ts.iter()
                        .map(|t| match t {
                            Node::Div(a, b) | Node::Pow(a, b) | Node::Min(a, b) | Node::Max(a, b) => {
                                if right {
                                    &**b
                                } else {
                                    &**a
                                }
                            }
                            _ => unreachable!("same shape"),
                        })
                        .collect()
                };
                let a = self.emit(&side(false));
                let b = self.emit(&side(true));
                self.binary(kind, a, b)
            }
            Node::Cond(_) => {
                let part = |k: usize| -> Vec<&Node> {
                    ts.iter()
                        .map(|t| match t {
                            Node::Cond(c) => &c[k],
                            _ => unreachable!("same shape"),
                        })
                        .collect()
                };
                let v: Vec<Val> = (0..4).map(|k| self.emit(&part(k))).collect();
                let r: Vec<u32> = v.into_iter().map(|v| self.reg(v)).collect();
                self.push(Op::Cond(r[0], r[1], r[2], r[3]))
            }
        }
    }
}

impl Block {
    /// Compiles lane expressions of one shape; `items[l]` tags lane `l`.
    fn compile(ts: &[&Node], items: Vec<u32>) -> Block {
        let mut e = Emitter { ops: Vec::new() };
        let v = e.emit(ts);
        let out = e.reg(v);
        Block { ops: e.ops, out, items }
    }

    /// Number of lanes.
    pub(crate) fn lanes(&self) -> usize {
        self.items.len()
    }

    /// Scratch values needed by [`run`](Self::run).
    pub(crate) fn scratch_len(&self) -> usize {
        self.ops.len() * self.lanes().min(CHUNK)
    }

    /// Runs lanes `l0 .. l0 + w` (`w <= CHUNK`) at the state `x`; returns the result
    /// values (a slice of `regs`).
    pub(crate) fn run<'r>(&self, x: &[f64], regs: &'r mut [f64], l0: usize, w: usize) -> &'r [f64] {
        let stride = self.lanes().min(CHUNK);
        debug_assert!(w <= stride && regs.len() >= self.ops.len() * stride);
        for (k, op) in self.ops.iter().enumerate() {
            let (lo, hi) = regs.split_at_mut(k * stride);
            let d = &mut hi[..w];
            let r = |a: &u32| &lo[*a as usize * stride..*a as usize * stride + w];
            match op {
                Op::Seq(s) => d.copy_from_slice(&x[*s as usize + l0..*s as usize + l0 + w]),
                Op::Gather(idx) => d.iter_mut().zip(&idx[l0..l0 + w]).for_each(|(d, i)| *d = x[*i as usize]),
                Op::Splat(c) => d.fill(*c),
                Op::Lanes(v) => d.copy_from_slice(&v[l0..l0 + w]),
                Op::Add(a, b) => map2(d, r(a), r(b), |a, b| a + b),
                Op::Sub(a, b) => map2(d, r(a), r(b), |a, b| a - b),
                Op::Mul(a, b) => map2(d, r(a), r(b), |a, b| a * b),
                Op::Div(a, b) => map2(d, r(a), r(b), |a, b| a / b),
                Op::Pow(a, b) => map2(d, r(a), r(b), f64::powf),
                Op::Min(a, b) => map2(d, r(a), r(b), f64::min),
                Op::Max(a, b) => map2(d, r(a), r(b), f64::max),
                Op::AddC(a, c) => map1(d, r(a), |a| a + c),
                Op::MulC(a, c) => map1(d, r(a), |a| a * c),
                Op::DivC(a, c) => map1(d, r(a), |a| a / c),
                Op::RSubC(c, a) => map1(d, r(a), |a| c - a),
                Op::RDivC(c, a) => map1(d, r(a), |a| c / a),
                Op::PowC(a, c) => map1(d, r(a), |a| a.powf(*c)),
                Op::RPowC(c, a) => map1(d, r(a), |a| c.powf(a)),
                Op::MinC(a, c) => map1(d, r(a), |a| a.min(*c)),
                Op::MaxC(a, c) => map1(d, r(a), |a| a.max(*c)),
                Op::Neg(a) => map1(d, r(a), |a| -a),
                Op::Sq(a) => map1(d, r(a), |a| a * a),
                Op::Cube(a) => map1(d, r(a), |a| a * a * a),
                Op::PowI(a, n) => map1(d, r(a), |a| a.powi(*n)),
                Op::Fun(f, a) => match f {
                    Fun::Exp => map1(d, r(a), f64::exp),
                    Fun::Log => map1(d, r(a), f64::ln),
                    Fun::Sqrt => map1(d, r(a), f64::sqrt),
                    Fun::Abs => map1(d, r(a), f64::abs),
                    Fun::Sign => map1(d, r(a), sign),
                },
                Op::Cond(a, b, t, e) => {
                    let (a, b, t, e) = (r(a), r(b), r(t), r(e));
                    for (l, d) in d.iter_mut().enumerate() {
                        *d = if a[l] <= b[l] { t[l] } else { e[l] };
                    }
                }
            }
        }
        let o = self.out as usize * stride;
        &regs[o..o + w]
    }
}

#[inline(always)]
fn map1(d: &mut [f64], a: &[f64], f: impl Fn(f64) -> f64) {
    d.iter_mut().zip(a).for_each(|(d, a)| *d = f(*a));
}

#[inline(always)]
fn map2(d: &mut [f64], a: &[f64], b: &[f64], f: impl Fn(f64, f64) -> f64) {
    d.iter_mut().zip(a.iter().zip(b)).for_each(|(d, (a, b))| *d = f(*a, *b));
}

/// Groups expressions by shape (keeping the order of first appearance, lanes in item order)
/// and compiles one block per shape. `exprs[i]` is tagged with `items[i]`.
pub(crate) fn compile_blocks(exprs: &[&Node], items: &[u32]) -> Vec<Block> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_shape: HashMap<Vec<u32>, usize> = HashMap::new();
    let mut key = Vec::new();
    for (i, e) in exprs.iter().enumerate() {
        key.clear();
        e.shape(&mut key);
        let g = *by_shape.entry(key.clone()).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    groups
        .into_iter()
        .map(|g| {
            let ts: Vec<&Node> = g.iter().map(|&i| exprs[i]).collect();
            Block::compile(&ts, g.iter().map(|&i| items[i]).collect())
        })
        .collect()
}

thread_local! {
    static POOL: RefCell<Vec<Vec<f64>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a scratch buffer of at least `len` values from a per-thread pool (re-entrant:
/// a nested call takes another buffer). Allocates only the first time a thread needs a
/// buffer of this size.
pub(crate) fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [f64]) -> R) -> R {
    let mut buf = POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default();
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
    let r = f(&mut buf[..len]);
    POOL.with(|p| p.borrow_mut().push(buf));
    r
}

#[cfg(test)]
mod tests {
    use super::super::node::{add, mul, powi, sub};
    use super::*;

    #[test]
    fn blocks_vectorise_and_agree_with_eval() {
        // lane k: 0.9 (x[k-1]^2 - x[k]^2) for k = 1..=150, x[0] a constant boundary 1
        let n: usize = 150;
        let x: Vec<f64> = (0..n as i32).map(|i| 0.95f64.powi(i + 1)).collect();
        let exprs: Vec<Node> = (0..n as u32)
            .map(|k| {
                let prev = if k == 0 { Node::Const(1.0) } else { Node::Var(k - 1) };
                mul(vec![Node::Const(0.9), sub(powi(prev, 2), powi(Node::Var(k), 2))])
            })
            .collect();
        let refs: Vec<&Node> = exprs.iter().collect();
        let items: Vec<u32> = (0..n as u32).collect();
        let blocks = compile_blocks(&refs, &items);
        assert_eq!(blocks.len(), 2, "the boundary lane has its own shape");
        let mut seen = 0;
        for b in &blocks {
            let mut regs = vec![0.0; b.scratch_len()];
            for l0 in (0..b.lanes()).step_by(CHUNK) {
                let w = CHUNK.min(b.lanes() - l0);
                let out = b.run(&x, &mut regs, l0, w).to_vec();
                for (l, v) in out.iter().enumerate() {
                    let item = b.items[l0 + l] as usize;
                    assert_eq!(*v, exprs[item].eval(&x));
                    seen += 1;
                }
            }
        }
        assert_eq!(seen, n);
        let _ = add(vec![]);
    }
}
