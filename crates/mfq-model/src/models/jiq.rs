//! Join-Idle-Queue with a single dispatcher and exponential service.

use crate::finite::{FiniteSystem, Routing, Simulation};
use crate::models::params;
use crate::models::{check_lambda, check_levels, stable_below_one, tail_at};
use crate::registry::{read_spec, Kind, KindSpec};
use crate::{AnalyticJacobian, TransitionVisitor, Transitions};
use crate::{Jacobian, MeanFieldModel, ModelError, Observables, PartialOrder, Sparsity, Stability, StateLayout};

/// Join-Idle-Queue (JIQ): an arrival joins an idle server if there is one, otherwise a server
/// chosen uniformly at random. Unit-rate FCFS servers, exponential job sizes.
///
/// State: tail form, `x[k-1] = x_k`. The fluid model is piecewise (Filippov sliding mode):
///
/// ```text
/// interior, x_1 < 1:    dx_1/dt = lambda - (x_1 - x_2),   dx_k/dt = -(x_k - x_{k+1}),  k >= 2;
/// boundary, x_1 = 1 and lambda > x_1 - x_2 (idle servers appear at rate a = x_1 - x_2 and are
/// refilled at once; the excess lambda - a goes to uniformly random servers):
///     dx_1/dt = 0,   dx_k/dt = (lambda - a)(x_{k-1} - x_k) - (x_k - x_{k+1}),  k >= 2.
/// ```
///
/// The trajectory leaves the boundary when `1 - x_2` reaches `lambda`. Integrators handle the
/// boundary through [`MeanFieldModel::project`] (clamp `x_1 <= 1`, restart), so the drift is
/// evaluated on the closed feasible set only. Fixed point: `x_1 = lambda`, `x_k = 0` for
/// `k >= 2` (no waiting, `T = 1`); from the empty state `x_1(t) = lambda (1 - e^{-t})`.
/// Stable iff `lambda < 1` (Stolyar 2015, exponential service).
///
/// Sources: Y. Lu, Q. Xie, G. Kliot, A. Geller, J. R. Larus, A. Greenberg, "Join-Idle-Queue",
/// Performance Evaluation 68(11), 2011; A. L. Stolyar, "Pull-based load distribution in
/// large-scale heterogeneous service systems", Queueing Systems 80(4), 2015. The piecewise ODE
/// is derived in docs/models/jiq.md.
#[derive(Debug, Clone, PartialEq)]
pub struct Jiq {
    lambda: f64,
    levels: usize,
}

impl Jiq {
    /// JIQ at arrival rate `lambda` per server, truncated at `levels` = K (`>= 2`).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] for `lambda <= 0` or not finite, `levels < 2`.
    pub fn new(lambda: f64, levels: usize) -> Result<Self, ModelError> {
        check_lambda(lambda)?;
        check_levels(levels)?;
        if levels < 2 {
            return Err(crate::out_of_range("truncation.levels", levels, "an integer >= 2 for JIQ"));
        }
        Ok(Jiq { lambda, levels })
    }

    /// Whether `x` is on the sliding boundary `x_1 = 1` with more arrivals than idle servers appear.
    pub fn on_boundary(&self, x: &[f64]) -> bool {
        x[0] >= 1.0 && self.lambda > 1.0 - tail_at(x, 2)
    }

    /// Arrival rate per server that overflows to random servers (zero in the interior).
    fn excess(&self, x: &[f64]) -> f64 {
        if self.on_boundary(x) {
            self.lambda - (1.0 - tail_at(x, 2))
        } else {
            0.0
        }
    }
}

