//! Phase-type job sizes: FCFS servers routed by queue length (SQ(d)/JSQ(d), Pod with
//! load-independent errors, JIQ), tracking the phase of the job in service; and LL(d), least
//! loaded of `d` by workload, keeping the residual work of every server.
//!
//! A phase-type law `PH(alpha, A)` is given here by its initial probabilities, its sub-generator
//! (row-major) and nothing else: the simulator draws phases and their exponential holding times.

use super::{pick_cumulative, Family, Levels, Segments, Tracked};
use crate::engine::{coin, exp1, index, uniform, Batch, Rng};

/// A phase-type law as the simulator uses it: from phase `i` the job leaves at total rate
/// `rate[i] = -A_ii`, to phase `j` with probability `A_ij / rate[i]` and completes with
/// probability `nu_i / rate[i]` (cumulative tables `next[i]`, entry `m` = completion).
#[derive(Debug, Clone)]
pub(crate) struct Law {
    pub m: usize,
    alpha_cum: Vec<f64>,
    pub rate: Vec<f64>,
    next_cum: Vec<Vec<f64>>,
    /// The starting phase when it is certain (`alpha` puts all its mass on one phase): no draw.
    sure_start: Option<usize>,
    /// Per phase, where a job leaving it goes when that is certain (`m` = completion): no draw.
    sure_next: Vec<Option<usize>>,
    /// Per phase, the possible destinations only (`m` = completion), each with its cumulative
    /// probability (running sums of `next_cum[i]`'s increments over its total, last `1`): the
    /// scan of [`step_with`](Law::step_with), without the zero-width entries.
    steps: Vec<Vec<(f64, usize)>>,
}

/// The only index of a cumulative table that can be picked (all the mass on one entry), if any.
fn sure_pick(cum: &[f64]) -> Option<usize> {
    let total = *cum.last()?;
    let mut prev = 0.0;
    let mut only = None;
    for (i, &c) in cum.iter().enumerate() {
        if c > prev {
            if only.is_some() {
                return None;
            }
            only = Some(i);
        }
        prev = c;
    }
    only.filter(|_| total > 0.0)
}

impl Law {
    /// From initial probabilities `alpha` and the sub-generator `a` (row-major `m x m`).
    pub(crate) fn new(alpha: &[f64], a: &[f64]) -> Self {
        let m = alpha.len();
        let mut c = 0.0;
        let alpha_cum: Vec<f64> = alpha
            .iter()
            .map(|v| {
                c += v.max(0.0);
                c
            })
            .collect();
        let rate: Vec<f64> = (0..m).map(|i| -a[i * m + i]).collect();
        let next_cum: Vec<Vec<f64>> = (0..m)
            .map(|i| {
                let mut c = 0.0;
                let mut v: Vec<f64> = (0..m)
                    .map(|j| {
                        if j != i {
                            c += a[i * m + j].max(0.0);
                        }
                        c
                    })
                    .collect();
                // completion takes the rest of the rate
                v.push(rate[i].max(c));
                v
            })
            .collect();
        let sure_start = sure_pick(&alpha_cum);
        let sure_next = next_cum.iter().map(|c| sure_pick(c)).collect();
        let steps = next_cum
            .iter()
            .map(|c| {
                let total = c[m];
                let mut prev = 0.0;
                let mut v: Vec<(f64, usize)> = Vec::new();
                for (j, &x) in c.iter().enumerate() {
                    if x > prev {
                        v.push((x / total, j));
                    }
                    prev = x;
                }
                if let Some(last) = v.last_mut() {
                    last.0 = 1.0;
                }
                v
            })
            .collect();
        Law { m, alpha_cum, rate, next_cum, sure_start, sure_next, steps }
    }

    /// The starting phase of a new job.
    #[inline(always)]
    pub(crate) fn start(&self, rng: &mut Rng) -> usize {
        match self.sure_start {
            Some(i) => i,
            None => pick_cumulative(&self.alpha_cum, uniform(rng)),
        }
    }

    /// Where a job in phase `i` goes when it leaves it: another phase, or `m` = completion.
    #[inline(always)]
    pub(crate) fn step(&self, i: usize, rng: &mut Rng) -> usize {
        match self.sure_next[i] {
            Some(j) => j,
            None => pick_cumulative(&self.next_cum[i], uniform(rng)),
        }
    }

