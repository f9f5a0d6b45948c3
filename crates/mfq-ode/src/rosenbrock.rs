//! Rosenbrock 2(3) (Shampine and Reichelt 1997, MATLAB `ode23s`) with the model's Jacobian.

use crate::linalg::ShiftedLu;
use crate::{max_abs, Recorder, SolveOptions, Stats, Status};
use mfq_model::{Jacobian, MeanFieldModel};

/// Integrates from `(t0, x)` to `opts.t_end` with the L-stable Rosenbrock pair
///
/// ```text
/// W = I - h d J,  d = 1/(2 + sqrt 2),  e32 = 6 + sqrt 2
/// k1 = W^{-1} f(y);   k2 = W^{-1} (f(y + h k1 / 2) - k1) + k1;   y_new = y + h k2
/// k3 = W^{-1} (f(y_new) - e32 (k2 - f(y + h k1/2)) - 2 (k1 - f(y)))
/// error estimate = h/6 (k1 - 2 k2 + k3)
/// ```
///
/// (Shampine and Reichelt, SIAM J. Sci. Comput. 18(1), 1997, eq. (3.1)-(3.3)); the error is
/// measured in the max norm against `atol + rtol max(|y|, |y_new|)`. Allocation happens
/// once, before the loop.
pub(crate) fn integrate(
    model: &dyn MeanFieldModel,
    t0: f64,
    x: &mut [f64],
    (opts, job): (&SolveOptions, &mfq_model::Deadline),
    rec: &mut Recorder,
    stats: &mut Stats,
) -> Status {
    let n = x.len();
    let d = 1.0 / (2.0 + std::f64::consts::SQRT_2);
    let e32 = 6.0 + std::f64::consts::SQRT_2;
    let mut jac = Jacobian::new(n, model.sparsity());
    let mut lu = ShiftedLu::new(n, model.sparsity());
    let [mut f0, mut f1, mut f2, mut k1, mut k2, mut k3, mut y1, mut ynew] = std::array::from_fn(|_| vec![0.0; n]);
    let mut t = t0;
    model.drift(x, &mut f0);
    stats.drift_evals += 1;
    if !max_abs(&f0).is_finite() {
        return Status::NonFinite { t };
    }
    if opts.steady_tol.is_some_and(|tol| max_abs(&f0) < tol) {
        return Status::SteadyState { t };
    }
    let scale0 = x.iter().zip(&f0).map(|(xi, fi)| fi.abs() / (opts.atol + opts.rtol * xi.abs())).fold(0.0, f64::max);
    let mut h = if scale0 > 0.0 { 0.5 * opts.rtol.cbrt() / scale0 } else { 1e-3 };
    h = h.clamp(1e-12, opts.t_end - t);
    loop {
        if stats.accepted_steps + stats.rejected_steps >= opts.max_steps as u64 {
            return Status::MaxSteps { t };
        }
        // every step: one costs a Jacobian and an LU, far more than reading the clock
        if crate::stopped(opts, job) {
            return Status::TimeLimit { t };
        }
        let last = t + h >= opts.t_end * (1.0 - 1e-15);
        if last {
            h = opts.t_end - t;
        }
        model.jacobian(x, &mut jac);
        stats.jacobian_evals += 1;
        // a large sparse factorisation is abandoned when the job's deadline passes
        match lu.factor_within(1.0, -h * d, &jac, job) {
            Err(_) => return Status::Singular { t },
            Ok(false) => return Status::TimeLimit { t },
            Ok(true) => {}
        }
        stats.factorisations += 1;
        k1.copy_from_slice(&f0);
        lu.solve(&mut k1);
        for i in 0..n {
            y1[i] = x[i] + 0.5 * h * k1[i];
        }
        model.drift(&y1, &mut f1);
        for i in 0..n {
            k2[i] = f1[i] - k1[i];
        }
        lu.solve(&mut k2);
        for i in 0..n {
            k2[i] += k1[i];
            ynew[i] = x[i] + h * k2[i];
        }
        model.drift(&ynew, &mut f2);
        for i in 0..n {
            k3[i] = f2[i] - e32 * (k2[i] - f1[i]) - 2.0 * (k1[i] - f0[i]);
        }
        lu.solve(&mut k3);
        stats.drift_evals += 2;
        let mut err = 0.0f64;
        for i in 0..n {
            let e = h / 6.0 * (k1[i] - 2.0 * k2[i] + k3[i]);
            let sc = opts.atol + opts.rtol * x[i].abs().max(ynew[i].abs());
            err = err.max((e / sc).abs());
            if !e.is_finite() {
                err = f64::INFINITY;
            }
        }
        if err <= 1.0 {
            stats.accepted_steps += 1;
            t = if last { opts.t_end } else { t + h };
            x.copy_from_slice(&ynew);
            model.project(x);
            if x.iter().zip(&ynew).any(|(a, b)| a != b) {
                model.drift(x, &mut f0);
                stats.drift_evals += 1;
            } else {
                f0.copy_from_slice(&f2);
            }
            rec.push(t, x);
            let r = max_abs(&f0);
            if !r.is_finite() {
                return Status::NonFinite { t };
            }
            if opts.steady_tol.is_some_and(|tol| r < tol) {
                return Status::SteadyState { t };
            }
            if last {
                return Status::Success;
            }
            h *= if err > 0.0 { (0.8 * err.powf(-1.0 / 3.0)).min(5.0) } else { 5.0 };
        } else {
            stats.rejected_steps += 1;
            h *= if err.is_finite() { (0.8 * err.powf(-1.0 / 3.0)).max(0.1) } else { 0.25 };
            if h < 1e-14 * t.abs().max(1.0) {
                return Status::StepSizeTooSmall { t };
            }
        }
    }
}
