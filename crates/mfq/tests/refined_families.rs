//! The refined mean field of the phase-type and heterogeneous-class models (docs/refined.md,
//! "Phase-type jobs", "Heterogeneous classes") against values the code did not produce: the
//! rmf_tool value of JSQ(2) (one exponential phase), the exact stationary law of the `N`-server
//! chain (`mfq_sim::exact`, a sparse solve, no expansion), the event-driven simulation of the
//! system's rules (crates/mfq-sim/src/families/phase.rs), and independent M/M/1/K queues.

use mfq::{ExactOptions, Model, RefinedOptions};

fn model(text: &str) -> Model {
    Model::from_toml(text, &[]).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// SQ(2) with H2 sizes (mean 1, `scv`, f = 1/2), buffer `k`.
fn sq2_h2(lambda: f64, scv: f64, k: usize) -> Model {
    model(&format!(
        "[model]\nkind = \"jsq-ph\"\nlambda = {lambda}\nd = 2\n[model.job_size]\nlaw = \"h2\"\nscv = {scv}\nf = 0.5\n[truncation]\nlevels = {k}\n"
    ))
}

/// `ps-sq2`, two classes of half the servers each, capacities 1.6 and 0.4 (case A of
/// docs/models/heterogeneous.md), buffer `k`.
fn ps_sq2(lambda: f64, k: usize) -> Model {
    model(&format!(
        "[model]\nkind = \"ps-sq2\"\nlambda = {lambda}\n[[model.classes]]\nfraction = 0.5\nspeed = 1.6\n[[model.classes]]\nfraction = 0.5\nspeed = 0.4\n[truncation]\nlevels = {k}\n"
    ))
}

/// The refined report (order 1 or 2) of the finite-buffer system the file describes (the
/// model truncated at its `truncation.levels`, mass at `K` and losses included).
fn finite_refined(m: &Model, order: u8, sizes: &[f64]) -> mfq::RefinedReport {
    let f = m.finite_mean_field(&mfq::FixedPointOptions::default()).unwrap();
    assert!(f.buffer.is_some() && f.fixed_point.converged());
    m.refined_at(f.fixed_point, order, sizes).unwrap()
}

/// Mean queue length per N: the errors of the mean field, of `x* + V/N` and of
/// `x* + V/N + A/N^2` against the exact `N`-server chain.
fn errors(m: &Model, sizes: &[usize]) -> Vec<(usize, f64, f64, f64)> {
    let servers: Vec<f64> = sizes.iter().map(|&n| n as f64).collect();
    let (r1, r2) = (finite_refined(m, 1, &servers), finite_refined(m, 2, &servers));
    let mf = r1.mean_field.as_ref().unwrap().mean_queue_length.unwrap();
    sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let e = m.exact(&ExactOptions { servers: n, ..Default::default() }).unwrap();
            let exact = e.observables.mean_queue_length.unwrap();
            let (l1, l2) = (r1.estimates[i].mean_queue_length.unwrap(), r2.estimates[i].mean_queue_length.unwrap());
            eprintln!("N = {n}: exact {exact:.8} ({} states), mean field {mf:.8}, order 1 {l1:.8}, order 2 {l2:.8}", e.states);
            (n, (mf - exact).abs(), (l1 - exact).abs(), (l2 - exact).abs())
        })
        .collect()
}

/// Checks the errors against the exact chain: each order is closer than the one before at
/// every N, the order-1 error is below the mean field's by `gain` at the largest N, and between
/// the first and the last N the errors of orders 1 and 2 fall at least like `1/N^slopes.0` and
/// `1/N^slopes.1` (expected: 2 and 3).
fn check_orders(what: &str, errs: &[(usize, f64, f64, f64)], gain: f64, slopes: (f64, f64)) {
    for &(n, e0, e1, e2) in errs {
        eprintln!("{what} N = {n}: |error| mean field {e0:.3e}, order 1 {e1:.3e}, order 2 {e2:.3e}");
        assert!(e1 < e0 && e2 < e1, "{what} N = {n}: {e0:e} {e1:e} {e2:e}");
    }
    let (n_a, _, a1, a2) = errs[0];
    let &(n_b, b0, b1, b2) = errs.last().unwrap();
    assert!(b0 > gain * b1, "{what} N = {n_b}: mean field {b0:e}, order 1 {b1:e}");
    let r = (n_b as f64 / n_a as f64).ln();
    let fitted = ((a1 / b1).ln() / r, (a2 / b2).ln() / r);
    eprintln!("{what}: error slopes {:.2} (order 1), {:.2} (order 2) between N = {n_a} and {n_b}", fitted.0, fitted.1);
    assert!(fitted.0 > slopes.0 && fitted.1 > slopes.1, "{what}: slopes {fitted:?}");
}

