//! What the checker reports: the equilibria, the runs, the sandwich and the verdict, and
//! their text.

use super::CheckOptions;
use crate::{FixedPoint, LocalStability};
use mfq_model::PartialOrder;
use mfq_ode::Status;
use serde::Serialize;
use std::fmt;

pub use crate::stability::EquilibriumKind;

impl fmt::Display for FoundBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FoundBy::FixedPointSolve => "the fixed-point solve",
            FoundBy::Trajectory => "a trajectory",
            FoundBy::Separatrix => "Newton from a basin boundary",
        })
    }
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
    /// Output times (log-spaced, about [`SERIES_POINTS`](super::SERIES_POINTS)).
    pub t: Vec<f64>,
    /// `log10 max_i |x_i(t) - z_i|`, floored at [`LOG10_FLOOR`](super::LOG10_FLOOR), where `z` is the run's own
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
    /// Pairs whose order broke by more than [`ORDER_TOL`](super::ORDER_TOL) at a checkpoint.
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

/// The outcome of [`check`](super::check): what is known about uniqueness and global attraction.
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
        /// Spectral abscissa at `x*` (below `-degeneracy_tol * max(1, ||J||_inf)`).
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
                "CERTIFIED for the truncated system, resting on a sampled cooperativity test (no negative off-diagonal \
                 Jacobian entry at {jacobian_samples} sampled states, order kept for {order_pairs} ordered pairs: a test, not a \
                 proof) and the monotone sandwich it permits (both extremal runs reach x*, end distance \
                 {extremal_end_distance:.1e}); x* locally stable (spectral abscissa {spectral_abscissa:.4e}); all {starts} \
                 random starts agree"
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
                 {largest_end_drift:.1e}); nothing is certified (a longer horizon may settle them: --time-limit; near \
                 the stability boundary relaxation takes about 1/|spectral abscissa|)"
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

/// Everything the checker found; plots (`mfq_plot::attraction`) read only this.
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
    /// Whether some equilibrium found is degenerate (`|alpha| <= degeneracy_tol * max(1, ||J||_inf)`).
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
    pub wall_seconds: f64,
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

impl fmt::Display for AttractionReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "attraction check: {} ({} state {})", self.model, self.dim, if self.dim == 1 { "entry" } else { "entries" })?;
        let fp = &self.fixed_point;
        write!(f, "  fixed point x* = {}: residual {:.1e}, {}", fmt_state(&fp.x), fp.residual, fp.status)?;
        match &self.local {
            Some(l) => writeln!(f, ", spectral abscissa {:.6e} (slowest decay rate {:.6e})", l.spectral_abscissa, l.slowest_decay_rate)?,
            None => writeln!(f, ", eigenvalues not computed")?,
        }
        if let Some(s) = &self.sandwich {
            writeln!(
                f,
                "  sandwich ({} order): {} Jacobian samples, {} violations (max {:.1e}); {} ordered pairs, {} violations \
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
        let by = if matches!(self.verdict, Verdict::TimeLimit { .. }) {
            format!("before the wall-clock limit stopped them (horizon t = {})", self.options.time_limit)
        } else {
            format!("within t = {}", self.options.time_limit)
        };
        writeln!(f, "  multi-start: {} random starts (seed {}), {settled} settled {by}", self.options.starts, self.options.seed)?;
        for (i, e) in self.equilibria.iter().enumerate() {
            let alpha = e.local.as_ref().map_or("-".to_string(), |l| format!("{:.4e}", l.spectral_abscissa));
            writeln!(
                f,
                "  equilibrium #{i}{}: {} = {:.10}, {}, spectral abscissa {alpha}, residual {:.1e}, {} starts ({:.0}%){}, found by {}",
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
        write!(f, "  wall time {:.2} s", self.wall_seconds)
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

/// Whether a run's integration stopped with a solver failure, rather than at its end, at a
/// steady state or at the wall-clock limit.
pub(super) fn run_failed(status: &Status) -> bool {
    !matches!(status, Status::Success | Status::SteadyState { .. } | Status::TimeLimit { .. })
}

/// How a solver failure reads in text: `step size too small at t = 12.5`.
pub(super) fn failure_text(status: &Status) -> String {
    match status {
        Status::MaxSteps { t } => format!("step budget used up at t = {t:.4}"),
        Status::StepSizeTooSmall { t } => format!("step size too small at t = {t:.4}"),
        Status::NonFinite { t } => format!("non-finite drift or state at t = {t:.4}"),
        Status::Stiff { t } => format!("stiff at t = {t:.4}"),
        Status::Singular { t } => format!("singular matrix at t = {t:.4}"),
        Status::TimeLimit { t } => format!("wall-clock limit at t = {t:.4}"),
        Status::Success | Status::SteadyState { .. } => "no failure".into(),
        other => other.to_string(),
    }
}

/// The note naming the runs that failed and how (the first five).
pub(super) fn failure_note(failed: &[&StartRun]) -> String {
    let shown: Vec<String> = failed.iter().take(5).map(|r| format!("{} ({})", r.label, failure_text(&r.status))).collect();
    let more = if failed.len() > 5 { format!(", and {} more", failed.len() - 5) } else { String::new() };
    format!(
        "{} runs failed, their integration stopped before settling (not a verdict on the model): {}{more}",
        failed.len(),
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
