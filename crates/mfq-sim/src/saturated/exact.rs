//! `lbar / K` of the saturated system from its stationary distribution, for small `K`
//! ([`saturated_exact`]).
//!
//! # The state
//!
//! Reveal the backlog lazily and keep, of the jobs drawn so far, only what the future needs.
//! Let `R_1, R_2, ...` be the jobs in service in arrival order and `U_i = R_1 | ... | R_i` the
//! servers they cover. A job is in service iff it has a copy on a server not covered by the
//! jobs before it; so every waiting job between `R_i` and `R_{i+1}` has all its copies inside
//! `U_i`, and `R_m` (the last job in service) completes the cover, `U_m` = all servers. The
//! jobs after it have not been looked at: i.i.d. uniform `d`-subsets.
//!
//! The waiting jobs between `R_i` and `R_{i+1}` are never looked at individually until a
//! completion uncovers a server. Drawing i.i.d. jobs and keeping those inside a set `U` until
//! the first one that is not gives a geometric run: a **phase** with cover `U` is a run of
//! `G` jobs, `P(G >= n) = p(U)^n`, each uniform over the `d`-subsets of `U`, where
//! `p(U) = C(|U|, d) / C(K, d)`. The gap between `R_i` and `R_{i+1}` is a sum of `n_i >= 1`
//! independent phases with cover `U_i` (it starts with one; a completion can merge gaps). So
//! the state is
//!
//! ```text
//! (R_1, n_1, R_2, n_2, ..., n_{m-1}, R_m),  U_1 < U_2 < ... < U_m = all servers,
//! ```
//!
//! with `m` jobs in service, each completing at rate 1. It is exact (no approximation) but
//! the counts `n_i` are unbounded: the chain is infinite, and is truncated at `n_i <= cap`
//! (a merge that would exceed the cap keeps `cap` phases).
//!
//! # Transitions
//!
//! When `R_b` completes, the remaining sequence `R_1, gaps, ..., R_m, (unrevealed)` is scanned
//! from the front with the running cover `u` of the jobs kept so far. A job in service stays
//! in service (its cover only shrank before it) and extends `u`. A phase with cover `c = u`
//! stays as it is. A phase with cover `c > u` is read job by job: per step its next job lies
//! inside `u` with probability `p(u)`, lies in `c` but not in `u` with probability
//! `p(c) - p(u)`, or the phase ends with probability `1 - p(c)`. So its first part is one
//! phase with cover `u` (none if `|u| < d`); after it, with probability
//! `r = (p(c) - p(u)) / (1 - p(u))` comes a job uniform over the `d`-subsets of `c` not inside
//! `u`, which is in service, extends `u`, and the same phase goes on (memoryless); otherwise
//! the phase ends. The unrevealed part behaves as a phase with cover "all servers"
//! (`r = 1`) read until `u` covers every server. Relabelling the servers maps states to
//! states with the same rates, so states are stored up to a permutation of the servers (the
//! lexicographically smallest relabelling of `R_1..R_m`; the counts are attached to positions
//! and do not move).
//!
//! # Solution
//!
//! States are enumerated from the initial backlog (breadth first); the stationary
//! distribution `pi Q = 0` is solved by Gauss-Seidel sweeps until the largest relative change
//! is below `1e-13`; `lbar = sum_x pi(x) m(x)`. The truncation error is estimated by solving
//! again with half the cap: in the measurements the value converges geometrically in the cap
//! (`d = 2, K = 4`: 0.7192436, 0.7193521, 0.7193666 at caps 16, 24, 32), so
//! `|value(cap) - value(cap/2)|` bounds the error of `value(cap)` once the cap is past the
//! first few halvings.

use super::check_sizes;
use crate::{out_of_range, SimError};
use mfq_model::models::phase_type::PhaseType;
use serde::Serialize;
use std::collections::HashMap;

/// Largest `K` accepted by [`saturated_exact`] (relabellings are enumerated: `K!`).
pub const MAX_EXACT_SERVERS: usize = 6;
/// The phase cap used by [`super::identical_fcfs_stability`] (chains with `K = d + 2`: two
/// gaps, about 12 000-16 000 states, 1-2 s; truncation error estimate below 3e-6).
pub(crate) const DEFAULT_PHASE_CAP: u32 = 64;
/// Largest number of states [`saturated_exact`] builds before giving up.
pub const MAX_STATES: usize = 2_000_000;

