//! Built-in models. Each file documents its ODE, state, parameters and source.

pub mod batch;
pub mod cdn;
pub mod coxian;
pub mod generic;
pub mod hetero;
mod jiq;
mod jsq;
pub mod k_of_n;
pub mod lld;
pub mod lqf;
pub mod moldable;
pub mod mpr_mac;
mod opinion;
pub mod phase_type;
mod pod;
pub mod redundancy;
pub mod redundancy_graph;

pub(crate) mod params;
pub(crate) mod roots;

pub use batch::{BatchExact, BatchNetwork, BatchSpec, Speedup, BATCH};
pub use cdn::{CdnCache, CdnParams, CdnSpec, CDN_CACHE};
pub use coxian::{JiqPhSpec, JsqPhSpec, PhaseTypeQueue, PodLiPhSpec, Routing, JIQ_PH, JSQ_PH, POD_LI_PH};
pub use generic::{GenericModel, GenericSpec, GENERIC};
pub use hetero::{
    CostRule, PsSq2, PsSq2Spec, Pull, PullSpec, SaJiqSpec, SaJsqSpec, Sampling, ServerClass, SpeedAware, SpeedAwarePolicy, StaticRouting,
    StaticRoutingSpec, PS_SQ2, PULL, SA_JIQ, SA_JSQ, STATIC_ROUTING,
};
pub use jiq::{Jiq, JiqSpec, JIQ};
pub use jsq::{Jsq, JsqSpec, JSQ};
pub use k_of_n::{KOfNSpec, K_OF_N};
pub use lld::{Lld, LldSpec, LLD};
pub use lqf::{Lqf, LqfSpec, LQF};
pub use moldable::{Moldable, MoldableSpec, MOLDABLE};
pub use mpr_mac::{MprMac, MprMacSpec, MPR_MAC};
pub use opinion::{OpinionBiased, OpinionBiasedSpec, OpinionStubborn, OpinionStubbornSpec, OPINION_BIASED, OPINION_STUBBORN};
pub use phase_type::{JobSizeSpec, PhaseType};
pub use pod::{PodLd, PodLdSpec, PodLi, PodLiSpec, POD_LD, POD_LI};
pub use redundancy::{RedundancyMeanField, RedundancyPair, RedundancySpec, REDUNDANCY};
pub use redundancy_graph::{RedundancyGraph, RedundancyGraphSpec, REDUNDANCY_GRAPH};

/// `x_i` with the tail conventions `x_0 = 1`, `x_i = 0` for `i > K`, clamped to `[0, 1]`.
#[inline]
pub(crate) fn tail_at(x: &[f64], i: usize) -> f64 {
    if i == 0 {
        1.0
    } else if i <= x.len() {
        x[i - 1].clamp(0.0, 1.0)
    } else {
        0.0
    }
}

pub(crate) fn check_lambda(lambda: f64) -> Result<(), crate::ModelError> {
    if lambda.is_finite() && lambda > 0.0 {
        Ok(())
    } else {
        Err(crate::out_of_range(
            "model.lambda",
            lambda,
            "a finite number > 0 (arrival rate per server; the stability condition is the kind's, `mfq models` lists it)",
        ))
    }
}

/// Largest `d` (servers sampled per arrival): the drifts raise tails to the power `d` with
/// `powi(d as i32)`, which is wrong beyond `i32::MAX`, and LL(d) takes `O(d)` integration substeps.
pub const MAX_D: u32 = 10_000;

pub(crate) fn check_d(d: u32) -> Result<(), crate::ModelError> {
    if (1..=MAX_D).contains(&d) {
        Ok(())
    } else {
        Err(crate::out_of_range("model.d", d, "an integer in [1, 10000]"))
    }
}

pub(crate) fn check_levels(levels: usize) -> Result<(), crate::ModelError> {
    if levels >= 1 {
        Ok(())
    } else {
        Err(crate::out_of_range("truncation.levels", levels, "an integer >= 1"))
    }
}

