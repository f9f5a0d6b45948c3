//! Redundant requests, k of n (kind `k-of-n`): `N` servers, each request sent to `n` of them,
//! served when `k` of its `n` copies complete; the other copies are then removed, instantly or
//! after a removal time.
//!
//! The system (constructed here from the abstract of Shah, Lee, Ramchandran, "When do redundant
//! requests reduce latency?", IEEE Trans. Communications 64(2), 2016, arXiv 1311.2851; the
//! paper's own equations are not reproduced, docs/models/k-of-n.md says what is published and
//! what is built here):
//!
//! - `N` = `servers` identical servers, Poisson arrivals of requests at rate `N lambda`.
//! - A request has `n` copies (tasks), to be served by `n` distinct servers; copy service times
//!   are i.i.d. of mean 1 ([`ServiceLaw`]: exponential, H2 "heavier", shifted exponential
//!   "lighter"). The request is served when `k` of its copies have completed.
//! - At that instant its other copies are removed: waiting copies at no cost, copies in service
//!   by holding their server for `removal` time units (`0`: instantly).
//! - [`Dispatch::Central`] (the paper's setting): one FCFS buffer of requests; a free server
//!   takes a copy of the oldest request that still has unstarted copies and none at this server.
//!   [`Dispatch::Random`]: the `n` copies join the FCFS queues of `n` distinct servers chosen
//!   uniformly at random.
//!
//! There is no mean field here: the kind is simulated (`mfq simulate`, mfq-sim's `k_of_n`
//! family); [`KOfNSpec::region`] is its stability verdict (exact in the cases listed there), and
//! [`closed_form_response_time`] the mean response time where a closed form exists.

use crate::finite::{FiniteSystem, Simulation};
use crate::models::moldable::WorkLaw;
use crate::registry::{read_spec, Kind, KindSpec, ModelSpec, Param, ParamRange, ReadError};
use crate::{out_of_range, short_number, MeanFieldModel, ModelError, Stability, StabilityRegion};

/// Largest number of servers `N` (the central buffer scans requests per free server).
pub const MAX_SERVERS: u32 = 10_000;

/// Law of one copy's service time, mean 1 (the time unit).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "law", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ServiceLaw {
    /// Exp(1): memoryless.
    Exponential,
    /// Balanced-means two-phase hyperexponential of mean 1 and squared coefficient of variation
    /// `scv >= 1` (the parameters of [`WorkLaw::h2_parameters`]): "heavier" than exponential.
    H2 {
        /// Squared coefficient of variation, in `[1, 1e6]`.
        scv: f64,
    },
    /// `shift + Exp` of mean `1 - shift`: "lighter" than exponential (`shift = 1`: deterministic).
    ShiftedExponential {
        /// Deterministic part, in `[0, 1]`.
        shift: f64,
    },
}

impl ServiceLaw {
    /// Checks the law's parameter.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.service.scv` (not in `[1, 1e6]`) or
    /// `model.service.shift` (not in `[0, 1]`).
    pub fn validate(&self) -> Result<(), ModelError> {
        match *self {
            ServiceLaw::H2 { scv } if !(scv.is_finite() && (1.0..=1e6).contains(&scv)) => {
                Err(out_of_range("model.service.scv", scv, "a number in [1, 1e6] (squared coefficient of variation of an H2)"))
            }
            ServiceLaw::ShiftedExponential { shift } if !(0.0..=1.0).contains(&shift) => {
                Err(out_of_range("model.service.shift", shift, "a number in [0, 1] (deterministic part of shift + Exp of mean 1 - shift)"))
            }
            _ => Ok(()),
        }
    }

    /// `(p, mu_1, mu_2)` of the H2: phase 1 (rate `mu_1`) with probability `p`.
    pub fn h2(&self) -> Option<(f64, f64, f64)> {
        match *self {
            ServiceLaw::H2 { scv } => WorkLaw::H2 { scv }.h2_parameters(),
            _ => None,
        }
    }

