//! Local stability of the equilibria found: eigenvalues of the Jacobian at each, its kind
//! (stable, unstable, degenerate, unknown), and the equilibria in report order (sorted by the
//! summary coordinate) with the starts that reached each.

use super::cluster::{Clusters, EqBuild};
use super::report::{Equilibrium, EquilibriumKind};
use super::runs::Start;
use super::Ctx;
use crate::local_stability;

/// The equilibria in report order.
pub(super) struct Found {
    /// Sorted by the summary coordinate.
    pub(super) equilibria: Vec<Equilibrium>,
    /// Index of the reference fixed point in `equilibria`.
    pub(super) reference: Option<usize>,
    /// Per run: the index into `equilibria` of the equilibrium it settled at.
    pub(super) run_eq: Vec<Option<usize>>,
    /// Whether some equilibrium is degenerate.
    pub(super) degenerate: bool,
}

impl Ctx<'_> {
    /// The clustered equilibria sorted by the summary coordinate, each with its local
    /// stability and the starts (`starts`, in run order) that reached it; notes on skipped
    /// eigenvalues and degenerate equilibria (`summary_name` names the coordinate).
    pub(super) fn equilibria(&self, clusters: Clusters, starts: &[Start], summary_name: &str, notes: &mut Vec<String>) -> Found {
        let (n, opts) = (self.model.dim(), self.opts);
        let Clusters { eqs, run_eq, reference } = clusters;
        let mut order: Vec<usize> = (0..eqs.len()).collect();
        let summaries: Vec<f64> = eqs.iter().map(|e| self.summary(&e.x)).collect();
        order.sort_by(|a, b| summaries[*a].total_cmp(&summaries[*b]));
        let mut new_index = vec![0; eqs.len()];
        for (new, old) in order.iter().enumerate() {
            new_index[*old] = new;
        }
        let reference = reference.map(|i| new_index[i]);
        let mut equilibria: Vec<Equilibrium> = order.iter().map(|&old| self.equilibrium(&eqs[old], summaries[old])).collect();
        let run_eq: Vec<Option<usize>> = run_eq.iter().map(|e| e.map(|i| new_index[i])).collect();
        for (s, e) in starts.iter().zip(&run_eq) {
            if let Some(i) = e {
                if s.extremal {
                    equilibria[*i].extremal.push(s.label.clone());
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
                    "equilibrium #{i} ({} = {:.8}) is degenerate: spectral abscissa {:.3e} within degeneracy_tol x s = {:.0e} \
                     (a zero eigenvalue: convergence there is algebraic, not exponential, and no certificate rests on it)",
                    summary_name,
                    e.summary,
                    e.local.as_ref().map_or(f64::NAN, |l| l.spectral_abscissa),
                    opts.degeneracy_tol * e.local.as_ref().map_or(1.0, |l| l.scale)
                ));
            }
        }
        Found { equilibria, reference, run_eq, degenerate }
    }

    /// One equilibrium with its eigenvalues (up to `max_dim_for_eigenvalues`) and kind; no
    /// starts counted yet.
    fn equilibrium(&self, e: &EqBuild, summary: f64) -> Equilibrium {
        let opts = self.opts;
        // (past the deadline: not computed; the verdict is then TimeLimit anyway)
        let local =
            (self.model.dim() <= opts.max_dim_for_eigenvalues && !self.deadline.expired()).then(|| local_stability(self.model, &e.x));
        // the shared rule of `fixed-point` and `report` (relative to max(1, ||J||_inf))
        let kind = local.as_ref().map_or(EquilibriumKind::Unknown, |l| l.kind(opts.degeneracy_tol));
        Equilibrium {
            x: e.x.clone(),
            summary,
            residual: e.residual,
            local,
            kind,
            starts: 0,
            share: 0.0,
            extremal: Vec::new(),
            found_by: e.found_by,
        }
    }
}
