//! End-to-end tests of the `mfq` binary: the main job, JSON keys, exit codes and the messages
//! for bad input (one clear message naming the field, the value and what is allowed; never a
//! panic, never a NaN printed).

mod common;
use common::{mfq, root, text, tmp_dir};
use std::process::Command;

#[test]
fn report_writes_the_main_job() {
    let out = tmp_dir("report");
    let o = mfq(&["report", "models/jsq-d2.toml", "--out", out.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("mean response time  2.614057"), "{stdout}");
    for f in ["report.json", "tail.csv", "tail.svg", "convergence.svg"] {
        let p = out.join(f);
        assert!(p.metadata().map(|m| m.len() > 100).unwrap_or(false), "{f} missing");
    }
    let svg = std::fs::read_to_string(out.join("tail.svg")).unwrap();
    assert!(svg.contains("P(Q &gt;= k)") || svg.contains("P(Q >= k)"), "tail axis label");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["status"]["status"], "converged");
    // no temporary files left behind
    assert!(std::fs::read_dir(&out).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp")));
}

/// A large model (the PS triplet, 13 824 states): `report` gives the fixed point and the tail,
/// and says why it skipped the transient and the attraction check instead of running them for
/// minutes.
#[test]
fn report_on_a_large_model_skips_the_dynamics_and_says_why() {
    let out = tmp_dir("report-large");
    let o = mfq(&["report", "models/redundancy-ps-triplet.toml", "--json", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in ["transient", "attraction"] {
        let why = v[key]["skipped"].as_str().unwrap_or_default();
        assert!(why.contains("13824 states") && why.contains("mfq check"), "{key}: {why}");
    }
    // the triplet's mean copies per server (tests/redundancy.rs: 3.38910 at lambda = 0.9)
    assert!((v["mean_queue_length"].as_f64().unwrap() - 3.38910).abs() < 1e-5, "{}", v["mean_queue_length"]);
    for f in ["report.json", "tail.csv", "tail.svg"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    assert!(!out.join("convergence.svg").exists());
}

/// Identical copies under FCFS on N servers: `simulate` gives the finite-N verdict of the
/// saturated system (d = 2, N = 4: lbar/K = 0.71937 from the exact chain; the reference
/// simulation of docs/references.md: 0.71936 +- 0.00020), below the N -> inf lambda_max 0.81669.
#[test]
fn simulate_gives_the_finite_n_verdict_for_identical_copies_under_fcfs() {
    let base = ["simulate", "models/redundancy-fcfs-pair.toml", "--set", "copies=identical", "--servers", "4", "--set"];
    let o = mfq(&[&base[..], &["lambda=0.7"]].concat());
    let (stdout, stderr) = text(&o);
    assert!(o.status.success() && stdout.contains("stable at lambda = 0.7") && stdout.contains("0.7193"), "{stdout}{stderr}");
    let o = mfq(&[&base[..], &["lambda=0.75"]].concat());
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(3), "{stdout}{stderr}");
    assert!(stderr.contains("unstable at lambda = 0.75") && stderr.contains("0.7193"), "{stderr}");
}

/// The population process's text table prints the first 20 state entries and says how many
/// more there are and where they are (it dropped them silently: the generic M/M/1 at
/// lambda = 0.9 has 253 entries at N = 100, `--json` all of them).
#[test]
fn simulate_of_a_generic_model_says_how_many_entries_it_does_not_print() {
    let args = ["simulate", "models/generic/mm1.toml", "--servers", "100", "--time", "50", "--warmup", "5"];
    let o = mfq(&args);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    let o = mfq(&[&args[..], &["--json"]].concat());
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).expect("JSON");
    let n = v["mean"].as_array().map(|a| a.len()).expect("the JSON's mean: one estimate per state entry");
    assert!(n > 20, "{n} entries");
    let line = stdout.lines().find(|l| l.contains("entries more")).unwrap_or_else(|| panic!("no 'entries more' line:\n{stdout}"));
    assert!(line.contains(&format!("... {} entries more (all {n} in --json", n - 20)), "{line} (JSON: {n} entries)");
    assert_eq!(stdout.lines().filter(|l| l.trim_start().starts_with("x_")).count(), 20, "{stdout}");
}

/// `simulate --json` of identical copies: `lambda_max` as data with its interval and method,
/// and the finite system on both sides of it (d = 2, N = 4, exponential sizes: exact chain
/// 0.719369): bounded at 0.65 (growth 0 within its interval), growing at about
/// lambda - lambda_max at 0.80 (exit code 3 after the JSON). Deterministic sizes of mean 1
/// take the simulated route and give an interval; a bad law names its field.
#[test]
fn simulate_identical_copies_reports_lambda_max_and_the_finite_system() {
    let base = ["simulate", "models/redundancy-fcfs-pair.toml", "--set", "copies=identical", "--servers", "4", "--json"];
    let run = |extra: &[&str]| {
        let o = mfq(&[&base[..], &["--time", "20000", "--warmup", "1000", "--replications", "2"], extra].concat());
        let (out, err) = text(&o);
        (o.status.code(), serde_json::from_str::<serde_json::Value>(&out).unwrap_or_default(), err)
    };
    let (code, v, err) = run(&["--set", "lambda=0.65"]);
    assert_eq!(code, Some(0), "{v} {err}");
    assert_eq!(v["lambda_max"]["method"], "exact-chain", "{v}");
    assert!((v["lambda_max"]["value"].as_f64().unwrap() - 0.719369).abs() < 1e-5, "{v}");
    let g = &v["finite_system"]["growth_per_server"];
    assert!(g["mean"].as_f64().unwrap().abs() < 3.0 * g["half_width"].as_f64().unwrap() + 1e-3, "{v}");
    let (code, v, _) = run(&["--set", "lambda=0.80"]);
    assert_eq!(code, Some(3), "{v}");
    let g = v["finite_system"]["growth_per_server"]["mean"].as_f64().unwrap();
    assert!((g - (0.80 - 0.719369)).abs() < 0.02, "{v}");
    let (code, v, err) = run(&["--set", "lambda=0.5", "--set", "job_size={law=\"deterministic\", mean=1.0}"]);
    assert_eq!(code, Some(0), "{v} {err}");
    assert_eq!(v["lambda_max"]["method"], "simulated", "{v}");
    assert!(v["lambda_max"]["half_width"].as_f64().unwrap() > 0.0, "{v}");
    let o = mfq(&[&base[..], &["--set", "job_size={law=\"deterministic\", mean=-1.0}"]].concat());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("model.job_size.mean") && err.contains("> 0"), "{err}");
    let o = mfq(&[&base[..], &["--set", "speeds=[1.0, 2.0]"]].concat());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("servers = 4") && err.contains("model.speeds entries, 2"), "{err}");
    let o = mfq(&[&base[..], &["--set", "speeds=[1.0, -2.0, 1.0, 1.0]"]].concat());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("model.speeds[1]") && err.contains("> 0"), "{err}");
}

