//! Built-in models. Each file documents its ODE, state, parameters and source.

mod jiq;
mod jsq;
mod pod;

pub use jiq::Jiq;
pub use jsq::Jsq;
pub use pod::{PodLd, PodLi};

use serde::Serialize;

/// One parameter of a built-in model, for `mfq models` and the docs.
#[derive(Debug, Clone, Serialize)]
pub struct ParamInfo {
    /// Key in the `[model]` table.
    pub name: &'static str,
    /// What it is, with units.
    pub meaning: &'static str,
    /// Allowed values.
    pub range: &'static str,
}

/// A built-in model: its `kind` key, name, parameters and source.
#[derive(Debug, Clone, Serialize)]
pub struct ModelInfo {
    /// Value of `kind` in the `[model]` table.
    pub kind: &'static str,
    /// Name in the field's terms.
    pub name: &'static str,
    /// Parameters (besides `kind`).
    pub parameters: Vec<ParamInfo>,
    /// Paper(s) and equation the model comes from.
    pub source: &'static str,
    /// Example model file in `models/`.
    pub example: &'static str,
}

/// Every built-in model, in the order `mfq models` lists them.
pub fn catalog() -> Vec<ModelInfo> {
    const LAMBDA: ParamInfo =
        ParamInfo { name: "lambda", meaning: "arrival rate per server (load rho, unit-rate servers)", range: "> 0; stable iff < 1" };
    const D: ParamInfo = ParamInfo { name: "d", meaning: "number of servers sampled per arrival", range: "integer >= 1" };
    const EPS: ParamInfo = ParamInfo {
        name: "eps",
        meaning: "probability that a comparison errs (job sent to the most loaded sampled server)",
        range: "[0, 1]",
    };
    vec![
        ModelInfo {
            kind: "jsq",
            name: "JSQ(d) / power-of-d (supermarket model); d = 1 is random routing (M/M/1 per server)",
            parameters: vec![LAMBDA, D],
            source: "Mitzenmacher, IEEE TPDS 12(10), 2001; Vvedenskaya, Dobrushin, Karpelevich, Probl. Inf. Transm. 32(1), 1996",
            example: "models/jsq-d2.toml",
        },
        ModelInfo {
            kind: "pod-li",
            name: "Pod with load-independent comparison errors",
            parameters: vec![LAMBDA, D, EPS],
            source: "Bhambay, Mukhopadhyay, Vasantam, Perf. Eval. 2024 (art. 102408); MobiHoc 2023 (d = 2)",
            example: "models/pod-errors-li.toml",
        },
        ModelInfo {
            kind: "pod-ld",
            name: "Pod with load-dependent comparison errors (error only if max - min <= g)",
            parameters: vec![
                LAMBDA,
                D,
                EPS,
                ParamInfo { name: "g", meaning: "threshold on max - min of the sampled queue lengths", range: "integer >= 0" },
            ],
            source: "Bhambay, Mukhopadhyay, Vasantam, arXiv 2303.00869 (MobiHoc 2023); Perf. Eval. 2024",
            example: "models/pod-errors-ld.toml",
        },
        ModelInfo {
            kind: "jiq",
            name: "Join-Idle-Queue (single dispatcher, exponential service)",
            parameters: vec![LAMBDA],
            source: "Lu et al., Perf. Eval. 68(11), 2011; Stolyar, Queueing Syst. 80(4), 2015",
            example: "models/jiq.toml",
        },
    ]
}

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
        Err(crate::out_of_range("model.lambda", lambda, "a finite number > 0 (the system is stable iff lambda < 1)"))
    }
}

pub(crate) fn check_d(d: u32) -> Result<(), crate::ModelError> {
    if d >= 1 {
        Ok(())
    } else {
        Err(crate::out_of_range("model.d", d, "an integer >= 1"))
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
            reason: format!("lambda = {lambda} >= 1: arrivals exceed the total service capacity ({what} is stable iff lambda < 1)"),
        }
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
        assert!(m.transitions(x, &mut |jump, rate| {
            assert!(rate >= -1e-15, "negative rate {rate}");
            for &(i, c) in jump {
                g[i] += c * rate;
            }
        }));
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
    let mut a_prev = 1.0;
    for k in 1..=x.len() {
        let xk = tail_at(x, k);
        let a_k = phi(xk);
        dx[k - 1] = lambda * (a_prev - a_k) - (xk - tail_at(x, k + 1));
        a_prev = a_k;
    }
}

/// Tridiagonal Jacobian of [`local_tail_drift`], given `dphi = phi'`.
#[inline]
pub(crate) fn local_tail_jacobian(x: &[f64], jac: &mut crate::Jacobian, lambda: f64, dphi: impl Fn(f64) -> f64) {
    jac.clear();
    let n = x.len();
    for i in 0..n {
        if i >= 1 {
            jac.set(i, i - 1, lambda * dphi(x[i - 1].clamp(0.0, 1.0)));
        }
        jac.set(i, i, -lambda * dphi(x[i].clamp(0.0, 1.0)) - 1.0);
        if i + 1 < n {
            jac.set(i, i + 1, 1.0);
        }
    }
}

/// Transitions of a tail-form model of unit-rate servers: an arrival that joins a server with
/// exactly `k - 1` jobs (rate `lambda (A_{k-1} - A_k)` per server, with `arrival_tail(j) = A_j`,
/// `A_0 = 1`) raises `x_k` by `1/N`; a departure from a server with exactly `k` jobs (rate
/// `x_k - x_{k+1}`) lowers it. Arrivals beyond level `K` are lost (no jump).
pub(crate) fn tail_transitions(
    x: &[f64],
    lambda: f64,
    arrival_tail: impl Fn(usize) -> f64,
    visit: &mut dyn FnMut(&[(usize, f64)], f64),
) {
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
