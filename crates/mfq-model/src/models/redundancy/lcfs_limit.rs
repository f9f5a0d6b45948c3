//! The `N -> inf` limit of redundancy-d under preemptive LCFS with i.i.d. exponential copies,
//! computed from renewal (Volterra) equations on the job tree. Derived here; the derivation
//! and its validation are in `docs/models/redundancy.md` ("LCFS limit").
//!
//! Under preemptive LCFS a copy only ever waits for copies that arrived *after* it: the stack
//! above a copy evolves whatever lies below. In the large-system limit the servers touched by
//! those younger jobs are distinct, so the *slot* of a copy (is it on top or buried) is an
//! alternating renewal process: on for an `Exp(a)` time (`a = lambda d`, the copy arrival rate
//! per server), then off for a sub-busy period `B` (until the stack above it is empty again);
//! the slots of a job's `d` copies are independent. With
//!
//! ```text
//! F(t) = P(a copy is not served by age t)        = E[exp(-on time in [0, t])]
//! P(t) = E[exp(-on time); on at t]               = -F'(t)
//! G(t) = P(B > t)
//! ```
//!
//! renewal arguments give (`*` is convolution on `[0, t]`)
//!
//! ```text
//! F = P + a P * G                                 (alive: on now, or off since some s)
//! G = P F^(d-1) + a (P F^(d-1)) * G               (B ends at the first on time after the job left)
//! E[T] = integral of F(t)^d dt,   mean copies per server = lambda d E[T]
//! ```
//!
//! and, for the queue length `Q` of a server (copies), with `Phi_k(t) = P(B > t, k copies in
//! the sub-busy period at age t)`:
//!
//! ```text
//! Phi_k = [k = 1] P F^(d-1) + a F^(d-1) (P * Phi_(k-1) - P * Phi_k) + a (P F^(d-1)) * Phi_k
//! P(Q = 0) = 1 - lambda,   P(Q = k) = (1 - lambda) a integral of Phi_k(t) dt   (k >= 1)
//! ```
//!
//! Two identities the code does not use serve as checks: `E[B] = 1 / (d (1 - lambda))` (the
//! idle fraction of a server is `1 - lambda` whatever the discipline) and `sum_k P(Q >= k)
//! = lambda d E[T]` (Little). For `d = 1` the limit is the M/M/1 queue under LCFS-PR, `E[T] =
//! 1 / (1 - lambda)`.
//!
//! Numerics (`lcfs_grid`): a graded grid chosen while marching (steps follow the relative
//! curvature of the unknowns: short near `t = 0`, long in the slowly decaying tail), the
//! convolutions computed exactly for the piecewise-linear interpolants, the trapezoidal rule
//! for `F' = -P` and the integrals, a scalar Newton step per grid point, and two levels of
//! Richardson extrapolation (Romberg) over the grid and its subdivisions into 2 and 4 equal
//! cells. The time horizon grows until `F^d` and `G` are negligible. Cost `O(n^2)` in the
//! number of grid points `n` (a few hundred on the coarse grid at every load), and `O(K n^2)`
//! for the queue-length distribution up to `K`.

use super::lcfs_grid::{march, queue_length, subdivide, Marched, Nodes};
use super::mean_field::common_extras;
use super::{iid_stability, Discipline};
use crate::AnalyticJacobian;
use crate::{out_of_range, Deadline, Jacobian, MeanFieldModel, ModelError, Observables, Sparsity, Stability, StateLayout};
use std::sync::{Arc, Mutex};

/// Options of [`lcfs_limit`].
#[derive(Debug, Clone, PartialEq)]
pub struct LcfsLimitOptions {
    /// Largest queue length `K` (copies) of the distribution `P(Q >= k)`, `k <= K`; `0` skips
    /// the distribution (it costs `O(K)` times the mean). The distribution is computed on
    /// coarser grids than the mean (relative accuracy about `1e-3`).
    pub levels: usize,
    /// Most grid points of the finest grid (memory `O(n^2)` with the distribution, time
    /// `O(n^2)`); the adaptive grids need about 1 600 to 3 400 up to lambda = 0.999 (d = 2).
    pub max_points: usize,
    /// The job's deadline: the grids check it every 256 points and stop with
    /// [`ModelError::Interrupted`] (default: none).
    pub deadline: Deadline,
}

