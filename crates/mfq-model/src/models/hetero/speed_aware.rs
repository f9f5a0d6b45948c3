//! Speed-aware JSQ and speed-aware JIQ (fastest-first filling).

use super::{capacity_stability, check_hetero_lambda, class_observables, class_tail, empty_and_full, idx, Classes, ServerClass};
use crate::models::check_levels;
use crate::AnalyticJacobian;
use crate::{Jacobian, MeanFieldModel, ModelError, NamedState, Observables, PartialOrder, Sparsity, Stability, StateLayout};
use serde::Serialize;

/// Which speed-aware rule an arrival follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpeedAwarePolicy {
    /// SA-JSQ: join a shortest queue; among shortest queues, one in the fastest class
    /// (Bhambay and Mukhopadhyay; "join the fastest of the shortest queues").
    Jsq,
    /// SA-JIQ: join an idle server of the fastest class that has one; if no server is idle,
    /// a server chosen uniformly at random among all servers.
    Jiq,
}

/// What the routing does at one bucket (servers of one class with exactly `k` jobs).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bucket {
    /// Level `k + 1` of the class is full (`x_{j,k+1} = 1`) and the arrivals left cover its
    /// departures: every server that drops to `k` jobs is refilled at once (`dx_{j,k+1} = 0`).
    Pinned,
    /// The bucket receives all the arrivals left, at this rate per class-`j` server.
    Gets(f64),
}

