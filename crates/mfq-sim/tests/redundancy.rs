//! Redundancy-d with i.i.d. exponential copies (PS, FCFS, LPS(k), LCFS): the finite-N
//! simulation against Gardner's FCFS limit (closed form, asymptotically exact: Gardner et al.
//! 2017, Shneer and Stolyar 2020), the reference simulation of docs/references.md
//! ("Redundancy: reference simulation", mean copies per server with their 95% CIs), the PS pair
//! values (validation/redundancy.py), and the discipline-independent mean field computed here by
//! `solve_spec` (which is *not* the N -> infinity limit for any discipline: checked as a
//! documented disagreement).

mod common;

use common::{assert_all, check, extra, fixed_point, opts_10k};
use mfq_model::{ModelFile, ModelSpec};
use mfq_sim::{simulate, SimOptions};

fn spec(lambda: f64, d: u32, discipline: &str, more: &str) -> ModelSpec {
    let text = format!("[model]\nkind = \"redundancy\"\nlambda = {lambda}\nd = {d}\ndiscipline = \"{discipline}\"\n{more}\n");
    ModelFile::parse(&text, &[]).unwrap_or_else(|e| panic!("{text}: {e}")).model
}

/// Gardner's limit: mean copies per server `m = lambda d E[T]`, `E[T] = sum_n lambda^n / (n (d-1) + d)`.
fn gardner_copies(lambda: f64, d: u32) -> f64 {
    let d = d as f64;
    lambda * d * (0..2000).map(|n| lambda.powi(n) / (n as f64 * (d - 1.0) + d)).sum::<f64>()
}

/// FCFS at lambda = 0.7, d = 2 and 3: Gardner's limit (1.439922, 1.338447; validation/redundancy.py).
/// Allowance `c/N` with `c = 20` (2e-3): the reference FCFS simulations at n = 1000 lie within
/// 0.001 of the limit (1.4408 +- 0.0019 vs 1.439922), i.e. `c` about 1.
#[test]
fn fcfs_matches_gardners_limit() {
    for (d, notes) in [(2u32, 1.439922), (3, 1.338447)] {
        let m = gardner_copies(0.7, d);
        assert!((m - notes).abs() < 1e-6, "{m}");
        let r = simulate(&spec(0.7, d, "fcfs", ""), &opts_10k()).unwrap();
        let a = 20.0 / 10_000.0;
        let checks = [
            check("copies", r.mean_queue_length.unwrap(), m, a),
            check("E[T]", r.mean_response_time.unwrap(), m / (0.7 * d as f64), a),
            check("jobs", extra(&r, "mean_jobs_per_server"), m / d as f64, a),
            check("busy", r.tail[0], 0.7, a), // job throughput = busy fraction = lambda
        ];
        assert_all(&format!("redundancy-{d} FCFS lambda=0.7 N=10000"), &r, &checks);
    }
}

/// PS, LPS(2) and LCFS at lambda = 0.7, d = 2 against the reference simulation (n = 1000; LCFS
/// also n = 1e4) and PS also against the PS pair approximation (1.48412, within 0.1% of
/// simulation). Allowance: the reference's 95% half width plus `c/N`, `c = 20`; for the pair
/// approximation 0.1% (its stated accuracy) plus `c/N`.
#[test]
fn other_disciplines_match_the_notes_simulations() {
    let a = 20.0 / 10_000.0;
    let cases = [("ps", "", 1.4833, 0.0011), ("lps", "lps_k = 2", 1.4609, 0.0027), ("lcfs", "", 1.5457, 0.0018)];
    for (disc, more, notes, hw) in cases {
        let r = simulate(&spec(0.7, 2, disc, more), &opts_10k()).unwrap();
        let mut checks = vec![check("copies (notes sim)", r.mean_queue_length.unwrap(), notes, a + hw)];
        if disc == "ps" {
            checks.push(check("copies (PS pair)", r.mean_queue_length.unwrap(), 1.48412, a + 0.001 * 1.48412));
        }
        assert_all(&format!("redundancy-2 {disc} {more} lambda=0.7 N=10000"), &r, &checks);
    }
}

/// The discipline-independent mean field (solve_spec, approximation "mean-field") at
/// lambda = 0.7, d = 2: 1.473043 (validation/redundancy.py) lies strictly between FCFS and PS, and the
/// simulation must *resolve* the gap for FCFS (-2.3%) and LCFS (+4.8%): the mean field is not
/// their N -> infinity limit (FCFS converges to Gardner's 1.439922). For PS the gap (+0.5%, the
/// PS pair value 1.48412 is 0.75% above the mean field) is printed, not asserted at this run
/// length. A documented disagreement, kept as a test so that it is noticed if it ever closes.
#[test]
fn mean_field_is_not_the_limit_of_any_discipline() {
    let fp = fixed_point(&spec(0.7, 2, "ps", ""));
    let mf = fp.observables.mean_queue_length.unwrap();
    assert!((mf - 1.473043).abs() < 1e-6, "{mf}");
    for disc in ["fcfs", "ps", "lcfs"] {
        let r = simulate(&spec(0.7, 2, disc, ""), &opts_10k()).unwrap();
        let e = r.mean_queue_length.unwrap();
        println!(
            "redundancy-2 {disc} lambda=0.7: sim {:.5} +- {:.5}, mean field {mf:.6}, gap {:+.2}%",
            e.mean,
            e.half_width,
            100.0 * (e.mean / mf - 1.0)
        );
        if disc != "ps" {
            assert!((e.mean - mf).abs() > e.half_width_at(0.999) + 20.0 / 10_000.0, "{disc}: the gap to the mean field is not resolved");
        }
    }
}

/// lambda = 0.9, d = 2 against Gardner (3.116856) and the reference simulation (n = 1e4): PS
/// 3.3846 +- 0.0069, LPS(2) 3.2174 +- 0.0091 (n = 1000), LCFS 3.9492 +- 0.0254 (n = 1000).
#[test]
#[ignore = "long run; run with --ignored"]
fn high_load_matches_the_notes() {
    let o = SimOptions { time: 3000.0, warmup: 300.0, batches: 10, ..opts_10k() };
    let a = 20.0 / 10_000.0;
    for (disc, more, reference, hw) in
        [("fcfs", "", 3.116856, 0.0), ("ps", "", 3.3846, 0.0069), ("lps", "lps_k = 2", 3.2174, 0.0091), ("lcfs", "", 3.9492, 0.0254)]
    {
        let r = simulate(&spec(0.9, 2, disc, more), &o).unwrap();
        assert_all(
            &format!("redundancy-2 {disc} lambda=0.9 N=10000"),
            &r,
            &[check("copies", r.mean_queue_length.unwrap(), reference, a + hw)],
        );
    }
}
