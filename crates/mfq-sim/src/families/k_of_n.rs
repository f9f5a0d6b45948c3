//! Redundant requests, k of n (kind `k-of-n`), written from the system's rules
//! (`mfq_model::models::k_of_n`; Shah, Lee, Ramchandran, "When do redundant requests reduce
//! latency?", IEEE Trans. Commun. 64(2), 2016).
//!
//! `N` servers, Poisson requests at rate `N lambda`, each with `n` copies for `n` distinct
//! servers, served when `k` copies complete. Then its copies still waiting are dropped and its
//! copies in service are cancelled, each holding its server for `removal` (none when 0).
//!
//! - central buffer: requests wait in one FCFS list while they have unstarted copies; a free
//!   server takes a copy of the first request in the list that holds no copy at this server
//!   (started or completed), else it idles. Only an arrival creates work for an idle server.
//! - random dispatch: the `n` copies join the FCFS queues of `n` distinct uniformly random
//!   servers; a server skips the queued copies of requests already served.
//!
//! Copy service times are not exponential in general, so completions and ends of removal are
//! timed events in a binary heap, cancelled lazily by a per-server token; arrivals are Poisson
//! (redrawn at segment boundaries: memorylessness). With exponential copies the completions are
//! competing exponentials instead, as in [`super::drive`]: no service time is drawn, the next
//! completion comes at rate `B` (servers serving a copy) from a uniformly random one of them
//! (kept in a set with O(1) moves), beside the arrivals at `N lambda`; only the ends of removal
//! (a fixed time) stay in the heap. A stale heap entry is dropped without counting as an event.
//!
//! Central buffer, `k = 1`, `n = N`, exponential copies, instant removal (the lumped case): all
//! `N` servers serve copies of the oldest request whenever there is one (an arrival to the empty
//! system starts its `N` copies at the `N` idle servers; the first completion cancels the other
//! `N - 1` copies and the `N` freed servers all start copies of the next request, which has none
//! started since no server was idle), so the state is the FIFO of the requests' arrival times:
//! a completion comes at rate `N` while the FIFO is not empty, serves its head, and counts one
//! copy completed and `N - 1` cancelled, without touching the servers one by one.
//! Measured per batch: requests in the system
//! and busy servers (time averages), the response time of each request served in the batch
//! (arrival to its `k`-th completion), and the copies cancelled in service.

use super::Tracked;
use crate::engine::{exp1, index, uniform, Batch, Rng};
use mfq_model::models::k_of_n::ServiceLaw;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// A timed event at a server: the end of its current copy or removal, valid while the
/// server's token is `token`.
#[derive(Debug, Clone, Copy)]
struct Event {
    t: f64,
    server: u32,
    token: u64,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.t.total_cmp(&o.t) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    /// Reversed: the heap's top is the earliest event.
    fn cmp(&self, o: &Self) -> Ordering {
        o.t.total_cmp(&self.t)
    }
}

/// What a server does.
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Idle,
    Serving(u32),
    Removing,
}

/// The parameters of the system.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Params {
    pub k: u32,
    pub n: u32,
    pub central: bool,
    pub service: ServiceLaw,
    pub removal: f64,
}

/// One replication's state.
pub(crate) struct KOfN {
    servers: u32,
    p: Params,
    arrival_rate: f64,
    h2: (f64, f64, f64),
    // requests, by slot: arrival time, completed and started copies, whether served, queue
    // entries still pointing at it (random dispatch), and its servers `[slot * n ..][..n]`
    arrival: Vec<f64>,
    done: Vec<u32>,
    started: Vec<u32>,
    finished: Vec<bool>,
    refs: Vec<u32>,
    holders: Vec<u32>,
    free_slots: Vec<u32>,
    state: Vec<State>,
    token: Vec<u64>,
    idle: Vec<u32>,
    waiting: VecDeque<u32>,
    queues: Vec<VecDeque<u32>>,
    perm: Vec<u32>,
    heap: BinaryHeap<Event>,
    /// Exponential copies: completions are competing exponentials, the servers serving a copy
    /// are `serving[..]`, server `s` at `serving_pos[s]`.
    expo: bool,
    serving: Vec<u32>,
    serving_pos: Vec<u32>,
    /// The lumped case (module docs): arrival times of the requests in the system, oldest
    /// first, and the completion rate (`N` when not empty, else 0).
    lumped: bool,
    fifo: VecDeque<f64>,
    lumped_rate: f64,
    in_system: Tracked,
    busy: Tracked,
    removing: Tracked,
    arrivals: u64,
    served: u64,
    response_sum: f64,
    cancelled: u64,
    copies_done: u64,
}

