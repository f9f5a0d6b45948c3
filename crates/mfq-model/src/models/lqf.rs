//! Randomised longest-queue-first scheduling, LQF(d) (kind `lqf-d`).
//!
//! The system (constructed here from the abstract of A. B. Dieker and T. Suk, "Randomized
//! longest-queue-first scheduling for large-scale buffered systems", Advances in Applied
//! Probability 47(4), 2015, arXiv 1306.5347; the paper's own model, scalings and diffusion
//! limits are not reproduced, docs/models/lqf.md says what is published and what is built here):
//!
//! - `n` buffers, each fed by its own Poisson stream of rate `lambda` (packets per unit time);
//! - one scheduler of total rate `n`: service opportunities form a Poisson process of rate `n`
//!   (equivalently `n` unit-rate servers sharing the scheduler). At each opportunity it samples
//!   `d` distinct buffers uniformly at random and removes one packet from the longest sampled
//!   buffer (ties uniformly); if every sampled buffer is empty the opportunity is wasted;
//! - `d = n` is exact longest-queue-first (the scheduler sees every buffer), `d = 1` serves a
//!   uniformly random buffer (independent M/M/1 queues).
//!
//! Mean field (`n -> infinity`, `d` fixed), in the tail form `x_k` = fraction of buffers with at
//! least `k` packets: a buffer with exactly `k` packets is served when it is the longest of the
//! sample, which happens at rate `(1 - x_{k+1})^d - (1 - x_k)^d` per buffer, so
//!
//! ```text
//! dx_k/dt = lambda (x_{k-1} - x_k) - [(1 - x_{k+1})^d - (1 - x_k)^d],   x_0 = 1, x_{K+1} = 0.
//! ```
//!
//! Summing from level `k` up gives, at a fixed point of the untruncated system,
//! `lambda x_{k-1} = 1 - (1 - x_k)^d` (packets enter the levels `>= k` as fast as the scheduler
//! takes them out), hence the closed form `x_k = 1 - (1 - lambda x_{k-1})^(1/d)`
//! ([`fixed_point_tail`]). Stable iff `lambda < 1`.

use crate::finite::{FiniteSystem, Simulation};
use crate::models::{check_d, check_levels, tail_at};
use crate::registry::{read_spec, Kind, KindSpec, Param, ParamRange};
use crate::{
    out_of_range, short_number, AnalyticJacobian, Jacobian, MeanFieldModel, ModelError, Observables, PartialOrder, Sparsity, Stability,
    StateLayout, TransitionVisitor, Transitions,
};

/// `(1 - x)^e`, with `x` clamped to `[0, 1]`. For `e > 16`, `exp(e ln_1p(-x))`: `1 - x` rounds
/// with a relative error up to 1.1e-16, which `powi` multiplies by `e` (7e-13 in the drift at
/// `d = 10000`, near the solver's residual target), while `ln_1p` keeps it at round-off.
#[inline]
fn one_minus_pow(x: f64, e: u32) -> f64 {
    let x = x.clamp(0.0, 1.0);
    if e <= 16 {
        (1.0 - x).powi(e as i32)
    } else if x >= 1.0 {
        0.0
    } else {
        (e as f64 * (-x).ln_1p()).exp()
    }
}

/// `(1 - x)^d`, with `x` clamped to `[0, 1]`.
#[inline]
fn empty_pow(x: f64, d: u32) -> f64 {
    one_minus_pow(x, d)
}

/// The untruncated fixed point `x_1 .. x_levels` of LQF(d): `x_k = 1 - (1 - lambda x_{k-1})^(1/d)`,
/// `x_0 = 1`, evaluated as `-expm1(ln_1p(-lambda x_{k-1}) / d)` so that the geometric decay of
/// the tail keeps its relative precision (no `1 - (1 - tiny)` cancellation). For `lambda < 1`.
///
/// Source: derived in docs/models/lqf.md (balance of the levels `>= k`).
///
/// ```
/// use mfq_model::models::lqf::fixed_point_tail;
/// let x = fixed_point_tail(0.9, 2, 3);
/// // x_1 = 1 - sqrt(0.1)
/// assert!((x[0] - (1.0 - 0.1f64.sqrt())).abs() < 1e-15);
/// ```
pub fn fixed_point_tail(lambda: f64, d: u32, levels: usize) -> Vec<f64> {
    let mut prev = 1.0f64;
    (0..levels)
        .map(|_| {
            prev = -((-lambda * prev).ln_1p() / d as f64).exp_m1();
            prev
        })
        .collect()
}

