//! The transient refined mean field: `E[X^N(t)] ~ x(t) + V(t)/N (+ A(t)/N^2)` from a
//! deterministic initial state `x(0) = x0`, along the mean-field trajectory (docs/refined.md;
//! Gast, Bortolussi and Tribastone, "Size expansions of mean field approximation: transient and
//! steady-state analysis", Performance Evaluation 2018, Section 3).
//!
//! The moments solve, with `J = Df(x(t))`, `Q = Q(x(t))` and the same sources as at a fixed point
//! (`refined::order2`), started from zero:
//!
//! ```text
//! dx/dt = f(x)
//! dV/dt = J V + 1/2 F : W                     dW/dt = J W + W J^T + Q
//! dA/dt = J A + 1/2 F : B + 1/6 F''' : C + 1/8 F'''' : (W, W)
//! dB/dt = J B + B J^T + S2                    dC/dt = sum_3 modes J C + S3
//! ```
//!
//! integrated together by Dormand-Prince 5(4) (`ode_solvers`). The state has `2n + n^2`
//! entries at order 1 and `3n + 2n^2 + n^3` at order 2.

use super::order2::{contract2, contract3, contract4ww, rate_derivatives, second_source, third_source};
use super::{noise_matrix, RefinedError};
use mfq_model::{Jacobian, MeanFieldModel};
use nalgebra::DVector;
use ode_solvers::{Dopri5, System};
use serde::Serialize;

/// The transient refined terms on a time grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefinedTrajectory {
    /// Order of the expansion (1 or 2).
    pub order: u8,
    /// Output times.
    pub t: Vec<f64>,
    /// `x(t)`, the mean-field trajectory.
    pub x: Vec<Vec<f64>>,
    /// `V(t)`.
    pub v: Vec<Vec<f64>>,
    /// `A(t)` (order 2).
    pub a: Option<Vec<Vec<f64>>>,
    /// `W(t)` (row-major `n x n`) at the last output time.
    pub last_covariance: Vec<f64>,
}

impl RefinedTrajectory {
    /// `x(t_i) + V(t_i)/N (+ A(t_i)/N^2)` at output `i` for `servers` = N.
    pub fn at(&self, i: usize, servers: f64) -> Vec<f64> {
        let mut out: Vec<f64> = self.x[i].iter().zip(&self.v[i]).map(|(x, v)| x + v / servers).collect();
        if let Some(a) = &self.a {
            out.iter_mut().zip(&a[i]).for_each(|(o, a)| *o += a / (servers * servers));
        }
        out
    }
}

struct Moments<'a> {
    model: &'a dyn MeanFieldModel,
    n: usize,
    order: u8,
    /// Stops the integration at its next step when it expires; `stopped` then holds the time.
    deadline: &'a mfq_model::Deadline,
    stopped: &'a std::cell::Cell<Option<f64>>,
}

impl Moments<'_> {
    fn len(&self) -> usize {
        let n = self.n;
        if self.order == 2 {
            3 * n + 2 * n * n + n * n * n
        } else {
            2 * n + n * n
        }
    }

    /// `sum_modes J x_mode X` of an order-`r` tensor, added to `out`.
    fn add_modes(j: &[f64], x: &[f64], n: usize, r: usize, out: &mut [f64]) {
        let strides: Vec<usize> = (0..r).map(|k| n.pow((r - 1 - k) as u32)).collect();
        for (lin, o) in out.iter_mut().enumerate() {
            let mut acc = 0.0;
            for &st in &strides {
                let i = (lin / st) % n;
                let base = lin - i * st;
                let row = &j[i * n..(i + 1) * n];
                for (l, jv) in row.iter().enumerate() {
                    if *jv != 0.0 {
                        acc += jv * x[base + l * st];
                    }
                }
            }
            *o += acc;
        }
    }

    fn rhs(&self, y: &[f64], dy: &mut [f64]) -> Result<(), RefinedError> {
        let (n, m) = (self.n, self.model);
        let (x, rest) = y.split_at(n);
        let (v, rest) = rest.split_at(n);
        let (w, rest) = rest.split_at(n * n);
        let mut f = vec![0.0; n];
        m.drift(x, &mut f);
        let mut jac = Jacobian::new(n, m.sparsity());
        m.jacobian(x, &mut jac);
        let j = jac.to_dense();
        let q = noise_matrix(m, x).ok_or_else(|| RefinedError::NoTransitions { model: m.name() })?;
        let (jumps, ld) = rate_derivatives(m, x, if self.order == 2 { 4 } else { 2 })?;
        dy.iter_mut().for_each(|d| *d = 0.0);
        let (dx, drest) = dy.split_at_mut(n);
        let (dv, drest) = drest.split_at_mut(n);
        let (dw, drest) = drest.split_at_mut(n * n);
        dx.copy_from_slice(&f);
        Self::add_modes(&j, v, n, 1, dv);
        Self::add_modes(&j, w, n, 2, dw);
        dw.iter_mut().zip(&q).for_each(|(d, q)| *d += q);
        for (t, jump) in jumps.iter().enumerate() {
            let s = &ld.support[t];
            if s.is_empty() {
                continue;
            }
            let val = 0.5 * contract2(&ld.d[t][1], s, w, n);
            for &(i, l) in jump {
                dv[i] += l * val;
            }
        }
        if self.order == 2 {
            let (a, rest) = rest.split_at(n);
            let (b, c) = rest.split_at(n * n);
            let (da, drest) = drest.split_at_mut(n);
            let (db, dc) = drest.split_at_mut(n * n);
            Self::add_modes(&j, a, n, 1, da);
            Self::add_modes(&j, b, n, 2, db);
            Self::add_modes(&j, c, n, 3, dc);
            for (t, jump) in jumps.iter().enumerate() {
                let s = &ld.support[t];
                if s.is_empty() {
                    continue;
                }
                let d = &ld.d[t];
                let val = 0.5 * contract2(&d[1], s, b, n) + contract3(&d[2], s, c, n) / 6.0 + contract4ww(&d[3], s, w, n) / 8.0;
                for &(i, l) in jump {
                    da[i] += l * val;
                }
            }
            let s2 = second_source(&jumps, &ld, w, v, c, n);
            db.iter_mut().zip(&s2).for_each(|(d, s)| *d += s);
            let s3 = third_source(&jumps, &ld, w, v, &q, n);
            dc.iter_mut().zip(&s3).for_each(|(d, s)| *d += s);
        }
        Ok(())
    }
}

