//! Asynchronous multi-packet-reception (MPR) random access with a threshold on ongoing
//! transmissions: the renewal-theoretic fixed point of `n` saturated nodes (kind `mpr-mac`).
//!
//! The system (constructed here from the abstract of Mukhopadhyay, Mehta, Srinivasan, "Design
//! and analysis of an acknowledgment-aware asynchronous MPR MAC protocol for distributed
//! WLANs", IEEE Trans. Wireless Commun. 12(5):2068-2079, 2013; the paper's own equations are
//! not reproduced, docs/models/mpr-mac.md says what is published and what is built here):
//!
//! - Time is divided into mini-slots (the time unit). `n` saturated nodes send to one receiver
//!   that decodes up to `M` overlapping packets: a packet succeeds iff the number of ongoing
//!   transmissions never exceeds `M` during its airtime.
//! - A node senses the number `C` of ongoing transmissions at the start of each mini-slot; its
//!   estimate is `C - 1` or `C + 1` with probability `eps / 2` each (`eps` = `sensing_error`),
//!   else `C`. In a mini-slot whose estimate is below the threshold `K <= M` its backoff counter
//!   runs: it transmits if the counter is 0, else decrements it; otherwise the counter freezes.
//! - Binary exponential backoff: at stage `j` the counter is drawn uniformly from
//!   `{0, ..., W_j - 1}`, `W_j = 2^min(j, m) W`; a failure moves to stage `j + 1`; after
//!   `R + 1` failed attempts the packet is dropped (no limit when `retry_limit` is absent, as in
//!   Bianchi's model); a success or a drop restarts at stage 0 with the next packet.
//! - The packets that start in the same mini-slot end together, after a geometric number of
//!   mini-slots of mean `T` (`airtime`): only the mean airtime enters the renewal argument, and
//!   with `M = K = 1` the model is Bianchi's with `T_s = T_c = T` mini-slots.
//!
//! Analysis (the decoupling approximation of Bianchi, "Performance analysis of the IEEE 802.11
//! distributed coordination function", IEEE JSAC 18(3):535-547, 2000, in the renewal-reward
//! form of Kumar, Altman, Miorandi, Goyal, "New insights from a fixed-point analysis of single
//! cell IEEE 802.11 WLANs", IEEE/ACM Trans. Networking 15(3):588-601, 2007): every node
//! attempts in a mini-slot where its counter runs with the same probability `beta`, independently
//! of the others, and every attempt fails with the same probability `gamma`. Then
//!
//! ```text
//! beta  = G(gamma) = sum_{j=0}^{R} gamma^j / sum_{j=0}^{R} gamma^j (W_j + 1) / 2    (Kumar et al. 2007)
//! gamma = Gamma(beta)                                                                (the channel chain)
//! ```
//!
//! where `Gamma` comes from the Markov chain of the ongoing transmissions (multisets of cohort
//! sizes, [`MprMac`]) with `n - C` nodes attempting with probability `beta q(C)` per mini-slot
//! (`q(C)` = probability that the estimate is below `K`). `G` decreases in `gamma`; the scalar
//! fixed point `beta = G(Gamma(beta))` is found by Brent's method on `[0, 1]` and its uniqueness
//! is checked by a scan for sign changes ([`MprMac::sign_changes`]).

use crate::finite::Simulation;
use crate::models::roots::bracketed_root;
use crate::registry::{read_spec, Kind, KindSpec, Param, ParamRange};
use crate::{out_of_range, MeanFieldModel, ModelError, Observables, Stability, StateLayout};
use std::collections::HashMap;

/// Largest `M` (packets decoded at once): the channel chain has one state per multiset of cohort
/// sizes, which grows like the partitions of `K`.
pub const MAX_MPR: usize = 6;
/// Largest number of nodes.
pub const MAX_NODES: usize = 100_000;
/// Largest number of window doublings `m`.
pub const MAX_STAGES: usize = 20;
/// Largest initial window `W`.
pub const MAX_WINDOW: usize = 1 << 20;
/// Largest retry limit `R`.
pub const MAX_RETRY: usize = 1000;
/// Largest mean airtime `T` in mini-slots.
pub const MAX_AIRTIME: f64 = 1e6;
/// Points of the scan of `beta - G(Gamma(beta))` for sign changes.
const SCAN_POINTS: usize = 32;

/// Binary exponential backoff: initial window `W`, `m` doublings, retry limit `R` (`None`: none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// Initial window `W >= 1` (mini-slots).
    pub window: usize,
    /// Number of doublings `m` (the window stays at `2^m W` from stage `m` on).
    pub stages: usize,
    /// Retry limit `R`: a packet is dropped after `R + 1` failed attempts; `None`: never.
    pub retry_limit: Option<usize>,
}

impl Backoff {
    /// Mean number of mini-slots with a running counter per attempt at stage `j`, including the
    /// attempt: `b_j = (W_j + 1) / 2`, `W_j = 2^min(j, m) W`.
    pub fn mean_slots(&self, j: usize) -> f64 {
        (self.window as f64 * 2f64.powi(j.min(self.stages) as i32) + 1.0) / 2.0
    }

    /// The attempt probability per mini-slot with a running counter, given the failure
    /// probability `gamma` of an attempt: `G(gamma) = sum_j gamma^j / sum_j gamma^j b_j` over
    /// `j = 0..=R` (Kumar, Altman, Miorandi, Goyal, IEEE/ACM ToN 15(3) 2007, their map G). Without a
    /// retry limit both sums run to infinity and `G = 1 / ((1 - gamma) sum_{j<m} gamma^j b_j +
    /// gamma^m b_m)`, which is Bianchi's `tau(p)` (JSAC 18(3) 2000, eq. 7) with `p = gamma`.
    pub fn attempt_probability(&self, gamma: f64) -> f64 {
        match self.retry_limit {
            Some(r) => {
                let (mut num, mut den, mut g) = (0.0, 0.0, 1.0);
                for j in 0..=r {
                    num += g;
                    den += g * self.mean_slots(j);
                    g *= gamma;
                }
                num / den
            }
            None => {
                let (mut head, mut g) = (0.0, 1.0);
                for j in 0..self.stages {
                    head += g * self.mean_slots(j);
                    g *= gamma;
                }
                1.0 / ((1.0 - gamma) * head + g * self.mean_slots(self.stages))
            }
        }
    }

    /// Mean number of attempts per packet, `sum_{j=0}^{R} gamma^j` (infinite when there is no
    /// retry limit and `gamma = 1`).
    pub fn mean_attempts(&self, gamma: f64) -> f64 {
        match self.retry_limit {
            Some(r) => (0..=r).map(|j| gamma.powi(j as i32)).sum(),
            None => 1.0 / (1.0 - gamma),
        }
    }