    /// As [`step`](Law::step) with the uniform `u` in `[0, 1)` given (the destinations with
    /// positive probability scanned in order, the same law up to the rounding of the
    /// normalised sums).
    #[inline(always)]
    pub(crate) fn step_with(&self, i: usize, u: f64) -> usize {
        match self.sure_next[i] {
            Some(j) => j,
            None => {
                let steps = &self.steps[i];
                for &(c, j) in steps {
                    if u < c {
                        return j;
                    }
                }
                steps.last().map_or(self.m, |s| s.1)
            }
        }
    }

    /// A job size drawn from the law (walk through the phases).
    #[inline(always)]
    pub(crate) fn sample(&self, rng: &mut Rng) -> f64 {
        let mut i = self.start(rng);
        let mut s = 0.0;
        loop {
            s += exp1(rng) / self.rate[i];
            let j = self.step(i, rng);
            if j == self.m {
                return s;
            }
            i = j;
        }
    }
}

/// Routing by queue length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Routing {
    /// `d` samples with replacement; a least-loaded one, ties uniformly (d = 1: random).
    Jsq(u32),
    /// `d` samples; a least-loaded one w.p. `1 - eps`, a most-loaded one w.p. `eps`.
    PodLi(u32, f64),
    /// An idle server if any, else a uniformly random server.
    Jiq,
}

/// FCFS servers with phase-type sizes. Server sets: `0` idle, `1 + i` busy with the job in
/// service in phase `i` (segments in that order: a start in the first phase and a step to the
/// next phase are one swap). Events: arrivals at `N lambda`, and phase changes/completions at
/// `sum_i rate_i B_i` (`B_i` servers in phase `i`), the phase drawn in proportion.
pub(crate) struct PhaseQueues {
    n: u32,
    arrival_rate: f64,
    buffer: u32,
    law: Law,
    routing: Routing,
    q: Vec<u32>,
    sets: Segments,
    busy_in: Vec<u32>,
    /// The running sums `sum_{p <= i} rate_p B_p`, recomputed when a phase count changes.
    cum_rate: Vec<f64>,
    /// Their total `sum_i rate_i B_i`.
    service_rate: f64,
    /// `1 / rate_i`.
    inv_rate: Vec<f64>,
    /// `1 / (N lambda)`.
    inv_arrival: f64,
    levels: Levels,
    /// Jobs in service per phase with their integrals (phase 0's unused: see
    /// [`phase_add`](PhaseQueues::phase_add)).
    in_phase: Vec<Tracked>,
    scratch: Vec<f64>,
    accepted: u64,
    lost: u64,
    waited: u64,
    departures: u64,
}

impl PhaseQueues {
    pub(crate) fn new(n: u32, lambda: f64, buffer: Option<u32>, law: Law, routing: Routing) -> Self {
        let m = law.m;
        let inv_rate = law.rate.iter().map(|r| 1.0 / r).collect();
        PhaseQueues {
            n,
            arrival_rate: n as f64 * lambda,
            buffer: buffer.unwrap_or(u32::MAX),
            law,
            routing,
            q: vec![0; n as usize],
            sets: Segments::new(n, m + 1, |_| 0),
            busy_in: vec![0; m],
            cum_rate: vec![0.0; m],
            service_rate: 0.0,
            inv_rate,
            inv_arrival: 1.0 / (n as f64 * lambda),
            levels: Levels::new(),
            in_phase: vec![Tracked::default(); m],
            scratch: Vec::new(),
            accepted: 0,
            lost: 0,
            waited: 0,
            departures: 0,
        }
    }

    /// `sum_i rate_i B_i` and its running sums from the phase counts.
    #[inline(always)]
    fn recompute_service_rate(&mut self) {
        self.service_rate = super::running_rates(&self.busy_in, &self.law.rate, &mut self.cum_rate);
    }

