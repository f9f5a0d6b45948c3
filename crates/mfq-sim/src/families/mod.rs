//! Event-driven simulators of the model families beyond JSQ(d)/Pod/JIQ: heterogeneous server
//! classes, phase-type job sizes and LL(d), redundancy-d, opinion dynamics, the closed batch network.
//!
//! Like [`crate::engine`], nothing here knows about mean-field drifts: each family applies its
//! system's rules (sampling, routing, service) to `N` individual servers or agents. The shared
//! pieces are the segment loops ([`drive`] for exponential event rates, [`drive_timed`] for Poisson
//! arrivals beside timed events), sets as segments of one permutation ([`Segments`]), lazily
//! integrated level counts ([`Levels`]) and lazily integrated scalars ([`Tracked`]).

pub(crate) mod batch;
pub(crate) mod graph;
pub(crate) mod hetero;
pub(crate) mod k_of_n;
pub(crate) mod lqf;
pub(crate) mod moldable;
pub(crate) mod opinion;
pub(crate) mod phase;
pub(crate) mod redundancy;

use crate::engine::{exp1, index, Batch, Replication, Rng, RunParams};

/// A simulated system: its total event rate in the current state, one event, and the closing of
/// a segment (batch or warm-up) that writes what the segment recorded.
pub(crate) trait Family {
    /// Total rate of the next event in the current state (`> 0`).
    fn rate(&self) -> f64;
    /// Performs one event at time `t` (chosen with probability proportional to its rate);
    /// `rate` is [`rate`](Family::rate) in the state before the event.
    fn event(&mut self, t: f64, rate: f64, rng: &mut Rng);
    /// Closes the segment ending at `t` of length `duration`: fills `out` and restarts every
    /// counter and integral from zero.
    fn close(&mut self, t: f64, duration: f64, out: &mut Batch);
}

/// Runs one replication of `f`: a warm-up, then `p.batches` batches, with exact segment
/// boundaries (an event that would fall after the boundary is redrawn from there:
/// memorylessness, as in [`crate::engine::run`]).
pub(crate) fn drive<F: Family>(f: &mut F, p: &RunParams, rng: &mut Rng) -> Replication {
    let mut t = 0.0f64;
    let mut events = 0u64;
    let mut batches = Vec::with_capacity(p.batches);
    let batch_len = p.time / p.batches as f64;
    let mut scratch = Batch::default();
    let mut timed_out = false;
    for seg in 0..=p.batches {
        let end = if seg == 0 { p.warmup } else { p.warmup + batch_len * seg as f64 };
        let start = t;
        loop {
            if p.out_of_time(events) {
                timed_out = true;
                break;
            }
            let rate = f.rate();
            let next = t + exp1(rng) / rate;
            if next > end || !next.is_finite() {
                break;
            }
            t = next;
            events += 1;
            f.event(t, rate, rng);
        }
        if timed_out {
            break;
        }
        t = end;
        f.close(t, end - start, &mut scratch);
        scratch.duration = end - start;
        if seg > 0 {
            batches.push(scratch.clone());
        }
        (p.tick)();
    }
    Replication { batches, events, timed_out }
}

/// A system with timed events held in a queue (completions of non-exponential work, removals)
/// beside competing exponential events of total rate [`markov_rate`](TimedFamily::markov_rate)
/// (Poisson arrivals, and completions of exponential work): the moldable-job and k-of-n systems.
pub(crate) trait TimedFamily {
    /// Total rate of the exponential events in the current state (`> 0`: the arrivals at least).
    fn markov_rate(&self) -> f64;
    /// Time of the next timed event (infinite when none is pending).
    fn next_event(&self) -> f64;
    /// One exponential event at time `t`, chosen with probability proportional to its rate;
    /// `rate` is [`markov_rate`](TimedFamily::markov_rate) before the event.
    fn on_markov(&mut self, t: f64, rate: f64, rng: &mut Rng);
    /// Performs the next timed event (the one at [`next_event`](TimedFamily::next_event));
    /// false when the entry was stale (cancelled since it was scheduled): not an event.
    fn on_event(&mut self, rng: &mut Rng) -> bool;
    /// As [`Family::close`].
    fn end_segment(&mut self, t: f64, duration: f64, out: &mut Batch);
    /// An exponential time of rate `rate`, the [`markov_rate`](TimedFamily::markov_rate) of the
    /// current state: the time to the next exponential event. `exp1(rng) / rate` unless the
    /// family draws it otherwise (another sampler of the same law, a precomputed inverse rate).
    #[inline(always)]
    fn holding_time(&self, rate: f64, rng: &mut Rng) -> f64 {
        exp1(rng) / rate
    }
}

