//! The event-driven simulation of one replication: the system state, the routing rules and the
//! event loop. Nothing here knows about mean-field drifts; it only applies the system's rules
//! (sampling, routing, service) to N queues.

use rand::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The random number generator of one replication.
pub(crate) type Rng = Xoshiro256PlusPlus;

/// A uniform index in `0..n` (`n >= 1`) by the widening multiply `(r * n) >> 64` of one 64-bit
/// draw (Lemire). The non-uniformity is at most `n / 2^64` (< 1e-9 for any `n < 2^32`).
#[inline(always)]
pub(crate) fn index(rng: &mut Rng, n: u32) -> u32 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u32
}

/// A uniform number in `[0, 1)` with 53 random bits.
#[inline(always)]
pub(crate) fn uniform(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// An exponential(1) variate, `-ln(U)` with `U` uniform in `(0, 1]`.
#[inline(always)]
pub(crate) fn exp1(rng: &mut Rng) -> f64 {
    -(1.0 - uniform(rng)).ln()
}

/// An exponential(1) variate by the ziggurat (Marsaglia and Tsang, "The ziggurat method for
/// generating random variables", J. Stat. Softw. 5(8), 2000), as `rand_distr::Exp1` draws it: one
/// 64-bit draw and a table look-up in about 99% of the calls, a logarithm only in the rare tail
/// or wedge cases. About half the cost of [`exp1`], whose stream it does not reproduce.
#[inline(always)]
pub(crate) fn exp1_ziggurat(rng: &mut Rng) -> f64 {
    rand_distr::Distribution::sample(&rand_distr::Exp1, rng)
}

/// A Bernoulli(`p`) coin. Draws nothing for `p <= 0` or `p >= 1`.
#[inline(always)]
pub(crate) fn coin(rng: &mut Rng, p: f64) -> bool {
    if p <= 0.0 {
        false
    } else if p >= 1.0 {
        true
    } else {
        uniform(rng) < p
    }
}

/// State of the N queues.
///
/// `perm` holds every server once: the busy ones (queue length >= 1) in `perm[..busy]`, the idle
/// ones in `perm[busy..]`; `pos[s]` is the index of server `s` in `perm`. A uniformly random
/// busy (or idle) server is therefore one index draw, and a server changes side by one swap.
///
/// `count[k]` (`k >= 1`) is the number of servers with at least `k` jobs, so `x_k = count[k] / N`.
/// Its time integral is kept lazily: `integral[k]` holds `int count[k] dt` up to `last[k]`,
/// updated only when `count[k]` changes. Every event therefore costs O(1).
pub(crate) struct System {
    n: u32,
    q: Vec<u32>,
    perm: Vec<u32>,
    pos: Vec<u32>,
    busy: u32,
    count: Vec<u32>,
    integral: Vec<f64>,
    last: Vec<f64>,
}

impl System {
    /// `n` empty servers; level storage for `levels` levels (grown on demand).
    pub(crate) fn new(n: u32, levels: usize) -> Self {
        let levels = levels.max(2);
        System {
            n,
            q: vec![0; n as usize],
            perm: (0..n).collect(),
            pos: (0..n).collect(),
            busy: 0,
            count: vec![0; levels + 1],
            integral: vec![0.0; levels + 1],
            last: vec![0.0; levels + 1],
        }
    }

    #[inline(always)]
    fn queue(&self, s: u32) -> u32 {
        self.q[s as usize]
    }

    /// Moves server `s` (currently idle) into the busy part of `perm`.
    #[inline(always)]
    fn make_busy(&mut self, s: u32) {
        let i = self.pos[s as usize];
        let j = self.busy;
        let other = self.perm[j as usize];
        self.perm.swap(i as usize, j as usize);
        self.pos[other as usize] = i;
        self.pos[s as usize] = j;
        self.busy += 1;
    }

    /// Moves the busy server at `perm[i]` into the idle part.
    #[inline(always)]
    fn make_idle_at(&mut self, i: u32) {
        let j = self.busy - 1;
        let s = self.perm[i as usize];
        let other = self.perm[j as usize];
        self.perm.swap(i as usize, j as usize);
        self.pos[other as usize] = i;
        self.pos[s as usize] = j;
        self.busy = j;
    }

    #[inline(always)]
    fn touch(&mut self, k: usize, t: f64) {
        self.integral[k] += self.count[k] as f64 * (t - self.last[k]);
        self.last[k] = t;
    }

    #[cold]
    fn grow(&mut self, k: usize) {
        let new_len = (k + 1).max(self.count.len() * 2);
        // levels never reached before have count 0, so their `last` time does not matter
        self.count.resize(new_len, 0);
        self.integral.resize(new_len, 0.0);
        self.last.resize(new_len, 0.0);
    }

    /// Adds one job to server `s` at time `t`; returns its queue length before the arrival.
    #[inline(always)]
    fn add_job(&mut self, s: u32, t: f64) -> u32 {
        let before = self.q[s as usize];
        let k = before as usize + 1;
        if k >= self.count.len() {
            self.grow(k);
        }
        self.touch(k, t);
        self.count[k] += 1;
        self.q[s as usize] = before + 1;
        if before == 0 {
            self.make_busy(s);
        }
        before
    }

    /// Completes one job at a uniformly random busy server at time `t` (requires `busy >= 1`).
    #[inline(always)]
    fn depart(&mut self, rng: &mut Rng, t: f64) {
        let i = index(rng, self.busy);
        let s = self.perm[i as usize];
        let before = self.q[s as usize];
        let k = before as usize;
        self.touch(k, t);
        self.count[k] -= 1;
        self.q[s as usize] = before - 1;
        if before == 1 {
            self.make_idle_at(i);
        }
    }

    /// Brings every level integral up to time `t` and returns them (`[k]` for level `k`, `[0]`
    /// unused), then restarts the integrals from zero at `t`.
    fn take_integrals(&mut self, t: f64, out: &mut Vec<f64>) {
        out.clear();
        let top = self.count.iter().rposition(|&c| c > 0).unwrap_or(0);
        for k in 1..self.count.len() {
            self.touch(k, t);
        }
        // keep trailing levels that were occupied during the segment even if empty now
        let used = self.integral.iter().rposition(|&v| v > 0.0).unwrap_or(0).max(top);
        out.extend_from_slice(&self.integral[..=used]);
        out[0] = 0.0;
        self.integral.iter_mut().for_each(|v| *v = 0.0);
    }
}

/// A routing rule: picks the server an arriving job is sent to.
pub(crate) trait Router {
    /// The chosen server (the caller checks the buffer).
    fn route(&mut self, sys: &System, rng: &mut Rng) -> u32;
}

/// JSQ(d) for general `d`: `d` servers sampled uniformly **with replacement**, a least-loaded one
/// joined, ties uniformly among the tied samples (reservoir choice).
pub(crate) struct JsqD {
    pub d: u32,
}

impl Router for JsqD {
    #[inline(always)]
    fn route(&mut self, sys: &System, rng: &mut Rng) -> u32 {
        let mut best = index(rng, sys.n);
        let mut bq = sys.queue(best);
        let mut ties = 1u32;
        for _ in 1..self.d {
            let c = index(rng, sys.n);
            let qc = sys.queue(c);
            if qc < bq {
                best = c;
                bq = qc;
                ties = 1;
            } else if qc == bq {
                ties += 1;
                if index(rng, ties) == 0 {
                    best = c;
                }
            }
        }
        best
    }
}

/// JSQ(2), the same rule as [`JsqD`] with `d = 2`, unrolled.
pub(crate) struct Jsq2;

impl Router for Jsq2 {
    #[inline(always)]
    fn route(&mut self, sys: &System, rng: &mut Rng) -> u32 {
        let a = index(rng, sys.n);
        let b = index(rng, sys.n);
        let (qa, qb) = (sys.queue(a), sys.queue(b));
        if qa < qb || (qa == qb && (rng.next_u64() >> 63) == 0) {
            a
        } else {
            b
        }
    }
}

/// Random routing (JSQ(1)): one uniformly random server.
pub(crate) struct Random;

impl Router for Random {
    #[inline(always)]
    fn route(&mut self, sys: &System, rng: &mut Rng) -> u32 {
        index(rng, sys.n)
    }
}

/// Pod with comparison errors. `d = buf.len()` samples with replacement into `buf`, `lo`/`hi` = min/max of
/// their queue lengths. The job joins a most-loaded sample when an error happens, else a
/// least-loaded one (ties uniformly among the tied samples). Load-independent: an error happens
/// with probability `eps`. Load-dependent (`g = Some(g)`): with probability `eps` only if
/// `hi - lo <= g`.
pub(crate) struct Pod {
    pub eps: f64,
    pub g: Option<u32>,
    pub buf: Vec<u32>,
}

impl Router for Pod {
    #[inline(always)]
    fn route(&mut self, sys: &System, rng: &mut Rng) -> u32 {
        let mut lo = u32::MAX;
        let mut hi = 0u32;
        for slot in self.buf.iter_mut() {
            let c = index(rng, sys.n);
            *slot = c;
            let qc = sys.queue(c);
            lo = lo.min(qc);
            hi = hi.max(qc);
        }
        let may_err = match self.g {
            None => true,
            Some(g) => hi - lo <= g,
        };
        let target = if may_err && coin(rng, self.eps) { hi } else { lo };
        // uniform among the samples at the target level (reservoir)
        let mut chosen = u32::MAX;
        let mut ties = 0u32;
        for &c in &self.buf {
            if sys.queue(c) == target {
                ties += 1;
                if ties == 1 || index(rng, ties) == 0 {
                    chosen = c;
                }
            }
        }
        chosen
    }
}

/// Join-Idle-Queue: a uniformly random idle server if there is one, else a uniformly random server.
pub(crate) struct Jiq;

impl Router for Jiq {
    #[inline(always)]
    fn route(&mut self, sys: &System, rng: &mut Rng) -> u32 {
        let idle = sys.n - sys.busy;
        if idle > 0 {
            sys.perm[(sys.busy + index(rng, idle)) as usize]
        } else {
            index(rng, sys.n)
        }
    }
}

/// What one batch (a stretch of simulated time after the warm-up) recorded.
#[derive(Debug, Clone, Default)]
pub(crate) struct Batch {
    /// Length of the batch in time units.
    pub duration: f64,
    /// `[k]` = integral over the batch of the number of servers with at least `k` jobs (`[0]` unused).
    pub level_integral: Vec<f64>,
    /// Arrivals that joined a server.
    pub accepted: u64,
    /// Arrivals lost at a full buffer.
    pub lost: u64,
    /// Accepted arrivals that joined a busy server.
    pub waited: u64,
    /// Service completions.
    pub departures: u64,
    /// Family-specific values of the batch (see `families::Layout`); empty for JSQ/Pod/JIQ.
    pub extras: Vec<f64>,
}

/// The result of one replication.
#[derive(Debug, Clone)]
pub(crate) struct Replication {
    /// Post-warm-up batches, in time order.
    pub batches: Vec<Batch>,
    /// Events (arrivals, lost ones included, and departures) over the whole run, warm-up included.
    pub events: u64,
    /// Whether the wall-clock deadline stopped it (the unfinished batch is dropped).
    pub timed_out: bool,
}

/// Run parameters of one replication.
pub(crate) struct RunParams<'a> {
    pub n: u32,
    pub lambda: f64,
    pub buffer: Option<u32>,
    pub warmup: f64,
    pub time: f64,
    pub batches: usize,
    pub tick: &'a (dyn Fn() + Sync),
    /// Wall-clock deadline and cancel flag, checked every [`crate::DEADLINE_CHECK_EVENTS`] events.
    pub deadline: &'a mfq_model::Deadline,
}

