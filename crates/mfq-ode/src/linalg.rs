//! LU factorisation of shifted Jacobians `alpha I + beta J`, banded or dense.
//!
//! Both the stiff integrator (`I - gamma h J`) and the fixed-point solver (`I/dt - J`) solve
//! with a shifted Jacobian. For a banded `J` (lower `p`, upper `q` diagonals) Gaussian
//! elimination with partial pivoting stays inside a band of width `2p + q + 1` (Golub and Van
//! Loan, "Matrix Computations", 4th ed., Alg. 4.3.5 with pivoting, §4.3.5): `O(n p (p + q))`
//! flops and `O(n (2p + q + 1))` memory. A dense `J` uses nalgebra's LU with partial pivoting.

use mfq_model::{Jacobian, Sparsity};
use nalgebra::{DMatrix, DVector};

/// A zero pivot met during factorisation: the matrix is singular to working precision.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("singular matrix: zero pivot in column {index}")]
pub struct SingularMatrix {
    /// Column (0-based) whose pivot vanished.
    pub index: usize,
}

/// Reusable LU factors of `alpha I + beta J`; allocation happens in [`ShiftedLu::new`] only
/// (banded) or once per factorisation (dense, inside nalgebra).
#[derive(Debug, Clone)]
pub struct ShiftedLu {
    n: usize,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Banded { lower: usize, upper: usize, width: usize, ab: Vec<f64>, piv: Vec<usize> },
    Dense { lu: Option<nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>>, rhs: DVector<f64> },
}

impl ShiftedLu {
    /// Storage for an `n x n` matrix with the given sparsity.
    pub fn new(n: usize, sparsity: Sparsity) -> Self {
        let kind = match sparsity {
            Sparsity::Banded { lower, upper } if lower + upper + 1 < n => {
                let width = 2 * lower + upper + 1;
                Kind::Banded { lower, upper, width, ab: vec![0.0; n * width], piv: vec![0; n] }
            }
            _ => Kind::Dense { lu: None, rhs: DVector::zeros(n) },
        };
        ShiftedLu { n, kind }
    }

    /// Factorises `alpha I + beta J`.
    ///
    /// # Errors
    /// [`SingularMatrix`] when a pivot is exactly zero or not finite.
    pub fn factor(&mut self, alpha: f64, beta: f64, jac: &Jacobian) -> Result<(), SingularMatrix> {
        let n = self.n;
        match &mut self.kind {
            Kind::Banded { lower, upper, width, ab, piv } => {
                let (p, q, w) = (*lower, *upper, *width);
                // A[i][j] lives at ab[i * w + (j + p - i)] for j - i in [-p, p + q]
                ab.iter_mut().for_each(|v| *v = 0.0);
                for i in 0..n {
                    let (lo, hi) = jac.row_range(i);
                    for j in lo..hi {
                        ab[i * w + (j + p - i)] = beta * jac.get(i, j);
                    }
                    ab[i * w + p] += alpha;
                }
                for k in 0..n {
                    let last_row = (k + p).min(n - 1);
                    let mut pr = k;
                    let mut best = ab[k * w + p].abs();
                    for i in k + 1..=last_row {
                        let v = ab[i * w + (k + p - i)].abs();
                        if v > best {
                            best = v;
                            pr = i;
                        }
                    }
                    if best == 0.0 || !best.is_finite() {
                        return Err(SingularMatrix { index: k });
                    }
                    piv[k] = pr;
                    let last_col = (k + p + q).min(n - 1);
                    if pr != k {
                        for j in k..=last_col {
                            ab.swap(k * w + (j + p - k), pr * w + (j + p - pr));
                        }
                    }
                    let pivot = ab[k * w + p];
                    for i in k + 1..=last_row {
                        let l = ab[i * w + (k + p - i)] / pivot;
                        ab[i * w + (k + p - i)] = l;
                        if l != 0.0 {
                            for j in k + 1..=last_col {
                                ab[i * w + (j + p - i)] -= l * ab[k * w + (j + p - k)];
                            }
                        }
                    }
                }
                Ok(())
            }
            Kind::Dense { lu, .. } => {
                let mut m = DMatrix::from_fn(n, n, |i, j| beta * jac.get(i, j));
                for i in 0..n {
                    m[(i, i)] += alpha;
                }
                let f = m.lu();
                let u = f.u();
                if let Some(index) = (0..n).find(|&i| u[(i, i)] == 0.0 || !u[(i, i)].is_finite()) {
                    *lu = None;
                    return Err(SingularMatrix { index });
                }
                *lu = Some(f);
                Ok(())
            }
        }
    }

    /// Solves `(alpha I + beta J) y = b` in place (`b` becomes `y`). Call after a successful
    /// [`factor`](Self::factor); before that it leaves `b` unchanged.
    pub fn solve(&mut self, b: &mut [f64]) {
        let n = self.n;
        match &mut self.kind {
            Kind::Banded { lower, upper, width, ab, piv } => {
                let (p, q, w) = (*lower, *upper, *width);
                for k in 0..n {
                    if piv[k] != k {
                        b.swap(k, piv[k]);
                    }
                    let bk = b[k];
                    for i in k + 1..=(k + p).min(n - 1) {
                        b[i] -= ab[i * w + (k + p - i)] * bk;
                    }
                }
                for k in (0..n).rev() {
                    let mut s = b[k];
                    for j in k + 1..=(k + p + q).min(n - 1) {
                        s -= ab[k * w + (j + p - k)] * b[j];
                    }
                    b[k] = s / ab[k * w + p];
                }
            }
            Kind::Dense { lu, rhs } => {
                if let Some(f) = lu {
                    rhs.as_mut_slice().copy_from_slice(b);
                    if f.solve_mut(rhs) {
                        b.copy_from_slice(rhs.as_slice());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(n: usize, sparsity: Sparsity) {
        // a band matrix needing pivoting (small diagonal)
        let mut j = Jacobian::new(n, sparsity);
        let (p, q) = match sparsity {
            Sparsity::Banded { lower, upper } => (lower, upper),
            Sparsity::Dense => (n, n),
        };
        for i in 0..n {
            for c in i.saturating_sub(p)..(i + q + 1).min(n) {
                let v = ((i * 7 + c * 13) % 11) as f64 - 5.0 + if i == c { 0.01 } else { 0.0 };
                j.set(i, c, v);
            }
        }
        let (alpha, beta) = (0.3, -1.7);
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut b = vec![0.0; n];
        for i in 0..n {
            b[i] = alpha * xs[i] + (0..n).map(|c| beta * j.get(i, c) * xs[c]).sum::<f64>();
        }
        let mut lu = ShiftedLu::new(n, sparsity);
        lu.factor(alpha, beta, &j).unwrap();
        lu.solve(&mut b);
        let err = b.iter().zip(&xs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-10 * n as f64, "{sparsity:?}: {err}");
    }

    #[test]
    fn banded_and_dense_solves_recover_the_solution() {
        check(30, Sparsity::Banded { lower: 1, upper: 1 });
        check(40, Sparsity::Banded { lower: 3, upper: 2 });
        check(25, Sparsity::Dense);
        check(3, Sparsity::Banded { lower: 2, upper: 2 });
    }

    #[test]
    fn singular_is_reported() {
        let j = Jacobian::new(5, Sparsity::Banded { lower: 1, upper: 1 });
        let mut lu = ShiftedLu::new(5, j.sparsity());
        assert_eq!(lu.factor(0.0, 1.0, &j), Err(SingularMatrix { index: 0 }));
    }
}
