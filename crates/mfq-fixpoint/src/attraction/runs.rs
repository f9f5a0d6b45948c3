//! Multi-start runs: the starts (extremal states, then seeded random feasible states), their
//! integration until the drift settles or the time limit (in parallel), the Newton polish of
//! their end points, and the runs as the report shows them.

use super::report::{failure_note, run_failed, StartRun};
use super::{inf_dist, CheckError, Ctx};
use crate::{solve_model, FixedPointOptions};
use mfq_ode::{Method, OdeError, SolveOptions, Status};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

/// Number of output times per run (log-spaced; the series for plots).
pub const SERIES_POINTS: usize = 200;
/// `log10` distances are floored here (distance 0 after Newton would be `-inf`).
pub const LOG10_FLOOR: f64 = -16.0;
/// A Newton polish that moves a settled end point further than this is not trusted.
pub(super) const POLISH_MAX_SHIFT: f64 = 1e-2;
/// A segment of a run that takes more explicit steps than this switches the rest of the run
/// to Rosenbrock23 (the explicit method is at its stability limit).
const STIFF_SEGMENT_STEPS: u64 = 300;
/// Relative tolerance of the runs: tight enough that the distance series near `x*` follow the
/// true decay (the slope the plot compares with the spectral abscissa) and that basins are
/// told apart up to ~1e-8 from their boundary.
pub(super) const RUN_RTOL: f64 = 1e-8;
/// Once `max |f|` falls below this, a run continues with Rosenbrock23.
const IMPLICIT_BELOW_DRIFT: f64 = 1e-6;
/// First output time of a run (then log-spaced up to `time_limit`).
const FIRST_OUTPUT_TIME: f64 = 0.01;

/// One start of a run: an extremal state of the order or a seeded random feasible state.
pub(super) struct Start {
    /// `empty`, `full`, ... for extremal states; `start N` for random ones.
    pub(super) label: String,
    /// Whether the start is an extremal state.
    pub(super) extremal: bool,
    /// The state.
    pub(super) x: Vec<f64>,
}

/// A limit of a run: a Newton-polished end point, or the end point itself.
pub(super) struct Limit {
    pub(super) x: Vec<f64>,
    pub(super) residual: f64,
}

/// The outcome of one run, before clustering.
pub(super) struct RunOut {
    pub(super) x0: Vec<f64>,
    pub(super) end: Vec<f64>,
    pub(super) settled: bool,
    pub(super) status: Status,
    pub(super) t_reached: f64,
    pub(super) end_drift: f64,
    pub(super) limit: Option<Limit>,
    pub(super) t: Vec<f64>,
    pub(super) log10_distance: Vec<f64>,
    pub(super) summary: Vec<f64>,
}

