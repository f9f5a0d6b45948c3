//! Symmetric moment tensors of order 2 and 3 in the Schur basis of the Jacobian.
//!
//! With `J = U T U^H` (`U` unitary, `T` upper triangular), the equations
//! `sum_modes J x_mode X + S = 0` for an order-`r` tensor `X` (`r = 2`: `J X + X J^T + S = 0`;
//! `r = 3`: the same with three modes) become `sum_modes T x_mode Y + S~ = 0` with
//! `X = Y x_1 U ... x_r U` and `S~ = S x_1 U^H ... x_r U^H` (mode products, each a matrix
//! product), which is solved entry by entry from the last multi-index backwards:
//! `O(r n^(r+1))` operations. When every eigenvalue of `J` is real (JSQ(d): a tridiagonal `J`
//! with positive off-diagonal products) the real Schur form is triangular and everything stays
//! real; otherwise the complex Schur form is used.

use crate::RefinedError;
use mfq_model::Deadline;
use nalgebra::{Complex, ComplexField, DMatrix, DMatrixView};

/// A complex number.
pub type C64 = Complex<f64>;

/// A Schur form `J = U T U^H` over `f64` (real spectrum) or `C64`.
#[derive(Debug, Clone)]
pub struct Schur<T: ComplexField> {
    /// Dimension.
    pub n: usize,
    /// `U`, unitary.
    pub u: DMatrix<T>,
    /// `T`, upper triangular.
    pub t: DMatrix<T>,
}

/// The Schur form of `J`: real when the real Schur form is triangular, complex otherwise.
#[derive(Debug, Clone)]
pub enum ComplexSchur {
    /// Every eigenvalue real.
    Real(Schur<f64>),
    /// Complex pairs.
    Complex(Schur<C64>),
}

impl ComplexSchur {
    /// The Schur form of the row-major real matrix `j` (`n x n`) (nalgebra's QR iteration).
    pub fn new(j: &[f64], n: usize) -> Self {
        let m = DMatrix::from_row_slice(n, n, j);
        let scale = m.amax().max(1.0);
        let (u, mut t) = m.clone().schur().unpack();
        if (1..n).all(|i| t[(i, i - 1)].abs() <= 1e-14 * scale) {
            for i in 1..n {
                for k in 0..i {
                    t[(i, k)] = 0.0;
                }
            }
            return ComplexSchur::Real(Schur { n, u, t });
        }
        let mc = m.map(|v| C64::new(v, 0.0));
        let (u, mut t) = mc.schur().unpack();
        for i in 1..n {
            for k in 0..i {
                t[(i, k)] = C64::new(0.0, 0.0);
            }
        }
        ComplexSchur::Complex(Schur { n, u, t })
    }

    /// Solves `sum_modes J x_mode X + S = 0` for the real order-`r` tensor `X` (`n^r` entries,
    /// row-major), given `S`, within `deadline`: looked at once per outer row (a first index of
    /// the back substitution, `O(r n^r)` operations; a block of `n^r` of a mode product), never
    /// in the inner loops.
    ///
    /// # Errors
    /// [`RefinedError::Singular`] when `r` eigenvalues of `J` sum to zero;
    /// [`RefinedError::Stopped`] when `deadline` passes.
    pub fn solve_real(&self, s: &[f64], r: usize, deadline: &Deadline) -> Result<Vec<f64>, RefinedError> {
        match self {
            ComplexSchur::Real(sc) => sc.solve_tensor(s, r, deadline),
            ComplexSchur::Complex(sc) => sc.solve_tensor(s, r, deadline),
        }
    }
}

/// [`RefinedError::Stopped`] in the solve for an order-`r` tensor when `deadline` has passed.
fn check(deadline: &Deadline, r: usize) -> Result<(), RefinedError> {
    if deadline.expired() {
        return Err(RefinedError::Stopped { during: format!("the order-{r} moment tensor of the 1/N^2 term"), reason: deadline.reason() });
    }
    Ok(())
}

impl<T: ComplexField<RealField = f64> + Copy> Schur<T> {
    /// `X = -(sum_modes T x_mode)^{-1} S` mapped back: the real part of the solution.
    fn solve_tensor(&self, s: &[f64], r: usize, deadline: &Deadline) -> Result<Vec<f64>, RefinedError> {
        let n = self.n;
        let uh = self.u.adjoint();
        let mut y: Vec<T> = s.iter().map(|&v| T::from_real(v)).collect();
        for mode in 0..r {
            mode_product(&mut y, n, r, mode, &uh, deadline)?;
        }
        self.solve(&mut y, r, deadline)?;
        for mode in 0..r {
            mode_product(&mut y, n, r, mode, &self.u, deadline)?;
        }
        Ok(y.iter().map(|c| c.real()).collect())
    }

