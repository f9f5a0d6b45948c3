//! Opinion dynamics (`opinion-stubborn`, `opinion-biased`): the finite-N simulation of N
//! agents against the mean-field equilibria (closed forms, and the table of
//! docs/models/opinion.md, recomputed by validation/opinion.py). Where the mean field
//! has two stable equilibria the system is metastable: started in one basin it stays near that
//! equilibrium for a time exponential in N, and the test checks that it does, from both sides.

mod common;

use common::{assert_all, check, extra};
use mfq_model::ModelSpec;
use mfq_sim::{simulate, simulate_opinion, SimOptions};

/// N = 20000 agents, 4 replications of 100 time units after a warm-up of 20 (relaxation rate
/// |f'| >= 0.1 at the equilibria used: e-folding times of at most 10), 5 batches.
fn opts() -> SimOptions {
    SimOptions { servers: 20_000, time: 100.0, warmup: 30.0, replications: 4, batches: 5, seed: 1, ..Default::default() }
}

/// Allowance `c/N` with `c = 5` (2.5e-4): an earlier independent N = 5000 simulation (docs/references.md)
/// found time averages within 2e-4 of the equilibria (0.01568 vs 0.015877, i.e. `c` about 1).
const C: f64 = 5.0;

/// Stubborn agents, gamma = (0.1, 0.1): stable equilibria 0.0158770817 and 0.9841229183
/// (closed form `1/2 +- sqrt((s - 1/2)/(2 s^2))`, s = 0.8); from x0 = 0.3 and 0.49 the system
/// stays at the lower one, from 0.51 and 0.9 at the upper one (docs/models/opinion.md, basins). gamma =
/// (0.3, 0.3): the unique equilibrium 1/2. gamma = (0.05, 0.1): from x0 = 0 the lower stable
/// equilibrium 0.0162177987.
#[test]
fn stubborn_agents_stay_in_their_basin() {
    let s = 0.8f64;
    let lo = 0.5 - ((s - 0.5) / (2.0 * s * s)).sqrt();
    assert!((lo - 0.0158770817).abs() < 1e-9);
    let a = C / 20_000.0;
    let spec = ModelSpec::from(mfq_model::models::OpinionStubbornSpec { gamma0: 0.1, gamma1: 0.1 });
    for (x0, eq) in [(0.3, lo), (0.49, lo), (0.51, 1.0 - lo), (0.9, 1.0 - lo)] {
        let r = simulate_opinion(&spec, &opts(), x0).unwrap();
        let mut checks = vec![check("x", extra(&r, "x"), eq, a)];
        // every replication stays in the basin of its start
        for i in 0..4 {
            let e = extra(&r, &format!("replication{i}.x"));
            checks.push(check(&format!("replication{i}.x"), e, eq, a + 0.05));
        }
        assert_all(&format!("stubborn (0.1, 0.1) from x0={x0} N=20000"), &r, &checks);
    }
    let r = simulate_opinion(&ModelSpec::from(mfq_model::models::OpinionStubbornSpec { gamma0: 0.3, gamma1: 0.3 }), &opts(), 0.0).unwrap();
    assert_all(
        "stubborn (0.3, 0.3) from 0",
        &r,
        &[check("x", extra(&r, "x"), 0.5, a), check("all", extra(&r, "fraction_opinion_1"), 0.5, a)],
    );
    // `simulate` starts from x0 = 0
    let r = simulate(&ModelSpec::from(mfq_model::models::OpinionStubbornSpec { gamma0: 0.05, gamma1: 0.1 }), &opts()).unwrap();
    assert_all("stubborn (0.05, 0.1) from 0", &r, &[check("x", extra(&r, "x"), 0.0162177987, a)]);
}

/// Biased agents: alpha = 0.05 has stable equilibria 0.0597785224 and 1 (unstable
/// 0.4402214776): from x0 = 0 the system stays at the lower one, from x0 = 0.6 it goes to 1
/// (absorbing: every agent holds 1). alpha = 0.1: lower equilibrium 1/6. alpha = 0.2: x = 1
/// from anywhere. Closed form `x = (1 - sqrt((1 - 9 alpha)/(1 - alpha)))/4`.
#[test]
fn biased_agents_show_metastability() {
    let a = C / 20_000.0;
    let lower = |alpha: f64| (1.0 - ((1.0 - 9.0 * alpha) / (1.0 - alpha)).sqrt()) / 4.0;
    assert!((lower(0.05) - 0.0597785224).abs() < 1e-9);
    for (alpha, x0, eq) in [(0.05, 0.0, lower(0.05)), (0.05, 0.6, 1.0), (0.1, 0.0, 1.0 / 6.0), (0.2, 0.0, 1.0)] {
        let r = simulate_opinion(&ModelSpec::from(mfq_model::models::OpinionBiasedSpec { alpha }), &opts(), x0).unwrap();
        assert_all(&format!("biased alpha={alpha} from x0={x0} N=20000"), &r, &[check("x", extra(&r, "x"), eq, a)]);
    }
}

#[test]
fn opinion_options_are_checked() {
    let spec = ModelSpec::from(mfq_model::models::OpinionBiasedSpec { alpha: 0.05 });
    assert!(simulate_opinion(&spec, &opts(), 1.5).is_err());
    assert!(simulate_opinion(&ModelSpec::from(mfq_model::models::JiqSpec { lambda: 0.5 }), &opts(), 0.5).is_err());
    assert!(simulate(&spec, &SimOptions { buffer: Some(3), ..opts() }).is_err());
    let small = SimOptions { servers: 10, ..opts() };
    assert!(simulate(&ModelSpec::from(mfq_model::models::OpinionStubbornSpec { gamma0: 0.5, gamma1: 0.49 }), &small).is_err());
}
