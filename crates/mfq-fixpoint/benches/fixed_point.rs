//! Times the JSQ(2) fixed point (PTC + Newton, banded LU) at lambda = 0.9 and 0.99 with
//! K = 20, 50, 100, and prints the figures and the ratio to SciPy's `root` with an analytic
//! Jacobian (0.3-4 ms for K = 20-100 on a 2-core machine of this kind, measured for the
//! project's research notes, anchors-tools §4). Run with `just bench` or
//! `cargo bench -p mfq-fixpoint --bench fixed_point`.

use mfq_fixpoint::{solve_model, FixedPointOptions};
use mfq_model::models::Jsq;
use std::hint::black_box;
use std::time::Instant;

fn time_per_call(mut f: impl FnMut()) -> f64 {
    // warm up, then repeat until at least 0.3 s has passed; report the median of 7 batches
    for _ in 0..10 {
        f();
    }
    let mut batch = 1usize;
    loop {
        let t = Instant::now();
        for _ in 0..batch {
            f();
        }
        if t.elapsed().as_secs_f64() > 0.04 {
            break;
        }
        batch *= 2;
    }
    let mut samples: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed().as_secs_f64() / batch as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[3]
}

fn main() {
    println!("JSQ(2) fixed point from the empty state: PTC + Newton, analytic tridiagonal Jacobian, banded LU");
    println!("{:>6} {:>6} {:>7} {:>12} {:>14} {:>22}", "lambda", "K", "iters", "residual", "time (us)", "SciPy root / mfq");
    // SciPy `root` (hybr, analytic Jacobian), median CPU ms on a 2-core machine of this kind,
    // from the project's research notes (anchors-tools §4.1): lambda = 0.9 row; lambda = 0.99 was
    // not measured there, the lambda = 0.95 row stands in for it.
    let scipy_ms = |lambda: f64, k: usize| match (lambda < 0.95, k) {
        (true, 20) => 0.41,
        (true, 50) => 1.1,
        (true, _) => 3.7,
        (false, 20) => 0.35,
        (false, 50) => 0.71,
        (false, _) => 3.8,
    };
    let opts = FixedPointOptions { max_dim_for_eigenvalues: 0, ..Default::default() };
    for lambda in [0.9, 0.99, 0.999] {
        for k in [20usize, 50, 100] {
            let m = Jsq::new(lambda, 2, k).unwrap();
            let fp = solve_model(&m, &opts).unwrap();
            assert!(fp.converged());
            let secs = time_per_call(|| {
                black_box(solve_model(black_box(&m), &opts).unwrap());
            });
            println!(
                "{lambda:>6} {k:>6} {:>7} {:>12.2e} {:>14.2} {:>21.0}x",
                fp.iterations,
                fp.residual,
                secs * 1e6,
                scipy_ms(lambda, k) * 1e-3 / secs
            );
        }
    }
    let m = Jsq::new(0.99, 2, 100).unwrap();
    let full = FixedPointOptions::default();
    let secs = time_per_call(|| {
        black_box(solve_model(black_box(&m), &full).unwrap());
    });
    println!("with the spectral abscissa (dense eigenvalues, K = 100, lambda = 0.99): {:.1} us", secs * 1e6);

    // refined mean field (1/N term V): rmf_tool needs 35 s (sympy) / 3.1 s (finite differences)
    // and SciPy 6.3 ms at K = 100, lambda = 0.9 (research notes, anchors-tools §4.2, CPU seconds)
    println!("\nrefined mean field of JSQ(2), lambda = 0.9 (Lyapunov by Bartels-Stewart on the real Schur form)");
    println!("{:>6} {:>12} {:>14} {:>16}", "K", "sum of V", "time (ms)", "SciPy / mfq");
    for (k, scipy_s) in [(20usize, 0.00060), (50, 0.0013), (100, 0.0063)] {
        let m = Jsq::new(0.9, 2, k).unwrap();
        let fp = solve_model(&m, &opts).unwrap();
        let r = mfq_fixpoint::refined_mean_field(&m, &fp.x).unwrap();
        let secs = time_per_call(|| {
            black_box(mfq_fixpoint::refined_mean_field(black_box(&m), &fp.x).unwrap());
        });
        println!("{k:>6} {:>12.6} {:>14.3} {:>15.1}x", r.sum_v, secs * 1e3, scipy_s / secs);
    }
}