    /// Solves `sum_modes T x_mode Y = -S~` in place (`rhs` holds `S~` on entry, `Y` on exit),
    /// looking at `deadline` once per first index (every `n^(r-1)` entries).
    fn solve(&self, rhs: &mut [T], r: usize, deadline: &Deadline) -> Result<(), RefinedError> {
        let n = self.n;
        let strides: Vec<usize> = (0..r).map(|k| n.pow((r - 1 - k) as u32)).collect();
        // rows of T, row-major, for contiguous access
        let t: Vec<T> = (0..n * n).map(|e| self.t[(e / n, e % n)]).collect();
        let mut idx = vec![0usize; r];
        for lin in (0..rhs.len()).rev() {
            if (lin + 1) % strides[0] == 0 {
                check(deadline, r)?;
            }
            let mut rem = lin;
            for k in 0..r {
                idx[k] = rem / strides[k];
                rem %= strides[k];
            }
            let mut acc = -rhs[lin];
            let mut diag = T::zero();
            for k in 0..r {
                let a = idx[k];
                diag += t[a * n + a];
                let st = strides[k];
                for (step, tv) in t[a * n + a + 1..(a + 1) * n].iter().enumerate() {
                    acc -= *tv * rhs[lin + (step + 1) * st];
                }
            }
            if diag.modulus() < 1e-300 {
                return Err(RefinedError::Singular(format!("{r} eigenvalues of the Jacobian sum to zero")));
            }
            rhs[lin] = acc / diag;
        }
        Ok(())
    }
}

/// `x <- x x_mode M`: `out[.., a, ..] = sum_i M[(a, i)] x[.., i, ..]` along `mode` of an order-`r`
/// tensor (row-major, `n` entries per mode), as matrix products of at most `n` of the tensor's
/// `n^(r-1)` rows (or columns) at a time (`n^3` operations each), with a look at `deadline`
/// before each.
///
/// # Errors
/// [`RefinedError::Stopped`] when `deadline` passes (`x` is then partly transformed).
fn mode_product<T: ComplexField + Copy>(
    x: &mut [T],
    n: usize,
    r: usize,
    mode: usize,
    m: &DMatrix<T>,
    deadline: &Deadline,
) -> Result<(), RefinedError> {
    let stride = n.pow((r - 1 - mode) as u32);
    let outer = n.pow(mode as u32);
    if stride == 1 {
        // the last mode: x as the column-major n x n^(r-1) matrix Z, out = M Z, n columns
        // (contiguous) at a time
        for cols in x.chunks_mut(n * n) {
            check(deadline, r)?;
            let z = DMatrixView::from_slice(cols, n, cols.len() / n);
            let out = m * z;
            cols.copy_from_slice(out.as_slice());
        }
        return Ok(());
    }
    let mt = m.transpose();
    for o in 0..outer {
        let block = &mut x[o * n * stride..(o + 1) * n * stride];
        // column-major (stride x n) view: element (inner, i) = x[o, i, inner]; out = Y M^T, n
        // rows of Y at a time (a row's output depends on that row only)
        for first in (0..stride).step_by(n) {
            check(deadline, r)?;
            let rows = n.min(stride - first);
            let out = DMatrixView::from_slice(block, stride, n).rows(first, rows) * &mt;
            for i in 0..n {
                block[i * stride + first..i * stride + first + rows].copy_from_slice(&out.as_slice()[i * rows..(i + 1) * rows]);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(j: &[f64], n: usize, want_real: bool) {
        let sc = ComplexSchur::new(j, n);
        assert_eq!(matches!(sc, ComplexSchur::Real(_)), want_real);
        let s2: Vec<f64> = (0..n * n).map(|e| if e / n == e % n { 2.0 + (e / n) as f64 } else { 0.3 }).collect();
        let x = sc.solve_real(&s2, 2, &Deadline::none()).unwrap();
        for a in 0..n {
            for b in 0..n {
                let mut r = s2[a * n + b];
                for k in 0..n {
                    r += j[a * n + k] * x[k * n + b] + j[b * n + k] * x[a * n + k];
                }
                assert!(r.abs() < 1e-12, "{r}");
            }
        }
        let s3: Vec<f64> = (0..n * n * n).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
        let x = sc.solve_real(&s3, 3, &Deadline::none()).unwrap();
        let nn = n * n;
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    let mut r = s3[a * nn + b * n + c];
                    for k in 0..n {
                        r += j[a * n + k] * x[k * nn + b * n + c]
                            + j[b * n + k] * x[a * nn + k * n + c]
                            + j[c * n + k] * x[a * nn + b * n + k];
                    }
                    assert!(r.abs() < 1e-12, "{r}");
                }
            }
        }
    }

    /// A Lyapunov equation and a three-mode equation, with a complex pair and with a real
    /// spectrum: residuals.
    #[test]
    fn two_and_three_mode_equations() {
        check(&[-1.0, 2.0, 0.3, -2.0, -1.0, 0.1, 0.0, 0.5, -3.0], 3, false);
        check(&[-2.0, 1.0, 0.0, 0.5, -3.0, 1.0, 0.0, 0.7, -1.5], 3, true);
    }
}
