//! Finite-N event-driven simulation of the load-balancing systems behind mfq's mean-field models.
//!
//! The simulator applies each system's rules (sampling, routing, service) to `N` individual
//! queues. It shares no code with the mean-field drifts of `mfq-model`, so that agreement between
//! the two is an independent check of the ODEs.
//!
//! # The system
//!
//! `N` unit-rate FCFS servers, Poisson arrivals at total rate `N lambda`, exponential(1) job
//! sizes. Time is measured in mean job sizes. An arriving job is routed by the model's rule
//! ([`ModelSpec`]); it is lost if the chosen server already holds `buffer` jobs
//! ([`SimOptions::buffer`], unlimited by default). Every sampling rule samples servers
//! uniformly **with replacement** (so the probability that the minimum of `d` samples has at
//! least `k` jobs is exactly `x_k^d` for the empirical occupancy `x`, as in the mean field).
//!
//! - `jsq` (JSQ(d)): sample `d` servers, join one with the fewest jobs, ties uniformly at random
//!   among the tied samples. `d = 1` is random routing.
//! - `pod-li`: sample `d`; with probability `1 - eps` join a least-loaded sample, with
//!   probability `eps` a most-loaded one (ties uniformly at random).
//! - `pod-ld`: sample `d`; if `max - min <= g` among the sampled queue lengths, join a
//!   most-loaded sample with probability `eps` (else a least-loaded one); if `max - min > g`,
//!   always a least-loaded one.
//! - `jiq`: join a uniformly random idle server if there is one, else a uniformly random server.
//!
//! # Estimators
//!
//! Each replication starts empty, runs a warm-up of [`SimOptions::warmup`] time units that is
//! discarded, then [`SimOptions::time`] time units split into [`SimOptions::batches`] batches
//! of equal length. Replications run in parallel (rayon) with independent random streams;
//! replication `r` uses the xoshiro256++ stream seeded from [`SimOptions::seed`] and advanced by
//! `r` jumps of `2^128` steps, so results do not depend on thread scheduling. All
//! `replications * batches` batch means are pooled and treated as independent observations:
//! the estimate is their mean, the 95% confidence half width is `t_{0.975, n-1} s / sqrt(n)`.
//! Ratios (response time, loss and waiting probabilities) use the ratio of sums with the
//! delta-method interval. [`SimReport::diagnostics`] helps judge whether batches were long
//! enough. See `docs/simulation.md`.
//!
//! # Example
//!
//! ```
//! use mfq_model::ModelSpec;
//! use mfq_sim::{simulate, SimOptions};
//! let spec = ModelSpec::Jsq { lambda: 0.5, d: 2 };
//! let opts = SimOptions { servers: 200, time: 200.0, warmup: 20.0, replications: 2, batches: 10, ..Default::default() };
//! let report = simulate(&spec, &opts).unwrap();
//! // x_1 = P(Q >= 1) = lambda exactly in steady state (unit-rate servers, no losses)
//! let x1 = report.tail[0];
//! assert!((x1.mean - 0.5).abs() < 4.0 * x1.half_width + 0.01);
//! ```

mod engine;
pub mod population;
mod stats;

pub use stats::Estimate;

