//! Inputs are checked against what they mean, and what a solver breaks is reported (issue
//! 16): start states against the model's layout and integrator tolerances that cannot be met
//! (class 4); conservation laws and bad declarations of generic models (class 5); messages
//! without Rust `Debug` text (class 8).
//!
//! The constraints are those of the state layouts (crates/mfq-model/src/layout.rs): tails
//! `0 <= x_k <= 1`, `x_{k+1} <= x_k`; phase tails `sum_j x_{1,j} <= 1`; class tails per class.

mod common;
use common::{mfq, root, text, tmp_dir};
use std::path::PathBuf;

/// `mfq solve --x0` against the layout: the broken constraint and the entry are named, for
/// tails, class tails, phase tails and bounds; a feasible state is accepted.
#[test]
fn start_states_are_checked_against_the_layout() {
    let out = tmp_dir("x0");
    let o = out.to_str().unwrap();
    for (file, x0, needle) in [
        ("models/pod-errors-li.toml", "0.9,0.3,0.4", "x_3 <= x_2"),
        ("models/hetero-ps-sq2-caseA.toml", "0.5,0.2,0.3", "x_1,3 <= x_1,2"),
        ("models/sq2-h2.toml", "0.7,0.5", "x_1_ph1 + ... + x_1_ph2 <= 1"),
        ("models/jsq-d3.toml", "0.5,1.2", "x_2 <= 1"),
        ("models/jsq-d3.toml", "0.5,0.4,-0.01", "0 <= x_3"),
    ] {
        let r = mfq(&["solve", file, "--x0", x0, "--t-end", "1", "--out", o]);
        let (_, err) = text(&r);
        assert_eq!(r.status.code(), Some(2), "{file} {x0}: {err}");
        assert!(err.contains("--x0") && err.contains(needle), "{file} {x0}: {needle:?} missing: {err}");
    }
    let r = mfq(&["solve", "models/jsq-d3.toml", "--x0", "0.8,0.4,0.1", "--t-end", "1", "--out", o]);
    assert!(r.status.success(), "{:?}", text(&r));
}

