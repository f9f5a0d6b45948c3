//! Issue 20, target 5: the transient of the PS pair approximation of redundancy-2
//! (`models/redundancy-ps-pair.toml`, lambda = 0.9) at `K = 100` (10 000 states) from the
//! empty state to `t = 1000`, with the method `Auto` used before `Bdf` existed (Dopri5,
//! switching to Rosenbrock23 when Hairer's stiffness test fires) and with `Bdf`, in one run:
//! CPU and wall time of each, the load average, and the largest difference of the final states.
//!
//! ```text
//! cargo run --release -p mfq-ode --example bdf_bench [K] [T_END] [RTOL] [--bdf-only | --jsq]
//! ```
//!
//! With `--jsq`: JSQ(2) at lambda = 0.9 and truncation `K` from the empty state with `Bdf`,
//! timed in CPU seconds per solve (repeated until 1 s has passed), and the final state, for
//! bench/bdf_scipy.py (SciPy's `solve_ivp(method='BDF')` on the same problem).
//!
//! Defaults: `K = 100`, `T_END = 1000`, `RTOL = 1e-8` (`atol = 1e-12`, the CLI's defaults).
//! The check: both methods reach `t_end`, their final states agree within `100 rtol` in the
//! max norm, and the final drift is below `1e-6` (the transient has settled near the fixed
//! point, whose mean number of copies, 3.38752 at K = 60, the fixed-point tests check).

use mfq_model::models::redundancy::{Discipline, RedundancyPair};
use mfq_model::MeanFieldModel;
use mfq_ode::{solve, Method, SolveOptions, Status, Trajectory};
use std::time::Instant;

/// CPU time of the process (user + system), in seconds, from `/proc/self/stat` (clock ticks of
/// 1/100 s); `NaN` where that file does not exist.
fn cpu_seconds() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else { return f64::NAN };
    // fields after the command name (in parentheses): utime and stime are fields 14 and 15
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
    (ticks(11) + ticks(12)) / 100.0
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).unwrap_or_default()
}

/// The run before `Bdf`: `Auto` was Dopri5 until stiff, then Rosenbrock23 from that state.
fn old_auto(m: &dyn MeanFieldModel, x0: &[f64], opts: &SolveOptions) -> (Trajectory, Option<Trajectory>) {
    let first = solve(m, x0, &SolveOptions { method: Method::Dopri5, ..opts.clone() }).expect("valid options");
    let Status::Stiff { t } = first.status else { return (first, None) };
    let rest = SolveOptions { t_end: opts.t_end - t, method: Method::Rosenbrock23, ..opts.clone() };
    let second = solve(m, first.last(), &rest).expect("valid options");
    (first, Some(second))
}

