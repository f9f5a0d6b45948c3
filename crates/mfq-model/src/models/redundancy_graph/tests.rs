//! Tests of the product form against values it does not produce: closed forms (M/M/1, independent
//! and multi-class M/M/1 queues) and the stationary vector of the truncated Markov chain of job
//! sequences, built from the system's rules and solved by dense Gaussian elimination.

use super::*;
use std::collections::HashMap;

fn t(lambda: f64, servers: &[usize]) -> JobType {
    JobType { lambda, servers: servers.to_vec() }
}

fn means(mu: &[f64], types: &[JobType]) -> ProductForm {
    ProductForm::new(&Graph::new(mu, types).unwrap()).unwrap()
}

/// The N-model: type 1 only on server 1, type 2 on servers 1 and 2.
fn n_model(la: f64, lb: f64) -> Graph {
    Graph::new(&[1.0, 1.0], &[t(la, &[1]), t(lb, &[1, 2])]).unwrap()
}

/// Stationary `E[N_c]` of the chain whose state is the sequence of job types in arrival order,
/// arrivals blocked at `limit` jobs: written from the rules (server `s` serves the oldest job
/// compatible with it; the job leaves at the first completion of any of its copies), solved by
/// Gaussian elimination with partial pivoting on `pi Q = 0`, `sum pi = 1`.
fn ctmc_mean_jobs(g: &Graph, limit: usize) -> Vec<f64> {
    let n = g.sets.len();
    let mut states: Vec<Vec<usize>> = vec![vec![]];
    let mut i = 0;
    while i < states.len() {
        if states[i].len() < limit {
            for c in 0..n {
                let mut s = states[i].clone();
                s.push(c);
                states.push(s);
            }
        }
        i += 1;
    }
    let index: HashMap<Vec<usize>, usize> = states.iter().enumerate().map(|(i, s)| (s.clone(), i)).collect();
    let ns = states.len();
    let mut a = vec![vec![0.0f64; ns]; ns]; // a[to][from] = rate (Q transposed)
    for (from, seq) in states.iter().enumerate() {
        let mut jump = |to: usize, rate: f64| {
            a[to][from] += rate;
            a[from][from] -= rate;
        };
        if seq.len() < limit {
            for c in 0..n {
                let mut s = seq.clone();
                s.push(c);
                jump(index[&s], g.lambda[c]);
            }
        }
        // each server's job: the oldest compatible one
        let mut rate_of_position = vec![0.0; seq.len()];
        for (s, mu) in g.mu.iter().enumerate() {
            if let Some(p) = seq.iter().position(|&c| g.sets[c] >> s & 1 == 1) {
                rate_of_position[p] += mu;
            }
        }
        for (p, r) in rate_of_position.iter().enumerate() {
            if *r > 0.0 {
                let mut s = seq.clone();
                s.remove(p);
                jump(index[&s], *r);
            }
        }
    }
    let mut b = vec![0.0; ns];
    a[ns - 1].iter_mut().for_each(|v| *v = 1.0);
    b[ns - 1] = 1.0;
    for c in 0..ns {
        let p = (c..ns).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs())).unwrap();
        a.swap(c, p);
        b.swap(c, p);
        for r in c + 1..ns {
            let f = a[r][c] / a[c][c];
            if f != 0.0 {
                let (top, rest) = a.split_at_mut(r);
                rest[0][c..].iter_mut().zip(&top[c][c..]).for_each(|(x, p)| *x -= f * p);
                b[r] -= f * b[c];
            }
        }
    }
    let mut pi = vec![0.0; ns];
    for r in (0..ns).rev() {
        let s: f64 = (r + 1..ns).map(|k| a[r][k] * pi[k]).sum();
        pi[r] = (b[r] - s) / a[r][r];
    }
    (0..n).map(|c| states.iter().zip(&pi).map(|(s, p)| p * s.iter().filter(|&&x| x == c).count() as f64).sum()).collect()
}

#[test]
fn full_redundancy_is_an_mm1_queue_of_the_total_rate() {
    for rho in [0.1, 0.5, 0.9, 0.99] {
        let pf = means(&[0.5, 1.0, 1.5], &[t(3.0 * rho, &[1, 2, 3])]);
        assert!((pf.mean_jobs[0] - rho / (1.0 - rho)).abs() < 1e-12 * (1.0 / (1.0 - rho)), "{rho}: {:?}", pf.mean_jobs);
        assert!((pf.prob_empty - (1.0 - rho)).abs() < 1e-13);
    }
}

