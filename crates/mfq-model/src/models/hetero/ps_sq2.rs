//! Randomised SQ(2)-type routing on heterogeneous processor-sharing servers.

use super::{check_hetero_lambda, class_birth_death, class_observables, class_tail, empty_and_full, idx, Classes, ServerClass};
use crate::models::check_levels;
use crate::{out_of_range, Jacobian, MeanFieldModel, ModelError, NamedState, Observables, PartialOrder, Sparsity, Stability, StateLayout};
use crate::{AnalyticJacobian, TransitionVisitor, Transitions};
use serde::{Deserialize, Serialize};

/// How the two servers of an arrival are sampled: each sample is, independently, of class
/// `i` with probability `p_i` (uniformly within the class). Key `sampling` of the model file.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Sampling {
    /// `"uniform"` (default): `p_j = gamma_j`, uniform over all servers.
    #[default]
    Uniform,
    /// `"capacity"`: `p_j = gamma_j C_j / sum_i gamma_i C_i`, in proportion to capacity
    /// (restores the maximal stability region `lambda < sum_j gamma_j C_j`).
    Capacity,
    /// An array `[p_1, ..., p_M]`, one per class in file order, each `>= 0`, summing to 1
    /// within `1e-9`.
    Probabilities(Vec<f64>),
}

impl Serialize for Sampling {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Sampling::Uniform => s.serialize_str("uniform"),
            Sampling::Capacity => s.serialize_str("capacity"),
            Sampling::Probabilities(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Sampling {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Sampling;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"uniform\", \"capacity\" or an array of per-class sampling probabilities")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Sampling, E> {
                match v {
                    "uniform" => Ok(Sampling::Uniform),
                    "capacity" => Ok(Sampling::Capacity),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Sampling, A::Error> {
                let mut p = Vec::new();
                while let Some(v) = seq.next_element::<f64>()? {
                    p.push(v);
                }
                Ok(Sampling::Probabilities(p))
            }
        }
        d.deserialize_any(V)
    }
}

/// Which sampled server an arrival joins (the one with the smaller cost; ties at random).
/// Key `rule` of the model file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostRule {
    /// `"sq2"` (default): cost `n`, the number of jobs (Mukhopadhyay and Mazumdar, TCNS 2016).
    #[default]
    Sq2,
    /// `"lsc"`: cost `n / C_j`, the least shadow cost, i.e. the highest rate per job `C_j / n`
    /// (Mukhopadhyay and Mazumdar, SIGMETRICS 2014 poster; arXiv 1311.5806). Two idle servers
    /// tie whatever their capacities.
    Lsc,
    /// `"lsc-plus-one"`: cost `(n + 1) / C_j`, the rate per job after joining (not the papers'
    /// definition; listed because implementers often pick it). Prefers the faster idle server.
    LscPlusOne,
}

impl CostRule {
    fn label(self) -> &'static str {
        match self {
            CostRule::Sq2 => "SQ(2)",
            CostRule::Lsc => "LSC n/C",
            CostRule::LscPlusOne => "LSC (n+1)/C",
        }
    }
}

