//! Redundancy-d with identical copies under FCFS for general job-size laws and heterogeneous
//! server speeds: the saturated system (its throughput per server is the stability threshold
//! `lambda_max`) and the finite system with Poisson arrivals, both simulated from the rules.
//!
//! # The rules
//!
//! `K` servers of speeds `nu_1..nu_K`, each with its own FCFS queue. A job has one size `X`
//! drawn from the law ([`CopySize`]: phase-type or deterministic) and copies on `d` distinct
//! servers chosen uniformly at random. A copy that starts service at server `s` at time `t`
//! finishes at `t + X / nu_s`; the job leaves when its first copy finishes, and all its copies
//! leave with it (cancel on completion). So a job in service completes at the minimum, over the
//! copies it has started, of `start + X / nu_s`. Later-started copies on servers of the same
//! speed never finish first: with unit speeds a job completes `X` after its first copy started.
//!
//! - **Saturated system**: an infinite backlog in arrival order, revealed lazily (a new job is
//!   drawn whenever a server has no copy). The long-run job throughput per server is the
//!   stability threshold (Anton, Ayesta, Jonckheere and Verloop, "On the stability of
//!   redundancy models", Oper. Res. 69(5), 2021: stable iff the arrival rate is below the
//!   saturated system's rate; their theorem is for exponential sizes and unit speeds, and the
//!   extension to other laws and speeds is the paper's simulation question, examined here by
//!   simulating the finite system on both sides, docs/models/redundancy.md).
//! - **Finite system**: Poisson arrivals at total rate `lambda K`, the same rules.
//!
//! Both run as event loops over a binary heap of completion times (a job's entry is replaced
//! when a new copy would finish earlier; stale entries are skipped); each server's queue is a
//! deque of job handles whose front is always a live job in service.

use super::check_sizes;
use crate::engine::{exp1, index, uniform, Rng};
use crate::stats::{self, Estimate};
use crate::{out_of_range, SimError, SimOptions, SimStatus, DEADLINE_CHECK_EVENTS};
pub use mfq_model::models::redundancy::CopySize;
use rand::SeedableRng;
use rayon::prelude::*;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

/// A system of identical copies: `d` copies per job, the server speeds (`K = speeds.len()`)
/// and the size law.
#[derive(Debug, Clone, PartialEq)]
pub struct CopySystem {
    d: u32,
    speeds: Vec<f64>,
    size: CopySize,
}

impl CopySystem {
    /// `K = speeds.len()` servers of the given speeds.
    ///
    /// # Errors
    /// [`SimError::OutOfRange`] for `d` outside `[1, 1000]`, `K` outside `[d, 100000]`
    /// (field `servers`), or a speed that is not finite and `> 0` (field `model.speeds[i]`).
    pub fn new(d: u32, speeds: Vec<f64>, size: CopySize) -> Result<Self, SimError> {
        check_sizes(d, speeds.len(), super::MAX_SERVERS)?;
        for (i, &v) in speeds.iter().enumerate() {
            if !(v.is_finite() && v > 0.0) {
                return Err(out_of_range(&format!("model.speeds[{i}]"), v, "a finite speed > 0 (work per unit time)"));
            }
        }
        Ok(CopySystem { d, speeds, size })
    }

    /// `K` unit-speed servers.
    ///
    /// # Errors
    /// As [`CopySystem::new`].
    pub fn homogeneous(d: u32, servers: usize, size: CopySize) -> Result<Self, SimError> {
        if servers > super::MAX_SERVERS {
            return Err(out_of_range("servers", servers, &format!("an integer in [d, {}]", super::MAX_SERVERS)));
        }
        CopySystem::new(d, vec![1.0; servers], size)
    }

    /// Number of servers `K`.
    pub fn servers(&self) -> usize {
        self.speeds.len()
    }

    /// Copies per job.
    pub fn d(&self) -> u32 {
        self.d
    }

    /// The server speeds.
    pub fn speeds(&self) -> &[f64] {
        &self.speeds
    }

    /// The size law.
    pub fn size(&self) -> &CopySize {
        &self.size
    }

    /// Whether every server has the same speed.
    pub fn is_homogeneous(&self) -> bool {
        self.speeds.iter().all(|&v| v == self.speeds[0])
    }

