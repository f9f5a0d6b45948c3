//! The uniqueness and global-attraction checker: is the fixed point `x*` the only
//! equilibrium of the (truncated) mean-field ODE, and does every trajectory go there?
//!
//! [`check`] (or [`check_with_fixed_point`], when the caller already has `x*`) runs four
//! tests and returns an [`AttractionReport`] whose [`Verdict`] says what the answer rests on:
//!
//! 1. **Local stability** at `x*`: the eigenvalues of the Jacobian ([`local_stability`]), the
//!    spectral abscissa `alpha` and the slowest decay rate `-alpha`. `|alpha| <=
//!    degeneracy_tol` flags a **degenerate** equilibrium (a zero eigenvalue to the precision
//!    at hand: convergence there is algebraic, not exponential, and nothing is certified on it).
//! 2. **Monotone sandwich**, when [`MeanFieldModel::order`] claims an order: cooperativity is
//!    *tested*, never trusted. At `cooperativity_samples` random feasible states the
//!    off-diagonal Jacobian entries must be `>= -threshold` (Kamke's condition, componentwise
//!    order) or the Jacobian cross-positive on the order's cone
//!    ([`PartialOrder::cooperativity`], other orders); `order_pairs` random ordered pairs
//!    `x(0) <= y(0)` must stay ordered at the checkpoints `t = 0.5, 1, 2, ..., 32` (the recipe
//!    of the research notes on Coxian models §3.5). Then the trajectories from the minimal and maximal states
//!    ([`MeanFieldModel::extremal_states`]) are integrated until `max |f| < tol` or
//!    `time_limit`. In a cooperative system every trajectory stays between those two; if both
//!    reach `x*`, `x*` attracts every feasible state (Hirsch; Smith, "Monotone dynamical
//!    systems", AMS 1995, ch. 3).
//! 3. **Multi-start**: `starts` seeded random feasible states (random monotone tails
//!    `1 >= x_1 >= x_2 >= ... >= 0` for tail layouts, per class or per phase for class and
//!    phase tails, uniform in `[0, 1]^n` for named ones, random convex combinations of the
//!    extremal states and `x*` for other layouts) are integrated in parallel (rayon) until `max |f| < tol` or `time_limit`; each end point
//!    is polished by Newton ([`solve_model`] from it) and clustered. Two limits are one
//!    equilibrium when they are within `cluster_tol` (max norm), or when the drift stays
//!    below `tol` on the whole segment between them (a flat, degenerate root that Newton
//!    approaches from either side). When starts reach different equilibria, the segment
//!    between the two closest such starts is bisected by basin to find the equilibrium on
//!    the basin boundary (a saddle, which no random trajectory reaches), polished by Newton.
//! 4. **Series for plots**: `log10 ||x(t) - x_lim||_inf` against `t` for every run, at about
//!    200 log-spaced times ([`crate::svg::attraction`] draws them).
//!
//! # Verdicts and what they rest on
//!
//! - [`Verdict::NotUnique`]: two or more distinct equilibria were found (each a Newton root
//!   with residual `<= tol`), with their stability and the share of starts that reached each.
//! - [`Verdict::Unsettled`]: one equilibrium was found but some run did not settle within
//!   `time_limit`; nothing is certified.
//! - [`Verdict::TimeLimit`]: the wall-clock limit `max_seconds` ran out before the check
//!   finished (runs, bisections and ordered pairs stop where they are); nothing is certified.
//! - [`Verdict::Certified`]: cooperativity held at every sample and pair, both extremal runs
//!   and every random start reached the one equilibrium `x*`, and `x*` is locally stable and
//!   not degenerate. This certifies global attraction **of the truncated system**, up to the
//!   numerical evidence for cooperativity (sampled states, not a proof over the whole set).
//! - [`Verdict::Evidence`]: every run reached the one equilibrium, but the sandwich does not
//!   apply (no order, a cooperativity violation, a degenerate or unknown spectrum); the
//!   reasons are listed.
//!
//! # Example
//!
//! ```
//! use mfq_fixpoint::attraction::{check, CheckOptions, Verdict};
//! use mfq_model::models::{Jsq, OpinionStubborn};
//! let opts = CheckOptions { starts: 8, ..Default::default() };
//! let r = check(&Jsq::new(0.9, 2, 12).unwrap(), &opts).unwrap();
//! assert!(matches!(r.verdict, Verdict::Certified { .. }), "{r}");
//! let r = check(&OpinionStubborn::new(0.1, 0.1).unwrap(), &opts).unwrap();
//! assert!(matches!(r.verdict, Verdict::NotUnique { equilibria: 3, .. }), "{r}");
//! ```

use crate::{local_stability, solve_model, FixedPoint, FixedPointError, FixedPointOptions, LocalStability};
use indicatif::{ProgressBar, ProgressStyle};
use mfq_model::{Jacobian, MeanFieldModel, PartialOrder, StateLayout};
use mfq_ode::{deadline_after, past, Method, OdeError, SolveOptions, Status};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde::Serialize;
use std::fmt;
use std::time::Instant;

/// Number of output times per run (log-spaced; the series for plots).
pub const SERIES_POINTS: usize = 200;
/// `log10` distances are floored here (distance 0 after Newton would be `-inf`).
pub const LOG10_FLOOR: f64 = -16.0;
/// Largest `max_i (x_i(t) - y_i(t))` tolerated for an ordered pair `x(0) <= y(0)`
/// (integration error at `rtol = 1e-10`).
pub const ORDER_TOL: f64 = 1e-8;
/// Checkpoints (model time) at which ordered pairs are compared (those `<= time_limit`).
pub const ORDER_CHECKPOINTS: [f64; 7] = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
/// A Newton polish that moves a settled end point further than this is not trusted.
const POLISH_MAX_SHIFT: f64 = 1e-2;
/// Pairs of basins whose boundary is searched for a saddle.
const MAX_SEPARATRIX_PAIRS: usize = 10;
/// Bisection steps per basin boundary.
const BISECTION_STEPS: usize = 60;
/// A segment of a run that takes more explicit steps than this switches the rest of the run
/// to Rosenbrock23 (the explicit method is at its stability limit).
const STIFF_SEGMENT_STEPS: u64 = 300;
/// Relative tolerance of the runs: tight enough that the distance series near `x*` follow the
/// true decay (the slope the plot compares with the spectral abscissa) and that basins are
/// told apart up to ~1e-8 from their boundary.
const RUN_RTOL: f64 = 1e-8;
/// Once `max |f|` falls below this, a run continues with Rosenbrock23.
const IMPLICIT_BELOW_DRIFT: f64 = 1e-6;
/// First output time of a run (then log-spaced up to `time_limit`).
const FIRST_OUTPUT_TIME: f64 = 0.01;

/// Options of [`check`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckOptions {
    /// Number of seeded random feasible initial states (default 32).
    pub starts: usize,
    /// Seed of the random starts, samples and pairs (default 1; same seed, same report).
    pub seed: u64,
    /// A run has settled once `max_i |f_i(x)| < tol` (default 1e-10); also the flat-segment
    /// test of the clustering.
    pub tol: f64,
    /// Longest integration of one run, in model time (mean job sizes; default 1e4).
    pub time_limit: f64,
    /// States at which the sign of the off-diagonal Jacobian entries is tested (default 256).
    pub cooperativity_samples: usize,
    /// Ordered pairs `x(0) <= y(0)` integrated to test order preservation (default 8).
    pub order_pairs: usize,
    /// Two equilibria closer than this (max norm) are one (default 1e-6).
    pub cluster_tol: f64,
    /// An equilibrium with `|spectral abscissa| <= degeneracy_tol` is degenerate (default 1e-5).
    pub degeneracy_tol: f64,
    /// Eigenvalues are computed for models up to this dimension (dense, `O(n^3)`; default 600).
    pub max_dim_for_eigenvalues: usize,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Wall-clock limit of the whole check, in seconds (finite, `> 0`; default `None`, no
    /// limit). When it runs out, every integration stops at its next step and the verdict is
    /// [`Verdict::TimeLimit`].
    pub max_seconds: Option<f64>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            starts: 32,
            seed: 1,
            tol: 1e-10,
            time_limit: 1e4,
            cooperativity_samples: 256,
            order_pairs: 8,
            cluster_tol: 1e-6,
            degeneracy_tol: 1e-5,
            max_dim_for_eigenvalues: 600,
            progress: false,
            max_seconds: None,
        }
    }
}

