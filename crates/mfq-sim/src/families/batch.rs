//! Batch processing in a closed network.
//!
//! `m` servers and `n` clients. A thinking client submits its job after an Exp(`think_rate`)
//! time and waits for it; jobs join one central FIFO queue; a free server takes the `b` oldest
//! waiting jobs as soon as `b` wait, and serves them together in an Exp(1 / `batch_time`) time,
//! after which their `b` clients think again. Each job carries its submission time, so the
//! response time (submission to completion) is measured job by job, not by Little's law.
//!
//! Measured per batch: completed jobs per server per unit time, time-average busy fraction,
//! waiting jobs per server and thinking clients per server, and the mean response time of the
//! jobs completed in the batch.

use super::{Family, Tracked};
use crate::engine::{index, Batch, Rng};
use std::collections::VecDeque;

/// One replication's state.
pub(crate) struct BatchNetwork {
    m: u32,
    b: usize,
    think_rate: f64,
    service_rate: f64,
    /// Thinking clients.
    thinking: Tracked,
    /// Submission times of the waiting jobs, oldest first.
    queue: VecDeque<f64>,
    queued: Tracked,
    /// Servers serving a batch: ids, and for server `s` the submission times of its batch in
    /// `in_service[s * b ..][..b]`.
    busy: Vec<u32>,
    busy_count: Tracked,
    free: Vec<u32>,
    in_service: Vec<f64>,
    completed: u64,
    response_sum: f64,
}

impl BatchNetwork {
    /// `n` clients, all thinking at time 0, and `m` idle servers.
    pub(crate) fn new(n: u32, m: u32, b: usize, think_rate: f64, batch_time: f64) -> Self {
        BatchNetwork {
            m,
            b,
            think_rate,
            service_rate: 1.0 / batch_time,
            thinking: Tracked { value: n as f64, ..Default::default() },
            queue: VecDeque::with_capacity(n as usize),
            queued: Tracked::default(),
            busy: Vec::with_capacity(m as usize),
            busy_count: Tracked::default(),
            free: (0..m).rev().collect(),
            in_service: vec![0.0; m as usize * b],
            completed: 0,
            response_sum: 0.0,
        }
    }

    /// While a server is free and `b` jobs wait, a free server takes the `b` oldest.
    fn start_batches(&mut self, t: f64) {
        while self.queue.len() >= self.b {
            let Some(s) = self.free.pop() else { return };
            let slot = &mut self.in_service[s as usize * self.b..][..self.b];
            for v in slot.iter_mut() {
                *v = self.queue.pop_front().expect("b jobs wait");
            }
            self.busy.push(s);
            self.busy_count.add(1.0, t);
            self.queued.add(-(self.b as f64), t);
        }
    }
}

impl Family for BatchNetwork {
    #[inline(always)]
    fn rate(&self) -> f64 {
        self.think_rate * self.thinking.value + self.service_rate * self.busy.len() as f64
    }

    fn event(&mut self, t: f64, rate: f64, rng: &mut Rng) {
        let submit = self.think_rate * self.thinking.value;
        let u = crate::engine::uniform(rng) * rate;
        if u < submit {
            // a thinking client submits its job
            self.thinking.add(-1.0, t);
            self.queue.push_back(t);
            self.queued.add(1.0, t);
        } else {
            // a uniformly random busy server completes its batch
            let i = index(rng, self.busy.len() as u32) as usize;
            let s = self.busy.swap_remove(i);
            self.busy_count.add(-1.0, t);
            for &submitted in &self.in_service[s as usize * self.b..][..self.b] {
                self.response_sum += t - submitted;
            }
            self.completed += self.b as u64;
            self.thinking.add(self.b as f64, t);
            self.free.push(s);
        }
        self.start_batches(t);
    }

    /// Extras: `[0]` completed jobs per server per unit time, `[1]` busy fraction, `[2]` waiting
    /// jobs per server, `[3]` thinking clients per server, `[4]` sum of the response times of
    /// the jobs completed, `[5]` their number.
    fn close(&mut self, t: f64, duration: f64, out: &mut Batch) {
        let m = self.m as f64;
        out.level_integral.clear();
        // jobs served: the report's throughput is accepted / (m duration)
        out.accepted = self.completed;
        out.lost = 0;
        out.waited = 0;
        out.departures = self.completed;
        out.extras.clear();
        out.extras.push(self.completed as f64 / (m * duration));
        out.extras.push(self.busy_count.take(t) / (m * duration));
        out.extras.push(self.queued.take(t) / (m * duration));
        out.extras.push(self.thinking.take(t) / (m * duration));
        out.extras.push(std::mem::take(&mut self.response_sum));
        out.extras.push(std::mem::take(&mut self.completed) as f64);
    }
}
