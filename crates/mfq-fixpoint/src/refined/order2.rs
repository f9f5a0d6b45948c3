//! The `1/N^2` term `A` of the refined mean field at a fixed point, from the moment equations
//! derived in docs/refined.md (after Gast, Bortolussi and Tribastone, "Size expansions of mean
//! field approximation: transient and steady-state analysis", Performance Evaluation 2018).
//!
//! With `Y = X^N - x*`: `E[Y] = V/N + A/N^2`, `E[Y Y^T] = W/N + B/N^2`, `E[Y (x) Y (x) Y] = C/N^2`,
//! `E[Y^(x)4] = sym(W (x) W)/N^2 + O(1/N^3)`, and at a fixed point
//!
//! ```text
//! sum_3 modes J C + S3 = 0,   S3_ijk = Z_jk,i + Z_ik,j + Z_ij,k + R_ijk
//!   Z_pq,s = 1/2 W_pq (F_s : W) + (W F_s W)_pq + Q_pq V_s + sum_l dQ_pq/dx_l W_ls
//! J B + B J^T + S2 = 0,       S2_ij = 1/2 (F_j : C_i.. + F_i : C_j..) + 1/2 (W E^T + E W^T)_ij
//!                                     + sum_l dQ_ij/dx_l V_l + 1/2 d2Q_ij : W
//! J A + 1/2 F : B + 1/6 F''' : C + 1/8 F'''' : (W, W) = 0
//! ```
//!
//! (`F_s` the Hessian of `f_s`, `E_jk = sum_lm d3 f_j / dx_k dx_l dx_m W_lm`,
//! `R_ijk = sum_l l_i l_j l_k beta_l`.) Every derivative comes from the rates `beta_l` (their
//! local derivatives, `refined::local`), assembled transition by transition.

use super::local::{local_derivatives, LocalDerivatives, LocalError};
use super::tensor::ComplexSchur;
use crate::RefinedError;
use mfq_model::{Deadline, MeanFieldModel};

/// The second-order moments at a fixed point.
#[derive(Debug, Clone)]
pub struct SecondOrder {
    /// `A` (length `n`).
    pub a: Vec<f64>,
    /// `B` (row-major `n x n`).
    pub b: Vec<f64>,
    /// `C` (row-major `n^3`).
    pub c: Vec<f64>,
}

/// The jumps of every transition: `(state index, change)` pairs.
pub(crate) type Jumps = Vec<Vec<(usize, f64)>>;

/// The jumps of every transition at `x` and the local derivatives (up to `order`, at most 4)
/// of the rates, stopped by `deadline`: once it has passed the rates are no longer
/// evaluated (zeros stand in, so that the grids finish at once) and the result is
/// [`RefinedError::Stopped`]. (The support search and grids evaluate every rate some `n` times:
/// seconds per call at `n` ~ 1000.)
pub(crate) fn rate_derivatives_until(
    model: &dyn MeanFieldModel,
    x: &[f64],
    order: usize,
    deadline: Option<&mfq_model::Deadline>,
) -> Result<(Jumps, LocalDerivatives), RefinedError> {
    let tr = model.transitions().ok_or_else(|| RefinedError::NoTransitions { model: model.name() })?;
    let mut jumps = Vec::new();
    tr.visit(x, &mut |j, _| jumps.push(j.to_vec()));
    let count = jumps.len();
    let mut calls = 0usize;
    let mut expired = false;
    let ld = local_derivatives(x, order, super::local::MAX_WORK, &mut |y, out| {
        out.clear();
        calls += 1;
        if let Some(d) = deadline {
            expired = expired || (calls % 16 == 0 && d.expired());
        }
        if expired {
            out.resize(count, 0.0);
        } else {
            tr.visit(y, &mut |_, r| out.push(r));
        }
    });
    if let Some(d) = deadline.filter(|_| expired) {
        return Err(RefinedError::Stopped { during: "the rates' derivatives".into(), reason: d.reason() });
    }
    let ld = ld.map_err(|e| local_error(model, e))?;
    Ok((jumps, ld))
}

pub(crate) fn local_error(model: &dyn MeanFieldModel, e: LocalError) -> RefinedError {
    match e {
        LocalError::SupportTooLarge { index, size, work } => RefinedError::Unsupported(format!(
            "the rate of transition {index} of {} depends on {size} state entries; the derivative grids of the 1/N^2 term would need {work:.1e} rate values, more than the limit of {:.0e} (the grids grow like the fourth power of the number of entries a rate depends on)",
            model.name(),
            super::local::MAX_WORK
        )),
        LocalError::Inconsistent(m) => RefinedError::Unsupported(format!("the rates of {}: {m}", model.name())),
    }
}