    /// Routing by `d = 2` samples from one uniform `f` in `[0, 1)`: the error coin (`f < eps`),
    /// then each sample as the integer part of `f n` (`f` keeps the fractional part, uniform
    /// and independent of it). On a tie the first sample is joined: the two samples are
    /// exchangeable, so the joined server is uniform among the tied ones as with a tie coin.
    #[inline(always)]
    fn route_two(&self, eps: f64, mut f: f64) -> u32 {
        let most = f < eps;
        f = if most { f / eps } else { (f - eps) / (1.0 - eps) };
        let n = self.n;
        let x = f * n as f64;
        let a = (x as u32).min(n - 1);
        let b = (((x - a as f64) * n as f64) as u32).min(n - 1);
        let (qa, qb) = (self.q[a as usize], self.q[b as usize]);
        let better = if most { qb > qa } else { qb < qa };
        if better {
            b
        } else {
            a
        }
    }

    #[inline(always)]
    fn route(&self, rng: &mut Rng) -> u32 {
        match self.routing {
            Routing::Jsq(d) => {
                let mut best = index(rng, self.n);
                let mut bq = self.q[best as usize];
                let mut ties = 1u32;
                for _ in 1..d {
                    let c = index(rng, self.n);
                    let qc = self.q[c as usize];
                    if qc < bq {
                        (best, bq, ties) = (c, qc, 1);
                    } else if qc == bq {
                        ties += 1;
                        if index(rng, ties) == 0 {
                            best = c;
                        }
                    }
                }
                best
            }
            Routing::PodLi(d, eps) => {
                let most = coin(rng, eps);
                let mut best = index(rng, self.n);
                let mut bq = self.q[best as usize];
                let mut ties = 1u32;
                for _ in 1..d {
                    let c = index(rng, self.n);
                    let qc = self.q[c as usize];
                    let better = if most { qc > bq } else { qc < bq };
                    if better {
                        (best, bq, ties) = (c, qc, 1);
                    } else if qc == bq {
                        ties += 1;
                        if index(rng, ties) == 0 {
                            best = c;
                        }
                    }
                }
                best
            }
            Routing::Jiq => unreachable!("JIQ routes by route_jiq"),
        }
    }

    /// JIQ routing from `f` uniform in `[0, 1)` (the event choice's uniform, rescaled): the
    /// `floor(f I)`-th of the `I` idle servers if any, else the `floor(f N)`-th server; with
    /// the idle server's index in the permutation (`u32::MAX` when none is idle).
    #[inline(always)]
    fn route_jiq(&self, f: f64) -> (u32, u32) {
        let idle = self.sets.len(0);
        if idle > 0 {
            self.sets.at_span(0, ((f * idle as f64) as u32).min(idle - 1))
        } else {
            (((f * self.n as f64) as u32).min(self.n - 1), u32::MAX)
        }
    }

    /// Starts a new job's service at server `s` (in set `from`) at time `t`; `at` is the
    /// server's index in the permutation when the caller knows it (`u32::MAX` otherwise).
    #[inline(always)]
    fn start_service(&mut self, s: u32, from: usize, at: u32, t: f64, rng: &mut Rng) {
        let i = self.law.start(rng);
        if at != u32::MAX && 1 + i == from + 1 {
            // from the idle set to the first phase: one swap, no look-up
            self.sets.promote_at(at, from);
        } else {
            self.sets.move_between(s, from, 1 + i);
        }
        self.busy_in[i] += 1;
        self.phase_add(i, 1.0, t);
    }

    /// Adds `delta` to the number of jobs in service in phase `i` at time `t`. Only phases
    /// `1..m` keep an integral: phase 0's is the busy servers' (level 1's) less theirs, taken
    /// at the close, so that the frequent start and completion in the first phase of a job
    /// that arrives to or leaves an idle server update one integral (the level's), not two.
    #[inline(always)]
    fn phase_add(&mut self, i: usize, delta: f64, t: f64) {
        if i > 0 {
            self.in_phase[i].add(delta, t);
        }
    }

    /// An arrival; `u` is the event choice's uniform times the total rate (`u < N lambda`):
    /// with two samples (SQ(2), Pod-LI with `d = 2`) and with JIQ it also routes the job.
    #[inline(always)]
    fn arrive(&mut self, t: f64, u: f64, rng: &mut Rng) {
        let (s, at) = match self.routing {
            Routing::Jsq(2) => (self.route_two(0.0, u * self.inv_arrival), u32::MAX),
            Routing::PodLi(2, eps) => (self.route_two(eps, u * self.inv_arrival), u32::MAX),
            Routing::Jiq => self.route_jiq(u * self.inv_arrival),
            _ => (self.route(rng), u32::MAX),
        };
        let before = self.q[s as usize];
        if before >= self.buffer {
            self.lost += 1;
            return;
        }
        self.accepted += 1;
        self.waited += (before > 0) as u64;
        self.q[s as usize] = before + 1;
        self.levels.up(before, t);
        if before == 0 {
            self.start_service(s, 0, at, t, rng);
            self.recompute_service_rate();
        }
    }

