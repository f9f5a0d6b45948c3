//! Redundancy-d with i.i.d. exponential(1) copies and cancel-on-first-completion.
//!
//! Each job sends copies to `d` **distinct** servers chosen uniformly at random; it leaves when
//! its first copy completes and its other copies are removed at once. Each server keeps its
//! copies in arrival order (a doubly linked list through a slab of copy slots: removing a
//! cancelled copy from the middle of a queue is O(1)). With i.i.d. exponential copies a busy
//! server completes one copy at rate 1 whatever the discipline; the discipline decides which:
//!
//! - PS: a uniformly random copy of the server;
//! - FCFS: the oldest;
//! - LPS(k): a uniformly random one of the `min(Q, k)` oldest;
//! - LCFS (preemptive): the newest.
//!
//! Events: arrivals at `N lambda`, completions at rate `B` (busy servers), the server uniform
//! among the busy ones. The queue length of a server is its number of copies.
//!
//! Each list is circular through a sentinel slot (slot `s` for server `s`: its `next` is the
//! oldest copy, its `prev` the newest), so appending and unlinking a copy take no branch; job
//! `j` owns the copy slots `j d .. (j + 1) d`, after the sentinels. With `d = 2` the second
//! server is drawn uniformly among the `N - 1` others (one draw, no rejection) and a copy's
//! sibling is slot `c ^ 1`.

use super::{Family, Subset};
use crate::engine::{index, uniform, Batch, Rng};

const NIL: u32 = u32::MAX;

/// The per-server discipline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Discipline {
    Ps,
    Fcfs,
    Lps(u32),
    Lcfs,
}

/// A copy slot (or a server's sentinel): its server and its neighbours in that server's
/// circular list.
#[derive(Debug, Clone, Copy)]
struct Link {
    server: u32,
    prev: u32,
    next: u32,
}

/// One level of the lazily integrated level counts: the number of servers with at least `k`
/// copies, its time integral since the segment began, and the time of its last change.
#[derive(Debug, Clone, Copy, Default)]
struct Level {
    count: f64,
    integral: f64,
    last: f64,
}

/// Lazily integrated level counts as [`super::Levels`], one record per level (one bounds check
/// per update).
struct LevelRecords {
    rec: Vec<Level>,
}

impl LevelRecords {
    fn new() -> Self {
        LevelRecords { rec: vec![Level::default(); 65] }
    }

    #[cold]
    fn grow(&mut self, k: usize) {
        let new_len = (k + 1).max(self.rec.len() * 2);
        self.rec.resize(new_len, Level::default());
    }

    /// A server went from `before` to `before + 1` copies at time `t`.
    #[inline(always)]
    fn up(&mut self, before: u32, t: f64) {
        let k = before as usize + 1;
        if k >= self.rec.len() {
            self.grow(k);
        }
        let l = &mut self.rec[k];
        l.integral += l.count * (t - l.last);
        l.last = t;
        l.count += 1.0;
    }

    /// A server went from `before >= 1` to `before - 1` copies at time `t`.
    #[inline(always)]
    fn down(&mut self, before: u32, t: f64) {
        let l = &mut self.rec[before as usize];
        l.integral += l.count * (t - l.last);
        l.last = t;
        l.count -= 1.0;
    }

    /// The integrals up to `t` (`[k]` for level `k`, `[0] = 0`), then restarted from zero (as
    /// [`super::Levels::take`]).
    fn take(&mut self, t: f64, out: &mut Vec<f64>) {
        out.clear();
        let top = self.rec.iter().rposition(|l| l.count > 0.0).unwrap_or(0);
        for l in self.rec.iter_mut().skip(1) {
            l.integral += l.count * (t - l.last);
            l.last = t;
        }
        let used = self.rec.iter().rposition(|l| l.integral > 0.0).unwrap_or(0).max(top);
        out.extend(self.rec[..=used].iter().map(|l| l.integral));
        out[0] = 0.0;
        self.rec.iter_mut().for_each(|l| l.integral = 0.0);
    }
}

