//! Triplet approximation of redundancy-2 under processor sharing (derived here).
//!
//! Redundancy-2 under PS as a dynamic random graph (the RED-PS model of Gast and Van Houdt,
//! POMACS 2024, as reconstructed in docs/models/redundancy.md): servers are
//! nodes, each job is an edge between its two servers, a server's queue length is its
//! degree. New edges arrive at rate `lambda N` between two distinct uniform nodes (admitted
//! when both have degree `< K`); an edge between nodes of degrees `(a, b)` completes at rate
//! `1/a + 1/b`.
//!
//! State (degrees `1..K`):
//! - `P(a, b)` = (1/N) x #ordered (edge, orientation) with tail degree `a`, head degree `b`
//!   (each job counted twice; `sum_b P(a, b) = a y_a`, `y_a` = fraction of servers with `a` copies);
//! - `T(a, b, c)` = (1/N) x #(edge `e1 = u-v`, edge `e2 = v-w != e1`) with degrees `a, b, c` at
//!   `u, v, w`: a path of two jobs through the middle server `v` (`b >= 2`), read from the
//!   reference end `u`. `sum_c T(a, b, c) = (b - 1) P(a, b)`.
//!
//! The pair equation is exact given `T`: the other edges of the `a`-endpoint `u` of an edge
//! `(u, v)` are the paths `v - u - w`, so `u` loses one at rate
//! `F(a, b) = sum_c T(b, a, c) (1/a + 1/c) = M(a; b)/a + S(a; b)` with the fibre sums
//! `M(a; b) = sum_c T(b, a, c)` and `S(a; b) = sum_c T(b, a, c)/c` (middle degree `a`,
//! reference degree `b`):
//!
//! ```text
//! dP(a,b)/dt = 2 lambda y_{a-1} y_{b-1} - (1/a + 1/b) P(a,b)
//!            + 2 lambda theta [P(a-1,b) - P(a,b)] + F(a+1,b) - F(a,b)      (the a-end moves)
//!            + (the same for the b-end),                  theta = 1 - y_K (admission)
//! ```
//!
//! The triplet closure is the next level: the other edges at a server of degree `m` whose
//! reference neighbour has degree `e` lead to degree `c` with probability
//! `T(e, m, c) / M(m; e)`, so they complete at mean rate `R(m; e) = S(m; e) / M(m; e)` beyond
//! their `1/m` share here. The ends of a path lose another edge at
//! `l_end(a; b) = (a - 1)(1/a + R(a; b))`; the middle server loses one of its `b - 2` other
//! edges at `l_mid(a, b) = (b - 2)(1/b + R(b; a))`, conditioned on the reference end only. That
//! one-sided choice keeps `sum_c T(a,b,c) = (b-1) P(a,b)` exact along the solution (a
//! symmetric average of the two ends does not, and drives `P` negative at the truncation):
//!
//! ```text
//! dT(a,b,c)/dt = 2 lambda [y_{a-1} P(b-1,c) + y_{c-1} P(b-1,a)]             (a new job creates the path)
//!              - (1/a + 2/b + 1/c) T(a,b,c)                                 (either job completes)
//!              + 2 lambda theta [T(a-1,b,c) - T(a,b,c)] + (same in b, c)    (arrivals; b from 2 up)
//!              + l_end(a+1; b) T(a+1,b,c) - l_end(a; b) T(a,b,c)            (u loses another job)
//!              + l_end(c+1; b) T(a,b,c+1) - l_end(c; b) T(a,b,c)            (w loses another job)
//!              + l_mid(a, b+1) T(a,b+1,c) - l_mid(a, b) T(a,b,c)            (v loses another job)
//! ```
//!
//! The pair approximation is the closure `T(a,b,c) = (b-1) P(a,b) P(b,c) / (b y_b)`.
//!
//! Source: N. Gast and B. Van Houdt, "Approximations to study the impact of the service
//! discipline in systems with redundancy", POMACS 8(1), 2024 (arXiv 2401.07713), name and
//! idea (a triplet approximation for PS); the paper's equations could not be read, these are
//! derived here (`docs/models/redundancy.md`, section "Triplet approximation").

use super::pair::{redundancy_observables, EPS};
use super::{iid_stability, Discipline};
use crate::AnalyticJacobian;
use crate::{out_of_range, Jacobian, MeanFieldModel, ModelError, Observables, Sparsity, SparsityPattern, Stability, StateLayout};
use std::sync::{Arc, Mutex};

