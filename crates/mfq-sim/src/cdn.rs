//! Finite simulation of the caching system of kind `cdn-cache` (Mukhopadhyay, Hegde, Lelarge,
//! arXiv 1801.02889 (2018)), written from its rules, not from the mean field:
//!
//! - `m` servers; server `k` stores the `C` contents that the wrap-around placement puts at
//!   position `u = (k + 1/2) / m` (`mfq_model::models::cdn::placement::contents_at`), so
//!   content `i` is on `a_i m` servers up to rounding;
//! - requests arrive as a Poisson process of rate `lambda m`; each is for content `i` with
//!   probability `p_i`;
//! - [`Matching::Random`] sends it to a uniformly random server that stores `i` and has fewer
//!   than `U` requests in service, [`Matching::LeastLoaded`] to one with the fewest (lowest
//!   index first); with no such server the request is lost;
//! - a request holds its slot for a duration of mean 1 drawn from [`Durations`], independently.
//!
//! Measured in batches after a warm-up: accepted requests per server per unit time, the loss
//! probability (all requests and per content), with 95% batch-means intervals.

use crate::engine::{exp1, index, uniform, Rng};
use crate::out_of_range;
use crate::stats::{mean_estimate, ratio_estimate};
use crate::{Estimate, SimError};
use mfq_model::models::cdn::placement::{contents_at, placement_bound, ServerType};
use mfq_model::models::CdnParams;
use rand::SeedableRng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The law of a request's duration, mean 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Durations {
    /// Exponential(1).
    Exponential,
    /// Exactly 1.
    Deterministic,
    /// Two-phase hyperexponential with balanced means and squared coefficient of variation
    /// `scv >= 1`: phase 1 with probability `q = (1 + sqrt((scv - 1) / (scv + 1))) / 2` at rate
    /// `2 q`, else rate `2 (1 - q)`.
    HyperExponential {
        /// Squared coefficient of variation.
        scv: f64,
    },
}

impl Durations {
    fn draw(&self, rng: &mut Rng) -> f64 {
        match *self {
            Durations::Exponential => exp1(rng),
            Durations::Deterministic => 1.0,
            Durations::HyperExponential { scv } => {
                let q = 0.5 * (1.0 + ((scv - 1.0) / (scv + 1.0)).sqrt());
                let rate = if uniform(rng) < q { 2.0 * q } else { 2.0 * (1.0 - q) };
                exp1(rng) / rate
            }
        }
    }
}

/// Which free server storing the content gets a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matching {
    /// Uniformly random (the randomised matching of the mean field).
    Random,
    /// Fewest requests in service (ties: the first found).
    LeastLoaded,
}

/// How to simulate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CdnSimOptions {
    /// Servers `m`.
    pub servers: usize,
    /// Simulated time after the warm-up (mean request durations).
    pub time: f64,
    /// Warm-up, discarded.
    pub warmup: f64,
    /// Batches of the batch-means intervals (`>= 2`).
    pub batches: usize,
    /// Seed.
    pub seed: u64,
    /// Request durations.
    pub durations: Durations,
    /// Matching rule.
    pub matching: Matching,
}

/// What [`simulate_cdn`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct CdnSimReport {
    /// Accepted requests per server per unit time.
    pub throughput: Estimate,
    /// Fraction of requests lost.
    pub loss: Estimate,
    /// Fraction of content-`i` requests lost, `[i]`.
    pub loss_per_content: Vec<Estimate>,
    /// The LP bound of this finite placement (requests per server per unit time): no matching
    /// carries more in steady state.
    pub lp_bound: f64,
    /// Arrivals and departures simulated.
    pub events: u64,
}

/// Per-batch counters.
#[derive(Default, Clone)]
struct Counts {
    arrivals: Vec<f64>,
    lost: Vec<f64>,
    accepted: f64,
}