/// SQ(2) with H2 sizes (SCV 4), lambda = 0.7, buffer 3: the exact chain of the N-server system
/// (servers idle or (n, phase); 462 and 8008 states) against x*, x* + V/N, x* + V/N + A/N^2.
#[test]
fn phase_type_against_the_exact_chain() {
    let errs = errors(&sq2_h2(0.7, 4.0, 3), &[5, 10]);
    check_orders("SQ(2) H2", &errs, 2.5, (1.5, 2.0));
}

/// `ps-sq2` (case A capacities 1.6 and 0.4, half the servers each), lambda = 0.7, buffer 3:
/// the exact chain at N = 8 and 16 (1225 and 27225 states).
#[test]
fn heterogeneous_ps_sq2_against_the_exact_chain() {
    let errs = errors(&ps_sq2(0.7, 3), &[8, 16]);
    check_orders("ps-sq2", &errs, 10.0, (2.2, 2.5));
}

/// The simulation of the system's rules (crates/mfq-sim/src/families/phase.rs: servers, phases,
/// d = 2 samples with replacement, buffer 3), not of the transitions, at N = 20 (3.5 million
/// events): `x* + V/N` lies within the CI plus the O(1/N^2) remainder (the order-2 term, with
/// half again as margin), `x* + V/N + A/N^2` within the CI plus 1e-3, and both far closer than
/// the mean field.
#[test]
fn phase_type_against_the_simulation() {
    let m = sq2_h2(0.7, 4.0, 3);
    let n = 20.0;
    let r = finite_refined(&m, 2, &[n]);
    let mf = r.mean_field.as_ref().unwrap().mean_queue_length.unwrap();
    let e = &r.expansion;
    let (c1, c2): (f64, f64) = (e.tail.iter().map(|t| t.c1).sum(), e.tail.iter().map(|t| t.c2).sum());
    let (first, second) = (mf + c1 / n, mf + c1 / n + c2 / (n * n));
    let opts = mfq::SimOptions {
        servers: 20,
        time: 100_000.0,
        warmup: 500.0,
        replications: 4,
        batches: 25,
        seed: 3,
        buffer: Some(3),
        ..Default::default()
    };
    let s = m.simulate(&opts).unwrap();
    let (sim, hw) = (s.mean_queue_length.mean, s.mean_queue_length.half_width);
    eprintln!("N = 20: simulation {sim:.5} +- {hw:.5}; mean field {mf:.5}, order 1 {first:.5}, order 2 {second:.5}");
    eprintln!("|errors|: mean field {:.2e}, order 1 {:.2e}, order 2 {:.2e}", (sim - mf).abs(), (sim - first).abs(), (sim - second).abs());
    assert!(hw < 0.005, "CI half width {hw}");
    assert!((sim - first).abs() < hw + 1.5 * c2.abs() / (n * n), "order 1 {first} vs simulation {sim} +- {hw}");
    assert!((sim - second).abs() < hw + 1e-3, "order 2 {second} vs simulation {sim} +- {hw}");
    assert!((sim - mf).abs() > 3.0 * (sim - second).abs().max(hw), "mean field {mf}, simulation {sim} +- {hw}");
}

