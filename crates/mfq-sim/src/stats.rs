//! Point estimates and Student-t confidence intervals from batch means.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// A point estimate with a 95% confidence interval `mean +- half_width`.
///
/// `n` is the number of (approximately independent) observations the interval rests on: the
/// post-warm-up batch means of all replications, `replications * batches`. The half width is
/// `t_{0.975, n-1} s / sqrt(n)` with `s` the sample standard deviation of the `n` batch values;
/// for ratios (response time, loss and waiting probabilities) `s` is that of the linearised
/// residuals `u_j - R v_j`, divided by the mean denominator (delta method). Both are `NaN` when
/// the estimate is undefined (a ratio whose denominator is zero in every batch).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// The point estimate (units of the quantity estimated).
    pub mean: f64,
    /// Half width of the 95% confidence interval (same units as `mean`).
    pub half_width: f64,
    /// Number of batch means behind the interval (`replications * batches`).
    pub n: usize,
}

impl Estimate {
    /// The half width at another two-sided confidence level `confidence` in `(0, 1)`, e.g.
    /// `0.999`, rescaling by the ratio of Student-t quantiles with `n - 1` degrees of freedom.
    /// Used for simultaneous (Bonferroni) comparisons of several estimates.
    ///
    /// Returns `NaN` when `n < 2` or `confidence` is outside `(0, 1)`.
    pub fn half_width_at(&self, confidence: f64) -> f64 {
        if self.n < 2 || !(confidence > 0.0 && confidence < 1.0) {
            return f64::NAN;
        }
        let dof = (self.n - 1) as f64;
        self.half_width / t_quantile(dof, 0.975) * t_quantile(dof, 0.5 + confidence / 2.0)
    }

    /// Whether `value` lies in `mean +- (half_width_at(confidence) + allowance)`.
    pub fn covers(&self, value: f64, confidence: f64, allowance: f64) -> bool {
        (self.mean - value).abs() <= self.half_width_at(confidence) + allowance
    }
}

/// The `p` quantile of Student's t with `dof` degrees of freedom.
pub(crate) fn t_quantile(dof: f64, p: f64) -> f64 {
    StudentsT::new(0.0, 1.0, dof).expect("dof > 0").inverse_cdf(p)
}

fn half_width(sample_var: f64, n: usize) -> f64 {
    if n < 2 {
        return f64::NAN;
    }
    t_quantile((n - 1) as f64, 0.975) * (sample_var / n as f64).sqrt()
}

/// Mean of `v` with the 95% t interval that treats the values as independent.
pub(crate) fn mean_estimate(v: &[f64]) -> Estimate {
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = if n > 1 { v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64 } else { f64::NAN };
    Estimate { mean, half_width: half_width(var, n), n }
}

/// Ratio estimate `sum(num) / sum(den)` over batches, with the delta-method (linearised) 95%
/// interval: residuals `e_i = num_i - R den_i`, variance `s_e^2 / (n mean(den)^2)`.
pub(crate) fn ratio_estimate(num: &[f64], den: &[f64]) -> Estimate {
    let n = num.len();
    let (sn, sd) = (num.iter().sum::<f64>(), den.iter().sum::<f64>());
    if sd <= 0.0 {
        return Estimate { mean: f64::NAN, half_width: f64::NAN, n };
    }
    let r = sn / sd;
    let dbar = sd / n as f64;
    let var_e = if n > 1 { num.iter().zip(den).map(|(a, b)| (a - r * b).powi(2)).sum::<f64>() / (n - 1) as f64 } else { f64::NAN };
    Estimate { mean: r, half_width: half_width(var_e / (dbar * dbar), n), n }
}

/// Lag-1 autocorrelation of consecutive values within each group (groups = replications),
/// around the grand mean. `NaN` when there are no pairs or no variance.
pub(crate) fn lag1_autocorrelation(groups: &[Vec<f64>]) -> f64 {
    let all: Vec<f64> = groups.iter().flatten().copied().collect();
    if all.len() < 3 {
        return f64::NAN;
    }
    let m = all.iter().sum::<f64>() / all.len() as f64;
    let var = all.iter().map(|x| (x - m).powi(2)).sum::<f64>() / all.len() as f64;
    let (mut cov, mut pairs) = (0.0, 0usize);
    for g in groups {
        for w in g.windows(2) {
            cov += (w[0] - m) * (w[1] - m);
            pairs += 1;
        }
    }
    if pairs == 0 || var <= 0.0 {
        return f64::NAN;
    }
    cov / pairs as f64 / var
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        // Student-t table values (two-sided 95%): 12.706 (1 dof), 2.093 (19 dof), 1.960 (large)
        assert!((t_quantile(1.0, 0.975) - 12.7062).abs() < 1e-3);
        assert!((t_quantile(19.0, 0.975) - 2.0930).abs() < 1e-3);
        assert!((t_quantile(1e6, 0.975) - 1.95996).abs() < 1e-3);
    }

    #[test]
    fn mean_and_ratio_estimates() {
        let e = mean_estimate(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(e.mean, 2.5);
        // s = sqrt(5/3), t_{3} = 3.182446
        assert!((e.half_width - 3.182446 * (5.0f64 / 3.0 / 4.0).sqrt()).abs() < 1e-5);
        let r = ratio_estimate(&[2.0, 4.0, 6.0], &[1.0, 2.0, 3.0]);
        assert_eq!(r.mean, 2.0);
        assert_eq!(r.half_width, 0.0);
        assert!(ratio_estimate(&[0.0, 0.0], &[0.0, 0.0]).mean.is_nan());
        assert!((e.half_width_at(0.95) - e.half_width).abs() < 1e-12);
        assert!(e.half_width_at(0.999) > e.half_width);
    }
}
