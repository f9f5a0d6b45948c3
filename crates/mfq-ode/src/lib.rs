//! Transient solutions of mean-field models: `x(t)` from an initial state.
//!
//! [`solve`] integrates `dx/dt = f(x)` of a [`MeanFieldModel`] and returns a [`Trajectory`]
//! whose [`Status`] says how the run ended; a run that fails still returns the part it
//! computed, with why. Methods ([`Method`]):
//!
//! - `Dopri5` / `Dop853`: explicit adaptive Runge-Kutta (Dormand-Prince 5(4) and 8(5,3), from
//!   the `ode_solvers` crate), for small, non-stiff runs. Only the accepted steps are
//!   recorded (the crate's dense output has a last-point extrapolation bug).
//! - `Rosenbrock23`: the L-stable linearly implicit Rosenbrock 2(3) pair of Shampine and
//!   Reichelt ("The MATLAB ODE suite", SIAM J. Sci. Comput. 18(1), 1997, §3.1, MATLAB's
//!   `ode23s`), with the model's Jacobian and a banded or dense LU: for stiff runs (`lambda`
//!   near 1, long horizons).
//! - `Bdf`: variable-step, variable-order (1-5) backward differentiation formulas in the NDF
//!   form of MATLAB's `ode15s` (Shampine and Reichelt 1997, §2), with the Jacobian and its LU
//!   held across steps and refreshed only when the Newton iteration slows or `h` changes much:
//!   for the large sparse pair and triplet approximations (`K^2`, `K^3` states), whose LU
//!   costs as much as hundreds of drift evaluations, and long stiff runs at tight tolerances.
//! - `Auto` (default): for a model with a sparse Jacobian pattern and at least
//!   [`AUTO_BDF_MIN_DIM`] states (pair and triplet approximations at `K >= 45`, `K >= 13`), or
//!   a banded one and at least [`AUTO_BDF_HUGE_DIM`], `Bdf` from the start; otherwise `Dopri5`, switching to `Rosenbrock23` from the current
//!   state when the Hairer stiffness test fires (as LSODA switches), so a run never fails for
//!   stiffness.
//!
//! After each accepted step the state is mapped back to the feasible set by
//! [`MeanFieldModel::project`]; an explicit run whose step left the set is restarted from
//! the projected state (this is how the JIQ sliding boundary `x_1 = 1` is kept).
//!
//! A run may stop early at a steady state: with `steady_tol = Some(tol)` it stops once
//! `max_i |f_i(x)| < tol`; and at the job's [`Deadline`] ([`solve_within`]: a wall-clock limit
//! and a cancel flag, which the Python package sets on Ctrl-C) or an instant
//! ([`SolveOptions::deadline`]): it stops
//! with [`Status::TimeLimit`] at the first check after it (every step of `Rosenbrock23` and
//! `Bdf`, whose large sparse factorisations are abandoned at the limit as the fixed-point
//! solver's are,
//! every [`DEADLINE_CHECK_STEPS`] accepted steps of the explicit methods on small states, every
//! step on large ones), not by killing a
//! thread.

mod bdf;
mod explicit;
mod krylov;
pub mod linalg;
mod rosenbrock;

use mfq_model::{Deadline, MeanFieldModel};
use serde::Serialize;
use std::time::{Duration, Instant};

/// The explicit methods check the deadline every this many accepted steps on states of fewer
/// than [`DEADLINE_CHECK_EVERY_STEP_DIM`] entries, and every step on larger ones (`Rosenbrock23`
/// and `Bdf` check it every step): a run stops at most this many steps after its deadline.
pub const DEADLINE_CHECK_STEPS: u64 = 8;
/// From this many state entries an explicit step costs far more than reading the clock, and
/// the deadline is checked after every step (a step of JSQ(2) at K = 1e7 takes about a second).
pub const DEADLINE_CHECK_EVERY_STEP_DIM: usize = 4096;