/// Static routing: every server is an independent M/M/1/K queue at load rho_j, so V = A = 0 and
/// the exact chain gives the M/M/1/K tails P(Q >= k) = (rho^k - rho^(K+1)) / (1 - rho^(K+1)).
#[test]
fn static_routing_has_no_correction() {
    let m = model(
        "[model]\nkind = \"static-routing\"\nlambda = 0.7\n[[model.classes]]\nfraction = 0.5\nspeed = 1.6\n[[model.classes]]\nfraction = 0.5\nspeed = 0.4\n[truncation]\nlevels = 3\n",
    );
    let r = finite_refined(&m, 2, &[8.0]);
    assert!(r.terms.v.iter().chain(r.terms.a.as_ref().unwrap()).all(|v| v.abs() < 1e-9), "{:?}", r.terms.v);
    let e = m.exact(&ExactOptions { servers: 8, ..Default::default() }).unwrap();
    let f = m.finite_mean_field(&mfq::FixedPointOptions::default()).unwrap();
    let rho = ["class1.load", "class2.load"].map(|k| f.fixed_point.observables.extras.iter().find(|e| e.0 == k).unwrap().1);
    for (j, rho) in rho.iter().enumerate() {
        for k in 1..=3 {
            let want = (rho.powi(k as i32) - rho.powi(4)) / (1.0 - rho.powi(4));
            let (x, ex) = (f.fixed_point.x[j * 3 + k - 1], e.mean[j * 3 + k - 1]);
            assert!((x - want).abs() < 1e-10 && (ex - want).abs() < 1e-10, "class {j} k {k}: x* {x}, exact {ex}, M/M/1/K {want}");
        }
    }
}

/// Non-smooth variants are refused with the reason (as JIQ): PULL, the speed-aware kinds, JIQ
/// with H2 jobs; order 2 of a 3-phase law (rates of 6 entries) is `Unsupported`, saying so.
#[test]
fn refusals_say_why() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for file in
        ["models/hetero-pull-caseA.toml", "models/hetero-sa-jsq-caseA.toml", "models/hetero-sa-jiq-caseA.toml", "models/jiq-h2.toml"]
    {
        let m = Model::from_file(&root.join(file), &[]).unwrap();
        let e = m.refined_terms(&RefinedOptions { order: 1, servers: vec![10.0], ..Default::default() }).unwrap_err().to_string();
        assert!(e.contains("non-smooth"), "{file}: {e}");
    }
    let m = model("[model]\nkind = \"jsq-ph\"\nlambda = 0.5\nd = 2\n[model.job_size]\nlaw = \"erlang\"\nk = 3\n");
    assert!(m.refined_terms(&RefinedOptions { order: 1, servers: vec![10.0], ..Default::default() }).is_ok());
    let e = m.refined_terms(&RefinedOptions { order: 2, servers: vec![10.0], ..Default::default() }).unwrap_err().to_string();
    assert!(e.contains("depends on 6 state entries") && e.contains("at most 4"), "{e}");
}

/// With one exponential phase the phase-type model is JSQ(2): sum V = 3.986427 at lambda 0.9,
/// K = 20 (rmf_tool and SciPy, docs/references.md), and its order-2 terms equal JSQ(2)'s.
#[test]
fn exponential_phase_is_jsq2() {
    let ph = model("[model]\nkind = \"jsq-ph\"\nlambda = 0.9\nd = 2\n[model.job_size]\nlaw = \"exponential\"\n[truncation]\nlevels = 20\n");
    let jsq = model("[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n[truncation]\nlevels = 20\n");
    let opts = RefinedOptions { order: 2, servers: vec![10.0], ..Default::default() };
    let (a, b) = (ph.refined_terms(&opts).unwrap(), jsq.refined_terms(&opts).unwrap());
    assert!((a.terms.sum_v - 3.986427).abs() < 2e-6, "{}", a.terms.sum_v);
    assert!((a.terms.mean_queue_length_correction.unwrap() - 3.986427).abs() < 2e-6);
    for (x, y) in a.terms.v.iter().zip(&b.terms.v) {
        assert!((x - y).abs() < 1e-9, "{x} vs {y}");
    }
    for (x, y) in a.terms.a.unwrap().iter().zip(b.terms.a.as_ref().unwrap()) {
        assert!((x - y).abs() < 1e-6 * (1.0 + y.abs()), "A: {x} vs {y}");
    }
}
