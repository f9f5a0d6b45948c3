//! Majority-rule opinion dynamics with stubborn or biased agents: one-dimensional mean fields
//! with several equilibria (the test bed of the global-attraction checker).
//!
//! Both models describe `N` agents holding opinion 0 or 1; the state is the single fraction
//! `x` of (non-stubborn) agents with opinion 1. Time unit: each updating agent updates at the
//! points of its own rate-1 Poisson clock. Neither model has queues: the observables are
//! extras only.
//!
//! Source: A. Mukhopadhyay, R. R. Mazumdar, R. Roy, "Voter and majority dynamics with biased
//! and stubborn agents", J. Stat. Phys. 181 (2020), doi 10.1007/s10955-020-02625-w,
//! arXiv 2003.02885 (model set-up; majority of the agent itself and `2K = 2` sampled agents).
//! The ODEs below are derived from that set-up (the mean-field limit of the jump rates), not
//! copied from a displayed equation; docs/models/opinion.md has the derivation.

use crate::finite::{FiniteSystem, Simulation};
use crate::registry::{read_spec, Kind, KindSpec, Param, ParamRange};
use crate::{out_of_range, Jacobian, MeanFieldModel, ModelError, NamedState, Observables, PartialOrder, Sparsity, Stability, StateLayout};
use crate::{AnalyticJacobian, TransitionVisitor, Transitions};