impl KOfN {
    /// `servers` idle servers, no request.
    pub(crate) fn new(servers: u32, lambda: f64, p: Params) -> Self {
        KOfN {
            servers,
            p,
            arrival_rate: lambda * servers as f64,
            h2: p.service.h2().unwrap_or((1.0, 1.0, 1.0)),
            arrival: Vec::new(),
            done: Vec::new(),
            started: Vec::new(),
            finished: Vec::new(),
            refs: Vec::new(),
            holders: Vec::new(),
            free_slots: Vec::new(),
            state: vec![State::Idle; servers as usize],
            token: vec![0; servers as usize],
            idle: if p.central { (0..servers).rev().collect() } else { Vec::new() },
            waiting: VecDeque::new(),
            queues: if p.central { Vec::new() } else { vec![VecDeque::new(); servers as usize] },
            perm: (0..servers).collect(),
            heap: BinaryHeap::new(),
            expo: matches!(p.service, ServiceLaw::Exponential),
            serving: Vec::with_capacity(servers as usize),
            serving_pos: vec![u32::MAX; servers as usize],
            lumped: p.central && p.k == 1 && p.n == servers && p.removal == 0.0 && matches!(p.service, ServiceLaw::Exponential),
            fifo: VecDeque::new(),
            lumped_rate: 0.0,
            in_system: Tracked::default(),
            busy: Tracked::default(),
            removing: Tracked::default(),
            arrivals: 0,
            served: 0,
            response_sum: 0.0,
            cancelled: 0,
            copies_done: 0,
        }
    }

    /// One copy's service time, mean 1.
    fn draw(&self, rng: &mut Rng) -> f64 {
        match self.p.service {
            ServiceLaw::Exponential => exp1(rng),
            ServiceLaw::H2 { .. } => {
                let (p, mu1, mu2) = self.h2;
                if uniform(rng) < p {
                    exp1(rng) / mu1
                } else {
                    exp1(rng) / mu2
                }
            }
            ServiceLaw::ShiftedExponential { shift } => shift + (1.0 - shift) * exp1(rng),
        }
    }

    /// A fresh request slot.
    fn alloc(&mut self, t: f64) -> u32 {
        let n = self.p.n as usize;
        let r = match self.free_slots.pop() {
            Some(r) => r,
            None => {
                self.arrival.push(0.0);
                self.done.push(0);
                self.started.push(0);
                self.finished.push(false);
                self.refs.push(0);
                self.holders.resize(self.holders.len() + n, u32::MAX);
                (self.arrival.len() - 1) as u32
            }
        };
        let i = r as usize;
        (self.arrival[i], self.done[i], self.started[i], self.finished[i], self.refs[i]) = (t, 0, 0, false, 0);
        r
    }

    /// Server `s` (idle or just freed, not in the idle list) starts copy of request `r`.
    fn start(&mut self, s: u32, r: u32, t: f64, rng: &mut Rng) {
        if self.state[s as usize] == State::Idle {
            self.busy.add(1.0, t);
        }
        if self.expo {
            // the completion is one of the competing exponentials: nothing to draw
            if !matches!(self.state[s as usize], State::Serving(_)) {
                self.serving_pos[s as usize] = self.serving.len() as u32;
                self.serving.push(s);
            }
            self.state[s as usize] = State::Serving(r);
            return;
        }
        self.state[s as usize] = State::Serving(r);
        self.token[s as usize] += 1;
        let end = t + self.draw(rng);
        self.heap.push(Event { t: end, server: s, token: self.token[s as usize] });
    }

