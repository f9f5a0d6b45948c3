//! Moldable jobs with a concave speed-up and blocking (kind `moldable`): the fluid optimum of a
//! static server allocation, the Erlang loss baselines, and the mean field [`Moldable`] with
//! its fixed point, blocking probability and mean execution time of accepted jobs
//! (docs/models/moldable.md).
//!
//! The system (constructed here from the abstract of Ghanbarian, Mukhopadhyay, Mazumdar,
//! Guillemin, "On Optimal Server Allocation for Moldable Jobs with Concave Speed-Up",
//! arXiv 2406.09427, 2024; the paper's own allocation rule is not reproduced): `n` servers,
//! Poisson arrivals at rate `lambda n`, exponential work of mean 1; a job given `k` servers
//! (`1 <= k <= d`) keeps them for its whole life and runs at speed `s(k)`, with `s(1) = 1` and
//! `s` increasing and concave. A static randomised allocation gives `k` servers with
//! probability `p_k`. In the fluid limit without blocking, `z_k` (jobs holding `k` servers, per
//! server) satisfies `dz_k/dt = lambda p_k - s(k) z_k`, so `z_k = lambda p_k / s(k)`, the
//! servers in use are `lambda sum_k p_k k / s(k)` (at most 1) and the mean execution time of a
//! job is `sum_k p_k / s(k)`.

use crate::finite::{FiniteSystem, Simulation};
use crate::registry::{read_spec, Kind, KindSpec, Param, ParamRange};
use crate::{out_of_range, MeanFieldModel, ModelError, NamedState, Observables, Stability, StateLayout};

/// Checks a speed-up table `s = [s(1), ..., s(d)]`: `s(1) = 1`, increasing, concave
/// (`s(k+1) - s(k)` non-increasing).
///
/// # Errors
/// [`ModelError::OutOfRange`] naming `model.d` (empty table, i.e. `d < 1`, or `d > 10000`) or
/// `model.speedup.values[i]` with the violated rule.
pub fn check_concave_speedup(s: &[f64]) -> Result<(), ModelError> {
    if s.is_empty() || s.len() > 10_000 {
        return Err(out_of_range("model.d", s.len(), "an integer in [1, 10000] (servers a job may use)"));
    }
    if let Some(i) = s.iter().position(|v| !v.is_finite()) {
        return Err(out_of_range(&format!("model.speedup.values[{i}]"), s[i], "a finite number"));
    }
    if (s[0] - 1.0).abs() > 1e-12 {
        return Err(out_of_range("model.speedup.values[0]", s[0], "1 (s(1) = 1: one server runs a job at unit speed)"));
    }
    for k in 1..s.len() {
        if s[k] <= s[k - 1] {
            return Err(out_of_range(
                &format!("model.speedup.values[{k}]"),
                s[k],
                &format!("s({}) > s({k}) = {} (the speed-up must be increasing)", k + 1, s[k - 1]),
            ));
        }
        if k >= 2 && s[k] - s[k - 1] > (s[k - 1] - s[k - 2]) * (1.0 + 1e-12) + 1e-15 {
            return Err(out_of_range(
                &format!("model.speedup.values[{k}]"),
                s[k],
                &format!("s({}) - s({k}) <= s({k}) - s({}) = {} (the speed-up must be concave)", k + 1, k - 1, s[k - 1] - s[k - 2]),
            ));
        }
    }
    Ok(())
}

/// A static allocation: `p[k - 1]` = probability of giving a job `k` servers.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// Allocation probabilities, `p[k - 1]` for `k` servers.
    pub p: Vec<f64>,
    /// Mean execution time of a job, `sum_k p_k / s(k)` (mean work 1).
    pub mean_execution_time: f64,
    /// Fraction of servers in use in the fluid limit, `lambda sum_k p_k k / s(k)`.
    pub occupancy: f64,
}

