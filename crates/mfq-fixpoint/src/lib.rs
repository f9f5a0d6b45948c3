//! Fixed points of mean-field models and their local stability (plots of the reports: the
//! `mfq-plot` crate).
//!
//! - [`solve_model`]: pseudo-transient continuation then Newton on the drift of one
//!   (truncated) model, with a [`FixedPoint`] report: residual `max |f(x*)|`, iterations,
//!   status, spectral abscissa of the Jacobian, mass at the truncation level.
//! - [`solve_spec`]: the same for a model file's [`ModelSpec`], with the truncation level `K`
//!   grown automatically until `x_K < tol` (or fixed), after checking the model's stability
//!   condition.
//! - [`local_stability`]: eigenvalues of the Jacobian at a state.
//!
//! # Method
//!
//! Pseudo-transient continuation (Kelley and Keyes, "Convergence analysis of pseudo-transient
//! continuation", SIAM J. Numer. Anal. 35(2), 1998): from `x_0` (the empty state unless
//! given), solve `(I/dt - J(x)) dx = f(x)` and try `x_new = P(x + dx)` (`P` = the model's
//! projection onto the feasible set). As `dt -> inf` this is Newton's method. Linear solves use
//! the banded LU of [`mfq_ode::linalg`] when the model declares a band, faer's sparse LU for
//! sparse patterns, nalgebra's dense LU otherwise.
//!
//! Step control (the residual is `r = max |f(x)|`, the implicit-Euler defect of a trial step
//! is `e = max_i |f_i(x_new) - (x_new - x)_i / dt|`, zero when `x_new` is exactly the implicit
//! Euler step of `dx/dt = f(x)`):
//!
//! - **Acceptance.** A step is taken when `e <= r / 2` (it follows the flow, even where the
//!   residual must grow on the way: the opinion models between the empty state and their
//!   equilibrium), or when it lowers the residual with `e <= 2 r_new` (a Newton-like step that
//!   lands where the drift is small). A step that jumps back against the flow, or is pushed
//!   onto a face of the feasible set by `P`, has a large defect and is refused: `dt` shrinks by
//!   2x to 10x (from `e`) and the step is retried. Plain "accept if the residual fell by less
//!   than 2x" cycled on the opinion models (issue 10).
//! - **Growth.** After an accepted step `dt` grows as the defect allows (`e ~ dt^2` while steps
//!   are short; at most 10x, not at all right after a rejection) and, when the residual fell,
//!   at least by switched evolution relaxation `r_old / r_new` and at least twofold (plain SER
//!   stalls when a slow mode, e.g. `lambda -> 1`, barely moves).
//! - **Jumps of the drift.** A step still refused at `dt < 1e-8` is taken anyway: so short a
//!   step follows the ODE, and its defect means the drift jumps between `x` and `x_new` (a
//!   switching surface, e.g. a server class of SA-JSQ/SA-JIQ that saturates at `x_{j,1} = 1`);
//!   `dt` restarts from `dt0`.
//! - **Watchdog.** When the residual has not halved for 5 steps (rejections count twice), up to
//!   10 undamped (projected) Newton steps are tried. They are kept only if they reach the
//!   tolerance, however high the residual climbs on the way (JSQ(2) at `lambda = 0.99999`,
//!   warm-started at `K = 32` from the `K = 16` solution: `6e-5 -> 0.06 -> 0.09 -> 0.05 -> ...
//!   -> 2e-16` in 7 steps, where pseudo-transient steps crawl along the slow mode); otherwise
//!   they are undone and the window doubles. Keeping a probe that merely lowers the residual is
//!   wrong near a saddle-node "ghost" (opinion-stubborn near its fold: `|f|` is tiny at a point
//!   that is not a root), hence roots only (Chamberlain, Powell, Lemarechal and Pedersen, "The
//!   watchdog technique for forcing convergence in algorithms for constrained optimization",
//!   Math. Programming Study 16, 1982, for the idea of tolerating non-monotone steps).
//! - **Reusing a factorisation.** Where an LU factorisation costs many solves (sparse patterns;
//!   dense ones from `n = 24`), a step that contracts the residual at least 4-fold is followed by
//!   chord (simplified Newton) steps with the same factors, kept while each contracts 4-fold and
//!   passes the acceptance rules (C. T. Kelley, "Iterative Methods for Linear and Nonlinear
//!   Equations", SIAM 1995, ch. 5: the chord and Shamanskii methods). From its mean-field start
//!   the redundancy PS pair approximation at `K = 100` needs one factorisation instead of six.
//! - **Sweeps.** [`Factors`] carries the last factorisation from one point of a sweep to the
//!   next ([`solve_spec_with`], [`solve_model_with`]; `mfq::sweep` passes one per curve and
//!   starts each point from the secant extrapolation of the last two): a point whose model has
//!   the same shape starts with chord steps on it, and factorises only when they stop
//!   contracting. 50 load points of the PS pair at `K = 100` take 25 factorisations instead of
//!   92 (bench/rows-heavy.md).
//! - **Polishing.** Once `r <= tol`, up to three steps while they lower the residual: Newton
//!   steps, or chord steps where factorisations are costly; none when `r <= f64::EPSILON
//!   max |x|` (round-off at the scale of the state; a polishing step there saves nothing and
//!   costs a tenth of a JSQ(2) solve).
//! - **Relative polish of the tail.** A tail is read on a log scale, and an absolute residual
//!   at round-off leaves `x_5 = 2^-31` of JSQ(2) at `lambda = 0.5` wrong by `4.7e-10`
//!   relative. Each drift entry is computed to round-off relative to its own terms (rates
//!   times fractions of size `~x_k`), and Newton's step is the same in the variables `ln x_k`,
//!   so more Newton steps (chord steps where factorisations are costly) fix the small entries
//!   as well. Rule: unless `max |f_k / x_k| <= RELATIVE_STEP_TOL = 1e-14` over the entries
//!   `|x_k| >= RELATIVE_FLOOR = 1e-250`, up to four steps while the last one moved such an
//!   entry by more than `1e-14 |x_k|`; a step that raises the residual above twice its
//!   round-off level is undone. Newton steps (not chord steps) also stop once a step's largest
//!   relative change is not ten times below the previous one's: the small entries are then
//!   set by round-off (of an iterative solve, or of cancelling drift terms), and more
//!   steps move them at random (the redundancy triplet approximation); with iterative linear
//!   solves (GMRES, whose error is normwise) the polish also stops after a step that raised the
//!   absolute residual and moved an entry by its own size or more. [`FixedPoint::tail_polish`] (JSON `tail_polish`) reports the
//!   floor, the threshold, the steps and the last relative change. Entries below the
//!   truncation tolerance are cut to zero by the truncation, not by the solver; near `K` the
//!   truncated model itself differs from the infinite one (for slowly decaying tails, e.g.
//!   JSQ(1), by about `x_K / x_k` relative).
//!
//! Every pass of the loop costs one linear solve or stops, so `max_iter` (and `max_seconds`)
//! bound every solve. A run that does not converge says why in its status and reports the
//! last accepted iterate with its own residual.