    /// Probability that a packet is dropped, `gamma^(R + 1)` (0 without a retry limit).
    pub fn drop_probability(&self, gamma: f64) -> f64 {
        self.retry_limit.map_or(0.0, |r| gamma.powi(r as i32 + 1))
    }
}

/// The parameters of the MPR MAC (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MacParams {
    /// Saturated nodes `n >= 1`.
    pub nodes: usize,
    /// Packets the receiver decodes at once, `M` in `1..=6`.
    pub mpr: usize,
    /// Threshold `K` in `1..=M`: a counter runs while the sensed number of ongoing
    /// transmissions is below `K`.
    pub threshold: usize,
    /// The backoff.
    pub backoff: Backoff,
    /// Mean airtime `T >= 1` of a packet, in mini-slots.
    pub airtime: f64,
    /// Probability `eps` in `[0, 1]` that a node's estimate is off by one (each sign `eps / 2`).
    pub sensing_error: f64,
}

impl MacParams {
    /// Checks every field.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.nodes` (0 or above 100000), `model.mpr` (0 or
    /// above 6), `model.threshold` (0 or above `mpr`), `model.window` (0 or above 2^20),
    /// `model.stages` (above 20), `model.retry_limit` (above 1000), `model.airtime` (not finite
    /// or not in `[1, 1e6]`) or `model.sensing_error` (not in `[0, 1]`).
    pub fn validate(&self) -> Result<(), ModelError> {
        if !(1..=MAX_NODES).contains(&self.nodes) {
            return Err(out_of_range("model.nodes", self.nodes, "an integer in [1, 100000] (saturated nodes)"));
        }
        if !(1..=MAX_MPR).contains(&self.mpr) {
            return Err(out_of_range("model.mpr", self.mpr, "an integer in [1, 6] (packets the receiver decodes at once)"));
        }
        if !(1..=self.mpr).contains(&self.threshold) {
            return Err(out_of_range(
                "model.threshold",
                self.threshold,
                &format!(
                    "an integer in [1, mpr] = [1, {}] (nodes count down while fewer than threshold transmissions are sensed)",
                    self.mpr
                ),
            ));
        }
        let b = &self.backoff;
        if !(1..=MAX_WINDOW).contains(&b.window) {
            return Err(out_of_range("model.window", b.window, "an integer in [1, 1048576] (initial backoff window, mini-slots)"));
        }
        if b.stages > MAX_STAGES {
            return Err(out_of_range("model.stages", b.stages, "an integer in [0, 20] (doublings of the backoff window)"));
        }
        if let Some(r) = b.retry_limit.filter(|r| *r > MAX_RETRY) {
            return Err(out_of_range(
                "model.retry_limit",
                r,
                "an integer in [0, 1000] (retransmissions before a drop), or absent for none",
            ));
        }
        if !(self.airtime.is_finite() && (1.0..=MAX_AIRTIME).contains(&self.airtime)) {
            return Err(out_of_range("model.airtime", self.airtime, "a number in [1, 1e6] (mean packet airtime, mini-slots)"));
        }
        if !(0.0..=1.0).contains(&self.sensing_error) {
            return Err(out_of_range("model.sensing_error", self.sensing_error, "a probability in [0, 1]"));
        }
        Ok(())
    }

    /// Probability `q(c)` that a node's estimate of `c` ongoing transmissions is below `K`.
    pub fn runs(&self, c: usize) -> f64 {
        let (k, e) = (self.threshold, self.sensing_error);
        if c + 1 < k {
            1.0
        } else if c + 1 == k {
            1.0 - e / 2.0
        } else if c == k {
            e / 2.0
        } else {
            0.0
        }
    }
}

/// `P(S = s)` for `s < cap` and `P(S >= cap)` at `out[cap]`, `S ~ Bin(trials, p)`.
fn binomial_capped(trials: usize, p: f64, cap: usize, out: &mut Vec<f64>) {
    out.clear();
    out.resize(cap + 1, 0.0);
    if p >= 1.0 {
        out[trials.min(cap)] = 1.0;
        return;
    }
    let mut term = (1.0 - p).powi(trials as i32);
    let ratio = p / (1.0 - p);
    let mut sum = 0.0;
    for (s, o) in out.iter_mut().enumerate().take(cap.min(trials + 1)) {
        *o = term;
        sum += term;
        term *= (trials - s) as f64 / (s + 1) as f64 * ratio;
    }
    if trials >= cap {
        out[cap] = (1.0 - sum).max(0.0);
    }
}

/// Dense linear solve `a x = rhs` (row-major `a`, `dim x dim`) by Gaussian elimination with
/// partial pivoting; `a` and `rhs` are overwritten, the solution is left in `rhs`.
fn solve_dense(a: &mut [f64], rhs: &mut [f64], dim: usize) {
    for c in 0..dim {
        let p = (c..dim).max_by(|&x, &y| a[x * dim + c].abs().total_cmp(&a[y * dim + c].abs())).unwrap_or(c);
        if p != c {
            for j in 0..dim {
                a.swap(c * dim + j, p * dim + j);
            }
            rhs.swap(c, p);
        }
        let pivot = a[c * dim + c];
        if pivot == 0.0 {
            continue;
        }
        for r in c + 1..dim {
            let f = a[r * dim + c] / pivot;
            if f != 0.0 {
                for j in c..dim {
                    a[r * dim + j] -= f * a[c * dim + j];
                }
                rhs[r] -= f * rhs[c];
            }
        }
    }
    for c in (0..dim).rev() {
        let s: f64 = (c + 1..dim).map(|j| a[c * dim + j] * rhs[j]).sum();
        let pivot = a[c * dim + c];
        rhs[c] = if pivot == 0.0 { 0.0 } else { (rhs[c] - s) / pivot };
    }
}

/// The channel: multisets of cohort sizes (a cohort = the packets that started in one
/// mini-slot), sizes above `M` lumped into `M + 1` (such a cohort fails and blocks every
/// counter, so its exact size is never needed), with the end transitions precomputed.
#[derive(Debug, Clone, PartialEq)]
struct Channel {
    /// Sorted cohort sizes of each state.
    states: Vec<Vec<u8>>,
    /// Ongoing transmissions of each state (`M + 1` counts for a lumped cohort).
    total: Vec<usize>,
    /// `add[x * (M + 2) + s]`: the state `x` plus a cohort of size `s` (`s >= 1`), or `usize::MAX`.
    add: Vec<usize>,
    /// For each state: the states left after the independent ends of its cohorts, with their
    /// probabilities (each cohort ends at the end of a mini-slot with probability `1 / T`).
    ends: Vec<Vec<(usize, f64)>>,
}

