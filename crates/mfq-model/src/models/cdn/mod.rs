//! Content caching with memory and bandwidth limits and randomised request matching (kind
//! `cdn-cache`).
//!
//! The system (Mukhopadhyay, Hegde, Lelarge, "Optimal content replication and request matching
//! in large caching systems", arXiv 1801.02889 (2018); only its abstract is used,
//! docs/models/cdn-cache.md says what is published and what is built here):
//!
//! - `m` servers; each stores `C` distinct contents of a catalogue of `N` (memory) and serves at
//!   most `U` requests at once (bandwidth);
//! - requests for content `i` arrive as a Poisson process of rate `lambda p_i m` (popularities
//!   `p_i`, Zipf or explicit) and last a time of mean 1 (any law: the fixed point is insensitive);
//! - a request goes to a uniformly random server that stores its content and has a free slot,
//!   and is lost if there is none (randomised matching: no re-packing of ongoing requests);
//! - the replicas are placed once, by a [`Replication`] rule and the wrap-around placement
//!   ([`placement`]).
//!
//! [`CdnCache`] is the mean field of this system as `m -> infinity` ([`mean_field`]); the LP
//! bound of any matching on the placement, and of any placement, is in [`placement`].

pub mod mean_field;
pub mod placement;

use crate::finite::Simulation;
use crate::registry::{read_spec, Kind, KindSpec, Param, ParamRange};
use crate::{out_of_range, MeanFieldModel, ModelError, Observables, Stability, StateLayout};
use mean_field::{free_fraction, solve_rates, truncated_poisson, SLIDING_EPS};
use placement::{check_popularity, optimal_throughput, placement_bound, replica_fractions, wrap_around_types, zipf, MAX_BANDWIDTH};
pub use placement::{Replication, ServerType};

/// Largest request rate per server.
pub const MAX_LAMBDA: f64 = 1e6;

/// Largest state (server types x bandwidth `U`): the Jacobian is dense (finite differences)
/// and a Newton step factorises it by an LU that cannot be interrupted, about 0.3 s of CPU
/// time at 1024 states; `models/cdn-cache-uniform.toml` with 1000 contents (2000 states) ran
/// `fixed-point --max-seconds 2` for 9 s.
pub const MAX_STATES: usize = 1024;

/// The parameters of the caching system, checked ([`CdnParams::new`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CdnParams {
    /// Requests per server per unit time (mean request duration 1).
    pub lambda: f64,
    /// Popularities `p_i` (sum 1).
    pub popularity: Vec<f64>,
    /// Contents stored per server, `C`.
    pub memory: usize,
    /// Requests served at once per server, `U`.
    pub bandwidth: usize,
    /// The replication rule.
    pub replication: Replication,
    /// Replica fractions `a_i` of the rule.
    pub replicas: Vec<f64>,
    /// The server types of the wrap-around placement.
    pub types: Vec<ServerType>,
}

impl CdnParams {
    /// Checks the parameters and places the replicas.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.lambda` (not in `(0, 1e6]`), `model.bandwidth`
    /// (not in `[1, 1000]`), `model.memory` (not in `[1, N]`) or the popularities
    /// ([`placement::check_popularity`]).
    pub fn new(lambda: f64, popularity: Vec<f64>, memory: usize, bandwidth: usize, replication: Replication) -> Result<Self, ModelError> {
        if !(lambda.is_finite() && lambda > 0.0 && lambda <= MAX_LAMBDA) {
            return Err(out_of_range("model.lambda", lambda, "a number in (0, 1e6] (requests per server per mean request duration)"));
        }
        check_popularity(&popularity)?;
        if bandwidth == 0 || bandwidth > MAX_BANDWIDTH {
            return Err(out_of_range("model.bandwidth", bandwidth, "an integer in [1, 1000] (requests a server serves at once, U)"));
        }
        let n = popularity.len();
        if memory == 0 || memory > n {
            return Err(out_of_range(
                "model.memory",
                memory,
                &format!("an integer in [1, N] = [1, {n}] (distinct contents stored per server, C)"),
            ));
        }
        let replicas = replica_fractions(&popularity, memory, replication);
        let types = wrap_around_types(&replicas, memory);
        Ok(CdnParams { lambda, popularity, memory, bandwidth, replication, replicas, types })
    }

