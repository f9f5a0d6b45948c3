//! The one-parameter family `F(x, mu) = f(x; lambda(mu))` on which the continuation works:
//! evaluation of the drift with its extended Jacobian `[F_x | F_mu]`, the Newton corrector, the
//! data of a point on a branch (tangent, orientation, stability) and the bracketed refinement of
//! a test function between two points.

use crate::stability::{classify, local_stability, EquilibriumKind};
use mfq_model::{Jacobian, MeanFieldModel, ModelError};
use nalgebra::{DMatrix, DVector};

use super::ModelAt;

/// Step of the central difference `F_mu ~ (F(mu + h) - F(mu - h)) / 2h` in the scaled parameter
/// `mu` (`lambda = start + mu (end - start)`): about the cube root of the machine epsilon, so that
/// the truncation error `O(h^2)` and the round-off `O(eps / h)` are both about `1e-11`.
const FD_STEP: f64 = 6e-6;

/// Newton iterations of one corrector solve before it counts as failed.
const MAX_NEWTON: usize = 12;

/// The family of models along the swept parameter, in the scaled parameter `mu in [0, 1]`.
pub(super) struct Family<'a> {
    pub model_at: &'a ModelAt<'a>,
    /// `lambda` at `mu = 0`.
    pub start: f64,
    /// `end - start`.
    pub span: f64,
    /// The state dimension.
    pub n: usize,
    /// Corrector tolerance on `max |F|`.
    pub tol: f64,
    /// Degeneracy tolerance of [`classify`].
    pub degeneracy_tol: f64,
    /// Eigenvalues only up to this dimension.
    pub max_dim_for_eigenvalues: usize,
}

/// A point of a branch with what the test functions need.
#[derive(Debug, Clone)]
pub(super) struct Node {
    /// `(x, mu)`.
    pub u: Vec<f64>,
    /// Unit tangent `(dx/ds, dmu/ds)`, oriented as the tangent it was computed from.
    pub t: Vec<f64>,
    /// `det [F_x F_mu; t_prev^T]`: changes sign at a simple branch point only.
    pub det: f64,
    /// Spectral abscissa of `F_x` (NaN when not computed).
    pub alpha: f64,
    /// Imaginary part of the rightmost eigenvalue.
    pub alpha_im: f64,
    /// `||F_x||_inf`.
    pub norm: f64,
    /// `max |F(u)|`.
    pub residual: f64,
}

impl Node {
    /// The local character by the one rule of `classify`.
    pub fn kind(&self, tol: f64) -> EquilibriumKind {
        classify(self.alpha, self.norm, tol)
    }
    /// The parameter component `dmu/ds` of the tangent (zero at a fold).
    pub fn t_mu(&self) -> f64 {
        *self.t.last().expect("non-empty")
    }
    /// `mu`.
    pub fn mu(&self) -> f64 {
        *self.u.last().expect("non-empty")
    }
}

fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, a| if a.is_finite() { m.max(a.abs()) } else { f64::INFINITY })
}