/// Largest truncation level: `K^3` states (64 000 at K = 40). The shifted Jacobians are solved
/// by ILU(1) + GMRES from 10 000 unknowns on (`mfq_ode::linalg`), about 100 MiB at K = 30; the
/// complete LU it falls back on fills in to about 1 GB at K = 30 (3.9 GB at K = 40).
const MAX_TRIPLET_LEVELS: usize = 40;

/// Triplet approximation of redundancy-2 with i.i.d. exponential copies under PS (see the
/// module docs for the ODE and its derivation).
///
/// State ([`StateLayout::Triplet`], `K^3` entries): first `T(a, b, c)` for middle degree
/// `b = 2..K` and end degrees `a, c = 1..K`, at `x[((b - 2) K + (a - 1)) K + (c - 1)]`
/// (`(K - 1) K^2` entries), then `P(a, b)` at `x[(K - 1) K^2 + (a - 1) K + (b - 1)]`.
///
/// Jacobian: sparse `A + B D^{-1} C` ([`SparsityPattern`] with a coupling) through the
/// auxiliaries `y_0..y_K` and the fibre sums `M(m; e)`, `S(m; e)`
/// (`r = K + 1 + 2 (K - 1) K`); about 9 entries per row in `A` and 20 in `B`.
#[derive(Debug)]
pub struct RedundancyTriplet {
    lambda: f64,
    k: usize,
    pattern: Arc<SparsityPattern>,
    aux: Mutex<Vec<f64>>,
}

/// Index helpers over degrees (1-based).
#[derive(Debug, Clone, Copy)]
struct Ix {
    k: usize,
}

impl Ix {
    /// `T(a, b, c)`, `b >= 2`.
    #[inline]
    fn t(self, a: usize, b: usize, c: usize) -> usize {
        ((b - 2) * self.k + (a - 1)) * self.k + (c - 1)
    }
    /// `P(a, b)`.
    #[inline]
    fn p(self, a: usize, b: usize) -> usize {
        (self.k - 1) * self.k * self.k + (a - 1) * self.k + (b - 1)
    }
    /// Start of the fibre `T(e, m, .)` (middle `m >= 2`, reference `e`).
    #[inline]
    fn fibre(self, m: usize, e: usize) -> usize {
        self.t(e, m, 1)
    }
    /// Auxiliary `y_j`, `j = 0..K`.
    #[inline]
    fn y(self, j: usize) -> usize {
        j
    }
    /// Auxiliary `S(m; e)` (`m >= 2`).
    #[inline]
    fn as_(self, m: usize, e: usize) -> usize {
        self.k + 1 + (m - 2) * self.k + (e - 1)
    }
    fn r(self) -> usize {
        self.k + 1 + (self.k - 1) * self.k
    }
    fn n(self) -> usize {
        self.k * self.k * self.k
    }
}

/// `(n - 1)(1/deg + S/M)` with `n` other edges counted (`n = deg - 1` at an end, `deg - 2` in
/// the middle) and its derivatives with respect to `M` and `S`.
#[inline]
fn loss_rate(others: f64, deg: f64, m: f64, s: f64) -> (f64, f64, f64) {
    if others <= 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let (mc, sc) = (m.max(0.0), s.max(0.0));
    let den = mc + EPS;
    let v = others * (1.0 / deg + sc / den);
    let dm = if m >= 0.0 { -others * sc / (den * den) } else { 0.0 };
    let ds = if s >= 0.0 { others / den } else { 0.0 };
    (v, dm, ds)
}

impl RedundancyTriplet {
    /// The triplet approximation at arrival rate `lambda` per server (jobs; `d = 2`),
    /// truncated at `levels` = K copies per server (`K^3` states).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] for `lambda` not finite or `<= 0` (`model.lambda`), `d != 2`
    /// (`model.d`), `levels` outside `3..=40` (`truncation.levels`).
    pub fn new(lambda: f64, d: u32, levels: usize) -> Result<Self, ModelError> {
        super::check_common(lambda, d)?;
        if d != 2 {
            return Err(out_of_range("model.d", d, "2 (the triplet approximation is for redundancy-2)"));
        }
        if !(3..=MAX_TRIPLET_LEVELS).contains(&levels) {
            return Err(out_of_range(
                "truncation.levels",
                levels,
                &format!("an integer in 3..={MAX_TRIPLET_LEVELS} for the triplet approximation (K^3 states)"),
            ));
        }
        let ix = Ix { k: levels };
        let pattern = Self::pattern(ix);
        Ok(RedundancyTriplet { lambda, k: levels, pattern: Arc::new(pattern), aux: Mutex::new(vec![0.0; ix.r()]) })
    }