impl Channel {
    fn new(p: &MacParams) -> Channel {
        let cap = p.mpr + 1;
        let mut ch = Channel { states: Vec::new(), total: Vec::new(), add: Vec::new(), ends: Vec::new() };
        let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
        let intern = |ch: &mut Channel, index: &mut HashMap<Vec<u8>, usize>, v: Vec<u8>| -> usize {
            if let Some(&i) = index.get(&v) {
                return i;
            }
            let i = ch.states.len();
            ch.total.push(v.iter().map(|&s| s as usize).sum());
            index.insert(v.clone(), i);
            ch.states.push(v);
            ch.add.extend(std::iter::repeat_n(usize::MAX, cap + 1));
            i
        };
        intern(&mut ch, &mut index, Vec::new());
        let pe = 1.0 / p.airtime;
        let mut next = 0;
        while next < ch.states.len() {
            let x = ch.states[next].clone();
            let c = ch.total[next];
            if p.runs(c) > 0.0 {
                for s in 1..=cap.min(p.nodes.saturating_sub(c)) {
                    let mut y = x.clone();
                    y.push(s as u8);
                    y.sort_unstable();
                    let j = intern(&mut ch, &mut index, y);
                    ch.add[next * (cap + 1) + s] = j;
                }
            }
            // independent ends: enumerate the subsets of cohorts that stay
            let mut outcomes: HashMap<usize, f64> = HashMap::new();
            let len = x.len();
            for mask in 0u32..(1 << len) {
                let stay: Vec<u8> = (0..len).filter(|i| mask & (1 << i) != 0).map(|i| x[i]).collect();
                let k = stay.len() as i32;
                let prob = (1.0 - pe).powi(k) * pe.powi(len as i32 - k);
                if prob > 0.0 {
                    let j = intern(&mut ch, &mut index, stay);
                    *outcomes.entry(j).or_insert(0.0) += prob;
                }
            }
            let mut list: Vec<(usize, f64)> = outcomes.into_iter().collect();
            list.sort_unstable_by_key(|e| e.0);
            ch.ends.push(list);
            next += 1;
        }
        ch
    }

    fn len(&self) -> usize {
        self.states.len()
    }
}

/// The quantities of the channel chain at one attempt probability `beta`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ChannelAt {
    /// Failure probability of an attempt, `Gamma(beta)`.
    gamma: f64,
    /// Success probability of an attempt, `1 - gamma`, computed as such (not by subtraction:
    /// it is tiny when the channel is crowded).
    success: f64,
    /// `ln(1 - gamma)`, finite where `success` underflows to 0 (down to about `-1e5` at
    /// 1e5 nodes).
    log_success: f64,
    /// Attempts per node per mini-slot, `beta E[(n - C) q(C)] / n`.
    attempt_rate: f64,
    /// Stationary probability that the channel is idle (no ongoing transmission).
    idle: f64,
    /// Stationary mean number of ongoing transmissions counted at most `M + 1` per cohort.
    mean_ongoing: f64,
}

/// The MPR MAC's fixed point (see the module docs). A one-dimensional "model" whose state is the
/// attempt probability `beta` per mini-slot with a running counter and whose drift is the
/// relaxation `beta* - beta` towards the computed fixed point: it has no dynamics
/// ([`MeanFieldModel::dynamics_note`]).
///
/// Source: system constructed from the abstract of Mukhopadhyay, Mehta, Srinivasan, IEEE Trans.
/// Wireless Commun. 12(5), 2013; fixed point in the style of Bianchi, IEEE JSAC 18(3), 2000, and
/// Kumar et al., IEEE/ACM ToN 15(3), 2007 (docs/models/mpr-mac.md).
///
/// ```
/// use mfq_model::models::mpr_mac::{Backoff, MacParams, MprMac};
/// let p = MacParams {
///     nodes: 10, mpr: 1, threshold: 1, airtime: 20.0, sensing_error: 0.0,
///     backoff: Backoff { window: 32, stages: 3, retry_limit: None },
/// };
/// let mac = MprMac::new(p).unwrap();
/// // M = K = 1 is Bianchi's model: gamma = 1 - (1 - beta)^(n - 1)
/// assert!((mac.gamma() - (1.0 - (1.0 - mac.beta()).powi(9))).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MprMac {
    params: MacParams,
    beta: f64,
    at: ChannelAt,
    sign_changes: usize,
}

impl MprMac {
    /// Solves the fixed point at `params`.
    ///
    /// # Errors
    /// As [`MacParams::validate`]; [`ModelError::OutOfRange`] naming `model` if Brent's method
    /// fails (it does not when `G` and the chain are finite, which they are for valid input).
    pub fn new(params: MacParams) -> Result<Self, ModelError> {
        params.validate()?;
        let ch = Channel::new(&params);
        let f = |beta: f64| beta - params.backoff.attempt_probability(channel_at(&params, &ch, beta).gamma);
        let beta = bracketed_root(f, 0.0, 1.0, 1e-15)
            .ok_or_else(|| out_of_range("model", "these parameters", "parameters where beta - G(Gamma(beta)) changes sign on [0, 1]"))?;
        let at = channel_at(&params, &ch, beta);
        let mut sign_changes = 0;
        let mut last = f(0.0).signum();
        for i in 1..=SCAN_POINTS {
            let s = f(i as f64 / SCAN_POINTS as f64).signum();
            if s != 0.0 && s != last {
                sign_changes += 1;
                last = s;
            }
        }
        Ok(MprMac { params, beta, at, sign_changes })
    }