/// Speed-aware JSQ (SA-JSQ) and speed-aware JIQ (SA-JIQ) on heterogeneous exponential
/// servers (FCFS, class `j` serves at rate `mu_j`, fraction `gamma_j` of the servers).
///
/// State: [`StateLayout::ClassTail`], `x_{j,k}` = fraction of class-`j` servers with at least
/// `k` jobs (see [the module docs](super)). Classes are ranked by decreasing speed; equal
/// speeds are ranked in file order (the earlier class first) — a deterministic tie rule.
///
/// # Dynamics implemented
///
/// Both policies make the fluid right-hand side discontinuous: a class whose level is full
/// absorbs, through instantaneous refills, exactly the rate at which its servers drop below
/// that level, and the rest of the arrivals flows on. The drift is this *water-filling* over
/// buckets `(k, j)` = class-`j` servers with exactly `k` jobs, visited in priority order
/// (SA-JSQ: by `k` increasing, then by speed; SA-JIQ: `k = 0` only, by speed), with the
/// arrival rate `r` (all-server normalisation) starting at `lambda`:
///
/// ```text
/// departures everywhere:         dx_{j,k}/dt = -mu_j (x_{j,k} - x_{j,k+1})             (k = 1..K)
/// bucket (k, j), D = gamma_j mu_j (1 - x_{j,k+2}):
///   pinned  if x_{j,k+1} = 1 and r >= D:   dx_{j,k+1}/dt = 0,  r <- r - D, next bucket
///   else (the receiving bucket):           dx_{j,k+1}/dt += r / gamma_j,  r <- 0, stop
/// overflow r > 0 after the last bucket:
///   SA-JSQ: lost at level K (truncation);
///   SA-JIQ: uniformly random servers:      dx_{j,k}/dt += r (x_{j,k-1} - x_{j,k})     (k >= 2)
/// ```
///
/// For states with at most one job per server (`x_{j,k} = 0` for `k >= 2`, e.g. from the
/// empty state) and `lambda` below capacity, both policies reduce to the reduced fluid ODE
/// derived in docs/models/heterogeneous.md ("Derivations"): with `J` the first class (by speed) with
/// `x_{J,1} < 1` and the faster classes pinned at 1,
/// `gamma_J dx_{J,1}/dt = lambda - sum_{j<J} gamma_j mu_j - gamma_J mu_J x_{J,1}`,
/// `dx_{j,1}/dt = -mu_j x_{j,1}` for `j > J`. From empty,
/// `x_{1,1}(t) = lambda (1 - e^{-mu_1 t}) / (gamma_1 mu_1)` until it reaches 1. This is the
/// range where the dynamics rest on that derivation (and are checked against the finite-N
/// simulation of crates/mfq-sim/tests/heterogeneous.rs).
///
/// For SA-JIQ the water-filling is the fluid limit for every initial state (dispatching
/// depends only on idle/busy, as for JIQ). For SA-JSQ from states with queues of two or more
/// jobs, Bhambay and Mukhopadhyay show that the fluid limit averages over a fast time scale
/// (the invariant law of a multi-dimensional Markov chain of the `O(1)` servers below the
/// water level); we could not read their averaged drift. The water-filling above is that
/// average when the fast chain's invariant law is degenerate (every server that drops below
/// the water level is refilled at once), which is our derivation, not the paper's display:
/// treat SA-JSQ transients from states with queues `>= 2` as derived, not published (a
/// finite-N simulation in `tests/heterogeneous.rs` agrees, with an `O(1/sqrt(N))` gap where a
/// class sits on a switching surface).
/// The fixed point does not depend on this (see below). A naive ODE with `argmin` indicators
/// is *not* used: it would chatter at the pinned levels and is not the fluid limit.
///
/// Pinned levels are kept by the projection hook ([`MeanFieldModel::project`] clamps to
/// `[0, 1]`; a level pushed above 1 lands on 1 and is pinned there). The Jacobian is
/// analytic away from the switching surfaces; a pinned row is `-mu_j` on the diagonal and
/// zero elsewhere (the drift there is identically 0 in the feasible directions; `-mu_j`
/// stands in for the sliding mode, which restores the level in finite time, so the
/// linearisation at a saturated fixed point has no spurious zero eigenvalue).
///
/// # Fixed point (both policies, `lambda < sum_j gamma_j mu_j`)
///
/// No server holds more than one job and classes fill fastest-first:
/// `x_{j,1} = 1` for the classes before `J*`, `x_{J*,1} = (lambda - sum_{j<J*} gamma_j mu_j) /
/// (gamma_{J*} mu_{J*})`, `x_{j,1} = 0` after, `x_{j,k} = 0` for `k >= 2`, with `J*` the first
/// class (by speed) at which the cumulative capacity exceeds `lambda`.
/// `T* = (1/lambda) sum_j gamma_j x_{j,1}`, the fluid-optimal mean response time
/// ([`analytic_fixed_point`](MeanFieldModel::analytic_fixed_point)).
///
/// Stable iff `lambda < sum_j gamma_j mu_j`.
///
/// Extras (besides the per-class ones of the module docs): none.
///
/// Sources: S. Bhambay, A. Mukhopadhyay, "Asymptotic optimality of speed-aware JSQ for
/// heterogeneous service systems", Performance Evaluation 2022 (arXiv 2203.01721), fluid
/// delay optimality; the fixed point and the reduced ODE are derived in
/// docs/models/heterogeneous.md, "Derivations". The SA-JIQ fallback
/// (uniformly random server) is our choice: the SA-JIQ paper could not be identified.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedAware {
    policy: SpeedAwarePolicy,
    lambda: f64,
    classes: Classes,
    levels: usize,
}

impl SpeedAware {
    /// The speed-aware model `policy` at arrival rate `lambda` per server, truncated at
    /// `levels` = K.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.lambda` (not finite or `<= 0`),
    /// `model.classes...` (see [`ServerClass`]) or `truncation.levels` (`0`).
    /// `lambda` beyond capacity is accepted and reported by [`MeanFieldModel::stability`].
    pub fn new(policy: SpeedAwarePolicy, lambda: f64, classes: &[ServerClass], levels: usize) -> Result<Self, ModelError> {
        check_hetero_lambda(lambda)?;
        check_levels(levels)?;
        Ok(SpeedAware { policy, lambda, classes: Classes::new(classes)?, levels })
    }

    /// SA-JSQ, see [`SpeedAware::new`].
    ///
    /// # Errors
    /// As [`SpeedAware::new`].
    pub fn jsq(lambda: f64, classes: &[ServerClass], levels: usize) -> Result<Self, ModelError> {
        Self::new(SpeedAwarePolicy::Jsq, lambda, classes, levels)
    }