/// Randomised SQ(2)-type routing on heterogeneous processor-sharing servers: each arrival
/// samples two servers (independently, class `i` with probability `p_i`, see [`Sampling`]) and
/// joins the one with the smaller cost ([`CostRule`]); **ties are broken uniformly at
/// random**. Class `j` (fraction `gamma_j`) has capacity `C_j` (key `speed`), exponential job
/// sizes of mean 1 (exponential PS and FCFS have the same occupancy process, so this is also
/// the FCFS mean field; the fixed point is insensitive to the size law per the papers).
///
/// State: [`StateLayout::ClassTail`], `x_{j,k}` = fraction of class-`j` servers with at least
/// `k` jobs (see [the module docs](super)); `s_{i,n} = x_{i,n} - x_{i,n+1}`. With `other` a
/// sampled server of class `i` w.p. `p_i` and occupancy law `s_{i,.}`:
///
/// ```text
/// R_{j,k} = lambda (p_j / gamma_j) [ 2 P(cost(other) > cost(j,k)) + P(cost(other) = cost(j,k)) ]
/// dx_{j,k}/dt = R_{j,k-1} (x_{j,k-1} - x_{j,k}) - C_j (x_{j,k} - x_{j,k+1}),   k = 1..K,  x_{j,0} = 1
/// ```
///
/// Because `cost(i, n)` increases with `n`, `P(cost(other) > cost(j,k)) = sum_i p_i x_{i,t}` and
/// `P(=) = sum_i p_i s_{i,t-1}` (when the cost `t - 1` ties) for a threshold `t = t(i, j, k)`
/// that does not depend on the state: it is computed once, **exactly**. Capacities are read as
/// decimal rationals (the shortest decimal representation of each number in the file, e.g.
/// `0.4 = 4/10`), put on a common scale `c_j = C_j 10^e` (integers), and costs compared by
/// integer cross-multiplication, `n / C_i` vs `k / C_j` as `n c_j` vs `k c_i` in 128-bit
/// integers. So `n/1.6` and `m/0.4` tie exactly when `n = 4m`, as the decimal values intend
/// (an `f64` comparison of the quotients can miss or invent such ties).
///
/// One class recovers Mitzenmacher's `d = 2` ODE (`R_k = lambda (x_k + x_{k+1})`). With
/// `rule = "sq2"` and capacity-proportional sampling the fixed point is class-independent,
/// `x_{j,k} = rho^(2^k - 1)`, `rho = lambda / sum_j gamma_j C_j`
/// ([`analytic_fixed_point`](MeanFieldModel::analytic_fixed_point)); `T` is then the
/// homogeneous JSQ(2) value divided by `sum_j gamma_j C_j`.
///
/// # Stability
///
/// For every nonempty set `S` of classes, `lambda (sum_{j in S} p_j)^2 < sum_{j in S} gamma_j C_j`
/// (jobs whose two samples are both in `S` must be served in `S`). Necessary; sufficient in our
/// numerical checks (the truncated fixed point stops depending on `K` below the threshold and
/// piles up at level `K` above it); the same for the three cost rules. [`stability`](MeanFieldModel::stability)
/// checks all `2^M - 1` sets and names the failing one (the one with the smallest threshold
/// `lambda_c(S) = sum_S gamma_j C_j / (sum_S p_j)^2`).
///
/// The Jacobian is analytic and dense (arrivals couple all classes); the drift is cooperative
/// in the componentwise order. Extras (besides the per-class ones): `lambda_c`, the smallest
/// `lambda_c(S)`, and `class{j}.sampling_probability` = `p_j`.
///
/// Sources: A. Mukhopadhyay, R. R. Mazumdar, "Analysis of randomized join-the-shortest-queue
/// (JSQ) schemes in large heterogeneous processor-sharing systems", IEEE Trans. Control Netw.
/// Syst. 3(2):116-126, 2016; "Randomized routing schemes for large processor sharing systems
/// with multiple service rates", SIGMETRICS 2014 (poster); arXiv 1311.5806. The ODE and the
/// stability condition are derived in docs/models/heterogeneous.md ("Derivations") and checked
/// against a finite-N simulation in crates/mfq-sim/tests/heterogeneous.rs.
#[derive(Debug, Clone, PartialEq)]
pub struct PsSq2 {
    lambda: f64,
    classes: Classes,
    sampling: Sampling,
    rule: CostRule,
    levels: usize,
    /// `p_j`.
    p: Vec<f64>,
    /// `lambda p_j / gamma_j`.
    coef: Vec<f64>,
    /// `thresholds[(j (K + 1) + k) M + i] = (t, tie)` for a tagged class-`j` server with `k`
    /// jobs against a class-`i` server: `cost(i, n) > cost(j, k)` iff `n >= t`; `tie` iff
    /// `cost(i, t - 1) = cost(j, k)`. `t` is capped at `K + 2` (beyond it every tail is 0).
    thresholds: Vec<(usize, bool)>,
}

/// Capacities as integers on a common decimal scale, `c_j = C_j 10^e`, from the shortest
/// decimal representation of each value (Rust's `Display` for `f64`, which never uses an
/// exponent).
fn decimal_scaled(values: &[f64]) -> Vec<u128> {
    let parts: Vec<(String, usize)> = values
        .iter()
        .map(|v| {
            let s = format!("{v}");
            match s.split_once('.') {
                Some((int, frac)) => (format!("{int}{frac}"), frac.len()),
                None => (s, 0),
            }
        })
        .collect();
    let e = parts.iter().map(|p| p.1).max().unwrap_or(0) as u32;
    parts.into_iter().map(|(digits, f)| digits.parse::<u128>().expect("a positive decimal") * 10u128.pow(e - f as u32)).collect()
}

