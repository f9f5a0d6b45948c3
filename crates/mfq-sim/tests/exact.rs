//! The exact finite-N chain (`mfq_sim::exact`) against values it did not produce: the M/M/1/B
//! product form, a dense solve of a chain written from the system's rules, the exact SIS means
//! of Gast, Bortolussi and Tribastone (Performance 2018), and its own two solvers.

use mfq_model::models::Jsq;
use mfq_model::ModelFile;

use mfq_sim::exact::{exact, ExactError, ExactMethod, ExactOptions, ExactStatus};

fn opts(servers: usize, method: ExactMethod) -> ExactOptions {
    ExactOptions { servers, method, ..Default::default() }
}

/// JSQ(1) (random routing) with buffer B: N independent M/M/1/B queues, so
/// `E[x_k] = P(Q >= k) = (rho^k - rho^(B+1)) / (1 - rho^(B+1))` for every N.
#[test]
fn random_routing_is_mm1_with_a_finite_buffer() {
    let (rho, b) = (0.7f64, 4usize);
    let m = Jsq::new(rho, 1, b).unwrap();
    for n in [1, 3, 6, 12] {
        for method in [ExactMethod::SparseLu, ExactMethod::Iterative] {
            let r = exact(&m, &opts(n, method)).unwrap();
            assert_eq!(r.status, ExactStatus::Converged);
            for k in 1..=b {
                let want = (rho.powi(k as i32) - rho.powi(b as i32 + 1)) / (1.0 - rho.powi(b as i32 + 1));
                assert!((r.mean[k - 1] - want).abs() < 1e-11, "N = {n}, {method:?}, k = {k}: {} vs {want}", r.mean[k - 1]);
            }
            // an arrival is lost when its server holds B jobs: P(Q = B)
            let loss = (rho.powi(b as i32) - rho.powi(b as i32 + 1)) / (1.0 - rho.powi(b as i32 + 1));
            assert!((r.observables.loss_probability - loss).abs() < 1e-11);
            let t = r.observables.mean_response_time.unwrap();
            let l: f64 = r.mean.iter().sum();
            assert!((t - l / (rho * (1.0 - loss))).abs() < 1e-11);
            assert!(r.residual < 1e-12, "{}", r.residual);
        }
    }
}

/// The generator of JSQ(2) with `n` servers and buffer `b`, written from the system's rules
/// (sorted vectors of queue lengths; an arrival samples two servers with replacement and joins
/// a shorter one, lost if it holds `b` jobs; each busy server completes at rate 1), solved by
/// dense Gaussian elimination: `E[x_k]`.
fn dense_jsq2(lambda: f64, n: usize, b: usize) -> Vec<f64> {
    // all sorted vectors of n queue lengths in 0..=b
    let mut states: Vec<Vec<usize>> = vec![vec![]];
    for _ in 0..n {
        states = states
            .into_iter()
            .flat_map(|s| {
                let lo = s.last().copied().unwrap_or(0);
                (lo..=b).map(move |q| {
                    let mut t = s.clone();
                    t.push(q);
                    t
                })
            })
            .collect();
    }
    let index = |s: &Vec<usize>| states.iter().position(|t| t == s).unwrap();
    let m = states.len();
    let mut q = vec![vec![0.0; m]; m];
    for (i, s) in states.iter().enumerate() {
        let mut go = |mut t: Vec<usize>, rate: f64| {
            t.sort_unstable();
            let j = index(&t);
            q[i][j] += rate;
            q[i][i] -= rate;
        };
        for a in 0..n {
            for c in 0..n {
                let target = if s[a] <= s[c] { a } else { c };
                if s[target] < b {
                    let mut t = s.clone();
                    t[target] += 1;
                    go(t, n as f64 * lambda / (n * n) as f64);
                }
            }
            if s[a] > 0 {
                let mut t = s.clone();
                t[a] -= 1;
                go(t, 1.0);
            }
        }
    }
    // pi Q = 0, sum pi = 1: A = Q^T with the last row replaced by ones
    let mut a: Vec<Vec<f64>> = (0..m).map(|r| (0..m).map(|c| if r == m - 1 { 1.0 } else { q[c][r] }).collect()).collect();
    let mut rhs = vec![0.0; m];
    rhs[m - 1] = 1.0;
    for col in 0..m {
        let p = (col..m).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs())).unwrap();
        a.swap(col, p);
        rhs.swap(col, p);
        let (top, rest) = a.split_at_mut(col + 1);
        let pivot = &top[col];
        for (r, row) in rest.iter_mut().enumerate() {
            let f = row[col] / pivot[col];
            row.iter_mut().zip(pivot).skip(col).for_each(|(v, p)| *v -= f * p);
            rhs[col + 1 + r] -= f * rhs[col];
        }
    }
    let mut pi = vec![0.0; m];
    for r in (0..m).rev() {
        let s: f64 = (r + 1..m).map(|c| a[r][c] * pi[c]).sum();
        pi[r] = (rhs[r] - s) / a[r][r];
    }
    (1..=b).map(|k| states.iter().zip(&pi).map(|(s, p)| p * s.iter().filter(|&&v| v >= k).count() as f64 / n as f64).sum()).collect()
}

#[test]
fn jsq2_matches_a_dense_solve_of_the_system_rules() {
    for (n, b) in [(2, 3), (3, 3), (4, 2)] {
        let want = dense_jsq2(0.9, n, b);
        let m = Jsq::new(0.9, 2, b).unwrap();
        for method in [ExactMethod::SparseLu, ExactMethod::Iterative] {
            let r = exact(&m, &opts(n, method)).unwrap();
            for k in 0..b {
                assert!((r.mean[k] - want[k]).abs() < 1e-11, "N = {n}, B = {b}, {method:?}: {:?} vs {want:?}", r.mean);
            }
        }
    }
}