    /// `E[M]` and `E[M^2]` of `M`, the minimum of `m >= 1` i.i.d. copies:
    /// exponential `1/m`, `2/m^2`; shifted `c + Exp(m / (1 - c))`; H2: given that `j` of the `m`
    /// copies draw phase 1 (binomial), `M` is Exp(`j mu_1 + (m - j) mu_2`).
    pub fn min_moments(&self, m: u32) -> (f64, f64) {
        let mf = m as f64;
        match *self {
            ServiceLaw::Exponential => (1.0 / mf, 2.0 / (mf * mf)),
            ServiceLaw::ShiftedExponential { shift: c } => {
                let e = (1.0 - c) / mf;
                (c + e, c * c + 2.0 * c * e + 2.0 * e * e)
            }
            ServiceLaw::H2 { .. } => {
                let (p, mu1, mu2) = self.h2().expect("an H2");
                let (mut m1, mut m2) = (0.0, 0.0);
                // binomial weights by the recurrence C(m, j+1) = C(m, j) (m - j) / (j + 1), in logs
                let mut log_c = 0.0f64;
                for j in 0..=m {
                    if j > 0 {
                        log_c += ((m - j + 1) as f64).ln() - (j as f64).ln();
                    }
                    let w = (log_c + j as f64 * p.ln() + (m - j) as f64 * (1.0 - p).ln()).exp();
                    let rate = j as f64 * mu1 + (m - j) as f64 * mu2;
                    m1 += w / rate;
                    m2 += 2.0 * w / (rate * rate);
                }
                (m1, m2)
            }
        }
    }
}

/// Where a request's copies go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dispatch {
    /// One FCFS buffer of requests; a free server takes a copy of the oldest request with an
    /// unstarted copy and none at this server (Shah, Lee, Ramchandran's setting).
    Central,
    /// The `n` copies join the FCFS queues of `n` distinct uniformly random servers.
    Random,
}

/// Pollaczek-Khinchine mean response time of an M/G/1 queue with arrival rate `a`, service
/// moments `m1`, `m2` (Kleinrock, Queueing Systems I, 1975, eq. 5.101): `m1 + a m2 / (2 (1 - a m1))`.
pub fn mg1_response_time(a: f64, m1: f64, m2: f64) -> f64 {
    m1 + a * m2 / (2.0 * (1.0 - a * m1))
}

/// Mean response time of the M/M/c queue with arrival rate `a` and unit service rate
/// (Erlang C; Kleinrock, Queueing Systems I, 1975, eqs. 3.39-3.42): `1 + C(c, a) / (c - a)`.
pub fn mmc_response_time(c: u32, a: f64) -> f64 {
    // Erlang B by its recurrence B(j) = a B(j-1) / (j + a B(j-1)), then C from B
    let mut b = 1.0;
    for j in 1..=c {
        b = a * b / (j as f64 + a * b);
    }
    let rho = a / c as f64;
    let erlang_c = b / (1.0 - rho * (1.0 - b));
    1.0 + erlang_c / (c as f64 - a)
}

/// `kind = "k-of-n"`: redundant requests (see the module docs).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KOfNSpec {
    /// Request arrival rate per server (`N lambda` in all).
    pub lambda: f64,
    /// Number of servers `N`.
    pub servers: u32,
    /// Copies needed to serve a request.
    pub k: u32,
    /// Copies sent per request (`k <= n <= N`).
    pub n: u32,
    /// Where the copies go (default central).
    #[serde(default = "default_dispatch")]
    pub dispatch: Dispatch,
    /// Copy service-time law, mean 1 (default exponential).
    #[serde(default = "default_service")]
    pub service: ServiceLaw,
    /// Time a server stays busy removing a copy in service when its request completes (`0`:
    /// instant removal).
    #[serde(default)]
    pub removal: f64,
}

fn default_dispatch() -> Dispatch {
    Dispatch::Central
}

fn default_service() -> ServiceLaw {
    ServiceLaw::Exponential
}

