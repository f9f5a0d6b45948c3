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
//!   servers; the queued copies of a served request leave their queues.
//!
//! Copy service times are not exponential in general, so completions and ends of removal are
//! timed events in a binary heap, cancelled lazily by a per-server token; arrivals are Poisson
//! (redrawn at segment boundaries: memorylessness). With exponential copies the completions are
//! competing exponentials instead, as in [`super::drive`]: no service time is drawn, the next
//! completion comes at rate `B` (servers serving a copy) from a uniformly random one of them
//! (kept in a set with O(1) moves), beside the arrivals at `N lambda`; only the ends of removal
//! (a fixed time) stay in the heap. A stale heap entry is dropped without counting as an event.
//! One uniform `U` chooses the event: `U (N lambda + B) < N lambda` is an arrival, else the
//! integer part of `U (N lambda + B) - N lambda` (uniform in `[0, B)`) is the completing
//! server's place in the set. An arrival's share `U (N lambda + B) / lambda`, uniform in
//! `[0, N)`, gives random dispatch's first server (its integer part); with `n = 2` the second
//! is a uniform one of the `N - 1` others by arithmetic from it (one index draw, no shuffle),
//! with `n = N` every server gets a copy (nothing drawn), else a partial Fisher-Yates shuffle
//! draws the others. The times between exponential events and the copy times are drawn by the
//! ziggurat ([`crate::engine::exp1_ziggurat`]).
//!
//! The per-copy path (every case but the lumped one below) keeps one record per request
//! (arrival time, copies completed and started, queue entries, served, and its neighbours in
//! the central buffer's list) and one per server (the request it serves or idle or removing,
//! its place in the serving set, its queue's ends): the central buffer is a doubly linked list
//! through the request records (a request leaves it in O(1) when its last copy starts or it is
//! served), random dispatch's FCFS queues are doubly linked lists through the copy records
//! (a served request's queued copies leave them in O(1), and the ends of a queue are selects
//! with a dummy record, not tests), free request slots a list through their records; the requests in the system and the busy
//! servers are counts integrated once per event. The code is specialised by dispatch and by
//! exponential or timed copies (const parameters), so neither is tested per event.
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
use crate::engine::{exp1_ziggurat, index, uniform, Batch, Replication, Rng, RunParams};
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

/// `cur[s]` of an idle server.
const IDLE: u32 = u32::MAX;
/// `cur[s]` of a server removing a cancelled copy.
const REMOVING: u32 = u32::MAX - 1;
/// Random dispatch: the copy record an empty queue's `q_tail` points at (request slot 0's,
/// never a request's in random dispatch), so that a copy joins a queue without a test of its
/// emptiness.
const DUMMY: u32 = 0;
/// The central buffer's list of waiting requests runs through the request records, with slot
/// 0 as its sentinel (its `next` the oldest waiting request, its `prev` the newest).
const HEAD: u32 = 0;

/// A request's record, in one cell.
#[derive(Debug, Clone, Copy, Default)]
struct Request {
    arrival: f64,
    /// Central buffer: the neighbours in the list of waiting requests (while it has unstarted
    /// copies).
    next: u32,
    prev: u32,
    /// Copies completed and started (central buffer).
    done: u32,
    started: u32,
    /// Random dispatch: queue entries still pointing at it.
    refs: u32,
    finished: bool,
    /// Central buffer: bit `s mod 64` set for each server `s` that holds one of its copies
    /// (exact for `N <= 64`; beyond, a set bit sends to the holders' list).
    mask: u64,
}

