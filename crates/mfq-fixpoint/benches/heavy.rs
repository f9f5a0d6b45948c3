//! Issue 20, targets 1 and 5 (bench/rows-heavy.md): the PS triplet and pair approximations of
//! redundancy-2.
//!
//! `cargo bench -p mfq-fixpoint --bench heavy -- CASE K`, CASE one of `triplet` (the fixed
//! point from the pair closure of the mean field), `pair`, `probe` / `probe-pair` (the time of
//! one drift, one Jacobian, two LU factorisations and one solve: where a Newton step's time
//! goes), `pair-sweep` (50 load points, with and without held factorisations, in one run),
//! `triplet-ab` (the triplet solved in two child processes, ILU(1) + GMRES and the complete
//! sparse LU before it: CPU and wall time, peak RSS, ratios and the largest difference of the
//! two fixed points; `triplet-ab K new-only` skips the complete LU, which needs ~4 GB at K = 40).
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
        Some("triplet-child") => triplet_child(k, args.get(2).map(String::as_str) == Some("direct")),
        Some("triplet-ab") => triplet_ab(k, args.get(2).map(String::as_str) != Some("new-only")),
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

/// One fixed point of the PS triplet at `K` (lambda = 0.9, from the pair closure of the mean
/// field) in this process, by the complete sparse LU (`direct`) or ILU + GMRES: prints
/// `RESULT cpu wall peak_mib residual mean_copies solves lu` and writes the state to
/// `$TMPDIR/heavy-triplet-K-{direct,iterative}.txt`.
fn triplet_child(k: usize, direct: bool) {
    mfq_ode::linalg::set_iterative_solves(!direct);
    let (c0, t) = (cpu_seconds(), Instant::now());
    let m = RedundancyTriplet::new(0.9, 2, k).unwrap();
    let opts = FixedPointOptions { max_dim_for_eigenvalues: 0, x0: m.mean_field_start(), ..Default::default() };
    let fp = solve_model(&m, &opts).expect("valid options");
    let (cpu, wall) = (cpu_seconds() - c0, t.elapsed().as_secs_f64());
    let path = std::env::temp_dir().join(format!("heavy-triplet-{k}-{}.txt", if direct { "direct" } else { "iterative" }));
    let text: String = fp.x.iter().map(|v| format!("{v:e}\n")).collect();
    std::fs::write(&path, text).expect("temporary file");
    println!(
        "RESULT {cpu} {wall} {} {:e} {:.10} {} {} {}",
        peak_memory_mib(),
        fp.residual,
        fp.observables.mean_queue_length.unwrap_or(f64::NAN),
        fp.iterations,
        fp.factorisations,
        u8::from(fp.converged())
    );
}

/// The PS triplet at `K` solved in two child processes, the complete LU (the method before
/// ILU + GMRES; skipped with `new-only`) and ILU + GMRES: CPU (user + sys) and wall seconds,
/// peak RSS of each, their ratio, and the largest difference of the two fixed points.
fn triplet_ab(k: usize, with_direct: bool) {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    let exe = std::env::current_exe().expect("own path");
    let run = |mode: &str| -> Vec<f64> {
        let out = std::process::Command::new(&exe).args(["triplet-child", &k.to_string(), mode]).output().expect("child runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.starts_with("RESULT"))
            .unwrap_or_else(|| panic!("child failed: {text} {}", String::from_utf8_lossy(&out.stderr)));
        line.split_whitespace().skip(1).map(|v| v.parse().unwrap_or(f64::NAN)).collect()
    };
    let read = |mode: &str| -> Vec<f64> {
        let path = std::env::temp_dir().join(format!("heavy-triplet-{k}-{mode}.txt"));
        std::fs::read_to_string(path).unwrap_or_default().lines().map(|v| v.parse().unwrap()).collect()
    };
    let show = |name: &str, r: &[f64]| {
        println!(
            "PS triplet K = {k} ({} states), {name}: {:.3} s CPU (user+sys), {:.3} s wall, peak RSS {} MiB, residual {:.1e}, mean copies {:.10}, {} solves, {} factorisations, converged {}",
            k * k * k, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7] == 1.0
        );
    };
    let new = run("iterative");
    assert!(new[3] < 1e-12, "ILU + GMRES did not converge: residual {}", new[3]);
    show("ILU(1) + GMRES", &new);
    if with_direct {
        let old = run("direct");
        show("complete sparse LU (before)", &old);
        let (xo, xn) = (read("direct"), read("iterative"));
        let gap = xo.iter().zip(&xn).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        println!("  ratio (CPU) {:.1}, ratio (peak RSS) {:.1}; max |x_direct - x_iterative| = {gap:.1e}", old[0] / new[0], old[2] / new[2]);
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average after: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
}
