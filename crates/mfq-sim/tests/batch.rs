//! Batch processing in a closed network (`batch`): the discrete-event simulation of `n` clients,
//! `m` servers and a central FIFO queue, written from the system's rules, against the exact
//! stationary solution of the finite network (`mfq_model::models::batch::exact_network`, a
//! Markov chain solved by its cut equations, itself checked against the two-dimensional chain
//! solved densely in the model's unit tests).

use mfq_model::models::batch::{exact_network, Speedup};
use mfq_model::models::BatchSpec;
use mfq_model::ModelSpec;
use mfq_sim::{simulate, SimError, SimOptions};

fn opts(servers: usize) -> SimOptions {
    SimOptions { servers, time: 400_000.0, warmup: 500.0, replications: 4, batches: 20, seed: 7, ..Default::default() }
}

fn spec(alpha: f64, think_rate: f64, b: usize, speedup: Speedup) -> ModelSpec {
    ModelSpec::from(BatchSpec { alpha, think_rate, b, speedup, servers: None })
}

/// Two small networks: (n, m, b) = (20, 2, 5), s(b) = sqrt(b), think rate 0.5 (servers saturated
/// half the time), and (20, 1, 3), h(b) = 1 + 0.2 (b - 1), think rate 0.1. The simulated
/// throughput (jobs per server per unit time), mean response time of a job (submission to
/// completion, measured job by job), busy fraction and jobs per server contain the exact values
/// within their 95% confidence intervals.
#[test]
fn simulation_matches_the_exact_chain_within_its_confidence_interval() {
    for (alpha, m, b, think, sp) in
        [(10.0, 2usize, 5usize, 0.5, Speedup::Power { gamma: 0.5 }), (20.0, 1, 3, 0.1, Speedup::Overhead { c: 0.2 })]
    {
        let n = (alpha * m as f64) as usize;
        let e = exact_network(n, m, b, think, sp.h(b)).unwrap();
        let r = simulate(&spec(alpha, think, b, sp), &opts(m)).unwrap();
        let response = e.jobs_per_server / e.throughput;
        let checks = [
            ("throughput", r.throughput.unwrap(), e.throughput),
            ("mean_response_time", r.mean_response_time.unwrap(), response),
            ("busy_fraction", r.extras["busy_fraction"], e.busy_fraction),
            ("jobs per server", r.mean_queue_length.unwrap(), e.jobs_per_server),
        ];
        for (name, est, exact) in checks {
            println!("n={n} m={m} b={b} {name}: simulated {:.5} +- {:.5}, exact {exact:.5}", est.mean, est.half_width);
            assert!((est.mean - exact).abs() <= est.half_width, "n={n} m={m} b={b} {name}: {est:?} vs exact {exact}");
        }
        assert!(r.diagnostics.batch_lag1_autocorrelation.unwrap().abs() < 0.3, "{:?}", r.diagnostics);
    }
}

/// A number of servers that gives a fractional number of clients, or fewer clients than a
/// batch, is refused naming `servers`.
#[test]
fn servers_must_give_an_integer_number_of_clients_enough_for_a_batch() {
    let s = spec(1.5, 0.1, 4, Speedup::Overhead { c: 0.2 });
    let e = simulate(&s, &SimOptions { servers: 3, ..opts(3) }).unwrap_err();
    assert!(matches!(&e, SimError::OutOfRange { field, .. } if field == "servers"), "{e}");
    let e = simulate(&s, &SimOptions { servers: 2, ..opts(2) }).unwrap_err();
    assert!(e.to_string().contains("model.b = 4"), "{e}");
    let e = simulate(&s, &SimOptions { servers: 4, buffer: Some(3), ..opts(4) }).unwrap_err();
    assert!(matches!(&e, SimError::OutOfRange { field, .. } if field == "buffer"), "{e}");
}