/// The static allocation that minimises the fluid mean execution time `sum_k p_k / s(k)` subject
/// to `lambda sum_k p_k k / s(k) <= 1` (no blocking in the fluid limit): a linear program with
/// two constraints, solved exactly by enumerating its vertices (allocations on one size, or on
/// two sizes with the occupancy constraint binding). `None` when `lambda > 1` (every allocation
/// overloads the servers: `k / s(k) >= 1`).
///
/// # Errors
/// As [`check_concave_speedup`]; `model.lambda` when not finite or `<= 0`.
pub fn fluid_optimal_allocation(lambda: f64, s: &[f64]) -> Result<Option<Allocation>, ModelError> {
    check_concave_speedup(s)?;
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(out_of_range("model.lambda", lambda, "a finite number > 0 (arrivals per server per mean work)"));
    }
    let d = s.len();
    let a: Vec<f64> = (0..d).map(|i| (i + 1) as f64 / s[i]).collect(); // servers x time per job
    let cap = 1.0 / lambda;
    let tol = 1e-12;
    let mut best: Option<(f64, usize, usize, f64)> = None; // (cost, i, j, weight on j)
    let mut consider = |cost: f64, i: usize, j: usize, w: f64| {
        if best.is_none_or(|b| cost < b.0 - 1e-15) {
            best = Some((cost, i, j, w));
        }
    };
    for i in 0..d {
        if a[i] <= cap * (1.0 + tol) {
            consider(1.0 / s[i], i, i, 0.0);
        }
        for j in i + 1..d {
            if a[j] > a[i] {
                let w = (cap - a[i]) / (a[j] - a[i]);
                if (0.0..=1.0).contains(&w) {
                    consider((1.0 - w) / s[i] + w / s[j], i, j, w);
                }
            }
        }
    }
    Ok(best.map(|(cost, i, j, w)| {
        let mut p = vec![0.0; d];
        p[i] += 1.0 - w;
        p[j] += w;
        let occupancy = lambda * p.iter().zip(&a).map(|(p, a)| p * a).sum::<f64>();
        Allocation { p, mean_execution_time: cost, occupancy }
    }))
}

/// Erlang's loss formula `B(load, c)`: the blocking probability of `c` servers offered `load`
/// Erlangs (A. K. Erlang 1917), by the stable recursion `B(a, 0) = 1`,
/// `B(a, c) = a B(a, c-1) / (c + a B(a, c-1))`.
pub fn erlang_b(load: f64, servers: usize) -> f64 {
    (1..=servers).fold(1.0, |b, c| load * b / (c as f64 + load * b))
}

/// Blocking probability of the baseline "every job gets exactly `k` servers, and is blocked if
/// fewer than `k` are idle" with `n` servers: an Erlang loss system of `floor(n / k)` groups of
/// `k` servers offered `lambda n / s(k)` Erlangs (its blocking is insensitive to the law of the
/// work, Sevastyanov 1957).
pub fn fixed_k_blocking(n: usize, lambda: f64, k: usize, s_k: f64) -> f64 {
    erlang_b(lambda * n as f64 / s_k, n / k)
}

/// Largest number of servers a job may use, `d`.
pub const MAX_D: usize = 10_000;

/// The speed-up `s(k)` of a job on `k` servers (`k = 1 ..= d`); every form has `s(1) = 1`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "form", rename_all = "kebab-case", deny_unknown_fields)]
pub enum MoldableSpeedup {
    /// `s(k) = k^gamma`, `gamma` in `(0, 1]` (increasing and concave).
    Power {
        /// Exponent.
        gamma: f64,
    },
    /// Amdahl's law with serial fraction `serial` in `[0, 1)`: `s(k) = 1 / (serial + (1 - serial) / k)`.
    Amdahl {
        /// Fraction of the work that does not parallelise.
        serial: f64,
    },
    /// `s(k) = values[k - 1]`, checked by [`check_concave_speedup`]; its length must be at least `d`.
    Table {
        /// The speed-ups on 1, 2, ... servers.
        values: Vec<f64>,
    },
}

impl MoldableSpeedup {
    /// The table `[s(1), ..., s(d)]`.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.d` (not in `[1, 10000]`, or longer than a table),
    /// `model.speedup.gamma` (not in `(0, 1]`), `model.speedup.serial` (not in `[0, 1)`), or a
    /// table entry ([`check_concave_speedup`]).
    pub fn table(&self, d: usize) -> Result<Vec<f64>, ModelError> {
        if d == 0 || d > MAX_D {
            return Err(out_of_range("model.d", d, "an integer in [1, 10000] (most servers a job may use, d(n) >= 1)"));
        }
        let s = match self {
            MoldableSpeedup::Power { gamma } => {
                if !(*gamma > 0.0 && *gamma <= 1.0) {
                    return Err(out_of_range(
                        "model.speedup.gamma",
                        gamma,
                        "a number in (0, 1] (s(k) = k^gamma: gamma > 1 is convex, gamma <= 0 not increasing)",
                    ));
                }
                (1..=d).map(|k| (k as f64).powf(*gamma)).collect()
            }
            MoldableSpeedup::Amdahl { serial } => {
                if !(*serial >= 0.0 && *serial < 1.0) {
                    return Err(out_of_range(
                        "model.speedup.serial",
                        serial,
                        "a number in [0, 1) (serial fraction; 1 makes s constant, not increasing)",
                    ));
                }
                (1..=d).map(|k| 1.0 / (serial + (1.0 - serial) / k as f64)).collect()
            }
            MoldableSpeedup::Table { values } => {
                check_concave_speedup(values)?;
                if values.len() < d {
                    return Err(out_of_range(
                        "model.d",
                        d,
                        &format!("an integer in [1, {}] (the speed-up table gives s(1) .. s({}))", values.len(), values.len()),
                    ));
                }
                values[..d].to_vec()
            }
        };
        check_concave_speedup(&s)?;
        Ok(s)
    }
}