#[test]
fn disjoint_server_sets_are_independent_queues() {
    // type 1 on {1}: M/M/1 with rho 0.4; type 2 on {2, 3}: M/M/1 of rate 3 with rho 0.8
    let pf = means(&[1.0, 2.0, 1.0], &[t(0.4, &[1]), t(2.4, &[2, 3])]);
    assert!((pf.mean_jobs[0] - 0.4 / 0.6).abs() < 1e-12);
    assert!((pf.mean_jobs[1] - 0.8 / 0.2).abs() < 1e-12);
    assert!((pf.prob_empty - 0.6 * 0.2).abs() < 1e-14);
    assert!((pf.busy[0] - 0.4).abs() < 1e-13 && (pf.busy[1] - 0.8).abs() < 1e-13);
}

#[test]
fn types_on_the_same_servers_share_a_multiclass_mm1_queue() {
    // FCFS multi-class M/M/1: E[N_c] = (lambda_c / lambda) rho / (1 - rho)
    let pf = means(&[1.0, 1.0], &[t(0.3, &[1, 2]), t(1.1, &[1, 2])]);
    let l = 0.7 / 0.3;
    assert!((pf.mean_jobs[0] - 0.3 / 1.4 * l).abs() < 1e-12);
    assert!((pf.mean_jobs[1] - 1.1 / 1.4 * l).abs() < 1e-12);
    assert!((pf.mean_response_time[0] - 1.0 / (2.0 - 1.4)).abs() < 1e-12);
}

/// The product form restricted to `n <= L` is the stationary law of the chain blocked at `L`:
/// equal to the direct solve of that chain to 1e-10 (N-model, and three types on three servers
/// of different rates).
#[test]
fn truncated_product_form_equals_the_direct_solve_of_the_chain() {
    let w = Graph::new(&[1.0, 0.8, 1.3], &[t(0.6, &[1, 2]), t(0.5, &[2, 3]), t(0.9, &[3])]).unwrap();
    for (g, limit) in [(n_model(0.5, 0.7), 9), (n_model(0.9, 0.9), 8), (w, 6)] {
        let chain = ctmc_mean_jobs(&g, limit);
        let pf = ProductForm::truncated_mean_jobs(&g, limit).unwrap();
        for (a, b) in chain.iter().zip(&pf) {
            assert!((a - b).abs() < 1e-10, "limit {limit}: chain {chain:?} product form {pf:?}");
        }
    }
}

/// The closed-form geometric sums equal the truncated sums as the limit grows (the tail beyond
/// 400 jobs is below 1e-14 here), and departures balance arrivals.
#[test]
fn recursion_without_truncation_equals_the_limit_of_the_truncated_sums() {
    let w = Graph::new(&[1.0, 0.8, 1.3], &[t(0.6, &[1, 2]), t(0.5, &[2, 3]), t(0.9, &[3])]).unwrap();
    for g in [n_model(0.5, 0.7), n_model(0.9, 0.9), w] {
        let exact = ProductForm::new(&g).unwrap();
        let truncated = ProductForm::truncated_mean_jobs(&g, 400).unwrap();
        for (a, b) in exact.mean_jobs.iter().zip(&truncated) {
            assert!((a - b).abs() < 1e-10, "{:?} against {truncated:?}", exact.mean_jobs);
        }
        assert!((exact.departure_rate - g.total_rate()).abs() < 1e-12 * g.total_rate());
    }
}