/// The instant `seconds` of wall-clock time from now, for [`SolveOptions::deadline`] and the
/// other solvers' time limits.
///
/// `None` when the instant is too far away to represent (`seconds` about `1e10` or more, or
/// infinite): no limit, in practice. `seconds <= 0` or NaN give the present instant (the
/// deadline has passed); callers check that a limit is a finite number `> 0` first.
///
/// ```
/// let d = mfq_ode::deadline_after(0.5).unwrap();
/// assert!(d > std::time::Instant::now());
/// assert!(mfq_ode::deadline_after(1e300).is_none());
/// ```
pub fn deadline_after(seconds: f64) -> Option<Instant> {
    let now = Instant::now();
    if seconds.is_nan() || seconds <= 0.0 {
        return Some(now);
    }
    // Instant + Duration panics on overflow, Duration::from_secs_f64 beyond u64 seconds
    Duration::try_from_secs_f64(seconds).ok().and_then(|d| now.checked_add(d))
}

/// Whether `deadline` is set and has passed.
pub fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// Whether the run must stop: `opts.deadline` has passed or the job's deadline `job` expired
/// (limit or cancel flag).
pub(crate) fn stopped(opts: &SolveOptions, job: &Deadline) -> bool {
    past(opts.deadline) || job.expired()
}

/// Integration method, see the crate docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Dopri5, switching to Rosenbrock23 when stiffness is detected.
    #[default]
    Auto,
    /// Dormand-Prince 5(4) (explicit).
    Dopri5,
    /// Dormand-Prince 8(5,3) (explicit).
    Dop853,
    /// Rosenbrock 2(3), L-stable (linearly implicit, uses the Jacobian).
    Rosenbrock23,
    /// Variable-order BDF/NDF (orders 1-5, implicit, uses the Jacobian and a held LU).
    Bdf,
}

/// `Method::Auto` runs [`Method::Bdf`] from the start on models with a sparse Jacobian
/// pattern ([`mfq_model::Sparsity::Sparse`]) of at least this many states: there one LU
/// costs hundreds of drift evaluations, and Dopri5 (with or without the switch to
/// Rosenbrock23, one LU per step) took 12-15 s of CPU time for the PS pair approximation at
/// `K = 100` to `t = 1000`, `Bdf` 6.7 s (crates/mfq-ode/examples/bdf_bench.rs,
/// bench/rows-bdf.md).
pub const AUTO_BDF_MIN_DIM: usize = 2000;

/// From this many states `Auto` takes `Bdf` from the start for any model whose Jacobian is
/// not dense (banded ones too, e.g. JSQ(d) truncated at `K >= 1e6`): one explicit step of
/// `ode_solvers` allocates a dozen state vectors and cannot be interrupted (JSQ(2) at
/// `K = 1e7`: its first step ran 4 s past `--max-seconds 1`; `Bdf` stops within 0.5 s).
pub const AUTO_BDF_HUGE_DIM: usize = 1_000_000;

/// Options of [`solve`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SolveOptions {
    /// Final time (in mean job sizes), `> 0`.
    pub t_end: f64,
    /// Relative tolerance per step, in `(0, 1)`.
    pub rtol: f64,
    /// Absolute tolerance per step, `> 0`.
    pub atol: f64,
    /// Method.
    pub method: Method,
    /// Maximum number of accepted + rejected steps over the whole run.
    pub max_steps: u32,
    /// Stop once `max |f(x)| < steady_tol` (a steady state), if set.
    pub steady_tol: Option<f64>,
    /// Record every accepted step (`true`) or only the first and last states.
    pub record_steps: bool,
    /// Wall-clock deadline: the run stops with [`Status::TimeLimit`] at the first check after
    /// it (see the crate docs). `None` (default): no limit. See [`deadline_after`].
    #[serde(skip)]
    pub deadline: Option<Instant>,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            t_end: 100.0,
            rtol: 1e-8,
            atol: 1e-12,
            method: Method::Auto,
            max_steps: 1_000_000,
            steady_tol: None,
            record_steps: true,
            deadline: None,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Status {
    /// Reached `t_end`.
    Success,
    /// Stopped at time `t` because `max |f(x)| < steady_tol`.
    SteadyState {
        /// Time of the stop.
        t: f64,
    },
    /// The step budget ran out at time `t`.
    MaxSteps {
        /// Time reached.
        t: f64,
    },
    /// The step size underflowed at time `t` (non-smooth or ill-posed right-hand side).
    StepSizeTooSmall {
        /// Time reached.
        t: f64,
    },
    /// A drift value or the state became NaN or infinite at time `t`.
    NonFinite {
        /// Time reached.
        t: f64,
    },
    /// Dopri5/Dop853 was asked for explicitly and found the problem stiff at time `t`.
    Stiff {
        /// Time reached.
        t: f64,
    },
    /// The Jacobian-based step met a singular matrix at time `t`.
    Singular {
        /// Time reached.
        t: f64,
    },
    /// The wall-clock deadline ([`SolveOptions::deadline`]) passed at model time `t`.
    TimeLimit {
        /// Time reached.
        t: f64,
    },
}

