//! Graded grids for the renewal (Volterra) equations of the LCFS limit ([`super::lcfs_limit`];
//! the equations are in that module's docs and in `docs/models/redundancy.md`, "LCFS limit").
//!
//! The unknowns `P`, `F`, `G` (and the `Phi_k` of the queue-length distribution) change at the
//! rate `1 + a` near `t = 0` but slowly later (a power law, then the decay rate of the busy
//! period, which goes to 0 as lambda -> 1). A uniform grid pays for the start over the whole
//! horizon; here the **coarse grid** is chosen while it is marched: the next step is
//! `eta sqrt(X / |X''|)` for `X` in `P`, `F`, `F^d`, `G` (the relative curvature, from the last
//! three nodes), at most 1.5 times the last step and at most the current time. The two finer
//! grids divide every coarse cell into 2 and 4 equal cells.
//!
//! On any grid the convolutions are computed **exactly for the piecewise-linear interpolants**
//! of both factors (the breakpoints of `X(s)` and of `Y(t - s)` are merged), and `F' = -P` and
//! the integrals by the trapezoidal rule. Each cell's error is then an even function of its
//! length, so the error on the grid that divides each coarse cell into `m` parts expands in
//! `m^-2, m^-4, ...` whatever the coarse grid: Romberg over `m = 1, 2, 4` (done by the caller)
//! applies as on a uniform grid. Cost `O(n^2)` in the number of nodes `n`, which is a few
//! hundred on the coarse grid at every load (against `horizon / h` on a uniform grid).

use crate::{out_of_range, Deadline, ModelError};

/// Where the nodes of a march come from.
pub(super) enum Nodes<'a> {
    /// Chosen while marching (the coarse grid): first step `h1`, step factor `eta`.
    Adaptive { h1: f64, eta: f64 },
    /// Given (a subdivision of a coarse grid): the march covers all of them.
    Fixed(&'a [f64]),
}

/// One marched grid: nodes, values at the nodes and the integrals `E[T]`, `E[B]`.
pub(super) struct Marched {
    /// Nodes `t_0 = 0 < t_1 < ...`.
    pub t: Vec<f64>,
    /// `P(t_i)`.
    #[allow(dead_code)]
    pub p: Vec<f64>,
    /// `F(t_i)`.
    pub f: Vec<f64>,
    /// `Q(t_i) = P F^(d-1)`.
    pub q: Vec<f64>,
    /// `E[T] = int F^d`.
    pub et: f64,
    /// `E[B] = int G`.
    pub eb: f64,
    /// Nodes up to the first where `G < 1e-22` (the distribution needs no more).
    pub n_phi: usize,
    /// Packed rows `A_i(k) = int P_lin(s) lambda_k(t_i - s) ds`, `k = 0..=i`, `i < n_phi`
    /// (hat functions `lambda_k` of the grid), and the same for `Q`; empty unless asked.
    pub rows_p: Vec<f64>,
    /// As `rows_p` for `Q`.
    pub rows_q: Vec<f64>,
}

/// Start of row `i` in a packed lower triangle with rows of `i + 1` entries.
pub(super) fn row_start(i: usize) -> usize {
    i * (i + 1) / 2
}

/// The nodes of `coarse` with every cell divided into `m` equal cells.
pub(super) fn subdivide(coarse: &[f64], m: usize) -> Vec<f64> {
    let mut t = Vec::with_capacity((coarse.len() - 1) * m + 1);
    t.push(coarse[0]);
    for w in coarse.windows(2) {
        let h = (w[1] - w[0]) / m as f64;
        for j in 1..m {
            t.push(w[0] + j as f64 * h);
        }
        t.push(w[1]);
    }
    t
}

