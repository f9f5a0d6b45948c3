//! The verdict: what the runs, the equilibria and the sandwich establish (time limit, not
//! unique, unsettled, certified, or evidence only), from the parts of the report.

use super::report::{run_failed, Equilibrium, EquilibriumKind, Sandwich, StartRun, Verdict};
use super::{inf_dist, CheckOptions};

/// The verdict from the equilibria found, the sandwich (when the model claims an order) and
/// the runs (`ends`: their end states); `timed_out` when the wall-clock limit ran out (a note
/// says so). See the module docs, "Verdicts and what they rest on".
pub(super) fn verdict(
    opts: &CheckOptions,
    timed_out: bool,
    equilibria: &[Equilibrium],
    sandwich: Option<&Sandwich>,
    runs: &[StartRun],
    ends: &[Vec<f64>],
    notes: &mut Vec<String>,
) -> Verdict {
    let count = |k: EquilibriumKind| equilibria.iter().filter(|e| e.kind == k).count();
    let unsettled = runs.iter().filter(|r| !r.settled).count();
    let failed = runs.iter().filter(|r| !r.settled && run_failed(&r.status)).count();
    if timed_out {
        notes.push(format!("{} ran out: runs, bisections and ordered pairs after it were cut short", opts.deadline.reason()));
    }
    if timed_out {
        Verdict::TimeLimit { seconds: opts.deadline.limit().unwrap_or(0.0), unsettled, runs: runs.len() }
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
            failed,
            time_limit: opts.time_limit,
            largest_end_drift: runs.iter().filter(|r| !r.settled && !run_failed(&r.status)).map(|r| r.end_drift).fold(0.0, f64::max),
        }
    } else {
        one_equilibrium(opts, &equilibria[0], sandwich, ends)
    }
}

/// Every run settled at the one equilibrium `eq`: certified when the sandwich applies and `eq`
/// is locally stable and not degenerate, evidence (with the reasons) otherwise.
fn one_equilibrium(opts: &CheckOptions, eq: &Equilibrium, sandwich: Option<&Sandwich>, ends: &[Vec<f64>]) -> Verdict {
    let mut why = Vec::new();
    match sandwich {
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
        let s = sandwich.expect("checked above");
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
}

#[cfg(test)]
mod tests {
    use super::super::check;
    use super::*;
    use mfq_model::models::Jsq;
    use mfq_model::{MeanFieldModel, StateLayout};
    use mfq_ode::Status;
    use std::time::Instant;

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

    /// A tiny wall-clock limit on a long check: the verdict says so, and the check returns
    /// within a fraction of a second (it would take minutes: 2000 runs at lambda = 0.999).
    #[test]
    fn a_wall_clock_limit_stops_the_check() {
        let m = Jsq::new(0.999, 2, 400).unwrap();
        let opts = CheckOptions { starts: 2000, time_limit: 1e6, deadline: mfq_model::Deadline::after(0.05), ..Default::default() };
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