/// The largest violation of `x_{k+1} <= x_k` over the rows of a trajectory, recomputed here.
fn largest_monotonicity_break(rows: &[serde_json::Value]) -> f64 {
    rows.iter()
        .map(|r| {
            let x: Vec<f64> = r.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            x.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
}

/// An explicit run at a loose tolerance from the full state breaks `x_{k+1} <= x_k`; `solve`
/// says so beside its status (count and largest violation, which the test recomputes from the
/// rows), while a run at the default tolerance reports nothing.
#[test]
fn solve_reports_broken_invariants() {
    let out = tmp_dir("invariants");
    let o = out.to_str().unwrap();
    let loose = ["--method", "dop853", "--rtol", "1e-2", "--atol", "1e-2", "--x0", "full", "--json", "--out", o];
    let r = mfq(&[&["solve", "models/pod-errors-li.toml", "--set", "lambda=0.8"][..], &loose].concat());
    let (stdout, stderr) = text(&r);
    assert!(r.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let recomputed = largest_monotonicity_break(v["x"].as_array().unwrap());
    assert!(recomputed > 1e-6, "this run is meant to break the order: {recomputed}");
    let inv = &v["invariants"];
    assert!(inv["rows"].as_u64().unwrap() >= 1, "{inv}");
    let reported = inv["largest"]["amount"].as_f64().unwrap();
    assert!((reported - recomputed).abs() <= 1e-15 * recomputed.max(1.0), "{reported} vs {recomputed}");
    assert!(inv["largest"]["constraint"].as_str().unwrap().contains(" <= x_"), "{inv}");
    let r = mfq(&[&["solve", "models/pod-errors-li.toml", "--set", "lambda=0.8"][..], &loose[..loose.len() - 3], &["--out", o]].concat());
    let (stdout, _) = text(&r);
    let line = stdout.lines().find(|l| l.contains("broke the state's invariants")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains(&format!("in {} of", inv["rows"])), "{line}");
    let r = mfq(&["solve", "models/pod-errors-li.toml", "--set", "lambda=0.8", "--x0", "full", "--json", "--out", o]);
    let v: serde_json::Value = serde_json::from_str(&text(&r).0).unwrap();
    assert!(v["invariants"].is_null(), "default tolerances: {}", v["invariants"]);
    assert!(largest_monotonicity_break(v["x"].as_array().unwrap()) <= 1e-12);
}

/// A relative tolerance below what double precision can meet is refused before any work,
/// naming the field.
#[test]
fn unreachable_tolerances_are_refused() {
    let out = tmp_dir("rtol");
    for rtol in ["1e-30", "1e-15", "0"] {
        let r = mfq(&["solve", "models/jsq-d3.toml", "--rtol", rtol, "--out", out.to_str().unwrap()]);
        let (_, err) = text(&r);
        assert_eq!(r.status.code(), Some(2), "{rtol}: {err}");
        assert!(err.contains("rtol = ") && err.contains("[1e-14, 1)"), "{rtol}: {err}");
        assert!(!err.contains("0.0000000"), "{err}");
    }
}

/// Writes `text` to a temporary model file and returns its path.
fn model_file(name: &str, text: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("mfq-inputs-{name}-{}.toml", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p
}

/// A closed three-state population (A -> B -> C -> A, rates a A, b B, c C): every jump keeps
/// A + B + C, so without a declared law the fixed points form a family (the empty state is one).
const CYCLE: &str = r#"
[model]
kind = "generic"
name = "cycle"
variables = ["A", "B", "C"]
[model.parameters]
a = 1.0
b = 2.0
c = 4.0
[[model.transitions]]
name = "ab"
jump = { A = -1, B = 1 }
rate = "a * A"
[[model.transitions]]
name = "bc"
jump = { B = -1, C = 1 }
rate = "b * B"
[[model.transitions]]
name = "ca"
jump = { C = -1, A = 1 }
rate = "c * C"
"#;

/// Class 5: an undeclared conserved quantity is detected (never "converged" at the empty
/// state); declared, the report names the law, and the fixed point is the closed form
/// A : B : C = 1/a : 1/b : 1/c on the simplex (4/7, 2/7, 1/7).
#[test]
fn generic_models_use_a_named_conservation_law() {
    let undeclared = model_file("cycle", CYCLE);
    let o = mfq(&["fixed-point", undeclared.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    assert!(err.contains("model.conservation") && err.contains("A + B + C") && !out.contains("converged"), "{err}");
    let with_initial = model_file("cycle-initial", &format!("{CYCLE}[model.initial]\nA = 0.5\nB = 0.3\nC = 0.2066\n"));
    let (_, err) = text(&mfq(&["fixed-point", with_initial.to_str().unwrap()]));
    assert!(err.contains("value = 1.006600000000"), "the value at model.initial is offered: {err}");
    let declared =
        model_file("cycle-law", &format!("{CYCLE}[[model.conservation]]\nsum = [\"A\", \"B\", \"C\"]\nvalue = 1\neliminate = \"C\"\n"));
    let o = mfq(&["fixed-point", declared.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap_or_else(|e| panic!("{e}: {:?}", text(&o)));
    let x: Vec<f64> = v["x"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert!((x[0] - 4.0 / 7.0).abs() < 1e-12 && (x[1] - 2.0 / 7.0).abs() < 1e-12, "{x:?}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("conservation law used: A + B + C = 1") && notes.contains("C is computed"), "{notes}");
}

/// Class 5: a rate that is finite but whose derivative is not (a floor of 1e-290 in a
/// denominator, squared by the derivative) is refused when the file is read, naming the
/// transition, its index and the state, not as a singular Jacobian later.
#[test]
fn a_rate_with_a_non_finite_derivative_is_named() {
    let text_in = std::fs::read_to_string(root().join("models/generic/jsq2.toml")).unwrap();
    let bad = text_in.replace("rate = \"x[k] - x[k+1]\"", "rate = \"x[k] - x[k+1] + 1e-300 / max(x[k+1], 1e-290)\"");
    assert_ne!(bad, text_in);
    let p = model_file("floor", &bad);
    let o = mfq(&["fixed-point", p.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}\n{err}");
    for words in
        ["model.transitions[1].rate (departure)", "at k = ", "is finite but its derivative", "with respect to x[", "at the state (x[1] = "]
    {
        assert!(err.contains(words), "{words:?} missing: {err}");
    }
    assert!(!err.contains("Singular") && !err.contains("index:"), "{err}");
}
