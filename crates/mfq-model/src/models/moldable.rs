//! Moldable jobs with a concave speed-up and blocking: the fluid optimum of a static server
//! allocation, and the Erlang loss baselines. **Partial**: the functions
//! below are the model's closed forms; the kind (registry entry, mean-field drift, finite-n
//! simulation, docs page) is not written yet.
//!
//! The system (constructed here from the abstract of Ghanbarian, Mukhopadhyay, Mazumdar,
//! Guillemin, "On optimal server allocation for moldable jobs with concave speed-up",
//! arXiv 2406.09427, 2024; the paper's own allocation rule is not reproduced): `n` servers,
//! Poisson arrivals at rate `lambda n`, exponential work of mean 1; a job given `k` servers
//! (`1 <= k <= d`) keeps them for its whole life and runs at speed `s(k)`, with `s(1) = 1` and
//! `s` increasing and concave. A static randomised allocation gives `k` servers with
//! probability `p_k`. In the fluid limit without blocking, `z_k` (jobs holding `k` servers, per
//! server) satisfies `dz_k/dt = lambda p_k - s(k) z_k`, so `z_k = lambda p_k / s(k)`, the
//! servers in use are `lambda sum_k p_k k / s(k)` (at most 1) and the mean execution time of a
//! job is `sum_k p_k / s(k)`.

use crate::{out_of_range, ModelError};

/// Checks a speed-up table `s = [s(1), ..., s(d)]`: `s(1) = 1`, increasing, concave
/// (`s(k+1) - s(k)` non-increasing).
///
/// # Errors
/// [`ModelError::OutOfRange`] naming `model.d` (empty table, i.e. `d < 1`, or `d > 10000`) or
/// `model.speedup.values[i]` with the violated rule.
pub fn check_concave_speedup(s: &[f64]) -> Result<(), ModelError> {
    if s.is_empty() || s.len() > 10_000 {
        return Err(out_of_range("model.d", s.len(), "an integer in [1, 10000] (servers a job may use)"));
    }
    if let Some(i) = s.iter().position(|v| !v.is_finite()) {
        return Err(out_of_range(&format!("model.speedup.values[{i}]"), s[i], "a finite number"));
    }
    if (s[0] - 1.0).abs() > 1e-12 {
        return Err(out_of_range("model.speedup.values[0]", s[0], "1 (s(1) = 1: one server runs a job at unit speed)"));
    }
    for k in 1..s.len() {
        if s[k] <= s[k - 1] {
            return Err(out_of_range(
                &format!("model.speedup.values[{k}]"),
                s[k],
                &format!("s({}) > s({k}) = {} (the speed-up must be increasing)", k + 1, s[k - 1]),
            ));
        }
        if k >= 2 && s[k] - s[k - 1] > (s[k - 1] - s[k - 2]) * (1.0 + 1e-12) + 1e-15 {
            return Err(out_of_range(
                &format!("model.speedup.values[{k}]"),
                s[k],
                &format!("s({}) - s({k}) <= s({k}) - s({}) = {} (the speed-up must be concave)", k + 1, k - 1, s[k - 1] - s[k - 2]),
            ));
        }
    }
    Ok(())
}

/// A static allocation: `p[k - 1]` = probability of giving a job `k` servers.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// Allocation probabilities, `p[k - 1]` for `k` servers.
    pub p: Vec<f64>,
    /// Mean execution time of a job, `sum_k p_k / s(k)` (mean work 1).
    pub mean_execution_time: f64,
    /// Fraction of servers in use in the fluid limit, `lambda sum_k p_k k / s(k)`.
    pub occupancy: f64,
}

