//! Solve times and peak memory of the redundancy-2 pair and triplet approximations and of the
//! LCFS limit (issue 7).
//!
//! `cargo bench -p mfq-fixpoint --bench redundancy`. Prints, per case, the wall time of the
//! fixed-point solve (model construction included), linear solves and LU factorisations,
//! residual, Jacobian non-zeros and the process's peak resident memory (`VmHWM` of
//! /proc/self/status).

use mfq_fixpoint::{solve_model, FixedPointOptions};
use mfq_model::models::redundancy::{lcfs_limit, Discipline, LcfsLimitOptions, RedundancyPair, RedundancyTriplet};
use mfq_model::MeanFieldModel;
use std::time::Instant;

fn peak_memory_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

fn case(label: &str, lambda: f64, levels: usize, from_mean_field: bool) {
    let t = Instant::now();
    let m = RedundancyPair::new(lambda, 2, Discipline::Ps, 1, levels).expect("valid parameters");
    let x0 = if from_mean_field { m.mean_field_start() } else { None };
    report(label, &m, x0, from_mean_field, levels, t);
}

/// The PS triplet (`K^3` states) from its own start, the pair closure of the mean-field fixed point.
fn triplet(label: &str, lambda: f64, levels: usize) {
    let t = Instant::now();
    let m = RedundancyTriplet::new(lambda, 2, levels).expect("valid parameters");
    let x0 = m.mean_field_start();
    report(label, &m, x0, false, levels, t);
}

fn report(label: &str, m: &dyn MeanFieldModel, x0: Option<Vec<f64>>, big_dt0: bool, levels: usize, t: Instant) {
    let opts = FixedPointOptions { max_dim_for_eigenvalues: 0, x0, dt0: if big_dt0 { 1e9 } else { 10.0 }, ..Default::default() };
    let fp = solve_model(m, &opts).expect("valid options");
    println!(
        "{label}: K = {levels}, {} states, {:.3} s, {} linear solves, {} LU factorisations, residual {:.1e}, mean copies {:.6}, \
         Jacobian nnz {}, peak RSS {} MiB",
        m.dim(),
        t.elapsed().as_secs_f64(),
        fp.iterations,
        fp.factorisations,
        fp.residual,
        fp.observables.mean_queue_length.unwrap_or(f64::NAN),
        match m.sparsity() {
            mfq_model::Sparsity::Sparse(p) => p.nnz(),
            _ => 0,
        },
        peak_memory_kib().map_or("?".into(), |k| (k / 1024).to_string()),
    );
}

/// The LCFS limit (renewal equations, `O(n^2)` in the grid points): the mean alone, then the
/// mean and the queue-length tail.
fn limit(lambda: f64, d: u32) {
    for levels in [0, 400] {
        let t = Instant::now();
        let r = lcfs_limit(lambda, d, &LcfsLimitOptions { levels, ..Default::default() }).expect("valid parameters");
        println!(
            "LCFS limit, lambda = {lambda}, d = {d}, {}: {:.3} s, {} grid points (finest), horizon {:.0}, mean copies {:.6} \
             (error estimate {:.1e}), E[B] {:.6} (exact {:.6}), peak RSS {} MiB",
            if levels == 0 { "mean only" } else { "mean and tail" },
            t.elapsed().as_secs_f64(),
            r.points,
            r.horizon,
            r.mean_copies_per_server,
            r.error_estimate,
            r.busy_period_mean,
            1.0 / (d as f64 * (1.0 - lambda)),
            peak_memory_kib().map_or("?".into(), |k| (k / 1024).to_string()),
        );
    }
}

fn main() {
    limit(0.7, 2);
    limit(0.9, 2);
    limit(0.9, 3);
    case("PS pair, lambda = 0.9, mean-field start", 0.9, 60, true);
    case("PS pair, lambda = 0.9, mean-field start", 0.9, 100, true);
    case("PS pair, lambda = 0.9, from empty", 0.9, 100, false);
    case("PS pair, lambda = 0.95, mean-field start", 0.95, 120, true);
    triplet("PS triplet, lambda = 0.9", 0.9, 20);
    triplet("PS triplet, lambda = 0.9", 0.9, 30);
}
