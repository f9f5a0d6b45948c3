//! Built-in models. Each file documents its ODE, state, parameters and source.

pub mod coxian;
pub mod generic;
pub mod hetero;
mod jiq;
mod jsq;
pub mod lld;
mod opinion;
pub mod phase_type;
mod pod;
pub mod redundancy;

pub use coxian::{PhaseTypeQueue, Routing};
pub use generic::{GenericModel, GenericSpec};
pub use hetero::{CostRule, PsSq2, Pull, Sampling, ServerClass, SpeedAware, SpeedAwarePolicy, StaticRouting};
pub use jiq::Jiq;
pub use jsq::Jsq;
pub use lld::Lld;
pub use opinion::{OpinionBiased, OpinionStubborn};
pub use phase_type::{JobSizeSpec, PhaseType};
pub use pod::{PodLd, PodLi};
pub use redundancy::{RedundancyMeanField, RedundancyPair};

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
    const D: ParamInfo = ParamInfo { name: "d", meaning: "number of servers sampled per arrival", range: "integer in [1, 10000]" };
    const JOB_SIZE: ParamInfo = ParamInfo {
        name: "job_size",
        meaning: "[model.job_size] table: law = exponential (mean) | h2 (mean, scv, f or p, mu1, mu2) | erlang (k, mean) | coxian (rates, next) | phase-type (alpha, a)",
        range: "mean > 0; h2: scv >= 1, f in (0, 1); at most 16 phases; default exponential, mean 1",
    };
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
        ModelInfo {
            kind: "jsq-ph",
            name: "SQ(d)/JSQ(d) with phase-type job sizes (state: queue length and phase of the job in service; Coxian H2)",
            parameters: vec![LAMBDA, D, JOB_SIZE],
            source: "Hellemans, PhD thesis (Antwerp), eqs. SQd_PH_proof1/2; Van Houdt, POMACS 3(2) art. 23, 2019 (Coxian form, order)",
            example: "models/sq2-h2.toml",
        },
        ModelInfo {
            kind: "pod-li-ph",
            name: "Pod with load-independent comparison errors, phase-type job sizes",
            parameters: vec![LAMBDA, D, EPS, JOB_SIZE],
            source: "Bhambay, Mukhopadhyay, Vasantam, Perf. Eval. 2024 (routing); phase-type form as for SQ(d) (derived)",
            example: "models/pod-li-h2.toml",
        },
        ModelInfo {
            kind: "jiq-ph",
            name: "Join-Idle-Queue with phase-type job sizes",
            parameters: vec![LAMBDA, JOB_SIZE],
            source: "Lu et al., Perf. Eval. 68(11), 2011; phase-type form as for SQ(d) (derived, docs/models/phase-type.md)",
            example: "models/jiq-h2.toml",
        },
        ModelInfo {
            kind: "lld",
            name: "LL(d): least loaded of d by workload (fixed point: workload ccdf by an ODE in w)",
            parameters: vec![LAMBDA, D, JOB_SIZE],
            source: "Hellemans and Van Houdt, SIGMETRICS 2018 (POMACS 2(2)); closed forms for exponential sizes",
            example: "models/lld2-h2.toml",
        },
        ModelInfo {
            kind: "opinion-stubborn",
            name: "Majority-rule opinion dynamics with stubborn agents (2 samples + itself); not a queue",
            parameters: vec![
                ParamInfo { name: "gamma0", meaning: "fraction of all agents stubborn with opinion 0", range: "[0, 1), gamma0 + gamma1 < 1" },
                ParamInfo { name: "gamma1", meaning: "fraction of all agents stubborn with opinion 1", range: "[0, 1), gamma0 + gamma1 < 1" },
            ],
            source: "Mukhopadhyay, Mazumdar, Roy, J. Stat. Phys. 2020, arXiv 2003.02885 (set-up; ODE derived)",
            example: "models/opinion-stubborn.toml",
        },
        ModelInfo {
            kind: "opinion-biased",
            name: "Majority-rule opinion dynamics with biased agents (2-choices rule); not a queue",
            parameters: vec![ParamInfo {
                name: "alpha",
                meaning: "probability that an update adopts the superior opinion 1 outright",
                range: "[0, 1]; several equilibria iff alpha < 1/9",
            }],
            source: "Mukhopadhyay, Mazumdar, Roy, J. Stat. Phys. 2020, arXiv 2003.02885 (set-up; ODE derived)",
            example: "models/opinion-biased.toml",
        },
        ModelInfo {
            kind: "redundancy",
            name: "Redundancy-d (i.i.d. or identical exponential copies, cancel on first completion): mean field, pair approximation (d = 2) for PS, FCFS, LPS(k), LCFS (the LCFS pair is 6.4% below simulation at lambda = 0.9), triplet approximation (d = 2, PS), LCFS limit (renewal equations on the job tree, derived; within 0.3% of simulation)",
            parameters: vec![
                ParamInfo { name: "lambda", meaning: "job arrival rate per server (each job sends d copies)", range: "> 0; i.i.d. copies stable iff < 1" },
                ParamInfo { name: "d", meaning: "copies per job, to distinct servers", range: "integer in [1, 10000]; 2 for the pair and triplet approximations; [1, 64] for the LCFS limit" },
                ParamInfo { name: "discipline", meaning: "per-server discipline of the copies", range: "\"ps\" (default), \"fcfs\", \"lps\", \"lcfs\"" },
                ParamInfo {
                    name: "approximation",
                    meaning: "mean field (any discipline), pair or triplet (PS) approximation, or the N -> inf limit from renewal equations (LCFS)",
                    range: "\"mean-field\" (default), \"pair\", \"triplet\", \"limit\"",
                },
                ParamInfo { name: "copies", meaning: "i.i.d. or identical copy sizes (identical: stability verdict only)", range: "\"iid\" (default), \"identical\"" },
                ParamInfo { name: "lps_k", meaning: "LPS(k): the k oldest copies share the server", range: "integer >= 1, only with discipline = \"lps\"" },
            ],
            source: "Gast and Van Houdt, POMACS 8(1), 2024 (arXiv 2401.07713; equations reconstructed); Anton, Ayesta, Jonckheere, Verloop, Oper. Res. 69(5), 2021 (stability); Gardner et al., Oper. Res. 65(4), 2017 (FCFS limit); LCFS limit derived in docs/models/redundancy.md",
            example: "models/redundancy-ps-pair.toml",
        },
        ModelInfo {
            kind: "sa-jsq",
            name: "Speed-aware JSQ (shortest queue, ties to the fastest class), heterogeneous server classes",
            parameters: vec![HETERO_LAMBDA, CLASSES],
            source: "Bhambay, Mukhopadhyay, Perf. Eval. 2022, arXiv 2203.01721 (fixed point and reduced ODE derived)",
            example: "models/hetero-sa-jsq-caseA.toml",
        },
        ModelInfo {
            kind: "sa-jiq",
            name: "Speed-aware JIQ (idle server of the fastest class, else a random server), heterogeneous server classes",
            parameters: vec![HETERO_LAMBDA, CLASSES],
            source: "derived (docs/models/heterogeneous.md); fallback rule ours: the SA-JIQ paper could not be identified",
            example: "models/hetero-sa-jiq-caseA.toml",
        },
        ModelInfo {
            kind: "pull",
            name: "Stolyar's PULL (uniform among idle servers of every class), heterogeneous server classes",
            parameters: vec![HETERO_LAMBDA, CLASSES],
            source: "Stolyar, Queueing Syst. 80(4), 2015, arXiv 1407.6343 (ODE and fixed point derived)",
            example: "models/hetero-pull-caseB.toml",
        },
        ModelInfo {
            kind: "ps-sq2",
            name: "Randomised SQ(2)-type routing on heterogeneous processor-sharing servers (ties at random)",
            parameters: vec![
                HETERO_LAMBDA,
                ParamInfo { name: "classes", meaning: "[[model.classes]] tables: fraction (gamma_j) and speed (capacity C_j)", range: "1..16 classes; fractions in (0, 1] summing to 1; speed in [1e-6, 1e6]" },
                ParamInfo { name: "sampling", meaning: "class sampling probabilities p_j of each of the two samples", range: "\"uniform\" (default, p = gamma), \"capacity\" (p_j ~ gamma_j C_j) or [p_1, ..., p_M] summing to 1" },
                ParamInfo { name: "rule", meaning: "cost compared: \"sq2\" n (default), \"lsc\" n/C, \"lsc-plus-one\" (n+1)/C", range: "sq2 | lsc | lsc-plus-one" },
            ],
            source: "Mukhopadhyay, Mazumdar, IEEE TCNS 3(2), 2016; SIGMETRICS 2014 poster; arXiv 1311.5806 (ODE derived)",
            example: "models/hetero-ps-sq2-caseA.toml",
        },
        ModelInfo {
            kind: "static-routing",
            name: "Optimal static (probabilistic) routing over server classes, square-root rule (comparison model)",
            parameters: vec![HETERO_LAMBDA, CLASSES],
            source: "square-root rule (Bell, Stidham, Manag. Sci. 29(7), 1983); compared in Mukhopadhyay, Mazumdar, IEEE TCNS 2016",
            example: "models/hetero-static-caseA.toml",
        },
        ModelInfo {
            kind: "generic",
            name: "Any density-dependent population process given by its transitions (jump and rate expression) in the file",
            parameters: vec![
                ParamInfo { name: "parameters", meaning: "[model.parameters] table of named numbers (--set NAME=VALUE changes them)", range: "finite numbers" },
                ParamInfo { name: "variables / families", meaning: "scalar state variables; indexed families x[k], k in a range, with boundary values", range: "names; ranges a..b in the parameters" },
                ParamInfo { name: "transitions", meaning: "[[model.transitions]]: jump (variable = change), rate (expression), optional for = \"k = 1..K\"", range: "rates >= 0 at feasible states" },
                ParamInfo { name: "conservation, observables, levels, initial, order", meaning: "optional: conservation laws, tail / arrival rate / loss / extras, truncation parameter, initial state, cooperative order", range: "see docs/models/generic.md" },
            ],
            source: "Kurtz, J. Appl. Prob. 7(1), 1970 (density-dependent population processes); the DDPP form of rmf_tool (Gast, Allmeier, Van Houdt)",
            example: "models/generic/jsq2.toml",
        },
    ]
}

const HETERO_LAMBDA: ParamInfo = ParamInfo {
    name: "lambda",
    meaning: "arrival rate per server (time unit: mean job size at a unit-speed server)",
    range: "> 0; stable iff < sum_j gamma_j mu_j (ps-sq2: below the subset threshold lambda_c)",
};
const CLASSES: ParamInfo = ParamInfo {
    name: "classes",
    meaning: "[[model.classes]] tables: fraction (gamma_j, fraction of servers) and speed (mu_j, service rate)",
    range: "1..16 classes; fractions in (0, 1] summing to 1 within 1e-9; speed in [1e-6, 1e6]",
};

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
