//! Phase-type job sizes (issue 6): SQ(d)/JSQ(d), Pod-LI and JIQ with Coxian/H2 sizes, LL(d)
//! by workload, and the staircase order for the global-attraction argument.
//!
//! Reference values are copied here with their sources (docs/references.md, "Phase-type job
//! sizes" and "LL(d)"); values computed for this project are recomputed by
//! validation/phase_type.py. Tags: [P] published formula or value, [S] computed independently of
//! this code, [D] derived in the docs page named.

use mfq_fixpoint::attraction::{check, CheckOptions, Verdict};
use mfq_fixpoint::{solve_model, solve_spec, FixedPoint, FixedPointOptions};
use mfq_model::models::lld::{exponential_mean_response_time, exponential_response_ccdf, exponential_workload_ccdf};
use mfq_model::models::{JobSizeSpec, Lld, PhaseType, PhaseTypeQueue};
use mfq_model::{AnalyticJacobian, Jacobian, MeanFieldModel, ModelFile, ModelSpec, PartialOrder, StateLayout, Truncation};
use mfq_ode::SolveOptions;

fn solve(spec: &ModelSpec) -> FixedPoint {
    let fp = solve_spec(spec, &Truncation::default(), &FixedPointOptions::default()).unwrap();
    assert!(fp.converged(), "{spec:?}: {:?}", fp.status);
    assert!(fp.residual < 1e-12, "{spec:?}: residual {}", fp.residual);
    assert!(fp.truncation.mass_at_truncation < 1e-12, "{spec:?}: mass {}", fp.truncation.mass_at_truncation);
    fp
}

fn response(spec: &ModelSpec) -> f64 {
    solve(spec).observables.mean_response_time.unwrap()
}

/// H2 with mean 1, SCV 9 (E[S^2] = 10) and half of the load from the fast jobs: the job-size
/// law of the H2 reference values (validation/phase_type.py) and of the monotonicity check of
/// docs/models/phase-type.md.
fn h2_scv9() -> JobSizeSpec {
    JobSizeSpec::H2 { mean: Some(1.0), scv: Some(9.0), f: Some(0.5), p: None, mu1: None, mu2: None }
}

fn exp1() -> JobSizeSpec {
    JobSizeSpec::Exponential { mean: 1.0 }
}

// ------------------------------------------------------------------------------------------
// Exponential sizes as one Coxian phase

/// One exponential phase reproduces JSQ(d), Pod-LI and JIQ (fixed points and E[T]) to 1e-12.
#[test]
fn one_exponential_phase_reproduces_the_exponential_models() {
    for lambda in [0.5, 0.9, 0.95] {
        for d in [1u32, 2, 3] {
            let a = solve(&ModelSpec::from(mfq_model::models::JsqPhSpec { lambda, d, job_size: exp1() }));
            let b = solve(&ModelSpec::from(mfq_model::models::JsqSpec { lambda, d }));
            assert_eq!(a.x.len(), b.x.len());
            let gap = a.x.iter().zip(&b.x).fold(0.0f64, |m, (u, v)| m.max((u - v).abs()));
            assert!(gap < 1e-12, "JSQ({d}) lambda {lambda}: max gap {gap:e}");
            let (ta, tb) = (a.observables.mean_response_time.unwrap(), b.observables.mean_response_time.unwrap());
            assert!((ta - tb).abs() < 1e-12, "{ta} vs {tb}");
            let a = solve(&ModelSpec::from(mfq_model::models::PodLiPhSpec { lambda, d, eps: 0.2, job_size: exp1() }));
            let b = solve(&ModelSpec::from(mfq_model::models::PodLiSpec { lambda, d, eps: 0.2 }));
            let gap = a.x.iter().zip(&b.x).fold(0.0f64, |m, (u, v)| m.max((u - v).abs()));
            assert!(a.x.len() == b.x.len() && gap < 1e-12, "Pod-LI d {d} lambda {lambda}: {gap:e}");
        }
        let a = solve(&ModelSpec::from(mfq_model::models::JiqPhSpec { lambda, job_size: exp1() }));
        let b = solve(&ModelSpec::from(mfq_model::models::JiqSpec { lambda }));
        let gap = a.x.iter().zip(&b.x).fold(0.0f64, |m, (u, v)| m.max((u - v).abs()));
        assert!(gap < 1e-12, "JIQ lambda {lambda}: {gap:e}");
    }
}