impl Default for LcfsLimitOptions {
    fn default() -> Self {
        LcfsLimitOptions { levels: 0, max_points: 8_000, deadline: Deadline::none() }
    }
}

/// The LCFS limit of redundancy-d ([`lcfs_limit`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LcfsLimit {
    /// Arrival rate per server.
    pub lambda: f64,
    /// Copies per job.
    pub d: u32,
    /// Mean response time `E[T]` of a job (time units of a mean copy size).
    pub mean_response_time: f64,
    /// Mean copies per server `lambda d E[T]`.
    pub mean_copies_per_server: f64,
    /// Estimated absolute error of `mean_copies_per_server`: the larger of the change made by
    /// the second Richardson level and the relative error of the computed `E[B]` against its
    /// exact value (applied to the mean), so never below what the identity shows.
    pub error_estimate: f64,
    /// Mean sub-busy period `E[B]` as computed (a check: exactly `1 / (d (1 - lambda))`).
    pub busy_period_mean: f64,
    /// Time horizon of the grids (the integrands are below `1e-13` beyond it).
    pub horizon: f64,
    /// Grid points of the finest grid.
    pub points: usize,
    /// `P(Q >= k)` for `k = 0..=K` (so `tail[0] = 1`; empty when `levels = 0`), summed from
    /// the top (`P(Q >= K)` extrapolates `P(Q = K - 1)` geometrically) and scaled so that
    /// `P(Q >= 1) = lambda` (see `tail_error_estimate`).
    pub tail: Vec<f64>,
    /// The floor: `P(Q = k)` is computed from the grids while it is at least [`TAIL_FLOOR`];
    /// below, it continues geometrically with the ratio of the last two computed levels (never
    /// an exact zero). `0` without a tail.
    pub tail_floor: f64,
    /// Estimated relative error of the tail entries above the floor: the largest difference
    /// `|P_h(Q = k) - P_{h/2}(Q = k)|` between the coarse grid and its subdivision into 2,
    /// relative to `P(Q = k)`, over the computed levels (three times the Richardson
    /// correction: the graded grids' error expansion is not clean enough to trust the
    /// extrapolated value to that), plus `tail_error_estimate`. `0` without a tail.
    pub tail_relative_error_estimate: f64,
    /// Relative error of the computed `P(Q >= 1)` against its exact value `lambda`, divided
    /// out of `tail` (all `P(Q = k)`, `k >= 1`, are scaled by the same factor): a measure of the
    /// tail's accuracy (3.6e-4 at lambda = 0.9, d = 2; it grows with `d`). `0` without a tail.
    pub tail_error_estimate: f64,
}

/// Largest estimated relative error of the mean accepted from the grids: beyond it (`lambda`
/// very close to 1, where errors of the kernel are amplified by `1 / (1 - lambda)`) the
/// limit is refused.
pub const MAX_RELATIVE_ERROR: f64 = 1e-3;

/// Levels of the queue-length distribution are computed while `P(Q = k) >= TAIL_FLOOR`.
pub const TAIL_FLOOR: f64 = 1e-18;

/// Values of one grid: `E[T]`, `E[B]`, the horizon, and `P(Q = k)` for `k = 0..=levels`.
struct Grid {
    et: f64,
    eb: f64,
    horizon: f64,
    points: usize,
    pq: Vec<f64>,
}

/// Step factor `eta` of the adaptive coarse grid (`lcfs_grid` module docs): the first step is
/// `eta / (1 + a)` and a step is at most `eta` over the square root of the relative curvature.
const ETA: f64 = 0.1;