impl std::fmt::Display for Status {
    /// One sentence for users (never Rust's `Debug` text).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Success => write!(f, "reached the end time"),
            Status::SteadyState { t } => write!(f, "the drift fell below the steady-state tolerance at t = {}", time(*t)),
            Status::MaxSteps { t } => write!(f, "the step budget ran out at t = {}", time(*t)),
            Status::StepSizeTooSmall { t } => write!(f, "the step size underflowed at t = {} (a non-smooth or ill-posed drift)", time(*t)),
            Status::NonFinite { t } => write!(f, "the state or the drift became non-finite (not a number or infinite) at t = {}", time(*t)),
            Status::Stiff { t } => {
                write!(f, "the explicit method found the problem stiff at t = {} (use --method auto, rosenbrock23 or bdf)", time(*t))
            }
            Status::Singular { t } => write!(f, "the stiff method met a singular matrix at t = {}", time(*t)),
            Status::TimeLimit { t } => write!(f, "the wall-clock limit ran out at t = {}", time(*t)),
        }
    }
}

/// A time for messages: four decimals, or four significant digits in exponent form below 1e-3
/// and from 1e7 on (`t = 0.0000` said nothing about a stop at `t = 9.4e-6`).
fn time(t: f64) -> String {
    if t == 0.0 || (1e-3..1e7).contains(&t.abs()) {
        format!("{t:.4}")
    } else {
        format!("{t:.4e}")
    }
}

impl Status {
    /// Whether the run reached `t_end` or a steady state.
    pub fn is_success(&self) -> bool {
        matches!(self, Status::Success | Status::SteadyState { .. })
    }
}

/// Counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Accepted steps.
    pub accepted_steps: u64,
    /// Rejected steps.
    pub rejected_steps: u64,
    /// Drift evaluations.
    pub drift_evals: u64,
    /// Jacobian evaluations (implicit steps).
    pub jacobian_evals: u64,
    /// LU factorisations.
    pub factorisations: u64,
    /// Restarts of the explicit method after projecting the state onto the feasible set.
    pub projections: u64,
    /// Time at which `Auto` switched from `Dopri5` to `Rosenbrock23`, if it did (`None` when
    /// it ran `Bdf` from the start: see [`stiff_method`](Self::stiff_method)).
    pub switched_to_stiff_at: Option<f64>,
    /// The implicit method that ran (`Rosenbrock23` or `Bdf`), if one did.
    pub stiff_method: Option<Method>,
}

/// A computed trajectory: times `t[i]` and states `x[i]` (each of length `dim`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trajectory {
    /// Output times, increasing, starting at 0.
    pub t: Vec<f64>,
    /// States at those times.
    pub x: Vec<Vec<f64>>,
    /// How the run ended.
    pub status: Status,
    /// Counters.
    pub stats: Stats,
    /// Where the recorded states break the constraints of the model's layout by more than
    /// [`INVARIANT_TOL`] (`x_{k+1} <= x_k`, `0 <= x_k <= 1`, ...:
    /// [`StateLayout::largest_violation`](mfq_model::StateLayout::largest_violation));
    /// `None` when they all hold. An explicit method at a loose tolerance can break them
    /// while its status says success: callers report this beside the status.
    pub invariants: Option<InvariantBreaks>,
}

/// A recorded state may break its layout's constraints by this much (round-off) before it
/// counts in [`Trajectory::invariants`].
pub const INVARIANT_TOL: f64 = 1e-12;

/// The recorded states of a [`Trajectory`] that break the layout's constraints.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct InvariantBreaks {
    /// Recorded states (rows) with a violation above [`INVARIANT_TOL`].
    pub rows: usize,
    /// Recorded states in all.
    pub of: usize,
    /// The largest violation, with the constraint and the entry.
    pub largest: mfq_model::Violation,
    /// The time of the state with the largest violation.
    pub at_t: f64,
}

