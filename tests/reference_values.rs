//! Fixed points against values the code did not produce: closed forms, exact recursions and
//! tables computed independently of this code (each recomputed by a script in validation/;
//! sources in docs/references.md).

use mfq_fixpoint::{solve_spec, FixedPointError, FixedPointOptions};
use mfq_model::{ModelSpec, Truncation};

fn solve(spec: ModelSpec) -> mfq_fixpoint::FixedPoint {
    let fp = solve_spec(&spec, &Truncation::default(), &FixedPointOptions::default()).unwrap();
    assert!(fp.converged(), "{spec:?}: {:?}", fp.status);
    assert!(fp.residual < 1e-12, "{spec:?}: residual {}", fp.residual);
    assert!(fp.truncation.mass_at_truncation < 1e-12);
    fp
}

/// JSQ(d) closed form x_k = lambda^((d^k - 1)/(d - 1)) (lambda^k for d = 1): Mitzenmacher,
/// IEEE TPDS 12(10) 2001, Theorem 3.
#[test]
fn jsq_matches_the_closed_form() {
    for d in [1u32, 2, 3, 5] {
        for lambda in [0.5, 0.9, 0.99] {
            let fp = solve(ModelSpec::from(mfq_model::models::JsqSpec { lambda, d }));
            for (k, x) in fp.x.iter().enumerate() {
                let e = if d == 1 { (k + 1) as f64 } else { ((d as f64).powi(k as i32 + 1) - 1.0) / (d as f64 - 1.0) };
                let exact = lambda.powf(e);
                assert!((x - exact).abs() < 1e-10, "d={d} lambda={lambda} k={}: {x} vs {exact}", k + 1);
            }
            assert!(fp.spectral_abscissa.is_some_and(|a| a < 0.0) || fp.x.len() > 600);
        }
    }
}

/// Mean response time T_d(lambda) = sum_k lambda^((d^k - d)/(d - 1)) from Mitzenmacher's closed
/// form (validation/jsq.py).
#[test]
fn jsq_mean_response_time_table() {
    let table = [
        (0.5, [2.000000, 1.265686, 1.125244, 1.031250]),
        (0.7, [3.333333, 1.614454, 1.356842, 1.168093]),
        (0.9, [10.000000, 2.614057, 2.027856, 1.632881]),
        (0.99, [100.000000, 5.431997, 3.857847, 2.901683]),
    ];
    for (lambda, row) in table {
        for (d, t) in [1u32, 2, 3, 5].into_iter().zip(row) {
            let fp = solve(ModelSpec::from(mfq_model::models::JsqSpec { lambda, d }));
            assert!((fp.observables.mean_response_time.unwrap() - t).abs() < 1e-6, "d={d} lambda={lambda}");
        }
    }
}

/// Pod with load-independent errors, exact recursion x_1 = lambda, x_k = lambda phi(x_{k-1}),
/// d = 2 test vectors (exact rationals for lambda = 0.5, eps = 0.3; validation/pod_errors.py).
#[test]
fn pod_li_exact_recursion_vectors() {
    let cases = [
        (0.5, 0.3, [0.5, 0.2, 0.068, 0.0213248], 1.59721431),
        (0.9, 0.3, [0.9, 0.7776, 0.6375822336, 0.4906384038], 4.15038236),
        (0.5, 0.8, [0.5, 0.325, 0.2283125, 0.1670120207], 3.57647194),
    ];
    for (lambda, eps, xs, t) in cases {
        let fp = solve(ModelSpec::from(mfq_model::models::PodLiSpec { lambda, d: 2, eps }));
        for (k, want) in xs.iter().enumerate() {
            assert!((fp.x[k] - want).abs() < 1e-9, "lambda={lambda} eps={eps} k={}", k + 1);
        }
        assert!((fp.observables.mean_response_time.unwrap() - t).abs() < 1e-6);
    }
}