/// `report --json` on a fixed point stopped by `--max-seconds`: one document with what the
/// solver reached and the error object (as `fixed-point --json`), exit code 4, no file.
#[test]
fn report_json_on_a_stopped_fixed_point_has_the_result_and_the_error() {
    let out = tmp_dir("report-stopped");
    let o = mfq(&[
        "report",
        "models/redundancy-ps-triplet.toml",
        "--set",
        "truncation.levels=40",
        // (1 s: building the model at K = 40 takes a few tenths of a second on a loaded machine;
        // the solve about 7 s. At K = 30 the solve got down to 1-1.7 s and once finished
        // within the limit)
        "--max-seconds",
        "1",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(4), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"]["status"], "time-limit", "{}", v["status"]);
    assert_eq!(v["error"]["code"], 4);
    assert!(v["residual"].as_f64().is_some_and(f64::is_finite));
    assert!(!out.exists());
}

#[test]
fn fixed_point_json_has_the_documented_keys() {
    let o = mfq(&["fixed-point", "models/jsq-d2.toml", "--json", "--set", "lambda=0.5"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in ["x", "mean_queue_length", "mean_response_time", "residual", "truncation", "status"] {
        assert!(v.get(key).is_some(), "missing key {key}");
    }
    // JSQ(2) at lambda = 0.5: T = 1.265686 (closed form, Mitzenmacher 2001)
    assert!((v["mean_response_time"].as_f64().unwrap() - 1.265686).abs() < 1e-6);
    assert!((v["x"][1].as_f64().unwrap() - 0.125).abs() < 1e-12);
}

/// `report` writes its files as a set: when one cannot be written, none is.
#[test]
fn report_writes_all_of_its_files_or_none() {
    let out = tmp_dir("report-set");
    std::fs::create_dir_all(out.join("tail.svg").join("blocker")).unwrap();
    let o = mfq(&["report", "models/jsq-d1.toml", "--out", out.to_str().unwrap()]);
    let (_, stderr) = text(&o);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr.contains("tail.svg") && stderr.contains("no file of the set"), "{stderr}");
    for f in ["report.json", "tail.csv", "convergence.svg", "attraction.svg"] {
        assert!(!out.join(f).exists(), "{f} written");
    }
    let stray: Vec<_> =
        std::fs::read_dir(&out).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().ends_with(".tmp")).collect();
    assert!(stray.is_empty(), "temporary files left: {stray:?}");
}

#[test]
fn every_bundled_model_file_solves() {
    for entry in std::fs::read_dir(root().join("models")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let o = mfq(&["fixed-point", &format!("models/{name}")]);
            let (stdout, stderr) = text(&o);
            assert!(!stderr.contains("panicked") && !stdout.contains("NaN"), "{name}: {stdout}{stderr}");
            if name.contains("unstable") {
                assert_eq!(o.status.code(), Some(3), "{name}: {stderr}");
            } else {
                assert!(o.status.success(), "{name}: {stdout}{stderr}");
            }
        }
    }
}

/// (arguments, expected exit code, fragments the message must contain)
const BAD: &[(&[&str], i32, &[&str])] = &[
    (&["fixed-point", "models/jsq-d2.toml", "--set", "lambda=0"], 2, &["model.lambda = 0", "> 0"]),
    (&["fixed-point", "models/jsq-d2.toml", "--set", "lambda=-0.3"], 2, &["model.lambda = -0.3"]),
    (&["fixed-point", "models/jsq-d2.toml", "--set", "lambda=1"], 3, &["lambda = 1", "unstable", "lambda < 1"]),
    (&["fixed-point", "models/jsq-d2.toml", "--set", "lambda=1.5"], 3, &["lambda = 1.5", "unstable"]),
    (&["fixed-point", "models/jsq-d2.toml", "--set", "d=0"], 2, &["model.d = 0", "an integer in [1, "]),
    (&["fixed-point", "models/pod-errors-li.toml", "--set", "eps=1.5"], 2, &["model.eps = 1.5", "[0, 1]"]),
    (&["fixed-point", "models/pod-errors-li.toml", "--set", "eps=-0.1"], 2, &["model.eps = -0.1"]),
    (&["fixed-point", "models/pod-errors-ld.toml", "--set", "g=-1"], 2, &["--set g=-1", "-1", "an integer >= 0"]),
    (&["fixed-point", "models/jsq-d2.toml", "--set", "lambda=1e-400"], 2, &["--set lambda", "1e-400", "read as 0"]),
    (&["fixed-point", "models/jsq-d2.toml", "--set", "kind=nope"], 2, &["nope", "jsq"]),
    (&["fixed-point", "models/jsq-d2.toml", "--set", "bogus=1"], 2, &["bogus"]),
    (&["fixed-point", "models/jsq-d2.toml", "--set", "truncation.levels=4"], 2, &["truncation.levels = 4", "too small"]),
    (&["fixed-point", "models/jsq-d2.toml", "--set", "truncation.tol=0"], 2, &["truncation.tol = 0"]),
    (&["fixed-point", "models/jsq-d2.toml", "--set", "lambda"], 2, &["NAME=VALUE"]),
    (&["fixed-point", "models/pod-errors-li-unstable.toml"], 3, &["unstable", "1/(eps d)"]),
    (&["fixed-point", "no/such/file.toml"], 2, &["no/such/file.toml"]),
    (&["solve", "models/jsq-d2.toml", "--t-end", "-5"], 2, &["--t-end -5"]),
    (&["solve", "models/jsq-d2.toml", "--x0", "0.5,abc"], 2, &["abc"]),
    (&["sweep", "models/jsq-d2.toml", "--set", "lambda=0.5:0.9:3", "--set", "lambda=0.5,0.6"], 2, &["lambda", "twice"]),
    (&["simulate", "models/pod-errors-li-unstable.toml", "--servers", "100"], 3, &["unstable", "1/(eps d)"]),
    (&["simulate", "models/jsq-d2.toml", "--servers", "100", "--batches", "100000000"], 2, &["batches"]),
    (&["solve", "models/jsq-d2.toml", "--levels", "100000000"], 2, &["--levels"]),
    // the LCFS limit has no ODE: no transient, no attraction check
    (&["solve", "models/redundancy-lcfs-limit.toml", "--set", "lambda=0.5"], 2, &["no transient", "no ODE"]),
    (&["check", "models/redundancy-lcfs-limit.toml", "--set", "lambda=0.5"], 2, &["nothing to check", "no ODE"]),
    (&["fixed-point", "models/jsq-d2.toml", "--max-seconds", "-1"], 2, &["max_seconds = -1"]),
    // a solve that cannot finish in the time given stops with exit code 4 and says why
    (
        &[
            "fixed-point",
            "models/jsq-d1.toml",
            "--set",
            "lambda=0.9999",
            "--set",
            "truncation.max_levels=1000000",
            "--max-seconds",
            "0.000001",
        ],
        4,
        &["wall-clock limit --max-seconds 0.000001"],
    ),
];

/// `--max-seconds` on runs that would take minutes or hours: each stops at the limit, says so
/// (text and `--json`), exits with code 4, writes no output file, and returns well within a
/// few seconds.
#[test]
fn max_seconds_stops_solve_check_and_simulate() {
    let cases: &[(&str, &[&str], &str)] = &[
        // the PS triplet at K = 30 (27 000 states, two ~3 s sparse factorisations; the M/M/1 at
        // lambda = 0.9999, K ~ 260 000, used to be slow enough but now solves in 0.2 s)
        (
            "fixed-point",
            &["fixed-point", "models/redundancy-ps-triplet.toml", "--set", "truncation.levels=30"],
            // (under load the limit may pass while the model is built: that message says so)
            "stopped at the wall-clock limit --max-seconds 0.3",
        ),
        // Dopri5 without its stiffness switch on K = 2000 at lambda = 0.999 up to t = 1e9
        (
            "solve",
            &["solve", "models/jsq-d2.toml", "--set", "lambda=0.999", "--levels", "2000", "--t-end", "1e9", "--method", "dopri5"],
            "the integration stopped",
        ),
        // 5000 runs of the checker up to t = 1e6 each (the cli fuzz target's slow unit, `check
        // models/jsq-d1.toml --max-seconds 1` taking 14 s under ASan, showed that the limit did
        // not reach the checker's runs)
        ("check", &["check", "models/jsq-d1.toml", "--starts", "5000", "--time-limit", "1e6"], "the check stopped"),
        // 10^5 servers over 10^6 time units (about 4e11 events)
        ("simulate", &["simulate", "models/jsq-d2.toml", "--servers", "100000", "--time", "1e6"], "the simulation stopped"),
        ("simulate-generic", &["simulate", "models/generic/sir.toml", "--servers", "100000", "--time", "1e6"], "the simulation stopped"),
    ];
    for (name, args, fragment) in cases {
        for json in [false, true] {
            let out = tmp_dir(&format!("max-seconds-{name}-{json}"));
            let mut a = args.to_vec();
            a.extend(["--max-seconds", "0.3", "--out", out.to_str().unwrap()]);
            if json {
                a.push("--json");
            }
            let started = std::time::Instant::now();
            let o = mfq(&a);
            let took = started.elapsed().as_secs_f64();
            let (stdout, stderr) = text(&o);
            assert_eq!(o.status.code(), Some(4), "{a:?}: {stdout}\n{stderr}");
            assert!(took < 3.0, "{a:?}: took {took} s");
            assert!(stderr.contains(fragment) && stderr.contains("--max-seconds"), "{a:?}: {stderr}");
            assert!(!out.exists(), "{a:?}: wrote {out:?}");
            if json {
                let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON document");
                assert_eq!(v["error"]["kind"], "no-convergence", "{a:?}: {v}");
                let status = if *name == "check" { &v["verdict"]["verdict"] } else { &v["status"]["status"] };
                let built = v["error"]["message"].as_str().is_some_and(|m| m.contains("before it finished"));
                assert!(status == "time-limit" || (built && status.is_null()), "{a:?}: {v}");
            } else {
                let said = ["wall-clock limit", "TIME LIMIT", "NOT converged: TimeLimit"];
                let built = stderr.contains("before it finished");
                assert!(built || said.iter().any(|s| stdout.contains(s)), "{a:?}: {stdout}");
            }
        }
    }
}

/// `--max-seconds 1e20` panicked (a Duration beyond u64 seconds): a limit too far away to
/// represent is no limit.
#[test]
fn huge_max_seconds_is_no_limit() {
    for cmd in ["fixed-point", "solve", "check", "simulate"] {
        let out = tmp_dir(&format!("huge-max-seconds-{cmd}"));
        let mut a = vec![cmd, "models/jsq-d2.toml", "--max-seconds", "1e20", "--out", out.to_str().unwrap()];
        if cmd == "simulate" {
            a.extend(["--servers", "100", "--time", "50", "--warmup", "5"]);
        }
        let o = mfq(&a);
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{a:?}: {stdout}\n{stderr}");
    }
}

#[test]
fn bad_input_gets_one_clear_message_and_a_nonzero_exit() {
    for (args, code, fragments) in BAD {
        let o = mfq(args);
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(*code), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stdout.contains("NaN"), "{args:?}: {stdout}");
        for f in *fragments {
            assert!(stderr.contains(f), "{args:?}: '{f}' not in {stderr}");
        }
    }
}

