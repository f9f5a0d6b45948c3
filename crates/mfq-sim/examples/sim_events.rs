//! One replication of a bundled model's simulator over a fixed horizon, with no mean-field
//! solve: the events and their rate, for counting instructions per event with
//! `valgrind --tool=callgrind` (independent of the machine's load) or timing one family alone.
//! `cargo run --release -p mfq-sim --example sim_events -- MODEL.toml SERVERS TIME [KEY=VALUE ...]`
//! (`MODEL.toml` under `models/`; `SERVERS` 0 for the model's own size; warm-up `TIME / 10`,
//! 20 batches, seed 1). Prints the events, the wall-clock seconds, the events per second and
//! the headline estimate (so two builds can be checked to simulate the same path). A generic
//! model runs its population process ([`mfq_sim::population::simulate_as_report`]) at the
//! truncation and from the fixed point the mean-field solver gives it (solved before the
//! simulation, as the throughput bench does), so its simulation alone is
//! `simulate_population`'s inclusive cost.

use mfq_model::ModelFile;
use mfq_sim::{simulate, SimOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: sim_events MODEL.toml SERVERS TIME [KEY=VALUE ...]");
        std::process::exit(2);
    }
    let path = format!("{}/../../models/{}", env!("CARGO_MANIFEST_DIR"), args[0]);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let file = ModelFile::parse(&text, &args[3..]).unwrap_or_else(|e| panic!("{path}: {e}"));
    let servers: usize = args[1].parse().expect("SERVERS");
    let time: f64 = args[2].parse().expect("TIME");
    let servers = if servers == 0 { 1000 } else { servers };
    let opts = SimOptions { servers, time, warmup: time / 10.0, replications: 1, batches: 20, seed: 1, ..Default::default() };
    let r = match file.model.simulation() {
        Ok(mfq_model::Simulation::Population) => {
            use mfq_fixpoint::{solve_spec, FixedPointOptions};
            let fp = solve_spec(&file.model, &file.truncation, &FixedPointOptions::default()).expect("fixed point");
            let model = file.model.build(fp.truncation.levels).expect("model");
            mfq_sim::population::simulate_as_report(&file.model, model.as_ref(), &fp.x, &opts).expect("population process")
        }
        _ => simulate(&file.model, &opts).expect("valid options"),
    };
    // a state without a mean queue length (e.g. SIRS): its first named entry
    let (name, est) = match (r.headline(), r.extras.iter().next()) {
        (Some((k, e)), _) if e.mean.is_finite() => (k, e),
        (_, Some((k, e))) => (k.as_str(), *e),
        (h, None) => h.expect("a headline or an extra"),
    };
    println!(
        "{}: {} events in {:.3} s, {:.3e} events/s; {name} {:.6} +- {:.6}",
        args[0], r.events, r.wall_seconds, r.events_per_second, est.mean, est.half_width
    );
}