impl std::fmt::Display for InvariantBreaks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the integrator broke the state's invariants in {} of {} recorded states (largest: {} at t = {:.4}); \
             tighten --rtol/--atol or use the stiff method",
            self.rows, self.of, self.largest, self.at_t
        )
    }
}

impl Trajectory {
    /// The last state computed.
    pub fn last(&self) -> &[f64] {
        self.x.last().expect("a trajectory holds at least the initial state")
    }

    /// The last time reached.
    pub fn t_last(&self) -> f64 {
        *self.t.last().expect("a trajectory holds at least the initial time")
    }
}

/// Misuse of [`solve`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OdeError {
    /// The initial state has the wrong length.
    #[error("initial state has {got} entries, the model has {expected}")]
    WrongDimension {
        /// Entries given.
        got: usize,
        /// The model's dimension.
        expected: usize,
    },
    /// An option or the initial state is outside its range.
    #[error("{field} = {value} is not allowed: {allowed}")]
    OutOfRange {
        /// Option name.
        field: &'static str,
        /// Value given.
        value: String,
        /// Allowed range.
        allowed: &'static str,
    },
}

/// Integrates `model` from `x0` over `[0, opts.t_end]`.
///
/// # Errors
/// [`OdeError`] for a wrong-length or non-finite `x0` or options outside their range. Numerical
/// failures are not errors: they come back in [`Trajectory::status`] with the part computed.
pub fn solve(model: &dyn MeanFieldModel, x0: &[f64], opts: &SolveOptions) -> Result<Trajectory, OdeError> {
    solve_within(model, x0, opts, &Deadline::none())
}

/// [`solve`] within the job's [`Deadline`] (its wall-clock limit and cancel flag, shared with
/// the other phases of the job: `--max-seconds`, Ctrl-C in the Python package): the run stops
/// with [`Status::TimeLimit`] when it expires, as at [`SolveOptions::deadline`].
///
/// # Errors
/// As [`solve`].
pub fn solve_within(model: &dyn MeanFieldModel, x0: &[f64], opts: &SolveOptions, job: &Deadline) -> Result<Trajectory, OdeError> {
    solve_recorded(model, x0, opts, job, None)
}

/// [`solve_within`] that keeps, besides the initial and the last state, only the first
/// accepted step at or after each of the model times `times` (increasing): the memory of a
/// long run stays that of `times.len()` states whatever the number of steps, and the
/// integrator is never restarted at an output time (a restart of `Bdf` costs a new Jacobian,
/// several LU factorisations and the climb back from a first step of order 1). The recorded
/// times are the steps' own (`>=` the requested ones; no interpolation);
/// `opts.record_steps` is ignored.
///
/// ```
/// use mfq_model::{models::Jsq, Deadline};
/// use mfq_ode::{solve_sampled_within, SolveOptions};
/// let m = Jsq::new(0.9, 2, 20).unwrap();
/// let opts = SolveOptions { t_end: 50.0, ..Default::default() };
/// let tr = solve_sampled_within(&m, &[0.0; 20], &opts, &Deadline::none(), &[1.0, 10.0]).unwrap();
/// assert_eq!(tr.t.len(), 4); // 0, the steps at or after 1 and 10, and t = 50
/// assert!(tr.t[1] >= 1.0 && tr.t[2] >= 10.0 && tr.t[3] == 50.0);
/// ```
///
/// # Errors
/// As [`solve`].
pub fn solve_sampled_within(
    model: &dyn MeanFieldModel,
    x0: &[f64],
    opts: &SolveOptions,
    job: &Deadline,
    times: &[f64],
) -> Result<Trajectory, OdeError> {
    solve_recorded(model, x0, opts, job, Some(times))
}

