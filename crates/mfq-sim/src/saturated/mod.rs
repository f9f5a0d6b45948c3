//! The saturated system of redundancy-d with identical copies under FCFS, and the stability
//! threshold it gives for a finite number of servers.
//!
//! # The system
//!
//! `K` unit-rate servers and an infinite backlog of jobs in arrival order. Each job has copies
//! on `d` distinct servers chosen uniformly at random, independently of the other jobs. Each
//! server serves the oldest job that has a copy there. All copies of a job have the same
//! exponential(1) size, so a job that is in service at one or more servers completes at rate 1
//! (parallel service of identical copies gains nothing); then all its copies leave. `lbar` is
//! the long-run mean number of distinct jobs in service, which is also the long-run
//! throughput (jobs per unit time).
//!
//! Redundancy-d with identical exponential copies, FCFS, `K` servers and Poisson arrivals at
//! total rate `lambda K` is stable iff `lambda < lbar / K` (Anton, Ayesta, Jonckheere and
//! Verloop, "On the stability of redundancy models", Oper. Res. 69(5), 2021). As
//! `K -> infinity`, `lbar / K` tends to the Red_id(d) `lambda_max` of Hellemans and Van Houdt
//! ([`mfq_model::models::redundancy::red_id_lambda_max`]: 0.81669 for `d = 2`, 2/3 for `d = 3`).
//!
//! # What is computed
//!
//! - [`simulate_saturated`]: a seeded simulation, `lbar / K` with a 95% confidence interval
//!   (batch means, as [`crate::simulate`]). The backlog is revealed lazily: only as many jobs
//!   as it takes for every server to hold a copy.
//! - [`saturated_exact`]: `lbar / K` from the stationary distribution of the saturated system
//!   as a Markov chain, for `K <= 6`. The chain is infinite (the number of waiting jobs
//!   between two jobs in service is unbounded) and is truncated; with `K = d + 2` it converges
//!   fast (`d = 2, K = 4`: 0.7193692, `d = 3, K = 5`: 0.5477180, errors below 3e-6); with
//!   `K >= d + 3` the state space grows like `cap^3` or faster and the simulation is the
//!   practical route. The state, its transitions and the truncation: [`exact`].
//! - [`closed_form_threshold`]: `d = 1` gives `lbar = K`; `K = d` gives `lbar = 1`;
//!   `K = d + 1` gives `lbar = 2` (the oldest job holds `d` servers, and the first later job
//!   with a copy on the remaining server is in service there).
//! - [`identical_fcfs_stability`]: the verdict for a finite `K` and a given `lambda`.
//!
//! The derivation and the comparison with an earlier independent simulation (its values are
//! recorded in `docs/references.md`) are in `docs/models/redundancy.md` ("Stability") and
//! `docs/simulation.md`.

pub mod exact;
pub mod general;

pub use exact::{saturated_exact, SaturatedExact};

use crate::engine::{index, Rng};
use crate::stats::{self, Estimate};
use crate::{out_of_range, SimError, SimOptions};
use mfq_model::Stability;
use rand::SeedableRng;
use rayon::prelude::*;
use serde::Serialize;
use std::time::Instant;

/// Largest number of servers [`simulate_saturated`] accepts (memory: a few words per server and
/// per revealed job; measured for `d = 2`: at most 280 revealed jobs at `K = 20`, 3700 at
/// `K = 200`, growing a little faster than `K`).
pub const MAX_SERVERS: usize = 100_000;
/// Largest number of copies per job accepted by [`simulate_saturated`] and
/// [`identical_fcfs_stability`].
pub const MAX_COPIES: u32 = 1000;

/// Checks `d` and `K` (`servers`) for the saturated system.
fn check_sizes(d: u32, servers: usize, max_servers: usize) -> Result<(), SimError> {
    if !(1..=MAX_COPIES).contains(&d) {
        return Err(out_of_range("d", d, &format!("an integer in [1, {MAX_COPIES}]")));
    }
    if servers < d as usize || servers > max_servers {
        return Err(out_of_range(
            "servers",
            servers,
            &format!("an integer in [d, {max_servers}] = [{d}, {max_servers}] (the d copies of a job go to distinct servers)"),
        ));
    }
    Ok(())
}

