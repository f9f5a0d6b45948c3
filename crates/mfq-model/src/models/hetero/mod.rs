//! Heterogeneous server classes: speed-aware JSQ and JIQ ([`SpeedAware`]), Stolyar's PULL
//! ([`Pull`]), randomised SQ(2)-type routing on processor-sharing servers ([`PsSq2`]) and the
//! optimal static routing ([`StaticRouting`]).
//!
//! # Classes
//!
//! A model file lists the server classes as an array of tables, one per class, in any order:
//!
//! ```toml
//! [[model.classes]]
//! fraction = 0.5     # gamma_j: fraction of the servers in class j
//! speed = 1.6        # mu_j: service rate (PS models: the capacity C_j)
//! [[model.classes]]
//! fraction = 0.5
//! speed = 0.4
//! ```
//!
//! Classes are numbered from 1 in file order, in the state, in error messages
//! (`model.classes[2].speed` is the second table) and in the observables. Fractions are in
//! `(0, 1]` and sum to 1 within `1e-9`; speeds are in `[1e-6, 1e6]`; at most
//! [`MAX_CLASSES`] classes. The key is `speed` for every model: for processor-sharing servers
//! it is the capacity `C_j` (the rate at which a server works off job sizes, shared among its
//! jobs). Time unit: the mean job size at a unit-speed server; `lambda` is the arrival rate
//! per server (total arrival rate `N lambda` for `N` servers).
//!
//! # State
//!
//! [`StateLayout::ClassTail`](crate::StateLayout::ClassTail): `x[j*K + k - 1] = x_{j,k}`, the
//! fraction of class-`j` servers with at least `k` jobs, **normalised within the class**
//! (`x_{j,0} = 1`; some papers normalise by all servers, `x_{j,0} = gamma_j`, which changes
//! every rate by a factor `gamma_j`). Levels `k = 1..K`, `x_{j,K+1} = 0`: arrivals that would
//! create level `K + 1` are lost, and the mass at truncation is `max_j x_{j,K}`.
//!
//! # Observables
//!
//! [`Observables`] of these models: `tail[k-1] = sum_j gamma_j x_{j,k}` (a random server),
//! `mean_queue_length = L = sum_j gamma_j sum_k x_{j,k}`, `throughput` = accepted jobs per
//! server per unit time, `mean_response_time = L / throughput` (Little), `loss_probability` =
//! arrivals lost at level `K`, `mass_at_truncation = max_j x_{j,K}`. Per class `j` (1-based),
//! in `extras`:
//!
//! | name | meaning |
//! |---|---|
//! | `class{j}.busy_fraction` | `x_{j,1}` |
//! | `class{j}.mean_queue_length` | `L_j = sum_k x_{j,k}` (jobs per class-`j` server) |
//! | `class{j}.throughput` | accepted arrival rate per class-`j` server, `theta_j` (at a fixed point `= mu_j x_{j,1}`) |
//! | `class{j}.share_of_jobs` | `gamma_j theta_j / sum_i gamma_i theta_i` |
//! | `class{j}.mean_response_time` | `T_j = L_j / theta_j` (Little per class; absent when `theta_j = 0`) |
//!
//! followed by model-specific extras (documented on each model). The per-class tails
//! `P(Q >= k | class j) = x_{j,k}` are the state itself (`x[j*K + k - 1]`, named `x_j,k` by
//! [`StateLayout::name`](crate::StateLayout::name)); they are not repeated in `extras`, which
//! would add `M K` lines to every report.

mod kinds;
mod ps_sq2;
mod pull;
mod speed_aware;
mod static_routing;

pub use kinds::{
    ClassKind, ClassesSpec, PsSq2Spec, PullPolicy, PullSpec, SaJiqPolicy, SaJiqSpec, SaJsqPolicy, SaJsqSpec, StaticPolicy,
    StaticRoutingSpec, PS_SQ2, PULL, SA_JIQ, SA_JSQ, STATIC_ROUTING,
};
pub use ps_sq2::{CostRule, PsSq2, Sampling};
pub use pull::Pull;
pub use speed_aware::{SpeedAware, SpeedAwarePolicy};
pub use static_routing::StaticRouting;

