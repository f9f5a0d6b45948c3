//! Scalar roots with argmin's Brent method (the project's choice for scalar equations).

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

/// The root of a continuous increasing function `g` with `g(lo) < 0`, bracketed by doubling
/// `hi` (from `hi0 > lo`) until `g(hi) > 0`, then refined with Brent's method (argmin
/// `BrentRoot`, tolerance at machine precision).
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
    if g_hi == 0.0 {
        return Some(hi);
    }
    let solver = BrentRoot::new(lo, hi, 0.0);
    let result = Executor::new(Scalar(g), solver).configure(|s| s.param(hi).max_iters(300)).run().ok()?;
    result.state().get_best_param().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_bracketed_root_to_machine_precision() {
        let r = increasing_root(|x| x * x - 2.0, 0.0, 1.0).unwrap();
        assert!((r - 2f64.sqrt()).abs() < 1e-15, "{r}");
        assert_eq!(increasing_root(|x| x + 1.0, 0.0, 1.0), None);
    }
}