/// Checks on the confidence interval of [`SaturatedReport::throughput_per_server`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SaturatedDiagnostics {
    /// Lag-1 autocorrelation of consecutive batch means within replications (near zero when
    /// batches are long enough; clearly positive, say > 0.2, means the interval is too narrow).
    pub batch_lag1_autocorrelation: f64,
    /// 95% half width of `lbar / K` from the replication means alone (`NaN` for one
    /// replication); it should be of the same size as the pooled half width.
    pub replication_half_width: f64,
    /// Largest number of revealed jobs held at once (in service plus waiting behind them).
    pub max_revealed_jobs: usize,
}

/// What [`simulate_saturated`] measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SaturatedReport {
    /// Copies per job.
    pub d: u32,
    /// The options used (`servers` is `K`; `time` and `warmup` in mean job sizes).
    pub options: SimOptions,
    /// `lbar / K`: long-run mean number of jobs in service (= job throughput) per server,
    /// with its 95% confidence interval. The stability threshold on `lambda`.
    pub throughput_per_server: Estimate,
    /// `lbar`: long-run mean number of distinct jobs in service (jobs per unit time), the
    /// estimate above times `K`.
    pub mean_in_service: Estimate,
    /// Events (job completions) over all replications, warm-ups included.
    pub events: u64,
    /// Wall-clock time of the call, in seconds.
    pub wall_seconds: f64,
    /// `events / wall_seconds`, summed over the threads that ran replications in parallel.
    pub events_per_second: f64,
    /// Checks on the interval.
    pub diagnostics: SaturatedDiagnostics,
}

/// Simulates the saturated system with `K = opts.servers` servers and `d` copies per job and
/// estimates `lbar / K` with a 95% confidence interval.
///
/// The event loop picks the next completion uniformly among the `m` jobs in service and
/// advances the clock by `1/m`, the *mean* holding time of the state (the continuous-time
/// chain and its jump chain with mean holding times have the same time averages; dropping the
/// exponential holding-time noise narrows the interval). Each replication starts from a
/// freshly revealed backlog, discards `opts.warmup` time units, then splits `opts.time` into
/// `opts.batches` batches; the estimate pools the batch means of `m / K` of all replications
/// (Student-t interval, as [`crate::simulate`]). Replication `r` uses the stream of
/// `opts.seed` jumped `r` times, so the report does not depend on the number of threads.
/// About `lbar = 0.6 K .. 0.8 K` events happen per time unit.
///
/// Per event: O(d) list updates (each server keeps the copies of the revealed jobs in arrival
/// order, doubly linked through a slab), plus the revealing of new jobs while a server has no
/// copy; no allocation once the slab has grown to its largest size.
///
/// # Errors
/// [`SimError::OutOfRange`] naming the first offending value: an option outside its range
/// ([`SimOptions::validate`]), `d` outside `[1, 1000]`, `servers` outside `[d, 100000]`,
/// `buffer` set (the saturated system has no arrivals).
///
/// # Example
///
/// ```
/// use mfq_sim::{saturated::simulate_saturated, SimOptions};
/// let opts = SimOptions { servers: 3, time: 2000.0, warmup: 10.0, replications: 2, batches: 10, ..Default::default() };
/// let r = simulate_saturated(2, &opts).unwrap();
/// // K = d + 1: exactly two jobs are always in service, lbar / K = 2/3
/// assert!((r.throughput_per_server.mean - 2.0 / 3.0).abs() < 1e-12);
/// ```
pub fn simulate_saturated(d: u32, opts: &SimOptions) -> Result<SaturatedReport, SimError> {
    opts.validate()?;
    check_sizes(d, opts.servers, MAX_SERVERS)?;
    if let Some(b) = opts.buffer {
        return Err(out_of_range("buffer", b, "none (the saturated system has no arrivals)"));
    }
    let started = Instant::now();
    let k = opts.servers as u32;
    let bar = crate::progress_bar(opts);
    let tick = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let mut streams = Vec::with_capacity(opts.replications);
    let mut rng = Rng::seed_from_u64(opts.seed);
    for _ in 0..opts.replications {
        streams.push(rng.clone());
        rng.jump();
    }
    let reps: Vec<Run> = streams
        .into_par_iter()
        .map(|mut rng| {
            let mut sys = Saturated::new(k, d);
            sys.fill(&mut rng);
            sys.run(opts, &mut rng, &tick)
        })
        .collect();
    if let Some(b) = &bar {
        b.finish_and_clear();
    }

    let by_rep: Vec<Vec<f64>> = reps.iter().map(|r| r.batch_means.iter().map(|m| m / k as f64).collect()).collect();
    let all: Vec<f64> = by_rep.iter().flatten().copied().collect();
    let est = stats::mean_estimate(&all);
    let rep_means: Vec<f64> = by_rep.iter().map(|v| v.iter().sum::<f64>() / v.len() as f64).collect();
    let events: u64 = reps.iter().map(|r| r.events).sum();
    let wall_seconds = started.elapsed().as_secs_f64();
    Ok(SaturatedReport {
        d,
        options: opts.clone(),
        throughput_per_server: est,
        mean_in_service: Estimate { mean: est.mean * k as f64, half_width: est.half_width * k as f64, n: est.n },
        events,
        wall_seconds,
        events_per_second: events as f64 / wall_seconds.max(1e-12),
        diagnostics: SaturatedDiagnostics {
            batch_lag1_autocorrelation: stats::lag1_autocorrelation(&by_rep),
            replication_half_width: if rep_means.len() >= 2 { stats::mean_estimate(&rep_means).half_width } else { f64::NAN },
            max_revealed_jobs: reps.iter().map(|r| r.max_revealed).max().unwrap_or(0),
        },
    })
}

