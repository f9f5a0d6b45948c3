//! Local stability: eigenvalues of the Jacobian at a state, and the one rule that turns the
//! spectral abscissa into a word (stable, unstable, degenerate), shared by `fixed-point`,
//! `report`, sweeps and the attraction checker.

use mfq_model::{Jacobian, MeanFieldModel};
use serde::Serialize;
use std::fmt;

/// Default relative tolerance of the degeneracy test ([`LocalStability::kind`]): a spectral
/// abscissa `alpha` with `|alpha| <= DEGENERACY_TOL * s` ([`degeneracy_scale`]) is a zero
/// eigenvalue to the precision of a computed fixed point (whose error near a fold or pitchfork
/// is of the order of the square root of its residual, so that `alpha` there is `~1e-9`, not
/// round-off `1e-16`). The checker's `degeneracy_tol` defaults to it.
pub const DEGENERACY_TOL: f64 = 1e-5;

/// Local character of an equilibrium, from the spectral abscissa `alpha` of the Jacobian and
/// the scale `s` of [`degeneracy_scale`] ([`LocalStability::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EquilibriumKind {
    /// `alpha < -tol s`: exponentially attracting.
    Stable,
    /// `alpha > tol s`: repelling in some direction (e.g. a saddle).
    Unstable,
    /// `|alpha| <= tol s`: a zero eigenvalue to the precision at hand; local stability is
    /// inconclusive (convergence there is algebraic, not exponential).
    Degenerate,
    /// Eigenvalues not computed (dimension above the limit, or the Schur iteration failed).
    Unknown,
}

impl fmt::Display for EquilibriumKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EquilibriumKind::Stable => "stable",
            EquilibriumKind::Unstable => "unstable",
            EquilibriumKind::Degenerate => "degenerate",
            EquilibriumKind::Unknown => "stability not computed",
        })
    }
}

/// Eigenvalues of the Jacobian at a state and what they imply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocalStability {
    /// Eigenvalues `(re, im)`, sorted by decreasing real part.
    pub eigenvalues: Vec<(f64, f64)>,
    /// Largest real part (the spectral abscissa `alpha`).
    pub spectral_abscissa: f64,
    /// `-alpha`: the predicted slowest exponential decay rate of `||x(t) - x*||` near `x*`.
    pub slowest_decay_rate: f64,
    /// `||J||_inf` (largest absolute row sum).
    pub jacobian_norm: f64,
    /// The scale `s` of the degeneracy test ([`degeneracy_scale`]).
    pub scale: f64,
    /// Whether `alpha < -DEGENERACY_TOL * s` (the default rule of [`kind`](Self::kind): stable
    /// and not degenerate).
    pub stable: bool,
}

impl LocalStability {
    /// The local character by the shared rule: degenerate when `|alpha| <= tol * s` (`s` of
    /// [`degeneracy_scale`]), stable below, unstable above; unknown when the eigenvalues are
    /// not known (`alpha` not finite). `tol` is [`DEGENERACY_TOL`] unless the caller chose
    /// another (the checker's `degeneracy_tol`).
    pub fn kind(&self, tol: f64) -> EquilibriumKind {
        classify(self.spectral_abscissa, self.scale, tol)
    }
}

/// The scale `s` against which the spectral abscissa is judged: `max(1, min(||J||_inf,
/// |lambda_2|))`, with `lambda_2` the eigenvalue after the rightmost one (by decreasing real
/// part; for a complex pair its conjugate, so `|lambda_2|` is the pair's modulus), and
/// `max(1, ||J||_inf)` for a single eigenvalue. The error of a computed eigenvalue near zero
/// comes from the error of `x*` along the slow directions and is measured by the rates of the
/// slow modes it mixes with, not by the fastest rate of the model: the caching system's
/// Jacobian has `||J||_inf ~ 2e6` from its regularised sliding boundary (fast modes near
/// `-1e6`) while its spectral abscissa `-1.000004` sits beside a second eigenvalue
/// `-1.00002`; the norm alone called that degenerate. `norm` is `||J||_inf`, `eigenvalues`
/// sorted by decreasing real part.
pub fn degeneracy_scale(eigenvalues: &[(f64, f64)], norm: f64) -> f64 {
    let norm = if norm.is_finite() { norm } else { 1.0 };
    let local = match eigenvalues.get(1) {
        Some(&(re, im)) if re.is_finite() && im.is_finite() => re.hypot(im).min(norm),
        _ => norm,
    };
    local.max(1.0)
}

/// The shared rule of [`LocalStability::kind`] on a spectral abscissa `alpha` and the scale
/// `norm` of the test (the [`degeneracy_scale`]; `max(1, norm)` is used).
pub fn classify(alpha: f64, norm: f64, tol: f64) -> EquilibriumKind {
    let scale = if norm.is_finite() { norm.max(1.0) } else { 1.0 };
    if !alpha.is_finite() {
        EquilibriumKind::Unknown
    } else if alpha < -tol * scale {
        EquilibriumKind::Stable
    } else if alpha > tol * scale {
        EquilibriumKind::Unstable
    } else {
        EquilibriumKind::Degenerate
    }
}

