//! The uniqueness and global-attraction checker against values it did not produce: closed
//! forms, exact recursions and tables computed independently of this code (recomputed by the
//! scripts in validation/; sources in docs/references.md).

use mfq_fixpoint::attraction::{
    check, check_with_fixed_point, AttractionReport, CheckError, CheckOptions, EquilibriumKind, FoundBy, Verdict,
};
use mfq_fixpoint::{solve_spec, FixedPointOptions};
use mfq_model::models::{Jsq, OpinionBiased, OpinionStubborn};
use mfq_model::{ModelSpec, Truncation};
use mfq_plot::attraction::{basins_svg, convergence_svg};

/// The checker on a model file's model, at the truncation level the fixed-point solve chose
/// (as `mfq check` does).
fn check_spec(spec: &ModelSpec) -> AttractionReport {
    let fp = solve_spec(spec, &Truncation::default(), &FixedPointOptions::default()).unwrap();
    assert!(fp.converged(), "{spec:?}: {:?}", fp.status);
    let model = spec.build(fp.truncation.levels).unwrap();
    check_with_fixed_point(model.as_ref(), fp, &CheckOptions::default()).unwrap()
}

/// One stable equilibrium, the reference, reached by every run.
fn assert_unique_attracting(r: &AttractionReport) {
    assert_eq!(r.equilibria.len(), 1, "{r}");
    assert_eq!(r.reference, Some(0), "{r}");
    assert_eq!(r.unsettled, 0, "{r}");
    let e = &r.equilibria[0];
    assert_eq!(e.kind, EquilibriumKind::Stable, "{r}");
    assert_eq!(e.starts, r.options.starts, "{r}");
    assert_eq!(e.extremal.len(), 2, "{r}");
    assert!(r.runs.iter().all(|run| run.settled && run.equilibrium == Some(0)), "{r}");
}

fn assert_certified(r: &AttractionReport) {
    assert!(matches!(r.verdict, Verdict::Certified { .. }), "{r}");
    let s = r.sandwich.as_ref().unwrap();
    assert!(s.cooperative && s.bounds_meet_at_reference, "{r}");
    assert_eq!((s.jacobian_violations, s.order_violations), (0, 0), "{r}");
}

/// JSQ(d) closed form x_k = lambda^((d^k - 1)/(d - 1)) (lambda^k for d = 1): Mitzenmacher, IEEE
/// TPDS 12(10) 2001, Theorem 3. JSQ(d) is cooperative in the componentwise (tail) order, so
/// the sandwich certifies. d = 1 stops at lambda = 0.9: at 0.99 (K ~ 2750, spectral gap
/// ~2.5e-5) the runs cannot settle within the default time limit.
#[test]
fn jsq_is_certified_at_the_closed_form() {
    for (d, lambdas) in [(1u32, &[0.5, 0.9][..]), (2, &[0.5, 0.9, 0.99][..]), (3, &[0.5, 0.9, 0.99][..])] {
        for &lambda in lambdas {
            let r = check_spec(&ModelSpec::from(mfq_model::models::JsqSpec { lambda, d }));
            assert_unique_attracting(&r);
            assert_certified(&r);
            for (k, x) in r.equilibria[0].x.iter().enumerate() {
                let e = if d == 1 { (k + 1) as f64 } else { ((d as f64).powi(k as i32 + 1) - 1.0) / (d as f64 - 1.0) };
                assert!((x - lambda.powf(e)).abs() < 1e-10, "d={d} lambda={lambda} k={}", k + 1);
            }
            let alpha = r.local.as_ref().unwrap().spectral_abscissa;
            assert!(alpha < 0.0 && Some(alpha) == r.fixed_point.spectral_abscissa, "{r}");
        }
    }
}

