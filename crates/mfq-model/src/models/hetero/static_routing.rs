//! The optimal static (probabilistic) routing over heterogeneous server classes.

use super::{
    capacity_stability, check_hetero_lambda, class_birth_death, class_observables, class_tail, empty_and_full, idx, Classes, ServerClass,
};
use crate::models::check_levels;
use crate::models::roots::increasing_root;
use crate::{AnalyticJacobian, TransitionVisitor, Transitions};
use crate::{Jacobian, MeanFieldModel, ModelError, NamedState, Observables, PartialOrder, Sparsity, Stability, StateLayout};

/// The optimal static routing: each arrival goes to class `j` with a fixed probability
/// `q_j` and to a uniformly random server within the class, so every class-`j` server is an
/// independent M/M/1 (PS or FCFS) queue with load `rho_j` (arrival rate `rho_j C_j`, capacity
/// `C_j` = key `speed`). The comparison model for the dynamic schemes.
///
/// The loads minimise the mean number of jobs `sum_j gamma_j rho_j / (1 - rho_j)` subject to
/// `sum_j gamma_j C_j rho_j = lambda`; the KKT conditions give the square-root rule
///
/// ```text
/// rho_j = max(0, 1 - 1/sqrt(theta C_j)),   theta: sum_j gamma_j C_j rho_j(theta) = lambda,
/// T_static = (1/lambda) sum_j gamma_j rho_j / (1 - rho_j),   q_j = gamma_j C_j rho_j / lambda,
/// ```
///
/// with `theta` found by argmin's `BrentRoot` (the left side increases in `theta`). Slow
/// classes stay idle at low load (`rho_j = 0` when `theta C_j <= 1`).
///
/// State: [`StateLayout::ClassTail`], ODE of independent M/M/1 queues,
/// `dx_{j,k}/dt = C_j rho_j (x_{j,k-1} - x_{j,k}) - C_j (x_{j,k} - x_{j,k+1})`; fixed point
/// `x_{j,k} = rho_j^k` (geometric tails: the truncation level grows like
/// `ln(tol) / ln(max rho_j)`). The Jacobian is tridiagonal (classes do not interact) and analytic.
///
/// Stable iff `lambda < sum_j gamma_j C_j`. Beyond it no optimal routing exists; the model
/// then routes in proportion to capacity (`rho_j = lambda / sum_i gamma_i C_i >= 1`) so that
/// the truncated system stays defined, and [`stability`](MeanFieldModel::stability) says
/// unstable.
///
/// Extras (besides the per-class ones): `theta`, `class{j}.load` = `rho_j`,
/// `class{j}.routing_probability` = `q_j`, `mean_response_time_untruncated` = `T_static`.
///
/// Sources: the square-root rule is the classical optimal static assignment to parallel
/// M/M/1 queues (e.g. Bell and Stidham, Management Science 29(7), 1983); the comparison with
/// randomised JSQ is Mukhopadhyay and Mazumdar, IEEE TCNS 3(2), 2016. Derived in
/// docs/models/heterogeneous.md, "Derivations" (static routing).
#[derive(Debug, Clone, PartialEq)]
pub struct StaticRouting {
    lambda: f64,
    classes: Classes,
    levels: usize,
    rho: Vec<f64>,
    theta: Option<f64>,
}

