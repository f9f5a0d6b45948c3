//! Redundancy-d with identical copies under FCFS on `K` servers (general size laws and server
//! speeds): `lambda_max` from the saturated system, the finite system around it, and the
//! threshold against `d` for speed profiles (docs/models/redundancy.md, "Identical copies with
//! general sizes and speeds"; Anton, Ayesta, Jonckheere and Verloop, "On the stability of
//! redundancy models", Oper. Res. 69(5), 2021).

use crate::Error;
use mfq_model::models::redundancy::{CopySize, RedundancySpec};
use mfq_model::Stability;
use mfq_sim::saturated::exact::saturated_exact_with;
use mfq_sim::saturated::general::{finite_copies, saturated_general, CopySystem, FiniteCopiesReport};
use mfq_sim::{SimError, SimOptions, SimStatus};
use serde::Serialize;

fn bad(field: &str, value: impl std::fmt::Display, allowed: &str) -> Error {
    Error::Simulation(SimError::OutOfRange { field: field.into(), value: value.to_string(), allowed: allowed.into() })
}

/// `lambda_max` (arrival rate per server) of a finite system and how it is known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LambdaMax {
    /// The value (the point estimate when simulated).
    pub value: f64,
    /// Half width of its 95% confidence interval (simulated); the truncation error estimate
    /// (exact chain); 0 for a closed form.
    pub half_width: f64,
    /// `closed-form`, `exact-chain` or `simulated`.
    pub method: &'static str,
    /// Where the value comes from.
    pub source: String,
}

/// What [`identical_copies`] computed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdenticalCopiesReport {
    /// Arrival rate per server.
    pub lambda: f64,
    /// Copies per job.
    pub d: u32,
    /// Server speeds (`K` entries).
    pub speeds: Vec<f64>,
    /// The size law.
    pub size_law: String,
    /// The stability threshold of these `K` servers.
    pub lambda_max: LambdaMax,
    /// Stable below `lambda_max` (below the lower end of its interval when simulated),
    /// unstable above it (above the upper end), unknown inside the interval.
    pub verdict: Stability,
    /// The finite system at `lambda`, simulated from the rules (`None` when not asked for).
    pub finite_system: Option<FiniteCopiesReport>,
}

/// The system of a redundancy spec with identical copies on `servers` servers (`K` = the
/// number of `speeds` when given, which `servers` must equal).
///
/// # Errors
/// [`Error::Simulation`] or [`Error::Model`] for i.i.d. copies, a discipline other than FCFS, an invalid size
/// law, `servers` not matching `speeds`, or sizes out of range.
pub fn copy_system(spec: &RedundancySpec, servers: usize) -> Result<CopySystem, Error> {
    if !spec.is_identical_fcfs() {
        let copies = match spec.copies {
            mfq_model::models::redundancy::Copies::Iid => "iid",
            mfq_model::models::redundancy::Copies::Identical => "identical",
        };
        let given = format!("copies = \"{copies}\" with discipline = {}", spec.discipline.label(spec.lps_k.unwrap_or(1)));
        return Err(bad("model.copies", given, "identical copies under discipline = \"fcfs\""));
    }
    spec.check_identical()?;
    let size = spec.copy_size()?;
    let sys = match &spec.speeds {
        Some(speeds) if speeds.len() != servers => {
            return Err(bad("servers", servers.to_string(), &format!("the number of model.speeds entries, {}", speeds.len())))
        }
        Some(speeds) => CopySystem::new(spec.d, speeds.clone(), size),
        None => CopySystem::homogeneous(spec.d, servers, size),
    };
    Ok(sys?)
}

