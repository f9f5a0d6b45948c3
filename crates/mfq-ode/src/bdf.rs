//! Variable-step, variable-order BDF (orders 1-5) in the numerical differentiation formula
//! (NDF) form of Shampine and Reichelt, with the model's Jacobian and the shifted LU of
//! [`crate::linalg`].
//!
//! The method is the quasi-constant step size NDF of Shampine and Reichelt ("The MATLAB ODE
//! suite", SIAM J. Sci. Comput. 18(1), 1997, §2, MATLAB's `ode15s`), written in the modified
//! divided differences form of SciPy's `solve_ivp(method='BDF')`: the backward differences
//! `D[j] = nabla^j y_n`, `j = 0..=q+2`, hold the interpolating polynomial; the predictor is
//! `sum_{j<=q} D[j]`; the corrector solves for the correction `d`
//!
//! ```text
//! d - c f(y_pred + d) + psi = 0,   c = h / alpha_q,   psi = (1/alpha_q) sum_{j=1..q} gamma_j D[j]
//! gamma_j = sum_{i<=j} 1/i,   alpha_q = (1 - kappa_q) gamma_q,
//! kappa = (0, -0.1850, -1/9, -0.0823, -0.0415, 0)           (Shampine and Reichelt, Table 1)
//! ```
//!
//! by simplified Newton iterations `(I - c_LU J) dy = c f(y) - psi - d`, and the local
//! truncation error is `(kappa_q gamma_q + 1/(q+1)) d`. A step size change rescales the
//! differences (the `R U` matrices of Shampine and Reichelt §2.3).
//!
//! Unlike SciPy, which refactors at every step size change, the Jacobian and its LU are held
//! across steps (as CVODE does: Hindmarsh et al., "SUNDIALS", ACM TOMS 31(3), 2005, §2.1): the
//! LU of `I - c_LU J` serves while `|c / c_LU - 1| <= 0.3`, the Newton correction scaled by
//! `2 / (1 + c / c_LU)` (CVODE's factor); the Jacobian is re-evaluated with every new LU and
//! when the Newton iteration fails to converge with an old one. The step size is left unchanged
//! unless the error estimate allows at least 1.5 times it (CVODE's `THRESH`) or asks for a
//! smaller one, so that factorisations stay rare: on the PS pair approximation at `K = 100` one
//! LU (with the Woodbury coupling) costs as much as ~40 Newton iterations. The Newton iteration
//! reuses the convergence rate of the previous step (at least the contraction that the stale
//! `c_LU` leaves), so that a step usually needs one iteration, as in CVODE.
//!
//! Errors are measured in the max norm against `atol + rtol |y|`, as by the other methods.
//! Everything is allocated before the loop; the LU refactorisation (inside faer, for sparse
//! models) is the only allocation while stepping.

use crate::linalg::ShiftedLu;
use crate::{max_abs, Recorder, SolveOptions, Stats, Status};
use mfq_model::{Deadline, Jacobian, MeanFieldModel};

/// Highest order.
const MAX_ORDER: usize = 5;
/// Newton iterations per attempt.
const NEWTON_MAXITER: usize = 4;
/// Bounds of a step size change.
const MIN_FACTOR: f64 = 0.2;
const MAX_FACTOR: f64 = 10.0;
/// A held LU serves while `|c / c_LU - 1|` stays below this (CVODE's `DGMAX`).
const MAX_GAMMA_CHANGE: f64 = 0.3;
/// The step size grows only when the error estimate allows this factor (CVODE's `THRESH`:
/// Hindmarsh et al. 2005, §2.1), so that a growth pays for its new LU.
const MIN_GROWTH: f64 = 1.5;

/// NDF coefficients `kappa_q` (Shampine and Reichelt 1997, Table 1; `kappa_5 = 0`: BDF5).
const KAPPA: [f64; MAX_ORDER + 1] = [0.0, -0.1850, -1.0 / 9.0, -0.0823, -0.0415, 0.0];

