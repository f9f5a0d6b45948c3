//! Times the JSQ(2) fixed point (`solve_model`: PTC + Newton, analytic tridiagonal Jacobian,
//! banded LU, from the empty state, no eigenvalues) for lambda = 0.7, 0.9, 0.95, 0.99, 0.999 and
//! K = 20, 50, 100 levels, the spectral abscissa and the refined mean field, and prints the
//! figures. Run with `just bench` or `cargo bench -p mfq-fixpoint --bench fixed_point`.
//!
//! Clock and statistic: CPU time of the process (`CLOCK_PROCESS_CPUTIME_ID`, the clock of
//! Python's `time.process_time`); calls are repeated in batches grown until one batch takes at
//! least 40 ms, then 9 batches are timed and the median (and the minimum) per call is printed.
//! `bench/compare_scipy.py` times SciPy's `root` the same way in the same run and reads the rows
//! of the first table (`lambda K iters factorisations residual error median_us min_us`), so the
//! ratio to SciPy is only printed there. Every solution is checked against the closed form
//! `x_k = lambda^(2^k - 1)` (Mitzenmacher 2001) before it is timed.

use mfq_fixpoint::{solve_model, FixedPointOptions};
use mfq_model::models::Jsq;
use rustix::time::{clock_gettime, ClockId};
use std::hint::black_box;

/// CPU seconds used by this process so far.
fn cpu_seconds() -> f64 {
    let t = clock_gettime(ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// (median, minimum) CPU seconds per call: 10 warm-up calls, batches doubled until one takes
/// at least 40 ms, then 9 timed batches (the procedure of `per_call` in bench/compare_scipy.py).
fn time_per_call(mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..10 {
        f();
    }
    let mut batch = 1usize;
    loop {
        let t = cpu_seconds();
        for _ in 0..batch {
            f();
        }
        if cpu_seconds() - t >= 0.04 {
            break;
        }
        batch *= 2;
    }
    let mut samples: Vec<f64> = (0..9)
        .map(|_| {
            let t = cpu_seconds();
            for _ in 0..batch {
                f();
            }
            (cpu_seconds() - t) / batch as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    (samples[4], samples[0])
}

fn main() {
    println!("JSQ(2) fixed point from the empty state: solve_model (PTC + Newton, analytic tridiagonal Jacobian, banded LU)");
    println!("CPU time per call, median (min) of 9 batches of >= 40 ms; error = max |x_k - lambda^(2^k - 1)|");
    println!(
        "{:>6} {:>5} {:>6} {:>15} {:>10} {:>10} {:>11} {:>9}",
        "lambda", "K", "iters", "factorisations", "residual", "error", "median us", "min us"
    );
    let opts = FixedPointOptions { max_dim_for_eigenvalues: 0, ..Default::default() };
    for lambda in [0.7, 0.9, 0.95, 0.99, 0.999] {
        for k in [20usize, 50, 100] {
            let m = Jsq::new(lambda, 2, k).expect("valid parameters");
            let fp = solve_model(&m, &opts).expect("valid options");
            let error = fp.x.iter().enumerate().fold(0.0f64, |a, (i, v)| a.max((v - lambda.powf(2f64.powi(i as i32 + 1) - 1.0)).abs()));
            assert!(fp.converged() && fp.residual <= opts.tol && error <= 1e-9, "lambda = {lambda}, K = {k}: {fp:?}");
            let (median, min) = time_per_call(|| {
                black_box(solve_model(black_box(&m), &opts).expect("valid options"));
            });
            println!(
                "{lambda:>6} {k:>5} {:>6} {:>15} {:>10.2e} {:>10.2e} {:>11.2} {:>9.2}",
                fp.iterations,
                fp.factorisations,
                fp.residual,
                error,
                median * 1e6,
                min * 1e6
            );
        }
    }
    let m = Jsq::new(0.99, 2, 100).expect("valid parameters");
    let full = FixedPointOptions::default();
    let (median, _) = time_per_call(|| {
        black_box(solve_model(black_box(&m), &full).expect("valid options"));
    });
    println!("with the spectral abscissa (dense eigenvalues, K = 100, lambda = 0.99): {:.1} us", median * 1e6);

    // refined mean field (1/N term V). For scale only, not measured in this run: in an earlier
    // measurement made for this project (CPU seconds, a shared 2-core VM, another load; see
    // docs/references.md, "Timings quoted from earlier runs"), rmf_tool 0.5 (Gast and Allmeier,
    // TOSME 2021) needed 35 s (sympy) / 3.1 s (finite differences) and a SciPy Newton + Lyapunov
    // script 6.3 ms at K = 100, lambda = 0.9
    println!("\nrefined mean field of JSQ(2), lambda = 0.9 (Lyapunov by Bartels-Stewart on the real Schur form)");
    println!("{:>6} {:>12} {:>14} {:>28}", "K", "sum of V", "median ms", "earlier SciPy ms (other run)");
    for (k, scipy_ms) in [(20usize, 0.60), (50, 1.3), (100, 6.3)] {
        let m = Jsq::new(0.9, 2, k).expect("valid parameters");
        let fp = solve_model(&m, &opts).expect("valid options");
        let r = mfq_fixpoint::refined_mean_field(&m, &fp.x).expect("a stable fixed point");
        let (median, _) = time_per_call(|| {
            black_box(mfq_fixpoint::refined_mean_field(black_box(&m), &fp.x).expect("a stable fixed point"));
        });
        println!("{k:>6} {:>12.6} {:>14.3} {:>28.2}", r.sum_v, median * 1e3, scipy_ms);
    }
}