/// `lambda_max` of the system: a closed form ([`CopySystem::closed_form_threshold`]), else the
/// exact saturated chain for unit speeds, phase-type sizes and `K = d + 2 <= 6` (phase cap 64
/// for exponential sizes, 16 otherwise), else the simulated saturated system with `opts`.
///
/// # Errors
/// [`Error::Simulation`] for invalid options, or naming `max_seconds` when the simulation
/// did not finish within it.
pub fn lambda_max(sys: &CopySystem, opts: &SimOptions) -> Result<LambdaMax, Error> {
    let source = "Anton, Ayesta, Jonckheere and Verloop 2021: stable iff lambda < the throughput per server of the saturated system";
    if let Some(value) = sys.closed_form_threshold() {
        return Ok(LambdaMax { value, half_width: 0.0, method: "closed-form", source: format!("closed form ({source})") });
    }
    let (k, d) = (sys.servers(), sys.d() as usize);
    if let (true, CopySize::PhaseType(ph)) = (sys.is_homogeneous() && k == d + 2 && k <= 6, sys.size()) {
        let cap = if ph.is_exponential() { 64 } else { 16 };
        let e = saturated_exact_with(sys.d(), k, cap, Some(ph))?;
        let speed = sys.speeds()[0];
        return Ok(LambdaMax {
            value: e.throughput_per_server * speed,
            half_width: e.truncation_error * speed,
            method: "exact-chain",
            source: format!("stationary distribution of the saturated system's Markov chain, phase cap {cap} ({source})"),
        });
    }
    if !sys.is_homogeneous() {
        return finite_threshold(sys, opts);
    }
    let r = saturated_general(sys, opts)?;
    if r.status != SimStatus::Completed {
        return Err(bad(
            "max_seconds",
            opts.deadline.limit().unwrap_or(f64::NAN),
            "enough seconds for the saturated-system simulation to finish",
        ));
    }
    Ok(LambdaMax {
        value: r.throughput_per_server.mean,
        half_width: r.throughput_per_server.half_width,
        method: "simulated",
        source: format!("simulation of the saturated system, 95% confidence interval from batch means ({source})"),
    })
}

/// `lambda_max` of servers of different speeds from the finite system itself: with
/// heterogeneous speeds the saturated system (all servers busy on one common backlog) only
/// bounds the threshold from above (speeds (3.5, 0.5 x 5), d = 2: saturated 0.894, yet the
/// finite system is unstable at 0.58: the fast server empties its queue while the slow ones
/// fill; docs/models/redundancy.md). Every stable `lambda` is a fixed point of
/// `lambda -> throughput(lambda)`, and above the threshold the throughput of the overloaded
/// system lies between the threshold and `lambda`; so the iteration starts at the saturated
/// throughput and stops at the first `lambda` whose growth interval covers 0 (at most 12
/// steps). The half width is that of the last throughput estimate.
fn finite_threshold(sys: &CopySystem, opts: &SimOptions) -> Result<LambdaMax, Error> {
    let mut lambda = saturated_general(sys, opts)?.throughput_per_server.mean;
    let mut half_width = 0.0;
    for _ in 0..12 {
        let r = finite_copies(sys, lambda, opts)?;
        if r.status != SimStatus::Completed {
            return Err(bad(
                "max_seconds",
                opts.deadline.limit().unwrap_or(f64::NAN),
                "enough seconds for the finite-system simulations to finish",
            ));
        }
        half_width = r.throughput_per_server.half_width;
        if r.growth_per_server.covers(0.0, 0.95, 0.0) {
            break;
        }
        lambda = r.throughput_per_server.mean;
    }
    Ok(LambdaMax {
        value: lambda,
        half_width,
        method: "finite-system",
        source: "the finite system simulated at lambda_k, lambda_{k+1} = its throughput per server, from the saturated system's \
                 throughput down to the first lambda_k whose growth of the number of jobs is zero within its 95% interval \
                 (with heterogeneous speeds the saturated system only bounds lambda_max from above)"
            .into(),
    })
}

