//! Derivatives up to order 4 of many scalar functions of the state that each depend on a few
//! state entries (the rates `beta_l(x)` of a model's transitions, an observable such as
//! `P(wait)`), by finite differences on a sparse grid over each function's support.
//!
//! The support of every function is found by moving one entry at a time. Functions with the same
//! support share one grid. Per entry there are five nodes `x_j + z h`, `z in {-2, -1, 0, 1, 2}`
//! (or `{0..4}`, `{-4..0}` near the ends of `[0, 1]`, so that no node leaves the feasible box
//! and no clamp inside a model bends the function), with the weights of the five-point
//! interpolating polynomial (exact for polynomials of degree <= 4 in each entry). A mixed partial
//! derivative is the product of the one-dimensional weights; since a partial of total order
//! `<= 4` involves at most four entries and the order-0 weights pick the centre node, only the
//! points with at most four entries off centre carry weight: `sum_{k <= 4} C(s, k) 4^k` points
//! for a support of `s` entries (`5^s` for the full tensor grid: 15,625 against 5,385 at
//! `s = 6`), so any support size works, at a cost that grows like `s^4`. Step `h = 1/64`: the
//! rounding error of a fourth derivative is then about `1e-16 * 16 / h^4 ~ 3e-8` of the
//! function's scale.

// the stencils are index arithmetic over several arrays at once
#![allow(clippy::needless_range_loop)]

use std::collections::HashMap;

/// Step of the difference grids (a power of two, so that the nodes are exact).
const H: f64 = 1.0 / 64.0;

/// Largest work the grids of the rates may take (grid points times the larger of the number of
/// functions and the state dimension, the cost of one evaluation): a few seconds. Three-phase
/// jobs or three server classes (supports of 6 entries) at `K = 30` need about `1.6e5` points
/// of a few hundred rates each.
pub const MAX_WORK: f64 = 2e8;