impl PsSq2 {
    /// SQ(2)-type routing at arrival rate `lambda` per server with the given sampling and cost
    /// rule, truncated at `levels` = K. `classes[j].speed` is the capacity `C_j`.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.lambda`, `model.classes...`, `model.sampling`
    /// (wrong length, a negative entry, or not summing to 1) or `truncation.levels`.
    /// `lambda` outside the stability region is accepted and reported by
    /// [`MeanFieldModel::stability`].
    pub fn new(lambda: f64, classes: &[ServerClass], sampling: Sampling, rule: CostRule, levels: usize) -> Result<Self, ModelError> {
        check_hetero_lambda(lambda)?;
        check_levels(levels)?;
        let classes = Classes::new(classes)?;
        let m = classes.len();
        let p: Vec<f64> = match &sampling {
            Sampling::Uniform => classes.gamma.clone(),
            Sampling::Capacity => {
                let cap = classes.capacity();
                (0..m).map(|j| classes.gamma[j] * classes.mu[j] / cap).collect()
            }
            Sampling::Probabilities(p) => {
                if p.len() != m {
                    return Err(out_of_range(
                        "model.sampling",
                        format!("{} probabilities", p.len()),
                        &format!("one probability per class ({m}), or \"uniform\" or \"capacity\""),
                    ));
                }
                for (i, v) in p.iter().enumerate() {
                    if !(v.is_finite() && *v >= 0.0) {
                        return Err(out_of_range(&format!("model.sampling[{}]", i + 1), v, "a number >= 0"));
                    }
                }
                let sum: f64 = p.iter().sum();
                if (sum - 1.0).abs() > 1e-9 {
                    return Err(out_of_range(
                        "model.sampling",
                        format!("probabilities summing to {sum}"),
                        "probabilities summing to 1 within 1e-9",
                    ));
                }
                p.clone()
            }
        };
        let coef = (0..m).map(|j| lambda * p[j] / classes.gamma[j]).collect();
        let c = decimal_scaled(&classes.mu);
        let kk = levels;
        let mut thresholds = Vec::with_capacity(m * (kk + 1) * m);
        for j in 0..m {
            for k in 0..=kk {
                for i in 0..m {
                    let (t, tie) = match rule {
                        CostRule::Sq2 => (k as u128 + 1, true),
                        CostRule::Lsc | CostRule::LscPlusOne => {
                            // n c_j vs q c_i with q = k (lsc) or (n + 1) c_j vs (k + 1) c_i (lsc-plus-one)
                            let q = if rule == CostRule::Lsc { k as u128 } else { k as u128 + 1 };
                            let num = q.checked_mul(c[i]).ok_or_else(|| {
                                out_of_range(
                                    "truncation.levels",
                                    levels,
                                    "a level small enough for exact cost comparisons (K * C 10^e < 2^128)",
                                )
                            })?;
                            let (quot, rem) = (num / c[j], num % c[j]);
                            if rule == CostRule::Lsc {
                                (quot + 1, rem == 0)
                            } else {
                                (quot, rem == 0)
                            }
                        }
                    };
                    thresholds.push((t.min(kk as u128 + 2) as usize, tie));
                }
            }
        }
        Ok(PsSq2 { lambda, classes, sampling, rule, levels, p, coef, thresholds })
    }

    /// The sampling probabilities `p_j` (file order).
    pub fn sampling_probabilities(&self) -> &[f64] {
        &self.p
    }

    /// The stability threshold `lambda_c = min_S sum_S gamma_j C_j / (sum_S p_j)^2` over the
    /// nonempty class sets `S` with `sum_S p_j > 0`, and the minimising set (0-based class
    /// indices as a bit mask).
    pub fn stability_threshold(&self) -> (f64, u32) {
        let m = self.classes.len();
        let mut best = (f64::INFINITY, 0u32);
        for mask in 1u32..(1u32 << m) {
            let (sp, cap) = self.subset_sums(mask);
            if sp > 0.0 && cap / (sp * sp) < best.0 {
                best = (cap / (sp * sp), mask);
            }
        }
        best
    }

    fn subset_sums(&self, mask: u32) -> (f64, f64) {
        let mut sp = 0.0;
        let mut cap = 0.0;
        for j in (0..self.classes.len()).filter(|j| mask & (1 << j) != 0) {
            sp += self.p[j];
            cap += self.classes.gamma[j] * self.classes.mu[j];
        }
        (sp, cap)
    }

