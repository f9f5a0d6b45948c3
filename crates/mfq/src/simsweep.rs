//! Simulation sweeps: the finite-N simulation of a model file at each value of one parameter,
//! with the 95% confidence intervals of its estimates. For kinds without a mean field (k-of-n)
//! or to draw simulated values against a parameter; any kind that simulates (`mfq simulate`)
//! can be swept.
//!
//! Each point is checked against the kind's stability condition first (the region of
//! [`ModelSpec::stability_only`], else the probe model's [`mfq_model::MeanFieldModel::stability`]):
//! an unstable point is reported as such, with the reason, and not simulated.

use crate::sweep::Axis;
use mfq_model::models::KOfNSpec;
use mfq_model::{ModelError, ModelFile, ModelSpec, Stability};
use mfq_sim::{Estimate, SimOptions, SimStatus};
use serde::Serialize;
use std::collections::BTreeMap;

/// The number of servers a model fixes itself (k-of-n's `servers`), which a simulation must use;
/// `None` for the kinds whose size is the simulator's option.
pub fn model_servers(spec: &ModelSpec) -> Option<usize> {
    spec.downcast_ref::<KOfNSpec>().map(|s| s.servers as usize)
}

/// The known stability verdict of a model at its parameters, when it is `Unstable`: the reason
/// (never with `truncation.buffer`: a loss system).
pub fn unstable_reason(file: &ModelFile) -> Option<String> {
    let verdict = match file.model.stability_only() {
        Some(region) => region.stability,
        None => {
            let levels = file.truncation.levels.unwrap_or_else(|| file.model.initial_levels());
            file.truncation.stability_of(file.model.build_probe(levels).ok()?.stability())
        }
    };
    match verdict {
        Stability::Unstable { reason } => Some(reason),
        _ => None,
    }
}

/// How one point of a simulation sweep ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum SimPointStatus {
    /// Simulated over the whole horizon.
    Simulated {
        /// Mean response time (95% CI). This and the next two are `None` (absent from the
        /// JSON) when the system simulated does not observe them ([`mfq_sim::SimReport`]: the
        /// population process of a generic model).
        #[serde(skip_serializing_if = "Option::is_none")]
        mean_response_time: Option<Estimate>,
        /// Mean queue length per server (requests per server for k-of-n).
        #[serde(skip_serializing_if = "Option::is_none")]
        mean_queue_length: Option<Estimate>,
        /// Throughput per server.
        #[serde(skip_serializing_if = "Option::is_none")]
        throughput: Option<Estimate>,
        /// The kind's further estimates ([`mfq_sim::SimReport::extras`]).
        extras: BTreeMap<String, Estimate>,
    },
    /// Outside the known stability region: not simulated.
    Unstable {
        /// Why.
        reason: String,
    },
    /// Invalid parameters at this point, or a kind that does not simulate.
    Invalid {
        /// The error, naming the field.
        reason: String,
    },
}

impl SimPointStatus {
    /// The estimate of `quantity` (`mean_response_time`, `mean_queue_length`, `throughput` or
    /// the name of an extra) of a simulated point; `None` for another point, a quantity the
    /// system simulated does not observe, or one undefined (`NaN`) there.
    pub fn estimate(&self, quantity: &str) -> Option<Estimate> {
        let SimPointStatus::Simulated { mean_response_time, mean_queue_length, throughput, extras } = self else { return None };
        match quantity {
            "mean_response_time" => *mean_response_time,
            "mean_queue_length" => *mean_queue_length,
            "throughput" => *throughput,
            other => extras.get(other).copied(),
        }
        .filter(|e| e.mean.is_finite())
    }
}

/// One point: the swept value and the outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimSweepPoint {
    /// Value of the x axis.
    pub x: f64,
    /// Outcome.
    pub status: SimPointStatus,
}

/// A finished simulation sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimSweepReport {
    /// The x axis.
    pub x_axis: Axis,
    /// The points, in x order (the finished ones when `partial` is set).
    pub points: Vec<SimSweepPoint>,
    /// `Some(why)` when the time limit (or a cancellation) stopped the sweep before every point
    /// was simulated.
    pub partial: Option<String>,
}

