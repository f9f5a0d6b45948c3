//! `mfq sweep` over anything (issue 19, point 3; issue 16, sweep parts): names, tables and model
//! files as swept values, facets, rounded grids, titles that describe the sweep, exit codes.
//! Every swept value is checked against a value the sweep did not produce: the JSQ(d) closed
//! form, a published value, or a separate `fixed-point` run of the same parameters.

mod common;
use common::{mfq, text, tmp_dir};
use serde_json::Value;

/// JSQ(d) mean-field occupancy `x_k = lambda^((d^k - 1)/(d - 1))` (Mitzenmacher, IEEE TPDS
/// 12(10), 2001, Theorem 3; Vvedenskaya, Dobrushin, Karpelevich, Probl. Inf. Transm. 32(1),
/// 1996): the mean queue length per server `sum_k x_k` and the mean response time (Little).
fn jsq_closed_form(lambda: f64, d: u32) -> (f64, f64) {
    let mut q = 0.0;
    for k in 1..200 {
        let e = if d == 1 { k as f64 } else { (f64::from(d).powi(k) - 1.0) / f64::from(d - 1) };
        let x = lambda.powf(e);
        q += x;
        if x < 1e-18 {
            break;
        }
    }
    (q, q / lambda)
}

/// The JSON report of a run (stdout).
fn json(args: &[&str]) -> (Option<i32>, Value, String) {
    let o = mfq(args);
    let (stdout, stderr) = text(&o);
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (o.status.code(), v, stderr)
}

fn solved(p: &Value, key: &str) -> f64 {
    assert_eq!(p["status"]["status"], "solved", "{p}");
    p["status"][key].as_f64().unwrap_or_else(|| panic!("{key} in {p}"))
}

/// A sweep over the discipline (a name) of a redundancy pair approximation equals separate
/// `fixed-point` runs of each discipline; FCFS is near Gardner et al.'s exact FCFS limit
/// 0.772589 mean copies at lambda = 0.5 (Oper. Res. 2017, as models/redundancy-fcfs-pair.toml).
#[test]
fn a_discipline_sweep_equals_separate_runs() {
    let out = tmp_dir("disciplines");
    let base = ["--set", "truncation.levels=8", "--set", "truncation.tol=1e-3"];
    let mut args = vec!["sweep", "models/redundancy-ps-pair.toml", "--set", "lambda=0.5,0.6", "--set", "discipline=ps,fcfs"];
    args.extend(base);
    args.extend(["--json", "--out", out.to_str().unwrap()]);
    let (code, r, stderr) = json(&args);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(r["curve_axis"]["labels"], serde_json::json!(["ps", "fcfs"]));
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for p in points {
        let lambda = format!("lambda={}", p["x"]);
        let discipline = ["ps", "fcfs"][p["curve"].as_f64().unwrap() as usize];
        let mut a = vec!["fixed-point", "models/redundancy-ps-pair.toml", "--set", &lambda];
        let d = format!("discipline={discipline}");
        a.extend(["--set", &d]);
        a.extend(base);
        a.push("--json");
        let (code, fp, stderr) = json(&a);
        assert_eq!(code, Some(0), "{stderr}");
        let (swept, alone) = (solved(p, "mean_queue_length"), fp["mean_queue_length"].as_f64().unwrap());
        assert!((swept - alone).abs() < 1e-9 * alone, "{discipline} at {lambda}: sweep {swept}, fixed-point {alone}");
        if discipline == "fcfs" && p["x"] == 0.5 {
            assert!((swept - 0.772589).abs() < 2e-3, "FCFS pair {swept} against Gardner's 0.772589");
        }
    }
    // the CSV names the values, and the plot has one curve per discipline
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert!(csv.starts_with("lambda,discipline,status,") && csv.contains("\n0.6,fcfs,solved,"), "{csv}");
    let svg = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
    assert!(svg.contains("discipline = fcfs") && svg.contains("discipline = ps"), "legend");
}