/// The three grids of the Romberg scheme: the adaptive coarse grid and its subdivisions into 2
/// and 4 (the two coarser also carry the queue-length distribution when `opts.levels > 0`;
/// the two finer run on a second thread).
fn solve_grids(lambda: f64, d: u32, opts: &LcfsLimitOptions) -> Result<[Grid; 3], ModelError> {
    let a = lambda * d as f64;
    let with_levels = opts.levels > 0;
    let n_max = (opts.max_points / 4).max(16);
    let coarse = march(lambda, d, Nodes::Adaptive { h1: ETA / (1.0 + a), eta: ETA }, with_levels, n_max, &opts.deadline)?;
    let (t2, t4) = (subdivide(&coarse.t, 2), subdivide(&coarse.t, 4));
    let to_grid = |m: &Marched, pq: Vec<f64>| Grid { et: m.et, eb: m.eb, horizon: m.t[m.t.len() - 1], points: m.t.len(), pq };
    let (second, last, coarse_pq) = std::thread::scope(|scope| {
        let second = scope.spawn(|| -> Result<_, ModelError> {
            let fine = march(lambda, d, Nodes::Fixed(&t2), with_levels, 0, &opts.deadline)?;
            let pq = if with_levels { queue_length(lambda, d, &fine, opts.levels, &opts.deadline)? } else { Vec::new() };
            Ok(to_grid(&fine, pq))
        });
        let last = march(lambda, d, Nodes::Fixed(&t4), false, 0, &opts.deadline);
        let coarse_pq = if with_levels { queue_length(lambda, d, &coarse, opts.levels, &opts.deadline) } else { Ok(Vec::new()) };
        (second.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), last, coarse_pq)
    });
    let last = last?;
    Ok([to_grid(&coarse, coarse_pq?), second?, to_grid(&last, Vec::new())])
}

/// Computes the `N -> inf` limit of redundancy-d with i.i.d. exponential copies under
/// preemptive LCFS (module docs; derived here, validated against simulation in
/// `docs/models/redundancy.md`).
///
/// `lambda` is the arrival rate per server, `d >= 1` the number of copies.
///
/// # Errors
/// [`ModelError::OutOfRange`] for `model.lambda` (finite, `> 0` and `< 1`: at `lambda >= 1`
/// the system is unstable, the message says why), `model.d` (`1..=64`), or when the
/// sub-busy periods outlast the grids (`lambda` so close to 1 that the estimated relative error
/// of the mean exceeds [`MAX_RELATIVE_ERROR`], or the grid needs more than `max_points`).
pub fn lcfs_limit(lambda: f64, d: u32, opts: &LcfsLimitOptions) -> Result<LcfsLimit, ModelError> {
    if !lambda.is_finite() || lambda <= 0.0 {
        return Err(out_of_range("model.lambda", lambda, "a finite number > 0"));
    }
    if let Stability::Unstable { reason } = iid_stability(lambda, d) {
        return Err(out_of_range("model.lambda", lambda, &format!("a number < 1 ({reason})")));
    }
    if !(1..=64).contains(&d) {
        return Err(out_of_range("model.d", d, "an integer in [1, 64] for the LCFS limit"));
    }
    let grids = solve_grids(lambda, d, opts)?;
    let [coarse, fine, last] = &grids;
    let means = [(coarse.et, coarse.eb), (fine.et, fine.eb), (last.et, last.eb)];
    // the trapezoidal error expands in h^2, h^4: two Richardson levels (Romberg)
    let richardson = |c: f64, f: f64| f + (f - c) / 3.0;
    let romberg = |v: [f64; 3]| {
        let (r1, r2) = (richardson(v[0], v[1]), richardson(v[1], v[2]));
        (r2 + (r2 - r1) / 15.0, r2)
    };
    let (et, et_once) = romberg([means[0].0, means[1].0, means[2].0]);
    let (eb, _) = romberg([means[0].1, means[1].1, means[2].1]);
    let scale = lambda * d as f64;
    // the exact E[B] checks the grids: its relative error bounds the estimate from below
    let eb_rel = (eb * d as f64 * (1.0 - lambda) - 1.0).abs();
    let error_estimate = (scale * (et - et_once).abs()).max(eb_rel * scale * et);
    if error_estimate > MAX_RELATIVE_ERROR * scale * et {
        return Err(out_of_range(
            "model.lambda",
            lambda,
            &format!(
                "a smaller load for the LCFS limit solver: at this load its busy periods outlast what its grids resolve \
                 (estimated relative error {:.1e} of the mean, above {MAX_RELATIVE_ERROR:.0e}; E[B] is off by {eb_rel:.1e}); \
                 the system itself is stable for lambda < 1: `mfq simulate` works",
                error_estimate / (scale * et)
            ),
        ));
    }
    let mut tail_error = 0.0;
    let mut tail_rel = 0.0f64;
    let tail = if opts.levels == 0 {
        Vec::new()
    } else {
        // P(Q = k) for k < K; P(Q >= K) by a geometric extrapolation of the last two (summing
        // from the top keeps the relative accuracy of the small tail values)
        // (a Richardson value that is not positive keeps the finer grid's value; levels below
        // the floor were not computed and continue geometrically: never an exact zero)
        let computed = coarse.pq.len().min(fine.pq.len());
        let mut pk: Vec<f64> =
            coarse.pq.iter().zip(&fine.pq).map(|(c, f)| if richardson(*c, *f) > 0.0 { richardson(*c, *f) } else { *f }).collect();
        for j in (1..computed).filter(|&j| pk[j] >= TAIL_FLOOR) {
            // the whole difference, not its Richardson third: on the graded grids the error
            // expansion is not clean enough to trust the extrapolated value to that
            let rel = (fine.pq[j] - coarse.pq[j]).abs() / pk[j].max(f64::MIN_POSITIVE);
            tail_rel = tail_rel.max(rel);
        }
        let k = opts.levels;
        let r_last = if computed >= 3 && pk[computed - 2] > 0.0 { (pk[computed - 1] / pk[computed - 2]).min(0.99) } else { 0.5 };
        while pk.len() < k {
            let next = pk[pk.len() - 1] * r_last;
            pk.push(next);
        }
        let (last, before) = (pk[k - 1], if k >= 2 { pk[k - 2] } else { 0.0 });
        let ratio = if before > 0.0 { (last / before).min(0.99) } else { 0.0 };
        let mut tail = vec![0.0; k + 1];
        tail[k] = if k >= 2 { last * ratio / (1.0 - ratio) } else { lambda };
        for j in (1..k).rev() {
            tail[j] = tail[j + 1] + pk[j];
        }
        // P(Q >= 1) = lambda exactly; the grids' error is mostly a common factor of all P(Q = k)
        // (the error of E[B]): divide it out, and report its size
        if tail[1] > 0.0 {
            let scale = lambda / tail[1];
            tail_error = (1.0 - 1.0 / scale).abs();
            for t in &mut tail[1..] {
                *t *= scale;
            }
        }
        tail[0] = 1.0;
        tail
    };
    Ok(LcfsLimit {
        lambda,
        d,
        mean_response_time: et,
        mean_copies_per_server: scale * et,
        error_estimate,
        busy_period_mean: eb,
        horizon: last.horizon,
        points: last.points,
        tail_floor: if opts.levels == 0 { 0.0 } else { TAIL_FLOOR },
        tail_relative_error_estimate: if opts.levels == 0 { 0.0 } else { tail_rel + tail_error },
        tail,
        tail_error_estimate: tail_error,
    })
}