    fn ix(&self) -> Ix {
        Ix { k: self.k }
    }

    fn pattern(ix: Ix) -> SparsityPattern {
        let k = ix.k;
        let (n, r) = (ix.n(), ix.r());
        let mut a_rows = vec![Vec::new(); n];
        let mut b_rows = vec![Vec::new(); n];
        // a loss rate of the fibre (middle m >= 2, reference e): M(m; e) = (m-1) P(e, m), S(m; e)
        let fib = |ar: &mut Vec<usize>, br: &mut Vec<usize>, m: usize, e: usize| {
            if (2..=k).contains(&m) {
                ar.push(ix.p(e, m));
                br.push(ix.as_(m, e));
            }
        };
        for b in 2..=k {
            for a in 1..=k {
                for c in 1..=k {
                    let i = ix.t(a, b, c);
                    let (ar, br) = (&mut a_rows[i], &mut b_rows[i]);
                    ar.extend([i, ix.p(b - 1, c), ix.p(b - 1, a)]);
                    br.extend([ix.y(a - 1), ix.y(c - 1), ix.y(k)]);
                    if a >= 2 {
                        ar.push(ix.t(a - 1, b, c));
                    }
                    if c >= 2 {
                        ar.push(ix.t(a, b, c - 1));
                    }
                    if b >= 3 {
                        ar.push(ix.t(a, b - 1, c));
                    }
                    if a < k {
                        ar.push(ix.t(a + 1, b, c));
                    }
                    if c < k {
                        ar.push(ix.t(a, b, c + 1));
                    }
                    if b < k {
                        ar.push(ix.t(a, b + 1, c));
                    }
                    for (m, e) in [(a, b), (a + 1, b), (c, b), (c + 1, b), (b, a), (b + 1, a)] {
                        fib(ar, br, m, e);
                    }
                }
            }
        }
        for a in 1..=k {
            for b in 1..=k {
                let i = ix.p(a, b);
                let (ar, br) = (&mut a_rows[i], &mut b_rows[i]);
                ar.push(i);
                if a >= 2 {
                    ar.push(ix.p(a - 1, b));
                }
                if b >= 2 {
                    ar.push(ix.p(a, b - 1));
                }
                br.extend([ix.y(a - 1), ix.y(b - 1), ix.y(k)]);
                for (m, e) in [(a, b), (a + 1, b), (b, a), (b + 1, a)] {
                    fib(ar, br, m, e);
                }
            }
        }
        let mut c_rows = vec![Vec::new(); r];
        let mut d_rows = vec![Vec::new(); r];
        for j in 1..=k {
            c_rows[ix.y(j)] = (1..=k).map(|b| ix.p(j, b)).collect();
            d_rows[ix.y(j)] = vec![ix.y(j)];
        }
        d_rows[ix.y(0)] = (0..=k).map(|j| ix.y(j)).collect();
        for m in 2..=k {
            for e in 1..=k {
                let f = ix.fibre(m, e);
                c_rows[ix.as_(m, e)] = (f..f + k).collect();
                d_rows[ix.as_(m, e)] = vec![ix.as_(m, e)];
            }
        }
        SparsityPattern::from_rows(n, a_rows).with_coupling(r, b_rows, c_rows, d_rows)
    }

    /// The auxiliaries `y_0..y_K` and `S(m; e)` at `x`.
    fn compute_aux(&self, x: &[f64], u: &mut [f64]) {
        let ix = self.ix();
        let k = self.k;
        let mut busy = 0.0;
        for j in 1..=k {
            let row = &x[ix.p(j, 1)..ix.p(j, 1) + k];
            u[ix.y(j)] = row.iter().sum::<f64>() / j as f64;
            busy += u[ix.y(j)];
        }
        u[ix.y(0)] = 1.0 - busy;
        for m in 2..=k {
            for e in 1..=k {
                let f = ix.fibre(m, e);
                u[ix.as_(m, e)] = x[f..f + k].iter().enumerate().map(|(c, &v)| v / (c + 1) as f64).sum();
            }
        }
    }

    /// `M(m; e) = (m - 1) P(e, m)`: the fibre mass through the path-count identity, which the
    /// dynamics keep (this halves the auxiliaries and keeps `A` local).
    #[inline]
    fn fibre_mass(&self, x: &[f64], m: usize, e: usize) -> f64 {
        (m - 1) as f64 * x[self.ix().p(e, m)]
    }