    /// The LP bound of the placement, [`placement::placement_bound`] (requests per server per
    /// unit time).
    pub fn lp_bound(&self) -> f64 {
        placement_bound(self.lambda, &self.popularity, self.bandwidth, &self.types)
    }

    /// The optimum over every placement and matching, `min(lambda, U)`.
    pub fn optimal_throughput(&self) -> f64 {
        optimal_throughput(self.lambda, self.bandwidth)
    }
}

/// The mean field of randomised matching ([`mean_field`]): state `x[t U + k - 1] = w_{t,k}`,
/// the fraction of type-`t` servers with fewer than `k` requests in service.
///
/// Source: system from the abstract of Mukhopadhyay, Hegde, Lelarge, arXiv 1801.02889 (2018);
/// ODE, fixed point and bounds constructed here (docs/models/cdn-cache.md).
#[derive(Debug, Clone, PartialEq)]
pub struct CdnCache {
    params: CdnParams,
    /// For content `i`, the types storing it.
    holders: Vec<Vec<usize>>,
    /// Fixed-point rates `nu_i`.
    rates: Vec<f64>,
    /// The fixed point.
    fixed: Vec<f64>,
    lp: f64,
}

impl CdnCache {
    /// The mean field of `params`, with its fixed point.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model` if the fixed-point rates are not found (not
    /// expected: the sweeps are monotone and bounded).
    pub fn new(params: CdnParams) -> Result<Self, ModelError> {
        let n = params.popularity.len();
        let mut holders = vec![Vec::new(); n];
        for (t, ty) in params.types.iter().enumerate() {
            for &i in &ty.contents {
                holders[i].push(t);
            }
        }
        let start: Vec<f64> = params.popularity.iter().map(|p| params.lambda * p / (1.0 + SLIDING_EPS)).collect();
        let (rates, _) = solve_rates(params.lambda, &params.popularity, params.bandwidth, &params.types, start)
            .ok_or_else(|| out_of_range("model", "these parameters", "parameters whose fixed-point rate equations converge"))?;
        let u = params.bandwidth;
        let mut fixed = vec![0.0; params.types.len() * u];
        let mut pi = vec![0.0; u + 1];
        for (t, ty) in params.types.iter().enumerate() {
            let r: f64 = ty.contents.iter().map(|&i| rates[i]).sum();
            truncated_poisson(r, u, &mut pi);
            let mut below = 0.0;
            for k in 1..=u {
                below += pi[k - 1];
                fixed[t * u + k - 1] = below;
            }
        }
        let lp = params.lp_bound();
        Ok(CdnCache { params, holders, rates, fixed, lp })
    }

    /// The parameters and placement.
    pub fn params(&self) -> &CdnParams {
        &self.params
    }

    /// The fixed-point request rates `nu_i` per free server storing content `i`.
    pub fn rates(&self) -> &[f64] {
        &self.rates
    }

    /// Accepted requests of content `i` per server per unit time at state `x`:
    /// `lambda p_i A_i / (A_i + SLIDING_EPS)`.
    pub fn accepted(&self, x: &[f64], i: usize) -> f64 {
        let a = free_fraction(x, self.params.bandwidth, &self.params.types, &self.holders[i]);
        self.params.lambda * self.params.popularity[i] * a / (a + SLIDING_EPS)
    }
}