/// Roots in `[0, 1]` of a function `f` whose critical points in `(0, 1)` are `crit`
/// (so `f` is monotone between consecutive breakpoints): bisection on each monotone piece
/// with a sign change, plus breakpoints where `f` vanishes (touching, i.e. multiple, roots).
/// Simple roots come out to round-off; a root of multiplicity `m` to about `eps^(1/m)`.
fn roots_in_unit_interval(f: impl Fn(f64) -> f64, crit: &[f64]) -> Vec<f64> {
    let mut breaks: Vec<f64> = std::iter::once(0.0)
        .chain(crit.iter().copied().filter(|c| c.is_finite() && *c > 0.0 && *c < 1.0))
        .chain(std::iter::once(1.0))
        .collect();
    breaks.sort_by(f64::total_cmp);
    // |f| below this at a breakpoint counts as a (touching) root: round-off of the factored forms
    const ZERO: f64 = 1e-15;
    let mut roots = Vec::new();
    for w in breaks.windows(2) {
        let (mut lo, mut hi) = (w[0], w[1]);
        let (flo, fhi) = (f(lo), f(hi));
        if flo.abs() <= ZERO {
            roots.push(lo);
        }
        if fhi.abs() <= ZERO || flo.signum() == fhi.signum() {
            continue;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if f(mid).signum() == flo.signum() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        roots.push(0.5 * (lo + hi));
    }
    if f(1.0).abs() <= ZERO {
        roots.push(1.0);
    }
    roots.sort_by(f64::total_cmp);
    // one multiple root may be bracketed twice (its critical points split by round-off):
    // neighbours with |f| at round-off level all the way between them are one root
    let flat = |a: f64, b: f64| (0..=8).all(|i| f(a + (b - a) * i as f64 / 8.0).abs() <= ZERO);
    let mut merged: Vec<f64> = Vec::with_capacity(roots.len());
    for r in roots {
        match merged.last_mut() {
            Some(last) if r - *last < 1e-9 || flat(*last, r) => *last = 0.5 * (*last + r),
            _ => merged.push(r),
        }
    }
    merged
}

/// Real roots of `a x^2 + b x + c` (`a != 0`), none when the discriminant is negative.
fn quadratic_roots(a: f64, b: f64, c: f64) -> Vec<f64> {
    let disc = b * b - 4.0 * a * c;
    if disc < 0.0 {
        return Vec::new();
    }
    let s = disc.sqrt();
    vec![(-b - s) / (2.0 * a), (-b + s) / (2.0 * a)]
}

fn check_fraction(field: &str, v: f64, allowed: &str, closed_at_one: bool) -> Result<(), ModelError> {
    let ok = v.is_finite() && v >= 0.0 && if closed_at_one { v <= 1.0 } else { v < 1.0 };
    if ok {
        Ok(())
    } else {
        Err(out_of_range(field, v, allowed))
    }
}

/// The extremal states of a one-dimensional opinion model: `x = 0` and `x = 1`.
fn unit_interval_ends() -> Vec<NamedState> {
    vec![NamedState { name: "x=0".into(), x: vec![0.0] }, NamedState { name: "x=1".into(), x: vec![1.0] }]
}

/// Majority rule with **stubborn agents** (kind `opinion-stubborn`).
///
/// A fraction `gamma0` of the agents is stubborn with opinion 0 and a fraction `gamma1`
/// stubborn with opinion 1; they never update. Every other agent, at rate 1, samples two
/// agents uniformly from **all** agents (stubborn ones included) and adopts the majority
/// opinion among itself and the two samples.
///
/// State: `x` = fraction of the **non-stubborn** agents holding opinion 1, in `[0, 1]`.
/// A sampled agent holds opinion 1 with probability `p(x) = gamma1 + (1 - gamma0 - gamma1) x`,
/// so (derived from the set-up of Mukhopadhyay, Mazumdar and Roy 2020, §5, with `K = 1`):
///
/// ```text
/// dx/dt = (1 - x) p(x)^2 - x (1 - p(x))^2
/// ```
///
/// (an opinion-0 agent switches when both samples hold 1, an opinion-1 agent when both hold 0).
/// With `gamma0 = gamma1 = gamma < 1/4` there are three equilibria, `1/2` unstable and
/// `1/2 +- sqrt((s - 1/2) / (2 s^2))`, `s = 1 - 2 gamma`, stable; at `gamma = 1/4` a triple
/// root at `1/2` (`f = -y^3/2`, `y = x - 1/2`: algebraic, not exponential, convergence);
/// above, `1/2` alone. [`equilibria`](Self::equilibria) gives them for any parameters.
///
/// Source: A. Mukhopadhyay, R. R. Mazumdar, R. Roy, "Voter and majority dynamics with biased
/// and stubborn agents", J. Stat. Phys. 181 (2020), arXiv 2003.02885 (set-up; the ODE is
/// derived here, see docs/models/opinion.md).
///
/// ```
/// use mfq_model::models::OpinionStubborn;
/// let m = OpinionStubborn::new(0.1, 0.1).unwrap();
/// let eq = m.equilibria();
/// assert_eq!(eq.len(), 3);
/// assert!((eq[0] - 0.0158770817).abs() < 1e-9 && (eq[1] - 0.5).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OpinionStubborn {
    gamma0: f64,
    gamma1: f64,
}

impl OpinionStubborn {
    /// Stubborn fractions `gamma0` (opinion 0) and `gamma1` (opinion 1) of all agents.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.gamma0` or `model.gamma1` when a value is not
    /// in `[0, 1)` or when `gamma0 + gamma1 >= 1` (no agent would update).
    pub fn new(gamma0: f64, gamma1: f64) -> Result<Self, ModelError> {
        check_fraction("model.gamma0", gamma0, "a fraction in [0, 1)", false)?;
        check_fraction("model.gamma1", gamma1, "a fraction in [0, 1)", false)?;
        if gamma0 + gamma1 >= 1.0 {
            return Err(out_of_range(
                "model.gamma1",
                gamma1,
                &format!("a fraction with gamma0 + gamma1 < 1 (gamma0 = {gamma0}): some agents must not be stubborn"),
            ));
        }
        Ok(OpinionStubborn { gamma0, gamma1 })
    }

    /// Probability that a sampled agent holds opinion 1: `p(x) = gamma1 + (1 - gamma0 - gamma1) x`.
    #[inline]
    pub fn p(&self, x: f64) -> f64 {
        self.gamma1 + (1.0 - self.gamma0 - self.gamma1) * x
    }