impl Family<'_> {
    /// `lambda(mu)`.
    pub fn lambda(&self, mu: f64) -> f64 {
        self.start + mu * self.span
    }

    /// The model at `mu`, of the family's dimension.
    pub fn model(&self, mu: f64) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        let m = (self.model_at)(self.lambda(mu))?;
        if m.dim() != self.n {
            return Err(mfq_model::out_of_range(
                "branch parameter",
                self.lambda(mu),
                &format!("a value at which the model keeps its dimension {} (it has {})", self.n, m.dim()),
            ));
        }
        Ok(m)
    }

    /// `F(u)` into `f` and `[F_x | F_mu]` into the first `n` rows of `a` (`(n + 1) x (n + 1)`).
    /// `F_x` is the model's Jacobian (analytic when it has one); `F_mu` is a central difference
    /// of the drift in `mu` ([`FD_STEP`]), one-sided of second order where `mu +- h` is outside
    /// the model's parameter range (e.g. `alpha = 0 - h`).
    pub fn eval(&self, u: &[f64], f: &mut [f64], a: &mut DMatrix<f64>) -> Result<(), ModelError> {
        let n = self.n;
        let (x, mu) = (&u[..n], u[n]);
        let model = self.model(mu)?;
        model.drift(x, f);
        let mut jac = Jacobian::new(n, model.sparsity());
        model.jacobian(x, &mut jac);
        let dense = jac.to_dense();
        for i in 0..n {
            for j in 0..n {
                a[(i, j)] = dense[i * n + j];
            }
        }
        let drift_at = |m: &dyn MeanFieldModel| {
            let mut g = vec![0.0; n];
            m.drift(x, &mut g);
            g
        };
        let h = FD_STEP;
        let col: Vec<f64> = match (self.model(mu + h), self.model(mu - h)) {
            (Ok(p), Ok(m)) => drift_at(p.as_ref()).iter().zip(drift_at(m.as_ref())).map(|(p, m)| (p - m) / (2.0 * h)).collect(),
            (Ok(p), Err(_)) => {
                let p2 = drift_at(self.model(mu + 2.0 * h)?.as_ref());
                drift_at(p.as_ref()).iter().zip(p2).zip(f.iter()).map(|((p1, p2), f0)| (-3.0 * f0 + 4.0 * p1 - p2) / (2.0 * h)).collect()
            }
            (Err(_), Ok(m)) => {
                let m2 = drift_at(self.model(mu - 2.0 * h)?.as_ref());
                drift_at(m.as_ref()).iter().zip(m2).zip(f.iter()).map(|((m1, m2), f0)| (3.0 * f0 - 4.0 * m1 + m2) / (2.0 * h)).collect()
            }
            (Err(e), Err(_)) => return Err(e),
        };
        for (i, v) in col.into_iter().enumerate() {
            a[(i, n)] = v;
        }
        Ok(())
    }

    /// Newton's method on `F(v) = 0`, `c . (v - u_ref) = target` from `v` (the pseudo-arclength
    /// corrector when `c` is the previous tangent; with `c = e_mu` it lands on a given `mu`).
    /// `None` when it does not converge in [`MAX_NEWTON`] iterations or leaves the finite numbers.
    pub fn correct(&self, mut v: Vec<f64>, c: &[f64], u_ref: &[f64], target: f64) -> Result<Option<Vec<f64>>, ModelError> {
        let n = self.n;
        let mut f = vec![0.0; n];
        let mut a = DMatrix::zeros(n + 1, n + 1);
        for _ in 0..=MAX_NEWTON {
            self.eval(&v, &mut f, &mut a)?;
            let g = c.iter().zip(&v).zip(u_ref).map(|((c, v), u)| c * (v - u)).sum::<f64>() - target;
            if inf_norm(&f) <= self.tol && g.abs() <= self.tol {
                return Ok(Some(v));
            }
            for (j, cj) in c.iter().enumerate() {
                a[(n, j)] = *cj;
            }
            let mut rhs = DVector::from_iterator(n + 1, f.iter().map(|v| -v).chain(std::iter::once(-g)));
            if !a.clone().lu().solve_mut(&mut rhs) || rhs.iter().any(|d| !d.is_finite()) {
                return Ok(None);
            }
            v.iter_mut().zip(rhs.iter()).for_each(|(v, d)| *v += d);
        }
        Ok(None)
    }

    /// The data of the point `u` (a corrected point) with the tangent oriented as `t_prev`:
    /// `t` solves `[F_x F_mu; t_prev^T] t = e_{n+1}` (so `t . t_prev > 0`), normalised; the
    /// determinant of that matrix; the eigenvalues of `F_x` (`local_stability`).
    pub fn node(&self, u: Vec<f64>, t_prev: &[f64]) -> Result<Option<Node>, ModelError> {
        let n = self.n;
        let mut f = vec![0.0; n];
        let mut a = DMatrix::zeros(n + 1, n + 1);
        self.eval(&u, &mut f, &mut a)?;
        for (j, tj) in t_prev.iter().enumerate() {
            a[(n, j)] = *tj;
        }
        let norm = (0..n).map(|i| (0..n).map(|j| a[(i, j)].abs()).sum::<f64>()).fold(0.0, f64::max);
        let lu = a.lu();
        let det = lu.determinant();
        let mut e = DVector::zeros(n + 1);
        e[n] = 1.0;
        let Some(t) = lu.solve(&e) else { return Ok(None) };
        let len = t.norm();
        if !(len.is_finite() && len > 0.0) {
            return Ok(None);
        }
        let t: Vec<f64> = t.iter().map(|v| v / len).collect();
        let (alpha, alpha_im) = if n <= self.max_dim_for_eigenvalues {
            let model = self.model(u[n])?;
            let ls = local_stability(model.as_ref(), &u[..n]);
            (ls.spectral_abscissa, ls.eigenvalues.first().map_or(f64::NAN, |e| e.1))
        } else {
            (f64::NAN, f64::NAN)
        };
        Ok(Some(Node { residual: inf_norm(&f), u, t, det, alpha, alpha_im, norm }))
    }

    /// The point at arclength `s` from `a` along its tangent (predictor `a.u + s a.t`, corrector
    /// on the hyperplane `a.t . (v - a.u) = s`), with the tangent oriented as `a.t`.
    pub fn at_arclength(&self, a: &Node, s: f64) -> Result<Option<Node>, ModelError> {
        self.along(a, &a.t, s)
    }

    /// The point at distance `s` from `a` in the unit direction `c` (predictor `a.u + s c`,
    /// corrector on the hyperplane `c . (v - a.u) = s`), with the tangent oriented as `a.t`.
    fn along(&self, a: &Node, c: &[f64], s: f64) -> Result<Option<Node>, ModelError> {
        let pred: Vec<f64> = a.u.iter().zip(c).map(|(u, c)| u + s * c).collect();
        match self.correct(pred, c, &a.u, s)? {
            Some(v) => self.node(v, &a.t),
            None => Ok(None),
        }
    }

    /// The zero of the test function `test` between the consecutive points `a` and `b` of a
    /// branch, where it changes sign: a bracketed solve in the distance `s` from `a` along the
    /// chord from `a` to `b` (corrector on the hyperplanes normal to the chord; regula
    /// falsi with the Illinois modification, alternating with bisection so that the bracket at
    /// least halves every two steps) until the bracket is shorter than `s_tol`. Returns the end
    /// of the last bracket where `|test|` is smaller.
    pub fn refine(&self, a: &Node, b: &Node, test: fn(&Node) -> f64, s_tol: f64) -> Result<Node, ModelError> {
        // along the chord from a to b: near a branch point the chord's hyperplanes cut the other
        // branch far from the predictor (the tangent's, tilted, may cut it close by)
        let chord: Vec<f64> = b.u.iter().zip(&a.u).map(|(p, q)| p - q).collect();
        let s_b = chord.iter().map(|v| v * v).sum::<f64>().sqrt();
        let chord: Vec<f64> = chord.iter().map(|v| v / s_b).collect();
        let (mut s0, mut g0, mut n0) = (0.0, test(a), a.clone());
        let (mut s1, mut g1, mut n1) = (s_b, test(b), b.clone());
        let mut side = 0i8;
        // failed evaluations in a row: the next point is then at these fractions of the bracket
        let mut fails = 0;
        const FALLBACK: [f64; 3] = [0.5, 0.3, 0.7];
        for iter in 0..200 {
            if (s1 - s0).abs() <= s_tol || g0 == 0.0 || g1 == 0.0 {
                break;
            }
            let secant = s1 - g1 * (s1 - s0) / (g1 - g0);
            // strictly inside, by comparisons (a product of the two differences underflows for a
            // bracket near 1e-160 wide)
            let inside = secant.is_finite() && secant > s0.min(s1) && secant < s0.max(s1);
            let s = if fails > 0 || iter % 2 == 1 || !inside { s0 + FALLBACK[fails] * (s1 - s0) } else { secant };
            // a corrector that fails, or slides onto another branch (near a branch point both cut
            // the hyperplane; the other one's tangent is far from the chord), gives no sign: try
            // other points of the bracket, and stop after three failures in a row. At a branch
            // point itself `[F_x F_mu]` loses rank and the computed tangent is round-off: a point
            // whose test value is round-off next to the bracket's is the zero.
            let Some(raw) = self.along(a, &chord, s)? else {
                fails += 1;
                if fails == FALLBACK.len() {
                    break;
                }
                continue;
            };
            let scale = test(&n0).abs().max(test(&n1).abs());
            if test(&raw).abs() <= 1e-9 * scale {
                return Ok(raw);
            }
            let cos: f64 = raw.t.iter().zip(&chord).map(|(p, q)| p * q).sum();
            if !(along_chord(a, b, &raw) && cos > 0.8) {
                fails += 1;
                if fails == FALLBACK.len() {
                    break;
                }
                continue;
            }
            fails = 0;
            let node = raw;
            let g = test(&node);
            if !g.is_finite() {
                break;
            }
            if (g > 0.0) == (g1 > 0.0) {
                (s1, g1, n1) = (s, g, node);
                if side == 1 {
                    g0 *= 0.5;
                }
                side = 1;
            } else {
                (s0, g0, n0) = (s, g, node);
                if side == -1 {
                    g1 *= 0.5;
                }
                side = -1;
            }
        }
        Ok(if test(&n0).abs() <= test(&n1).abs() { n0 } else { n1 })
    }
}

/// Whether `node` lies in the direction of the chord from `a` to `b` (angle below about 25
/// degrees as seen from `a`): a point of the same short piece of branch does, a corrector that
/// slid far onto another branch does not.
fn along_chord(a: &Node, b: &Node, node: &Node) -> bool {
    let d1: Vec<f64> = b.u.iter().zip(&a.u).map(|(p, q)| p - q).collect();
    let d2: Vec<f64> = node.u.iter().zip(&a.u).map(|(p, q)| p - q).collect();
    let dot: f64 = d1.iter().zip(&d2).map(|(p, q)| p * q).sum();
    let (n1, n2) = (d1.iter().map(|v| v * v).sum::<f64>().sqrt(), d2.iter().map(|v| v * v).sum::<f64>().sqrt());
    n2 == 0.0 || dot > 0.9 * n1 * n2
}
