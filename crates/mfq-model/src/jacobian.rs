//! Jacobian storage: dense or banded, filled by a model, read by the solvers.

/// Which entries of the Jacobian of a drift can be non-zero.
///
/// Solvers use this to pick a storage and a linear solver: a banded Jacobian of an
/// `n`-state model costs `O(n (lower + upper))` to store and `O(n lower (lower + upper))`
/// to factorise, against `O(n^3)` dense.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sparsity {
    /// Any entry may be non-zero.
    Dense,
    /// `J[i][j]` may be non-zero only for `i - lower <= j <= i + upper`.
    Banded {
        /// Number of sub-diagonals.
        lower: usize,
        /// Number of super-diagonals.
        upper: usize,
    },
}

/// A square Jacobian `J[i][j] = d f_i / d x_j` of size `n x n`, dense or banded.
///
/// Banded storage keeps `2 lower + upper + 1` slots per row so that an LU factorisation
/// with partial pivoting can run in place (the extra `lower` slots hold the fill-in).
/// Writing outside the declared band is a model bug: it is recorded (see
/// [`Jacobian::out_of_band`]) instead of silently dropped, and the solvers report it.
#[derive(Debug, Clone)]
pub struct Jacobian {
    n: usize,
    sparsity: Sparsity,
    width: usize,
    offset: usize,
    data: Vec<f64>,
    out_of_band: Option<(usize, usize)>,
}

impl Jacobian {
    /// A zero Jacobian of size `n x n` with the given sparsity.
    pub fn new(n: usize, sparsity: Sparsity) -> Self {
        let (width, offset) = match sparsity {
            Sparsity::Dense => (n, 0),
            Sparsity::Banded { lower, upper } => (2 * lower + upper + 1, lower),
        };
        Jacobian { n, sparsity, width, offset, data: vec![0.0; n * width], out_of_band: None }
    }

    /// Size `n` of the (square) matrix.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// The sparsity this storage was made for.
    pub fn sparsity(&self) -> Sparsity {
        self.sparsity
    }

    /// Sets every stored entry to zero and forgets earlier out-of-band writes.
    pub fn clear(&mut self) {
        self.data.iter_mut().for_each(|v| *v = 0.0);
        self.out_of_band = None;
    }

    #[inline]
    fn slot(&self, i: usize, j: usize) -> Option<usize> {
        match self.sparsity {
            Sparsity::Dense => Some(i * self.n + j),
            Sparsity::Banded { lower, upper } => {
                if j + lower >= i && j <= i + upper {
                    Some(i * self.width + (j + self.offset - i))
                } else {
                    None
                }
            }
        }
    }

    /// Entry `J[i][j]` (zero outside the band). Panics if `i` or `j` is `>= n`.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        assert!(i < self.n && j < self.n, "Jacobian index ({i}, {j}) outside {n}x{n}", n = self.n);
        self.slot(i, j).map_or(0.0, |s| self.data[s])
    }

    /// Sets `J[i][j] = v`. Outside the band the write is dropped and recorded.
    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        match self.slot(i, j) {
            Some(s) => self.data[s] = v,
            None if v != 0.0 => self.out_of_band = Some((i, j)),
            None => {}
        }
    }

    /// Adds `v` to `J[i][j]`. Outside the band the write is dropped and recorded.
    #[inline]
    pub fn add(&mut self, i: usize, j: usize, v: f64) {
        match self.slot(i, j) {
            Some(s) => self.data[s] += v,
            None if v != 0.0 => self.out_of_band = Some((i, j)),
            None => {}
        }
    }

    /// The first `(i, j)` written outside the declared band since the last [`clear`](Self::clear),
    /// if any: a model whose [`sparsity`](crate::MeanFieldModel::sparsity) is wrong.
    pub fn out_of_band(&self) -> Option<(usize, usize)> {
        self.out_of_band
    }

    /// Column range `[lo, hi)` that may hold non-zeros in row `i`.
    #[inline]
    pub fn row_range(&self, i: usize) -> (usize, usize) {
        match self.sparsity {
            Sparsity::Dense => (0, self.n),
            Sparsity::Banded { lower, upper } => (i.saturating_sub(lower), (i + upper + 1).min(self.n)),
        }
    }

    /// Raw storage: row-major `n x n` (dense) or `n x (2 lower + upper + 1)` band rows
    /// with `J[i][j]` at `i * width + (j + lower - i)` (banded).
    pub fn raw(&self) -> &[f64] {
        &self.data
    }

    /// The matrix as a dense row-major `n x n` vector (allocates; for small `n`, eigenvalues, output).
    pub fn to_dense(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.n * self.n];
        for i in 0..self.n {
            let (lo, hi) = self.row_range(i);
            for j in lo..hi {
                out[i * self.n + j] = self.get(i, j);
            }
        }
        out
    }
}