/// Runs one replication of `f`: a warm-up, then `p.batches` batches with exact boundaries. The
/// time of the next exponential event is kept while their total rate is unchanged and redrawn
/// from the current time when it changes, and at each boundary (memorylessness); timed events
/// keep their times. With a constant rate (Poisson arrivals only) this is one draw per arrival.
pub(crate) fn drive_timed<F: TimedFamily>(f: &mut F, p: &RunParams, rng_out: &mut Rng) -> Replication {
    // the generator's state in a local (written back at the end: the same stream), which the
    // compiler can keep in registers across the event's stores
    let mut local = rng_out.clone();
    let rng = &mut local;
    let mut t = 0.0f64;
    let mut events = 0u64;
    let mut batches = Vec::with_capacity(p.batches);
    let batch_len = p.time / p.batches as f64;
    let mut scratch = Batch::default();
    let mut timed_out = false;
    for seg in 0..=p.batches {
        let end = if seg == 0 { p.warmup } else { p.warmup + batch_len * seg as f64 };
        let start = t;
        let mut rate = f.markov_rate();
        let mut next_markov = t + f.holding_time(rate, rng);
        loop {
            if p.out_of_time(events) {
                timed_out = true;
                break;
            }
            let next_event = f.next_event();
            if next_markov.min(next_event) > end {
                break;
            }
            let now;
            if next_markov <= next_event {
                now = next_markov;
                events += 1;
                f.on_markov(now, rate, rng);
                let r = f.markov_rate();
                if r == rate {
                    next_markov += f.holding_time(rate, rng);
                    continue;
                }
                rate = r;
            } else {
                now = next_event;
                if !f.on_event(rng) {
                    continue;
                }
                events += 1;
                let r = f.markov_rate();
                if r == rate {
                    continue;
                }
                rate = r;
            }
            next_markov = now + f.holding_time(rate, rng);
        }
        if timed_out {
            break;
        }
        t = end;
        f.end_segment(t, end - start, &mut scratch);
        scratch.duration = end - start;
        if seg > 0 {
            batches.push(scratch.clone());
        }
        (p.tick)();
    }
    *rng_out = local;
    Replication { batches, events, timed_out }
}

/// `G` disjoint sets partitioning the items `0..n`, laid out as contiguous segments of one
/// permutation: set `g` is `perm[bound[g]..bound[g + 1]]`, and `pos[s]` is the index of item `s`
/// in `perm`. Moving an item to the next (previous) set is one swap with that set's last (first)
/// member and one boundary shift; a move across `k` sets is `k` such steps, so callers number
/// their sets so that the frequent moves are between neighbours. A uniformly random member of a
/// set, or of a run of consecutive sets, is one index draw. Nothing allocates after construction
/// except [`widen`](Segments::widen).
pub(crate) struct Segments {
    perm: Vec<u32>,
    pos: Vec<u32>,
    bound: Vec<u32>,
}

impl Segments {
    /// `n` items in `groups` sets, item `s` starting in set `initial(s) < groups`.
    pub(crate) fn new(n: u32, groups: usize, initial: impl Fn(u32) -> u32) -> Self {
        let mut bound = vec![0u32; groups + 1];
        for s in 0..n {
            bound[initial(s) as usize + 1] += 1;
        }
        for g in 0..groups {
            bound[g + 1] += bound[g];
        }
        let mut next = bound.clone();
        let mut perm = vec![0; n as usize];
        let mut pos = vec![0; n as usize];
        for s in 0..n {
            let g = initial(s) as usize;
            perm[next[g] as usize] = s;
            pos[s as usize] = next[g];
            next[g] += 1;
        }
        Segments { perm, pos, bound }
    }

    /// Number of members of set `g`.
    #[inline(always)]
    pub(crate) fn len(&self, g: usize) -> u32 {
        self.bound[g + 1] - self.bound[g]
    }

