//! Redundancy on a compatibility graph (`redundancy-graph`): the event-driven simulation, written
//! from the system's rules (`families::graph`: every server serves the oldest compatible job,
//! the first copy to complete cancels the others), against the product form of Gardner et al.,
//! Queueing Systems 83 (2016) 227-259, computed by `mfq_model::models::redundancy_graph`
//! (itself checked against the direct solve of the truncated chain in that module's tests).
//!
//! Each test compares `m` estimates with their 95% batch-means intervals; so that the whole
//! comparison has a 95% family-wise level (Bonferroni), each estimate is allowed its half-width
//! times `z(1 - 0.025/m) / 1.96`.

use mfq_model::models::redundancy_graph::{Graph, JobType, ProductForm, RedundancyGraphSpec};
use mfq_model::ModelSpec;
use mfq_sim::{simulate, Estimate, SimOptions};

fn t(lambda: f64, servers: &[usize]) -> JobType {
    JobType { lambda, servers: servers.to_vec() }
}

/// `z(1 - 0.025/m) / 1.96` for the `m` of the tests (standard normal quantiles).
fn bonferroni(m: usize) -> f64 {
    let z = match m {
        9 => 2.7729,  // 1 - 0.025/9 = 0.997222
        12 => 2.8653, // 1 - 0.025/12 = 0.997917
        _ => panic!("add the quantile for m = {m}"),
    };
    z / 1.96
}

fn check(mu: &[f64], types: &[JobType], time: f64) {
    let spec = ModelSpec::from(RedundancyGraphSpec { mu: mu.to_vec(), types: types.to_vec(), rho: None });
    let pf = ProductForm::new(&Graph::new(mu, types).unwrap()).unwrap();
    let opts = SimOptions { servers: 1000, time, warmup: 200.0, replications: 4, batches: 20, seed: 5, ..Default::default() };
    let r = simulate(&spec, &opts).unwrap();
    assert_eq!(r.options.servers, mu.len(), "the graph fixes the servers");
    let total: f64 = pf.mean_jobs.iter().sum();
    let mut rows: Vec<(String, Estimate, f64)> = vec![
        ("mean_jobs".into(), r.extras["mean_jobs"], total),
        ("mean_queue_length (per server)".into(), r.mean_queue_length.unwrap(), total / mu.len() as f64),
        ("mean_response_time".into(), r.mean_response_time.unwrap(), total / types.iter().map(|t| t.lambda).sum::<f64>()),
    ];
    for c in 0..types.len() {
        rows.push((format!("type{}.mean_jobs", c + 1), r.extras[&format!("type{}.mean_jobs", c + 1)], pf.mean_jobs[c]));
        let key = format!("type{}.mean_response_time", c + 1);
        rows.push((key.clone(), r.extras[&key], pf.mean_response_time[c]));
    }
    for s in 0..mu.len() {
        let key = format!("server{}.busy_fraction", s + 1);
        rows.push((key.clone(), r.extras[&key], pf.busy[s]));
    }
    let factor = bonferroni(rows.len());
    for (name, est, exact) in rows {
        println!("{name}: simulated {:.5} +- {:.5}, product form {exact:.5}", est.mean, est.half_width);
        assert!((est.mean - exact).abs() <= factor * est.half_width, "{name}: {est:?} against the product form {exact}");
    }
}

/// The N-model (type 1 on server 1, type 2 on servers 1 and 2, unit rates), load 0.6.
#[test]
fn n_model_simulation_matches_the_product_form() {
    check(&[1.0, 1.0], &[t(0.5, &[1]), t(0.7, &[1, 2])], 100_000.0);
}

/// Three types on three servers of different rates, load 0.65.
#[test]
fn three_server_graph_simulation_matches_the_product_form() {
    check(&[1.0, 0.8, 1.3], &[t(0.6, &[1, 2]), t(0.5, &[2, 3]), t(0.9, &[3])], 100_000.0);
}