    /// The drift `f(x)` (see the type docs).
    #[inline]
    pub fn f(&self, x: f64) -> f64 {
        let p = self.p(x);
        (1.0 - x) * p * p - x * (1.0 - p) * (1.0 - p)
    }

    /// `f'(x)`.
    #[inline]
    pub fn df(&self, x: f64) -> f64 {
        let s = 1.0 - self.gamma0 - self.gamma1;
        let p = self.p(x);
        -p * p + 2.0 * (1.0 - x) * p * s - (1.0 - p) * (1.0 - p) + 2.0 * x * (1.0 - p) * s
    }

    /// Every equilibrium in `[0, 1]`, increasing. `f` is the cubic
    /// `-2 s^2 x^3 + (s^2 + 2 s (b - a)) x^2 + (2 a s - a^2 - b^2) x + a^2` (`a = gamma1`,
    /// `b = 1 - gamma1`, `s = 1 - gamma0 - gamma1`); the roots are bracketed between the zeros
    /// of `f'` and bisected. A triple root (`gamma0 = gamma1 = 1/4`) comes out to about 1e-5.
    pub fn equilibria(&self) -> Vec<f64> {
        let (a, s) = (self.gamma1, 1.0 - self.gamma0 - self.gamma1);
        let b = 1.0 - a;
        // f'(x) = 3 c3 x^2 + 2 c2 x + c1
        let (c3, c2, c1) = (-2.0 * s * s, s * s + 2.0 * s * (b - a), 2.0 * a * s - a * a - b * b);
        roots_in_unit_interval(|x| self.f(x), &quadratic_roots(3.0 * c3, 2.0 * c2, c1))
    }
}

impl MeanFieldModel for OpinionStubborn {
    fn name(&self) -> String {
        format!("opinion-stubborn(gamma0={}, gamma1={})", self.gamma0, self.gamma1)
    }
    fn dim(&self) -> usize {
        1
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        dx[0] = self.f(x[0]);
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Named { names: vec!["x".into()] }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        let x = x[0];
        // p(x) is the fraction of all agents (stubborn included) holding opinion 1
        Observables::extras_only(vec![("x".into(), x), ("opinion1_all_agents".into(), self.p(x))])
    }
    /// One-dimensional drifts are always cooperative (there is no off-diagonal entry).
    fn order(&self) -> Option<PartialOrder> {
        Some(PartialOrder::Componentwise)
    }
    fn extremal_states(&self) -> Vec<NamedState> {
        unit_interval_ends()
    }
    fn stability(&self) -> Stability {
        Stability::Unknown {
            note: "no queues: x stays in [0, 1] for all parameters; several equilibria are possible (see `mfq check`)".into(),
        }
    }
    /// The equilibrium when it is unique, `None` when there are several.
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        let eq = self.equilibria();
        (eq.len() == 1).then(|| vec![eq[0]])
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
    fn transitions(&self) -> Option<&dyn Transitions> {
        Some(self)
    }
}

/// The non-stubborn agents as a population process (the `N` of the refined mean field counts
/// them): an opinion-0 agent switches at rate `p(x)^2`, an opinion-1 agent at rate `(1 - p(x))^2`.
impl Transitions for OpinionStubborn {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        let (x, p) = (x[0], self.p(x[0]));
        visit(&[(0, 1.0)], (1.0 - x) * p * p);
        visit(&[(0, -1.0)], x * (1.0 - p) * (1.0 - p));
    }
}

impl AnalyticJacobian for OpinionStubborn {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Dense
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        jac.set(0, 0, self.df(x[0]));
    }
}

