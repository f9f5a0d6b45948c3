//! Dopri5 / Dop853 from `ode_solvers`, with projection restarts and steady-state stops.

use crate::{max_abs, Method, Recorder, SolveOptions, Stats, Status, DEADLINE_CHECK_EVERY_STEP_DIM, DEADLINE_CHECK_STEPS};
use mfq_model::MeanFieldModel;
use ode_solvers::dop_shared::IntegrationError;
use ode_solvers::{DVector, Dop853, Dopri5, OutputType, System};
use std::cell::Cell;
use std::time::Instant;

/// Largest change by [`MeanFieldModel::project`] tolerated without a restart.
const PROJECTION_SLACK: f64 = 1e-10;
/// Restarts allowed per run (a model that needs more chatters on its boundary).
const MAX_PROJECTIONS: u64 = 100_000;

#[derive(Clone, Copy, PartialEq)]
enum Stop {
    Steady,
    Project,
    NonFinite,
    Deadline,
}

struct Sys<'a> {
    model: &'a dyn MeanFieldModel,
    steady_tol: Option<f64>,
    stop: &'a Cell<Option<Stop>>,
    scratch: Vec<f64>,
    deadline: Option<Instant>,
    job: &'a mfq_model::Deadline,
    /// Accepted steps since the last look at the clock.
    since_check: u64,
}

impl System<f64, DVector<f64>> for Sys<'_> {
    fn system(&self, _t: f64, y: &DVector<f64>, dy: &mut DVector<f64>) {
        self.model.drift(y.as_slice(), dy.as_mut_slice());
    }

    fn solout(&mut self, _t: f64, y: &DVector<f64>, dy: &DVector<f64>) -> bool {
        let y = y.as_slice();
        let r = max_abs(dy.as_slice());
        if !r.is_finite() || !max_abs(y).is_finite() {
            self.stop.set(Some(Stop::NonFinite));
            return true;
        }
        self.scratch.copy_from_slice(y);
        self.model.project(&mut self.scratch);
        let moved = self.scratch.iter().zip(y).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        if moved > PROJECTION_SLACK {
            self.stop.set(Some(Stop::Project));
            return true;
        }
        if self.steady_tol.is_some_and(|tol| r < tol) {
            self.stop.set(Some(Stop::Steady));
            return true;
        }
        self.since_check += 1;
        if self.since_check >= DEADLINE_CHECK_STEPS || y.len() >= DEADLINE_CHECK_EVERY_STEP_DIM {
            self.since_check = 0;
            if crate::past(self.deadline) || self.job.expired() {
                self.stop.set(Some(Stop::Deadline));
                return true;
            }
        }
        false
    }
}

/// Integrates from `(t0, x)` to `opts.t_end`; `x` ends as the last state. With `method =
/// Dopri5` called from `Auto` the stiffness test is on (and returns [`Status::Stiff`] for the
/// caller to switch); asked for explicitly it is off, so the run goes on, slowly.
pub(crate) fn integrate(
    model: &dyn MeanFieldModel,
    method: Method,
    t0: f64,
    x: &mut [f64],
    (opts, job): (&SolveOptions, &mfq_model::Deadline),
    rec: &mut Recorder,
    stats: &mut Stats,
) -> Status {
    let auto = opts.method == Method::Auto;
    let n_stiff = if auto { 1000 } else { u32::MAX };
    let mut t = t0;
    let stop = Cell::new(None);
    loop {
        let used = stats.accepted_steps + stats.rejected_steps;
        let budget = (opts.max_steps as u64).saturating_sub(used) as u32;
        if budget == 0 {
            return Status::MaxSteps { t };
        }
        if crate::stopped(opts, job) {
            return Status::TimeLimit { t };
        }
        stop.set(None);
        let sys = Sys {
            model,
            steady_tol: opts.steady_tol,
            stop: &stop,
            scratch: vec![0.0; x.len()],
            deadline: opts.deadline,
            job,
            since_check: 0,
        };
        let y0 = DVector::from_column_slice(x);
        let span = opts.t_end - t;
        let (result, ts, ys) = match method {
            Method::Dop853 => {
                let mut s = Dop853::from_param(
                    sys,
                    t,
                    opts.t_end,
                    span,
                    y0,
                    opts.rtol,
                    opts.atol,
                    0.9,
                    0.0,
                    0.333,
                    6.0,
                    span,
                    0.0,
                    budget,
                    n_stiff,
                    OutputType::Sparse,
                );
                let r = s.integrate();
                (r, s.x_out().clone(), s.y_out().clone())
            }
            _ => {
                let mut s = Dopri5::from_param(
                    sys,
                    t,
                    opts.t_end,
                    span,
                    y0,
                    opts.rtol,
                    opts.atol,
                    0.9,
                    0.04,
                    0.2,
                    10.0,
                    span,
                    0.0,
                    budget,
                    n_stiff,
                    OutputType::Sparse,
                );
                let r = s.integrate();
                (r, s.x_out().clone(), s.y_out().clone())
            }
        };
        for (ti, yi) in ts.iter().zip(&ys).skip(1) {
            x.copy_from_slice(yi.as_slice());
            model.project(x);
            rec.push(*ti, x);
            t = *ti;
        }
        let steps = ts.len().saturating_sub(1) as u64;
        stats.accepted_steps += steps;
        stats.drift_evals += 6 * steps + 2;
        match result {
            Err(IntegrationError::StiffnessDetected { .. }) => return Status::Stiff { t },
            Err(IntegrationError::MaxNumStepReached { .. }) => return Status::MaxSteps { t },
            Err(IntegrationError::StepSizeUnderflow { .. }) => return Status::StepSizeTooSmall { t },
            Ok(s) => {
                stats.rejected_steps += s.rejected_steps as u64;
                match stop.get() {
                    Some(Stop::Steady) => return Status::SteadyState { t },
                    Some(Stop::NonFinite) => return Status::NonFinite { t },
                    Some(Stop::Deadline) => return Status::TimeLimit { t },
                    Some(Stop::Project) => {
                        stats.projections += 1;
                        if stats.projections > MAX_PROJECTIONS {
                            return Status::StepSizeTooSmall { t };
                        }
                        if t >= opts.t_end {
                            return Status::Success;
                        }
                    }
                    None => return Status::Success,
                }
            }
        }
    }
}