/// The stability threshold `lbar / K` used by [`identical_fcfs_stability`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "method", rename_all = "kebab-case")]
pub enum Threshold {
    /// From a closed form (`d = 1`, `K = d`, `K = d + 1`) or the exact Markov chain
    /// ([`saturated_exact`]); `truncation_error` is that of [`SaturatedExact`] (0 for a
    /// closed form).
    Exact {
        /// `lbar / K`.
        value: f64,
        /// Estimated truncation error of `value`.
        truncation_error: f64,
    },
    /// From [`simulate_saturated`].
    Simulated {
        /// `lbar / K` with its 95% interval.
        estimate: Estimate,
    },
}

/// The stability verdict of redundancy-d with identical exponential copies under FCFS on `K`
/// servers at arrival rate `lambda` per server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FiniteStability {
    /// Arrival rate per server.
    pub lambda: f64,
    /// Copies per job.
    pub d: u32,
    /// Number of servers `K`.
    pub servers: usize,
    /// `lbar / K` of the saturated system and how it was obtained.
    pub threshold: Threshold,
    /// `Stable` if `lambda` is below the threshold (below the lower end of its interval when
    /// simulated), `Unstable` if it is at or above it (above the upper end), `Unknown` if it
    /// lies inside the simulated interval.
    pub verdict: Stability,
}

/// The closed forms of `lbar / K`: `d = 1` (every job alone on one server: `lbar = K`),
/// `K = d` (`lbar = 1`), `K = d + 1` (`lbar = 2`).
pub fn closed_form_threshold(d: u32, servers: usize) -> Option<f64> {
    let k = servers as f64;
    if d == 1 {
        Some(1.0)
    } else if servers == d as usize {
        Some(1.0 / k)
    } else if servers == d as usize + 1 {
        Some(2.0 / k)
    } else {
        None
    }
}

