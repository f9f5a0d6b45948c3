//! Local stability: eigenvalues of the Jacobian at a state.

use mfq_model::{Jacobian, MeanFieldModel};
use nalgebra::DMatrix;
use serde::Serialize;

/// Eigenvalues of the Jacobian at a state and what they imply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocalStability {
    /// Eigenvalues `(re, im)`, sorted by decreasing real part.
    pub eigenvalues: Vec<(f64, f64)>,
    /// Largest real part (the spectral abscissa `alpha`).
    pub spectral_abscissa: f64,
    /// `-alpha`: the predicted slowest exponential decay rate of `||x(t) - x*||` near `x*`.
    pub slowest_decay_rate: f64,
    /// Whether every eigenvalue has a negative real part (`alpha < 0`).
    pub stable: bool,
}

/// Eigenvalues of `J(x)` (dense Schur decomposition, nalgebra, at most `100 n` iterations;
/// `O(n^3)`: meant for `n` up to a few hundred). If the iteration does not converge,
/// `eigenvalues` is empty, `spectral_abscissa` is NaN and `stable` is false.
pub fn local_stability(model: &dyn MeanFieldModel, x: &[f64]) -> LocalStability {
    let n = model.dim();
    let mut jac = Jacobian::new(n, model.sparsity());
    model.jacobian(x, &mut jac);
    let m = DMatrix::from_row_slice(n, n, &jac.to_dense());
    // a capped Schur iteration: a pathological Jacobian must not hang the solver; when it does
    // not converge the eigenvalues are unknown (empty) and the spectral abscissa is NaN, which
    // the callers report as "not computed"
    let mut eigenvalues: Vec<(f64, f64)> = match m.try_schur(f64::EPSILON, 100 * n.max(10)) {
        Some(schur) => schur.complex_eigenvalues().iter().map(|c| (c.re, c.im)).collect(),
        None => Vec::new(),
    };
    eigenvalues.sort_by(|a, b| b.0.total_cmp(&a.0));
    let spectral_abscissa = eigenvalues.first().map_or(f64::NAN, |e| e.0);
    LocalStability { eigenvalues, spectral_abscissa, slowest_decay_rate: -spectral_abscissa, stable: spectral_abscissa < 0.0 }
}
