//! Speed of the exact finite-N chain (`mfq_sim::exact`): JSQ(2) at lambda = 0.9 with N = 20
//! servers and buffers 6 (C(26, 6) = 230,230 states) and 8 (C(28, 8) = 3,108,105 states),
//! the targets of issue 17 (under 10 s and under a minute). Run with
//! `cargo run --release -p mfq-sim --example exact_speed [-- N K ...]` (pairs of N and K).

use mfq_model::models::Jsq;
use mfq_sim::exact::{exact, ExactOptions};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let cases: Vec<(usize, usize)> = if args.len() >= 2 { args.chunks(2).map(|c| (c[0], c[1])).collect() } else { vec![(20, 6), (20, 8)] };
    for (n, k) in cases {
        let m = Jsq::new(0.9, 2, k).expect("valid JSQ(2)");
        let started = std::time::Instant::now();
        match exact(&m, &ExactOptions { servers: n, ..Default::default() }) {
            Ok(r) => println!(
                "JSQ(2) lambda = 0.9, N = {n}, K = {k}: {} states, {} transitions, {:?} ({} iterations), residual {:.1e}, build {:.2} s, solve {:.2} s, total {:.2} s wall; E[x_1] = {:.10}, L = {:.10}",
                r.states,
                r.transitions,
                r.method,
                r.iterations,
                r.residual,
                r.build_seconds,
                r.solve_seconds,
                started.elapsed().as_secs_f64(),
                r.mean[0],
                r.observables.mean_queue_length.unwrap_or(f64::NAN)
            ),
            Err(e) => println!("JSQ(2) lambda = 0.9, N = {n}, K = {k}: {e}"),
        }
    }
}