/// SQ(d) and JSQ(d) exponential values (validation/phase_type.py; closed form
/// `E[R] = sum_k lambda^((d^k - d)/(d - 1))`, [P formula, S evaluation]) through the phase-type
/// model with one exponential phase.
#[test]
fn sq_exponential_table_of_the_notes() {
    // lambda, SQ(2), SQ(3)
    let table = [(0.5, 1.265686, 1.125244), (0.7, 1.614454, 1.356842), (0.9, 2.614057, 2.027856), (0.99, 5.431997, 3.857847)];
    for (lambda, sq2, sq3) in table {
        let t2 = response(&ModelSpec::from(mfq_model::models::JsqPhSpec { lambda, d: 2, job_size: exp1() }));
        let t3 = response(&ModelSpec::from(mfq_model::models::JsqPhSpec { lambda, d: 3, job_size: exp1() }));
        assert!((t2 - sq2).abs() < 1e-6 && (t3 - sq3).abs() < 1e-6, "lambda {lambda}: {t2} {t3}");
    }
}

// ------------------------------------------------------------------------------------------
// H2 values (validation/phase_type.py), and M/G/1 checks that need no reference table

/// H2 jobs (SCV = 9, f = 1/2) [S], validation/phase_type.py: SQ(2) E[R] = 1.966067 (lambda 0.5) and
/// 6.334997 (lambda 0.9); LL(2) E[R] = 1.441314 and 3.795034. Printed to 6 decimals.
#[test]
fn sq2_and_ll2_with_h2_jobs_match_the_notes() {
    for (lambda, sq2, ll2) in [(0.5, 1.966067, 1.441314), (0.9, 6.334997, 3.795034)] {
        let t = response(&ModelSpec::from(mfq_model::models::JsqPhSpec { lambda, d: 2, job_size: h2_scv9() }));
        assert!((t - sq2).abs() < 1e-6, "SQ(2)-H2 lambda {lambda}: {t} vs {sq2}");
        let t = response(&ModelSpec::from(mfq_model::models::LldSpec { lambda, d: 2, job_size: h2_scv9() }));
        assert!((t - ll2).abs() < 1e-6, "LL(2)-H2 lambda {lambda}: {t} vs {ll2}");
    }
}

/// d = 1 is random routing: every server is an M/G/1 queue, so SQ(1) and LL(1) must give the
/// Pollaczek-Khinchine mean `E[R] = E[S] + lambda E[S^2] / (2 (1 - rho))` (textbook; independent
/// of any table and of this code). H2 with mean 1 and SCV 9 has `E[S^2] = 10`.
#[test]
fn d_equal_one_is_pollaczek_khinchine() {
    let laws = [
        (h2_scv9(), 1.0, 10.0),
        (JobSizeSpec::Erlang { k: 3, mean: 2.0 }, 2.0, 4.0 * (1.0 + 1.0 / 3.0)),
        (
            JobSizeSpec::H2 { mean: None, scv: None, f: None, p: Some(0.3), mu1: Some(3.0), mu2: Some(0.5) },
            0.3 / 3.0 + 0.7 / 0.5,
            2.0 * (0.3 / 9.0 + 0.7 / 0.25),
        ),
    ];
    for (law, es, es2) in laws {
        for rho in [0.5, 0.8] {
            let lambda = rho / es;
            let pk = es + lambda * es2 / (2.0 * (1.0 - rho));
            let t = response(&ModelSpec::from(mfq_model::models::JsqPhSpec { lambda, d: 1, job_size: law.clone() }));
            assert!((t - pk).abs() < 1e-9 * pk, "SQ(1) {law:?} rho {rho}: {t} vs {pk}");
            let t = response(&ModelSpec::from(mfq_model::models::LldSpec { lambda, d: 1, job_size: law.clone() }));
            assert!((t - pk).abs() < 1e-7 * pk, "LL(1) {law:?} rho {rho}: {t} vs {pk}");
        }
    }
}