/// The large-`d` limits of the fixed point: `d^k x_k -> c_k` as `d -> infinity`, with
/// `c_1 = -ln(1 - lambda)` and `c_k = lambda c_{k-1}` (from `x_k ~ lambda x_{k-1} / d` once
/// `x_{k-1}` is small). Returns `[c_1, .., c_levels]`. Derived in docs/models/lqf.md.
pub fn large_d_constants(lambda: f64, levels: usize) -> Vec<f64> {
    let mut c = -(-lambda).ln_1p() / lambda;
    (0..levels)
        .map(|_| {
            c *= lambda;
            c
        })
        .collect()
}

/// LQF(d) mean field, truncated at `levels` = K (the finite-buffer-K system: a packet arriving
/// at a buffer holding `K` packets is lost). State (tail form, length `K`): `x[k-1] = x_k`, the
/// fraction of buffers with at least `k` packets. The Jacobian is tridiagonal and analytic; the
/// drift is cooperative (`d f_k / d x_{k-1} = lambda`, `d f_k / d x_{k+1} = d (1 - x_{k+1})^(d-1)`).
///
/// Source: system constructed from the abstract of Dieker and Suk, Adv. Appl. Probab. 47(4),
/// 2015 (arXiv 1306.5347); ODE and fixed point derived here (module docs, docs/models/lqf.md).
///
/// ```
/// use mfq_model::models::Lqf;
/// use mfq_model::MeanFieldModel;
/// let m = Lqf::new(0.9, 2, 40).unwrap();
/// let x = m.analytic_fixed_point().unwrap();
/// let mut dx = vec![0.0; 40];
/// m.drift(&x, &mut dx);
/// assert!(dx.iter().all(|v| v.abs() < 1e-12));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Lqf {
    lambda: f64,
    d: u32,
    levels: usize,
}

/// `lambda` finite and `> 0`.
fn check_lambda(lambda: f64) -> Result<(), ModelError> {
    if lambda.is_finite() && lambda > 0.0 {
        Ok(())
    } else {
        Err(out_of_range("model.lambda", lambda, "a finite number > 0 (arrival rate per buffer; the system is stable iff lambda < 1)"))
    }
}

impl Lqf {
    /// LQF(d) at arrival rate `lambda` per buffer, `d` buffers sampled per service opportunity,
    /// truncated at `levels` = K.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.lambda` (not finite or `<= 0`), `model.d` (outside
    /// `[1, 10000]`) or `truncation.levels` (0). `lambda >= 1` is accepted (the truncated system
    /// is well defined) and reported by [`MeanFieldModel::stability`], which the fixed-point
    /// solver refuses.
    pub fn new(lambda: f64, d: u32, levels: usize) -> Result<Self, ModelError> {
        check_lambda(lambda)?;
        check_d(d)?;
        check_levels(levels)?;
        Ok(Lqf { lambda, d, levels })
    }
}

