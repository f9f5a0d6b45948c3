//! Transients against independently computed values: the JIQ sliding boundary (an
//! event-located two-phase solver at rtol 1e-11, validation/jiq_transient.py; model in
//! docs/models/jiq.md) and the JSQ(2) transient gap of SciPy's solve_ivp
//! (validation/jsq_transient.py).

use mfq_model::models::{Jiq, Jsq};
use mfq_model::MeanFieldModel;
use mfq_ode::{solve, Method, SolveOptions};

fn jiq_at(lambda: f64, t_end: f64) -> Vec<f64> {
    let m = Jiq::new(lambda, 30).unwrap();
    let mut x0 = vec![0.0; 30];
    x0[..3].copy_from_slice(&[1.0, 1.0, 1.0]);
    let opts = SolveOptions { t_end, rtol: 1e-11, atol: 1e-14, record_steps: false, ..Default::default() };
    let tr = solve(&m, &x0, &opts).unwrap();
    assert!(tr.status.is_success(), "{:?}", tr.status);
    tr.last().to_vec()
}

/// x_1..x_4 at t = 1, 2, 5, 10 from x_1 = x_2 = x_3 = 1, K = 30 (validation/jiq_transient.py).
#[test]
fn jiq_boundary_transient_table() {
    let table: [(f64, f64, [f64; 4]); 8] = [
        (0.5, 1.0, [1.0, 0.807887, 0.507298, 0.152572]),
        (0.5, 2.0, [1.0, 0.569489, 0.298372, 0.102723]),
        (0.5, 5.0, [0.705711, 0.103477, 0.037396, 0.010145]),
        (0.5, 10.0, [0.509880, 0.003173, 0.000826, 0.000175]),
        (0.9, 1.0, [1.0, 0.861059, 0.618665, 0.294406]),
        (0.9, 2.0, [1.0, 0.758738, 0.524109, 0.301237]),
        (0.9, 5.0, [1.0, 0.619112, 0.388503, 0.235171]),
        (0.9, 10.0, [1.0, 0.470501, 0.243869, 0.132924]),
    ];
    for (lambda, t, want) in table {
        let x = jiq_at(lambda, t);
        for k in 0..4 {
            assert!((x[k] - want[k]).abs() < 1.5e-6, "lambda={lambda} t={t} x_{}: {} vs {}", k + 1, x[k], want[k]);
        }
    }
}

/// The time the JIQ trajectory leaves x_1 = 1 (where 1 - x_2 reaches lambda), found by
/// bisection on the final time: 2.28335783 (lambda = 0.5) and 18.42926103 (lambda = 0.9).
#[test]
fn jiq_boundary_leaving_times() {
    for (lambda, want) in [(0.5, 2.28335783), (0.9, 18.42926103)] {
        let on_boundary = |t: f64| {
            let x = jiq_at(lambda, t);
            1.0 - x[1] < lambda
        };
        let (mut lo, mut hi) = (0.5 * want, 1.5 * want);
        assert!(on_boundary(lo) && !on_boundary(hi));
        while hi - lo > 1e-9 {
            let mid = 0.5 * (lo + hi);
            if on_boundary(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        assert!((lo - want).abs() < 1e-6, "lambda={lambda}: leaves at {lo}, notes {want}");
        // after leaving, x_1 drops below 1 and relaxes to lambda
        let x = jiq_at(lambda, want + 40.0);
        assert!((x[0] - lambda).abs() < 1e-5 && x[1] < 1e-5);
    }
}

/// SciPy's solve_ivp (rtol 1e-10) gives max |x(t) - x*| = 2.54e-7 at lambda = 0.99, t = 2000 and
/// 3.34e-7 at lambda = 0.999, t = 20000 (JSQ(2), K = 50, from empty; validation/jsq_transient.py):
/// the stiff paths (Rosenbrock23, BDF) must reproduce the slow transient, not jump to x*.
#[test]
fn stiff_jsq_transients_match_scipy() {
    for (lambda, t_end, gap_ref) in [(0.99, 2000.0, 2.54e-7), (0.999, 20000.0, 3.34e-7)] {
        let m = Jsq::new(lambda, 2, 50).unwrap();
        for method in [Method::Auto, Method::Rosenbrock23, Method::Bdf] {
            let opts = SolveOptions { t_end, rtol: 1e-9, atol: 1e-13, method, record_steps: false, ..Default::default() };
            let tr = solve(&m, &vec![0.0; 50], &opts).unwrap();
            assert!(tr.status.is_success());
            let xs = m.analytic_fixed_point().unwrap();
            let gap = tr.last().iter().zip(&xs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!((gap - gap_ref).abs() < 0.03 * gap_ref, "{method:?} lambda={lambda}: {gap:e} vs {gap_ref:e}");
        }
    }
}