impl CheckOptions {
    /// Checks the option ranges.
    ///
    /// # Errors
    /// [`CheckError::OutOfRange`] naming the option, its value and the allowed range.
    pub fn validate(&self) -> Result<(), CheckError> {
        let bad = |field, value: String, allowed| Err(CheckError::OutOfRange { field, value, allowed });
        if !(1..=100_000).contains(&self.starts) {
            return bad("starts", self.starts.to_string(), "an integer in [1, 100000]");
        }
        if !(self.tol.is_finite() && self.tol > 0.0 && self.tol <= 1e-2) {
            return bad("tol", self.tol.to_string(), "a number in (0, 1e-2]");
        }
        if !(self.time_limit.is_finite() && self.time_limit > 0.0) {
            return bad("time_limit", self.time_limit.to_string(), "a finite model time > 0");
        }
        if self.cooperativity_samples > 1_000_000 {
            return bad("cooperativity_samples", self.cooperativity_samples.to_string(), "an integer in [0, 1000000]");
        }
        if self.order_pairs > 10_000 {
            return bad("order_pairs", self.order_pairs.to_string(), "an integer in [0, 10000]");
        }
        if !(self.cluster_tol.is_finite() && self.cluster_tol > 0.0 && self.cluster_tol < 1.0) {
            return bad("cluster_tol", self.cluster_tol.to_string(), "a number in (0, 1)");
        }
        if !(self.degeneracy_tol.is_finite() && self.degeneracy_tol >= 0.0) {
            return bad("degeneracy_tol", self.degeneracy_tol.to_string(), "a finite number >= 0");
        }
        if let Some(t) = self.max_seconds.filter(|t| !(t.is_finite() && *t > 0.0)) {
            return bad("max_seconds", t.to_string(), "a finite number of seconds > 0");
        }
        Ok(())
    }
}

/// Misuse of the checker. Numerical outcomes (runs that do not settle, Newton failures) are
/// data in the report, not errors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckError {
    /// An option, or the given fixed point, is outside its range.
    #[error("{field} = {value} is not allowed: {allowed}")]
    OutOfRange {
        /// Option name (`starts`, `tol`, ..., or `fixed_point.x`).
        field: &'static str,
        /// Value given.
        value: String,
        /// Allowed range.
        allowed: &'static str,
    },
    /// The fixed-point solve rejected its input.
    #[error(transparent)]
    FixedPoint(#[from] FixedPointError),
    /// The integrator rejected a start (e.g. an extremal state of the wrong length: a model bug).
    #[error("start '{start}': {source}")]
    Integration {
        /// Label of the start.
        start: String,
        /// The integrator's error.
        source: OdeError,
    },
}

/// Local character of an equilibrium, from the spectral abscissa `alpha` of the Jacobian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EquilibriumKind {
    /// `alpha < -degeneracy_tol`: exponentially attracting.
    Stable,
    /// `alpha > degeneracy_tol`: repelling in some direction (e.g. a saddle).
    Unstable,
    /// `|alpha| <= degeneracy_tol`: a zero eigenvalue to the precision at hand.
    Degenerate,
    /// Eigenvalues not computed (dimension above `max_dim_for_eigenvalues`).
    Unknown,
}

/// How an equilibrium was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FoundBy {
    /// The reference fixed-point solve (PTC + Newton from the empty state, or given).
    FixedPointSolve,
    /// A run settled there (end point polished by Newton).
    Trajectory,
    /// Newton from the bisected boundary between two basins.
    Separatrix,
}

/// One distinct equilibrium.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Equilibrium {
    /// The state (the model's layout).
    pub x: Vec<f64>,
    /// The summary coordinate at `x` (see [`AttractionReport::summary_name`]).
    pub summary: f64,
    /// `max_i |f_i(x)|`.
    pub residual: f64,
    /// Eigenvalues of the Jacobian at `x` (`None` above `max_dim_for_eigenvalues`).
    pub local: Option<LocalStability>,
    /// Stable, unstable, degenerate or unknown.
    pub kind: EquilibriumKind,
    /// Random starts that settled here.
    pub starts: usize,
    /// `starts / CheckOptions::starts`.
    pub share: f64,
    /// Names of the extremal states whose runs settled here.
    pub extremal: Vec<String>,
    /// How it was first found.
    pub found_by: FoundBy,
}

/// One integrated run (an extremal state or a random start).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StartRun {
    /// `empty`, `full`, ... for extremal states; `start N` for random ones.
    pub label: String,
    /// Whether the start is an extremal state of the order.
    pub extremal: bool,
    /// Whether `max |f| < tol` was reached within `time_limit`.
    pub settled: bool,
    /// How the integration ended (times are absolute model times).
    pub status: Status,
    /// Model time reached.
    pub t_reached: f64,
    /// `max |f|` at the last state.
    pub end_drift: f64,
    /// Index into [`AttractionReport::equilibria`] of the equilibrium reached (settled runs).
    pub equilibrium: Option<usize>,
    /// Summary coordinate at `t = 0`.
    pub summary_start: f64,
    /// Summary coordinate at the last state.
    pub summary_end: f64,
    /// Output times (log-spaced, about [`SERIES_POINTS`]).
    pub t: Vec<f64>,
    /// `log10 max_i |x_i(t) - z_i|`, floored at [`LOG10_FLOOR`], where `z` is the run's own
    /// Newton-polished limit when it settled and the reference `x*` otherwise.
    pub log10_distance: Vec<f64>,
    /// The summary coordinate at the output times.
    pub summary: Vec<f64>,
}

/// The trajectory from one extremal state, as the sandwich sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtremalRun {
    /// Name of the extremal state.
    pub name: String,
    /// Index into [`AttractionReport::runs`].
    pub run: usize,
    /// Whether it settled within `time_limit`.
    pub settled: bool,
    /// Model time reached.
    pub t_reached: f64,
    /// `||x_end - x*||_inf` to the reference fixed point.
    pub end_distance: f64,
    /// The equilibrium reached (settled runs).
    pub equilibrium: Option<usize>,
}

/// The monotone-sandwich test (only for models that claim an order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sandwich {
    /// The order tested.
    pub order: PartialOrder,
    /// Random feasible states (plus `x*`) at which the Jacobian was evaluated.
    pub jacobian_samples: usize,
    /// Samples at which the drift is not cooperative beyond the threshold.
    pub jacobian_violations: usize,
    /// Largest violation found, 0 when none: `-J_ij` (`i != j`) for `Componentwise`,
    /// `-min Phi_U(J g)` (cross-positivity) for the other orders.
    pub max_violation: f64,
    /// Where the largest violation is: the entry `(i, j)` for `Componentwise`, the indices
    /// `(up-set, generator)` of [`PartialOrder::upsets`] and [`PartialOrder::generators`] otherwise.
    pub worst_entry: Option<(usize, usize)>,
    /// Threshold relative to `max(1, max |J|)`: 1e-12 for analytic Jacobians, 1e-6 for
    /// finite differences.
    pub relative_threshold: f64,
    /// Ordered pairs integrated.
    pub order_pairs: usize,
    /// Pairs whose order broke by more than [`ORDER_TOL`] at a checkpoint.
    pub order_violations: usize,
    /// Largest breach of the order over pairs and checkpoints: `max_i (x_i(t) - y_i(t))` for
    /// `Componentwise`, `-min_U Phi_U(y(t) - x(t))` otherwise (`<= 0` when preserved).
    pub max_order_excess: f64,
    /// Pairs whose integration failed (not counted as checked).
    pub order_pairs_failed: usize,
    /// Checkpoints used.
    pub checkpoints: Vec<f64>,
    /// Whether no violation was found (and at least one sample was tested).
    pub cooperative: bool,
    /// The runs from the extremal states.
    pub extremal: Vec<ExtremalRun>,
    /// Whether every extremal run settled at the reference equilibrium.
    pub bounds_meet_at_reference: bool,
}

/// The outcome of [`check`]: what is known about uniqueness and global attraction.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// Sandwich certificate of global attraction of the truncated system (see the module docs).
    Certified {
        /// Jacobian samples, none with a negative off-diagonal entry.
        jacobian_samples: usize,
        /// Ordered pairs, all preserved.
        order_pairs: usize,
        /// Largest `||x_end - x*||_inf` of the extremal runs.
        extremal_end_distance: f64,
        /// Spectral abscissa at `x*` (below `-degeneracy_tol`).
        spectral_abscissa: f64,
        /// Random starts, all settled at `x*`.
        starts: usize,
    },
    /// Every run settled at the one equilibrium found; no certificate.
    Evidence {
        /// Random starts, all settled at the equilibrium.
        starts: usize,
        /// Largest `||x_end - x*||_inf` over all runs.
        max_end_distance: f64,
        /// Why the sandwich does not certify.
        not_certified_because: Vec<String>,
    },
    /// Several equilibria.
    NotUnique {
        /// Distinct equilibria found.
        equilibria: usize,
        /// Of which stable.
        stable: usize,
        /// Of which unstable.
        unstable: usize,
        /// Of which degenerate.
        degenerate: usize,
        /// Runs that did not settle (there may be more equilibria).
        unsettled: usize,
    },
    /// The wall-clock limit (`CheckOptions::max_seconds`) ran out before the check finished;
    /// nothing is certified.
    TimeLimit {
        /// The limit, in seconds.
        seconds: f64,
        /// Runs that had not settled when it ran out.
        unsettled: usize,
        /// All runs (extremal and random).
        runs: usize,
    },
    /// Some runs did not settle within the time limit, or failed; nothing is certified.
    Unsettled {
        /// Runs that did not settle (the failed ones included).
        unsettled: usize,
        /// Of which stopped with a solver failure (step size too small, a non-finite drift, a
        /// singular matrix, the step budget: [`StartRun::status`] says which), not at the
        /// time limit.
        failed: usize,
        /// All runs (extremal and random).
        runs: usize,
        /// The time limit.
        time_limit: f64,
        /// Largest `max |f|` at the end of a run that reached the time limit unsettled (0 when
        /// every unsettled run failed).
        largest_end_drift: f64,
    },
}

