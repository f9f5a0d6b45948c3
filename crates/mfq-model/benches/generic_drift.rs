//! Generic (file-defined) JSQ(2) drift against the built-in one at K = 100.
//!
//! `cargo bench -p mfq-model --bench generic_drift` prints the time per drift evaluation of
//! both and their ratio (issue 9 asks for a ratio below 3), plus the Jacobian times.

use std::hint::black_box;
use std::time::Instant;

use mfq_model::models::Jsq;
use mfq_model::{AnalyticJacobian, Jacobian, MeanFieldModel, ModelFile};

const JSQ2: &str = include_str!("../../../models/generic/jsq2.toml");
const K: usize = 100;

/// Median over 9 runs of the mean time per call, in nanoseconds.
fn time(mut f: impl FnMut()) -> f64 {
    let iters = 20_000;
    for _ in 0..iters / 10 {
        f();
    }
    let mut runs: Vec<f64> = (0..9)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed().as_secs_f64() * 1e9 / iters as f64
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn main() {
    let file = ModelFile::parse(JSQ2, &[]).expect("models/generic/jsq2.toml parses");
    let generic = file.model.build(K).expect("generic JSQ(2) builds");
    let builtin = Jsq::new(0.9, 2, K).expect("built-in JSQ(2)");
    assert_eq!(generic.dim(), K);
    // an interior decreasing state (not the fixed point, so every rate is non-zero)
    let x: Vec<f64> = (1..=K).map(|k| 0.97f64.powi(k as i32)).collect();
    let (mut a, mut b) = (vec![0.0; K], vec![0.0; K]);
    generic.drift(&x, &mut a);
    builtin.drift(&x, &mut b);
    let err = a.iter().zip(&b).map(|(u, v)| (u - v).abs()).fold(0.0, f64::max);
    assert!(err < 1e-14, "the drifts differ by {err}");

    let t_generic = time(|| generic.drift(black_box(&x), black_box(&mut a)));
    let t_builtin = time(|| builtin.drift(black_box(&x), black_box(&mut b)));
    let mut ja = Jacobian::new(K, generic.sparsity());
    let mut jb = Jacobian::new(K, builtin.sparsity());
    let tj_generic = time(|| generic.jacobian(black_box(&x), &mut ja));
    let tj_builtin = time(|| builtin.jacobian(black_box(&x), &mut jb));
    println!("JSQ(2), lambda = 0.9, K = {K}: time per evaluation (median of 9 runs of 20000)");
    println!("  drift     generic {t_generic:8.1} ns   built-in {t_builtin:8.1} ns   ratio {:.2}", t_generic / t_builtin);
    println!("  jacobian  generic {tj_generic:8.1} ns   built-in {tj_builtin:8.1} ns   ratio {:.2}", tj_generic / tj_builtin);
}