    /// `l_end(a; b)` (middle `a` of the fibre, reference `b`) with `d/dM`, `d/dS`; zero for `a = 1` or `a > K`.
    #[inline]
    fn l_end(&self, x: &[f64], u: &[f64], a: usize, b: usize) -> (f64, f64, f64) {
        if a < 2 || a > self.k {
            return (0.0, 0.0, 0.0);
        }
        loss_rate((a - 1) as f64, a as f64, self.fibre_mass(x, a, b), u[self.ix().as_(a, b)])
    }

    /// `l_mid(a, b)` (middle `b`, reference `a`) with `d/dM`, `d/dS`; zero for `b <= 2` or `b > K`.
    #[inline]
    fn l_mid(&self, x: &[f64], u: &[f64], a: usize, b: usize) -> (f64, f64, f64) {
        if b < 3 || b > self.k {
            return (0.0, 0.0, 0.0);
        }
        loss_rate((b - 2) as f64, b as f64, self.fibre_mass(x, b, a), u[self.ix().as_(b, a)])
    }

    /// `F(a, b) = M(a; b)/a + S(a; b)` (zero for `a = 1` or `a > K`).
    #[inline]
    fn flow(&self, x: &[f64], u: &[f64], a: usize, b: usize) -> f64 {
        if a < 2 || a > self.k {
            return 0.0;
        }
        self.fibre_mass(x, a, b) / a as f64 + u[self.ix().as_(a, b)]
    }