/// Conservation of work: the busy fraction equals the load, `u_1 = rho (1 - loss)` (Hellemans'
/// thesis, "u_1 = rho"), for every routing and law; JIQ never queues.
#[test]
fn busy_fraction_is_the_load() {
    let laws = [
        h2_scv9(),
        JobSizeSpec::Erlang { k: 4, mean: 0.5 },
        JobSizeSpec::H2 { mean: Some(2.0), scv: Some(4.0), f: Some(0.3), p: None, mu1: None, mu2: None },
    ];
    for law in laws {
        let es = law.to_phase_type().unwrap().mean();
        for rho in [0.5, 0.9] {
            let lambda = rho / es;
            for spec in [
                ModelSpec::from(mfq_model::models::JsqPhSpec { lambda, d: 2, job_size: law.clone() }),
                ModelSpec::from(mfq_model::models::PodLiPhSpec { lambda, d: 3, eps: 0.2, job_size: law.clone() }),
                ModelSpec::from(mfq_model::models::JiqPhSpec { lambda, job_size: law.clone() }),
            ] {
                let fp = solve(&spec);
                let busy = fp.observables.extras.iter().find(|(n, _)| n == "busy_fraction").unwrap().1;
                let want = rho * (1.0 - fp.observables.loss_probability);
                assert!((busy - want).abs() < 1e-12, "{spec:?}: u_1 = {busy} vs rho = {want}");
            }
            let fp = solve(&ModelSpec::from(mfq_model::models::JiqPhSpec { lambda, job_size: law.clone() }));
            assert!((fp.observables.mean_response_time.unwrap() - es).abs() < 1e-12, "JIQ: no waiting");
        }
    }
}

/// H2 with SCV = 1 is exponential (both rates 1, the second phase never entered): the H2
/// models must give the exponential numbers.
#[test]
fn h2_with_scv_one_is_exponential() {
    let h = JobSizeSpec::H2 { mean: Some(1.0), scv: Some(1.0), f: Some(0.5), p: None, mu1: None, mu2: None };
    for lambda in [0.5, 0.9] {
        let a = response(&ModelSpec::from(mfq_model::models::JsqPhSpec { lambda, d: 2, job_size: h.clone() }));
        let b = response(&ModelSpec::from(mfq_model::models::JsqSpec { lambda, d: 2 }));
        assert!((a - b).abs() < 1e-11, "{a} vs {b}");
        let a = response(&ModelSpec::from(mfq_model::models::LldSpec { lambda, d: 2, job_size: h.clone() }));
        assert!((a - exponential_mean_response_time(lambda, 2)).abs() < 1e-7);
    }
}

// ------------------------------------------------------------------------------------------
// LL(d): closed forms and identities (Hellemans and Van Houdt 2018; docs/models/lld.md)

/// LL(2) and LL(3) exponential values (validation/phase_type.py; from the published closed form
/// `E[R] = sum_n lambda^{dn} / (1 + n(d-1))`, [P formula, S evaluation]): the series, and the
/// ODE in `w` solved with one exponential phase.
#[test]
fn lld_exponential_table_of_the_notes() {
    let table = [
        (0.5, 1.150728, 1.045101),
        (0.7, 1.374173, 1.145776),
        (0.8, 1.596330, 1.255620),
        (0.9, 2.050285, 1.487517),
        (0.95, 2.579394, 1.759483),
        (0.99, 3.996567, 2.481048),
    ];
    for (lambda, ll2, ll3) in table {
        assert!((exponential_mean_response_time(lambda, 2) - ll2).abs() < 5e-7, "series LL(2) {lambda}");
        assert!((exponential_mean_response_time(lambda, 3) - ll3).abs() < 5e-7, "series LL(3) {lambda}");
        if lambda <= 0.95 {
            for (d, want) in [(2u32, ll2), (3, ll3)] {
                let t = response(&ModelSpec::from(mfq_model::models::LldSpec { lambda, d, job_size: exp1() }));
                assert!((t - want).abs() < 1e-6, "ODE LL({d}) lambda {lambda}: {t} vs {want}");
                assert!((t - exponential_mean_response_time(lambda, d)).abs() < 1e-7, "ODE vs series LL({d}) {lambda}");
            }
        }
    }
}

