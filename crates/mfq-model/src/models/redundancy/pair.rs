//! Pair approximations of redundancy-2 (i.i.d. exponential copies) for PS, FCFS, LPS(k), LCFS.
//!
//! All four share one engine. Each job is an edge between its two servers; an edge seen from
//! one of its servers (an *endpoint*) has an endpoint state `s` (PS: the queue length; FCFS
//! and LPS(k): the position from the front and `min(Q, k)`; LCFS: the position from the back).
//! The state is `E[s, t]` = (1/N) x the number of ordered (edge, endpoint) pairs with the
//! endpoint in state `s` and the other server in state `t` (each job counted twice).
//!
//! ```text
//! dE[s,t]/dt = 2 lambda beta_s beta_t                              (new jobs)
//!            - (sigma_s + sigma_t) E[s,t]                          (the job completes at either server)
//!            + sum_{s' -> s} r_{s's} E[s',t] - sum_{s -> s'} r_{ss'} E[s,t]   (endpoint moves)
//!            + (the same for t)
//! ```
//!
//! `sigma_s` is the service rate a copy in state `s` receives, `beta_s` the probability that
//! a new copy starts in state `s`, `r` the rates at which the endpoint state changes because
//! of the *other* copies at the same server (arrivals, and departures of other jobs caused by
//! service here or at their own other server). The pair closure: the other server of a
//! neighbouring copy in state `p` is in state `t` with probability `E[p, t] / M(p)`,
//! `M(p) = sum_t E[p, t]`. Arrivals are admitted only when both chosen servers hold fewer
//! than `K` copies.
//!
//! The rates depend on the state through auxiliary quantities `u` (row sums, cumulative
//! sums of ratios), so the Jacobian is `A + B D^{-1} C` with sparse factors
//! ([`crate::SparsityPattern`] with a coupling): memory grows with the non-zeros.

use super::mean_field::common_extras;
use super::{iid_stability, Discipline};
use crate::AnalyticJacobian;
use crate::{out_of_range, Jacobian, MeanFieldModel, ModelError, Observables, Sparsity, SparsityPattern, Stability, StateLayout};
use std::sync::{Arc, Mutex};

/// Guard in ratios `N / (M + EPS)` of aggregates that vanish at the empty state.
pub(crate) const EPS: f64 = 1e-13;

/// The discipline-specific part of a pair approximation (see the module docs).
pub(crate) trait PairRules: Send + Sync + std::fmt::Debug {
    /// Number of endpoint states.
    fn states(&self) -> usize;
    /// Truncation level `K`.
    fn levels(&self) -> usize;
    /// Name of the endpoint coordinate (for [`StateLayout::Pair`]).
    fn coordinate(&self) -> &'static str;
    /// Service rate of a copy in endpoint state `s`.
    fn service(&self, s: usize) -> f64;
    /// Outgoing transitions of `s` (target, auxiliary quantities the rate depends on).
    fn transitions(&self, s: usize) -> Vec<(usize, Vec<usize>)>;
    /// Auxiliary quantities `beta_s` depends on.
    fn arrival_deps(&self, s: usize) -> Vec<usize>;
    /// Number of auxiliary quantities `r`.
    fn aux_len(&self) -> usize;
    /// Patterns of `C` (rows over pair indices) and `D` (rows over auxiliaries).
    fn aux_pattern(&self) -> (Vec<Vec<usize>>, Vec<Vec<usize>>);
    /// The auxiliary quantities at `e`.
    fn compute_aux(&self, e: &[f64], u: &mut [f64]);
    /// `C = -dG/dE` and `D = dG/du` of the implicit definition `G(u, E) = 0`.
    fn aux_jacobian(&self, e: &[f64], u: &[f64], jac: &mut Jacobian);
    /// Rate of the `k`-th outgoing transition of `s`; `d` receives its derivatives w.r.t. its deps.
    fn rate(&self, s: usize, k: usize, u: &[f64], d: &mut [f64]) -> f64;
    /// `beta_s`; `d` receives its derivatives w.r.t. its deps.
    fn arrival(&self, s: usize, u: &[f64], d: &mut [f64]) -> f64;
    /// `P(Q >= i)`, `i = 1..K`.
    fn tail(&self, u: &[f64], out: &mut [f64]);
    /// Endpoint masses `M(s)` when the queue lengths have the distribution `q[0..=K]` and
    /// the copies of a server are in every position (used for the independent start).
    fn endpoint_masses(&self, q: &[f64]) -> Vec<f64>;
}

#[derive(Debug, Default)]
struct Scratch {
    u: Vec<f64>,
    rate: Vec<f64>,
    drate: Vec<f64>,
    out: Vec<f64>,
    beta: Vec<f64>,
    dbeta: Vec<f64>,
}