/// A server's record, in one cell.
#[derive(Debug, Clone, Copy)]
struct Server {
    /// The request whose copy it serves, or [`IDLE`] or [`REMOVING`].
    cur: u32,
    /// Exponential copies: its place in the serving set while it serves.
    pos: u32,
    /// Random dispatch: the first and last copy of its FCFS queue (when empty: [`IDLE`] and
    /// [`DUMMY`]).
    q_head: u32,
    q_tail: u32,
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
pub(crate) struct KOfN<const CENTRAL: bool, const EXPO: bool> {
    servers: u32,
    p: Params,
    /// `p.n` as an index.
    n: usize,
    arrival_rate: f64,
    /// `1 / lambda`: an arrival's share `u` of the event's uniform scaled to a server.
    inv_lambda: f64,
    h2: (f64, f64, f64),
    /// Requests by slot (slot 0: the central list's sentinel); request `r`'s servers are
    /// `holders[r * n ..][..n]` (central buffer: the first `started`).
    req: Vec<Request>,
    holders: Vec<u32>,
    /// The free request slots, a list through their `next` ([`IDLE`]: none).
    free_head: u32,
    srv: Vec<Server>,
    token: Vec<u64>,
    /// Central buffer: the idle servers, `idle[..n_idle]`.
    idle: Vec<u32>,
    n_idle: u32,
    /// Random dispatch: each server's FCFS queue of copies, a linked list through the copy
    /// records (copy `c` of request `r` at `r * n + c`: the next copy in its queue and `r`;
    /// the previous one in `q_prev`) from the server's `q_head` to its `q_tail`.
    q_link: Vec<(u32, u32)>,
    /// Random dispatch: the previous copy in its queue (not kept for the head: [`DUMMY`] or a
    /// copy since started; [`IDLE`] for a copy not queued), so that a served request's queued
    /// copies leave at once.
    q_prev: Vec<u32>,
    perm: Vec<u32>,
    heap: BinaryHeap<Event>,
    /// Exponential copies (`EXPO`): completions are competing exponentials, the servers serving
    /// a copy are `serving[..n_serving]`, server `s` at its `pos`.
    serving: Vec<u32>,
    n_serving: u32,
    /// The lumped case (module docs): arrival times of the requests in the system, oldest
    /// first, and the completion rate (`N` when not empty, else 0).
    fifo: VecDeque<f64>,
    lumped_rate: f64,
    in_system: Tracked,
    busy: Tracked,
    removing: Tracked,
    /// The per-copy path's requests in the system and busy servers (serving or removing), with
    /// their time integrals kept up to `last` (advanced once per event).
    in_sys: f64,
    busy_count: f64,
    last: f64,
    area_in_sys: f64,
    area_busy: f64,
    arrivals: u64,
    served: u64,
    response_sum: f64,
    cancelled: u64,
    copies_done: u64,
}

impl<const CENTRAL: bool, const EXPO: bool> KOfN<CENTRAL, EXPO> {
    /// `servers` idle servers, no request.
    pub(crate) fn new(servers: u32, lambda: f64, p: Params) -> Self {
        debug_assert!(CENTRAL == p.central && EXPO == matches!(p.service, ServiceLaw::Exponential));
        KOfN {
            servers,
            p,
            n: p.n as usize,
            arrival_rate: lambda * servers as f64,
            inv_lambda: 1.0 / lambda,
            h2: p.service.h2().unwrap_or((1.0, 1.0, 1.0)),
            req: vec![Request::default()],
            holders: vec![IDLE; p.n as usize],
            free_head: IDLE,
            srv: vec![Server { cur: IDLE, pos: 0, q_head: IDLE, q_tail: DUMMY }; servers as usize],
            token: vec![0; servers as usize],
            idle: (0..servers).rev().collect(),
            n_idle: if p.central { servers } else { 0 },
            q_link: vec![(IDLE, 0); p.n as usize],
            q_prev: vec![IDLE; p.n as usize],
            perm: (0..servers).collect(),
            heap: BinaryHeap::new(),
            serving: vec![0; servers as usize],
            n_serving: 0,
            fifo: VecDeque::new(),
            lumped_rate: 0.0,
            in_system: Tracked::default(),
            busy: Tracked::default(),
            removing: Tracked::default(),
            in_sys: 0.0,
            busy_count: 0.0,
            last: 0.0,
            area_in_sys: 0.0,
            area_busy: 0.0,
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
            ServiceLaw::Exponential => exp1_ziggurat(rng),
            ServiceLaw::H2 { .. } => {
                let (p, mu1, mu2) = self.h2;
                if uniform(rng) < p {
                    exp1_ziggurat(rng) / mu1
                } else {
                    exp1_ziggurat(rng) / mu2
                }
            }
            ServiceLaw::ShiftedExponential { shift } => shift + (1.0 - shift) * exp1_ziggurat(rng),
        }
    }

    /// The integrals of the requests in the system and of the busy servers, up to `t`.
    #[inline(always)]
    fn advance(&mut self, t: f64) {
        let dt = t - self.last;
        self.area_in_sys += self.in_sys * dt;
        self.area_busy += self.busy_count * dt;
        self.last = t;
    }