impl Verdict {
    /// Short kebab-case name: `certified`, `evidence`, `not-unique`, `unsettled`, `time-limit`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Certified { .. } => "certified",
            Verdict::Evidence { .. } => "evidence",
            Verdict::NotUnique { .. } => "not-unique",
            Verdict::Unsettled { .. } => "unsettled",
            Verdict::TimeLimit { .. } => "time-limit",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Certified { jacobian_samples, order_pairs, extremal_end_distance, spectral_abscissa, starts } => write!(
                f,
                "CERTIFIED: global attraction of the truncated system (monotone sandwich): cooperative at {jacobian_samples} \
                 sampled states and {order_pairs} ordered pairs, both extremal runs reach x* (end distance {extremal_end_distance:.1e}), \
                 x* locally stable (spectral abscissa {spectral_abscissa:.4e}); all {starts} random starts agree"
            ),
            Verdict::Evidence { starts, max_end_distance, not_certified_because } => write!(
                f,
                "EVIDENCE: all {starts} random starts and the extremal runs reach one equilibrium (largest end distance \
                 {max_end_distance:.1e}); not certified because: {}",
                not_certified_because.join("; ")
            ),
            Verdict::NotUnique { equilibria, stable, unstable, degenerate, unsettled } => {
                write!(f, "NOT UNIQUE: {equilibria} equilibria ({stable} stable, {unstable} unstable, {degenerate} degenerate)")?;
                if *unsettled > 0 {
                    write!(f, "; {unsettled} runs did not settle")?;
                }
                Ok(())
            }
            Verdict::TimeLimit { seconds, unsettled, runs } => write!(
                f,
                "TIME LIMIT: the wall-clock limit of {seconds:.3} s ran out before the check finished ({unsettled} of {runs} runs \
                 had not settled); nothing is certified"
            ),
            Verdict::Unsettled { unsettled, failed: 0, runs, time_limit, largest_end_drift } => write!(
                f,
                "UNSETTLED: {unsettled} of {runs} runs did not settle within t = {time_limit} (largest end drift \
                 {largest_end_drift:.1e}); nothing is certified"
            ),
            Verdict::Unsettled { unsettled, failed, runs, time_limit, largest_end_drift } => {
                write!(
                    f,
                    "UNSETTLED: {unsettled} of {runs} runs did not settle: {failed} failed (the integration stopped: see the notes)"
                )?;
                if unsettled > failed {
                    write!(
                        f,
                        ", {} did not settle within t = {time_limit} (largest end drift {largest_end_drift:.1e})",
                        unsettled - failed
                    )?;
                }
                write!(f, "; nothing is certified")
            }
        }
    }
}

/// Everything the checker found; plots ([`crate::svg::attraction`]) read only this.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttractionReport {
    /// The model's name.
    pub model: String,
    /// Its dimension.
    pub dim: usize,
    /// The options used.
    pub options: CheckOptions,
    /// The reference fixed point `x*`.
    pub fixed_point: FixedPoint,
    /// Eigenvalues at `x*` (`None` above `max_dim_for_eigenvalues`).
    pub local: Option<LocalStability>,
    /// Index of `x*` in [`equilibria`](Self::equilibria) (`None` if its solve did not converge).
    pub reference: Option<usize>,
    /// Whether some equilibrium found is degenerate (`|alpha| <= degeneracy_tol`).
    pub degenerate: bool,
    /// The monotone sandwich (`None` when the model claims no order).
    pub sandwich: Option<Sandwich>,
    /// Distinct equilibria, sorted by the summary coordinate.
    pub equilibria: Vec<Equilibrium>,
    /// Every run: the extremal states first, then the random starts.
    pub runs: Vec<StartRun>,
    /// Runs that did not settle.
    pub unsettled: usize,
    /// What the summary coordinate is (`mean queue length sum_k x_k`, or the state name).
    pub summary_name: String,
    /// The answer.
    pub verdict: Verdict,
    /// Remarks behind the verdict (degeneracy, violations, failed solves).
    pub notes: Vec<String>,
    /// Wall-clock time of the check, seconds.
    pub wall_time_s: f64,
}

impl AttractionReport {
    /// The reference equilibrium `x*`, when its solve converged.
    pub fn reference_equilibrium(&self) -> Option<&Equilibrium> {
        self.reference.map(|i| &self.equilibria[i])
    }

    /// A multi-line text summary (the same as `Display`).
    pub fn summary(&self) -> String {
        self.to_string()
    }
}

fn fmt_state(x: &[f64]) -> String {
    let shown: Vec<String> = x.iter().take(4).map(|v| format!("{v:.10}")).collect();
    if x.len() > 4 {
        format!("[{}, ... ({} entries)]", shown.join(", "), x.len())
    } else {
        format!("[{}]", shown.join(", "))
    }
}

impl fmt::Display for AttractionReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "attraction check: {} ({} state entries)", self.model, self.dim)?;
        let fp = &self.fixed_point;
        write!(f, "  fixed point x* = {}: residual {:.1e}, {:?}", fmt_state(&fp.x), fp.residual, fp.status)?;
        match &self.local {
            Some(l) => writeln!(f, ", spectral abscissa {:.6e} (slowest decay rate {:.6e})", l.spectral_abscissa, l.slowest_decay_rate)?,
            None => writeln!(f, ", eigenvalues not computed")?,
        }
        if let Some(s) = &self.sandwich {
            writeln!(
                f,
                "  sandwich ({:?} order): {} Jacobian samples, {} violations (max {:.1e}); {} ordered pairs, {} violations \
                 (max excess {:.1e})",
                s.order, s.jacobian_samples, s.jacobian_violations, s.max_violation, s.order_pairs, s.order_violations, s.max_order_excess
            )?;
            for e in &s.extremal {
                let to = e.equilibrium.map_or("-".to_string(), |i| format!("#{i}"));
                let how = match self.runs.get(e.run).map(|r| &r.status) {
                    _ if e.settled => "settled".to_string(),
                    Some(status) if run_failed(status) => format!("FAILED ({})", failure_text(status)),
                    _ => "NOT settled".to_string(),
                };
                writeln!(
                    f,
                    "    from {}: {how} at t = {:.4}, distance to x* {:.1e}, equilibrium {to}",
                    e.name, e.t_reached, e.end_distance
                )?;
            }
        } else {
            writeln!(f, "  sandwich: the model claims no order")?;
        }
        let settled = self.runs.iter().filter(|r| !r.extremal && r.settled).count();
        writeln!(
            f,
            "  multi-start: {} random starts (seed {}), {settled} settled within t = {}",
            self.options.starts, self.options.seed, self.options.time_limit
        )?;
        for (i, e) in self.equilibria.iter().enumerate() {
            let alpha = e.local.as_ref().map_or("-".to_string(), |l| format!("{:.4e}", l.spectral_abscissa));
            writeln!(
                f,
                "  equilibrium #{i}{}: {} = {:.10}, {:?}, spectral abscissa {alpha}, residual {:.1e}, {} starts ({:.0}%){}, found by {:?}",
                if self.reference == Some(i) { " (x*)" } else { "" },
                self.summary_name,
                e.summary,
                e.kind,
                e.residual,
                e.starts,
                100.0 * e.share,
                if e.extremal.is_empty() { String::new() } else { format!(", extremal: {}", e.extremal.join(", ")) },
                e.found_by
            )?;
        }
        for n in &self.notes {
            writeln!(f, "  note: {n}")?;
        }
        writeln!(f, "  verdict: {}", self.verdict)?;
        write!(f, "  wall time {:.2} s", self.wall_time_s)
    }
}

