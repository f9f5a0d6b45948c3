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

use super::order2::{contract2, contract3, contract4ww, rate_derivatives_until, second_source, third_source};
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
    /// The derivative at the start of the current step (`solout`'s, the integrator's first
    /// stage): past the deadline every stage returns it, so that the step's error estimate is
    /// zero and the step is accepted at once (zeros made the integrator reject and halve its
    /// step a dozen times, each a pass over the whole state: 3 s at `n = 1368`).
    first_stage: std::cell::RefCell<Vec<f64>>,
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

    /// `sum_modes J x_mode X` of an order-`r` tensor, added to `out`; `rows` holds the nonzero
    /// entries `(column, value)` of each row of `J` (a banded or sparse `J` costs its nonzeros,
    /// not `n`, per entry). `Err(Stopped)` when the deadline passes part-way (looked at every
    /// 16384 entries: a tensor of `n^3` entries takes long at large `n`).
    fn add_modes(&self, rows: &[Vec<(usize, f64)>], x: &[f64], r: usize, out: &mut [f64]) -> Result<(), RefinedError> {
        let n = self.n;
        let strides: Vec<usize> = (0..r).map(|k| n.pow((r - 1 - k) as u32)).collect();
        for (lin, o) in out.iter_mut().enumerate() {
            if lin % 16384 == 16383 && self.deadline.expired() {
                return Err(self.stopped_error());
            }
            let mut acc = 0.0;
            for &st in &strides {
                let i = (lin / st) % n;
                let base = lin - i * st;
                for &(l, jv) in &rows[i] {
                    acc += jv * x[base + l * st];
                }
            }
            *o += acc;
        }
        Ok(())
    }

    /// The error of a right-hand side the deadline stopped part-way.
    fn stopped_error(&self) -> RefinedError {
        RefinedError::Stopped { during: "the moment equations' right-hand side".into(), reason: self.deadline.reason() }
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
        let rows: Vec<Vec<(usize, f64)>> =
            (0..n).map(|i| j[i * n..(i + 1) * n].iter().enumerate().filter(|e| *e.1 != 0.0).map(|(l, v)| (l, *v)).collect()).collect();
        let q = noise_matrix(m, x).ok_or_else(|| RefinedError::NoTransitions { model: m.name() })?;
        let (jumps, ld) = rate_derivatives_until(m, x, if self.order == 2 { 4 } else { 2 }, Some(self.deadline))?;
        dy.iter_mut().for_each(|d| *d = 0.0);
        let (dx, drest) = dy.split_at_mut(n);
        let (dv, drest) = drest.split_at_mut(n);
        let (dw, drest) = drest.split_at_mut(n * n);
        dx.copy_from_slice(&f);
        self.add_modes(&rows, v, 1, dv)?;
        self.add_modes(&rows, w, 2, dw)?;
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
            self.add_modes(&rows, a, 1, da)?;
            self.add_modes(&rows, b, 2, db)?;
            self.add_modes(&rows, c, 3, dc)?;
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
            let s2 = second_source(&jumps, &ld, w, v, c, n, self.deadline)?;
            db.iter_mut().zip(&s2).for_each(|(d, s)| *d += s);
            let s3 = third_source(&jumps, &ld, w, v, &q, n, self.deadline)?;
            dc.iter_mut().zip(&s3).for_each(|(d, s)| *d += s);
        }
        Ok(())
    }
}

impl System<f64, DVector<f64>> for Moments<'_> {
    fn system(&self, t: f64, y: &DVector<f64>, dy: &mut DVector<f64>) {
        // past the deadline nothing is computed: every stage repeats the step's first one, so
        // that the step's error estimate is zero, it is accepted at once and `solout` stops there
        // (zeros where no first stage is known yet)
        let stop = |dy: &mut DVector<f64>| {
            self.stopped.set(self.stopped.get().or(Some(t)));
            let first = self.first_stage.borrow();
            if first.len() == dy.len() {
                dy.as_mut_slice().copy_from_slice(&first);
            } else {
                dy.fill(0.0);
            }
        };
        if self.deadline.expired() {
            return stop(dy);
        }
        match self.rhs(y.as_slice(), dy.as_mut_slice()) {
            // the first call is at the start (the first stage of the first step)
            Ok(()) if !self.deadline.is_unbounded() && self.first_stage.borrow().is_empty() => {
                self.first_stage.borrow_mut().extend_from_slice(dy.as_slice());
            }
            Ok(()) => {}
            Err(RefinedError::Stopped { .. }) => stop(dy),
            Err(_) => dy.fill(f64::NAN),
        }
    }

    /// After each accepted step: stop at the deadline.
    fn solout(&mut self, t: f64, _y: &DVector<f64>, dy: &DVector<f64>) -> bool {
        let stop = self.deadline.expired() || self.stopped.get().is_some();
        if stop {
            self.stopped.set(self.stopped.get().or(Some(t)));
        } else if !self.deadline.is_unbounded() {
            let mut first = self.first_stage.borrow_mut();
            first.clear();
            first.extend_from_slice(dy.as_slice());
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
/// the deadline passes first; [`RefinedError::TooLarge`] when the moment equations' state at
/// every output time would exceed the memory limit (`refined::memory`, checked before
/// anything is allocated).
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
    if model.transitions().is_none() {
        return Err(RefinedError::NoTransitions { model: model.name() });
    }
    // the whole moment state at every output time: refused before it is allocated
    super::memory::check(n, model.layout().tail_levels(), super::memory::Job::Transient { order, points })?;
    let stopped = std::cell::Cell::new(None);
    let sys = Moments { model, n, order, deadline, stopped: &stopped, first_stage: std::cell::RefCell::new(Vec::new()) };
    let mut y0 = vec![0.0; sys.len()];
    y0[..n].copy_from_slice(x0);
    // fail early with the reason (the integrator only sees NaN)
    sys.rhs(&y0, &mut vec![0.0; y0.len()]).map_err(|e| match e {
        RefinedError::Stopped { reason, .. } => {
            RefinedError::Stopped { during: format!("the moment equations at t = 0 of {t_end}"), reason }
        }
        e => e,
    })?;
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