impl StaticRouting {
    /// The optimal static routing at arrival rate `lambda` per server, truncated at `levels` = K.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.lambda`, `model.classes...` or
    /// `truncation.levels`. `lambda` beyond capacity is accepted and reported by
    /// [`MeanFieldModel::stability`].
    pub fn new(lambda: f64, classes: &[ServerClass], levels: usize) -> Result<Self, ModelError> {
        check_hetero_lambda(lambda)?;
        check_levels(levels)?;
        let classes = Classes::new(classes)?;
        let cap = classes.capacity();
        let loads = |theta: f64| -> Vec<f64> { classes.mu.iter().map(|c| (1.0 - 1.0 / (theta * c).sqrt()).max(0.0)).collect() };
        let theta = if lambda < cap {
            let carried = |theta: f64| -> f64 {
                loads(theta).iter().zip(&classes.gamma).zip(&classes.mu).map(|((r, g), c)| g * c * r).sum::<f64>() - lambda
            };
            let lo = 1.0 / classes.mu.iter().fold(0.0f64, |a, &b| a.max(b));
            increasing_root(carried, lo, 2.0 * lo)
        } else {
            None
        };
        let rho = match theta {
            Some(t) => loads(t),
            None => vec![lambda / cap; classes.len()],
        };
        Ok(StaticRouting { lambda, classes, levels, rho, theta })
    }

    /// Loads `rho_j` (file order).
    pub fn loads(&self) -> &[f64] {
        &self.rho
    }

    /// The multiplier `theta` of the square-root rule (`None` beyond capacity).
    pub fn theta(&self) -> Option<f64> {
        self.theta
    }

    /// `T_static = (1/lambda) sum_j gamma_j rho_j / (1 - rho_j)` of the untruncated system
    /// (`None` beyond capacity).
    pub fn mean_response_time(&self) -> Option<f64> {
        self.theta?;
        Some(self.rho.iter().zip(&self.classes.gamma).map(|(r, g)| g * r / (1.0 - r)).sum::<f64>() / self.lambda)
    }
}

