//! The refined mean field (docs/refined.md) against values the code did not produce: the
//! one-dimensional SIS model of Gast, Bortolussi and Tribastone ("Size expansions of mean field
//! approximation: transient and steady-state analysis", Performance Evaluation 2018), whose
//! finite-N stationary distribution is a product (a birth-death chain, computed here), and the
//! closed forms of its fixed point, `V` and `A`.

use mfq::{Model, RefinedOptions};
use std::path::Path;

fn model(path: &str) -> Model {
    Model::from_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path), &[]).unwrap()
}

/// `E[X]` of the N-object SIS chain: from `k` infected, `k -> k + 1` at rate `N (1 - k/N)(1 + k/N)`,
/// `k -> k - 1` at rate `k`; the stationary law is `pi_k ~ prod_{i<k} up(i) / down(i + 1)`.
fn exact_sis_mean(n: usize) -> f64 {
    let nf = n as f64;
    let up = |k: usize| nf * (1.0 - k as f64 / nf) * (1.0 + k as f64 / nf);
    let down = |k: usize| k as f64;
    let mut w = vec![1.0f64; n + 1];
    for k in 1..=n {
        w[k] = w[k - 1] * up(k - 1) / down(k);
    }
    let z: f64 = w.iter().sum();
    w.iter().enumerate().map(|(k, p)| p * k as f64 / nf).sum::<f64>() / z
}

/// The exact means of the paper's example (N = 5, 10, 20, 50) are those of the product form.
#[test]
fn sis_exact_chain_matches_the_published_means() {
    for (n, published) in [(5, 0.5929041), (10, 0.6055449), (20, 0.6118184), (50, 0.6155559)] {
        let e = exact_sis_mean(n);
        assert!((e - published).abs() < 6e-8, "N = {n}: {e} vs {published}");
    }
}

/// x* = (sqrt 5 - 1)/2, V = -(sqrt 5 - 1)/10, A = (sqrt 5 - 3)/50 (closed forms, docs/refined.md),
/// and x* + V/N + A/N^2 is closer to the exact mean than x* + V/N, with an error ~ 1/N^3.
#[test]
fn sis_refined_terms_and_errors() {
    let m = model("models/generic/sis.toml");
    let s5 = 5f64.sqrt();
    let opts = RefinedOptions { order: 2, servers: vec![5.0, 10.0, 20.0, 50.0], ..Default::default() };
    let r = m.refined_terms(&opts).unwrap();
    assert!((r.fixed_point.x[0] - (s5 - 1.0) / 2.0).abs() < 1e-12);
    assert!((r.terms.v[0] + (s5 - 1.0) / 10.0).abs() < 1e-10, "V = {}", r.terms.v[0]);
    let a = r.terms.a.as_ref().unwrap()[0];
    assert!((a - (s5 - 3.0) / 50.0).abs() < 1e-8, "A = {a}");
    let mut errs = Vec::new();
    for e in &r.estimates {
        let n = e.servers;
        let exact = exact_sis_mean(n as usize);
        let first = r.terms.x[0] + r.terms.v[0] / n;
        let second = e.state[0];
        assert!((second - first - a / (n * n)).abs() < 1e-15);
        let (e1, e2) = ((first - exact).abs(), (second - exact).abs());
        assert!(e2 < e1, "N = {n}: order 2 error {e2:e} >= order 1 error {e1:e}");
        errs.push((n, e1, e2));
    }
    // errors of order 1 fall like 1/N^2, of order 2 like 1/N^3: slopes between N = 20 and 50
    let slope = |i: usize, j: usize, k: usize| {
        let (a, b) = (errs[i], errs[j]);
        let (ea, eb) = if k == 1 { (a.1, b.1) } else { (a.2, b.2) };
        (ea / eb).ln() / (b.0 / a.0).ln()
    };
    assert!((slope(2, 3, 1) - 2.0).abs() < 0.15, "order-1 slope {}", slope(2, 3, 1));
    assert!((slope(2, 3, 2) - 3.0).abs() < 0.25, "order-2 slope {}", slope(2, 3, 2));
}

/// The transient terms tend to the steady-state terms as t grows, at both orders (SIS from
/// X(0) = 0.1, and JSQ(2) at lambda = 0.7, K = 8 from the empty state).
#[test]
fn transient_terms_tend_to_the_steady_state_terms() {
    for (path, levels, x0, t_end) in
        [("models/generic/sis.toml", None, vec![0.1], 30.0), ("models/jsq-d2.toml", Some(8), vec![0.0; 8], 120.0)]
    {
        let mut m = model(path);
        if let Some(k) = levels {
            m = m.with(&[format!("truncation.levels={k}"), "lambda=0.7".into()]).unwrap();
        }
        let fp = m.fixed_point(&Default::default()).unwrap();
        let st = m.refined_of_order(&fp, 2).unwrap();
        let tr = m.refined_transient(levels, &x0, t_end, 10, 2).unwrap();
        let last = tr.t.len() - 1;
        let a = st.a.as_ref().unwrap();
        let at = tr.a.as_ref().unwrap();
        for i in 0..x0.len() {
            assert!((tr.x[last][i] - st.x[i]).abs() < 1e-8, "{path} x[{i}]");
            assert!((tr.v[last][i] - st.v[i]).abs() < 1e-6 * (1.0 + st.v[i].abs()), "{path} V[{i}] {} vs {}", tr.v[last][i], st.v[i]);
            assert!((at[last][i] - a[i]).abs() < 1e-5 * (1.0 + a[i].abs()), "{path} A[{i}] {} vs {}", at[last][i], a[i]);
        }
        for (w, ws) in tr.last_covariance.iter().zip(&st.covariance) {
            assert!((w - ws).abs() < 1e-6 * (1.0 + ws.abs()));
        }
    }
}

/// JSQ(2) at lambda = 0.9 to order 2: sum V = 3.986427 (rmf_tool; the order-1 test of
/// crates/mfq/src/model.rs) is unchanged, and A_1 = 0: in the N-server system every accepted job
/// leaves, so E[X_1^N] = lambda (1 - P(loss)) exactly, with no 1/N or 1/N^2 term (the loss at
/// K = 20 is below 1e-300).
#[test]
fn jsq2_second_order_keeps_the_flow_balance() {
    let m = model("models/jsq-d2.toml").with(&["truncation.levels=20".into()]).unwrap();
    let r = m.refined_terms(&RefinedOptions { order: 2, servers: vec![10.0], ..Default::default() }).unwrap();
    assert!((r.terms.sum_v - 3.986427).abs() < 2e-6);
    assert!(r.terms.v[0].abs() < 1e-9, "V_1 = {}", r.terms.v[0]);
    let a = r.terms.a.as_ref().unwrap();
    assert!(a[0].abs() < 1e-7, "A_1 = {}", a[0]);
    assert!(a.iter().any(|v| v.abs() > 1e-2), "A vanishes: {a:?}");
}