fn main() {
    let args: Vec<f64> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).filter_map(|a| a.parse().ok()).collect();
    let k = args.first().map_or(100, |&v| v as usize);
    let t_end = args.get(1).copied().unwrap_or(1000.0);
    let rtol = args.get(2).copied().unwrap_or(1e-8);
    if std::env::args().any(|a| a == "--jsq") {
        jsq(k, t_end, rtol);
        return;
    }
    let m = RedundancyPair::new(0.9, 2, Discipline::Ps, 1, k).expect("valid parameters");
    let x0 = vec![0.0; m.dim()];
    let opts = SolveOptions { t_end, rtol, atol: 1e-12, record_steps: false, ..Default::default() };
    println!("PS pair approximation, lambda = 0.9, K = {k} ({} states), empty state to t = {t_end}, rtol {rtol:e}", m.dim());
    println!("load average before: {}", load_average());

    if std::env::args().any(|a| a == "--bdf-only") {
        let (c0, w0) = (cpu_seconds(), Instant::now());
        let bdf = solve(&m, &x0, &SolveOptions { method: Method::Bdf, ..opts.clone() }).expect("valid options");
        println!("bdf: {:.2} s CPU, {:.2} s wall, {:?}", cpu_seconds() - c0, w0.elapsed().as_secs_f64(), bdf.stats);
        return;
    }
    let (c0, w0) = (cpu_seconds(), Instant::now());
    let (first, second) = old_auto(&m, &x0, &opts);
    let (old_cpu, old_wall) = (cpu_seconds() - c0, w0.elapsed().as_secs_f64());
    let old_last = second.as_ref().unwrap_or(&first).last().to_vec();
    let old_ok = second.as_ref().unwrap_or(&first).status == Status::Success;
    let switched = if second.is_some() { format!("Rosenbrock23 from t = {:.2}", first.t_last()) } else { "no switch".into() };
    let (steps, lus) = (
        first.stats.accepted_steps + second.as_ref().map_or(0, |s| s.stats.accepted_steps),
        second.as_ref().map_or(0, |s| s.stats.factorisations),
    );
    println!("old auto (Dopri5, {switched}): {old_cpu:.2} s CPU, {old_wall:.2} s wall, {steps} steps, {lus} LU, ok = {old_ok}");

    let (c0, w0) = (cpu_seconds(), Instant::now());
    let bdf = solve(&m, &x0, &SolveOptions { method: Method::Bdf, ..opts.clone() }).expect("valid options");
    let (new_cpu, new_wall) = (cpu_seconds() - c0, w0.elapsed().as_secs_f64());
    let s = &bdf.stats;
    println!(
        "bdf: {new_cpu:.2} s CPU, {new_wall:.2} s wall, {} steps ({} rejected), {} drifts, {} Jacobians, {} LU, status {}",
        s.accepted_steps, s.rejected_steps, s.drift_evals, s.jacobian_evals, s.factorisations, bdf.status
    );
    println!("load average after: {}", load_average());

    let diff = bdf.last().iter().zip(&old_last).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let mut f = vec![0.0; m.dim()];
    m.drift(bdf.last(), &mut f);
    let drift = f.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let ok = old_ok && bdf.status == Status::Success && diff <= 100.0 * rtol && drift < 1e-6;
    println!(
        "max |x_bdf(t_end) - x_old(t_end)| = {diff:.2e}, max |f(x_bdf(t_end))| = {drift:.2e}; check {}",
        if ok { "passed" } else { "FAILED" }
    );
    println!("ratio old / bdf: {:.2} (CPU), {:.2} (wall)", old_cpu / new_cpu, old_wall / new_wall);
    if !ok {
        std::process::exit(1);
    }
}

/// JSQ(2), lambda = 0.9, `K` levels from empty to `t_end` with `Bdf`: CPU seconds per solve
/// (median of batches) and the final state, on lines bench/bdf_scipy.py reads.
fn jsq(k: usize, t_end: f64, rtol: f64) {
    let m = mfq_model::models::Jsq::new(0.9, 2, k).expect("valid parameters");
    let opts = SolveOptions { t_end, rtol, atol: 1e-12, method: Method::Bdf, record_steps: false, ..Default::default() };
    let x0 = vec![0.0; k];
    let mut times = Vec::new();
    let mut last = None;
    let started = cpu_seconds();
    while times.len() < 5 || cpu_seconds() - started < 1.0 {
        let c0 = cpu_seconds();
        let mut n = 0;
        while cpu_seconds() - c0 < 0.05 || n == 0 {
            last = Some(solve(&m, &x0, &opts).expect("valid options"));
            n += 1;
        }
        times.push((cpu_seconds() - c0) / n as f64);
    }
    times.sort_by(f64::total_cmp);
    let tr = last.expect("solved at least once");
    assert_eq!(tr.status, Status::Success);
    println!("jsq bdf cpu per solve: {:.6e} s ({} steps, {} LU)", times[times.len() / 2], tr.stats.accepted_steps, tr.stats.factorisations);
    println!("x_final: {}", tr.last().iter().map(|v| format!("{v:e}")).collect::<Vec<_>>().join(","));
}
