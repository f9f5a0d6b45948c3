//! Mini-slot simulation of the asynchronous multi-packet-reception MAC (kind `mpr-mac`), written
//! from the protocol's rules (docs/models/mpr-mac.md), not from the fixed point:
//!
//! - `n` saturated nodes, each with a backoff stage `j` and a counter. At the start of every
//!   mini-slot each node not transmitting senses the number `C` of ongoing transmissions, with
//!   an error of `-1` or `+1` with probability `eps / 2` each (drawn per node and mini-slot). If
//!   its estimate is below the threshold `K`, its counter runs: it transmits in this mini-slot
//!   if the counter is 0, else decrements it.
//! - The packets that start in one mini-slot form a cohort; a cohort ends at the end of a
//!   mini-slot with probability `1 / T` (geometric airtime of mean `T`, the model's rule) or
//!   after exactly `round(T)` mini-slots (`fixed_airtime`: the sensitivity to the airtime law).
//! - Whenever the number of ongoing transmissions exceeds `M` (after the starts of a mini-slot),
//!   every ongoing packet is lost. At its end a packet not lost succeeds: its node takes the next
//!   packet at stage 0; a lost packet moves to stage `j + 1`, or is dropped after `R + 1` failed
//!   attempts (the next packet starts at stage 0). The new counter is uniform on
//!   `{0, ..., 2^min(j, m) W - 1}`.
//!
//! Measured per batch of mini-slots: successes, attempts and failed attempts, drops, and the
//! head-of-line times of the packets completed (success or drop). Each replication starts with
//! every node at stage 0 and an idle channel; a warm-up is discarded.

use crate::engine::Rng;
use crate::stats::{mean_estimate, ratio_estimate};
use crate::Estimate;
use mfq_model::models::mpr_mac::MacParams;
use mfq_model::ModelError;
use rand::Rng as _;
use rayon::prelude::*;

/// Run lengths of [`simulate_mac`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MacSimOptions {
    /// Mini-slots per replication after the warm-up (`>= batches`).
    pub slots: u64,
    /// Warm-up mini-slots discarded.
    pub warmup: u64,
    /// Batches per replication (`>= 2`).
    pub batches: usize,
    /// Independent replications (`>= 1`), run in parallel.
    pub replications: usize,
    /// Seed of the random streams: replication `r` runs on the xoshiro256++ stream of `seed`
    /// advanced by `r` jumps of `2^128` steps (as every simulator here), so no two replications,
    /// and no replication of neighbouring seeds, share random numbers.
    pub seed: u64,
    /// Airtime of exactly `round(T)` mini-slots instead of geometric of mean `T`.
    pub fixed_airtime: bool,
}

impl Default for MacSimOptions {
    fn default() -> Self {
        MacSimOptions { slots: 1_000_000, warmup: 20_000, batches: 20, replications: 4, seed: 1, fixed_airtime: false }
    }
}

/// Estimates with 95% batch-means intervals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MacSimReport {
    /// Successful packets per mean airtime `T` (the fixed point's `S`).
    pub throughput: Estimate,
    /// Fraction of attempts that fail (the fixed point's `gamma`).
    pub failure_probability: Estimate,
    /// Fraction of completed packets dropped.
    pub drop_probability: Estimate,
    /// Mean head-of-line time of completed packets, mini-slots.
    pub hol_delay: Estimate,
    /// Attempts per node per mini-slot.
    pub attempt_rate: Estimate,
}

/// Per-batch counts.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    successes: f64,
    attempts: f64,
    failures: f64,
    drops: f64,
    completed: f64,
    hol_sum: f64,
}

/// A cohort: packets started in one mini-slot.
#[derive(Debug, Clone, Copy)]
struct Cohort {
    id: u32,
    size: u32,
    lost: bool,
    age: u32,
}

/// Simulates the protocol at `p`.
///
/// # Errors
/// As [`MacParams::validate`]; [`ModelError::OutOfRange`] naming `slots`, `batches` or
/// `replications` when they are too small.
pub fn simulate_mac(p: &MacParams, opts: &MacSimOptions) -> Result<MacSimReport, ModelError> {
    p.validate()?;
    if opts.batches < 2 {
        return Err(mfq_model::out_of_range("batches", opts.batches, "an integer >= 2"));
    }
    if opts.slots < opts.batches as u64 {
        return Err(mfq_model::out_of_range("slots", opts.slots, "an integer >= batches"));
    }
    if opts.replications == 0 {
        return Err(mfq_model::out_of_range("replications", 0, "an integer >= 1"));
    }
    let runs: Vec<Vec<Counts>> =
        (0..opts.replications).into_par_iter().map(|r| replication(p, opts, crate::stream(opts.seed, r))).collect();
    let all: Vec<Counts> = runs.into_iter().flatten().collect();
    let batch_slots = (opts.slots / opts.batches as u64) as f64;
    let col = |f: &dyn Fn(&Counts) -> f64| all.iter().map(f).collect::<Vec<f64>>();
    let n = p.nodes as f64;
    Ok(MacSimReport {
        throughput: mean_estimate(&col(&|c| c.successes * p.airtime / batch_slots)),
        failure_probability: ratio_estimate(&col(&|c| c.failures), &col(&|c| c.attempts)),
        drop_probability: ratio_estimate(&col(&|c| c.drops), &col(&|c| c.completed)),
        hol_delay: ratio_estimate(&col(&|c| c.hol_sum), &col(&|c| c.completed)),
        attempt_rate: mean_estimate(&col(&|c| c.attempts / (n * batch_slots))),
    })
}