use crate::models::tail_at;
use crate::{out_of_range, ModelError, Observables, Stability};
use serde::{Deserialize, Serialize};

/// Largest number of server classes (the SQ(2) stability check visits all `2^M - 1` subsets).
pub const MAX_CLASSES: usize = 16;

/// Smallest and largest allowed speed (capacity); the bounds keep the exact rational
/// comparisons of [`PsSq2`] inside 128-bit integers.
pub const SPEED_RANGE: (f64, f64) = (1e-6, 1e6);

/// One server class, a `[[model.classes]]` table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerClass {
    /// `gamma_j`: fraction of all servers that are in this class, in `(0, 1]`; the fractions
    /// of all classes sum to 1 (within `1e-9`).
    pub fraction: f64,
    /// `mu_j`: speed of a class-`j` server, in `[1e-6, 1e6]` (jobs of mean size 1 per unit
    /// time when busy; for processor-sharing models the capacity `C_j`, shared among the jobs
    /// present).
    pub speed: f64,
}

/// Validated classes, in file order, with their priority order by speed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Classes {
    /// `gamma_j`.
    pub gamma: Vec<f64>,
    /// `mu_j` (or `C_j`).
    pub mu: Vec<f64>,
    /// Class indices by decreasing speed; equal speeds keep file order (the earlier class first).
    pub by_speed: Vec<usize>,
}

impl Classes {
    /// Checks fractions and speeds (see the module docs).
    pub fn new(classes: &[ServerClass]) -> Result<Self, ModelError> {
        if classes.is_empty() || classes.len() > MAX_CLASSES {
            return Err(out_of_range(
                "model.classes",
                format!("{} classes", classes.len()),
                "1 to 16 [[model.classes]] tables, each with fraction and speed",
            ));
        }
        for (i, c) in classes.iter().enumerate() {
            if !(c.fraction.is_finite() && c.fraction > 0.0 && c.fraction <= 1.0) {
                return Err(out_of_range(&format!("model.classes[{}].fraction", i + 1), c.fraction, "a number in (0, 1]"));
            }
            if !(c.speed.is_finite() && c.speed >= SPEED_RANGE.0 && c.speed <= SPEED_RANGE.1) {
                return Err(out_of_range(&format!("model.classes[{}].speed", i + 1), c.speed, "a number in [1e-6, 1e6]"));
            }
        }
        let sum: f64 = classes.iter().map(|c| c.fraction).sum();
        if (sum - 1.0).abs() > 1e-9 {
            return Err(out_of_range(
                "model.classes",
                format!("fractions summing to {sum}"),
                "fractions (gamma_j) summing to 1 within 1e-9",
            ));
        }
        let mut by_speed: Vec<usize> = (0..classes.len()).collect();
        // stable sort: equal speeds keep file order
        by_speed.sort_by(|&a, &b| classes[b].speed.total_cmp(&classes[a].speed));
        Ok(Classes { gamma: classes.iter().map(|c| c.fraction).collect(), mu: classes.iter().map(|c| c.speed).collect(), by_speed })
    }

    /// Number of classes `M`.
    pub fn len(&self) -> usize {
        self.gamma.len()
    }

    /// Total capacity per server, `sum_j gamma_j mu_j`.
    pub fn capacity(&self) -> f64 {
        self.gamma.iter().zip(&self.mu).map(|(g, m)| g * m).sum()
    }
}

/// `model.lambda` for heterogeneous models: finite and `> 0`.
pub(crate) fn check_hetero_lambda(lambda: f64) -> Result<(), ModelError> {
    if lambda.is_finite() && lambda > 0.0 {
        Ok(())
    } else {
        Err(out_of_range("model.lambda", lambda, "a finite number > 0 (stable iff below the model's capacity condition)"))
    }
}

