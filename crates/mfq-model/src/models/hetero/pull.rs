//! Stolyar's PULL (join-idle-queue, uniform among idle servers) on heterogeneous server classes.

use super::{capacity_stability, check_hetero_lambda, class_observables, class_tail, empty_and_full, idx, Classes, ServerClass};
use crate::models::check_levels;
use crate::models::roots::increasing_root;
use crate::AnalyticJacobian;
use crate::{Jacobian, MeanFieldModel, ModelError, NamedState, Observables, PartialOrder, Sparsity, Stability, StateLayout};

/// How arrivals are dispatched at a state.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Regime {
    /// Some server is idle (`I > 0`): arrivals go to idle servers, uniformly.
    Interior {
        /// `I = sum_i gamma_i (1 - x_{i,1})`.
        idle: f64,
    },
    /// Every server is busy and `lambda >= A` (idle servers appear at rate `A`): each is
    /// refilled at once, the excess `lambda - A` goes to random servers.
    Sliding {
        /// `A = sum_i gamma_i mu_i (1 - x_{i,2})`.
        appear: f64,
    },
    /// Every server is busy but `lambda < A`: the idle pool grows, with class composition
    /// proportional to the rates at which idle servers appear.
    Leaving {
        /// `A`.
        appear: f64,
    },
}

/// Stolyar's PULL: an arrival joins an idle server chosen uniformly among all idle servers
/// (of every class); when no server is idle, a server chosen uniformly at random among all
/// servers. Exponential service at rate `mu_j` in class `j` (fraction `gamma_j`).
///
/// State: [`StateLayout::ClassTail`], `x_{j,k}` = fraction of class-`j` servers with at least
/// `k` jobs (see [the module docs](super)). With `I = sum_i gamma_i (1 - x_{i,1})` the
/// fraction of idle servers (all-server normalisation) and
/// `A = sum_i gamma_i mu_i (1 - x_{i,2})` the rate at which idle servers appear when all are busy:
///
/// ```text
/// I > 0:                 dx_{j,1}/dt = lambda (1 - x_{j,1}) / I - mu_j (x_{j,1} - x_{j,2})
///                        dx_{j,k}/dt = -mu_j (x_{j,k} - x_{j,k+1}),                     k >= 2
/// I = 0, lambda >= A:    dx_{j,1}/dt = 0   (sliding: every new idle server is refilled)
///                        dx_{j,k}/dt = (lambda - A)(x_{j,k-1} - x_{j,k}) - mu_j (x_{j,k} - x_{j,k+1})
/// I = 0, lambda < A:     dx_{j,1}/dt = mu_j (1 - x_{j,2}) (lambda / A - 1)   (idle pool grows,
///                        its composition is gamma_j mu_j (1 - x_{j,2}) / A), k >= 2 as for I > 0
/// ```
///
/// The interior line with `x_{j,k} = 0` for `k >= 2` is
/// `db_j/dt = lambda (1 - b_j)/I - mu_j b_j` (derived in docs/models/heterogeneous.md,
/// "Derivations", and checked against the finite-N simulation of
/// crates/mfq-sim/tests/heterogeneous.rs); the boundary lines are derived as for homogeneous JIQ (sliding mode)
/// and in docs/models/heterogeneous.md. The sliding level is kept by the projection hook.
/// The Jacobian is analytic away from `I = 0`; on the sliding boundary the `x_{j,1}` rows are
/// `-mu_j` on the diagonal only (as for [`super::SpeedAware`]).
///
/// # Fixed point (`lambda < sum_j gamma_j mu_j`)
///
/// `x_{j,1} = b_j = c / (mu_j + c)`, `x_{j,k} = 0` for `k >= 2`, with `c = lambda / I` the
/// unique root of `sum_j gamma_j c mu_j / (mu_j + c) = lambda` (found with argmin's
/// `BrentRoot`, [`Pull::root_c`]); `T = (1/lambda) sum_j gamma_j b_j`. No job waits, but `T`
/// is strictly larger than the speed-aware optimum when speeds differ.
///
/// Stable iff `lambda < sum_j gamma_j mu_j` (Stolyar 2015). Extras (besides the per-class
/// ones): `c` (the root, when it exists).
///
/// Sources: A. L. Stolyar, "Pull-based load distribution in large-scale heterogeneous service
/// systems", Queueing Systems 80(4):341-361, 2015 (arXiv 1407.6343); Y. Lu et al.,
/// "Join-Idle-Queue", Performance Evaluation 68(11), 2011. The ODE and the fixed point are
/// derived in docs/models/heterogeneous.md, "Derivations".
#[derive(Debug, Clone, PartialEq)]
pub struct Pull {
    lambda: f64,
    classes: Classes,
    levels: usize,
    c: Option<f64>,
}