/// `sum_{a,b} d2[a,b] M[S_a, S_b]` for a function with support `s`.
#[inline]
pub(crate) fn contract2(d2: &[f64], s: &[usize], m: &[f64], n: usize) -> f64 {
    let k = s.len();
    let mut acc = 0.0;
    for (a, &i) in s.iter().enumerate() {
        for (b, &j) in s.iter().enumerate() {
            acc += d2[a * k + b] * m[i * n + j];
        }
    }
    acc
}

/// `sum_{a,b,c} d3[a,b,c] C[S_a, S_b, S_c]`.
#[inline]
pub(crate) fn contract3(d3: &[f64], s: &[usize], c: &[f64], n: usize) -> f64 {
    let k = s.len();
    let mut acc = 0.0;
    for (a, &i) in s.iter().enumerate() {
        for (b, &j) in s.iter().enumerate() {
            for (e, &l) in s.iter().enumerate() {
                acc += d3[(a * k + b) * k + e] * c[(i * n + j) * n + l];
            }
        }
    }
    acc
}

/// `sum_{a,b,c,d} d4[a,b,c,d] W[S_a, S_b] W[S_c, S_d]`.
#[inline]
pub(crate) fn contract4ww(d4: &[f64], s: &[usize], w: &[f64], n: usize) -> f64 {
    let k = s.len();
    let mut acc = 0.0;
    for (a, &i) in s.iter().enumerate() {
        for (b, &j) in s.iter().enumerate() {
            let wij = w[i * n + j];
            for (c, &l) in s.iter().enumerate() {
                for (d, &m) in s.iter().enumerate() {
                    acc += d4[((a * k + b) * k + c) * k + d] * wij * w[l * n + m];
                }
            }
        }
    }
    acc
}

/// [`RefinedError::Stopped`] at `deadline` in `during`, when it has passed: looked at once per
/// outer row of the order-2 loops (a transition, or a first index of an `n^2` or `n^3` tensor),
/// never in their inner loops.
fn check(deadline: &Deadline, during: &str) -> Result<(), RefinedError> {
    if deadline.expired() {
        return Err(RefinedError::Stopped { during: during.into(), reason: deadline.reason() });
    }
    Ok(())
}

/// Where [`third_source`] is, for [`RefinedError::Stopped`].
const THIRD_SOURCE: &str = "the third-moment source S3 of the 1/N^2 term";

/// Where [`second_source`] is, for [`RefinedError::Stopped`].
const SECOND_SOURCE: &str = "the second-moment source S2 of the 1/N^2 term";

/// The third-moment source `S3` (row-major `n^3`).
///
/// # Errors
/// [`RefinedError::Stopped`] when `deadline` passes (looked at once per transition and per
/// first index of the `n^3` loops: at `n` ~ 1000 each is milliseconds, the whole seconds).
pub(crate) fn third_source(
    jumps: &[Vec<(usize, f64)>],
    ld: &LocalDerivatives,
    w: &[f64],
    v: &[f64],
    q: &[f64],
    n: usize,
    deadline: &Deadline,
) -> Result<Vec<f64>, RefinedError> {
    // Z[(p n + q) n + s]
    let mut z = vec![0.0; n * n * n];
    // F_s : W for every s
    let mut hw = vec![0.0; n];
    // per-transition buffers, sized once for the largest support
    let kmax = ld.support.iter().map(Vec::len).max().unwrap_or(0);
    let mut ws = vec![0.0; n * kmax];
    let mut g = vec![0.0; n];
    for (t, jump) in jumps.iter().enumerate() {
        check(deadline, THIRD_SOURCE)?;
        let s = &ld.support[t];
        if s.is_empty() {
            continue;
        }
        let d2 = &ld.d[t][1];
        let val = contract2(d2, s, w, n);
        for &(i, l) in jump {
            hw[i] += l * val;
        }
        // (W F_s W)_pq += l_s * sum_ab W[p, S_a] d2[a,b] W[S_b, q]
        let k = s.len();
        // (W[:, S] d2)[p, b]
        for p in 0..n {
            for b in 0..k {
                let mut acc = 0.0;
                for (a, &sa) in s.iter().enumerate() {
                    acc += w[p * n + sa] * d2[a * k + b];
                }
                ws[p * k + b] = acc;
            }
        }
        // g_t,s = sum_r dbeta/dx_r W[r, s]
        let d1 = &ld.d[t][0];
        for (col, gv) in g.iter_mut().enumerate() {
            *gv = s.iter().zip(d1).map(|(&r, d)| d * w[r * n + col]).sum();
        }
        for &(si, l) in jump {
            for p in 0..n {
                for qq in 0..n {
                    let mut acc = 0.0;
                    for (b, &sb) in s.iter().enumerate() {
                        acc += ws[p * k + b] * w[sb * n + qq];
                    }
                    z[(p * n + qq) * n + si] += l * acc;
                }
            }
        }
        for &(p, lp) in jump {
            for &(qq, lq) in jump {
                for (col, gv) in g.iter().enumerate() {
                    z[(p * n + qq) * n + col] += lp * lq * gv;
                }
            }
        }
    }
    for p in 0..n {
        check(deadline, THIRD_SOURCE)?;
        for qq in 0..n {
            for s in 0..n {
                z[(p * n + qq) * n + s] += 0.5 * w[p * n + qq] * hw[s] + q[p * n + qq] * v[s];
            }
        }
    }
    let mut s3 = vec![0.0; n * n * n];
    for i in 0..n {
        check(deadline, THIRD_SOURCE)?;
        for j in 0..n {
            for k in 0..n {
                s3[(i * n + j) * n + k] = z[(j * n + k) * n + i] + z[(i * n + k) * n + j] + z[(i * n + j) * n + k];
            }
        }
    }
    for (t, jump) in jumps.iter().enumerate() {
        check(deadline, THIRD_SOURCE)?;
        let beta = ld.value[t];
        for &(i, a) in jump {
            for &(j, b) in jump {
                for &(k, c) in jump {
                    s3[(i * n + j) * n + k] += a * b * c * beta;
                }
            }
        }
    }
    Ok(s3)
}