    /// The parameters.
    pub fn params(&self) -> &MacParams {
        &self.params
    }
    /// Attempt probability `beta` per mini-slot with a running counter (Bianchi's `tau`).
    pub fn beta(&self) -> f64 {
        self.beta
    }
    /// Failure probability of an attempt `gamma` (Bianchi's `p`).
    pub fn gamma(&self) -> f64 {
        self.at.gamma
    }
    /// Attempts per node per mini-slot.
    pub fn attempt_rate(&self) -> f64 {
        self.at.attempt_rate
    }
    /// Saturation throughput: successful packets per mean airtime `T`, summed over the nodes,
    /// `S = n a (1 - gamma) T` with `a` the attempt rate (in `[0, M]`; for `M = K = 1` the
    /// fraction of time the channel carries a successful packet, Bianchi's `S` with
    /// `T_s = T_c = E[P] = T` mini-slots of length 1, eq. 13).
    /// Below about `1e-308` it rounds to 0: [`log10_throughput`](Self::log10_throughput) keeps it.
    pub fn throughput(&self) -> f64 {
        if self.at.success >= LOG_PATH_BELOW {
            self.params.nodes as f64 * self.at.attempt_rate * self.at.success * self.params.airtime
        } else {
            (self.log10_throughput() * std::f64::consts::LN_10).exp()
        }
    }
    /// `log10` of [`throughput`](Self::throughput), finite however crowded the channel.
    pub fn log10_throughput(&self) -> f64 {
        ((self.params.nodes as f64 * self.at.attempt_rate * self.params.airtime).ln() + self.at.log_success) / std::f64::consts::LN_10
    }
    /// Success probability of an attempt, `1 - gamma`, computed directly (it is not the
    /// difference `1 - gamma`, which cancels when the channel is crowded); below about
    /// `1e-308` it rounds to 0: [`log10_success_probability`](Self::log10_success_probability)
    /// keeps it.
    pub fn success_probability(&self) -> f64 {
        self.at.success
    }
    /// `log10(1 - gamma)`, finite however crowded the channel (computed in logarithms below
    /// `1e-200`).
    pub fn log10_success_probability(&self) -> f64 {
        self.at.log_success / std::f64::consts::LN_10
    }
    /// Probability that a packet is dropped, `gamma^(R + 1)`.
    pub fn drop_probability(&self) -> f64 {
        self.params.backoff.drop_probability(self.at.gamma)
    }
    /// Mean head-of-line delay in mini-slots (from reaching the head of the queue to success or
    /// drop): mean attempts per packet over attempts per mini-slot (renewal-reward).
    /// `None` when it is beyond the largest double (a crowded channel without a retry limit):
    /// [`log10_hol_delay`](Self::log10_hol_delay) keeps it.
    pub fn hol_delay(&self) -> Option<f64> {
        let d = if self.at.success >= LOG_PATH_BELOW {
            let attempts = match self.params.backoff.retry_limit {
                None => 1.0 / self.at.success,
                Some(_) => self.params.backoff.mean_attempts(self.at.gamma),
            };
            attempts / self.at.attempt_rate
        } else {
            (self.log10_hol_delay() * std::f64::consts::LN_10).exp()
        };
        Some(d).filter(|d| d.is_finite())
    }
    /// `log10` of the mean head-of-line delay, `log10(mean attempts / attempt rate)`; the
    /// mean attempts are `1 / (1 - gamma)` without a retry limit.
    pub fn log10_hol_delay(&self) -> f64 {
        let ln_attempts = match self.params.backoff.retry_limit {
            None => -self.at.log_success,
            Some(_) => self.params.backoff.mean_attempts(self.at.gamma).ln(),
        };
        (ln_attempts - self.at.attempt_rate.ln()) / std::f64::consts::LN_10
    }
    /// Sign changes of `beta - G(Gamma(beta))` on a grid of 32 points of `(0, 1]` (plus 0):
    /// 1 means the scan found the fixed point unique.
    pub fn sign_changes(&self) -> usize {
        self.sign_changes
    }
}

/// The stationary law of the channel chain at attempt probability `beta` (dense solve).
fn stationary(p: &MacParams, ch: &Channel, beta: f64) -> Vec<f64> {
    let (n, cap) = (p.nodes, p.mpr + 1);
    let ns = ch.len();
    let mut pmf = Vec::with_capacity(cap + 1);
    // stationary law: a[y][x] = P(x -> y) - delta, last row replaced by sum pi = 1
    let mut a = vec![0.0; ns * ns];
    for x in 0..ns {
        let c = ch.total[x];
        let q = p.runs(c);
        if q > 0.0 {
            binomial_capped(n - c, beta * q, cap, &mut pmf);
        } else {
            pmf.clear();
            pmf.push(1.0);
        }
        for (s, &ps) in pmf.iter().enumerate() {
            if ps == 0.0 {
                continue;
            }
            let y = if s == 0 { x } else { ch.add[x * (cap + 1) + s] };
            for &(z, pz) in &ch.ends[y] {
                a[z * ns + x] += ps * pz;
            }
        }
        a[x * ns + x] -= 1.0;
    }
    let mut pi = vec![0.0; ns];
    a[(ns - 1) * ns..].iter_mut().for_each(|v| *v = 1.0);
    pi[ns - 1] = 1.0;
    solve_dense(&mut a, &mut pi, ns);
    pi
}

/// `Gamma(beta)` and the stationary quantities of the channel chain.
fn channel_at(p: &MacParams, ch: &Channel, beta: f64) -> ChannelAt {
    let n = p.nodes;
    let pe = 1.0 / p.airtime;
    let pi = stationary(p, ch, beta);
    let (mut rate, mut idle, mut ongoing) = (0.0, 0.0, 0.0);
    for (&px, &c) in pi.iter().zip(&ch.total) {
        rate += px * (n.saturating_sub(c)) as f64 * p.runs(c);
        ongoing += px * c as f64;
        if c == 0 {
            idle += px;
        }
    }
    // a lone node has no other transmission to collide with (M >= 1): exactly 1, not the
    // linear solve's 1 - 7e-16
    let mut success = if n == 1 { 1.0 } else { tagged_success(p, ch, beta, &pi, pe) };
    let log_success = if success < LOG_PATH_BELOW {
        // a crowded channel: the linear solve loses digits in subnormal numbers or underflows
        let l = tagged_log_success(p, ch, beta, &pi, pe);
        success = l.exp();
        l
    } else {
        success.ln()
    };
    ChannelAt { gamma: 1.0 - success, success, log_success, attempt_rate: beta * rate / n as f64, idle, mean_ongoing: ongoing }
}

/// (others' channel state, tagged cohort size).
type TaggedState = (usize, usize);

/// The augmented states of the tagged packet's chain: (others `x`, tagged cohort size `t`) with
/// `total(x) + t <= min(M, n)`, listed, and their indices in the list.
fn tagged_states(ch: &Channel, m: usize, n: usize) -> (HashMap<TaggedState, usize>, Vec<TaggedState>) {
    let mut aug = HashMap::new();
    let mut list = Vec::new();
    for x in 0..ch.len() {
        for t in 1..=m {
            if ch.total[x] + t <= m.min(n) {
                aug.insert((x, t), list.len());
                list.push((x, t));
            }
        }
    }
    (aug, list)
}

/// Below this success probability [`channel_at`] recomputes it in logarithms
/// ([`tagged_log_success`]).
const LOG_PATH_BELOW: f64 = 1e-200;

