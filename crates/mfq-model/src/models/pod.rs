//! Pod (power-of-d) with erroneous load comparisons: load-independent and load-dependent errors.

use crate::finite::{FiniteSystem, Routing, Simulation};
use crate::models::params;
use crate::models::{
    check_d, check_lambda, check_levels, local_tail_drift, local_tail_fixed_point, local_tail_jacobian, stable_below_one, tail_at,
    tail_transitions,
};
use crate::registry::{read_spec, Kind, KindSpec};
use crate::registry::{Param, ParamRange};
use crate::{out_of_range, Jacobian, MeanFieldModel, ModelError, Observables, PartialOrder, Sparsity, Stability, StateLayout};
use crate::{AnalyticJacobian, TransitionVisitor, Transitions};

fn check_eps(eps: f64) -> Result<(), ModelError> {
    if (0.0..=1.0).contains(&eps) {
        Ok(())
    } else {
        Err(out_of_range("model.eps", eps, "a probability in [0, 1]"))
    }
}

/// Pod with **load-independent** comparison errors: each arrival samples `d` servers; with
/// probability `1 - eps` it joins a least-loaded one, with probability `eps` (an error) a
/// most-loaded one. Unit-rate FCFS servers, exponential job sizes.
///
/// State: tail form, `x[k-1] = x_k`. With `phi(x) = (1 - eps) x^d + eps (1 - (1 - x)^d)` the
/// probability that an arrival joins a server with at least `j` jobs (min of `d` samples `>= j`
/// w.p. `x_j^d`, max `>= j` w.p. `1 - (1 - x_j)^d`):
///
/// ```text
/// dx_k/dt = lambda (phi(x_{k-1}) - phi(x_k)) - (x_k - x_{k+1}),   x_0 = 1.
/// ```
///
/// Fixed point: the recursion `x_1 = lambda`, `x_k = lambda phi(x_{k-1})` (sum the ODE over
/// levels `>= k`). Stability: `lambda < min(1, 1/(eps d))`: for `eps > 1/d` the map
/// `x -> lambda phi(x)` has an interior fixed point once `lambda >= 1/(eps d)` and the tail no
/// longer vanishes. `d = 2, eps = 1/2` gives `phi(x) = x`: exactly random routing.
///
/// Source: S. Bhambay, A. Mukhopadhyay, T. Vasantam, "The impact of load comparison errors on
/// the power-of-d load balancing", Performance Evaluation 2024, art. 102408 (model and the
/// `eps <= 1/d` claim from the abstract). The ODE, the recursion and the threshold
/// `1/(eps d)` are derived in docs/models/pod-errors.md and checked against the finite-N
/// simulation; the paper's own display could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct PodLi {
    lambda: f64,
    d: u32,
    eps: f64,
    levels: usize,
}

impl PodLi {
    /// Load-independent errors with probability `eps`, `d` samples, truncation `levels` = K.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] for `lambda <= 0` or not finite, `d = 0`, `eps` outside
    /// `[0, 1]`, `levels = 0`.
    pub fn new(lambda: f64, d: u32, eps: f64, levels: usize) -> Result<Self, ModelError> {
        check_lambda(lambda)?;
        check_d(d)?;
        check_eps(eps)?;
        check_levels(levels)?;
        Ok(PodLi { lambda, d, eps, levels })
    }

    /// `phi(x)`: probability that an arrival joins a server with at least `j` jobs when `x = x_j`
    /// (to round-off relative to `phi(x)` itself, also for tiny `x`: see [`at_least_one_of`]).
    #[inline]
    pub fn phi(&self, x: f64) -> f64 {
        let d = self.d as i32;
        (1.0 - self.eps) * x.powi(d) + self.eps * at_least_one_of(x, self.d)
    }

    #[inline]
    fn dphi(&self, x: f64) -> f64 {
        let d = self.d as i32;
        self.d as f64 * ((1.0 - self.eps) * x.powi(d - 1) + self.eps * (1.0 - x).powi(d - 1))
    }