/// How servers are allocated to an arriving job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheme {
    /// The fluid-optimal static allocation ([`fluid_optimal_allocation`]; every job on one
    /// server when `lambda > 1`). In the finite system a job that finds fewer idle servers than
    /// its draw takes all the idle ones; it is blocked only when no server is idle.
    Optimal,
    /// Baseline: every job on exactly one server (blocked when none is idle).
    OneServer,
    /// Baseline: every job on exactly `d` servers (blocked when fewer than `d` are idle).
    DServers,
}

/// The law of a job's work (mean 1; a job on `k` servers runs for `work / s(k)`). Only the
/// finite-n simulation reads it: the mean field depends on the mean alone.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "law", rename_all = "kebab-case", deny_unknown_fields)]
pub enum WorkLaw {
    /// Exp(1).
    Exponential,
    /// Always 1.
    Deterministic,
    /// Two-phase hyperexponential of mean 1 and squared coefficient of variation `scv >= 1`,
    /// balanced means (`p / mu_1 = (1 - p) / mu_2`).
    H2 {
        /// Squared coefficient of variation.
        scv: f64,
    },
}

impl WorkLaw {
    /// `(p, mu_1, mu_2)` of the balanced-means H2 (`p / mu_1 = (1 - p) / mu_2 = 1/2`) of mean 1
    /// and squared coefficient of variation `scv`: `p = (1 + sqrt((scv - 1) / (scv + 1))) / 2`,
    /// `mu_1 = 2 p`, `mu_2 = 2 (1 - p)` (from `E[X^2] = p / mu_1^2 + (1 - p) / mu_2^2` times 2
    /// `= 1 + scv`; checked in the unit tests). `None` for the other laws.
    pub fn h2_parameters(&self) -> Option<(f64, f64, f64)> {
        let WorkLaw::H2 { scv } = *self else { return None };
        let p = 0.5 * (1.0 + ((scv - 1.0) / (scv + 1.0)).sqrt());
        Some((p, 2.0 * p, 2.0 * (1.0 - p)))
    }

    fn check(&self) -> Result<(), ModelError> {
        match *self {
            WorkLaw::H2 { scv } if !(scv.is_finite() && (1.0..=1e6).contains(&scv)) => {
                Err(out_of_range("model.work.scv", scv, "a number in [1, 1e6] (squared coefficient of variation of an H2)"))
            }
            _ => Ok(()),
        }
    }
}

/// The allocation probabilities `p[k - 1]` of `scheme` at `lambda` for the speed-up table `s`.
///
/// # Errors
/// As [`fluid_optimal_allocation`].
pub fn scheme_allocation(scheme: Scheme, lambda: f64, s: &[f64]) -> Result<Vec<f64>, ModelError> {
    let d = s.len();
    let mut p = vec![0.0; d];
    match scheme {
        Scheme::OneServer => p[0] = 1.0,
        Scheme::DServers => p[d - 1] = 1.0,
        Scheme::Optimal => match fluid_optimal_allocation(lambda, s)? {
            Some(a) => p = a.p,
            None => p[0] = 1.0,
        },
    }
    Ok(p)
}