/// `gamma_q = sum_{i<=q} 1/i`, `alpha_q = (1 - kappa_q) gamma_q`, and the error constants
/// `kappa_q gamma_q + 1/(q+1)`.
struct Coefficients {
    gamma: [f64; MAX_ORDER + 1],
    alpha: [f64; MAX_ORDER + 1],
    error_const: [f64; MAX_ORDER + 2],
}

impl Coefficients {
    fn new() -> Self {
        let mut gamma = [0.0; MAX_ORDER + 1];
        for q in 1..=MAX_ORDER {
            gamma[q] = gamma[q - 1] + 1.0 / q as f64;
        }
        let alpha = std::array::from_fn(|q| (1.0 - KAPPA[q]) * gamma[q]);
        let error_const = std::array::from_fn(|q| if q <= MAX_ORDER { KAPPA[q] * gamma[q] } else { 0.0 } + 1.0 / (q + 1) as f64);
        Coefficients { gamma, alpha, error_const }
    }
}

/// `R(q, factor)` of Shampine and Reichelt §2.3: `R[0][j] = 1`,
/// `R[i][j] = prod_{m=1..i} (m - 1 - factor j) / m`, `i, j = 0..=q`.
fn compute_r(q: usize, factor: f64) -> [[f64; MAX_ORDER + 1]; MAX_ORDER + 1] {
    let mut r = [[0.0; MAX_ORDER + 1]; MAX_ORDER + 1];
    r[0][..=q].iter_mut().for_each(|v| *v = 1.0);
    for i in 1..=q {
        let (prev, this) = r.split_at_mut(i);
        for (j, v) in this[0].iter_mut().enumerate().take(q + 1).skip(1) {
            *v = prev[i - 1][j] * ((i - 1) as f64 - factor * j as f64) / i as f64;
        }
    }
    r
}

/// The differences `D[0..=q]` (rows of length `n` in `dd`) for the step size `factor h`.
fn change_d(dd: &mut [f64], n: usize, q: usize, factor: f64) {
    let r = compute_r(q, factor);
    let u = compute_r(q, 1.0);
    // RU[i][j] = sum_k R[i][k] U[k][j]; D_new[j] = sum_i RU[i][j] D_old[i]
    let mut ru = [[0.0; MAX_ORDER + 1]; MAX_ORDER + 1];
    for i in 0..=q {
        for j in 0..=q {
            ru[i][j] = (0..=q).map(|k| r[i][k] * u[k][j]).sum();
        }
    }
    let mut old = [0.0; MAX_ORDER + 1];
    for c in 0..n {
        for (i, o) in old.iter_mut().enumerate().take(q + 1) {
            *o = dd[i * n + c];
        }
        for j in 0..=q {
            dd[j * n + c] = (0..=q).map(|i| ru[i][j] * old[i]).sum();
        }
    }
}

/// `max_i |v_i| / scale_i` (NaN-propagating: NaN or infinite entries give infinity).
fn scaled_norm(v: &[f64], scale: &[f64]) -> f64 {
    let mut m = 0.0f64;
    for (a, s) in v.iter().zip(scale) {
        let e = (a / s).abs();
        if !e.is_finite() {
            return f64::INFINITY;
        }
        m = m.max(e);
    }
    m
}

/// Work vectors, allocated once.
struct Work {
    /// Differences `D[j]`, `j = 0..=MAX_ORDER+2`, rows of length `n`.
    dd: Vec<f64>,
    y_pred: Vec<f64>,
    psi: Vec<f64>,
    y: Vec<f64>,
    d: Vec<f64>,
    f: Vec<f64>,
    dy: Vec<f64>,
    scale: Vec<f64>,
}

/// The held Jacobian and LU.
struct Linear {
    jac: Jacobian,
    lu: ShiftedLu,
    /// `c` of the held LU; `None` when there is none.
    c_lu: Option<f64>,
    /// Whether the Jacobian was evaluated at this step's predicted state.
    jac_current: bool,
    /// Whether a Jacobian was ever evaluated.
    jac_ready: bool,
    /// Convergence rate of the last converged iteration with the held LU.
    rate: Option<f64>,
}

