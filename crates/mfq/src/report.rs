//! The main job, `mfq report`: fixed point, stability, transient from the empty state and the
//! attraction verdict, assembled here so that the command line and the Python package give the
//! same report. Rendering (text, JSON, SVG, files) is the caller's.

use crate::Error;
use mfq_fixpoint::{check_with_fixed_point, solve_spec, AttractionReport, CheckOptions, FixedPoint, FixedPointOptions, Verdict};
use mfq_model::Deadline;
use mfq_model::{ModelSpec, Stability, Truncation};
use mfq_ode::{SolveOptions, Status, Trajectory};

/// Largest number of states for which [`report`] runs the transient and the attraction check:
/// beyond it their cost is minutes (the PS pair approximation's report took 11.5 min), and
/// `mfq solve` / `mfq check` run them on request.
pub const DYNAMICS_MAX_STATES: usize = 2000;

/// Options of [`report`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// Wall-clock limit (and cancel flag) of the whole report (default: none).
    pub deadline: Deadline,
    /// Random starts of the attraction check (fewer than `mfq check`'s default). Default 8.
    pub starts: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions { deadline: Deadline::none(), starts: 8 }
    }
}

/// The transient and the attraction check of a report, or why they were skipped.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Dynamics {
    /// Not run: the fixed point did not converge.
    NotRun,
    /// Skipped, and why (a model without an ODE, or too many states).
    Skipped {
        /// One sentence.
        reason: String,
    },
    /// Run.
    Done {
        /// The transient from the empty state until the drift falls below `1e-10`.
        transient: Box<Trajectory>,
        /// `max_i |x_i(t) - x*_i|` at the transient's times.
        distance: Vec<f64>,
        /// The uniqueness / global-attraction check with [`ReportOptions::starts`] starts.
        check: Box<AttractionReport>,
        /// The number of random starts the check ran ([`ReportOptions::starts`], or
        /// `CheckOptions::large_model_starts` when fewer on a large sparse model).
        starts: usize,
    },
}

/// What `mfq report` shows: a fixed point with its stability condition and dynamics.
#[derive(Debug, Clone)]
pub struct Report {
    /// The fixed point (with its status: the report is complete only when it converged).
    pub fixed_point: FixedPoint,
    /// The model's stability condition at its parameters.
    pub stability: Stability,
    /// The transient and the attraction check.
    pub dynamics: Dynamics,
}

impl Report {
    /// What stopped at the deadline, if anything: `"the transient stopped"` or `"the attraction
    /// check stopped"` (the fixed point's own stop is its status).
    pub fn stopped(&self) -> Option<&'static str> {
        match &self.dynamics {
            Dynamics::Done { transient, .. } if matches!(transient.status, Status::TimeLimit { .. }) => Some("the transient stopped"),
            Dynamics::Done { check, .. } if matches!(check.verdict, Verdict::TimeLimit { .. }) => Some("the attraction check stopped"),
            _ => None,
        }
    }
}

/// The report of a model: its fixed point (truncation grown automatically or fixed), then, when
/// it converged and the model has dynamics and at most [`DYNAMICS_MAX_STATES`] states, the
/// transient from the empty state (tolerances `1e-11`/`1e-15` so that the integrator's own
/// error stays below the distance curve) and an attraction check with `opts.starts` random
/// starts.
///
/// # Errors
/// [`Error::FixedPoint`] (bad options, a model outside its stability region: `Unstable`),
/// [`Error::Model`] (the model cannot be built at the solved truncation), [`Error::Transient`]
/// and [`Error::Check`] for misuse reported by those solvers.
pub fn report(spec: &ModelSpec, truncation: &Truncation, opts: &ReportOptions) -> Result<Report, Error> {
    let fp_opts = FixedPointOptions { deadline: opts.deadline.clone(), ..Default::default() };
    let fixed_point = solve_spec(spec, truncation, &fp_opts)?;
    let model = spec.build(fixed_point.truncation.levels)?;
    let stability = truncation.stability_of(model.stability());
    if !fixed_point.converged() {
        return Ok(Report { fixed_point, stability, dynamics: Dynamics::NotRun });
    }
    let skip = match model.dynamics_note() {
        Some(note) => Some(note),
        None if model.dim() > DYNAMICS_MAX_STATES => Some(format!(
            "{} states (> {DYNAMICS_MAX_STATES}); run `mfq solve` / `mfq check` on this file, with --max-seconds",
            model.dim()
        )),
        None => None,
    };
    if let Some(reason) = skip {
        return Ok(Report { fixed_point, stability, dynamics: Dynamics::Skipped { reason } });
    }
    let solve = SolveOptions { t_end: 1e5, rtol: 1e-11, atol: 1e-15, steady_tol: Some(1e-10), ..Default::default() };
    let x0 = model.extremal_states().into_iter().find(|s| s.name == "empty").map_or_else(|| vec![0.0; model.dim()], |s| s.x);
    let transient = mfq_ode::solve_within(model.as_ref(), &x0, &solve, &opts.deadline)?;
    let distance = transient.x.iter().map(|xi| xi.iter().zip(&fixed_point.x).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)).collect();
    let check_opts = CheckOptions { starts: opts.starts, deadline: opts.deadline.clone(), ..Default::default() };
    let check = check_with_fixed_point(model.as_ref(), fixed_point.clone(), &check_opts)?;
    // the starts that ran (fewer on models whose runs are stiff BDF solves: large_model_starts)
    let starts = check.options.starts;
    let dynamics = Dynamics::Done { transient: Box::new(transient), distance, check: Box::new(check), starts };
    Ok(Report { fixed_point, stability, dynamics })
}