pub mod attraction;
pub mod branches;

mod newton;
pub mod refined;
mod stability;

pub use attraction::{check, check_with_fixed_point, AttractionReport, CheckError, CheckOptions, Verdict};
pub use branches::{branches, BranchReport, ContinuationError, ContinuationOptions};
pub use newton::{solve_model, solve_model_with, Factors, FixedPointOptions, RELATIVE_FLOOR, RELATIVE_STEP_TOL};
pub use refined::transient::{refined_transient, RefinedTrajectory};
pub use refined::{
    refined_estimates, refined_expansion, refined_mean_field, refined_mean_field_order, refined_mean_field_order_within,
    refined_mean_field_within, Expansion, RefinedError, RefinedEstimate, RefinedExpansion, RefinedMeanField,
};
pub use stability::{classify, degeneracy_scale, local_stability, EquilibriumKind, LocalStability, DEGENERACY_TOL};

use mfq_model::{MeanFieldModel, ModelError, ModelSpec, Observables, Stability, StateLayout, Truncation};
use serde::Serialize;

/// How a fixed-point solve ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FixedPointStatus {
    /// `max |f(x*)| <= tol`.
    Converged,
    /// The iteration budget ran out before the residual reached the tolerance.
    MaxIterations,
    /// The wall-clock limit (`FixedPointOptions::deadline`) ran out first, or the job was
    /// cancelled.
    TimeLimit {
        /// The limit as given, in seconds (0 for a cancellation without a limit).
        seconds: f64,
    },
    /// A linear solve met a singular matrix.
    Singular {
        /// Column of the zero pivot.
        index: usize,
    },
    /// The drift became NaN or infinite.
    NonFinite,
    /// The automatic truncation reached `max_levels` with `x_K` still above `tol`.
    TruncationNotReached {
        /// `x_K` at the largest `K` tried.
        mass: f64,
    },
}