/// Majority rule with **biased agents** (2-choices rule, kind `opinion-biased`).
///
/// At rate 1 every agent updates: with probability `alpha` it adopts the superior opinion 1;
/// otherwise it samples two agents and adopts the majority among itself and the two samples.
///
/// State: `x` = fraction of agents holding opinion 1, in `[0, 1]`. ODE (derived from the
/// set-up of Mukhopadhyay, Mazumdar and Roy 2020):
///
/// ```text
/// dx/dt = alpha (1 - x) + (1 - alpha) [(1 - x) x^2 - x (1 - x)^2]
///       = (1 - x) [alpha + (1 - alpha) x (2x - 1)]
/// ```
///
/// `x = 1` is always an equilibrium, stable (`f'(1) = -1`). Interior equilibria solve
/// `2 (1 - alpha) x^2 - (1 - alpha) x + alpha = 0`, real iff `alpha <= 1/9`: two of them
/// (the lower stable, the upper unstable) below `alpha_c = 1/9`, a double root `x = 1/4` at
/// `alpha = 1/9` (semi-stable), none above.
///
/// Source: A. Mukhopadhyay, R. R. Mazumdar, R. Roy, "Voter and majority dynamics with biased
/// and stubborn agents", J. Stat. Phys. 181 (2020), arXiv 2003.02885 (set-up; the ODE and
/// `alpha_c = 1/9` are derived here, see docs/models/opinion.md).
///
/// ```
/// use mfq_model::models::OpinionBiased;
/// let eq = OpinionBiased::new(0.1).unwrap().equilibria();
/// assert!((eq[0] - 1.0 / 6.0).abs() < 1e-12 && (eq[1] - 1.0 / 3.0).abs() < 1e-12 && eq[2] == 1.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct OpinionBiased {
    alpha: f64,
}

impl OpinionBiased {
    /// Bias `alpha`: probability that an update adopts opinion 1 outright.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.alpha` when it is not in `[0, 1]`.
    pub fn new(alpha: f64) -> Result<Self, ModelError> {
        check_fraction("model.alpha", alpha, "a probability in [0, 1]", true)?;
        Ok(OpinionBiased { alpha })
    }

    /// The drift `f(x)` (see the type docs).
    #[inline]
    pub fn f(&self, x: f64) -> f64 {
        (1.0 - x) * (self.alpha + (1.0 - self.alpha) * x * (2.0 * x - 1.0))
    }

    /// `f'(x)`.
    #[inline]
    pub fn df(&self, x: f64) -> f64 {
        let a = self.alpha;
        -(a + (1.0 - a) * x * (2.0 * x - 1.0)) + (1.0 - x) * (1.0 - a) * (4.0 * x - 1.0)
    }

    /// Every equilibrium in `[0, 1]`, increasing, in closed form: the roots
    /// `x = (1 +- sqrt((1 - 9 alpha) / (1 - alpha))) / 4` of the quadratic factor when
    /// `alpha <= 1/9`, and `x = 1`.
    pub fn equilibria(&self) -> Vec<f64> {
        let a = self.alpha;
        let mut eq = Vec::new();
        if a < 1.0 {
            let r = (1.0 - 9.0 * a) / (1.0 - a);
            if r.abs() <= 1e-14 {
                // alpha = 1/9 up to round-off: the double root
                eq.push(0.25);
            } else if r > 0.0 {
                let s = r.sqrt();
                eq.push((1.0 - s) / 4.0);
                eq.push((1.0 + s) / 4.0);
            }
        }
        eq.push(1.0);
        eq.dedup_by(|a, b| (*a - *b).abs() < 1e-12);
        eq
    }
}

impl MeanFieldModel for OpinionBiased {
    fn name(&self) -> String {
        format!("opinion-biased(alpha={})", self.alpha)
    }
    fn dim(&self) -> usize {
        1
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        dx[0] = self.f(x[0]);
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Named { names: vec!["x".into()] }
    }
    fn observables(&self, x: &[f64]) -> Observables {
        Observables::extras_only(vec![("x".into(), x[0])])
    }
    /// One-dimensional drifts are always cooperative (there is no off-diagonal entry).
    fn order(&self) -> Option<PartialOrder> {
        Some(PartialOrder::Componentwise)
    }
    fn extremal_states(&self) -> Vec<NamedState> {
        unit_interval_ends()
    }
    fn stability(&self) -> Stability {
        Stability::Unknown {
            note: "no queues: x stays in [0, 1] for all parameters; several equilibria are possible (see `mfq check`)".into(),
        }
    }
    /// The equilibrium when it is unique (`x = 1` for `alpha > 1/9`), `None` otherwise.
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        let eq = self.equilibria();
        (eq.len() == 1).then(|| vec![eq[0]])
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
    fn transitions(&self) -> Option<&dyn Transitions> {
        Some(self)
    }
}