    /// A uniformly random member of the non-empty set `g`.
    #[cfg_attr(not(test), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn pick(&self, g: usize, rng: &mut Rng) -> u32 {
        self.pick_span(g, g + 1, rng)
    }

    /// A uniformly random member of the sets `from..to` together (not all empty).
    #[cfg_attr(not(test), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn pick_span(&self, from: usize, to: usize, rng: &mut Rng) -> u32 {
        let lo = self.bound[from];
        self.perm[(lo + index(rng, self.bound[to] - lo)) as usize]
    }

    /// The `r`-th member of the sets `from..` together (`r` below their total size) and its
    /// index in the permutation.
    #[inline(always)]
    pub(crate) fn at_span(&self, from: usize, r: u32) -> (u32, u32) {
        let i = self.bound[from] + r;
        (self.perm[i as usize], i)
    }

    /// Moves the member at index `i` of the permutation, in set `g`, to set `g + 1`: one swap
    /// (as [`move_between`](Segments::move_between) without looking the member up).
    #[inline(always)]
    pub(crate) fn promote_at(&mut self, i: u32, g: usize) {
        debug_assert!((self.bound[g]..self.bound[g + 1]).contains(&i));
        let j = self.bound[g + 1] - 1;
        self.swap_at(i, j);
        self.bound[g + 1] = j;
    }

    /// Moves the member at index `i` of the permutation, in set `g >= 1`, to set `g - 1`: one
    /// swap (as [`move_between`](Segments::move_between) without looking the member up).
    #[inline(always)]
    pub(crate) fn demote_at(&mut self, i: u32, g: usize) {
        debug_assert!(g >= 1 && (self.bound[g]..self.bound[g + 1]).contains(&i));
        let j = self.bound[g];
        self.swap_at(i, j);
        self.bound[g] = j + 1;
    }

    /// Swaps the members at indices `i` and `j` of the permutation.
    #[inline(always)]
    fn swap_at(&mut self, i: u32, j: u32) {
        let (a, b) = (self.perm[i as usize], self.perm[j as usize]);
        self.perm[i as usize] = b;
        self.perm[j as usize] = a;
        self.pos[b as usize] = i;
        self.pos[a as usize] = j;
    }

    /// The `i`-th member of set `g` (`i < len(g)`) in the current layout.
    #[cfg_attr(not(test), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn at(&self, g: usize, i: u32) -> u32 {
        self.perm[(self.bound[g] + i) as usize]
    }

    /// Swaps item `s` with the item at index `j` of `perm`.
    #[inline(always)]
    fn swap_to(&mut self, s: u32, j: u32) {
        let i = self.pos[s as usize];
        let other = self.perm[j as usize];
        self.perm[i as usize] = other;
        self.perm[j as usize] = s;
        self.pos[other as usize] = i;
        self.pos[s as usize] = j;
    }

    /// Moves item `s` from set `from` (where it is) to set `to`: `|to - from|` swaps.
    #[inline(always)]
    pub(crate) fn move_between(&mut self, s: u32, from: usize, to: usize) {
        debug_assert!((self.bound[from]..self.bound[from + 1]).contains(&self.pos[s as usize]), "item {s} is not in set {from}");
        if to > from {
            for g in from + 1..=to {
                // `s` becomes the last member of set `g - 1`, then the first of set `g`
                let j = self.bound[g] - 1;
                self.swap_to(s, j);
                self.bound[g] = j;
            }
        } else {
            for g in (to + 1..=from).rev() {
                // `s` becomes the first member of set `g`, then the last of set `g - 1`
                let j = self.bound[g];
                self.swap_to(s, j);
                self.bound[g] = j + 1;
            }
        }
    }

    /// Renumbers sets in `blocks` runs of `old` consecutive sets (set `b old + k`) as runs of
    /// `new > old` (set `b new + k`), the added sets `b new + old .. (b + 1) new` empty: members
    /// stay where they are.
    #[cold]
    pub(crate) fn widen(&mut self, blocks: usize, old: usize, new: usize) {
        debug_assert!(new > old && self.bound.len() == blocks * old + 1);
        let mut bound = Vec::with_capacity(blocks * new + 1);
        for b in 0..blocks {
            bound.extend_from_slice(&self.bound[b * old..(b + 1) * old]);
            let end = self.bound[(b + 1) * old];
            bound.extend(std::iter::repeat_n(end, new - old));
        }
        bound.push(self.perm.len() as u32);
        self.bound = bound;
    }
}