/// The bound for observables (whose evaluation computes every observable of the model, far more
/// than one pass over the state): in a 36-entry state an observable of 6 entries (5,385 points)
/// is expanded at order 2, one of 12 entries (141,905 points) is not (then the caller leaves it
/// out or takes its mean-field value, see `refined_expansion`).
pub const OBSERVABLE_WORK: f64 = 2e6;

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
    /// The grids would need more work than the caller's bound (supports too large).
    SupportTooLarge {
        /// Index of the function with the largest support.
        index: usize,
        /// Its support size.
        size: usize,
        /// Function values the grids would need.
        work: f64,
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
/// order). `max_work` bounds the grid points times the cost of one evaluation (taken as the
/// larger of the number of functions and the state dimension): [`MAX_WORK`] for the rates,
/// [`OBSERVABLE_WORK`] for observables.
///
/// # Errors
/// [`LocalError::SupportTooLarge`] when the grids would need more than `max_work`; [`LocalError::Inconsistent`] when the number of functions changes or a value is not
/// finite.
pub fn local_derivatives(
    x: &[f64],
    max_order: usize,
    max_work: f64,
    eval: &mut dyn FnMut(&[f64], &mut Vec<f64>),
) -> Result<LocalDerivatives, LocalError> {
    let n = x.len();
    let max_order = max_order.clamp(1, 4);
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
    let mut groups: HashMap<&[usize], Vec<usize>> = HashMap::new();
    for (t, s) in support.iter().enumerate() {
        groups.entry(s.as_slice()).or_default().push(t);
    }
    let mut groups: Vec<(&[usize], Vec<usize>)> = groups.into_iter().filter(|(s, _)| !s.is_empty()).collect();
    groups.sort();
    // the cost: every grid point evaluates all m functions (at least one pass over the state)
    let pass = m.max(n) as f64;
    let work =
        |batches: &[Vec<usize>]| -> f64 { batches.iter().map(|b| grid_points(groups[b[0]].0.len(), max_order) as f64).sum::<f64>() * pass };
    let mut batches: Vec<Vec<usize>> = (0..groups.len()).map(|g| vec![g]).collect();
    if work(&batches) > max_work {
        batches = disjoint_batches(&groups, n);
    }
    let total = work(&batches);
    if total > max_work {
        let (index, s) = support.iter().enumerate().max_by_key(|(_, s)| s.len()).map(|(i, s)| (i, s.len())).unwrap_or((0, 0));
        return Err(LocalError::SupportTooLarge { index, size: s, work: total });
    }
    let mut d: Vec<Vec<Vec<f64>>> = support.iter().map(|s| (1..=max_order).map(|o| vec![0.0; s.len().pow(o as u32)]).collect()).collect();
    for batch in &batches {
        let batch: Vec<(&[usize], &[usize])> = batch.iter().map(|&g| (groups[g].0, groups[g].1.as_slice())).collect();
        group_derivatives(x, &batch, max_order, &mut xp, &mut buf, eval, &mut d)?;
    }
    Ok(LocalDerivatives { value, support, d })
}

/// The groups (by index into `groups`, supports over `0..n`) in batches whose grids can be
/// evaluated together: the same support size and pairwise disjoint supports, so that one
/// evaluation moving the entries of every group of a batch to their nodes gives each group's
/// functions their values at their own grid point (a function is unchanged by the entries
/// outside its support; the compression of Curtis, Powell and Reid, IMA J. Appl. Math. 13, 1974,
/// for difference Jacobians). Greedy, first fit in the groups' order. Used only when the groups
/// one by one would exceed the work bound (the results are otherwise unchanged): the tail of
/// a tail-form state, one entry per function, then needs five evaluations instead of five per
/// level.
fn disjoint_batches(groups: &[(&[usize], Vec<usize>)], n: usize) -> Vec<Vec<usize>> {
    // batches[b] with its used entries and support size
    let mut batches: Vec<(Vec<usize>, Vec<bool>, usize)> = Vec::new();
    for (g, (sup, _)) in groups.iter().enumerate() {
        let fits = |b: &(Vec<usize>, Vec<bool>, usize)| b.2 == sup.len() && sup.iter().all(|&j| !b.1[j]);
        match batches.iter_mut().find(|b| fits(b)) {
            Some(b) => {
                b.0.push(g);
                sup.iter().for_each(|&j| b.1[j] = true);
            }
            None => {
                let mut used = vec![false; n];
                sup.iter().for_each(|&j| used[j] = true);
                batches.push((vec![g], used, sup.len()));
            }
        }
    }
    batches.into_iter().map(|b| b.0).collect()
}

/// Number of points of the sparse grid of `s` entries for derivatives up to `order`: the
/// points with at most `order` entries off their centre node, four other nodes each.
pub fn grid_points(s: usize, order: usize) -> usize {
    let mut total = 0usize;
    let mut binom = 1usize; // C(s, k)
    for k in 0..=order.min(s) {
        total = total.saturating_add(binom.saturating_mul(4usize.pow(k as u32)));
        binom = binom.saturating_mul(s - k) / (k + 1);
    }
    total
}

/// Advance a non-decreasing (`strict = false`) or increasing (`strict = true`) multi-index over
/// `0..s` in lexicographic order; `false` after the last one.
fn next_multi_index(idx: &mut [usize], s: usize, strict: bool) -> bool {
    let k = idx.len();
    for pos in (0..k).rev() {
        // the largest value position `pos` may take
        let cap = if strict { s - (k - pos) } else { s - 1 };
        if idx[pos] < cap {
            idx[pos] += 1;
            for q in pos + 1..k {
                idx[q] = if strict { idx[q - 1] + 1 } else { idx[pos] };
            }
            return true;
        }
    }
    false
}

/// The derivatives of the functions of a batch of groups `(sup, members)`: the functions
/// `members` all depend on the entries `sup`; the groups of a batch have supports of one size,
/// pairwise disjoint (see [`disjoint_batches`]), so one evaluation serves the same grid point of
/// every group. From the values on the sparse grid: a mixed partial of total order `<= 4`
/// involves at most four entries, and the product of the one-dimensional weights vanishes off
/// the centre node of the others (the order-0 weights interpolate at a node), so only points
/// with at most `max_order` entries off centre are evaluated. Each distinct multi-index is
/// computed once and copied to its permutations in the full tensors `d[t]`.
#[allow(clippy::too_many_arguments)]
fn group_derivatives(
    x: &[f64],
    batch: &[(&[usize], &[usize])],
    max_order: usize,
    xp: &mut [f64],
    buf: &mut Vec<f64>,
    eval: &mut dyn FnMut(&[f64], &mut Vec<f64>),
    d: &mut [Vec<Vec<f64>>],
) -> Result<(), LocalError> {
    let s = batch.first().map_or(0, |g| g.0.len());
    // per group: the nodes, weights and centre node of each of its entries
    let z: Vec<Vec<[f64; 5]>> = batch.iter().map(|(sup, _)| sup.iter().map(|&j| nodes(x[j])).collect()).collect();
    let w: Vec<Vec<[[f64; 5]; 5]>> = z.iter().map(|z| z.iter().map(weights).collect()).collect();
    let centre: Vec<Vec<usize>> = z.iter().map(|z| z.iter().map(|z| z.iter().position(|&v| v == 0.0).unwrap_or(2)).collect()).collect();
    // blocks of points: one per subset of at most max_order entries (an increasing index list),
    // 4^k points each (the non-centre nodes, digits in subset order)
    let mut offset: HashMap<u64, usize> = HashMap::new();
    let mut points = 0usize;
    let mut sub = [0usize; 4];
    for k in 0..=max_order.min(s) {
        for (i, v) in sub[..k].iter_mut().enumerate() {
            *v = i;
        }
        loop {
            let mask = sub[..k].iter().fold(0u64, |acc, &c| acc | 1u64 << c);
            offset.insert(mask, points);
            points += 4usize.pow(k as u32);
            if k == 0 || !next_multi_index(&mut sub[..k], s, true) {
                break;
            }
        }
    }
    // vals[group][point * members + member]
    let mut vals: Vec<Vec<f64>> = batch.iter().map(|(_, members)| vec![0.0; points * members.len()]).collect();
    let largest = batch.iter().flat_map(|(_, members)| members.iter()).max().copied().unwrap_or(0);
    for k in 0..=max_order.min(s) {
        for (i, v) in sub[..k].iter_mut().enumerate() {
            *v = i;
        }
        loop {
            let mask = sub[..k].iter().fold(0u64, |acc, &c| acc | 1u64 << c);
            let base = offset[&mask];
            for g in 0..4usize.pow(k as u32) {
                for (gi, (sup, _)) in batch.iter().enumerate() {
                    let mut r = g;
                    for &c in &sub[..k] {
                        let digit = r % 4;
                        r /= 4;
                        let node = if digit < centre[gi][c] { digit } else { digit + 1 };
                        xp[sup[c]] = x[sup[c]] + z[gi][c][node] * H;
                    }
                }
                eval(xp, buf);
                if buf.len() <= largest {
                    return Err(LocalError::Inconsistent(format!("more than {largest} functions at the state, then {}", buf.len())));
                }
                for (gi, (_, members)) in batch.iter().enumerate() {
                    let nm = members.len();
                    for (mi, &t) in members.iter().enumerate() {
                        vals[gi][(base + g) * nm + mi] = buf[t];
                    }
                }
            }
            for (sup, _) in batch {
                for &c in &sub[..k] {
                    xp[sup[c]] = x[sup[c]];
                }
            }
            if k == 0 || !next_multi_index(&mut sub[..k], s, true) {
                break;
            }
        }
    }
    for (gi, (_, members)) in batch.iter().enumerate() {
        let (w, centre, vals, nm) = (&w[gi], &centre[gi], &vals[gi], members.len());
        let mut acc = vec![0.0; nm];
        let mut idx = [0usize; 4];
        let mut ent = [0usize; 4]; // distinct entries of the multi-index
        let mut cnt = [0usize; 4]; // their counts
        for order in 1..=max_order {
            idx[..order].iter_mut().for_each(|v| *v = 0);
            loop {
                // distinct entries and counts of idx[..order] (non-decreasing)
                let mut k = 0;
                for &c in &idx[..order] {
                    if k > 0 && ent[k - 1] == c {
                        cnt[k - 1] += 1;
                    } else {
                        ent[k] = c;
                        cnt[k] = 1;
                        k += 1;
                    }
                }
                acc.iter_mut().for_each(|a| *a = 0.0);
                for g in 0..5usize.pow(k as u32) {
                    let (mut r, mut wg, mut mask, mut pos, mut stride) = (g, 1.0, 0u64, 0usize, 1usize);
                    // digits in increasing entry order, matching the block layout
                    for q in 0..k {
                        let nd = r % 5;
                        r /= 5;
                        let c = ent[q];
                        wg *= w[c][cnt[q]][nd];
                        if nd != centre[c] {
                            mask |= 1u64 << c;
                            pos += stride * if nd < centre[c] { nd } else { nd - 1 };
                            stride *= 4;
                        }
                    }
                    if wg == 0.0 {
                        continue;
                    }
                    let row = (offset[&mask] + pos) * nm;
                    for (a, v) in acc.iter_mut().zip(&vals[row..row + nm]) {
                        *a += wg * v;
                    }
                }
                let flat = idx[..order].iter().fold(0usize, |f, &c| f * s + c);
                for (mi, &t) in members.iter().enumerate() {
                    d[t][order - 1][flat] = acc[mi];
                }
                if !next_multi_index(&mut idx[..order], s, false) {
                    break;
                }
            }
            // copy each sorted entry to its permutations
            for &t in *members {
                let dt = &mut d[t][order - 1];
                for e in 0..dt.len() {
                    let mut r = e;
                    for q in (0..order).rev() {
                        idx[q] = r % s;
                        r /= s;
                    }
                    idx[..order].sort_unstable();
                    let flat = idx[..order].iter().fold(0usize, |f, &c| f * s + c);
                    dt[e] = dt[flat];
                }
            }
        }
    }
    Ok(())
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
            let d = local_derivatives(&x, 4, MAX_WORK, &mut f).unwrap();
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

    /// Supports of six and seven entries (beyond the full tensor grid's reach), with one entry next
    /// to each end of `[0, 1]`: every derivative up to order 4 of `prod_i p(c_i x_i)`, `p` the
    /// quartic Taylor polynomial of `exp` (so the mixed partial of counts `m_i` is
    /// `prod_i c_i^{m_i} p^{(m_i)}(c_i x_i)`, and degree 4 per entry is within the stencils'
    /// exactness), and selected derivatives of a second polynomial, against their closed forms.
    /// Over the work bound, groups with disjoint supports of one size share their grids: 600
    /// functions of one entry each (a tail-form state's tail), two of two entries (disjoint) and
    /// one of three, at order 4, need 5 + 25 + 125 evaluations instead of 3,175; the derivatives
    /// are those of the polynomials and those of the group-by-group grids.
    #[test]
    fn disjoint_supports_share_their_grids_over_the_bound() {
        let n = 600;
        let x: Vec<f64> = (0..n).map(|j| 0.9f64.powi(j as i32 + 1) * 0.98 + 0.01).collect();
        let calls = std::cell::Cell::new(0usize);
        let mut f = |x: &[f64], out: &mut Vec<f64>| {
            calls.set(calls.get() + 1);
            out.clear();
            out.extend(x.iter().map(|v| v * v * v - 2.0 * v));
            out.push(x[0] * x[1]);
            out.push(x[2] * x[3] * x[3]);
            out.push(x[4] * x[5] * x[6]);
        };
        let one_by_one = local_derivatives(&x, 4, f64::INFINITY, &mut f).unwrap();
        let unbatched = calls.replace(0);
        // the one-by-one grids need (600 x 5 + 2 x 25 + 125) x 603 values
        assert_eq!(grid_points(1, 4) * n + 2 * grid_points(2, 4) + grid_points(3, 4), 3175);
        let shared = local_derivatives(&x, 4, 1e6, &mut f).unwrap();
        assert_eq!((unbatched, calls.get()), (1 + n + 3175, 1 + n + 5 + 25 + 125));
        for (t, (a, b)) in one_by_one.d.iter().zip(&shared.d).enumerate() {
            for (u, v) in a.iter().flatten().zip(b.iter().flatten()) {
                assert!((u - v).abs() <= 1e-9 * (1.0 + u.abs()), "function {t}: {u} against {v}");
            }
        }
        for j in [0, 299, 599] {
            let d = &shared.d[j];
            let v = x[j];
            assert!((d[0][0] - (3.0 * v * v - 2.0)).abs() < 1e-9 && (d[1][0] - 6.0 * v).abs() < 1e-7, "entry {j}");
            assert!((d[2][0] - 6.0).abs() < 1e-5 && d[3][0].abs() < 1e-3, "entry {j}: {:?}", d);
        }
        // x_2 x_3^2: d/dx_3 d/dx_3 = 2 x_2
        assert!((shared.d[n + 1][1][3] - 2.0 * x[2]).abs() < 1e-8);
        assert!((shared.d[n + 2][2][5] - 1.0).abs() < 1e-7, "{:?}", shared.d[n + 2][2]);
    }

    #[test]
    fn large_supports_on_the_sparse_grid() {
        let c = [0.3, -0.7, 1.1, 0.5, -0.2, 0.9, 0.4];
        let x = [0.4, 0.999, 0.2, 1e-9, 0.6, 0.35, 0.5];
        // p^(m)(u) = sum_{j = m..4} u^(j - m) / (j - m)!
        let p = |m: usize, u: f64| (m..=4).map(|j| u.powi((j - m) as i32) / [1.0, 1.0, 2.0, 6.0, 24.0][j - m]).sum::<f64>();
        let mut f = |x: &[f64], out: &mut Vec<f64>| {
            out.clear();
            out.push(c.iter().zip(x).map(|(c, x)| p(0, c * x)).product());
            out.push(x[0] * x[1] * x[2] * x[3] * x[4] * x[5] + x[0] * x[0] * x[3] * x[3]);
        };
        let d = local_derivatives(&x, 4, MAX_WORK, &mut f).unwrap();
        assert_eq!(d.support[0], (0..7).collect::<Vec<_>>());
        assert_eq!(d.support[1], (0..6).collect::<Vec<_>>());
        let s = 7;
        let mut worst = 0.0f64;
        for (order, t) in d.d[0].iter().enumerate() {
            for (flat, v) in t.iter().enumerate() {
                let (mut r, mut counts) = (flat, [0usize; 7]);
                for _ in 0..=order {
                    counts[r % s] += 1;
                    r /= s;
                }
                let want: f64 = (0..s).map(|i| c[i].powi(counts[i] as i32) * p(counts[i], c[i] * x[i])).product();
                worst = worst.max((v - want).abs());
            }
        }
        // rounding: products of one-sided stencils (entries 1 and 3) reach `~1e10` in weight
        assert!(worst < 2e-6, "product: worst error {worst}");
        // the polynomial over entries 0..6
        let p = &d.d[1];
        let at = |idx: &[usize]| idx.iter().fold(0, |f, &i| f * 6 + i);
        let prod = |skip: &[usize]| (0..6).filter(|i| !skip.contains(i)).map(|i| x[i]).product::<f64>();
        assert!((p[3][at(&[0, 1, 2, 3])] - prod(&[0, 1, 2, 3])).abs() < 1e-7);
        assert!((p[3][at(&[3, 0, 3, 0])] - 4.0).abs() < 1e-6, "{}", p[3][at(&[3, 0, 3, 0])]);
        assert!((p[3][at(&[5, 2, 4, 1])] - prod(&[1, 2, 4, 5])).abs() < 1e-7);
        assert!((p[2][at(&[2, 0, 1])] - prod(&[0, 1, 2])).abs() < 1e-8);
        assert!((p[1][at(&[3, 0])] - prod(&[0, 3]) - 4.0 * x[0] * x[3]).abs() < 1e-10);
        assert!((p[0][at(&[5])] - prod(&[5])).abs() < 1e-12);
        assert_eq!(grid_points(6, 4), 5385);
    }
}