/// Rows at node `i` of the convolutions with the piecewise-linear interpolants of `x1` and `x2`
/// (only `x[0..=i]` are read): `r[k] = int_0^{t_i} x_lin(s) lambda_k(t_i - s) ds`, `k = 0..=i`,
/// so that `(x * y)(t_i) = sum_k r[k] y_k` exactly for piecewise-linear `y`. The breakpoints
/// `t_j` of `x` and `t_i - t_k` of `y` are merged; on each piece both are linear and the
/// integral of their product is exact.
pub(super) fn conv_rows(t: &[f64], i: usize, x1: &[f64], x2: &[f64], r1: &mut [f64], r2: &mut [f64]) {
    let ti = t[i];
    r1[..=i].fill(0.0);
    r2[..=i].fill(0.0);
    // x-cell j: s in [t_j, t_j+1]; y-cell k: u = t_i - s in [t_k, t_k+1]
    let (mut j, mut k) = (0usize, i - 1);
    let mut sa = 0.0;
    let (mut hj, mut hk) = (t[1] - t[0], t[i] - t[i - 1]);
    let (mut s1, mut s2) = ((x1[1] - x1[0]) / hj, (x2[1] - x2[0]) / hj);
    let (mut a1, mut a2) = (x1[0], x2[0]);
    loop {
        let np = t[j + 1];
        let ng = ti - t[k];
        let sb = np.min(ng);
        let l = sb - sa;
        if l > 0.0 {
            let (b1, b2) = (x1[j] + (sb - t[j]) * s1, x2[j] + (sb - t[j]) * s2);
            // weight of y_k on this piece: (t_k+1 - (t_i - s)) / h_k
            let wa = (t[k + 1] - ti + sa) / hk;
            let wb = (t[k + 1] - ti + sb) / hk;
            let l6 = l / 6.0;
            let i1 = l6 * (a1 * (2.0 * wa + wb) + b1 * (wa + 2.0 * wb));
            let i2 = l6 * (a2 * (2.0 * wa + wb) + b2 * (wa + 2.0 * wb));
            r1[k] += i1;
            r1[k + 1] += 0.5 * l * (a1 + b1) - i1;
            r2[k] += i2;
            r2[k + 1] += 0.5 * l * (a2 + b2) - i2;
            a1 = b1;
            a2 = b2;
        }
        let (adv_p, adv_g) = (np <= ng, ng <= np);
        if (adv_p && j + 1 == i) || (adv_g && k == 0) {
            break;
        }
        if adv_p {
            j += 1;
            hj = t[j + 1] - t[j];
            s1 = (x1[j + 1] - x1[j]) / hj;
            s2 = (x2[j + 1] - x2[j]) / hj;
            a1 = x1[j];
            a2 = x2[j];
        }
        if adv_g {
            k -= 1;
            hk = t[k + 1] - t[k];
        }
        sa = sb;
    }
}

/// `R_i(k) = int_0^{h_i} (1 - u / h_i) lambda_k(u) du` into `r` (cleared first), `h_i = t_i -
/// t_i-1`: the coefficient of an unknown at node `i` of one factor against node `k` of the
/// other. Returns the number of entries (nodes with `t_k < h_i`, plus one).
fn last_cell_row(t: &[f64], i: usize, r: &mut Vec<f64>) -> usize {
    let h = t[i] - t[i - 1];
    r.clear();
    r.push(0.0);
    let mut k = 0;
    while k < i && t[k] < h {
        let (ua, ub) = (t[k], t[k + 1].min(h));
        let hk = t[k + 1] - t[k];
        let (wa, wb) = (1.0 - ua / h, 1.0 - ub / h);
        let (la, lb) = ((t[k + 1] - ua) / hk, (t[k + 1] - ub) / hk);
        let l = ub - ua;
        let ik = l / 6.0 * (wa * (2.0 * la + lb) + wb * (la + 2.0 * lb));
        r[k] += ik;
        r.push(0.5 * l * (wa + wb) - ik);
        k += 1;
    }
    r.len()
}

/// Error when the grid needs more nodes than `max_points`.
fn too_many(lambda: f64, n_max: usize, t: f64) -> ModelError {
    out_of_range(
        "model.lambda",
        lambda,
        &format!(
            "a smaller load for the LCFS limit solver: at this load its busy periods outlast t = {t:.3e} with {n_max} \
             grid points (the system itself is stable for lambda < 1: `mfq simulate` works)"
        ),
    )
}