#[test]
fn the_violating_set_is_named() {
    // N-model: type 1 alone on server 1 at rate 1.2 > mu_1 = 1, although the total 1.5 < 2
    let v = n_model(1.2, 0.3).stability().unwrap().unwrap_err();
    assert_eq!((v.types.clone(), v.servers.clone()), (vec![1], vec![1]));
    assert!((v.rate - 1.2).abs() < 1e-15 && (v.capacity - 1.0).abs() < 1e-15);
    let spec = RedundancyGraphSpec { mu: vec![1.0, 1.0], types: vec![t(1.2, &[1]), t(0.3, &[1, 2])], rho: None };
    let m = spec.build(2).unwrap();
    match m.stability() {
        Stability::Unstable { reason } => assert!(reason.contains("[1]") && reason.contains("1.2"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(n_model(0.9, 1.05).stability().unwrap().is_ok());
    // the boundary itself is unstable
    assert!(n_model(1.0, 0.5).stability().unwrap().is_err());
}

/// The two enumerations (over type sets, over server sets) give the same verdict and ratio.
#[test]
fn type_and_server_enumerations_agree() {
    let mut seed = 7u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    for _ in 0..200 {
        let k = 2 + (next() * 4.0) as usize;
        let n = 1 + (next() * 6.0) as usize;
        let mu: Vec<f64> = (0..k).map(|_| 0.2 + next()).collect();
        let types: Vec<JobType> = (0..n)
            .map(|_| {
                let mut s: Vec<usize> = (1..=k).filter(|_| next() < 0.5).collect();
                if s.is_empty() {
                    s.push(1 + (next() * k as f64) as usize % k);
                }
                t(0.1 + next(), &s)
            })
            .collect();
        let g = Graph::new(&mu, &types).unwrap();
        let (a, b) = (g.worst_type_set().unwrap(), g.worst_server_set().unwrap());
        assert!((a.2 / a.3 - b.2 / b.3).abs() < 1e-12, "{a:?} {b:?}");
    }
}

#[test]
fn bad_graphs_name_the_field() {
    let field = |mu: &[f64], types: &[JobType]| match Graph::new(mu, types) {
        Err(ModelError::OutOfRange { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(field(&[1.0], &[]), "model.types");
    assert_eq!(field(&[], &[t(1.0, &[1])]), "model.mu");
    assert_eq!(field(&[1.0, 0.0], &[t(1.0, &[1])]), "model.mu[1]");
    assert_eq!(field(&[1.0, -2.0], &[t(1.0, &[1])]), "model.mu[1]");
    assert_eq!(field(&[1.0], &[t(0.5, &[1]), t(0.0, &[1])]), "model.types[1].lambda");
    assert_eq!(field(&[1.0], &[t(-0.5, &[1])]), "model.types[0].lambda");
    assert_eq!(field(&[1.0], &[t(f64::NAN, &[1])]), "model.types[0].lambda");
    assert_eq!(field(&[1.0], &[t(0.5, &[])]), "model.types[0].servers");
    assert_eq!(field(&[1.0, 1.0], &[t(0.5, &[1, 3])]), "model.types[0].servers[1]");
    assert_eq!(field(&[1.0, 1.0], &[t(0.5, &[0])]), "model.types[0].servers[0]");
    assert_eq!(field(&[1.0, 1.0], &[t(0.5, &[2, 2])]), "model.types[0].servers[1]");
    let spec = RedundancyGraphSpec { mu: vec![1.0], types: vec![t(1.0, &[1])], rho: Some(-1.0) };
    assert!(matches!(spec.graph(), Err(ModelError::OutOfRange { field, .. }) if field == "model.rho"));
}

#[test]
fn rho_scales_the_rates_to_the_load() {
    let spec = RedundancyGraphSpec { mu: vec![1.0, 3.0], types: vec![t(1.0, &[1]), t(3.0, &[1, 2])], rho: Some(0.5) };
    let g = spec.graph().unwrap();
    assert!((g.lambda[0] - 0.5).abs() < 1e-15 && (g.lambda[1] - 1.5).abs() < 1e-15);
    assert!((g.load() - 0.5).abs() < 1e-15);
}

/// A type replicated to every server has an exponential response time of rate `mu - lambda`
/// (total server rate minus total arrival rate), whatever the other types do (Gardner et al.,
/// Queueing Systems 83 (2016): fully redundant classes are immune to the other classes): here
/// beside three partially redundant types on three servers of different rates.
#[test]
fn a_fully_redundant_type_has_mean_response_time_one_over_mu_minus_lambda() {
    let types = [t(0.6, &[1, 2]), t(0.5, &[2, 3]), t(0.4, &[3]), t(0.3, &[1, 2, 3])];
    let pf = means(&[1.0, 0.8, 1.3], &types);
    assert!((pf.mean_response_time[3] - 1.0 / (3.1 - 1.8)).abs() < 1e-12, "{:?}", pf.mean_response_time);
    // the N-model: type 2 is on both servers
    let pf = ProductForm::new(&n_model(0.5, 0.7)).unwrap();
    assert!((pf.mean_response_time[1] - 1.0 / 0.8).abs() < 1e-12);
}