impl KOfNSpec {
    /// Checks every parameter.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.lambda` (not finite or `<= 0`), `model.servers`
    /// (outside `[1, 10000]`), `model.k` (outside `[1, n]`), `model.n` (outside `[k, servers]`),
    /// `model.removal` (not finite or `< 0`) or the service law's parameter.
    pub fn check(&self) -> Result<(), ModelError> {
        if !(self.lambda.is_finite() && self.lambda > 0.0) {
            return Err(out_of_range("model.lambda", self.lambda, "a finite number > 0 (requests per unit time per server)"));
        }
        if !(1..=MAX_SERVERS).contains(&self.servers) {
            return Err(out_of_range("model.servers", self.servers, "an integer in [1, 10000]"));
        }
        if self.n == 0 {
            return Err(out_of_range(
                "model.n",
                self.n,
                &format!("an integer in [k, servers] = [{}, {}] (copies go to distinct servers)", self.k.max(1), self.servers),
            ));
        }
        if self.k == 0 || self.k > self.n {
            return Err(out_of_range(
                "model.k",
                self.k,
                &format!("an integer in [1, n] where n = {} (a request needs k of its n copies)", self.n),
            ));
        }
        if self.n > self.servers {
            return Err(out_of_range(
                "model.n",
                self.n,
                &format!("an integer in [k, servers] = [{}, {}] (copies go to distinct servers)", self.k, self.servers),
            ));
        }
        if !(self.removal.is_finite() && self.removal >= 0.0) {
            return Err(out_of_range("model.removal", self.removal, "a finite number >= 0 (time units; 0 = instant removal)"));
        }
        self.service.validate()
    }