/// The shared engine: the structure of the transitions, the Jacobian pattern, scratch space.
#[derive(Debug)]
pub(crate) struct PairEngine<R: PairRules> {
    pub(crate) rules: R,
    lambda: f64,
    ns: usize,
    service: Vec<f64>,
    // outgoing transitions of s: tr_ptr[s]..tr_ptr[s+1]; target tr_to[g]; deps dep_ptr[g]..dep_ptr[g+1]
    tr_ptr: Vec<usize>,
    tr_to: Vec<usize>,
    tr_from: Vec<usize>,
    dep_ptr: Vec<usize>,
    deps: Vec<usize>,
    // incoming transitions of s: in_ptr[s]..in_ptr[s+1] -> global transition index
    in_ptr: Vec<usize>,
    in_tr: Vec<usize>,
    beta_ptr: Vec<usize>,
    beta_deps: Vec<usize>,
    pattern: Arc<SparsityPattern>,
    scratch: Mutex<Scratch>,
}

impl<R: PairRules> PairEngine<R> {
    pub(crate) fn new(rules: R, lambda: f64) -> Self {
        let ns = rules.states();
        let n = ns * ns;
        let service: Vec<f64> = (0..ns).map(|s| rules.service(s)).collect();
        let (mut tr_ptr, mut tr_to, mut tr_from, mut dep_ptr, mut deps) = (vec![0], Vec::new(), Vec::new(), vec![0], Vec::new());
        for s in 0..ns {
            for (to, d) in rules.transitions(s) {
                tr_to.push(to);
                tr_from.push(s);
                deps.extend(d);
                dep_ptr.push(deps.len());
            }
            tr_ptr.push(tr_to.len());
        }
        let mut incoming = vec![Vec::new(); ns];
        for (g, &to) in tr_to.iter().enumerate() {
            incoming[to].push(g);
        }
        let mut in_ptr = vec![0];
        let mut in_tr = Vec::new();
        for v in incoming {
            in_tr.extend(v);
            in_ptr.push(in_tr.len());
        }
        let (mut beta_ptr, mut beta_deps) = (vec![0], Vec::new());
        for s in 0..ns {
            beta_deps.extend(rules.arrival_deps(s));
            beta_ptr.push(beta_deps.len());
        }
        // pattern of A and B, row by row
        let mut a_rows = Vec::with_capacity(n);
        let mut b_rows = Vec::with_capacity(n);
        for s in 0..ns {
            for t in 0..ns {
                let mut a = vec![s * ns + t];
                let mut b: Vec<usize> = Vec::new();
                for (me, other, flip) in [(s, t, false), (t, s, true)] {
                    let idx = |p: usize| if flip { other * ns + p } else { p * ns + other };
                    b.extend_from_slice(&beta_deps[beta_ptr[me]..beta_ptr[me + 1]]);
                    for g in tr_ptr[me]..tr_ptr[me + 1] {
                        b.extend_from_slice(&deps[dep_ptr[g]..dep_ptr[g + 1]]);
                    }
                    for &g in &in_tr[in_ptr[me]..in_ptr[me + 1]] {
                        a.push(idx(tr_from[g]));
                        b.extend_from_slice(&deps[dep_ptr[g]..dep_ptr[g + 1]]);
                    }
                }
                a_rows.push(a);
                b_rows.push(b);
            }
        }
        let (c_rows, d_rows) = rules.aux_pattern();
        let r = rules.aux_len();
        let pattern = SparsityPattern::from_rows(n, a_rows).with_coupling(r, b_rows, c_rows, d_rows);
        let ntr = tr_to.len();
        let scratch = Scratch {
            u: vec![0.0; r],
            rate: vec![0.0; ntr],
            drate: vec![0.0; deps.len()],
            out: vec![0.0; ns],
            beta: vec![0.0; ns],
            dbeta: vec![0.0; beta_deps.len()],
        };
        PairEngine {
            rules,
            lambda,
            ns,
            service,
            tr_ptr,
            tr_to,
            tr_from,
            dep_ptr,
            deps,
            in_ptr,
            in_tr,
            beta_ptr,
            beta_deps,
            pattern: Arc::new(pattern),
            scratch: Mutex::new(scratch),
        }
    }

    pub(crate) fn dim(&self) -> usize {
        self.ns * self.ns
    }

    pub(crate) fn sparsity(&self) -> Sparsity {
        Sparsity::Sparse(self.pattern.clone())
    }

    fn evaluate(&self, e: &[f64], sc: &mut Scratch) {
        let Scratch { u, rate, drate, out, beta, dbeta } = sc;
        self.rules.compute_aux(e, u);
        for s in 0..self.ns {
            let mut o = 0.0;
            for (k, g) in (self.tr_ptr[s]..self.tr_ptr[s + 1]).enumerate() {
                rate[g] = self.rules.rate(s, k, u, &mut drate[self.dep_ptr[g]..self.dep_ptr[g + 1]]);
                o += rate[g];
            }
            out[s] = o;
            beta[s] = self.rules.arrival(s, u, &mut dbeta[self.beta_ptr[s]..self.beta_ptr[s + 1]]);
        }
    }

