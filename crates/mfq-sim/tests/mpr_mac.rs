//! The MPR MAC fixed point (`mpr-mac`) against the mini-slot simulation of the protocol
//! (`mfq_sim::mac`), written from the protocol's rules, not from the fixed point.
//!
//! The fixed point rests on Bianchi's decoupling approximation (IEEE JSAC 18(3) 2000), which
//! becomes exact only as the number of nodes grows. Its error at finite `n` is measured by
//! [`decoupling_error_falls_with_n`] (`just mac`, table in docs/models/mpr-mac.md): at
//! `M = 3, K = 2, W = 16, m = 4, R = 4, T = 10` the gap in the failure probability is 0.0105,
//! 0.0065, 0.0027, 0.0015 at `n = 10, 20, 40, 80`, about `0.1 / n`, and the relative gap in the
//! throughput and the head-of-line delay is below `0.2 / n`. The allowances below are `0.15 / n`
//! on `gamma`, `0.25 / n` relative on `S` and the delay, and for the drop probability
//! `gamma^(R+1)` its derivative `(R + 1) gamma^R` times the allowance on `gamma`.

use mfq_model::models::mpr_mac::{Backoff, MacParams, MprMac};
use mfq_sim::mac::{simulate_mac, MacSimOptions, MacSimReport};

fn params(nodes: usize, mpr: usize, threshold: usize, retry: usize, eps: f64) -> MacParams {
    MacParams {
        nodes,
        mpr,
        threshold,
        backoff: Backoff { window: 16, stages: 4, retry_limit: Some(retry) },
        airtime: 10.0,
        sensing_error: eps,
    }
}

/// Checks the four estimates against the fixed point at 99.9% confidence plus the allowances of
/// the module docs.
fn assert_agree(p: &MacParams, mac: &MprMac, sim: &MacSimReport) {
    let n = p.nodes as f64;
    let g_allow = 0.15 / n;
    let r = p.backoff.retry_limit.unwrap_or(0);
    let drop_allow = (r + 1) as f64 * mac.gamma().powi(r as i32) * g_allow;
    let checks = [
        ("throughput", &sim.throughput, mac.throughput(), 0.25 / n * mac.throughput()),
        ("gamma", &sim.failure_probability, mac.gamma(), g_allow),
        ("drop", &sim.drop_probability, mac.drop_probability(), drop_allow),
        ("hol delay", &sim.hol_delay, mac.hol_delay().unwrap(), 0.25 / n * mac.hol_delay().unwrap()),
    ];
    for (name, est, want, allow) in checks {
        assert!(
            est.covers(want, 0.999, allow),
            "{p:?}: {name}: simulation {} +- {} against the fixed point {want} (allowance {allow})",
            est.mean,
            est.half_width
        );
    }
}

/// Two parameter points, one with sensing errors; about 3 s.
#[test]
fn fixed_point_agrees_with_the_simulated_protocol() {
    for p in [params(40, 3, 2, 4, 0.0), params(20, 4, 2, 6, 0.2)] {
        let mac = MprMac::new(p).unwrap();
        assert_eq!(mac.sign_changes(), 1);
        let sim = simulate_mac(&p, &MacSimOptions { slots: 1_000_000, ..Default::default() }).unwrap();
        assert_agree(&p, &mac, &sim);
    }
}

/// M = K = 1 in simulation against Bianchi's throughput (eq. 13 with T_s = T_c = E[P] = T,
/// slot 1), computed here from his equations: the simulation checks the reduction the unit
/// tests of the model check on the fixed point.
#[test]
fn single_reception_simulation_matches_bianchi() {
    let (n, w, m, t) = (10usize, 16.0f64, 4, 10.0);
    let tau = |p: f64| 2.0 * (1.0 - 2.0 * p) / ((1.0 - 2.0 * p) * (w + 1.0) + p * w * (1.0 - (2.0 * p).powi(m)));
    let (mut lo, mut hi) = (0.0f64, 0.99f64);
    for _ in 0..200 {
        let p = 0.5 * (lo + hi);
        if 1.0 - (1.0 - tau(p)).powi(n as i32 - 1) > p {
            lo = p;
        } else {
            hi = p;
        }
    }
    let tau = tau(0.5 * (lo + hi));
    let ptr = 1.0 - (1.0 - tau).powi(n as i32);
    let s = n as f64 * tau * (1.0 - tau).powi(n as i32 - 1) * t / ((1.0 - ptr) + ptr * t);
    let p = MacParams {
        nodes: n,
        mpr: 1,
        threshold: 1,
        backoff: Backoff { window: 16, stages: 4, retry_limit: None },
        airtime: t,
        sensing_error: 0.0,
    };
    let sim = simulate_mac(&p, &MacSimOptions { slots: 400_000, ..Default::default() }).unwrap();
    assert!(sim.throughput.covers(s, 0.999, 0.25 / n as f64 * s), "simulation {:?} against Bianchi {s}", sim.throughput);
}

/// The decoupling error against n (`just mac`, about a minute): prints the table of
/// docs/models/mpr-mac.md and checks every point with the allowances of the module docs.
#[test]
#[ignore]
fn decoupling_error_falls_with_n() {
    for fixed in [false, true] {
        for (n, mpr, k, r, eps) in
            [(10, 3, 2, 4, 0.0), (20, 3, 2, 4, 0.0), (40, 3, 2, 4, 0.0), (80, 3, 2, 4, 0.0), (20, 4, 2, 6, 0.2), (40, 3, 3, 4, 0.0)]
        {
            let p = params(n, mpr, k, r, eps);
            let mac = MprMac::new(p).unwrap();
            let sim = simulate_mac(&p, &MacSimOptions { slots: 2_000_000, fixed_airtime: fixed, ..Default::default() }).unwrap();
            println!(
                "| {} | {n} | {mpr} | {k} | {eps} | {:.4} | {:.4} ± {:.4} | {:.4} | {:.4} ± {:.4} | {:.1} | {:.1} ± {:.1} |",
                if fixed { "fixed" } else { "geometric" },
                mac.throughput(),
                sim.throughput.mean,
                sim.throughput.half_width,
                mac.gamma(),
                sim.failure_probability.mean,
                sim.failure_probability.half_width,
                mac.hol_delay().unwrap(),
                sim.hol_delay.mean,
                sim.hol_delay.half_width
            );
            if !fixed {
                assert_agree(&p, &mac, &sim);
            }
        }
    }
}