/// `job_size.law=exponential,h2` (a table's law): the exponential point is JSQ(2)'s closed form
/// (the file's H2 keys are not handed to it), the H2 point the file's own law: E[R] = 6.334997
/// (models/sq2-h2.toml). The same with inline tables, where the H2 keys are given.
#[test]
fn a_job_size_law_sweep_equals_the_closed_form_and_the_file() {
    let (_, t) = jsq_closed_form(0.9, 2);
    for law in ["job_size.law=exponential,h2", "job_size={law = \"exponential\"},{law = \"h2\", scv = 9.0, f = 0.5}"] {
        let out = tmp_dir("laws");
        let (code, r, stderr) =
            json(&["sweep", "models/sq2-h2.toml", "--set", "lambda=0.5,0.9", "--set", law, "--json", "--out", out.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{law}: {stderr}");
        let at = |x: f64, c: f64| r["points"].as_array().unwrap().iter().find(|p| p["x"] == x && p["curve"] == c).cloned().unwrap();
        let exp = solved(&at(0.9, 0.0), "mean_response_time");
        assert!((exp - t).abs() < 1e-9 * t, "{law}: exponential {exp}, closed form {t}");
        let (_, t5) = jsq_closed_form(0.5, 2);
        assert!((solved(&at(0.5, 0.0), "mean_response_time") - t5).abs() < 1e-9 * t5);
        let h2 = solved(&at(0.9, 1.0), "mean_response_time");
        assert!((h2 - 6.334997).abs() < 2e-6, "{law}: h2 {h2}, published 6.334997");
    }
    // a law that does not exist: refused before the sweep, naming the key and the allowed laws
    let o = mfq(&["sweep", "models/sq2-h2.toml", "--set", "lambda=0.5,0.9", "--set", "job_size.law=exponential,gamma"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--set job_size.law: the value gamma is not allowed") && stderr.contains("`erlang`"), "{stderr}");
    // a law without its own keys: refused up front, naming the missing key
    let o = mfq(&["sweep", "models/sq2-h2.toml", "--set", "lambda=0.5,0.9", "--set", "job_size.law=h2,erlang"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the value erlang is not allowed") && stderr.contains("missing field `k`"), "{stderr}");
    // a file with an exponential law: `h2` starts from an empty h2 table (the file's `mean` is
    // not handed to it), an invalid point whose message names the table in words (no Rust Debug)
    let dir = tmp_dir("exp-law");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.toml");
    std::fs::write(&file, "[model]\nkind = \"jsq-ph\"\nlambda = 0.5\nd = 2\n[model.job_size]\nlaw = \"exponential\"\nmean = 1.0\n")
        .unwrap();
    let o = mfq(&[
        "sweep",
        file.to_str().unwrap(),
        "--set",
        "lambda=0.5,0.6",
        "--set",
        "job_size.law=exponential,h2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("model.job_size = law h2 without parameters is not allowed") && !stderr.contains("None"), "{stderr}");
    let csv = std::fs::read_to_string(dir.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| l.contains(",exponential,solved,")).count(), 2, "{csv}");
    // a value out of range is an invalid point (exit code 2, named), the others computed
    let out = tmp_dir("scv");
    let law = "job_size={law = \"h2\", scv = 0.5},{law = \"h2\", scv = 4}";
    let o = mfq(&["sweep", "models/sq2-h2.toml", "--set", "lambda=0.5,0.9", "--set", law, "--out", out.to_str().unwrap()]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("2 of 4 sweep points") && stderr.contains("scv"), "{stderr}");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| l.contains("scv = 4}\",solved,")).count(), 2, "{csv}");
}

/// Several model files, one curve each (`--model`), and a third swept parameter as facets
/// (one plot per value): every point is the JSQ(d) closed form of its own d.
#[test]
fn model_files_are_curves_and_a_third_parameter_gives_facets() {
    let out = tmp_dir("facets");
    let args = [
        "sweep",
        "models/jsq-d2.toml",
        "--model",
        "models/jsq-d3.toml",
        "--set",
        "lambda=0.1:0.9:9",
        "--set",
        "truncation.tol=1e-10,1e-12",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ];
    let (code, r, stderr) = json(&args);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(r["curve_axis"]["labels"], serde_json::json!(["jsq-d2", "jsq-d3"]));
    assert_eq!(r["facet_axes"][0]["name"], "truncation.tol");
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 36);
    for p in points {
        let (lambda, d) = (p["x"].as_f64().unwrap(), 2 + p["curve"].as_f64().unwrap() as u32);
        let tol = p["facets"][0].as_f64().unwrap();
        let (q, _) = jsq_closed_form(lambda, d);
        let got = solved(p, "mean_queue_length");
        assert!((got - q).abs() < 10.0 * tol * q.max(1.0), "d = {d}, lambda = {lambda}, tol {tol}: {got} vs {q}");
    }
    // the grid is the decimal one (0.1 + 2 * 0.1 would be 0.30000000000000004) and stops at 0.9
    let xs: Vec<f64> = points.iter().take(9).map(|p| p["x"].as_f64().unwrap()).collect();
    assert_eq!(xs, vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
    for f in ["sweep-truncation.tol=0.0000000001.svg", "sweep-truncation.tol=0.000000000001.svg"] {
        let svg = std::fs::read_to_string(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        // the title describes the sweep, not the files' single point (lambda = 0.9)
        assert!(svg.contains("2 model files: lambda = 0.1 to 0.9 (9 points)") && svg.contains("jsq-d3"), "{f}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{f}");
    }
    assert!(!out.join("sweep.svg").exists());
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert!(csv.starts_with("lambda,model,truncation.tol,status,") && csv.contains("\n0.3,jsq-d3,0.000000000001,solved,"), "{csv}");
}

/// The title of a one-file sweep names the kind and the swept ranges; a point with invalid
/// input exits 2 after the CSV is written, an unstable point is data (exit 0).
#[test]
fn titles_describe_the_sweep_and_exit_codes_tell_invalid_from_unstable() {
    let out = tmp_dir("titles");
    let o = mfq(&["sweep", "models/jsq-d2.toml", "--set", "lambda=0.5:0.95:10", "--set", "d=2,3", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let svg = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
    // the text of the SVG's <text> elements, joined: a long title wraps over two of them
    let words: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>').and_then(|(_, r)| r.split_once("</text>")).map(|(w, _)| w.trim()))
        .collect();
    // range wording for the grid, a list as a set (issue 19: "d = 1 to 20 (5 points)" was wrong)
    assert!(words.join(" ").contains("JSQ(d) / power-of-d: lambda = 0.5 to 0.95 (10 points); d in {2, 3}"), "title: {words:?}");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let xs: Vec<&str> = csv.lines().skip(1).take(10).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(xs, ["0.5", "0.55", "0.6", "0.65", "0.7", "0.75", "0.8", "0.85", "0.9", "0.95"]);
    let o = mfq(&["sweep", "models/jsq-d2.toml", "--set", "lambda=0.5,1.5", "--set", "d=2,3", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "unstable points are data: {}", text(&o).1);
    let o = mfq(&["sweep", "models/jsq-d2.toml", "--set", "lambda=0.5,0.6", "--set", "d=0,2", "--out", out.to_str().unwrap()]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("2 of 4 sweep points have invalid parameters") && stderr.contains("d = 0"), "{stderr}");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| l.contains(",solved,")).count(), 2, "{csv}");
}

/// A `curves` figure: per-curve model files and settings; each curve equals the closed form of
/// its own d.
#[test]
fn a_curves_figure_has_per_curve_settings() {
    let dir = tmp_dir("curves");
    std::fs::create_dir_all(&dir).unwrap();
    let fig = r#"kind = "curves"
title = "JSQ(d) by d"
reproduces = "new"
description = "test"
model = "models/jsq-d2.toml"
set = ["lambda=0.5:0.9:5"]
y = "mean_queue_length"
x_label = "lambda"

[[curves]]
label = "random routing"
set = ["d=1"]

[[curves]]
label = "JSQ(2)"

[[curves]]
label = "JSQ(3) at tol 1e-10"
model = "models/jsq-d3.toml"
set = ["truncation.tol=1e-10"]
"#;
    std::fs::write(dir.join("t.toml"), fig).unwrap();
    let o = mfq(&["figure", "t", "--figures", dir.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let csv = std::fs::read_to_string(dir.join("t.csv")).unwrap();
    assert!(csv.starts_with("lambda,curve,status,"), "{csv}");
    let mut n = 0;
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let d = match f[1] {
            "random routing" => 1,
            "JSQ(2)" => 2,
            _ => 3,
        };
        let (q, _) = jsq_closed_form(f[0].parse().unwrap(), d);
        let got: f64 = f[4].parse().unwrap();
        assert!((got - q).abs() < 1e-8 * q.max(1.0), "{line}: closed form {q}");
        n += 1;
    }
    assert_eq!(n, 15);
    let svg = std::fs::read_to_string(dir.join("t.svg")).unwrap();
    assert!(svg.contains("random routing") && svg.contains("JSQ(3) at tol 1e-10"));
    // a curve whose own set is a sweep is refused, naming the curve
    std::fs::write(dir.join("u.toml"), fig.replace("set = [\"d=1\"]", "set = [\"d=1,2\"]")).unwrap();
    let o = mfq(&["figure", "u", "--figures", dir.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("curve 'random routing': set d=1,2 is a sweep"), "{}", text(&o).1);
}

/// `--max-seconds` over a sweep with a categorical axis: the finished points are kept, the
/// JSON report says `partial`, `sweep-partial.csv` is written, no complete `sweep.csv`; exit 4
/// within the limit plus a second. (The LCFS limit takes a few hundredths of a second at
/// lambda = 0.3 and about a tenth from 0.9 to 0.99 on the graded grids: the 31 points take
/// about 3 s of CPU, so a limit of 1 s stops the sweep after the first, even on a loaded
/// machine, and before the last.)
#[test]
fn a_sweep_stopped_by_its_deadline_keeps_the_finished_points_in_csv_and_json() {
    let out = tmp_dir("partial");
    let started = std::time::Instant::now();
    let lambdas = std::iter::once("0.3".to_string())
        .chain((0..30).map(|i| format!("{:.3}", 0.9 + 0.003 * f64::from(i))))
        .collect::<Vec<_>>()
        .join(",");
    let args = [
        "sweep",
        "models/redundancy-lcfs-limit.toml",
        "--set",
        &format!("lambda={lambdas}"),
        "--max-seconds",
        "1",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ];
    let (code, r, stderr) = json(&args);
    let took = started.elapsed().as_secs_f64();
    assert_eq!(code, Some(4), "{stderr}");
    assert!(took < 3.0, "took {took} s");
    let partial = r["partial"].as_str().unwrap();
    let finished: usize = partial
        .strip_prefix("stopped at the wall-clock limit --max-seconds 1: ")
        .and_then(|rest| rest.strip_suffix(" of 31 points finished"))
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("{r}"));
    assert!((1..31).contains(&finished), "{r}");
    assert_eq!(r["points"].as_array().unwrap().len(), finished);
    assert!(solved(&r["points"][0], "mean_queue_length") > 0.0);
    let csv = std::fs::read_to_string(out.join("sweep-partial.csv")).unwrap();
    assert!(csv.starts_with("# partial: ") && csv.contains("\n0.3,,solved,"), "{csv}");
    assert!(!out.join("sweep.csv").exists() && !out.join("sweep.svg").exists());
}

/// `{name}` in `--title` is filled in on sweeps too: fixed parameters by their value, swept
/// ones by their range.
#[test]
fn title_placeholders_are_filled_in_on_sweeps() {
    let out = tmp_dir("placeholders");
    let o = mfq(&[
        "sweep",
        "models/jsq-d2.toml",
        "--set",
        "lambda=0.5:0.9:5",
        "--set",
        "truncation.tol=1e-10",
        "--title",
        "JSQ({d}), lambda {lambda}",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let svg = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
    assert!(svg.contains("JSQ(2), lambda 0.5 to 0.9") && !svg.contains("{d}"), "title not filled in");
}

/// The text nodes of an SVG (which must parse as XML) and its `<mfq:note text=...>` entries.
fn svg_texts(path: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let s = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = roxmltree::Document::parse(&s).unwrap();
    let texts = doc.descendants().filter(|n| n.tag_name().name() == "text").map(|n| n.text().unwrap_or("").trim().to_string()).collect();
    let notes = doc.descendants().filter(|n| n.tag_name().name() == "note").filter_map(|n| n.attribute("text").map(String::from)).collect();
    (texts, notes)
}

/// Issue 19, defect 1: unstable and invalid points are left out of the curves and the legend
/// says where; the CSV's status column has each of them. JSQ(d) is stable exactly for
/// lambda < 1 (Mitzenmacher 2001): lambda = 1, 1.05, 1.1 are the unstable points of each curve.
#[test]
fn omitted_points_are_named_in_the_legend_and_the_csv() {
    let out = tmp_dir("omitted");
    let o = mfq(&["sweep", "models/jsq-d2.toml", "--set", "lambda=0.5:1.1:13", "--set", "d=2,3", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let unstable: Vec<f64> =
        csv.lines().filter(|l| l.contains(",unstable,")).map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
    assert_eq!(unstable.len(), 6, "{csv}");
    assert!(unstable.iter().all(|x| *x >= 1.0), "{unstable:?}");
    let (texts, notes) = svg_texts(&out.join("sweep.svg"));
    assert_eq!(notes, ["every curve: unstable for lambda >= 1 (not drawn)"]);
    // drawn in the legend, broken between words where the plot is narrow
    assert!(texts.join(" ").contains("every curve: unstable for lambda >= 1 (not drawn)"), "{texts:?}");
    // an invalid curve (d = 0) is named with its curve
    let o = mfq(&["sweep", "models/jsq-d2.toml", "--set", "lambda=0.5:0.9:5", "--set", "d=0,2", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
    let (_, notes) = svg_texts(&out.join("sweep.svg"));
    assert_eq!(notes, ["d = 0: invalid for lambda >= 0.5"]);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().filter(|l| l.contains(",0,invalid,")).count(), 5, "{csv}");
}

/// Issue 19, defect 2: `--y prob-wait` on a model without a probability of waiting (the
/// redundancy pair approximation) is bad input naming `--y` and the observables it has.
#[test]
fn an_observable_the_model_lacks_is_named() {
    let out = tmp_dir("no-observable");
    let o = mfq(&[
        "sweep",
        "models/redundancy-ps-pair.toml",
        "--set",
        "lambda=0.3,0.4",
        "--set",
        "truncation.levels=6",
        "--set",
        "truncation.tol=1e-2",
        "--y",
        "prob-wait",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = text(&o).1;
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--y prob-wait: models/redundancy-ps-pair.toml does not report the probability of waiting"), "{stderr}");
    assert!(stderr.contains("allowed: mean-response-time, mean-queue-length, throughput, loss-probability"), "{stderr}");
    assert!(!stderr.contains("all unstable"), "{stderr}");
}

/// Issue 19, defects 3, 12, 13: metadata is not swept, a file is swept once, a numeric key
/// takes numbers only, and a grid never repeats a point.
#[test]
fn metadata_duplicate_files_non_numbers_and_degenerate_grids_are_refused() {
    let out = tmp_dir("refused");
    let run = |extra: &[&str]| {
        let mut a = vec!["sweep", "models/jsq-d2.toml"];
        a.extend(extra);
        a.extend(["--out", out.to_str().unwrap()]);
        let o = mfq(&a);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {:?}", text(&o));
        assert!(!out.join("sweep.csv").exists(), "{extra:?}: nothing is swept");
        text(&o).1
    };
    let e = run(&["--set", "title=a,b", "--set", "lambda=0.5,0.6"]);
    assert!(e.contains("--set title: is the file's description (text), not a parameter"), "{e}");
    let e = run(&["--set", "lambda=0.5,0.6", "--set", "source=a,b"]);
    assert!(e.contains("--set source: is the file's description"), "{e}");
    let e = run(&["--model", "models/../models/jsq-d2.toml", "--set", "lambda=0.5,0.6"]);
    assert!(e.contains("--model models/../models/jsq-d2.toml: the same model file as models/jsq-d2.toml"), "{e}");
    let e = run(&["--set", "lambda=nan,0.5"]);
    assert!(e.contains("--set lambda: the value nan is not allowed: model.lambda takes a finite number"), "{e}");
    let e = run(&["--set", "lambda=0.5,inf"]);
    assert!(e.contains("the value inf is not allowed"), "{e}");
    let e = run(&["--set", "lambda=0.5:0.5:3"]);
    assert!(e.contains("--set lambda: 0.5:0.5:3 has start = end") && e.contains("write 0.5:3:6"), "{e}");
}

/// Issue 19, defect 4: an x axis of integers (d) gets integer ticks only.
#[test]
fn an_integer_x_axis_has_integer_ticks() {
    let out = tmp_dir("integer-x");
    let o = mfq(&["sweep", "models/jsq-d2.toml", "--set", "d=1,2,3,4,5,6", "--set", "lambda=0.7,0.9", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let s = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
    let doc = roxmltree::Document::parse(&s).unwrap();
    // x tick labels: the numbers drawn centred (y tick labels are right-aligned)
    let ticks: Vec<f64> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "text" && n.attribute("text-anchor") == Some("middle"))
        .filter_map(|n| n.text().and_then(|t| t.trim().parse::<f64>().ok()))
        .collect();
    assert!(ticks.len() >= 3, "{ticks:?}");
    assert!(ticks.iter().all(|v| v.fract() == 0.0 && (1.0..=6.0).contains(v)), "{ticks:?}");
}

/// Issue 19, defect 10: with the automatic truncation (an infinite buffer) JSQ loses nothing
/// (the loss at the truncation level, ~1e-30, is the truncation's); with a fixed K (a finite
/// buffer) the loss is the system's. For d = 1 the finite-buffer system is M/M/1/K:
/// P(loss) = (1 - rho) rho^K / (1 - rho^(K+1)), 0.0729 / 0.3439 at rho = 0.9, K = 3.
#[test]
fn truncation_losses_are_not_loss_probabilities() {
    let out = tmp_dir("loss");
    let (code, r, stderr) = json(&["sweep", "models/jsq-d2.toml", "--set", "lambda=0.5,0.9", "--json", "--out", out.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{stderr}");
    for p in r["points"].as_array().unwrap() {
        assert_eq!(solved(p, "loss_probability"), 0.0, "{p}");
        assert_eq!(solved(p, "throughput"), p["x"].as_f64().unwrap(), "{p}");
    }
    let (code, r, stderr) = json(&[
        "sweep",
        "models/jsq-d2.toml",
        "--set",
        "lambda=0.5,0.9",
        "--set",
        "d=1",
        "--set",
        "truncation.levels=3",
        "--set",
        "truncation.tol=0.5",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    for p in r["points"].as_array().unwrap() {
        let rho = p["x"].as_f64().unwrap();
        let mm1k = (1.0 - rho) * rho.powi(3) / (1.0 - rho.powi(4));
        let loss = solved(p, "loss_probability");
        assert!((loss - mm1k).abs() < 1e-9, "rho = {rho}: {loss} against M/M/1/3's {mm1k}");
    }
}

/// Models with a stability region but no queue-length model give each point its verdict
/// (new-user try of issue 16: stable points were `invalid`, exit 2): redundancy-2 with
/// identical copies under FCFS is stable iff lambda < 0.81669 (Hellemans' thesis, as
/// models/redundancy-identical-ps-unstable.toml's docs page), and for unequal speeds the
/// boundary is unknown below the local capacity bound 0.625 (speeds 3.5, 0.5 x 5, d = 2: the
/// jobs whose copies both go to the five slow servers; docs/models/redundancy.md); k-of-n with k = 1 is
/// stable iff lambda < 1 (central buffer, docs/models/k-of-n.md).
#[test]
fn models_with_only_a_stability_region_give_a_verdict_per_point() {
    let out = tmp_dir("verdicts");
    let dir = out.to_str().unwrap();
    let (code, v, stderr) = json(&[
        "sweep",
        "models/redundancy-identical-ps-unstable.toml",
        "--set",
        "discipline=fcfs",
        "--set",
        "lambda=0.6,0.81,0.82,0.9",
        "--json",
        "--out",
        dir,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let status: Vec<&str> = v["points"].as_array().unwrap().iter().map(|p| p["status"]["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["stable", "stable", "unstable", "unstable"], "{v}");
    assert!(v["points"][0]["status"]["reason"].as_str().unwrap().contains("lambda_max = 0.816694"), "{v}");
    let o = mfq(&["sweep", "models/redundancy-identical-speeds.toml", "--set", "lambda=0.5,0.99,1.0", "--out", dir]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("3 points: 0 solved, 2 unstable, 0 failed, 0 invalid, 0 stable, 1 stability unknown"), "{stdout}");
    // verdicts only: the summary line says why there is no plot, and nothing goes to stderr
    assert!(stdout.contains("sweep.csv (no plot: the model has no queue-length model, only a stability region"), "{stdout}");
    assert!(stderr.is_empty(), "{stderr}");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let status: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').nth(2).unwrap()).collect();
    assert_eq!(status, ["stability-unknown", "unstable", "unstable"], "{csv}");
    let (code, v, stderr) = json(&["sweep", "models/k-of-n.toml", "--set", "lambda=0.5,0.999,1.001", "--json", "--out", dir]);
    assert_eq!(code, Some(0), "{stderr}");
    let status: Vec<&str> = v["points"].as_array().unwrap().iter().map(|p| p["status"]["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["stable", "stable", "unstable"], "{v}");
}

/// Swept values of 1e15 and more are written in exponent form, so that the model file reads
/// them as numbers (new-user try: `lambda=0.5,1e20` marked the second point `invalid`, "invalid
/// type: string", where `fixed-point` says unstable: JSQ(2) is stable iff lambda < 1).
#[test]
fn huge_swept_values_are_numbers() {
    let out = tmp_dir("huge");
    let o = mfq(&["sweep", "models/jsq-d2.toml", "--set", "lambda=0.5,1e20", "--out", out.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let rows: Vec<(&str, &str)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0], f[2])
        })
        .collect();
    assert_eq!(rows, [("0.5", "solved"), ("1e20", "unstable")], "{csv}");
}