/// Near x* the distance decays like exp(alpha t): the slope of log10 ||x(t) - x*|| along the
/// run from the empty state matches alpha / ln 10 (what the dashed line of the plot shows).
#[test]
fn convergence_rate_is_the_spectral_abscissa() {
    let r = check_spec(&ModelSpec::from(mfq_model::models::JsqSpec { lambda: 0.9, d: 2 }));
    let alpha = r.local.as_ref().unwrap().spectral_abscissa;
    let run = r.runs.iter().find(|run| run.label == "empty").unwrap();
    let pts: Vec<(f64, f64)> =
        run.t.iter().copied().zip(run.log10_distance.iter().copied()).filter(|(_, d)| (-7.0..=-3.0).contains(d)).collect();
    assert!(pts.len() >= 5, "{pts:?}");
    let (a, b) = (pts[0], pts[pts.len() - 1]);
    let slope = (b.1 - a.1) / (b.0 - a.0);
    let predicted = alpha / std::f64::consts::LN_10;
    assert!((slope / predicted - 1.0).abs() < 0.05, "slope {slope} vs predicted {predicted}");
}

/// Pod with load-independent errors, eps < 1/d: exact recursion vectors x_1 = lambda,
/// x_k = lambda phi(x_{k-1}) (validation/pod_errors.py), and the mean response time
/// T = 3.60177 for d = 3, lambda = 0.9, eps = 0.3 (same script).
#[test]
fn pod_li_is_certified_at_the_exact_recursion() {
    let cases: [(f64, f64, [f64; 4]); 2] =
        [(0.5, 0.3, [0.5, 0.2, 0.068, 0.0213248]), (0.9, 0.3, [0.9, 0.7776, 0.6375822336, 0.4906384038])];
    for (lambda, eps, xs) in cases {
        let r = check_spec(&ModelSpec::from(mfq_model::models::PodLiSpec { lambda, d: 2, eps }));
        assert_unique_attracting(&r);
        assert_certified(&r);
        for (k, (x, want)) in r.equilibria[0].x.iter().zip(xs).enumerate() {
            assert!((x - want).abs() < 1e-9, "lambda={lambda} k={}", k + 1);
        }
    }
    let r = check_spec(&ModelSpec::from(mfq_model::models::PodLiSpec { lambda: 0.9, d: 3, eps: 0.3 }));
    assert_unique_attracting(&r);
    assert_certified(&r);
    assert!((r.fixed_point.observables.mean_response_time.unwrap() - 3.60177).abs() < 1e-5);
}

/// Pod with load-dependent errors: fixed points of the implicit equations of
/// docs/models/pod-errors.md (validation/pod_errors.py). Cooperativity of this model is not established in the literature, so a
/// certificate is not required; uniqueness and attraction are.
#[test]
fn pod_ld_is_unique_and_attracting() {
    // (lambda, d, eps, g, [(index, x_{index+1})])
    type Case = (f64, u32, f64, u32, [(usize, f64); 2]);
    let cases: [Case; 3] = [
        (0.9, 2, 0.5, 1, [(1, 0.7431192661), (2, 0.5274539754)]),
        (0.9, 3, 0.5, 1, [(1, 0.6666047381), (2, 0.3277034627)]),
        (0.95, 2, 1.0, 3, [(1, 0.8816804993), (2, 0.7955909921)]),
    ];
    for (lambda, d, eps, g, xs) in cases {
        let r = check_spec(&ModelSpec::from(mfq_model::models::PodLdSpec { lambda, d, eps, g }));
        assert!(matches!(r.verdict, Verdict::Certified { .. } | Verdict::Evidence { .. }), "{r}");
        assert_unique_attracting(&r);
        assert!((r.equilibria[0].x[0] - lambda).abs() < 1e-9);
        for (i, v) in xs {
            assert!((r.equilibria[0].x[i] - v).abs() < 1e-9, "{r}");
        }
    }
}

/// JIQ: x_1 = lambda, x_k = 0 for k >= 2 (Stolyar 2015), also with a deeper truncation whose
/// full state starts on the sliding boundary x_1 = 1.
#[test]
fn jiq_is_certified() {
    for lambda in [0.5, 0.95] {
        let r = check_spec(&ModelSpec::from(mfq_model::models::JiqSpec { lambda }));
        assert_unique_attracting(&r);
        assert_certified(&r);
        assert!((r.equilibria[0].x[0] - lambda).abs() < 1e-14);
        assert!(r.equilibria[0].x[1..].iter().all(|v| v.abs() < 1e-14));
    }
    let m = ModelSpec::from(mfq_model::models::JiqSpec { lambda: 0.9 }).build(20).unwrap();
    let r = check(m.as_ref(), &CheckOptions::default()).unwrap();
    assert_unique_attracting(&r);
    assert_certified(&r);
}

