//! Moldable jobs with blocking (kind `moldable`).
//!
//! `n` servers, Poisson arrivals at rate `lambda n`. An arriving job draws its allocation `k`
//! with probability `p_k`. If at least `k` servers are idle it takes `k`; otherwise, with the
//! fallback rule (scheme `optimal`) it takes all the idle servers if there is one, and without it
//! (the fixed-size baselines) it is blocked; a job finding no idle server is always blocked. A
//! job holding `k` servers keeps them for `work / s(k)`, its work drawn from the law (mean 1).
//!
//! Execution times are not exponential in general (deterministic, H2), so departures are timed
//! events in a binary heap, arrivals are Poisson (their next time is redrawn at a segment
//! boundary: memorylessness). With exponential work a job on `k` servers leaves at rate `s(k)`
//! whatever its age, so departures are competing exponentials instead (as in [`super::drive`]):
//! the jobs are counted by allocation, the next departure comes at rate `sum_k jobs_k s(k)` from
//! allocation `k` with probability proportional to `jobs_k s(k)`, and no work is drawn. Measured
//! per batch: time-average jobs and busy servers per server, and for the jobs accepted in the
//! batch their number and the sum of their execution times (with exponential work, of their
//! conditional means `1 / s(k)` given the allocation: the same expectation, a smaller variance).

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
    /// Exponential work: jobs by allocation (`by_size[k - 1]` on `k` servers) and their total
    /// departure rate `sum_k by_size[k - 1] s(k)`.
    expo: bool,
    by_size: Vec<u32>,
    departure_rate: f64,
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
        let cum_p: Vec<f64> = p
            .iter()
            .map(|p| {
                acc += p;
                acc
            })
            .collect();
        Moldable {
            n,
            arrival_rate: lambda * n as f64,
            by_size: vec![0; cum_p.len()],
            cum_p,
            s,
            fallback,
            work,
            h2: work.h2_parameters().unwrap_or((1.0, 1.0, 1.0)),
            idle: n,
            running: BinaryHeap::with_capacity(n as usize),
            expo: matches!(work, WorkLaw::Exponential),
            departure_rate: 0.0,
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
        self.idle -= k;
        self.busy.add(k as f64, t);
        self.jobs.add(1.0, t);
        self.accepted += 1;
        let speed = self.s[k as usize - 1];
        if self.expo {
            self.exec_sum += 1.0 / speed;
            self.by_size[k as usize - 1] += 1;
            self.departure_rate += speed;
        } else {
            let exec = self.draw_work(rng) / speed;
            self.exec_sum += exec;
            self.running.push(Departure { t: t + exec, k });
        }
    }

    fn depart(&mut self, d: Departure) {
        self.idle += d.k;
        self.busy.add(-(d.k as f64), d.t);
        self.jobs.add(-1.0, d.t);
        self.departures += 1;
    }

    /// Exponential work: the departure of a job of allocation `k` with probability
    /// proportional to `jobs_k s(k)`, `target` uniform on `[0, departure_rate)`.
    fn depart_exponential(&mut self, t: f64, mut target: f64) {
        let mut chosen = usize::MAX;
        for (i, &c) in self.by_size.iter().enumerate() {
            if c > 0 {
                chosen = i;
                let w = c as f64 * self.s[i];
                if target < w {
                    break;
                }
                target -= w;
            }
        }
        self.by_size[chosen] -= 1;
        self.departure_rate -= self.s[chosen];
        self.depart(Departure { t, k: chosen as u32 + 1 });
        if self.jobs.value == 0.0 {
            self.departure_rate = 0.0; // no drift of round-off
        }
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
        // the running sum of departure rates, recomputed exactly (no drift of round-off)
        self.departure_rate = self.by_size.iter().zip(&self.s).map(|(&c, &s)| c as f64 * s).sum();
    }
}

impl super::TimedFamily for Moldable {
    #[inline]
    fn markov_rate(&self) -> f64 {
        self.arrival_rate + self.departure_rate
    }
    #[inline]
    fn next_event(&self) -> f64 {
        self.running.peek().map_or(f64::INFINITY, |d| d.t)
    }
    #[inline]
    fn on_markov(&mut self, t: f64, rate: f64, rng: &mut Rng) {
        if self.departure_rate <= 0.0 {
            self.arrive(t, rng);
            return;
        }
        let u = uniform(rng) * rate;
        if u < self.arrival_rate {
            self.arrive(t, rng);
        } else {
            self.depart_exponential(t, u - self.arrival_rate);
        }
    }
    #[inline]
    fn on_event(&mut self, _rng: &mut Rng) -> bool {
        match self.running.pop() {
            Some(d) => {
                self.depart(d);
                true
            }
            None => false,
        }
    }
    fn end_segment(&mut self, t: f64, duration: f64, out: &mut Batch) {
        self.close(t, duration, out);
    }
}