    /// A phase change or completion; `target` is uniform in `[0, sum_i rate_i B_i)`. The phase
    /// is `i` when `target` falls in `[sum_{p < i} rate_p B_p, sum_{p <= i} rate_p B_p)`; then
    /// `x = (target - sum_{p < i} rate_p B_p) / rate_i` is uniform in `[0, B_i)`: its integer
    /// part is the server (the `x`-th of the phase's set) and its fractional part, uniform and
    /// independent of it, the uniform of the phase step. One uniform picks all three.
    #[inline(always)]
    fn service_event(&mut self, target: f64, t: f64, rng: &mut Rng) {
        let m = self.law.m;
        let mut i = usize::MAX;
        for p in 0..m {
            if target < self.cum_rate[p] && self.busy_in[p] > 0 {
                i = p;
                break;
            }
        }
        if i == usize::MAX {
            i = (0..m).rev().find(|&p| self.busy_in[p] > 0).expect("a busy server");
        }
        let below = if i == 0 { 0.0 } else { self.cum_rate[i - 1] };
        let x = ((target - below) * self.inv_rate[i]).max(0.0);
        let r = (x as u32).min(self.busy_in[i] - 1);
        let (s, at) = self.sets.at_span(1 + i, r);
        let j = self.law.step_with(i, (x - r as f64).min(1.0 - f64::EPSILON));
        self.busy_in[i] -= 1;
        self.phase_add(i, -1.0, t);
        if j < m {
            if j == i + 1 {
                self.sets.promote_at(at, 1 + i);
            } else {
                self.sets.move_between(s, 1 + i, 1 + j);
            }
            self.busy_in[j] += 1;
            self.phase_add(j, 1.0, t);
            self.recompute_service_rate();
            return;
        }
        let before = self.q[s as usize];
        self.q[s as usize] = before - 1;
        self.levels.down(before, t);
        self.departures += 1;
        if before > 1 {
            self.start_service(s, 1 + i, u32::MAX, t, rng);
        } else if i == 0 {
            self.sets.demote_at(at, 1);
        } else {
            self.sets.move_between(s, 1 + i, 0);
        }
        self.recompute_service_rate();
    }
}

impl Family for PhaseQueues {
    #[inline(always)]
    fn rate(&self) -> f64 {
        self.arrival_rate + self.service_rate
    }

    #[inline(always)]
    fn event(&mut self, t: f64, rate: f64, rng: &mut Rng) {
        let u = uniform(rng) * rate;
        if u < self.arrival_rate {
            self.arrive(t, u, rng);
        } else {
            self.service_event(u - self.arrival_rate, t, rng);
        }
    }

    /// Extras: the fraction of servers whose job in service is in phase `i`, `i = 1..m`
    /// (the first phase's: the busy fraction less the others').
    fn close(&mut self, t: f64, duration: f64, out: &mut Batch) {
        self.levels.take(t, &mut self.scratch);
        out.level_integral.clone_from(&self.scratch);
        out.accepted = std::mem::take(&mut self.accepted);
        out.lost = std::mem::take(&mut self.lost);
        out.waited = std::mem::take(&mut self.waited);
        out.departures = std::mem::take(&mut self.departures);
        out.extras.clear();
        let per = self.n as f64 * duration;
        let busy = self.scratch.get(1).copied().unwrap_or(0.0);
        out.extras.push(0.0);
        let mut others = 0.0;
        for tr in &mut self.in_phase[1..] {
            let v = tr.take(t);
            others += v;
            out.extras.push(v / per);
        }
        out.extras[0] = (busy - others).max(0.0) / per;
    }
}

