//! Derivatives up to order 4 of many scalar functions of the state that each depend on a few
//! state entries (the rates `beta_l(x)` of a model's transitions, an observable such as
//! `P(wait)`), by finite differences on a small tensor grid over each function's support.
//!
//! The support of every function is found by moving one entry at a time. Functions with the same
//! support share one grid of `5^s` points (`s` = support size): per entry five nodes `x_j + z h`,
//! `z in {-2, -1, 0, 1, 2}` (or `{0..4}`, `{-4..0}` near the ends of `[0, 1]`, so that no node
//! leaves the feasible box and no clamp inside a model bends the function), with the weights of
//! the five-point interpolating polynomial (exact for polynomials of degree <= 4 in each entry).
//! Mixed partial derivatives are products of the one-dimensional weights. Step `h = 1/64`:
//! the rounding error of a fourth derivative is then about `1e-16 * 16 / h^4 ~ 3e-8` of the
//! function's scale.

// the stencils are index arithmetic over several arrays at once
#![allow(clippy::needless_range_loop)]

use std::collections::HashMap;

/// Step of the difference grids (a power of two, so that the nodes are exact).
const H: f64 = 1.0 / 64.0;

/// Largest support (state entries a single function depends on) the grids handle: `5^4 = 625`
/// evaluations per distinct support.
pub const MAX_SUPPORT: usize = 4;

/// Local derivatives of `m` scalar functions `g_t(x)` at a state `x`.
#[derive(Debug, Clone)]
pub struct LocalDerivatives {
    /// `g_t(x)`.
    pub value: Vec<f64>,
    /// Sorted state entries `g_t` depends on.
    pub support: Vec<Vec<usize>>,
    /// Per function, `d[m - 1]` holds the `m`-th derivative tensor over the support, full
    /// (symmetric) storage, row-major `s^m` entries, for `m = 1..=max_order`.
    pub d: Vec<Vec<Vec<f64>>>,
}

/// Why local derivatives could not be formed.
#[derive(Debug, Clone, PartialEq)]
pub enum LocalError {
    /// A function depends on more than [`MAX_SUPPORT`] entries.
    SupportTooLarge {
        /// Index of the function.
        index: usize,
        /// Its support size.
        size: usize,
    },
    /// The functions changed number between two evaluations, or a value is not finite.
    Inconsistent(String),
}

/// Weights `w[m][i]` of the `m`-th derivative (`m = 0..4`) at 0 from the values at nodes
/// `z_i h`: the derivatives of the Lagrange polynomial through the five nodes.
fn weights(z: &[f64; 5]) -> [[f64; 5]; 5] {
    // Solve sum_i w_i z_i^p = m! delta_{pm} (p = 0..4) for each m: the transposed Vandermonde.
    let mut out = [[0.0; 5]; 5];
    let fact = [1.0, 1.0, 2.0, 6.0, 24.0];
    for m in 0..5 {
        let mut a = [[0.0f64; 6]; 5];
        for p in 0..5 {
            for i in 0..5 {
                a[p][i] = z[i].powi(p as i32);
            }
            a[p][5] = if p == m { fact[m] } else { 0.0 };
        }
        for k in 0..5 {
            let piv = (k..5).max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs())).unwrap_or(k);
            a.swap(k, piv);
            for i in k + 1..5 {
                let l = a[i][k] / a[k][k];
                for j in k..6 {
                    a[i][j] -= l * a[k][j];
                }
            }
        }
        let mut w = [0.0; 5];
        for k in (0..5).rev() {
            let mut s = a[k][5];
            for j in k + 1..5 {
                s -= a[k][j] * w[j];
            }
            w[k] = s / a[k][k];
        }
        for (i, wi) in w.iter().enumerate() {
            out[m][i] = wi / H.powi(m as i32);
        }
    }
    out
}

/// The five nodes (in units of `H`) for an entry at `v`: centred when they stay in `[0, 1]`.
fn nodes(v: f64) -> [f64; 5] {
    if v - 2.0 * H >= 0.0 && v + 2.0 * H <= 1.0 {
        [-2.0, -1.0, 0.0, 1.0, 2.0]
    } else if v + 4.0 * H <= 1.0 {
        [0.0, 1.0, 2.0, 3.0, 4.0]
    } else {
        [-4.0, -3.0, -2.0, -1.0, 0.0]
    }
}