impl MeanFieldModel for Jiq {
    fn name(&self) -> String {
        "JIQ".into()
    }
    fn dim(&self) -> usize {
        self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        let excess = self.excess(x);
        dx[0] = if excess > 0.0 { 0.0 } else { self.lambda - (tail_at(x, 1) - tail_at(x, 2)) };
        for k in 2..=self.levels {
            let xk = tail_at(x, k);
            dx[k - 1] = excess * (tail_at(x, k - 1) - xk) - (xk - tail_at(x, k + 1));
        }
    }
    fn is_smooth(&self) -> bool {
        false
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Tail { levels: self.levels }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let excess = self.excess(x);
        let routed_to_busy = excess / self.lambda;
        let loss = routed_to_busy * tail_at(x, self.levels);
        let prob_wait = Observables::waiting(routed_to_busy, loss);
        let mut obs = Observables::from_tail(x, self.lambda, Some(prob_wait), loss);
        obs.extras.push(("busy_fraction".into(), tail_at(x, 1)));
        obs
    }
    fn order(&self) -> Option<PartialOrder> {
        Some(PartialOrder::Componentwise)
    }
    fn stability(&self) -> Stability {
        stable_below_one(self.lambda, "JIQ with exponential service, Stolyar 2015")
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        (self.lambda < 1.0).then(|| {
            let mut x = vec![0.0; self.levels];
            x[0] = self.lambda;
            x
        })
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
    fn transitions(&self) -> Option<&dyn Transitions> {
        Some(self)
    }
}

impl AnalyticJacobian for Jiq {
    fn sparsity(&self) -> Sparsity {
        // the boundary mode couples every level to x_2
        Sparsity::Dense
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        jac.clear();
        let n = self.levels;
        let boundary = self.on_boundary(x);
        if !boundary {
            jac.set(0, 0, -1.0);
            jac.set(0, 1, 1.0);
        }
        let excess = self.excess(x);
        for k in 2..=n {
            let i = k - 1;
            jac.add(i, i, -excess - 1.0);
            jac.add(i, i - 1, excess);
            if k < n {
                jac.add(i, i + 1, 1.0);
            }
            if boundary {
                // excess = lambda - 1 + x_2: d/dx_2 multiplies (x_{k-1} - x_k)
                jac.add(i, 1, tail_at(x, k - 1) - tail_at(x, k));
            }
        }
    }
}

impl Transitions for Jiq {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        let excess = self.excess(x);
        // arrivals to idle servers (all of them in the interior, rate 1 - x_2 on the boundary)
        visit(&[(0, 1.0)], self.lambda - excess);
        for k in 1..=self.levels {
            if k >= 2 {
                // overflow to a uniformly random server holding exactly k - 1 jobs
                visit(&[(k - 1, 1.0)], excess * (tail_at(x, k - 1) - tail_at(x, k)));
            }
            visit(&[(k - 1, -1.0)], tail_at(x, k) - tail_at(x, k + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::testutil::{jacobian_error, transitions_drift_error};

    #[test]
    fn jacobian_matches_differences_inside_and_on_the_boundary() {
        let m = Jiq::new(0.7, 6).unwrap();
        let interior = [0.6, 0.3, 0.2, 0.1, 0.05, 0.01];
        assert!(jacobian_error(&m, &interior) < 1e-6);
        assert!(transitions_drift_error(&m, &interior) < 1e-15);
        // on the boundary only the x_2.. columns can be differenced (x_1 = 1 is pinned)
        let on = [1.0, 0.8, 0.5, 0.3, 0.1, 0.05];
        assert!(m.on_boundary(&on));
        assert!(transitions_drift_error(&m, &on) < 1e-15);
        let mut j = Jacobian::new(6, Sparsity::Dense);
        m.jacobian(&on, &mut j);
        let h = 1e-7;
        let mut f0 = [0.0; 6];
        let mut f1 = [0.0; 6];
        m.drift(&on, &mut f0);
        for c in 1..6 {
            let mut xp = on;
            xp[c] -= h;
            m.drift(&xp, &mut f1);
            for r in 0..6 {
                assert!((j.get(r, c) - (f0[r] - f1[r]) / h).abs() < 1e-5, "({r},{c})");
            }
        }
    }

    #[test]
    fn boundary_pins_x1_and_overflows_the_excess() {
        let m = Jiq::new(0.9, 4).unwrap();
        let x = [1.0, 1.0, 1.0, 0.0];
        let mut dx = [0.0; 4];
        m.drift(&x, &mut dx);
        assert_eq!(dx[0], 0.0);
        // level 2: excess 0.9 times (x_1 - x_2) = 0, minus (x_2 - x_3) = 0
        assert_eq!(dx[1], 0.0);
        // level 4: 0.9 (x_3 - x_4) - x_4 = 0.9
        assert!((dx[3] - 0.9).abs() < 1e-15);
    }
}

/// `kind = "jiq"`: the parameters of [`Jiq`] in a model file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JiqSpec {
    /// Arrival rate per server.
    pub lambda: f64,
}

/// The `jiq` kind.
pub static JIQ: Kind = Kind {
    name: "jiq",
    title: "Join-Idle-Queue (single dispatcher, exponential service)",
    params: &[params::LAMBDA],
    sources: "Lu et al., Perf. Eval. 68(11), 2011; Stolyar, Queueing Syst. 80(4), 2015",
    example: "models/jiq.toml",
    docs: "docs/models/jiq.md",
    read: read_spec::<JiqSpec>,
};

impl KindSpec for JiqSpec {
    fn kind(&self) -> &'static Kind {
        &JIQ
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(Jiq::new(self.lambda, levels.max(2))?))
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        Ok(Simulation::System(FiniteSystem::Queues { lambda: self.lambda, routing: Routing::Jiq }))
    }
}