impl Ctx<'_> {
    /// The starts: the model's extremal states first, then `starts` seeded random feasible
    /// states (projected), drawn from the stream of `CheckOptions::seed`.
    pub(super) fn starts(&self) -> Vec<Start> {
        let (model, opts) = (self.model, self.opts);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
        let mut starts: Vec<Start> = model.extremal_states().into_iter().map(|s| Start { label: s.name, extremal: true, x: s.x }).collect();
        for i in 0..opts.starts {
            let mut x = self.random_state(&mut rng);
            model.project(&mut x);
            starts.push(Start { label: format!("start {}", i + 1), extremal: false, x });
        }
        starts
    }

    /// Runs every start in parallel (distance series measured to `reference` for runs that do
    /// not settle), reporting each finished run to `CheckOptions::progress`.
    pub(super) fn run_all(&self, starts: &[Start], reference: &[f64]) -> Result<Vec<RunOut>, CheckError> {
        let done = std::sync::atomic::AtomicU64::new(0);
        let total = starts.len() as u64;
        let outs: Vec<RunOut> = starts
            .par_iter()
            .map(|s| {
                let out = self.run(&s.label, &s.x, reference);
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                self.opts.progress.tick(n, total);
                out
            })
            .collect::<Result<_, _>>()?;
        Ok(outs)
    }

    /// The runs as the report shows them (`run_eq[i]`: the equilibrium run `i` reached, final
    /// indices) and their end states; notes on runs that did not settle or failed.
    pub(super) fn report_runs(
        &self,
        starts: &[Start],
        outs: Vec<RunOut>,
        run_eq: &[Option<usize>],
        notes: &mut Vec<String>,
    ) -> (Vec<StartRun>, Vec<Vec<f64>>) {
        let opts = self.opts;
        let ends: Vec<Vec<f64>> = outs.iter().map(|o| o.end.clone()).collect();
        let runs: Vec<StartRun> = starts
            .iter()
            .zip(outs)
            .zip(run_eq)
            .map(|((s, o), e)| StartRun {
                label: s.label.clone(),
                extremal: s.extremal,
                settled: o.settled,
                status: o.status,
                t_reached: o.t_reached,
                end_drift: o.end_drift,
                equilibrium: *e,
                summary_start: o.summary.first().copied().unwrap_or(f64::NAN),
                summary_end: self.summary(&o.end),
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
        (runs, ends)
    }

    /// Output times of a run: `SERIES_POINTS` log-spaced times from `min(0.01, T/100)` to `T`.
    pub(super) fn output_times(&self) -> Vec<f64> {
        let tl = self.opts.time_limit;
        let t0 = FIRST_OUTPUT_TIME.min(tl / 100.0);
        let m = SERIES_POINTS - 1;
        (0..=m).map(|j| if j == m { tl } else { t0 * (tl / t0).powf(j as f64 / m as f64) }).collect()
    }

    /// Integrates one run from `x0` until `max |f| < tol` or the time limit, segment by segment
    /// over the output times (only those states are kept); polishes a settled end point.
    pub(super) fn run(&self, label: &str, x0: &[f64], reference: &[f64]) -> Result<RunOut, CheckError> {
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
        if !settled && self.deadline.expired() {
            status = Status::TimeLimit { t: 0.0 };
        }
        let mut t = 0.0;
        let mut method = Method::Auto;
        if !settled && status == Status::Success && self.one_bdf_run() {
            // one BDF solve over the whole horizon, sampled at the output times (restarting it
            // at each of them cost a new Jacobian and several LUs every time)
            let so = SolveOptions {
                t_end: opts.time_limit,
                rtol: RUN_RTOL,
                atol: 1e-12,
                method: Method::Bdf,
                max_steps: 1_000_000,
                steady_tol: Some(opts.tol),
                record_steps: false,
                // the job's deadline is passed to solve_sampled_within
                deadline: None,
            };
            let tr = mfq_ode::solve_sampled_within(model, &x, &so, &self.deadline, &self.output_times())
                .map_err(|source| CheckError::Integration { start: label.to_string(), source })?;
            x.copy_from_slice(tr.last());
            t = if tr.status == Status::Success { opts.time_limit } else { tr.t_last() };
            ts.extend_from_slice(&tr.t[1..]);
            xs.extend(tr.x.into_iter().skip(1));
            match tr.status {
                Status::Success => {}
                Status::SteadyState { .. } => {
                    settled = true;
                    status = Status::SteadyState { t };
                }
                other => status = other,
            }
        } else if !settled && status == Status::Success {
            for t_next in self.output_times() {
                let so = SolveOptions {
                    t_end: t_next - t,
                    rtol: RUN_RTOL,
                    atol: 1e-12,
                    method,
                    max_steps: 200_000,
                    steady_tol: Some(opts.tol),
                    record_steps: false,
                    // the job's deadline is passed to solve_within
                    deadline: None,
                };
                let tr = mfq_ode::solve_within(model, &x, &so, &self.deadline)
                    .map_err(|source| CheckError::Integration { start: label.to_string(), source })?;
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

    /// Whether the runs are one BDF solve each ([`runs_are_bdf_solves`](super::runs_are_bdf_solves)).
    pub(super) fn one_bdf_run(&self) -> bool {
        super::runs_are_bdf_solves(self.model)
    }

    /// Newton from a settled end point; the end point itself when Newton fails, does not
    /// improve the residual, or moves further than [`POLISH_MAX_SHIFT`].
    pub(super) fn polish(&self, end: &[f64], end_drift: f64) -> Limit {
        match self.newton(end) {
            Some(l) if l.residual <= end_drift.max(1e-12) && inf_dist(&l.x, end) <= POLISH_MAX_SHIFT => l,
            _ => Limit { x: end.to_vec(), residual: end_drift },
        }
    }

    /// Newton (PTC with a huge first pseudo step) from `x0`; `Some` when the residual reaches
    /// `tol`; `None` past the deadline.
    pub(super) fn newton(&self, x0: &[f64]) -> Option<Limit> {
        if self.deadline.expired() {
            return None;
        }
        let o = FixedPointOptions {
            tol: 1e-12f64.min(self.opts.tol),
            max_iter: 60,
            dt0: 1e9,
            x0: Some(x0.to_vec()),
            max_dim_for_eigenvalues: 0,
            deadline: self.deadline.clone(),
        };
        let fp = solve_model(self.model, &o).ok()?;
        (fp.residual.is_finite() && fp.residual <= self.opts.tol).then_some(Limit { x: fp.x, residual: fp.residual })
    }
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
        // statuses added later carry no time to shift
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_ctx as ctx, CheckOptions};
    use super::*;
    use mfq_model::models::Jsq;

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

    /// The PS pair approximation at K = 45 (2025 states, sparse): each run is one BDF solve
    /// sampled at the output times; every run (from `empty`, `full` and a random start)
    /// settles at x*, and each series holds at most one state per output time.
    #[test]
    fn large_sparse_runs_are_one_bdf_solve_each() {
        use super::super::{check, Verdict};
        use mfq_model::models::redundancy::{Discipline, RedundancyPair};
        let m = RedundancyPair::new(0.9, 2, Discipline::Ps, 1, 45).unwrap();
        let opts = CheckOptions { starts: 1, ..Default::default() };
        assert!(ctx(&m, &opts).one_bdf_run() && !ctx(&Jsq::new(0.9, 2, 40).unwrap(), &opts).one_bdf_run());
        let r = check(&m, &opts).unwrap();
        assert!(matches!(r.verdict, Verdict::Evidence { .. }), "{r}");
        assert_eq!(r.runs.len(), 3);
        for run in &r.runs {
            assert!(run.settled && run.equilibrium == r.reference, "{}: {:?}", run.label, run.status);
            assert!(run.t.len() <= SERIES_POINTS + 2 && run.t.windows(2).all(|w| w[1] > w[0]), "{}", run.label);
            assert!(*run.log10_distance.last().unwrap() < -6.0, "{}", run.label);
        }
    }

    /// `large_model_starts` caps the random starts on a model whose runs are BDF solves (the PS
    /// pair at K = 45: 3 of 5 requested, a note says so, the verdict counts 3) and not on others
    /// (JSQ(2), K = 12: all 5).
    #[test]
    fn large_models_run_at_most_large_model_starts() {
        use super::super::{check, Verdict};
        use mfq_model::models::redundancy::{Discipline, RedundancyPair};
        let opts = CheckOptions { starts: 5, large_model_starts: Some(3), ..Default::default() };
        let m = RedundancyPair::new(0.9, 2, Discipline::Ps, 1, 45).unwrap();
        let r = check(&m, &opts).unwrap();
        assert_eq!(r.runs.iter().filter(|run| !run.extremal).count(), 3);
        assert!(matches!(r.verdict, Verdict::Evidence { starts: 3, .. }), "{r}");
        assert_eq!(r.options.starts, 3);
        assert!(r.notes.iter().any(|n| n.starts_with("3 of the 5 random starts were run")), "{:?}", r.notes);
        let r = check(&Jsq::new(0.9, 2, 12).unwrap(), &opts).unwrap();
        assert_eq!(r.runs.iter().filter(|run| !run.extremal).count(), 5);
        assert!(matches!(r.verdict, Verdict::Certified { starts: 5, .. }), "{r}");
        assert!(!r.notes.iter().any(|n| n.contains("random starts were run")), "{:?}", r.notes);
    }

    #[test]
    fn statuses_shift_to_absolute_time() {
        assert_eq!(shift_status(Status::MaxSteps { t: 1.0 }, 2.5), Status::MaxSteps { t: 3.5 });
        assert_eq!(shift_status(Status::Success, 2.5), Status::Success);
    }
}
