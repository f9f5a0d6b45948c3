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

/// Eigenvalues of `J(x)` (dense Schur decomposition, nalgebra; `O(n^3)`: meant for
/// `n` up to a few hundred).
pub fn local_stability(model: &dyn MeanFieldModel, x: &[f64]) -> LocalStability {
    let n = model.dim();
    let mut jac = Jacobian::new(n, model.sparsity());
    model.jacobian(x, &mut jac);
    let m = DMatrix::from_row_slice(n, n, &jac.to_dense());
    let mut eigenvalues: Vec<(f64, f64)> = m.complex_eigenvalues().iter().map(|c| (c.re, c.im)).collect();
    eigenvalues.sort_by(|a, b| b.0.total_cmp(&a.0));
    let spectral_abscissa = eigenvalues.first().map_or(f64::NEG_INFINITY, |e| e.0);
    LocalStability { eigenvalues, spectral_abscissa, slowest_decay_rate: -spectral_abscissa, stable: spectral_abscissa < 0.0 }
}