impl std::fmt::Display for FixedPointStatus {
    /// One sentence for users (never Rust's `Debug` text).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FixedPointStatus::Converged => write!(f, "converged"),
            FixedPointStatus::MaxIterations => write!(f, "the iteration budget ran out before the residual reached the tolerance"),
            FixedPointStatus::TimeLimit { seconds } => write!(f, "the wall-clock limit of {} s ran out", mfq_model::short_number(*seconds)),
            FixedPointStatus::Singular { index } => {
                write!(f, "a linear solve met a singular Jacobian (zero pivot in column {})", index + 1)
            }
            FixedPointStatus::NonFinite => write!(f, "the drift became non-finite (not a number or infinite)"),
            FixedPointStatus::TruncationNotReached { mass } => {
                write!(f, "the mass at the truncation level stays x_K = {mass:.3e} at the largest K allowed (truncation.max_levels)")
            }
        }
    }
}

/// A fixed point and how it was found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FixedPoint {
    /// The model's name.
    pub model: String,
    /// The state `x*` (layout: the model's; tail form `x[k-1] = x_k`).
    pub x: Vec<f64>,
    /// `max_i |f_i(x*)|`.
    pub residual: f64,
    /// Linear solves (PTC and Newton steps) used at the final truncation level.
    pub iterations: usize,
    /// Linear solves over every truncation level tried.
    pub total_iterations: usize,
    /// LU factorisations used at the final truncation level (at most `iterations`: chord steps
    /// and polishing reuse a factorisation where factorising costs many solves, e.g. the
    /// sparse pair approximations).
    pub factorisations: usize,
    /// Outcome.
    pub status: FixedPointStatus,
    /// Truncation level `K` (= length of `x` for tail-form models) and its diagnostics.
    pub truncation: TruncationReport,
    /// Largest real part of the Jacobian's eigenvalues at `x*` (negative: locally stable);
    /// `None` when not computed.
    pub spectral_abscissa: Option<f64>,
    /// `||J(x*)||_inf`; `None` when not computed.
    pub jacobian_norm: Option<f64>,
    /// The scale `s` of the degeneracy test ([`stability::degeneracy_scale`]: `max(1,
    /// min(||J||_inf, |lambda_2|))`); `None` when not computed.
    pub degeneracy_scale: Option<f64>,
    /// Local character of `x*` by the shared rule ([`LocalStability::kind`] with
    /// [`DEGENERACY_TOL`]): stable, unstable, or degenerate (a spectral abscissa within
    /// `DEGENERACY_TOL * s` of zero: inconclusive, as the checker says); `None` when not
    /// computed.
    pub local: Option<EquilibriumKind>,
    /// Whether the Jacobian was analytic or finite differences.
    pub jacobian: &'static str,
    /// Observables at `x*`.
    pub observables: Observables,
    /// The relative polish of the tail after convergence (its stopping rule and floor).
    pub tail_polish: TailPolish,
}

/// The relative polish of a converged fixed point (crate docs, "Method"): after the residual
/// reaches `tol`, Newton steps (chord steps where factorisations are costly) continue while the
/// last one moved some entry `|x_k| >= floor` by more than `step_tol |x_k|` (at most four), so
/// that small tail entries are right relative to their size, not only to `max |x|`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TailPolish {
    /// Entries at or above this magnitude are polished relatively ([`RELATIVE_FLOOR`]).
    pub floor: f64,
    /// The stopping threshold of the largest relative change ([`RELATIVE_STEP_TOL`]).
    pub step_tol: f64,
    /// Relative-polish steps taken.
    pub steps: usize,
    /// The largest relative change `|dx_k| / |x_k|` (over `|x_k| >= floor`) of the last step
    /// (an estimate of the relative error before it; `0` when no step was taken).
    pub last_relative_step: f64,
    /// Whether the last step was kept: `false` when it was round-off noise of an iterative
    /// linear solve (it raised the residual and moved an entry by its own size or more), so the
    /// entries it would move are below what the solves resolve.
    pub last_step_kept: bool,
}