/// The outcome of one corrector solve.
enum Newton {
    Converged {
        iterations: usize,
    },
    Failed,
    /// The shifted matrix was singular.
    Singular,
    /// The deadline passed.
    TimeLimit,
}

/// Integrates from `(t0, x)` to `opts.t_end`; see the module docs.
pub(crate) fn integrate(
    model: &dyn MeanFieldModel,
    t0: f64,
    x: &mut [f64],
    (opts, job): (&SolveOptions, &Deadline),
    rec: &mut Recorder,
    stats: &mut Stats,
) -> Status {
    let n = x.len();
    let co = Coefficients::new();
    let newton_tol = (10.0 * f64::EPSILON / opts.rtol).max(opts.rtol.sqrt().min(0.03));
    let mut w = Work {
        dd: vec![0.0; (MAX_ORDER + 3) * n],
        y_pred: vec![0.0; n],
        psi: vec![0.0; n],
        y: vec![0.0; n],
        d: vec![0.0; n],
        f: vec![0.0; n],
        dy: vec![0.0; n],
        scale: vec![0.0; n],
    };
    let mut lin = Linear {
        jac: Jacobian::new(n, model.sparsity()),
        lu: ShiftedLu::new(n, model.sparsity()),
        c_lu: None,
        jac_current: false,
        jac_ready: false,
        rate: None,
    };
    let mut t = t0;
    model.drift(x, &mut w.f);
    stats.drift_evals += 1;
    let r0 = max_abs(&w.f);
    if !r0.is_finite() {
        return Status::NonFinite { t };
    }
    if opts.steady_tol.is_some_and(|tol| r0 < tol) {
        return Status::SteadyState { t };
    }
    let mut h = initial_step(model, t, x, opts, &mut w, stats);
    w.dd[..n].copy_from_slice(x);
    for i in 0..n {
        w.dd[n + i] = h * w.f[i];
    }
    let mut q = 1usize;
    let mut equal_steps = 0usize;
    loop {
        if crate::stopped(opts, job) {
            return Status::TimeLimit { t };
        }
        // the step to take: clipped at t_end
        if t + h >= opts.t_end * (1.0 - 1e-15) {
            let hn = opts.t_end - t;
            change_d(&mut w.dd, n, q, hn / h);
            h = hn;
            equal_steps = 0;
        }
        // one attempt per pass: accept, or shrink h and try again
        let (err, iterations) = loop {
            if stats.accepted_steps + stats.rejected_steps >= opts.max_steps as u64 {
                return Status::MaxSteps { t };
            }
            if h < 1e-14 * t.abs().max(1.0) {
                return Status::StepSizeTooSmall { t };
            }
            predict(&mut w, &co, n, q, opts);
            let c = h / co.alpha[q];
            match corrector(model, c, &mut w, &mut lin, newton_tol, (opts, job), stats) {
                Newton::Singular => return Status::Singular { t },
                Newton::TimeLimit => return Status::TimeLimit { t },
                Newton::Failed => {
                    stats.rejected_steps += 1;
                    change_d(&mut w.dd, n, q, 0.5);
                    h *= 0.5;
                    equal_steps = 0;
                    continue;
                }
                Newton::Converged { iterations } => {
                    for i in 0..n {
                        w.scale[i] = opts.atol + opts.rtol * w.y[i].abs();
                    }
                    let err = co.error_const[q] * scaled_norm(&w.d, &w.scale);
                    if err <= 1.0 {
                        break (err, iterations);
                    }
                    stats.rejected_steps += 1;
                    let safety = 0.9 * (2 * NEWTON_MAXITER + 1) as f64 / (2 * NEWTON_MAXITER + iterations) as f64;
                    let factor = if err.is_finite() { (safety * err.powf(-1.0 / (q + 1) as f64)).max(MIN_FACTOR) } else { MIN_FACTOR };
                    change_d(&mut w.dd, n, q, factor);
                    h *= factor;
                    equal_steps = 0;
                }
            }
        };
        stats.accepted_steps += 1;
        equal_steps += 1;
        t = if (opts.t_end - (t + h)).abs() <= 1e-15 * opts.t_end { opts.t_end } else { t + h };
        lin.jac_current = false;
        if let Some(status) = accept(model, t, x, &mut w, q, (opts, &mut *rec, &mut *stats)) {
            return status;
        }
        if t >= opts.t_end {
            return Status::Success;
        }
        if equal_steps > q {
            let safety = 0.9 * (2 * NEWTON_MAXITER + 1) as f64 / (2 * NEWTON_MAXITER + iterations) as f64;
            let (dq, factor) = order_and_factor(&w, &co, n, q, err, safety);
            if !(1.0..MIN_GROWTH).contains(&factor) {
                q = (q as isize + dq) as usize;
                change_d(&mut w.dd, n, q, factor);
                h *= factor;
                equal_steps = 0;
            }
        }
    }
}