    /// The stability verdict and, where known, the largest stable `lambda` (requests per server):
    ///
    /// - `n = k` (no redundancy, nothing is ever removed): every copy is served in full, so the
    ///   work per server is `lambda k`; stable iff `lambda < 1/k` (central buffer: a free server
    ///   always finds a copy in saturation; random dispatch: each server is an M/G/1 queue fed
    ///   copies at Poisson rate `lambda k`).
    /// - central buffer, exponential service, instant removal: in saturation all `N` servers
    ///   are busy and complete copies at rate `N`; every completion counts towards its request
    ///   (removed copies never complete), so requests leave at rate `N / k`: stable iff
    ///   `lambda < 1/k`, whatever `n`.
    /// - central buffer, `k = 1`, `n = N`, instant removal: all servers start the head request's
    ///   copies together and are freed together at its first completion, so the system is an
    ///   M/G/1 queue whose service is the minimum `M` of `N` copies: stable iff
    ///   `lambda N E[M] < 1`.
    /// - random dispatch, `k = 1`, exponential, instant removal: redundancy-d with i.i.d.
    ///   copies under FCFS, stable iff `lambda < 1` (Anton, Ayesta, Jonckheere, Verloop, "On the
    ///   stability of redundancy models", Oper. Res. 69(5), 2021, who cite the FCFS case as known).
    /// - otherwise, exponential service: `lambda < 1/k` is necessary (each request needs `k`
    ///   completions, at most `N` per unit time); beyond that the verdict is unknown.
    pub fn region(&self) -> StabilityRegion {
        let (lambda, k) = (self.lambda, self.k as f64);
        // shift 0 and H2 with scv 1 are the exponential law written otherwise
        let exp = match self.service {
            ServiceLaw::Exponential => true,
            ServiceLaw::ShiftedExponential { shift } => shift == 0.0,
            ServiceLaw::H2 { scv } => scv == 1.0,
        };
        let instant = self.removal == 0.0;
        let central = self.dispatch == Dispatch::Central;
        let exact = |lmax: f64, region: String, source: &str| {
            let stability = if lambda < lmax {
                Stability::Stable {
                    condition: format!("lambda = {} < lambda_max = {} ({region})", short_number(lambda), short_number(lmax)),
                }
            } else {
                Stability::Unstable {
                    reason: format!("lambda = {} >= lambda_max = {} (stable region: {region})", short_number(lambda), short_number(lmax)),
                }
            };
            StabilityRegion { stability, region, lambda_max: Some(lmax), lambda_max_source: source.into(), note: NOTE.into() }
        };
        if self.n == self.k {
            return exact(
                1.0 / k,
                format!("lambda k < 1 with k = {}: no redundancy, every copy is served in full", self.k),
                "closed form 1/k (work conservation; docs/models/k-of-n.md)",
            );
        }
        if central && exp && instant {
            return exact(
                1.0 / k,
                format!("lambda k < 1 with k = {}: central buffer, exponential copies, instant removal (every completion counts)", self.k),
                "closed form 1/k (saturated central buffer; docs/models/k-of-n.md)",
            );
        }
        if central && self.k == 1 && self.n == self.servers && instant {
            let (m1, _) = self.service.min_moments(self.servers);
            return exact(
                1.0 / (self.servers as f64 * m1),
                format!("lambda N E[min of N copies] < 1 with N = {}, E[min] = {m1:.6}: an M/G/1 queue of the head request", self.servers),
                "closed form 1 / (N E[min of N copies]) (docs/models/k-of-n.md)",
            );
        }
        if !central && self.k == 1 && exp && instant {
            return exact(
                1.0,
                "lambda < 1: redundancy-d with i.i.d. exponential copies under FCFS".into(),
                "Anton, Ayesta, Jonckheere, Verloop, Oper. Res. 69(5), 2021",
            );
        }
        // a completed copy took at least the law's smallest size s (shift + Exp: the shift)
        let smallest = match self.service {
            ServiceLaw::ShiftedExponential { shift } => shift,
            _ => 0.0,
        };
        let stability = if exp && lambda * k >= 1.0 {
            Stability::Unstable {
                reason: format!(
                    "lambda k = {} >= 1: each request needs k = {} exponential copy completions and N servers complete at most N per unit time",
                    short_number(lambda * k),
                    self.k
                ),
            }
        } else if smallest > 0.0 && lambda * k * smallest >= 1.0 {
            Stability::Unstable {
                reason: format!(
                    "lambda k s = {} >= 1: each request needs k = {} completed copies, each of at least s = {smallest} units of service \
                     (the law's smallest size), and N servers give N units per unit time (a necessary condition)",
                    short_number(lambda * k * smallest),
                    self.k
                ),
            }
        } else {
            Stability::Unknown {
                note: if exp {
                    "lambda k < 1 holds (necessary); no sufficient condition is known here for this dispatch and removal time".into()
                } else {
                    "no stability condition is known here for this service law with redundancy and this removal time".into()
                },
            }
        };
        StabilityRegion {
            stability,
            region: "unknown (exactly known for n = k; central buffer with exponential copies and instant removal; central k = 1, n = N, instant removal; random k = 1 exponential, instant removal)".into(),
            lambda_max: None,
            lambda_max_source: String::new(),
            note: NOTE.into(),
        }
    }
}

const NOTE: &str = "k-of-n has no mean-field model, only this region; `mfq simulate` simulates the N-server system";

