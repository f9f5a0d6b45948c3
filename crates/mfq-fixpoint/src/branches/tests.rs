//! The branches of the two opinion models against their closed forms (docs/branches.md):
//! biased agents, interior equilibria `x = (1 +- sqrt((1 - 9 alpha) / (1 - alpha))) / 4` with a
//! fold at `alpha = 1/9`, `x = 1/4`; symmetric stubborn agents, `x = 1/2` for every `gamma` and
//! `x = 1/2 +- sqrt((s - 1/2) / (2 s^2))`, `s = 1 - 2 gamma`, with a pitchfork at `gamma = 1/4`.

use super::*;
use mfq_model::models::{OpinionBiased, OpinionStubborn};

fn biased(alpha: f64) -> Result<Box<dyn MeanFieldModel>, ModelError> {
    Ok(Box::new(OpinionBiased::new(alpha)?))
}

fn stubborn(gamma: f64) -> Result<Box<dyn MeanFieldModel>, ModelError> {
    Ok(Box::new(OpinionStubborn::new(gamma, gamma)?))
}

fn opts(parameter: &str, end: f64) -> ContinuationOptions {
    ContinuationOptions { parameter: parameter.into(), start: 0.0, end, points: 200, ..Default::default() }
}

/// Biased agents on `alpha in [0, 0.2]`: the branch from `x = 0` turns at the fold
/// `alpha = 1/9`, `x = 1/4` (to 1e-8), stable below it and unstable above, and comes back to
/// `x = 1/2` at `alpha = 0` (so that start is not followed again); `x = 1` stays stable to the
/// end of the range. Every point lies on the closed form.
#[test]
fn biased_opinion_fold_at_one_ninth() {
    let r = branches(&biased, &[vec![0.0], vec![0.5], vec![1.0]], &opts("alpha", 0.2)).unwrap();
    assert_eq!(r.branches.len(), 2, "{r:#?}");
    let (fold, top) = (&r.branches[0], &r.branches[1]);
    assert_eq!(fold.end, BranchEnd::RangeStart);
    assert_eq!(fold.also_starts, vec![1]);
    assert_eq!(fold.special.len(), 1, "{:?}", fold.special);
    let f = &fold.special[0];
    assert_eq!(f.kind, SpecialKind::Fold);
    assert!((f.parameter - 1.0 / 9.0).abs() < 1e-8, "fold at {}", f.parameter);
    assert!((f.x[0] - 0.25).abs() < 1e-4 && f.stability_change, "{f:?}");
    for p in &fold.points {
        let a = p.parameter;
        let root = ((1.0 - 9.0 * a) / (1.0 - a)).max(0.0).sqrt();
        let (lo, hi) = ((1.0 - root) / 4.0, (1.0 + root) / 4.0);
        let d = (p.x[0] - lo).abs().min((p.x[0] - hi).abs());
        // near the fold the closed form loses half the digits (sqrt of round-off)
        assert!(d < 1e-9 || (root < 1e-3 && d < 1e-6), "alpha {a}: x {} vs {lo}, {hi}", p.x[0]);
        if p.kind != EquilibriumKind::Degenerate {
            assert_eq!(p.kind == EquilibriumKind::Stable, p.x[0] < 0.25, "alpha {a}, x {}", p.x[0]);
        }
    }
    assert_eq!(top.end, BranchEnd::RangeEnd);
    assert!(top.special.is_empty() && top.points.iter().all(|p| p.x[0] == 1.0 && p.kind == EquilibriumKind::Stable));
    assert!((top.points.last().unwrap().parameter - 0.2).abs() < 1e-15);
}

