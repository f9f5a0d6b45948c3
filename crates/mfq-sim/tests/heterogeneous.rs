//! Heterogeneous server classes (`sa-jsq`, `sa-jiq`, `pull`, `ps-sq2`, `static-routing`): the
//! finite-N simulation against the reference values of docs/references.md ("Heterogeneous
//! server classes"; recomputed by validation/heterogeneous.py), closed forms, and the mean-field fixed point computed here with
//! `mfq_fixpoint::solve_spec`.
//!
//! Class sizes are `N gamma_j` exactly (N = 10000 and fractions with at most 4 decimals).

mod common;

use common::{assert_all, check, extra, fixed_point, fp_extra, opts_10k, Check};
use mfq_model::{ModelFile, ModelSpec};
use mfq_sim::{simulate, SimOptions, SimReport};

fn spec(kind: &str, lambda: f64, classes: &[(f64, f64)], more: &str) -> ModelSpec {
    let mut text = format!("[model]\nkind = \"{kind}\"\nlambda = {lambda}\n{more}\n");
    for (g, mu) in classes {
        text.push_str(&format!("[[model.classes]]\nfraction = {g}\nspeed = {mu}\n"));
    }
    ModelFile::parse(&text, &[]).unwrap_or_else(|e| panic!("{text}: {e}")).model
}

/// Case A: gamma = (0.5, 0.5), mu = (1.6, 0.4). Case B: (0.2, 0.8), (3, 0.5).
/// Case C of (e): (0.2, 0.3, 0.5), (2.5, 1, 0.4).
const CASE_A: [(f64, f64); 2] = [(0.5, 1.6), (0.5, 0.4)];
const CASE_B: [(f64, f64); 2] = [(0.2, 3.0), (0.8, 0.5)];
const CASE_C_PS: [(f64, f64); 3] = [(0.2, 2.5), (0.3, 1.0), (0.5, 0.4)];

/// Checks of the per-class busy fractions and T against given values, each with `allowance`.
fn class_checks(r: &SimReport, busy: &[f64], t: f64, allowance: f64) -> Vec<Check> {
    let mut v: Vec<Check> = busy
        .iter()
        .enumerate()
        .map(|(j, &b)| check(&format!("class{}.busy", j + 1), extra(r, &format!("class{}.busy_fraction", j + 1)), b, allowance))
        .collect();
    v.push(check("T", r.mean_response_time.unwrap(), t, allowance));
    v
}

/// PULL, case B, lambda = 0.5: the exact case (docs/models/heterogeneous.md): c = 1.5, b = (1/3, 3/4),
/// T = 4/3. No job waits in the limit; at N = 10000 the probability that no server is idle is
/// exponentially small (the idle fraction is about 0.33). Allowance `c/N` with `c = 10` (1e-3)
/// for the O(1/N) bias; an earlier independent simulation (docs/references.md, "Earlier finite-N checks")
/// at N = 2000 (case A) was within 1e-3 of the fluid values. Also `P(wait) = 0` with the same allowance.
#[test]
fn pull_matches_the_exact_case() {
    let r = simulate(&spec("pull", 0.5, &CASE_B, ""), &opts_10k()).unwrap();
    let a = 10.0 / 10_000.0;
    let mut checks = class_checks(&r, &[1.0 / 3.0, 0.75], 4.0 / 3.0, a);
    checks.push(check("P(wait)", r.prob_wait.unwrap(), 0.0, a));
    assert_all("PULL case B lambda=0.5 N=10000", &r, &checks);
}

/// SA-JIQ and SA-JSQ, case A at lambda = 0.5 (validation/heterogeneous.py): b = (0.625, 0),
/// T = 0.625 (the fast class carries everything and is not saturated: capacity 0.8 > 0.5).
/// Allowance `10/N` as for PULL. Case B at lambda = 0.3: b = (0.5, 0), T = 1/3.
#[test]
fn speed_aware_policies_fill_the_fast_class() {
    let a = 10.0 / 10_000.0;
    for kind in ["sa-jiq", "sa-jsq"] {
        let r = simulate(&spec(kind, 0.5, &CASE_A, ""), &opts_10k()).unwrap();
        assert_all(&format!("{kind} case A lambda=0.5 N=10000"), &r, &class_checks(&r, &[0.625, 0.0], 0.625, a));
    }
    let r = simulate(&spec("sa-jsq", 0.3, &CASE_B, ""), &opts_10k()).unwrap();
    assert_all("sa-jsq case B lambda=0.3 N=10000", &r, &class_checks(&r, &[0.5, 0.0], 1.0 / 3.0, a));
}

/// SA-JIQ and SA-JSQ, case A at lambda = 0.9, where the fast class is saturated
/// (b = (1, 0.5), T = 0.83333333): here the finite system differs from the fluid
/// fixed point by an O(1/sqrt(N)) boundary effect (an earlier independent simulation at
/// N = 2000 gave (0.9927, 0.5179) for SA-JIQ: 0.0073 = 0.33/sqrt(N); docs/references.md).
/// Allowance `1/sqrt(N)` (0.01 at N = 10000), three times that constant.
#[test]
fn speed_aware_policies_at_a_saturated_class() {
    let a = 1.0 / 10_000f64.sqrt();
    for kind in ["sa-jiq", "sa-jsq"] {
        let r = simulate(&spec(kind, 0.9, &CASE_A, ""), &opts_10k()).unwrap();
        assert_all(&format!("{kind} case A lambda=0.9 N=10000"), &r, &class_checks(&r, &[1.0, 0.5], 0.83333333, a));
    }
}