/// The verdict at `lambda` and, when `simulate_finite`, the finite system at `lambda`.
///
/// # Errors
/// As [`copy_system`] and [`lambda_max`]; `model.lambda` not finite and `> 0`.
pub fn identical_copies(spec: &RedundancySpec, opts: &SimOptions, simulate_finite: bool) -> Result<IdenticalCopiesReport, Error> {
    let sys = copy_system(spec, opts.servers)?;
    let lambda = spec.lambda;
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(bad("model.lambda", lambda, "a finite number > 0"));
    }
    let lmax = lambda_max(&sys, opts)?;
    let (lo, hi) = (lmax.value - lmax.half_width, lmax.value + lmax.half_width);
    let what = format!("lambda_max = {:.6} +- {:.1e} ({})", lmax.value, lmax.half_width, lmax.method);
    let verdict = if lambda < lo || (lmax.half_width == 0.0 && lambda < lmax.value) {
        Stability::Stable { condition: format!("lambda < {what}") }
    } else if lambda >= hi {
        Stability::Unstable { reason: format!("lambda = {lambda} >= {what}") }
    } else {
        Stability::Unknown { note: format!("lambda = {lambda} lies inside the interval of {what}") }
    };
    let finite_system = if simulate_finite { Some(finite_copies(&sys, lambda, opts)?) } else { None };
    Ok(IdenticalCopiesReport {
        lambda,
        d: spec.d,
        speeds: sys.speeds().to_vec(),
        size_law: sys.size().label(),
        lambda_max: lmax,
        verdict,
        finite_system,
    })
}

/// The local capacity bound of identical copies on servers of speeds `speeds` (any
/// discipline): the jobs whose `d` copies all lie in a set `S` of servers can only be served
/// there, so `lambda K E[X] C(|S|, d) / C(K, d) < sum_{s in S} nu_s` for every `S`; the
/// binding sets are the `n` slowest servers, `n = d..K`. Returns the bound on `lambda`
/// ([`mfq_model::models::redundancy::local_capacity`], which also gives the binding `n`; the
/// stability verdict of `fixed-point` reads it). At `d = 1` it is `min nu / E[X]`, the exact
/// threshold.
pub fn local_capacity_bound(speeds: &[f64], d: u32, mean_size: f64) -> f64 {
    mfq_model::models::redundancy::local_capacity(speeds, d, mean_size).0
}

/// One point of [`threshold_against_d`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdPoint {
    /// Copies per job.
    pub d: u32,
    /// Throughput per server of the saturated system (simulated; exact at `d = K`).
    pub saturated: f64,
    /// The 95% half width of `threshold` (of the saturated estimate when that is drawn).
    pub half_width: f64,
    /// [`local_capacity_bound`].
    pub local_bound: f64,
    /// The threshold drawn: `min(saturated, local_bound)` for equal speeds and at `d = 1`,
    /// `d = K`; otherwise the finite-system estimate (`finite_threshold`).
    pub threshold: f64,
    /// The exact threshold where known (`d = 1`: `min nu / E[X]`; `d = K`: `max nu / (K E[X])`).
    pub exact: Option<f64>,
}

/// The stability threshold against `d = 1..K` for the speed profile `speeds` and size law
/// `size`: the saturated system simulated with `opts` (`opts.servers` is set to `K`), the
/// local capacity bound, and the exact values at `d = 1` and `d = K`.
///
/// # Errors
/// [`Error::Simulation`] or [`Error::Model`] for invalid speeds or options.
pub fn threshold_against_d(speeds: &[f64], size: &CopySize, opts: &SimOptions) -> Result<Vec<ThresholdPoint>, Error> {
    let k = speeds.len();
    let opts = SimOptions { servers: k, ..opts.clone() };
    let mut out = Vec::with_capacity(k);
    for d in 1..=k as u32 {
        let sys = CopySystem::new(d, speeds.to_vec(), size.clone())?;
        let r = saturated_general(&sys, &opts)?;
        let e = r.throughput_per_server;
        let local_bound = local_capacity_bound(speeds, d, size.mean());
        let exact = (d == 1 || d as usize == k).then(|| sys.closed_form_threshold()).flatten();
        let (threshold, half_width) = if sys.is_homogeneous() || exact.is_some() {
            (e.mean.min(local_bound), e.half_width)
        } else {
            let f = finite_threshold(&sys, &opts)?;
            (f.value, f.half_width)
        };
        out.push(ThresholdPoint { d, saturated: e.mean, half_width, local_bound, threshold, exact });
    }
    Ok(out)
}