/// Takes the accepted step into the differences (`D[q+2] = d - D[q+1]`, `D[q+1] = d`,
/// `D[j] += D[j+1]` for `j = q..0`), projects the new state onto the feasible set (moving
/// `D[0]` with it), records it in `x` and `rec`: the status when the run ends here (a
/// non-finite state or drift, a steady state).
fn accept(
    model: &dyn MeanFieldModel,
    t: f64,
    x: &mut [f64],
    w: &mut Work,
    q: usize,
    (opts, rec, stats): (&SolveOptions, &mut Recorder, &mut Stats),
) -> Option<Status> {
    let n = x.len();
    for i in 0..n {
        let di = w.d[i];
        w.dd[(q + 2) * n + i] = di - w.dd[(q + 1) * n + i];
        w.dd[(q + 1) * n + i] = di;
    }
    for j in (0..=q).rev() {
        let (lo, hi) = w.dd.split_at_mut((j + 1) * n);
        for (a, b) in lo[j * n..].iter_mut().zip(&hi[..n]) {
            *a += b;
        }
    }
    // the accepted state, projected onto the feasible set (the shift moves the polynomial)
    x.copy_from_slice(&w.dd[..n]);
    model.project(x);
    w.dd[..n].copy_from_slice(x);
    rec.push(t, x);
    if !max_abs(x).is_finite() {
        return Some(Status::NonFinite { t });
    }
    if let Some(tol) = opts.steady_tol {
        model.drift(x, &mut w.f);
        stats.drift_evals += 1;
        let r = max_abs(&w.f);
        if !r.is_finite() {
            return Some(Status::NonFinite { t });
        }
        if r < tol {
            return Some(Status::SteadyState { t });
        }
    }
    None
}

/// The predicted state `sum_{j<=q} D[j]`, the error scale there, and `psi`.
fn predict(w: &mut Work, co: &Coefficients, n: usize, q: usize, opts: &SolveOptions) {
    for i in 0..n {
        let mut p = 0.0;
        let mut s = 0.0;
        for j in 0..=q {
            let v = w.dd[j * n + i];
            p += v;
            if j >= 1 {
                s += co.gamma[j] * v;
            }
        }
        w.y_pred[i] = p;
        w.psi[i] = s / co.alpha[q];
        w.scale[i] = opts.atol + opts.rtol * p.abs();
    }
}

/// The best order among `q - 1, q, q + 1` after `q + 1` steps of equal size, and the step size
/// factor for it (SciPy's rule: the largest `safety err_m^{-1/m}`), capped at [`MAX_FACTOR`].
fn order_and_factor(w: &Work, co: &Coefficients, n: usize, q: usize, err: f64, safety: f64) -> (isize, f64) {
    let err_m = if q > 1 { co.error_const[q - 1] * scaled_norm(&w.dd[q * n..(q + 1) * n], &w.scale) } else { f64::INFINITY };
    let err_p = if q < MAX_ORDER { co.error_const[q + 1] * scaled_norm(&w.dd[(q + 2) * n..(q + 3) * n], &w.scale) } else { f64::INFINITY };
    let mut best = (0isize, 0.0f64);
    for (dq, e, m) in [(-1isize, err_m, q), (0, err, q + 1), (1, err_p, q + 2)] {
        let f = if e == 0.0 { f64::INFINITY } else { e.powf(-1.0 / m as f64) };
        if f > best.1 {
            best = (dq, f);
        }
    }
    (best.0, (safety * best.1).min(MAX_FACTOR))
}