    pub(crate) fn drift(&self, e: &[f64], de: &mut [f64]) {
        let mut guard = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let sc = &mut *guard;
        self.evaluate(e, sc);
        let ns = self.ns;
        let l2 = 2.0 * self.lambda;
        for s in 0..ns {
            for t in 0..ns {
                let i = s * ns + t;
                let mut v = l2 * sc.beta[s] * sc.beta[t] - (self.service[s] + self.service[t] + sc.out[s] + sc.out[t]) * e[i];
                for &g in &self.in_tr[self.in_ptr[s]..self.in_ptr[s + 1]] {
                    v += sc.rate[g] * e[self.tr_from[g] * ns + t];
                }
                for &g in &self.in_tr[self.in_ptr[t]..self.in_ptr[t + 1]] {
                    v += sc.rate[g] * e[s * ns + self.tr_from[g]];
                }
                de[i] = v;
            }
        }
    }

    pub(crate) fn jacobian(&self, e: &[f64], jac: &mut Jacobian) {
        jac.clear();
        let mut guard = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        let sc = &mut *guard;
        self.evaluate(e, sc);
        let ns = self.ns;
        let l2 = 2.0 * self.lambda;
        for s in 0..ns {
            for t in 0..ns {
                let i = s * ns + t;
                jac.add(i, i, -(self.service[s] + self.service[t] + sc.out[s] + sc.out[t]));
                for (me, other, flip) in [(s, t, false), (t, s, true)] {
                    let idx = |p: usize| if flip { other * ns + p } else { p * ns + other };
                    // new jobs: d(beta_me beta_other)
                    for q in self.beta_ptr[me]..self.beta_ptr[me + 1] {
                        jac.add_coupling_b(i, self.beta_deps[q], l2 * sc.dbeta[q] * sc.beta[other]);
                    }
                    // outgoing moves of this endpoint
                    for g in self.tr_ptr[me]..self.tr_ptr[me + 1] {
                        for q in self.dep_ptr[g]..self.dep_ptr[g + 1] {
                            jac.add_coupling_b(i, self.deps[q], -sc.drate[q] * e[i]);
                        }
                    }
                    // incoming moves
                    for &g in &self.in_tr[self.in_ptr[me]..self.in_ptr[me + 1]] {
                        let j = idx(self.tr_from[g]);
                        jac.add(i, j, sc.rate[g]);
                        for q in self.dep_ptr[g]..self.dep_ptr[g + 1] {
                            jac.add_coupling_b(i, self.deps[q], sc.drate[q] * e[j]);
                        }
                    }
                }
            }
        }
        self.rules.aux_jacobian(e, &sc.u, jac);
    }

    /// `P(Q >= i)`, `i = 1..K`, at `e`.
    pub(crate) fn tail(&self, e: &[f64]) -> Vec<f64> {
        let mut u = vec![0.0; self.rules.aux_len()];
        self.rules.compute_aux(e, &mut u);
        let mut x = vec![0.0; self.rules.levels()];
        self.rules.tail(&u, &mut x);
        x
    }

    /// The independent closure `E[s, t] = M(s) M(t) / m` of a queue-length distribution.
    pub(crate) fn independent_state(&self, q: &[f64]) -> Vec<f64> {
        let mass = self.rules.endpoint_masses(q);
        let m: f64 = mass.iter().sum();
        let ns = self.ns;
        let mut e = vec![0.0; ns * ns];
        if m > 0.0 {
            for s in 0..ns {
                for t in 0..ns {
                    e[s * ns + t] = mass[s] * mass[t] / m;
                }
            }
        }
        e
    }

    pub(crate) fn layout(&self) -> StateLayout {
        StateLayout::Pair { states: self.ns, levels: self.rules.levels(), coordinate: self.rules.coordinate().into() }
    }

    #[allow(dead_code)]
    pub(crate) fn transition_targets(&self, s: usize) -> &[usize] {
        &self.tr_to[self.tr_ptr[s]..self.tr_ptr[s + 1]]
    }
}

/// Observables of a redundancy-2 state with tail `x` (copies), job-level blocking at `K`.
pub(crate) fn redundancy_observables(x: &[f64], lambda: f64, d: u32, discipline: Discipline) -> Observables {
    let k_full = x.last().copied().unwrap_or(0.0).clamp(0.0, 1.0);
    // a job is admitted iff none of its d servers is full
    let loss = 1.0 - (1.0 - k_full).powi(d as i32);
    let mut o = Observables::from_tail(x, lambda * d as f64, None, loss);
    let m = o.mean_queue_length.unwrap_or(0.0);
    o.extras = common_extras(m, d, lambda, discipline);
    o
}

// ---------------------------------------------------------------------------------------
// PS: endpoint state = queue length a = 1..K (s = a - 1)
// ---------------------------------------------------------------------------------------