/// Mean response times of Pod with errors, d = 2 and d = 3, from the fixed-point equations of
/// docs/models/pod-errors.md (recomputed by validation/pod_errors.py: K = 80 for LD, the
/// recursion for LI).
#[test]
fn pod_error_tables() {
    // (lambda, d, eps, g (None = LI), T)
    let rows: &[(f64, u32, f64, Option<u32>, f64)] = &[
        (0.1, 2, 0.1, None, 1.02858),
        (0.5, 2, 0.3, None, 1.59721),
        (0.9, 2, 0.1, None, 2.93333),
        (0.95, 2, 0.3, None, 5.67391),
        (0.1, 2, 0.5, Some(1), 1.09265),
        (0.3, 2, 0.9, Some(2), 1.58388),
        (0.7, 2, 0.9, Some(1), 2.05496),
        (0.9, 2, 0.5, Some(1), 2.90133),
        (0.95, 2, 0.9, Some(2), 4.58000),
        (0.95, 2, 1.0, Some(1), 3.93474),
        (0.5, 3, 0.5, None, 2.46496),
        (0.9, 3, 0.3, None, 3.60177),
        (0.95, 3, 1.0 / 3.0, None, 5.77863),
        (0.1, 3, 0.9, Some(2), 1.27947),
        (0.5, 3, 0.5, Some(1), 1.37391),
        (0.9, 3, 0.5, Some(1), 2.21866),
        (0.95, 3, 0.9, Some(2), 3.33992),
        (0.95, 3, 1.0, Some(1), 2.84841),
    ];
    for &(lambda, d, eps, g, t) in rows {
        let spec = match g {
            None => ModelSpec::from(mfq_model::models::PodLiSpec { lambda, d, eps }),
            Some(g) => ModelSpec::from(mfq_model::models::PodLdSpec { lambda, d, eps, g }),
        };
        let fp = solve(spec.clone());
        assert!((fp.observables.mean_response_time.unwrap() - t).abs() < 1e-5, "{spec:?}: {}", fp.observables.mean_response_time.unwrap());
    }
}

/// Load-dependent fixed points (implicit equations of docs/models/pod-errors.md; recomputed by
/// validation/pod_errors.py).
#[test]
fn pod_ld_fixed_points() {
    let fp = solve(ModelSpec::from(mfq_model::models::PodLdSpec { lambda: 0.9, d: 2, eps: 0.5, g: 1 }));
    for (k, v) in [0.9, 0.7431192661, 0.5274539754].iter().enumerate() {
        assert!((fp.x[k] - v).abs() < 1e-9);
    }
    assert!((fp.observables.mean_response_time.unwrap() - 2.90132715).abs() < 1e-7);
    let fp = solve(ModelSpec::from(mfq_model::models::PodLdSpec { lambda: 0.9, d: 3, eps: 0.5, g: 1 }));
    assert!((fp.x[1] - 0.6666047381).abs() < 1e-9 && (fp.x[2] - 0.3277034627).abs() < 1e-9);
    assert!((fp.observables.mean_response_time.unwrap() - 2.21866450).abs() < 1e-7);
    let fp = solve(ModelSpec::from(mfq_model::models::PodLdSpec { lambda: 0.95, d: 2, eps: 1.0, g: 3 }));
    assert!((fp.x[1] - 0.8816804993).abs() < 1e-9 && (fp.x[2] - 0.7955909921).abs() < 1e-9);
    assert!((fp.observables.mean_response_time.unwrap() - 5.49394496).abs() < 1e-7);
}

/// d = 2, eps = 1/2 load-independent: phi(x) = x, so the model is random routing, i.e. each
/// server is an M/M/1/K queue: x_k = (lambda^k - lambda^(K+1)) / (1 - lambda^(K+1)) exactly at
/// truncation level K (and lambda^k untruncated).
#[test]
fn pod_li_half_errors_is_random_routing() {
    for lambda in [0.3, 0.7, 0.95] {
        let fp = solve(ModelSpec::from(mfq_model::models::PodLiSpec { lambda, d: 2, eps: 0.5 }));
        let big_k = fp.x.len() as i32;
        let tail_k1 = lambda.powi(big_k + 1);
        for (k, x) in fp.x.iter().enumerate() {
            let exact = (lambda.powi(k as i32 + 1) - tail_k1) / (1.0 - tail_k1);
            assert!((x - exact).abs() < 1e-14, "lambda={lambda} k={}: {x} vs {exact}", k + 1);
        }
        // M/M/1/K: L = sum_k x_k, accepted rate lambda (1 - x_K), T = L / (lambda (1 - x_K))
        let l: f64 = (1..=big_k).map(|k| (lambda.powi(k) - tail_k1) / (1.0 - tail_k1)).sum();
        let x_k = (lambda.powi(big_k) - tail_k1) / (1.0 - tail_k1);
        assert!((fp.observables.mean_response_time.unwrap() - l / (lambda * (1.0 - x_k))).abs() < 1e-11);
    }
}

/// Bhambay et al. 2024 (abstract): for eps > 1/d the system is unstable for lambda >= 1/(eps d).
#[test]
fn pod_li_beyond_the_threshold_is_reported_unstable() {
    let e = solve_spec(
        &ModelSpec::from(mfq_model::models::PodLiSpec { lambda: 0.7, d: 3, eps: 0.5 }),
        &Truncation::default(),
        &FixedPointOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, FixedPointError::Unstable { .. }), "{e}");
    assert!(e.to_string().contains("1/(eps d)"), "{e}");
}

