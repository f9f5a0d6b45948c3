//! Redundancy-d with identical copies under FCFS, general sizes and speeds
//! (`mfq_sim::saturated::general`, `saturated_exact_with`): the saturated system against a
//! published value, the exact chain, closed forms; the finite system on both sides of
//! `lambda_max`. docs/models/redundancy.md, "Identical copies with general sizes and speeds".

use mfq_model::models::phase_type::PhaseType;
use mfq_sim::saturated::exact::saturated_exact_with;
use mfq_sim::saturated::general::{finite_copies, saturated_general, CopySize, CopySystem};
use mfq_sim::{SimError, SimOptions};

fn opts(servers: usize, time: f64, replications: usize) -> SimOptions {
    SimOptions { servers, time, warmup: 20.0, replications, batches: 20, seed: 11, ..Default::default() }
}

/// Exponential sizes, d = 2, unit speeds: the saturated throughput per server at K = 1000
/// covers the published N -> inf value lambda_max = 0.81669 (T. Hellemans' PhD thesis, Red(d)
/// with identical replicas; docs/references.md). The finite-K bias is about 2e-4 at K = 1000
/// (0.81648 +- 0.00011 in the reference simulation of docs/references.md), well inside the
/// interval (half width about 3e-3).
#[test]
fn exponential_d2_covers_the_published_lambda_max() {
    let sys = CopySystem::homogeneous(2, 1000, CopySize::exponential()).unwrap();
    let r = saturated_general(&sys, &opts(1000, 200.0, 2)).unwrap();
    let e = r.throughput_per_server;
    assert!(e.half_width < 5e-3, "{e:?}");
    assert!(e.covers(0.81669, 0.999, 0.0), "{e:?}");
}

/// Erlang-2 sizes (mean 1), d = 2, K = 4: the exact chain with phases (cap 16, truncation
/// error estimate about 5e-4) against the simulation of the saturated system from its rules.
/// Measured: exact 0.718575 (0.718598 at cap 32), simulation 0.7191 +- 0.0013.
#[test]
fn exact_phase_type_chain_matches_the_simulation() {
    let ph = PhaseType::erlang(2, 1.0).unwrap();
    let exact = saturated_exact_with(2, 4, 16, Some(&ph)).unwrap();
    assert!(exact.residual < 1e-10, "{exact:?}");
    let sys = CopySystem::homogeneous(2, 4, CopySize::PhaseType(ph)).unwrap();
    let e = saturated_general(&sys, &opts(4, 100_000.0, 2)).unwrap().throughput_per_server;
    assert!(e.covers(exact.throughput_per_server, 0.999, exact.truncation_error), "exact {exact:?} sim {e:?}");
}

/// d = K with speeds: every server serves the head job, which leaves after X / max(nu):
/// throughput per server max(nu) / (K E[X]) for any law (here H2, SCV 4, mean 2).
#[test]
fn full_redundancy_runs_at_the_fastest_speed() {
    let size = CopySize::PhaseType(PhaseType::h2_from_moments(2.0, 4.0, 0.5).unwrap());
    let sys = CopySystem::new(3, vec![0.2, 1.0, 0.5], size).unwrap();
    let exact = sys.closed_form_threshold().unwrap();
    assert!((exact - 1.0 / 6.0).abs() < 1e-15);
    let e = saturated_general(&sys, &opts(3, 40_000.0, 2)).unwrap().throughput_per_server;
    assert!(e.covers(exact, 0.999, 0.0), "{e:?} vs {exact}");
}

/// The finite system (exponential sizes, d = 2, K = 4, lambda_max = 0.719369 exactly) below
/// and above lambda_max: at 0.65 the number of jobs stays bounded (growth covers 0), at 0.80
/// it grows at about lambda - lambda_max = 0.081 per server per unit time, and the
/// throughput per server is the saturated one.
#[test]
fn finite_system_changes_from_stable_to_unstable_at_lambda_max() {
    let sys = CopySystem::homogeneous(2, 4, CopySize::exponential()).unwrap();
    let lmax = saturated_exact_with(2, 4, 32, None).unwrap().throughput_per_server;
    let o = SimOptions { warmup: 2000.0, ..opts(4, 40_000.0, 2) };
    let below = finite_copies(&sys, 0.65, &o).unwrap();
    assert!(below.growth_per_server.covers(0.0, 0.999, 0.0), "{below:?}");
    assert!(below.final_jobs_per_server < 20.0, "{below:?}");
    assert!(below.throughput_per_server.covers(0.65, 0.999, 0.0), "{below:?}");
    let above = finite_copies(&sys, 0.80, &o).unwrap();
    assert!(above.growth_per_server.covers(0.80 - lmax, 0.999, 0.0), "{above:?}");
    assert!(above.throughput_per_server.covers(lmax, 0.999, 0.0), "{above:?}");
    assert!(above.final_jobs_per_server > 0.05 * 40_000.0, "{above:?}");
}