    /// SA-JIQ, see [`SpeedAware::new`].
    ///
    /// # Errors
    /// As [`SpeedAware::new`].
    pub fn jiq(lambda: f64, classes: &[ServerClass], levels: usize) -> Result<Self, ModelError> {
        Self::new(SpeedAwarePolicy::Jiq, lambda, classes, levels)
    }

    /// The policy.
    pub fn policy(&self) -> SpeedAwarePolicy {
        self.policy
    }

    /// Visits the buckets in priority order, calling `visit(j, k, bucket)`; returns the rate
    /// (all-server normalisation) that no bucket took.
    #[inline]
    fn route(&self, x: &[f64], mut visit: impl FnMut(usize, usize, Bucket)) -> f64 {
        let kk = self.levels;
        let top = match self.policy {
            SpeedAwarePolicy::Jsq => kk,
            SpeedAwarePolicy::Jiq => 1,
        };
        let mut r = self.lambda;
        for k in 0..top {
            for &j in &self.classes.by_speed {
                let need = self.classes.gamma[j] * self.classes.mu[j] * (1.0 - class_tail(x, kk, j, k + 2));
                if class_tail(x, kk, j, k + 1) >= 1.0 && r >= need {
                    visit(j, k, Bucket::Pinned);
                    r -= need;
                } else {
                    visit(j, k, Bucket::Gets(r / self.classes.gamma[j]));
                    return 0.0;
                }
            }
        }
        r
    }

    /// Whether the overflow (when every bucket is pinned) goes to random servers (SA-JIQ).
    fn random_overflow(&self) -> bool {
        self.policy == SpeedAwarePolicy::Jiq
    }
}

