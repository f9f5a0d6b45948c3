//! The uniqueness and global-attraction checker: is the fixed point `x*` the only
//! equilibrium of the (truncated) mean-field ODE, and does every trajectory go there?
//!
//! [`check`] (or [`check_with_fixed_point`], when the caller already has `x*`) runs four
//! tests and returns an [`AttractionReport`] whose [`Verdict`] says what the answer rests on:
//!
//! 1. **Local stability** at `x*`: the eigenvalues of the Jacobian ([`local_stability`](crate::local_stability)), the
//!    spectral abscissa `alpha` and the slowest decay rate `-alpha`. `|alpha| <=
//!    degeneracy_tol * max(1, ||J||_inf)` flags a **degenerate** equilibrium (a zero eigenvalue to the precision
//!    at hand: convergence there is algebraic, not exponential, and nothing is certified on it).
//! 2. **Monotone sandwich**, when [`MeanFieldModel::order`] claims an order: cooperativity is
//!    *tested*, never trusted. At `cooperativity_samples` random feasible states the
//!    off-diagonal Jacobian entries must be `>= -threshold` (Kamke's condition, componentwise
//!    order) or the Jacobian cross-positive on the order's cone
//!    ([`PartialOrder::cooperativity`](mfq_model::PartialOrder::cooperativity), other orders); `order_pairs` random ordered pairs
//!    `x(0) <= y(0)` must stay ordered at the checkpoints `t = 0.5, 1, 2, ..., 32` (the recipe
//!    of docs/checker.md, after the monotonicity argument of Van Houdt, POMACS 3(2), 2019).
//!    Then the trajectories from the minimal and maximal states
//!    ([`MeanFieldModel::extremal_states`]) are integrated until `max |f| < tol` or
//!    `time_limit`. In a cooperative system every trajectory stays between those two; if both
//!    reach `x*`, `x*` attracts every feasible state (Hirsch; Smith, "Monotone dynamical
//!    systems", AMS 1995, ch. 3).
//! 3. **Multi-start**: `starts` seeded random feasible states (at most `large_model_starts`,
//!    default 6, on the models whose runs are stiff BDF solves, the pair and triplet
//!    approximations: a note says how many ran; random monotone tails
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
//!    200 log-spaced times (`mfq_plot::attraction` draws them).
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

mod cluster;
mod local;
mod options;
mod report;
mod runs;
mod sandwich;
mod verdict;

pub use options::{CheckError, CheckOptions, Progress, LARGE_MODEL_STARTS};
pub use report::{AttractionReport, Equilibrium, EquilibriumKind, ExtremalRun, FoundBy, Sandwich, StartRun, Verdict};
pub use runs::{LOG10_FLOOR, SERIES_POINTS};
pub use sandwich::{ORDER_CHECKPOINTS, ORDER_TOL};

use crate::{solve_model, FixedPoint, FixedPointOptions};
use mfq_model::{Deadline, MeanFieldModel, StateLayout};
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Instant;

/// Runs the checker on `model` with the reference fixed point from [`solve_model`] (PTC +
/// Newton from the empty state).
///
/// # Errors
/// [`CheckError::OutOfRange`] for invalid options; [`CheckError::Integration`] when a
/// model's extremal state has the wrong length. Non-convergence is data in the report.
pub fn check(model: &dyn MeanFieldModel, opts: &CheckOptions) -> Result<AttractionReport, CheckError> {
    opts.validate()?;
    // one limit for the fixed point and the check
    let fp_opts =
        FixedPointOptions { max_dim_for_eigenvalues: opts.max_dim_for_eigenvalues, deadline: opts.deadline.clone(), ..Default::default() };
    let fp = solve_model(model, &fp_opts)?;
    check_until(model, fp, opts, opts.deadline.clone())
}

/// Runs the checker on `model` with a given reference fixed point (e.g. from
/// [`crate::solve_spec`], with `model` built at `fp.truncation.levels`).
///
/// # Errors
/// [`CheckError::OutOfRange`] for invalid options or `fp.x` of the wrong length (field
/// `fixed_point.x`); [`CheckError::Integration`] when an extremal state has the wrong length.
pub fn check_with_fixed_point(model: &dyn MeanFieldModel, fp: FixedPoint, opts: &CheckOptions) -> Result<AttractionReport, CheckError> {
    opts.validate()?;
    check_until(model, fp, opts, opts.deadline.clone())
}