    /// The exact thresholds (arrival rate per server) where a closed form exists: `d = 1`:
    /// `min nu / E[X]` (each server an M/G/1 queue fed at rate `lambda`); `d = K`:
    /// `max nu / (K E[X])` (every server works on the head job, which leaves after
    /// `X / max nu`); unit speeds, `K = d + 1`: `2 / (K E[X])` (exactly two jobs in service,
    /// each completing `X` after it started: two renewal processes).
    pub fn closed_form_threshold(&self) -> Option<f64> {
        let k = self.servers() as f64;
        let mean = self.size.mean();
        let (lo, hi) = self.speeds.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        if self.d == 1 {
            Some(lo / mean)
        } else if self.d as usize == self.servers() {
            Some(hi / (k * mean))
        } else if self.is_homogeneous() && self.d as usize + 1 == self.servers() {
            Some(2.0 * self.speeds[0] / (k * mean))
        } else {
            None
        }
    }
}

/// One draw of the size law.
fn sample(size: &CopySize, rng: &mut Rng) -> f64 {
    match size {
        CopySize::Deterministic(x) => *x,
        CopySize::PhaseType(ph) => {
            let m = ph.phases();
            let pick = |weights: &mut dyn Iterator<Item = f64>, total: f64, rng: &mut Rng| -> Option<usize> {
                let mut u = uniform(rng) * total;
                for (j, w) in weights.enumerate() {
                    if u < w {
                        return Some(j);
                    }
                    u -= w;
                }
                None
            };
            let mut j = pick(&mut ph.alpha().iter().copied(), 1.0, rng).unwrap_or(m - 1);
            let mut t = 0.0;
            loop {
                let out = -ph.rate(j, j);
                t += exp1(rng) / out;
                // exit with probability nu_j / out, else move to j' with A_{jj'} / out
                let moves = (0..m).map(|i| if i == j { ph.exit_rates()[j] } else { ph.rate(j, i) });
                match pick(&mut moves.into_iter(), out, rng) {
                    Some(i) if i != j => j = i,
                    _ => return t,
                }
            }
        }
    }
}

/// A completion candidate: job `slot` (generation `gen`) finishes at `t`.
#[derive(Clone, Copy, PartialEq)]
struct Ev {
    t: f64,
    slot: u32,
    gen: u32,
}
impl Eq for Ev {}
impl Ord for Ev {
    fn cmp(&self, other: &Self) -> Ordering {
        other.t.total_cmp(&self.t) // reversed: BinaryHeap is a max-heap
    }
}
impl PartialOrd for Ev {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The state of one replication.
struct Sim<'a> {
    sys: &'a CopySystem,
    /// Per job slot: size, earliest finish of its started copies, generation, servers.
    size: Vec<f64>,
    done_at: Vec<f64>,
    gen: Vec<u32>,
    alive: Vec<bool>,
    servers_of: Vec<u32>,
    free: Vec<u32>,
    queues: Vec<VecDeque<(u32, u32)>>,
    heap: BinaryHeap<Ev>,
    /// Servers with an empty queue.
    empty: usize,
    /// Jobs in the system (finite system) or revealed (saturated).
    jobs: usize,
    chosen: Vec<u32>,
}

impl<'a> Sim<'a> {
    fn new(sys: &'a CopySystem) -> Self {
        let k = sys.servers();
        Sim {
            sys,
            size: Vec::new(),
            done_at: Vec::new(),
            gen: Vec::new(),
            alive: Vec::new(),
            servers_of: Vec::new(),
            free: Vec::new(),
            queues: vec![VecDeque::new(); k],
            heap: BinaryHeap::new(),
            empty: k,
            jobs: 0,
            chosen: vec![0; sys.d as usize],
        }
    }

    fn live(&self, (slot, gen): (u32, u32)) -> bool {
        self.gen[slot as usize] == gen && self.alive[slot as usize]
    }

    /// Copy of job `slot` starts at server `s` at time `t`.
    fn start(&mut self, slot: u32, s: usize, t: f64) {
        let finish = t + self.size[slot as usize] / self.sys.speeds[s];
        if finish < self.done_at[slot as usize] {
            self.done_at[slot as usize] = finish;
            self.heap.push(Ev { t: finish, slot, gen: self.gen[slot as usize] });
        }
    }