impl MeanFieldModel for Lqf {
    fn name(&self) -> String {
        format!("LQF({})", self.d)
    }
    fn dim(&self) -> usize {
        self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        // (1 - x_k)^d carried from one level to the next
        let mut x_prev = 1.0;
        let mut xk = tail_at(x, 1);
        let mut e_k = empty_pow(xk, self.d);
        for (k, out) in dx[..x.len()].iter_mut().enumerate() {
            let x_next = tail_at(x, k + 2);
            let e_next = empty_pow(x_next, self.d);
            *out = self.lambda * (x_prev - xk) - (e_next - e_k);
            x_prev = xk;
            xk = x_next;
            e_k = e_next;
        }
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Tail { levels: self.levels }
    }
    /// Tail, packets per buffer, response time (Little), `prob_wait` = `x_1 - x_K` (an arriving
    /// packet finds its buffer non-empty and not full, PASTA), loss `x_K`; extras `wasted_service`
    /// `(1 - x_1)^d` (fraction of opportunities that find every sampled buffer empty) and
    /// `d_x1` = `d x_1` (tends to `-ln(1 - lambda)` as `d` grows).
    fn observables(&self, x: &[f64]) -> Observables {
        let x1 = tail_at(x, 1);
        let loss = tail_at(x, self.levels);
        let mut o = Observables::from_tail(x, self.lambda, Some(Observables::waiting(x1, loss)), loss);
        o.extras = vec![("wasted_service".into(), empty_pow(x1, self.d)), ("d_x1".into(), self.d as f64 * x1)];
        o
    }
    fn order(&self) -> Option<PartialOrder> {
        Some(PartialOrder::Componentwise)
    }
    fn stability(&self) -> Stability {
        if self.lambda < 1.0 {
            Stability::Stable { condition: "lambda < 1 (LQF(d): the scheduler's capacity is one packet per buffer per unit time)".into() }
        } else {
            Stability::Unstable {
                reason: format!(
                    "model.lambda = {} >= 1: arrivals exceed the scheduler's capacity (LQF(d) is stable iff lambda < 1, allowed: 0 < lambda < 1)",
                    short_number(self.lambda)
                ),
            }
        }
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        (self.lambda < 1.0).then(|| fixed_point_tail(self.lambda, self.d, self.levels))
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
    fn transitions(&self) -> Option<&dyn Transitions> {
        Some(self)
    }
}

impl AnalyticJacobian for Lqf {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Banded { lower: 1, upper: 1 }
    }
    /// `J[k][k-1] = lambda`, `J[k][k] = -lambda - d (1 - x_k)^(d-1)`,
    /// `J[k][k+1] = d (1 - x_{k+1})^(d-1)` (1-based levels).
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        let n = x.len();
        let d = self.d as f64;
        let g = |v: f64| d * one_minus_pow(v, self.d - 1);
        jac.clear();
        for i in 0..n {
            if i >= 1 {
                jac.set(i, i - 1, self.lambda);
            }
            jac.set(i, i, -self.lambda - g(x[i]));
            if i + 1 < n {
                jac.set(i, i + 1, g(x[i + 1]));
            }
        }
    }
}

impl Transitions for Lqf {
    /// A packet arrives at a buffer with exactly `k - 1` packets (rate `lambda (x_{k-1} - x_k)`,
    /// `x_k` up by `1/n`); the scheduler serves a buffer with exactly `k` packets (rate
    /// `(1 - x_{k+1})^d - (1 - x_k)^d`, `x_k` down by `1/n`).
    ///
    /// The service rate is not clamped at 0: it is `>= 0` on every state (`x_{k+1} <= x_k`),
    /// and the refined terms of order 2 take its derivatives on a grid of step 1/64 that leaves
    /// the ordered states (`crate` docs of `mfq_fixpoint::refined::local`), where a clamp
    /// bent it (sum A = -1885.6 instead of 3.44 at `d = 2`, `K = 5` with a buffer; the same
    /// drift as a generic file and the exact chain gave the latter). The population process
    /// floors rates at 0 itself.
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        for k in 1..=x.len() {
            visit(&[(k - 1, 1.0)], self.lambda * (tail_at(x, k - 1) - tail_at(x, k)));
            let served = empty_pow(tail_at(x, k + 1), self.d) - empty_pow(tail_at(x, k), self.d);
            visit(&[(k - 1, -1.0)], served);
        }
    }
}

/// `kind = "lqf-d"`: the parameters of [`Lqf`] in a model file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LqfSpec {
    /// Arrival rate per buffer.
    pub lambda: f64,
    /// Buffers sampled per service opportunity (`>= 1`; at most the number of buffers `n` of a
    /// simulated system).
    pub d: u32,
}

/// The `lqf-d` kind.
pub static LQF: Kind = Kind {
    name: "lqf-d",
    title: "Randomised longest-queue-first LQF(d): n buffers, a scheduler of rate n samples d buffers and serves the longest; d = n is LQF",
    params: &[
        Param {
            name: "lambda",
            meaning: "arrival rate per buffer (load rho: the scheduler serves n buffers at total rate n)",
            unit: "packets per unit time per buffer",
            allowed: "> 0; stable iff < 1",
            default: None,
            range: Some(ParamRange::above(0.0)),
        },
        Param {
            name: "d",
            meaning: "number of buffers sampled (without replacement) per service opportunity",
            unit: "",
            allowed: "integer in [1, 10000]; at most the number n of buffers when simulated",
            default: None,
            range: Some(ParamRange::integers(1.0, Some(10000.0))),
        },
    ],
    sources:
        "Dieker, Suk, Adv. Appl. Probab. 47(4), 2015, arXiv 1306.5347 (abstract; system, ODE and closed-form fixed point constructed here)",
    example: "models/lqf-d2.toml",
    docs: "docs/models/lqf.md",
    read: read_spec::<LqfSpec>,
};