/// Solves the corrector equation at the predicted state `w.y_pred` with `c = h / alpha_q`: on
/// convergence `w.y` is the new state and `w.d` its correction. Refactors when the held LU's
/// `c` is too far from `c`, and re-evaluates the Jacobian when the iteration fails with an
/// old one.
fn corrector(
    model: &dyn MeanFieldModel,
    c: f64,
    w: &mut Work,
    lin: &mut Linear,
    tol: f64,
    (opts, job): (&SolveOptions, &Deadline),
    stats: &mut Stats,
) -> Newton {
    loop {
        let stale = lin.c_lu.is_none_or(|c_lu| (c / c_lu - 1.0).abs() > MAX_GAMMA_CHANGE);
        // a new LU comes with a new Jacobian (one Jacobian costs a small part of one LU)
        let fresh_jac = !lin.jac_ready || (stale && !lin.jac_current);
        if fresh_jac {
            model.jacobian(&w.y_pred, &mut lin.jac);
            stats.jacobian_evals += 1;
            lin.jac_ready = true;
            lin.jac_current = true;
        }
        if fresh_jac || stale {
            match lin.lu.factor_within(1.0, -c, &lin.jac, job) {
                Err(_) => return Newton::Singular,
                Ok(false) => return Newton::TimeLimit,
                Ok(true) => {}
            }
            stats.factorisations += 1;
            lin.c_lu = Some(c);
            lin.rate = None;
        }
        if crate::stopped(opts, job) {
            return Newton::TimeLimit;
        }
        match newton(model, c, w, lin, tol, stats) {
            Some(iterations) => return Newton::Converged { iterations },
            None if lin.jac_current => return Newton::Failed,
            None => {
                // an old Jacobian: evaluate it here and try again
                lin.jac_ready = false;
            }
        }
    }
}

/// Simplified Newton iterations with the held LU (SciPy's `solve_bdf_system`, with the rate of
/// the previous converged solve reused so that one iteration can suffice): the number of
/// iterations when converged.
fn newton(model: &dyn MeanFieldModel, c: f64, w: &mut Work, lin: &mut Linear, tol: f64, stats: &mut Stats) -> Option<usize> {
    let n = w.y.len();
    let c_lu = lin.c_lu.expect("factorised before the iteration");
    let scaling = 2.0 / (1.0 + c / c_lu);
    w.y.copy_from_slice(&w.y_pred);
    w.d.iter_mut().for_each(|v| *v = 0.0);
    let mut last_norm: Option<f64> = None;
    for k in 0..NEWTON_MAXITER {
        model.drift(&w.y, &mut w.f);
        stats.drift_evals += 1;
        if !max_abs(&w.f).is_finite() {
            return None;
        }
        for i in 0..n {
            w.dy[i] = c * w.f[i] - w.psi[i] - w.d[i];
        }
        lin.lu.solve(&mut w.dy);
        if scaling != 1.0 {
            w.dy.iter_mut().for_each(|v| *v *= scaling);
        }
        let norm = scaled_norm(&w.dy, &w.scale);
        if !norm.is_finite() {
            return None;
        }
        let rate = match last_norm {
            Some(old) => Some(norm / old),
            // the rate of the last converged solve, at least the contraction |g - 1| / (g + 1),
            // g = c / c_LU, that the scaled correction leaves on the stiff modes
            None => lin.rate.map(|r| r.max((c / c_lu - 1.0).abs() / (c / c_lu + 1.0))),
        };
        if last_norm.is_some() {
            let r = rate.expect("set with last_norm");
            if r >= 1.0 || r.powi((NEWTON_MAXITER - k) as i32) / (1.0 - r) * norm > tol {
                return None;
            }
        }
        for i in 0..n {
            w.y[i] += w.dy[i];
            w.d[i] += w.dy[i];
        }
        if norm == 0.0 || rate.is_some_and(|r| r < 1.0 && r / (1.0 - r) * norm < tol) {
            if last_norm.is_some() {
                lin.rate = rate;
            }
            return Some(k + 1);
        }
        last_norm = Some(norm);
    }
    None
}