/// The static allocation that minimises the fluid mean execution time `sum_k p_k / s(k)` subject
/// to `lambda sum_k p_k k / s(k) <= 1` (no blocking in the fluid limit): a linear program with
/// two constraints, solved exactly by enumerating its vertices (allocations on one size, or on
/// two sizes with the occupancy constraint binding). `None` when `lambda > 1` (every allocation
/// overloads the servers: `k / s(k) >= 1`).
///
/// # Errors
/// As [`check_concave_speedup`]; `model.lambda` when not finite or `<= 0`.
pub fn fluid_optimal_allocation(lambda: f64, s: &[f64]) -> Result<Option<Allocation>, ModelError> {
    check_concave_speedup(s)?;
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(out_of_range("model.lambda", lambda, "a finite number > 0 (arrivals per server per mean work)"));
    }
    let d = s.len();
    let a: Vec<f64> = (0..d).map(|i| (i + 1) as f64 / s[i]).collect(); // servers x time per job
    let cap = 1.0 / lambda;
    let tol = 1e-12;
    let mut best: Option<(f64, usize, usize, f64)> = None; // (cost, i, j, weight on j)
    let mut consider = |cost: f64, i: usize, j: usize, w: f64| {
        if best.is_none_or(|b| cost < b.0 - 1e-15) {
            best = Some((cost, i, j, w));
        }
    };
    for i in 0..d {
        if a[i] <= cap * (1.0 + tol) {
            consider(1.0 / s[i], i, i, 0.0);
        }
        for j in i + 1..d {
            if a[j] > a[i] {
                let w = (cap - a[i]) / (a[j] - a[i]);
                if (0.0..=1.0).contains(&w) {
                    consider((1.0 - w) / s[i] + w / s[j], i, j, w);
                }
            }
        }
    }
    Ok(best.map(|(cost, i, j, w)| {
        let mut p = vec![0.0; d];
        p[i] += 1.0 - w;
        p[j] += w;
        let occupancy = lambda * p.iter().zip(&a).map(|(p, a)| p * a).sum::<f64>();
        Allocation { p, mean_execution_time: cost, occupancy }
    }))
}

/// Erlang's loss formula `B(load, c)`: the blocking probability of `c` servers offered `load`
/// Erlangs (A. K. Erlang 1917), by the stable recursion `B(a, 0) = 1`,
/// `B(a, c) = a B(a, c-1) / (c + a B(a, c-1))`.
pub fn erlang_b(load: f64, servers: usize) -> f64 {
    (1..=servers).fold(1.0, |b, c| load * b / (c as f64 + load * b))
}

