//! Events per second per core of every simulator family, as a ratio to JSQ(2) measured in the
//! same run, after a correctness check of each; then the parallel speed-up of replications.
//!
//! `cargo bench -p mfq-sim --bench throughput` (release profile); `-- --quick` for shorter runs.
//! Each case is a bundled model file (`models/`) with `--set`-style overrides, one replication on
//! one thread, about `EVENTS` events (the horizon is scaled from a pilot run so every family
//! gets the same number of events).
//!
//! Correctness: the simulated headline (mean jobs, copies or requests per server) against the
//! mean-field fixed point of the same file (the limit `N -> infinity`; at `N = 1000` the two
//! differ by `O(1/N)`, allowance 2% of the value, plus the 99.9% interval of the simulation;
//! SA-JSQ and SA-JIQ also `1/sqrt(N)`, their boundary effect);
//! random routing (`d = 1`) also against the M/M/1 closed form `rho / (1 - rho)`. Families whose
//! simulated system has a fixed small size (k-of-n at its model size, a compatibility graph)
//! or no mean queue length are checked against their references in `crates/mfq-sim/tests/`
//! and marked so.

use mfq_fixpoint::{solve_spec, FixedPointOptions};
use mfq_model::{ModelFile, ModelSpec};
use mfq_sim::{simulate, SimOptions, SimReport};
use std::time::Instant;

/// One case: label, model file (under `models/`), overrides, servers.
struct Case {
    label: &'static str,
    file: &'static str,
    set: &'static [&'static str],
    servers: usize,
}

const fn case(label: &'static str, file: &'static str, set: &'static [&'static str], servers: usize) -> Case {
    Case { label, file, set, servers }
}

const CASES: &[Case] = &[
    case("JSQ(2) lambda=0.9", "jsq-d2.toml", &[], 1000),
    case("JSQ(1) lambda=0.5 (M/M/1)", "jsq-d1.toml", &["lambda=0.5"], 1000),
    case("JSQ(3) lambda=0.9", "jsq-d3.toml", &[], 1000),
    case("JSQ(10) lambda=0.9", "jsq-d2.toml", &["d=10"], 1000),
    case("Pod-LI d=2", "pod-errors-li.toml", &[], 1000),
    case("Pod-LD d=2", "pod-errors-ld.toml", &[], 1000),
    case("JIQ lambda=0.9", "jiq.toml", &[], 1000),
    case("LL(2) exp", "lld2-exp.toml", &[], 1000),
    case("LL(2) H2 SCV 9", "lld2-h2.toml", &[], 1000),
    case("SQ(2) H2 SCV 9 (phase type)", "sq2-h2.toml", &[], 1000),
    case("JIQ H2 (phase type)", "jiq-h2.toml", &[], 1000),
    case("Pod-LI H2 (phase type)", "pod-li-h2.toml", &[], 1000),
    case("SA-JSQ classes case A", "hetero-sa-jsq-caseA.toml", &[], 1000),
    case("SA-JIQ classes case A", "hetero-sa-jiq-caseA.toml", &[], 1000),
    case("PULL classes case A", "hetero-pull-caseA.toml", &[], 1000),
    case("PS SQ(2) classes case A", "hetero-ps-sq2-caseA.toml", &[], 1000),
    case("static routing case A", "hetero-static-caseA.toml", &[], 1000),
    case("Red(2) PS mean field", "redundancy-mf-d2.toml", &[], 1000),
    case("Red(2) FCFS", "redundancy-mf-d2.toml", &["discipline=\"fcfs\"", "approximation=\"pair\""], 1000),
    case("Red(2) LCFS", "redundancy-lcfs-pair.toml", &[], 1000),
    case("batch network b=3", "batch.toml", &[], 1000),
    case("k-of-n 1 of 4, central", "k-of-n.toml", &[], 4),
    case("moldable d=8", "moldable.toml", &[], 1000),
    case("LQF(2)", "lqf-d2.toml", &[], 1000),
    case("redundancy on a graph", "redundancy-graph-n45.toml", &[], 0),
    case("opinion stubborn", "opinion-stubborn.toml", &[], 1000),
    case("population: SIRS (generic)", "generic/sir.toml", &[], 1000),
    case("population: M/M/1 (generic)", "generic/mm1.toml", &[], 1000),
    // the same at lambda = 0.5 (automatic K about 40: 80 transitions instead of about 2 x 260):
    // the cost per event grows with the number of transitions whose rates are evaluated
    case("population: M/M/1 l=0.5 (generic)", "generic/mm1.toml", &["lambda=0.5"], 1000),
];

