//! Fixed points of mean-field models, their local stability, and (in [`svg`]) plots drawn
//! from finished reports.
//!
//! - [`solve_model`]: pseudo-transient continuation then Newton on the drift of one
//!   (truncated) model, with a [`FixedPoint`] report: residual `max |f(x*)|`, iterations,
//!   status, spectral abscissa of the Jacobian, mass at the truncation level.
//! - [`solve_spec`]: the same for a model file's [`ModelSpec`], with the truncation level `K`
//!   grown automatically until `x_K < tol` (or fixed), after checking the model's stability
//!   condition.
//! - [`local_stability`]: eigenvalues of the Jacobian at a state.
//!
//! # Method
//!
//! Pseudo-transient continuation (Kelley and Keyes, "Convergence analysis of pseudo-transient
//! continuation", SIAM J. Numer. Anal. 35(2), 1998): from `x_0` (the empty state unless
//! given), solve `(I/dt - J(x)) dx = f(x)`, set `x <- P(x + dx)` (`P` = the model's projection
//! onto the feasible set) and grow `dt` by switched evolution relaxation,
//! `dt <- dt ||f_old|| / ||f_new||`. As `dt -> inf` this is Newton's method, which then polishes
//! the root. Plain damped Newton from a naive start fails at `lambda >= 0.99`; PTC converged
//! everywhere in the project's measurements. Linear solves use the banded LU of
//! [`mfq_ode::linalg`] when the model declares a band, nalgebra's dense LU otherwise.

pub mod svg;

mod newton;
pub mod refined;
mod stability;

pub use newton::{solve_model, FixedPointOptions};
pub use refined::{refined_mean_field, RefinedError, RefinedMeanField};
pub use stability::{local_stability, LocalStability};

use mfq_model::{MeanFieldModel, ModelError, ModelSpec, Observables, Stability, Truncation};
use serde::Serialize;

/// How a fixed-point solve ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum FixedPointStatus {
    /// `max |f(x*)| <= tol`.
    Converged,
    /// The iteration budget ran out before the residual reached the tolerance.
    MaxIterations,
    /// A linear solve met a singular matrix.
    Singular {
        /// Column of the zero pivot.
        index: usize,
    },
    /// The drift became NaN or infinite.
    NonFinite,
    /// The automatic truncation reached `max_levels` with `x_K` still above `tol`.
    TruncationNotReached {
        /// `x_K` at the largest `K` tried.
        mass: f64,
    },
}

/// A fixed point and how it was found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FixedPoint {
    /// The model's name.
    pub model: String,
    /// The state `x*` (layout: the model's; tail form `x[k-1] = x_k`).
    pub x: Vec<f64>,
    /// `max_i |f_i(x*)|`.
    pub residual: f64,
    /// Linear solves (PTC and Newton steps) used at the final truncation level.
    pub iterations: usize,
    /// Linear solves over every truncation level tried.
    pub total_iterations: usize,
    /// Outcome.
    pub status: FixedPointStatus,
    /// Truncation level `K` (= length of `x` for tail-form models) and its diagnostics.
    pub truncation: TruncationReport,
    /// Largest real part of the Jacobian's eigenvalues at `x*` (negative: locally stable);
    /// `None` when not computed.
    pub spectral_abscissa: Option<f64>,
    /// Whether the Jacobian was analytic or finite differences.
    pub jacobian: &'static str,
    /// Observables at `x*`.
    pub observables: Observables,
}

impl FixedPoint {
    /// Whether the solve converged.
    pub fn converged(&self) -> bool {
        self.status == FixedPointStatus::Converged
    }
}

/// What truncation was used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TruncationReport {
    /// Final truncation level `K`.
    pub levels: usize,
    /// `x_K` at the fixed point.
    pub mass_at_truncation: f64,
    /// Target for `x_K`.
    pub tol: f64,
    /// Whether `K` was chosen automatically.
    pub automatic: bool,
    /// Levels tried, in order.
    pub tried: Vec<usize>,
}

/// Misuse, or a question that has no fixed-point answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FixedPointError {
    /// A model parameter is invalid.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The parameters are outside the model's stability region: there is no steady state of
    /// the untruncated system to report.
    #[error("unstable: {reason}")]
    Unstable {
        /// Why, with the numbers.
        reason: String,
    },
    /// A fixed truncation level is too small: `x_K` exceeds the requested tolerance.
    #[error(
        "truncation.levels = {levels} is too small: the mass at level K is x_K = {mass:.3e} > truncation.tol = {tol:e}; \
         allowed: a K with x_K < tol (remove truncation.levels to choose K automatically)"
    )]
    TruncationTooSmall {
        /// The fixed `K`.
        levels: usize,
        /// `x_K` at the fixed point.
        mass: f64,
        /// The tolerance.
        tol: f64,
    },
    /// An option is outside its range.
    #[error("{field} = {value} is not allowed: {allowed}")]
    OutOfRange {
        /// Option name.
        field: &'static str,
        /// Value given.
        value: String,
        /// Allowed range.
        allowed: &'static str,
    },
}