    /// Value at `x` and coefficients of the drift; `jac` receives the Jacobian when given.
    // Longer than 120 lines on purpose: one pass over the K^3 triplet states computes every
    // drift term and its Jacobian entries together, reusing the auxiliary sums held under one
    // lock; split across functions, the terms would be recomputed or passed in a dozen slices.
    fn evaluate(&self, x: &[f64], dx: Option<&mut [f64]>, mut jac: Option<&mut Jacobian>) {
        let mut guard = self.aux.lock().unwrap_or_else(|p| p.into_inner());
        let u = &mut *guard;
        self.compute_aux(x, u);
        let ix = self.ix();
        let k = self.k;
        let l2 = 2.0 * self.lambda;
        let theta = 1.0 - u[ix.y(k)];
        let up = l2 * theta;
        let inv = |v: usize| 1.0 / v as f64;
        let mut out = dx;
        let get = |a: usize, b: usize, c: usize| {
            if (1..=k).contains(&a) && (2..=k).contains(&b) && (1..=k).contains(&c) {
                x[ix.t(a, b, c)]
            } else {
                0.0
            }
        };
        for b in 2..=k {
            for a in 1..=k {
                let (le_a, le_a_dm, le_a_ds) = self.l_end(x, u, a, b);
                let (le_a1, le_a1_dm, le_a1_ds) = self.l_end(x, u, a + 1, b);
                let (lm_b, lm_b_dm, lm_b_ds) = self.l_mid(x, u, a, b);
                let (lm_b1, lm_b1_dm, lm_b1_ds) = self.l_mid(x, u, a, b + 1);
                for c in 1..=k {
                    let i = ix.t(a, b, c);
                    let t = x[i];
                    let (le_c, le_c_dm, le_c_ds) = self.l_end(x, u, c, b);
                    let (le_c1, le_c1_dm, le_c1_ds) = self.l_end(x, u, c + 1, b);
                    let ups = (a < k) as u8 + (b < k) as u8 + (c < k) as u8;
                    let shifted_in = get(a - 1, b, c) + get(a, b, c - 1) + if b >= 3 { get(a, b - 1, c) } else { 0.0 };
                    let (ta1, tc1, tb1) = (get(a + 1, b, c), get(a, b, c + 1), get(a, b + 1, c));
                    let (pc, pa) = (x[ix.p(b - 1, c)], x[ix.p(b - 1, a)]);
                    let (ya, yc) = (u[ix.y(a - 1)], u[ix.y(c - 1)]);
                    let diag = -(inv(a) + 2.0 * inv(b) + inv(c)) - up * ups as f64 - le_a - le_c - lm_b;
                    if let Some(out) = out.as_deref_mut() {
                        out[i] = l2 * (ya * pc + yc * pa) + diag * t + up * shifted_in + le_a1 * ta1 + le_c1 * tc1 + lm_b1 * tb1;
                    }
                    if let Some(jac) = jac.as_deref_mut() {
                        jac.add(i, i, diag);
                        jac.add(i, ix.p(b - 1, c), l2 * ya);
                        jac.add(i, ix.p(b - 1, a), l2 * yc);
                        if a >= 2 {
                            jac.add(i, ix.t(a - 1, b, c), up);
                        }
                        if c >= 2 {
                            jac.add(i, ix.t(a, b, c - 1), up);
                        }
                        if b >= 3 {
                            jac.add(i, ix.t(a, b - 1, c), up);
                        }
                        if a < k {
                            jac.add(i, ix.t(a + 1, b, c), le_a1);
                        }
                        if c < k {
                            jac.add(i, ix.t(a, b, c + 1), le_c1);
                        }
                        if b < k {
                            jac.add(i, ix.t(a, b + 1, c), lm_b1);
                        }
                        jac.add_coupling_b(i, ix.y(a - 1), l2 * pc);
                        jac.add_coupling_b(i, ix.y(c - 1), l2 * pa);
                        jac.add_coupling_b(i, ix.y(k), -l2 * (shifted_in - ups as f64 * t));
                        let mut fib = |m: usize, e: usize, dm: f64, ds: f64| {
                            if (2..=k).contains(&m) {
                                jac.add(i, ix.p(e, m), dm * (m - 1) as f64);
                                jac.add_coupling_b(i, ix.as_(m, e), ds);
                            }
                        };
                        fib(a, b, -le_a_dm * t, -le_a_ds * t);
                        fib(a + 1, b, le_a1_dm * ta1, le_a1_ds * ta1);
                        fib(c, b, -le_c_dm * t, -le_c_ds * t);
                        fib(c + 1, b, le_c1_dm * tc1, le_c1_ds * tc1);
                        fib(b, a, -lm_b_dm * t, -lm_b_ds * t);
                        fib(b + 1, a, lm_b1_dm * tb1, lm_b1_ds * tb1);
                    }
                }
            }
        }
        for a in 1..=k {
            for b in 1..=k {
                let i = ix.p(a, b);
                let p = x[i];
                let ups = (a < k) as u8 + (b < k) as u8;
                let pin = if a >= 2 { x[ix.p(a - 1, b)] } else { 0.0 } + if b >= 2 { x[ix.p(a, b - 1)] } else { 0.0 };
                let (ya, yb) = (u[ix.y(a - 1)], u[ix.y(b - 1)]);
                let diag = -(inv(a) + inv(b)) - up * ups as f64;
                if let Some(out) = out.as_deref_mut() {
                    out[i] = l2 * ya * yb + diag * p + up * pin + self.flow(x, u, a + 1, b) - self.flow(x, u, a, b)
                        + self.flow(x, u, b + 1, a)
                        - self.flow(x, u, b, a);
                }
                if let Some(jac) = jac.as_deref_mut() {
                    jac.add(i, i, diag);
                    if a >= 2 {
                        jac.add(i, ix.p(a - 1, b), up);
                    }
                    if b >= 2 {
                        jac.add(i, ix.p(a, b - 1), up);
                    }
                    jac.add_coupling_b(i, ix.y(a - 1), l2 * yb);
                    jac.add_coupling_b(i, ix.y(b - 1), l2 * ya);
                    jac.add_coupling_b(i, ix.y(k), -l2 * (pin - ups as f64 * p));
                    for (m, e, sign) in [(a + 1, b, 1.0), (a, b, -1.0), (b + 1, a, 1.0), (b, a, -1.0)] {
                        if (2..=k).contains(&m) {
                            jac.add(i, ix.p(e, m), sign * (m - 1) as f64 / m as f64);
                            jac.add_coupling_b(i, ix.as_(m, e), sign);
                        }
                    }
                }
            }
        }
        if let Some(jac) = jac {
            for j in 1..=k {
                for b in 1..=k {
                    jac.add_coupling_c(ix.y(j), ix.p(j, b), 1.0 / j as f64);
                }
                jac.add_coupling_d(ix.y(j), ix.y(j), 1.0);
            }
            for j in 0..=k {
                jac.add_coupling_d(ix.y(0), ix.y(j), 1.0);
            }
            for m in 2..=k {
                for e in 1..=k {
                    let f = ix.fibre(m, e);
                    for c in 1..=k {
                        jac.add_coupling_c(ix.as_(m, e), f + c - 1, 1.0 / c as f64);
                    }
                    jac.add_coupling_d(ix.as_(m, e), ix.as_(m, e), 1.0);
                }
            }
        }
    }