impl Default for TailPolish {
    fn default() -> Self {
        TailPolish { floor: RELATIVE_FLOOR, step_tol: RELATIVE_STEP_TOL, steps: 0, last_relative_step: 0.0, last_step_kept: true }
    }
}

impl FixedPoint {
    /// Whether the solve converged.
    pub fn converged(&self) -> bool {
        self.status == FixedPointStatus::Converged
    }

    /// Records the spectral abscissa, the Jacobian norm and the local character of `local`
    /// (nothing when the eigenvalues are unknown).
    pub fn set_local(&mut self, local: &LocalStability) {
        if local.spectral_abscissa.is_finite() {
            self.spectral_abscissa = Some(local.spectral_abscissa);
            self.jacobian_norm = Some(local.jacobian_norm);
            self.degeneracy_scale = Some(local.scale);
            self.local = Some(local.kind(DEGENERACY_TOL));
        }
    }
}

/// What truncation was used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TruncationReport {
    /// Final truncation level `K`.
    pub levels: usize,
    /// `x_K` at the fixed point.
    pub mass_at_truncation: f64,
    /// Target for `x_K`.
    pub tol: f64,
    /// Whether `K` was chosen automatically.
    pub automatic: bool,
    /// Levels tried, in order.
    pub tried: Vec<usize>,
    /// Whether the state has a fixed size that no truncation level changes (a
    /// [`StateLayout::Named`](mfq_model::StateLayout::Named) layout, e.g. the caching system's
    /// server types): then `levels` is only the level the model was built with and means
    /// nothing, and outputs print the state's size instead of a `K`.
    pub fixed_size: bool,
    /// Whether `K` is the system's finite buffer (`truncation.buffer`): `mass_at_truncation`
    /// is then the blocking mass, not checked against `tol`.
    pub buffer: bool,
}

/// Misuse, or a question that has no fixed-point answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FixedPointError {
    /// A model parameter is invalid.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The parameters are outside the model's stability region: there is no steady state of
    /// the untruncated system to report.
    #[error("unstable: {reason}")]
    Unstable {
        /// Why, with the numbers.
        reason: String,
    },
    /// A fixed truncation level is too small: `x_K` exceeds the requested tolerance.
    #[error(
        "truncation.levels = {levels} is too small: the mass at level K is x_K = {mass:.3e} > truncation.tol = {tol:e}; \
         allowed: a K with x_K < tol (remove truncation.levels to choose K automatically, or set truncation.buffer = true \
         when K is the system's finite buffer)"
    )]
    TruncationTooSmall {
        /// The fixed `K`.
        levels: usize,
        /// `x_K` at the fixed point.
        mass: f64,
        /// The tolerance.
        tol: f64,
    },
    /// An option is outside its range.
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

/// Fixed point of a model file's model: checks the stability condition, then solves with the
/// truncation level `K` fixed (`trunc.levels`) or grown by doubling from 16 until
/// `x_K < trunc.tol` (each level warm-started from the previous solution padded with zeros),
/// then shrunk to the smallest `K` with `x_K < tol` and re-solved there.
///
/// The spectral abscissa is computed when `K <= opts.max_dim_for_eigenvalues`.
///
/// # Errors
/// [`FixedPointError::Unstable`] when the model's stability condition fails;
/// [`FixedPointError::TruncationTooSmall`] when a fixed `K` leaves `x_K >= tol` (not with
/// `truncation.buffer`: the finite-buffer system, whose `x_K` is its blocking mass);
/// [`FixedPointError::Model`] for invalid parameters. Non-convergence is a status, not an error.
pub fn solve_spec(spec: &ModelSpec, trunc: &Truncation, opts: &FixedPointOptions) -> Result<FixedPoint, FixedPointError> {
    solve_spec_with(spec, trunc, opts, &mut Factors::default())
}