/// Runs the checker on `model` with the reference fixed point from [`solve_model`] (PTC +
/// Newton from the empty state).
///
/// # Errors
/// [`CheckError::OutOfRange`] for invalid options; [`CheckError::Integration`] when a
/// model's extremal state has the wrong length. Non-convergence is data in the report.
pub fn check(model: &dyn MeanFieldModel, opts: &CheckOptions) -> Result<AttractionReport, CheckError> {
    opts.validate()?;
    // one limit for the fixed point and the check
    let deadline = opts.max_seconds.and_then(deadline_after);
    let fp_opts = FixedPointOptions {
        max_dim_for_eigenvalues: opts.max_dim_for_eigenvalues,
        max_seconds: remaining_seconds(deadline),
        ..Default::default()
    };
    let fp = solve_model(model, &fp_opts)?;
    check_until(model, fp, opts, deadline)
}

/// The seconds left until `deadline` (at least a nanosecond, so that a solver given them
/// stops at once), or `None` without a deadline.
fn remaining_seconds(deadline: Option<Instant>) -> Option<f64> {
    deadline.map(|d| d.saturating_duration_since(Instant::now()).as_secs_f64().max(1e-9))
}

/// Runs the checker on `model` with a given reference fixed point (e.g. from
/// [`crate::solve_spec`], with `model` built at `fp.truncation.levels`).
///
/// # Errors
/// [`CheckError::OutOfRange`] for invalid options or `fp.x` of the wrong length (field
/// `fixed_point.x`); [`CheckError::Integration`] when an extremal state has the wrong length.
pub fn check_with_fixed_point(model: &dyn MeanFieldModel, fp: FixedPoint, opts: &CheckOptions) -> Result<AttractionReport, CheckError> {
    opts.validate()?;
    check_until(model, fp, opts, opts.max_seconds.and_then(deadline_after))
}

/// [`check_with_fixed_point`] with the wall-clock `deadline` (from `opts.max_seconds`).
fn check_until(
    model: &dyn MeanFieldModel,
    fp: FixedPoint,
    opts: &CheckOptions,
    deadline: Option<Instant>,
) -> Result<AttractionReport, CheckError> {
    let started = Instant::now();
    let n = model.dim();
    if fp.x.len() != n {
        return Err(CheckError::OutOfRange {
            field: "fixed_point.x",
            value: format!("{} entries", fp.x.len()),
            allowed: "as many entries as the model's dimension (build the model at fp.truncation.levels)",
        });
    }
    let layout = model.layout();
    let summary_name = layout.summary_name();
    let ctx =
        Ctx { model, opts, layout, anchor: fp.x.clone(), extremal: model.extremal_states().into_iter().map(|s| s.x).collect(), deadline };
    let mut notes = Vec::new();

    // --- starts: extremal states first, then seeded random feasible states
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
    let mut starts: Vec<(String, bool, Vec<f64>)> = model.extremal_states().into_iter().map(|s| (s.name, true, s.x)).collect();
    for i in 0..opts.starts {
        let mut x = ctx.random_state(&mut rng);
        model.project(&mut x);
        starts.push((format!("start {}", i + 1), false, x));
    }
    let bar = if opts.progress {
        let b = ProgressBar::new(starts.len() as u64);
        if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} runs ({elapsed})") {
            b.set_style(style);
        }
        b.set_message(format!("check {}", model.name()));
        b
    } else {
        ProgressBar::hidden()
    };
    let outs: Vec<RunOut> = starts
        .par_iter()
        .map(|(label, _, x0)| {
            let out = ctx.run(label, x0, &fp.x);
            bar.inc(1);
            out
        })
        .collect::<Result<_, _>>()?;
    bar.finish_and_clear();

    // --- cluster the limits (the reference first)
    let mut eqs: Vec<EqBuild> = Vec::new();
    if fp.converged() {
        eqs.push(EqBuild { x: fp.x.clone(), residual: fp.residual, found_by: FoundBy::FixedPointSolve });
    } else {
        notes.push(format!("the reference fixed-point solve did not converge ({:?}, residual {:.1e})", fp.status, fp.residual));
    }
    let reference_build = fp.converged().then_some(0);
    let mut run_eq: Vec<Option<usize>> = Vec::with_capacity(outs.len());
    for o in &outs {
        run_eq.push(o.limit.as_ref().map(|lim| ctx.assign(&mut eqs, lim, FoundBy::Trajectory)));
    }

    // --- saddles on basin boundaries
    let reached: Vec<usize> = {
        let mut v: Vec<usize> = run_eq.iter().flatten().copied().collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut pairs = 0;
    'outer: for (ia, &ca) in reached.iter().enumerate() {
        for &cb in &reached[ia + 1..] {
            if pairs >= MAX_SEPARATRIX_PAIRS {
                break 'outer;
            }
            pairs += 1;
            let closest = (0..outs.len())
                .filter(|&a| run_eq[a] == Some(ca))
                .flat_map(|a| (0..outs.len()).filter(|&b| run_eq[b] == Some(cb)).map(move |b| (a, b)))
                .min_by(|p, q| inf_dist(&outs[p.0].x0, &outs[p.1].x0).total_cmp(&inf_dist(&outs[q.0].x0, &outs[q.1].x0)));
            if let Some((a, b)) = closest {
                if let Some(lim) = ctx.separatrix(&eqs, &outs[a].x0, &outs[b].x0, ca, cb) {
                    ctx.assign(&mut eqs, &lim, FoundBy::Separatrix);
                }
            }
        }
    }

    // --- sort by the summary coordinate, then stability of each equilibrium
    let mut order: Vec<usize> = (0..eqs.len()).collect();
    let summaries: Vec<f64> = eqs.iter().map(|e| ctx.summary(&e.x)).collect();
    order.sort_by(|a, b| summaries[*a].total_cmp(&summaries[*b]));
    let mut new_index = vec![0; eqs.len()];
    for (new, old) in order.iter().enumerate() {
        new_index[*old] = new;
    }
    let reference = reference_build.map(|i| new_index[i]);
    let mut equilibria: Vec<Equilibrium> = order
        .iter()
        .map(|&old| {
            let e = &eqs[old];
            let local = (n <= opts.max_dim_for_eigenvalues).then(|| local_stability(model, &e.x));
            let kind = match &local {
                None => EquilibriumKind::Unknown,
                Some(l) if l.spectral_abscissa < -opts.degeneracy_tol => EquilibriumKind::Stable,
                Some(l) if l.spectral_abscissa > opts.degeneracy_tol => EquilibriumKind::Unstable,
                Some(_) => EquilibriumKind::Degenerate,
            };
            Equilibrium {
                x: e.x.clone(),
                summary: summaries[old],
                residual: e.residual,
                local,
                kind,
                starts: 0,
                share: 0.0,
                extremal: Vec::new(),
                found_by: e.found_by,
            }
        })
        .collect();
    let run_eq: Vec<Option<usize>> = run_eq.iter().map(|e| e.map(|i| new_index[i])).collect();
    for ((label, extremal, _), e) in starts.iter().zip(&run_eq) {
        if let Some(i) = e {
            if *extremal {
                equilibria[*i].extremal.push(label.clone());
            } else {
                equilibria[*i].starts += 1;
            }
        }
    }
    for e in &mut equilibria {
        e.share = e.starts as f64 / opts.starts as f64;
    }
    if n > opts.max_dim_for_eigenvalues {
        notes.push(format!("eigenvalues not computed: dimension {n} > max_dim_for_eigenvalues = {}", opts.max_dim_for_eigenvalues));
    }
    let degenerate = equilibria.iter().any(|e| e.kind == EquilibriumKind::Degenerate);
    for (i, e) in equilibria.iter().enumerate() {
        if e.kind == EquilibriumKind::Degenerate {
            notes.push(format!(
                "equilibrium #{i} ({} = {:.8}) is degenerate: spectral abscissa {:.3e} within degeneracy_tol = {:.0e} \
                 (a zero eigenvalue: convergence there is algebraic, not exponential, and no certificate rests on it)",
                summary_name,
                e.summary,
                e.local.as_ref().map_or(f64::NAN, |l| l.spectral_abscissa),
                opts.degeneracy_tol
            ));
        }
    }

    // --- runs for the report (the end states stay here)
    let ends: Vec<Vec<f64>> = outs.iter().map(|o| o.end.clone()).collect();
    let runs: Vec<StartRun> = starts
        .iter()
        .zip(outs)
        .zip(&run_eq)
        .map(|(((label, extremal, _), o), e)| StartRun {
            label: label.clone(),
            extremal: *extremal,
            settled: o.settled,
            status: o.status,
            t_reached: o.t_reached,
            end_drift: o.end_drift,
            equilibrium: *e,
            summary_start: o.summary.first().copied().unwrap_or(f64::NAN),
            summary_end: ctx.summary(&o.end),
            t: o.t,
            log10_distance: o.log10_distance,
            summary: o.summary,
        })
        .collect();
    let unsettled = runs.iter().filter(|r| !r.settled).count();
    let failed: Vec<&StartRun> = runs.iter().filter(|r| !r.settled && run_failed(&r.status)).collect();
    if unsettled > failed.len() {
        notes.push(format!(
            "{} of {} runs did not settle (max |f| >= {:.0e}) within t = {}",
            unsettled - failed.len(),
            runs.len(),
            opts.tol,
            opts.time_limit
        ));
    }
    if !failed.is_empty() {
        notes.push(failure_note(&failed));
    }

    // --- the sandwich
    let sandwich = match model.order() {
        Some(order) => {
            let mut srng = Xoshiro256PlusPlus::seed_from_u64(opts.seed ^ 0x9E37_79B9_7F4A_7C15);
            let mut samples: Vec<Vec<f64>> = (0..opts.cooperativity_samples)
                .map(|_| {
                    let mut x = ctx.random_state(&mut srng);
                    model.project(&mut x);
                    x
                })
                .collect();
            if opts.cooperativity_samples > 0 {
                samples.push(fp.x.clone());
            }
            let coop = ctx.cooperativity(order, &samples);
            let pairs: Vec<(Vec<f64>, Vec<f64>)> = (0..opts.order_pairs).map(|_| ctx.ordered_pair(order, &mut srng)).collect();
            let ord = ctx.order_preservation(order, &pairs);
            let extremal: Vec<ExtremalRun> = runs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.extremal)
                .map(|(i, r)| ExtremalRun {
                    name: r.label.clone(),
                    run: i,
                    settled: r.settled,
                    t_reached: r.t_reached,
                    end_distance: inf_dist(&ends[i], &fp.x),
                    equilibrium: r.equilibrium,
                })
                .collect();
            let bounds_meet_at_reference =
                !extremal.is_empty() && reference.is_some() && extremal.iter().all(|e| e.settled && e.equilibrium == reference);
            let cooperative = coop.samples > 0 && coop.violations == 0 && ord.violations == 0;
            if coop.violations > 0 {
                notes.push(format!(
                    "cooperativity fails: {} of {} sampled states have a negative off-diagonal Jacobian entry (worst {:.3e} at {:?})",
                    coop.violations, coop.samples, -coop.max_violation, coop.worst
                ));
            }
            if ord.violations > 0 {
                notes.push(format!(
                    "order preservation fails for {} of {} pairs (max excess {:.3e})",
                    ord.violations, opts.order_pairs, ord.max_excess
                ));
            }
            Some(Sandwich {
                order,
                jacobian_samples: coop.samples,
                jacobian_violations: coop.violations,
                max_violation: coop.max_violation,
                worst_entry: coop.worst,
                relative_threshold: coop.relative_threshold,
                order_pairs: opts.order_pairs,
                order_violations: ord.violations,
                max_order_excess: ord.max_excess,
                order_pairs_failed: ord.failed,
                checkpoints: ord.checkpoints,
                cooperative,
                extremal,
                bounds_meet_at_reference,
            })
        }
        None => None,
    };

    // --- the verdict
    let count = |k: EquilibriumKind| equilibria.iter().filter(|e| e.kind == k).count();
    let local = reference.and_then(|i| equilibria[i].local.clone());
    let timed_out = past(deadline);
    if timed_out {
        notes.push(format!(
            "the wall-clock limit max_seconds = {:.3} s ran out: runs, bisections and ordered pairs after it were cut short",
            opts.max_seconds.unwrap_or(0.0)
        ));
    }
    let verdict = if timed_out {
        Verdict::TimeLimit { seconds: opts.max_seconds.unwrap_or(0.0), unsettled, runs: runs.len() }
    } else if equilibria.len() >= 2 {
        Verdict::NotUnique {
            equilibria: equilibria.len(),
            stable: count(EquilibriumKind::Stable),
            unstable: count(EquilibriumKind::Unstable),
            degenerate: count(EquilibriumKind::Degenerate),
            unsettled,
        }
    } else if unsettled > 0 || equilibria.is_empty() {
        Verdict::Unsettled {
            unsettled,
            runs: runs.len(),
            failed: failed.len(),
            time_limit: opts.time_limit,
            largest_end_drift: runs.iter().filter(|r| !r.settled && !run_failed(&r.status)).map(|r| r.end_drift).fold(0.0, f64::max),
        }
    } else {
        let eq = &equilibria[0];
        let mut why = Vec::new();
        match &sandwich {
            None => why.push("the model claims no order in which it is cooperative".to_string()),
            Some(s) => {
                if s.jacobian_samples == 0 {
                    why.push("cooperativity was not tested (cooperativity_samples = 0)".into());
                }
                if s.jacobian_violations > 0 {
                    why.push(format!("negative off-diagonal Jacobian entries at {} sampled states", s.jacobian_violations));
                }
                if s.order_violations > 0 {
                    why.push(format!("order not preserved for {} pairs", s.order_violations));
                }
                if !s.bounds_meet_at_reference {
                    why.push("the extremal runs do not both settle at the reference fixed point".into());
                }
            }
        }
        match eq.kind {
            EquilibriumKind::Stable => {}
            EquilibriumKind::Degenerate => why.push("the equilibrium is degenerate (spectral abscissa ~ 0)".into()),
            EquilibriumKind::Unstable => why.push("the equilibrium is not locally stable".into()),
            EquilibriumKind::Unknown => why.push("eigenvalues not computed (dimension above max_dim_for_eigenvalues)".into()),
        }
        if why.is_empty() {
            let s = sandwich.as_ref().expect("checked above");
            Verdict::Certified {
                jacobian_samples: s.jacobian_samples,
                order_pairs: s.order_pairs,
                extremal_end_distance: s.extremal.iter().map(|e| e.end_distance).fold(0.0, f64::max),
                spectral_abscissa: eq.local.as_ref().map_or(f64::NAN, |l| l.spectral_abscissa),
                starts: opts.starts,
            }
        } else {
            let x_eq = &eq.x;
            let max_end_distance = ends.iter().map(|e| inf_dist(e, x_eq)).fold(0.0, f64::max);
            Verdict::Evidence { starts: opts.starts, max_end_distance, not_certified_because: why }
        }
    };

    Ok(AttractionReport {
        model: model.name(),
        dim: n,
        options: opts.clone(),
        fixed_point: fp,
        local,
        reference,
        degenerate,
        sandwich,
        equilibria,
        runs,
        unsettled,
        summary_name,
        verdict,
        notes,
        wall_time_s: started.elapsed().as_secs_f64(),
    })
}