/// Marches the renewal equations over `nodes` (module docs); `keep_rows` also stores the
/// convolution rows of `P` and `Q` for [`queue_length`] and continues until `G < 1e-22`
/// (`G` bounds every `Phi_k`, and `P(Q = k)` is kept down to 1e-18 with relative accuracy;
/// without, until `G < 1e-13`). `n_max` bounds the nodes.
pub(super) fn march(lambda: f64, d: u32, nodes: Nodes, keep_rows: bool, n_max: usize, deadline: &Deadline) -> Result<Marched, ModelError> {
    let a = lambda * d as f64;
    let e = d as i32 - 1;
    let mut t = vec![0.0];
    let (mut p, mut f, mut q, mut g) = (vec![1.0], vec![1.0], vec![1.0], vec![1.0]);
    let (mut rp, mut rq, mut rl) = (Vec::new(), Vec::new(), Vec::new());
    let (mut rows_p, mut rows_q) = (Vec::new(), Vec::new());
    let mut n_phi = None;
    let g_stop = if keep_rows { 1e-22 } else { 1e-13 };
    let (mut et, mut eb) = (0.0, 0.0);
    let mut i = 1;
    loop {
        if i % 64 == 0 && deadline.expired() {
            return Err(ModelError::Interrupted {
                during: format!("the LCFS limit's renewal equations (grid point {i})"),
                reason: deadline.reason(),
            });
        }
        let ti = match nodes {
            Nodes::Fixed(nodes) => {
                if i == nodes.len() {
                    break;
                }
                nodes[i]
            }
            Nodes::Adaptive { h1, eta } => {
                if i >= n_max {
                    return Err(too_many(lambda, n_max, t[i - 1]));
                }
                t[i - 1] + next_step(&t, &[&p, &f, &g], d, h1, eta)
            }
        };
        t.push(ti);
        let h = ti - t[i - 1];
        // the convolutions with the unknown slot i at zero, then its coefficients
        p.push(0.0);
        q.push(0.0);
        rp.resize(i + 1, 0.0);
        rq.resize(i + 1, 0.0);
        conv_rows(&t, i, &p, &q, &mut rp, &mut rq);
        let nl = last_cell_row(&t, i, &mut rl);
        let dotg = |r: &[f64]| r.iter().zip(&g).map(|(x, y)| x * y).sum::<f64>();
        let (c_p, c_q) = (dotg(&rp[..i]), dotg(&rq[..i]));
        let (b_p, b_q) = (rp[i], rq[i]);
        // alpha: coefficient of P_i (or Q_i) against the known G; gamma: of P_i G_i (i = 1)
        let alpha = dotg(&rl[..nl.min(i)]);
        let gamma = if nl > i { rl[i] } else { 0.0 };
        let (p_prev, f_prev) = (p[i - 1], f[i - 1]);
        let half = 0.5 * h;
        let num0 = f_prev - half * p_prev - a * c_p;
        // F_i = F_i-1 - h/2 (P_i-1 + P_i) = P_i + a (c_P + b_P G_i + P_i (alpha + gamma G_i))
        let p_of = |g: f64| {
            let (num, den) = (num0 - a * b_p * g, 1.0 + half + a * alpha + a * gamma * g);
            (num / den, (-a * b_p * den - num * a * gamma) / (den * den))
        };
        // Newton on G_i: G_i = Q_i + a (c_Q + b_Q G_i + Q_i (alpha + gamma G_i))
        let mut gi = g[i - 1];
        for _ in 0..30 {
            let (pi, dpi) = p_of(gi);
            let fi = f_prev - half * (p_prev + pi);
            let dfi = -half * dpi;
            let qi = pi * fi.powi(e);
            let dqi = dpi * fi.powi(e) + if e > 0 { pi * e as f64 * fi.powi(e - 1) * dfi } else { 0.0 };
            let m = 1.0 + a * alpha + a * gamma * gi;
            let r = gi * (1.0 - a * b_q) - qi * m - a * c_q;
            let dr = (1.0 - a * b_q) - dqi * m - qi * a * gamma;
            let step = r / dr;
            gi -= step;
            if step.abs() <= 1e-16 * gi.abs().max(1e-300) {
                break;
            }
        }
        let pi = p_of(gi).0.max(0.0);
        let fi = (f_prev - half * (p_prev + pi)).max(0.0);
        let gi = gi.max(0.0);
        let qi = pi * fi.powi(e);
        p[i] = pi;
        q[i] = qi;
        f.push(fi);
        g.push(gi);
        if keep_rows && n_phi.is_none() {
            // full rows (the unknown slot's share added back) for the distribution
            for k in 0..nl.min(i + 1) {
                rp[k] += pi * rl[k];
                rq[k] += qi * rl[k];
            }
            rows_p.extend_from_slice(&rp[..=i]);
            rows_q.extend_from_slice(&rq[..=i]);
        }
        if gi < g_stop && n_phi.is_none() {
            n_phi = Some(i + 1);
        }
        let (fd0, fd) = (f[i - 1].powi(d as i32), fi.powi(d as i32));
        et += half * (fd0 + fd);
        eb += half * (g[i - 1] + gi);
        i += 1;
        if matches!(nodes, Nodes::Adaptive { .. }) && fd < 1e-13 && gi < g_stop {
            break;
        }
    }
    let n = t.len();
    if keep_rows {
        // row 0 (t = 0) is all zero
        let n_phi = n_phi.unwrap_or(n);
        rows_p.insert(0, 0.0);
        rows_q.insert(0, 0.0);
        debug_assert_eq!(rows_p.len(), row_start(n_phi));
    }
    Ok(Marched { t, p, f, q, et, eb, n_phi: n_phi.unwrap_or(n), rows_p, rows_q })
}