/// Stability of redundancy-d with identical exponential copies under FCFS with a **finite**
/// number `K = opts.servers` of servers at arrival rate `lambda` per server: stable iff
/// `lambda < lbar / K` of the saturated system (Anton, Ayesta, Jonckheere, Verloop 2021).
///
/// The threshold comes from a closed form when there is one ([`closed_form_threshold`]), else
/// from the exact chain ([`saturated_exact`], phase cap 64, 1-2 s) when `K = d + 2 <= 6`,
/// else from [`simulate_saturated`] with `opts` (then a `lambda` inside the 95% interval gets
/// `Stability::Unknown`). For
/// `K -> infinity` the threshold tends to `red_id_lambda_max(d)`, the verdict of
/// `mfq_model::models::redundancy::identical_stability`; at finite `K` it is lower (0.71936
/// at `d = 2`, `K = 4`, against 0.81669), so `lambda` between the two is stable for large
/// systems but not for `K` servers.
///
/// # Errors
/// [`SimError::OutOfRange`] for `lambda` not finite or `<= 0` (field `model.lambda`), `d` or
/// `servers` out of range (as [`simulate_saturated`]) or invalid options.
///
/// # Example
///
/// ```
/// use mfq_model::Stability;
/// use mfq_sim::{saturated::identical_fcfs_stability, SimOptions};
/// // d = 2, K = 4: lbar / K = 0.71937 (exact chain), below the N -> inf lambda_max 0.81669
/// let opts = SimOptions { servers: 4, ..Default::default() };
/// let v = identical_fcfs_stability(0.75, 2, &opts).unwrap();
/// assert!(matches!(v.verdict, Stability::Unstable { .. }));
/// let v = identical_fcfs_stability(0.7, 2, &opts).unwrap();
/// assert!(matches!(v.verdict, Stability::Stable { .. }));
/// ```
pub fn identical_fcfs_stability(lambda: f64, d: u32, opts: &SimOptions) -> Result<FiniteStability, SimError> {
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(out_of_range("model.lambda", lambda, "a finite number > 0"));
    }
    opts.validate()?;
    check_sizes(d, opts.servers, MAX_SERVERS)?;
    let k = opts.servers;
    let threshold = if let Some(value) = closed_form_threshold(d, k) {
        Threshold::Exact { value, truncation_error: 0.0 }
    } else if k == d as usize + 2 && k <= exact::MAX_EXACT_SERVERS {
        let e = saturated_exact(d, k, exact::DEFAULT_PHASE_CAP)?;
        Threshold::Exact { value: e.throughput_per_server, truncation_error: e.truncation_error }
    } else {
        Threshold::Simulated { estimate: simulate_saturated(d, opts)?.throughput_per_server }
    };
    let source = "Anton, Ayesta, Jonckheere and Verloop 2021: stable iff lambda < lbar/K of the saturated system";
    let verdict = match threshold {
        Threshold::Exact { value, .. } if lambda < value => {
            Stability::Stable { condition: format!("lambda < lbar/K = {value:.6} (identical copies, FCFS, K = {k}, exact; {source})") }
        }
        Threshold::Exact { value, .. } => Stability::Unstable {
            reason: format!("lambda = {lambda} >= lbar/K = {value:.6} (identical copies, FCFS, K = {k}, exact; {source})"),
        },
        Threshold::Simulated { estimate: e } => {
            let (lo, hi) = (e.mean - e.half_width, e.mean + e.half_width);
            let what =
                format!("lbar/K = {:.5} +- {:.5} (identical copies, FCFS, K = {k}, simulated, 95% CI; {source})", e.mean, e.half_width);
            if lambda < lo {
                Stability::Stable { condition: format!("lambda < {what}") }
            } else if lambda >= hi {
                Stability::Unstable { reason: format!("lambda = {lambda} >= {what}") }
            } else {
                Stability::Unknown { note: format!("lambda = {lambda} lies inside the interval of {what}: simulate longer to decide") }
            }
        }
    };
    Ok(FiniteStability { lambda, d, servers: k, threshold, verdict })
}

// ------------------------------------------------------------------------------------------
// the simulation
// ------------------------------------------------------------------------------------------

const NIL: u32 = u32::MAX;

/// What one replication returns.
struct Run {
    /// Time average of the number of jobs in service, per batch.
    batch_means: Vec<f64>,
    /// Events, warm-up included.
    events: u64,
    max_revealed: usize,
}

/// The revealed part of the backlog: every job that has been drawn and has not completed, with
/// its copies in per-server lists in arrival order.
///
/// Copy slot `c` belongs to job `c / d` and sits at server `server[c]` between `prev[c]` and
/// `next[c]`; `prev[c] = NIL` means the copy heads its server's list (it is being served).
/// `heads[j]` counts the servers job `j` heads: it is in service iff `heads[j] > 0`. The jobs in
/// service are listed in `in_service` (`slot[j]` = index there, `NIL` if not in service), so a
/// uniformly random one is one index draw.
struct Saturated {
    k: u32,
    d: u32,
    server: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    heads: Vec<u32>,
    slot: Vec<u32>,
    free: Vec<u32>,
    head: Vec<u32>,
    tail: Vec<u32>,
    /// Servers without any copy.
    empty: u32,
    in_service: Vec<u32>,
    /// Scratch for drawing `d` distinct servers.
    chosen: Vec<u32>,
    /// Arrival number of each job (for the invariant checks).
    born: Vec<u64>,
    arrivals: u64,
    revealed: usize,
    max_revealed: usize,
}