/// PS rules: `sigma_a = 1/a`; up `a -> a+1` at `2 lambda (1 - p_K)`; down `a -> a-1` at
/// `(a-1)/a + (a-1) N_a / (a p_a)` with `p_a = M(a)/a` (fraction of servers with `a` copies)
/// and `N_a = sum_b E[a,b]/b`; `beta_a = p_{a-1}`.
/// Auxiliaries: `p_1..p_K` (0..K), `N_1..N_K` (K..2K), `p_0` (2K).
#[derive(Debug)]
pub(crate) struct PsRules {
    pub(crate) k: usize,
    pub(crate) lambda: f64,
}

impl PairRules for PsRules {
    fn states(&self) -> usize {
        self.k
    }
    fn levels(&self) -> usize {
        self.k
    }
    fn coordinate(&self) -> &'static str {
        "queue-length"
    }
    fn service(&self, s: usize) -> f64 {
        1.0 / (s + 1) as f64
    }
    fn transitions(&self, s: usize) -> Vec<(usize, Vec<usize>)> {
        let (k, a) = (self.k, s + 1);
        let mut v = Vec::new();
        if a < k {
            v.push((s + 1, vec![k - 1]));
        }
        if a >= 2 {
            v.push((s - 1, vec![k + s, s]));
        }
        v
    }
    fn arrival_deps(&self, s: usize) -> Vec<usize> {
        vec![if s == 0 { 2 * self.k } else { s - 1 }]
    }
    fn aux_len(&self) -> usize {
        2 * self.k + 1
    }
    fn aux_pattern(&self) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let k = self.k;
        let mut c = Vec::with_capacity(2 * k + 1);
        let mut d = Vec::with_capacity(2 * k + 1);
        for _ in 0..2 {
            for a in 0..k {
                c.push((0..k).map(|b| a * k + b).collect());
            }
        }
        c.push(Vec::new());
        for j in 0..2 * k {
            d.push(vec![j]);
        }
        d.push((0..k).chain(std::iter::once(2 * k)).collect());
        (c, d)
    }
    fn compute_aux(&self, e: &[f64], u: &mut [f64]) {
        let k = self.k;
        let mut total = 0.0;
        for a in 0..k {
            let (mut m, mut nn) = (0.0, 0.0);
            for b in 0..k {
                let v = e[a * k + b];
                m += v;
                nn += v / (b + 1) as f64;
            }
            u[a] = m / (a + 1) as f64;
            u[k + a] = nn;
            total += u[a];
        }
        u[2 * k] = 1.0 - total;
    }
    fn aux_jacobian(&self, _e: &[f64], _u: &[f64], jac: &mut Jacobian) {
        let k = self.k;
        for a in 0..k {
            for b in 0..k {
                jac.add_coupling_c(a, a * k + b, 1.0 / (a + 1) as f64);
                jac.add_coupling_c(k + a, a * k + b, 1.0 / (b + 1) as f64);
            }
            jac.add_coupling_d(a, a, 1.0);
            jac.add_coupling_d(k + a, k + a, 1.0);
            jac.add_coupling_d(2 * k, a, 1.0);
        }
        jac.add_coupling_d(2 * k, 2 * k, 1.0);
    }
    fn rate(&self, s: usize, idx: usize, u: &[f64], d: &mut [f64]) -> f64 {
        let (k, a) = (self.k, s + 1);
        let up = a < k;
        if up && idx == 0 {
            d[0] = -2.0 * self.lambda;
            return 2.0 * self.lambda * (1.0 - u[k - 1]);
        }
        // down: (a-1)/a + (a-1) N_a / (a p_a + eps)
        let af = a as f64;
        let den = af * u[s].max(0.0) + EPS;
        let nn = u[k + s].max(0.0);
        d[0] = if u[k + s] >= 0.0 { (af - 1.0) / den } else { 0.0 };
        d[1] = if u[s] >= 0.0 { -(af - 1.0) * nn * af / (den * den) } else { 0.0 };
        (af - 1.0) / af + (af - 1.0) * nn / den
    }
    fn arrival(&self, s: usize, u: &[f64], d: &mut [f64]) -> f64 {
        d[0] = 1.0;
        if s == 0 {
            u[2 * self.k]
        } else {
            u[s - 1]
        }
    }
    fn tail(&self, u: &[f64], out: &mut [f64]) {
        let mut acc = 0.0;
        for a in (0..self.k).rev() {
            acc += u[a];
            out[a] = acc;
        }
    }
    fn endpoint_masses(&self, q: &[f64]) -> Vec<f64> {
        (1..=self.k).map(|a| a as f64 * q[a]).collect()
    }
}

// ---------------------------------------------------------------------------------------
// LPS(k) (FCFS = LPS(1)): endpoint state = (position i from the front, c = min(Q, k))
// ---------------------------------------------------------------------------------------