#[test]
fn bad_files_are_rejected_with_their_line() {
    let dir = tmp_dir("badfiles");
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        ("unknown-key.toml", "[model]\nkind = \"jsq\"\nlambda = 0.5\nd = 2\nspeed = 3\n", "unknown field `speed`"),
        ("unknown-model.toml", "[model]\nkind = \"jsq9\"\nlambda = 0.5\n", "jsq9"),
        ("malformed.toml", "[model\nkind = \"jsq\"\n", "TOML parse error"),
        ("negative-g.toml", "[model]\nkind = \"pod-ld\"\nlambda = 0.5\nd = 2\neps = 0.5\ng = -2\n", "-2"),
        ("missing.toml", "[model]\nkind = \"jsq\"\nd = 2\n", "missing field `lambda`"),
        ("top-level.toml", "lambda = 0.5\n[model]\nkind = \"jsq\"\nlambda = 0.5\nd = 2\n", "unknown field `lambda`"),
    ];
    for (name, body, fragment) in cases {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        let o = mfq(&["fixed-point", p.to_str().unwrap()]);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(fragment), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"));
    }
}

#[test]
fn json_errors_are_json_objects() {
    let o = mfq(&["fixed-point", "models/jsq-d2.toml", "--json", "--set", "lambda=2"]);
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "unstable");
    assert_eq!(v["error"]["code"], 3);
}