/// Symmetric stubborn agents on `gamma in [0, 0.4]`: the branch `x = 1/2` has a branch point at
/// `gamma = 1/4` (to 1e-8) where it turns from unstable to stable; the side branch from `x = 0`
/// passes through the same point and comes back to `x = 1` at `gamma = 0`. Three equilibria
/// below 1/4, one above. Every point lies on the closed form.
#[test]
fn stubborn_opinion_pitchfork_at_one_quarter() {
    let r = branches(&stubborn, &[vec![0.0], vec![0.5], vec![1.0]], &opts("gamma0,gamma1", 0.4)).unwrap();
    assert_eq!(r.branches.len(), 2, "{r:#?}");
    let (side, middle) = (&r.branches[0], &r.branches[1]);
    assert_eq!((side.end.clone(), side.also_starts.clone()), (BranchEnd::RangeStart, vec![2]));
    assert_eq!(middle.end, BranchEnd::RangeEnd);
    assert_eq!(middle.special.len(), 1, "{:?}", middle.special);
    let bp = &middle.special[0];
    assert_eq!(bp.kind, SpecialKind::BranchPoint);
    assert!((bp.parameter - 0.25).abs() < 1e-8, "pitchfork at {}", bp.parameter);
    // (at a branch point the bordered matrix is singular: the state there only to ~1e-10)
    assert!(bp.stability_change && (bp.x[0] - 0.5).abs() < 1e-8, "{bp:?}");
    for p in &middle.points {
        // the corrector stops at max |f| <= 1e-12, i.e. |x - 1/2| <= 1e-12 / |f'(1/2)|, f' = 1/2 - 2 gamma
        let slack = 1e-12 / (0.5 - 2.0 * p.parameter).abs().max(1e-3);
        assert!((p.x[0] - 0.5).abs() < 10.0 * slack, "{p:?}");
        if p.kind != EquilibriumKind::Degenerate {
            assert_eq!(p.kind == EquilibriumKind::Stable, p.parameter > 0.25, "gamma {}", p.parameter);
        }
    }
    // the side branch, which turns at the branch point, finds it too
    assert!(side.special.len() == 1 && side.special[0].kind == SpecialKind::BranchPoint, "{:?}", side.special);
    assert!((side.special[0].parameter - 0.25).abs() < 1e-8, "{:?}", side.special);
    for p in &side.points {
        let s = 1.0 - 2.0 * p.parameter;
        let w = ((s - 0.5) / (2.0 * s * s)).max(0.0).sqrt();
        let d = (p.x[0] - 0.5).abs() - w;
        // the corrector stops at max |f| <= 1e-12: |x - x*| <= 1e-12 / |f'(x*)|, f' = -2 (s - 1/2) here
        let slack = 1e-12 / (2.0 * (s - 0.5)).abs().max(1e-9);
        assert!(d.abs() < 1e-9 + 10.0 * slack, "gamma {}: x {} vs 1/2 +- {w}", p.parameter, p.x[0]);
        assert!(p.parameter <= 0.25 + 1e-12);
    }
    // the count of equilibria on either side of 1/4: three below, one above
    let count = |g: f64| {
        r.branches.iter().map(|b| b.points.windows(2).filter(|w| (w[0].parameter - g) * (w[1].parameter - g) <= 0.0).count()).sum::<usize>()
    };
    assert_eq!((count(0.2), count(0.3)), (3, 1));
}

#[test]
fn bad_options_and_starts_name_the_field() {
    let bad = |o: ContinuationOptions, starts: &[Vec<f64>], field: &str| match branches(&biased, starts, &o) {
        Err(ContinuationError::OutOfRange { field: f, .. }) => assert_eq!(f, field),
        other => panic!("{field}: {other:?}"),
    };
    bad(ContinuationOptions { end: 0.0, ..opts("alpha", 0.2) }, &[vec![1.0]], "end");
    bad(ContinuationOptions { points: 1, ..opts("alpha", 0.2) }, &[vec![1.0]], "points");
    bad(opts("alpha", 0.2), &[], "starts");
    bad(opts("alpha", 0.2), &[vec![0.3]], "starts[0]");
    bad(opts("alpha", 0.2), &[vec![1.0, 0.0]], "starts[0]");
}

/// An expired deadline stops before any branch, and says so.
#[test]
fn the_deadline_stops_it() {
    let o = ContinuationOptions { deadline: Deadline::after(1e-9), ..opts("alpha", 0.2) };
    std::thread::sleep(std::time::Duration::from_millis(2));
    let r = branches(&biased, &[vec![0.0]], &o).unwrap();
    assert!(r.branches.is_empty() && r.partial.as_deref().is_some_and(|p| p.contains("max-seconds")), "{r:?}");
}