    /// The load beyond which the system is unstable: `min(1, 1/(eps d))`.
    pub fn lambda_max(&self) -> f64 {
        let ed = self.eps * self.d as f64;
        if ed > 1.0 {
            1.0 / ed
        } else {
            1.0
        }
    }
}

/// `1 - (1 - x)^d` (the probability that at least one of `d` samples has what a fraction `x`
/// has) as `x sum_{j<d} (1 - x)^j`: relative error `~d` round-offs for every `x` in `[0, 1]`,
/// where the direct form loses all digits below `x ~ 1e-16` (and relative accuracy long
/// before), which a tail read on a log scale shows.
#[inline]
pub(crate) fn at_least_one_of(x: f64, d: u32) -> f64 {
    let (c, mut p, mut s) = (1.0 - x, 1.0, 1.0);
    for _ in 1..d {
        p *= c;
        s += p;
    }
    x * s
}

impl MeanFieldModel for PodLi {
    fn name(&self) -> String {
        format!("Pod-LI(d={}, eps={})", self.d, self.eps)
    }
    fn dim(&self) -> usize {
        self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        local_tail_drift(x, dx, self.lambda, |v| self.phi(v));
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Tail { levels: self.levels }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let loss = self.phi(tail_at(x, self.levels));
        let pw = Observables::waiting(self.phi(tail_at(x, 1)), loss);
        Observables::from_tail(x, self.lambda, Some(pw), loss)
    }
    fn order(&self) -> Option<PartialOrder> {
        Some(PartialOrder::Componentwise)
    }
    fn stability(&self) -> Stability {
        let lmax = self.lambda_max();
        if lmax < 1.0 && self.lambda >= lmax {
            Stability::Unstable {
                reason: format!(
                    "lambda = {} >= 1/(eps d) = {:.6}: with eps = {} > 1/d = {:.6} erroneous comparisons make the tail \
                     decay no faster than (lambda eps d)^k (Pod with load-independent errors is stable iff lambda < min(1, 1/(eps d)))",
                    crate::short_number(self.lambda),
                    lmax,
                    self.eps,
                    1.0 / self.d as f64
                ),
            }
        } else if lmax < 1.0 {
            Stability::Stable { condition: format!("lambda < 1/(eps d) = {lmax:.6}") }
        } else {
            stable_below_one(self.lambda, "Pod with load-independent errors, eps <= 1/d")
        }
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        matches!(self.stability(), Stability::Stable { .. }).then(|| local_tail_fixed_point(self.levels, self.lambda, |v| self.phi(v)))
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
    fn transitions(&self) -> Option<&dyn Transitions> {
        Some(self)
    }
}

impl AnalyticJacobian for PodLi {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Banded { lower: 1, upper: 1 }
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        local_tail_jacobian(x, jac, self.lambda, |v| self.dphi(v));
    }
}

impl Transitions for PodLi {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        tail_transitions(x, self.lambda, |j| self.phi(tail_at(x, j)), visit);
    }
}

/// Pod with **load-dependent** comparison errors: each arrival samples `d` servers; if the
/// spread `max - min` of their queue lengths is at most `g`, the comparison errs with
/// probability `eps` and the job joins a most-loaded sampled server; otherwise it joins a
/// least-loaded one. `g = 0` is plain JSQ(d); `g >= K` is the load-independent model.
///
/// State: tail form. With `m`, `M` the min and max of `d` i.i.d. samples from the occupancy
/// law and `P(m >= a, M <= c) = (x_a - x_{c+1})^d`, the probability of joining a server with at
/// least `j` jobs is
///
/// ```text
/// A_j = x_j^d + eps sum_{a = max(0, j-g)}^{j-1} P(m = a, j <= M <= a + g),
/// P(m = a, j <= M <= a+g) = [(x_a - x_{a+g+1})^d - (x_{a+1} - x_{a+g+1})^d]
///                         - [(x_a - x_j)^d - (x_{a+1} - x_j)^d],
/// dx_k/dt = lambda (A_{k-1} - A_k) - (x_k - x_{k+1}),   x_0 = 1.
/// ```
///
/// The fixed point solves `x_k = lambda A_{k-1}(x)`, which is implicit for `g >= 1` (no forward
/// recursion): it is found by the fixed-point solver. The Jacobian is banded (`g + 1` lower,
/// `g` upper diagonals) and analytic. Stability: `lambda < 1` is necessary; sufficiency is
/// the paper's claim (benefits retained for any `g`, `eps` as `lambda -> 1`), not proven here;
/// the solvers also watch the mass at `K`.
///
/// Source: S. Bhambay, A. Mukhopadhyay, T. Vasantam, "The Power of Two Choices with Load
/// Comparison Errors", arXiv 2303.00869 (MobiHoc 2023), and Performance Evaluation 2024,
/// art. 102408 ("less than or equal to a constant g", from the abstract). `A_j` is derived in
/// docs/models/pod-errors.md and was checked against Monte Carlo and the finite-N simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct PodLd {
    lambda: f64,
    d: u32,
    eps: f64,
    g: usize,
    levels: usize,
}