/// Fields of one CSV line (RFC 4180 quoting: a quoted field may hold commas).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

/// The pair approximation's state names hold commas (`P[0,0]`): `trajectory.csv` quotes them,
/// so that its header has as many fields as its rows (a new user's pandas read them shifted).
#[test]
fn trajectory_csv_quotes_state_names_with_commas() {
    let out = tmp_dir("solve-pair");
    let o = mfq(&["solve", "models/redundancy-ps-pair.toml", "--levels", "4", "--t-end", "1", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let csv = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
    let mut lines = csv.lines();
    let header = csv_fields(lines.next().unwrap());
    assert!(header.iter().any(|h| h.contains(',')), "{header:?}");
    for line in lines {
        assert_eq!(csv_fields(line).len(), header.len(), "{line}");
    }
}

#[test]
fn solve_and_tail_write_their_files() {
    let out = tmp_dir("solve");
    let o = mfq(&["solve", "models/jiq.toml", "--x0", "1,1,1", "--t-end", "2", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let csv = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
    // JIQ from x_1 = x_2 = x_3 = 1 at lambda = 0.9: x_1 stays pinned at 1 (sliding boundary)
    let last = csv.lines().last().unwrap();
    let x1: f64 = last.split(',').nth(1).unwrap().parse().unwrap();
    assert_eq!(x1, 1.0);
    assert!(out.join("trajectory.svg").exists());
    let o = mfq(&["tail", "models/pod-errors-ld.toml", "--out", out.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(out.join("tail.csv").exists() && out.join("tail.svg").exists());
}

#[test]
fn models_lists_every_builtin() {
    let o = mfq(&["models"]);
    let (stdout, _) = text(&o);
    for kind in ["jsq", "pod-li", "pod-ld", "jiq"] {
        assert!(stdout.contains(kind));
    }
    assert!(stdout.contains("Mitzenmacher"));
}

#[test]
fn simulate_and_compare_run_end_to_end() {
    let out = tmp_dir("compare");
    let o = mfq(&["simulate", "models/jsq-d2.toml", "--servers", "500", "--time", "300", "--warmup", "50", "--json"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let l = v["mean_queue_length"]["mean"].as_f64().unwrap();
    // mean field 2.352652 (closed form) + refined 3.99/N; short run: within 0.1
    assert!((l - 2.3607).abs() < 0.1, "{l}");
    let o =
        mfq(&["compare", "models/jsq-d2.toml", "--servers", "20,200", "--time", "200", "--warmup", "50", "--out", out.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("3.986427/N"), "{stdout}");
    assert!(out.join("compare.svg").exists() && out.join("compare.json").exists());
    let o = mfq(&["simulate", "models/jsq-d2.toml", "--servers", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("servers"));
}

#[test]
fn check_reports_the_verdict_and_report_includes_it() {
    let out = tmp_dir("check");
    let o = mfq(&["check", "models/opinion-stubborn.toml", "--json", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"]["verdict"], "not-unique", "{}", v["verdict"]);
    assert!(out.join("attraction.svg").exists() && out.join("basins.svg").exists());
    let o = mfq(&["report", "models/jsq-d2.toml", "--json", "--out", out.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["attraction"]["verdict"]["verdict"], "certified");
    let o = mfq(&["check", "models/jsq-d2.toml", "--starts", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("starts"), "{}", text(&o).1);
}

/// A sweep within `--max-seconds` stops at the limit and keeps the finished points: the PS
/// triplet approximation at lambda = 0.99 (truncation.tol = 0.1) takes a tenth of a second at
/// K = 12 and 14, and more than five seconds at K = 40 (64,000 states; at lambda = 0.9, under
/// three on an idle machine, it could finish within the limit).
#[test]
fn sweep_at_the_time_limit_keeps_the_finished_points() {
    let out = tmp_dir("sweep-partial");
    let a = [
        "sweep",
        "models/redundancy-ps-triplet.toml",
        "--set",
        "truncation.tol=0.1",
        "--set",
        "lambda=0.99",
        "--set",
        "truncation.levels=12,14,40",
        "--max-seconds",
        "3",
        "--out",
        out.to_str().unwrap(),
    ];
    let started = std::time::Instant::now();
    let o = mfq(&a);
    let took = started.elapsed().as_secs_f64();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(took < 5.0, "took {took} s");
    assert!(stderr.contains("--max-seconds 3") && stderr.contains("of 3 points finished"), "{stderr}");
    let csv = std::fs::read_to_string(out.join("sweep-partial.csv")).expect("the finished points are written");
    assert!(csv.starts_with("# partial: stopped at the wall-clock limit --max-seconds 3"), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("12,") && l.contains(",solved,")), "{csv}");
    assert!(!csv.lines().any(|l| l.starts_with("40,")), "{csv}");
    assert!(!out.join("sweep.csv").exists(), "a partial sweep is not written as a complete one");
}

/// Ctrl-C (SIGINT) during a sweep keeps the finished points, as the time limit does.
#[test]
fn interrupted_sweep_keeps_the_finished_points() {
    let out = tmp_dir("sweep-interrupted");
    let child = Command::new(env!("CARGO_BIN_EXE_mfq"))
        .args([
            "sweep",
            "models/redundancy-ps-triplet.toml",
            "--set",
            "truncation.tol=0.1",
            "--set",
            "lambda=0.99",
            "--set",
            "truncation.levels=12,14,40",
            "--out",
            out.to_str().unwrap(),
        ])
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mfq runs");
    // the first two points take a tenth of a second; the third (K = 40 at lambda = 0.99) more
    // than five seconds on an idle machine (at lambda = 0.9, under three, it could finish before
    // the interrupt)
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(sent.success());
    let started = std::time::Instant::now();
    let o = child.wait_with_output().expect("mfq ends");
    let (stdout, stderr) = text(&o);
    assert!(started.elapsed().as_secs_f64() < 3.0, "stopped late");
    assert_eq!(o.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let csv = std::fs::read_to_string(out.join("sweep-partial.csv")).expect("the finished points are written");
    assert!(csv.starts_with("# partial: stopped at cancellation"), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("12,") && l.contains(",solved,")), "{csv}");
}

/// A sweep point with invalid parameters is bad input (exit code 2, after the CSV is written,
/// naming the field); unstable points are data (exit code 0).
#[test]
fn sweep_exit_codes_tell_invalid_from_unstable() {
    let out = tmp_dir("sweep-invalid");
    let o = mfq(&["sweep", "models/pod-errors-li.toml", "--set", "lambda=0.3,0.6", "--set", "eps=0.1,1.5", "--out", out.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("model.eps = 1.5") && stderr.contains("2 of 4 sweep points"), "{stderr}");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).expect("written before the error");
    assert_eq!(csv.matches(",invalid,").count(), 2, "{csv}");
    let o = mfq(&["sweep", "models/jsq-d2.toml", "--set", "lambda=0.5,1.5,2", "--out", out.to_str().unwrap(), "--json"]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON document");
    assert_eq!(v["points"][1]["status"]["status"], "unstable", "{v}");
    assert!(v["partial"].is_null() && v["error"].is_null(), "{v}");
}

/// The stability condition is checked before any costly construction, and construction itself
/// honours the limit: LL(d) at lambda = 1e6 built its grid for minutes before it said unstable;
/// at d = 10000 the grid takes longer than the limit; the LCFS limit near lambda = 1 marches
/// its renewal equations for seconds (now about 0.1 s of CPU at lambda = 0.995: the limit is 0.01 s).
#[test]
fn model_construction_honours_the_time_limit() {
    let cases: &[(&[&str], i32, &str)] = &[
        (&["fixed-point", "models/lld2-exp.toml", "--set", "lambda=1e6", "--max-seconds", "5"], 3, "unstable"),
        (&["report", "models/redundancy-lcfs-limit.toml", "--set", "lambda=0.995", "--max-seconds", "0.01"], 4, "--max-seconds 0.01"),
        (
            &["fixed-point", "models/redundancy-ps-triplet.toml", "--set", "truncation.levels=32", "--max-seconds", "0.5"],
            4,
            "--max-seconds 0.5",
        ),
    ];
    for (args, code, fragment) in cases {
        let started = std::time::Instant::now();
        let o = mfq(args);
        let took = started.elapsed().as_secs_f64();
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(*code), "{args:?}: {stdout}\n{stderr}");
        assert!(took < 2.5, "{args:?}: took {took} s");
        assert!(stderr.contains(fragment), "{args:?}: {stderr}");
    }
}

/// A generic model of 60,000 transitions written out one by one: loading it parsed the file
/// twice and built the model three times before the job's limit applied (5.2 s at a 0.01 s
/// limit); now one parse, the dimension from the declarations and one build capped at 0.25 s
/// come first (about 1 s here, most of it the TOML parse).
#[test]
fn a_model_of_many_transitions_stops_near_the_limit() {
    let dir = tmp_dir("many-transitions");
    let mut file = String::from("title = \"many\"\n[model]\nkind = \"generic\"\nname = \"many\"\nvariables = [\"X\"]\n");
    for i in 0..60_000 {
        let (jump, rate) = if i % 2 == 0 { (1, "(1 - X) * (1 + X) * 0.001") } else { (-1, "X * 0.001") };
        file.push_str(&format!("[[model.transitions]]\nname = \"t{i}\"\njump = {{ X = {jump} }}\nrate = \"{rate}\"\n"));
    }
    file.push_str("[model.initial]\nX = 0\n");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("many.toml");
    std::fs::write(&path, file).unwrap();
    let started = std::time::Instant::now();
    let o = mfq(&["fixed-point", path.to_str().unwrap(), "--max-seconds", "0.01"]);
    let took = started.elapsed().as_secs_f64();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(stderr.contains("--max-seconds 0.01"), "{stderr}");
    assert!(took < 3.0, "took {took} s");
}

/// The TOML parse of a large model file is inside `--max-seconds`: a file of 200,000 transitions
/// (16 MB) takes about 2 s to parse, and `--max-seconds 0.05` overran by 2.3-2.6 s on the
/// development machine (the toml crate cannot be interrupted). It is now parsed on a helper
/// thread that is abandoned at the limit (`ModelFile::parse_within`): exit code 4, the usual
/// deadline message, about 0.05 s after the file is read.
#[test]
fn parsing_a_large_model_file_stops_at_the_limit() {
    let dir = tmp_dir("many-transitions-parse");
    let path = large_generic_file(&dir);
    let started = std::time::Instant::now();
    let o = mfq(&["fixed-point", path.to_str().unwrap(), "--max-seconds", "0.05"]);
    let took = started.elapsed().as_secs_f64();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(stderr.contains("TOML parse") && stderr.contains("--max-seconds 0.05"), "{stderr}");
    assert!(took < 1.0, "took {took} s");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A generic model of 200,000 transitions (16 MB, about 2 s to parse) with one parameter `a`
/// to sweep, written as `many.toml` in `dir` (created).
fn large_generic_file(dir: &std::path::Path) -> std::path::PathBuf {
    let mut file = String::from(
        "title = \"many\"\n[model]\nkind = \"generic\"\nname = \"many\"\nvariables = [\"X\"]\n[model.parameters]\na = 0.001\n",
    );
    for i in 0..200_000 {
        let (jump, rate) = if i % 2 == 0 { (1, "(1 - X) * (1 + X) * a") } else { (-1, "X * a") };
        file.push_str(&format!("[[model.transitions]]\nname = \"t{i}\"\njump = {{ X = {jump} }}\nrate = \"{rate}\"\n"));
    }
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("many.toml");
    std::fs::write(&path, file).unwrap();
    path
}

/// `mfq sweep` and `mfq figure` read their model files within `--max-seconds` too: they parsed
/// with no limit (once per point, plus the checks of the swept names and the `{name}`
/// parameters of titles), so on the large file above `sweep --set a=0.001,0.002
/// --max-seconds 0.01` took 6.9 s (16.5 s without a limit) and a sweep or tail figure 3.1-3.2 s
/// on the development machine. Now each parse is `ModelFile::parse_within` (the simulation
/// sweep's and `mfq::Model::from_toml_within`'s too): exit code 4, the usual deadline message,
/// well under the 2 s one parse takes. `mfq branches` read the file, and the model again at
/// every parameter value, with no limit.
#[test]
fn sweeps_and_figures_read_a_large_model_file_within_the_limit() {
    let dir = tmp_dir("many-transitions-sweep");
    let path = large_generic_file(&dir);
    let model = path.to_str().unwrap();
    let figures = dir.join("figures");
    std::fs::create_dir_all(&figures).unwrap();
    let head = "title = \"big\"\nreproduces = \"new\"\ndescription = \"big\"\n";
    std::fs::write(
        figures.join("big-sweep.toml"),
        format!("kind = \"sweep\"\n{head}model = \"{model}\"\nset = [\"a=0.001,0.002\"]\ny = \"loss_probability\"\nx_label = \"a\"\n"),
    )
    .unwrap();
    std::fs::write(figures.join("big-tail.toml"), format!("kind = \"tail\"\n{head}models = [[\"big\", \"{model}\"]]\n")).unwrap();
    let out = dir.join("out");
    let (figs, out) = (figures.to_str().unwrap(), out.to_str().unwrap());
    let runs: [Vec<&str>; 4] = [
        vec!["sweep", model, "--set", "a=0.001,0.002", "--out", out],
        vec!["branches", model, "--set", "a=0.001:0.002:10", "--out", out],
        vec!["figure", "big-sweep", "--figures", figs, "--out", out],
        vec!["figure", "big-tail", "--figures", figs, "--out", out],
    ];
    for mut args in runs {
        args.extend(["--max-seconds", "0.01"]);
        let started = std::time::Instant::now();
        let o = mfq(&args);
        let took = started.elapsed().as_secs_f64();
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(4), "{args:?}: {stdout}\n{stderr}");
        assert!(stderr.contains("--max-seconds 0.01"), "{args:?}: {stderr}");
        assert!(took < 1.5, "{args:?}: took {took} s");
    }
    // branches past the first read: the model written as TOML again (80 s by toml's own
    // `to_string`, quadratic in the tables) and read again at the range's ends, each within the
    // limit; 3.4-3.6 s on the development machine, where it took 85 s
    let args = ["branches", model, "--set", "a=0.001:0.002:10", "--out", out, "--max-seconds", "3"];
    let started = std::time::Instant::now();
    let o = mfq(&args);
    let took = started.elapsed().as_secs_f64();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(stderr.contains("--max-seconds 3"), "{stderr}");
    assert!(took < 6.0, "took {took} s");
    let _ = std::fs::remove_dir_all(&dir);
}

/// LL(d) with large d: the adaptive workload grid (docs/models/lld.md) once took longer than
/// any limit at d = 10000; now it takes milliseconds, and its waiting time must resolve the
/// boundary layer of `Fbar^d` at `w = 0` (width ~ 1/d): `int Fbar^d` against the exponential
/// closed form `Fbar(w) = (lambda + (lambda^(1-d) - lambda) e^((d-1) w))^(1/(1-d))`
/// (Hellemans and Van Houdt), integrated independently with mpmath: 4.517436637439e-9 at
/// d = 10000, lambda = 0.999, and 4.584339654422e-4 at d = 1000.
#[test]
fn lld_with_large_d_resolves_its_waiting_time() {
    for (d, want) in [("10000", 4.517436637439083e-9), ("1000", 4.584339654421914e-4)] {
        let started = std::time::Instant::now();
        let o = mfq(&[
            "fixed-point",
            "models/lld2-exp.toml",
            "--set",
            &format!("d={d}"),
            "--set",
            "lambda=0.999",
            "--json",
            "--max-seconds",
            "5",
        ]);
        assert!(started.elapsed().as_secs_f64() < 5.0);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let extras = v["extras"].as_array().unwrap();
        let got = extras.iter().find(|e| e[0] == "mean_waiting_time").unwrap()[1].as_f64().unwrap();
        assert!((got - want).abs() <= 1e-6 * want, "d = {d}: int Fbar^d = {got}, closed form {want}");
    }
}

/// The output directory is checked before the work starts: nothing is computed for nothing.
#[test]
fn unwritable_output_directory_is_refused_before_the_work() {
    for cmd in ["report", "tail", "check", "sweep"] {
        let mut a = vec![cmd, "models/jsq-d2.toml", "--out", "/proc/mfq-cannot-write-here"];
        if cmd == "sweep" {
            a.extend(["--set", "lambda=0.5:0.9:3"]);
        }
        let o = mfq(&a);
        let (stdout, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(5), "{a:?}: {stdout}\n{stderr}");
        assert!(stderr.contains("/proc/mfq-cannot-write-here") && stderr.contains("before the work"), "{a:?}: {stderr}");
    }
}

/// `simulate --precision` (issue 16): random routing (models/jsq-d1.toml at lambda = 0.5, `N`
/// independent M/M/1 queues) runs until the 95% half width of the mean queue length is at most
/// the target, and then covers the closed form `rho / (1 - rho) = 1`; a target the time limit
/// cannot reach exits 4 within the limit and says it was not reached; a bad target names the
/// option.
#[test]
fn simulate_precision_reaches_its_target_or_says_the_limit_stopped_it() {
    let base = ["simulate", "models/jsq-d1.toml", "--set", "lambda=0.5", "--servers", "100", "--time", "200", "--warmup", "20"];
    let mut a = base.to_vec();
    a.extend(["--batches", "10", "--replications", "2", "--precision", "0.02", "--json"]);
    let o = mfq(&a);
    assert!(o.status.success(), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let (mean, hw) = (v["mean_queue_length"]["mean"].as_f64().unwrap(), v["mean_queue_length"]["half_width"].as_f64().unwrap());
    assert_eq!(v["precision"]["reached"], true, "{v}");
    assert!(hw <= 0.02 && v["options"]["replications"].as_u64().unwrap() > 2, "{v}");
    // 3.3 half widths: a 99.9% interval (t quantiles for n > 20), one fixed seed
    assert!((mean - 1.0).abs() <= 3.3 / 1.96 * hw * 1.05, "{mean} +- {hw}");
    let mut a = base.to_vec();
    a.extend(["--precision", "1e-9", "--max-seconds", "1"]);
    let started = std::time::Instant::now();
    let o = mfq(&a);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(started.elapsed().as_secs_f64() < 3.0);
    assert!(stderr.contains("precision target") && stderr.contains("not reached") && stderr.contains("--max-seconds 1"), "{stderr}");
    assert!(stdout.contains("NOT reached") && stdout.contains("mean queue length"), "{stdout}");
    let o = mfq(&["simulate", "models/jsq-d1.toml", "--precision", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("precision = 0"), "{:?}", text(&o));
}

/// `mfq exact --buffer B` on a generic model whose state has no levels (SIS) ignored the buffer
/// without a word; now refused, naming the field, the value and what is allowed (and the
/// same model without `--buffer` still solves).
#[test]
fn exact_refuses_a_buffer_on_a_model_without_levels() {
    let out = tmp_dir("exact-buffer-without-levels");
    let o = mfq(&["exact", "models/generic/sis.toml", "--servers", "10", "--buffer", "5", "--out", out.to_str().unwrap()]);
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("truncation.levels = 5 is not allowed: no fixed level (no --buffer) for this model: its state has no queue levels"),
        "{stderr}"
    );
    assert!(!out.join("exact.json").exists());
    let o = mfq(&["exact", "models/generic/sis.toml", "--servers", "10", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let _ = std::fs::remove_dir_all(&out);
}

/// `mfq branches` stopped by its limit says once which limit and where the time went: the
/// continuation's message named the limit twice ("stopped at the wall-clock limit
/// --max-seconds 0.05 during the branch from start 0 at the wall-clock limit --max-seconds
/// 0.05"), and a limit spent before the model was read again at a parameter value was blamed on
/// "the TOML parse of 257 bytes".
#[test]
fn a_stopped_continuation_names_its_limit_once() {
    for limit in ["0.005", "0.02", "0.05"] {
        let o = mfq(&[
            "branches",
            "models/jsq-d2.toml",
            "--set",
            "lambda=0.5:0.95:100",
            "--max-seconds",
            limit,
            "--out",
            "target/branches-limit",
        ]);
        let (stdout, stderr) = text(&o);
        if o.status.code() == Some(0) {
            continue;
        }
        assert_eq!(o.status.code(), Some(4), "{limit}: {stdout}\n{stderr}");
        let error = stderr.lines().find(|l| l.starts_with("mfq: error:")).unwrap_or_else(|| panic!("{limit}: {stderr}"));
        assert_eq!(error.matches("--max-seconds").count(), 1, "{limit}: {error}");
        assert!(!error.contains("TOML parse"), "{limit}: {error}");
    }
}

/// A model whose population leaves the state space (`X += 1` at the constant rate 5 on a
/// one-entry state) is refused (exit 2) by every command with a message that names the
/// command's own job first (it said "the fixed-point solve did not converge" for `solve`,
/// `simulate` and `exact` alike, glued into one `field = value is not allowed: ...` line),
/// then in separate sentences the transition, the state entry and face, and what is allowed.
#[test]
fn a_leaving_transition_is_named_with_the_command_s_own_job() {
    let dir = tmp_dir("leaving-job");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("leaving.toml");
    std::fs::write(&path, "[model]\nkind = \"generic\"\nvariables = [\"X\"]\n[[model.transitions]]\njump = { X = 1 }\nrate = \"5\"\n")
        .unwrap();
    let p = path.to_str().unwrap();
    let out = dir.join("out");
    let o_dir = out.to_str().unwrap();
    for (command, job) in [
        ("fixed-point", "mfq fixed-point cannot solve for this model's fixed point. "),
        ("solve", "mfq solve cannot solve this model's transient"),
        ("simulate", "mfq simulate cannot simulate this model's population process"),
        ("exact", "mfq exact cannot solve this model's exact finite-N chain"),
        ("compare", "mfq compare cannot compare this model's simulations with its mean field. "),
    ] {
        let mut args = vec![command, p, "--out", o_dir];
        if command == "exact" {
            args.extend(["--servers", "5"]);
        }
        let o = mfq(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{command}: {err}");
        assert!(err.contains(job), "{command}: {err}");
        // separate sentences: the fault, the transition at its face, what is allowed, how it was found
        let sentences = [
            ". The model lets its population leave the state space. ",
            " model.transitions[0]: its rate \"5\" is 5.0000e0 > 0 at X = 1, where its jump X += 1 would take X above 1. ",
            " Allowed: transitions whose rate is 0 wherever their jump would leave the state space",
            " It was found where the mean field's fixed-point iteration, pushed onto that face, stopped without converging",
        ];
        for s in sentences {
            assert!(err.contains(s), "{command}: {s:?} in {err}");
        }
        assert!(!err.contains("is not allowed:"), "{command}: {err}");
        // the JSON error says the same
        args.push("--json");
        let o = mfq(&args);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        assert!(v["error"]["message"].as_str().is_some_and(|m| m.contains(job)), "{command}: {v}");
    }
}

/// The logistic SIS (up `beta X (1 - X)`, down `X`, beta = 2) at `beta`, with or without
/// `[model.initial]` (X = 0.1), written to `dir`.
fn logistic_sis_file(dir: &std::path::Path, initial: bool) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(if initial { "logistic-sis.toml" } else { "logistic-sis-no-initial.toml" });
    let init = if initial { "[model.initial]\nX = 0.1\n" } else { "" };
    std::fs::write(
        &path,
        format!(
            "[model]\nkind = \"generic\"\nvariables = [\"X\"]\n[model.parameters]\nbeta = 2.0\n{init}\
             [[model.transitions]]\njump = {{ X = 1 }}\nrate = \"beta * X * (1 - X)\"\n\
             [[model.transitions]]\njump = {{ X = -1 }}\nrate = \"X\"\n"
        ),
    )
    .unwrap();
    path
}

/// The logistic SIS at beta = 2 with N = 10 objects goes extinct (the absorbing state X = 0)
/// long before the end of the warm-up: `mfq simulate` and `mfq compare` printed `0.000000 +-
/// 0.000000` beside the mean field 0.5 without a word. They now say that the chain reached the
/// absorbing state X = 0 (in every replication, before the end of the warm-up; JSON
/// `absorbing`, `absorption.when`), or, without `[model.initial]`, that it started there (no
/// event) instead of "the finite system leaves it". N = 1000 is not absorbed and says nothing.
#[test]
fn an_absorbed_population_simulation_says_so() {
    let dir = tmp_dir("absorbed");
    let path = logistic_sis_file(&dir, true);
    let p = path.to_str().unwrap();
    let o = mfq(&["simulate", p, "--servers", "10", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["mean"][0]["mean"].as_f64(), Some(0.0), "{out}");
    assert_eq!(v["absorbing"][0].as_f64(), Some(0.0), "{out}");
    assert_eq!(v["absorption"]["when"], "during-warmup", "{out}");
    assert!(v["events"].as_u64().unwrap() > 0, "{out}");
    let o = mfq(&["simulate", p, "--servers", "10"]);
    let (out, _) = text(&o);
    assert!(
        out.contains(
            "ABSORBED: the chain reached the absorbing state X = 0 in every replication before the end of the warm-up (t = 500): \
             no transition has a positive rate there, so the finite system, once there, never leaves"
        ),
        "{out}"
    );
    assert!(out.contains("X = 0.000000, is UNSTABLE, spectral abscissa 1.000e0: the mean field leaves it from any nearby state, but it is absorbing for the finite system"), "{out}");
    // N = 30: some replications absorbed during the measured time (0.003 +- 0.006 against 0.5)
    let o = mfq(&["simulate", p, "--servers", "30", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["absorption"]["when"], "probably", "{v}");
    assert!(v["absorption"]["message"].as_str().unwrap().starts_with("the time averages lie nearer the absorbing state X = 0"), "{v}");
    // started there: no event at all
    let bare = logistic_sis_file(&dir, false);
    let o = mfq(&["simulate", bare.to_str().unwrap(), "--servers", "10"]);
    let (out, _) = text(&o);
    assert!(out.contains("ABSORBED: the chain started in the absorbing state X = 0 and no event happened"), "{out}");
    assert!(!out.contains("the finite system leaves it"), "{out}");
    let o = mfq(&["simulate", bare.to_str().unwrap(), "--servers", "10", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["absorption"]["when"], "at-start", "{v}");
    // a chain that is not absorbed says nothing
    let o = mfq(&["simulate", p, "--servers", "1000", "--time", "200", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["absorbing"].is_null() && v["absorption"].is_null(), "{v}");
    // compare: the row and a warning at N = 10, nothing at N = 1000
    let out_dir = dir.join("out");
    let args = ["compare", p, "--servers", "10,1000", "--time", "100", "--out", out_dir.to_str().unwrap()];
    let o = mfq(&args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("warning: N = 10: the chain reached the absorbing state X = 0 in every replication"), "{out}");
    assert!(!out.contains("N = 1000: the chain"), "{out}");
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let o = mfq(&json_args);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"][0]["absorbing"][0].as_f64(), Some(0.0), "{v}");
    assert_eq!(v["rows"][0]["absorption"]["when"], "during-warmup", "{v}");
    assert!(v["rows"][1]["absorbing"].is_null(), "{v}");
}

/// `mfq branches` on the logistic SIS over beta = 0.5..3 followed only X = 0 (the one
/// equilibrium at beta = 0.5), with its transcritical branch point at beta = 1, and never the
/// endemic branch X = 1 - 1/beta that crosses it there (outside [0, 1] for beta < 1, so no
/// start at beta = 0.5 finds it). The other branch through each branch point is now followed
/// (branch switching, `switched_from`): it matches the closed form, stable, and starts at the
/// branch point; the text says where it was switched.
#[test]
fn branches_switch_onto_the_endemic_branch_of_the_logistic_sis() {
    let dir = tmp_dir("branches-sis");
    let path = logistic_sis_file(&dir, true);
    let out = dir.join("out");
    let args = ["branches", path.to_str().unwrap(), "--set", "beta=0.5:3:26", "--out", out.to_str().unwrap()];
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let o = mfq(&json_args);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let branches = v["branches"].as_array().unwrap();
    assert_eq!(branches.len(), 2, "{stdout}");
    assert!(branches[0]["switched_from"].is_null(), "{stdout}");
    let from = &branches[1]["switched_from"];
    assert_eq!(from["branch"], 0, "{stdout}");
    assert!((from["parameter"].as_f64().unwrap() - 1.0).abs() < 1e-8, "{stdout}");
    let points = branches[1]["points"].as_array().unwrap();
    assert!(points.len() > 20, "{stdout}");
    for p in points {
        let (beta, x) = (p["parameter"].as_f64().unwrap(), p["x"][0].as_f64().unwrap());
        assert!((x - (1.0 - 1.0 / beta)).abs() < 1e-9, "X = {x} at beta = {beta} against 1 - 1/beta");
    }
    assert!((points.last().unwrap()["parameter"].as_f64().unwrap() - 3.0).abs() < 1e-12, "{stdout}");
    assert!(points[1..].iter().all(|p| p["kind"] == "stable"), "{stdout}");
    assert_eq!(branches[1]["end"]["end"], "range-end", "{stdout}");
    let o = mfq(&args);
    let (stdout, _) = text(&o);
    assert!(stdout.contains("1 equilibria at beta = 0.5; 2 branches"), "{stdout}");
    assert!(stdout.contains("branch 1 from X = 0 (switched at the branch point of branch 0 at beta = 1.0000000000"), "{stdout}");
    assert!(stdout.contains("ends at the end of the range (beta = 3.000000, X = 0.666667)"), "{stdout}");
}

/// A one-variable generic model (models/generic/sis.toml: the state entry X, no truncation
/// level) is not described by a level K it does not have: `mfq solve` said `K = 20`, `mfq
/// refined` `at K = 1`, and `--x0` with too many values `the model has 1 state entries`.
#[test]
fn a_model_without_levels_is_sized_by_its_state_entries() {
    let out = tmp_dir("no-levels");
    let o_dir = out.to_str().unwrap();
    let o = mfq(&["solve", "models/generic/sis.toml", "--out", o_dir]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("rejected), 1 state entry (no truncation level)") && !stdout.contains("K ="), "{stdout}");
    let o = mfq(&["refined", "models/generic/sis.toml", "--servers", "10", "--out", o_dir]);
    let (stdout, _) = text(&o);
    assert!(stdout.contains("refined mean field of order 1 (1 state entry), Lyapunov residual"), "{stdout}");
    let o = mfq(&["solve", "models/generic/sis.toml", "--x0", "0.1,0.2", "--out", o_dir]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--x0 has 2 values, the model has 1 state entry; allowed: at most 1 value (missing ones are 0)"), "{stderr}");
    // a model with levels still names K
    let o = mfq(&["solve", "models/jsq-d2.toml", "--out", o_dir]);
    assert!(text(&o).0.contains("rejected), K = "), "{:?}", text(&o));
}