/// A limit of a run: a Newton-polished end point, or the end point itself.
struct Limit {
    x: Vec<f64>,
    residual: f64,
}

struct EqBuild {
    x: Vec<f64>,
    residual: f64,
    found_by: FoundBy,
}

struct RunOut {
    x0: Vec<f64>,
    end: Vec<f64>,
    settled: bool,
    status: Status,
    t_reached: f64,
    end_drift: f64,
    limit: Option<Limit>,
    t: Vec<f64>,
    log10_distance: Vec<f64>,
    summary: Vec<f64>,
}

struct Coop {
    samples: usize,
    violations: usize,
    max_violation: f64,
    worst: Option<(usize, usize)>,
    relative_threshold: f64,
}

struct OrderCheck {
    violations: usize,
    max_excess: f64,
    failed: usize,
    checkpoints: Vec<f64>,
}

struct Ctx<'a> {
    model: &'a dyn MeanFieldModel,
    opts: &'a CheckOptions,
    layout: StateLayout,
    /// The reference fixed point (a vertex of the random convex combinations, see `random_state`).
    anchor: Vec<f64>,
    /// The model's extremal states.
    extremal: Vec<Vec<f64>>,
    /// Wall-clock deadline of the check (`CheckOptions::max_seconds`).
    deadline: Option<Instant>,
}

/// How a bisection point ended.
enum Class {
    Known(usize),
    New(Limit),
    Unsettled,
}