impl PodLd {
    /// Load-dependent errors (`eps`, threshold `g`), `d` samples, truncation `levels` = K.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] for `lambda <= 0` or not finite, `d = 0`, `eps` outside
    /// `[0, 1]`, `levels = 0`.
    pub fn new(lambda: f64, d: u32, eps: f64, g: u32, levels: usize) -> Result<Self, ModelError> {
        check_lambda(lambda)?;
        check_d(d)?;
        check_eps(eps)?;
        check_levels(levels)?;
        Ok(PodLd { lambda, d, eps, g: g as usize, levels })
    }

    #[inline]
    fn pw(&self, v: f64) -> f64 {
        v.max(0.0).powi(self.d as i32)
    }

    #[inline]
    fn dpw(&self, v: f64) -> f64 {
        if v > 0.0 {
            self.d as f64 * v.powi(self.d as i32 - 1)
        } else if self.d == 1 {
            1.0
        } else {
            0.0
        }
    }

    /// `A_j(x)`: probability that an arrival joins a server with at least `j` jobs.
    pub fn arrival_tail(&self, x: &[f64], j: usize) -> f64 {
        if j == 0 {
            return 1.0;
        }
        let xj = tail_at(x, j);
        let mut err = 0.0;
        for a in j.saturating_sub(self.g)..j {
            let (xa, xa1, xg) = (tail_at(x, a), tail_at(x, a + 1), tail_at(x, a + self.g + 1));
            err += self.pw(xa - xg) - self.pw(xa1 - xg) - self.pw(xa - xj) + self.pw(xa1 - xj);
        }
        self.pw(xj) + self.eps * err
    }

    /// Calls `add(i, dA_j/dx_i)` for the (1-based) tail indices `i` in `1..=K` that `A_j` depends on.
    fn arrival_tail_gradient(&self, x: &[f64], j: usize, mut add: impl FnMut(usize, f64)) {
        let k = self.levels;
        let mut put = |i: usize, v: f64| {
            if (1..=k).contains(&i) && (0.0..=1.0).contains(&x[i - 1]) {
                add(i, v)
            }
        };
        if j == 0 {
            return;
        }
        let xj = tail_at(x, j);
        put(j, self.dpw(xj));
        for a in j.saturating_sub(self.g)..j {
            let c = a + self.g + 1;
            let (xa, xa1, xc) = (tail_at(x, a), tail_at(x, a + 1), tail_at(x, c));
            // d/dx of eps [pw(xa - xc) - pw(xa1 - xc) - pw(xa - xj) + pw(xa1 - xj)]
            let t1 = self.eps * self.dpw(xa - xc);
            let t2 = self.eps * self.dpw(xa1 - xc);
            let t3 = self.eps * self.dpw(xa - xj);
            let t4 = self.eps * self.dpw(xa1 - xj);
            put(a, t1 - t3);
            put(a + 1, -t2 + t4);
            put(c, -t1 + t2);
            put(j, t3 - t4);
        }
    }
}