impl RunParams<'_> {
    /// Whether the run must stop after `events` events: every [`crate::DEADLINE_CHECK_EVENTS`]
    /// events, whether the deadline has passed or the job was cancelled.
    #[inline]
    pub fn out_of_time(&self, events: u64) -> bool {
        events % crate::DEADLINE_CHECK_EVENTS == 0 && self.deadline.expired()
    }
}

/// Simulates from the empty state: a warm-up of `warmup`, then `batches` batches of
/// `time / batches` each. Competing exponentials: the next event comes after Exp(N lambda + busy)
/// and is an arrival with probability `N lambda / (N lambda + busy)`, else a departure from a
/// uniformly random busy server (unit-rate exponential service, FCFS). When the next event
/// would fall after a segment end, the clock is set to the segment end and the event is
/// redrawn (memorylessness), so segment boundaries are exact.
pub(crate) fn run<R: Router>(router: &mut R, p: &RunParams, rng: &mut Rng) -> Replication {
    let mut sys = System::new(p.n, 64);
    let arrival_rate = p.n as f64 * p.lambda;
    let buffer = p.buffer.unwrap_or(u32::MAX);
    let mut t = 0.0f64;
    let mut events = 0u64;
    let mut batches = Vec::with_capacity(p.batches);
    let mut scratch = Vec::new();
    let batch_len = p.time / p.batches as f64;
    let mut timed_out = false;
    // segment 0 is the warm-up, segments 1..=batches are the batches
    for seg in 0..=p.batches {
        let end = if seg == 0 { p.warmup } else { p.warmup + batch_len * seg as f64 };
        let start = t;
        let (mut accepted, mut lost, mut waited, mut departures) = (0u64, 0u64, 0u64, 0u64);
        loop {
            if p.out_of_time(events) {
                timed_out = true;
                break;
            }
            let rate = arrival_rate + sys.busy as f64;
            let next = t + exp1(rng) / rate;
            if next > end {
                break;
            }
            t = next;
            events += 1;
            if uniform(rng) * rate < arrival_rate {
                let s = router.route(&sys, rng);
                if sys.queue(s) >= buffer {
                    lost += 1;
                } else {
                    let before = sys.add_job(s, t);
                    accepted += 1;
                    waited += (before > 0) as u64;
                }
            } else {
                sys.depart(rng, t);
                departures += 1;
            }
        }
        if timed_out {
            break;
        }
        t = end;
        sys.take_integrals(t, &mut scratch);
        if seg > 0 {
            batches.push(Batch {
                duration: end - start,
                level_integral: scratch.clone(),
                accepted,
                lost,
                waited,
                departures,
                extras: Vec::new(),
            });
        }
        (p.tick)();
    }
    Replication { batches, events, timed_out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The bookkeeping (perm/pos, busy count, level counts) stays consistent with the queues.
    #[test]
    fn state_invariants_hold_through_random_events() {
        let mut rng = Rng::seed_from_u64(7);
        let mut sys = System::new(50, 2);
        let mut t = 0.0;
        for step in 0..200_000 {
            t += 0.001;
            if sys.busy == 0 || uniform(&mut rng) < 0.55 {
                let s = index(&mut rng, sys.n);
                sys.add_job(s, t);
            } else {
                sys.depart(&mut rng, t);
            }
            if step % 997 == 0 {
                let busy = sys.q.iter().filter(|&&v| v > 0).count() as u32;
                assert_eq!(busy, sys.busy);
                for (i, &s) in sys.perm.iter().enumerate() {
                    assert_eq!(sys.pos[s as usize] as usize, i);
                    assert_eq!(sys.q[s as usize] > 0, (i as u32) < sys.busy);
                }
                for k in 1..sys.count.len() {
                    let c = sys.q.iter().filter(|&&v| v as usize >= k).count() as u32;
                    assert_eq!(c, sys.count[k], "level {k}");
                }
            }
        }
    }

    /// The lazy integrals equal the integrals computed by brute force.
    #[test]
    fn lazy_integrals_match_brute_force() {
        let mut rng = Rng::seed_from_u64(3);
        let mut sys = System::new(20, 2);
        let mut brute = vec![0.0; 200];
        let mut t = 0.0;
        for _ in 0..20_000 {
            let dt = exp1(&mut rng) * 0.01;
            for (k, b) in brute.iter_mut().enumerate().skip(1) {
                *b += sys.q.iter().filter(|&&v| v as usize >= k).count() as f64 * dt;
            }
            t += dt;
            if sys.busy == 0 || uniform(&mut rng) < 0.5 {
                let s = index(&mut rng, sys.n);
                sys.add_job(s, t);
            } else {
                sys.depart(&mut rng, t);
            }
        }
        let mut out = Vec::new();
        sys.take_integrals(t, &mut out);
        for k in 1..out.len() {
            assert!((out[k] - brute[k]).abs() < 1e-8 * brute[1].max(1.0), "level {k}: {} vs {}", out[k], brute[k]);
        }
        assert!(brute[out.len()..].iter().all(|&v| v == 0.0));
    }

    /// Pod routing with eps = 0 is JSQ(d); with eps = 1 and g = None it joins a longest sample.
    #[test]
    fn pod_routing_picks_min_or_max() {
        let mut rng = Rng::seed_from_u64(11);
        let mut sys = System::new(6, 8);
        for (s, len) in [0u32, 1, 2, 3, 4, 5].iter().zip([0u32, 1, 2, 3, 4, 5]) {
            for _ in 0..len {
                sys.add_job(*s, 0.0);
            }
        }
        let mut min_router = Pod { eps: 0.0, g: None, buf: vec![0; 6] };
        let mut max_router = Pod { eps: 1.0, g: None, buf: vec![0; 6] };
        let mut ld = Pod { eps: 1.0, g: Some(0), buf: vec![0; 6] };
        for _ in 0..1000 {
            let a = min_router.route(&sys, &mut rng);
            let b = max_router.route(&sys, &mut rng);
            let c = ld.route(&sys, &mut rng);
            let samples = &max_router.buf;
            assert!(samples.iter().all(|&s| sys.queue(b) >= sys.queue(s)));
            assert!(ld.buf.iter().all(|&s| sys.queue(c) <= sys.queue(s)) || ld.buf.iter().all(|&s| sys.queue(s) == sys.queue(c)));
            assert!(min_router.buf.iter().all(|&s| sys.queue(a) <= sys.queue(s)));
        }
    }

    /// JIQ picks an idle server whenever there is one.
    #[test]
    fn jiq_prefers_idle_servers() {
        let mut rng = Rng::seed_from_u64(5);
        let mut sys = System::new(10, 4);
        for s in 0..9 {
            sys.add_job(s, 0.0);
        }
        for _ in 0..100 {
            assert_eq!(Jiq.route(&sys, &mut rng), 9);
        }
        sys.add_job(9, 0.0);
        let mut seen = [false; 10];
        for _ in 0..1000 {
            seen[Jiq.route(&sys, &mut rng) as usize] = true;
        }
        assert!(seen.iter().all(|&v| v));
    }
}