fn load(c: &Case) -> ModelFile {
    let path = format!("{}/../../models/{}", env!("CARGO_MANIFEST_DIR"), c.file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let set: Vec<String> = c.set.iter().map(|s| s.to_string()).collect();
    ModelFile::parse(&text, &set).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs `spec` (or the population process of a generic model) for `time` on one replication.
fn run(file: &ModelFile, servers: usize, time: f64) -> SimReport {
    let opts = SimOptions { servers, time, warmup: time / 10.0, replications: 1, batches: 20, seed: 1, ..Default::default() };
    match file.model.simulation() {
        Ok(mfq_model::Simulation::Population) => {
            let fp = solve_spec(&file.model, &file.truncation, &FixedPointOptions::default()).expect("fixed point");
            let model = file.model.build(fp.truncation.levels).expect("model");
            mfq_sim::population::simulate_as_report(&file.model, model.as_ref(), &fp.x, &opts).expect("population process")
        }
        _ => simulate(&file.model, &opts).expect("valid options"),
    }
}

/// The correctness verdict of a run: the headline against the mean field (and, for random
/// routing, the M/M/1 closed form).
fn check(c: &Case, file: &ModelFile, r: &SimReport) -> String {
    // a population process whose state is not one tail family has no headline: its first
    // state entry (the extras) is compared below
    let (name, est) = r.headline().unwrap_or(("", mfq_sim::Estimate { mean: f64::NAN, half_width: f64::NAN, n: 0 }));
    if c.servers < 100 || c.file.starts_with("redundancy-graph") {
        return format!("{name} {:.4}: small fixed N, see tests/", est.mean);
    }
    let fp = match solve_spec(&file.model, &file.truncation, &FixedPointOptions::default()) {
        Ok(fp) if fp.converged() => fp,
        _ => return format!("{name} {:.4}: no mean field, see tests/", est.mean),
    };
    let (reference, what) = match (name, fp.observables.mean_queue_length) {
        ("mean_queue_length", Some(l)) => (l, "mean field"),
        ("x", _) => (fp.x.first().copied().unwrap_or(f64::NAN), "mean field x"),
        _ => match r.extras.iter().next() {
            Some((k, e)) => {
                let i = (0..fp.x.len()).find(|&i| file.model.build(fp.truncation.levels).is_ok_and(|m| m.layout().name(i) == *k));
                return match i {
                    Some(i) => verdict(k, *e, fp.x[i], "mean field"),
                    None => format!("{k} {:.4}: no matching mean-field entry, see tests/", e.mean),
                };
            }
            None => return format!("{name}: nothing to compare, see tests/"),
        },
    };
    // SA-JSQ and SA-JIQ approach their fixed point by an O(1/sqrt(N)) boundary effect
    // (crates/mfq-sim/tests/heterogeneous.rs): allowance 1/sqrt(N) beside the 2%
    let sqrt_n = if c.file.starts_with("hetero-sa-") { 1.0 / (r.options.servers as f64).sqrt() } else { 0.0 };
    let mut v = verdict_within(name, est, reference, what, 0.02 * reference.abs() + sqrt_n);
    if c.file == "jsq-d1.toml" {
        let rho = 0.5;
        v = format!("{v}; {}", verdict(name, est, rho / (1.0 - rho), "M/M/1"));
    }
    v
}

fn verdict(name: &str, est: mfq_sim::Estimate, reference: f64, what: &str) -> String {
    verdict_within(name, est, reference, what, 0.02 * reference.abs())
}

fn verdict_within(name: &str, est: mfq_sim::Estimate, reference: f64, what: &str, allowance: f64) -> String {
    let ok = est.covers(reference, 0.999, allowance);
    format!("{name} {:.4} +- {:.4} vs {what} {reference:.4} {}", est.mean, est.half_width, if ok { "ok" } else { "FAIL" })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // `--only TEXT`: the cases whose label contains TEXT (e.g. to profile one family)
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).cloned();
    let events: f64 = if quick { 4e6 } else { 2e7 };
    println!("load average before: {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
    println!(
        "| {:<30} | {:>6} | {:>10} | {:>9} | {:>12} | {:>8} | correctness |",
        "family (model file)", "N", "events", "seconds", "events/s/core", "vs JSQ(2)"
    );
    let mut jsq2 = f64::NAN;
    for c in CASES.iter().filter(|c| c.label.starts_with("JSQ(2)") || only.as_ref().is_none_or(|o| c.label.contains(o.as_str()))) {
        let file = load(c);
        let servers = if c.servers == 0 { 1000 } else { c.servers };
        // pilot: events per unit time, then a horizon of about `events` events
        let pilot = run(&file, servers, 20.0);
        let per_time = pilot.events as f64 / 22.0;
        // about `events` events, but at most about 5 s by the pilot's rate (slow families)
        let events = events.min(5.0 * pilot.events_per_second);
        let time = (events / per_time.max(1.0)).clamp(50.0, 1e9) / 1.1;
        let r = run(&file, servers, time);
        let rate = r.events_per_second;
        if c.label.starts_with("JSQ(2)") {
            jsq2 = rate;
        }
        println!(
            "| {:<30} | {:>6} | {:>10} | {:>9.2} | {:>12.3e} | {:>8.2} | {} |",
            c.label,
            r.options.servers,
            r.events,
            r.wall_seconds,
            rate,
            rate / jsq2,
            check(c, &file, &r)
        );
    }
    if only.is_none() {
        parallel(quick);
    }
    println!("load average after: {}", std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim());
}

/// JSQ(2), N = 1000: 1 replication on 1 thread against 4 replications on 2 threads (the rayon
/// pool of `simulate`), each replication the same horizon; the speed-up is the ratio of the
/// event rates (2 on two idle cores).
fn parallel(quick: bool) {
    let spec = ModelSpec::from(mfq_model::models::JsqSpec { lambda: 0.9, d: 2 });
    let time = if quick { 2000.0 } else { 10_000.0 };
    let opts =
        |replications| SimOptions { servers: 1000, time, warmup: time / 10.0, replications, batches: 20, seed: 1, ..Default::default() };
    let pool = |threads| rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
    let one = pool(1).install(|| simulate(&spec, &opts(1)).expect("valid"));
    let started = Instant::now();
    let four = pool(2).install(|| simulate(&spec, &opts(4)).expect("valid"));
    let wall = started.elapsed().as_secs_f64();
    let again = pool(2).install(|| simulate(&spec, &opts(4)).expect("valid"));
    println!(
        "parallel replications, JSQ(2) N = 1000: 1 replication on 1 thread {:.3e} events/s; 4 replications on 2 threads {:.3e} events/s ({:.2} s): speed-up {:.2} (ideal 2); same report when rerun: {}",
        one.events_per_second,
        four.events as f64 / wall,
        wall,
        four.events as f64 / wall / one.events_per_second,
        four.tail == again.tail && four.mean_queue_length == again.mean_queue_length
    );
}
