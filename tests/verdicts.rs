//! Verdict words agree with each other (issue 16, class 2) and nothing is silently substituted
//! (class 3): `fixed-point`, `report` and `check` classify an equilibrium by one rule (the
//! spectral abscissa against `1e-5 max(1, ||J||_inf)`, `mfq_fixpoint::LocalStability::kind`);
//! a stable model whose truncation runs out of room is never called unstable; `certified`
//! says what it rests on (a sampled cooperativity test on the truncated system,
//! docs/checker.md).
//!
//! References: the double root x = 1/4 of the biased majority rule at alpha = 1/9
//! (docs/models/opinion.md, after Mukhopadhyay, Mazumdar, Roy, J. Stat. Phys. 2020); the
//! stability conditions lambda < 1 of JSQ(d) (Mitzenmacher, IEEE TPDS 2001) and of Pod with
//! load-independent errors (Bhambay, Mukhopadhyay, Vasantam, Perf. Eval. 2024).

mod common;
use common::{mfq, text, tmp_dir};
use std::process::Output;

fn json(o: &Output) -> serde_json::Value {
    let (out, err) = text(o);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"))
}

/// The double root x = 1/4 of the biased majority rule at alpha = 1/9 has a spectral
/// abscissa of ~ -2.6e-7 (a zero eigenvalue to the precision of the computed point):
/// `fixed-point` calls it degenerate, as `check` does, not "locally stable".
#[test]
fn a_double_root_is_degenerate_in_fixed_point_and_check() {
    let set = ["--set", "alpha=0.1111111111111111"];
    let fp = mfq(&[&["fixed-point", "models/opinion-biased.toml"][..], &set, &["--json"]].concat());
    let v = json(&fp);
    let x = v["x"][0].as_f64().unwrap();
    assert!((x - 0.25).abs() < 1e-5, "the double root 1/4: {x}");
    assert_eq!(v["local_stability"], "degenerate", "{v}");
    let o = mfq(&[&["fixed-point", "models/opinion-biased.toml"][..], &set].concat());
    let (out, _) = text(&o);
    assert!(out.contains("degenerate") && out.contains("inconclusive") && !out.contains("locally stable"), "{out}");
    let dir = tmp_dir("double-root");
    let c = mfq(&[&["check", "models/opinion-biased.toml"][..], &set, &["--json", "--out", dir.to_str().unwrap()]].concat());
    let r = json(&c);
    let kinds: Vec<&str> = r["equilibria"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    let near = r["equilibria"].as_array().unwrap().iter().find(|e| (e["x"][0].as_f64().unwrap() - 0.25).abs() < 1e-5);
    assert_eq!(near.expect("the double root among the equilibria")["kind"], "degenerate", "{kinds:?}");
}

/// An ordinary stable point is "locally stable" in both commands (JSQ(3) at lambda = 0.7;
/// its spectral abscissa is far from zero).
#[test]
fn a_stable_point_is_locally_stable_in_both() {
    let v = json(&mfq(&["fixed-point", "models/jsq-d3.toml", "--set", "lambda=0.7", "--json"]));
    assert_eq!(v["local_stability"], "stable", "{v}");
    let a = v["spectral_abscissa"].as_f64().unwrap();
    let norm = v["jacobian_norm"].as_f64().unwrap();
    assert!(a < -1e-5 * norm.max(1.0), "alpha = {a}, ||J|| = {norm}");
}

/// Stable models near their stability boundary with too small a `truncation.max_levels`: the
/// solver could not finish, and the message says the model is stable, never "unstable".
#[test]
fn a_stable_point_near_the_boundary_is_never_called_unstable() {
    for (file, lambda, max_levels) in
        [("models/jsq-d1.toml", "0.9999", "64"), ("models/pod-errors-li.toml", "0.999", "40"), ("models/lld2-exp.toml", "0.999", "20")]
    {
        let o = mfq(&["fixed-point", file, "--set", &format!("lambda={lambda}"), "--set", &format!("truncation.max_levels={max_levels}")]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(4), "{file}: {out}\n{err}");
        let all = format!("{out}{err}").to_lowercase();
        assert!(!all.contains("looks unstable") && !all.contains(" unstable"), "{file}: {all}");
        assert!(err.contains("the model is stable") && err.contains("could not finish") && err.contains("max_levels"), "{file}: {err}");
    }
}

/// `report`'s attraction line says what `certified` rests on: a sampled cooperativity test
/// on the truncated system at the K used, not only the number of random starts.
#[test]
fn certified_says_what_it_rests_on() {
    let dir = tmp_dir("certified");
    let o = mfq(&["report", "models/jsq-d3.toml", "--set", "lambda=0.8", "--out", dir.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let line = out.lines().find(|l| l.trim_start().starts_with("attraction")).expect("an attraction line");
    assert!(line.contains("CERTIFIED"), "{line}");
    for words in ["truncated", "sampled cooperativity test", "not a proof", "random starts", "truncated at K ="] {
        assert!(line.contains(words), "{words:?} missing: {line}");
    }
}

/// Class 3: the discipline-independent mean field names the discipline it ignores (d = 3,
/// FCFS, LPS(2), LCFS); with PS there is nothing to name.
#[test]
fn the_mean_field_names_the_discipline_it_ignores() {
    for (disc, extra) in [("\"fcfs\"", None), ("\"lps\"", Some("lps_k=2")), ("\"lcfs\"", None)] {
        let mut args = vec!["fixed-point", "models/redundancy-mf-d3.toml", "--set", "lambda=0.6", "--json"];
        let d = format!("discipline={disc}");
        args.extend(["--set", &d]);
        if let Some(e) = extra {
            args.extend(["--set", e]);
        }
        let v = json(&mfq(&args));
        let notes = v["notes"].as_array().expect("notes").iter().map(|n| n.as_str().unwrap().to_string()).collect::<Vec<_>>();
        let ignored = notes.iter().find(|n| n.contains("does not depend on the discipline")).unwrap_or_else(|| panic!("{disc}: {notes:?}"));
        assert!(ignored.contains(&format!("discipline = {disc}")) && ignored.contains("ignored"), "{ignored}");
    }
    let v = json(&mfq(&["fixed-point", "models/redundancy-mf-d3.toml", "--set", "lambda=0.6", "--json"]));
    assert_eq!(v["notes"], serde_json::json!([]), "PS: nothing ignored");
}

/// Class 3: under FCFS the headline numbers say which system they describe, and Gardner et
/// al.'s exact limit is printed beside them. For d = 2 the series sum lambda^n / (n + 2) is
/// (-ln(1 - lambda) - lambda) / lambda^2: E[T] = 1.0285160 at lambda = 0.7 (computed here, not
/// by the code).
#[test]
fn fcfs_headline_numbers_say_which_system_they_describe() {
    let lambda: f64 = 0.7;
    let et = (-(1.0 - lambda).ln() - lambda) / (lambda * lambda);
    for approximation in ["\"mean-field\"", "\"pair\""] {
        let a = format!("approximation={approximation}");
        let mut args = vec!["fixed-point", "models/redundancy-fcfs-pair.toml", "--set", "lambda=0.7", "--set", &a];
        if approximation == "\"mean-field\"" {
            args.extend(["--set", "truncation.levels=40", "--set", "truncation.tol=1e-12"]);
        }
        let o = mfq(&args);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{out}\n{err}");
        let note = out.lines().find(|l| l.contains("headline numbers")).unwrap_or_else(|| panic!("{out}"));
        let what = if approximation == "\"pair\"" { "the FCFS pair approximation" } else { "the discipline-independent mean field" };
        assert!(note.contains(what) && note.contains("Gardner"), "{note}");
        assert!(note.contains(&format!("gardner_fcfs_limit_mean_response_time = {et:.6}")), "{et:.6}: {note}");
        assert!(note.contains(&format!("gardner_fcfs_limit_mean_copies = {:.6}", 2.0 * lambda * et)), "{note}");
    }
}

/// Class 3: a stable model with identical copies is not invalid input: `fixed-point` and
/// `report` give its stability region and lambda_max as data (exit 0); outside the region the
/// exit code is 3. PS: lambda_max = 1/d exactly (Anton et al. 2021); FCFS, d = 2: 0.81669
/// (Hellemans' thesis).
#[test]
fn identical_copies_give_their_stability_region_as_data() {
    let file = "models/redundancy-identical-ps-unstable.toml";
    let v = json(&mfq(&["fixed-point", file, "--set", "d=3", "--set", "lambda=0.2", "--json"]));
    assert_eq!(v["stability"]["verdict"], "stable", "{v}");
    let lmax = v["stability_region"]["lambda_max"].as_f64().unwrap();
    assert!((lmax - 1.0 / 3.0).abs() < 1e-15, "{lmax}");
    let o = mfq(&["fixed-point", file, "--set", "d=3", "--set", "lambda=0.4"]);
    assert_eq!(o.status.code(), Some(3), "{:?}", text(&o));
    let dir = tmp_dir("identical");
    let o = mfq(&["report", file, "--set", "discipline=\"fcfs\"", "--set", "lambda=0.5", "--out", dir.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("stable: lambda < lambda_max") && out.contains("lambda_max          0.8166"), "{out}");
    let v = json(&mfq(&["fixed-point", file, "--set", "discipline=\"fcfs\"", "--set", "lambda=0.5", "--json"]));
    let lmax = v["stability_region"]["lambda_max"].as_f64().unwrap();
    assert!((lmax - 0.81669).abs() < 1e-5, "{lmax}");
    // a command that needs a queue-length model says why, naming the field
    let o = mfq(&["tail", file, "--set", "lambda=0.3"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("model.copies") && err.contains("stability region") && err.contains("lambda_max = 0.500000"), "{err}");
}

/// Class 2 and 3: every command reads one stability region of identical copies, built from the
/// file's speeds and size law. On servers of unequal speeds `check` gave the equal-speed
/// lambda_max 0.816694 while `fixed-point` said it is not known; beyond the local capacity
/// bound (here the five slow servers', 0.625; docs/models/redundancy.md) every command says
/// unstable (exit 3).
#[test]
fn identical_copies_on_unequal_speeds_read_one_region_in_every_command() {
    let file = "models/redundancy-identical-speeds.toml";
    let v = json(&mfq(&["fixed-point", file, "--json"]));
    assert!(v["stability_region"]["lambda_max"].is_null(), "{v}");
    let o = mfq(&["check", file]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("model.copies") && err.contains("not known") && !err.contains("0.8166"), "{err}");
    // `report` writes its file with the region, as every report (it wrote nothing before)
    let dir = tmp_dir("region-report");
    let o = mfq(&["report", file, "--out", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert!(v["stability_region"]["region"].is_string() && v["stability"]["verdict"] == "unknown", "{v}");
    for cmd in ["fixed-point", "check", "report", "tail"] {
        let o = mfq(&[cmd, file, "--set", "lambda=0.7"]);
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(3), "{cmd}: {out}\n{err}");
        assert!(err.contains("5 slowest servers"), "{cmd}: {err}");
    }
}

/// Class 3: with several equilibria, `refined` and `fixed-point` say which one their numbers
/// describe (carried-over gap: no warning). The biased majority rule at alpha = 0.05 has the
/// equilibria 0.0597785224, 0.4402214776 and 1 (docs/models/opinion.md, recomputed by
/// validation/opinion.py); at alpha = 0.5 only x = 1, and no note.
#[test]
fn several_equilibria_are_named_beside_the_one_reported() {
    let file = "models/opinion-biased.toml";
    let v = json(&mfq(&["refined", file, "--json"]));
    let notes = v["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{v}");
    let note = notes[0].as_str().unwrap();
    assert!(note.starts_with("3 equilibria (x = 0.059779, 0.440221, 1.000000)"), "{note}");
    let v = json(&mfq(&["refined", file, "--json", "--set", "alpha=0.5"]));
    assert_eq!(v["notes"].as_array().map(Vec::len), Some(0), "{v}");
    let o = mfq(&["fixed-point", file]);
    assert!(text(&o).0.contains("note                3 equilibria"), "{:?}", text(&o));
}

/// Class 2: a finite buffer (`truncation.buffer = true`) is a loss system, stationary at every
/// load: `fixed-point` at lambda = 1.5 converges where the infinite-buffer JSQ(2) is unstable
/// (new-user try: it said unstable while `compare`, `solve` and `exact` solved it), with the
/// balance `x_1 = lambda (1 - x_K^2)` of the buffered system (docs/guide.md). The key is refused
/// where K is no buffer of jobs (redundancy counts copies), naming the field.
#[test]
fn a_finite_buffer_is_stationary_at_every_load() {
    let v = json(&mfq(&["fixed-point", "models/refined/jsq2-buffer3.toml", "--set", "lambda=1.5", "--json"]));
    let x: Vec<f64> = v["x"].as_array().unwrap().iter().map(|e| e.as_f64().unwrap()).collect();
    assert!((x[0] - 1.5 * (1.0 - x[2] * x[2])).abs() < 1e-12, "{x:?}");
    assert_eq!(v["truncation"]["buffer"], true, "{v}");
    // every command reads one verdict (Truncation::stability_of): the report's is stable too
    let dir = tmp_dir("buffer-report");
    let v = json(&mfq(&["report", "models/refined/jsq2-buffer3.toml", "--set", "lambda=1.5", "--json", "--out", dir.to_str().unwrap()]));
    assert_eq!(v["stability"]["verdict"], "stable", "{}", v["stability"]);
    let o = mfq(&["fixed-point", "models/redundancy-mf-d2.toml", "--set", "truncation.levels=3", "--set", "truncation.buffer=true"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("truncation.buffer = true is not allowed") && err.contains("redundancy"), "{err}");
}

/// Class 3: at a degenerate equilibrium (gamma0 = gamma1 = 1/4 of the stubborn-agent model: a
/// triple root at x = 1/2, docs/models/opinion.md) the refined terms do not exist; `refined`
/// says so first among its warnings, and `compare` draws no refined line (it printed a
/// correction of about 4e12 before) and says why; neither prints the terms.
#[test]
fn refined_terms_at_a_degenerate_equilibrium_are_flagged() {
    let v = json(&mfq(&["refined", "models/opinion-stubborn.toml", "--set", "gamma0=0.25", "--set", "gamma1=0.25", "--json"]));
    assert!(v["warnings"][0].as_str().unwrap().starts_with("the fixed point is degenerate"), "{v}");
    // the terms (of order 1/eigenvalue, about 4e13 here) are neither printed nor written: x* and
    // the mean field only, and the sizes' state-space warnings would only repeat the first
    assert!(v["v"].is_null() && v["a"].is_null() && v["estimates"].is_null() && v["sum_v"].is_null(), "{v}");
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1, "{v}");
    assert!((v["x"][0].as_f64().unwrap() - 0.5).abs() < 1e-3, "{v}");
    let (out, _) = text(&mfq(&["refined", "models/opinion-stubborn.toml", "--set", "gamma0=0.25", "--set", "gamma1=0.25", "--order", "2"]));
    assert!(
        out.contains("V, A and the refined estimates: none (degenerate fixed point") && !out.contains("e12") && !out.contains("e13"),
        "{out}"
    );
    let dir = tmp_dir("compare-degenerate");
    let out = dir.to_str().unwrap();
    let base = ["compare", "models/opinion-stubborn.toml", "--set", "gamma0=0.25", "--set", "gamma1=0.25", "--servers", "50"];
    let v = json(&mfq(&[&base[..], &["--time", "50", "--json", "--out", out]].concat()));
    assert!(v["refined_c"].is_null() && v["rows"][0]["refined_mean_field"].is_null(), "{v}");
    assert!(v["warnings"][0].as_str().unwrap().starts_with("the fixed point is degenerate"), "{v}");
    let v = json(&mfq(&["refined", "models/opinion-stubborn.toml", "--set", "gamma0=0.3", "--set", "gamma1=0.3", "--json"]));
    assert!(v["warnings"].as_array().unwrap().iter().all(|w| !w.as_str().unwrap().contains("degenerate")), "{v}");
}

/// Refined terms that mislead without being degenerate are flagged: order 2 near the pitchfork
/// of the stubborn-agent model (gamma = 0.2501, slowest decay rate 2e-4: sum A came out as 23.7
/// where the symmetry x = 1/2 makes every term 0, docs/models/opinion.md), and the SIS model at
/// its unstable equilibrium I = 0 (infection rate 2 > recovery rate 1; the endemic state is 1/2).
#[test]
fn refined_terms_near_degenerate_or_at_an_unstable_point_are_flagged() {
    let g = ["--set", "gamma0=0.2501", "--set", "gamma1=0.2501", "--json"];
    let v = json(&mfq(&[&["refined", "models/opinion-stubborn.toml", "--order", "2"][..], &g[..]].concat()));
    assert!(v["warnings"][0].as_str().unwrap().starts_with("the fixed point is nearly degenerate (slowest decay rate 2.000e-4)"), "{v}");
    let v = json(&mfq(&[&["refined", "models/opinion-stubborn.toml"][..], &g[..]].concat()));
    assert!(v["warnings"].as_array().unwrap().is_empty(), "order 1 is well conditioned there: {v}");
    let dir = tmp_dir("refined-unstable");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sis2.toml");
    std::fs::write(
        &file,
        "[model]\nkind = \"generic\"\nname = \"SIS\"\nvariables = [\"I\"]\n[[model.transitions]]\njump = { I = 1 }\nrate = \"2 * I * (1 - I)\"\n\
         [[model.transitions]]\njump = { I = -1 }\nrate = \"I\"\n[model.initial]\nI = 0\n",
    )
    .unwrap();
    let v = json(&mfq(&["refined", file.to_str().unwrap(), "--json"]));
    assert!(v["x"][0].as_f64().unwrap().abs() < 1e-12, "{v}");
    assert!(v["warnings"][0].as_str().unwrap().starts_with("the fixed point is locally unstable (spectral abscissa 1.000e0 > 0)"), "{v}");
}

/// The simulation's own diagnostics are said in its text, not only in its JSON: a run of one
/// time unit from empty in 100,000 batches (the mean queue length 0.33 +- 0.0005 against about
/// 2.35 in steady state) gets the correlated-batches and not-in-steady-state warnings; a
/// finite buffer prints the loss probability (M/M/1/1 at lambda = 0.8: Erlang B 0.8/1.8 = 0.444).
#[test]
fn simulate_says_what_its_diagnostics_flag() {
    let (out, err) =
        text(&mfq(&["simulate", "models/jsq-d2.toml", "--servers", "100", "--time", "1", "--warmup", "0", "--batches", "100000"]));
    assert!(out.contains("warning: consecutive batch means are correlated"), "{out}{err}");
    assert!(out.contains("differs from the throughput") && out.contains("not in steady state"), "{out}");
    let b = ["--set", "lambda=0.8", "--set", "truncation.levels=1", "--set", "truncation.buffer=true", "--servers", "100"];
    let (out, _) = text(&mfq(&[&["simulate", "models/jsq-d1.toml"][..], &b[..]].concat()));
    let line = out.lines().find(|l| l.trim_start().starts_with("P(loss)")).unwrap_or_else(|| panic!("{out}"));
    let v: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!((v - 0.8 / 1.8).abs() < 0.01, "{line}");
}
