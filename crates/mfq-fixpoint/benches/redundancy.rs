//! Solve times and peak memory of the redundancy-2 pair approximations (issue 7).
//!
//! `cargo bench -p mfq-fixpoint --bench redundancy`. Prints, per case, the wall time of the
//! fixed-point solve (model construction included), linear solves and LU factorisations,
//! residual, Jacobian non-zeros and the process's peak resident memory (`VmHWM` of
//! /proc/self/status).

use mfq_fixpoint::{solve_model, FixedPointOptions};
use mfq_model::models::redundancy::{Discipline, RedundancyPair};
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
    let opts = FixedPointOptions { max_dim_for_eigenvalues: 0, x0, dt0: if from_mean_field { 1e9 } else { 10.0 }, ..Default::default() };
    let fp = solve_model(&m, &opts).expect("valid options");
    println!(
        "{label}: K = {levels}, {} states, {:.3} s, {} linear solves, {} LU factorisations, residual {:.1e}, mean copies {:.6}, \
         Jacobian nnz {}, peak RSS {} MiB",
        m.dim(),
        t.elapsed().as_secs_f64(),
        fp.iterations,
        fp.factorizations,
        fp.residual,
        fp.observables.mean_queue_length.unwrap_or(f64::NAN),
        m.jacobian_nonzeros(),
        peak_memory_kib().map_or("?".into(), |k| (k / 1024).to_string()),
    );
}

fn main() {
    case("PS pair, lambda = 0.9, mean-field start", 0.9, 60, true);
    case("PS pair, lambda = 0.9, mean-field start", 0.9, 100, true);
    case("PS pair, lambda = 0.9, from empty", 0.9, 100, false);
    case("PS pair, lambda = 0.95, mean-field start", 0.95, 120, true);
    println!("PS triplet, K = 30: not implemented (see docs/models/redundancy.md)");
}
