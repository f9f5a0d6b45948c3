//! Symmetric moment tensors of order 2 and 3 in the complex Schur basis of the Jacobian.
//!
//! With `J = U T U^H` (`U` unitary, `T` upper triangular), the equations
//! `sum_modes J x_mode X + S = 0` for an order-`r` tensor `X` (`r = 2`: `J X + X J^T + S = 0`;
//! `r = 3`: the same with three modes) become `sum_modes T x_mode Y + S~ = 0` with
//! `X = Y x_1 U ... x_r U` and `S~ = S x_1 U^H ... x_r U^H` (mode products), which is solved
//! entry by entry from the last multi-index backwards: `O(r n^(r+1))` operations.

use crate::RefinedError;
use nalgebra::{Complex, DMatrix};

/// A complex number.
pub type C64 = Complex<f64>;

/// The complex Schur form `J = U T U^H` of a real `n x n` matrix (row-major storage).
#[derive(Debug, Clone)]
pub struct ComplexSchur {
    /// Dimension.
    pub n: usize,
    /// `U[i * n + a]`, unitary.
    pub u: Vec<C64>,
    /// `T[a * n + b]`, upper triangular.
    pub t: Vec<C64>,
}

impl ComplexSchur {
    /// The Schur form of the row-major real matrix `j` (`n x n`), by nalgebra's complex QR
    /// iteration.
    pub fn new(j: &[f64], n: usize) -> Self {
        let m = DMatrix::from_fn(n, n, |r, c| C64::new(j[r * n + c], 0.0));
        let (u, t) = m.schur().unpack();
        let mut uu = vec![C64::new(0.0, 0.0); n * n];
        let mut tt = vec![C64::new(0.0, 0.0); n * n];
        for r in 0..n {
            for c in 0..n {
                uu[r * n + c] = u[(r, c)];
                tt[r * n + c] = if c >= r { t[(r, c)] } else { C64::new(0.0, 0.0) };
            }
        }
        ComplexSchur { n, u: uu, t: tt }
    }

    /// `S x_1 U^H ... x_r U^H` of the real order-`r` tensor `s` (`n^r` entries, row-major).
    pub fn to_basis(&self, s: &[f64], r: usize) -> Vec<C64> {
        let mut x: Vec<C64> = s.iter().map(|&v| C64::new(v, 0.0)).collect();
        let n = self.n;
        for mode in 0..r {
            mode_product(&mut x, n, r, mode, &|a, i| self.u[i * n + a].conj());
        }
        x
    }

    /// The real part of `Y x_1 U ... x_r U`.
    pub fn from_basis(&self, mut y: Vec<C64>, r: usize) -> Vec<f64> {
        let n = self.n;
        for mode in 0..r {
            mode_product(&mut y, n, r, mode, &|i, a| self.u[i * n + a]);
        }
        y.iter().map(|c| c.re).collect()
    }

    /// Solves `sum_modes T x_mode Y = -S~` in place (`rhs` holds `S~` on entry, `Y` on exit).
    ///
    /// # Errors
    /// [`RefinedError::Singular`] when `r` eigenvalues of `J` sum to zero.
    pub fn solve(&self, rhs: &mut [C64], r: usize) -> Result<(), RefinedError> {
        let n = self.n;
        let strides: Vec<usize> = (0..r).map(|k| n.pow((r - 1 - k) as u32)).collect();
        let mut idx = vec![0usize; r];
        for lin in (0..rhs.len()).rev() {
            let mut rem = lin;
            for k in 0..r {
                idx[k] = rem / strides[k];
                rem %= strides[k];
            }
            let mut s = -rhs[lin];
            let mut diag = C64::new(0.0, 0.0);
            for k in 0..r {
                let a = idx[k];
                diag += self.t[a * n + a];
                let row = &self.t[a * n..(a + 1) * n];
                for (ap, tv) in row.iter().enumerate().skip(a + 1) {
                    s -= tv * rhs[lin + (ap - a) * strides[k]];
                }
            }
            if diag.norm() < 1e-300 {
                return Err(RefinedError::Singular(format!("{r} eigenvalues of the Jacobian sum to zero")));
            }
            rhs[lin] = s / diag;
        }
        Ok(())
    }
}

/// `x <- x x_mode M`: `out[.., a, ..] = sum_i M(a, i) x[.., i, ..]` along `mode` of an order-`r`
/// tensor with `n` entries per mode.
fn mode_product(x: &mut [C64], n: usize, r: usize, mode: usize, m: &dyn Fn(usize, usize) -> C64) {
    let stride = n.pow((r - 1 - mode) as u32);
    let outer = n.pow(mode as u32);
    let mat: Vec<C64> = (0..n * n).map(|k| m(k / n, k % n)).collect();
    let mut fiber = vec![C64::new(0.0, 0.0); n];
    for o in 0..outer {
        let base = o * n * stride;
        for inner in 0..stride {
            for (i, f) in fiber.iter_mut().enumerate() {
                *f = x[base + i * stride + inner];
            }
            for a in 0..n {
                let row = &mat[a * n..(a + 1) * n];
                let mut acc = C64::new(0.0, 0.0);
                for (mv, f) in row.iter().zip(&fiber) {
                    acc += mv * f;
                }
                x[base + a * stride + inner] = acc;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Lyapunov equation and a three-mode equation with a complex pair: residuals.
    #[test]
    fn two_and_three_mode_equations() {
        let n = 3;
        let j = [-1.0, 2.0, 0.3, -2.0, -1.0, 0.1, 0.0, 0.5, -3.0];
        let sc = ComplexSchur::new(&j, n);
        let s2 = [2.0, 0.5, 0.1, 0.5, 1.0, 0.2, 0.1, 0.2, 3.0];
        let mut y = sc.to_basis(&s2, 2);
        sc.solve(&mut y, 2).unwrap();
        let x = sc.from_basis(y, 2);
        for a in 0..n {
            for b in 0..n {
                let mut r = s2[a * n + b];
                for k in 0..n {
                    r += j[a * n + k] * x[k * n + b] + j[b * n + k] * x[a * n + k];
                }
                assert!(r.abs() < 1e-12, "{r}");
            }
        }
        let s3: Vec<f64> = (0..27).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
        let mut y = sc.to_basis(&s3, 3);
        sc.solve(&mut y, 3).unwrap();
        let x = sc.from_basis(y, 3);
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    let mut r = s3[a * 9 + b * 3 + c];
                    for k in 0..n {
                        r +=
                            j[a * n + k] * x[k * 9 + b * 3 + c] + j[b * n + k] * x[a * 9 + k * 3 + c] + j[c * n + k] * x[a * 9 + b * 3 + k];
                    }
                    assert!(r.abs() < 1e-12, "{r}");
                }
            }
        }
    }
}
