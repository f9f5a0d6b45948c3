//! Accuracy where a tail is read (issue 16, class 7): a tail is plotted on a log scale, so its
//! entries must be right *relative* to their size, not only to `max |x|`. The fixed point's
//! relative polish (crate docs of mfq-fixpoint, "Relative polish of the tail") is tested
//! against values the code did not produce, each computed here in a relatively accurate form.

mod common;
use common::{mfq, text};
use mfq_fixpoint::{solve_spec, FixedPoint, FixedPointOptions, RELATIVE_FLOOR};
use mfq_model::models::{JsqSpec, PodLiSpec};
use mfq_model::{ModelSpec, Truncation};

fn solve(spec: ModelSpec, trunc: &Truncation) -> FixedPoint {
    let fp = solve_spec(&spec, trunc, &FixedPointOptions::default()).unwrap();
    assert!(fp.converged(), "{spec:?}: {:?}", fp.status);
    fp
}

/// Largest relative error of the entries at or above `floor`.
fn worst_relative(x: &[f64], exact: impl Fn(usize) -> f64, floor: f64) -> (f64, usize) {
    let mut worst = (0.0f64, 0);
    for (i, v) in x.iter().enumerate() {
        let e = exact(i + 1);
        if e >= floor {
            let rel = ((v - e) / e).abs();
            if rel > worst.0 {
                worst = (rel, i + 1);
            }
        }
    }
    worst
}

/// JSQ(d) closed form `x_k = lambda^((d^k - 1)/(d - 1))` (Mitzenmacher, IEEE TPDS 12(10) 2001,
/// Theorem 3), evaluated as `exp(e ln lambda)` with the integer exponent `e` exact: relative
/// error `~ e * 1e-16`. Every entry at or above the truncation tolerance (automatic truncation)
/// is right to 1e-12 relative (measured: at most ~1e-14; before the relative polish P(Q >= 5)
/// at lambda = 0.5, d = 2 was off by 4.7e-10).
#[test]
fn jsq_tail_is_relatively_accurate() {
    let trunc = Truncation::default();
    for d in [2u32, 3, 5] {
        for lambda in [0.3, 0.5, 0.7, 0.9, 0.99] {
            let fp = solve(ModelSpec::from(JsqSpec { lambda, d }), &trunc);
            let exact = |k: usize| {
                let e = (0..k).fold(0.0f64, |s, j| s + (d as f64).powi(j as i32));
                (e * f64::ln(lambda)).exp()
            };
            let (rel, k) = worst_relative(&fp.x, exact, trunc.tol);
            assert!(rel < 1e-12, "d={d} lambda={lambda}: x_{k} off by {rel:e} relative");
            assert_eq!(fp.tail_polish.floor, RELATIVE_FLOOR);
        }
    }
}

/// Pod with load-independent errors (Bhambay, Mukhopadhyay and Vasantam, Perf. Eval. 2024):
/// the exact recursion `x_1 = lambda`, `x_k = lambda phi(x_{k-1})`, `phi(x) = (1 - eps) x^d +
/// eps (1 - (1 - x)^d)` (docs/models/pod-errors.md), with `1 - (1 - x)^d` as `-expm1(d
/// ln1p(-x))` so that it keeps relative accuracy for small `x`. The tail is geometric
/// (`x_{k+1} / x_k -> lambda eps d`), so the truncation at `x_K < tol` itself moves the entries
/// near `K` by about `x_K / x_k` relative; a fixed `K = 150` puts `x_K` below 1e-30 and leaves
/// the solver's error alone. Entries down to 1e-14 are right to 1e-12 relative.
#[test]
fn pod_li_tail_is_relatively_accurate() {
    let trunc = Truncation { levels: Some(150), ..Truncation::default() };
    for (lambda, eps, d) in [(0.5, 0.3, 2u32), (0.9, 0.3, 2), (0.9, 0.2, 3), (0.5, 0.6, 2)] {
        let fp = solve(ModelSpec::from(PodLiSpec { lambda, d, eps }), &trunc);
        let phi = |x: f64| (1.0 - eps) * x.powi(d as i32) - eps * f64::exp_m1(d as f64 * f64::ln_1p(-x));
        let mut exact = vec![lambda];
        for _ in 1..fp.x.len() {
            let last = *exact.last().unwrap();
            exact.push(lambda * phi(last));
        }
        let (rel, k) = worst_relative(&fp.x, |k| exact[k - 1], 1e-14);
        assert!(rel < 1e-12, "lambda={lambda} eps={eps} d={d}: x_{k} off by {rel:e} relative");
    }
}

/// Through the CLI: `mfq fixed-point --json` prints the tail to relative accuracy (P(Q >= 5) of
/// JSQ(2) at lambda = 0.3, the closed form 0.3^31, and every entry above the truncation
/// tolerance) and states the polish's stopping rule and floor (`tail_polish`); the text output
/// of a solve that polished says so.
#[test]
fn cli_states_the_polish_rule_and_floor() {
    let o = mfq(&["fixed-point", "models/jsq-d3.toml", "--set", "lambda=0.3", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let x: Vec<f64> = v["x"].as_array().unwrap().iter().map(|e| e.as_f64().unwrap()).collect();
    for (k, got) in x.iter().enumerate() {
        let e = (0..=k).fold(0.0f64, |s, j| s + 3f64.powi(j as i32));
        let exact = (e * f64::ln(0.3)).exp();
        if exact >= 1e-12 {
            assert!(((got - exact) / exact).abs() < 1e-12, "x_{}: {got:e} vs {exact:e}", k + 1);
        }
    }
    let p = &v["tail_polish"];
    assert_eq!(p["floor"].as_f64(), Some(RELATIVE_FLOOR), "{v}");
    assert_eq!(p["step_tol"].as_f64(), Some(mfq_fixpoint::RELATIVE_STEP_TOL), "{v}");
    assert!(p["steps"].as_u64().is_some() && p["last_relative_step"].as_f64().is_some(), "{v}");
    // JSQ(2) at lambda = 0.5 with a fixed K = 6 (no smaller level re-solved after the polish,
    // which would find nothing left to do): the solve takes relative-polish steps, and the text
    // says so
    let args = ["fixed-point", "models/jsq-d2.toml", "--set", "lambda=0.5", "--set", "truncation.levels=6"];
    let v: serde_json::Value = serde_json::from_str(&text(&mfq(&[&args[..], &["--json"]].concat())).0).unwrap();
    assert!(v["tail_polish"]["steps"].as_u64().unwrap() > 0, "{v}");
    let x5 = v["x"][4].as_f64().unwrap();
    assert!(((x5 - 0.5f64.powi(31)) / 0.5f64.powi(31)).abs() < 1e-14, "P(Q >= 5) = {x5:e}");
    let (out, err) = text(&mfq(&args));
    assert!(out.contains("tail polish") && out.contains("relative Newton step"), "{out}\n{err}");
}