/// Simulates the model file `text` with `overrides` at every value of `x_axis` (a `--set`
/// name, or `servers`: the number of servers `N` of the simulation, for the kinds whose size is
/// the simulator's), with `opts` (its `servers` replaced by the model's own for kinds that fix
/// it, [`model_servers`]). Points run one after the other (each simulation runs its replications in
/// parallel); `progress` is called after each point. The file is parsed within
/// `opts.deadline` ([`ModelFile::parse_within`]): a parse the deadline stops ends the sweep
/// with the finished points, [`partial`](SimSweepReport::partial) saying where.
///
/// # Errors
/// [`ModelError`] when the file does not parse with the overrides at the first point (a bad
/// name or file); later points that fail are [`SimPointStatus::Invalid`], as is a value of
/// `servers` that is not an integer >= 1.
pub fn simulation_sweep(
    text: &str,
    overrides: &[String],
    x_axis: &Axis,
    opts: &SimOptions,
    progress: &(dyn Fn() + Sync),
) -> Result<SimSweepReport, ModelError> {
    let mut points = Vec::with_capacity(x_axis.values.len());
    let mut partial = None;
    // `servers` is the simulator's N unless the kind fixes its own size (then a parameter)
    // the parses within the deadline: a model file of many transitions takes seconds to parse
    let parse = |ov: &[String]| ModelFile::parse_within(text, ov, &opts.deadline);
    let stopped = |x: f64| format!("stopped at {} while reading the model file at {} = {x}", opts.deadline.reason(), x_axis.name);
    let sweeps_size = x_axis.name == "servers"
        && match parse(overrides) {
            Err(ModelError::Interrupted { .. }) => {
                let x = x_axis.values.first().copied().unwrap_or(f64::NAN);
                return Ok(SimSweepReport { x_axis: x_axis.clone(), points, partial: Some(stopped(x)) });
            }
            f => f.map_or(true, |f| model_servers(&f.model).is_none()),
        };
    for (i, &x) in x_axis.values.iter().enumerate() {
        let mut ov = overrides.to_vec();
        if !sweeps_size {
            ov.push(format!("{}={}", x_axis.name, x_axis.text_of(x)));
        } else if !(x >= 1.0 && x.fract() == 0.0 && x <= u32::MAX as f64) {
            let reason = format!("servers = {x} is not allowed: an integer number of servers >= 1");
            points.push(SimSweepPoint { x, status: SimPointStatus::Invalid { reason } });
            continue;
        }
        let file = match parse(&ov) {
            Ok(f) => f,
            Err(ModelError::Interrupted { .. }) => {
                partial = Some(stopped(x));
                break;
            }
            Err(e) if i == 0 => return Err(e),
            Err(e) => {
                points.push(SimSweepPoint { x, status: SimPointStatus::Invalid { reason: e.to_string() } });
                continue;
            }
        };
        // the stability check is the front door's (`Model::simulate`, one per point)
        let status = {
            let servers = if sweeps_size { x as usize } else { model_servers(&file.model).unwrap_or(opts.servers) };
            let o = SimOptions { servers, ..opts.clone() };
            match crate::Model::new(file.model.clone(), file.truncation).simulate(&o) {
                Err(crate::Error::FixedPoint(mfq_fixpoint::FixedPointError::Unstable { reason })) => SimPointStatus::Unstable { reason },
                Err(e) => SimPointStatus::Invalid { reason: e.to_string() },
                Ok(r) if r.status != SimStatus::Completed => {
                    partial = Some(format!("stopped by the time limit at {} = {x}", x_axis.name));
                    break;
                }
                Ok(r) => SimPointStatus::Simulated {
                    mean_response_time: r.mean_response_time,
                    mean_queue_length: r.mean_queue_length,
                    throughput: r.throughput,
                    extras: r.extras,
                },
            }
        };
        points.push(SimSweepPoint { x, status });
        progress();
    }
    Ok(SimSweepReport { x_axis: x_axis.clone(), points, partial })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model file is read within the sweep's deadline: past it the sweep stops while
    /// reading (no point simulated), for `servers` and for a parameter.
    #[test]
    fn a_simulation_sweep_reads_its_file_within_the_deadline() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/k-of-n.toml")).unwrap();
        let deadline = mfq_model::Deadline::after(1e-9);
        std::thread::sleep(std::time::Duration::from_millis(2));
        let opts = SimOptions { deadline, ..Default::default() };
        for axis in [Axis::parse("lambda", "0.3,0.7").unwrap(), Axis::parse("servers", "10,20").unwrap()] {
            let r = simulation_sweep(&text, &[], &axis, &opts, &|| {}).unwrap();
            assert!(r.points.is_empty(), "{:?}", r.points);
            let why = r.partial.unwrap_or_default();
            assert!(why.contains("while reading the model file") && why.contains(&format!("{} = ", axis.name)), "{why}");
        }
    }

    /// k-of-n, central buffer, k = 1, n = N = 4, exponential copies: an M/M/1 queue of rate 4,
    /// `E[T] = 1 / (4 (1 - lambda))` (docs/models/k-of-n.md); the sweep simulates the stable
    /// points within their intervals (Bonferroni over 2) and reports `lambda = 1.1` unstable.
    #[test]
    fn a_k_of_n_sweep_matches_the_mm1_and_stops_at_the_stability_boundary() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/k-of-n.toml")).unwrap();
        let axis = Axis::parse("lambda", "0.3,0.7,1.1").unwrap();
        let opts = SimOptions { servers: 1000, time: 40_000.0, warmup: 100.0, replications: 4, batches: 20, seed: 5, ..Default::default() };
        let r = simulation_sweep(&text, &[], &axis, &opts, &|| {}).unwrap();
        for p in &r.points[..2] {
            let e = p.status.estimate("mean_response_time").unwrap();
            let exact = 1.0 / (4.0 * (1.0 - p.x));
            assert!(e.covers(exact, 0.975, 0.0), "lambda {}: {e:?} vs {exact}", p.x);
        }
        assert!(matches!(&r.points[2].status, SimPointStatus::Unstable { reason } if reason.contains("lambda_max")), "{:?}", r.points[2]);
    }
}
