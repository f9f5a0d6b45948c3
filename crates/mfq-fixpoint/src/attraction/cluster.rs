//! Clustering of the runs' limits into distinct equilibria (within `cluster_tol`, or joined
//! by a flat segment of the drift), and the search for saddles on the boundaries between
//! basins (bisection by basin, then Newton).

use super::report::FoundBy;
use super::runs::{Limit, RunOut, RUN_RTOL};
use super::{inf_dist, Ctx};
use crate::FixedPoint;
use mfq_ode::{Method, SolveOptions};

/// Pairs of basins whose boundary is searched for a saddle.
const MAX_SEPARATRIX_PAIRS: usize = 10;
/// Bisection steps per basin boundary.
const BISECTION_STEPS: usize = 60;
/// Unsettled runs whose end is polished by Newton to find the equilibrium they approach
/// ([`Ctx::approached`]), at most.
const MAX_APPROACHED: usize = 8;

/// An equilibrium while the limits are clustered.
pub(super) struct EqBuild {
    pub(super) x: Vec<f64>,
    pub(super) residual: f64,
    pub(super) found_by: FoundBy,
}

/// The equilibria found, in the order found (the reference fixed point first when its solve
/// converged), and which one each run reached.
pub(super) struct Clusters {
    pub(super) eqs: Vec<EqBuild>,
    /// Per run: the index into `eqs` of the equilibrium it settled at.
    pub(super) run_eq: Vec<Option<usize>>,
    /// Index into `eqs` of the reference fixed point (`None` if its solve did not converge).
    pub(super) reference: Option<usize>,
}

/// How a bisection point ended.
enum Class {
    Known(usize),
    New(Limit),
    Unsettled,
}

impl Ctx<'_> {
    /// Clusters the limits of the runs (the reference fixed point `fp` first, when its solve
    /// converged; a note when not), then adds the saddles found on basin boundaries.
    pub(super) fn cluster(&self, fp: &FixedPoint, outs: &[RunOut], notes: &mut Vec<String>) -> Clusters {
        let mut eqs: Vec<EqBuild> = Vec::new();
        if fp.converged() {
            eqs.push(EqBuild { x: fp.x.clone(), residual: fp.residual, found_by: FoundBy::FixedPointSolve });
        } else {
            notes.push(format!("the reference fixed-point solve did not converge ({}, residual {:.1e})", fp.status, fp.residual));
        }
        let reference = fp.converged().then_some(0);
        let mut run_eq: Vec<Option<usize>> = Vec::with_capacity(outs.len());
        for o in outs {
            run_eq.push(o.limit.as_ref().map(|lim| self.assign(&mut eqs, lim, FoundBy::Trajectory)));
        }
        self.saddles(&mut eqs, outs, &run_eq);
        Clusters { eqs, run_eq, reference }
    }

    /// Saddles on basin boundaries: for each pair of equilibria reached by runs (at most
    /// [`MAX_SEPARATRIX_PAIRS`]), bisects the segment between the two closest starts that
    /// reached them ([`separatrix`](Self::separatrix)); a new equilibrium found there is added.
    ///
    /// A run that did not settle counts for the basin of the equilibrium it [approached]
    /// (Self::approached) (its runs can be the only ones of a slow stable point, near a fold,
    /// and the saddle beside it is then found only so; the runs' own report keeps them
    /// unsettled).
    fn saddles(&self, eqs: &mut Vec<EqBuild>, outs: &[RunOut], run_eq: &[Option<usize>]) {
        let mut tried = 0;
        let run_eq: Vec<Option<usize>> = run_eq
            .iter()
            .zip(outs)
            .map(|(&e, o)| {
                e.or_else(|| (!o.settled && tried < MAX_APPROACHED).then(|| tried += 1).and_then(|()| self.approached(eqs, &o.end)))
            })
            .collect();
        let run_eq = &run_eq[..];
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
                    if let Some(lim) = self.separatrix(eqs, &outs[a].x0, &outs[b].x0, ca, cb) {
                        self.assign(eqs, &lim, FoundBy::Separatrix);
                    }
                }
            }
        }
    }

    /// Whether `p` and `q` are one equilibrium: within `cluster_tol`, or joined by a segment on
    /// which the drift stays below `tol` (15 interior points).
    pub(super) fn same(&self, p: &[f64], q: &[f64]) -> bool {
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

    /// The known equilibrium an unsettled end state `end` is approaching: Newton from `end`
    /// converges to it within the polish's largest shift (1e-2), `None` otherwise.
    fn approached(&self, eqs: &[EqBuild], end: &[f64]) -> Option<usize> {
        let lim = self.newton(end).filter(|l| inf_dist(&l.x, end) <= super::runs::POLISH_MAX_SHIFT)?;
        eqs.iter().position(|e| self.same(&e.x, &lim.x))
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
            // the job's deadline is passed to solve_within
            deadline: None,
        };
        let mut f = vec![0.0; x.len()];
        match mfq_ode::solve_within(self.model, x, &so, &self.deadline) {
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
            // the job's deadline is passed to solve_within
            deadline: None,
        };
        let mut f = vec![0.0; x.len()];
        match mfq_ode::solve_within(self.model, x, &so, &self.deadline) {
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
        if self.deadline.expired() {
            return None;
        }
        let n = a.len();
        let classify = |x: &[f64]| -> Class {
            let (end, settled, r) = self.settle(x);
            if !settled {
                return self.approached(eqs, &end).map_or(Class::Unsettled, Class::Known);
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
}

#[cfg(test)]
mod tests {
    use super::super::{test_ctx as ctx, CheckOptions};
    use mfq_model::models::OpinionStubborn;

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
}