impl System<f64, DVector<f64>> for Moments<'_> {
    fn system(&self, _t: f64, y: &DVector<f64>, dy: &mut DVector<f64>) {
        if self.rhs(y.as_slice(), dy.as_mut_slice()).is_err() {
            dy.fill(f64::NAN);
        }
    }

    /// After each accepted step: stop at the deadline.
    fn solout(&mut self, t: f64, _y: &DVector<f64>, _dy: &DVector<f64>) -> bool {
        let stop = self.deadline.expired();
        if stop {
            self.stopped.set(Some(t));
        }
        stop
    }
}

/// The transient refined terms of `model` from `x0` over `[0, t_end]`, written at `points + 1`
/// equally spaced times, to `order` 1 or 2, with Dormand-Prince 5(4) at tolerances `rtol`,
/// `atol`.
///
/// `deadline` (its wall-clock limit or cancellation flag) is looked at after every step of the
/// integrator.
///
/// # Errors
/// [`RefinedError::BadOrder`], [`RefinedError::NoTransitions`], [`RefinedError::NotSmooth`],
/// [`RefinedError::WrongDimension`], [`RefinedError::Unsupported`] (the rates at `x0`, or
/// `t_end`/`points` out of range, or the integration failed); [`RefinedError::Stopped`] when
/// the deadline passes first.
pub fn refined_transient(
    model: &dyn MeanFieldModel,
    x0: &[f64],
    t_end: f64,
    points: usize,
    order: u8,
    tol: (f64, f64),
    deadline: &mfq_model::Deadline,
) -> Result<RefinedTrajectory, RefinedError> {
    let n = model.dim();
    if !(1..=2).contains(&order) {
        return Err(RefinedError::BadOrder(order));
    }
    if x0.len() != n {
        return Err(RefinedError::WrongDimension { got: x0.len(), expected: n });
    }
    if !model.is_smooth() {
        return Err(RefinedError::NotSmooth { model: model.name() });
    }
    if !(t_end.is_finite() && t_end > 0.0) || points == 0 {
        return Err(RefinedError::Unsupported(format!("t_end = {t_end}, points = {points}: allowed a finite t_end > 0 and points >= 1")));
    }
    let stopped = std::cell::Cell::new(None);
    let sys = Moments { model, n, order, deadline, stopped: &stopped };
    let mut y0 = vec![0.0; sys.len()];
    y0[..n].copy_from_slice(x0);
    // fail early with the reason (the integrator only sees NaN)
    sys.rhs(&y0, &mut vec![0.0; y0.len()])?;
    // the grid points come from the dense output; the integration runs half a grid step past
    // t_end, because ode_solvers' own last point (at x_end) is less accurate than its dense output
    let dt = t_end / points as f64;
    let mut solver = Dopri5::new(sys, 0.0, t_end + 0.5 * dt, dt, DVector::from_vec(y0), tol.0, tol.1);
    solver.integrate().map_err(|e| RefinedError::Unsupported(format!("the integration of the moment equations failed: {e}")))?;
    if let Some(t) = stopped.get() {
        return Err(RefinedError::Stopped { during: format!("the moment equations at t = {t:.6e} of {t_end}"), reason: deadline.reason() });
    }
    let keep = solver.x_out().iter().take_while(|t| **t <= t_end * (1.0 + 1e-12)).count();
    let (ts, ys) = (&solver.x_out()[..keep], &solver.y_out()[..keep]);
    if ys.iter().any(|y| y.iter().any(|v| !v.is_finite())) {
        return Err(RefinedError::Unsupported("the moment equations became NaN or infinite".into()));
    }
    let x = ys.iter().map(|y| y.as_slice()[..n].to_vec()).collect();
    let v = ys.iter().map(|y| y.as_slice()[n..2 * n].to_vec()).collect();
    let off = 2 * n + n * n;
    let a = (order == 2).then(|| ys.iter().map(|y| y.as_slice()[off..off + n].to_vec()).collect());
    let last_covariance = ys.last().map(|y| y.as_slice()[2 * n..off].to_vec()).unwrap_or_default();
    Ok(RefinedTrajectory { order, t: ts.to_vec(), x, v, a, last_covariance })
}