/// Reference equilibria of docs/models/opinion.md (recomputed by validation/opinion.py; a
/// finite-N simulation agrees: crates/mfq-sim/tests/opinion.rs), with their stability.
const S: EquilibriumKind = EquilibriumKind::Stable;
const U: EquilibriumKind = EquilibriumKind::Unstable;

fn assert_equilibria(r: &AttractionReport, want: &[(f64, EquilibriumKind)]) {
    assert_eq!(r.equilibria.len(), want.len(), "{r}");
    for (e, (x, kind)) in r.equilibria.iter().zip(want) {
        assert!((e.x[0] - x).abs() < 1e-8, "{r}");
        assert_eq!(e.kind, *kind, "{r}");
        assert!(e.residual < 1e-12, "{r}");
    }
}

#[test]
fn opinion_models_with_three_equilibria_are_not_unique() {
    let opts = CheckOptions::default();
    type Case = (Box<dyn mfq_model::MeanFieldModel>, [(f64, EquilibriumKind); 3]);
    let cases: [Case; 3] = [
        (Box::new(OpinionStubborn::new(0.1, 0.1).unwrap()), [(0.0158770817, S), (0.5, U), (0.9841229183, S)]),
        (Box::new(OpinionStubborn::new(0.05, 0.1).unwrap()), [(0.0162177987, S), (0.4280333702, U), (0.9969253017, S)]),
        (Box::new(OpinionBiased::new(0.05).unwrap()), [(0.0597785224, S), (0.4402214776, U), (1.0, S)]),
    ];
    for (m, want) in &cases {
        let r = check(m.as_ref(), &opts).unwrap();
        assert!(matches!(r.verdict, Verdict::NotUnique { equilibria: 3, stable: 2, unstable: 1, degenerate: 0, unsettled: 0 }), "{r}");
        assert_equilibria(&r, want);
        // the saddle is found on the basin boundary, reached by no start
        assert_eq!((r.equilibria[1].starts, r.equilibria[1].found_by), (0, FoundBy::Separatrix), "{r}");
        assert_eq!(r.equilibria[0].starts + r.equilibria[2].starts, opts.starts, "{r}");
        // basins (1-d): below the saddle to the lower equilibrium, above it to the upper one
        let saddle = r.equilibria[1].x[0];
        for run in &r.runs {
            let want = if run.summary_start < saddle { 0 } else { 2 };
            assert_eq!(run.equilibrium, Some(want), "{}: x(0) = {}", run.label, run.summary_start);
        }
    }
}

/// Basins for gamma = 0.1 (docs/models/opinion.md; validation/opinion.py): x(0) = 0.3 or 0.49 -> 0.0158770817; 0.51 or
/// 0.9 -> 0.9841229183. The random starts between those points go the same way, and the
/// extremal states x = 0 and x = 1 go to the outer equilibria.
#[test]
fn opinion_basins_match_the_notes() {
    let r = check(&OpinionStubborn::new(0.1, 0.1).unwrap(), &CheckOptions::default()).unwrap();
    assert_eq!(r.equilibria[0].extremal, vec!["x=0".to_string()]);
    assert_eq!(r.equilibria[2].extremal, vec!["x=1".to_string()]);
    let s = r.sandwich.as_ref().unwrap();
    assert!(s.cooperative && !s.bounds_meet_at_reference);
    let (mut low, mut high) = (0, 0);
    for run in &r.runs {
        if (0.3..=0.49).contains(&run.summary_start) {
            assert_eq!(run.equilibrium, Some(0), "{}", run.label);
            low += 1;
        }
        if (0.51..=0.9).contains(&run.summary_start) {
            assert_eq!(run.equilibrium, Some(2), "{}", run.label);
            high += 1;
        }
    }
    assert!(low > 0 && high > 0, "no start in the basin intervals: {r}");
}

