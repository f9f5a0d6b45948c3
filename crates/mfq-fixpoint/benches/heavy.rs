//! Issue 20, targets 1 and 5 (bench/rows-heavy.md): the PS triplet and pair approximations of
//! redundancy-2.
//!
//! `cargo bench -p mfq-fixpoint --bench heavy -- CASE K`, CASE one of `triplet` (the fixed
//! point from the pair closure of the mean field), `pair`, `probe` / `probe-pair` (the time of
//! one drift, one Jacobian, two LU factorisations and one solve: where a Newton step's time
//! goes), `pair-sweep` (50 load points, with and without held factorisations, in one run).
//! Times of the sweep are CPU seconds of the process (the machine may be shared).

use mfq_fixpoint::{solve_model, FixedPointOptions};
use mfq_model::models::redundancy::{Discipline, RedundancyPair, RedundancyTriplet};
use mfq_model::MeanFieldModel;
use std::time::Instant;

/// CPU time of the process, in seconds (the machine is shared: wall time is not the cost).
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn peak_memory_mib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()).unwrap_or(0) / 1024
}

fn report(label: &str, m: &dyn MeanFieldModel, x0: Option<Vec<f64>>, dt0: f64, t: Instant) {
    let opts = FixedPointOptions { max_dim_for_eigenvalues: 0, x0, dt0, ..Default::default() };
    let fp = solve_model(m, &opts).expect("valid options");
    println!(
        "{label}: {} states, {:.3} s, {} solves, {} LU, residual {:.1e}, mean copies {:.8}, peak RSS {} MiB",
        m.dim(),
        t.elapsed().as_secs_f64(),
        fp.iterations,
        fp.factorisations,
        fp.residual,
        fp.observables.mean_queue_length.unwrap_or(f64::NAN),
        peak_memory_mib()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let k: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(30);
    match args.first().map(String::as_str) {
        Some("triplet") => {
            let t = Instant::now();
            let m = RedundancyTriplet::new(0.9, 2, k).unwrap();
            let x0 = m.mean_field_start();
            report(&format!("PS triplet K = {k}"), &m, x0, 10.0, t);
        }
        Some("pair") => {
            let t = Instant::now();
            let m = RedundancyPair::new(0.9, 2, Discipline::Ps, 1, k).unwrap();
            let x0 = m.mean_field_start();
            report(&format!("PS pair K = {k}"), &m, x0, 1e9, t);
        }
        Some("probe") => factor_probe(k, false),
        Some("probe-pair") => factor_probe(k, true),
        Some("pair-sweep") => pair_sweep(k),
        _ => eprintln!("usage: heavy (triplet | pair | probe | probe-pair | pair-sweep) K"),
    }
}

fn factor_probe(k: usize, pair: bool) {
    use mfq_model::Jacobian;
    let m: Box<dyn MeanFieldModel> = if pair {
        Box::new(RedundancyPair::new(0.9, 2, Discipline::Ps, 1, k).unwrap())
    } else {
        Box::new(RedundancyTriplet::new(0.9, 2, k).unwrap())
    };
    let x = m.start_state().unwrap();
    let mut jac = Jacobian::new(m.dim(), m.sparsity());
    let t = Instant::now();
    m.jacobian(&x, &mut jac);
    let tj = t.elapsed().as_secs_f64();
    let mut f = vec![0.0; m.dim()];
    let t = Instant::now();
    m.drift(&x, &mut f);
    let td = t.elapsed().as_secs_f64();
    let mut lu = mfq_ode::linalg::ShiftedLu::new(m.dim(), m.sparsity());
    let t = Instant::now();
    lu.factor(0.1, -1.0, &jac).unwrap();
    let t1 = t.elapsed().as_secs_f64();
    let t = Instant::now();
    lu.factor(0.1, -1.0, &jac).unwrap();
    let t2 = t.elapsed().as_secs_f64();
    let t = Instant::now();
    lu.solve(&mut f);
    let ts = t.elapsed().as_secs_f64();
    println!(
        "K = {k}: drift {td:.4} s, Jacobian {tj:.4} s, first LU {t1:.3} s, second LU {t2:.3} s, solve {ts:.4} s, peak RSS {} MiB",
        peak_memory_mib()
    );
}

/// 50 load points of the PS pair at `K`: `lambda = 0.5, ..., 0.95`. Baseline: each point warm
/// from the previous solution (what `mfq sweep` did before `Factors`); new: what `mfq::sweep`
/// does now, the secant extrapolation of the last two points and the previous point's
/// factorisation held ([`Factors`]). Returns after checking that every point
/// converged (residual < 1e-12) and that the two sweeps agree.
fn pair_sweep(k: usize) {
    use mfq_fixpoint::{solve_model_with, Factors};
    let lambdas: Vec<f64> = (0..50).map(|i| 0.5 + 0.45 * i as f64 / 49.0).collect();
    let run = |reuse: bool| {
        let t = cpu_seconds();
        let mut factors = Factors::default();
        let (mut warm, mut lus, mut solves, mut worst) = (None::<Vec<f64>>, 0, 0, 0.0f64);
        let mut means = Vec::new();
        let (mut prev, mut warm_prev) = (None::<Vec<f64>>, None::<Vec<f64>>);
        for &l in &lambdas {
            let m = RedundancyPair::new(l, 2, Discipline::Ps, 1, k).unwrap();
            let x0 = match (warm.take(), &prev) {
                // secant predictor from the last two points (same grid step)
                (Some(w), Some(p)) if reuse => Some(w.iter().zip(p).map(|(a, b)| 2.0 * a - b).collect()),
                (w, _) => w.or_else(|| m.mean_field_start()),
            };
            let opts = FixedPointOptions { max_dim_for_eigenvalues: 0, x0, ..Default::default() };
            if !reuse {
                factors = Factors::default();
            }
            let fp = solve_model_with(&m, &opts, &mut factors).unwrap();
            assert!(fp.converged(), "lambda = {l}: {:?}", fp.status);
            worst = worst.max(fp.residual);
            lus += fp.factorisations;
            if std::env::var("VERBOSE").is_ok() {
                eprintln!("{reuse} {l:.4}: {} LU {} solves r {:.1e}", fp.factorisations, fp.iterations, fp.residual);
            }
            solves += fp.iterations;
            means.push(fp.observables.mean_queue_length.unwrap());
            prev = warm_prev.replace(fp.x.clone());
            warm = Some(fp.x);
        }
        (cpu_seconds() - t, lus, solves, worst, means)
    };
    let (t0, lu0, s0, w0, m0) = run(false);
    let (t1, lu1, s1, w1, m1) = run(true);
    let gap = m0.iter().zip(&m1).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    println!(
        "PS pair sweep, 50 points lambda 0.5..0.95, K = {k}: warm starts {t0:.3} s CPU ({lu0} LU, {s0} solves, worst residual {w0:.1e})"
    );
    println!(
        "  + secant start and held factorisation: {t1:.3} s CPU ({lu1} LU, {s1} solves, worst residual {w1:.1e}); ratio {:.2}; max |mean copies difference| {gap:.1e}",
        t0 / t1
    );
    println!("  peak RSS {} MiB", peak_memory_mib());
}
