//! The discipline-independent mean-field model of redundancy-d and its scalar fixed point.

use super::{gardner_fcfs_mean_copies, iid_stability, Discipline};
use crate::models::check_levels;
use crate::models::roots::bracketed_root;
use crate::AnalyticJacobian;
use crate::{out_of_range, Jacobian, MeanFieldModel, ModelError, Observables, Sparsity, SparsityPattern, Stability, StateLayout};
use std::sync::Arc;

/// Floor of the mean queue length in `c = (d - 1) x_1 / max(m, M_FLOOR)` (the empty state has
/// `m = 0`). A floor, not an added guard: `m + 1e-14` biased `c` at small loads (E[T] = 0.5228
/// instead of 0.5 at lambda = 1e-13, d = 2), since `m` is about `lambda d` there.
const M_FLOOR: f64 = 1e-290;

/// Redundancy-d with i.i.d. exponential copies: the mean-field model that ignores the
/// service discipline (every busy server completes one copy at rate 1 whatever the
/// discipline; the `d - 1` siblings of a completed copy are cancelled at servers chosen
/// size-biased by their number of copies).
///
/// State (tail form, length `K`): `x[k-1] = x_k`, the fraction of servers holding at least
/// `k` copies; `q_k = x_k - x_{k+1}`, `m = sum_k x_k` (mean copies per server).
///
/// ODE (derived; the published "eq:indepq" of Gast and Van Houdt could not be read, see
/// `docs/models/redundancy.md`):
///
/// ```text
/// dx_k/dt = lambda d q_{k-1} - (1 + c k) q_k,   k = 1..K,   c = (d - 1) x_1 / m,
/// ```
///
/// `x_0 = 1`, `x_{K+1} = 0`: copies that would exceed `K` are dropped. The copy-loss rate
/// of a server with `k` copies is `1 + c k`: its own completion plus the cancellations
/// caused by completions elsewhere, `(d - 1) x_1` per server in total, spread in proportion
/// to queue length.
///
/// Fixed point ([`MeanFieldFixedPoint`]): a birth-death chain, `q_k = q_0 prod_{j<=k}
/// lambda d / (1 + c j)`, with `q_0 = 1 - lambda` and the scalar equation
/// `(1 - lambda) a e^x x^{-a} gamma(a, x) = 1`, `a = 1/c`, `x = lambda d / c`.
///
/// Jacobian: tridiagonal plus a rank-one coupling through `c` (sparse pattern with
/// `r = 1`): `A` = derivative at fixed `c`, `B_k = -k q_k`, `D = m`, `C_j = (d - 1) [j = 1] - c`.
///
/// Source: N. Gast and B. Van Houdt, "Approximations to study the impact of the service
/// discipline in systems with redundancy", Proc. ACM Meas. Anal. Comput. Syst. 8(1), 2024
/// (arXiv 2401.07713), section "mean-field approximation" (reconstructed).
#[derive(Debug, Clone)]
pub struct RedundancyMeanField {
    lambda: f64,
    d: u32,
    levels: usize,
    discipline: Discipline,
    pattern: Arc<SparsityPattern>,
    stability: Option<Stability>,
}

impl RedundancyMeanField {
    /// The model at arrival rate `lambda` per server (jobs; each job sends `d` copies),
    /// truncated at `levels` = K copies per server. `discipline` only labels the model and
    /// selects the extras (the drift does not depend on it).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] for `lambda` not finite or `<= 0`, `d = 0`, `levels < 2`.
    pub fn new(lambda: f64, d: u32, discipline: Discipline, levels: usize) -> Result<Self, ModelError> {
        super::check_common(lambda, d)?;
        check_levels(levels)?;
        if levels < 2 {
            return Err(out_of_range("truncation.levels", levels, "an integer >= 2"));
        }
        let n = levels;
        let rows = (0..n).map(|i: usize| (i.saturating_sub(1)..(i + 2).min(n)).collect()).collect();
        let pattern =
            SparsityPattern::from_rows(n, rows).with_coupling(1, (0..n).map(|_| vec![0]).collect(), vec![(0..n).collect()], vec![vec![0]]);
        Ok(RedundancyMeanField { lambda, d, levels, discipline, pattern: Arc::new(pattern), stability: None })
    }

    /// Replaces the stability verdict (used for identical copies, whose region is smaller).
    pub(crate) fn set_stability(&mut self, s: Stability) {
        self.stability = Some(s);
    }

    #[inline]
    fn coefficient(&self, x: &[f64]) -> (f64, f64) {
        let m: f64 = x.iter().map(|v| v.max(0.0)).sum();
        let x1 = x[0].max(0.0);
        ((self.d as f64 - 1.0) * x1 / m.max(M_FLOOR), m)
    }
}