    /// A new job at time `t`: its copies join the tails of `d` uniform distinct servers.
    fn arrive(&mut self, t: f64, rng: &mut Rng) {
        let (k, d) = (self.sys.servers() as u32, self.sys.d);
        for (n, top) in ((k - d)..k).enumerate() {
            let x = index(rng, top + 1);
            self.chosen[n] = if self.chosen[..n].contains(&x) { top } else { x };
        }
        let slot = self.free.pop().unwrap_or_else(|| {
            self.size.push(0.0);
            self.done_at.push(0.0);
            self.gen.push(0);
            self.alive.push(false);
            self.servers_of.extend(std::iter::repeat_n(0, d as usize));
            (self.size.len() - 1) as u32
        });
        let i = slot as usize;
        self.size[i] = sample(&self.sys.size, rng);
        self.done_at[i] = f64::INFINITY;
        self.alive[i] = true;
        self.jobs += 1;
        for n in 0..d as usize {
            let s = self.chosen[n] as usize;
            self.servers_of[i * d as usize + n] = s as u32;
            self.queues[s].push_back((slot, self.gen[i]));
            if self.queues[s].len() == 1 {
                self.empty -= 1;
                self.start(slot, s, t);
            }
        }
    }

    /// The next valid completion time (stale heap entries dropped).
    fn next_completion(&mut self) -> f64 {
        while let Some(ev) = self.heap.peek() {
            if self.live((ev.slot, ev.gen)) && self.done_at[ev.slot as usize] == ev.t {
                return ev.t;
            }
            self.heap.pop();
        }
        f64::INFINITY
    }

    /// The job at the top of the heap completes at `t`; the servers it headed start their
    /// next live copies.
    fn complete(&mut self, t: f64) {
        let ev = self.heap.pop().expect("a valid completion is at the top");
        let i = ev.slot as usize;
        self.alive[i] = false;
        self.gen[i] = self.gen[i].wrapping_add(1);
        self.free.push(ev.slot);
        self.jobs -= 1;
        let d = self.sys.d as usize;
        for n in 0..d {
            let s = self.servers_of[i * d + n] as usize;
            if self.queues[s].front().is_some_and(|&(slot, _)| slot == ev.slot) {
                self.queues[s].pop_front();
                while self.queues[s].front().is_some_and(|&h| !self.live(h)) {
                    self.queues[s].pop_front();
                }
                match self.queues[s].front() {
                    Some(&(next, _)) => self.start(next, s, t),
                    None => self.empty += 1,
                }
            }
        }
    }
}

/// What one replication measured, per batch.
struct Run {
    /// Completions per unit time per server.
    throughput: Vec<f64>,
    /// Time-average number of jobs in the system per server (finite system).
    jobs: Vec<f64>,
    /// Change of the number of jobs per server over the batch, per unit time (finite system).
    growth: Vec<f64>,
    /// Jobs per server at the end.
    final_jobs: f64,
    events: u64,
    stopped: bool,
}

/// One replication: the saturated system when `arrival_rate` is `None`, else the finite
/// system with Poisson arrivals at that total rate, from empty.
fn run(sys: &CopySystem, arrival_rate: Option<f64>, opts: &SimOptions, rng: &mut Rng) -> Run {
    let k = sys.servers() as f64;
    let mut sim = Sim::new(sys);
    let fill = |sim: &mut Sim, t: f64, rng: &mut Rng| {
        while sim.empty > 0 {
            sim.arrive(t, rng);
        }
    };
    if arrival_rate.is_none() {
        fill(&mut sim, 0.0, rng);
    }
    let mut next_arrival = arrival_rate.map_or(f64::INFINITY, |r| exp1(rng) / r);
    let batch_len = opts.time / opts.batches as f64;
    let mut out = Run { throughput: vec![], jobs: vec![], growth: vec![], final_jobs: 0.0, events: 0, stopped: false };
    let mut t = 0.0f64;
    for seg in 0..=opts.batches {
        let end = if seg == 0 { opts.warmup } else { opts.warmup + batch_len * seg as f64 };
        let jobs_at_start = sim.jobs;
        let (mut completions, mut integral) = (0u64, 0.0);
        loop {
            let tc = sim.next_completion();
            let tn = tc.min(next_arrival);
            if tn > end {
                break;
            }
            integral += sim.jobs as f64 * (tn - t);
            t = tn;
            if tc <= next_arrival {
                sim.complete(t);
                completions += 1;
                if arrival_rate.is_none() {
                    fill(&mut sim, t, rng);
                }
            } else {
                sim.arrive(t, rng);
                next_arrival = t + exp1(rng) / arrival_rate.unwrap_or(f64::INFINITY);
            }
            out.events += 1;
            if out.events % DEADLINE_CHECK_EVENTS == 0 && opts.deadline.expired() {
                out.stopped = true;
                return out;
            }
        }
        integral += sim.jobs as f64 * (end - t);
        t = end;
        if seg > 0 {
            out.throughput.push(completions as f64 / (batch_len * k));
            out.jobs.push(integral / (batch_len * k));
            out.growth.push((sim.jobs as f64 - jobs_at_start as f64) / (batch_len * k));
        }
    }
    out.final_jobs = sim.jobs as f64 / k;
    out
}