/// [`solve_within`], recording every step (`opts.record_steps`), or the steps at `sample`
/// times when given.
fn solve_recorded(
    model: &dyn MeanFieldModel,
    x0: &[f64],
    opts: &SolveOptions,
    job: &Deadline,
    sample: Option<&[f64]>,
) -> Result<Trajectory, OdeError> {
    let n = model.dim();
    if x0.len() != n {
        return Err(OdeError::WrongDimension { got: x0.len(), expected: n });
    }
    if let Some(v) = x0.iter().find(|v| !v.is_finite()) {
        return Err(OdeError::OutOfRange { field: "x0", value: v.to_string(), allowed: "finite entries" });
    }
    let positive = |field, v: f64, allowed| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(OdeError::OutOfRange { field, value: number(v), allowed })
        }
    };
    positive("t_end", opts.t_end, "a finite time > 0")?;
    positive("atol", opts.atol, "a number > 0")?;
    const RTOL_ALLOWED: &str = "a number in [1e-14, 1) (double precision cannot meet a smaller relative error)";
    positive("rtol", opts.rtol, RTOL_ALLOWED)?;
    if !(MIN_RTOL..1.0).contains(&opts.rtol) {
        return Err(OdeError::OutOfRange { field: "rtol", value: number(opts.rtol), allowed: RTOL_ALLOWED });
    }
    if let Some(tol) = opts.steady_tol {
        positive("steady_tol", tol, "a number > 0")?;
    }
    let mut x = x0.to_vec();
    model.project(&mut x);
    let mut rec = Recorder::new(&x, opts.record_steps && sample.is_none());
    rec.sample = sample.map(|t| t.to_vec());
    let mut stats = Stats::default();
    if stopped(opts, job) {
        return Ok(rec.finish(Status::TimeLimit { t: 0.0 }, stats));
    }
    let large_sparse = (matches!(model.sparsity(), mfq_model::Sparsity::Sparse(_)) && n >= AUTO_BDF_MIN_DIM)
        || (!matches!(model.sparsity(), mfq_model::Sparsity::Dense) && n >= AUTO_BDF_HUGE_DIM);
    let status = match opts.method {
        Method::Rosenbrock23 => {
            stats.stiff_method = Some(Method::Rosenbrock23);
            rosenbrock::integrate(model, 0.0, &mut x, (opts, job), &mut rec, &mut stats)
        }
        Method::Bdf => {
            stats.stiff_method = Some(Method::Bdf);
            bdf::integrate(model, 0.0, &mut x, (opts, job), &mut rec, &mut stats)
        }
        Method::Dopri5 | Method::Dop853 => explicit::integrate(model, opts.method, 0.0, &mut x, (opts, job), &mut rec, &mut stats),
        Method::Auto if large_sparse => {
            stats.stiff_method = Some(Method::Bdf);
            bdf::integrate(model, 0.0, &mut x, (opts, job), &mut rec, &mut stats)
        }
        Method::Auto => match explicit::integrate(model, Method::Dopri5, 0.0, &mut x, (opts, job), &mut rec, &mut stats) {
            Status::Stiff { t } => {
                stats.switched_to_stiff_at = Some(t);
                stats.stiff_method = Some(Method::Rosenbrock23);
                rosenbrock::integrate(model, t, &mut x, (opts, job), &mut rec, &mut stats)
            }
            other => other,
        },
    };
    let mut tr = rec.finish(status, stats);
    tr.invariants = invariant_breaks(&model.layout(), &tr);
    Ok(tr)
}

/// The constraint breaks of the recorded states of `tr` (see [`Trajectory::invariants`]).
fn invariant_breaks(layout: &mfq_model::StateLayout, tr: &Trajectory) -> Option<InvariantBreaks> {
    let mut rows = 0;
    let mut largest: Option<(mfq_model::Violation, f64)> = None;
    for (t, x) in tr.t.iter().zip(&tr.x) {
        if let Some(v) = layout.largest_violation(x).filter(|v| v.amount > INVARIANT_TOL) {
            rows += 1;
            if largest.as_ref().is_none_or(|(w, _)| v.amount > w.amount) {
                largest = Some((v, *t));
            }
        }
    }
    largest.map(|(largest, at_t)| InvariantBreaks { rows, of: tr.t.len(), largest, at_t })
}