/// The mean response time in closed form, where the system reduces to a classical queue
/// (checked against the simulation in mfq-sim's tests):
///
/// - random dispatch, `k = n = 1`: M/G/1 per server with arrival rate `lambda`
///   ([`mg1_response_time`]);
/// - central buffer, `k = 1`, `n = N`, instant removal: M/G/1 with arrival rate `N lambda` and
///   service the minimum of `N` copies ([`ServiceLaw::min_moments`]); for exponential copies
///   the M/M/1 of rate `N`, `1 / (N (1 - lambda))`;
/// - central buffer, `k = n = 1`, exponential: M/M/N ([`mmc_response_time`]);
/// - `k = n = N = 2`, exponential (either dispatch: each server serves one copy of every request,
///   in arrival order): the two-server fork-join queue, `E[T] = (12 - rho) / (8 (1 - rho))` with
///   `rho = 2 lambda` (Flatto and Hahn, SIAM J. Appl. Math. 44(5), 1984; Nelson and Tantawi,
///   IEEE Trans. Computers 37(6), 1988, eq. 3).
///
/// `None` elsewhere, and when the parameters are invalid or unstable.
pub fn closed_form_response_time(spec: &KOfNSpec) -> Option<f64> {
    spec.check().ok()?;
    if !matches!(spec.region().stability, Stability::Stable { .. }) {
        return None;
    }
    let big_n = spec.servers;
    match (spec.dispatch, spec.k, spec.n) {
        (Dispatch::Random, 1, 1) => Some(mg1_response_time(spec.lambda, 1.0, spec.service.min_moments(1).1)),
        (Dispatch::Central, 1, n) if n == big_n && spec.removal == 0.0 => {
            let (m1, m2) = spec.service.min_moments(big_n);
            Some(mg1_response_time(big_n as f64 * spec.lambda, m1, m2))
        }
        (Dispatch::Central, 1, 1) if spec.service == ServiceLaw::Exponential => Some(mmc_response_time(big_n, big_n as f64 * spec.lambda)),
        (_, 2, 2) if big_n == 2 && spec.service == ServiceLaw::Exponential => {
            let rho = 2.0 * spec.lambda;
            Some((12.0 - rho) / (8.0 * (1.0 - rho)))
        }
        _ => None,
    }
}

/// Reads a `[model]` table of kind `k-of-n` and checks its parameters at once (the kind has no
/// model to build, so the file's validation is done here).
fn read(table: toml::Value) -> Result<ModelSpec, ReadError> {
    let spec = read_spec::<KOfNSpec>(table)?;
    if let Some(s) = spec.downcast_ref::<KOfNSpec>() {
        s.check().map_err(|e| ReadError(e.to_string()))?;
    }
    Ok(spec)
}

/// The `k-of-n` kind.
pub static K_OF_N: Kind = Kind {
    name: "k-of-n",
    title: "Redundant requests, k of n: each request sent to n of N servers, served when k copies complete, the rest removed (instantly or after a removal time); simulation and stability region",
    params: &[
        Param {
            name: "lambda",
            meaning: "request arrival rate per server (N lambda in all)",
            unit: "requests per mean copy service time per server",
            allowed: "> 0; the load without redundancy is lambda k",
            default: None,
            range: Some(ParamRange::above(0.0)),
        },
        Param { name: "servers", meaning: "number of servers N", unit: "servers", allowed: "integer in [1, 10000]", default: None, range: Some(ParamRange::integers(1.0, Some(10000.0))) },
        Param { name: "k", meaning: "copies needed to serve a request", unit: "copies", allowed: "integer in [1, n]", default: None, range: Some(ParamRange::integers(1.0, Some(10000.0))) },
        Param { name: "n", meaning: "copies sent per request, to distinct servers (n = k: no redundancy)", unit: "copies", allowed: "integer in [k, servers]", default: None, range: Some(ParamRange::integers(1.0, Some(10000.0))) },
        Param {
            name: "dispatch",
            meaning: "central (one FCFS buffer; a free server takes a copy of the oldest request it holds none of) | random (n distinct random servers' FCFS queues)",
            unit: "",
            allowed: "\"central\" (default), \"random\"",
            default: Some("\"central\""),
            range: None,
        },
        Param {
            name: "service",
            meaning: "[model.service] copy service-time law of mean 1: law = exponential | h2 (scv) | shifted-exponential (shift: shift + Exp)",
            unit: "",
            allowed: "scv in [1, 1e6], shift in [0, 1] (1 = deterministic)",
            default: Some("{ law = \"exponential\" }"),
            range: None,
        },
        Param {
            name: "removal",
            meaning: "time a server spends removing a copy in service when its request completes (waiting copies go at no cost)",
            unit: "mean copy service times",
            allowed: ">= 0 (0 = instant removal)",
            default: Some("0"),
            range: Some(ParamRange { min: 0.0, min_inclusive: true, max: None, max_inclusive: false, integer: false }),
        },
    ],
    sources: "Shah, Lee, Ramchandran, When do redundant requests reduce latency?, IEEE Trans. Commun. 64(2), 2016, arXiv 1311.2851 (abstract: the claims; system, stability region and closed forms constructed in docs/models/k-of-n.md)",
    example: "models/k-of-n.toml",
    docs: "docs/models/k-of-n.md",
    read,
};