/// LL(d): each arrival samples `d` servers (with replacement) and joins the one with the least
/// workload (ties, i.e. several idle samples, uniformly). FCFS: the job's response time is the
/// chosen workload plus its own size, known at arrival. The workload of server `s` at time `t`
/// is `max(0, empty_at[s] - t)`, so only arrivals are events.
///
/// Per-job statistics are attributed to the batch of the arrival: response time `W + S`,
/// waiting `W`, the work `S` and the area `S W + S^2/2` it adds under the workload curve (so
/// their sums over a batch divided by `N b` estimate `L = lambda E[R]` by Little's law, the
/// busy fraction and the mean workload).
pub(crate) struct Lld {
    n: u32,
    d: u32,
    arrival_rate: f64,
    law: Law,
    empty_at: Vec<f64>,
    count: u64,
    waited: u64,
    sum_response: f64,
    sum_wait: f64,
    sum_work: f64,
    sum_area: f64,
}

impl Lld {
    pub(crate) fn new(n: u32, lambda: f64, d: u32, law: Law) -> Self {
        Lld {
            n,
            d,
            arrival_rate: n as f64 * lambda,
            law,
            empty_at: vec![0.0; n as usize],
            count: 0,
            waited: 0,
            sum_response: 0.0,
            sum_wait: 0.0,
            sum_work: 0.0,
            sum_area: 0.0,
        }
    }
}

impl Family for Lld {
    #[inline(always)]
    fn rate(&self) -> f64 {
        self.arrival_rate
    }

    #[inline(always)]
    fn event(&mut self, t: f64, _rate: f64, rng: &mut Rng) {
        let mut best = index(rng, self.n);
        let mut bw = (self.empty_at[best as usize] - t).max(0.0);
        let mut ties = 1u32;
        for _ in 1..self.d {
            let c = index(rng, self.n);
            let w = (self.empty_at[c as usize] - t).max(0.0);
            if w < bw {
                (best, bw, ties) = (c, w, 1);
            } else if w == bw {
                ties += 1;
                if index(rng, ties) == 0 {
                    best = c;
                }
            }
        }
        let size = self.law.sample(rng);
        self.empty_at[best as usize] = t + bw + size;
        self.count += 1;
        self.waited += (bw > 0.0) as u64;
        self.sum_response += bw + size;
        self.sum_wait += bw;
        self.sum_work += size;
        self.sum_area += size * bw + 0.5 * size * size;
    }