/// The agents as a population process: an opinion-0 agent switches at rate
/// `alpha + (1 - alpha) x^2`, an opinion-1 agent at rate `(1 - alpha)(1 - x)^2`.
impl Transitions for OpinionBiased {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        let (x, a) = (x[0], self.alpha);
        visit(&[(0, 1.0)], (1.0 - x) * (a + (1.0 - a) * x * x));
        visit(&[(0, -1.0)], x * (1.0 - a) * (1.0 - x) * (1.0 - x));
    }
}

impl AnalyticJacobian for OpinionBiased {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Dense
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        jac.set(0, 0, self.df(x[0]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transitions reproduce the drift.
    #[test]
    fn transitions_reproduce_the_drift() {
        use crate::models::testutil::transitions_drift_error;
        for x in [0.0, 0.2, 0.5, 0.93, 1.0] {
            assert!(transitions_drift_error(&OpinionStubborn::new(0.1, 0.3).unwrap(), &[x]) < 1e-15);
            assert!(transitions_drift_error(&OpinionBiased::new(0.05).unwrap(), &[x]) < 1e-15);
        }
    }

    fn fd(f: impl Fn(f64) -> f64, x: f64) -> f64 {
        (f(x + 1e-7) - f(x - 1e-7)) / 2e-7
    }

    /// Reference equilibria of docs/models/opinion.md, recomputed independently by
    /// validation/opinion.py.
    #[test]
    fn stubborn_equilibria_match_the_reference_table() {
        let table: [((f64, f64), &[f64]); 6] = [
            ((0.1, 0.1), &[0.0158770817, 0.5, 0.9841229183]),
            ((0.2, 0.2), &[0.1273220038, 0.5, 0.8726779962]),
            ((0.24, 0.24), &[4.0 / 13.0, 0.5, 9.0 / 13.0]),
            ((0.3, 0.3), &[0.5]),
            ((0.05, 0.1), &[0.0162177987, 0.4280333702, 0.9969253017]),
            ((0.1, 0.2), &[0.9847484959]),
        ];
        for ((g0, g1), want) in table {
            let m = OpinionStubborn::new(g0, g1).unwrap();
            let got = m.equilibria();
            assert_eq!(got.len(), want.len(), "({g0}, {g1}): {got:?}");
            for (a, b) in got.iter().zip(want) {
                assert!((a - b).abs() < 1e-9, "({g0}, {g1}): {a} vs {b}");
                assert!(m.f(*a).abs() < 1e-14);
            }
        }
        // derivative signs of the table: (0.1, 0.1): -0.6, +0.3, -0.6
        let m = OpinionStubborn::new(0.1, 0.1).unwrap();
        let eq = m.equilibria();
        assert!((m.df(eq[0]) + 0.6).abs() < 1e-8 && (m.df(eq[1]) - 0.3).abs() < 1e-12);
        // the triple root at gamma = 1/4 is found once, near 1/2
        let eq = OpinionStubborn::new(0.25, 0.25).unwrap().equilibria();
        assert_eq!(eq.len(), 1, "{eq:?}");
        assert!((eq[0] - 0.5).abs() < 1e-4);
    }

    /// docs/models/opinion.md (validation/opinion.py): alpha = 0.05: 0.0597785224, 0.4402214776, 1; alpha = 0.1: 1/6, 1/3, 1;
    /// alpha = 1/9: double root 1/4 and 1; alpha = 0.12, 0.2: 1 only.
    #[test]
    fn biased_equilibria_match_the_reference_table() {
        let eq = OpinionBiased::new(0.05).unwrap().equilibria();
        assert_eq!(eq.len(), 3);
        assert!((eq[0] - 0.0597785224).abs() < 1e-9 && (eq[1] - 0.4402214776).abs() < 1e-9 && eq[2] == 1.0);
        let eq = OpinionBiased::new(0.0).unwrap().equilibria();
        assert_eq!(eq, vec![0.0, 0.5, 1.0]);
        let eq = OpinionBiased::new(1.0 / 9.0).unwrap().equilibria();
        assert_eq!(eq.len(), 2);
        assert!((eq[0] - 0.25).abs() < 1e-7);
        for a in [0.12, 0.2, 1.0] {
            assert_eq!(OpinionBiased::new(a).unwrap().equilibria(), vec![1.0]);
            assert_eq!(OpinionBiased::new(a).unwrap().analytic_fixed_point(), Some(vec![1.0]));
        }
        assert_eq!(OpinionBiased::new(1.0).unwrap().df(1.0), -1.0);
    }

    #[test]
    fn derivatives_match_differences_and_the_cubic() {
        for (g0, g1) in [(0.1, 0.1), (0.05, 0.1), (0.3, 0.0), (0.0, 0.0)] {
            let m = OpinionStubborn::new(g0, g1).unwrap();
            let (a, s) = (g1, 1.0 - g0 - g1);
            let b = 1.0 - a;
            for i in 0..=20 {
                let x = i as f64 / 20.0;
                assert!((m.df(x) - fd(|v| m.f(v), x)).abs() < 1e-7);
                let cubic = -2.0 * s * s * x.powi(3) + (s * s + 2.0 * s * (b - a)) * x * x + (2.0 * a * s - a * a - b * b) * x + a * a;
                assert!((m.f(x) - cubic).abs() < 1e-14);
                let mut j = Jacobian::new(1, m.sparsity());
                m.jacobian(&[x], &mut j);
                assert_eq!(j.get(0, 0), m.df(x));
            }
        }
        for alpha in [0.0, 0.05, 1.0 / 9.0, 0.5, 1.0] {
            let m = OpinionBiased::new(alpha).unwrap();
            for i in 0..=20 {
                let x = i as f64 / 20.0;
                assert!((m.df(x) - fd(|v| m.f(v), x)).abs() < 1e-7);
            }
        }
    }

    #[test]
    fn parameters_out_of_range_name_the_field() {
        let e = OpinionStubborn::new(-0.1, 0.1).unwrap_err();
        assert!(e.to_string().contains("model.gamma0 = -0.1"), "{e}");
        let e = OpinionStubborn::new(0.6, 0.5).unwrap_err();
        assert!(e.to_string().contains("model.gamma1 = 0.5") && e.to_string().contains("gamma0 + gamma1 < 1"), "{e}");
        let e = OpinionBiased::new(1.5).unwrap_err();
        assert!(e.to_string().contains("model.alpha = 1.5"), "{e}");
        assert!(OpinionBiased::new(f64::NAN).is_err());
    }
}

/// `kind = "opinion-stubborn"`: the parameters of [`OpinionStubborn`] in a model file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpinionStubbornSpec {
    /// Fraction of all agents stubborn with opinion 0, in `[0, 1)`.
    pub gamma0: f64,
    /// Fraction of all agents stubborn with opinion 1, in `[0, 1)`; `gamma0 + gamma1 < 1`.
    pub gamma1: f64,
}

/// `kind = "opinion-biased"`: the parameters of [`OpinionBiased`] in a model file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpinionBiasedSpec {
    /// Probability that an update adopts opinion 1 outright, in `[0, 1]`.
    pub alpha: f64,
}

