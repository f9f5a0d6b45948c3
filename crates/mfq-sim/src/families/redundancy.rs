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

use super::{Family, Levels, Subset};
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

/// One replication's state.
pub(crate) struct Redundancy {
    n: u32,
    d: u32,
    arrival_rate: f64,
    buffer: u32,
    discipline: Discipline,
    /// Copy slots: copy `c` belongs to job `c / d` and sits at `server[c]` between `prev[c]`
    /// and `next[c]` of that server's list.
    server: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    free_jobs: Vec<u32>,
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
    /// The busy servers.
    busy: Subset,
    chosen: Vec<u32>,
    levels: Levels,
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
            server: Vec::new(),
            prev: Vec::new(),
            next: Vec::new(),
            free_jobs: Vec::new(),
            head: vec![NIL; n as usize],
            tail: vec![NIL; n as usize],
            len: vec![0; n as usize],
            busy: Subset::new(n),
            chosen: vec![0; d as usize],
            levels: Levels::new(),
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
        let j = (self.server.len() / self.d as usize) as u32;
        let k = self.d as usize;
        self.server.extend(std::iter::repeat_n(NIL, k));
        self.prev.extend(std::iter::repeat_n(NIL, k));
        self.next.extend(std::iter::repeat_n(NIL, k));
        j
    }

    fn arrive(&mut self, t: f64, rng: &mut Rng) {
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
            let c = job * self.d + i as u32;
            let su = s as usize;
            self.server[c as usize] = s;
            self.prev[c as usize] = self.tail[su];
            self.next[c as usize] = NIL;
            if self.tail[su] == NIL {
                self.head[su] = c;
            } else {
                self.next[self.tail[su] as usize] = c;
            }
            self.tail[su] = c;
            let before = self.len[su];
            self.len[su] = before + 1;
            self.levels.up(before, t);
            if before == 0 {
                self.busy.insert(s);
            }
        }
    }

    /// The `r`-th copy (0 = oldest) of server `s`.
    #[inline(always)]
    fn nth(&self, s: u32, r: u32) -> u32 {
        let mut c = self.head[s as usize];
        for _ in 0..r {
            c = self.next[c as usize];
        }
        c
    }

    fn complete(&mut self, t: f64, rng: &mut Rng) {
        let s = self.busy.pick(rng);
        let q = self.len[s as usize];
        let c = match self.discipline {
            Discipline::Fcfs => self.head[s as usize],
            Discipline::Lcfs => self.tail[s as usize],
            Discipline::Ps => self.nth(s, index(rng, q)),
            Discipline::Lps(k) => self.nth(s, index(rng, q.min(k))),
        };
        let job = c / self.d;
        self.departures += 1;
        for i in 0..self.d {
            let c = (job * self.d + i) as usize;
            let s = self.server[c];
            let su = s as usize;
            let (p, nx) = (self.prev[c], self.next[c]);
            if p == NIL {
                self.head[su] = nx;
            } else {
                self.next[p as usize] = nx;
            }
            if nx == NIL {
                self.tail[su] = p;
            } else {
                self.prev[nx as usize] = p;
            }
            let before = self.len[su];
            self.len[su] = before - 1;
            self.levels.down(before, t);
            if before == 1 {
                self.busy.remove(s);
            }
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
    /// on d distinct servers.
    #[test]
    fn bookkeeping_stays_consistent() {
        for disc in [Discipline::Ps, Discipline::Fcfs, Discipline::Lps(2), Discipline::Lcfs] {
            let mut rng = Rng::seed_from_u64(5);
            let mut r = Redundancy::new(30, 0.8, 3, Some(6), disc);
            let mut t = 0.0;
            for step in 0..50_000 {
                t += 0.001;
                let rate = r.rate();
                r.event(t, rate, &mut rng);
                if step % 503 == 0 {
                    let mut total = 0;
                    for s in 0..30u32 {
                        let mut c = r.head[s as usize];
                        let mut k = 0;
                        let mut last = NIL;
                        while c != NIL {
                            assert_eq!(r.server[c as usize], s);
                            assert_eq!(r.prev[c as usize], last);
                            last = c;
                            c = r.next[c as usize];
                            k += 1;
                        }
                        assert_eq!(r.tail[s as usize], last);
                        assert_eq!(k, r.len[s as usize]);
                        assert!(k <= 6);
                        assert_eq!(r.busy.contains(s), k > 0);
                        total += k;
                    }
                    let jobs = r.server.len() / 3 - r.free_jobs.len();
                    assert_eq!(total as usize, 3 * jobs);
                }
            }
        }
    }
}