/// The grid solution of the ODE in `w` against the closed-form workload ccdf
/// `Fbar(w) = (lambda + (lambda^{1-d} - lambda) e^{(d-1) w})^{1/(1-d)}` (Hellemans and Van Houdt 2018, [P]).
#[test]
fn lld_workload_ccdf_is_the_closed_form() {
    for (lambda, d) in [(0.5, 2u32), (0.9, 2), (0.8, 3)] {
        let spec = ModelSpec::from(mfq_model::models::LldSpec { lambda, d, job_size: exp1() });
        let fp = solve(&spec);
        let m = spec.build(fp.truncation.levels).unwrap();
        let StateLayout::Workload { step, phases, .. } = m.layout() else { panic!("workload layout") };
        assert_eq!(phases, 1);
        for (i, blk) in fp.x.chunks(2).enumerate() {
            let w = (i + 1) as f64 * step;
            let exact = exponential_workload_ccdf(lambda, d, w);
            assert!((blk[0] - exact).abs() < 1e-8, "lambda {lambda} d {d} w {w}: {} vs {exact}", blk[0]);
        }
    }
}

/// Identities of §4.1: `E[L] = lambda E[R]`; `E[R] = E[S] + int Fbar^d` (the model's own
/// observable); the FCFS response ccdf `(lambda^d + (1 - lambda^d) e^{(d-1)w})^{1/(1-d)}`
/// integrates to `E[R]`; and it equals `P(W + S > w) = e^{-w} + int_0^w Fbar(w-s)^d e^{-s} ds`
/// computed from the solved workload ccdf (waiting time ccdf `Fbar^d`, exponential service).
#[test]
fn lld_response_time_identities() {
    let (lambda, d) = (0.8, 2u32);
    let spec = ModelSpec::from(mfq_model::models::LldSpec { lambda, d, job_size: exp1() });
    let fp = solve(&spec);
    let o = &fp.observables;
    let er = o.mean_response_time.unwrap();
    assert!((o.mean_queue_length.unwrap() - lambda * er).abs() < 1e-14);
    let wait = o.extras.iter().find(|(n, _)| n == "mean_waiting_time").unwrap().1;
    assert!((er - 1.0 - wait).abs() < 1e-14);
    // int_0^inf ccdf by Simpson on [0, 60] (the ccdf is below 1e-20 at w = 60)
    let n = 60_000;
    let h = 60.0 / n as f64;
    let simpson: f64 = (0..=n)
        .map(|i| {
            let c = if i == 0 || i == n {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            c * exponential_response_ccdf(lambda, d, i as f64 * h)
        })
        .sum::<f64>()
        * h
        / 3.0;
    assert!((simpson - er).abs() < 1e-8, "int ccdf {simpson} vs E[R] {er}");
    // P(W + S > w) from the grid Fbar (trapezoid in s on the grid), against the closed form
    let model = spec.build(fp.truncation.levels).unwrap();
    let StateLayout::Workload { step, .. } = model.layout() else { panic!() };
    let fbar: Vec<f64> = std::iter::once(lambda).chain(fp.x.chunks(2).map(|b| b[0])).collect();
    for i in [5usize, 10, 20, 40] {
        let w = i as f64 * step;
        let integrand = |k: usize| fbar[i - k].powi(d as i32) * (-(k as f64) * step).exp();
        let trap = step * (0.5 * integrand(0) + (1..i).map(integrand).sum::<f64>() + 0.5 * integrand(i));
        let from_grid = (-w).exp() + trap;
        let exact = exponential_response_ccdf(lambda, d, w);
        // trapezoid error O(step^2) = 1e-3 relative; the identity itself is exact
        assert!((from_grid - exact).abs() < 2e-3 * exact, "w {w}: {from_grid} vs {exact}");
    }
}

/// Work conservation per server (Brumelle's `H = lambda G`): each job brings its size `S`
/// while it waits and `S^2/2` of work-time while in service, so the mean workload is
/// `int Fbar = rho E[W] + lambda E[S^2] / 2` with `E[W] = int Fbar^d` (FCFS, `W` independent of
/// the job's own size). Two different integrals of the solved ccdf, for H2 and Erlang sizes;
/// for exponential sizes the mean workload is `E[L]` (memoryless residuals).
#[test]
fn lld_mean_workload_identity() {
    let extra = |fp: &FixedPoint, name: &str| fp.observables.extras.iter().find(|(n, _)| n == name).unwrap().1;
    for (law, d) in [(h2_scv9(), 2u32), (JobSizeSpec::Erlang { k: 3, mean: 1.0 }, 3), (h2_scv9(), 1)] {
        let ph = law.to_phase_type().unwrap();
        for lambda in [0.5, 0.9] {
            let fp = solve(&ModelSpec::from(mfq_model::models::LldSpec { lambda, d, job_size: law.clone() }));
            let (wait, work) = (extra(&fp, "mean_waiting_time"), extra(&fp, "mean_workload"));
            let want = lambda * ph.mean() * wait + lambda * ph.second_moment() / 2.0;
            assert!((work - want).abs() < 1e-8 * want, "{law:?} d {d} lambda {lambda}: {work} vs {want}");
        }
    }
    let fp = solve(&ModelSpec::from(mfq_model::models::LldSpec { lambda: 0.9, d: 2, job_size: exp1() }));
    assert!((extra(&fp, "mean_workload") - fp.observables.mean_queue_length.unwrap()).abs() < 1e-8);
}

// ------------------------------------------------------------------------------------------
// Model files, overrides and bad input

fn parse(text: &str, sets: &[&str]) -> Result<ModelFile, mfq_model::ModelError> {
    ModelFile::parse(text, &sets.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

#[test]
fn model_files_parse_and_override_the_job_size() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/");
    for name in ["sq2-h2.toml", "lld2-h2.toml", "lld2-exp.toml", "jiq-h2.toml", "pod-li-h2.toml"] {
        let text = std::fs::read_to_string(format!("{root}{name}")).unwrap();
        let f = parse(&text, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(f.model.lambda().is_some(), "{name}");
    }
    let text = std::fs::read_to_string(format!("{root}sq2-h2.toml")).unwrap();
    let f = parse(&text, &["job_size.scv=4", "lambda=0.5"]).unwrap();
    assert_eq!(f.model.kind(), "jsq-ph");
    let Some(mfq_model::models::JsqPhSpec { lambda, job_size, .. }) = f.model.downcast_ref() else { panic!() };
    assert_eq!(*lambda, 0.5);
    assert!((job_size.to_phase_type().unwrap().scv() - 4.0).abs() < 1e-9);
    // no [model.job_size] table: exponential with mean 1
    let f = parse("[model]\nkind = \"lld\"\nlambda = 0.5\nd = 2\n", &[]).unwrap();
    assert_eq!(f.model, ModelSpec::from(mfq_model::models::LldSpec { lambda: 0.5, d: 2, job_size: exp1() }));
}

/// Each bad law gives an error naming the field, the value and what is allowed.
#[test]
fn bad_job_sizes_are_clear_errors() {
    let base = "[model]\nkind = \"jsq-ph\"\nlambda = 0.5\nd = 2\n[model.job_size]\n";
    let cases: [(&str, &[&str]); 7] = [
        // a row of A summing to more than 0 (a negative exit rate)
        (
            "law = \"phase-type\"\nalpha = [1.0, 0.0]\na = [[-1.0, 1.5], [0.0, -2.0]]\n",
            &["model.job_size.a[0]", "row sum 0.5", "row sums <= 0"],
        ),
        // a negative rate off the diagonal
        (
            "law = \"phase-type\"\nalpha = [1.0, 0.0]\na = [[-1.0, -0.5], [0.0, -2.0]]\n",
            &["model.job_size.a[0][1] = -0.5", "off-diagonal rate >= 0"],
        ),
        // alpha not a distribution
        ("law = \"phase-type\"\nalpha = [0.5, 0.2]\na = [[-1.0, 0.0], [0.0, -2.0]]\n", &["model.job_size.alpha", "summing to 1"]),
        // SCV below 1 for H2
        ("law = \"h2\"\nscv = 0.5\n", &["model.job_size.scv = 0.5", ">= 1"]),
        // mean <= 0
        ("law = \"h2\"\nmean = 0\nscv = 9\n", &["model.job_size.mean = 0", "> 0"]),
        ("law = \"exponential\"\nmean = -1\n", &["model.job_size.mean = -1", "> 0"]),
        // a negative Coxian rate
        ("law = \"coxian\"\nrates = [2.0, -1.0]\nnext = [0.5]\n", &["model.job_size.rates[1] = -1", "> 0"]),
    ];
    for (law, needles) in cases {
        let e = parse(&format!("{base}{law}"), &[]).unwrap_err().to_string();
        for n in needles {
            assert!(e.contains(n), "{law}: '{e}' lacks '{n}'");
        }
    }
    let e = parse(&format!("{base}law = \"h2\"\nscv = 9\n"), &["job_size.f=1.5"]).unwrap_err().to_string();
    assert!(e.contains("model.job_size.f = 1.5") && e.contains("(0, 1)"), "{e}");
}

// ------------------------------------------------------------------------------------------
// The staircase order (docs/models/phase-type.md, "Which order is monotone"; docs/checker.md)

/// A deterministic pseudo-random stream in [0, 1) (SplitMix64), so the test needs no RNG crate.
struct Stream(u64);
impl Stream {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A random feasible phase-tail state: per-server probabilities `pi(k, j)`, idle included.
fn random_state(rng: &mut Stream, levels: usize, m: usize) -> Vec<f64> {
    let mut pi: Vec<f64> = (0..levels * m).map(|_| rng.next().powi(3)).collect();
    let idle = rng.next();
    let total: f64 = pi.iter().sum::<f64>() + idle;
    pi.iter_mut().for_each(|p| *p /= total);
    let mut x = vec![0.0; levels * m];
    for k in (1..=levels).rev() {
        for j in 0..m {
            let i = (k - 1) * m + j;
            x[i] = pi[i] + if k < levels { x[i + m] } else { 0.0 };
        }
    }
    x
}

/// The set-up of the monotonicity check in docs/models/phase-type.md: SQ(2), lambda = 0.9, buffer B = 8, H2 with SCV 9 and f = 1/2.
fn sq2_h2_buffer8() -> PhaseTypeQueue {
    PhaseTypeQueue::jsq(0.9, 2, PhaseType::h2_from_moments(1.0, 9.0, 0.5).unwrap(), 8).unwrap()
}

/// Cooperativity in the order's coordinates at random feasible states: cross-positive for the
/// staircase order (an earlier independent check, recorded in docs/models/phase-type.md:
/// "preserved", min -8e-17), not for the lexicographic one (same check: the Kamke test in lex
/// tail coordinates gives a minimum off-diagonal entry of -1.69).
#[test]
fn staircase_is_cooperative_and_lexicographic_is_not() {
    let model = sq2_h2_buffer8();
    let order = model.order().expect("SQ(2) with Coxian H2 claims an order");
    assert_eq!(order, PartialOrder::Staircase { levels: 8, phases: 2 });
    let lex = PartialOrder::Lexicographic { levels: 8, phases: 2 };
    let mut rng = Stream(7);
    let mut jac = Jacobian::new(model.dim(), model.sparsity());
    let (mut worst_stair, mut worst_lex) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..200 {
        let x = random_state(&mut rng, 8, 2);
        model.jacobian(&x, &mut jac);
        let c = order.cooperativity(&jac);
        worst_stair = worst_stair.min(c.min / c.scale.max(1.0));
        let c = lex.cooperativity(&jac);
        worst_lex = worst_lex.min(c.min);
    }
    assert!(worst_stair >= -1e-12, "staircase: min Phi_U(J g) = {worst_stair:e}");
    assert!(worst_lex < -0.1, "lexicographic: min = {worst_lex}");
}

/// Order preservation and the sandwich in the staircase order (docs/checker.md, the sandwich recipe):
/// ordered pairs `x0 <= y0` stay ordered along the flow, and the trajectories from the least
/// state (empty) and the greatest (all servers at (B, last phase)) both reach `x*`. The
/// lexicographic order is violated along the flow from a pair that is lex-ordered.
#[test]
fn staircase_sandwich_for_sq2_h2() {
    let model = sq2_h2_buffer8();
    let order = model.order().unwrap();
    let n = model.dim();
    let fp = solve_model(&model, &FixedPointOptions::default()).unwrap();
    assert!(fp.converged() && fp.spectral_abscissa.is_some_and(|a| a < 0.0));
    let opts = |t_end| SolveOptions { t_end, rtol: 1e-10, atol: 1e-14, record_steps: true, ..Default::default() };
    // order preservation: 6 random pairs pushed up along every generator by random fractions
    let mut rng = Stream(11);
    let n_gen = order.generators(n).len();
    for _ in 0..6 {
        let x0 = random_state(&mut rng, 8, 2);
        let mut y0 = x0.clone();
        for g in 0..n_gen {
            order.push_up(&mut y0, g, 0.3 * rng.next());
        }
        assert!(order.order_gap(&x0, &y0) >= -1e-15);
        let tx = mfq_ode::solve(&model, &x0, &opts(40.0)).unwrap();
        for &t in &[0.5, 2.0, 8.0, 40.0] {
            let ty = mfq_ode::solve(&model, &y0, &opts(t)).unwrap();
            let tx = mfq_ode::solve(&model, &x0, &opts(t)).unwrap();
            let gap = order.order_gap(tx.last(), ty.last());
            assert!(gap >= -1e-9, "t = {t}: order violated by {gap:e}");
        }
        assert!(tx.status.is_success());
    }
    // sandwich: empty and full reach x*
    let ext = model.extremal_states();
    assert_eq!(ext[1].x.iter().sum::<f64>(), 8.0, "full: every server at (8, phase 2)");
    for s in &ext {
        assert!(order.order_gap(&ext[0].x, &s.x) >= 0.0 && order.order_gap(&s.x, &ext[1].x) >= 0.0);
        let tr = mfq_ode::solve(
            &model,
            &s.x,
            &SolveOptions { t_end: 2000.0, rtol: 1e-11, atol: 1e-15, steady_tol: Some(1e-13), record_steps: false, ..Default::default() },
        )
        .unwrap();
        let dist = tr.last().iter().zip(&fp.x).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(dist < 1e-10, "{}: distance to x* {dist:e} at t = {}", s.name, tr.t_last());
    }
    // x* lies between the bounds, and a trajectory started between them stays there
    let lo = mfq_ode::solve(&model, &ext[0].x, &opts(5.0)).unwrap();
    let hi = mfq_ode::solve(&model, &ext[1].x, &opts(5.0)).unwrap();
    let mid = mfq_ode::solve(&model, &random_state(&mut rng, 8, 2), &opts(5.0)).unwrap();
    assert!(order.order_gap(lo.last(), mid.last()) >= -1e-9 && order.order_gap(mid.last(), hi.last()) >= -1e-9);

    // lexicographic: start at the lex-violating state, push up along the violating generator
    let lex = PartialOrder::Lexicographic { levels: 8, phases: 2 };
    let mut jac = Jacobian::new(n, model.sparsity());
    let mut worst: Option<(Vec<f64>, f64, usize, usize)> = None;
    for _ in 0..100 {
        let x = random_state(&mut rng, 8, 2);
        model.jacobian(&x, &mut jac);
        let c = lex.cooperativity(&jac);
        if worst.as_ref().is_none_or(|w| c.min < w.1) {
            worst = Some((x, c.min, c.upset, c.generator));
        }
    }
    let (x0, _, u, g) = worst.unwrap();
    let mut y0 = x0.clone();
    assert!(lex.push_up(&mut y0, g, 0.5) > 0.0);
    assert!(lex.order_gap(&x0, &y0) >= -1e-15);
    let (tx, ty) = (mfq_ode::solve(&model, &x0, &opts(0.05)).unwrap(), mfq_ode::solve(&model, &y0, &opts(0.05)).unwrap());
    let phi = &lex.upsets(n)[u];
    let diff: f64 = phi.iter().map(|&(i, w)| w * (ty.last()[i] - tx.last()[i])).sum();
    assert!(diff < 0.0, "lex up-set {u} after t = 0.05: {diff:e} (should turn negative)");
    assert!(lex.order_gap(tx.last(), ty.last()) < 0.0);
}

/// SQ(2)-H2 with one claimed order replaced: the checker tests whatever `order()` says.
struct ClaimsOrder(PhaseTypeQueue, PartialOrder);

impl MeanFieldModel for ClaimsOrder {
    fn name(&self) -> String {
        format!("{} claiming {:?}", self.0.name(), self.1)
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        self.0.drift(x, dx)
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(&self.0)
    }
    fn layout(&self) -> StateLayout {
        self.0.layout()
    }
    fn observables(&self, x: &[f64]) -> mfq_model::Observables {
        self.0.observables(x)
    }
    fn order(&self) -> Option<PartialOrder> {
        Some(self.1)
    }
    fn extremal_states(&self) -> Vec<mfq_model::NamedState> {
        self.0.extremal_states()
    }
    fn project(&self, x: &mut [f64]) {
        self.0.project(x)
    }
}

/// Issue 6: the checker (mfq_fixpoint::attraction) certifies SQ(2) with H2 jobs in the staircase
/// order (cross-positivity at sampled states, ordered pairs, sandwich from `empty` and `full`),
/// and, handed the lexicographic order instead, reports it violated and does not certify.
#[test]
fn checker_certifies_the_staircase_order_and_rejects_the_lexicographic_one() {
    let opts = CheckOptions { starts: 6, cooperativity_samples: 64, order_pairs: 4, ..Default::default() };
    let r = check(&sq2_h2_buffer8(), &opts).unwrap();
    assert!(matches!(r.verdict, Verdict::Certified { .. }), "{r}");
    let s = r.sandwich.as_ref().unwrap();
    assert_eq!(s.order, PartialOrder::Staircase { levels: 8, phases: 2 });
    assert!(s.cooperative && s.bounds_meet_at_reference && s.jacobian_violations == 0 && s.order_violations == 0, "{r}");

    let lex = ClaimsOrder(sq2_h2_buffer8(), PartialOrder::Lexicographic { levels: 8, phases: 2 });
    let r = check(&lex, &opts).unwrap();
    assert!(!matches!(r.verdict, Verdict::Certified { .. }), "{r}");
    let s = r.sandwich.as_ref().unwrap();
    assert!(!s.cooperative && s.jacobian_violations > 0, "{r}");
    // the earlier check's -1.69 is the most negative Kamke entry over its random states
    // (docs/models/phase-type.md)
    assert!(s.max_violation > 0.1, "{r}");
}

// ------------------------------------------------------------------------------------------
// Data behind the figures of issue 6, part 5

/// E[R] against SCV for SQ(2) and LL(2) (the figure's data, at a few points): increasing in
/// the SCV, LL(2) below SQ(2), and SCV = 1 at the exponential values above
/// (LL(2) 1.150728 / 2.050285, SQ(2) 1.265686 / 2.614057 at lambda 0.5 / 0.9).
#[test]
fn response_time_against_scv() {
    for (lambda, ll_exp, sq_exp) in [(0.5, 1.150728, 1.265686), (0.9, 2.050285, 2.614057)] {
        let mut last = (0.0, 0.0);
        for scv in [1.0, 5.0, 20.0] {
            let h = JobSizeSpec::H2 { mean: Some(1.0), scv: Some(scv), f: Some(0.5), p: None, mu1: None, mu2: None };
            let sq = response(&ModelSpec::from(mfq_model::models::JsqPhSpec { lambda, d: 2, job_size: h.clone() }));
            let ll = response(&ModelSpec::from(mfq_model::models::LldSpec { lambda, d: 2, job_size: h }));
            if scv == 1.0 {
                assert!((sq - sq_exp).abs() < 1e-6 && (ll - ll_exp).abs() < 1e-6, "{sq} {ll}");
            }
            assert!(sq > last.0 && ll > last.1 && ll < sq, "lambda {lambda} scv {scv}: SQ {sq}, LL {ll}");
            last = (sq, ll);
        }
    }
}

/// The LL(d) model's own accessors agree with the observables.
#[test]
fn lld_accessors() {
    let m = Lld::new(0.5, 2, PhaseType::exponential(1.0).unwrap(), 64).unwrap();
    assert_eq!(m.rho(), 0.5);
    assert!((m.step() - 0.1).abs() < 1e-15 && m.substeps() >= 2);
    let x = m.analytic_fixed_point().unwrap();
    let ccdf = m.workload_ccdf(&x);
    assert_eq!(ccdf[0], (0.0, 0.5));
    assert_eq!(ccdf.len(), 65);
}