impl Ctx<'_> {
    /// A random feasible state (before [`MeanFieldModel::project`]): the layout's own
    /// (`random_state` of [`StateLayout`]: random monotone tails for tail, class and phase tails,
    /// uniform for named states); for any other layout (workload grids, pair and triplet
    /// states) a random convex combination (uniform weights on the simplex) of the extremal
    /// states and the reference fixed point, feasible whenever the feasible set is convex.
    fn random_state(&self, rng: &mut Xoshiro256PlusPlus) -> Vec<f64> {
        let n = self.model.dim();
        // (a layout whose size is not the model's is a model bug: treated as a layout without
        // its own generator)
        if self.layout.dim() == n {
            if let Some(x) = self.layout.random_state(rng) {
                return x;
            }
        }
        let mut x = vec![0.0; n];
        let vertices: Vec<&Vec<f64>> = self.extremal.iter().chain(std::iter::once(&self.anchor)).collect();
        let w: Vec<f64> = vertices.iter().map(|_| -rng.random::<f64>().max(1e-300).ln()).collect();
        let sum: f64 = w.iter().sum();
        for (v, wv) in vertices.iter().zip(&w) {
            for (xi, vi) in x.iter_mut().zip(v.iter()) {
                *xi += wv / sum * vi;
            }
        }
        x
    }

    /// The summary coordinate (`summary` of [`StateLayout`]).
    fn summary(&self, x: &[f64]) -> f64 {
        self.layout.summary(x)
    }

    fn drift_norm(&self, x: &[f64], f: &mut [f64]) -> f64 {
        self.model.drift(x, f);
        f.iter().fold(0.0f64, |m, v| if v.is_finite() { m.max(v.abs()) } else { f64::INFINITY })
    }

    /// Output times of a run: `SERIES_POINTS` log-spaced times from `min(0.01, T/100)` to `T`.
    fn output_times(&self) -> Vec<f64> {
        let tl = self.opts.time_limit;
        let t0 = FIRST_OUTPUT_TIME.min(tl / 100.0);
        let m = SERIES_POINTS - 1;
        (0..=m).map(|j| if j == m { tl } else { t0 * (tl / t0).powf(j as f64 / m as f64) }).collect()
    }

    /// Integrates one run from `x0` until `max |f| < tol` or the time limit, segment by segment
    /// over the output times (only those states are kept); polishes a settled end point.
    fn run(&self, label: &str, x0: &[f64], reference: &[f64]) -> Result<RunOut, CheckError> {
        let (model, opts) = (self.model, self.opts);
        let n = model.dim();
        if x0.len() != n {
            return Err(CheckError::Integration {
                start: label.to_string(),
                source: OdeError::WrongDimension { got: x0.len(), expected: n },
            });
        }
        let mut x = x0.to_vec();
        model.project(&mut x);
        let x0 = x.clone();
        let mut f = vec![0.0; n];
        let (mut ts, mut xs) = (vec![0.0], vec![x.clone()]);
        let mut settled = self.drift_norm(&x, &mut f) < opts.tol;
        let mut status = if settled { Status::SteadyState { t: 0.0 } } else { Status::Success };
        if !settled && past(self.deadline) {
            status = Status::TimeLimit { t: 0.0 };
        }
        let mut t = 0.0;
        let mut method = Method::Auto;
        if !settled && status == Status::Success {
            for t_next in self.output_times() {
                let so = SolveOptions {
                    t_end: t_next - t,
                    rtol: RUN_RTOL,
                    atol: 1e-12,
                    method,
                    max_steps: 200_000,
                    steady_tol: Some(opts.tol),
                    record_steps: false,
                    deadline: self.deadline,
                };
                let tr = mfq_ode::solve(model, &x, &so).map_err(|source| CheckError::Integration { start: label.to_string(), source })?;
                x.copy_from_slice(tr.last());
                // near an equilibrium an explicit method ends up at its stability limit, where
                // its error noise (~ rtol) keeps max |f| above tol for ever; the L-stable
                // Rosenbrock23 takes Newton-like steps there. Also switch when it was stiff.
                if tr.stats.switched_to_stiff_at.is_some()
                    || tr.stats.accepted_steps > STIFF_SEGMENT_STEPS
                    || self.drift_norm(&x, &mut f) < IMPLICIT_BELOW_DRIFT
                {
                    method = Method::Rosenbrock23;
                }
                let t_seg = t;
                t = if tr.status == Status::Success { t_next } else { t + tr.t_last() };
                ts.push(t);
                xs.push(x.clone());
                match tr.status {
                    Status::Success => {}
                    Status::SteadyState { .. } => {
                        settled = true;
                        status = Status::SteadyState { t };
                        break;
                    }
                    other => {
                        status = shift_status(other, t_seg);
                        break;
                    }
                }
            }
        }
        let end_drift = self.drift_norm(&x, &mut f);
        if !settled && end_drift < opts.tol {
            settled = true;
        }
        let limit = settled.then(|| self.polish(&x, end_drift));
        let target: &[f64] = limit.as_ref().map_or(reference, |l| &l.x);
        let log10_distance = xs.iter().map(|xi| inf_dist(xi, target).log10().max(LOG10_FLOOR)).collect();
        let summary = xs.iter().map(|xi| self.summary(xi)).collect();
        Ok(RunOut { x0, end: x, settled, status, t_reached: t, end_drift, limit, t: ts, log10_distance, summary })
    }

    /// Newton from a settled end point; the end point itself when Newton fails, does not
    /// improve the residual, or moves further than [`POLISH_MAX_SHIFT`].
    fn polish(&self, end: &[f64], end_drift: f64) -> Limit {
        match self.newton(end) {
            Some(l) if l.residual <= end_drift.max(1e-12) && inf_dist(&l.x, end) <= POLISH_MAX_SHIFT => l,
            _ => Limit { x: end.to_vec(), residual: end_drift },
        }
    }

    /// Newton (PTC with a huge first pseudo step) from `x0`; `Some` when the residual reaches
    /// `tol`; `None` past the deadline.
    fn newton(&self, x0: &[f64]) -> Option<Limit> {
        if past(self.deadline) {
            return None;
        }
        let o = FixedPointOptions {
            tol: 1e-12f64.min(self.opts.tol),
            max_iter: 60,
            dt0: 1e9,
            x0: Some(x0.to_vec()),
            max_dim_for_eigenvalues: 0,
            max_seconds: remaining_seconds(self.deadline),
        };
        let fp = solve_model(self.model, &o).ok()?;
        (fp.residual.is_finite() && fp.residual <= self.opts.tol).then_some(Limit { x: fp.x, residual: fp.residual })
    }

    /// Whether `p` and `q` are one equilibrium: within `cluster_tol`, or joined by a segment on
    /// which the drift stays below `tol` (15 interior points).
    fn same(&self, p: &[f64], q: &[f64]) -> bool {
        if inf_dist(p, q) <= self.opts.cluster_tol {
            return true;
        }
        let n = p.len();
        let (mut y, mut f) = (vec![0.0; n], vec![0.0; n]);
        (1..16).all(|k| {
            let s = k as f64 / 16.0;
            for i in 0..n {
                y[i] = p[i] + s * (q[i] - p[i]);
            }
            self.drift_norm(&y, &mut f) <= self.opts.tol
        })
    }

    /// Index of the equilibrium `lim` belongs to, appending it when new.
    fn assign(&self, eqs: &mut Vec<EqBuild>, lim: &Limit, found_by: FoundBy) -> usize {
        if let Some(i) = eqs.iter().position(|e| self.same(&e.x, &lim.x)) {
            return i;
        }
        eqs.push(EqBuild { x: lim.x.clone(), residual: lim.residual, found_by });
        eqs.len() - 1
    }

    /// Integrates from `x` in one call until `max |f| < tol` or the time limit; the end state,
    /// whether it settled, and its drift.
    fn settle(&self, x: &[f64]) -> (Vec<f64>, bool, f64) {
        let so = SolveOptions {
            t_end: self.opts.time_limit,
            rtol: RUN_RTOL,
            atol: 1e-12,
            method: Method::Auto,
            max_steps: 200_000,
            steady_tol: Some(self.opts.tol),
            record_steps: false,
            deadline: self.deadline,
        };
        let mut f = vec![0.0; x.len()];
        match mfq_ode::solve(self.model, x, &so) {
            Ok(tr) => {
                let end = tr.last().to_vec();
                let r = self.drift_norm(&end, &mut f);
                (end, r < self.opts.tol, r)
            }
            Err(_) => (x.to_vec(), false, f64::INFINITY),
        }
    }

    /// The recorded state of least drift along the trajectory from `x` (near a saddle when
    /// `x` is near its stable manifold).
    fn least_drift_state(&self, x: &[f64]) -> Vec<f64> {
        let so = SolveOptions {
            t_end: self.opts.time_limit,
            rtol: RUN_RTOL,
            atol: 1e-12,
            method: Method::Auto,
            max_steps: 100_000,
            steady_tol: Some(self.opts.tol),
            record_steps: true,
            deadline: self.deadline,
        };
        let mut f = vec![0.0; x.len()];
        match mfq_ode::solve(self.model, x, &so) {
            Ok(tr) => {
                tr.x.iter()
                    .map(|xi| (self.drift_norm(xi, &mut f), xi))
                    .min_by(|a, b| a.0.total_cmp(&b.0))
                    .map_or_else(|| x.to_vec(), |(_, xi)| xi.clone())
            }
            Err(_) => x.to_vec(),
        }
    }

    /// Bisects the segment from `a` (in the basin of `ca`) to `b` (basin of `cb`) by basin;
    /// returns a new equilibrium on the boundary, if one is found.
    fn separatrix(&self, eqs: &[EqBuild], a: &[f64], b: &[f64], ca: usize, cb: usize) -> Option<Limit> {
        if past(self.deadline) {
            return None;
        }
        let n = a.len();
        let classify = |x: &[f64]| -> Class {
            let (end, settled, r) = self.settle(x);
            if !settled {
                return Class::Unsettled;
            }
            let lim = self.polish(&end, r);
            match eqs.iter().position(|e| self.same(&e.x, &lim.x)) {
                Some(i) => Class::Known(i),
                None => Class::New(lim),
            }
        };
        let (mut lo, mut hi, mut mid) = (a.to_vec(), b.to_vec(), vec![0.0; n]);
        for _ in 0..BISECTION_STEPS {
            if inf_dist(&lo, &hi) < 1e-15 {
                break;
            }
            for i in 0..n {
                mid[i] = 0.5 * (lo[i] + hi[i]);
            }
            match classify(&mid) {
                Class::Known(i) if i == ca => lo.copy_from_slice(&mid),
                Class::Known(i) if i == cb => hi.copy_from_slice(&mid),
                Class::Known(_) => return None,
                Class::New(lim) => return Some(lim),
                Class::Unsettled => break,
            }
        }
        for i in 0..n {
            mid[i] = 0.5 * (lo[i] + hi[i]);
        }
        let near_saddle = self.least_drift_state(&mid);
        [mid, near_saddle].iter().filter_map(|c| self.newton(c)).find(|lim| !eqs.iter().any(|e| self.same(&e.x, &lim.x)))
    }

    /// Cooperativity in `order` at every sample (in parallel): for `Componentwise` the sign of
    /// the off-diagonal Jacobian entries (Kamke's condition, a scan of the band); for the other
    /// orders the cross-positivity of the Jacobian on the order's cone
    /// ([`PartialOrder::cooperativity`]).
    fn cooperativity(&self, order: PartialOrder, samples: &[Vec<f64>]) -> Coop {
        let model = self.model;
        let n = model.dim();
        let relative_threshold = if model.has_analytic_jacobian() { 1e-12 } else { 1e-6 };
        // per sample: (violated, largest violation, where)
        type Sample = (bool, f64, Option<(usize, usize)>);
        let per: Vec<Sample> = samples
            .par_iter()
            .map(|x| {
                let mut jac = Jacobian::new(n, model.sparsity());
                model.jacobian(x, &mut jac);
                let (mut scale, mut worst, mut at) = (1.0f64, 0.0f64, None);
                match order {
                    PartialOrder::Componentwise => {
                        for i in 0..n {
                            let (lo, hi) = jac.row_range(i);
                            for j in lo..hi {
                                let v = jac.get(i, j);
                                scale = scale.max(v.abs());
                                if i != j && -v > worst {
                                    worst = -v;
                                    at = Some((i, j));
                                }
                            }
                        }
                    }
                    other => {
                        let c = other.cooperativity(&jac);
                        scale = scale.max(c.scale);
                        if c.min.is_finite() && -c.min > 0.0 {
                            worst = -c.min;
                            at = Some((c.upset, c.generator));
                        }
                    }
                }
                (worst > relative_threshold * scale, worst, at)
            })
            .collect();
        let violations = per.iter().filter(|p| p.0).count();
        let (max_violation, worst) = per.iter().fold((0.0, None), |acc, p| if p.1 > acc.0 { (p.1, p.2) } else { acc });
        Coop { samples: samples.len(), violations, max_violation, worst, relative_threshold }
    }

    /// A random ordered pair `x <= y` in `order`: for `Componentwise` the entrywise min and
    /// max of two random feasible states; otherwise a random feasible `x` and `y` obtained from
    /// it by moving random fractions of servers up along random generators of the order's cone
    /// ([`PartialOrder::push_up`]).
    fn ordered_pair(&self, order: PartialOrder, rng: &mut Xoshiro256PlusPlus) -> (Vec<f64>, Vec<f64>) {
        let mut a = self.random_state(rng);
        self.model.project(&mut a);
        match order {
            PartialOrder::Componentwise => {
                let mut b = self.random_state(rng);
                self.model.project(&mut b);
                let lo: Vec<f64> = a.iter().zip(&b).map(|(u, v)| u.min(*v)).collect();
                let hi: Vec<f64> = a.iter().zip(&b).map(|(u, v)| u.max(*v)).collect();
                (lo, hi)
            }
            other => {
                let generators = other.generators(a.len()).len();
                let mut hi = a.clone();
                if generators > 0 {
                    for _ in 0..(4 + generators / 4).min(64) {
                        let g = rng.random_range(0..generators);
                        other.push_up(&mut hi, g, rng.random());
                    }
                }
                (a, hi)
            }
        }
    }

    /// Integrates each ordered pair over the checkpoints and measures how far the order breaks:
    /// `max_i (x_i - y_i)` for `Componentwise`, `-min_U Phi_U(y - x)` ([`PartialOrder::order_gap`])
    /// otherwise (`<= 0` while `x <= y`).
    fn order_preservation(&self, order: PartialOrder, pairs: &[(Vec<f64>, Vec<f64>)]) -> OrderCheck {
        let tl = self.opts.time_limit;
        let mut checkpoints: Vec<f64> = ORDER_CHECKPOINTS.iter().copied().filter(|t| *t <= tl).collect();
        if checkpoints.is_empty() {
            checkpoints.push(tl);
        }
        let excess = |lo: &[f64], hi: &[f64]| match order {
            PartialOrder::Componentwise => lo.iter().zip(hi).map(|(a, b)| a - b).fold(f64::NEG_INFINITY, f64::max),
            other => -other.order_gap(lo, hi),
        };
        let per: Vec<(f64, bool)> = pairs
            .par_iter()
            .map(|(lo0, hi0)| {
                let (mut lo, mut hi) = (lo0.clone(), hi0.clone());
                let mut worst = excess(&lo, &hi);
                let mut t = 0.0;
                for &c in &checkpoints {
                    let so = SolveOptions {
                        t_end: c - t,
                        rtol: 1e-10,
                        atol: 1e-14,
                        method: Method::Auto,
                        max_steps: 200_000,
                        steady_tol: None,
                        record_steps: false,
                        deadline: self.deadline,
                    };
                    match (mfq_ode::solve(self.model, &lo, &so), mfq_ode::solve(self.model, &hi, &so)) {
                        (Ok(a), Ok(b)) if a.status.is_success() && b.status.is_success() => {
                            lo.copy_from_slice(a.last());
                            hi.copy_from_slice(b.last());
                        }
                        _ => return (worst, true),
                    }
                    worst = worst.max(excess(&lo, &hi));
                    t = c;
                }
                (worst, false)
            })
            .collect();
        OrderCheck {
            violations: per.iter().filter(|p| !p.1 && p.0 > ORDER_TOL).count(),
            max_excess: per.iter().filter(|p| !p.1).map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
            failed: per.iter().filter(|p| p.1).count(),
            checkpoints,
        }
    }
}