/// The second-moment source `S2` of order `1/N^2` (row-major `n x n`).
///
/// # Errors
/// [`RefinedError::Stopped`] when `deadline` passes (looked at once per transition and per
/// row of the last `n^2` loop).
pub(crate) fn second_source(
    jumps: &[Vec<(usize, f64)>],
    ld: &LocalDerivatives,
    w: &[f64],
    v: &[f64],
    c: &[f64],
    n: usize,
    deadline: &Deadline,
) -> Result<Vec<f64>, RefinedError> {
    let mut hc = vec![0.0; n * n]; // hc[i][j] = F_j : C_i..
    let mut e = vec![0.0; n * n]; // e[j][k] = sum_lm d3 f_j/dx_k dx_l dx_m W_lm
    let mut s2 = vec![0.0; n * n];
    for (t, jump) in jumps.iter().enumerate() {
        check(deadline, SECOND_SOURCE)?;
        let s = &ld.support[t];
        let k = s.len();
        if k > 0 {
            let d2 = &ld.d[t][1];
            let d3 = &ld.d[t][2];
            for i in 0..n {
                let mut acc = 0.0;
                for (a, &sa) in s.iter().enumerate() {
                    for (b, &sb) in s.iter().enumerate() {
                        acc += d2[a * k + b] * c[(i * n + sa) * n + sb];
                    }
                }
                for &(j, l) in jump {
                    hc[i * n + j] += l * acc;
                }
            }
            for (a, &sa) in s.iter().enumerate() {
                let mut acc = 0.0;
                for (b, &sb) in s.iter().enumerate() {
                    for (cc, &sc) in s.iter().enumerate() {
                        acc += d3[(a * k + b) * k + cc] * w[sb * n + sc];
                    }
                }
                for &(j, l) in jump {
                    e[j * n + sa] += l * acc;
                }
            }
        }
        // dQ_ij/dx . V + 1/2 d2Q_ij : W
        let dv: f64 = s.iter().zip(&ld.d[t][0]).map(|(&r, d)| d * v[r]).sum();
        let val = dv + if k > 0 { 0.5 * contract2(&ld.d[t][1], s, w, n) } else { 0.0 };
        for &(i, a) in jump {
            for &(j, b) in jump {
                s2[i * n + j] += a * b * val;
            }
        }
    }
    for i in 0..n {
        check(deadline, SECOND_SOURCE)?;
        for j in 0..n {
            let mut we = 0.0;
            for kk in 0..n {
                we += w[i * n + kk] * e[j * n + kk] + w[j * n + kk] * e[i * n + kk];
            }
            s2[i * n + j] += 0.5 * (hc[i * n + j] + hc[j * n + i]) + 0.5 * we;
        }
    }
    Ok(s2)
}