/// One replication's state.
pub(crate) struct Redundancy {
    n: u32,
    d: u32,
    arrival_rate: f64,
    buffer: u32,
    discipline: Discipline,
    /// Slots: `0..N` the servers' sentinels, then copy slots, copy `c` of job `c / d` (jobs
    /// from `ceil(N / d)` on). Each server's list holds its copies in arrival order.
    links: Vec<Link>,
    free_jobs: Vec<u32>,
    /// Each server's number of copies.
    len: Vec<u32>,
    /// The busy servers.
    busy: Subset,
    chosen: Vec<u32>,
    levels: LevelRecords,
    scratch: Vec<f64>,
    accepted: u64,
    lost: u64,
    waited: u64,
    departures: u64,
}

impl Redundancy {
    pub(crate) fn new(n: u32, lambda: f64, d: u32, buffer: Option<u32>, discipline: Discipline) -> Self {
        Redundancy {
            n,
            d,
            arrival_rate: n as f64 * lambda,
            buffer: buffer.unwrap_or(u32::MAX),
            discipline,
            // the sentinels (each list empty: its sentinel is its own neighbour), padded to a
            // multiple of d so that jobs start on a multiple of d
            links: (0..n.div_ceil(d) * d).map(|s| Link { server: s, prev: s, next: s }).collect(),
            free_jobs: Vec::new(),
            len: vec![0; n as usize],
            busy: Subset::new(n),
            chosen: vec![0; d as usize],
            levels: LevelRecords::new(),
            scratch: Vec::new(),
            accepted: 0,
            lost: 0,
            waited: 0,
            departures: 0,
        }
    }

    fn new_job(&mut self) -> u32 {
        if let Some(j) = self.free_jobs.pop() {
            return j;
        }
        let j = (self.links.len() / self.d as usize) as u32;
        self.links.extend(std::iter::repeat_n(Link { server: NIL, prev: NIL, next: NIL }, self.d as usize));
        j
    }

    /// Appends copy `c` at the tail of server `s`'s list at time `t`.
    #[inline(always)]
    fn append(&mut self, c: u32, s: u32, t: f64) {
        let tail = self.links[s as usize].prev;
        self.links[c as usize] = Link { server: s, prev: tail, next: s };
        self.links[tail as usize].next = c;
        self.links[s as usize].prev = c;
        let before = self.len[s as usize];
        self.len[s as usize] = before + 1;
        self.levels.up(before, t);
        if before == 0 {
            self.busy.insert(s);
        }
    }

    /// Removes copy `c` from its server's list at time `t`.
    #[inline(always)]
    fn unlink(&mut self, c: usize, t: f64) {
        let Link { server: s, prev: p, next: nx } = self.links[c];
        self.links[p as usize].next = nx;
        self.links[nx as usize].prev = p;
        let before = self.len[s as usize];
        self.len[s as usize] = before - 1;
        self.levels.down(before, t);
        if before == 1 {
            self.busy.remove(s);
        }
    }

    /// An arrival with `d = 2`: two distinct servers by one draw of each (the second among the
    /// `N - 1` others), no list of choices.
    #[inline(always)]
    fn arrive2(&mut self, t: f64, rng: &mut Rng) {
        let a = index(rng, self.n);
        let mut b = index(rng, self.n - 1);
        b += (b >= a) as u32;
        let (la, lb) = (self.len[a as usize], self.len[b as usize]);
        if la.max(lb) >= self.buffer {
            self.lost += 1;
            return;
        }
        self.accepted += 1;
        self.waited += (la > 0 && lb > 0) as u64;
        let job = self.new_job();
        self.append(2 * job, a, t);
        self.append(2 * job + 1, b, t);
    }

    #[inline(always)]
    fn arrive(&mut self, t: f64, rng: &mut Rng) {
        if self.d == 2 {
            self.arrive2(t, rng);
            return;
        }
        self.arrive_any(t, rng);
    }

    /// An arrival with any `d`.
    fn arrive_any(&mut self, t: f64, rng: &mut Rng) {
        // d distinct servers, uniformly (rejection of repeats)
        let d = self.d as usize;
        let mut i = 0;
        while i < d {
            let s = index(rng, self.n);
            if !self.chosen[..i].contains(&s) {
                self.chosen[i] = s;
                i += 1;
            }
        }
        if self.chosen.iter().any(|&s| self.len[s as usize] >= self.buffer) {
            self.lost += 1;
            return;
        }
        self.accepted += 1;
        self.waited += self.chosen.iter().all(|&s| self.len[s as usize] > 0) as u64;
        let job = self.new_job();
        for i in 0..d {
            let s = self.chosen[i];
            self.append(job * self.d + i as u32, s, t);
        }
    }