impl Pull {
    /// PULL at arrival rate `lambda` per server, truncated at `levels` = K.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.lambda`, `model.classes...` or
    /// `truncation.levels`. `lambda` beyond capacity is accepted and reported by
    /// [`MeanFieldModel::stability`].
    pub fn new(lambda: f64, classes: &[ServerClass], levels: usize) -> Result<Self, ModelError> {
        check_hetero_lambda(lambda)?;
        check_levels(levels)?;
        let classes = Classes::new(classes)?;
        let c = if lambda < classes.capacity() {
            let g = |c: f64| -> f64 { classes.gamma.iter().zip(&classes.mu).map(|(g, m)| g * c * m / (m + c)).sum::<f64>() - lambda };
            increasing_root(g, 0.0, 1.0)
        } else {
            None
        };
        Ok(Pull { lambda, classes, levels, c })
    }

    /// The root `c` of `sum_j gamma_j c mu_j / (mu_j + c) = lambda` (`None` beyond capacity).
    pub fn root_c(&self) -> Option<f64> {
        self.c
    }

    fn regime(&self, x: &[f64]) -> Regime {
        let kk = self.levels;
        let m = self.classes.len();
        let idle: f64 = (0..m).map(|j| self.classes.gamma[j] * (1.0 - class_tail(x, kk, j, 1))).sum();
        if idle > 0.0 {
            return Regime::Interior { idle };
        }
        let appear: f64 = (0..m).map(|j| self.classes.gamma[j] * self.classes.mu[j] * (1.0 - class_tail(x, kk, j, 2))).sum();
        if self.lambda >= appear {
            Regime::Sliding { appear }
        } else {
            Regime::Leaving { appear }
        }
    }

    /// Arrival rate per class-`j` server onto idle class-`j` servers.
    #[inline]
    fn to_idle(&self, x: &[f64], j: usize, regime: Regime) -> f64 {
        let kk = self.levels;
        match regime {
            Regime::Interior { idle } => self.lambda * (1.0 - class_tail(x, kk, j, 1)) / idle,
            Regime::Sliding { .. } => self.classes.mu[j] * (1.0 - class_tail(x, kk, j, 2)),
            Regime::Leaving { appear } => self.lambda * self.classes.mu[j] * (1.0 - class_tail(x, kk, j, 2)) / appear,
        }
    }
}