impl Saturated {
    fn new(k: u32, d: u32) -> Self {
        Saturated {
            k,
            d,
            server: Vec::new(),
            prev: Vec::new(),
            next: Vec::new(),
            heads: Vec::new(),
            slot: Vec::new(),
            free: Vec::new(),
            head: vec![NIL; k as usize],
            tail: vec![NIL; k as usize],
            empty: k,
            in_service: Vec::with_capacity(k as usize),
            chosen: vec![0; d as usize],
            born: Vec::new(),
            arrivals: 0,
            revealed: 0,
            max_revealed: 0,
        }
    }

    fn alloc_job(&mut self) -> u32 {
        if let Some(j) = self.free.pop() {
            return j;
        }
        let j = self.heads.len() as u32;
        let n = self.d as usize;
        self.server.extend(std::iter::repeat_n(NIL, n));
        self.prev.extend(std::iter::repeat_n(NIL, n));
        self.next.extend(std::iter::repeat_n(NIL, n));
        self.heads.push(0);
        self.slot.push(NIL);
        self.born.push(0);
        j
    }

    /// `d` distinct servers uniformly at random (Floyd's algorithm: exactly `d` draws).
    fn draw_servers(&mut self, rng: &mut Rng) {
        let (k, d) = (self.k, self.d);
        for (n, top) in ((k - d)..k).enumerate() {
            let t = index(rng, top + 1);
            self.chosen[n] = if self.chosen[..n].contains(&t) { top } else { t };
        }
    }

    /// Reveals the next job of the backlog: copies appended to the tails of its servers.
    fn reveal(&mut self, rng: &mut Rng) {
        self.draw_servers(rng);
        let j = self.alloc_job();
        self.born[j as usize] = self.arrivals;
        self.arrivals += 1;
        for i in 0..self.d as usize {
            let s = self.chosen[i] as usize;
            let c = j as usize * self.d as usize + i;
            self.server[c] = s as u32;
            self.next[c] = NIL;
            let t = self.tail[s];
            self.prev[c] = t;
            if t == NIL {
                self.head[s] = c as u32;
                self.empty -= 1;
                self.heads[j as usize] += 1;
            } else {
                self.next[t as usize] = c as u32;
            }
            self.tail[s] = c as u32;
        }
        if self.heads[j as usize] > 0 {
            self.slot[j as usize] = self.in_service.len() as u32;
            self.in_service.push(j);
        }
        self.revealed += 1;
        self.max_revealed = self.max_revealed.max(self.revealed);
    }

    /// Reveals jobs until every server holds a copy.
    fn fill(&mut self, rng: &mut Rng) {
        while self.empty > 0 {
            self.reveal(rng);
        }
    }

    /// Job `j` (in service) completes: its copies leave every list; the next copy at each
    /// server it headed starts service.
    fn complete(&mut self, j: u32, rng: &mut Rng) {
        let d = self.d as usize;
        for i in 0..d {
            let c = j as usize * d + i;
            let s = self.server[c] as usize;
            let (p, n) = (self.prev[c], self.next[c]);
            if p == NIL {
                self.head[s] = n;
                if n == NIL {
                    self.tail[s] = NIL;
                    self.empty += 1;
                } else {
                    self.prev[n as usize] = NIL;
                    let o = n as usize / d;
                    self.heads[o] += 1;
                    if self.heads[o] == 1 {
                        self.slot[o] = self.in_service.len() as u32;
                        self.in_service.push(o as u32);
                    }
                }
            } else {
                self.next[p as usize] = n;
                if n == NIL {
                    self.tail[s] = p;
                } else {
                    self.prev[n as usize] = p;
                }
            }
        }
        // swap-remove j from the jobs in service
        let i = self.slot[j as usize] as usize;
        let last = *self.in_service.last().expect("j is in service");
        self.in_service.swap_remove(i);
        if last != j {
            self.slot[last as usize] = i as u32;
        }
        self.slot[j as usize] = NIL;
        self.heads[j as usize] = 0;
        self.free.push(j);
        self.revealed -= 1;
        self.fill(rng);
    }