/// One replication: the batch counts after the warm-up.
fn replication(p: &MacParams, opts: &MacSimOptions, mut rng: Rng) -> Vec<Counts> {
    let n = p.nodes;
    let b = p.backoff;
    let window = |j: usize| (b.window as u64) << j.min(b.stages);
    let fixed_len = p.airtime.round().max(1.0) as u32;
    let pe = 1.0 / p.airtime;
    // per node: stage, counter, cohort id (u32::MAX: not transmitting), head-of-line start
    let mut stage = vec![0usize; n];
    let mut counter: Vec<u64> = (0..n).map(|_| rng.random_range(0..window(0))).collect();
    let mut cohort_of = vec![u32::MAX; n];
    let mut hol_start = vec![0u64; n];
    let mut cohorts: Vec<Cohort> = Vec::with_capacity(16);
    let mut ended: Vec<(u32, bool)> = Vec::with_capacity(16);
    let (mut ongoing, mut next_id) = (0u32, 0u32);
    let per_batch = opts.slots / opts.batches as u64;
    let total = opts.warmup + per_batch * opts.batches as u64;
    let mut out = Vec::with_capacity(opts.batches);
    let mut cur = Counts::default();
    let (k, m, eps) = (p.threshold as i64, p.mpr as u32, p.sensing_error);
    for slot in 0..total {
        if slot == opts.warmup {
            cur = Counts::default();
        } else if slot > opts.warmup && (slot - opts.warmup) % per_batch == 0 {
            out.push(std::mem::take(&mut cur));
        }
        // starts
        let mut started = 0u32;
        for i in 0..n {
            if cohort_of[i] != u32::MAX {
                continue;
            }
            let mut estimate = ongoing as i64;
            if eps > 0.0 {
                let u: f64 = rng.random();
                if u < eps / 2.0 {
                    estimate -= 1;
                } else if u < eps {
                    estimate += 1;
                }
            }
            if estimate >= k {
                continue;
            }
            if counter[i] == 0 {
                cohort_of[i] = next_id;
                started += 1;
            } else {
                counter[i] -= 1;
            }
        }
        if started > 0 {
            cohorts.push(Cohort { id: next_id, size: started, lost: false, age: 0 });
            next_id = next_id.wrapping_add(1);
            ongoing += started;
            cur.attempts += started as f64;
        }
        if ongoing > m {
            cohorts.iter_mut().for_each(|c| c.lost = true);
        }
        // ends
        ended.clear();
        cohorts.retain_mut(|c| {
            c.age += 1;
            let ends = if opts.fixed_airtime { c.age >= fixed_len } else { rng.random::<f64>() < pe };
            if ends {
                ended.push((c.id, c.lost));
                ongoing -= c.size;
            }
            !ends
        });
        if ended.is_empty() {
            continue;
        }
        for i in 0..n {
            let Some(&(_, lost)) = ended.iter().find(|e| e.0 == cohort_of[i]) else { continue };
            cohort_of[i] = u32::MAX;
            let mut done = !lost;
            if lost {
                cur.failures += 1.0;
                stage[i] += 1;
                if b.retry_limit.is_some_and(|r| stage[i] > r) {
                    cur.drops += 1.0;
                    done = true;
                }
            } else {
                cur.successes += 1.0;
            }
            if done {
                stage[i] = 0;
                cur.completed += 1.0;
                cur.hol_sum += (slot + 1 - hol_start[i]) as f64;
                hol_start[i] = slot + 1;
            }
            counter[i] = rng.random_range(0..window(stage[i]));
        }
    }
    out.push(cur);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mfq_model::models::mpr_mac::Backoff;

    /// Replication `r` runs on stream `r` of the seed (`crate::stream`, jumps of `2^128`): the
    /// report is the batches of those streams, and replication 1 of seed `s` is not
    /// replication 0 of seed `s + 1` (as it was with seeds `seed + r`).
    #[test]
    fn replications_run_on_independent_streams() {
        let p = MacParams {
            nodes: 8,
            mpr: 2,
            threshold: 2,
            backoff: Backoff { window: 16, stages: 4, retry_limit: Some(3) },
            airtime: 10.0,
            sensing_error: 0.0,
        };
        let opts = MacSimOptions { slots: 2_000, warmup: 200, batches: 4, replications: 2, seed: 5, fixed_airtime: false };
        let successes = |c: &[Counts]| c.iter().map(|b| b.successes).collect::<Vec<f64>>();
        let r1 = replication(&p, &opts, crate::stream(5, 1));
        assert_eq!(successes(&r1), successes(&replication(&p, &opts, crate::stream(5, 1))), "reproducible");
        assert_ne!(successes(&r1), successes(&replication(&p, &opts, crate::stream(6, 0))), "seed + 1 shares no stream");
        assert_ne!(successes(&r1), successes(&replication(&p, &opts, crate::stream(5, 0))), "replications differ");
        // the report's throughput is the mean over the batches of streams 0 and 1
        let mut all = replication(&p, &opts, crate::stream(5, 0));
        all.extend(r1);
        let batch_slots = (opts.slots / opts.batches as u64) as f64;
        let want = mean_estimate(&all.iter().map(|c| c.successes * p.airtime / batch_slots).collect::<Vec<f64>>());
        assert_eq!(simulate_mac(&p, &opts).unwrap().throughput, want);
    }
}