/// JIQ fixed point x_1 = lambda, x_k = 0 (k >= 2), T = 1: Stolyar 2015 (fraction busy = lambda).
#[test]
fn jiq_fixed_point() {
    for lambda in [0.3, 0.9, 0.99] {
        let fp = solve(ModelSpec::from(mfq_model::models::JiqSpec { lambda }));
        assert!((fp.x[0] - lambda).abs() < 1e-14);
        assert!(fp.x[1..].iter().all(|v| v.abs() < 1e-14));
        assert!((fp.observables.mean_response_time.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(fp.observables.prob_wait, Some(0.0));
    }
}

/// A fixed K too small for the tolerance is an error naming truncation.levels.
#[test]
fn fixed_truncation_too_small() {
    let t = Truncation { levels: Some(3), ..Truncation::default() };
    let e = solve_spec(&ModelSpec::from(mfq_model::models::JsqSpec { lambda: 0.9, d: 2 }), &t, &FixedPointOptions::default()).unwrap_err();
    assert!(e.to_string().contains("truncation.levels = 3"), "{e}");
}

/// `truncation.buffer = true`: the fixed K is the system's finite buffer, so `x_K` is its
/// blocking mass, not a truncation error (models/refined/*.toml failed in `fixed-point`,
/// `report` and `refined` before). JSQ(2) with buffer K: summing the drift from level k to K
/// gives the balance `x_k = lambda (x_{k-1}^2 - x_K^2)` (arrivals to level k minus the lost
/// ones equal departures from it), a one-dimensional equation in `x_K` solved here by
/// bisection; the loss probability is `x_K^2`. Without `levels` the key is refused.
#[test]
fn a_finite_buffer_is_the_system_not_a_truncation_error() {
    let (lambda, k) = (0.9, 3);
    let chain = |xk: f64| {
        let mut x = vec![1.0];
        for j in 1..=k {
            x.push(lambda * (x[j - 1] * x[j - 1] - xk * xk));
        }
        x
    };
    let (mut a, mut b) = (0.0, lambda);
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if (chain(a)[k] - a) * (chain(m)[k] - m) <= 0.0 {
            b = m;
        } else {
            a = m;
        }
    }
    let want = chain(0.5 * (a + b));
    let t = Truncation { levels: Some(k), buffer: true, ..Truncation::default() };
    let fp = solve_spec(&ModelSpec::from(mfq_model::models::JsqSpec { lambda, d: 2 }), &t, &FixedPointOptions::default()).unwrap();
    for (j, (got, want)) in fp.x.iter().zip(&want[1..]).enumerate() {
        assert!((got - want).abs() < 1e-12, "x_{}: {got} vs {want}", j + 1);
    }
    assert!((fp.observables.loss_probability - want[k] * want[k]).abs() < 1e-12, "{}", fp.observables.loss_probability);
    // P(wait): routed to two busy servers and not lost, x_1^2 - x_K^2 (0.6488; x_1^2 = 0.7116
    // counted the lost arrivals as waiting). The simulator counts the same fraction of all
    // arrivals: the N = 1000 system agrees within its interval plus the O(1/N) gap of the mean
    // field (about 4/N for JSQ(2), docs/simulation.md). The simulation takes its buffer from
    // the truncation (`mfq simulate` ran an unlimited buffer before).
    let pw = fp.observables.prob_wait.unwrap();
    assert!((pw - (want[1] * want[1] - want[k] * want[k])).abs() < 1e-12, "{pw}");
    let opts = mfq_sim::SimOptions { servers: 1000, time: 1000.0, replications: 2, ..Default::default() };
    let sim = mfq::Model::new(mfq_model::models::JsqSpec { lambda, d: 2 }, t).simulate(&opts).unwrap();
    assert_eq!(sim.options.buffer, Some(k as u32));
    for (name, est, mf) in
        [("prob_wait", sim.prob_wait.unwrap(), pw), ("loss_probability", sim.loss_probability.unwrap(), want[k] * want[k])]
    {
        assert!(
            (est.mean - mf).abs() < 3.0 * est.half_width + 4e-3,
            "{name}: simulation {} +- {} vs mean field {mf}",
            est.mean,
            est.half_width
        );
    }
    let e = Truncation { buffer: true, ..Truncation::default() }.validate().unwrap_err();
    assert!(e.to_string().contains("truncation.buffer"), "{e}");
}
