//! Events per second of the simulator on one thread (one replication per run).
//!
//! `cargo bench -p mfq-sim --bench throughput` (release profile). Prints one line per case.

use mfq_model::{ModelFile, ModelSpec};
use mfq_sim::{simulate, SimOptions};

fn parse(text: &str) -> ModelSpec {
    ModelFile::parse(text, &[]).expect("valid model").model
}

fn main() {
    let cases: Vec<(&str, ModelSpec, usize, f64)> = vec![
        ("JSQ(2) lambda=0.9", ModelSpec::from(mfq_model::models::JsqSpec { lambda: 0.9, d: 2 }), 1000, 20_000.0),
        ("JSQ(2) lambda=0.9", ModelSpec::from(mfq_model::models::JsqSpec { lambda: 0.9, d: 2 }), 100_000, 200.0),
        ("JSQ(1) lambda=0.9", ModelSpec::from(mfq_model::models::JsqSpec { lambda: 0.9, d: 1 }), 1000, 20_000.0),
        ("JSQ(3) lambda=0.9", ModelSpec::from(mfq_model::models::JsqSpec { lambda: 0.9, d: 3 }), 1000, 20_000.0),
        ("Pod-LI d=2 eps=0.3 lambda=0.9", ModelSpec::from(mfq_model::models::PodLiSpec { lambda: 0.9, d: 2, eps: 0.3 }), 1000, 20_000.0),
        (
            "Pod-LD d=2 eps=0.5 g=1 lambda=0.9",
            ModelSpec::from(mfq_model::models::PodLdSpec { lambda: 0.9, d: 2, eps: 0.5, g: 1 }),
            1000,
            20_000.0,
        ),
        ("JIQ lambda=0.9", ModelSpec::from(mfq_model::models::JiqSpec { lambda: 0.9 }), 1000, 20_000.0),
        ("SA-JSQ case A lambda=0.9", parse(&hetero("sa-jsq", "")), 1000, 20_000.0),
        ("SA-JIQ case A lambda=0.9", parse(&hetero("sa-jiq", "")), 1000, 20_000.0),
        ("PULL case A lambda=0.9", parse(&hetero("pull", "")), 1000, 20_000.0),
        ("PS SQ(2) LSC case A lambda=0.7", parse(&hetero("ps-sq2", "rule = \"lsc\"").replace("0.9", "0.7")), 1000, 20_000.0),
        ("static routing case A lambda=0.9", parse(&hetero("static-routing", "")), 1000, 20_000.0),
        ("SQ(2) H2 SCV 9 lambda=0.9", parse(&ph("jsq-ph", "d = 2")), 1000, 20_000.0),
        ("JIQ H2 SCV 9 lambda=0.9", parse(&ph("jiq-ph", "")), 1000, 20_000.0),
        ("LL(2) H2 SCV 9 lambda=0.9", parse(&ph("lld", "d = 2")), 1000, 20_000.0),
        ("Red(2) PS lambda=0.9", parse(&red("ps")), 1000, 20_000.0),
        ("Red(2) FCFS lambda=0.9", parse(&red("fcfs")), 1000, 20_000.0),
        ("Red(2) LCFS lambda=0.9", parse(&red("lcfs")), 1000, 20_000.0),
        (
            "opinion stubborn (0.1, 0.1)",
            ModelSpec::from(mfq_model::models::OpinionStubbornSpec { gamma0: 0.1, gamma1: 0.1 }),
            1000,
            20_000.0,
        ),
        ("opinion biased alpha=0.05", ModelSpec::from(mfq_model::models::OpinionBiasedSpec { alpha: 0.05 }), 1000, 20_000.0),
    ];
    println!("{:<36} {:>8} {:>12} {:>8} {:>14}", "model", "N", "events", "seconds", "events/s");
    for (name, spec, n, time) in cases {
        // one replication = one thread; warm-up included in the event count
        let opts = SimOptions { servers: n, time, warmup: time / 10.0, replications: 1, batches: 20, seed: 1, ..Default::default() };
        let r = simulate(&spec, &opts).expect("valid options");
        println!("{:<36} {:>8} {:>12} {:>8.2} {:>14.3e}", name, n, r.events, r.wall_seconds, r.events_per_second);
    }
}

/// Case A of docs/models/heterogeneous.md (gamma = (0.5, 0.5), speeds (1.6, 0.4)) at lambda = 0.9.
fn hetero(kind: &str, more: &str) -> String {
    format!("[model]\nkind = \"{kind}\"\nlambda = 0.9\n{more}\n[[model.classes]]\nfraction = 0.5\nspeed = 1.6\n[[model.classes]]\nfraction = 0.5\nspeed = 0.4\n")
}

/// H2 sizes with SCV 9, f = 1/2, lambda = 0.9.
fn ph(kind: &str, more: &str) -> String {
    format!("[model]\nkind = \"{kind}\"\nlambda = 0.9\n{more}\n[model.job_size]\nlaw = \"h2\"\nscv = 9\n")
}

/// Redundancy-2 at lambda = 0.9.
fn red(discipline: &str) -> String {
    format!("[model]\nkind = \"redundancy\"\nlambda = 0.9\nd = 2\ndiscipline = \"{discipline}\"\n")
}
