//! Pseudo-transient continuation + Newton.

use crate::{local_stability, FixedPoint, FixedPointError, FixedPointStatus, TruncationReport};
use mfq_model::{Jacobian, MeanFieldModel};
use mfq_ode::linalg::ShiftedLu;
use serde::Serialize;

/// Options of the fixed-point solvers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FixedPointOptions {
    /// Residual tolerance on `max |f(x)|` (default 1e-12); after reaching it up to three
    /// Newton steps polish the root while they lower the residual.
    pub tol: f64,
    /// Maximum number of linear solves per truncation level (default 500).
    pub max_iter: usize,
    /// First pseudo time step (default 10 mean job sizes).
    pub dt0: f64,
    /// Initial state (default: the empty state, all zeros).
    pub x0: Option<Vec<f64>>,
    /// Eigenvalues (spectral abscissa) are computed up to this dimension (default 600; dense, `O(n^3)`).
    pub max_dim_for_eigenvalues: usize,
    /// Wall-clock limit in seconds over the whole solve (every truncation level); `None`: no
    /// limit. When it runs out the solve stops with [`FixedPointStatus::TimeLimit`].
    pub max_seconds: Option<f64>,
}

impl Default for FixedPointOptions {
    fn default() -> Self {
        FixedPointOptions { tol: 1e-12, max_iter: 500, dt0: 10.0, x0: None, max_dim_for_eigenvalues: 600, max_seconds: None }
    }
}

impl FixedPointOptions {
    /// Checks the option ranges.
    ///
    /// # Errors
    /// [`FixedPointError::OutOfRange`] naming the option.
    pub fn validate(&self) -> Result<(), FixedPointError> {
        let bad = |field, value: String, allowed| Err(FixedPointError::OutOfRange { field, value, allowed });
        if !(self.tol.is_finite() && self.tol > 0.0) {
            return bad("tol", self.tol.to_string(), "a number > 0");
        }
        if self.max_iter == 0 {
            return bad("max_iter", "0".into(), "an integer >= 1");
        }
        if !(self.dt0.is_finite() && self.dt0 > 0.0) {
            return bad("dt0", self.dt0.to_string(), "a number > 0");
        }
        if let Some(t) = self.max_seconds.filter(|t| !(t.is_finite() && *t > 0.0)) {
            return bad("max_seconds", t.to_string(), "a finite number of seconds > 0");
        }
        if let Some(v) = self.x0.iter().flatten().find(|v| !v.is_finite()) {
            return bad("x0", v.to_string(), "finite entries");
        }
        Ok(())
    }
}

/// Fixed point of one truncated model (fixed dimension), from `opts.x0` or the empty state.
///
/// The report's `truncation` holds the model's own `K` (no growth; see [`crate::solve_spec`]).
///
/// # Errors
/// [`FixedPointError::OutOfRange`] for invalid options or an `x0` of the wrong length.
pub fn solve_model(model: &dyn MeanFieldModel, opts: &FixedPointOptions) -> Result<FixedPoint, FixedPointError> {
    opts.validate()?;
    if let Some(x0) = &opts.x0 {
        if x0.len() != model.dim() {
            return Err(FixedPointError::OutOfRange {
                field: "x0",
                value: format!("{} entries", x0.len()),
                allowed: "as many entries as the model's dimension",
            });
        }
    }
    let mut fp = solve_inner(model, opts.x0.as_deref(), opts);
    fp.total_iterations = fp.iterations;
    fp.truncation.levels = model.dim();
    fp.truncation.mass_at_truncation = crate::mass_at_truncation(model, &fp.x);
    fp.truncation.tried = vec![model.dim()];
    if fp.converged() && model.dim() <= opts.max_dim_for_eigenvalues {
        fp.spectral_abscissa = Some(local_stability(model, &fp.x).spectral_abscissa).filter(|a| a.is_finite());
    }
    Ok(fp)
}

#[inline]
fn max_abs(v: &[f64]) -> f64 {
    let mut m = 0.0f64;
    for x in v {
        if !x.is_finite() {
            return f64::INFINITY;
        }
        m = m.max(x.abs());
    }
    m
}