/// The probability that a tagged attempt succeeds: the tagged cohort starts in a mini-slot whose
/// channel state `x` (before the starts) is drawn with weight `pi(x) (n - C) q(C)`; it fails
/// if the number of ongoing transmissions exceeds `M` in any mini-slot before it ends.
fn tagged_success(p: &MacParams, ch: &Channel, beta: f64, pi: &[f64], pe: f64) -> f64 {
    let (n, m, cap) = (p.nodes, p.mpr, p.mpr + 1);
    let (aug, list) = tagged_states(ch, m, n);
    let na = list.len();
    let mut pmf = Vec::with_capacity(cap + 1);
    // h = b + A h, h(x, t) = P(success | tagged ongoing, beginning of a mini-slot)
    let mut a = vec![0.0; na * na];
    let mut b = vec![0.0; na];
    for (i, &(x, t)) in list.iter().enumerate() {
        let c = ch.total[x] + t;
        let q = p.runs(c);
        if q > 0.0 {
            binomial_capped(n - c, beta * q, cap, &mut pmf);
        } else {
            pmf.clear();
            pmf.push(1.0);
        }
        for (s, &ps) in pmf.iter().enumerate().take(m - c + 1) {
            if ps == 0.0 {
                continue;
            }
            b[i] += ps * pe;
            let y = if s == 0 { x } else { ch.add[x * (cap + 1) + s] };
            for &(z, pz) in &ch.ends[y] {
                let j = aug[&(z, t)];
                a[i * na + j] -= ps * (1.0 - pe) * pz;
            }
        }
        a[i * na + i] += 1.0;
    }
    if na > 0 {
        solve_dense(&mut a, &mut b, na);
    }
    let (mut success, mut weight) = (0.0, 0.0);
    for (x, (&px, &c)) in pi.iter().zip(&ch.total).enumerate() {
        let q = p.runs(c);
        if q == 0.0 || px <= 0.0 || c >= n {
            continue;
        }
        let w = px * (n - c) as f64 * q;
        weight += w;
        if c >= m {
            continue;
        }
        binomial_capped(n - c - 1, beta * q, cap, &mut pmf);
        let mut ok = 0.0;
        for (s, &ps) in pmf.iter().enumerate().take(m - c) {
            if ps == 0.0 {
                continue;
            }
            let t = 1 + s;
            let mut after = pe;
            for &(z, pz) in &ch.ends[x] {
                after += (1.0 - pe) * pz * b[aug[&(z, t)]];
            }
            ok += ps * after;
        }
        success += w * ok;
    }
    (success / weight).clamp(0.0, 1.0)
}

/// `ln(e^a + e^b)`, exact when either is `-inf`.
#[inline]
fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        hi
    } else {
        hi + (lo - hi).exp().ln_1p()
    }
}

/// `ln P(S = s)`, `s = 0..=cap`, `S ~ Bin(trials, p)` (entries above `trials` are `-inf`).
fn log_binomial(trials: usize, p: f64, cap: usize, out: &mut Vec<f64>) {
    out.clear();
    out.resize(cap + 1, f64::NEG_INFINITY);
    if p >= 1.0 || trials == 0 {
        if trials <= cap {
            out[trials] = 0.0;
        }
        return;
    }
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    let mut term = trials as f64 * lq;
    for (s, o) in out.iter_mut().enumerate().take(cap.min(trials) + 1) {
        *o = term;
        term += ((trials - s) as f64 / (s + 1) as f64).ln() + lp - lq;
    }
}

/// [`tagged_success`] in logarithms, for a crowded channel where the success probability is
/// below the smallest double (each mini-slot without an overflowing start has probability
/// about `(1 - beta)^n`). The absorption probabilities `h = b + A h` of the tagged packet's
/// chain are found by eliminating its states one by one with the exit mass of each state
/// summed from its exits (success, failure, the states not yet eliminated), never as
/// `1 - a_kk` (the GTH form of Grassmann, Taksar, Heyman, Operations Research 33(5), 1985):
/// every step adds or multiplies positive terms, so logarithms carry them.
fn tagged_log_success(p: &MacParams, ch: &Channel, beta: f64, pi: &[f64], pe: f64) -> f64 {
    let (n, m, cap) = (p.nodes, p.mpr, p.mpr + 1);
    let neg = f64::NEG_INFINITY;
    let (l_end, l_stay) = (pe.ln(), (-pe).ln_1p());
    let (aug, list) = tagged_states(ch, m, n);
    let na = list.len();
    let mut lpmf = Vec::with_capacity(cap + 1);
    // ln a_ij (to another ongoing state), ln b_i (success now), ln f_i (failure now)
    let mut la = vec![neg; na * na];
    let mut lb = vec![neg; na];
    let mut lf = vec![neg; na];
    for (i, &(x, t)) in list.iter().enumerate() {
        let c = ch.total[x] + t;
        let q = p.runs(c);
        if q > 0.0 {
            log_binomial(n - c, beta * q, cap, &mut lpmf);
        } else {
            lpmf.clear();
            lpmf.push(0.0);
        }
        let mut fit = neg;
        for (s, &lps) in lpmf.iter().enumerate().take(m - c + 1) {
            if lps == neg {
                continue;
            }
            fit = log_add(fit, lps);
            lb[i] = log_add(lb[i], lps + l_end);
            let y = if s == 0 { x } else { ch.add[x * (cap + 1) + s] };
            for &(z, pz) in &ch.ends[y] {
                let j = aug[&(z, t)];
                la[i * na + j] = log_add(la[i * na + j], lps + l_stay + pz.ln());
            }
        }
        // the starts overflow M: ln(1 - P(fit))
        lf[i] = if fit >= 0.0 { neg } else { (-fit.exp_m1()).ln() };
    }
    // eliminate states 0, 1, ...: exit(k) = b_k + f_k + sum_{j > k} a_kj
    let mut exit = vec![neg; na];
    for k in 0..na {
        let mut e = log_add(lb[k], lf[k]);
        for j in k + 1..na {
            e = log_add(e, la[k * na + j]);
        }
        exit[k] = e;
        for i in k + 1..na {
            let r = la[i * na + k];
            if r == neg {
                continue;
            }
            let r = r - e;
            lb[i] = log_add(lb[i], r + lb[k]);
            lf[i] = log_add(lf[i], r + lf[k]);
            for j in k + 1..na {
                let a = la[k * na + j];
                if a != neg {
                    la[i * na + j] = log_add(la[i * na + j], r + a);
                }
            }
        }
    }
    // back substitution: h_k = (b_k + sum_{j > k} a_kj h_j) / exit(k)
    let mut lh = vec![neg; na];
    for k in (0..na).rev() {
        let mut v = lb[k];
        for j in k + 1..na {
            v = log_add(v, la[k * na + j] + lh[j]);
        }
        lh[k] = v - exit[k];
    }
    let (mut success, mut weight) = (neg, neg);
    for (x, (&px, &c)) in pi.iter().zip(&ch.total).enumerate() {
        let q = p.runs(c);
        if q == 0.0 || px <= 0.0 || c >= n {
            continue;
        }
        let w = px.ln() + ((n - c) as f64 * q).ln();
        weight = log_add(weight, w);
        if c >= m {
            continue;
        }
        log_binomial(n - c - 1, beta * q, cap, &mut lpmf);
        let mut ok = neg;
        for (s, &lps) in lpmf.iter().enumerate().take(m - c) {
            if lps == neg {
                continue;
            }
            let t = 1 + s;
            let mut after = l_end;
            for &(z, pz) in &ch.ends[x] {
                after = log_add(after, l_stay + pz.ln() + lh[aug[&(z, t)]]);
            }
            ok = log_add(ok, lps + after);
        }
        success = log_add(success, w + ok);
    }
    (success - weight).min(0.0)
}