/// The initial step for order 1 (Hairer, Norsett and Wanner, "Solving ODEs I", 2nd ed., §II.4,
/// the starting step size algorithm; SciPy's `select_initial_step`), at most `t_end - t`.
/// Uses `w.f = f(x)` and leaves it there.
fn initial_step(model: &dyn MeanFieldModel, t: f64, x: &[f64], opts: &SolveOptions, w: &mut Work, stats: &mut Stats) -> f64 {
    let n = x.len();
    for (s, xi) in w.scale.iter_mut().zip(x) {
        *s = opts.atol + opts.rtol * xi.abs();
    }
    let d0 = scaled_norm(x, &w.scale);
    let d1 = scaled_norm(&w.f, &w.scale);
    let h0 = if d0 < 1e-5 || d1 < 1e-5 { 1e-6 } else { 0.01 * d0 / d1 };
    for ((y, xi), fi) in w.y.iter_mut().zip(x).zip(&w.f) {
        *y = xi + h0 * fi;
    }
    model.drift(&w.y, &mut w.dy);
    stats.drift_evals += 1;
    for i in 0..n {
        w.d[i] = (w.dy[i] - w.f[i]) / h0;
    }
    let d2 = scaled_norm(&w.d, &w.scale);
    let h1 = if d1 <= 1e-15 && d2 <= 1e-15 { (h0 * 1e-3).max(1e-6) } else { (0.01 / d1.max(d2)).sqrt() };
    (100.0 * h0).min(h1).min(opts.t_end - t)
}

#[cfg(test)]
mod tests {
    use crate::{solve, Method, SolveOptions, Status, Trajectory};
    use mfq_model::{AnalyticJacobian, Jacobian, MeanFieldModel, Observables, Sparsity, SparsityPattern, StateLayout};
    use nalgebra::{DMatrix, DVector};
    use std::sync::Arc;

    /// `dx/dt = A x` with a fixed matrix `A` and a sparse Jacobian pattern (the faer path).
    struct Linear {
        a: DMatrix<f64>,
    }

