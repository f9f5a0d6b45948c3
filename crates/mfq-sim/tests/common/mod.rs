//! Shared helpers of the family validation tests: one comparison is
//! `|estimate - reference| <= half_width_at(1 - 0.01/m) + allowance` (Bonferroni over the `m`
//! comparisons of one test, family-wise error 1%), as in `validation.rs`.

#![allow(dead_code)]

use mfq_fixpoint::{solve_spec, FixedPoint, FixedPointOptions};
use mfq_model::{ModelSpec, Truncation};
use mfq_sim::{Estimate, SimOptions, SimReport};

/// N = 10000, 4 replications of 300 time units after a warm-up of 60, 6 batches of 50 (the
/// correlation times of these tests are a few time units: lag-1 autocorrelations of the batch
/// means stay within +-0.25). Seed 1.
pub fn opts_10k() -> SimOptions {
    SimOptions { servers: 10_000, time: 300.0, warmup: 60.0, replications: 4, batches: 6, seed: 1, ..Default::default() }
}

/// One comparison of a simulated estimate with a reference value.
pub struct Check {
    pub what: String,
    pub est: Estimate,
    pub reference: f64,
    pub allowance: f64,
}

pub fn check(what: &str, est: Estimate, reference: f64, allowance: f64) -> Check {
    Check { what: what.to_string(), est, reference, allowance }
}

/// Runs all comparisons at family-wise confidence 99% after a header with the simulation's
/// diagnostics; see [`assert_checks`].
pub fn assert_all(title: &str, report: &SimReport, checks: &[Check]) {
    println!(
        "== {title}: {} events, {:.2} s ({:.2e} events/s), lag-1 autocorrelation {:.3}, replication half width {:.5}",
        report.events,
        report.wall_seconds,
        report.events_per_second,
        report.diagnostics.batch_lag1_autocorrelation.unwrap(),
        report.diagnostics.replication_half_width.unwrap()
    );
    assert_checks(title, checks);
}

/// Runs all comparisons at family-wise confidence 99% (Bonferroni over the `checks`), prints a
/// table (visible with `--nocapture`) and panics listing every failure.
pub fn assert_checks(title: &str, checks: &[Check]) {
    let m = checks.len() as f64;
    let conf = 1.0 - 0.01 / m;
    let mut failures = Vec::new();
    for c in checks {
        let hw = c.est.half_width_at(conf);
        let ok = (c.est.mean - c.reference).abs() <= hw + c.allowance;
        println!(
            "  {:<28} sim {:>12.7} +- {:>10.7} (95%: {:>10.7})  ref {:>12.7}  diff {:>+10.7}  allowance {:>9.6}  {}",
            c.what,
            c.est.mean,
            hw,
            c.est.half_width,
            c.reference,
            c.est.mean - c.reference,
            c.allowance,
            if ok { "ok" } else { "FAIL" }
        );
        if !ok {
            failures.push(format!("{}: sim {} +- {} vs {} (allowance {})", c.what, c.est.mean, hw, c.reference, c.allowance));
        }
    }
    assert!(failures.is_empty(), "{title}: {failures:#?}");
}

/// An extra estimate by name (panics with the available names when missing).
pub fn extra(report: &SimReport, name: &str) -> Estimate {
    *report.extras.get(name).unwrap_or_else(|| panic!("no extra {name}; have {:?}", report.extras.keys().collect::<Vec<_>>()))
}

/// The mean-field fixed point of `spec` (automatic truncation), which must converge.
pub fn fixed_point(spec: &ModelSpec) -> FixedPoint {
    let fp = solve_spec(spec, &Truncation::default(), &FixedPointOptions::default()).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
    assert!(fp.converged(), "{spec:?}: {:?}", fp.status);
    fp
}

/// A named extra of the fixed point's observables.
pub fn fp_extra(fp: &FixedPoint, name: &str) -> f64 {
    fp.observables.extras.iter().find(|(k, _)| k == name).unwrap_or_else(|| panic!("no fixed-point extra {name}")).1
}
