//! Moldable jobs with blocking (kind `moldable`).
//!
//! `n` servers, Poisson arrivals at rate `lambda n`. An arriving job draws its allocation `k`
//! with probability `p_k`. If at least `k` servers are idle it takes `k`; otherwise, with the
//! fallback rule (scheme `optimal`) it takes all the idle servers if there is one, and without it
//! (the fixed-size baselines) it is blocked; a job finding no idle server is always blocked. A
//! job holding `k` servers keeps them for `work / s(k)`, its work drawn from the law (mean 1).
//!
//! Execution times are not exponential in general (deterministic, H2), so this family is not
//! driven by competing exponentials ([`super::drive`]): departures are timed events in a binary
//! heap, arrivals are Poisson (their next time is redrawn at a segment boundary:
//! memorylessness). Measured per batch: time-average jobs and busy servers per server, and for
//! the jobs accepted in the batch their number and the sum of their execution times.

use super::Tracked;
use crate::engine::{exp1, uniform, Batch, Rng};
use mfq_model::models::moldable::WorkLaw;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A departure: time, servers released.
#[derive(Debug, Clone, Copy)]
struct Departure {
    t: f64,
    k: u32,
}

impl PartialEq for Departure {
    fn eq(&self, o: &Self) -> bool {
        self.t.total_cmp(&o.t) == Ordering::Equal
    }
}
impl Eq for Departure {}
impl PartialOrd for Departure {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Departure {
    /// Reversed: the heap's top is the earliest departure.
    fn cmp(&self, o: &Self) -> Ordering {
        o.t.total_cmp(&self.t)
    }
}

/// One replication's state.
pub(crate) struct Moldable {
    n: u32,
    arrival_rate: f64,
    s: Vec<f64>,
    /// Cumulative allocation probabilities.
    cum_p: Vec<f64>,
    fallback: bool,
    work: WorkLaw,
    h2: (f64, f64, f64),
    idle: u32,
    running: BinaryHeap<Departure>,
    jobs: Tracked,
    busy: Tracked,
    accepted: u64,
    lost: u64,
    departures: u64,
    exec_sum: f64,
}

impl Moldable {
    /// `n` idle servers; allocation probabilities `p` (`p[k - 1]` for `k` servers) and speed-ups
    /// `s` of equal length `d <= n`.
    pub(crate) fn new(n: u32, lambda: f64, s: Vec<f64>, p: &[f64], fallback: bool, work: WorkLaw) -> Self {
        let mut acc = 0.0;
        let cum_p = p.iter().map(|p| {
            acc += p;
            acc
        });
        Moldable {
            n,
            arrival_rate: lambda * n as f64,
            cum_p: cum_p.collect(),
            s,
            fallback,
            work,
            h2: work.h2_parameters().unwrap_or((1.0, 1.0, 1.0)),
            idle: n,
            running: BinaryHeap::with_capacity(n as usize),
            jobs: Tracked::default(),
            busy: Tracked::default(),
            accepted: 0,
            lost: 0,
            departures: 0,
            exec_sum: 0.0,
        }
    }

    /// A job's work, mean 1.
    fn draw_work(&self, rng: &mut Rng) -> f64 {
        match self.work {
            WorkLaw::Exponential => exp1(rng),
            WorkLaw::Deterministic => 1.0,
            WorkLaw::H2 { .. } => {
                let (p, mu1, mu2) = self.h2;
                if uniform(rng) < p {
                    exp1(rng) / mu1
                } else {
                    exp1(rng) / mu2
                }
            }
        }
    }

    fn arrive(&mut self, t: f64, rng: &mut Rng) {
        let u = uniform(rng) * self.cum_p[self.cum_p.len() - 1];
        let want = self.cum_p.iter().position(|c| u < *c).unwrap_or(self.cum_p.len() - 1) as u32 + 1;
        let k = if self.idle >= want {
            want
        } else if self.fallback && self.idle > 0 {
            self.idle
        } else {
            self.lost += 1;
            return;
        };
        let exec = self.draw_work(rng) / self.s[k as usize - 1];
        self.idle -= k;
        self.busy.add(k as f64, t);
        self.jobs.add(1.0, t);
        self.accepted += 1;
        self.exec_sum += exec;
        self.running.push(Departure { t: t + exec, k });
    }

    fn depart(&mut self, d: Departure) {
        self.idle += d.k;
        self.busy.add(-(d.k as f64), d.t);
        self.jobs.add(-1.0, d.t);
        self.departures += 1;
    }

    /// Extras: `[0]` jobs per server, `[1]` busy servers per server (time averages), `[2]` sum of
    /// the execution times of the jobs accepted, `[3]` their number.
    fn close(&mut self, t: f64, duration: f64, out: &mut Batch) {
        let n = self.n as f64;
        out.level_integral.clear();
        out.accepted = std::mem::take(&mut self.accepted);
        out.lost = std::mem::take(&mut self.lost);
        out.waited = 0;
        out.departures = std::mem::take(&mut self.departures);
        out.extras.clear();
        out.extras.push(self.jobs.take(t) / (n * duration));
        out.extras.push(self.busy.take(t) / (n * duration));
        out.extras.push(std::mem::take(&mut self.exec_sum));
        out.extras.push(out.accepted as f64);
    }
}

impl super::TimedFamily for Moldable {
    fn arrival_rate(&self) -> f64 {
        self.arrival_rate
    }
    fn next_event(&self) -> f64 {
        self.running.peek().map_or(f64::INFINITY, |d| d.t)
    }
    fn on_arrival(&mut self, t: f64, rng: &mut Rng) {
        self.arrive(t, rng);
    }
    fn on_event(&mut self, _rng: &mut Rng) {
        if let Some(d) = self.running.pop() {
            self.depart(d);
        }
    }
    fn end_segment(&mut self, t: f64, duration: f64, out: &mut Batch) {
        self.close(t, duration, out);
    }
}