    impl MeanFieldModel for Linear {
        fn name(&self) -> String {
            "linear".into()
        }
        fn dim(&self) -> usize {
            self.a.nrows()
        }
        fn drift(&self, x: &[f64], dx: &mut [f64]) {
            for (i, d) in dx.iter_mut().enumerate() {
                *d = (0..x.len()).map(|j| self.a[(i, j)] * x[j]).sum();
            }
        }
        fn layout(&self) -> StateLayout {
            StateLayout::Named { names: (0..self.dim()).map(|i| format!("x{i}")).collect() }
        }
        fn observables(&self, _x: &[f64]) -> Observables {
            Observables::extras_only(Vec::new())
        }
        fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
            Some(self)
        }
    }

    impl AnalyticJacobian for Linear {
        fn sparsity(&self) -> Sparsity {
            let n = self.dim();
            let rows = (0..n).map(|i| (0..n).filter(|&j| self.a[(i, j)] != 0.0 || i == j).collect()).collect();
            Sparsity::Sparse(Arc::new(SparsityPattern::from_rows(n, rows)))
        }
        fn jacobian(&self, _x: &[f64], jac: &mut Jacobian) {
            let n = self.dim();
            for i in 0..n {
                for j in 0..n {
                    if self.a[(i, j)] != 0.0 {
                        jac.set(i, j, self.a[(i, j)]);
                    }
                }
            }
        }
    }

    /// Robertson's problem (Hairer and Wanner, "Solving ODEs II", 2nd ed., §IV.1, eq. (1.4)).
    struct Robertson;

    impl MeanFieldModel for Robertson {
        fn name(&self) -> String {
            "robertson".into()
        }
        fn dim(&self) -> usize {
            3
        }
        fn drift(&self, y: &[f64], dy: &mut [f64]) {
            dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
            dy[1] = 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] * y[1];
            dy[2] = 3e7 * y[1] * y[1];
        }
        fn layout(&self) -> StateLayout {
            StateLayout::Named { names: vec!["y1".into(), "y2".into(), "y3".into()] }
        }
        fn observables(&self, _x: &[f64]) -> Observables {
            Observables::extras_only(Vec::new())
        }
        fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
            Some(self)
        }
    }

    impl AnalyticJacobian for Robertson {
        fn sparsity(&self) -> Sparsity {
            Sparsity::Dense
        }
        fn jacobian(&self, y: &[f64], jac: &mut Jacobian) {
            let rows = [[-0.04, 1e4 * y[2], 1e4 * y[1]], [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]], [0.0, 6e7 * y[1], 0.0]];
            for (i, row) in rows.iter().enumerate() {
                for (j, v) in row.iter().enumerate() {
                    jac.set(i, j, *v);
                }
            }
        }
    }

    fn run(m: &dyn MeanFieldModel, x0: &[f64], t_end: f64, rtol: f64, atol: f64, method: Method) -> Trajectory {
        let opts = SolveOptions { t_end, rtol, atol, method, ..Default::default() };
        let tr = solve(m, x0, &opts).unwrap();
        assert_eq!(tr.status, Status::Success, "{method:?}");
        assert_eq!(tr.t_last(), t_end);
        tr
    }

    fn max_diff(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
    }

    /// A stiff linear chain `x_i' = -mu_i (x_i - x_{i-1})` (rates 1 to 1e5) against the matrix
    /// exponential `x(t) = e^{A t} x0` (nalgebra's Pade approximant), at every recorded step.
    #[test]
    fn bdf_meets_the_matrix_exponential_of_a_stiff_linear_system() {
        let mu = [1.0, 3.0, 30.0, 1e3, 2e4, 1e5];
        let n = mu.len();
        let mut a = DMatrix::zeros(n, n);
        for i in 0..n {
            a[(i, i)] = -mu[i];
            if i > 0 {
                a[(i, i - 1)] = mu[i];
            }
        }
        let m = Linear { a: a.clone() };
        let x0 = [1.0, 0.2, 0.9, 0.0, 0.5, 0.1];
        for rtol in [1e-6, 1e-10] {
            let tr = run(&m, &x0, 10.0, rtol, 1e-14, Method::Bdf);
            let mut worst = 0.0f64;
            for (t, x) in tr.t.iter().zip(&tr.x) {
                let exact = (&a * *t).exp() * DVector::from_column_slice(&x0);
                worst = worst.max(max_diff(x, exact.as_slice()));
            }
            // global error: a small multiple of the local tolerance (measured: 1.6 rtol at 1e-6,
            // 4.7 rtol at 1e-10)
            assert!(worst < 10.0 * rtol, "rtol {rtol:e}: {worst:e}");
            // the stiff modes (1e5) do not force steps of 1e-5: far fewer than 10 / 1e-5
            assert!(tr.stats.accepted_steps < 3000, "{:?}", tr.stats);
            assert!(tr.stats.factorisations < tr.stats.accepted_steps / 3, "{:?}", tr.stats);
        }
    }

    /// Robertson's problem against the reference values of validation/robertson.py (SciPy
    /// Radau, LSODA and BDF at rtol 1e-12 agree to 1e-10) within 1e-8 relative, and against
    /// Rosenbrock23 at a tight tolerance.
    #[test]
    fn bdf_solves_robertson_like_the_reference_and_rosenbrock() {
        for (t_end, want) in [(40.0, [0.7158270687, 9.185534765e-6, 0.2841637457]), (1e4, [0.1073004285, 4.800166973e-7, 0.8926990914])] {
            let bdf = run(&Robertson, &[1.0, 0.0, 0.0], t_end, 1e-10, 1e-20, Method::Bdf);
            for (got, want) in bdf.last().iter().zip(&want) {
                // measured: within 1.7e-9 relative
                assert!((got - want).abs() < 1e-8 * want, "t = {t_end}: {got} against {want}");
            }
            let ros = run(&Robertson, &[1.0, 0.0, 0.0], t_end, 1e-10, 1e-20, Method::Rosenbrock23);
            for (a, b) in bdf.last().iter().zip(ros.last()) {
                assert!((a - b).abs() < 1e-7 * b, "t = {t_end}: {a} against Rosenbrock23 {b}");
            }
            // a variable order pays: far fewer steps than the second-order Rosenbrock pair
            assert!(bdf.stats.accepted_steps * 5 < ros.stats.accepted_steps, "{:?} {:?}", bdf.stats, ros.stats);
        }
    }

    /// JSQ(2), lambda = 0.9, K = 50 from empty to t = 200: the gap to the fixed point is SciPy's
    /// (8.08e-8, validation/jsq_transient.py), and the final state is Rosenbrock23's at rtol 1e-10.
    #[test]
    fn bdf_matches_the_jsq_transient_of_scipy_and_rosenbrock() {
        let m = mfq_model::models::Jsq::new(0.9, 2, 50).unwrap();
        let bdf = run(&m, &[0.0; 50], 200.0, 1e-10, 1e-14, Method::Bdf);
        let xs = m.analytic_fixed_point().unwrap();
        let gap = max_diff(bdf.last(), &xs);
        assert!((gap - 8.08e-8).abs() < 0.02e-7, "{gap:e}");
        let ros = run(&m, &[0.0; 50], 200.0, 1e-10, 1e-14, Method::Rosenbrock23);
        let d = max_diff(bdf.last(), ros.last());
        // measured: 4.6e-11
        assert!(d < 2e-10, "{d:e}");
        assert!(bdf.stats.accepted_steps < ros.stats.accepted_steps, "{:?} {:?}", bdf.stats, ros.stats);
    }

    /// The PS pair approximation of redundancy-2 at K = 20 (400 states, sparse Jacobian with a
    /// coupling: faer's LU and Woodbury) from empty to t = 200: BDF and the explicit Dop853 at
    /// rtol 1e-10 agree within 1e-10 over the whole state (measured: 7.2e-13).
    #[test]
    fn bdf_matches_the_ps_pair_transient_of_the_explicit_method() {
        use mfq_model::models::redundancy::{Discipline, RedundancyPair};
        let m = RedundancyPair::new(0.9, 2, Discipline::Ps, 1, 20).unwrap();
        let x0 = vec![0.0; m.dim()];
        let bdf = run(&m, &x0, 200.0, 1e-10, 1e-14, Method::Bdf);
        let old = run(&m, &x0, 200.0, 1e-10, 1e-14, Method::Dop853);
        let d = max_diff(bdf.last(), old.last());
        assert!(d < 1e-10, "{d:e}");
        // the state moved: the check is not of two copies of the empty state
        assert!(bdf.last().iter().fold(0.0f64, |a, v| a.max(*v)) > 1e-2);
        assert!(bdf.stats.factorisations * 5 < bdf.stats.accepted_steps, "{:?}", bdf.stats);
    }
}

#[cfg(test)]
mod auto_tests {
    use crate::{solve, Method, SolveOptions, AUTO_BDF_MIN_DIM};
    use mfq_model::models::redundancy::{Discipline, RedundancyPair};
    use mfq_model::MeanFieldModel;

    /// `Auto` runs `Bdf` from the start on a sparse model of `AUTO_BDF_MIN_DIM` states or more
    /// (the PS pair at K = 45, 2025 states) and the explicit method below (K = 20, 400 states).
    #[test]
    fn auto_chooses_bdf_for_large_sparse_models_only() {
        for (k, want) in [(45, Some(Method::Bdf)), (20, None)] {
            let m = RedundancyPair::new(0.9, 2, Discipline::Ps, 1, k).unwrap();
            assert_eq!(m.dim() >= AUTO_BDF_MIN_DIM, want.is_some());
            let opts = SolveOptions { t_end: 1.0, record_steps: false, ..Default::default() };
            let tr = solve(&m, &vec![0.0; m.dim()], &opts).unwrap();
            assert!(tr.status.is_success(), "{:?}", tr.status);
            assert_eq!(tr.stats.stiff_method, want, "K = {k}");
            assert_eq!(tr.stats.switched_to_stiff_at, None);
        }
    }
}