/// Which way round is the heterogeneous condition? Speeds (1, 0.1, 0.1), K = 3, exponential
/// sizes, mean 1, total arrival rate 0.6 (lambda = 0.2 per server). Without redundancy
/// (d = 1) the slow servers get 0.2 > 0.1: unstable (threshold K nu_min = 0.3 in total). With
/// full redundancy (d = 3) the job leaves at the fast server's pace: stable (threshold
/// nu_max = 1 in total). So redundancy enlarges the region when nu_max > K nu_min.
#[test]
fn full_redundancy_is_stable_where_no_redundancy_is_not_when_nu_max_exceeds_k_nu_min() {
    let speeds = vec![1.0, 0.1, 0.1];
    let o = SimOptions { warmup: 500.0, ..opts(3, 20_000.0, 2) };
    let none = finite_copies(&CopySystem::new(1, speeds.clone(), CopySize::exponential()).unwrap(), 0.2, &o).unwrap();
    let full = finite_copies(&CopySystem::new(3, speeds.clone(), CopySize::exponential()).unwrap(), 0.2, &o).unwrap();
    // d = 1: two of three servers overloaded by 0.1 each: 0.2 / 3 per server per unit time
    assert!(none.growth_per_server.covers(0.2 / 3.0, 0.999, 0.0), "{none:?}");
    assert!(full.growth_per_server.covers(0.0, 0.999, 0.0) && full.final_jobs_per_server < 10.0, "{full:?}");
    // the other way round: speeds (1, 1, 0.8), nu_max = 1 < K nu_min = 2.4; total rate 1.5:
    // d = 1 is stable (0.5 < 0.8 at every server), d = 3 is not (1.5 > nu_max = 1)
    let speeds = vec![1.0, 1.0, 0.8];
    let none = finite_copies(&CopySystem::new(1, speeds.clone(), CopySize::exponential()).unwrap(), 0.5, &o).unwrap();
    let full = finite_copies(&CopySystem::new(3, speeds, CopySize::exponential()).unwrap(), 0.5, &o).unwrap();
    assert!(none.growth_per_server.covers(0.0, 0.999, 0.0) && none.final_jobs_per_server < 10.0, "{none:?}");
    assert!(full.growth_per_server.covers(0.5 - 1.0 / 3.0, 0.999, 0.0), "{full:?}");
}

/// Bad inputs name the field and what is allowed.
#[test]
fn bad_inputs_get_clear_errors() {
    let msg = |e: SimError| e.to_string();
    let e = msg(CopySystem::new(3, vec![1.0, 1.0], CopySize::exponential()).unwrap_err());
    assert!(e.contains("servers") && e.contains("[3,"), "{e}");
    let e = msg(CopySystem::new(2, vec![1.0, -1.0, 1.0], CopySize::exponential()).unwrap_err());
    assert!(e.contains("model.speeds[1]") && e.contains("> 0"), "{e}");
    let e = msg(CopySystem::new(2, vec![1.0, f64::NAN], CopySize::exponential()).unwrap_err());
    assert!(e.contains("model.speeds[1]"), "{e}");
    let sys = CopySystem::homogeneous(2, 4, CopySize::exponential()).unwrap();
    let e = msg(saturated_general(&sys, &opts(5, 10.0, 1)).unwrap_err());
    assert!(e.contains("servers = 5") && e.contains("K = 4"), "{e}");
    let e = msg(finite_copies(&sys, 0.0, &opts(4, 10.0, 1)).unwrap_err());
    assert!(e.contains("model.lambda"), "{e}");
    let e = msg(finite_copies(&sys, 0.5, &SimOptions { buffer: Some(3), ..opts(4, 10.0, 1) }).unwrap_err());
    assert!(e.contains("buffer"), "{e}");
    let e = msg(saturated_exact_with(2, 7, 16, None).unwrap_err());
    assert!(e.contains("servers"), "{e}");
}
