//! The caching system (kind `cdn-cache`): the simulator against exact Erlang loss values, the
//! mean field against the simulator at a large `m`, and the LP bound against every policy.

use mfq_model::models::cdn::placement::{contents_at, zipf, Replication};
use mfq_model::models::{CdnCache, CdnParams};
use mfq_model::MeanFieldModel;
use mfq_sim::cdn::{simulate_cdn, CdnSimOptions, CdnSimReport, Durations, Matching};

fn params(lambda: f64, n: usize, gamma: f64, c: usize, u: usize, rule: Replication) -> CdnParams {
    CdnParams::new(lambda, zipf(n, gamma).unwrap(), c, u, rule).unwrap()
}

fn run(p: &CdnParams, m: usize, time: f64, durations: Durations, matching: Matching, seed: u64) -> CdnSimReport {
    let opts = CdnSimOptions { servers: m, time, warmup: 10.0, batches: 20, seed, durations, matching };
    simulate_cdn(p, &opts).unwrap()
}

/// Erlang's B formula `B(r, s)` by its recursion.
fn erlang_b(r: f64, s: usize) -> f64 {
    (1..=s).fold(1.0, |b, k| r * b / (k as f64 + r * b))
}

/// One content per server (`C = 1`): the requests of content `i` see an Erlang loss system of
/// `U r_i` slots (`r_i` servers store it; a request is lost only when every slot is taken),
/// offered `lambda p_i m`. Its loss is Erlang's B formula, whatever the law of the durations
/// (insensitivity): the simulator matches it per content with exponential, deterministic and
/// hyperexponential (scv 4) durations, under greedy and uniform replication. 99.9% intervals
/// (Bonferroni over the 4 contents x 6 runs). The horizon is long (2000 mean durations in
/// batches of 100) because hyperexponential durations keep the state correlated for longer.
#[test]
fn one_content_per_server_is_erlang_loss_for_every_duration_law() {
    let m = 100;
    for rule in [Replication::Greedy, Replication::Uniform] {
        let p = params(2.5, 4, 1.0, 1, 3, rule);
        let mut servers = [0usize; 4];
        let mut set = Vec::new();
        for k in 0..m {
            contents_at(&p.replicas, 1, (k as f64 + 0.5) / m as f64, &mut set);
            servers[set[0]] += 1;
        }
        for (seed, durations) in
            [Durations::Exponential, Durations::Deterministic, Durations::HyperExponential { scv: 4.0 }].into_iter().enumerate()
        {
            let r = run(&p, m, 2000.0, durations, Matching::Random, seed as u64);
            for (i, &r_i) in servers.iter().enumerate() {
                let exact = erlang_b(2.5 * p.popularity[i] * m as f64, 3 * r_i);
                let est = r.loss_per_content[i];
                // a content expected to lose a handful of requests has a degenerate batch-means
                // interval (often zero width): the resolution of the count, 5 requests, is allowed
                let resolution = 5.0 / (2.5 * p.popularity[i] * m as f64 * 2000.0);
                assert!(est.covers(exact, 0.999, resolution), "{rule:?} {durations:?} content {i}: simulated {est:?}, Erlang B {exact}");
            }
        }
    }
}

/// Mean field against the simulator at `m = 2000`, two parameter points (N = 8 contents,
/// Zipf 1, C = 2, U = 4, lambda = 4.6 per server: greedy and uniform replication; the fixed
/// point's losses are 0.1304 and 0.2520), with exponential durations under greedy and
/// deterministic ones under uniform. The finite system loses more than its limit; the gap
/// measured at m = 500 and 2000 (docs/models/cdn-cache.md) falls like `c / sqrt(m)` with
/// `c <= 0.14`, so the allowance is `0.15 / sqrt(m)` = 0.0034 on top of the 99% interval.
#[test]
fn mean_field_loss_matches_the_simulation_at_large_m() {
    let m = 2000;
    let allowance = 0.15 / (m as f64).sqrt();
    for (rule, durations, want) in
        [(Replication::Greedy, Durations::Exponential, 0.1304), (Replication::Uniform, Durations::Deterministic, 0.2520)]
    {
        let p = params(4.6, 8, 1.0, 2, 4, rule);
        let mf = CdnCache::new(p.clone()).unwrap();
        let x = mf.analytic_fixed_point().unwrap();
        let loss = mf.observables(&x).loss_probability;
        assert!((loss - want).abs() < 1e-4, "{rule:?}: fixed-point loss {loss}");
        let r = run(&p, m, 100.0, durations, Matching::Random, 7);
        assert!(r.loss.covers(loss, 0.99, allowance), "{rule:?}: simulated {:?}, mean field {loss}", r.loss);
        assert!(
            r.loss.mean > loss - r.loss.half_width_at(0.99),
            "{rule:?}: the finite system should not lose less: {:?} vs {loss}",
            r.loss
        );
    }
}

/// No matching carries more than the LP bound of its placement: random and least-loaded
/// matching, greedy and uniform replication, below and above saturation, at m = 200. The
/// simulated throughput stays below the bound up to its 99.9% interval (16 runs).
#[test]
fn no_policy_exceeds_the_lp_bound() {
    for lambda in [2.0, 3.5, 5.0] {
        for rule in [Replication::Greedy, Replication::Uniform] {
            let p = params(lambda, 6, 1.2, 2, 3, rule);
            for matching in [Matching::Random, Matching::LeastLoaded] {
                let r = run(&p, 200, 100.0, Durations::Exponential, matching, 3);
                let bound = r.lp_bound;
                assert!(bound <= lambda.min(3.0) + 1e-12, "the joint optimum min(lambda, U) bounds every placement");
                assert!(
                    r.throughput.mean <= bound + r.throughput.half_width_at(0.999),
                    "{lambda} {rule:?} {matching:?}: throughput {:?} above the LP bound {bound}",
                    r.throughput
                );
            }
        }
    }
}

#[test]
fn bad_options_are_refused_with_the_field() {
    let p = params(2.0, 4, 1.0, 1, 2, Replication::Greedy);
    let opts = CdnSimOptions {
        servers: 0,
        time: 10.0,
        warmup: 1.0,
        batches: 10,
        seed: 1,
        durations: Durations::Exponential,
        matching: Matching::Random,
    };
    let e = simulate_cdn(&p, &opts).unwrap_err().to_string();
    assert!(e.contains("servers = 0") && e.contains("[1, 1000000]"), "{e}");
    let e = simulate_cdn(&p, &CdnSimOptions { servers: 10, durations: Durations::HyperExponential { scv: 0.5 }, ..opts })
        .unwrap_err()
        .to_string();
    assert!(e.contains("durations.scv = 0.5"), "{e}");
}