    /// A fresh request slot, arrived at `t`.
    #[inline]
    fn alloc(&mut self, t: f64) -> u32 {
        let fresh = Request { arrival: t, ..Request::default() };
        match self.free_head {
            IDLE => {
                self.req.push(fresh);
                self.holders.resize(self.holders.len() + self.n, IDLE);
                if !CENTRAL {
                    self.q_link.resize(self.holders.len(), (IDLE, 0));
                    self.q_prev.resize(self.holders.len(), IDLE);
                }
                (self.req.len() - 1) as u32
            }
            r => {
                self.free_head = self.req[r as usize].next;
                self.req[r as usize] = fresh;
                r
            }
        }
    }

    /// Returns request slot `r` to the free list.
    #[inline(always)]
    fn free(&mut self, r: u32) {
        self.req[r as usize].next = self.free_head;
        self.free_head = r;
    }

    /// Appends request `r` to the central buffer's list.
    #[inline]
    fn link(&mut self, r: u32) {
        let tail = self.req[HEAD as usize].prev;
        self.req[r as usize].prev = tail;
        self.req[r as usize].next = HEAD;
        self.req[tail as usize].next = r;
        self.req[HEAD as usize].prev = r;
    }

    /// Removes request `r` from the central buffer's list.
    #[inline]
    fn unlink(&mut self, r: u32) {
        let Request { next, prev, .. } = self.req[r as usize];
        self.req[prev as usize].next = next;
        self.req[next as usize].prev = prev;
    }

    /// Server `s` (idle, removing or just freed from a copy; not in the idle list) starts a
    /// copy of request `r`.
    #[inline(always)]
    fn start(&mut self, s: u32, r: u32, t: f64, rng: &mut Rng) {
        let c = self.srv[s as usize].cur;
        self.srv[s as usize].cur = r;
        if c == IDLE {
            self.busy_count += 1.0;
        }
        if EXPO {
            // the completion is one of the competing exponentials: nothing to draw
            if c >= REMOVING {
                self.srv[s as usize].pos = self.n_serving;
                self.serving[self.n_serving as usize] = s;
                self.n_serving += 1;
            }
            return;
        }
        self.token[s as usize] += 1;
        let end = t + self.draw(rng);
        self.heap.push(Event { t: end, server: s, token: self.token[s as usize] });
    }

    /// Server `s`, serving a copy, stops serving (exponential copies: leaves the serving set).
    #[inline(always)]
    fn stop_serving(&mut self, s: u32) {
        if EXPO {
            // the last member takes s's place
            let i = self.srv[s as usize].pos;
            self.n_serving -= 1;
            let last = self.serving[self.n_serving as usize];
            self.serving[i as usize] = last;
            self.srv[last as usize].pos = i;
        }
    }

    /// Free server `s` looks for work; without any it goes idle.
    #[inline(always)]
    fn next_work(&mut self, s: u32, t: f64, rng: &mut Rng) {
        let n = self.n;
        if CENTRAL {
            // the first waiting request without a copy at `s` (started or completed)
            let bit = 1u64 << (s & 63);
            let mut r = self.req[HEAD as usize].next;
            while r != HEAD {
                let i = r as usize;
                let started = self.req[i].started as usize;
                let held = &mut self.holders[i * n..i * n + n];
                if self.req[i].mask & bit == 0 || (self.servers > 64 && !held[..started].contains(&s)) {
                    held[started] = s;
                    self.req[i].started += 1;
                    self.req[i].mask |= bit;
                    if started + 1 == n {
                        self.unlink(r);
                    }
                    self.start(s, r, t, rng);
                    return;
                }
                r = self.req[i].next;
            }
        } else {
            // the head of its queue (a served request's copies have left the queues)
            let x = self.srv[s as usize].q_head;
            if x != IDLE {
                let (next, r) = self.q_link[x as usize];
                self.q_prev[x as usize] = IDLE;
                // an emptied queue's tail is the dummy (the new head's `q_prev` is not kept)
                let tail = self.srv[s as usize].q_tail;
                self.srv[s as usize].q_head = next;
                self.srv[s as usize].q_tail = if next == IDLE { DUMMY } else { tail };
                self.req[r as usize].refs -= 1;
                debug_assert!(!self.req[r as usize].finished);
                self.start(s, r, t, rng);
                return;
            }
        }
        // no work: idle
        let c = self.srv[s as usize].cur;
        if c != IDLE {
            self.busy_count -= 1.0;
            if c != REMOVING {
                self.stop_serving(s);
            }
        }
        self.srv[s as usize].cur = IDLE;
        if CENTRAL {
            self.idle[self.n_idle as usize] = s;
            self.n_idle += 1;
        }
    }