/// Runs the replications in parallel (replication `r` on the stream of `opts.seed` jumped `r`
/// times).
fn replications(sys: &CopySystem, arrival_rate: Option<f64>, opts: &SimOptions) -> (Vec<Run>, f64) {
    let started = Instant::now();
    let mut streams = Vec::with_capacity(opts.replications);
    let mut rng = Rng::seed_from_u64(opts.seed);
    for _ in 0..opts.replications {
        streams.push(rng.clone());
        rng.jump();
    }
    let runs = streams.into_par_iter().map(|mut rng| run(sys, arrival_rate, opts, &mut rng)).collect();
    (runs, started.elapsed().as_secs_f64())
}

fn pooled(runs: &[Run], field: impl Fn(&Run) -> &Vec<f64>) -> Estimate {
    let all: Vec<f64> = runs.iter().flat_map(|r| field(r).iter().copied()).collect();
    stats::mean_estimate(&all)
}

fn status(runs: &[Run], opts: &SimOptions) -> SimStatus {
    SimStatus::of(&opts.deadline, runs.iter().any(|r| r.stopped))
}

/// What [`saturated_general`] measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GeneralSaturatedReport {
    /// Copies per job.
    pub d: u32,
    /// Server speeds (`K` entries).
    pub speeds: Vec<f64>,
    /// The size law.
    pub size_law: String,
    /// Long-run job throughput per server (jobs per unit time per server), with its 95%
    /// interval from batch means: the stability threshold `lambda_max` on the arrival rate per
    /// server.
    pub throughput_per_server: Estimate,
    /// Completed or stopped by `opts.deadline` (then the estimate covers the batches
    /// finished, possibly none).
    pub status: SimStatus,
    /// Events (completions) over all replications, warm-ups included.
    pub events: u64,
    /// Wall-clock time, seconds.
    pub wall_seconds: f64,
}

/// The saturated system of identical copies under FCFS (module docs), simulated from the
/// rules: the job throughput per server with a 95% confidence interval. `opts.servers` must be
/// `K`; `opts.time` and `opts.warmup` are in units of time (sizes as given by the law).
///
/// # Errors
/// [`SimError::OutOfRange`] for invalid options, `opts.servers != K` (field `servers`) or a
/// `buffer` (the saturated system has no arrivals).
///
/// # Example
///
/// ```
/// use mfq_sim::saturated::general::{saturated_general, CopySize, CopySystem};
/// use mfq_sim::SimOptions;
/// // d = K = 3 with speeds 1, 0.5, 0.2: every server works on the head job, which leaves after
/// // X / 1 (deterministic X = 1): one job per unit time, 1/3 per server
/// let sys = CopySystem::new(3, vec![1.0, 0.5, 0.2], CopySize::Deterministic(1.0)).unwrap();
/// let opts = SimOptions { servers: 3, time: 100.0, warmup: 1.5, replications: 1, batches: 10, ..Default::default() };
/// let r = saturated_general(&sys, &opts).unwrap();
/// assert!((r.throughput_per_server.mean - 1.0 / 3.0).abs() < 1e-12);
/// ```
pub fn saturated_general(sys: &CopySystem, opts: &SimOptions) -> Result<GeneralSaturatedReport, SimError> {
    opts.validate()?;
    check_servers(sys, opts)?;
    if let Some(b) = opts.buffer {
        return Err(out_of_range("buffer", b, "none (the saturated system has no arrivals)"));
    }
    let (runs, wall_seconds) = replications(sys, None, opts);
    Ok(GeneralSaturatedReport {
        d: sys.d,
        speeds: sys.speeds.clone(),
        size_law: sys.size.label(),
        throughput_per_server: pooled(&runs, |r| &r.throughput),
        status: status(&runs, opts),
        events: runs.iter().map(|r| r.events).sum(),
        wall_seconds,
    })
}

fn check_servers(sys: &CopySystem, opts: &SimOptions) -> Result<(), SimError> {
    if opts.servers != sys.servers() {
        return Err(out_of_range(
            "servers",
            opts.servers,
            &format!("the number of servers of the system, K = {} (one per speed)", sys.servers()),
        ));
    }
    Ok(())
}