use engine::{Jiq, Jsq2, JsqD, Pod, Random, Replication, Rng, Router, RunParams};
use indicatif::{ProgressBar, ProgressStyle};
use mfq_model::ModelSpec;
use rand::SeedableRng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Errors of [`simulate`] and [`SimOptions::validate`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// An option or a model parameter is outside the range the simulator accepts.
    #[error("{field} = {value} is not allowed: {allowed}")]
    OutOfRange {
        /// Name of the option (`servers`, `time`, ...) or dotted model parameter (`model.lambda`).
        field: String,
        /// The value given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// The model kind has no simulator (yet).
    #[error("the simulator does not support model kind '{kind}' (supported: jsq, pod-li, pod-ld, jiq)")]
    Unsupported {
        /// The model's `kind` key.
        kind: String,
    },
}

fn out_of_range(field: &str, value: impl std::fmt::Display, allowed: &str) -> SimError {
    SimError::OutOfRange { field: field.to_string(), value: value.to_string(), allowed: allowed.to_string() }
}

/// How to simulate: system size, horizon, warm-up, replications, batches, seed, buffer.
///
/// Time is in mean job sizes (unit-rate servers, exponential(1) jobs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimOptions {
    /// Number of servers `N` (`1 ..= 4294967295`). Default 1000.
    pub servers: usize,
    /// Post-warm-up horizon of each replication, in mean job sizes (finite, `> 0`). Default 5000.
    pub time: f64,
    /// Warm-up discarded at the start of each replication (from the empty state), in mean job
    /// sizes (finite, `>= 0`). Default 500.
    pub warmup: f64,
    /// Number of independent replications (`>= 1`), run in parallel. Default 4.
    pub replications: usize,
    /// Batches per replication (`>= 2`); each batch lasts `time / batches`. Default 25.
    pub batches: usize,
    /// Seed of the random streams; the same seed gives the same report. Default 1.
    pub seed: u64,
    /// Buffer size: an arrival that finds its chosen server holding `buffer` jobs (waiting and
    /// in service) is lost. `None` (default) = unlimited. Must be `>= 1`.
    pub buffer: Option<u32>,
    /// Show a progress bar on standard error. Default `false`.
    pub progress: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { servers: 1000, time: 5000.0, warmup: 500.0, replications: 4, batches: 25, seed: 1, buffer: None, progress: false }
    }
}

impl SimOptions {
    /// Checks every option's range.
    ///
    /// # Errors
    /// [`SimError::OutOfRange`] naming the first offending option: `servers` outside
    /// `[1, 4294967295]`, `time` not finite or `<= 0`, `warmup` not finite or `< 0`,
    /// `replications = 0`, `batches < 2`, `buffer = Some(0)`.
    pub fn validate(&self) -> Result<(), SimError> {
        if self.servers == 0 || self.servers as u64 > u32::MAX as u64 {
            return Err(out_of_range("servers", self.servers, "an integer in [1, 4294967295]"));
        }
        if !(self.time.is_finite() && self.time > 0.0) {
            return Err(out_of_range("time", self.time, "a finite number > 0 (mean job sizes)"));
        }
        if !(self.warmup.is_finite() && self.warmup >= 0.0) {
            return Err(out_of_range("warmup", self.warmup, "a finite number >= 0 (mean job sizes)"));
        }
        if self.replications == 0 {
            return Err(out_of_range("replications", self.replications, "an integer >= 1"));
        }
        if self.batches < 2 {
            return Err(out_of_range("batches", self.batches, "an integer >= 2 (batch means need at least two batches)"));
        }
        if self.buffer == Some(0) {
            return Err(out_of_range("buffer", 0, "an integer >= 1, or none for an unlimited buffer"));
        }
        Ok(())
    }
}

/// Checks that help judge the confidence intervals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostics {
    /// Lag-1 autocorrelation of consecutive batch means of the number of jobs per server
    /// (within replications). Near zero when batches are long enough for the batch means to be
    /// nearly independent; clearly positive (say > 0.2) means the intervals are too narrow:
    /// use fewer, longer batches or a longer `time`. `NaN` when undefined.
    pub batch_lag1_autocorrelation: f64,
    /// 95% half width of the mean queue length from the replication means alone (`n =
    /// replications`, Student t with `replications - 1` degrees of freedom); `NaN` for one
    /// replication. It should be of the same size as the pooled batch-means half width.
    pub replication_half_width: f64,
    /// Largest queue length seen after the warm-up (length of [`SimReport::tail`]).
    pub max_queue_length: usize,
    /// Service completions per server per unit time; equals the throughput in steady state
    /// (a difference beyond the intervals points to a warm-up that is too short).
    pub departure_rate: Estimate,
}

/// What [`simulate`] measured. Units: jobs per server, time in mean job sizes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimReport {
    /// The model simulated.
    pub model: ModelSpec,
    /// The options used.
    pub options: SimOptions,
    /// `tail[k-1]` estimates `x_k = P(Q >= k)`, the time-average fraction of servers with at
    /// least `k` jobs, for `k = 1 ..= ` the largest queue length seen after the warm-up.
    pub tail: Vec<Estimate>,
    /// Mean number of jobs per server, `L = sum_k x_k` (time average).
    pub mean_queue_length: Estimate,
    /// Mean response (sojourn) time of accepted jobs, waiting plus service, by Little's law:
    /// `L / throughput` (ratio of the batch sums, delta-method interval).
    pub mean_response_time: Estimate,
    /// Accepted arrivals per server per unit time (`lambda (1 - loss)` in steady state).
    pub throughput: Estimate,
    /// Fraction of arrivals lost at a full buffer (0 with an unlimited buffer).
    pub loss_probability: Estimate,
    /// Fraction of accepted arrivals that joined a busy server (and so had to wait).
    pub prob_wait: Estimate,
    /// Events simulated over all replications, warm-ups included (arrivals, lost ones
    /// included, and departures).
    pub events: u64,
    /// Wall-clock time of the whole call, in seconds.
    pub wall_seconds: f64,
    /// `events / wall_seconds`, summed over the threads that ran replications in parallel.
    pub events_per_second: f64,
    /// Checks on the confidence intervals.
    pub diagnostics: Diagnostics,
}