/// The LCFS limit as a model (`kind = "redundancy"`, `discipline = "lcfs"`, `approximation =
/// "limit"`): state `x[k-1] = P(Q >= k)`, `k = 1..=K`, computed by [`lcfs_limit`]. The limit
/// is not truncated: `K` is the requested `truncation.levels`, raised until `x_K < 1e-6`.
///
/// The limit has no ODE of its own. To reuse the fixed-point output, sweeps and figures, the
/// model's drift is the relaxation `f(x) = x* - x` towards the computed tail `x*`; its
/// fixed point is `x*`, but it is **not** the system's dynamics, so
/// [`MeanFieldModel::dynamics_note`] says so and `mfq solve` / `mfq check` refuse the model.
/// The mean queue length and response time in [`MeanFieldModel::observables`] are the
/// accurate ones of [`LcfsLimit`] (not the sum of the truncated, coarser tail).
#[derive(Debug, Clone)]
pub struct RedundancyLcfsLimit {
    limit: Arc<LcfsLimit>,
    levels: usize,
}

/// Why the LCFS limit has no transient and no attraction check
/// ([`MeanFieldModel::dynamics_note`]).
pub const LIMIT_DYNAMICS_NOTE: &str = "the LCFS limit (approximation = \"limit\") is computed from renewal equations and has no \
     ODE: its drift is only a relaxation to that solution, so transients and attraction checks would mean nothing (for \
     dynamics use approximation = \"mean-field\", or \"pair\" with d = 2 and truncation.levels <= 20)";