/// `lambda < sum_j gamma_j mu_j`: the stability condition of every work-conserving-enough
/// policy here (SA-JSQ, SA-JIQ, PULL, optimal static routing).
pub(crate) fn capacity_stability(lambda: f64, classes: &Classes, what: &str) -> Stability {
    let cap = classes.capacity();
    if lambda < cap {
        Stability::Stable { condition: format!("lambda = {lambda} < sum_j gamma_j mu_j = {cap} ({what})") }
    } else {
        Stability::Unstable {
            reason: format!(
                "lambda = {} >= sum_j gamma_j mu_j = {cap}: arrivals exceed the total service capacity ({what} is stable iff lambda < sum_j gamma_j mu_j)",
                crate::short_number(lambda)
            ),
        }
    }
}

/// Tail entry `x_{j,k}` of the class-tail state `x` (levels `K`): `x_{j,0} = 1`,
/// `x_{j,k} = 0` for `k > K`, clamped to `[0, 1]`.
#[inline]
pub(crate) fn class_tail(x: &[f64], levels: usize, j: usize, k: usize) -> f64 {
    tail_at(&x[j * levels..(j + 1) * levels], k)
}

/// Index of `x_{j,k}` (`k >= 1`) in the state vector.
#[inline]
pub(crate) fn idx(levels: usize, j: usize, k: usize) -> usize {
    j * levels + k - 1
}

/// The transitions of class `j` of a class-tail model whose servers change one job at a time
/// (a density-dependent population process, Gast and Van Houdt, SIGMETRICS 2017, eq. (1)): an
/// arrival to a class-`j` server with exactly `k - 1` jobs at rate `arrive(k - 1)` per such
/// server raises `x_{j,k}`, a departure from one with exactly `k` jobs at rate `mu_j` lowers it
/// (`k = 1..K`; arrivals to a full server are lost: no transition). There are `N_j = gamma_j N`
/// class-`j` servers, so one server changes `x_{j,k}` by `1 / (gamma_j N)`: the jump is
/// `1/gamma_j` in units of `1/N`, and the rate per object (per `N`) is `gamma_j` times the
/// rate per class-`j` server. Sum of rate times jump: `arrive(k-1) (x_{j,k-1} - x_{j,k}) -
/// mu_j (x_{j,k} - x_{j,k+1})`, the drift of every class-tail model here but the pinned
/// (speed-aware) and idle-pool (PULL) ones.
#[inline]
pub(crate) fn class_birth_death(
    x: &[f64],
    classes: &Classes,
    levels: usize,
    j: usize,
    arrive: impl Fn(usize) -> f64,
    visit: &mut crate::TransitionVisitor<'_>,
) {
    let (g, mu) = (classes.gamma[j], classes.mu[j]);
    let up = 1.0 / g;
    for k in 1..=levels {
        let xk = class_tail(x, levels, j, k);
        visit(&[(idx(levels, j, k), up)], g * arrive(k - 1) * (class_tail(x, levels, j, k - 1) - xk));
        visit(&[(idx(levels, j, k), -up)], g * mu * (xk - class_tail(x, levels, j, k + 1)));
    }
}

/// Observables of a class-tail state (see the module docs).
///
/// `theta[j]` = accepted arrival rate per class-`j` server, `lost` = rate of lost arrivals
/// per server (all-server normalisation), `prob_wait` = fraction of arrivals routed to a busy
/// server, lost ones included (they are subtracted here: [`Observables::waiting`]).
pub(crate) fn class_observables(
    x: &[f64],
    classes: &Classes,
    levels: usize,
    lambda: f64,
    theta: &[f64],
    lost: f64,
    prob_wait: Option<f64>,
) -> Observables {
    let m = classes.len();
    let mut tail = vec![0.0; levels];
    let mut mean_queue_length = 0.0;
    let mut mass_at_truncation: f64 = 0.0;
    let mut extras = Vec::with_capacity(5 * m + 4);
    let throughput: f64 = (0..m).map(|j| classes.gamma[j] * theta[j]).sum();
    for (j, &theta_j) in theta.iter().enumerate().take(m) {
        let g = classes.gamma[j];
        let mut lj = 0.0;
        for (k, t) in tail.iter_mut().enumerate() {
            let v = class_tail(x, levels, j, k + 1);
            *t += g * v;
            lj += v;
        }
        mean_queue_length += g * lj;
        mass_at_truncation = mass_at_truncation.max(class_tail(x, levels, j, levels));
        let c = j + 1;
        extras.push((format!("class{c}.busy_fraction"), class_tail(x, levels, j, 1)));
        extras.push((format!("class{c}.mean_queue_length"), lj));
        extras.push((format!("class{c}.throughput"), theta_j));
        extras.push((format!("class{c}.share_of_jobs"), if throughput > 0.0 { g * theta_j / throughput } else { 0.0 }));
        if theta_j > 0.0 {
            extras.push((format!("class{c}.mean_response_time"), lj / theta_j));
        }
    }
    let loss_probability = (lost / lambda).clamp(0.0, 1.0);
    Observables {
        tail,
        mean_queue_length: Some(mean_queue_length),
        throughput: Some(throughput),
        mean_response_time: (throughput > 0.0).then(|| mean_queue_length / throughput),
        prob_wait: prob_wait.map(|p| Observables::waiting(p, loss_probability)),
        loss_probability,
        mass_at_truncation,
        extras,
    }
}