    /// Server `s`, serving a copy, stops serving (exponential copies: leaves the serving set).
    #[inline]
    fn stop_serving(&mut self, s: u32) {
        if self.expo {
            let i = self.serving_pos[s as usize] as usize;
            let last = self.serving.pop().expect("s serves");
            if last != s {
                self.serving[i] = last;
                self.serving_pos[last as usize] = i as u32;
            }
            self.serving_pos[s as usize] = u32::MAX;
        }
    }

    /// Free server `s` looks for work; without any it goes idle.
    fn next_work(&mut self, s: u32, t: f64, rng: &mut Rng) {
        let n = self.p.n as usize;
        let found = if self.p.central {
            // the first waiting request without a copy at `s` (started or completed)
            let mut found = None;
            for pos in 0..self.waiting.len() {
                let r = self.waiting[pos];
                let i = r as usize;
                let started = self.started[i] as usize;
                if !self.holders[i * n..i * n + started].contains(&s) {
                    self.holders[i * n + started] = s;
                    self.started[i] += 1;
                    if self.started[i] == self.p.n {
                        self.waiting.remove(pos);
                    }
                    found = Some(r);
                    break;
                }
            }
            found
        } else {
            let mut found = None;
            while let Some(r) = self.queues[s as usize].pop_front() {
                let i = r as usize;
                self.refs[i] -= 1;
                if !self.finished[i] {
                    found = Some(r);
                    break;
                }
                if self.refs[i] == 0 {
                    self.free_slots.push(r);
                }
            }
            found
        };
        match found {
            Some(r) => self.start(s, r, t, rng),
            None => {
                if self.state[s as usize] != State::Idle {
                    self.busy.add(-1.0, t);
                }
                if matches!(self.state[s as usize], State::Serving(_)) {
                    self.stop_serving(s);
                }
                self.state[s as usize] = State::Idle;
                if self.p.central {
                    self.idle.push(s);
                }
            }
        }
    }

    fn arrive(&mut self, t: f64, rng: &mut Rng) {
        self.arrivals += 1;
        self.in_system.add(1.0, t);
        let r = self.alloc(t);
        let (n, i) = (self.p.n as usize, r as usize);
        if self.p.central {
            self.waiting.push_back(r);
            // only idle servers can take the new request's copies
            while self.started[i] < self.p.n {
                let Some(s) = self.idle.pop() else { break };
                self.holders[i * n + self.started[i] as usize] = s;
                self.started[i] += 1;
                self.start(s, r, t, rng);
            }
            if self.started[i] == self.p.n {
                self.waiting.pop_back();
            }
        } else {
            // n distinct servers: a partial Fisher-Yates shuffle of the kept permutation
            for c in 0..n {
                let j = c + index(rng, self.servers - c as u32) as usize;
                self.perm.swap(c, j);
                let s = self.perm[c];
                self.holders[i * n + c] = s;
                self.queues[s as usize].push_back(r);
                self.refs[i] += 1;
                if self.state[s as usize] == State::Idle {
                    self.next_work(s, t, rng);
                }
            }
        }
    }

    /// The end of server `s`'s copy (or removal) at `t`.
    fn complete(&mut self, s: u32, t: f64, rng: &mut Rng) {
        let State::Serving(r) = self.state[s as usize] else {
            // end of a removal
            self.removing.add(-1.0, t);
            self.next_work(s, t, rng);
            return;
        };
        let (n, i) = (self.p.n as usize, r as usize);
        self.copies_done += 1;
        self.done[i] += 1;
        if self.done[i] == self.p.k {
            self.finished[i] = true;
            self.served += 1;
            self.response_sum += t - self.arrival[i];
            self.in_system.add(-1.0, t);
            let held = if self.p.central { self.started[i] as usize } else { n };
            for c in 0..held {
                let o = self.holders[i * n + c];
                if o != s && self.state[o as usize] == State::Serving(r) {
                    self.cancelled += 1;
                    self.stop_serving(o);
                    self.token[o as usize] += 1;
                    if self.p.removal > 0.0 {
                        self.state[o as usize] = State::Removing;
                        self.removing.add(1.0, t);
                        self.heap.push(Event { t: t + self.p.removal, server: o, token: self.token[o as usize] });
                    } else {
                        self.state[o as usize] = State::Removing;
                        self.next_work(o, t, rng);
                    }
                }
            }
            if self.p.central {
                if self.started[i] < self.p.n {
                    let pos = self.waiting.iter().position(|&x| x == r).expect("a request with unstarted copies waits");
                    self.waiting.remove(pos);
                }
                self.free_slots.push(r);
            } else if self.refs[i] == 0 {
                self.free_slots.push(r);
            }
        }
        self.next_work(s, t, rng);
    }