    /// The `r`-th copy (0 = oldest) of server `s`.
    #[inline(always)]
    fn nth(&self, s: u32, r: u32) -> u32 {
        let mut c = self.links[s as usize].next;
        for _ in 0..r {
            c = self.links[c as usize].next;
        }
        c
    }

    #[inline(always)]
    fn complete(&mut self, t: f64, rng: &mut Rng) {
        let s = self.busy.pick(rng);
        let c = match self.discipline {
            Discipline::Fcfs => self.links[s as usize].next,
            Discipline::Lcfs => self.links[s as usize].prev,
            Discipline::Ps => self.nth(s, index(rng, self.len[s as usize])),
            Discipline::Lps(k) => self.nth(s, index(rng, self.len[s as usize].min(k))),
        };
        self.departures += 1;
        if self.d == 2 {
            // the served copy, then its sibling (same job: `c ^ 1`)
            self.unlink(c as usize, t);
            self.unlink((c ^ 1) as usize, t);
            self.free_jobs.push(c >> 1);
            return;
        }
        let job = c / self.d;
        for i in 0..self.d {
            self.unlink((job * self.d + i) as usize, t);
        }
        self.free_jobs.push(job);
    }
}

impl Family for Redundancy {
    #[inline(always)]
    fn rate(&self) -> f64 {
        self.arrival_rate + self.busy.len() as f64
    }

    #[inline(always)]
    fn event(&mut self, t: f64, rate: f64, rng: &mut Rng) {
        if uniform(rng) * rate < self.arrival_rate {
            self.arrive(t, rng);
        } else {
            self.complete(t, rng);
        }
    }

    /// No extras (the mean number of jobs per server is derived from the levels).
    fn close(&mut self, t: f64, _duration: f64, out: &mut Batch) {
        self.levels.take(t, &mut self.scratch);
        out.level_integral.clone_from(&self.scratch);
        out.accepted = std::mem::take(&mut self.accepted);
        out.lost = std::mem::take(&mut self.lost);
        out.waited = std::mem::take(&mut self.waited);
        out.departures = std::mem::take(&mut self.departures);
        out.extras.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Lists, lengths, busy set and level counts stay consistent; every job has its d copies
    /// on d distinct servers (d = 2: the dedicated arrival and completion; d = 3: the general).
    #[test]
    fn bookkeeping_stays_consistent() {
        for (d, disc) in [2u32, 3]
            .into_iter()
            .flat_map(|d| [Discipline::Ps, Discipline::Fcfs, Discipline::Lps(2), Discipline::Lcfs].map(|disc| (d, disc)))
        {
            let mut rng = Rng::seed_from_u64(5);
            let mut r = Redundancy::new(30, 0.8, d, Some(6), disc);
            let mut t = 0.0;
            for step in 0..50_000 {
                t += 0.001;
                let rate = r.rate();
                r.event(t, rate, &mut rng);
                if step % 503 == 0 {
                    let mut total = 0;
                    for s in 0..30u32 {
                        let mut c = r.links[s as usize].next;
                        let mut k = 0;
                        let mut last = s;
                        while c != s {
                            assert_eq!(r.links[c as usize].server, s);
                            assert_eq!(r.links[c as usize].prev, last);
                            last = c;
                            c = r.links[c as usize].next;
                            k += 1;
                        }
                        assert_eq!(r.links[s as usize].prev, last);
                        assert_eq!(k, r.len[s as usize]);
                        assert!(k <= 6);
                        assert_eq!(r.busy.contains(s), k > 0);
                        total += k;
                    }
                    let first = 30u32.div_ceil(d);
                    let jobs = r.links.len() / d as usize - first as usize - r.free_jobs.len();
                    assert_eq!(total as usize, d as usize * jobs);
                    for j in first..r.links.len() as u32 / d {
                        if !r.free_jobs.contains(&j) {
                            let mut servers: Vec<u32> = (0..d).map(|i| r.links[(j * d + i) as usize].server).collect();
                            servers.sort_unstable();
                            servers.dedup();
                            assert_eq!(servers.len(), d as usize, "job {j}: copies on distinct servers");
                        }
                    }
                }
            }
        }
    }
}