impl MeanFieldModel for CdnCache {
    fn name(&self) -> String {
        let p = &self.params;
        format!("cdn-cache({:?}, N={}, C={}, U={})", p.replication, p.popularity.len(), p.memory, p.bandwidth).to_lowercase()
    }
    fn dim(&self) -> usize {
        self.params.types.len() * self.params.bandwidth
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        let (p, u) = (&self.params, self.params.bandwidth);
        for (t, ty) in p.types.iter().enumerate() {
            let r: f64 = ty
                .contents
                .iter()
                .map(|&i| p.lambda * p.popularity[i] / (free_fraction(x, u, &p.types, &self.holders[i]) + SLIDING_EPS))
                .sum();
            let w = &x[t * u..(t + 1) * u];
            for k in 1..=u {
                let prev = if k == 1 { 0.0 } else { w[k - 2] };
                let next = if k == u { 1.0 } else { w[k] };
                dx[t * u + k - 1] = -r * (w[k - 1] - prev) + k as f64 * (next - w[k - 1]);
            }
        }
    }
    fn layout(&self) -> StateLayout {
        let mut names = Vec::with_capacity(self.dim());
        for ty in &self.params.types {
            let set: Vec<String> = ty.contents.iter().map(|i| (i + 1).to_string()).collect();
            for k in 1..=self.params.bandwidth {
                names.push(format!("w[{{{}}},{k}]", set.join(",")));
            }
        }
        StateLayout::Named { names }
    }
    /// Throughput (accepted requests per server per unit time), loss probability, requests in
    /// service per server as the mean queue length, `tail[k-1]` = fraction of servers with at
    /// least `k` requests; extras `lp_bound` and `lp_loss` (the placement's LP bound and its
    /// loss), `optimal_throughput` and `optimal_loss` (every placement), and per content `i`
    /// (from 1): `loss.content{i}`, `replicas.content{i}` (`a_i`), `free.content{i}` (`A_i / a_i`).
    fn observables(&self, x: &[f64]) -> Observables {
        let (p, u) = (&self.params, self.params.bandwidth);
        let mut tail = vec![0.0; u];
        for (t, ty) in p.types.iter().enumerate() {
            for k in 0..u {
                tail[k] += ty.fraction * (1.0 - x[t * u + k].clamp(0.0, 1.0));
            }
        }
        let in_service: f64 = tail.iter().sum();
        let mut extras = vec![
            ("lp_bound".into(), self.lp),
            ("lp_loss".into(), 1.0 - self.lp / p.lambda),
            ("optimal_throughput".into(), p.optimal_throughput()),
            ("optimal_loss".into(), 1.0 - p.optimal_throughput() / p.lambda),
        ];
        let mut thr = 0.0;
        for i in 0..p.popularity.len() {
            let acc = self.accepted(x, i);
            thr += acc;
            let free = free_fraction(x, u, &p.types, &self.holders[i]);
            extras.push((format!("loss.content{}", i + 1), 1.0 - acc / (p.lambda * p.popularity[i])));
            extras.push((format!("replicas.content{}", i + 1), p.replicas[i]));
            extras.push((format!("free.content{}", i + 1), free / p.replicas[i]));
        }
        Observables {
            tail,
            mean_queue_length: Some(in_service),
            throughput: Some(thr),
            mean_response_time: None,
            prob_wait: None,
            loss_probability: 1.0 - thr / p.lambda,
            mass_at_truncation: 0.0,
            extras,
        }
    }
    fn stability(&self) -> Stability {
        Stability::Stable { condition: "loss system: at most U requests per server, every state is recurrent".into() }
    }
    fn start_state(&self) -> Option<Vec<f64>> {
        Some(self.fixed.clone())
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        Some(self.fixed.clone())
    }
    /// The finite system sits on the sliding boundary `A_i = 0` when a content is saturated.
    fn is_smooth(&self) -> bool {
        false
    }
}

/// `kind = "cdn-cache"`: the parameters of [`CdnCache`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CdnSpec {
    /// Requests per server per unit time (all contents; mean request duration 1).
    pub lambda: f64,
    /// Contents stored per server, `C`.
    pub memory: usize,
    /// Requests served at once per server, `U`.
    pub bandwidth: usize,
    /// Number of contents `N` (with `zipf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contents: Option<usize>,
    /// Zipf exponent of the popularities (with `contents`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zipf: Option<f64>,
    /// Explicit popularities (instead of `contents` and `zipf`), summing to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub popularity: Option<Vec<f64>>,
    /// The replication rule (default greedy).
    #[serde(default = "greedy")]
    pub replication: Replication,
}

fn greedy() -> Replication {
    Replication::Greedy
}

impl CdnSpec {
    /// The popularity vector: explicit, or Zipf.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.popularity` (given with `contents` or `zipf`),
    /// `model.contents` or `model.zipf` (missing, or out of range, [`placement::zipf`]).
    pub fn popularity(&self) -> Result<Vec<f64>, ModelError> {
        match (&self.popularity, self.contents, self.zipf) {
            (Some(p), None, None) => Ok(p.clone()),
            (Some(_), _, _) => Err(out_of_range(
                "model.popularity",
                "given with contents or zipf",
                "either popularity = [p_1, ...] or contents and zipf, not both",
            )),
            (None, Some(n), Some(g)) => zipf(n, g),
            (None, None, _) => {
                Err(out_of_range("model.contents", "missing", "the number of contents N (with zipf), or popularity = [...]"))
            }
            (None, Some(_), None) => Err(out_of_range("model.zipf", "missing", "the Zipf exponent (a number >= 0), or popularity = [...]")),
        }
    }