/// The routing rule of a supported model, with its arrival rate per server.
enum Policy {
    Random,
    Jsq2,
    JsqD(u32),
    Pod { d: u32, eps: f64, g: Option<u32> },
    Jiq,
}

fn check_lambda(lambda: f64) -> Result<(), SimError> {
    if lambda.is_finite() && lambda > 0.0 {
        Ok(())
    } else {
        Err(out_of_range("model.lambda", lambda, "a finite number > 0"))
    }
}

fn check_d(d: u32) -> Result<(), SimError> {
    if (1..=1_000_000).contains(&d) {
        Ok(())
    } else {
        Err(out_of_range("model.d", d, "an integer in [1, 1000000]"))
    }
}

fn check_eps(eps: f64) -> Result<(), SimError> {
    if (0.0..=1.0).contains(&eps) {
        Ok(())
    } else {
        Err(out_of_range("model.eps", eps, "a probability in [0, 1]"))
    }
}

/// The routing rule and arrival rate per server of `spec`, after checking its parameters.
fn policy_of(spec: &ModelSpec) -> Result<(Policy, f64), SimError> {
    #[allow(unreachable_patterns)] // variants added to ModelSpec later are reported, not simulated
    match *spec {
        ModelSpec::Jsq { lambda, d } => {
            check_lambda(lambda)?;
            check_d(d)?;
            let p = match d {
                1 => Policy::Random,
                2 => Policy::Jsq2,
                _ => Policy::JsqD(d),
            };
            Ok((p, lambda))
        }
        ModelSpec::PodLi { lambda, d, eps } => {
            check_lambda(lambda)?;
            check_d(d)?;
            check_eps(eps)?;
            Ok((Policy::Pod { d, eps, g: None }, lambda))
        }
        ModelSpec::PodLd { lambda, d, eps, g } => {
            check_lambda(lambda)?;
            check_d(d)?;
            check_eps(eps)?;
            Ok((Policy::Pod { d, eps, g: Some(g) }, lambda))
        }
        ModelSpec::Jiq { lambda } => {
            check_lambda(lambda)?;
            Ok((Policy::Jiq, lambda))
        }
        _ => Err(SimError::Unsupported { kind: spec.kind().to_string() }),
    }
}

fn run_one(policy: &Policy, p: &RunParams, rng: &mut Rng) -> Replication {
    fn go<R: Router>(mut r: R, p: &RunParams, rng: &mut Rng) -> Replication {
        engine::run(&mut r, p, rng)
    }
    match *policy {
        Policy::Random => go(Random, p, rng),
        Policy::Jsq2 => go(Jsq2, p, rng),
        Policy::JsqD(d) => go(JsqD { d }, p, rng),
        Policy::Pod { d, eps, g } => go(Pod { eps, g, buf: vec![0; d as usize] }, p, rng),
        Policy::Jiq => go(Jiq, p, rng),
    }
}