impl KindSpec for KOfNSpec {
    fn kind(&self) -> &'static Kind {
        &K_OF_N
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    /// No mean-field model: refused with the reason (the region is `mfq fixed-point`'s answer).
    fn build(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        self.check()?;
        Err(out_of_range(
            "model.kind",
            "k-of-n",
            "a kind with a mean-field model for this command: k-of-n is simulated (`mfq simulate`), and `mfq fixed-point` gives its stability region",
        ))
    }
    fn validate(&self, _levels: usize) -> Result<(), ModelError> {
        self.check()
    }
    fn has_model(&self) -> bool {
        false
    }
    fn stability_only(&self) -> Option<StabilityRegion> {
        self.check().is_ok().then(|| self.region())
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        self.check()?;
        Ok(Simulation::System(FiniteSystem::KOfN {
            lambda: self.lambda,
            servers: self.servers,
            k: self.k,
            n: self.n,
            central: self.dispatch == Dispatch::Central,
            service: self.service,
            removal: self.removal,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(k: u32, n: u32, servers: u32) -> KOfNSpec {
        KOfNSpec { lambda: 0.3, servers, k, n, dispatch: Dispatch::Central, service: ServiceLaw::Exponential, removal: 0.0 }
    }

    /// Min moments against sums of the laws written out by hand, and against numerical
    /// integration of the survival function `P(M > t) = P(S > t)^m`.
    #[test]
    fn min_moments_are_the_integrals_of_the_survival_function() {
        for law in [
            ServiceLaw::Exponential,
            ServiceLaw::H2 { scv: 4.0 },
            ServiceLaw::H2 { scv: 1.0 },
            ServiceLaw::ShiftedExponential { shift: 0.6 },
        ] {
            let surv = |t: f64| -> f64 {
                match law {
                    ServiceLaw::Exponential => (-t).exp(),
                    ServiceLaw::H2 { .. } => {
                        let (p, a, b) = law.h2().unwrap();
                        p * (-a * t).exp() + (1.0 - p) * (-b * t).exp()
                    }
                    ServiceLaw::ShiftedExponential { shift } => {
                        if t < shift {
                            1.0
                        } else {
                            (-(t - shift) / (1.0 - shift)).exp()
                        }
                    }
                }
            };
            for m in [1u32, 2, 5] {
                // E[M] = int S^m, E[M^2] = int 2 t S^m (midpoint rule, step 1e-4, to t = 80)
                let (mut e1, mut e2) = (0.0, 0.0);
                let h = 1e-4;
                for i in 0..800_000 {
                    let t = (i as f64 + 0.5) * h;
                    let s = surv(t).powi(m as i32);
                    e1 += s * h;
                    e2 += 2.0 * t * s * h;
                }
                let (m1, m2) = law.min_moments(m);
                assert!((m1 - e1).abs() < 1e-6 && (m2 - e2).abs() < 1e-5, "{law:?} m = {m}: ({m1}, {m2}) vs ({e1}, {e2})");
            }
            // mean 1 for one copy
            assert!((law.min_moments(1).0 - 1.0).abs() < 1e-12, "{law:?}");
        }
    }

    /// M/M/c by hand: c = 2, a = 1 (rho = 1/2): C = 1/3, E[T] = 1 + (1/3) / 1.
    #[test]
    fn erlang_c_by_hand() {
        assert!((mmc_response_time(2, 1.0) - 4.0 / 3.0).abs() < 1e-14);
        // c = 1 is M/M/1: 1 / (1 - a)
        assert!((mmc_response_time(1, 0.6) - 2.5).abs() < 1e-14);
    }

    #[test]
    fn regions_of_the_exact_cases() {
        // k = n: 1/k
        let r = spec(2, 2, 4).region();
        assert_eq!(r.lambda_max, Some(0.5));
        // central, exponential, instant: 1/k for any n
        assert_eq!(spec(2, 4, 4).region().lambda_max, Some(0.5));
        // central k = 1, n = N, H2: 1 / (N E[min])
        let s = KOfNSpec { service: ServiceLaw::ShiftedExponential { shift: 0.5 }, ..spec(1, 4, 4) };
        // E[min of 4] = 0.5 + 0.5 / 4 = 0.625, lambda_max = 1 / 2.5 = 0.4
        assert!((s.region().lambda_max.unwrap() - 0.4).abs() < 1e-12);
        let s = KOfNSpec { lambda: 0.45, ..s };
        assert!(matches!(s.region().stability, Stability::Unstable { .. }));
        // exponential, removal time: lambda k >= 1 is unstable, below it unknown
        let s = KOfNSpec { removal: 0.1, lambda: 0.6, ..spec(2, 3, 4) };
        assert!(matches!(s.region().stability, Stability::Unstable { .. }));
        let s = KOfNSpec { lambda: 0.4, ..s };
        assert!(matches!(s.region().stability, Stability::Unknown { .. }));
        // deterministic copies (shift 1), random dispatch, removal time: every completed copy
        // took one unit, so lambda k >= 1 is unstable; shift 0.5 halves the bound's work
        let det = KOfNSpec { service: ServiceLaw::ShiftedExponential { shift: 1.0 }, dispatch: Dispatch::Random, lambda: 0.5, ..s };
        assert!(
            matches!(&det.region().stability, Stability::Unstable { reason } if reason.contains("lambda k s = 1")),
            "{:?}",
            det.region()
        );
        let half = KOfNSpec { service: ServiceLaw::ShiftedExponential { shift: 0.5 }, ..det };
        assert!(matches!(half.region().stability, Stability::Unknown { .. }), "{:?}", half.region());
        assert!(matches!(KOfNSpec { lambda: 1.0, ..half }.region().stability, Stability::Unstable { .. }));
    }

    #[test]
    fn bad_parameters_are_refused_with_the_field() {
        let e = |s: KOfNSpec| s.check().unwrap_err().to_string();
        let m = e(spec(3, 2, 4));
        assert!(m.contains("model.k = 3") && m.contains("[1, n] where n = 2"), "{m}");
        let m = e(spec(1, 5, 4));
        assert!(m.contains("model.n = 5") && m.contains("[1, 4]"), "{m}");
        assert!(e(spec(0, 2, 4)).contains("model.k = 0"));
        assert!(e(KOfNSpec { lambda: -1.0, ..spec(1, 2, 4) }).contains("model.lambda = -1"));
        assert!(e(KOfNSpec { lambda: f64::NAN, ..spec(1, 2, 4) }).contains("model.lambda = NaN"));
        assert!(e(KOfNSpec { removal: -0.5, ..spec(1, 2, 4) }).contains("model.removal = -0.5"));
        assert!(e(KOfNSpec { service: ServiceLaw::H2 { scv: 0.5 }, ..spec(1, 2, 4) }).contains("model.service.scv = 0.5"));
        assert!(
            e(KOfNSpec { service: ServiceLaw::ShiftedExponential { shift: 1.5 }, ..spec(1, 2, 4) }).contains("model.service.shift = 1.5")
        );
        assert!(e(spec(1, 1, 0)).contains("model.servers = 0") || e(spec(1, 1, 0)).contains("model.n"));
        // through the file parser: the error names the key
        let text = "[model]\nkind = \"k-of-n\"\nlambda = 0.2\nservers = 4\nk = 3\nn = 2\n";
        let err = crate::ModelFile::parse(text, &[]).unwrap_err().to_string();
        assert!(err.contains("model.k = 3"), "{err}");
        let text = "[model]\nkind = \"k-of-n\"\nlambda = 0.2\nservers = 4\nk = 1\nn = 2\nservice = { law = \"h2\", scv = 4.0 }\nremoval = 0.1\ndispatch = \"random\"\n";
        assert!(crate::ModelFile::parse(text, &[]).is_ok());
    }
}
