//! Events per second of the simulator on one thread (one replication per run).
//!
//! `cargo bench -p mfq-sim --bench throughput` (release profile). Prints one line per case.

use mfq_model::ModelSpec;
use mfq_sim::{simulate, SimOptions};

fn main() {
    let cases: Vec<(&str, ModelSpec, usize, f64)> = vec![
        ("JSQ(2) lambda=0.9", ModelSpec::Jsq { lambda: 0.9, d: 2 }, 1000, 20_000.0),
        ("JSQ(2) lambda=0.9", ModelSpec::Jsq { lambda: 0.9, d: 2 }, 100_000, 200.0),
        ("JSQ(1) lambda=0.9", ModelSpec::Jsq { lambda: 0.9, d: 1 }, 1000, 20_000.0),
        ("JSQ(3) lambda=0.9", ModelSpec::Jsq { lambda: 0.9, d: 3 }, 1000, 20_000.0),
        ("Pod-LI d=2 eps=0.3 lambda=0.9", ModelSpec::PodLi { lambda: 0.9, d: 2, eps: 0.3 }, 1000, 20_000.0),
        ("Pod-LD d=2 eps=0.5 g=1 lambda=0.9", ModelSpec::PodLd { lambda: 0.9, d: 2, eps: 0.5, g: 1 }, 1000, 20_000.0),
        ("JIQ lambda=0.9", ModelSpec::Jiq { lambda: 0.9 }, 1000, 20_000.0),
    ];
    println!("{:<36} {:>8} {:>12} {:>8} {:>14}", "model", "N", "events", "seconds", "events/s");
    for (name, spec, n, time) in cases {
        // one replication = one thread; warm-up included in the event count
        let opts = SimOptions { servers: n, time, warmup: time / 10.0, replications: 1, batches: 20, seed: 1, ..Default::default() };
        let r = simulate(&spec, &opts).expect("valid options");
        println!("{:<36} {:>8} {:>12} {:>8.2} {:>14.3e}", name, n, r.events, r.wall_seconds, r.events_per_second);
    }
}