impl MeanFieldModel for PodLd {
    fn name(&self) -> String {
        format!("Pod-LD(d={}, eps={}, g={})", self.d, self.eps, self.g)
    }
    fn dim(&self) -> usize {
        self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        let mut a_prev = 1.0;
        for k in 1..=self.levels {
            let a_k = self.arrival_tail(x, k);
            dx[k - 1] = self.lambda * (a_prev - a_k) - (tail_at(x, k) - tail_at(x, k + 1));
            a_prev = a_k;
        }
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Tail { levels: self.levels }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let loss = self.arrival_tail(x, self.levels);
        let pw = Observables::waiting(self.arrival_tail(x, 1), loss);
        Observables::from_tail(x, self.lambda, Some(pw), loss)
    }
    fn order(&self) -> Option<PartialOrder> {
        Some(PartialOrder::Componentwise)
    }
    fn stability(&self) -> Stability {
        if self.lambda >= 1.0 {
            stable_below_one(self.lambda, "Pod with load-dependent errors")
        } else {
            Stability::Stable {
                condition: "lambda < 1 (necessary; sufficiency for every g and eps is the paper's claim, and the solver \
                            checks the mass at the truncation level)"
                    .into(),
            }
        }
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
    fn transitions(&self) -> Option<&dyn Transitions> {
        Some(self)
    }
}

impl AnalyticJacobian for PodLd {
    fn sparsity(&self) -> Sparsity {
        // no band is wider than the matrix (a huge g would otherwise allocate K (3g + 2) entries)
        let widest = self.levels.saturating_sub(1);
        Sparsity::Banded { lower: (self.g + 1).min(widest), upper: self.g.max(1).min(widest) }
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        jac.clear();
        let n = self.levels;
        for k in 1..=n {
            let row = k - 1;
            let lam = self.lambda;
            self.arrival_tail_gradient(x, k - 1, |i, v| jac.add(row, i - 1, lam * v));
            self.arrival_tail_gradient(x, k, |i, v| jac.add(row, i - 1, -lam * v));
            if (0.0..=1.0).contains(&x[row]) {
                jac.add(row, row, -1.0);
            }
            if k < n && (0.0..=1.0).contains(&x[row + 1]) {
                jac.add(row, row + 1, 1.0);
            }
        }
    }
}

impl Transitions for PodLd {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        tail_transitions(x, self.lambda, |j| self.arrival_tail(x, j), visit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::testutil::{interior_tail, jacobian_error, transitions_drift_error};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn li_jacobian_equals_finite_differences(
            lambda in 0.05f64..0.99, d in 1u32..6, eps in 0.0f64..1.0,
            seed in proptest::collection::vec(0.0f64..1.0, 2..20)
        ) {
            let m = PodLi::new(lambda, d, eps, seed.len()).unwrap();
            prop_assert!(jacobian_error(&m, &interior_tail(&seed)) < 1e-6);
            prop_assert!(transitions_drift_error(&m, &interior_tail(&seed)) < 1e-15);
        }

        #[test]
        fn ld_jacobian_equals_finite_differences(
            lambda in 0.05f64..0.99, d in 1u32..5, eps in 0.0f64..1.0, g in 0u32..4,
            seed in proptest::collection::vec(0.0f64..1.0, 2..20)
        ) {
            let m = PodLd::new(lambda, d, eps, g, seed.len()).unwrap();
            prop_assert!(jacobian_error(&m, &interior_tail(&seed)) < 1e-6);
            prop_assert!(transitions_drift_error(&m, &interior_tail(&seed)) < 1e-14);
        }

        /// g = 0 is plain JSQ(d); g >= K is the load-independent model (same drift).
        #[test]
        fn ld_limits_are_jsq_and_li(
            lambda in 0.05f64..0.99, d in 1u32..5, eps in 0.0f64..1.0,
            seed in proptest::collection::vec(0.0f64..1.0, 2..15)
        ) {
            let k = seed.len();
            let x = interior_tail(&seed);
            let mut a = vec![0.0; k];
            let mut b = vec![0.0; k];
            PodLd::new(lambda, d, eps, 0, k).unwrap().drift(&x, &mut a);
            crate::models::Jsq::new(lambda, d, k).unwrap().drift(&x, &mut b);
            for i in 0..k { prop_assert!((a[i] - b[i]).abs() < 1e-14); }
            PodLd::new(lambda, d, eps, k as u32 + 1, k).unwrap().drift(&x, &mut a);
            PodLi::new(lambda, d, eps, k).unwrap().drift(&x, &mut b);
            for i in 0..k { prop_assert!((a[i] - b[i]).abs() < 1e-13, "{} vs {}", a[i], b[i]); }
        }
    }