/// The `opinion-stubborn` kind.
pub static OPINION_STUBBORN: Kind = Kind {
    name: "opinion-stubborn",
    title: "Majority-rule opinion dynamics with stubborn agents (2 samples + itself); not a queue",
    params: &[
        Param {
            name: "gamma0",
            meaning: "fraction of all agents stubborn with opinion 0",
            unit: "",
            allowed: "[0, 1), gamma0 + gamma1 < 1",
            default: None,
            range: Some(ParamRange::closed(0.0, 1.0, false)),
        },
        Param {
            name: "gamma1",
            meaning: "fraction of all agents stubborn with opinion 1",
            unit: "",
            allowed: "[0, 1), gamma0 + gamma1 < 1",
            default: None,
            range: Some(ParamRange::closed(0.0, 1.0, false)),
        },
    ],
    sources: "Mukhopadhyay, Mazumdar, Roy, J. Stat. Phys. 2020, arXiv 2003.02885 (set-up; ODE derived)",
    example: "models/opinion-stubborn.toml",
    docs: "docs/models/opinion.md",
    read: read_spec::<OpinionStubbornSpec>,
};

/// The `opinion-biased` kind.
pub static OPINION_BIASED: Kind = Kind {
    name: "opinion-biased",
    title: "Majority-rule opinion dynamics with biased agents (2-choices rule); not a queue",
    params: &[Param {
        name: "alpha",
        meaning: "probability that an update adopts the superior opinion 1 outright",
        unit: "",
        allowed: "[0, 1]; several equilibria iff alpha < 1/9",
        default: None,
        range: Some(ParamRange::closed(0.0, 1.0, true)),
    }],
    sources: "Mukhopadhyay, Mazumdar, Roy, J. Stat. Phys. 2020, arXiv 2003.02885 (set-up; ODE derived)",
    example: "models/opinion-biased.toml",
    docs: "docs/models/opinion.md",
    read: read_spec::<OpinionBiasedSpec>,
};