    /// Extras: `[0]` sum of response times, `[1]` jobs, `[2]` sum of waits, `[3]` work per
    /// server per unit time (busy fraction), `[4]` workload area per server per unit time (mean
    /// workload), `[5]` response-time sum per server per unit time (`L` by Little's law).
    fn close(&mut self, _t: f64, duration: f64, out: &mut Batch) {
        let per = self.n as f64 * duration;
        out.level_integral.clear();
        out.accepted = self.count;
        out.lost = 0;
        out.waited = std::mem::take(&mut self.waited);
        out.departures = 0;
        out.extras.clear();
        out.extras.extend_from_slice(&[
            self.sum_response,
            self.count as f64,
            self.sum_wait,
            self.sum_work / per,
            self.sum_area / per,
            self.sum_response / per,
        ]);
        self.count = 0;
        self.sum_response = 0.0;
        self.sum_wait = 0.0;
        self.sum_work = 0.0;
        self.sum_area = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// H2 in Coxian form: sample mean and second moment match the law's.
    #[test]
    fn sampled_sizes_have_the_laws_moments() {
        // rate mu1 = 1.894427 w.p. p = 0.947214 else mu2 = 0.105573: mean 1, SCV 9
        let (mu1, mu2, p) = (1.0 + 0.8f64.sqrt(), 1.0 - 0.8f64.sqrt(), (1.0 + 0.8f64.sqrt()) / 2.0);
        let a = (1.0 - p) * (mu1 - mu2) / mu1;
        let law = Law::new(&[1.0, 0.0], &[-mu1, a * mu1, 0.0, -mu2]);
        let mut rng = Rng::seed_from_u64(9);
        let n = 2_000_000;
        let (mut s1, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let x = law.sample(&mut rng);
            s1 += x;
            s2 += x * x;
        }
        let (m1, m2) = (s1 / n as f64, s2 / n as f64);
        assert!((m1 - 1.0).abs() < 0.01, "{m1}");
        assert!((m2 - 10.0).abs() < 0.4, "{m2}"); // E[S^2] = (SCV + 1) E[S]^2
                                                  // Erlang-3, mean 1: second moment 4/3
        let e = Law::new(&[1.0, 0.0, 0.0], &[-3.0, 3.0, 0.0, 0.0, -3.0, 3.0, 0.0, 0.0, -3.0]);
        let s2: f64 = (0..n).map(|_| e.sample(&mut rng).powi(2)).sum::<f64>() / n as f64;
        assert!((s2 - 4.0 / 3.0).abs() < 0.01, "{s2}");
    }

    /// Certain starts and steps are found (no draw), uncertain ones are not.
    #[test]
    fn certain_moves_need_no_draw() {
        assert_eq!(sure_pick(&[1.0, 1.0]), Some(0));
        assert_eq!(sure_pick(&[0.0, 1.0]), Some(1));
        assert_eq!(sure_pick(&[0.3, 1.0]), None);
        assert_eq!(sure_pick(&[0.0, 0.0]), None);
        // Coxian H2: starts in phase 0; phase 0 moves on or completes, phase 1 only completes
        let law = Law::new(&[1.0, 0.0], &[-2.0, 1.0, 0.0, -0.5]);
        assert_eq!(law.sure_start, Some(0));
        assert_eq!(law.sure_next, vec![None, Some(2)]);
        let one = Law::new(&[1.0], &[-1.0]);
        assert_eq!((one.sure_start, one.sure_next.clone()), (Some(0), vec![Some(1)]));
    }

    /// Through arrivals (two-sample routing from the event's uniform) and phase events, the
    /// cached service rate equals its sum over the phases, every server sits in the set of its
    /// state and the level counts match the queues.
    #[test]
    fn cached_rates_and_sets_follow_the_queues() {
        let law = Law::new(&[0.6, 0.4], &[-2.0, 1.0, 0.5, -0.5]);
        let mut rng = Rng::seed_from_u64(4);
        let mut f = PhaseQueues::new(8, 0.9, None, law, Routing::PodLi(2, 0.2));
        for step in 0..20_000 {
            let rate = f.rate();
            f.event(step as f64 * 1e-3, rate, &mut rng);
            let exact: f64 = (0..2).map(|i| f.busy_in[i] as f64 * f.law.rate[i]).sum();
            assert_eq!(f.service_rate, exact);
            let busy = f.q.iter().filter(|&&x| x > 0).count() as u32;
            assert_eq!(f.sets.len(0), 8 - busy);
            assert_eq!(f.busy_in.iter().sum::<u32>(), busy);
            for g in 0..3 {
                for i in 0..f.sets.len(g) {
                    assert_eq!(f.q[f.sets.at(g, i) as usize] > 0, g > 0);
                }
            }
        }
    }

    /// JIQ (routing from the event's uniform, the idle server moved by index) with a law that
    /// starts in either phase and moves both ways: the sets, the cached rate and the phase
    /// integrals (phase 0's derived from the busy servers') follow the queues.
    #[test]
    fn jiq_keeps_sets_and_phase_integrals() {
        let law = Law::new(&[0.5, 0.5], &[-2.0, 1.0, 0.5, -1.0]);
        let mut rng = Rng::seed_from_u64(6);
        let mut f = PhaseQueues::new(6, 0.9, None, law, Routing::Jiq);
        let (mut t, mut exact) = (0.0, [0.0f64; 2]);
        for _ in 0..20_000 {
            let rate = f.rate();
            let dt = 1e-3;
            for (i, e) in exact.iter_mut().enumerate() {
                *e += f.busy_in[i] as f64 * dt;
            }
            t += dt;
            f.event(t, rate, &mut rng);
            let total: f64 = (0..2).map(|i| f.busy_in[i] as f64 * f.law.rate[i]).sum();
            assert_eq!(f.service_rate, total);
            let busy = f.q.iter().filter(|&&x| x > 0).count() as u32;
            assert_eq!(f.sets.len(0), 6 - busy);
            for p in 0..2 {
                for i in 0..f.sets.len(1 + p) {
                    assert!(f.q[f.sets.at(1 + p, i) as usize] > 0);
                }
            }
        }
        let mut out = Batch::default();
        f.close(t, t, &mut out);
        for (i, e) in exact.iter().enumerate() {
            let got = out.extras[i] * 6.0 * t;
            assert!((got - e).abs() < 1e-9 * e.max(1.0), "phase {i}: {got} vs {e}");
        }
    }
}