/// Result of [`saturated_exact`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SaturatedExact {
    /// Copies per job.
    pub d: u32,
    /// Number of servers `K`.
    pub servers: usize,
    /// `lbar / K` at the phase cap.
    pub throughput_per_server: f64,
    /// `|value(cap) - value(cap / 2)|`, the estimated truncation error (0 when no transition
    /// reached the cap: only for `K = d`, where the chain has one state).
    pub truncation_error: f64,
    /// The phase cap used.
    pub phase_cap: u32,
    /// Number of states (up to relabelling) at the cap.
    pub states: usize,
    /// `||pi Q||_1` of the computed distribution (`pi` summing to 1).
    pub residual: f64,
}

/// `lbar / K` of the saturated system (redundancy-d, identical exponential copies, FCFS) from
/// its stationary distribution, truncating the phase counts at `phase_cap` (the state, its
/// transitions and the truncation: the [module documentation](self)).
///
/// Sizes (release build, one core): the number of states grows like `phase_cap^(K-d)`
/// (`K - d` gaps). `d = 2, K = 4`: 12 352 states at cap 64, 1.3 s with the half-cap solve,
/// 0.71936922, estimated error 2.6e-6 (the value at cap 96 differs by 2e-9). `d = 3, K = 5`:
/// 16 448 states, 1.6 s, 0.54771799, 7e-8. `d = 4, K = 6`: 4128 states at cap 32,
/// 0.4385323, 2.7e-6. `d = 2, K = 5` (three gaps) converges slowly: 167 616 states at cap 24
/// (44 s) give 0.744642 with an estimated error of 7.9e-4; simulate instead.
///
/// # Errors
/// [`SimError::OutOfRange`] for `d` outside `[1, K]`, `servers` (`K`) outside `[d, 6]`,
/// `phase_cap` outside `[2, 1000]`, or more than [`MAX_STATES`] states (field `phase_cap`).
///
/// # Example
///
/// ```
/// use mfq_sim::saturated::saturated_exact;
/// let e = saturated_exact(2, 4, 48).unwrap();
/// // 0.7193692 (an earlier independent simulation: 0.71936 +- 0.00020, docs/references.md)
/// assert!((e.throughput_per_server - 0.71936).abs() < 2e-4);
/// assert!(e.truncation_error < 5e-5);
/// ```
pub fn saturated_exact(d: u32, servers: usize, phase_cap: u32) -> Result<SaturatedExact, SimError> {
    saturated_exact_with(d, servers, phase_cap, None)
}

/// [`saturated_exact`] with phase-type job sizes `size` (unit-speed servers): the state adds
/// the phase of each job in service (a job completes `X` after its first copy started, so only
/// that copy's progress matters; a job entering service draws its phase from `alpha`), and
/// `throughput_per_server` is the long-run job completion rate per server (for exponential
/// sizes of mean 1, `lbar / K`). `None` is exponential with mean 1, as [`saturated_exact`].
/// The number of states is that of the exponential chain times up to `m^(jobs in service)`
/// for `m` phases: keep `K = d + 2` and the cap at 32 or below for `m >= 2`.
///
/// # Errors
/// As [`saturated_exact`].
///
/// # Example
///
/// ```
/// use mfq_model::models::phase_type::PhaseType;
/// use mfq_sim::saturated::{saturated_exact, exact::saturated_exact_with};
/// // exponential with mean 1 in phase-type form: the chain of saturated_exact
/// let ph = PhaseType::exponential(1.0).unwrap();
/// let a = saturated_exact_with(2, 4, 16, Some(&ph)).unwrap();
/// let b = saturated_exact(2, 4, 16).unwrap();
/// assert!((a.throughput_per_server - b.throughput_per_server).abs() < 1e-12);
/// ```
pub fn saturated_exact_with(d: u32, servers: usize, phase_cap: u32, size: Option<&PhaseType>) -> Result<SaturatedExact, SimError> {
    check_sizes(d, servers, MAX_EXACT_SERVERS)?;
    if !(2..=1000).contains(&phase_cap) {
        return Err(out_of_range("phase_cap", phase_cap, "an integer in [2, 1000]"));
    }
    let law = match size {
        Some(ph) => Law::of(ph),
        None => Law { alpha: vec![1.0], a: vec![-1.0], exit: vec![1.0] },
    };
    let full = Chain::build(d, servers as u32, phase_cap, &law)?;
    let value = full.solve();
    let truncation_error = if full.capped {
        let half = Chain::build(d, servers as u32, phase_cap / 2, &law)?;
        (value.0 - half.solve().0).abs()
    } else {
        0.0
    };
    Ok(SaturatedExact {
        d,
        servers,
        throughput_per_server: value.0 / servers as f64,
        truncation_error: truncation_error / servers as f64,
        phase_cap,
        states: full.m.len(),
        residual: value.1,
    })
}