/// A subset of the items `0..n` (e.g. the busy servers) as in [`crate::engine`]'s `System`: `perm`
/// holds every item once, the members in `perm[..len]`; `pos[s]` is the index of item `s` in
/// `perm`. Adding or removing a member is one swap; a uniformly random member is one index draw.
/// Nothing allocates after construction.
pub(crate) struct Subset {
    perm: Vec<u32>,
    pos: Vec<u32>,
    len: u32,
}

impl Subset {
    /// The empty subset of `0..n`.
    pub(crate) fn new(n: u32) -> Self {
        Subset { perm: (0..n).collect(), pos: (0..n).collect(), len: 0 }
    }

    /// Number of members.
    #[inline(always)]
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// Whether item `s` is a member.
    #[cfg_attr(not(test), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn contains(&self, s: u32) -> bool {
        self.pos[s as usize] < self.len
    }

    /// Makes item `s` (not a member) a member.
    #[inline(always)]
    pub(crate) fn insert(&mut self, s: u32) {
        let i = self.pos[s as usize];
        let j = self.len;
        let other = self.perm[j as usize];
        self.perm[i as usize] = other;
        self.perm[j as usize] = s;
        self.pos[other as usize] = i;
        self.pos[s as usize] = j;
        self.len = j + 1;
    }

    /// Removes member `s`.
    #[inline(always)]
    pub(crate) fn remove(&mut self, s: u32) {
        let i = self.pos[s as usize];
        let j = self.len - 1;
        let other = self.perm[j as usize];
        self.perm[i as usize] = other;
        self.perm[j as usize] = s;
        self.pos[other as usize] = i;
        self.pos[s as usize] = j;
        self.len = j;
    }

    /// A uniformly random member (requires `len() >= 1`).
    #[inline(always)]
    pub(crate) fn pick(&self, rng: &mut Rng) -> u32 {
        self.perm[index(rng, self.len) as usize]
    }
}

/// Lazily integrated counts `count[k]` = number of servers with at least `k` jobs (`k >= 1`),
/// as in [`crate::engine`]'s `System`: `integral[k]` is brought up to date only when `count[k]`
/// changes. The three values of a level sit together (one bounds check, one cache line).
pub(crate) struct Levels {
    cells: Vec<LevelCell>,
}

/// Level `k`'s count, its integral up to `last`, and `last`.
#[derive(Clone, Copy, Default)]
struct LevelCell {
    count: u32,
    integral: f64,
    last: f64,
}

impl LevelCell {
    #[inline(always)]
    fn touch(&mut self, t: f64) {
        self.integral += self.count as f64 * (t - self.last);
        self.last = t;
    }
}

impl Levels {
    pub(crate) fn new() -> Self {
        Levels { cells: vec![LevelCell::default(); 65] }
    }

    #[cold]
    fn grow(&mut self, k: usize) {
        let new_len = (k + 1).max(self.cells.len() * 2);
        self.cells.resize(new_len, LevelCell::default());
    }

    /// A server went from `before` to `before + 1` jobs at time `t`.
    #[inline(always)]
    pub(crate) fn up(&mut self, before: u32, t: f64) {
        let k = before as usize + 1;
        if k >= self.cells.len() {
            self.grow(k);
        }
        let c = &mut self.cells[k];
        c.touch(t);
        c.count += 1;
    }

    /// A server went from `before >= 1` to `before - 1` jobs at time `t`.
    #[inline(always)]
    pub(crate) fn down(&mut self, before: u32, t: f64) {
        let c = &mut self.cells[before as usize];
        c.touch(t);
        c.count -= 1;
    }

    /// The integrals up to `t` (`[k]` for level `k`, `[0] = 0`), then restarted from zero.
    pub(crate) fn take(&mut self, t: f64, out: &mut Vec<f64>) {
        out.clear();
        let top = self.cells.iter().rposition(|c| c.count > 0).unwrap_or(0);
        for c in &mut self.cells[1..] {
            c.touch(t);
        }
        let used = self.cells.iter().rposition(|c| c.integral > 0.0).unwrap_or(0).max(top);
        out.extend(self.cells[..=used].iter().map(|c| c.integral));
        out[0] = 0.0;
        self.cells.iter_mut().for_each(|c| c.integral = 0.0);
    }
}

/// A scalar (a count) with its lazily kept time integral.
#[derive(Clone, Copy, Default)]
pub(crate) struct Tracked {
    pub value: f64,
    integral: f64,
    last: f64,
}