    /// `y_a` = fraction of servers with exactly `a` copies, `a = 0..K`, at `x`.
    pub fn queue_length_distribution(&self, x: &[f64]) -> Vec<f64> {
        let ix = self.ix();
        (0..=self.k)
            .map(|j| {
                if j == 0 {
                    1.0 - (1..=self.k).map(|a| x[ix.p(a, 1)..ix.p(a, 1) + self.k].iter().sum::<f64>() / a as f64).sum::<f64>()
                } else {
                    x[ix.p(j, 1)..ix.p(j, 1) + self.k].iter().sum::<f64>() / j as f64
                }
            })
            .collect()
    }

    /// `P(Q >= i)` (copies), `i = 1..K`, at `x`.
    pub fn tail(&self, x: &[f64]) -> Vec<f64> {
        let y = self.queue_length_distribution(x);
        let mut tail = vec![0.0; self.k];
        let mut acc = 0.0;
        for j in (1..=self.k).rev() {
            acc += y[j];
            tail[j - 1] = acc;
        }
        tail
    }

    /// The state of the pair closure `T(a,b,c) = (b-1) P(a,b) P(b,c) / (b y_b)` of a pair
    /// state `pair` (`P(a, b)` at `pair[(a-1) K + (b-1)]`, length `K^2`, e.g. a fixed point of
    /// [`super::RedundancyPair`] with PS at the same `K`): the triplet model's start, at which its
    /// drift is the pair model's closure error.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] (`pair`) when `pair.len() != K^2`.
    pub fn pair_closure(&self, pair: &[f64]) -> Result<Vec<f64>, ModelError> {
        let (k, ix) = (self.k, self.ix());
        if pair.len() != k * k {
            return Err(out_of_range("pair", pair.len(), &format!("a pair state of length K^2 = {}", k * k)));
        }
        let mut x = vec![0.0; ix.n()];
        x[ix.p(1, 1)..].copy_from_slice(pair);
        for b in 2..=k {
            let mb: f64 = pair[(b - 1) * k..b * k].iter().sum();
            if mb <= 0.0 {
                continue;
            }
            for a in 1..=k {
                for c in 1..=k {
                    x[ix.t(a, b, c)] = (b - 1) as f64 * pair[(a - 1) * k + (b - 1)] * pair[(b - 1) * k + (c - 1)] / mb;
                }
            }
        }
        Ok(x)
    }

    /// A starting state for the fixed-point solvers: the pair closure of the independent
    /// closure `P(a, b) = a q_a b q_b / m` of the mean-field fixed point
    /// ([`super::MeanFieldFixedPoint`]). `None` for `lambda >= 1`.
    pub fn mean_field_start(&self) -> Option<Vec<f64>> {
        let fp = super::MeanFieldFixedPoint::solve(self.lambda, 2).ok()?;
        let k = self.k;
        let mut q = fp.distribution(k + 1);
        let beyond: f64 = 1.0 - q.iter().sum::<f64>();
        q[k] += beyond.max(0.0);
        let m: f64 = (1..=k).map(|a| a as f64 * q[a]).sum();
        let pair: Vec<f64> = (1..=k)
            .flat_map(|a| (1..=k).map(move |b| (a, b)))
            .map(|(a, b)| if m > 0.0 { a as f64 * q[a] * b as f64 * q[b] / m } else { 0.0 })
            .collect();
        self.pair_closure(&pair).ok()
    }

    /// Number of non-zeros of the Jacobian factors `A, B, C, D` (memory grows with it).
    pub fn jacobian_nonzeros(&self) -> usize {
        self.pattern.nnz()
    }
}

impl MeanFieldModel for RedundancyTriplet {
    fn name(&self) -> String {
        "Red(2) PS triplet approximation".into()
    }
    fn dim(&self) -> usize {
        self.ix().n()
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        self.evaluate(x, Some(dx), None);
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Triplet { levels: self.k }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        redundancy_observables(&self.tail(x), self.lambda, 2, Discipline::Ps)
    }
    fn stability(&self) -> Stability {
        iid_stability(self.lambda, 2)
    }
    fn project(&self, x: &mut [f64]) {
        x.iter_mut().for_each(|v| *v = v.max(0.0));
    }
    fn start_state(&self) -> Option<Vec<f64>> {
        self.mean_field_start()
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
}

impl AnalyticJacobian for RedundancyTriplet {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Sparse(self.pattern.clone())
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        jac.clear();
        self.evaluate(x, None, Some(jac));
    }
}