impl MeanFieldModel for Pull {
    fn name(&self) -> String {
        "PULL".into()
    }
    fn dim(&self) -> usize {
        self.classes.len() * self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        let kk = self.levels;
        let regime = self.regime(x);
        let excess = match regime {
            Regime::Sliding { appear } => self.lambda - appear,
            _ => 0.0,
        };
        for j in 0..self.classes.len() {
            let mu = self.classes.mu[j];
            for k in 1..=kk {
                let xk = class_tail(x, kk, j, k);
                dx[idx(kk, j, k)] = -mu * (xk - class_tail(x, kk, j, k + 1));
                if k >= 2 {
                    dx[idx(kk, j, k)] += excess * (class_tail(x, kk, j, k - 1) - xk);
                }
            }
            if let Regime::Sliding { .. } = regime {
                dx[idx(kk, j, 1)] = 0.0;
            } else {
                dx[idx(kk, j, 1)] += self.to_idle(x, j, regime);
            }
        }
    }
    fn layout(&self) -> StateLayout {
        StateLayout::ClassTail { classes: self.classes.len(), levels: self.levels }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let kk = self.levels;
        let regime = self.regime(x);
        let excess = match regime {
            Regime::Sliding { appear } => self.lambda - appear,
            _ => 0.0,
        };
        let mut lost = 0.0;
        let theta: Vec<f64> = (0..self.classes.len())
            .map(|j| {
                let full = class_tail(x, kk, j, kk);
                lost += self.classes.gamma[j] * excess * full;
                self.to_idle(x, j, regime) + excess * (1.0 - full)
            })
            .collect();
        let mut obs = class_observables(x, &self.classes, kk, self.lambda, &theta, lost, Some(excess / self.lambda));
        if let Some(c) = self.c {
            obs.extras.push(("c".into(), c));
        }
        obs
    }
    fn order(&self) -> Option<PartialOrder> {
        Some(PartialOrder::Componentwise)
    }
    fn extremal_states(&self) -> Vec<NamedState> {
        empty_and_full(self.dim())
    }
    fn stability(&self) -> Stability {
        capacity_stability(self.lambda, &self.classes, "PULL, Stolyar 2015")
    }
    /// `false`: the drift has the sliding boundary `I = 0` (every server busy) of JIQ, where
    /// the finite-N system spends its waiting at moderate `N`; the refined mean field (an
    /// expansion of a smooth drift) is refused, as for [`crate::models::Jiq`].
    fn is_smooth(&self) -> bool {
        false
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        let c = self.c?;
        let mut x = vec![0.0; self.dim()];
        for j in 0..self.classes.len() {
            x[idx(self.levels, j, 1)] = c / (self.classes.mu[j] + c);
        }
        Some(x)
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
}

impl AnalyticJacobian for Pull {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Dense
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        let kk = self.levels;
        let m = self.classes.len();
        let (gamma, mu) = (&self.classes.gamma, &self.classes.mu);
        jac.clear();
        for (j, &mu_j) in mu.iter().enumerate() {
            for k in 1..=kk {
                jac.set(idx(kk, j, k), idx(kk, j, k), -mu_j);
                if k < kk {
                    jac.set(idx(kk, j, k), idx(kk, j, k + 1), mu_j);
                }
            }
        }
        match self.regime(x) {
            Regime::Interior { idle } => {
                // d/dx_{i,1} of lambda (1 - x_{j,1}) / I, with dI/dx_{i,1} = -gamma_i
                for j in 0..m {
                    let row = idx(kk, j, 1);
                    let free = 1.0 - class_tail(x, kk, j, 1);
                    for (i, &gamma_i) in gamma.iter().enumerate() {
                        let mut v = self.lambda * free * gamma_i / (idle * idle);
                        if i == j {
                            v -= self.lambda / idle;
                        }
                        jac.add(row, idx(kk, i, 1), v);
                    }
                }
            }
            Regime::Sliding { appear } => {
                let excess = self.lambda - appear;
                for j in 0..m {
                    if kk >= 2 {
                        jac.set(idx(kk, j, 1), idx(kk, j, 2), 0.0);
                    }
                    for k in 2..=kk {
                        let row = idx(kk, j, k);
                        jac.add(row, idx(kk, j, k - 1), excess);
                        jac.add(row, row, -excess);
                        // d excess / d x_{i,2} = gamma_i mu_i
                        let s = class_tail(x, kk, j, k - 1) - class_tail(x, kk, j, k);
                        for i in 0..m {
                            jac.add(row, idx(kk, i, 2), gamma[i] * mu[i] * s);
                        }
                    }
                }
            }
            Regime::Leaving { appear } => {
                if kk >= 2 {
                    // d/dx_{i,2} of lambda mu_j (1 - x_{j,2}) / A, with dA/dx_{i,2} = -gamma_i mu_i
                    for j in 0..m {
                        let row = idx(kk, j, 1);
                        let free = 1.0 - class_tail(x, kk, j, 2);
                        for i in 0..m {
                            let mut v = self.lambda * mu[j] * free * gamma[i] * mu[i] / (appear * appear);
                            if i == j {
                                v -= self.lambda * mu[j] / appear;
                            }
                            jac.add(row, idx(kk, i, 2), v);
                        }
                    }
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

    proptest! {
        #[test]
        fn interior_jacobian_equals_central_differences(
            lambda in 0.05f64..2.0, seed in proptest::collection::vec(0.0f64..1.0, 9)
        ) {
            let m = Pull::new(lambda, &classes(&[(0.2, 3.0), (0.5, 0.5), (0.3, 1.0)]), 3).unwrap();
            let x = interior_class_tail(3, 3, &seed);
            prop_assert!(jacobian_error_skipping(&m, &x, |_| false) < 1e-6);
        }

        #[test]
        fn boundary_jacobian_equals_differences_in_the_free_columns(
            lambda in 0.05f64..2.0, seed in proptest::collection::vec(0.0f64..1.0, 9)
        ) {
            let m = Pull::new(lambda, &classes(&[(0.2, 3.0), (0.5, 0.5), (0.3, 1.0)]), 3).unwrap();
            let mut x = interior_class_tail(3, 3, &seed);
            for j in 0..3 { x[idx(3, j, 1)] = 1.0; }
            let appear: f64 = [(0.2, 3.0), (0.5, 0.5), (0.3, 1.0)].iter().enumerate()
                .map(|(j, (g, mu))| g * mu * (1.0 - x[idx(3, j, 2)])).sum();
            prop_assume!((lambda - appear).abs() > 1e-5);
            prop_assert!(jacobian_error_skipping(&m, &x, |c| x[c] >= 1.0) < 1e-6);
        }
    }

    #[test]
    fn exact_rational_case_of_the_notes() {
        // exact case (docs/references.md): gamma = (0.2, 0.8), mu = (3, 0.5), lambda = 0.5 => c = 1.5, b = (1/3, 3/4)
        let m = Pull::new(0.5, &classes(&[(0.2, 3.0), (0.8, 0.5)]), 2).unwrap();
        assert!((m.root_c().unwrap() - 1.5).abs() < 1e-14);
        let x = m.analytic_fixed_point().unwrap();
        assert!((x[0] - 1.0 / 3.0).abs() < 1e-14 && (x[2] - 0.75).abs() < 1e-14);
        let mut dx = [0.0; 4];
        m.drift(&x, &mut dx);
        assert!(dx.iter().all(|v| v.abs() < 1e-14), "{dx:?}");
    }

    #[test]
    fn sliding_boundary_pins_level_one_and_overflows_at_random() {
        let m = Pull::new(1.0, &classes(&[(0.5, 1.6), (0.5, 0.4)]), 3).unwrap();
        let x = [1.0, 0.5, 0.0, 1.0, 0.0, 0.0];
        // A = 0.5*1.6*0.5 + 0.5*0.4*1 = 0.6, excess 0.4
        let mut dx = [0.0; 6];
        m.drift(&x, &mut dx);
        assert_eq!([dx[0], dx[3]], [0.0, 0.0]);
        assert!((dx[1] - (0.4 * 0.5 - 1.6 * 0.5)).abs() < 1e-15);
        assert!((dx[4] - 0.4).abs() < 1e-15);
        // below A the boundary is left, fast class first in proportion to its departures
        let m = Pull::new(0.3, &classes(&[(0.5, 1.6), (0.5, 0.4)]), 3).unwrap();
        m.drift(&x, &mut dx);
        assert!((dx[0] - 1.6 * 0.5 * (0.3 / 0.6 - 1.0)).abs() < 1e-15);
        assert!((dx[3] - 0.4 * (0.3 / 0.6 - 1.0)).abs() < 1e-15);
    }
}