    /// One event of the lumped case (module docs): an arrival, or a completion of the head
    /// request by one of the `N` servers serving its copies.
    #[inline(always)]
    fn lumped_event(&mut self, t: f64, rate: f64, rng: &mut Rng) {
        let m = self.servers as f64;
        if self.fifo.is_empty() || uniform(rng) * rate < self.arrival_rate {
            self.arrivals += 1;
            self.in_system.add(1.0, t);
            if self.fifo.is_empty() {
                // the N idle servers start its N copies
                self.busy.add(m, t);
                self.lumped_rate = m;
            }
            self.fifo.push_back(t);
        } else {
            let a = self.fifo.pop_front().expect("a request is in service");
            self.copies_done += 1;
            self.served += 1;
            self.response_sum += t - a;
            self.cancelled += u64::from(self.servers - 1);
            self.in_system.add(-1.0, t);
            if self.fifo.is_empty() {
                self.busy.add(-m, t);
                self.lumped_rate = 0.0;
            }
        }
    }

    /// Extras: `[0]` requests in the system per server, `[1]` busy fraction (serving or
    /// removing), `[2]` fraction of server time spent removing, `[3]` sum of the response times
    /// of the requests served, `[4]` their number, `[5]` copies cancelled in service, `[6]`
    /// copies completed.
    fn close(&mut self, t: f64, duration: f64, out: &mut Batch) {
        let m = self.servers as f64;
        out.level_integral.clear();
        out.accepted = std::mem::take(&mut self.arrivals);
        out.lost = 0;
        out.waited = 0;
        out.departures = self.served;
        out.extras.clear();
        out.extras.push(self.in_system.take(t) / (m * duration));
        out.extras.push(self.busy.take(t) / (m * duration));
        out.extras.push(self.removing.take(t) / (m * duration));
        out.extras.push(std::mem::take(&mut self.response_sum));
        out.extras.push(std::mem::take(&mut self.served) as f64);
        out.extras.push(std::mem::take(&mut self.cancelled) as f64);
        out.extras.push(std::mem::take(&mut self.copies_done) as f64);
    }
}

impl super::TimedFamily for KOfN {
    #[inline]
    fn markov_rate(&self) -> f64 {
        self.arrival_rate + self.serving.len() as f64 + self.lumped_rate
    }
    #[inline]
    fn next_event(&self) -> f64 {
        self.heap.peek().map_or(f64::INFINITY, |e| e.t)
    }
    #[inline]
    fn on_markov(&mut self, t: f64, rate: f64, rng: &mut Rng) {
        if self.lumped {
            self.lumped_event(t, rate, rng);
            return;
        }
        if self.serving.is_empty() || uniform(rng) * rate < self.arrival_rate {
            self.arrive(t, rng);
        } else {
            let s = self.serving[index(rng, self.serving.len() as u32) as usize];
            self.complete(s, t, rng);
        }
    }
    #[inline]
    fn on_event(&mut self, rng: &mut Rng) -> bool {
        match self.heap.pop() {
            // a stale entry (its copy was removed since) is dropped: not an event
            Some(e) if e.token == self.token[e.server as usize] => {
                self.complete(e.server, e.t, rng);
                true
            }
            _ => false,
        }
    }
    fn end_segment(&mut self, t: f64, duration: f64, out: &mut Batch) {
        self.close(t, duration, out);
    }
}