/// Simulates the `N`-server system of `spec` and estimates its stationary tail, mean queue
/// length, response time, throughput, loss and waiting probabilities with 95% confidence
/// intervals (see the crate docs for the estimator).
///
/// The system starts empty; `lambda >= 1` (or any unstable parameter) without a buffer gives
/// growing queues and meaningless "stationary" estimates.
///
/// # Errors
/// [`SimError::OutOfRange`] for an option outside its range ([`SimOptions::validate`]) or a
/// model parameter outside its range (`model.lambda` not finite or `<= 0`, `model.d` outside
/// `[1, 1000000]`, `model.eps` outside `[0, 1]`); [`SimError::Unsupported`] for a model kind
/// that has no simulator.
pub fn simulate(spec: &ModelSpec, opts: &SimOptions) -> Result<SimReport, SimError> {
    opts.validate()?;
    let (policy, lambda) = policy_of(spec)?;
    let started = Instant::now();
    let r_count = opts.replications;

    let bar = opts.progress.then(|| {
        let bar = ProgressBar::new((r_count * (opts.batches + 1)) as u64);
        if let Ok(style) = ProgressStyle::with_template("simulating {bar:40} {pos}/{len} segments, {elapsed} elapsed, eta {eta}") {
            bar.set_style(style);
        }
        bar
    });
    let tick = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let params = RunParams {
        n: opts.servers as u32,
        lambda,
        buffer: opts.buffer,
        warmup: opts.warmup,
        time: opts.time,
        batches: opts.batches,
        tick: &tick,
    };

    // stream r = the seed's stream advanced by r jumps of 2^128 steps (non-overlapping)
    let mut streams = Vec::with_capacity(r_count);
    let mut rng = Rng::seed_from_u64(opts.seed);
    for _ in 0..r_count {
        streams.push(rng.clone());
        rng.jump();
    }
    let reps: Vec<Replication> = streams.into_par_iter().map(|mut rng| run_one(&policy, &params, &mut rng)).collect();
    if let Some(b) = &bar {
        b.finish_and_clear();
    }

    let report = summarize(spec, opts, &reps, started.elapsed().as_secs_f64());
    Ok(report)
}

/// Pools the batches of all replications into estimates.
fn summarize(spec: &ModelSpec, opts: &SimOptions, reps: &[Replication], wall_seconds: f64) -> SimReport {
    let n = opts.servers as f64;
    let levels = reps.iter().flat_map(|r| &r.batches).map(|b| b.level_integral.len().saturating_sub(1)).max().unwrap_or(0);
    let batches: Vec<_> = reps.iter().flat_map(|r| &r.batches).collect();
    let per_server_time = |b: &engine::Batch| n * b.duration;

    let tail: Vec<Estimate> = (1..=levels)
        .map(|k| {
            let v: Vec<f64> = batches.iter().map(|b| b.level_integral.get(k).copied().unwrap_or(0.0) / per_server_time(b)).collect();
            stats::mean_estimate(&v)
        })
        .collect();
    let jobs = |b: &engine::Batch| b.level_integral.iter().skip(1).sum::<f64>() / per_server_time(b);
    let l: Vec<f64> = batches.iter().map(|b| jobs(b)).collect();
    let theta: Vec<f64> = batches.iter().map(|b| b.accepted as f64 / per_server_time(b)).collect();
    let lost: Vec<f64> = batches.iter().map(|b| b.lost as f64).collect();
    let offered: Vec<f64> = batches.iter().map(|b| (b.accepted + b.lost) as f64).collect();
    let waited: Vec<f64> = batches.iter().map(|b| b.waited as f64).collect();
    let accepted: Vec<f64> = batches.iter().map(|b| b.accepted as f64).collect();
    let departed: Vec<f64> = batches.iter().map(|b| b.departures as f64 / per_server_time(b)).collect();

    let by_rep: Vec<Vec<f64>> = reps.iter().map(|r| r.batches.iter().map(jobs).collect()).collect();
    let rep_means: Vec<f64> = by_rep.iter().map(|v| v.iter().sum::<f64>() / v.len() as f64).collect();
    let events: u64 = reps.iter().map(|r| r.events).sum();

    SimReport {
        model: spec.clone(),
        options: opts.clone(),
        tail,
        mean_queue_length: stats::mean_estimate(&l),
        mean_response_time: stats::ratio_estimate(&l, &theta),
        throughput: stats::mean_estimate(&theta),
        loss_probability: stats::ratio_estimate(&lost, &offered),
        prob_wait: stats::ratio_estimate(&waited, &accepted),
        events,
        wall_seconds,
        events_per_second: events as f64 / wall_seconds.max(1e-12),
        diagnostics: Diagnostics {
            batch_lag1_autocorrelation: stats::lag1_autocorrelation(&by_rep),
            replication_half_width: if rep_means.len() >= 2 { stats::mean_estimate(&rep_means).half_width } else { f64::NAN },
            max_queue_length: levels,
            departure_rate: stats::mean_estimate(&departed),
        },
    }
}