/// The empty and the full state of a class-tail model (the extremal states of the
/// componentwise order).
pub(crate) fn empty_and_full(dim: usize) -> Vec<crate::NamedState> {
    vec![crate::NamedState { name: "empty".into(), x: vec![0.0; dim] }, crate::NamedState { name: "full".into(), x: vec![1.0; dim] }]
}

#[cfg(test)]
pub(crate) mod testutil {
    use crate::{Jacobian, MeanFieldModel};

    /// Max |J_analytic - J_central| over rows `i` and columns `c` with `skip(c) = false`,
    /// relative to max(1, |J|). Columns on a discontinuity (pinned levels) are skipped by the caller.
    pub fn jacobian_error_skipping(m: &dyn MeanFieldModel, x: &[f64], skip: impl Fn(usize) -> bool) -> f64 {
        let n = m.dim();
        let mut a = Jacobian::new(n, m.sparsity());
        m.jacobian(x, &mut a);
        assert!(a.out_of_band().is_none(), "analytic Jacobian writes outside its band");
        let h = 1e-8;
        let mut xp = x.to_vec();
        let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
        let mut err: f64 = 0.0;
        for c in (0..n).filter(|c| !skip(*c)) {
            xp[c] = x[c] + h;
            m.drift(&xp, &mut fp);
            xp[c] = x[c] - h;
            m.drift(&xp, &mut fm);
            xp[c] = x[c];
            for i in 0..n {
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                let an = a.get(i, c);
                err = err.max((an - fd).abs() / an.abs().max(1.0));
            }
        }
        err
    }

    /// A state with strictly decreasing class tails in (0, 1), entries above ~1e-4.
    pub fn interior_class_tail(classes: usize, levels: usize, seed: &[f64]) -> Vec<f64> {
        let mut x = Vec::with_capacity(classes * levels);
        for j in 0..classes {
            let mut v = 0.97;
            for k in 0..levels {
                v *= 0.55 + 0.4 * seed[(j * levels + k) % seed.len()];
                x.push(v.max(1e-4 / (k + 1) as f64));
            }
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(fraction: f64, speed: f64) -> ServerClass {
        ServerClass { fraction, speed }
    }

    #[test]
    fn classes_are_checked_and_named() {
        let e = Classes::new(&[c(0.5, 1.0), c(0.4, 2.0)]).unwrap_err();
        assert!(e.to_string().contains("model.classes = fractions summing to 0.9"), "{e}");
        let e = Classes::new(&[c(0.5, 1.0), c(0.5, 0.0)]).unwrap_err();
        assert!(e.to_string().contains("model.classes[2].speed = 0"), "{e}");
        let e = Classes::new(&[c(1.5, 1.0)]).unwrap_err();
        assert!(e.to_string().contains("model.classes[1].fraction = 1.5"), "{e}");
        assert!(Classes::new(&[]).is_err());
        let k = Classes::new(&[c(0.3, 1.0), c(0.3, 2.0), c(0.4, 1.0)]).unwrap();
        assert_eq!(k.by_speed, vec![1, 0, 2]);
        assert!((k.capacity() - 1.3).abs() < 1e-15);
    }
}