/// [`check_with_fixed_point`] with the wall-clock `deadline` (`opts.deadline`): the
/// runs, the clustering of their limits, the local stability of the equilibria, the sandwich
/// and the verdict, in this order (each in its module).
fn check_until(
    model: &dyn MeanFieldModel,
    fp: FixedPoint,
    opts: &CheckOptions,
    deadline: Deadline,
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
    let mut notes = Vec::new();
    // fewer random starts where each run is a stiff BDF solve (the verdict counts those run)
    let mut capped = opts.clone();
    if let Some(cap) = opts.large_model_starts.filter(|&c| c < opts.starts && runs_are_bdf_solves(model)) {
        capped.starts = cap;
        notes.push(format!(
            "{cap} of the {} random starts were run: each run of this sparse model of {n} states is a stiff BDF solve \
             (large_model_starts; `mfq check --starts N` runs N)",
            opts.starts
        ));
    }
    let opts = &capped;
    let ctx =
        Ctx { model, opts, layout, anchor: fp.x.clone(), extremal: model.extremal_states().into_iter().map(|s| s.x).collect(), deadline };
    // extremal states first, then seeded random feasible states
    let starts = ctx.starts();
    let outs = ctx.run_all(&starts, &fp.x)?;
    // the limits clustered (the reference first), saddles on basin boundaries
    let clusters = ctx.cluster(&fp, &outs, &mut notes);
    // sorted by the summary coordinate, with the stability of each
    let found = ctx.equilibria(clusters, &starts, &summary_name, &mut notes);
    // the runs for the report (their end states stay here)
    let (runs, ends) = ctx.report_runs(&starts, outs, &found.run_eq, &mut notes);
    let sandwich = ctx.sandwich(&fp.x, &runs, &ends, found.reference, &mut notes);
    let local = found.reference.and_then(|i| found.equilibria[i].local.clone());
    let verdict = verdict::verdict(opts, ctx.deadline.expired(), &found.equilibria, sandwich.as_ref(), &runs, &ends, &mut notes);
    let unsettled = runs.iter().filter(|r| !r.settled).count();
    Ok(AttractionReport {
        model: model.name(),
        dim: n,
        options: opts.clone(),
        fixed_point: fp,
        local,
        reference: found.reference,
        degenerate: found.degenerate,
        sandwich,
        equilibria: found.equilibria,
        runs,
        unsettled,
        summary_name,
        verdict,
        notes,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}

/// What every stage of one check shares: the model, the options, its layout, the reference
/// fixed point and extremal states (for random states) and the deadline.
struct Ctx<'a> {
    model: &'a dyn MeanFieldModel,
    opts: &'a CheckOptions,
    layout: StateLayout,
    /// The reference fixed point (a vertex of the random convex combinations, see `random_state`).
    anchor: Vec<f64>,
    /// The model's extremal states.
    extremal: Vec<Vec<f64>>,
    /// Wall-clock deadline of the check (`CheckOptions::deadline`).
    deadline: Deadline,
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
}

/// Whether the runs of the check on `model` are integrated by one BDF solve each (sampled at
/// the output times) rather than segment by segment: for the models on which [`Method::Auto`](mfq_ode::Method::Auto)
/// takes BDF from the start (a sparse Jacobian pattern and at least [`mfq_ode::AUTO_BDF_MIN_DIM`]
/// states: the pair and triplet approximations), whose LU factorisations cost hundreds of drift
/// evaluations. BDF holds its Jacobian and LU across steps and settles near an equilibrium
/// without the noise of an explicit method, so no switch to Rosenbrock23 is needed.
fn runs_are_bdf_solves(model: &dyn MeanFieldModel) -> bool {
    matches!(model.sparsity(), mfq_model::Sparsity::Sparse(_)) && model.dim() >= mfq_ode::AUTO_BDF_MIN_DIM
}

/// `max_i |p_i - q_i|`.
fn inf_dist(p: &[f64], q: &[f64]) -> f64 {
    p.iter().zip(q).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
}

/// A context for unit tests: no extremal states, the anchor at the origin, no deadline.
#[cfg(test)]
fn test_ctx<'a>(model: &'a dyn MeanFieldModel, opts: &'a CheckOptions) -> Ctx<'a> {
    Ctx { model, opts, layout: model.layout(), anchor: vec![0.0; model.dim()], extremal: Vec::new(), deadline: Deadline::none() }
}