/// Fixed point of a model file's model: checks the stability condition, then solves with the
/// truncation level `K` fixed (`trunc.levels`) or grown by doubling from 16 until
/// `x_K < trunc.tol` (each level warm-started from the previous solution padded with zeros),
/// then shrunk to the smallest `K` with `x_K < tol` and re-solved there.
///
/// The spectral abscissa is computed when `K <= opts.max_dim_for_eigenvalues`.
///
/// # Errors
/// [`FixedPointError::Unstable`] when the model's stability condition fails;
/// [`FixedPointError::TruncationTooSmall`] when a fixed `K` leaves `x_K >= tol`;
/// [`FixedPointError::Model`] for invalid parameters. Non-convergence is a status, not an error.
pub fn solve_spec(spec: &ModelSpec, trunc: &Truncation, opts: &FixedPointOptions) -> Result<FixedPoint, FixedPointError> {
    trunc.validate()?;
    opts.validate()?;
    let probe = spec.build(trunc.levels.unwrap_or(2).max(2))?;
    if let Stability::Unstable { reason } = probe.stability() {
        return Err(FixedPointError::Unstable { reason });
    }
    let mut tried = Vec::new();
    let mut total = 0;
    let mut warm: Option<Vec<f64>> = None;
    let mut k = trunc.levels.unwrap_or_else(|| spec.initial_levels().min(trunc.max_levels));
    loop {
        let model = spec.build(k)?;
        let x0 = warm.take().map(|mut w| {
            w.resize(model.dim(), 0.0);
            w
        });
        let mut fp = newton::solve_inner(model.as_ref(), x0.as_deref(), opts);
        tried.push(k);
        total += fp.iterations;
        let mass = mass_at_truncation(model.as_ref(), &fp.x);
        let automatic = trunc.levels.is_none();
        let done = |mut fp: FixedPoint, model: &dyn MeanFieldModel, tried: Vec<usize>, total| {
            fp.total_iterations = total;
            fp.truncation = TruncationReport {
                levels: model.dim(),
                mass_at_truncation: mass_at_truncation(model, &fp.x),
                tol: trunc.tol,
                automatic,
                tried,
            };
            if fp.converged() && model.dim() <= opts.max_dim_for_eigenvalues {
                fp.spectral_abscissa = Some(local_stability(model, &fp.x).spectral_abscissa);
            }
            fp
        };
        if !fp.converged() {
            return Ok(done(fp, model.as_ref(), tried, total));
        }
        if mass < trunc.tol {
            if automatic {
                // shrink to the smallest K with x_K < tol, re-solve there (warm, 1-2 steps)
                if let Some(k_min) = fp.x.iter().position(|v| *v < trunc.tol).map(|i| (i + 1).max(2)) {
                    if k_min < k {
                        let small = spec.build(k_min)?;
                        let mut x0 = fp.x.clone();
                        x0.truncate(small.dim());
                        let fp2 = newton::solve_inner(small.as_ref(), Some(&x0), opts);
                        tried.push(small.dim());
                        total += fp2.iterations;
                        if fp2.converged() && mass_at_truncation(small.as_ref(), &fp2.x) < trunc.tol {
                            return Ok(done(fp2, small.as_ref(), tried, total));
                        }
                    }
                }
            }
            return Ok(done(fp, model.as_ref(), tried, total));
        }
        if !automatic {
            return Err(FixedPointError::TruncationTooSmall { levels: k, mass, tol: trunc.tol });
        }
        if k >= trunc.max_levels {
            fp.status = FixedPointStatus::TruncationNotReached { mass };
            return Ok(done(fp, model.as_ref(), tried, total));
        }
        warm = Some(std::mem::take(&mut fp.x));
        k = (2 * k).min(trunc.max_levels);
    }
}

/// `x_K` for tail-form layouts (the last entry); 0 for layouts without levels.
pub fn mass_at_truncation(model: &dyn MeanFieldModel, x: &[f64]) -> f64 {
    match model.layout() {
        mfq_model::StateLayout::Tail { .. } => x.last().copied().unwrap_or(0.0).max(0.0),
        _ => 0.0,
    }
}