/// The next step of the adaptive coarse grid after the last node (module docs).
fn next_step(t: &[f64], xs: &[&Vec<f64>], d: u32, h1: f64, eta: f64) -> f64 {
    let i = t.len() - 1;
    if i < 2 {
        return h1;
    }
    let (h0, hm) = (t[i] - t[i - 1], t[i - 1] - t[i - 2]);
    let mut curv = 0.0f64;
    let mut rel = |x0: f64, x1: f64, x2: f64| {
        let d2 = 2.0 * ((x2 - x1) / h0 - (x1 - x0) / hm) / (h0 + hm);
        if x2 > 0.0 {
            curv = curv.max(d2.abs() / x2);
        }
    };
    for x in xs {
        rel(x[i - 2], x[i - 1], x[i]);
    }
    let f = xs[1];
    let dd = d as i32;
    // F^d only while it matters for E[T]: once negligible its relative curvature (about d^2
    // times that of F) would hold the steps short through the whole tail of G (large d)
    if f[i].powi(dd) > 1e-14 {
        rel(f[i - 2].powi(dd), f[i - 1].powi(dd), f[i].powi(dd));
    }
    let by_curvature = if curv > 0.0 { eta / curv.sqrt() } else { f64::INFINITY };
    by_curvature.min(1.5 * h0).min(t[i])
}

/// Levels of the queue-length distribution computed together in [`queue_length`].
const BLOCK: usize = 16;