/// Eigenvalues of `J(x)` (dense: faer's real Schur decomposition by the multishift QR
/// algorithm, `O(n^3)`, meant for `n` up to several hundred; at `n = 246` the whole fixed point
/// of `models/sq2-h2.toml` with `job_size.scv = 100` takes 0.04 s of CPU time, where
/// nalgebra's unblocked Schur decomposition alone took 0.8 s, could not be interrupted and
/// overran `--max-seconds`). If the iteration does not converge, `eigenvalues` is empty,
/// `spectral_abscissa` is NaN and `stable` is false.
pub fn local_stability(model: &dyn MeanFieldModel, x: &[f64]) -> LocalStability {
    let n = model.dim();
    let mut jac = Jacobian::new(n, model.sparsity());
    model.jacobian(x, &mut jac);
    let dense = jac.to_dense();
    let jacobian_norm = dense.chunks(n.max(1)).map(|row| row.iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max);
    let mut eigenvalues = eigenvalues_of(n, &dense);
    // by decreasing real part; a conjugate pair with its positive imaginary part first
    eigenvalues.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
    let spectral_abscissa = eigenvalues.first().map_or(f64::NAN, |e| e.0);
    let scale = degeneracy_scale(&eigenvalues, jacobian_norm);
    let stable = classify(spectral_abscissa, scale, DEGENERACY_TOL) == EquilibriumKind::Stable;
    LocalStability { eigenvalues, spectral_abscissa, slowest_decay_rate: -spectral_abscissa, jacobian_norm, scale, stable }
}

/// Eigenvalues `(re, im)` of the row-major `n x n` matrix `dense`; empty when the QR iteration
/// fails or a value is not finite (the callers report "not computed").
fn eigenvalues_of(n: usize, dense: &[f64]) -> Vec<(f64, f64)> {
    if n == 0 || dense.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let m = faer::Mat::<f64>::from_fn(n, n, |i, j| dense[i * n + j]);
    match m.eigenvalues() {
        Ok(ev) if ev.iter().all(|c| c.re.is_finite() && c.im.is_finite()) => ev.iter().map(|c| (c.re, c.im)).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule is relative to `max(1, ||J||)`: the same spectral abscissa is degenerate for
    /// a large Jacobian and stable for a small one; NaN is unknown.
    #[test]
    fn the_degeneracy_test_is_scaled_to_the_jacobian() {
        assert_eq!(classify(-1e-6, 0.5, DEGENERACY_TOL), EquilibriumKind::Degenerate);
        assert_eq!(classify(-2e-5, 0.5, DEGENERACY_TOL), EquilibriumKind::Stable);
        assert_eq!(classify(-2e-5, 10.0, DEGENERACY_TOL), EquilibriumKind::Degenerate);
        assert_eq!(classify(-2e-4, 10.0, DEGENERACY_TOL), EquilibriumKind::Stable);
        assert_eq!(classify(2e-4, 10.0, DEGENERACY_TOL), EquilibriumKind::Unstable);
        assert_eq!(classify(f64::NAN, 1.0, DEGENERACY_TOL), EquilibriumKind::Unknown);
    }

    /// The scale is the second eigenvalue's modulus (capped by the norm, at least 1): a clearly
    /// negative abscissa beside fast modes is stable, a pitchfork's `-1.3e-9` stays degenerate.
    #[test]
    fn the_scale_follows_the_slow_modes() {
        // the caching system's spectrum (models/cdn-cache-uniform.toml) and its norm
        let cdn = [(-1.000004, 0.0), (-1.00002, 0.0), (-3.81, 0.0), (-1.03e6, 0.0)];
        let s = degeneracy_scale(&cdn, 2.06e6);
        assert!((s - 1.00002).abs() < 1e-12, "{s}");
        assert_eq!(classify(-1.000004, s, DEGENERACY_TOL), EquilibriumKind::Stable);
        assert_eq!(classify(-1.000004, 2.06e6, DEGENERACY_TOL), EquilibriumKind::Degenerate, "the norm alone");
        // a pitchfork: alpha ~ -1.3e-9 beside O(1) modes, or alone
        assert_eq!(classify(-1.3e-9, degeneracy_scale(&[(-1.3e-9, 0.0), (-0.5, 0.0)], 2.0), DEGENERACY_TOL), EquilibriumKind::Degenerate);
        assert_eq!(classify(-1.3e-9, degeneracy_scale(&[(-1.3e-9, 0.0)], 2.0), DEGENERACY_TOL), EquilibriumKind::Degenerate);
        // a Hopf pair a +- 3i: its modulus; a lone eigenvalue or a huge second one: the norm
        assert!((degeneracy_scale(&[(1e-7, 3.0), (1e-7, -3.0)], 50.0) - 3.0).abs() < 1e-9);
        assert_eq!(degeneracy_scale(&[(-2.0, 0.0)], 40.0), 40.0);
        assert_eq!(degeneracy_scale(&[(-2.0, 0.0), (-1e9, 0.0)], 40.0), 40.0);
        assert_eq!(degeneracy_scale(&[], f64::NAN), 1.0);
    }

    /// Eigenvalues of matrices whose spectrum is known: a rotation-dilation block
    /// `[[a, -b], [b, a]]` (eigenvalues `a +- ib`) beside a diagonal entry, and a companion
    /// matrix of `(t - 1)(t - 2)(t - 3)`.
    #[test]
    fn eigenvalues_of_known_matrices() {
        let mut ev = eigenvalues_of(3, &[-0.5, -2.0, 0.0, 2.0, -0.5, 0.0, 0.0, 0.0, -3.0]);
        ev.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
        let want = [(-0.5, 2.0), (-0.5, -2.0), (-3.0, 0.0)];
        for (got, want) in ev.iter().zip(want) {
            assert!((got.0 - want.0).abs() < 1e-13 && (got.1 - want.1).abs() < 1e-13, "{ev:?}");
        }
        let mut ev = eigenvalues_of(3, &[6.0, -11.0, 6.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
        ev.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (got, want) in ev.iter().zip([3.0, 2.0, 1.0]) {
            assert!((got.0 - want).abs() < 1e-12 && got.1.abs() < 1e-12, "{ev:?}");
        }
        assert!(eigenvalues_of(2, &[f64::NAN, 0.0, 0.0, 1.0]).is_empty());
    }
}