/// LPS(k) rules (see `docs/models/redundancy.md` for the derivation). Endpoint states
/// `(i, c)`: `i <= k` with `c = i..k`, then `(i, k)` for `i = k+1..K`. A copy is served at
/// rate `1/c` when `i <= k`. Auxiliaries: `x_1..x_K` (0..K), `M(s)` (K + s), `N(s)` (K + ns + s),
/// `A(s)` (K + 2 ns + s), the total rate of departures ahead of a copy in state `s`:
/// `A(i,c) = sum_{p < i} (1{p <= k}/c + N(p,c)/M(p,c))` (by recurrence in `i`).
#[derive(Debug)]
pub(crate) struct LpsRules {
    /// served positions: the `k` oldest copies (ignored with `lcfs`)
    pub(crate) k: usize,
    /// tracking level `L >= k`: the endpoint keeps `c = min(Q, L)`; `L = K` keeps `Q` exactly
    pub(crate) track: usize,
    /// preemptive LCFS: the copy at position `Q` (the newest) is served at rate 1 (needs `L = K`)
    pub(crate) lcfs: bool,
    pub(crate) levels: usize,
    pub(crate) lambda: f64,
    /// (i, c) of each state
    st: Vec<(usize, usize)>,
}

impl LpsRules {
    pub(crate) fn new(k: usize, track: usize, levels: usize, lcfs: bool, lambda: f64) -> Self {
        debug_assert!(track >= k && track <= levels && (!lcfs || track == levels));
        let mut st = Vec::new();
        for i in 1..=track {
            for c in i..=track {
                st.push((i, c));
            }
        }
        for i in track + 1..=levels {
            st.push((i, track));
        }
        LpsRules { k, track, lcfs, levels, lambda, st }
    }
    /// Whether `c = L` means `Q = L` exactly (`L = K`: no closure at the tracking level).
    #[inline]
    fn top_exact(&self) -> bool {
        self.track == self.levels
    }
    /// Service rate of the copy at position `p` of a server in tracking state `c`.
    #[inline]
    fn sigma(&self, p: usize, c: usize) -> f64 {
        if self.lcfs {
            if p == c {
                1.0
            } else {
                0.0
            }
        } else if p <= self.k {
            1.0 / c.min(self.k) as f64
        } else {
            0.0
        }
    }
    #[inline]
    fn idx(&self, i: usize, c: usize) -> usize {
        if i == 1 {
            c - 1
        } else if i <= self.track {
            // states with i' < i: sum_{i'<i} (L - i' + 1)
            let before = (i - 1) * self.track - (i - 1) * (i - 2) / 2;
            before + (c - i)
        } else {
            self.track * (self.track + 1) / 2 + (i - self.track - 1)
        }
    }
    fn ns(&self) -> usize {
        self.st.len()
    }
    fn ax(&self, i: usize) -> usize {
        i - 1
    }
    fn am(&self, s: usize) -> usize {
        self.levels + s
    }
    fn an(&self, s: usize) -> usize {
        self.levels + self.ns() + s
    }
    fn aa(&self, s: usize) -> usize {
        self.levels + 2 * self.ns() + s
    }
    #[inline]
    fn theta(&self, u: &[f64]) -> (f64, f64, f64) {
        let (xk, xk1) = (u[self.ax(self.track)].max(0.0), u[self.ax(self.track + 1)].max(0.0));
        let den = xk + EPS;
        ((xk - xk1).max(0.0) / den, (EPS + xk1) / (den * den), -1.0 / den)
    }
    #[inline]
    fn ratio(&self, u: &[f64], s: usize) -> (f64, f64, f64) {
        let m = u[self.am(s)].max(0.0);
        let n = u[self.an(s)].max(0.0);
        let den = m + EPS;
        (n / den, 1.0 / den, -n / (den * den))
    }
}