/// Limits already computed in this process, keyed by `(lambda bits, d)` (a model is built
/// several times per command: parsing, the stability probe, the solve).
static CACHE: Mutex<Vec<CacheEntry>> = Mutex::new(Vec::new());

/// `((lambda bits, d), limit)`.
type CacheEntry = ((u64, u32), Arc<LcfsLimit>);

/// Largest queue length of the tail of [`RedundancyLcfsLimit`].
const MAX_LEVELS: usize = 400;

impl RedundancyLcfsLimit {
    /// Computes (or reuses) the limit at `lambda`, `d` with the tail up to `levels` copies.
    ///
    /// # Errors
    /// As [`lcfs_limit`]; `truncation.levels` must be in `2..=400`.
    pub fn new(lambda: f64, d: u32, levels: usize) -> Result<Self, ModelError> {
        Self::new_within(lambda, d, levels, &Deadline::none())
    }

    /// [`new`](Self::new) within `deadline` (checked as the renewal equations are solved).
    ///
    /// # Errors
    /// As [`new`](Self::new), and [`ModelError::Interrupted`] past the deadline.
    pub fn new_within(lambda: f64, d: u32, levels: usize, deadline: &Deadline) -> Result<Self, ModelError> {
        if !(2..=MAX_LEVELS).contains(&levels) {
            return Err(out_of_range("truncation.levels", levels, &format!("an integer in [2, {MAX_LEVELS}] for the LCFS limit")));
        }
        let key = (lambda.to_bits(), d);
        let cached = CACHE.lock().ok().and_then(|c| c.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone()));
        let limit = match cached {
            Some(l) => l,
            None => {
                let l = Arc::new(lcfs_limit(
                    lambda,
                    d,
                    &LcfsLimitOptions { levels: MAX_LEVELS, deadline: deadline.clone(), ..Default::default() },
                )?);
                if let Ok(mut c) = CACHE.lock() {
                    if c.len() >= 64 {
                        c.remove(0);
                    }
                    c.push((key, l.clone()));
                }
                l
            }
        };
        // the tail is not a truncation of the system: report it at least down to 1e-6
        let negligible = limit.tail.iter().position(|&x| x < 1e-6).unwrap_or(MAX_LEVELS);
        Ok(RedundancyLcfsLimit { limit, levels: levels.max(negligible) })
    }

    /// The computed limit.
    pub fn limit(&self) -> &LcfsLimit {
        &self.limit
    }
}