/// The state of the `m` servers.
struct Servers {
    u: u32,
    c: usize,
    /// `contents[k * c + s]`: the `s`-th content of server `k`.
    contents: Vec<u32>,
    busy: Vec<u32>,
    /// For content `i`, the servers storing it with a free slot.
    free: Vec<Vec<u32>>,
    /// `pos[k * c + s]`: index of server `k` in `free[contents[k * c + s]]`.
    pos: Vec<u32>,
}

impl Servers {
    fn new(params: &CdnParams, m: usize) -> Self {
        let c = params.memory;
        let mut contents = Vec::with_capacity(m * c);
        let mut set = Vec::with_capacity(c);
        let mut free = vec![Vec::new(); params.popularity.len()];
        let mut pos = Vec::with_capacity(m * c);
        for k in 0..m {
            contents_at(&params.replicas, c, (k as f64 + 0.5) / m as f64, &mut set);
            for &i in &set {
                contents.push(i as u32);
                pos.push(free[i].len() as u32);
                free[i].push(k as u32);
            }
        }
        Servers { u: params.bandwidth as u32, c, contents, busy: vec![0; m], free, pos }
    }

    /// The server types of this placement, with their fractions of the `m` servers.
    fn types(&self) -> Vec<ServerType> {
        let m = self.busy.len();
        let mut types: Vec<ServerType> = Vec::new();
        for k in 0..m {
            let set: Vec<usize> = self.contents[k * self.c..(k + 1) * self.c].iter().map(|&i| i as usize).collect();
            match types.iter_mut().find(|t| t.contents == set) {
                Some(t) => t.fraction += 1.0 / m as f64,
                None => types.push(ServerType { contents: set, fraction: 1.0 / m as f64 }),
            }
        }
        types
    }

    fn remove_free(&mut self, k: u32) {
        for s in 0..self.c {
            let slot = k as usize * self.c + s;
            let i = self.contents[slot] as usize;
            let at = self.pos[slot] as usize;
            let list = &mut self.free[i];
            let last = *list.last().expect("server is in the list");
            list.swap_remove(at);
            if last != k {
                // find the slot of `last` that holds content i
                let base = last as usize * self.c;
                let ls = (0..self.c).find(|&q| self.contents[base + q] as usize == i).expect("stores i");
                self.pos[base + ls] = at as u32;
            }
        }
    }

    fn add_free(&mut self, k: u32) {
        for s in 0..self.c {
            let slot = k as usize * self.c + s;
            let i = self.contents[slot] as usize;
            self.pos[slot] = self.free[i].len() as u32;
            self.free[i].push(k);
        }
    }

    /// Places a request for content `i`; `None` if lost.
    fn place(&mut self, i: usize, matching: Matching, rng: &mut Rng) -> Option<u32> {
        let list = &self.free[i];
        if list.is_empty() {
            return None;
        }
        let k = match matching {
            Matching::Random => list[index(rng, list.len() as u32) as usize],
            Matching::LeastLoaded => *list.iter().min_by_key(|&&k| self.busy[k as usize]).expect("non-empty"),
        };
        self.busy[k as usize] += 1;
        if self.busy[k as usize] == self.u {
            self.remove_free(k);
        }
        Some(k)
    }

    fn depart(&mut self, k: u32) {
        if self.busy[k as usize] == self.u {
            self.add_free(k);
        }
        self.busy[k as usize] -= 1;
    }
}

fn check(opts: &CdnSimOptions) -> Result<(), SimError> {
    if !(1..=1_000_000).contains(&opts.servers) {
        return Err(out_of_range("servers", opts.servers, "an integer in [1, 1000000]"));
    }
    if !(opts.time.is_finite() && opts.time > 0.0) {
        return Err(out_of_range("time", opts.time, "a finite number > 0"));
    }
    if !(opts.warmup.is_finite() && opts.warmup >= 0.0) {
        return Err(out_of_range("warmup", opts.warmup, "a finite number >= 0"));
    }
    if !(2..=100_000).contains(&opts.batches) {
        return Err(out_of_range("batches", opts.batches, "an integer in [2, 100000]"));
    }
    if let Durations::HyperExponential { scv } = opts.durations {
        if !(scv.is_finite() && scv >= 1.0) {
            return Err(out_of_range("durations.scv", scv, "a finite number >= 1 (hyperexponential)"));
        }
    }
    Ok(())
}