impl PairRules for LpsRules {
    fn states(&self) -> usize {
        self.ns()
    }
    fn levels(&self) -> usize {
        self.levels
    }
    fn coordinate(&self) -> &'static str {
        "position,min(Q,L)"
    }
    fn service(&self, s: usize) -> f64 {
        let (i, c) = self.st[s];
        self.sigma(i, c)
    }
    fn transitions(&self, s: usize) -> Vec<(usize, Vec<usize>)> {
        let (i, c) = self.st[s];
        let k = self.track;
        let exact = c < k || self.top_exact();
        let mut v = Vec::new();
        if c < k {
            v.push((self.idx(i, c + 1), vec![self.ax(self.levels)]));
        }
        if i >= 2 {
            if exact {
                v.push((self.idx(i - 1, c - 1), vec![self.aa(s)]));
            } else if i <= k {
                let dep = vec![self.aa(s), self.ax(k), self.ax(k + 1)];
                v.push((self.idx(i - 1, k - 1), dep.clone()));
                v.push((self.idx(i - 1, k), dep));
            } else {
                v.push((self.idx(i - 1, k), vec![self.aa(s)]));
            }
        }
        if i < c {
            let mut dep = Vec::new();
            if !exact {
                dep.extend([self.ax(k), self.ax(k + 1)]);
            }
            for p in i + 1..=c {
                let sp = self.idx(p, c);
                dep.extend([self.an(sp), self.am(sp)]);
            }
            v.push((self.idx(i, c - 1), dep));
        }
        v
    }
    fn arrival_deps(&self, s: usize) -> Vec<usize> {
        let (i, c) = self.st[s];
        if c != i.min(self.track) {
            return Vec::new();
        }
        if i >= 2 {
            vec![self.ax(i - 1), self.ax(i)]
        } else {
            vec![self.ax(1)]
        }
    }
    fn aux_len(&self) -> usize {
        self.levels + 3 * self.ns()
    }
    fn aux_pattern(&self) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let ns = self.ns();
        let r = self.aux_len();
        let mut c = vec![Vec::new(); r];
        let mut d = vec![Vec::new(); r];
        for (s, &(i, _)) in self.st.iter().enumerate() {
            c[self.ax(i)].extend((0..ns).map(|t| s * ns + t));
            c[self.am(s)].extend((0..ns).map(|t| s * ns + t));
            c[self.an(s)].extend((0..ns).filter(|&t| self.service(t) > 0.0).map(|t| s * ns + t));
            d[self.am(s)].push(self.am(s));
            d[self.an(s)].push(self.an(s));
            let a = self.aa(s);
            d[a].push(a);
            if i >= 2 {
                let prev = self.idx(i - 1, self.st[s].1);
                if i >= 3 {
                    d[a].push(self.aa(prev));
                }
                d[a].extend([self.an(prev), self.am(prev)]);
            }
        }
        for i in 1..=self.levels {
            d[self.ax(i)].push(self.ax(i));
        }
        (c, d)
    }
    fn compute_aux(&self, e: &[f64], u: &mut [f64]) {
        let ns = self.ns();
        u[..self.levels].iter_mut().for_each(|v| *v = 0.0);
        for (s, &(i, _)) in self.st.iter().enumerate() {
            let (mut m, mut n) = (0.0, 0.0);
            for t in 0..ns {
                let v = e[s * ns + t];
                m += v;
                n += v * self.service(t);
            }
            u[self.am(s)] = m;
            u[self.an(s)] = n;
            u[self.ax(i)] += m;
        }
        // A(i, c) by recurrence in i (states are ordered so that (i-1, c) precedes (i, c))
        for (s, &(i, c)) in self.st.iter().enumerate() {
            u[self.aa(s)] = if i >= 2 {
                let prev = self.idx(i - 1, c);
                let own = self.sigma(i - 1, c);
                u[self.aa(prev)] + own + self.ratio(u, prev).0
            } else {
                0.0
            };
        }
    }
    fn aux_jacobian(&self, _e: &[f64], u: &[f64], jac: &mut Jacobian) {
        let ns = self.ns();
        for (s, &(i, c)) in self.st.iter().enumerate() {
            for t in 0..ns {
                jac.add_coupling_c(self.ax(i), s * ns + t, 1.0);
                jac.add_coupling_c(self.am(s), s * ns + t, 1.0);
                let q = self.service(t);
                if q > 0.0 {
                    jac.add_coupling_c(self.an(s), s * ns + t, q);
                }
            }
            jac.add_coupling_d(self.am(s), self.am(s), 1.0);
            jac.add_coupling_d(self.an(s), self.an(s), 1.0);
            let a = self.aa(s);
            jac.add_coupling_d(a, a, 1.0);
            if i >= 2 {
                let prev = self.idx(i - 1, c);
                if i >= 3 {
                    jac.add_coupling_d(a, self.aa(prev), -1.0);
                }
                let (_, dn, dm) = self.ratio(u, prev);
                jac.add_coupling_d(a, self.an(prev), if u[self.an(prev)] >= 0.0 { -dn } else { 0.0 });
                jac.add_coupling_d(a, self.am(prev), if u[self.am(prev)] >= 0.0 { -dm } else { 0.0 });
            }
        }
        for i in 1..=self.levels {
            jac.add_coupling_d(self.ax(i), self.ax(i), 1.0);
        }
    }
    fn rate(&self, s: usize, idx: usize, u: &[f64], d: &mut [f64]) -> f64 {
        let (i, c) = self.st[s];
        let k = self.track;
        let exact = c < k || self.top_exact();
        let mut which = idx;
        if c < k {
            if which == 0 {
                d[0] = -2.0 * self.lambda;
                return 2.0 * self.lambda * (1.0 - u[self.ax(self.levels)]);
            }
            which -= 1;
        }
        if i >= 2 {
            let a = u[self.aa(s)];
            if exact || i > k {
                if which == 0 {
                    d[0] = 1.0;
                    return a;
                }
                which -= 1;
            } else {
                let (th, dk, dk1) = self.theta(u);
                if which <= 1 {
                    let sign = if which == 0 { 1.0 } else { -1.0 };
                    let w = if which == 0 { th } else { 1.0 - th };
                    d[0] = w;
                    d[1] = sign * a * dk;
                    d[2] = sign * a * dk1;
                    return w * a;
                }
                which -= 2;
            }
        }
        debug_assert!(which == 0 && i < c);
        // behind departures (only when Q = c exactly; for c = L < K with probability theta)
        let mut sum = 0.0;
        let off = if exact { 0 } else { 2 };
        for (j, p) in (i + 1..=c).enumerate() {
            let sp = self.idx(p, c);
            let (g, dn, dm) = self.ratio(u, sp);
            sum += self.sigma(p, c) + g;
            d[off + 2 * j] = if u[self.an(sp)] >= 0.0 { dn } else { 0.0 };
            d[off + 2 * j + 1] = if u[self.am(sp)] >= 0.0 { dm } else { 0.0 };
        }
        if !exact {
            let (th, dk, dk1) = self.theta(u);
            d[0] = sum * dk;
            d[1] = sum * dk1;
            for v in &mut d[2..] {
                *v *= th;
            }
            th * sum
        } else {
            sum
        }
    }
    fn arrival(&self, s: usize, u: &[f64], d: &mut [f64]) -> f64 {
        let (i, c) = self.st[s];
        if c != i.min(self.track) {
            return 0.0;
        }
        if i >= 2 {
            d[0] = 1.0;
            d[1] = -1.0;
            u[self.ax(i - 1)] - u[self.ax(i)]
        } else {
            d[0] = -1.0;
            1.0 - u[self.ax(1)]
        }
    }
    fn tail(&self, u: &[f64], out: &mut [f64]) {
        out.copy_from_slice(&u[..self.levels]);
    }
    fn endpoint_masses(&self, q: &[f64]) -> Vec<f64> {
        let tail = |i: usize| q[i..].iter().sum::<f64>();
        self.st.iter().map(|&(i, c)| if i > self.track || c == self.track { tail(i.max(c)) } else { q[c] }).collect()
    }
}