/// A token of the scanned sequence.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    /// A job in service, by its set of servers (bit `s` = server `s`), and the phase of its
    /// size ([`NEW`] for a job that has just entered service: its phase is drawn from `alpha`).
    Job(u8, u8),
    /// `count` phases with cover `cover`.
    Phases { cover: u8, count: u32 },
    /// The unrevealed backlog.
    Tail,
}

/// The phase of a job that has just entered service (drawn from `alpha` in [`Builder::states_of`]).
const NEW: u8 = u8::MAX;

/// A state: the sets of the `m` jobs in service (`masks[..m]`), the `m - 1` phase counts, and
/// the phase of the size of each job in service (`size_phase[..m]`; always 0 for exponential
/// sizes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct State {
    m: u8,
    masks: [u8; MAX_EXACT_SERVERS],
    counts: [u16; MAX_EXACT_SERVERS],
    size_phase: [u8; MAX_EXACT_SERVERS],
}

/// The truncated chain: states, jobs in service per state, and incoming transitions
/// (`into[i]` = `(source, rate)` pairs, self-loops excluded) with total outflow per state.
struct Chain {
    /// Completion rate (jobs per unit time) of each state.
    m: Vec<f64>,
    into_start: Vec<usize>,
    into: Vec<(u32, f64)>,
    out_rate: Vec<f64>,
    /// Whether some transition hit the phase cap.
    capped: bool,
}

/// The model's constants and the relabelling cache.
struct Builder {
    full: u8,
    cap: u32,
    /// `p[|U|] = C(|U|, d) / C(K, d)`.
    p: Vec<f64>,
    /// All `d`-subsets of the servers.
    subsets: Vec<u8>,
    /// `perm_mask[p][mask]` = image of `mask` under the `p`-th permutation of the servers.
    perm_mask: Vec<[u8; 64]>,
    canon_cache: HashMap<[u8; MAX_EXACT_SERVERS], [u8; MAX_EXACT_SERVERS]>,
    capped: bool,
}

