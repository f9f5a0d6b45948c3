//! Redundancy on a compatibility graph (kind `redundancy-graph`), from the system's rules.
//!
//! Job types `c` arrive as Poisson streams of rates `lambda[c]`; a job of type `c` sends a copy
//! to every server of its set `S_c`. Every server works, FCFS, on the oldest job present that is
//! compatible with it (several servers may work on the same job); copy sizes are i.i.d.
//! exponential, so a busy server `s` completes its copy at rate `mu[s]`, and the first completed
//! copy removes the job and cancels its other copies (cancel-on-completion). The servers that
//! were working on it each move to the oldest compatible job after it, or go idle.
//!
//! The jobs are kept in arrival order with increasing ids, so a server's job is found by binary
//! search and its successor by a scan from there. Measured per batch: the time integrals of the
//! number of jobs (in total and per type) and of each server's busy indicator, and per type the
//! number and summed response times (arrival to completion) of the jobs completed.

use super::{Family, Tracked};
use crate::engine::{uniform, Batch, Rng};
use std::collections::VecDeque;

/// The `serving` entry of an idle server.
const IDLE: u64 = u64::MAX;

#[derive(Clone, Copy)]
struct Job {
    id: u64,
    ty: u32,
    arrival: f64,
}

/// One replication's state.
pub(crate) struct GraphSystem {
    sets: Vec<u64>,
    mu: Vec<f64>,
    /// Cumulative arrival rates of the types.
    cum: Vec<f64>,
    lambda: f64,
    jobs: VecDeque<Job>,
    next_id: u64,
    /// The id of the job each server works on ([`IDLE`] when none).
    serving: Vec<u64>,
    /// Bit `s` set when server `s` is busy (`serving[s] != IDLE`).
    busy_mask: u64,
    busy_rate: f64,
    per_type: Vec<Tracked>,
    busy: Vec<Tracked>,
    arrivals: u64,
    waited: u64,
    completed: Vec<u64>,
    response: Vec<f64>,
}

impl GraphSystem {
    /// An empty system: type `c` at rate `lambda[c]` on the servers of mask `sets[c]`, server `s`
    /// at rate `mu[s]`.
    pub(crate) fn new(lambda: &[f64], sets: &[u64], mu: &[f64]) -> Self {
        let cum = lambda
            .iter()
            .scan(0.0, |acc, l| {
                *acc += l;
                Some(*acc)
            })
            .collect();
        GraphSystem {
            sets: sets.to_vec(),
            mu: mu.to_vec(),
            cum,
            lambda: lambda.iter().sum(),
            jobs: VecDeque::new(),
            next_id: 0,
            serving: vec![IDLE; mu.len()],
            busy_mask: 0,
            busy_rate: 0.0,
            per_type: vec![Tracked::default(); lambda.len()],
            busy: vec![Tracked::default(); mu.len()],
            arrivals: 0,
            waited: 0,
            completed: vec![0; lambda.len()],
            response: vec![0.0; lambda.len()],
        }
    }

    fn arrive(&mut self, t: f64, ty: usize) {
        let id = self.next_id;
        self.next_id += 1;
        self.jobs.push_back(Job { id, ty: ty as u32, arrival: t });
        self.per_type[ty].add(1.0, t);
        self.arrivals += 1;
        // an idle server has no compatible job present: the new job is its oldest
        let mut m = self.sets[ty] & !self.busy_mask;
        if m == 0 {
            self.waited += 1;
        }
        self.busy_mask |= m;
        while m != 0 {
            let s = m.trailing_zeros() as usize;
            m &= m - 1;
            self.serving[s] = id;
            self.busy_rate += self.mu[s];
            self.busy[s].add(1.0, t);
        }
    }

    /// Server `s` completes its copy: its job leaves, and every server that worked on it takes
    /// the oldest compatible job after it.
    fn complete(&mut self, t: f64, s: usize) {
        let id = self.serving[s];
        debug_assert!(id != IDLE, "a busy server");
        // usually the oldest job (FCFS); else found by its increasing id
        let p = if self.jobs.front().is_some_and(|j| j.id == id) {
            0
        } else {
            self.jobs.binary_search_by_key(&id, |j| j.id).expect("the served job is present")
        };
        let job = if p == 0 { self.jobs.pop_front() } else { self.jobs.remove(p) }.expect("position found");
        let ty = job.ty as usize;
        self.per_type[ty].add(-1.0, t);
        self.completed[ty] += 1;
        self.response[ty] += t - job.arrival;
        let mut m = self.sets[ty];
        while m != 0 {
            let r = m.trailing_zeros() as usize;
            m &= m - 1;
            if self.serving[r] != id {
                continue;
            }
            // the jobs before position p were incompatible with r (it served the oldest)
            let bit = 1u64 << r;
            let next = self.jobs.range(p..).find(|j| self.sets[j.ty as usize] & bit != 0).map_or(IDLE, |j| j.id);
            self.serving[r] = next;
            if next == IDLE {
                self.busy_mask &= !bit;
                self.busy_rate -= self.mu[r];
                self.busy[r].add(-1.0, t);
            }
        }
        if self.jobs.is_empty() {
            self.busy_rate = 0.0; // no drift of round-off
        }
    }
}

impl Family for GraphSystem {
    #[inline(always)]
    fn rate(&self) -> f64 {
        self.lambda + self.busy_rate
    }

    fn event(&mut self, t: f64, rate: f64, rng: &mut Rng) {
        let u = uniform(rng) * rate;
        if u < self.lambda {
            // the type: the number of running sums of the arrival rates at or below `u` (the
            // last sum is `lambda > u`), counted without a branch per type
            let k = self.cum.len();
            let ty = self.cum[..k - 1].iter().map(|&c| (c <= u) as usize).sum();
            self.arrive(t, ty);
            return;
        }
        // a busy server, with probability proportional to its rate (in server order; the last
        // busy one on round-off)
        let mut left = u - self.lambda;
        let mut m = self.busy_mask;
        if m == 0 {
            return;
        }
        let mut s = 63 - m.leading_zeros() as usize;
        while m != 0 {
            let r = m.trailing_zeros() as usize;
            m &= m - 1;
            if left < self.mu[r] {
                s = r;
                break;
            }
            left -= self.mu[r];
        }
        self.complete(t, s);
    }

    /// Extras: `[0]` integral of the number of jobs, then per type `c` at `1 + 3c`: the
    /// integral of its jobs, its completions, their summed response times; then per server the
    /// integral of its busy indicator.
    fn close(&mut self, t: f64, duration: f64, out: &mut Batch) {
        let _ = duration;
        out.level_integral.clear();
        out.accepted = std::mem::take(&mut self.arrivals);
        out.lost = 0;
        out.waited = std::mem::take(&mut self.waited);
        out.departures = self.completed.iter().sum();
        out.extras.clear();
        // the integral of the number of jobs is the sum of the types' integrals
        out.extras.push(0.0);
        let mut total = 0.0;
        for c in 0..self.per_type.len() {
            let v = self.per_type[c].take(t);
            total += v;
            out.extras.push(v);
            out.extras.push(std::mem::take(&mut self.completed[c]) as f64);
            out.extras.push(std::mem::take(&mut self.response[c]));
        }
        out.extras[0] = total;
        for b in &mut self.busy {
            out.extras.push(b.take(t));
        }
    }
}
