//! JSQ(d) / power-of-d, the supermarket model.

use crate::models::{
    check_d, check_lambda, check_levels, local_tail_drift, local_tail_fixed_point, local_tail_jacobian, stable_below_one, tail_at,
    tail_transitions,
};
use crate::{AnalyticJacobian, TransitionVisitor, Transitions};
/// `v^d`, bit for bit `v.powi(d)` (repeated squaring, as compiler-rt's `__powidf2`), with the
/// call saved for the common `d <= 3` (`v * v * v` equals `v * (v * v)`: products commute).
#[inline]
fn int_pow(v: f64, d: u32) -> f64 {
    match d {
        0 => 1.0,
        1 => v,
        2 => v * v,
        3 => v * (v * v),
        _ => v.powi(d as i32),
    }
}

use crate::finite::{FiniteSystem, Routing, Simulation};
use crate::models::params;
use crate::registry::{read_spec, Kind, KindSpec};
use crate::{Jacobian, MeanFieldModel, ModelError, Observables, PartialOrder, Sparsity, Stability, StateLayout};

/// JSQ(d): each arrival samples `d` servers uniformly at random and joins the one with the
/// fewest jobs (ties at random); FCFS unit-rate servers, exponential job sizes, Poisson
/// arrivals at rate `lambda` per server. `d = 1` is random routing (independent M/M/1 queues).
///
/// State (tail form, length `K`): `x[k-1] = x_k`, the fraction of servers with at least `k` jobs.
///
/// ODE (Mitzenmacher 2001, eq. (1); Vvedenskaya, Dobrushin and Karpelevich 1996):
///
/// ```text
/// dx_k/dt = lambda (x_{k-1}^d - x_k^d) - (x_k - x_{k+1}),   k = 1..K,  x_0 = 1, x_{K+1} = 0.
/// ```
///
/// Fixed point of the untruncated system: `x_k = lambda^((d^k - 1)/(d - 1))` (`lambda^k` for
/// `d = 1`), i.e. the recursion `x_k = lambda x_{k-1}^d`. Stable iff `lambda < 1`.
/// The Jacobian is tridiagonal and analytic.
///
/// Sources: M. Mitzenmacher, "The power of two choices in randomized load balancing", IEEE
/// TPDS 12(10), 2001; N. D. Vvedenskaya, R. L. Dobrushin, F. I. Karpelevich, Problems of
/// Information Transmission 32(1), 1996.
#[derive(Debug, Clone, PartialEq)]
pub struct Jsq {
    lambda: f64,
    d: u32,
    levels: usize,
}

impl Jsq {
    /// JSQ(d) at arrival rate `lambda` per server, truncated at `levels` = K.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] for `lambda` not finite or `<= 0`, `d = 0`, `levels = 0`.
    /// `lambda >= 1` is accepted (the truncated system is well defined) and reported by
    /// [`MeanFieldModel::stability`].
    pub fn new(lambda: f64, d: u32, levels: usize) -> Result<Self, ModelError> {
        check_lambda(lambda)?;
        check_d(d)?;
        check_levels(levels)?;
        Ok(Jsq { lambda, d, levels })
    }

    #[inline]
    fn p(&self, v: f64) -> f64 {
        int_pow(v, self.d)
    }
}

impl MeanFieldModel for Jsq {
    fn name(&self) -> String {
        format!("JSQ({})", self.d)
    }
    fn dim(&self) -> usize {
        self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        local_tail_drift(x, dx, self.lambda, |v| self.p(v));
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Tail { levels: self.levels }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let loss = self.p(tail_at(x, self.levels));
        let prob_wait = Observables::waiting(self.p(tail_at(x, 1)), loss);
        Observables::from_tail(x, self.lambda, Some(prob_wait), loss)
    }
    fn order(&self) -> Option<PartialOrder> {
        Some(PartialOrder::Componentwise)
    }
    fn stability(&self) -> Stability {
        stable_below_one(self.lambda, "JSQ(d)")
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        (self.lambda < 1.0).then(|| local_tail_fixed_point(self.levels, self.lambda, |v| self.p(v)))
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
    fn transitions(&self) -> Option<&dyn Transitions> {
        Some(self)
    }
}

impl AnalyticJacobian for Jsq {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Banded { lower: 1, upper: 1 }
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        let d = self.d as f64;
        local_tail_jacobian(x, jac, self.lambda, |v| d * int_pow(v, self.d - 1));
    }
}

impl Transitions for Jsq {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        tail_transitions(x, self.lambda, |j| self.p(tail_at(x, j)), visit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::testutil::{interior_tail, jacobian_error, transitions_drift_error};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn analytic_jacobian_equals_finite_differences(
            lambda in 0.05f64..0.999, d in 1u32..6, seed in proptest::collection::vec(0.0f64..1.0, 2..25)
        ) {
            let m = Jsq::new(lambda, d, seed.len()).unwrap();
            let x = interior_tail(&seed);
            prop_assert!(jacobian_error(&m, &x) < 1e-6);
            prop_assert!(transitions_drift_error(&m, &x) < 1e-15);
        }
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let e = Jsq::new(0.9, 0, 10).unwrap_err();
        assert!(e.to_string().contains("model.d = 0"), "{e}");
        let e = Jsq::new(-0.5, 2, 10).unwrap_err();
        assert!(e.to_string().contains("model.lambda = -0.5"), "{e}");
        assert!(Jsq::new(f64::NAN, 2, 10).is_err());
        assert!(matches!(Jsq::new(1.2, 2, 10).unwrap().stability(), Stability::Unstable { .. }));
    }
}

/// `kind = "jsq"`: the parameters of [`Jsq`] in a model file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsqSpec {
    /// Arrival rate per server.
    pub lambda: f64,
    /// Servers sampled per arrival (`>= 1`).
    pub d: u32,
}

/// The `jsq` kind.
pub static JSQ: Kind = Kind {
    name: "jsq",
    title: "JSQ(d) / power-of-d (supermarket model); d = 1 is random routing (M/M/1 per server)",
    params: &[params::LAMBDA, params::D],
    sources: "Mitzenmacher, IEEE TPDS 12(10), 2001, eq. (1); Vvedenskaya, Dobrushin, Karpelevich, Probl. Inf. Transm. 32(1), 1996",
    example: "models/jsq-d2.toml",
    docs: "docs/models/jsq.md",
    read: read_spec::<JsqSpec>,
};

impl KindSpec for JsqSpec {
    fn kind(&self) -> &'static Kind {
        &JSQ
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(Jsq::new(self.lambda, self.d, levels)?))
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        Ok(Simulation::System(FiniteSystem::Queues { lambda: self.lambda, routing: Routing::Jsq { d: self.d } }))
    }
}