// ---------------------------------------------------------------------------------------
// the model
// ---------------------------------------------------------------------------------------

#[derive(Debug)]
enum Engine {
    Ps(PairEngine<PsRules>),
    Lps(PairEngine<LpsRules>),
}

macro_rules! with_engine {
    ($self:expr, $e:ident => $body:expr) => {
        match &$self.engine {
            Engine::Ps($e) => $body,
            Engine::Lps($e) => $body,
        }
    };
}

/// Pair approximation of redundancy-2 with i.i.d. exponential copies, for PS, FCFS, LPS(k)
/// and LCFS (derived; see the module docs and `docs/models/redundancy.md`).
///
/// State ([`StateLayout::Pair`]): `E[s, t]` over endpoint states, `s` = queue length `1..K`
/// (PS, `K^2` states), `(position, min(Q, k))` (FCFS = LPS(1): `K^2`; LPS(k):
/// `(K + k(k-1)/2)^2`), position from the back `1..K` (LCFS, `K^2`).
///
/// PS is the dynamic random-graph pair approximation of Gast and Van Houdt (2024) as
/// reconstructed in docs/models/redundancy.md (`dP[a,b]/dt`, "PS pair"); FCFS, LPS(k) and LCFS use
/// positions instead of queue lengths, because under these disciplines whether a copy is
/// served depends on its place in the queue. Mean copies per server are within 1% of
/// simulation (see the tests).
#[derive(Debug)]
pub struct RedundancyPair {
    lambda: f64,
    d: u32,
    discipline: Discipline,
    lps_k: u32,
    engine: Engine,
}