/// Derivatives up to `max_order` (1..=4) of the functions `eval` computes: `eval(x, out)`
/// clears `out` and pushes every function's value at `x` (always the same functions, in the same
/// order).
///
/// # Errors
/// [`LocalError::SupportTooLarge`]; [`LocalError::Inconsistent`] when the number of functions
/// changes or a value is not finite.
pub fn local_derivatives(x: &[f64], max_order: usize, eval: &mut dyn FnMut(&[f64], &mut Vec<f64>)) -> Result<LocalDerivatives, LocalError> {
    let n = x.len();
    let mut value = Vec::new();
    eval(x, &mut value);
    let m = value.len();
    if let Some(i) = value.iter().position(|v| !v.is_finite()) {
        return Err(LocalError::Inconsistent(format!("function {i} is {} at the state", value[i])));
    }
    // supports: move one entry at a time
    let mut support = vec![Vec::new(); m];
    let mut xp = x.to_vec();
    let mut buf = Vec::with_capacity(m);
    for j in 0..n {
        let z = nodes(x[j]);
        xp[j] = x[j] + if z[4] != 0.0 { z[4] } else { z[0] } * H;
        eval(&xp, &mut buf);
        xp[j] = x[j];
        if buf.len() != m {
            return Err(LocalError::Inconsistent(format!("{} functions, then {}", m, buf.len())));
        }
        for (t, (a, b)) in value.iter().zip(&buf).enumerate() {
            if a.to_bits() != b.to_bits() {
                support[t].push(j);
            }
        }
    }
    if let Some((index, s)) = support.iter().enumerate().find(|(_, s)| s.len() > MAX_SUPPORT) {
        return Err(LocalError::SupportTooLarge { index, size: s.len() });
    }
    let mut groups: HashMap<&[usize], Vec<usize>> = HashMap::new();
    for (t, s) in support.iter().enumerate() {
        groups.entry(s.as_slice()).or_default().push(t);
    }
    let mut d: Vec<Vec<Vec<f64>>> = support.iter().map(|s| (1..=max_order).map(|o| vec![0.0; s.len().pow(o as u32)]).collect()).collect();
    for (sup, members) in &groups {
        if sup.is_empty() {
            continue;
        }
        let s = sup.len();
        let z: Vec<[f64; 5]> = sup.iter().map(|&j| nodes(x[j])).collect();
        let w: Vec<[[f64; 5]; 5]> = z.iter().map(weights).collect();
        let points = 5usize.pow(s as u32);
        // values[member][grid point]
        let mut vals = vec![vec![0.0; points]; members.len()];
        for g in 0..points {
            let mut r = g;
            for (c, &j) in sup.iter().enumerate() {
                xp[j] = x[j] + z[c][r % 5] * H;
                r /= 5;
            }
            eval(&xp, &mut buf);
            if buf.len() != m {
                return Err(LocalError::Inconsistent(format!("{} functions, then {}", m, buf.len())));
            }
            for (mi, &t) in members.iter().enumerate() {
                vals[mi][g] = buf[t];
            }
        }
        for &j in sup.iter() {
            xp[j] = x[j];
        }
        // every multi-index of orders (m_1..m_s), sum in 1..=max_order
        let mut cache: HashMap<Vec<u8>, Vec<f64>> = HashMap::new();
        for (order, dst) in (1..=max_order).map(|o| (o, o - 1)) {
            let entries = s.pow(order as u32);
            for e in 0..entries {
                let mut counts = vec![0u8; s];
                let mut r = e;
                for _ in 0..order {
                    counts[r % s] += 1;
                    r /= s;
                }
                let per_member = cache.entry(counts.clone()).or_insert_with(|| {
                    let mut acc = vec![0.0; members.len()];
                    for g in 0..points {
                        let mut wg = 1.0;
                        let mut r = g;
                        for c in 0..s {
                            wg *= w[c][counts[c] as usize][r % 5];
                            r /= 5;
                        }
                        if wg != 0.0 {
                            for (a, v) in acc.iter_mut().zip(&vals) {
                                *a += wg * v[g];
                            }
                        }
                    }
                    acc
                });
                for (mi, &t) in members.iter().enumerate() {
                    d[t][dst][e] = per_member[mi];
                }
            }
        }
    }
    Ok(LocalDerivatives { value, support, d })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polynomials of degree <= 4 in each entry are differentiated exactly (to rounding), at the
    /// centre and next to both ends of [0, 1].
    #[test]
    fn derivatives_of_polynomials() {
        for x in [[0.5, 0.3, 0.7], [1e-12, 0.999, 0.4]] {
            let mut f = |x: &[f64], out: &mut Vec<f64>| {
                out.clear();
                out.push(x[0] * x[0] * x[1]); // support {0, 1}
                out.push(2.0 * x[2].powi(4)); // support {2}
                out.push(3.0); // constant
            };
            let d = local_derivatives(&x, 4, &mut f).unwrap();
            assert_eq!(d.support[0], vec![0, 1]);
            assert_eq!(d.support[1], vec![2]);
            assert!(d.support[2].is_empty());
            // g0: d/dx0 = 2 x0 x1, d2/dx0dx1 = 2 x0, d3/dx0dx0dx1 = 2
            assert!((d.d[0][0][0] - 2.0 * x[0] * x[1]).abs() < 1e-12);
            assert!((d.d[0][1][1] - 2.0 * x[0]).abs() < 1e-11);
            assert!((d.d[0][2][2] - 2.0).abs() < 1e-8, "{}", d.d[0][2][2]); // (0,1,0)
            assert!(d.d[0][3][0].abs() < 1e-6);
            // g1: 4th derivative 48
            assert!((d.d[1][3][0] - 48.0).abs() < 1e-5, "{}", d.d[1][3][0]);
            assert!((d.d[1][2][0] - 48.0 * x[2]).abs() < 1e-6);
        }
    }
}