/// Mean field of moldable jobs with blocking (kind `moldable`). State `z = [z_1, ..., z_d]`,
/// `z_k` = jobs holding `k` servers per server; `u = sum_k k z_k <= 1` is the fraction of busy
/// servers. The drift is
///
/// ```text
/// dz_k/dt = lambda p_k a(z) - s(k) z_k,
/// a(z) = 1 if u < 1,   a(z) = min{1, sum_k k s(k) z_k / (lambda sum_k k p_k)} if u >= 1,
/// ```
///
/// where `a` is the fraction of arrivals accepted: all while servers are idle, and on the face
/// `u = 1` the fraction that keeps `u` there (Filippov's sliding solution: servers are taken as
/// fast as they are freed), equal for every allocation size. For a single size (the baselines)
/// this is the fluid limit of the Erlang loss system (Kelly, "Loss networks", Annals of Applied
/// Probability 1(3), 1991, sec. 3); for a mixture it is a construction (docs/models/moldable.md).
///
/// Fixed point: with `rho_a = lambda sum_k p_k k / s(k)` (servers the allocation needs per
/// server), `z_k = a lambda p_k / s(k)` with `a = min(1, 1 / rho_a)`: blocking probability
/// `1 - a`, and mean execution time of accepted jobs `sum_k p_k / s(k)`.
///
/// Source: system constructed from the abstract of Ghanbarian, Mukhopadhyay, Mazumdar,
/// Guillemin, arXiv 2406.09427 (2024); drift and fixed point derived here.
///
/// ```
/// use mfq_model::models::moldable::{Moldable, MoldableSpeedup, Scheme};
/// let m = Moldable::new(0.3, 8, &MoldableSpeedup::Power { gamma: 0.5 }, Scheme::Optimal).unwrap();
/// // every job on 8 servers: occupancy 0.3 * 8 / sqrt(8) < 1, no blocking
/// assert!((m.mean_execution_time() - 1.0 / 8f64.sqrt()).abs() < 1e-15);
/// assert_eq!(m.blocking(), 0.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Moldable {
    lambda: f64,
    s: Vec<f64>,
    p: Vec<f64>,
    /// `lambda sum_k k p_k`: servers requested per server per unit time.
    demand: f64,
    /// `rho_a = lambda sum_k p_k k / s(k)`.
    rho: f64,
    scheme: Scheme,
}

impl Moldable {
    /// Arrival rate `lambda` per server, jobs on at most `d` servers, speed-up `speedup`,
    /// allocation `scheme`.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.lambda` (not finite or `<= 0`) or as
    /// [`MoldableSpeedup::table`].
    pub fn new(lambda: f64, d: usize, speedup: &MoldableSpeedup, scheme: Scheme) -> Result<Self, ModelError> {
        let s = speedup.table(d)?;
        if !(lambda.is_finite() && lambda > 0.0 && lambda <= 1e6) {
            return Err(out_of_range("model.lambda", lambda, "a number in (0, 1e6] (arrivals per server per mean work)"));
        }
        let p = scheme_allocation(scheme, lambda, &s)?;
        let demand = lambda * p.iter().enumerate().map(|(i, p)| (i + 1) as f64 * p).sum::<f64>();
        let rho = lambda * p.iter().zip(&s).enumerate().map(|(i, (p, s))| (i + 1) as f64 * p / s).sum::<f64>();
        Ok(Moldable { lambda, s, p, demand, rho, scheme })
    }

    /// The allocation probabilities `p[k - 1]`.
    pub fn allocation(&self) -> &[f64] {
        &self.p
    }

    /// The speed-up table `[s(1), ..., s(d)]`.
    pub fn speedup(&self) -> &[f64] {
        &self.s
    }

    /// Servers the allocation needs per server, `rho_a = lambda sum_k p_k k / s(k)`.
    pub fn occupancy_demand(&self) -> f64 {
        self.rho
    }

    /// Blocking probability at the fixed point, `max(0, 1 - 1 / rho_a)`.
    pub fn blocking(&self) -> f64 {
        (1.0 - 1.0 / self.rho).max(0.0)
    }

    /// Mean execution time of accepted jobs, `sum_k p_k / s(k)` (mean work 1).
    pub fn mean_execution_time(&self) -> f64 {
        self.p.iter().zip(&self.s).map(|(p, s)| p / s).sum()
    }

    /// The accepted fraction `a(z)` of the drift.
    fn accepted(&self, z: &[f64]) -> f64 {
        let (mut u, mut freed) = (0.0, 0.0);
        for (i, (z, s)) in z.iter().zip(&self.s).enumerate() {
            u += (i + 1) as f64 * z;
            freed += (i + 1) as f64 * s * z;
        }
        if u < 1.0 {
            1.0
        } else {
            (freed / self.demand).min(1.0)
        }
    }
}