impl MeanFieldModel for RedundancyMeanField {
    fn name(&self) -> String {
        format!("Red({}) mean field", self.d)
    }
    fn dim(&self) -> usize {
        self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        let (c, _) = self.coefficient(x);
        let ld = self.lambda * self.d as f64;
        let n = self.levels;
        let at = |i: usize| {
            if i == 0 {
                1.0
            } else if i <= n {
                x[i - 1]
            } else {
                0.0
            }
        };
        for k in 1..=n {
            let q_prev = at(k - 1) - at(k);
            let q_k = at(k) - at(k + 1);
            dx[k - 1] = ld * q_prev - (1.0 + c * k as f64) * q_k;
        }
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Tail { levels: self.levels }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let loss = x[self.levels - 1].clamp(0.0, 1.0);
        let mut o = Observables::from_tail(x, self.lambda * self.d as f64, None, loss);
        let m = o.mean_queue_length.unwrap_or(0.0);
        let (c, _) = self.coefficient(x);
        o.extras = common_extras(m, self.d, self.lambda, self.discipline);
        o.extras.push(("cancellation_coefficient_c".into(), c));
        o
    }
    fn stability(&self) -> Stability {
        self.stability.clone().unwrap_or_else(|| iid_stability(self.lambda, self.d))
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        let fp = MeanFieldFixedPoint::solve(self.lambda, self.d).ok()?;
        Some(fp.tail(self.levels))
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
}

impl AnalyticJacobian for RedundancyMeanField {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Sparse(self.pattern.clone())
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        jac.clear();
        let (c, m) = self.coefficient(x);
        let ld = self.lambda * self.d as f64;
        let n = self.levels;
        for k in 1..=n {
            let i = k - 1;
            let r = 1.0 + c * k as f64;
            if k >= 2 {
                jac.add(i, i - 1, ld);
            }
            jac.add(i, i, -ld - r);
            if k < n {
                jac.add(i, i + 1, r);
            }
            let q_k = x[i] - if k < n { x[i + 1] } else { 0.0 };
            jac.add_coupling_b(i, 0, -(k as f64) * q_k);
            // G(c, x) = c max(m, floor) - (d - 1) x_1: C = -dG/dx, D = dG/dc
            let dm = if x[i] > 0.0 && m > M_FLOOR { 1.0 } else { 0.0 };
            let dx1 = if k == 1 && x[0] > 0.0 { self.d as f64 - 1.0 } else { 0.0 };
            jac.add_coupling_c(0, i, dx1 - c * dm);
        }
        jac.add_coupling_d(0, 0, m.max(M_FLOOR));
    }
}

/// The fixed point of [`RedundancyMeanField`] (untruncated), from its scalar equation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanFieldFixedPoint {
    /// Arrival rate per server.
    pub lambda: f64,
    /// Copies per job.
    pub d: u32,
    /// The cancellation coefficient `c = (d - 1) lambda / m`.
    pub c: f64,
    /// Mean number of copies per server `m` ("qbar"); mean jobs per server `m / d`, mean
    /// response time `m / (lambda d)`.
    pub mean_copies: f64,
}

impl MeanFieldFixedPoint {
    /// Solves `ln S(c) = -ln(1 - lambda)` for `c` by Brent's method (argmin `BrentRoot`) on
    /// `ln c`, where
    ///
    /// ```text
    /// S(c) = sum_{k>=0} prod_{j=1..k} lambda d / (1 + c j) = Gamma(a + 1) e^x x^{-a} P(a, x),
    /// a = 1/c,  x = lambda d / c,  P = regularised lower incomplete gamma (statrs, log space).
    /// ```
    ///
    /// `S` decreases in `c` from `+inf` (or `1/(1 - lambda d)`) to 1, so the root is unique.
    /// `d = 1` gives M/M/1 (`m = lambda / (1 - lambda)`).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] for `lambda` outside `(0, 1)` (no fixed point) or `d = 0`.
    pub fn solve(lambda: f64, d: u32) -> Result<Self, ModelError> {
        Self::solve_with(lambda, d, log_series_gamma)
    }

    /// The same root with `S(c)` summed term by term in log space (the birth-death chain
    /// directly): an independent cross-check of [`solve`](Self::solve).
    ///
    /// # Errors
    /// As [`solve`](Self::solve).
    pub fn solve_by_sum(lambda: f64, d: u32) -> Result<Self, ModelError> {
        Self::solve_with(lambda, d, log_series_sum)
    }