/// The second-order moments `A`, `B`, `C` at the fixed point `x` of `model`, given the
/// first-order terms (`j`: Jacobian, `q`: noise matrix, `w`: covariance, `v`: `1/N` term; all
/// row-major), within `deadline` (`--max-seconds`, Ctrl-C): the rates' derivatives, the
/// sources `S3` and `S2` and the tensor solves for `C` and `B` look at it once per outer row
/// (a transition, a first index of a tensor; `O(n^3)` of their `O(n^4)` work at most between
/// two looks), so that a large-`K` job stops soon after it.
///
/// # Errors
/// [`RefinedError::NoTransitions`], [`RefinedError::Unsupported`] (rates of so many entries
/// that their derivative grids exceed `refined::local::MAX_WORK`), [`RefinedError::Singular`];
/// [`RefinedError::Stopped`] when `deadline` passes.
pub fn second_order_within(
    model: &dyn MeanFieldModel,
    x: &[f64],
    j: &[f64],
    q: &[f64],
    w: &[f64],
    v: &[f64],
    deadline: &Deadline,
) -> Result<SecondOrder, RefinedError> {
    let n = x.len();
    let (jumps, ld) = rate_derivatives_until(model, x, 4, Some(deadline))?;
    check(deadline, "the Schur form of the Jacobian (the 1/N^2 term)")?;
    let schur = ComplexSchur::new(j, n);
    let s3 = third_source(&jumps, &ld, w, v, q, n, deadline)?;
    let c = schur.solve_real(&s3, 3, deadline)?;
    let s2 = second_source(&jumps, &ld, w, v, &c, n, deadline)?;
    let b = schur.solve_real(&s2, 2, deadline)?;
    // J A = -(1/2 F : B + 1/6 F''' : C + 1/8 F'''' : (W, W))
    let mut rhs = vec![0.0; n];
    for (t, jump) in jumps.iter().enumerate() {
        let s = &ld.support[t];
        if s.is_empty() {
            continue;
        }
        let d = &ld.d[t];
        let val = 0.5 * contract2(&d[1], s, &b, n) + contract3(&d[2], s, &c, n) / 6.0 + contract4ww(&d[3], s, w, n) / 8.0;
        for &(i, l) in jump {
            rhs[i] -= l * val;
        }
    }
    let jm = nalgebra::DMatrix::from_row_slice(n, n, j);
    let a = jm
        .lu()
        .solve(&nalgebra::DVector::from_vec(rhs))
        .ok_or_else(|| RefinedError::Singular("the Jacobian at x* (the 1/N^2 term)".into()))?;
    Ok(SecondOrder { a: a.iter().copied().collect(), b, c })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mfq_model::Jacobian;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// The order-2 loops (the sources `S3` and `S2`, the tensor solves for `C` and `B`) stop at
    /// a deadline that has passed, with [`RefinedError::Stopped`] naming where they were; they
    /// never looked at it (a large-`K` `mfq refined --order 2` ran on past `--max-seconds`).
    /// JSQ(2) at lambda = 0.9, K = 12; the deadline is a set cancel flag (as Ctrl-C sets it) and
    /// `Deadline::after(0.0)` (a limit that has already passed), so nothing depends on timing.
    #[test]
    fn the_order_2_loops_stop_at_the_deadline() {
        let jsq = mfq_model::models::Jsq::new(0.9, 2, 12).unwrap();
        let m: &dyn MeanFieldModel = &jsq;
        let x = jsq.analytic_fixed_point().unwrap();
        let n = x.len();
        let r = super::super::refined_mean_field(m, &x).unwrap();
        let q = super::super::noise_matrix(m, &x).unwrap();
        let mut jac = Jacobian::new(n, m.sparsity());
        m.jacobian(&x, &mut jac);
        let j = jac.to_dense();
        let (w, v) = (&r.covariance, &r.v);
        let (jumps, ld) = rate_derivatives_until(m, &x, 4, None).unwrap();
        let schur = ComplexSchur::new(&j, n);
        let none = Deadline::none();
        let s3 = third_source(&jumps, &ld, w, v, &q, n, &none).unwrap();
        let c = schur.solve_real(&s3, 3, &none).unwrap();
        let s2 = second_source(&jumps, &ld, w, v, &c, n, &none).unwrap();
        let whole = second_order_within(m, &x, &j, &q, w, v, &none).unwrap();
        assert_eq!(whole.c, c);
        assert!(whole.a.iter().all(|a| a.is_finite()) && whole.a.iter().any(|a| *a != 0.0), "{:?}", whole.a);
        let cancelled = Deadline::none().with_cancel(Arc::new(AtomicBool::new(true)));
        for passed in [cancelled, Deadline::after(0.0)] {
            let during = |e: RefinedError| match e {
                RefinedError::Stopped { during, reason } => {
                    assert!(!reason.is_empty());
                    during
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(during(third_source(&jumps, &ld, w, v, &q, n, &passed).unwrap_err()), THIRD_SOURCE);
            assert_eq!(during(second_source(&jumps, &ld, w, v, &c, n, &passed).unwrap_err()), SECOND_SOURCE);
            assert_eq!(during(schur.solve_real(&s3, 3, &passed).unwrap_err()), "the order-3 moment tensor of the 1/N^2 term");
            assert_eq!(during(schur.solve_real(&s2, 2, &passed).unwrap_err()), "the order-2 moment tensor of the 1/N^2 term");
            assert_eq!(during(second_order_within(m, &x, &j, &q, w, v, &passed).unwrap_err()), "the rates' derivatives");
        }
    }
}