pub(crate) fn stable_below_one(lambda: f64, what: &str) -> crate::Stability {
    if lambda < 1.0 {
        crate::Stability::Stable { condition: format!("lambda < 1 ({what})") }
    } else {
        crate::Stability::Unstable {
            reason: format!(
                "lambda = {} >= 1: arrivals exceed the total service capacity ({what} is stable iff lambda < 1)",
                crate::short_number(lambda)
            ),
        }
    }
}

#[cfg(test)]
mod tail_tests {
    use super::*;
    use crate::{Jacobian, Sparsity};

    /// The tridiagonal fast path of `local_tail_jacobian` (band rows) equals the entry-wise one
    /// (dense storage), bit for bit, including clamped entries and the edges.
    #[test]
    fn tail_jacobian_band_rows_equal_entrywise_writes() {
        let x = [1.2, 0.9, 0.5, 0.2, -0.1, 0.0];
        let dphi = |v: f64| 3.0 * v * v;
        let mut band = Jacobian::new(6, Sparsity::Banded { lower: 1, upper: 1 });
        band.set(5, 5, 7.0); // stale values are overwritten
        let mut dense = Jacobian::new(6, Sparsity::Dense);
        local_tail_jacobian(&x, &mut band, 0.9, dphi);
        local_tail_jacobian(&x, &mut dense, 0.9, dphi);
        for i in 0..6 {
            for j in 0..6 {
                assert_eq!(band.get(i, j).to_bits(), dense.get(i, j).to_bits(), "({i}, {j})");
            }
        }
        assert_eq!(dense.get(1, 0), 0.9 * 3.0, "x_1 = 1.2 is clamped to 1");
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use crate::{finite_difference_jacobian, Jacobian, MeanFieldModel};

    /// Max |J_analytic - J_fd| over the band at `x`, relative to max(1, |J|).
    pub fn jacobian_error(m: &dyn MeanFieldModel, x: &[f64]) -> f64 {
        let n = m.dim();
        let mut a = Jacobian::new(n, m.sparsity());
        let mut f = Jacobian::new(n, m.sparsity());
        m.jacobian(x, &mut a);
        assert!(a.out_of_band().is_none(), "analytic Jacobian writes outside its band");
        // central differences, independent of the model's own jacobian code
        let h = 1e-8;
        let mut xp = x.to_vec();
        let mut fp = vec![0.0; n];
        let mut fm = vec![0.0; n];
        for j in 0..n {
            xp[j] = x[j] + h;
            m.drift(&xp, &mut fp);
            xp[j] = x[j] - h;
            m.drift(&xp, &mut fm);
            xp[j] = x[j];
            for i in 0..n {
                f.add(i, j, (fp[i] - fm[i]) / (2.0 * h));
            }
        }
        assert!(f.out_of_band().is_none(), "drift depends on entries outside the declared band");
        let _ = finite_difference_jacobian;
        let mut err: f64 = 0.0;
        for i in 0..n {
            for j in 0..n {
                let (u, v) = (a.get(i, j), f.get(i, j));
                err = err.max((u - v).abs() / u.abs().max(1.0));
            }
        }
        err
    }

    /// Max |sum_l jump_l rate_l(x) - f(x)|: the transitions must reproduce the drift.
    pub fn transitions_drift_error(m: &dyn MeanFieldModel, x: &[f64]) -> f64 {
        let n = m.dim();
        let mut f = vec![0.0; n];
        m.drift(x, &mut f);
        let mut g = vec![0.0; n];
        m.transitions().expect("the model provides its transitions").visit(x, &mut |jump, rate| {
            assert!(rate >= -1e-15, "negative rate {rate}");
            for &(i, c) in jump {
                g[i] += c * rate;
            }
        });
        f.iter().zip(&g).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
    }

    /// A random strictly decreasing tail state in (0, 1), entries above ~1e-6 so that central
    /// differences with step 1e-8 activate no clamp.
    pub fn interior_tail(seed: &[f64]) -> Vec<f64> {
        let mut v = 0.98;
        seed.iter()
            .map(|s| {
                v *= 0.6 + 0.38 * s;
                v
            })
            .collect()
    }
}

/// Drift of a tail-form model whose arrivals join a server with at least `j` jobs with
/// probability `phi(x_j)` (`phi(1) = 1`, `phi(0) = 0`), unit-rate FCFS servers:
/// `dx_k/dt = lambda (phi(x_{k-1}) - phi(x_k)) - (x_k - x_{k+1})`.
#[inline]
pub(crate) fn local_tail_drift(x: &[f64], dx: &mut [f64], lambda: f64, phi: impl Fn(f64) -> f64) {
    // x_k clamped to [0, 1] (tail_at), carried from one level to the next
    let mut a_prev = 1.0;
    let mut xk = tail_at(x, 1);
    for (k, d) in dx[..x.len()].iter_mut().enumerate() {
        let x_next = x.get(k + 1).map_or(0.0, |v| v.clamp(0.0, 1.0));
        let a_k = phi(xk);
        *d = lambda * (a_prev - a_k) - (xk - x_next);
        a_prev = a_k;
        xk = x_next;
    }
}

/// Tridiagonal Jacobian of [`local_tail_drift`], given `dphi = phi'`.
#[inline]
pub(crate) fn local_tail_jacobian(x: &[f64], jac: &mut crate::Jacobian, lambda: f64, dphi: impl Fn(f64) -> f64) {
    let n = x.len();
    if let Some(rows) = jac.band_rows_mut(1, 1) {
        // tridiagonal storage, row i = [J[i][i-1], J[i][i], J[i][i+1], LU fill-in]
        let mut below = 0.0;
        for (i, (row, xi)) in rows.zip(x).enumerate() {
            let g = lambda * dphi(xi.clamp(0.0, 1.0));
            row[0] = below;
            row[1] = -g - 1.0;
            row[2] = if i + 1 < n { 1.0 } else { 0.0 };
            row[3] = 0.0;
            below = g;
        }
        return;
    }
    jac.clear();
    // lambda phi'(x_{i-1}), carried from row i - 1 (one phi' per level)
    let mut below = 0.0;
    for (i, xi) in x.iter().enumerate() {
        let g = lambda * dphi(xi.clamp(0.0, 1.0));
        if i >= 1 {
            jac.set(i, i - 1, below);
        }
        jac.set(i, i, -g - 1.0);
        if i + 1 < n {
            jac.set(i, i + 1, 1.0);
        }
        below = g;
    }
}

/// Transitions of a tail-form model of unit-rate servers: an arrival that joins a server with
/// exactly `k - 1` jobs (rate `lambda (A_{k-1} - A_k)` per server, with `arrival_tail(j) = A_j`,
/// `A_0 = 1`) raises `x_k` by `1/N`; a departure from a server with exactly `k` jobs (rate
/// `x_k - x_{k+1}`) lowers it. Arrivals beyond level `K` are lost (no jump).
pub(crate) fn tail_transitions(x: &[f64], lambda: f64, arrival_tail: impl Fn(usize) -> f64, visit: &mut crate::TransitionVisitor<'_>) {
    let mut a_prev = 1.0;
    for k in 1..=x.len() {
        let a_k = arrival_tail(k);
        visit(&[(k - 1, 1.0)], lambda * (a_prev - a_k));
        visit(&[(k - 1, -1.0)], tail_at(x, k) - tail_at(x, k + 1));
        a_prev = a_k;
    }
}

/// The untruncated fixed point `x_k = lambda phi(x_{k-1})`, `x_0 = 1`, of [`local_tail_drift`].
pub(crate) fn local_tail_fixed_point(levels: usize, lambda: f64, phi: impl Fn(f64) -> f64) -> Vec<f64> {
    let mut v = 1.0;
    (0..levels)
        .map(|_| {
            v = lambda * phi(v);
            v
        })
        .collect()
}