impl MeanFieldModel for RedundancyLcfsLimit {
    fn name(&self) -> String {
        format!("Redundancy-{} LCFS limit", self.limit.d)
    }
    fn dim(&self) -> usize {
        self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        for ((d, x), t) in dx.iter_mut().zip(x).zip(&self.limit.tail[1..]) {
            *d = t - x;
        }
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Tail { levels: self.levels }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let l = &self.limit;
        let ld = l.lambda * l.d as f64;
        let mut o = Observables::from_tail(x, ld, None, 0.0);
        o.mass_at_truncation = x[self.levels - 1].clamp(0.0, 1.0);
        o.mean_queue_length = Some(l.mean_copies_per_server);
        o.mean_response_time = Some(l.mean_response_time);
        o.extras = common_extras(l.mean_copies_per_server, l.d, l.lambda, Discipline::Lcfs);
        o.extras.push(("mean_copies_error_estimate".into(), l.error_estimate));
        o.extras.push(("tail_error_estimate".into(), l.tail_error_estimate));
        o.extras.push(("tail_relative_error_estimate".into(), l.tail_relative_error_estimate));
        o.extras.push(("tail_floor".into(), l.tail_floor));
        o.extras.push(("busy_period_mean".into(), l.busy_period_mean));
        o.extras.push(("busy_period_mean_exact".into(), 1.0 / (l.d as f64 * (1.0 - l.lambda))));
        o.extras.push(("renewal_horizon".into(), l.horizon));
        o
    }
    fn stability(&self) -> Stability {
        iid_stability(self.limit.lambda, self.limit.d)
    }
    fn start_state(&self) -> Option<Vec<f64>> {
        Some(self.limit.tail[1..=self.levels].to_vec())
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        Some(self.limit.tail[1..=self.levels].to_vec())
    }
    fn dynamics_note(&self) -> Option<String> {
        Some(LIMIT_DYNAMICS_NOTE.into())
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
}

impl AnalyticJacobian for RedundancyLcfsLimit {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Banded { lower: 0, upper: 0 }
    }
    fn jacobian(&self, _x: &[f64], jac: &mut Jacobian) {
        jac.clear();
        for i in 0..self.levels {
            jac.add(i, i, -1.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mm1_lcfs_for_one_copy() {
        // d = 1: M/M/1 under LCFS-PR, E[T] = 1/(1 - lambda), P(Q >= k) = lambda^k
        for lambda in [0.3, 0.7] {
            let r = lcfs_limit(lambda, 1, &LcfsLimitOptions { levels: 8, ..Default::default() }).unwrap();
            let exact = 1.0 / (1.0 - lambda);
            assert!((r.mean_response_time - exact).abs() < 1e-6 * exact, "{} vs {exact}", r.mean_response_time);
            assert!(r.error_estimate < 1e-4 * exact);
            for k in 0..=8 {
                let x = lambda.powi(k as i32);
                assert!((r.tail[k] - x).abs() < 1e-4 * x + 1e-9, "k = {k}: {} vs {x}", r.tail[k]);
            }
        }
    }

    #[test]
    fn busy_period_and_little_identities() {
        for (lambda, d) in [(0.5, 2), (0.9, 2), (0.7, 3)] {
            let r = lcfs_limit(lambda, d, &LcfsLimitOptions { levels: 60, ..Default::default() }).unwrap();
            let eb = 1.0 / (d as f64 * (1.0 - lambda));
            assert!((r.busy_period_mean - eb).abs() < 1e-5 * eb, "E[B] {} vs {eb}", r.busy_period_mean);
            let from_tail: f64 = r.tail[1..].iter().sum();
            assert!(r.tail[60] < 1e-6, "tail at 60: {}", r.tail[60]);
            // the distribution is computed on the two coarser grids (documented accuracy 1e-3
            // for d <= 3) and scaled to P(Q >= 1) = lambda
            assert!(r.tail_error_estimate < 1e-3 * lambda, "P(Q >= 1) was off by {}", r.tail_error_estimate);
            assert!((r.tail[1] - lambda).abs() < 1e-12);
            let m = r.mean_copies_per_server;
            assert!((from_tail - m).abs() < 1e-3 * m, "sum of P(Q >= k) {from_tail} vs mean {m}");
        }
    }

    /// d = 1 (M/M/1 under LCFS-PR, `P(Q >= k) = lambda^k`): every tail entry down to the floor
    /// is positive and within the reported relative error estimate of `lambda^k`, far below
    /// the level where the old code cut the tail to zero.
    #[test]
    fn tail_keeps_relative_accuracy_down_to_the_floor() {
        let lambda = 0.5;
        let r = lcfs_limit(lambda, 1, &LcfsLimitOptions { levels: 80, ..Default::default() }).unwrap();
        let est = r.tail_relative_error_estimate;
        // the difference of the two coarser grids (2.2e-4 at lambda = 0.5); the extrapolated
        // values are closer
        assert!(est > 0.0 && est < 1e-2, "estimate {est}");
        assert_eq!(r.tail_floor, TAIL_FLOOR);
        for k in 1..=80 {
            let x = lambda.powi(k as i32);
            assert!(r.tail[k] > 0.0, "k = {k}: {}", r.tail[k]);
            if x >= r.tail_floor {
                assert!((r.tail[k] - x).abs() <= est * x, "k = {k}: {} vs {x} (estimate {est})", r.tail[k]);
            }
        }
    }

    #[test]
    fn rejects_unstable_and_bad_input() {
        let o = LcfsLimitOptions::default();
        let e = lcfs_limit(1.0, 2, &o).unwrap_err().to_string();
        assert!(e.contains("model.lambda") && e.contains("stable iff lambda < 1"), "{e}");
        assert!(lcfs_limit(f64::NAN, 2, &o).unwrap_err().to_string().contains("model.lambda"));
        assert!(lcfs_limit(0.5, 0, &o).unwrap_err().to_string().contains("model.d"));
        let e = lcfs_limit(0.999, 2, &LcfsLimitOptions { max_points: 2000, ..o }).unwrap_err().to_string();
        assert!(e.contains("outlast"), "{e}");
    }
}