    fn solve_with(lambda: f64, d: u32, log_s: fn(f64, f64) -> f64) -> Result<Self, ModelError> {
        if !(lambda > 0.0 && lambda < 1.0) {
            return Err(out_of_range("model.lambda", lambda, "a number in (0, 1) (the fixed point exists iff lambda < 1)"));
        }
        if d == 0 {
            return Err(out_of_range("model.d", d, "an integer >= 1"));
        }
        if d == 1 {
            return Ok(MeanFieldFixedPoint { lambda, d, c: 0.0, mean_copies: lambda / (1.0 - lambda) });
        }
        let ld = lambda * d as f64;
        let target = -(1.0 - lambda).ln();
        // g(t) = ln S(e^t) - target decreases in t; c <= d - 1 because m >= x_1 = lambda
        let g = |t: f64| log_s(t.exp(), ld) - target;
        let hi = (d as f64 - 1.0).ln();
        let mut lo = hi - 1.0;
        let mut tries = 0;
        while g(lo).is_nan() || g(lo) <= 0.0 {
            lo -= 1.0;
            tries += 1;
            if tries > 60 {
                return Err(out_of_range("model.lambda", lambda, "a load whose mean-field fixed point is representable"));
            }
        }
        let t = if g(hi) >= 0.0 {
            hi
        } else {
            bracketed_root(g, lo, hi, 1e-15).ok_or_else(|| out_of_range("model.lambda", lambda, "a number in (0, 1)"))?
        };
        let c = t.exp();
        Ok(MeanFieldFixedPoint { lambda, d, c, mean_copies: (d as f64 - 1.0) * lambda / c })
    }

    /// `q_k` = fraction of servers with exactly `k` copies, `k = 0..len-1`.
    pub fn distribution(&self, len: usize) -> Vec<f64> {
        let ld = self.lambda * self.d as f64;
        let mut q = Vec::with_capacity(len);
        let mut v = 1.0 - self.lambda;
        for k in 0..len {
            if k > 0 {
                v *= ld / (1.0 + self.c * k as f64);
            }
            q.push(v);
        }
        q
    }

    /// Tail `x_k = P(Q >= k)`, `k = 1..levels`, summed from the far end (no cancellation).
    pub fn tail(&self, levels: usize) -> Vec<f64> {
        let mut q = self.distribution(levels + 1);
        // extend until the terms are negligible
        let mut extra = q[levels];
        let ld = self.lambda * self.d as f64;
        let mut k = levels;
        let mut v = extra;
        while v > 1e-300 * extra.max(1e-300) && k < levels + 100_000 {
            k += 1;
            v *= ld / (1.0 + self.c * k as f64);
            extra += v;
            if v < 1e-18 * extra {
                break;
            }
        }
        q[levels] = extra;
        let mut x = vec![0.0; levels];
        let mut acc = q[levels];
        for k in (1..=levels).rev() {
            if k < levels {
                acc += q[k];
            }
            x[k - 1] = acc;
        }
        x
    }
}

/// `ln S(c)` via the regularised lower incomplete gamma (statrs), with a fallback to the
/// direct sum where `P(a, x)` underflows.
fn log_series_gamma(c: f64, ld: f64) -> f64 {
    let a = 1.0 / c;
    let x = ld / c;
    let p = reg_lower_gamma(a, x);
    if !(p > 0.0 && p.is_finite()) {
        return log_series_sum(c, ld);
    }
    statrs::function::gamma::ln_gamma(a + 1.0) + x - a * x.ln() + p.ln()
}

/// `ln S(c)` by summing `prod_{j<=k} ld / (1 + c j)` with a running log-sum-exp.
fn log_series_sum(c: f64, ld: f64) -> f64 {
    let mut log_term = 0.0f64;
    let mut log_sum = 0.0f64;
    let mut k = 0u64;
    loop {
        k += 1;
        log_term += (ld / (1.0 + c * k as f64)).ln();
        let hi = log_sum.max(log_term);
        log_sum = hi + ((log_sum - hi).exp() + (log_term - hi).exp()).ln();
        if (log_term < log_sum - 40.0 && ld < 1.0 + c * k as f64) || k > 10_000_000 {
            return log_sum;
        }
    }
}

/// `P(a, x)`, the regularised lower incomplete gamma function, with `P(a, 0) = 0` (statrs'
/// `gamma_lr` panics at `x = 0`); NaN outside its domain.
pub fn reg_lower_gamma(a: f64, x: f64) -> f64 {
    if x <= 0.0 && a > 0.0 {
        return 0.0;
    }
    statrs::function::gamma::checked_gamma_lr(a, x).unwrap_or(f64::NAN)
}

/// Extras common to every redundancy model (mean copies and jobs, Gardner's FCFS limit).
pub(crate) fn common_extras(m: f64, d: u32, lambda: f64, discipline: Discipline) -> Vec<(String, f64)> {
    let mut v = vec![("mean_copies_per_server".to_string(), m), ("mean_jobs_per_server".to_string(), m / d as f64)];
    if discipline == Discipline::Fcfs && lambda < 1.0 {
        v.push(("gardner_fcfs_limit_mean_copies".to_string(), gardner_fcfs_mean_copies(lambda, d)));
        v.push(("gardner_fcfs_limit_mean_response_time".to_string(), super::gardner_fcfs_mean_response_time(lambda, d)));
    }
    v
}