impl MeanFieldModel for Moldable {
    fn name(&self) -> String {
        let scheme = match self.scheme {
            Scheme::Optimal => "optimal",
            Scheme::OneServer => "one-server",
            Scheme::DServers => "d-servers",
        };
        format!("moldable(lambda={}, d={}, {scheme})", self.lambda, self.s.len())
    }
    fn dim(&self) -> usize {
        self.s.len()
    }
    fn drift(&self, z: &[f64], dz: &mut [f64]) {
        let a = self.accepted(z);
        for k in 0..z.len() {
            dz[k] = self.lambda * self.p[k] * a - self.s[k] * z[k];
        }
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Named { names: (1..=self.s.len()).map(|k| format!("z{k}")).collect() }
    }
    /// Jobs per server `sum_k z_k` as the mean queue length, completions per server
    /// `sum_k s(k) z_k` as the throughput, the mean execution time of accepted jobs (Little:
    /// jobs over completions) as the response time, the blocking probability `1 - a(z)` as the
    /// loss probability; extras `blocking`, `mean_execution_time`, `busy_fraction` (`u`),
    /// `occupancy_demand` (`rho_a`), `p{k}` (allocation), and the Erlang-free fluid value
    /// `fluid_mean_execution_time` (`sum_k p_k / s(k)`).
    fn observables(&self, z: &[f64]) -> Observables {
        let a = self.accepted(z);
        let jobs: f64 = z.iter().sum();
        let done: f64 = z.iter().zip(&self.s).map(|(z, s)| z * s).sum();
        let busy: f64 = z.iter().enumerate().map(|(i, z)| (i + 1) as f64 * z).sum();
        let exec = (done > 0.0).then(|| jobs / done);
        let mut extras = vec![
            ("blocking".into(), 1.0 - a),
            ("mean_execution_time".into(), exec.unwrap_or(self.mean_execution_time())),
            ("busy_fraction".into(), busy),
            ("occupancy_demand".into(), self.rho),
            ("fluid_mean_execution_time".into(), self.mean_execution_time()),
        ];
        for (i, p) in self.p.iter().enumerate().filter(|(_, p)| **p > 0.0) {
            extras.push((format!("p{}", i + 1), *p));
        }
        Observables {
            tail: Vec::new(),
            mean_queue_length: Some(jobs),
            throughput: Some(done),
            mean_response_time: exec,
            prob_wait: None,
            loss_probability: 1.0 - a,
            mass_at_truncation: 0.0,
            extras,
        }
    }
    /// `empty` (no job) and `full` (every server held by one-server jobs, `z_1 = 1`).
    fn extremal_states(&self) -> Vec<NamedState> {
        let mut full = vec![0.0; self.dim()];
        full[0] = 1.0;
        vec![NamedState { name: "empty".into(), x: vec![0.0; self.dim()] }, NamedState { name: "full".into(), x: full }]
    }
    /// Clamps to `z_k >= 0`, then scales down so that `sum_k k z_k <= 1`.
    fn project(&self, z: &mut [f64]) {
        z.iter_mut().for_each(|v| *v = v.max(0.0));
        let u: f64 = z.iter().enumerate().map(|(i, z)| (i + 1) as f64 * z).sum();
        if u > 1.0 {
            z.iter_mut().for_each(|v| *v /= u);
        }
    }
    fn stability(&self) -> Stability {
        Stability::Stable { condition: "loss system: at most n servers busy, blocked jobs are lost".into() }
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        let a = 1.0f64.min(1.0 / self.rho);
        Some(self.p.iter().zip(&self.s).map(|(p, s)| a * self.lambda * p / s).collect())
    }
    /// `a(z)` jumps on the face `u = 1`.
    fn is_smooth(&self) -> bool {
        false
    }
}

/// `kind = "moldable"`: the parameters of [`Moldable`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoldableSpec {
    /// Arrival rate per server (mean work 1).
    pub lambda: f64,
    /// Most servers a job may use, `d(n)`.
    pub d: usize,
    /// The speed-up function.
    pub speedup: MoldableSpeedup,
    /// The allocation scheme (default `optimal`).
    #[serde(default = "default_scheme")]
    pub scheme: Scheme,
    /// The law of a job's work for the simulation (default exponential).
    #[serde(default = "default_work")]
    pub work: WorkLaw,
}

fn default_scheme() -> Scheme {
    Scheme::Optimal
}

fn default_work() -> WorkLaw {
    WorkLaw::Exponential
}

