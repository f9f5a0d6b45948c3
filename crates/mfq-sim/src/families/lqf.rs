//! Randomised longest-queue-first, LQF(d) (kind `lqf-d`).
//!
//! `n` buffers, each fed by a Poisson stream of rate `lambda`; service opportunities arrive as a
//! Poisson process of rate `n`. At an opportunity the scheduler samples `d` distinct buffers
//! uniformly at random (a partial Fisher-Yates shuffle of a kept permutation of the buffers:
//! `O(d)` per opportunity, no allocation) and removes one packet from the longest sampled
//! buffer, ties broken uniformly; if all `d` are empty the opportunity is wasted. With a buffer
//! `K`, a packet arriving at a buffer holding `K` packets is lost. `d = n` samples every buffer:
//! exact longest-queue-first.
//!
//! Measured per batch: the level integrals (fraction of buffers with at least `k` packets),
//! accepted, lost and departed packets, packets that found their buffer non-empty (`waited`),
//! and the wasted opportunities (extras `[0]`: wasted per opportunity).

use super::{Family, Levels};
use crate::engine::{index, uniform, Batch, Rng};

/// One replication's state.
pub(crate) struct Lqf {
    n: u32,
    d: u32,
    lambda: f64,
    buffer: Option<u32>,
    queue: Vec<u32>,
    /// A permutation of the buffers; its first `d` entries after a partial shuffle are the sample.
    perm: Vec<u32>,
    levels: Levels,
    scratch: Vec<f64>,
    accepted: u64,
    lost: u64,
    waited: u64,
    departures: u64,
    opportunities: u64,
    wasted: u64,
}

impl Lqf {
    /// `n` empty buffers, `d <= n` sampled per opportunity.
    pub(crate) fn new(n: u32, lambda: f64, d: u32, buffer: Option<u32>) -> Self {
        Lqf {
            n,
            d,
            lambda,
            buffer,
            queue: vec![0; n as usize],
            perm: (0..n).collect(),
            levels: Levels::new(),
            scratch: Vec::new(),
            accepted: 0,
            lost: 0,
            waited: 0,
            departures: 0,
            opportunities: 0,
            wasted: 0,
        }
    }

    /// The buffer the scheduler serves at one opportunity: the longest of `d` distinct uniformly
    /// sampled buffers, ties uniformly (reservoir choice among the tied); `None` when all the
    /// sampled buffers are empty.
    pub(crate) fn choose(&mut self, rng: &mut Rng) -> Option<u32> {
        let (mut best, mut best_len, mut ties) = (0u32, 0u32, 0u32);
        for j in 0..self.d {
            let k = j + index(rng, self.n - j);
            self.perm.swap(j as usize, k as usize);
            let b = self.perm[j as usize];
            let len = self.queue[b as usize];
            if len > best_len {
                (best, best_len, ties) = (b, len, 1);
            } else if len == best_len && len > 0 {
                ties += 1;
                if index(rng, ties) == 0 {
                    best = b;
                }
            }
        }
        (best_len > 0).then_some(best)
    }

    /// The queue lengths (tests).
    #[cfg(test)]
    pub(crate) fn queues(&self) -> &[u32] {
        &self.queue
    }

    /// Sets the queue lengths (tests; the level integrals are not kept consistent).
    #[cfg(test)]
    pub(crate) fn set_queues(&mut self, q: &[u32]) {
        self.queue.copy_from_slice(q);
    }
}

impl Family for Lqf {
    #[inline(always)]
    fn rate(&self) -> f64 {
        self.n as f64 * (self.lambda + 1.0)
    }

    fn event(&mut self, t: f64, _rate: f64, rng: &mut Rng) {
        if uniform(rng) * (self.lambda + 1.0) < self.lambda {
            let b = index(rng, self.n) as usize;
            let len = self.queue[b];
            if self.buffer.is_some_and(|k| len >= k) {
                self.lost += 1;
                return;
            }
            self.accepted += 1;
            self.waited += u64::from(len > 0);
            self.queue[b] = len + 1;
            self.levels.up(len, t);
        } else {
            self.opportunities += 1;
            match self.choose(rng) {
                Some(b) => {
                    let len = self.queue[b as usize];
                    self.queue[b as usize] = len - 1;
                    self.levels.down(len, t);
                    self.departures += 1;
                }
                None => self.wasted += 1,
            }
        }
    }

    /// Extras: `[0]` wasted opportunities per opportunity.
    fn close(&mut self, t: f64, _duration: f64, out: &mut Batch) {
        self.levels.take(t, &mut self.scratch);
        out.level_integral.clone_from(&self.scratch);
        out.accepted = std::mem::take(&mut self.accepted);
        out.lost = std::mem::take(&mut self.lost);
        out.waited = std::mem::take(&mut self.waited);
        out.departures = std::mem::take(&mut self.departures);
        out.extras.clear();
        let opp = std::mem::take(&mut self.opportunities).max(1) as f64;
        out.extras.push(std::mem::take(&mut self.wasted) as f64 / opp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// With `d = n` every opportunity serves a buffer of maximal length (exact LQF), and every
    /// longest buffer is chosen about equally often; with `d < n` a shorter buffer is served
    /// sometimes.
    #[test]
    fn d_equal_n_serves_a_longest_buffer() {
        let mut rng = Rng::seed_from_u64(5);
        let q = [3, 0, 5, 1, 5, 2, 0, 5];
        let mut f = Lqf::new(8, 0.5, 8, None);
        f.set_queues(&q);
        let mut counts = [0u32; 8];
        for _ in 0..30_000 {
            let b = f.choose(&mut rng).unwrap() as usize;
            assert_eq!(f.queues()[b], 5);
            counts[b] += 1;
        }
        for b in [2, 4, 7] {
            assert!((counts[b] as f64 - 10_000.0).abs() < 400.0, "{counts:?}");
        }
        let mut g = Lqf::new(8, 0.5, 3, None);
        g.set_queues(&q);
        let shorter = (0..3000).filter(|_| g.choose(&mut rng).is_none_or(|b| q[b as usize] < 5)).count();
        // P(no 5 among 3 of 8 distinct) = C(5,3)/C(8,3) = 10/56
        assert!((shorter as f64 / 3000.0 - 10.0 / 56.0).abs() < 0.03, "{shorter}");
        // all empty: wasted
        let mut e = Lqf::new(4, 0.5, 4, None);
        assert_eq!(e.choose(&mut rng), None);
    }
}