/// Fills `jac` with a forward-difference Jacobian of `drift` at `x`.
///
/// Dense: `n` extra drift evaluations. Banded: columns that share no row are perturbed
/// together (Curtis, Powell and Reid, "On the estimation of sparse Jacobian matrices",
/// IMA J. Appl. Math. 13, 1974), so `lower + upper + 1` evaluations whatever `n`.
/// Step `h_j = sqrt(eps) max(|x_j|, 1e-3)`, kept inside `[0, 1]` by stepping backwards
/// when `x_j + h_j > 1` (occupancy fractions). `work` holds four buffers (`f(x)`, perturbed `x`, `f(x + h)`, steps), resized
/// to `n` on first use; nothing is allocated after that.
pub fn finite_difference_jacobian(
    drift: &dyn Fn(&[f64], &mut [f64]),
    x: &[f64],
    jac: &mut Jacobian,
    work: &mut [Vec<f64>; 4],
) {
    let n = x.len();
    let [f0, xp, f1, steps] = work;
    f0.resize(n, 0.0);
    xp.resize(n, 0.0);
    f1.resize(n, 0.0);
    steps.resize(n, 0.0);
    drift(x, f0);
    jac.clear();
    let (groups, lower, upper) = match jac.sparsity() {
        Sparsity::Dense => (n, n, n),
        Sparsity::Banded { lower, upper } => ((lower + upper + 1).min(n), lower, upper),
    };
    for g in 0..groups {
        xp.copy_from_slice(x);
        let mut j = g;
        while j < n {
            let mag = x[j].abs().max(1e-3);
            let mut h = f64::EPSILON.sqrt() * mag;
            if x[j] + h > 1.0 && x[j] - h >= 0.0 {
                h = -h;
            }
            xp[j] = x[j] + h;
            steps[j] = xp[j] - x[j];
            j += groups;
        }
        drift(xp, f1);
        let mut j = g;
        while j < n {
            let lo = j.saturating_sub(upper);
            let hi = (j + lower + 1).min(n);
            for i in lo..hi {
                jac.set(i, j, (f1[i] - f0[i]) / steps[j]);
            }
            j += groups;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banded_storage_round_trip() {
        let mut j = Jacobian::new(5, Sparsity::Banded { lower: 1, upper: 2 });
        j.set(2, 1, 3.0);
        j.set(2, 4, 4.0);
        assert_eq!(j.get(2, 1), 3.0);
        assert_eq!(j.get(2, 4), 4.0);
        assert_eq!(j.get(2, 0), 0.0);
        assert!(j.out_of_band().is_none());
        j.set(4, 0, 1.0);
        assert_eq!(j.out_of_band(), Some((4, 0)));
    }

    #[test]
    fn finite_differences_of_a_tridiagonal_map() {
        // f_i = x_{i-1} - 2 x_i^2 + 3 x_{i+1}; exact J is known.
        let drift = |x: &[f64], f: &mut [f64]| {
            let n = x.len();
            for i in 0..n {
                let l = if i > 0 { x[i - 1] } else { 0.0 };
                let r = if i + 1 < n { x[i + 1] } else { 0.0 };
                f[i] = l - 2.0 * x[i] * x[i] + 3.0 * r;
            }
        };
        let x = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2];
        let mut jac = Jacobian::new(6, Sparsity::Banded { lower: 1, upper: 1 });
        let mut work = Default::default();
        finite_difference_jacobian(&drift, &x, &mut jac, &mut work);
        for i in 0..6 {
            assert!((jac.get(i, i) + 4.0 * x[i]).abs() < 1e-6);
            if i > 0 {
                assert!((jac.get(i, i - 1) - 1.0).abs() < 1e-6);
            }
            if i + 1 < 6 {
                assert!((jac.get(i, i + 1) - 3.0).abs() < 1e-6);
            }
        }
    }
}