/// Whether a run's integration stopped with a solver failure, rather than at its end, at a
/// steady state or at the wall-clock limit.
fn run_failed(status: &Status) -> bool {
    !matches!(status, Status::Success | Status::SteadyState { .. } | Status::TimeLimit { .. })
}

/// How a solver failure reads in text: `step size too small at t = 12.5`.
fn failure_text(status: &Status) -> String {
    match status {
        Status::MaxSteps { t } => format!("step budget used up at t = {t:.4}"),
        Status::StepSizeTooSmall { t } => format!("step size too small at t = {t:.4}"),
        Status::NonFinite { t } => format!("non-finite drift or state at t = {t:.4}"),
        Status::Stiff { t } => format!("stiff at t = {t:.4}"),
        Status::Singular { t } => format!("singular matrix at t = {t:.4}"),
        Status::TimeLimit { t } => format!("wall-clock limit at t = {t:.4}"),
        Status::Success | Status::SteadyState { .. } => "no failure".into(),
    }
}

/// The note naming the runs that failed and how (the first five).
fn failure_note(failed: &[&StartRun]) -> String {
    let shown: Vec<String> = failed.iter().take(5).map(|r| format!("{} ({})", r.label, failure_text(&r.status))).collect();
    let more = if failed.len() > 5 { format!(", and {} more", failed.len() - 5) } else { String::new() };
    format!(
        "{} runs failed, their integration stopped before settling (not a verdict on the model): {}{more}",
        failed.len(),
        shown.join(", ")
    )
}