#[test]
fn opinion_models_with_one_equilibrium_are_certified() {
    let opts = CheckOptions::default();
    let cases: [(Box<dyn mfq_model::MeanFieldModel>, f64); 3] = [
        (Box::new(OpinionStubborn::new(0.3, 0.3).unwrap()), 0.5),
        (Box::new(OpinionStubborn::new(0.1, 0.2).unwrap()), 0.9847484959),
        (Box::new(OpinionBiased::new(0.2).unwrap()), 1.0),
    ];
    for (m, x) in &cases {
        let r = check(m.as_ref(), &opts).unwrap();
        assert_unique_attracting(&r);
        assert_certified(&r);
        assert_equilibria(&r, &[(*x, S)]);
    }
}

/// gamma0 = gamma1 = 1/4: a triple root at x = 1/2 (f = -y^3/2, docs/models/opinion.md); every
/// trajectory does go there, but algebraically (y ~ t^{-1/2}). With the default time limit
/// the runs do not settle: `Unsettled`. With t = 1e7 they settle: `Evidence`, never
/// `Certified`, because the certificate would rest on a zero eigenvalue. Degeneracy is flagged.
#[test]
fn triple_root_is_flagged_and_not_certified() {
    let m = OpinionStubborn::new(0.25, 0.25).unwrap();
    let r = check(&m, &CheckOptions::default()).unwrap();
    assert!(matches!(r.verdict, Verdict::Unsettled { .. }), "{r}");
    assert!(r.degenerate, "{r}");
    assert_eq!(r.equilibria.len(), 1);
    assert_eq!(r.equilibria[0].kind, EquilibriumKind::Degenerate);
    assert!((r.equilibria[0].x[0] - 0.5).abs() < 1e-4, "{r}");
    let r = check(&m, &CheckOptions { time_limit: 1e7, ..CheckOptions::default() }).unwrap();
    let Verdict::Evidence { not_certified_because, .. } = &r.verdict else { panic!("{r}") };
    assert!(not_certified_because.iter().any(|w| w.contains("degenerate")), "{r}");
    assert!(r.degenerate && r.unsettled == 0 && r.equilibria.len() == 1, "{r}");
}

/// alpha = 1/9 = alpha_c: a double root at x = 1/4 (semi-stable: attracting from below only)
/// and x = 1 (docs/models/opinion.md). Two equilibria, the double root flagged degenerate; runs
/// from below approach it algebraically and do not settle within the default limit.
#[test]
fn double_root_is_flagged() {
    let r = check(&OpinionBiased::new(1.0 / 9.0).unwrap(), &CheckOptions::default()).unwrap();
    let Verdict::NotUnique { equilibria: 2, stable: 1, degenerate: 1, unsettled, .. } = r.verdict else { panic!("{r}") };
    assert!(unsettled > 0, "{r}");
    assert!(r.degenerate);
    assert!((r.equilibria[0].x[0] - 0.25).abs() < 1e-5 && r.equilibria[0].kind == EquilibriumKind::Degenerate, "{r}");
    assert!((r.equilibria[1].x[0] - 1.0).abs() < 1e-12 && r.equilibria[1].kind == S, "{r}");
    assert!(r.runs.iter().filter(|run| run.summary_start > 0.25 + 1e-3).all(|run| run.equilibrium == Some(1)), "{r}");
}

/// Just below alpha_c = 1/9 the two roots `(1 -+ sqrt((1 - 9 alpha)/(1 - alpha))) / 4`
/// (docs/models/opinion.md) are 5e-4 and 5e-5 apart and the runs towards the lower one decay at
/// rate 7e-4 and 7e-5, too slowly to settle within the default limit: the unstable root
/// between them is still found on the basin boundary (the unsettled runs count for the
/// equilibrium their end is approaching), so three equilibria at the closed forms.
#[test]
fn the_saddle_beside_a_slow_stable_point_is_found_near_the_fold() {
    for alpha in [0.111111, 0.11111111] {
        let r = check(&OpinionBiased::new(alpha).unwrap(), &CheckOptions::default()).unwrap();
        let Verdict::NotUnique { equilibria: 3, stable: 2, degenerate: 0, .. } = r.verdict else { panic!("{r}") };
        let s = ((1.0 - 9.0 * alpha) / (1.0 - alpha)).sqrt();
        let want = [(1.0 - s) / 4.0, (1.0 + s) / 4.0, 1.0];
        for (e, w) in r.equilibria.iter().zip(want) {
            assert!((e.x[0] - w).abs() < 1e-9, "alpha {alpha}: {} against {w}\n{r}", e.x[0]);
        }
        assert_eq!(r.equilibria[1].kind, EquilibriumKind::Unstable, "{r}");
    }
}