/// [`solve_spec`] with the factorisations of the previous point of a sweep (see [`Factors`]):
/// each truncation level starts from the factorisation held when its shape matches, and the
/// last one solved leaves its own in `factors`.
///
/// # Errors
/// As [`solve_spec`].
pub fn solve_spec_with(
    spec: &ModelSpec,
    trunc: &Truncation,
    opts: &FixedPointOptions,
    factors: &mut Factors,
) -> Result<FixedPoint, FixedPointError> {
    trunc.validate()?;
    opts.validate()?;
    let probe = spec.build_probe_within(trunc.levels.unwrap_or_else(|| spec.initial_levels().min(trunc.max_levels)), &opts.deadline)?;
    if let Stability::Unstable { reason } = trunc.stability_of(probe.stability()) {
        return Err(FixedPointError::Unstable { reason });
    }
    let mut k = trunc.levels.unwrap_or_else(|| spec.initial_levels().min(trunc.max_levels));
    // a user-given start (e.g. the previous point of a sweep) sets the first K for tail layouts
    let mut warm: Option<(StateLayout, Vec<f64>)> = opts.x0.clone().map(|x| {
        let probe_layout = probe.layout();
        match probe_layout.start_truncation(&x) {
            Some((layout, levels)) if trunc.levels.is_none() => {
                k = levels.clamp(2, trunc.max_levels);
                (layout, x)
            }
            _ => (probe_layout, x),
        }
    });
    let mut search = TruncationSearch { spec, trunc, opts, tried: Vec::new(), total: 0, factors };
    let automatic = trunc.levels.is_none();
    loop {
        let model = spec.build_within(k, &opts.deadline)?;
        let x0 = warm.take().and_then(|(layout, w)| layout.resize(&w, &model.layout())).or_else(|| model.start_state());
        let mut fp = search.solve(model.as_ref(), k, x0.as_deref());
        let mass = mass_at_truncation(model.as_ref(), &fp.x);
        if !fp.converged() {
            leaving_transitions(model.as_ref(), &fp)?;
            return Ok(search.finish(fp, model.as_ref(), k));
        }
        if mass < trunc.tol {
            if automatic {
                if let Some(smaller) = search.shrink(model.as_ref(), &fp, k)? {
                    return Ok(smaller);
                }
            }
            return Ok(search.finish(fp, model.as_ref(), k));
        }
        if trunc.buffer {
            // the finite-buffer system itself: x_K is its blocking mass
            return Ok(search.finish(fp, model.as_ref(), k));
        }
        if !automatic {
            return Err(FixedPointError::TruncationTooSmall { levels: k, mass, tol: trunc.tol });
        }
        if k >= trunc.max_levels {
            fp.status = FixedPointStatus::TruncationNotReached { mass };
            return Ok(search.finish(fp, model.as_ref(), k));
        }
        warm = Some((model.layout(), std::mem::take(&mut fp.x)));
        k = (2 * k).min(trunc.max_levels);
    }
}

/// The truncation levels of one [`solve_spec`] call: what it solves with, the levels tried
/// and the linear solves over all of them.
struct TruncationSearch<'a> {
    spec: &'a ModelSpec,
    trunc: &'a Truncation,
    opts: &'a FixedPointOptions,
    tried: Vec<usize>,
    total: usize,
    factors: &'a mut Factors,
}