/// `v` for a message: plain, or in exponent form when that is shorter to read (`1e-30`, not
/// thirty zeros).
fn number(v: f64) -> String {
    if v != 0.0 && v.is_finite() && (v.abs() < 1e-4 || v.abs() >= 1e15) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// Smallest relative tolerance [`solve`] accepts: a step cannot be controlled to a relative
/// error below a few units of round-off (`2.2e-16`), and asking for less makes the step size
/// collapse instead of failing clearly.
pub const MIN_RTOL: f64 = 1e-14;

/// Collects output points.
struct Recorder {
    all: bool,
    t: Vec<f64>,
    x: Vec<Vec<f64>>,
    last_t: f64,
    last_x: Vec<f64>,
    /// Sampling times ([`solve_sampled_within`]): the first step at or after each is kept.
    sample: Option<Vec<f64>>,
    /// The next sampling time not yet reached.
    next_sample: usize,
}

impl Recorder {
    fn new(x0: &[f64], all: bool) -> Self {
        Recorder { all, t: vec![0.0], x: vec![x0.to_vec()], last_t: 0.0, last_x: x0.to_vec(), sample: None, next_sample: 0 }
    }

    fn push(&mut self, t: f64, x: &[f64]) {
        if self.all {
            self.t.push(t);
            self.x.push(x.to_vec());
        } else {
            self.last_t = t;
            self.last_x.copy_from_slice(x);
            if let Some(times) = &self.sample {
                if self.next_sample < times.len() && t >= times[self.next_sample] {
                    self.t.push(t);
                    self.x.push(x.to_vec());
                    while self.next_sample < times.len() && times[self.next_sample] <= t {
                        self.next_sample += 1;
                    }
                }
            }
        }
    }

    fn finish(mut self, status: Status, stats: Stats) -> Trajectory {
        if !self.all && self.last_t > 0.0 && self.t.last() != Some(&self.last_t) {
            self.t.push(self.last_t);
            self.x.push(self.last_x);
        }
        Trajectory { t: self.t, x: self.x, status, stats, invariants: None }
    }
}

#[inline]
pub(crate) fn max_abs(v: &[f64]) -> f64 {
    let mut m = 0.0f64;
    for x in v {
        if x.is_nan() {
            return f64::NAN;
        }
        m = m.max(x.abs());
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use mfq_model::models::{Jiq, Jsq};

    /// SciPy's solve_ivp (DOP853, Radau and BDF at rtol 1e-10) gives max |x(200) - x*| = 8.08e-8
    /// for JSQ(2), lambda = 0.9, K = 50 from the empty state: the transient has not died out.
    /// (Recomputed by validation/jsq_transient.py; listed in docs/references.md.)
    const SCIPY_GAP_AT_200: f64 = 8.08e-8;

    fn gap_at_200(method: Method, rtol: f64) -> (f64, Trajectory) {
        let m = Jsq::new(0.9, 2, 50).unwrap();
        let opts = SolveOptions { t_end: 200.0, rtol, atol: 1e-14, method, ..Default::default() };
        let tr = solve(&m, &vec![0.0; 50], &opts).unwrap();
        let xs = m.analytic_fixed_point().unwrap();
        let gap = tr.last().iter().zip(&xs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        (gap, tr)
    }

    #[test]
    fn explicit_methods_match_scipy_transient() {
        for method in [Method::Dopri5, Method::Dop853, Method::Auto] {
            let (gap, tr) = gap_at_200(method, 1e-10);
            assert_eq!(tr.status, Status::Success);
            assert_eq!(tr.t_last(), 200.0);
            assert!((gap - SCIPY_GAP_AT_200).abs() < 0.02e-7, "{method:?}: {gap:e}");
        }
    }

    #[test]
    fn rosenbrock_matches_scipy_transient() {
        let (gap, tr) = gap_at_200(Method::Rosenbrock23, 1e-9);
        assert_eq!(tr.status, Status::Success);
        assert!((gap - SCIPY_GAP_AT_200).abs() < 0.05e-7, "{gap:e}");
        assert!(tr.stats.factorisations > 0);
    }

    /// JSQ(2) at lambda = 0.99 over t = 2000 is stiff for Dopri5 (Hairer's stiffness test of an
    /// explicit Dopri5 run, without switching, fires at about t = 479); Auto must switch and still
    /// finish.
    #[test]
    fn auto_switches_to_the_stiff_method() {
        let m = Jsq::new(0.99, 2, 50).unwrap();
        let opts = SolveOptions { t_end: 2000.0, rtol: 1e-8, atol: 1e-12, ..Default::default() };
        let tr = solve(&m, &vec![0.0; 50], &opts).unwrap();
        assert_eq!(tr.status, Status::Success);
        let xs = m.analytic_fixed_point().unwrap();
        let gap = tr.last().iter().zip(&xs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        // SciPy: 2.54e-7 at t = 2000 (validation/jsq_transient.py)
        assert!((gap - 2.54e-7).abs() < 0.1e-7, "{gap:e}");
    }

    #[test]
    fn steady_state_stop_and_bad_options() {
        let m = Jsq::new(0.5, 2, 20).unwrap();
        let opts = SolveOptions { t_end: 1e4, steady_tol: Some(1e-10), record_steps: false, ..Default::default() };
        let tr = solve(&m, &[0.0; 20], &opts).unwrap();
        assert!(matches!(tr.status, Status::SteadyState { t } if t < 1e4));
        assert_eq!(tr.x.len(), 2);
        assert!(solve(&m, &[0.0; 3], &opts).is_err());
        let bad = SolveOptions { t_end: -1.0, ..Default::default() };
        assert!(matches!(solve(&m, &[0.0; 20], &bad), Err(OdeError::OutOfRange { field: "t_end", .. })));
    }

    /// `inner`, whose 50th drift evaluation runs `at_50` first: the test's event (a deadline
    /// passing, a cancel flag set) then surely happens while the run is in progress. (The
    /// stiff methods reach t = 1e9 on JSQ(2) at lambda = 0.99, K = 200 and rtol 1e-12 in about
    /// 3,000 steps and 0.03 s on an idle machine, so a timer racing the run is no test: on a
    /// loaded machine BDF finished first, on a fast one it would.)
    struct Gated<'a, F: Fn() + Send + Sync> {
        inner: &'a Jsq,
        calls: std::sync::atomic::AtomicUsize,
        at_50: F,
    }
    impl<F: Fn() + Send + Sync> MeanFieldModel for Gated<'_, F> {
        fn name(&self) -> String {
            self.inner.name()
        }
        fn dim(&self) -> usize {
            self.inner.dim()
        }
        fn drift(&self, x: &[f64], dx: &mut [f64]) {
            if self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 50 {
                (self.at_50)();
            }
            self.inner.drift(x, dx)
        }
        fn analytic_jacobian(&self) -> Option<&dyn mfq_model::AnalyticJacobian> {
            self.inner.analytic_jacobian()
        }
        fn layout(&self) -> mfq_model::StateLayout {
            self.inner.layout()
        }
        fn observables(&self, x: &[f64]) -> mfq_model::Observables {
            self.inner.observables(x)
        }
    }

    /// JSQ(2) at lambda = 0.99, K = 200 to t = 1e9 at rtol 1e-12, whose 50th drift evaluation
    /// waits until 0.03 s have passed.
    fn slow_jsq(m: &Jsq) -> Gated<'_, impl Fn() + Send + Sync> {
        let started = Instant::now();
        Gated {
            inner: m,
            calls: Default::default(),
            at_50: move || std::thread::sleep(Duration::from_millis(30).saturating_sub(started.elapsed())),
        }
    }

    const METHODS: [Method; 4] = [Method::Auto, Method::Dopri5, Method::Rosenbrock23, Method::Bdf];

    /// A run past its deadline stops with `TimeLimit` and keeps what it computed.
    #[test]
    fn deadline_stops_the_run() {
        let m = Jsq::new(0.99, 2, 200).unwrap();
        for method in METHODS {
            let opts = SolveOptions { t_end: 1e9, rtol: 1e-12, atol: 1e-14, method, deadline: deadline_after(0.02), ..Default::default() };
            let started = Instant::now();
            let tr = solve(&slow_jsq(&m), &vec![0.0; 200], &opts).unwrap();
            assert!(matches!(tr.status, Status::TimeLimit { t } if t < 1e9), "{method:?}: {:?}", tr.status);
            assert!(!tr.status.is_success());
            assert!(started.elapsed() < Duration::from_secs(1), "{method:?}: {:?}", started.elapsed());
            assert_eq!(tr.t.len(), tr.x.len());
            assert!(tr.t.len() > 1, "{method:?}: the steps before the deadline are kept");
        }
        // a deadline already passed: the initial state only
        let opts = SolveOptions { deadline: Some(Instant::now()), ..Default::default() };
        let tr = solve(&m, &vec![0.0; 200], &opts).unwrap();
        assert_eq!((tr.status, tr.t.len()), (Status::TimeLimit { t: 0.0 }, 1));
    }

    /// The job's deadline stops every method: its time limit, and its cancel flag set from
    /// another thread (as the Python package does on Ctrl-C).
    #[test]
    fn the_jobs_deadline_and_cancel_flag_stop_the_run() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        let m = Jsq::new(0.99, 2, 200).unwrap();
        for method in METHODS {
            let base = SolveOptions { t_end: 1e9, rtol: 1e-12, atol: 1e-14, method, ..Default::default() };
            let started = Instant::now();
            let tr = solve_within(&slow_jsq(&m), &vec![0.0; 200], &base, &Deadline::after(0.02)).unwrap();
            assert!(matches!(tr.status, Status::TimeLimit { t } if t < 1e9), "{method:?}: {:?}", tr.status);
            assert!(started.elapsed() < Duration::from_secs(1), "{method:?}: {:?}", started.elapsed());
            // the 50th drift evaluation asks another thread for the flag and waits (at most
            // 10 s) until it is set
            let flag = Arc::new(AtomicBool::new(false));
            let asked = Arc::new(AtomicBool::new(false));
            let job = Deadline::none().with_cancel(flag.clone());
            let gated = Gated {
                inner: &m,
                calls: Default::default(),
                at_50: || {
                    asked.store(true, Ordering::Release);
                    let waiting = Instant::now();
                    while !flag.load(Ordering::Acquire) && waiting.elapsed() < Duration::from_secs(10) {
                        std::thread::yield_now();
                    }
                },
            };
            let tr = std::thread::scope(|scope| {
                scope.spawn(|| {
                    while !asked.load(Ordering::Acquire) {
                        std::thread::sleep(Duration::from_micros(100));
                    }
                    flag.store(true, Ordering::Release);
                });
                solve_within(&gated, &vec![0.0; 200], &base, &job).unwrap()
            });
            assert!(matches!(tr.status, Status::TimeLimit { t } if t < 1e9), "{method:?}: {:?}", tr.status);
        }
    }

    /// A sampled run takes the same steps as a recorded one: the same last state, and the
    /// first recorded step at or after each sampling time.
    #[test]
    fn sampled_runs_keep_the_first_step_after_each_time() {
        let m = Jsq::new(0.9, 2, 30).unwrap();
        let times = [0.5, 0.6, 5.0, 40.0, 1e6];
        for method in [Method::Auto, Method::Bdf] {
            let opts = SolveOptions { t_end: 100.0, method, ..Default::default() };
            let all = solve(&m, &[0.0; 30], &opts).unwrap();
            let some = solve_sampled_within(&m, &[0.0; 30], &opts, &Deadline::none(), &times).unwrap();
            assert_eq!(some.status, all.status);
            assert_eq!(some.last(), all.last(), "{method:?}");
            let mut want = vec![0.0];
            for &s in &times {
                if let Some(&t) = all.t.iter().find(|&&t| t >= s) {
                    if want.last() != Some(&t) {
                        want.push(t);
                    }
                }
            }
            if want.last() != Some(&100.0) {
                want.push(100.0);
            }
            assert_eq!(some.t, want, "{method:?}");
            for (t, x) in some.t.iter().zip(&some.x) {
                let i = all.t.iter().position(|u| u == t).unwrap();
                assert_eq!(x, &all.x[i]);
            }
        }
    }

    #[test]
    fn deadlines_too_far_away_are_no_limit() {
        assert!(deadline_after(1e20).is_none() && deadline_after(f64::INFINITY).is_none());
        assert!(past(deadline_after(-1.0)) && past(deadline_after(f64::NAN)));
        assert!(!past(None) && !past(deadline_after(100.0)));
    }

    /// JIQ from empty: x_1(t) = lambda (1 - e^{-t}), x_k = 0 for k >= 2 (closed form of the
    /// interior linear ODE).
    #[test]
    fn jiq_from_empty_is_the_closed_form() {
        let m = Jiq::new(0.7, 10).unwrap();
        let opts = SolveOptions { t_end: 3.0, rtol: 1e-10, atol: 1e-14, ..Default::default() };
        let tr = solve(&m, &[0.0; 10], &opts).unwrap();
        for (t, x) in tr.t.iter().zip(&tr.x) {
            assert!((x[0] - 0.7 * (1.0 - (-t).exp())).abs() < 1e-9);
            assert!(x[1..].iter().all(|v| *v == 0.0));
        }
    }
}