/// C(N + K, K) states, and the two solvers agree on 3003 states (JSQ(2), N = 10, K = 5).
#[test]
fn the_two_solvers_agree_on_jsq2_with_3003_states() {
    let m = Jsq::new(0.9, 2, 5).unwrap();
    let lu = exact(&m, &opts(10, ExactMethod::SparseLu)).unwrap();
    let it = exact(&m, &opts(10, ExactMethod::Iterative)).unwrap();
    assert_eq!(lu.states, 3003);
    assert_eq!(it.states, 3003);
    assert_eq!(it.status, ExactStatus::Converged);
    for k in 0..5 {
        assert!((lu.mean[k] - it.mean[k]).abs() < 1e-10, "{:?} vs {:?}", lu.mean, it.mean);
    }
    assert!(lu.residual < 1e-12 && it.residual < 1e-12, "{} {}", lu.residual, it.residual);
}

/// The exact birth-death means of the SIS model (Gast, Bortolussi and Tribastone, Performance
/// 2018, "Size expansions of mean field approximation").
#[test]
fn sis_exact_means_are_the_published_ones() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/generic/sis.toml");
    let file = ModelFile::parse(&std::fs::read_to_string(path).unwrap(), &[]).unwrap();
    let m = file.model.build(1).unwrap();
    for (n, want) in [(5, 0.5929041), (10, 0.6055449), (20, 0.6118184), (50, 0.6155559)] {
        let r = exact(m.as_ref(), &opts(n, ExactMethod::Auto)).unwrap();
        assert_eq!(r.states, n + 1);
        assert!((r.mean[0] - want).abs() < 5e-8, "N = {n}: {} vs {want}", r.mean[0]);
        let it = exact(m.as_ref(), &opts(n, ExactMethod::Iterative)).unwrap();
        assert!((it.mean[0] - want).abs() < 5e-8, "N = {n}: {} vs {want}", it.mean[0]);
    }
}

#[test]
fn misuse_is_refused_with_the_reason() {
    let m = Jsq::new(0.9, 2, 8).unwrap();
    let e = exact(&m, &ExactOptions { servers: 60, ..Default::default() }).unwrap_err();
    assert!(matches!(e, ExactError::TooManyStates { estimate: Some(_), .. }), "{e}");
    // C(68, 8) = 7.39e9 states, refused before the search
    assert!(e.to_string().contains("the exact chain has 7.392e9") && e.to_string().contains("more than the limit of 4000000"), "{e}");
    let e = exact(&m, &ExactOptions { servers: 0, ..Default::default() }).unwrap_err();
    assert!(e.to_string().contains("servers = 0"), "{e}");
    let e = exact(&m, &ExactOptions { start: Some(vec![0.5]), ..Default::default() }).unwrap_err();
    assert!(e.to_string().contains("start"), "{e}");
    // a generic model without a state limit estimate stops at max_states during the search
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/generic/sir.toml");
    let file = ModelFile::parse(&std::fs::read_to_string(path).unwrap(), &[]).unwrap();
    let sir = file.model.build(1).unwrap();
    assert_eq!(sir.dim(), 2);
    let e = exact(sir.as_ref(), &ExactOptions { servers: 100, max_states: 50, ..Default::default() }).unwrap_err();
    assert!(matches!(e, ExactError::TooManyStates { estimate: None, limit: 50 }), "{e}");
}

/// The cancel flag of `ExactOptions::deadline` (what the Python package's Ctrl-C sets) stops
/// the job within a fraction of a second, in the search or in the solver's sweeps (230,230
/// states: several seconds of work).
#[test]
fn the_cancel_flag_stops_the_exact_chain_promptly() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let m = Jsq::new(0.9, 2, 6).unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let deadline = mfq_model::Deadline::none().with_cancel(flag.clone());
    let setter = {
        let flag = flag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            flag.store(true, Ordering::Relaxed);
            std::time::Instant::now()
        })
    };
    let r = exact(&m, &ExactOptions { servers: 20, method: ExactMethod::Iterative, deadline, ..Default::default() });
    let returned = std::time::Instant::now();
    let set_at = setter.join().unwrap();
    match r {
        Ok(r) => assert_eq!(r.status, ExactStatus::Cancelled, "{:?}", r.status),
        Err(e) => assert!(matches!(e, ExactError::TimeLimit { .. }) && e.to_string().contains("cancel"), "{e}"),
    }
    let late = returned.saturating_duration_since(set_at).as_secs_f64();
    assert!(late < 1.0, "stopped {late:.2} s after the flag was set");
}

/// Heterogeneous classes of fraction 1/2 (jumps of 2/N): with an odd N a class would hold a
/// non-integer number of servers; the chain is refused with that reason, and an even N works.
#[test]
fn classes_off_the_lattice_are_refused_with_the_reason() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/hetero-ps-sq2-caseA.toml");
    let file = ModelFile::parse(&std::fs::read_to_string(path).unwrap(), &["truncation.levels=2".to_string()]).unwrap();
    let m = file.model.build(2).unwrap();
    let e = exact(m.as_ref(), &ExactOptions { servers: 5, ..Default::default() }).unwrap_err();
    assert!(e.to_string().contains("N = 5 is not a multiple of 2") && e.to_string().contains("2.5 servers"), "{e}");
    let r = exact(m.as_ref(), &ExactOptions { servers: 4, ..Default::default() }).unwrap();
    assert!(r.residual < 1e-12 && r.mean.iter().all(|v| (0.0..=1.0).contains(v)), "{r:?}");
}