impl RedundancyPair {
    /// The pair approximation at arrival rate `lambda` per server, truncated at `levels` = K
    /// copies per server. `lps_k` is used with [`Discipline::Lps`] only (FCFS is LPS(1)).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] for `lambda` not finite or `<= 0`, `d != 2`,
    /// `levels < 2` (LPS: `levels < lps_k + 2`), `levels > 300` (PS) or `> 20` (FCFS, LPS,
    /// LCFS), `lps_k = 0`.
    pub fn new(lambda: f64, d: u32, discipline: Discipline, lps_k: u32, levels: usize) -> Result<Self, ModelError> {
        /// Largest truncation level of the positional (FCFS, LPS, LCFS) pair approximations.
        const MAX_POSITIONAL_LEVELS: usize = 20;
        /// Largest truncation level of the PS pair approximation (`K^2` states, 90 000 at 300).
        const MAX_PS_LEVELS: usize = 300;
        super::check_common(lambda, d)?;
        if d != 2 {
            return Err(out_of_range("model.d", d, "2 (the pair approximations are for redundancy-2)"));
        }
        let k = match discipline {
            Discipline::Fcfs => 1,
            Discipline::Lps if lps_k >= 1 => lps_k as usize,
            Discipline::Lps => return Err(out_of_range("model.lps_k", lps_k, "an integer >= 1")),
            _ => 0,
        };
        let min_levels = if k > 0 { k + 2 } else { 2 };
        if levels < min_levels {
            return Err(out_of_range("truncation.levels", levels, &format!("an integer >= {min_levels}")));
        }
        // the positional pairs (FCFS, LPS(k), LCFS) have (K(K+1)/2)^2 states and a bordered
        // solve whose memory grows like K^6: cap K where a solve still fits in a few GB
        if discipline != Discipline::Ps && levels > MAX_POSITIONAL_LEVELS {
            return Err(out_of_range(
                "truncation.levels",
                levels,
                &format!(
                    "at most {MAX_POSITIONAL_LEVELS} for the FCFS/LPS/LCFS pair approximations ((K(K+1)/2)^2 states); \
                     set truncation.levels and a truncation.tol the tail reaches at that K"
                ),
            ));
        }
        if discipline == Discipline::Ps && levels > MAX_PS_LEVELS {
            return Err(out_of_range(
                "truncation.levels",
                levels,
                &format!("at most {MAX_PS_LEVELS} for the PS pair approximation (K^2 states)"),
            ));
        }
        let engine = match discipline {
            Discipline::Ps => Engine::Ps(PairEngine::new(PsRules { k: levels, lambda }, lambda)),
            Discipline::Fcfs | Discipline::Lps => Engine::Lps(PairEngine::new(LpsRules::new(k, levels, levels, false, lambda), lambda)),
            Discipline::Lcfs => Engine::Lps(PairEngine::new(LpsRules::new(1, levels, levels, true, lambda), lambda)),
            Discipline::Ros => return Err(out_of_range(super::ROS_FIELD, "ros", super::ROS_ALLOWED)),
        };
        Ok(RedundancyPair { lambda, d, discipline, lps_k: k.max(1) as u32, engine })
    }

    /// `P(Q >= i)` (copies), `i = 1..K`, at the state `x`.
    pub fn tail(&self, x: &[f64]) -> Vec<f64> {
        with_engine!(self, e => e.tail(x))
    }

    /// A starting state for the fixed-point solvers: the independent closure
    /// `E[s, t] = M(s) M(t) / m` of the mean-field fixed point ([`super::MeanFieldFixedPoint`]),
    /// which is within about 1% of the pair fixed point. `None` for `lambda >= 1`.
    pub fn mean_field_start(&self) -> Option<Vec<f64>> {
        let fp = super::MeanFieldFixedPoint::solve(self.lambda, self.d).ok()?;
        let k = with_engine!(self, e => e.rules.levels());
        let mut q = fp.distribution(k + 1);
        // admitted-job truncation: put the mass beyond K into K
        let beyond: f64 = 1.0 - q.iter().sum::<f64>();
        q[k] += beyond.max(0.0);
        Some(with_engine!(self, e => e.independent_state(&q)))
    }

    /// Number of non-zeros of the Jacobian factors `A, B, C, D` (memory grows with it).
    pub fn jacobian_nonzeros(&self) -> usize {
        with_engine!(self, e => match e.sparsity() { Sparsity::Sparse(p) => p.nnz(), _ => 0 })
    }
}

impl MeanFieldModel for RedundancyPair {
    fn name(&self) -> String {
        format!("Red({}) {} pair approximation", self.d, self.discipline.label(self.lps_k))
    }
    fn dim(&self) -> usize {
        with_engine!(self, e => e.dim())
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        with_engine!(self, e => e.drift(x, dx))
    }
    fn layout(&self) -> StateLayout {
        with_engine!(self, e => e.layout())
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let tail = self.tail(x);
        redundancy_observables(&tail, self.lambda, self.d, self.discipline)
    }
    fn stability(&self) -> Stability {
        iid_stability(self.lambda, self.d)
    }
    /// Clamps every entry at 0; for PS also scales a state whose servers with copies
    /// `sum_a p_a = sum_{a,b} E[a,b] / a` exceed 1 down to `sum_a p_a = 1` (`p_0 = 0`: every
    /// server busy). The default `full` state (every entry 1) has `sum_a p_a = K H_K` (280 at
    /// K = 60) and a drift of order 1e5: the checker's runs from it and from the random
    /// convex combinations with it made no progress. Feasible states are left unchanged (the
    /// dynamics keep `sum_a p_a <= 1`).
    fn project(&self, x: &mut [f64]) {
        x.iter_mut().for_each(|v| *v = v.max(0.0));
        if let Engine::Ps(e) = &self.engine {
            let k = e.rules.k;
            let busy: f64 = (0..k).map(|a| x[a * k..(a + 1) * k].iter().sum::<f64>() / (a + 1) as f64).sum();
            if busy > 1.0 {
                let s = 1.0 / busy;
                x.iter_mut().for_each(|v| *v *= s);
            }
        }
    }
    fn start_state(&self) -> Option<Vec<f64>> {
        self.mean_field_start()
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
}

impl AnalyticJacobian for RedundancyPair {
    fn sparsity(&self) -> Sparsity {
        with_engine!(self, e => e.sparsity())
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        with_engine!(self, e => e.jacobian(x, jac))
    }
}