/// The `moldable` kind.
pub static MOLDABLE: Kind = Kind {
    name: "moldable",
    title: "Moldable jobs with a concave speed-up and blocking: n servers, a job on k <= d servers runs at speed s(k), lost when no server is idle",
    params: &[
        Param {
            name: "lambda",
            meaning: "arrival rate per server",
            unit: "jobs per mean work per server",
            allowed: "(0, 1e6]",
            default: None,
            range: Some(ParamRange { min: 0.0, min_inclusive: false, max: Some(1e6), max_inclusive: true, integer: false }),
        },
        Param { name: "d", meaning: "most servers a job may use, d(n)", unit: "servers", allowed: "integer in [1, 10000]", default: None, range: Some(ParamRange::integers(1.0, Some(10000.0))) },
        Param {
            name: "speedup",
            meaning: "[model.speedup] table: form = power (gamma: s(k) = k^gamma) | amdahl (serial: s(k) = 1 / (serial + (1 - serial) / k)) | table (values = [s(1), s(2), ...])",
            unit: "",
            allowed: "s(1) = 1, s increasing and concave: gamma in (0, 1], serial in [0, 1), a table checked entry by entry",
            default: None,
            range: None,
        },
        Param {
            name: "scheme",
            meaning: "allocation: optimal (fluid-optimal static allocation, fallback to the idle servers) | one-server | d-servers (baselines)",
            unit: "",
            allowed: "optimal | one-server | d-servers",
            default: Some("\"optimal\""),
            range: None,
        },
        Param {
            name: "work",
            meaning: "[model.work] table, law of a job's work (simulation only): law = exponential | deterministic | h2 (scv)",
            unit: "mean 1",
            allowed: "h2: scv in [1, 1e6]",
            default: Some("{ law = \"exponential\" }"),
            range: None,
        },
    ],
    sources: "Ghanbarian, Mukhopadhyay, Mazumdar, Guillemin, On Optimal Server Allocation for Moldable Jobs with Concave Speed-Up, arXiv 2406.09427 (2024) (abstract; allocation, drift and fixed point constructed here)",
    example: "models/moldable.toml",
    docs: "docs/models/moldable.md",
    read: read_spec::<MoldableSpec>,
};