    /// An arrival at `t`; `first` (random dispatch with `n < N`: uniform in `0..N`, drawn by
    /// the caller) picks its first copy's server.
    #[inline(always)]
    fn arrive(&mut self, t: f64, first: u32, rng: &mut Rng) {
        self.arrivals += 1;
        self.in_sys += 1.0;
        let r = self.alloc(t);
        let (n, i) = (self.n, r as usize);
        if CENTRAL {
            // only idle servers can take the new request's copies
            let started = n.min(self.n_idle as usize);
            for c in 0..started {
                self.n_idle -= 1;
                let s = self.idle[self.n_idle as usize];
                self.holders[i * n + c] = s;
                self.req[i].mask |= 1 << (s & 63);
                self.start(s, r, t, rng);
            }
            self.req[i].started = started as u32;
            if started < n {
                self.link(r);
            }
        } else {
            // n distinct servers: with n = N every server, nothing to draw; else a partial
            // Fisher-Yates shuffle of the kept permutation, its first index `first` (uniform in
            // 0..N) given by the caller
            self.req[i].refs = n as u32;
            let m = self.servers as usize;
            if n == m {
                for c in 0..n {
                    self.dispatch(c as u32, r, i * n + c, t, rng);
                }
            } else if n == 2 {
                // the second a uniform one of the N - 1 others, by arithmetic (no shuffle)
                let second = first + 1 + index(rng, m as u32 - 1);
                let second = if second >= m as u32 { second - m as u32 } else { second };
                self.dispatch(first, r, i * n, t, rng);
                self.dispatch(second, r, i * n + 1, t, rng);
            } else {
                for c in 0..n {
                    let j = if c == 0 { first as usize } else { c + index(rng, (m - c) as u32) as usize };
                    self.perm.swap(c, j);
                    let s = self.perm[c];
                    self.dispatch(s, r, i * n + c, t, rng);
                }
            }
        }
    }

    /// Random dispatch: copy `x` of request `r` joins server `s`'s queue, or starts at once if
    /// `s` is idle (its queue is then empty).
    #[inline(always)]
    fn dispatch(&mut self, s: u32, r: u32, x: usize, t: f64, rng: &mut Rng) {
        self.holders[x] = s;
        if self.srv[s as usize].cur == IDLE {
            self.req[r as usize].refs -= 1;
            self.q_prev[x] = IDLE;
            self.start(s, r, t, rng);
        } else {
            // an empty queue's tail is the dummy record: no test of its emptiness but a select
            self.q_link[x] = (IDLE, r);
            let Server { q_head, q_tail, .. } = self.srv[s as usize];
            self.q_prev[x] = q_tail;
            self.q_link[q_tail as usize].0 = x as u32;
            self.srv[s as usize].q_head = if q_head == IDLE { x as u32 } else { q_head };
            self.srv[s as usize].q_tail = x as u32;
        }
    }

    /// Random dispatch: queued copy `x` leaves server `o`'s queue (no test of its place: the
    /// head's predecessor and an emptied queue's tail are the dummy record, head and tail are
    /// selects).
    #[inline(always)]
    fn leave_queue(&mut self, x: usize, o: u32) {
        let Server { q_head, q_tail, .. } = self.srv[o as usize];
        let next = self.q_link[x].0;
        let prev = if q_head == x as u32 { DUMMY } else { self.q_prev[x] };
        self.q_link[prev as usize].0 = next;
        self.q_prev[if next == IDLE { DUMMY } else { next } as usize] = prev;
        self.srv[o as usize].q_head = if q_head == x as u32 { next } else { q_head };
        self.srv[o as usize].q_tail = if q_tail == x as u32 { prev } else { q_tail };
        self.q_prev[x] = IDLE;
    }

