//! Parameters shared by several model kinds, as the registry declares them (`mfq models`).

use crate::registry::{Param, ParamRange};

/// `lambda` of the homogeneous queueing kinds.
pub(crate) const LAMBDA: Param = Param {
    name: "lambda",
    meaning: "arrival rate per server (load rho, unit-rate servers)",
    unit: "jobs per mean job size per server",
    allowed: "> 0; stable iff < 1",
    default: None,
    range: Some(ParamRange::above(0.0)),
};

/// `lambda` of Pod with load-independent errors: an erring comparison sends the job to the
/// most loaded of `d` samples, so the tail decays like `(lambda eps d)^k` and the system is
/// stable iff `lambda < min(1, 1/(eps d))` (Bhambay, Mukhopadhyay, Vasantam, Perf. Eval. 2024).
pub(crate) const LAMBDA_POD_LI: Param = Param { allowed: "> 0; stable iff < min(1, 1/(eps d))", ..LAMBDA };

/// `lambda` of Pod with load-independent errors and phase-type job sizes (the condition of
/// [`LAMBDA_POD_LI`] on the load, derived as for exponential jobs).
pub(crate) const LAMBDA_PT_POD_LI: Param =
    Param { allowed: "> 0; stable iff rho = lambda E[S] < min(1, 1/(eps d)) (E[S]: the job_size mean)", ..LAMBDA_PT };

/// `lambda` of the kinds with phase-type job sizes: the load is `rho = lambda E[S]`.
pub(crate) const LAMBDA_PT: Param = Param {
    name: "lambda",
    meaning: "arrival rate per server (load rho = lambda E[S], unit-rate servers)",
    unit: "jobs per time unit per server",
    allowed: "> 0; stable iff rho = lambda E[S] < 1 (E[S]: the job_size mean)",
    default: None,
    range: Some(ParamRange::above(0.0)),
};

/// `d`, the number of servers sampled per arrival.
pub(crate) const D: Param = Param {
    name: "d",
    meaning: "number of servers sampled per arrival",
    unit: "",
    allowed: "integer in [1, 10000]",
    default: None,
    range: Some(ParamRange::integers(1.0, Some(10000.0))),
};

/// `job_size`, the `[model.job_size]` table of a phase-type law.
pub(crate) const JOB_SIZE: Param = Param {
    name: "job_size",
    meaning: "[model.job_size] table: law = exponential (mean) | h2 (mean, scv, f or p, mu1, mu2) | erlang (k, mean) | coxian (rates, next) | phase-type (alpha, a)",
    unit: "mean in time units",
    allowed: "mean > 0; h2: scv >= 1, f in (0, 1); at most 16 phases; default exponential, mean 1",
    default: Some("{ law = \"exponential\", mean = 1.0 }"), range: None,
};

/// `eps`, the probability that a comparison errs (Pod).
pub(crate) const EPS: Param = Param {
    name: "eps",
    meaning: "probability that a comparison errs (job sent to the most loaded sampled server)",
    unit: "",
    allowed: "[0, 1]",
    default: None,
    range: Some(ParamRange::closed(0.0, 1.0, true)),
};

/// `lambda` of the heterogeneous kinds.
pub(crate) const HETERO_LAMBDA: Param = Param {
    name: "lambda",
    meaning: "arrival rate per server (time unit: mean job size at a unit-speed server)",
    unit: "jobs per mean job size per server",
    allowed: "> 0; stable iff < sum_j gamma_j mu_j (ps-sq2: below the subset threshold lambda_c)",
    default: None,
    range: Some(ParamRange::above(0.0)),
};

/// `classes`, the `[[model.classes]]` tables of the heterogeneous kinds.
pub(crate) const CLASSES: Param = Param {
    name: "classes",
    meaning: "[[model.classes]] tables: fraction (gamma_j, fraction of servers) and speed (mu_j, service rate)",
    unit: "speed in jobs per mean job size",
    allowed: "1..16 classes; fractions in (0, 1] summing to 1 within 1e-9; speed in [1e-6, 1e6]",
    default: None,
    range: None,
};