impl KindSpec for LqfSpec {
    fn kind(&self) -> &'static Kind {
        &LQF
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(Lqf::new(self.lambda, self.d, levels)?))
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        check_lambda(self.lambda)?;
        check_d(self.d)?;
        Ok(Simulation::System(FiniteSystem::Lqf { lambda: self.lambda, d: self.d }))
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
            lambda in 0.05f64..0.999, d in 1u32..40, seed in proptest::collection::vec(0.0f64..1.0, 2..25)
        ) {
            let m = Lqf::new(lambda, d, seed.len()).unwrap();
            let x = interior_tail(&seed);
            prop_assert!(jacobian_error(&m, &x) < 1e-6);
            prop_assert!(transitions_drift_error(&m, &x) < 1e-15);
        }
    }

    /// The closed form is a zero of the untruncated drift: at a long truncation (where `x_K`
    /// is below round-off) every component vanishes to round-off; independently of the
    /// recursion, `lambda x_{k-1} = 1 - (1 - x_k)^d` holds level by level.
    #[test]
    fn closed_form_is_a_fixed_point() {
        for (lambda, d) in [(0.5, 1), (0.9, 2), (0.9, 5), (0.99, 3), (0.7, 100), (0.95, 10_000)] {
            let m = Lqf::new(lambda, d, 200).unwrap();
            let x = m.analytic_fixed_point().unwrap();
            let mut dx = vec![0.0; 200];
            m.drift(&x, &mut dx);
            let worst = dx.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(worst < 1e-13, "lambda={lambda} d={d}: {worst}");
            let mut prev = 1.0;
            for &xk in x.iter().take(5) {
                // 1 - (1 - x_k)^d without cancellation
                let rhs = -(d as f64 * (-xk).ln_1p()).exp_m1();
                assert!((lambda * prev - rhs).abs() < 1e-12 * (lambda * prev).max(1e-300), "{lambda} {d}: {prev} {xk}");
                prev = xk;
            }
        }
        // d = 1: random service, independent M/M/1 queues, x_k = lambda^k
        let x = fixed_point_tail(0.8, 1, 6);
        for (k, v) in x.iter().enumerate() {
            assert!((v - 0.8f64.powi(k as i32 + 1)).abs() < 1e-15, "{k}: {v}");
        }
    }

    /// `d^k x_k` approaches the constants `c_k` as `d` grows, with an error of order `1/d`.
    #[test]
    fn large_d_scaling() {
        let lambda = 0.9;
        let c = large_d_constants(lambda, 3);
        assert!((c[0] - 10f64.ln()).abs() < 1e-14);
        for d in [1_000u32, 10_000] {
            let x = fixed_point_tail(lambda, d, 3);
            for k in 0..3 {
                let scaled = (d as f64).powi(k as i32 + 1) * x[k];
                let rel = (scaled - c[k]).abs() / c[k];
                assert!(rel < 5.0 * (k as f64 + 1.0) / d as f64 * c[0], "d={d} k={}: {scaled} vs {}", k + 1, c[k]);
            }
        }
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let e = Lqf::new(0.9, 0, 10).unwrap_err();
        assert!(e.to_string().contains("model.d = 0"), "{e}");
        let e = Lqf::new(-0.5, 2, 10).unwrap_err();
        assert!(e.to_string().contains("model.lambda = -0.5"), "{e}");
        assert!(Lqf::new(f64::NAN, 2, 10).is_err());
        assert!(Lqf::new(0.5, 20_000, 10).unwrap_err().to_string().contains("model.d = 20000"));
        match Lqf::new(1.2, 2, 10).unwrap().stability() {
            Stability::Unstable { reason } => assert!(reason.contains("model.lambda = 1.2") && reason.contains("< 1"), "{reason}"),
            s => panic!("{s:?}"),
        }
    }
}