fn binomial(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

fn permutations(k: usize) -> Vec<Vec<usize>> {
    fn go(prefix: &mut Vec<usize>, used: &mut Vec<bool>, out: &mut Vec<Vec<usize>>) {
        if prefix.len() == used.len() {
            out.push(prefix.clone());
            return;
        }
        for i in 0..used.len() {
            if !used[i] {
                used[i] = true;
                prefix.push(i);
                go(prefix, used, out);
                prefix.pop();
                used[i] = false;
            }
        }
    }
    let mut out = Vec::new();
    go(&mut Vec::new(), &mut vec![false; k], &mut out);
    out
}

impl Builder {
    fn new(d: u32, k: u32, cap: u32) -> Self {
        let total = binomial(k, d);
        let p = (0..=k).map(|u| binomial(u, d) / total).collect();
        let full = ((1u32 << k) - 1) as u8;
        let subsets = (0..=full).filter(|s| s.count_ones() == d).collect();
        let perm_mask = permutations(k as usize)
            .into_iter()
            .map(|perm| {
                let mut t = [0u8; 64];
                for (mask, img) in t.iter_mut().enumerate().take(1 << k) {
                    *img = (0..k as usize).filter(|&s| mask >> s & 1 == 1).map(|s| 1u8 << perm[s]).sum();
                }
                t
            })
            .collect();
        Builder { full, cap, p, subsets, perm_mask, canon_cache: HashMap::new(), capped: false }
    }

    fn pc(&self, u: u8) -> f64 {
        self.p[u.count_ones() as usize]
    }

    /// Scans `head, rest...` with running cover `u`, calling `sink(prob, tokens)` for every
    /// outcome (see the module docs).
    fn scan(&self, head: Tok, rest: &[Tok], u: u8, out: &mut Vec<Tok>, prob: f64, sink: &mut dyn FnMut(f64, &[Tok])) {
        match head {
            Tok::Job(s, _) => {
                debug_assert!(s & !u != 0, "a job in service stays in service");
                out.push(head);
                self.scan(rest[0], &rest[1..], u | s, out, prob, sink);
                out.pop();
            }
            Tok::Tail if u == self.full => sink(prob, out),
            Tok::Phases { cover, .. } if cover == u => {
                out.push(head);
                self.scan(rest[0], &rest[1..], u, out, prob, sink);
                out.pop();
            }
            Tok::Tail | Tok::Phases { .. } => {
                let (cover, count) = match head {
                    Tok::Phases { cover, count } => (cover, count),
                    _ => (self.full, 1),
                };
                debug_assert_eq!(cover & u, u);
                let n0 = out.len();
                if self.pc(u) > 0.0 {
                    out.push(Tok::Phases { cover: u, count: 1 });
                }
                // the unrevealed backlog is never exhausted: r = 1
                let r = if head == Tok::Tail { 1.0 } else { (self.pc(cover) - self.pc(u)) / (1.0 - self.pc(u)) };
                let n_new = self.subsets.iter().filter(|&&s| s & !cover == 0 && s & !u != 0).count() as f64;
                for &s in &self.subsets {
                    if s & !cover == 0 && s & !u != 0 {
                        out.push(Tok::Job(s, NEW));
                        self.scan(head, rest, u | s, out, prob * r / n_new, sink);
                        out.pop();
                    }
                }
                if r < 1.0 {
                    if count > 1 {
                        self.scan(Tok::Phases { cover, count: count - 1 }, rest, u, out, prob * (1.0 - r), sink);
                    } else {
                        self.scan(rest[0], &rest[1..], u, out, prob * (1.0 - r), sink);
                    }
                }
                out.truncate(n0);
            }
        }
    }

    /// The smallest relabelling of the masks (cached).
    fn canonical_masks(&mut self, m: usize, masks: [u8; MAX_EXACT_SERVERS]) -> [u8; MAX_EXACT_SERVERS] {
        if let Some(c) = self.canon_cache.get(&masks) {
            return *c;
        }
        let mut best = masks;
        for t in &self.perm_mask {
            let mut img = [0u8; MAX_EXACT_SERVERS];
            for i in 0..m {
                img[i] = t[masks[i] as usize];
            }
            if img < best {
                best = img;
            }
        }
        self.canon_cache.insert(masks, best);
        best
    }

    /// The canonical states of a scanned token sequence (jobs and phases, in order), each with
    /// its probability: the jobs that have just entered service draw the phase of their size
    /// from `alpha` (one state for exponential sizes).
    fn states_of(&mut self, toks: &[Tok], alpha: &[f64], out: &mut Vec<(f64, State)>) {
        out.clear();
        let mut masks = [0u8; MAX_EXACT_SERVERS];
        let mut counts = [0u16; MAX_EXACT_SERVERS];
        let mut size_phase = [0u8; MAX_EXACT_SERVERS];
        let mut m = 0usize;
        let mut phases = 0u32;
        for t in toks {
            match *t {
                Tok::Job(s, ph) => {
                    if m > 0 {
                        debug_assert!(phases >= 1, "a gap holds at least one phase");
                        if phases > self.cap {
                            self.capped = true;
                        }
                        counts[m - 1] = phases.min(self.cap) as u16;
                    }
                    masks[m] = s;
                    size_phase[m] = ph;
                    m += 1;
                    phases = 0;
                }
                Tok::Phases { count, .. } => phases += count,
                Tok::Tail => unreachable!("the scan stops at the tail"),
            }
        }
        let masks = self.canonical_masks(m, masks);
        out.push((1.0, State { m: m as u8, masks, counts, size_phase }));
        // expand the new jobs' phases, one position at a time
        for pos in (0..m).filter(|&i| size_phase[i] == NEW) {
            let mut next = Vec::with_capacity(out.len() * alpha.len());
            for &(p, x) in out.iter() {
                for (j, &a) in alpha.iter().enumerate().filter(|e| *e.1 > 0.0) {
                    let mut y = x;
                    y.size_phase[pos] = j as u8;
                    next.push((p * a, y));
                }
            }
            *out = next;
        }
    }

    /// The token sequence left when the `b`-th job in service of `x` completes.
    fn after_completion(&self, x: &State, b: usize, toks: &mut Vec<Tok>) {
        toks.clear();
        let m = x.m as usize;
        let mut cover = 0u8;
        for i in 0..m {
            cover |= x.masks[i];
            if i != b {
                toks.push(Tok::Job(x.masks[i], x.size_phase[i]));
            }
            if i + 1 < m {
                toks.push(Tok::Phases { cover, count: x.counts[i] as u32 });
            }
        }
        toks.push(Tok::Tail);
    }
}

/// The size law in the chain: initial phase probabilities, sub-generator (row-major) and exit
/// rates (exponential(1): `[1], [-1], [1]`).
struct Law {
    alpha: Vec<f64>,
    a: Vec<f64>,
    exit: Vec<f64>,
}

impl Law {
    fn of(ph: &PhaseType) -> Law {
        Law { alpha: ph.alpha().to_vec(), a: ph.sub_generator().to_vec(), exit: ph.exit_rates().to_vec() }
    }
    fn phases(&self) -> usize {
        self.alpha.len()
    }
}

/// The transitions out of `x`, with rates, as `(target state, rate)` (targets may repeat):
/// the completion of each job in service (at the exit rate of its phase) and the phase moves
/// of its size.
fn transitions_from(b: &mut Builder, law: &Law, x: &State, sink: &mut dyn FnMut(State, f64)) {
    let (mut toks, mut out, mut outcomes, mut expanded) = (Vec::new(), Vec::new(), Vec::<(f64, Vec<Tok>)>::new(), Vec::new());
    let m = law.phases();
    for j in 0..x.m as usize {
        let ph = x.size_phase[j] as usize;
        let rate = law.exit[ph];
        if rate > 0.0 {
            b.after_completion(x, j, &mut toks);
            b.scan(toks[0], &toks[1..], 0, &mut out, 1.0, &mut |p, t| outcomes.push((p, t.to_vec())));
            for (p, t) in outcomes.drain(..) {
                b.states_of(&t, &law.alpha, &mut expanded);
                for &(q, y) in &expanded {
                    sink(y, rate * p * q);
                }
            }
        }
        for next in (0..m).filter(|&n| n != ph && law.a[ph * m + n] > 0.0) {
            let mut y = *x;
            y.size_phase[j] = next as u8;
            sink(y, law.a[ph * m + next]);
        }
    }
}

impl Chain {
    fn build(d: u32, k: u32, cap: u32, law: &Law) -> Result<Chain, SimError> {
        let mut b = Builder::new(d, k, cap);
        let mut index: HashMap<State, u32> = HashMap::new();
        let mut states: Vec<State> = Vec::new();
        let mut start = None;
        b.scan(Tok::Tail, &[], 0, &mut Vec::new(), 1.0, &mut |_, toks| start = Some(toks.to_vec()));
        let mut first = Vec::new();
        b.states_of(&start.expect("the initial scan has one outcome"), &law.alpha, &mut first);
        index.insert(first[0].1, 0);
        states.push(first[0].1);

        // outgoing transitions, merged per target
        let mut rows: Vec<Vec<(u32, f64)>> = Vec::new();
        let mut i = 0;
        while i < states.len() {
            let x = states[i];
            let mut row: HashMap<u32, f64> = HashMap::new();
            transitions_from(&mut b, law, &x, &mut |y, rate| {
                let next = states.len() as u32;
                let idx = *index.entry(y).or_insert_with(|| {
                    states.push(y);
                    next
                });
                *row.entry(idx).or_insert(0.0) += rate;
            });
            if states.len() > MAX_STATES {
                return Err(out_of_range(
                    "phase_cap",
                    cap,
                    &format!("a cap small enough for at most {MAX_STATES} states (d = {d}, K = {k})"),
                ));
            }
            let mut row: Vec<(u32, f64)> = row.into_iter().collect();
            row.sort_by_key(|e| e.0);
            rows.push(row);
            i += 1;
        }

        // incoming transitions (self-loops dropped from both sides of the balance equations)
        let n = states.len();
        let mut out_rate = vec![0.0; n];
        let mut into_count = vec![0usize; n + 1];
        for (src, row) in rows.iter().enumerate() {
            for &(dst, rate) in row {
                if dst as usize != src {
                    out_rate[src] += rate;
                    into_count[dst as usize + 1] += 1;
                }
            }
        }
        for j in 0..n {
            into_count[j + 1] += into_count[j];
        }
        let mut fill = into_count.clone();
        let mut into = vec![(0u32, 0.0); into_count[n]];
        for (src, row) in rows.iter().enumerate() {
            for &(dst, rate) in row {
                if dst as usize != src {
                    into[fill[dst as usize]] = (src as u32, rate);
                    fill[dst as usize] += 1;
                }
            }
        }
        let m = states.iter().map(|s| (0..s.m as usize).map(|j| law.exit[s.size_phase[j] as usize]).sum()).collect();
        Ok(Chain { m, into_start: into_count, into, out_rate, capped: b.capped })
    }

    /// Gauss-Seidel on `pi_j out_j = sum_i pi_i q_ij`; returns `(lbar, ||pi Q||_1)`.
    fn solve(&self) -> (f64, f64) {
        let n = self.m.len();
        let mut pi = vec![1.0 / n as f64; n];
        for _sweep in 0..1_000_000 {
            let mut change = 0.0f64;
            for j in 0..n {
                if self.out_rate[j] == 0.0 {
                    continue; // absorbing (only the one-state chains): keeps its mass
                }
                let inflow: f64 = self.into[self.into_start[j]..self.into_start[j + 1]].iter().map(|&(i, r)| pi[i as usize] * r).sum();
                let new = inflow / self.out_rate[j];
                change = change.max((new - pi[j]).abs() / new.max(1e-300));
                pi[j] = new;
            }
            let total: f64 = pi.iter().sum();
            pi.iter_mut().for_each(|v| *v /= total);
            if change < 1e-13 {
                break;
            }
        }
        let residual: f64 = (0..n)
            .map(|j| {
                let inflow: f64 = self.into[self.into_start[j]..self.into_start[j + 1]].iter().map(|&(i, r)| pi[i as usize] * r).sum();
                (inflow - pi[j] * self.out_rate[j]).abs()
            })
            .sum();
        (pi.iter().zip(&self.m).map(|(p, m)| p * m).sum(), residual)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_probabilities_sum_to_one() {
        for (d, k) in [(2u32, 4u32), (2, 5), (3, 5), (3, 6)] {
            let b = Builder::new(d, k, 8);
            // the initial state and one completion of each job in service of it
            let mut start = None;
            b.scan(Tok::Tail, &[], 0, &mut Vec::new(), 1.0, &mut |p, t| {
                if start.is_none() {
                    start = Some((p, t.to_vec()))
                }
            });
            let mut b = b;
            let mut v = Vec::new();
            b.states_of(&start.unwrap().1, &[1.0], &mut v);
            let x = v[0].1;
            let mut toks = Vec::new();
            for j in 0..x.m as usize {
                b.after_completion(&x, j, &mut toks);
                let mut total = 0.0;
                b.scan(toks[0], &toks[1..], 0, &mut Vec::new(), 1.0, &mut |p, _| total += p);
                assert!((total - 1.0).abs() < 1e-12, "d = {d}, K = {k}: {total}");
            }
        }
    }
}
