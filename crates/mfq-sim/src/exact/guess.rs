//! The start vector of the iterative solver: for tail-form states, the distribution of the
//! occupancy vector when the `N` servers are independent with the mean-field queue-length
//! distribution (propagation of chaos; Gast and Van Houdt, SIGMETRICS 2017, Section 2), a
//! multinomial law; uniform for other layouts. Only the number of iterations depends on it.

use super::chain::Chain;
use mfq_model::{MeanFieldModel, StateLayout};

/// Steps of the explicit Euler integration that approximates the fixed point.
const EULER_STEPS: usize = 20_000;

/// A point near the fixed point of the drift of `model`: explicit Euler with step `0.1 / r`
/// (`r` the largest total rate out of a state of the chain per object, so the step is stable)
/// from the empty state, projected after each step, stopped when the drift is below `1e-10`.
fn approximate_fixed_point(model: &dyn MeanFieldModel, rate_per_object: f64) -> Vec<f64> {
    let dim = model.dim();
    let (mut x, mut dx) = (vec![0.0; dim], vec![0.0; dim]);
    model.project(&mut x);
    let dt = 0.1 / rate_per_object.max(1e-12);
    for _ in 0..EULER_STEPS {
        model.drift(&x, &mut dx);
        if dx.iter().any(|v| !v.is_finite()) {
            break;
        }
        x.iter_mut().zip(&dx).for_each(|(v, d)| *v = (*v + dt * d).clamp(0.0, 1.0));
        model.project(&mut x);
        if dx.iter().fold(0.0f64, |m, d| m.max(d.abs())) < 1e-10 {
            break;
        }
    }
    x
}

/// The state of the chain nearest (in the largest difference of its fractions) to the
/// approximate fixed point of [`approximate_fixed_point`]: a likely state where the mean field
/// holds, where [`super::solve::solve_lu_within`] pins the solution so that `pi / pi_pin` stays within
/// double precision (the first state on ties).
pub(crate) fn likely_state(model: &dyn MeanFieldModel, chain: &Chain, uniformisation: f64) -> usize {
    let x = approximate_fixed_point(model, uniformisation / chain.n as f64);
    let mut counts = vec![0u32; chain.dim];
    let (mut best, mut best_gap) = (0, f64::INFINITY);
    for i in 0..chain.len() {
        chain.counts(i, &mut counts);
        let gap = counts.iter().zip(&x).fold(0.0f64, |m, (&c, &v)| m.max((c as f64 / chain.n as f64 - v).abs()));
        if gap < best_gap {
            (best, best_gap) = (i, gap);
        }
    }
    best
}

/// The start vector (a probability vector over the chain's states).
pub(crate) fn initial_guess(model: &dyn MeanFieldModel, chain: &Chain, uniformisation: f64) -> Vec<f64> {
    let n = chain.len();
    let StateLayout::Tail { levels } = model.layout() else {
        return vec![1.0 / n as f64; n];
    };
    let x = approximate_fixed_point(model, uniformisation / chain.n as f64);
    // p_k = P(a server holds exactly k jobs) = x_k - x_{k+1} (x_0 = 1), floored so that every
    // state keeps positive mass
    let tail = |k: usize| {
        if k == 0 {
            1.0
        } else if k > levels {
            0.0
        } else {
            x[k - 1]
        }
    };
    let logp: Vec<f64> = (0..=levels).map(|k| (tail(k) - tail(k + 1)).max(1e-12).ln()).collect();
    let logfact: Vec<f64> = (0..=chain.n)
        .scan(0.0, |s, i| {
            if i > 0 {
                *s += (i as f64).ln();
            }
            Some(*s)
        })
        .collect();
    let mut counts = vec![0u32; levels];
    let mut pi: Vec<f64> = (0..n)
        .map(|i| {
            chain.counts(i, &mut counts);
            // m_k servers with exactly k jobs: N! / prod m_k! prod p_k^m_k
            let c = |k: usize| {
                if k == 0 {
                    chain.n
                } else if k > levels {
                    0
                } else {
                    counts[k - 1] as usize
                }
            };
            (0..=levels)
                .map(|k| {
                    let m = c(k) - c(k + 1);
                    m as f64 * logp[k] - logfact[m]
                })
                .sum::<f64>()
        })
        .collect();
    let top = pi.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    pi.iter_mut().for_each(|v| *v = (*v - top).exp().max(1e-300));
    let s: f64 = pi.iter().sum();
    pi.iter_mut().for_each(|v| *v /= s);
    pi
}