/// A time limit far too short for the model to settle gives `Unsettled`, never a certificate,
/// even though the model is cooperative.
#[test]
fn tiny_time_limit_is_unsettled() {
    let m = Jsq::new(0.9, 2, 12).unwrap();
    let r = check(&m, &CheckOptions { time_limit: 0.5, ..CheckOptions::default() }).unwrap();
    let Verdict::Unsettled { unsettled, runs, .. } = r.verdict else { panic!("{r}") };
    assert_eq!((unsettled, runs), (34, 34));
    assert!(r.sandwich.as_ref().unwrap().cooperative);
    assert!(r.runs.iter().all(|run| (run.t_reached - 0.5).abs() < 1e-12 && run.equilibrium.is_none()));
}

#[test]
fn options_are_validated_by_name() {
    let m = Jsq::new(0.9, 2, 12).unwrap();
    for (opts, field) in [
        (CheckOptions { starts: 0, ..Default::default() }, "starts"),
        (CheckOptions { tol: 0.0, ..Default::default() }, "tol"),
        (CheckOptions { time_limit: f64::INFINITY, ..Default::default() }, "time_limit"),
        (CheckOptions { cluster_tol: 2.0, ..Default::default() }, "cluster_tol"),
        (CheckOptions { degeneracy_tol: -1.0, ..Default::default() }, "degeneracy_tol"),
    ] {
        let e = check(&m, &opts).unwrap_err();
        assert!(matches!(&e, CheckError::OutOfRange { field: f, .. } if *f == field), "{e}");
        assert!(e.to_string().starts_with(&format!("{field} = ")), "{e}");
    }
    let fp = solve_spec(
        &ModelSpec::from(mfq_model::models::JsqSpec { lambda: 0.9, d: 2 }),
        &Truncation::default(),
        &FixedPointOptions::default(),
    )
    .unwrap();
    let other = Jsq::new(0.9, 2, fp.x.len() + 1).unwrap();
    let e = check_with_fixed_point(&other, fp, &CheckOptions::default()).unwrap_err();
    assert!(e.to_string().contains("fixed_point.x"), "{e}");
}

/// Same seed, same report (up to wall time); the series are thinned for plotting.
#[test]
fn reports_are_reproducible_serializable_and_plottable() {
    let m = OpinionStubborn::new(0.1, 0.1).unwrap();
    let opts = CheckOptions { seed: 7, ..Default::default() };
    let a = check(&m, &opts).unwrap();
    let b = check(&m, &opts).unwrap();
    assert_eq!(a.equilibria, b.equilibria);
    assert_eq!(a.runs, b.runs);
    assert!(a.runs.iter().all(|r| r.t.len() <= 201 && r.t.len() == r.log10_distance.len() && r.t.len() == r.summary.len()));

    let json: serde_json::Value = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    assert_eq!(json["verdict"]["verdict"], "not-unique");
    assert_eq!(json["equilibria"].as_array().unwrap().len(), 3);
    assert_eq!(json["equilibria"][1]["kind"], "unstable");

    let svg = convergence_svg(&a).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("extremal start"), "{}", &svg[..200.min(svg.len())]);
    let svg = basins_svg(&a).unwrap();
    assert!(svg.contains("equilibrium #1") && svg.contains("unstable"));

    let r = check(&Jsq::new(0.9, 2, 12).unwrap(), &CheckOptions { starts: 8, ..Default::default() }).unwrap();
    let svg = convergence_svg(&r).unwrap();
    assert!(svg.contains("predicted slope"));
    let svg = basins_svg(&r).unwrap();
    assert!(svg.contains("at t = 0"));
    assert!(r.to_string().contains("verdict: CERTIFIED"), "{r}");
}
