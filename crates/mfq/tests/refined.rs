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

/// `E[(S, I)]` of the N-object SIRS chain of models/generic/sir.toml (a = 0.1, b = 2, gamma = 1,
/// xi = 0.5), from its generator: `(s, i) -> (s - 1, i + 1)` at rate `N (a + b i/N) s/N`,
/// `(s, i) -> (s, i - 1)` at rate `gamma i`, `(s, i) -> (s + 1, i)` at rate `xi (N - s - i)`;
/// the stationary law solves `pi G = 0`, `sum pi = 1` (dense LU, (N+1)(N+2)/2 states).
fn exact_sirs_mean(n: usize) -> [f64; 2] {
    let (a, b, gamma, xi) = (0.1, 2.0, 1.0, 0.5);
    let nf = n as f64;
    let states: Vec<(usize, usize)> = (0..=n).flat_map(|s| (0..=n - s).map(move |i| (s, i))).collect();
    let index = |s: usize, i: usize| states.iter().position(|&p| p == (s, i)).unwrap();
    let m = states.len();
    // G^T with the last row replaced by the normalisation
    let mut gt = nalgebra::DMatrix::<f64>::zeros(m, m);
    for (k, &(s, i)) in states.iter().enumerate() {
        let mut out = Vec::new();
        if s > 0 {
            out.push((index(s - 1, i + 1), nf * (a + b * i as f64 / nf) * s as f64 / nf));
        }
        if i > 0 {
            out.push((index(s, i - 1), gamma * i as f64));
        }
        if s + i < n {
            out.push((index(s + 1, i), xi * (n - s - i) as f64));
        }
        for (to, rate) in out {
            gt[(to, k)] += rate;
            gt[(k, k)] -= rate;
        }
    }
    let mut rhs = nalgebra::DVector::<f64>::zeros(m);
    for k in 0..m {
        gt[(m - 1, k)] = 1.0;
    }
    rhs[m - 1] = 1.0;
    let pi = gt.lu().solve(&rhs).unwrap();
    let mut mean = [0.0; 2];
    for (k, &(s, i)) in states.iter().enumerate() {
        mean[0] += pi[k] * s as f64 / nf;
        mean[1] += pi[k] * i as f64 / nf;
    }
    mean
}

/// A two-dimensional check of the 1/N^2 term (cross derivatives, the three-index tensor C and
/// B): the SIRS model against its exact N-object chain at N = 20, 30, 45 (at N = 10 the 1/N^2
/// term overshoots: the expansion is asymptotic). Order 2 is the closer at every N; the fitted
/// slopes of the errors between N = 30 and 45 are 1.7 (order 1: the 1/N^3 term is still large
/// beside A/N^2) and 4.1 (order 2, at least 2.8 asserted). At these sizes the 1/N^4 term is still large;
/// validation/refined.py solves the chain up to N = 320 (sparse), where N^3 times the order-2
/// error settles near a constant (-27, -15, -5.4, -0.72, 1.26 for S at N = 20..320).
#[test]
fn sirs_second_order_against_the_exact_chain() {
    let m = model("models/generic/sir.toml");
    let sizes = [20.0, 30.0, 45.0];
    let r = m.refined_terms(&RefinedOptions { order: 2, servers: sizes.to_vec(), ..Default::default() }).unwrap();
    let (x, v) = (&r.terms.x, &r.terms.v);
    let mut errs = Vec::new();
    for (e, &n) in r.estimates.iter().zip(&sizes) {
        let exact = exact_sirs_mean(n as usize);
        let e1 = (0..2).map(|i| (x[i] + v[i] / n - exact[i]).abs()).fold(0.0, f64::max);
        let e2 = (0..2).map(|i| (e.state[i] - exact[i]).abs()).fold(0.0, f64::max);
        assert!(e2 < e1, "N = {n}: {e2:e} >= {e1:e}");
        errs.push((n, e1, e2));
    }
    let slope = |k: usize| {
        let (a, b) = (errs[1], errs[2]);
        let (ea, eb) = if k == 1 { (a.1, b.1) } else { (a.2, b.2) };
        (ea / eb).ln() / (b.0 / a.0).ln()
    };
    assert!(slope(1) > 1.5, "order-1 slope {} ({errs:?})", slope(1));
    assert!(slope(2) > 2.8, "order-2 slope {} ({errs:?})", slope(2));
}

/// Majority rule with stubborn agents (kind `opinion-stubborn`, gamma0 = 0.3, gamma1 = 0.35: one
/// equilibrium) to order 2 against its exact chain: with M non-stubborn agents, k of them with
/// opinion 1, `k -> k + 1` at rate `(M - k) p^2`, `k -> k - 1` at rate `k (1 - p)^2`,
/// `p = gamma1 + (1 - gamma0 - gamma1) k / M`: a birth-death chain (product form). The refined
/// estimates (N = M) are closer at order 2, with errors falling like 1/N^2 and 1/N^3.
#[test]
fn stubborn_opinion_refined_terms_against_the_exact_chain() {
    let (g0, g1) = (0.3, 0.35);
    let m = Model::from_toml(&format!("[model]\nkind = \"opinion-stubborn\"\ngamma0 = {g0}\ngamma1 = {g1}\n"), &[]).unwrap();
    let sizes = [50.0, 100.0, 200.0];
    let r = m.refined_terms(&RefinedOptions { order: 2, servers: sizes.to_vec(), ..Default::default() }).unwrap();
    let exact = |n: usize| {
        let p = |k: usize| g1 + (1.0 - g0 - g1) * k as f64 / n as f64;
        let mut w = vec![1.0f64; n + 1];
        for k in 1..=n {
            w[k] = w[k - 1] * ((n - k + 1) as f64 * p(k - 1).powi(2)) / (k as f64 * (1.0 - p(k)).powi(2));
        }
        let z: f64 = w.iter().sum();
        w.iter().enumerate().map(|(k, q)| q * k as f64 / n as f64).sum::<f64>() / z
    };
    let mut errs = Vec::new();
    for (e, &n) in r.estimates.iter().zip(&sizes) {
        let ex = exact(n as usize);
        let e1 = (r.terms.x[0] + r.terms.v[0] / n - ex).abs();
        let e2 = (e.state[0] - ex).abs();
        assert!(e2 < e1, "N = {n}: {e2:e} >= {e1:e}");
        errs.push((e1, e2));
    }
    let s1 = (errs[1].0 / errs[2].0).ln() / 2f64.ln();
    let s2 = (errs[1].1 / errs[2].1).ln() / 2f64.ln();
    assert!((s1 - 2.0).abs() < 0.2 && s2 > 2.7, "slopes {s1} {s2} ({errs:?})");
}