/// Simulates the caching system of `params` (see the module docs).
///
/// # Errors
/// [`SimError::OutOfRange`] naming `servers` (not in `[1, 1e6]`), `time`, `warmup`, `batches`
/// or `durations.scv`.
pub fn simulate_cdn(params: &CdnParams, opts: &CdnSimOptions) -> Result<CdnSimReport, SimError> {
    check(opts)?;
    let (m, n) = (opts.servers, params.popularity.len());
    let mut rng = Rng::seed_from_u64(opts.seed);
    let mut servers = Servers::new(params, m);
    let lp_bound = placement_bound(params.lambda, &params.popularity, params.bandwidth, &servers.types());
    let mut cumulative = Vec::with_capacity(n);
    let mut acc = 0.0;
    for p in &params.popularity {
        acc += p;
        cumulative.push(acc);
    }
    let total_rate = params.lambda * m as f64;
    let batch_len = opts.time / opts.batches as f64;
    let fresh = Counts { arrivals: vec![0.0; n], lost: vec![0.0; n], accepted: 0.0 };
    let mut batches: Vec<Counts> = Vec::with_capacity(opts.batches);
    let mut current = fresh.clone();
    let mut departures: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut events = 0u64;
    let mut next_arrival = exp1(&mut rng) / total_rate;
    // segment 0 is the warm-up (discarded), segments 1..=batches the batches
    let (mut seg, mut seg_end) = (0usize, opts.warmup);
    loop {
        let next_dep = departures.peek().map_or(f64::INFINITY, |Reverse((bits, _))| f64::from_bits(*bits));
        let next = next_arrival.min(next_dep);
        while next > seg_end && seg <= opts.batches {
            let done = std::mem::replace(&mut current, fresh.clone());
            if seg > 0 {
                batches.push(done);
            }
            seg += 1;
            seg_end = opts.warmup + batch_len * seg as f64;
        }
        if seg > opts.batches {
            break;
        }
        let t = next;
        events += 1;
        if next_arrival <= next_dep {
            let draw = uniform(&mut rng) * acc;
            let i = cumulative.partition_point(|&c| c <= draw).min(n - 1);
            current.arrivals[i] += 1.0;
            match servers.place(i, opts.matching, &mut rng) {
                Some(k) => {
                    current.accepted += 1.0;
                    let done = t + opts.durations.draw(&mut rng);
                    departures.push(Reverse((done.to_bits(), k)));
                }
                None => current.lost[i] += 1.0,
            }
            next_arrival = t + exp1(&mut rng) / total_rate;
        } else {
            let Reverse((_, k)) = departures.pop().expect("a departure is due");
            servers.depart(k);
        }
    }
    Ok(report(&batches, m, batch_len, lp_bound, events, n))
}

fn report(batches: &[Counts], m: usize, batch_len: f64, lp_bound: f64, events: u64, n: usize) -> CdnSimReport {
    let thr: Vec<f64> = batches.iter().map(|b| b.accepted / (m as f64 * batch_len)).collect();
    let lost: Vec<f64> = batches.iter().map(|b| b.lost.iter().sum()).collect();
    let arrivals: Vec<f64> = batches.iter().map(|b| b.arrivals.iter().sum()).collect();
    let loss_per_content = (0..n)
        .map(|i| {
            let l: Vec<f64> = batches.iter().map(|b| b.lost[i]).collect();
            let a: Vec<f64> = batches.iter().map(|b| b.arrivals[i]).collect();
            ratio_estimate(&l, &a)
        })
        .collect();
    CdnSimReport { throughput: mean_estimate(&thr), loss: ratio_estimate(&lost, &arrivals), loss_per_content, lp_bound, events }
}