/// `P(Q = k)` for `k = 0..levels` from the recursion for `Phi_k` (module docs of
/// [`super::lcfs_limit`]) on a marched grid with its rows, up to node `n_phi`; stops below
/// [`super::lcfs_limit::TAIL_FLOOR`]. `O(n^2)` per level; [`BLOCK`] levels at a time, stored
/// node by node, so that each row is read once per block and the sums over the history are
/// vector operations across the levels.
pub(super) fn queue_length(lambda: f64, d: u32, m: &Marched, levels: usize, deadline: &Deadline) -> Result<Vec<f64>, ModelError> {
    let a = lambda * d as f64;
    let n = m.n_phi;
    let t = &m.t[..n];
    let fe: Vec<f64> = m.f[..n].iter().map(|v| v.powi(d as i32 - 1)).collect();
    let mut pq = vec![1.0 - lambda];
    // (P * Phi_(k-1))(t_i) for the level before the block (zero for k = 1)
    let mut carry = vec![0.0; n];
    // phi[i * BLOCK + b] = Phi_(k0 + b)(t_i)
    let mut phi = vec![0.0; n * BLOCK];
    let mut k0 = 1;
    while k0 < levels {
        let nb = BLOCK.min(levels - k0);
        phi.fill(0.0);
        if k0 == 1 {
            phi[0] = 1.0;
        }
        let mut integral = [0.0; BLOCK];
        for i in 1..n {
            if i % 256 == 0 && deadline.expired() {
                return Err(ModelError::Interrupted {
                    during: format!("the LCFS limit's queue-length distribution (level {k0} of {levels})"),
                    reason: deadline.reason(),
                });
            }
            let (rp, rq) = (&m.rows_p[row_start(i)..row_start(i + 1)], &m.rows_q[row_start(i)..row_start(i + 1)]);
            let (mut kp, mut kq) = ([0.0; BLOCK], [0.0; BLOCK]);
            for ((&wp, &wq), row) in rp[..i].iter().zip(&rq[..i]).zip(phi.chunks_exact(BLOCK)) {
                for b in 0..BLOCK {
                    kp[b] += wp * row[b];
                    kq[b] += wq * row[b];
                }
            }
            let coef = 1.0 + a * fe[i] * rp[i] - a * rq[i];
            let mut conv_prev = carry[i];
            for b in 0..nb {
                let source = if k0 + b == 1 { m.q[i] } else { 0.0 };
                // Phi_i = source + a fe_i (conv_prev_i - kp - rp_i Phi_i) + a (kq + rq_i Phi_i)
                let v = ((source + a * fe[i] * (conv_prev - kp[b]) + a * kq[b]) / coef).max(0.0);
                integral[b] += 0.5 * (t[i] - t[i - 1]) * (phi[(i - 1) * BLOCK + b] + v);
                phi[i * BLOCK + b] = v;
                conv_prev = kp[b] + rp[i] * v;
            }
            carry[i] = conv_prev;
        }
        for v in &integral[..nb] {
            pq.push((1.0 - lambda) * a * v);
            if pq[pq.len() - 1] < super::lcfs_limit::TAIL_FLOOR {
                // below the floor: the caller continues the distribution geometrically
                return Ok(pq);
            }
        }
        k0 += nb;
    }
    Ok(pq)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The merged-breakpoint rows integrate products of piecewise-linear functions exactly:
    /// against closed forms for linear `x` and `y` on an irregular grid.
    #[test]
    fn conv_rows_are_exact_for_linear_functions() {
        let t = [0.0, 0.1, 0.25, 0.3, 0.7, 1.1, 1.2];
        let x: Vec<f64> = t.iter().map(|s| 2.0 + 3.0 * s).collect();
        let y: Vec<f64> = t.iter().map(|s| 1.0 - 0.5 * s).collect();
        for i in 1..t.len() {
            let (mut r1, mut r2) = (vec![0.0; i + 1], vec![0.0; i + 1]);
            conv_rows(&t, i, &x, &y, &mut r1, &mut r2);
            let c: f64 = r1.iter().zip(&y).map(|(r, v)| r * v).sum();
            // int_0^T (2 + 3s)(1 - (T - s)/2) ds
            let tt = t[i];
            let exact = (2.0 - tt) * (2.0 * tt + 1.5 * tt * tt) / 2.0 + (tt * tt + 3.0 * tt.powi(3) / 3.0) / 2.0;
            assert!((c - exact).abs() < 1e-14, "i = {i}: {c} vs {exact}");
        }
    }
}