impl TruncationSearch<'_> {
    /// Solves `model` (built at truncation level `k`) from `x0`; records the level and its
    /// linear solves.
    fn solve(&mut self, model: &dyn MeanFieldModel, k: usize, x0: Option<&[f64]>) -> FixedPoint {
        let fp = newton::solve_until(model, x0, self.opts, &self.opts.deadline, self.factors);
        self.tried.push(k);
        self.total += fp.iterations;
        fp
    }

    /// With `x_K < tol` at `K = k` (automatic truncation): the smallest `K` with `x_K < tol`,
    /// re-solved there warm from `fp` (1-2 steps). `Some` (the finished report) when that `K`
    /// is smaller than `k` and its solve converges with `x_K < tol`; `None` otherwise (the
    /// layout has no levels, no smaller `K`, or the smaller solve fails the test).
    fn shrink(&mut self, model: &dyn MeanFieldModel, fp: &FixedPoint, k: usize) -> Result<Option<FixedPoint>, FixedPointError> {
        let tol = self.trunc.tol;
        let masses = model.layout().level_masses(&fp.x);
        let Some(k_min) = masses.and_then(|m| m.iter().position(|v| *v < tol)).map(|i| (i + 1).max(2)) else {
            return Ok(None);
        };
        if k_min >= k {
            return Ok(None);
        }
        let small = self.spec.build_within(k_min, &self.opts.deadline)?;
        let x0 = model.layout().resize(&fp.x, &small.layout());
        let fp2 = self.solve(small.as_ref(), k_min, x0.as_deref());
        if fp2.converged() && mass_at_truncation(small.as_ref(), &fp2.x) < tol {
            return Ok(Some(self.finish(fp2, small.as_ref(), k_min)));
        }
        Ok(None)
    }

    /// The report of the solve `fp` of `model` at truncation level `levels`: iterations over
    /// every level, the truncation report, and the spectral abscissa (converged solves up to
    /// `max_dim_for_eigenvalues`, models whose drift is their dynamics).
    fn finish(&mut self, mut fp: FixedPoint, model: &dyn MeanFieldModel, levels: usize) -> FixedPoint {
        let (trunc, opts) = (self.trunc, self.opts);
        fp.total_iterations = self.total;
        // a model may report more tail than asked for (the LCFS limit is not truncated)
        let levels = model.layout().tail_levels().map_or(levels, |n| n.max(levels));
        fp.truncation = TruncationReport {
            levels,
            mass_at_truncation: mass_at_truncation(model, &fp.x),
            tol: trunc.tol,
            automatic: trunc.levels.is_none(),
            tried: std::mem::take(&mut self.tried),
            fixed_size: matches!(model.layout(), mfq_model::StateLayout::Named { .. }),
            buffer: trunc.buffer,
        };
        // (past the deadline the eigenvalues are skipped: not computed, as above the dimension limit)
        if fp.converged() && model.dim() <= opts.max_dim_for_eigenvalues && model.dynamics_note().is_none() && !opts.deadline.expired() {
            fp.set_local(&local_stability(model, &fp.x));
        }
        fp
    }
}

/// The mass at the truncation level of `x` (`mass_at_truncation` of [`StateLayout`]); for the
/// pair and triplet approximations, whose layout cannot tell, the model's own marginal
/// `P(Q >= K)` ([`Observables::mass_at_truncation`]).
pub(crate) fn mass_at_truncation(model: &dyn MeanFieldModel, x: &[f64]) -> f64 {
    model.layout().mass_at_truncation(x).unwrap_or_else(|| model.observables(x).mass_at_truncation.max(0.0))
}

/// After a failed solve (not at the deadline): [`ModelError::LeavesStateSpace`] naming the
/// transitions that push its last iterate out of the state space
/// ([`mfq_model::outward_transitions`]: at a face of `[0, 1]` or of a conservation law, a
/// positive rate whose jump points outward), when there are any. A model file such as `X += 1`
/// at the constant rate 5 on a one-entry state ended "not converged" (residual 5 at `X = 1`);
/// a valid model, one whose dynamics keep it in its state space, has no such transition where
/// its iterate sits, so nothing changes for it.
pub(crate) fn leaving_transitions(model: &dyn MeanFieldModel, fp: &FixedPoint) -> Result<(), FixedPointError> {
    if fp.converged() || matches!(fp.status, FixedPointStatus::TimeLimit { .. }) {
        return Ok(());
    }
    let found = mfq_model::outward_transitions(model, &fp.x, 4);
    if found.is_empty() {
        return Ok(());
    }
    Err(FixedPointError::Model(ModelError::LeavesStateSpace {
        transitions: found,
        found: format!(
            "where the mean field's fixed-point iteration, pushed onto that face, stopped without converging ({}; residual {:.3e})",
            fp.status, fp.residual
        ),
    }))
}