impl MeanFieldModel for SpeedAware {
    fn name(&self) -> String {
        match self.policy {
            SpeedAwarePolicy::Jsq => "SA-JSQ".into(),
            SpeedAwarePolicy::Jiq => "SA-JIQ".into(),
        }
    }
    fn dim(&self) -> usize {
        self.classes.len() * self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        let kk = self.levels;
        for j in 0..self.classes.len() {
            let mu = self.classes.mu[j];
            for k in 1..=kk {
                dx[idx(kk, j, k)] = -mu * (class_tail(x, kk, j, k) - class_tail(x, kk, j, k + 1));
            }
        }
        let excess = self.route(x, |j, k, b| match b {
            Bucket::Pinned => dx[idx(kk, j, k + 1)] = 0.0,
            Bucket::Gets(a) => dx[idx(kk, j, k + 1)] += a,
        });
        if self.random_overflow() && excess > 0.0 {
            for j in 0..self.classes.len() {
                for k in 2..=kk {
                    dx[idx(kk, j, k)] += excess * (class_tail(x, kk, j, k - 1) - class_tail(x, kk, j, k));
                }
            }
        }
    }
    fn is_smooth(&self) -> bool {
        // JIQ-type routing and pinned saturated classes have a sliding boundary
        false
    }
    fn layout(&self) -> StateLayout {
        StateLayout::ClassTail { classes: self.classes.len(), levels: self.levels }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let kk = self.levels;
        let m = self.classes.len();
        let mut theta = vec![0.0; m];
        let mut to_idle = 0.0;
        let excess = self.route(x, |j, k, b| {
            let a = match b {
                Bucket::Pinned => self.classes.mu[j] * (1.0 - class_tail(x, kk, j, k + 2)),
                Bucket::Gets(a) => a,
            };
            theta[j] += a;
            if k == 0 {
                to_idle += self.classes.gamma[j] * a;
            }
        });
        let (lost, prob_wait) = if self.random_overflow() {
            let mut lost = 0.0;
            for (j, t) in theta.iter_mut().enumerate() {
                let full = class_tail(x, kk, j, kk);
                *t += excess * (1.0 - full);
                lost += self.classes.gamma[j] * excess * full;
            }
            (lost, excess / self.lambda)
        } else {
            (excess, ((self.lambda - to_idle) / self.lambda).max(0.0))
        };
        class_observables(x, &self.classes, kk, self.lambda, &theta, lost, Some(prob_wait))
    }
    fn order(&self) -> Option<PartialOrder> {
        Some(PartialOrder::Componentwise)
    }
    fn extremal_states(&self) -> Vec<NamedState> {
        empty_and_full(self.dim())
    }
    fn stability(&self) -> Stability {
        capacity_stability(self.lambda, &self.classes, &self.name())
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        if self.lambda >= self.classes.capacity() || self.lambda.is_nan() {
            return None;
        }
        let mut x = vec![0.0; self.dim()];
        let mut r = self.lambda;
        for &j in &self.classes.by_speed {
            let cap = self.classes.gamma[j] * self.classes.mu[j];
            x[idx(self.levels, j, 1)] = if r >= cap { 1.0 } else { r / cap };
            r = (r - cap).max(0.0);
        }
        Some(x)
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
}

impl AnalyticJacobian for SpeedAware {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Dense
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        let kk = self.levels;
        let m = self.classes.len();
        jac.clear();
        for j in 0..m {
            let mu = self.classes.mu[j];
            for k in 1..=kk {
                jac.set(idx(kk, j, k), idx(kk, j, k), -mu);
                if k < kk {
                    jac.set(idx(kk, j, k), idx(kk, j, k + 1), mu);
                }
            }
        }
        let mut receiver = None;
        let excess = self.route(x, |j, k, b| {
            if let Bucket::Gets(_) = b {
                receiver = Some((j, k));
            }
        });
        let random = self.random_overflow() && receiver.is_none();
        self.route(x, |j, k, b| {
            if b != Bucket::Pinned {
                return;
            }
            // a pinned row: zero off the diagonal (the diagonal keeps -mu_j, see the docs)
            if k + 2 <= kk {
                let row = idx(kk, j, k + 1);
                let col = idx(kk, j, k + 2);
                jac.set(row, col, 0.0);
                // the arrivals left after this bucket grow with x_{j,k+2}: d r / d x = gamma_j mu_j
                let dr = self.classes.gamma[j] * self.classes.mu[j];
                if let Some((jr, kr)) = receiver {
                    jac.add(idx(kk, jr, kr + 1), col, dr / self.classes.gamma[jr]);
                } else if random {
                    for i in 0..m {
                        for l in 2..=kk {
                            let s = class_tail(x, kk, i, l - 1) - class_tail(x, kk, i, l);
                            jac.add(idx(kk, i, l), col, dr * s);
                        }
                    }
                }
            }
        });
        if random {
            for i in 0..m {
                for l in 2..=kk {
                    let row = idx(kk, i, l);
                    jac.add(row, idx(kk, i, l - 1), excess);
                    jac.add(row, row, -excess);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{interior_class_tail, jacobian_error_skipping};
    use super::*;
    use proptest::prelude::*;

    fn classes(v: &[(f64, f64)]) -> Vec<ServerClass> {
        v.iter().map(|&(fraction, speed)| ServerClass { fraction, speed }).collect()
    }

    /// Sets `x_{j,k} = 1` for `k <= full[j]` in an interior state.
    fn with_full_levels(mut x: Vec<f64>, levels: usize, full: &[usize]) -> Vec<f64> {
        for (j, &f) in full.iter().enumerate() {
            for k in 1..=f {
                x[idx(levels, j, k)] = 1.0;
            }
        }
        x
    }

    proptest! {
        #[test]
        fn jacobian_equals_central_differences_off_the_switching_surfaces(
            jsq in proptest::bool::ANY,
            lambda in 0.05f64..3.0,
            full in proptest::collection::vec(0usize..3, 3),
            seed in proptest::collection::vec(0.0f64..1.0, 12),
        ) {
            let cl = classes(&[(0.3, 2.0), (0.3, 1.0), (0.4, 0.25)]);
            let m = if jsq { SpeedAware::jsq(lambda, &cl, 4) } else { SpeedAware::jiq(lambda, &cl, 4) }.unwrap();
            let x = with_full_levels(interior_class_tail(3, 4, &seed), 4, &full);
            // stay away from the switching surfaces r = D (a bucket flips between pinned and receiving)
            let mut margin = f64::INFINITY;
            let mut r = lambda;
            m.route(&x, |j, k, b| if b == Bucket::Pinned {
                let need = cl[j].fraction * cl[j].speed * (1.0 - class_tail(&x, 4, j, k + 2));
                margin = margin.min(r - need);
                r -= need;
            } else {
                let need = cl[j].fraction * cl[j].speed * (1.0 - class_tail(&x, 4, j, k + 2));
                if class_tail(&x, 4, j, k + 1) >= 1.0 { margin = margin.min(need - r); }
            });
            prop_assume!(margin > 1e-5);
            let err = jacobian_error_skipping(&m, &x, |c| x[c] >= 1.0);
            prop_assert!(err < 1e-6, "err {err} at {x:?}");
        }
    }

    #[test]
    fn reduced_ode_from_empty_matches_the_notes_closed_form() {
        // docs/models/heterogeneous.md: from empty, gamma_1 db_1/dt = lambda - gamma_1 mu_1 b_1
        let cl = classes(&[(0.5, 1.6), (0.5, 0.4)]);
        let m = SpeedAware::jiq(0.9, &cl, 3).unwrap();
        let x = vec![0.3, 0.0, 0.0, 0.2, 0.0, 0.0];
        let mut dx = vec![0.0; 6];
        m.drift(&x, &mut dx);
        assert!((dx[0] - (0.9 / 0.5 - 1.6 * 0.3)).abs() < 1e-15);
        assert!((dx[3] + 0.4 * 0.2).abs() < 1e-15);
        // fast class pinned: the slow class gets lambda - gamma_1 mu_1 = 0.1
        let x = vec![1.0, 0.0, 0.0, 0.2, 0.0, 0.0];
        m.drift(&x, &mut dx);
        assert_eq!(dx[0], 0.0);
        assert!((dx[3] - (0.1 / 0.5 - 0.4 * 0.2)).abs() < 1e-15);
    }

    #[test]
    fn jsq_fills_the_fastest_one_job_servers_when_all_are_busy_and_jiq_spreads() {
        let cl = classes(&[(0.5, 1.6), (0.5, 0.4)]);
        // all busy, no queues: idle servers appear at rate 0.5*1.6 + 0.5*0.4 = 1.0 < lambda = 1.2
        let x = vec![1.0, 0.0, 0.0, 1.0, 0.0, 0.0];
        let mut dx = vec![0.0; 6];
        SpeedAware::jsq(1.2, &cl, 3).unwrap().drift(&x, &mut dx);
        assert_eq!([dx[0], dx[3]], [0.0, 0.0]);
        assert!((dx[1] - 0.2 / 0.5).abs() < 1e-15 && dx[4] == 0.0);
        SpeedAware::jiq(1.2, &cl, 3).unwrap().drift(&x, &mut dx);
        assert!((dx[1] - 0.2).abs() < 1e-15 && (dx[4] - 0.2).abs() < 1e-15);
    }

    #[test]
    fn fixed_point_is_a_zero_of_the_drift() {
        let cl = classes(&[(0.3, 1.0), (0.3, 2.0), (0.4, 0.25)]);
        for lambda in [0.1, 0.7, 0.9, 0.95] {
            for m in [SpeedAware::jsq(lambda, &cl, 3).unwrap(), SpeedAware::jiq(lambda, &cl, 3).unwrap()] {
                let x = m.analytic_fixed_point().unwrap();
                let mut dx = vec![0.0; m.dim()];
                m.drift(&x, &mut dx);
                assert!(dx.iter().all(|v| v.abs() < 1e-14), "{lambda}: {dx:?}");
            }
        }
        assert!(SpeedAware::jsq(1.0, &cl, 3).unwrap().analytic_fixed_point().is_none());
        assert!(matches!(SpeedAware::jsq(1.0, &cl, 3).unwrap().stability(), Stability::Unstable { .. }));
    }
}