impl MeanFieldModel for MprMac {
    fn name(&self) -> String {
        format!("mpr-mac(n={}, M={}, K={})", self.params.nodes, self.params.mpr, self.params.threshold)
    }
    fn dim(&self) -> usize {
        1
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        dx[0] = self.beta - x[0];
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Named { names: vec!["beta".into()] }
    }
    /// At the fixed point, whatever the state: throughput `S` (successful packets per mean
    /// airtime), mean response time = mean head-of-line delay (mini-slots; absent when beyond
    /// the largest double), loss probability = the drop probability `gamma^(R + 1)` (no queue
    /// is truncated: packets are lost only by the retry limit; 0 without one), extras `throughput`, `beta`, `gamma`, `success_probability`,
    /// `log10_success_probability`, `drop_probability`, `hol_delay` (absent as above),
    /// `log10_hol_delay`, `log10_throughput`, `attempt_rate`, `idle_fraction`, `mean_ongoing`,
    /// `sign_changes`.
    fn observables(&self, _x: &[f64]) -> Observables {
        let s = self.throughput();
        let mut extras = vec![
            ("throughput".into(), s),
            ("beta".into(), self.beta),
            ("gamma".into(), self.at.gamma),
            ("success_probability".into(), self.at.success),
            ("log10_success_probability".into(), self.log10_success_probability()),
            ("drop_probability".into(), self.drop_probability()),
        ];
        if let Some(d) = self.hol_delay() {
            extras.push(("hol_delay".into(), d));
        }
        extras.push(("log10_hol_delay".into(), self.log10_hol_delay()));
        extras.push(("log10_throughput".into(), self.log10_throughput()));
        extras.push(("attempt_rate".into(), self.at.attempt_rate));
        extras.push(("idle_fraction".into(), self.at.idle));
        extras.push(("mean_ongoing".into(), self.at.mean_ongoing));
        extras.push(("sign_changes".into(), self.sign_changes as f64));
        Observables {
            tail: Vec::new(),
            mean_queue_length: None,
            throughput: Some(s),
            mean_response_time: self.hol_delay(),
            prob_wait: None,
            loss_probability: self.drop_probability(),
            mass_at_truncation: 0.0,
            extras,
        }
    }
    fn stability(&self) -> Stability {
        Stability::Stable {
            condition: "saturated random access: the fixed point always exists (beta - G(Gamma(beta)) changes sign on [0, 1])".into(),
        }
    }
    fn dynamics_note(&self) -> Option<String> {
        Some(DYNAMICS_NOTE.into())
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        Some(vec![self.beta])
    }
}

const DYNAMICS_NOTE: &str = "the mpr-mac kind is a renewal-theoretic fixed point (a relaxation towards it, not a dynamics)";

/// `kind = "mpr-mac"`: the parameters of [`MprMac`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MprMacSpec {
    /// Saturated nodes `n`.
    pub nodes: usize,
    /// Packets decoded at once `M`.
    pub mpr: usize,
    /// Threshold `K` on the sensed number of ongoing transmissions.
    pub threshold: usize,
    /// Initial backoff window `W` (mini-slots).
    pub window: usize,
    /// Doublings `m` of the window.
    pub stages: usize,
    /// Retry limit `R`; absent: none (Bianchi's model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_limit: Option<usize>,
    /// Mean packet airtime `T` (mini-slots).
    pub airtime: f64,
    /// Sensing error probability `eps`.
    #[serde(default)]
    pub sensing_error: f64,
}

impl MprMacSpec {
    /// The parameters as [`MacParams`].
    pub fn params(&self) -> MacParams {
        MacParams {
            nodes: self.nodes,
            mpr: self.mpr,
            threshold: self.threshold,
            backoff: Backoff { window: self.window, stages: self.stages, retry_limit: self.retry_limit },
            airtime: self.airtime,
            sensing_error: self.sensing_error,
        }
    }
}

/// The `mpr-mac` kind.
pub static MPR_MAC: Kind = Kind {
    name: "mpr-mac",
    title: "Asynchronous multi-packet-reception MAC: n saturated nodes, threshold K on ongoing transmissions, BEB; saturation throughput, drop probability, head-of-line delay",
    params: &[
        Param { name: "nodes", meaning: "saturated nodes n", unit: "nodes", allowed: "integer in [1, 100000]", default: None, range: Some(ParamRange::integers(1.0, Some(1e5))) },
        Param { name: "mpr", meaning: "packets the receiver decodes at once, M", unit: "packets", allowed: "integer in [1, 6]", default: None, range: Some(ParamRange::integers(1.0, Some(6.0))) },
        Param {
            name: "threshold",
            meaning: "K: a backoff counter runs while fewer than K ongoing transmissions are sensed",
            unit: "transmissions",
            allowed: "integer in [1, mpr]",
            default: None,
            range: Some(ParamRange::integers(1.0, Some(6.0))),
        },
        Param { name: "window", meaning: "initial backoff window W", unit: "mini-slots", allowed: "integer in [1, 1048576]", default: None, range: Some(ParamRange::integers(1.0, Some(1048576.0))) },
        Param { name: "stages", meaning: "doublings m of the window (W_j = 2^min(j, m) W)", unit: "", allowed: "integer in [0, 20]", default: None, range: Some(ParamRange::integers(0.0, Some(20.0))) },
        Param {
            name: "retry_limit",
            meaning: "R: a packet is dropped after R + 1 failed attempts; absent: never (Bianchi)",
            unit: "retransmissions",
            allowed: "integer in [0, 1000]",
            default: Some("none (no limit)"),
            range: Some(ParamRange::integers(0.0, Some(1000.0))),
        },
        Param { name: "airtime", meaning: "mean packet airtime T", unit: "mini-slots", allowed: "[1, 1e6]", default: None, range: Some(ParamRange::closed(1.0, 1e6, true)) },
        Param {
            name: "sensing_error",
            meaning: "probability that a node's count of ongoing transmissions is off by one (each sign half of it)",
            unit: "",
            allowed: "[0, 1]",
            default: Some("0"),
            range: Some(ParamRange::closed(0.0, 1.0, true)),
        },
    ],
    sources: "Mukhopadhyay, Mehta, Srinivasan, IEEE Trans. Wireless Commun. 12(5) 2013 (abstract; model constructed here); Bianchi, IEEE JSAC 18(3) 2000, eqs. 7 and 13, sec. III; Kumar, Altman, Miorandi, Goyal, IEEE/ACM ToN 15(3) 2007",
    example: "models/mpr-mac.toml",
    docs: "docs/models/mpr-mac.md",
    read: read_spec::<MprMacSpec>,
};