    /// The checked parameters and placement.
    ///
    /// # Errors
    /// As [`CdnSpec::popularity`] and [`CdnParams::new`].
    pub fn params(&self) -> Result<CdnParams, ModelError> {
        CdnParams::new(self.lambda, self.popularity()?, self.memory, self.bandwidth, self.replication)
    }
}

/// The `cdn-cache` kind.
pub static CDN_CACHE: Kind = Kind {
    name: "cdn-cache",
    title: "Content caching: m servers storing C contents and serving U requests each, randomised matching, greedy or uniform replication; loss and LP bound",
    params: &[
        Param {
            name: "lambda",
            meaning: "requests per server per unit time, all contents (content i: lambda p_i)",
            unit: "per server per mean request duration",
            allowed: "(0, 1e6]",
            default: None,
            range: Some(ParamRange::closed(0.0, MAX_LAMBDA, true)),
        },
        Param { name: "memory", meaning: "distinct contents stored per server, C", unit: "contents", allowed: "integer in [1, N]", default: None, range: Some(ParamRange::integers(1.0, Some(1000.0))) },
        Param { name: "bandwidth", meaning: "requests a server serves at once, U", unit: "requests", allowed: "integer in [1, 1000]", default: None, range: Some(ParamRange::integers(1.0, Some(1000.0))) },
        Param { name: "contents", meaning: "number of contents N (Zipf popularities)", unit: "contents", allowed: "integer in [1, 1000], with zipf", default: Some("none (popularity)"), range: Some(ParamRange::integers(1.0, Some(1000.0))) },
        Param { name: "zipf", meaning: "Zipf exponent: p_i proportional to i^-zipf", unit: "", allowed: ">= 0, with contents", default: Some("none (popularity)"), range: Some(ParamRange { min: 0.0, min_inclusive: true, max: None, max_inclusive: false, integer: false }) },
        Param { name: "popularity", meaning: "explicit popularities [p_1, ..., p_N] instead of contents and zipf", unit: "", allowed: "1 to 1000 numbers > 0 summing to 1 (within 1e-9)", default: Some("none (contents and zipf)"), range: None },
        Param { name: "replication", meaning: "replica placement: greedy (most requests per replica first; fractions min(1, theta p_i)) | uniform (C/N each), wrap-around placement", unit: "", allowed: "greedy | uniform", default: Some("greedy"), range: None },
    ],
    sources: "Mukhopadhyay, Hegde, Lelarge, arXiv 1801.02889 (2018); IEEE/ACM Trans. Networking 2019, doi 10.1109/TNET.2019.2926235 (abstracts; replication rule, mean field, fixed point and LP bound constructed here)",
    example: "models/cdn-cache.toml",
    docs: "docs/models/cdn-cache.md",
    read: read_spec::<CdnSpec>,
};

impl KindSpec for CdnSpec {
    fn kind(&self) -> &'static Kind {
        &CDN_CACHE
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    /// The state has `U` levels per server type: `levels` does not apply. A state larger than
    /// [`MAX_STATES`] is refused before the fixed-point rate equations are solved (seconds at
    /// 1000 contents).
    fn build(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        let params = self.params()?;
        let n = params.types.len() * params.bandwidth;
        if n > MAX_STATES {
            return Err(out_of_range(
                "model",
                format!("{} server types x bandwidth {} = {n} states", params.types.len(), params.bandwidth),
                &format!(
                    "parameters giving at most {MAX_STATES} states: the Jacobian is dense and its LU cannot be \
                     interrupted (at 2000 states each Newton step takes seconds, past --max-seconds); choose fewer \
                     contents or a smaller bandwidth"
                ),
            ));
        }
        Ok(Box::new(CdnCache::new(params)?))
    }
    fn validate(&self, _levels: usize) -> Result<(), ModelError> {
        self.params().map(|_| ())
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        self.params()?;
        Ok(Simulation::Unsupported {
            reason: "the caching system has its own simulator, mfq_sim::cdn::simulate_cdn (exponential, deterministic and \
                     hyperexponential request durations), not yet behind `mfq simulate`"
                .into(),
        })
    }
}

#[cfg(test)]
mod tests;