impl KindSpec for MoldableSpec {
    fn kind(&self) -> &'static Kind {
        &MOLDABLE
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    /// `d`-dimensional: `levels` does not apply.
    fn build(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        self.work.check()?;
        Ok(Box::new(Moldable::new(self.lambda, self.d, &self.speedup, self.scheme)?))
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        self.work.check()?;
        let m = Moldable::new(self.lambda, self.d, &self.speedup, self.scheme)?;
        Ok(Simulation::System(FiniteSystem::Moldable {
            lambda: self.lambda,
            speedup: m.s,
            p: m.p,
            fallback: self.scheme == Scheme::Optimal,
            work: self.work,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqrt_table(d: usize) -> Vec<f64> {
        (1..=d).map(|k| (k as f64).sqrt()).collect()
    }

    /// s(k) = sqrt(k), d = 8: the occupancy constraint is `lambda sum p_k sqrt(k) <= 1`. By hand:
    /// lambda = 0.3: every job on 8 servers (0.3 sqrt 8 < 1), time 1/sqrt 8; lambda = 0.5: on 4
    /// (0.5 * 2 = 1), time 1/2; lambda = 0.7: sqrt k must average 1/0.7, between k = 2 and 3, so
    /// p_3 = (1/0.7 - sqrt 2)/(sqrt 3 - sqrt 2); lambda = 1: one server each; lambda > 1: none.
    #[test]
    fn the_fluid_optimum_by_hand() {
        let s = sqrt_table(8);
        let a = fluid_optimal_allocation(0.3, &s).unwrap().unwrap();
        assert_eq!(a.p[7], 1.0);
        assert!((a.mean_execution_time - 1.0 / 8f64.sqrt()).abs() < 1e-15);
        let a = fluid_optimal_allocation(0.5, &s).unwrap().unwrap();
        assert!((a.p[3] - 1.0).abs() < 1e-12 && (a.mean_execution_time - 0.5).abs() < 1e-12 && (a.occupancy - 1.0).abs() < 1e-12);
        let a = fluid_optimal_allocation(0.7, &s).unwrap().unwrap();
        let p3 = (1.0 / 0.7 - 2f64.sqrt()) / (3f64.sqrt() - 2f64.sqrt());
        assert!((a.p[2] - p3).abs() < 1e-12 && (a.p[1] - (1.0 - p3)).abs() < 1e-12, "{a:?}");
        assert!((a.mean_execution_time - ((1.0 - p3) / 2f64.sqrt() + p3 / 3f64.sqrt())).abs() < 1e-12);
        assert!((a.mean_execution_time - 0.7012).abs() < 1e-4 && (a.occupancy - 1.0).abs() < 1e-12);
        let a = fluid_optimal_allocation(1.0, &s).unwrap().unwrap();
        assert_eq!((a.p[0], a.mean_execution_time), (1.0, 1.0));
        assert_eq!(fluid_optimal_allocation(1.2, &s).unwrap(), None);
    }

    /// Amdahl's law with serial fraction 0.1, `s(k) = 1 / (0.1 + 0.9 / k)`, so `k / s(k) =
    /// 0.1 k + 0.9`: at lambda = 0.9 the servers per job must average `1/0.9`, i.e.
    /// `0.1 E[k] + 0.9 = 1/0.9`, `E[k] = 2.111`: k = 2 w.p. 8/9, k = 3 w.p. 1/9.
    #[test]
    fn amdahl_optimum_by_hand() {
        let s: Vec<f64> = (1..=8).map(|k| 1.0 / (0.1 + 0.9 / k as f64)).collect();
        let a = fluid_optimal_allocation(0.9, &s).unwrap().unwrap();
        assert!((a.p[1] - 8.0 / 9.0).abs() < 1e-12 && (a.p[2] - 1.0 / 9.0).abs() < 1e-12, "{a:?}");
        assert!((a.mean_execution_time - (8.0 / 9.0 * (0.1 + 0.45) + 1.0 / 9.0 * (0.1 + 0.3))).abs() < 1e-12);
        let a = fluid_optimal_allocation(0.5, &s).unwrap().unwrap();
        assert_eq!(a.p[7], 1.0);
        assert!((a.mean_execution_time - (0.1 + 0.9 / 8.0)).abs() < 1e-15);
    }

    /// The recursion against the defining sum `B = (a^c / c!) / sum_{i <= c} a^i / i!`, in logs.
    #[test]
    fn erlang_b_equals_its_defining_sum() {
        for (a, c) in [(25.0, 25usize), (50.0, 100), (3.5, 2), (100.0, 80), (12.0, 0)] {
            let terms: Vec<f64> = (0..=c).map(|i| i as f64 * f64::ln(a) - (1..=i).map(|j| (j as f64).ln()).sum::<f64>()).collect();
            let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = terms.iter().map(|t| (t - top).exp()).sum();
            let want = (terms[c] - top).exp() / sum;
            assert!((erlang_b(a, c) - want).abs() < 1e-13 * want.max(1e-300), "B({a}, {c}) = {} vs {want}", erlang_b(a, c));
        }
        // n = 100, lambda = 0.5, sqrt speed-up, every job on 4 servers: B(25, 25), critical
        assert!((fixed_k_blocking(100, 0.5, 4, 2.0) - erlang_b(25.0, 25)).abs() < 1e-15);
    }

    #[test]
    fn bad_speedups_name_the_entry_and_the_rule() {
        let e = check_concave_speedup(&[1.0, 1.5, 2.2]).unwrap_err().to_string();
        assert!(e.contains("model.speedup.values[2] = 2.2") && e.contains("concave"), "{e}");
        let e = check_concave_speedup(&[1.0, 0.9]).unwrap_err().to_string();
        assert!(e.contains("model.speedup.values[1] = 0.9") && e.contains("increasing"), "{e}");
        let e = check_concave_speedup(&[1.1, 1.5]).unwrap_err().to_string();
        assert!(e.contains("model.speedup.values[0] = 1.1") && e.contains("s(1) = 1"), "{e}");
        let e = check_concave_speedup(&[]).unwrap_err().to_string();
        assert!(e.contains("model.d = 0"), "{e}");
        assert!(fluid_optimal_allocation(0.0, &[1.0]).unwrap_err().to_string().contains("model.lambda = 0"));
        assert!(check_concave_speedup(&sqrt_table(16)).is_ok());
    }

    /// The d-servers baseline in overload: the mean-field blocking `1 - 1/rho_a` is the fluid
    /// limit of Erlang's formula, `B(rho c, c) -> 1 - 1/rho` (Kelly 1991, sec. 3), here
    /// `B(lambda n / s(d), n / d)` at n = 800000 (error O(1/n)). Under load the one-server
    /// baseline's Erlang blocking vanishes, as does the mean field's.
    #[test]
    fn mean_field_blocking_is_the_erlang_fluid_limit() {
        let sp = MoldableSpeedup::Power { gamma: 0.5 };
        let m = Moldable::new(0.5, 8, &sp, Scheme::DServers).unwrap();
        assert!((m.occupancy_demand() - 0.5 * 8f64.sqrt()).abs() < 1e-12);
        let n = 800_000;
        let erlang = fixed_k_blocking(n, 0.5, 8, 8f64.sqrt());
        assert!((m.blocking() - (1.0 - 1.0 / (0.5 * 8f64.sqrt()))).abs() < 1e-15);
        assert!((m.blocking() - erlang).abs() < 1e-4, "mean field {} vs Erlang B {erlang}", m.blocking());
        let one = Moldable::new(0.8, 8, &sp, Scheme::OneServer).unwrap();
        assert_eq!(one.blocking(), 0.0);
        assert!(fixed_k_blocking(100_000, 0.8, 1, 1.0) < 1e-100);
        assert_eq!(one.mean_execution_time(), 1.0);
    }

    /// Forward Euler on the drift from the empty and the full state reaches the analytic fixed
    /// point, below capacity (lambda = 0.3, every job on 8 servers) and on the face u = 1 (the
    /// d-servers baseline at lambda = 0.5, where the sliding acceptance holds the state).
    #[test]
    fn the_drift_relaxes_to_the_fixed_point() {
        let sp = MoldableSpeedup::Power { gamma: 0.5 };
        for (lambda, scheme) in [(0.3, Scheme::Optimal), (0.5, Scheme::DServers), (0.7, Scheme::Optimal)] {
            let m = Moldable::new(lambda, 8, &sp, scheme).unwrap();
            let want = m.analytic_fixed_point().unwrap();
            for start in m.extremal_states() {
                let mut z = start.x.clone();
                let mut dz = vec![0.0; 8];
                for _ in 0..40_000 {
                    m.drift(&z, &mut dz);
                    z.iter_mut().zip(&dz).for_each(|(z, d)| *z += 1e-3 * d);
                }
                let err = z.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                assert!(err < 1e-3, "lambda {lambda} {scheme:?} from {}: {z:?} vs {want:?}", start.name);
            }
            let o = m.observables(&want);
            assert!((o.mean_response_time.unwrap() - m.mean_execution_time()).abs() < 1e-12);
            assert!((o.loss_probability - m.blocking()).abs() < 1e-12);
        }
        // lambda = 0.7: the fluid optimum, 0.7012 (the_fluid_optimum_by_hand), occupancy 1, no blocking
        let m = Moldable::new(0.7, 8, &sp, Scheme::Optimal).unwrap();
        assert!((m.mean_execution_time() - 0.7012).abs() < 1e-4 && m.blocking() == 0.0);
    }

    #[test]
    fn bad_parameters_name_the_field_the_value_and_the_rule() {
        let err = |l: f64, d: usize, sp: MoldableSpeedup| Moldable::new(l, d, &sp, Scheme::Optimal).unwrap_err().to_string();
        let e = err(0.5, 4, MoldableSpeedup::Power { gamma: 1.5 });
        assert!(e.contains("model.speedup.gamma = 1.5") && e.contains("(0, 1]"), "{e}");
        let e = err(0.5, 4, MoldableSpeedup::Amdahl { serial: 1.0 });
        assert!(e.contains("model.speedup.serial = 1") && e.contains("[0, 1)"), "{e}");
        let e = err(0.5, 0, MoldableSpeedup::Power { gamma: 0.5 });
        assert!(e.contains("model.d = 0") && e.contains("d(n) >= 1"), "{e}");
        let e = err(0.5, 3, MoldableSpeedup::Table { values: vec![1.0, 1.5, 2.2] });
        assert!(e.contains("model.speedup.values[2] = 2.2") && e.contains("concave"), "{e}");
        let e = err(0.5, 3, MoldableSpeedup::Table { values: vec![1.0, 1.5] });
        assert!(e.contains("model.d = 3") && e.contains("[1, 2]"), "{e}");
        let e = err(-1.0, 3, MoldableSpeedup::Power { gamma: 0.5 });
        assert!(e.contains("model.lambda = -1"), "{e}");
        let spec = MoldableSpec {
            lambda: 0.5,
            d: 2,
            speedup: MoldableSpeedup::Power { gamma: 0.5 },
            scheme: Scheme::Optimal,
            work: WorkLaw::H2 { scv: 0.5 },
        };
        let e = spec.build(1).err().unwrap().to_string();
        assert!(e.contains("model.work.scv = 0.5"), "{e}");
    }

    /// The balanced H2 has mean 1 and the asked scv: `E[X^2] = 2 (p / mu1^2 + (1-p) / mu2^2)`.
    #[test]
    fn h2_work_has_mean_one_and_its_scv() {
        for scv in [1.0, 4.0, 20.0] {
            let (p, m1, m2) = WorkLaw::H2 { scv }.h2_parameters().unwrap();
            let mean = p / m1 + (1.0 - p) / m2;
            let second = 2.0 * (p / (m1 * m1) + (1.0 - p) / (m2 * m2));
            assert!((mean - 1.0).abs() < 1e-12 && (second - 1.0 - scv).abs() < 1e-9, "scv {scv}: {mean} {second}");
        }
    }
}