/// Blocking probability of the baseline "every job gets exactly `k` servers, and is blocked if
/// fewer than `k` are idle" with `n` servers: an Erlang loss system of `floor(n / k)` groups of
/// `k` servers offered `lambda n / s(k)` Erlangs (its blocking is insensitive to the law of the
/// work, Sevastyanov 1957).
pub fn fixed_k_blocking(n: usize, lambda: f64, k: usize, s_k: f64) -> f64 {
    erlang_b(lambda * n as f64 / s_k, n / k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqrt_table(d: usize) -> Vec<f64> {
        (1..=d).map(|k| (k as f64).sqrt()).collect()
    }

    /// s(k) = sqrt(k), d = 8: the occupancy constraint is `lambda sum p_k sqrt(k) <= 1`. By hand:
    /// lambda = 0.3: every job on 8 servers (0.3 sqrt 8 < 1), time 1/sqrt 8; lambda = 0.5: on 4
    /// (0.5 * 2 = 1), time 1/2; lambda = 0.7: sqrt k must average 1/0.7, between k = 2 and 3, so
    /// p_3 = (1/0.7 - sqrt 2)/(sqrt 3 - sqrt 2); lambda = 1: one server each; lambda > 1: none.
    #[test]
    fn the_fluid_optimum_by_hand() {
        let s = sqrt_table(8);
        let a = fluid_optimal_allocation(0.3, &s).unwrap().unwrap();
        assert_eq!(a.p[7], 1.0);
        assert!((a.mean_execution_time - 1.0 / 8f64.sqrt()).abs() < 1e-15);
        let a = fluid_optimal_allocation(0.5, &s).unwrap().unwrap();
        assert!((a.p[3] - 1.0).abs() < 1e-12 && (a.mean_execution_time - 0.5).abs() < 1e-12 && (a.occupancy - 1.0).abs() < 1e-12);
        let a = fluid_optimal_allocation(0.7, &s).unwrap().unwrap();
        let p3 = (1.0 / 0.7 - 2f64.sqrt()) / (3f64.sqrt() - 2f64.sqrt());
        assert!((a.p[2] - p3).abs() < 1e-12 && (a.p[1] - (1.0 - p3)).abs() < 1e-12, "{a:?}");
        assert!((a.mean_execution_time - ((1.0 - p3) / 2f64.sqrt() + p3 / 3f64.sqrt())).abs() < 1e-12);
        assert!((a.mean_execution_time - 0.7012).abs() < 1e-4 && (a.occupancy - 1.0).abs() < 1e-12);
        let a = fluid_optimal_allocation(1.0, &s).unwrap().unwrap();
        assert_eq!((a.p[0], a.mean_execution_time), (1.0, 1.0));
        assert_eq!(fluid_optimal_allocation(1.2, &s).unwrap(), None);
    }

    /// Amdahl's law with serial fraction 0.1, `s(k) = 1 / (0.1 + 0.9 / k)`, so `k / s(k) =
    /// 0.1 k + 0.9`: at lambda = 0.9 the servers per job must average `1/0.9`, i.e.
    /// `0.1 E[k] + 0.9 = 1/0.9`, `E[k] = 2.111`: k = 2 w.p. 8/9, k = 3 w.p. 1/9.
    #[test]
    fn amdahl_optimum_by_hand() {
        let s: Vec<f64> = (1..=8).map(|k| 1.0 / (0.1 + 0.9 / k as f64)).collect();
        let a = fluid_optimal_allocation(0.9, &s).unwrap().unwrap();
        assert!((a.p[1] - 8.0 / 9.0).abs() < 1e-12 && (a.p[2] - 1.0 / 9.0).abs() < 1e-12, "{a:?}");
        assert!((a.mean_execution_time - (8.0 / 9.0 * (0.1 + 0.45) + 1.0 / 9.0 * (0.1 + 0.3))).abs() < 1e-12);
        let a = fluid_optimal_allocation(0.5, &s).unwrap().unwrap();
        assert_eq!(a.p[7], 1.0);
        assert!((a.mean_execution_time - (0.1 + 0.9 / 8.0)).abs() < 1e-15);
    }

    /// The recursion against the defining sum `B = (a^c / c!) / sum_{i <= c} a^i / i!`, in logs.
    #[test]
    fn erlang_b_equals_its_defining_sum() {
        for (a, c) in [(25.0, 25usize), (50.0, 100), (3.5, 2), (100.0, 80), (12.0, 0)] {
            let terms: Vec<f64> = (0..=c).map(|i| i as f64 * f64::ln(a) - (1..=i).map(|j| (j as f64).ln()).sum::<f64>()).collect();
            let top = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = terms.iter().map(|t| (t - top).exp()).sum();
            let want = (terms[c] - top).exp() / sum;
            assert!((erlang_b(a, c) - want).abs() < 1e-13 * want.max(1e-300), "B({a}, {c}) = {} vs {want}", erlang_b(a, c));
        }
        // n = 100, lambda = 0.5, sqrt speed-up, every job on 4 servers: B(25, 25), critical
        assert!((fixed_k_blocking(100, 0.5, 4, 2.0) - erlang_b(25.0, 25)).abs() < 1e-15);
    }

    #[test]
    fn bad_speedups_name_the_entry_and_the_rule() {
        let e = check_concave_speedup(&[1.0, 1.5, 2.2]).unwrap_err().to_string();
        assert!(e.contains("model.speedup.values[2] = 2.2") && e.contains("concave"), "{e}");
        let e = check_concave_speedup(&[1.0, 0.9]).unwrap_err().to_string();
        assert!(e.contains("model.speedup.values[1] = 0.9") && e.contains("increasing"), "{e}");
        let e = check_concave_speedup(&[1.1, 1.5]).unwrap_err().to_string();
        assert!(e.contains("model.speedup.values[0] = 1.1") && e.contains("s(1) = 1"), "{e}");
        let e = check_concave_speedup(&[]).unwrap_err().to_string();
        assert!(e.contains("model.d = 0"), "{e}");
        assert!(fluid_optimal_allocation(0.0, &[1.0]).unwrap_err().to_string().contains("model.lambda = 0"));
        assert!(check_concave_speedup(&sqrt_table(16)).is_ok());
    }
}