/// What [`finite_copies`] measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FiniteCopiesReport {
    /// Arrival rate per server.
    pub lambda: f64,
    /// Time-average number of jobs in the system per server (95% interval from batch means;
    /// meaningful only when stable).
    pub jobs_per_server: Estimate,
    /// Growth of the number of jobs per server per unit time: near 0 when stable, near
    /// `lambda - lambda_max` when not.
    pub growth_per_server: Estimate,
    /// Completions per unit time per server: near `lambda` when stable, near `lambda_max`
    /// (the saturated throughput) when not.
    pub throughput_per_server: Estimate,
    /// Jobs in the system per server at the end of the horizon, averaged over replications.
    pub final_jobs_per_server: f64,
    /// Completed or stopped by `opts.deadline`.
    pub status: SimStatus,
    /// Events (arrivals and completions) over all replications.
    pub events: u64,
    /// Wall-clock time, seconds.
    pub wall_seconds: f64,
}

/// The finite system of identical copies under FCFS (module docs) with Poisson arrivals at
/// `lambda` per server (total `lambda K`), from empty, simulated from the rules.
///
/// # Errors
/// [`SimError::OutOfRange`] for `lambda` not finite and `> 0` (field `model.lambda`), invalid
/// options, `opts.servers != K`, or a `buffer` (not modelled).
pub fn finite_copies(sys: &CopySystem, lambda: f64, opts: &SimOptions) -> Result<FiniteCopiesReport, SimError> {
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(out_of_range("model.lambda", lambda, "a finite number > 0"));
    }
    opts.validate()?;
    check_servers(sys, opts)?;
    if let Some(b) = opts.buffer {
        return Err(out_of_range("buffer", b, "none (identical copies are simulated with unlimited queues)"));
    }
    let (runs, wall_seconds) = replications(sys, Some(lambda * sys.servers() as f64), opts);
    Ok(FiniteCopiesReport {
        lambda,
        jobs_per_server: pooled(&runs, |r| &r.jobs),
        growth_per_server: pooled(&runs, |r| &r.growth),
        throughput_per_server: pooled(&runs, |r| &r.throughput),
        final_jobs_per_server: runs.iter().map(|r| r.final_jobs).sum::<f64>() / runs.len() as f64,
        status: status(&runs, opts),
        events: runs.iter().map(|r| r.events).sum(),
        wall_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mfq_model::models::phase_type::PhaseType;

    /// The sampler reproduces the mean and SCV of the law (H2 with SCV 9, Erlang-4).
    #[test]
    fn phase_type_samples_have_the_law_s_moments() {
        let mut rng = Rng::seed_from_u64(5);
        for ph in [PhaseType::h2_from_moments(1.0, 9.0, 0.5).unwrap(), PhaseType::erlang(4, 2.0).unwrap()] {
            let (mean, m2) = (ph.mean(), ph.second_moment());
            let size = CopySize::PhaseType(ph);
            let n = 400_000;
            let xs: Vec<f64> = (0..n).map(|_| sample(&size, &mut rng)).collect();
            let m = xs.iter().sum::<f64>() / n as f64;
            let s2 = xs.iter().map(|x| x * x).sum::<f64>() / n as f64;
            // standard error of the mean: sqrt(Var / n) <= sqrt(10 / 4e5) = 0.005
            assert!((m - mean).abs() < 0.02 * mean, "{}: mean {m} vs {mean}", size.label());
            assert!((s2 - m2).abs() < 0.1 * m2, "{}: E[X^2] {s2} vs {m2}", size.label());
        }
    }

    /// Unit speeds, K = d + 1: two jobs always in service, each completing X after it started
    /// (renewal): throughput 2 / (K E[X]) for any law.
    #[test]
    fn k_equals_d_plus_one_is_insensitive() {
        for size in [CopySize::Deterministic(1.0), CopySize::PhaseType(PhaseType::h2_from_moments(1.0, 9.0, 0.5).unwrap())] {
            let sys = CopySystem::homogeneous(2, 3, size.clone()).unwrap();
            let opts = SimOptions { servers: 3, time: 40_000.0, warmup: 100.0, replications: 2, batches: 20, ..Default::default() };
            let r = saturated_general(&sys, &opts).unwrap();
            let e = r.throughput_per_server;
            // one completion more or less per batch: 1 / (batch length K)
            assert!((e.mean - 2.0 / 3.0).abs() < 3.0 * e.half_width + 1.0 / (2000.0 * 3.0), "{}: {e:?}", size.label());
        }
    }
}