    /// `R_{j,k}`: arrival rate onto a class-`j` server with `k` jobs (`k = 0..K`).
    #[inline]
    fn rate(&self, x: &[f64], j: usize, k: usize) -> f64 {
        let m = self.classes.len();
        let kk = self.levels;
        let base = (j * (kk + 1) + k) * m;
        let mut w = 0.0;
        for i in 0..m {
            let (t, tie) = self.thresholds[base + i];
            let v = if tie { class_tail(x, kk, i, t) + class_tail(x, kk, i, t - 1) } else { 2.0 * class_tail(x, kk, i, t) };
            w += self.p[i] * v;
        }
        self.coef[j] * w
    }

    /// Calls `add(column, dR_{j,k}/dx)` for the state entries `R_{j,k}` depends on.
    #[inline]
    fn rate_gradient(&self, j: usize, k: usize, mut add: impl FnMut(usize, f64)) {
        let m = self.classes.len();
        let kk = self.levels;
        let base = (j * (kk + 1) + k) * m;
        for i in 0..m {
            let (t, tie) = self.thresholds[base + i];
            let c = self.coef[j] * self.p[i];
            let mut put = |n: usize, w: f64| {
                if (1..=kk).contains(&n) {
                    add(idx(kk, i, n), c * w);
                }
            };
            if tie {
                put(t, 1.0);
                put(t - 1, 1.0);
            } else {
                put(t, 2.0);
            }
        }
    }

    /// Whether `rule = sq2` with `p_j / gamma_j` proportional to `C_j` (the closed-form case).
    fn capacity_proportional_sq2(&self) -> bool {
        let cap = self.classes.capacity();
        self.rule == CostRule::Sq2
            && (0..self.classes.len())
                .all(|j| (self.p[j] / self.classes.gamma[j] - self.classes.mu[j] / cap).abs() <= 1e-12 * (self.classes.mu[j] / cap))
    }
}