impl MeanFieldModel for StaticRouting {
    fn name(&self) -> String {
        "static-opt".into()
    }
    fn dim(&self) -> usize {
        self.classes.len() * self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        let kk = self.levels;
        for j in 0..self.classes.len() {
            let (c, a) = (self.classes.mu[j], self.classes.mu[j] * self.rho[j]);
            for k in 1..=kk {
                let xk = class_tail(x, kk, j, k);
                dx[idx(kk, j, k)] = a * (class_tail(x, kk, j, k - 1) - xk) - c * (xk - class_tail(x, kk, j, k + 1));
            }
        }
    }
    fn layout(&self) -> StateLayout {
        StateLayout::ClassTail { classes: self.classes.len(), levels: self.levels }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let kk = self.levels;
        let m = self.classes.len();
        let mut lost = 0.0;
        let mut busy = 0.0;
        let theta: Vec<f64> = (0..m)
            .map(|j| {
                let a = self.classes.mu[j] * self.rho[j];
                let full = class_tail(x, kk, j, kk);
                lost += self.classes.gamma[j] * a * full;
                busy += self.classes.gamma[j] * a * class_tail(x, kk, j, 1);
                a * (1.0 - full)
            })
            .collect();
        let mut obs = class_observables(x, &self.classes, kk, self.lambda, &theta, lost, Some(busy / self.lambda));
        if let Some(t) = self.theta {
            obs.extras.push(("theta".into(), t));
        }
        for j in 0..m {
            obs.extras.push((format!("class{}.load", j + 1), self.rho[j]));
            let q = self.classes.gamma[j] * self.classes.mu[j] * self.rho[j] / self.lambda;
            obs.extras.push((format!("class{}.routing_probability", j + 1), q));
        }
        if let Some(t) = self.mean_response_time() {
            obs.extras.push(("mean_response_time_untruncated".into(), t));
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
        capacity_stability(self.lambda, &self.classes, "optimal static routing")
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        self.theta?;
        let mut x = vec![0.0; self.dim()];
        for j in 0..self.classes.len() {
            for k in 1..=self.levels {
                x[idx(self.levels, j, k)] = self.rho[j].powi(k as i32);
            }
        }
        Some(x)
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
    fn transitions(&self) -> Option<&dyn Transitions> {
        Some(self)
    }
}

/// One server at a time (`super::class_birth_death`): arrivals at `C_j rho_j` and completions
/// at `C_j` per class-`j` server. The drift is linear, so the refined terms vanish (`V = A =
/// 0`): the `N` servers are independent M/M/1/K queues and `E[X^N] = x*` at every `N`.
impl Transitions for StaticRouting {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        for j in 0..self.classes.len() {
            let a = self.classes.mu[j] * self.rho[j];
            class_birth_death(x, &self.classes, self.levels, j, |_| a, visit);
        }
    }
}

impl AnalyticJacobian for StaticRouting {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Banded { lower: 1, upper: 1 }
    }
    fn jacobian(&self, _x: &[f64], jac: &mut Jacobian) {
        let kk = self.levels;
        jac.clear();
        for j in 0..self.classes.len() {
            let (c, a) = (self.classes.mu[j], self.classes.mu[j] * self.rho[j]);
            for k in 1..=kk {
                let row = idx(kk, j, k);
                jac.set(row, row, -a - c);
                if k > 1 {
                    jac.set(row, row - 1, a);
                }
                if k < kk {
                    jac.set(row, row + 1, c);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{interior_class_tail, jacobian_error_skipping};
    use super::*;

    fn classes(v: &[(f64, f64)]) -> Vec<ServerClass> {
        v.iter().map(|&(fraction, speed)| ServerClass { fraction, speed }).collect()
    }

    /// sum_l rate_l jump_l = drift at random states (below and above capacity).
    #[test]
    fn transitions_reproduce_the_drift() {
        let cl = classes(&[(0.2, 2.5), (0.3, 1.0), (0.5, 0.4)]);
        for (lambda, seed) in [(0.5, [0.3, 0.9, 0.1, 0.6]), (0.9, [0.8, 0.2, 0.5, 0.7]), (1.4, [0.1, 0.4, 0.9, 0.3])] {
            let m = StaticRouting::new(lambda, &cl, 4).unwrap();
            let x = interior_class_tail(3, 4, &seed);
            assert!(crate::models::testutil::transitions_drift_error(&m, &x) < 1e-13);
        }
    }

    #[test]
    fn square_root_rule_carries_lambda_and_beats_perturbations() {
        let cl = classes(&[(0.2, 2.5), (0.3, 1.0), (0.5, 0.4)]);
        for lambda in [0.3, 0.5, 0.7, 0.75, 0.95] {
            let m = StaticRouting::new(lambda, &cl, 4).unwrap();
            let rho = m.loads().to_vec();
            let carried: f64 = rho.iter().zip(&cl).map(|(r, c)| c.fraction * c.speed * r).sum();
            assert!((carried - lambda).abs() < 1e-12, "{lambda}");
            let t = m.mean_response_time().unwrap();
            // moving load between two active classes at fixed carried work raises T
            let active: Vec<usize> = (0..3).filter(|&j| rho[j] > 0.0).collect();
            if active.len() >= 2 {
                let (a, b) = (active[0], active[1]);
                for h in [1e-3, -1e-3] {
                    let mut r = rho.clone();
                    r[a] += h / (cl[a].fraction * cl[a].speed);
                    r[b] -= h / (cl[b].fraction * cl[b].speed);
                    let tp: f64 = r.iter().zip(&cl).map(|(r, c)| c.fraction * r / (1.0 - r)).sum::<f64>() / lambda;
                    assert!(tp > t, "{lambda} {h}");
                }
            }
        }
        assert!(StaticRouting::new(1.3, &cl, 4).unwrap().mean_response_time().is_none());
    }

    #[test]
    fn jacobian_and_fixed_point() {
        let m = StaticRouting::new(0.7, &classes(&[(0.5, 1.6), (0.5, 0.4)]), 5).unwrap();
        assert!(jacobian_error_skipping(&m, &interior_class_tail(2, 5, &[0.2, 0.7, 0.4]), |_| false) < 1e-6);
        let x = m.analytic_fixed_point().unwrap();
        let mut dx = vec![0.0; 10];
        m.drift(&x, &mut dx);
        assert!(dx[..4].iter().chain(&dx[5..9]).all(|v| v.abs() < 1e-14), "{dx:?}");
    }
}
