//! Scalar roots with argmin's Brent method (the project's choice for scalar equations).
//!
//! A bracket is tested with signs (`signum`), never with the product `g(lo) g(hi)`: the product
//! of two tiny values of the same sign underflows to zero and would accept a non-bracket (argmin's
//! `BrentRoot` tests the product, so every call goes through [`bracketed_root`]).

use argmin::core::{CostFunction, Error, Executor, State};
use argmin::solver::brent::BrentRoot;

/// A scalar function as an argmin problem.
struct Scalar<G>(G);

impl<G: Fn(f64) -> f64> CostFunction for Scalar<G> {
    type Param = f64;
    type Output = f64;
    fn cost(&self, p: &f64) -> Result<f64, Error> {
        Ok((self.0)(*p))
    }
}

/// The root of a continuous `g` in `[lo, hi]` by Brent's method (argmin `BrentRoot`,
/// tolerance `tol`; 0 means machine precision).
///
/// Returns `None` unless `[lo, hi]` brackets a root: both ends finite and of opposite sign
/// (tested with `signum`, so `g(lo) = g(hi) = 1e-200` is refused), or an end where `g` is
/// exactly zero (returned as is).
pub(crate) fn bracketed_root(g: impl Fn(f64) -> f64, lo: f64, hi: f64, tol: f64) -> Option<f64> {
    let (g_lo, g_hi) = (g(lo), g(hi));
    if !(g_lo.is_finite() && g_hi.is_finite() && lo.is_finite() && hi.is_finite()) {
        return None;
    }
    if g_lo == 0.0 {
        return Some(lo);
    }
    if g_hi == 0.0 {
        return Some(hi);
    }
    if g_lo.signum() == g_hi.signum() {
        return None;
    }
    let solver = BrentRoot::new(lo, hi, tol);
    let result = Executor::new(Scalar(g), solver).configure(|s| s.param(0.5 * (lo + hi)).max_iters(300)).run().ok()?;
    result.state().get_best_param().copied()
}

/// The root of a continuous increasing function `g` with `g(lo) < 0`, bracketed by doubling
/// `hi` (from `hi0 > lo`) until `g(hi) > 0`, then refined with [`bracketed_root`] (tolerance
/// at machine precision).
///
/// Returns `None` when `g(lo) >= 0` or no sign change is found within 200 doublings.
pub(crate) fn increasing_root(g: impl Fn(f64) -> f64, lo: f64, hi0: f64) -> Option<f64> {
    let g_lo = g(lo);
    if g_lo.is_nan() || g_lo >= 0.0 {
        return (g_lo == 0.0).then_some(lo);
    }
    let mut hi = hi0;
    let mut g_hi = g(hi);
    let mut doublings = 0;
    while g_hi.is_nan() || g_hi < 0.0 {
        if doublings == 200 || g_hi.is_nan() {
            return None;
        }
        hi = lo + 2.0 * (hi - lo);
        g_hi = g(hi);
        doublings += 1;
    }
    bracketed_root(g, lo, hi, 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_bracketed_root_to_machine_precision() {
        let r = increasing_root(|x| x * x - 2.0, 0.0, 1.0).unwrap();
        assert!((r - 2f64.sqrt()).abs() < 1e-15, "{r}");
        assert_eq!(increasing_root(|x| x + 1.0, 0.0, 1.0), None);
        let r = bracketed_root(|x: f64| x.cos(), 1.0, 2.0, 0.0).unwrap();
        assert!((r - std::f64::consts::FRAC_PI_2).abs() < 1e-15, "{r}");
    }

    #[test]
    fn tiny_ends_of_the_same_sign_are_not_a_bracket() {
        // the product 1e-200 * 1e-200 underflows to 0: a product test would accept this
        assert_eq!((1e-200f64 * 1e-200f64), 0.0);
        assert_eq!(bracketed_root(|_| 1e-200, 0.0, 1.0, 0.0), None);
        assert_eq!(bracketed_root(|x| if x < 0.5 { 1e-200 } else { 2e-200 }, 0.0, 1.0, 0.0), None);
        assert_eq!(bracketed_root(|_| -1e-200, 0.0, 1.0, 0.0), None);
        // tiny ends of opposite sign are a bracket: the root of 1e-200 (x - 0.25)
        let r = bracketed_root(|x| 1e-200 * (x - 0.25), 0.0, 1.0, 0.0).unwrap();
        assert!((r - 0.25).abs() < 1e-15, "{r}");
        // an increasing function that stays at +-1e-200-scale values without crossing
        assert_eq!(increasing_root(|x| -1e-200 / (1.0 + x), 0.0, 1.0), None);
        // non-finite ends are refused
        assert_eq!(bracketed_root(|x| if x > 0.5 { f64::NAN } else { -1.0 }, 0.0, 1.0, 0.0), None);
    }
}