    #[test]
    fn eps_outside_unit_interval_is_rejected() {
        let e = PodLi::new(0.5, 2, 1.5, 10).unwrap_err();
        assert!(e.to_string().contains("model.eps = 1.5"), "{e}");
        assert!(PodLd::new(0.5, 2, -0.1, 1, 10).is_err());
    }

    /// Bhambay et al. (abstract): for eps > 1/d the stability region shrinks to lambda < 1/(eps d).
    #[test]
    fn li_unstable_beyond_one_over_eps_d() {
        let m = PodLi::new(0.7, 3, 0.5, 20).unwrap();
        assert!(matches!(m.stability(), Stability::Unstable { .. }));
        let m = PodLi::new(0.6, 3, 0.5, 20).unwrap();
        assert!(matches!(m.stability(), Stability::Stable { .. }));
    }
}

/// `kind = "pod-li"`: the parameters of [`PodLi`] in a model file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PodLiSpec {
    /// Arrival rate per server.
    pub lambda: f64,
    /// Servers sampled per arrival.
    pub d: u32,
    /// Error probability in `[0, 1]`.
    pub eps: f64,
}

/// `kind = "pod-ld"`: the parameters of [`PodLd`] in a model file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PodLdSpec {
    /// Arrival rate per server.
    pub lambda: f64,
    /// Servers sampled per arrival.
    pub d: u32,
    /// Error probability in `[0, 1]`.
    pub eps: f64,
    /// Errors happen only when `max - min <= g` among the sampled queue lengths.
    pub g: u32,
}

/// The `pod-li` kind.
pub static POD_LI: Kind = Kind {
    name: "pod-li",
    title: "Pod with load-independent comparison errors",
    params: &[params::LAMBDA_POD_LI, params::D, params::EPS],
    sources: "Bhambay, Mukhopadhyay, Vasantam, Perf. Eval. 2024 (art. 102408); MobiHoc 2023 (d = 2)",
    example: "models/pod-errors-li.toml",
    docs: "docs/models/pod-errors.md",
    read: read_spec::<PodLiSpec>,
};

/// The `pod-ld` kind.
pub static POD_LD: Kind = Kind {
    name: "pod-ld",
    title: "Pod with load-dependent comparison errors (error only if max - min <= g)",
    params: &[
        params::LAMBDA,
        params::D,
        params::EPS,
        Param {
            name: "g",
            meaning: "threshold on max - min of the sampled queue lengths",
            unit: "jobs",
            allowed: "integer >= 0",
            default: None,
            range: Some(ParamRange::integers(0.0, None)),
        },
    ],
    sources: "Bhambay, Mukhopadhyay, Vasantam, arXiv 2303.00869 (MobiHoc 2023); Perf. Eval. 2024",
    example: "models/pod-errors-ld.toml",
    docs: "docs/models/pod-errors.md",
    read: read_spec::<PodLdSpec>,
};

impl KindSpec for PodLiSpec {
    fn kind(&self) -> &'static Kind {
        &POD_LI
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(PodLi::new(self.lambda, self.d, self.eps, levels)?))
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        Ok(Simulation::System(FiniteSystem::Queues { lambda: self.lambda, routing: Routing::Pod { d: self.d, eps: self.eps, g: None } }))
    }
}

impl KindSpec for PodLdSpec {
    fn kind(&self) -> &'static Kind {
        &POD_LD
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(PodLd::new(self.lambda, self.d, self.eps, self.g, levels)?))
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        Ok(Simulation::System(FiniteSystem::Queues {
            lambda: self.lambda,
            routing: Routing::Pod { d: self.d, eps: self.eps, g: Some(self.g) },
        }))
    }
}