/// `max_i |p_i - q_i|`.
fn inf_dist(p: &[f64], q: &[f64]) -> f64 {
    p.iter().zip(q).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
}

/// `status` with its time shifted by `t0` (segment-relative to absolute).
fn shift_status(status: Status, t0: f64) -> Status {
    match status {
        Status::Success => Status::Success,
        Status::SteadyState { t } => Status::SteadyState { t: t + t0 },
        Status::MaxSteps { t } => Status::MaxSteps { t: t + t0 },
        Status::StepSizeTooSmall { t } => Status::StepSizeTooSmall { t: t + t0 },
        Status::NonFinite { t } => Status::NonFinite { t: t + t0 },
        Status::Stiff { t } => Status::Stiff { t: t + t0 },
        Status::Singular { t } => Status::Singular { t: t + t0 },
        Status::TimeLimit { t } => Status::TimeLimit { t: t + t0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mfq_model::models::{Jsq, OpinionStubborn};

    fn ctx<'a>(model: &'a dyn MeanFieldModel, opts: &'a CheckOptions) -> Ctx<'a> {
        Ctx { model, opts, layout: model.layout(), anchor: vec![0.0; model.dim()], extremal: Vec::new(), deadline: None }
    }

    #[test]
    fn output_times_are_log_spaced_up_to_the_limit() {
        let opts = CheckOptions { time_limit: 500.0, ..Default::default() };
        let m = Jsq::new(0.5, 2, 4).unwrap();
        let t = ctx(&m, &opts).output_times();
        assert_eq!(t.len(), SERIES_POINTS);
        assert_eq!(t[0], FIRST_OUTPUT_TIME);
        assert_eq!(*t.last().unwrap(), 500.0);
        assert!(t.windows(2).all(|w| w[1] > w[0]));
        let tiny = CheckOptions { time_limit: 0.5, ..Default::default() };
        assert!(ctx(&m, &tiny).output_times()[0] <= 0.005);
    }

    /// The triple root of gamma = 1/4 (f = -y^3/2, y = x - 1/2) is one flat equilibrium: two
    /// Newton end points on either side of 1/2 are merged; distinct roots are not.
    #[test]
    fn flat_roots_merge_and_distinct_roots_do_not() {
        let opts = CheckOptions::default();
        let flat = OpinionStubborn::new(0.25, 0.25).unwrap();
        assert!(ctx(&flat, &opts).same(&[0.5 - 1e-4], &[0.5 + 1e-4]));
        assert!(!ctx(&flat, &opts).same(&[0.4], &[0.5]));
        let three = OpinionStubborn::new(0.1, 0.1).unwrap();
        let c = ctx(&three, &opts);
        assert!(!c.same(&[0.0158770817], &[0.5]) && !c.same(&[0.5], &[0.9841229183]));
        assert!(c.same(&[0.5], &[0.5 + 1e-7]));
    }

    /// `dx/dt = -x` with a drift that is not finite above `x = 0.5` (defined on part of the
    /// state space only): runs started there fail at once, and the report must say that they
    /// failed and how, not only that they did not settle.
    struct HalfDefined;

    impl MeanFieldModel for HalfDefined {
        fn name(&self) -> String {
            "half-defined".into()
        }
        fn dim(&self) -> usize {
            1
        }
        fn drift(&self, x: &[f64], dx: &mut [f64]) {
            dx[0] = if x[0] <= 0.5 { -x[0] } else { f64::NAN };
        }
        fn layout(&self) -> StateLayout {
            StateLayout::Named { names: vec!["x".into()] }
        }
        fn observables(&self, x: &[f64]) -> mfq_model::Observables {
            mfq_model::Observables::extras_only(vec![("x".into(), x[0])])
        }
    }

    #[test]
    fn failed_runs_are_named_as_failures() {
        let r = check(&HalfDefined, &CheckOptions { starts: 16, ..Default::default() }).unwrap();
        let Verdict::Unsettled { unsettled, failed, largest_end_drift, .. } = r.verdict else { panic!("{r}") };
        // the `full` state and the random starts above 0.5
        assert!(failed >= 2 && failed == unsettled, "{r}");
        assert_eq!(largest_end_drift, 0.0);
        let text = r.to_string();
        assert!(text.contains(&format!("UNSETTLED: {unsettled} of 18 runs did not settle: {failed} failed")), "{text}");
        // (it read "did not settle within t = 10000 (largest end drift inf)")
        assert!(!r.verdict.to_string().contains("within t ="), "no run ran out of model time: {text}");
        let note = r.notes.iter().find(|n| n.contains("runs failed")).expect("a note on the failures");
        assert!(note.contains("full (") && (note.contains("non-finite") || note.contains("step size")), "{note}");
        for run in r.runs.iter().filter(|run| !run.settled) {
            assert!(run_failed(&run.status), "{}: {:?}", run.label, run.status);
        }
    }

    #[test]
    fn failures_read_as_text() {
        assert_eq!(failure_text(&Status::StepSizeTooSmall { t: 12.5 }), "step size too small at t = 12.5000");
        assert_eq!(failure_text(&Status::Singular { t: 0.0 }), "singular matrix at t = 0.0000");
        assert!(run_failed(&Status::MaxSteps { t: 1.0 }) && run_failed(&Status::NonFinite { t: 1.0 }));
        assert!(!run_failed(&Status::Success) && !run_failed(&Status::TimeLimit { t: 1.0 }));
        let v = Verdict::Unsettled { unsettled: 3, failed: 1, runs: 10, time_limit: 100.0, largest_end_drift: 2e-3 };
        assert_eq!(
            v.to_string(),
            "UNSETTLED: 3 of 10 runs did not settle: 1 failed (the integration stopped: see the notes), 2 did not settle \
             within t = 100 (largest end drift 2.0e-3); nothing is certified"
        );
    }

    /// A tiny wall-clock limit on a long check: the verdict says so, and the check returns
    /// within a fraction of a second (it would take minutes: 2000 runs at lambda = 0.999).
    #[test]
    fn a_wall_clock_limit_stops_the_check() {
        let m = Jsq::new(0.999, 2, 400).unwrap();
        let opts = CheckOptions { starts: 2000, time_limit: 1e6, max_seconds: Some(0.05), ..Default::default() };
        let started = Instant::now();
        let r = check(&m, &opts).unwrap();
        let took = started.elapsed().as_secs_f64();
        let Verdict::TimeLimit { seconds, unsettled, runs } = r.verdict else { panic!("{r}") };
        assert_eq!((seconds, runs), (0.05, 2002));
        assert!(unsettled > 1000, "{unsettled} of {runs} runs unsettled");
        assert!(r.runs.iter().any(|run| matches!(run.status, Status::TimeLimit { .. })));
        assert!(took < 1.0, "the check took {took} s");
        assert!(r.to_string().contains("TIME LIMIT"), "{r}");
    }

    #[test]
    fn options_name_the_field() {
        let bad = [
            (CheckOptions { starts: 0, ..Default::default() }, "starts"),
            (CheckOptions { tol: 0.5, ..Default::default() }, "tol"),
            (CheckOptions { time_limit: 0.0, ..Default::default() }, "time_limit"),
            (CheckOptions { max_seconds: Some(-1.0), ..Default::default() }, "max_seconds"),
            (CheckOptions { max_seconds: Some(f64::NAN), ..Default::default() }, "max_seconds"),
            (CheckOptions { cooperativity_samples: 2_000_000, ..Default::default() }, "cooperativity_samples"),
            (CheckOptions { order_pairs: 20_000, ..Default::default() }, "order_pairs"),
            (CheckOptions { cluster_tol: 0.0, ..Default::default() }, "cluster_tol"),
            (CheckOptions { degeneracy_tol: f64::NAN, ..Default::default() }, "degeneracy_tol"),
        ];
        for (o, field) in bad {
            match o.validate() {
                Err(CheckError::OutOfRange { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        assert!(CheckOptions::default().validate().is_ok());
    }

    #[test]
    fn statuses_shift_to_absolute_time() {
        assert_eq!(shift_status(Status::MaxSteps { t: 1.0 }, 2.5), Status::MaxSteps { t: 3.5 });
        assert_eq!(shift_status(Status::Success, 2.5), Status::Success);
    }

    /// With cooperativity_samples = 0 nothing is certified, whatever the runs do.
    #[test]
    fn untested_cooperativity_gives_evidence_only() {
        let m = Jsq::new(0.5, 2, 8).unwrap();
        let opts = CheckOptions { starts: 4, cooperativity_samples: 0, ..Default::default() };
        let r = check(&m, &opts).unwrap();
        let Verdict::Evidence { not_certified_because, .. } = &r.verdict else { panic!("{r}") };
        assert!(not_certified_because[0].contains("cooperativity_samples = 0"), "{r}");
    }
}