    /// Warm-up and batches; the clock advances by `1/m` per event (mean holding time).
    fn run(&mut self, opts: &SimOptions, rng: &mut Rng, tick: &(dyn Fn() + Sync)) -> Run {
        let batch_len = opts.time / opts.batches as f64;
        let mut batch_means = Vec::with_capacity(opts.batches);
        let mut events = 0u64;
        let mut t = 0.0f64;
        let mut m = self.in_service.len();
        let mut t_next = 1.0 / m as f64;
        for seg in 0..=opts.batches {
            let end = if seg == 0 { opts.warmup } else { opts.warmup + batch_len * seg as f64 };
            let start = t;
            let mut integral = 0.0;
            while t_next <= end {
                integral += m as f64 * (t_next - t);
                t = t_next;
                let j = self.in_service[index(rng, m as u32) as usize];
                self.complete(j, rng);
                events += 1;
                m = self.in_service.len();
                t_next = t + 1.0 / m as f64;
            }
            integral += m as f64 * (end - t);
            t = end;
            if seg > 0 {
                batch_means.push(integral / (end - start));
            }
            tick();
        }
        Run { batch_means, events, max_revealed: self.max_revealed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every invariant of the lists: each server's list is linked both ways and in arrival
    /// order, no server is without a copy, `heads` and the set in service match the heads of
    /// the lists, and the lists hold `d` copies per revealed job.
    fn check_invariants(s: &Saturated) {
        let d = s.d as usize;
        let mut in_service = 0;
        let mut copies = 0;
        for srv in 0..s.k as usize {
            let mut c = s.head[srv];
            let mut prev = NIL;
            assert_ne!(c, NIL, "server {srv} has no copy");
            while c != NIL {
                assert_eq!(s.server[c as usize] as usize, srv);
                assert_eq!(s.prev[c as usize], prev);
                if prev != NIL {
                    assert!(s.born[prev as usize / d] < s.born[c as usize / d], "server {srv} is not in arrival order");
                }
                prev = c;
                c = s.next[c as usize];
                copies += 1;
            }
            assert_eq!(s.tail[srv], prev);
        }
        let jobs = s.heads.len();
        for j in 0..jobs {
            if s.free.contains(&(j as u32)) {
                continue;
            }
            let h = (0..d).filter(|&i| s.prev[j * d + i] == NIL).count() as u32;
            assert_eq!(h, s.heads[j]);
            assert_eq!(h > 0, s.slot[j] != NIL);
            if h > 0 {
                in_service += 1;
                assert_eq!(s.in_service[s.slot[j] as usize], j as u32);
            }
        }
        assert_eq!(in_service, s.in_service.len());
        assert_eq!(s.empty, 0);
        assert_eq!(copies, s.revealed * d);
    }

    #[test]
    fn lists_stay_consistent_through_random_completions() {
        for (k, d) in [(4u32, 2u32), (7, 3), (20, 2), (5, 5), (6, 1)] {
            let mut rng = Rng::seed_from_u64(7);
            let mut s = Saturated::new(k, d);
            s.fill(&mut rng);
            for _ in 0..2000 {
                check_invariants(&s);
                let m = s.in_service.len() as u32;
                assert!(m >= 1 && m <= k.min(k - d + 1));
                let j = s.in_service[index(&mut rng, m) as usize];
                s.complete(j, &mut rng);
            }
        }
    }

    #[test]
    fn floyd_draws_distinct_uniform_servers() {
        // all C(5,2) = 10 pairs equally likely: 100000 draws, counts within 5 sd of 10000
        let mut rng = Rng::seed_from_u64(3);
        let mut s = Saturated::new(5, 2);
        let mut count = [0u32; 32];
        for _ in 0..100_000 {
            s.draw_servers(&mut rng);
            assert_ne!(s.chosen[0], s.chosen[1]);
            count[(1 << s.chosen[0]) | (1 << s.chosen[1])] += 1;
        }
        let used: Vec<u32> = count.iter().copied().filter(|&c| c > 0).collect();
        assert_eq!(used.len(), 10);
        // binomial sd = sqrt(1e5 * 0.1 * 0.9) = 94.9
        assert!(used.iter().all(|&c| (c as f64 - 10_000.0).abs() < 5.0 * 94.9), "{used:?}");
    }
}
