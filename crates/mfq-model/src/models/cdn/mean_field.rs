//! Mean field of randomised matching in the caching system, and its fixed point.
//!
//! State: for each server type `t` (a set of `C` contents stored together, on a fraction `f_t`
//! of the servers), `w_{t,k}` = fraction of the type-`t` servers with *fewer* than `k` requests
//! in service, `k = 1..U` (`w_{t,0} = 0`, `w_{t,U+1} = 1`); `x[t U + k - 1] = w_{t,k}`. (The
//! tail `z_{t,k} = 1 - w_{t,k}` is the usual occupancy fraction; the complement keeps the free
//! fractions of nearly full servers, `w_{t,U}`, to full relative precision, where the tail
//! would lose them to cancellation against 1.)
//!
//! A request for content `i` goes to a uniformly random server that stores `i` and has a free
//! slot. With `A_i = sum_{t ∋ i} f_t w_{t,U}` the fraction of servers storing `i` with a free
//! slot, each of them receives content-`i` requests at rate `nu_i = lambda p_i / A_i`, and a
//! non-full type-`t` server at rate `r_t = sum_{i in t} nu_i`:
//!
//! ```text
//! dz_{t,k}/dt = r_t (z_{t,k-1} - z_{t,k}) - k (z_{t,k} - z_{t,k+1}),  i.e.
//! dw_{t,k}/dt = -r_t (w_{t,k} - w_{t,k-1}) + k (w_{t,k+1} - w_{t,k})
//! ```
//!
//! The limit has a sliding boundary: a content whose servers are all full (`A_i = 0`) loses
//! requests, and its freed slots are refilled at once. The drift uses `nu_i = lambda p_i /
//! (A_i + SLIDING_EPS)`, i.e. the fraction `A_i / (A_i + SLIDING_EPS)` of content-`i` requests
//! is accepted; this regularises the boundary and changes the loss of a content with free
//! servers by at most `SLIDING_EPS / A_i`. At a fixed point every type is an Erlang loss
//! station: `w_{t,k} = sum_{j < k} pi_j(r_t)` with `pi` the Poisson(`r_t`) law truncated to
//! `0..U` (insensitive to the law of the request durations beyond its mean), so the fixed point
//! reduces to the `N` equations `nu_i (A_i(nu) + SLIDING_EPS) = lambda p_i` ([`solve_rates`]).
//!
//! Constructed here from the abstract of Mukhopadhyay, Hegde, Lelarge, arXiv 1801.02889 (2018);
//! docs/models/cdn-cache.md.

use super::placement::ServerType;
use crate::models::roots::bracketed_root;

/// The regularisation of the sliding boundary (see the module docs).
pub const SLIDING_EPS: f64 = 1e-6;

/// `1 - B(r, U)`: the probability that an Erlang loss station of `U` slots offered `r` has a
/// free slot (Erlang's B formula), without cancellation for large `r`: with `I_0 = 1`,
/// `I_k = 1 + (k / r) I_{k-1}` (so `I_k = 1 / B(r, k)`), `1 - B(r, U) = (U / r) I_{U-1} / I_U`.
pub fn free_probability(r: f64, u: usize) -> f64 {
    if r <= 0.0 {
        return 1.0;
    }
    let mut prev = 1.0;
    for k in 1..u {
        prev = 1.0 + k as f64 / r * prev;
    }
    let last = 1.0 + u as f64 / r * prev;
    u as f64 / r * prev / last
}

/// The Poisson(`r`) law truncated to `0..=u`, written into `out` (length `u + 1`); computed from
/// the mode outwards in logarithms, so neither tiny nor huge `r` overflows.
pub fn truncated_poisson(r: f64, u: usize, out: &mut [f64]) {
    if r <= 0.0 {
        out.fill(0.0);
        out[0] = 1.0;
        return;
    }
    let lr = r.ln();
    let mut log_fact = 0.0;
    for (j, o) in out.iter_mut().enumerate().take(u + 1) {
        if j > 0 {
            log_fact += (j as f64).ln();
        }
        *o = j as f64 * lr - log_fact;
    }
    let top = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut total = 0.0;
    for o in out.iter_mut() {
        *o = (*o - top).exp();
        total += *o;
    }
    for o in out.iter_mut() {
        *o /= total;
    }
}

/// The per-server request rates `nu_i` of the fixed point: the solution of
/// `nu_i (A_i(nu) + SLIDING_EPS) = lambda p_i`, where `A_i(nu) = sum_{t ∋ i} f_t (1 - B(r_t, U))`
/// and `r_t = sum_{i in t} nu_i`. Each left side increases in its own `nu_i` and decreases in the
/// others (a server that others fill is less often free), so Gauss-Seidel sweeps from
/// `start` (a vector of lower bounds, e.g. `lambda p_i`) rise monotonically to the smallest
/// solution; each coordinate is a bracketed root in `ln nu_i` on
/// `[lambda p_i / (1 + eps), lambda p_i / eps]` (Brent). Returns the rates and the number of
/// sweeps, or `None` if 10000 sweeps do not reach a relative change of `1e-13`.
pub fn solve_rates(lambda: f64, p: &[f64], u: usize, types: &[ServerType], start: Vec<f64>) -> Option<(Vec<f64>, usize)> {
    let n = p.len();
    let mut nu = start;
    let mut rates = vec![0.0; types.len()];
    // for content i, the types storing it: each root and update touches those only (the
    // wrap-around placement gives each content a few types, so a sweep costs O(N C), not O(N T))
    let mut holders = vec![Vec::new(); n];
    for (t, ty) in types.iter().enumerate() {
        rates[t] = ty.contents.iter().map(|&i| nu[i]).sum();
        for &i in &ty.contents {
            holders[i].push(t);
        }
    }
    for sweep in 1..=10_000 {
        let mut change = 0.0f64;
        for i in 0..n {
            let target = lambda * p[i];
            let old = nu[i];
            let g = |w: f64| {
                let v = w.exp();
                let free: f64 = holders[i].iter().map(|&t| types[t].fraction * free_probability(rates[t] - old + v, u)).sum();
                v * (free + SLIDING_EPS) - target
            };
            let (lo, hi) = ((target / (1.0 + SLIDING_EPS)).ln(), (target / SLIDING_EPS).ln());
            let w = bracketed_root(g, lo, hi, 1e-15)?;
            let new = w.exp();
            for &t in &holders[i] {
                rates[t] += new - old;
            }
            nu[i] = new;
            change = change.max((new - old).abs() / new);
        }
        if change < 1e-13 {
            // rebuild the sums without the accumulated round-off of the updates
            return Some((nu, sweep));
        }
    }
    None
}

/// `A_i`, the fraction of all servers that store content `i` and have a free slot, at state
/// `x` (`x[t U + U - 1] = w_{t,U}`, see the module docs).
#[inline]
pub fn free_fraction(x: &[f64], u: usize, types: &[ServerType], holders: &[usize]) -> f64 {
    holders.iter().map(|&t| types[t].fraction * x[t * u + u - 1].clamp(0.0, 1.0)).sum()
}
