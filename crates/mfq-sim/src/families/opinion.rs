//! Majority-rule opinion dynamics with stubborn or biased agents.
//!
//! `N` agents with opinion 0 or 1, each updating at the points of its own rate-1 Poisson
//! clock. Stubborn model: agents `0 .. n0` are stubborn with opinion 0, `n0 .. n0 + n1` stubborn
//! with opinion 1 (`n_i` = `gamma_i N` rounded), the others update: they sample two agents
//! uniformly from **all** `N` agents (independently, with replacement; stubborn ones and
//! themselves included) and adopt the majority of the three opinions (their own and the two
//! samples). Biased model: every agent updates; with probability `alpha` it adopts opinion 1,
//! otherwise it applies the same majority rule. The next update comes after an
//! Exp(number of updating agents) time and is made by a uniformly random updating agent.
//!
//! Measured: `x` = fraction of the non-stubborn agents holding opinion 1 (time average).

use super::{Family, Tracked};
use crate::engine::{coin, index, Batch, Rng};

/// One replication's state.
pub(crate) struct Opinion {
    n: u32,
    /// First updating agent and their number.
    first: u32,
    movers: u32,
    alpha: f64,
    opinion: Vec<u8>,
    ones: Tracked,
    stubborn_ones: u32,
    updates: u64,
}

impl Opinion {
    /// `stubborn = (n0, n1)`; `x0` = initial fraction of the updating agents holding opinion 1
    /// (the first `round(x0 M)` of them).
    pub(crate) fn new(n: u32, stubborn: (u32, u32), alpha: f64, x0: f64) -> Self {
        let first = stubborn.0 + stubborn.1;
        let movers = n - first;
        let ones0 = (x0 * movers as f64).round() as u32;
        let opinion: Vec<u8> = (0..n)
            .map(|a| {
                if a < stubborn.0 {
                    0
                } else if a < first {
                    1
                } else {
                    ((a - first) < ones0) as u8
                }
            })
            .collect();
        Opinion {
            n,
            first,
            movers,
            alpha,
            opinion,
            ones: Tracked { value: ones0 as f64, ..Default::default() },
            stubborn_ones: stubborn.1,
            updates: 0,
        }
    }
}

impl Family for Opinion {
    #[inline(always)]
    fn rate(&self) -> f64 {
        self.movers as f64
    }

    #[inline(always)]
    fn event(&mut self, t: f64, _rate: f64, rng: &mut Rng) {
        self.updates += 1;
        let a = (self.first + index(rng, self.movers)) as usize;
        let own = self.opinion[a];
        let new = if coin(rng, self.alpha) {
            1
        } else {
            let b = self.opinion[index(rng, self.n) as usize];
            let c = self.opinion[index(rng, self.n) as usize];
            (own + b + c >= 2) as u8
        };
        if new != own {
            self.opinion[a] = new;
            self.ones.add(if new == 1 { 1.0 } else { -1.0 }, t);
        }
    }

    /// Extras: `[0]` time-average `x`, `[1]` time-average fraction of all agents holding 1,
    /// `[2]` `x` at the end of the batch.
    fn close(&mut self, t: f64, duration: f64, out: &mut Batch) {
        let m = self.movers as f64;
        let integral = self.ones.take(t);
        out.level_integral.clear();
        out.accepted = 0;
        out.lost = 0;
        out.waited = 0;
        out.departures = std::mem::take(&mut self.updates);
        out.extras.clear();
        out.extras.push(integral / (m * duration));
        out.extras.push((integral + self.stubborn_ones as f64 * duration) / (self.n as f64 * duration));
        out.extras.push(self.ones.value / m);
    }
}