/// SQ(2)-type routing on PS servers (cases A and C, validation/heterogeneous.py), all
/// three cost rules, against the reference T and against the mean-field fixed point (per-class
/// busy fractions, computed here by `solve_spec`). The O(1/N) allowance is `c/N` with
/// `c = 20`: an earlier independent simulation (docs/references.md, "Earlier finite-N checks") at N = 1000 found sim - MF = 0.0049 (SQ2,
/// lambda = 0.5, i.e. c = 4.9) and 0.017 (LSC, lambda = 0.7); `c = 20` is four times the first.
#[test]
fn ps_sq2_matches_notes_and_mean_field() {
    let n = 10_000.0;
    let a = 20.0 / n;
    let cases = [
        ("sq2", "uniform", &CASE_A[..], 0.5, 2.258747),
        ("lsc", "uniform", &CASE_A[..], 0.5, 1.922054),
        ("lsc-plus-one", "uniform", &CASE_A[..], 0.5, 1.652379),
        ("sq2", "uniform", &CASE_C_PS[..], 0.5, 2.564217),
    ];
    for (rule, sampling, classes, lambda, t_notes) in cases {
        let s = spec("ps-sq2", lambda, classes, &format!("rule = \"{rule}\"\nsampling = \"{sampling}\""));
        let fp = fixed_point(&s);
        let t_mf = fp.observables.mean_response_time.unwrap();
        assert!((t_mf - t_notes).abs() < 1e-5, "{rule}: mean field {t_mf} vs notes {t_notes}");
        let busy: Vec<f64> = (1..=classes.len()).map(|j| fp_extra(&fp, &format!("class{j}.busy_fraction"))).collect();
        let r = simulate(&s, &opts_10k()).unwrap();
        let mut checks = class_checks(&r, &busy, t_notes, a);
        checks.push(check("L", r.mean_queue_length.unwrap(), fp.observables.mean_queue_length.unwrap(), a));
        assert_all(&format!("ps-sq2 {rule} {sampling} {} classes lambda={lambda} N=10000", classes.len()), &r, &checks);
    }
}

/// SQ(2) with capacity-proportional sampling: the closed form of docs/models/heterogeneous.md: class-free
/// `x_k = rho^(2^k - 1)`, `rho = lambda / sum gamma C`, `T = (1/sum gamma C) sum_k rho^(2^k - 2)`;
/// case A (capacity 1) at lambda = 0.7: T = 1.614454 (the homogeneous JSQ(2) value). Each class
/// is busy a fraction `rho`. Allowance `c/N`, `c = 4.1` (the JSQ(2) constant of
/// `validation.rs`: the capacity-scaled system has the same sampling law).
#[test]
fn ps_sq2_capacity_sampling_is_scaled_jsq2() {
    let rho: f64 = 0.7;
    let t: f64 = (1..=12).map(|k| rho.powf(2f64.powi(k) - 2.0)).sum();
    assert!((t - 1.614454).abs() < 1e-6);
    let s = spec("ps-sq2", 0.7, &CASE_A, "sampling = \"capacity\"");
    let r = simulate(&s, &opts_10k()).unwrap();
    let a = 4.1 / 10_000.0;
    let mut checks = class_checks(&r, &[rho, rho], t, a);
    for k in 1..=4 {
        checks.push(check(&format!("x_{k}"), r.tail[k - 1], rho.powi((1 << k) - 1), a));
    }
    assert_all("ps-sq2 sq2 capacity case A lambda=0.7 N=10000", &r, &checks);
}

/// Optimal static routing: every class-`j` server is an independent M/M/1 queue with load
/// `rho_j` at every N (Poisson thinning), so the reference is exact (allowance 0): case A at
/// lambda = 0.5, T_static = 1.6 (validation/heterogeneous.py); busy fractions `rho_j` from the
/// square-root rule `rho_j = max(0, 1 - 1/sqrt(theta C_j))`, here with both classes active:
/// `1/sqrt(theta) = (sum gamma C - lambda) / sum gamma sqrt(C)`. Warm-up 200: the slower
/// class relaxes like an M/M/1 queue of rate 1.6 at load 0.58 (`1/(1.6 (1 - sqrt(0.58))^2)`,
/// about 11 time units).
#[test]
fn static_routing_is_independent_mm1_queues() {
    let lambda = 0.5;
    let inv_sqrt_theta = (1.0 - lambda) / (0.5 * 1.6f64.sqrt() + 0.5 * 0.4f64.sqrt());
    let rho: Vec<f64> = [1.6f64, 0.4].iter().map(|c| 1.0 - inv_sqrt_theta / c.sqrt()).collect();
    let t: f64 = rho.iter().map(|r| 0.5 * r / (1.0 - r)).sum::<f64>() / lambda;
    assert!((t - 1.6).abs() < 1e-6, "{t}");
    let r = simulate(&spec("static-routing", lambda, &CASE_A, ""), &SimOptions { warmup: 200.0, ..opts_10k() }).unwrap();
    assert_all("static-routing case A lambda=0.5 N=10000", &r, &class_checks(&r, &rho, t, 0.0));
}