impl KindSpec for MprMacSpec {
    fn kind(&self) -> &'static Kind {
        &MPR_MAC
    }
    /// No arrival rate: saturated nodes.
    fn lambda(&self) -> Option<f64> {
        None
    }
    /// One-dimensional: `levels` does not apply.
    fn build(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(MprMac::new(self.params())?))
    }
    fn validate(&self, _levels: usize) -> Result<(), ModelError> {
        self.params().validate()
    }
    fn dynamics_note(&self) -> Option<String> {
        Some(DYNAMICS_NOTE.into())
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        self.params().validate()?;
        Ok(Simulation::Unsupported {
            reason: "mpr-mac runs in mini-slots, not on the simulator's continuous-time families: mfq_sim::mac::simulate_mac simulates the protocol"
                .into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(nodes: usize, mpr: usize, threshold: usize, window: usize, stages: usize, airtime: f64) -> MacParams {
        MacParams { nodes, mpr, threshold, backoff: Backoff { window, stages, retry_limit: None }, airtime, sensing_error: 0.0 }
    }

    /// Bianchi's model (JSAC 18(3) 2000) written from his equations: `tau(p)` of eq. 7, the
    /// collision probability `p = 1 - (1 - tau)^(n - 1)` (sec. III) solved by bisection, and the
    /// throughput of eq. 13 with slot 1, `T_s = T_c = E[P] = T`.
    fn bianchi(n: usize, w: usize, m: usize, t: f64) -> (f64, f64, f64) {
        let w = w as f64;
        let tau = |p: f64| 2.0 * (1.0 - 2.0 * p) / ((1.0 - 2.0 * p) * (w + 1.0) + p * w * (1.0 - (2.0 * p).powi(m as i32)));
        let (mut lo, mut hi) = (0.0f64, 0.99f64);
        for _ in 0..200 {
            let p = 0.5 * (lo + hi);
            if 1.0 - (1.0 - tau(p)).powi(n as i32 - 1) > p {
                lo = p;
            } else {
                hi = p;
            }
        }
        let p = 0.5 * (lo + hi);
        let tau = tau(p);
        let ptr = 1.0 - (1.0 - tau).powi(n as i32);
        let ps = n as f64 * tau * (1.0 - tau).powi(n as i32 - 1) / ptr;
        let s = ps * ptr * t / ((1.0 - ptr) + ptr * t);
        (tau, p, s)
    }

    /// The must-hold reduction: M = K = 1 is Bianchi's saturation throughput for the same
    /// backoff (within 1e-6; measured below 1e-12).
    #[test]
    fn one_packet_at_a_time_is_bianchi() {
        for (n, w, m, t) in [
            (5, 32, 3, 20.0),
            (10, 32, 3, 20.0),
            (20, 32, 3, 50.0),
            (50, 32, 3, 20.0),
            (10, 32, 5, 1.0),
            (50, 128, 3, 100.0),
            (1, 16, 0, 5.0),
        ] {
            let mac = MprMac::new(params(n, 1, 1, w, m, t)).unwrap();
            let (tau, p, s) = bianchi(n, w, m, t);
            assert!((mac.beta() - tau).abs() < 1e-10, "n={n} W={w} m={m}: beta {} vs tau {tau}", mac.beta());
            assert!((mac.gamma() - p).abs() < 1e-10, "n={n}: gamma {} vs p {p}", mac.gamma());
            assert!((mac.throughput() - s).abs() < 1e-6, "n={n} W={w} m={m} T={t}: S {} vs Bianchi {s}", mac.throughput());
            assert_eq!(mac.sign_changes(), 1);
        }
    }

    /// Without a retry limit, G is Bianchi's closed form tau(p) (eq. 7); with one, Kumar et
    /// al.'s ratio of sums, here by hand for R = 1: (1 + g) / (b_0 + g b_1).
    #[test]
    fn attempt_probability_is_bianchi_and_kumar() {
        let (w, m) = (16.0, 4);
        for p in [0.0, 0.1, 0.3, 0.49, 0.51, 0.8, 0.99] {
            let b = Backoff { window: 16, stages: m, retry_limit: None };
            let tau = 2.0 * (1.0 - 2.0 * p) / ((1.0 - 2.0 * p) * (w + 1.0) + p * w * (1.0 - (2.0f64 * p).powi(m as i32)));
            assert!((b.attempt_probability(p) - tau).abs() < 1e-13, "p = {p}");
        }
        let b = Backoff { window: 16, stages: 4, retry_limit: Some(1) };
        assert!((b.attempt_probability(0.3) - 1.3 / (8.5 + 0.3 * 16.5)).abs() < 1e-15);
        assert!((b.drop_probability(0.3) - 0.09).abs() < 1e-15);
        assert!((b.mean_attempts(0.3) - 1.3).abs() < 1e-15);
    }

    /// K = 1: counters run only on an idle channel, so the attempts of one mini-slot overlap
    /// only each other and fail iff more than M start: gamma = P(Bin(n - 1, beta) >= M).
    #[test]
    fn threshold_one_fails_iff_more_than_m_start_together() {
        for mpr in 1..=4 {
            let mac = MprMac::new(params(30, mpr, 1, 16, 4, 10.0)).unwrap();
            let beta = mac.beta();
            let ok: f64 = (0..mpr).map(|s| binomial(29, s) * beta.powi(s as i32) * (1.0 - beta).powi(29 - s as i32)).sum();
            assert!((mac.gamma() - (1.0 - ok)).abs() < 1e-12, "M = {mpr}: {} vs {}", mac.gamma(), 1.0 - ok);
        }
    }

    fn binomial(n: usize, k: usize) -> f64 {
        (0..k).map(|i| (n - i) as f64 / (i + 1) as f64).product()
    }

    /// One node never collides; its renewal cycle is the running mini-slots to its attempt
    /// (each runs with probability `q(0)`) plus the airtime after the attempt slot:
    /// `S = T / (b_0 / q(0) - 1 + T)`. W = 16, T = 5: `S = 5 / 12.5 = 0.4` for K >= 2 (sensing
    /// errors never stop an idle channel's counters), `5 / 14` for K = 1 and eps = 0.3
    /// (`q(0) = 0.85`). Small n with every M and K also solves without a failure.
    #[test]
    fn one_node_is_its_renewal_cycle_and_small_n_solves() {
        for (mpr, k, eps, want) in [(1, 1, 0.0, 0.4), (4, 4, 0.3, 0.4), (4, 1, 0.3, 5.0 / 14.0), (6, 3, 0.5, 0.4)] {
            let mut p = params(1, mpr, k, 16, 0, 5.0);
            p.sensing_error = eps;
            let mac = MprMac::new(p).unwrap();
            assert!((mac.throughput() - want).abs() < 1e-12, "M={mpr} K={k} eps={eps}: {}", mac.throughput());
            assert_eq!(mac.gamma(), 0.0, "a lone node never collides");
        }
        for n in 1..=8 {
            for mpr in 1..=MAX_MPR {
                for k in 1..=mpr {
                    let mut p = params(n, mpr, k, 8, 2, 4.0);
                    p.sensing_error = 0.2;
                    p.backoff.retry_limit = Some(3);
                    let mac = MprMac::new(p).unwrap();
                    assert!(mac.throughput().is_finite() && mac.throughput() <= mpr as f64 + 1e-9, "n={n} M={mpr} K={k}");
                    assert_eq!(mac.sign_changes(), 1, "n={n} M={mpr} K={k}");
                }
            }
        }
    }

    #[test]
    fn bad_inputs_name_the_field() {
        let ok = params(10, 2, 2, 16, 3, 10.0);
        let err = |f: &dyn Fn(&mut MacParams)| {
            let mut p = ok;
            f(&mut p);
            MprMac::new(p).unwrap_err().to_string()
        };
        let e = err(&|p| p.threshold = 3);
        assert!(e.contains("model.threshold = 3") && e.contains("[1, 2]"), "{e}");
        assert!(err(&|p| p.threshold = 0).contains("model.threshold = 0"));
        assert!(err(&|p| p.nodes = 0).contains("model.nodes = 0"));
        assert!(err(&|p| p.backoff.window = 0).contains("model.window = 0"));
        assert!(err(&|p| p.mpr = 7).contains("model.mpr = 7"));
        assert!(err(&|p| p.airtime = -1.0).contains("model.airtime = -1"));
        assert!(err(&|p| p.airtime = f64::NAN).contains("model.airtime = NaN"));
        let e = err(&|p| p.sensing_error = 1.5);
        assert!(e.contains("model.sensing_error = 1.5") && e.contains("[0, 1]"), "{e}");
        assert!(err(&|p| p.sensing_error = -0.1).contains("model.sensing_error = -0.1"));
        assert!(err(&|p| p.backoff.stages = 21).contains("model.stages = 21"));
        assert!(err(&|p| p.backoff.retry_limit = Some(1001)).contains("model.retry_limit = 1001"));
    }

    /// A crowded channel (M = K = 1, W = 16, no doubling, 1e5 nodes): the success probability
    /// `(1 - beta)^(n - 1)` is about 10^-5200, far below the smallest double; its logarithm,
    /// the throughput's and the delay's are finite and equal the closed form, and the delay
    /// (beyond the largest double) is not reported rather than infinite.
    #[test]
    fn crowded_channel_keeps_its_logarithms() {
        for (n, w, t) in [(100_000usize, 16usize, 20.0), (50_000, 4, 3.0), (3000, 2, 1.0)] {
            let mac = MprMac::new(params(n, 1, 1, w, 0, t)).unwrap();
            let want = (n - 1) as f64 * (-mac.beta()).ln_1p() / std::f64::consts::LN_10;
            let got = mac.log10_success_probability();
            assert!(want < -300.0 && (got - want).abs() < 1e-10 * want.abs(), "n={n} W={w}: {got} vs {want}");
            assert!(mac.success_probability() == 0.0 && mac.throughput() == 0.0 && mac.hol_delay().is_none());
            let delay = -want - mac.attempt_rate().log10();
            assert!((mac.log10_hol_delay() - delay).abs() < 1e-10 * delay, "{} vs {delay}", mac.log10_hol_delay());
            let obs = mac.observables(&[mac.beta()]);
            assert!(obs.mean_response_time.is_none());
            assert!(obs.extras.iter().all(|(_, v)| v.is_finite()), "{:?}", obs.extras);
        }
    }

    /// The log-space elimination equals the linear solve where both work (success
    /// probabilities 4e-4, 6e-107, 1e-5 and 6e-5, with sensing errors and M = 3 > K = 2).
    #[test]
    fn log_space_success_equals_the_linear_solve() {
        for (n, mpr, k, w, t, eps) in
            [(200usize, 3usize, 2usize, 8usize, 5.0, 0.1), (2000, 2, 2, 4, 10.0, 0.0), (500, 3, 3, 16, 2.0, 0.3), (40, 1, 1, 2, 50.0, 0.0)]
        {
            let mut p = params(n, mpr, k, w, 2, t);
            p.sensing_error = eps;
            let mac = MprMac::new(p).unwrap();
            let ch = Channel::new(&p);
            let beta = mac.beta();
            // the stationary law as channel_at computes it
            let at = channel_at(&p, &ch, beta);
            let pi = stationary(&p, &ch, beta);
            let lin = tagged_success(&p, &ch, beta, &pi, 1.0 / t);
            let log = tagged_log_success(&p, &ch, beta, &pi, 1.0 / t);
            assert!(lin > 1e-200 && (log - lin.ln()).abs() < 1e-10 * lin.ln().abs().max(1.0), "n={n} M={mpr}: {log} vs ln {lin}");
            assert!((at.success - lin).abs() <= 1e-15 * lin);
        }
    }
}