impl MeanFieldModel for PsSq2 {
    fn name(&self) -> String {
        let s = match &self.sampling {
            Sampling::Uniform => "uniform sampling",
            Sampling::Capacity => "capacity-proportional sampling",
            Sampling::Probabilities(_) => "given sampling probabilities",
        };
        format!("PS {} ({s})", self.rule.label())
    }
    fn dim(&self) -> usize {
        self.classes.len() * self.levels
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        let kk = self.levels;
        for j in 0..self.classes.len() {
            let c = self.classes.mu[j];
            for k in 1..=kk {
                let xk = class_tail(x, kk, j, k);
                dx[idx(kk, j, k)] = self.rate(x, j, k - 1) * (class_tail(x, kk, j, k - 1) - xk) - c * (xk - class_tail(x, kk, j, k + 1));
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
        let mut to_idle = 0.0;
        let theta: Vec<f64> = (0..m)
            .map(|j| {
                let g = self.classes.gamma[j];
                to_idle += g * self.rate(x, j, 0) * (1.0 - class_tail(x, kk, j, 1));
                lost += g * self.rate(x, j, kk) * class_tail(x, kk, j, kk);
                (0..kk).map(|k| self.rate(x, j, k) * (class_tail(x, kk, j, k) - class_tail(x, kk, j, k + 1))).sum()
            })
            .collect();
        let prob_wait = (1.0 - to_idle / self.lambda).clamp(0.0, 1.0);
        let mut obs = class_observables(x, &self.classes, kk, self.lambda, &theta, lost, Some(prob_wait));
        obs.extras.push(("lambda_c".into(), self.stability_threshold().0));
        for (j, p) in self.p.iter().enumerate() {
            obs.extras.push((format!("class{}.sampling_probability", j + 1), *p));
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
        let (lambda_c, best) = self.stability_threshold();
        let set = |mask: u32| {
            let names: Vec<String> = (0..self.classes.len()).filter(|j| mask & (1 << j) != 0).map(|j| (j + 1).to_string()).collect();
            format!("{{{}}}", names.join(", "))
        };
        // the subset condition lambda (sum_S p_j)^2 < sum_S gamma_j C_j, set by set; report the most binding failing set
        let failing = (1u32..(1u32 << self.classes.len()))
            .filter(|&mask| {
                let (sp, cap) = self.subset_sums(mask);
                sp > 0.0 && self.lambda * sp * sp >= cap
            })
            .min_by(|&a, &b| {
                let r = |mask| {
                    let (sp, cap) = self.subset_sums(mask);
                    cap / (sp * sp)
                };
                r(a).total_cmp(&r(b))
            });
        match failing {
            None => Stability::Stable {
                condition: format!(
                    "lambda (sum_S p_j)^2 < sum_S gamma_j C_j for every class set S: lambda = {} < lambda_c = {lambda_c} (attained by S = {})",
                    self.lambda,
                    set(best)
                ),
            },
            Some(mask) => {
                let (sp, cap) = self.subset_sums(mask);
                Stability::Unstable {
                    reason: format!(
                        "class set S = {}: lambda (sum_S p_j)^2 = {} * {sp}^2 = {} >= sum_S gamma_j C_j = {cap}; the jobs whose two samples both fall in S \
                         exceed what S can serve (stable iff lambda < lambda_c = {lambda_c})",
                        set(mask),
                        self.lambda,
                        self.lambda * sp * sp
                    ),
                }
            }
        }
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        let rho = self.lambda / self.classes.capacity();
        if !(self.capacity_proportional_sq2() && rho < 1.0) {
            return None;
        }
        let mut x = vec![0.0; self.dim()];
        for j in 0..self.classes.len() {
            let mut v = 1.0;
            for k in 1..=self.levels {
                v = rho * v * v; // x_k = rho x_{k-1}^2
                x[idx(self.levels, j, k)] = v;
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

/// One server at a time (`super::class_birth_death`): an arrival joins a class-`j` server with
/// `k` jobs at rate `R_{j,k}` per such server, a completion at rate `C_j`. With the two samples
/// drawn with replacement (as in the simulator, crates/mfq-sim/src/families/hetero.rs) and
/// `N gamma_j` servers in class `j`, these are the exact rates of the `N`-server system.
impl Transitions for PsSq2 {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        for j in 0..self.classes.len() {
            class_birth_death(x, &self.classes, self.levels, j, |k| self.rate(x, j, k), visit);
        }
    }
}

impl AnalyticJacobian for PsSq2 {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Dense
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        let kk = self.levels;
        jac.clear();
        for j in 0..self.classes.len() {
            let c = self.classes.mu[j];
            for k in 1..=kk {
                let row = idx(kk, j, k);
                let r = self.rate(x, j, k - 1);
                let s = class_tail(x, kk, j, k - 1) - class_tail(x, kk, j, k);
                jac.add(row, row, -c - r);
                if k < kk {
                    jac.add(row, idx(kk, j, k + 1), c);
                }
                if k > 1 {
                    jac.add(row, idx(kk, j, k - 1), r);
                }
                self.rate_gradient(j, k - 1, |col, v| jac.add(row, col, v * s));
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

    fn rule(i: u8) -> CostRule {
        [CostRule::Sq2, CostRule::Lsc, CostRule::LscPlusOne][i as usize % 3]
    }

    proptest! {
        #[test]
        fn jacobian_equals_central_differences(
            lambda in 0.05f64..1.5, r in 0u8..3, cap in proptest::bool::ANY,
            seed in proptest::collection::vec(0.0f64..1.0, 15)
        ) {
            let cl = classes(&[(0.2, 2.5), (0.3, 1.0), (0.5, 0.4)]);
            let s = if cap { Sampling::Capacity } else { Sampling::Uniform };
            let m = PsSq2::new(lambda, &cl, s, rule(r), 5).unwrap();
            let x = interior_class_tail(3, 5, &seed);
            prop_assert!(jacobian_error_skipping(&m, &x, |_| false) < 1e-6);
        }

        /// sum_l rate_l jump_l = drift at random states, every rule and sampling.
        #[test]
        fn transitions_reproduce_the_drift(
            lambda in 0.05f64..1.5, r in 0u8..3, s in 0u8..3, levels in 1usize..7,
            seed in proptest::collection::vec(0.0f64..1.0, 18)
        ) {
            let cl = classes(&[(0.2, 2.5), (0.3, 1.0), (0.5, 0.4)]);
            let s = [Sampling::Uniform, Sampling::Capacity, Sampling::Probabilities(vec![0.5, 0.1, 0.4])][s as usize].clone();
            let m = PsSq2::new(lambda, &cl, s, rule(r), levels).unwrap();
            let x = interior_class_tail(3, levels, &seed);
            prop_assert!(crate::models::testutil::transitions_drift_error(&m, &x) < 1e-13);
        }
    }

    #[test]
    fn exact_decimal_ties() {
        assert_eq!(decimal_scaled(&[1.6, 0.4, 2.5, 1.0]), vec![16, 4, 25, 10]);
        assert_eq!(decimal_scaled(&[1e-6, 3.0]), vec![1, 3_000_000]);
        // n/1.6 vs k/0.4: a class-1 server with n = 4k jobs ties with a class-2 server with k jobs
        let m = PsSq2::new(0.5, &classes(&[(0.5, 1.6), (0.5, 0.4)]), Sampling::Uniform, CostRule::Lsc, 10).unwrap();
        let th = |j: usize, k: usize, i: usize| m.thresholds[(j * 11 + k) * 2 + i];
        assert_eq!(th(1, 1, 0), (5, true)); // n/1.6 > 1/0.4 iff n >= 5, tie at n = 4
        assert_eq!(th(0, 3, 1), (1, false)); // n/0.4 > 3/1.6 iff n >= 1 (0.75 < n 2.5)
        assert_eq!(th(0, 0, 1), (1, true)); // idle servers tie
        let m = PsSq2::new(0.5, &classes(&[(0.5, 1.6), (0.5, 0.4)]), Sampling::Uniform, CostRule::LscPlusOne, 10).unwrap();
        let th = |j: usize, k: usize, i: usize| m.thresholds[(j * 11 + k) * 2 + i];
        assert_eq!(th(0, 0, 1), (0, false)); // an idle fast server always beats a slow one
        assert_eq!(th(1, 0, 0), (4, true)); // (n+1)/1.6 > 1/0.4 iff n >= 4, tie at n = 3
    }

    #[test]
    fn one_class_is_mitzenmacher_d2() {
        let m = PsSq2::new(0.7, &classes(&[(1.0, 1.0)]), Sampling::Uniform, CostRule::Lsc, 6).unwrap();
        let x = interior_class_tail(1, 6, &[0.3, 0.8, 0.1, 0.5]);
        let mut dx = vec![0.0; 6];
        m.drift(&x, &mut dx);
        let t = |k: usize| {
            if k == 0 {
                1.0
            } else if k > 6 {
                0.0
            } else {
                x[k - 1]
            }
        };
        for k in 1..=6 {
            let e = 0.7 * (t(k - 1) * t(k - 1) - t(k) * t(k)) - (t(k) - t(k + 1));
            assert!((dx[k - 1] - e).abs() < 1e-15, "k={k}");
        }
    }

    #[test]
    fn sampling_errors_name_the_field() {
        let cl = classes(&[(0.5, 1.6), (0.5, 0.4)]);
        let e = PsSq2::new(0.5, &cl, Sampling::Probabilities(vec![1.0]), CostRule::Sq2, 4).unwrap_err();
        assert!(e.to_string().contains("model.sampling = 1 probabilities"), "{e}");
        let e = PsSq2::new(0.5, &cl, Sampling::Probabilities(vec![0.5, 0.6]), CostRule::Sq2, 4).unwrap_err();
        assert!(e.to_string().contains("summing to 1.1"), "{e}");
        let e = PsSq2::new(0.5, &cl, Sampling::Probabilities(vec![1.5, -0.5]), CostRule::Sq2, 4).unwrap_err();
        assert!(e.to_string().contains("model.sampling[2] = -0.5"), "{e}");
    }

    #[test]
    fn closed_form_fixed_point_is_a_zero_of_the_drift() {
        let m = PsSq2::new(0.9, &classes(&[(0.5, 1.6), (0.5, 0.4)]), Sampling::Capacity, CostRule::Sq2, 12).unwrap();
        let x = m.analytic_fixed_point().unwrap();
        let mut dx = vec![0.0; 24];
        m.drift(&x, &mut dx);
        // the truncated system differs from the untruncated fixed point only at level K
        assert!(dx[..11].iter().chain(&dx[12..23]).all(|v| v.abs() < 1e-15), "{dx:?}");
        assert!(PsSq2::new(0.9, &classes(&[(0.5, 1.6), (0.5, 0.4)]), Sampling::Uniform, CostRule::Sq2, 12)
            .unwrap()
            .analytic_fixed_point()
            .is_none());
    }
}