impl KindSpec for OpinionStubbornSpec {
    fn kind(&self) -> &'static Kind {
        &OPINION_STUBBORN
    }
    fn lambda(&self) -> Option<f64> {
        None
    }
    /// One-dimensional: `levels` does not apply.
    fn build(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(OpinionStubborn::new(self.gamma0, self.gamma1)?))
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        Ok(Simulation::System(FiniteSystem::Opinion { gamma0: self.gamma0, gamma1: self.gamma1, alpha: 0.0 }))
    }
    /// Several equilibria: which one the numbers describe ([`several_equilibria_note`]).
    fn notes(&self) -> Vec<String> {
        OpinionStubborn::new(self.gamma0, self.gamma1).map_or_else(|_| Vec::new(), |m| several_equilibria_note(&m.equilibria()))
    }
}

/// With several equilibria in `[0, 1]` (`equilibria`, increasing), a note that the fixed point
/// reported is the one the solver reached, that the refined terms describe the finite system
/// near it, and that a finite system can leave it (for another stable equilibrium, or an
/// absorbing state such as `x = 1` of the biased rule). Empty with one equilibrium.
fn several_equilibria_note(equilibria: &[f64]) -> Vec<String> {
    if equilibria.len() < 2 {
        return Vec::new();
    }
    let list: Vec<String> = equilibria.iter().map(|x| format!("{x:.6}")).collect();
    vec![format!(
        "{} equilibria (x = {}): the fixed point printed is the one the solver reached, and the refined \
         terms describe the finite system near it; a finite system can leave it for another stable \
         equilibrium or an absorbing state, so simulations and exact chains need not stay near it \
         (`mfq check` and `mfq branches` show them all)",
        equilibria.len(),
        list.join(", ")
    )]
}

impl KindSpec for OpinionBiasedSpec {
    fn kind(&self) -> &'static Kind {
        &OPINION_BIASED
    }
    fn lambda(&self) -> Option<f64> {
        None
    }
    /// One-dimensional: `levels` does not apply.
    fn build(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(OpinionBiased::new(self.alpha)?))
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        Ok(Simulation::System(FiniteSystem::Opinion { gamma0: 0.0, gamma1: 0.0, alpha: self.alpha }))
    }
    /// Several equilibria: which one the numbers describe ([`several_equilibria_note`]).
    fn notes(&self) -> Vec<String> {
        OpinionBiased::new(self.alpha).map_or_else(|_| Vec::new(), |m| several_equilibria_note(&m.equilibria()))
    }
}