/// The PTC + Newton iteration; options are assumed valid. Allocates its buffers once.
pub(crate) fn solve_inner(model: &dyn MeanFieldModel, x0: Option<&[f64]>, opts: &FixedPointOptions) -> FixedPoint {
    solve_until(model, x0, opts, opts.max_seconds.map(|s| std::time::Instant::now() + std::time::Duration::from_secs_f64(s)))
}

/// [`solve_inner`] with an absolute deadline (shared by every truncation level of one solve).
pub(crate) fn solve_until(
    model: &dyn MeanFieldModel,
    x0: Option<&[f64]>,
    opts: &FixedPointOptions,
    deadline: Option<std::time::Instant>,
) -> FixedPoint {
    let n = model.dim();
    let mut x = x0.map_or_else(|| vec![0.0; n], <[f64]>::to_vec);
    model.project(&mut x);
    let [mut f, mut dx, mut xn, mut fnew] = std::array::from_fn(|_| vec![0.0; n]);
    let mut jac = Jacobian::new(n, model.sparsity());
    let mut lu = ShiftedLu::new(n, model.sparsity());
    model.drift(&x, &mut f);
    let mut r = max_abs(&f);
    let mut dt = opts.dt0;
    let mut iters = 0;
    // one PTC (alpha = 1/dt) or Newton (alpha = 0) step; returns the new residual
    let mut step = |x: &[f64], f: &[f64], alpha: f64, xn: &mut Vec<f64>, fnew: &mut Vec<f64>| -> Result<f64, usize> {
        model.jacobian(x, &mut jac);
        lu.factor(alpha, -1.0, &jac).map_err(|e| e.index)?;
        dx.copy_from_slice(f);
        lu.solve(&mut dx);
        for i in 0..n {
            xn[i] = x[i] + dx[i];
        }
        model.project(xn);
        model.drift(xn, fnew);
        Ok(max_abs(fnew))
    };
    let status = loop {
        if !r.is_finite() {
            break FixedPointStatus::NonFinite;
        }
        if r <= opts.tol {
            for _ in 0..3 {
                if iters >= opts.max_iter {
                    break;
                }
                iters += 1;
                match step(&x, &f, 0.0, &mut xn, &mut fnew) {
                    Ok(rn) if rn < r => {
                        std::mem::swap(&mut x, &mut xn);
                        std::mem::swap(&mut f, &mut fnew);
                        r = rn;
                    }
                    _ => break,
                }
            }
            break FixedPointStatus::Converged;
        }
        if iters >= opts.max_iter {
            break FixedPointStatus::MaxIterations;
        }
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            break FixedPointStatus::TimeLimit { seconds: opts.max_seconds.unwrap_or(0.0) };
        }
        iters += 1;
        match step(&x, &f, 1.0 / dt, &mut xn, &mut fnew) {
            Ok(rn) if rn.is_finite() && rn < 2.0 * r => {
                // switched evolution relaxation, at least doubling dt after a step that lowered
                // the residual (plain SER stalls when a slow mode, e.g. lambda -> 1, barely moves)
                let growth = if rn < r { (r / rn.max(f64::MIN_POSITIVE)).max(2.0) } else { r / rn };
                dt = (dt * growth).min(1e15);
                std::mem::swap(&mut x, &mut xn);
                std::mem::swap(&mut f, &mut fnew);
                r = rn;
            }
            Ok(_) if dt > 1e-8 => dt *= 0.1,
            Ok(rn) => {
                r = rn;
                break FixedPointStatus::NonFinite;
            }
            Err(index) if dt > 1e-8 => {
                let _ = index;
                dt *= 0.1
            }
            Err(index) => break FixedPointStatus::Singular { index },
        }
    };
    let observables = model.observables(&x);
    FixedPoint {
        model: model.name(),
        residual: r,
        iterations: iters,
        total_iterations: iters,
        status,
        truncation: TruncationReport { levels: n, mass_at_truncation: 0.0, tol: 0.0, automatic: false, tried: vec![] },
        spectral_abscissa: None,
        jacobian: if model.has_analytic_jacobian() { "analytic" } else { "finite differences" },
        observables,
        x,
    }
}