    /// Copy `x` of the served request `r`, held by server `o` (not the one that completed it), is
    /// dropped: cancelled in service (removed for `removal`, or `o` looks for work at once),
    /// or (random dispatch) it leaves `o`'s queue; nothing if it completed before.
    #[inline(always)]
    fn drop_copy(&mut self, x: usize, o: u32, r: u32, t: f64, rng: &mut Rng) {
        if self.srv[o as usize].cur == r {
            self.cancelled += 1;
            if self.p.removal > 0.0 {
                self.stop_serving(o);
                self.token[o as usize] += 1;
                self.srv[o as usize].cur = REMOVING;
                self.removing.add(1.0, t);
                self.heap.push(Event { t: t + self.p.removal, server: o, token: self.token[o as usize] });
            } else {
                if !EXPO {
                    // its pending end is stale from now on
                    self.token[o as usize] += 1;
                }
                self.next_work(o, t, rng);
            }
        } else if !CENTRAL && self.q_prev[x] != IDLE {
            self.leave_queue(x, o);
        }
    }

    /// The end of server `s`'s copy (or removal) at `t`.
    #[inline(always)]
    fn complete(&mut self, s: u32, t: f64, rng: &mut Rng) {
        let r = self.srv[s as usize].cur;
        if r == REMOVING {
            self.removing.add(-1.0, t);
            self.next_work(s, t, rng);
            return;
        }
        let (n, i) = (self.n, r as usize);
        self.copies_done += 1;
        let req = &mut self.req[i];
        req.done += 1;
        if req.done == self.p.k {
            req.finished = true;
            self.served += 1;
            self.response_sum += t - req.arrival;
            self.in_sys -= 1.0;
            let held = if CENTRAL {
                let started = req.started as usize;
                if started < n {
                    self.unlink(r);
                }
                self.free(r);
                started
            } else {
                // its copies still queued leave their queues in the scan below
                req.refs = 0;
                self.free(r);
                n
            };
            if !CENTRAL && n == 2 {
                // the other copy, with no test of which place `s` holds
                let (h0, h1) = (self.holders[2 * i], self.holders[2 * i + 1]);
                self.drop_copy(2 * i + usize::from(h0 == s), h0 ^ h1 ^ s, r, t, rng);
            } else {
                for c in 0..held {
                    let o = self.holders[i * n + c];
                    if o != s {
                        self.drop_copy(i * n + c, o, r, t, rng);
                    }
                }
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
        self.advance(t);
        let in_system = self.in_system.take(t) + std::mem::take(&mut self.area_in_sys);
        let busy = self.busy.take(t) + std::mem::take(&mut self.area_busy);
        out.extras.push(in_system / (m * duration));
        out.extras.push(busy / (m * duration));
        out.extras.push(self.removing.take(t) / (m * duration));
        out.extras.push(std::mem::take(&mut self.response_sum));
        out.extras.push(std::mem::take(&mut self.served) as f64);
        out.extras.push(std::mem::take(&mut self.cancelled) as f64);
        out.extras.push(std::mem::take(&mut self.copies_done) as f64);
    }
}

impl<const CENTRAL: bool, const EXPO: bool> super::TimedFamily for KOfN<CENTRAL, EXPO> {
    #[inline]
    fn markov_rate(&self) -> f64 {
        self.arrival_rate + self.n_serving as f64
    }
    #[inline]
    fn next_event(&self) -> f64 {
        self.heap.peek().map_or(f64::INFINITY, |e| e.t)
    }
    #[inline(always)]
    fn on_markov(&mut self, t: f64, rate: f64, rng: &mut Rng) {
        self.advance(t);
        let busy = self.n_serving;
        if busy == 0 {
            let first = if CENTRAL || self.n == self.servers as usize { 0 } else { index(rng, self.servers) };
            self.arrive(t, first, rng);
            return;
        }
        // one uniform: below the arrival rate an arrival, and then its share of it,
        // `u / (N lambda)`, is uniform in [0, 1) and `u / lambda` gives the first copy's server;
        // else its excess over the arrival rate is uniform in [0, B) and its integer part the
        // completing server's place in the serving set
        let u = uniform(rng) * rate;
        if u < self.arrival_rate {
            let first = if CENTRAL { 0 } else { ((u * self.inv_lambda) as u32).min(self.servers - 1) };
            self.arrive(t, first, rng);
        } else {
            let j = ((u - self.arrival_rate) as u32).min(busy - 1);
            let s = self.serving[j as usize];
            self.complete(s, t, rng);
        }
    }
    #[inline]
    fn on_event(&mut self, rng: &mut Rng) -> bool {
        match self.heap.pop() {
            // a stale entry (its copy was removed since) is dropped: not an event
            Some(e) if e.token == self.token[e.server as usize] => {
                self.advance(e.t);
                self.complete(e.server, e.t, rng);
                true
            }
            _ => false,
        }
    }
    fn end_segment(&mut self, t: f64, duration: f64, out: &mut Batch) {
        self.close(t, duration, out);
    }
    /// By the ziggurat.
    #[inline(always)]
    fn holding_time(&self, rate: f64, rng: &mut Rng) -> f64 {
        exp1_ziggurat(rng) / rate
    }
}

/// The lumped case (module docs) on its own: the FIFO of arrival times, no server touched.
struct Lumped(KOfN<true, true>);

impl super::TimedFamily for Lumped {
    #[inline]
    fn markov_rate(&self) -> f64 {
        self.0.arrival_rate + self.0.lumped_rate
    }
    #[inline]
    fn next_event(&self) -> f64 {
        f64::INFINITY
    }
    #[inline(always)]
    fn on_markov(&mut self, t: f64, rate: f64, rng: &mut Rng) {
        self.0.lumped_event(t, rate, rng);
    }
    fn on_event(&mut self, _rng: &mut Rng) -> bool {
        false
    }
    fn end_segment(&mut self, t: f64, duration: f64, out: &mut Batch) {
        self.0.close(t, duration, out);
    }
    /// By the ziggurat.
    #[inline(always)]
    fn holding_time(&self, rate: f64, rng: &mut Rng) -> f64 {
        exp1_ziggurat(rng) / rate
    }
}

/// Runs one replication of the system of `params` with `servers` servers and arrival rate
/// `lambda` per server, by [`super::drive_timed`], on the code specialised to its dispatch and
/// to exponential or other copies.
pub(crate) fn run(servers: u32, lambda: f64, params: Params, p: &RunParams, rng: &mut Rng) -> Replication {
    let lumped = params.central && params.k == 1 && params.n == servers && params.removal == 0.0;
    if lumped && matches!(params.service, ServiceLaw::Exponential) {
        return super::drive_timed(&mut Lumped(KOfN::new(servers, lambda, params)), p, rng);
    }
    match (params.central, matches!(params.service, ServiceLaw::Exponential)) {
        (true, true) => super::drive_timed(&mut KOfN::<true, true>::new(servers, lambda, params), p, rng),
        (true, false) => super::drive_timed(&mut KOfN::<true, false>::new(servers, lambda, params), p, rng),
        (false, true) => super::drive_timed(&mut KOfN::<false, true>::new(servers, lambda, params), p, rng),
        (false, false) => super::drive_timed(&mut KOfN::<false, false>::new(servers, lambda, params), p, rng),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::exp1;
    use crate::families::TimedFamily;
    use rand::SeedableRng;

    impl<const CENTRAL: bool, const EXPO: bool> KOfN<CENTRAL, EXPO> {
        /// Asserts the bookkeeping against the servers' and requests' states.
        fn check(&self) {
            let (m, n) = (self.servers as usize, self.n);
            let is_free = |r: u32| {
                let mut f = self.free_head;
                while f != IDLE {
                    if f == r {
                        return true;
                    }
                    f = self.req[f as usize].next;
                }
                false
            };
            let live: Vec<u32> = (1..self.req.len() as u32).filter(|&r| !is_free(r)).collect();
            let unfinished: Vec<u32> = live.iter().copied().filter(|&r| !self.req[r as usize].finished).collect();
            assert_eq!(unfinished.len() as f64, self.in_sys, "requests in the system");
            for &r in &unfinished {
                let q = self.req[r as usize];
                assert!(q.done < self.p.k);
                let held = if CENTRAL { q.started as usize } else { n };
                let mut h = self.holders[r as usize * n..][..held].to_vec();
                h.sort_unstable();
                h.dedup();
                assert_eq!(h.len(), held, "request {r}: copies at distinct servers");
            }
            let serving: Vec<u32> = (0..m as u32).filter(|&s| self.srv[s as usize].cur < REMOVING).collect();
            let idle: Vec<u32> = (0..m as u32).filter(|&s| self.srv[s as usize].cur == IDLE).collect();
            let removing = (0..m).filter(|&s| self.srv[s].cur == REMOVING).count();
            assert_eq!((m - idle.len()) as f64, self.busy_count);
            assert_eq!(removing as f64, self.removing.value);
            for &s in &serving {
                let r = self.srv[s as usize].cur;
                assert!(unfinished.contains(&r), "server {s} serves a request in the system");
                let held = if CENTRAL { self.req[r as usize].started as usize } else { n };
                assert!(self.holders[r as usize * n..][..held].contains(&s));
            }
            if EXPO {
                assert_eq!(self.n_serving as usize, serving.len());
                for (i, &s) in self.serving[..self.n_serving as usize].iter().enumerate() {
                    assert!(serving.contains(&s));
                    assert_eq!(self.srv[s as usize].pos as usize, i);
                }
            }
            if CENTRAL {
                let mut listed = self.idle[..self.n_idle as usize].to_vec();
                listed.sort_unstable();
                assert_eq!(listed, idle, "the idle list");
                // the waiting list: the requests with unstarted copies, oldest first
                let mut waiting = Vec::new();
                let (mut r, mut prev) = (self.req[HEAD as usize].next, HEAD);
                while r != HEAD {
                    assert_eq!(self.req[r as usize].prev, prev);
                    waiting.push(r);
                    (prev, r) = (r, self.req[r as usize].next);
                }
                assert_eq!(self.req[HEAD as usize].prev, prev);
                let mut expected: Vec<u32> = unfinished.iter().copied().filter(|&r| (self.req[r as usize].started as usize) < n).collect();
                expected.sort_by(|a, b| self.req[*a as usize].arrival.total_cmp(&self.req[*b as usize].arrival));
                assert_eq!(waiting, expected, "the waiting list");
                // a server idles only if every waiting request holds a copy at it
                for &s in &idle {
                    for &r in &waiting {
                        let started = self.req[r as usize].started as usize;
                        assert!(self.holders[r as usize * n..][..started].contains(&s), "idle server {s}, waiting request {r}");
                    }
                }
            } else {
                let mut refs = vec![0u32; self.req.len()];
                for s in 0..m {
                    let mut x = self.srv[s].q_head;
                    if self.srv[s].cur == IDLE {
                        assert_eq!(x, IDLE, "an idle server's queue is empty");
                    }
                    while x != IDLE {
                        let (next, r) = self.q_link[x as usize];
                        assert_eq!(self.holders[x as usize], s as u32);
                        refs[r as usize] += 1;
                        if next == IDLE {
                            assert_eq!(self.srv[s].q_tail, x);
                        }
                        x = next;
                    }
                }
                for &r in &live {
                    assert_eq!(refs[r as usize], self.req[r as usize].refs, "request {r}: queue entries");
                    if self.req[r as usize].finished {
                        assert!(refs[r as usize] > 0, "a served request without queue entries is freed");
                    }
                }
            }
        }
    }

    fn exercise<const CENTRAL: bool, const EXPO: bool>(p: Params, lambda: f64) {
        let mut rng = Rng::seed_from_u64(11);
        let mut f = KOfN::<CENTRAL, EXPO>::new(6, lambda, p);
        let mut t = 0.0;
        for step in 0..40_000 {
            let rate = f.markov_rate();
            let next = t + exp1(&mut rng) / rate;
            let timed = f.next_event();
            if timed < next {
                t = timed;
                f.on_event(&mut rng);
            } else {
                t = next;
                f.on_markov(t, rate, &mut rng);
            }
            if step % 97 == 0 {
                f.check();
            }
        }
        assert!(f.served > 1000, "{p:?}: {} served", f.served);
    }

    /// Serving set, idle list, waiting list, queues and counts stay consistent with the
    /// servers' and requests' states, for both dispatches, exponential and timed copies, with
    /// and without a removal time.
    #[test]
    fn bookkeeping_stays_consistent() {
        for (k, n) in [(1, 2), (2, 4), (1, 3), (3, 3)] {
            for removal in [0.0, 0.3] {
                let lambda = 0.5 / k as f64;
                let p = |central, service| Params { k, n, central, service, removal };
                exercise::<true, true>(p(true, ServiceLaw::Exponential), lambda);
                exercise::<false, true>(p(false, ServiceLaw::Exponential), lambda);
                exercise::<true, false>(p(true, ServiceLaw::H2 { scv: 4.0 }), lambda);
                exercise::<false, false>(p(false, ServiceLaw::ShiftedExponential { shift: 0.5 }), lambda);
            }
        }
    }
}