impl Tracked {
    /// Adds `delta` to the value at time `t`.
    #[inline(always)]
    pub(crate) fn add(&mut self, delta: f64, t: f64) {
        self.integral += self.value * (t - self.last);
        self.last = t;
        self.value += delta;
    }

    /// The integral since the last call, up to `t`; restarts it from zero.
    pub(crate) fn take(&mut self, t: f64) -> f64 {
        let v = self.integral + self.value * (t - self.last);
        self.integral = 0.0;
        self.last = t;
        v
    }
}

/// Index `i` with probability `w[i] / sum(w)` by a linear scan of the cumulative weights
/// (`cum` = running sums, last = total). For the few classes or phases of a model.
#[inline(always)]
pub(crate) fn pick_cumulative(cum: &[f64], u: f64) -> usize {
    let target = u * cum[cum.len() - 1];
    for (i, &c) in cum.iter().enumerate() {
        if target < c {
            return i;
        }
    }
    cum.len() - 1
}

/// Running sums of per-class (or per-phase) service rates: `cum[i] = sum_{j <= i} count[j]
/// weight[j]` for `i < cum.len()` (busy servers times speed, or jobs in a phase times its
/// rate), in this order so that the values are bit for bit those of a loop; returns the total.
/// `count` and `weight` have at least `cum.len()` entries.
#[inline(always)]
pub(crate) fn running_rates(count: &[u32], weight: &[f64], cum: &mut [f64]) -> f64 {
    let m = cum.len();
    let (count, weight) = (&count[..m], &weight[..m]);
    let mut acc = 0.0;
    for i in 0..m {
        acc += count[i] as f64 * weight[i];
        cum[i] = acc;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Random moves (and a widening) keep `perm`/`pos`/`bound` consistent with a plain list of
    /// each item's set.
    #[test]
    fn segments_stay_consistent() {
        let mut rng = Rng::seed_from_u64(1);
        let (mut per, n) = (2usize, 40u32);
        let mut g = Segments::new(n, 3 * per, |s| 2 * (s % 3));
        let mut set: Vec<usize> = (0..n as usize).map(|s| 2 * (s % 3)).collect();
        for step in 0..20_000 {
            if step == 10_000 {
                g.widen(3, 2, 5);
                set.iter_mut().for_each(|k| *k = *k / 2 * 5 + *k % 2);
                per = 5;
            }
            let s = index(&mut rng, n);
            let to = index(&mut rng, 3 * per as u32) as usize;
            g.move_between(s, set[s as usize], to);
            set[s as usize] = to;
            for k in 0..3 * per {
                assert_eq!(g.len(k) as usize, set.iter().filter(|&&x| x == k).count());
                for i in 0..g.len(k) {
                    let s = g.at(k, i);
                    assert_eq!(set[s as usize], k);
                    assert_eq!(g.pos[s as usize], g.bound[k] + i);
                }
                if g.len(k) > 0 {
                    assert_eq!(set[g.pick(k, &mut rng) as usize], k);
                }
            }
        }
    }

    /// Random insertions and removals keep `perm`/`pos` consistent with a plain membership list.
    #[test]
    fn subset_stays_consistent() {
        let mut rng = Rng::seed_from_u64(2);
        let mut set = Subset::new(30);
        let mut member = [false; 30];
        for _ in 0..20_000 {
            let s = index(&mut rng, 30);
            if member[s as usize] {
                set.remove(s);
            } else {
                set.insert(s);
            }
            member[s as usize] = !member[s as usize];
            assert_eq!(set.len() as usize, member.iter().filter(|&&m| m).count());
            for (i, &m) in member.iter().enumerate() {
                assert_eq!(set.contains(i as u32), m);
                assert_eq!(set.perm[set.pos[i] as usize], i as u32);
            }
            if set.len() > 0 {
                assert!(member[set.pick(&mut rng) as usize]);
            }
        }
    }

    #[test]
    fn tracked_integrates_piecewise_constants() {
        let mut x = Tracked::default();
        x.add(2.0, 1.0); // 0 on [0,1]
        x.add(-1.0, 3.0); // 2 on [1,3]
        assert!((x.take(4.0) - 5.0).abs() < 1e-12); // + 1 on [3,4]
        assert!((x.take(5.0) - 1.0).abs() < 1e-12);
    }
}
