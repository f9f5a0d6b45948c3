//! The refined mean field (Gast and Van Houdt 2017) against values computed independently:
//! rmf_tool (`meanFieldExpansionSteadyState(order=1)`) and a SciPy Newton + Lyapunov script gave
//! the same sum of V for JSQ(2), K = 20 (recomputed by validation/jsq.py; docs/references.md).

use mfq_fixpoint::{refined_mean_field, solve_model, FixedPointOptions};
use mfq_model::models::{Jiq, Jsq, PodLi};
use mfq_model::MeanFieldModel;

fn sum_v(m: &dyn MeanFieldModel) -> f64 {
    let fp = solve_model(m, &FixedPointOptions::default()).unwrap();
    assert!(fp.converged());
    let r = refined_mean_field(m, &fp.x).unwrap();
    assert!(r.lyapunov_residual < 1e-10, "{}", r.lyapunov_residual);
    r.sum_v
}

#[test]
fn jsq2_sum_of_v_matches_rmf_tool_and_scipy() {
    for (lambda, want) in [(0.7, 0.849066), (0.9, 3.986427), (0.95, 8.878356)] {
        let got = sum_v(&Jsq::new(lambda, 2, 20).unwrap());
        assert!((got - want).abs() < 2e-6, "lambda={lambda}: {got} vs {want}");
    }
}

/// Random routing (JSQ(1), and Pod-LI with d = 2, eps = 1/2) makes the N servers independent
/// M/M/1 queues: E[x_k^N] = x_k exactly for every N, so V = 0.
#[test]
fn independent_queues_have_no_correction() {
    for m in [Box::new(Jsq::new(0.8, 1, 60).unwrap()) as Box<dyn MeanFieldModel>, Box::new(PodLi::new(0.8, 2, 0.5, 60).unwrap())] {
        let fp = solve_model(m.as_ref(), &FixedPointOptions::default()).unwrap();
        let r = refined_mean_field(m.as_ref(), &fp.x).unwrap();
        assert!(r.v.iter().all(|v| v.abs() < 1e-8), "{:?}", &r.v[..5]);
        // W is the covariance of independent occupancies: W_kk = x_k (1 - x_k)
        let n = m.dim();
        for k in 0..5 {
            let xk = fp.x[k];
            assert!((r.covariance[k * n + k] - xk * (1.0 - xk)).abs() < 1e-8);
        }
    }
}

/// JIQ's drift has a sliding boundary at x_1 = 1 where the finite-N system spends its waiting
/// (a simulation at N = 10, lambda = 0.9 gives 2.16 jobs per server against 0.9): the refined
/// mean field does not apply and must say so rather than return V = 0.
#[test]
fn jiq_has_no_refined_terms() {
    let m = Jiq::new(0.6, 10).unwrap();
    let fp = solve_model(&m, &FixedPointOptions::default()).unwrap();
    let e = refined_mean_field(&m, &fp.x).unwrap_err();
    assert!(matches!(e, mfq_fixpoint::RefinedError::NotSmooth { .. }), "{e}");
}

/// Independent M/M/1 queues (JSQ(1)) to order 2: A = 0 too (E[x_k^N] = x_k for every N).
#[test]
fn independent_queues_have_no_second_order_term() {
    let m = Jsq::new(0.8, 1, 40).unwrap();
    let fp = solve_model(&m, &FixedPointOptions::default()).unwrap();
    let r = mfq_fixpoint::refined_mean_field_order(&m, &fp.x, 2).unwrap();
    assert!(r.a.unwrap().iter().all(|a| a.abs() < 1e-7));
}

fn mfq(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mfq"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

/// Independent M/M/1 queues with a long tail (JSQ(1) at lambda = 0.96: K = 677 levels, whose
/// tail's derivative grids, taken level by level, once exceeded their work bound, so that the
/// tail was left out and the mean queue length came out as an empty sum, -0): the refined mean
/// queue length and response time are the M/M/1's rho / (1 - rho) = 24 and 1 / (1 - rho) = 25
/// at every N (V = 0), with nothing left out.
#[test]
fn a_long_tail_keeps_its_refined_mean_queue_length() {
    let (code, out) = mfq(&["refined", "models/jsq-d1.toml", "--set", "lambda=0.96", "--servers", "10", "--json"]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["levels"], 677);
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(0), "{}", v["warnings"]);
    assert_eq!(v["expansion"]["tail"].as_array().map(Vec::len), Some(677));
    for e in [&v["mean_field"], &v["estimates"][0]] {
        let (l, t) = (e["mean_queue_length"].as_f64().unwrap(), e["mean_response_time"].as_f64().unwrap());
        assert!((l - 24.0).abs() < 1e-6 && (t - 25.0).abs() < 1e-6, "{e}");
    }
}

/// A phase tail near saturation (Erlang-3 jobs, JSQ(2), lambda = 0.97): the busy fraction
/// `P(Q >= 1)` is lambda at every N (every arrival joins, each server works at rate 1), so its
/// 1/N and 1/N^2 terms vanish; they came out -1.23 and 6060, because the difference grids'
/// nodes put the level's sum over phases past 1, where the model clamps it, and P(wait) at
/// N = 10 came out 123. Now the tail's terms are the level masses of V and A, and P(wait) lies
/// between its mean-field value lambda^2 and 1 (a simulation at N = 50 gives 0.9412 +- 0.0035).
#[test]
fn a_phase_tail_near_saturation_keeps_its_busy_fraction() {
    let dir = std::env::temp_dir().join(format!("mfq-refined-erlang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("erlang3.toml");
    std::fs::write(&path, "[model]\nkind = \"jsq-ph\"\nlambda = 0.97\nd = 2\n[model.job_size]\nlaw = \"erlang\"\nk = 3\nmean = 1.0\n")
        .unwrap();
    let (code, out) = mfq(&["refined", path.to_str().unwrap(), "--order", "2", "--servers", "10,50", "--json"]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let busy = &v["expansion"]["tail"][0];
    assert!((busy["value"].as_f64().unwrap() - 0.97).abs() < 1e-12, "{busy}");
    assert!(busy["c1"].as_f64().unwrap().abs() < 1e-6 && busy["c2"].as_f64().unwrap().abs() < 1e-4, "{busy}");
    for e in v["estimates"].as_array().unwrap() {
        let (n, pw) = (e["servers"].as_f64().unwrap(), e["prob_wait"].as_f64().unwrap());
        assert!(pw > 0.9409 && pw < 0.95, "N = {n}: P(wait) {pw}");
        assert!((e["tail"][0].as_f64().unwrap() - 0.97).abs() < 1e-6, "N = {n}: {}", e["tail"][0]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The refined terms stop at `--max-seconds`: JSQ(1) at lambda = 0.98 (1,368 levels, whose
/// dense Lyapunov equation takes more than ten seconds) with a limit of one second exits with
/// code 4 (stopped) within a few seconds, naming the refined terms and writing nothing.
#[test]
fn refined_terms_stop_at_the_wall_clock_limit() {
    let started = std::time::Instant::now();
    let (code, out) = mfq(&["refined", "models/jsq-d1.toml", "--set", "lambda=0.98", "--max-seconds", "1"]);
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("the refined terms of order 1 (1368 state entries) stopped at the wall-clock limit --max-seconds 1"), "{out}");
    assert!(seconds < 8.0, "{seconds} s");
}

/// The other jobs with refined terms stop at `--max-seconds` too: `solve --refined` (the moment
/// equations of JSQ(1) at lambda = 0.9, K = 253: 30 s of integration, looked at after every
/// step) and `compare` (the terms of JSQ(1) at lambda = 0.98, 1,368 levels, before the
/// simulations) exit with code 4 within a few seconds of a one-second limit.
#[test]
fn solve_refined_and_compare_stop_at_the_wall_clock_limit() {
    for (args, what) in [
        (&["solve", "models/jsq-d1.toml", "--refined", "10", "--max-seconds", "1"][..], "stopped in the moment equations"),
        (
            &["compare", "models/jsq-d1.toml", "--set", "lambda=0.98", "--servers", "10", "--max-seconds", "1"][..],
            "stopped at the wall-clock limit",
        ),
    ] {
        let started = std::time::Instant::now();
        let (code, out) = mfq(args);
        let seconds = started.elapsed().as_secs_f64();
        assert_eq!(code, 4, "{args:?}: {out}");
        assert!(out.contains(what) && out.contains("--max-seconds 1"), "{args:?}: {out}");
        assert!(seconds < 6.0, "{args:?}: {seconds} s");
    }
}

/// `mfq refined` on the SIS model (closed forms V = -(sqrt 5 - 1)/10, A = (sqrt 5 - 3)/50, docs/refined.md)
/// with --json; JIQ and --order 3 are refused with the reason (exit code 2).
#[test]
fn refined_command() {
    let (code, out) = mfq(&["refined", "models/generic/sis.toml", "--order", "2", "--servers", "10,20", "--json"]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let s5 = 5f64.sqrt();
    assert!((v["v"][0].as_f64().unwrap() + (s5 - 1.0) / 10.0).abs() < 1e-9);
    assert!((v["a"][0].as_f64().unwrap() - (s5 - 3.0) / 50.0).abs() < 1e-7);
    let e10 = v["estimates"][0]["state"][0].as_f64().unwrap();
    assert!((e10 - 0.6055449).abs() < 3e-4, "{e10}");
    let (code, out) = mfq(&["refined", "models/jiq.toml"]);
    assert_eq!(code, 2);
    assert!(out.contains("non-smooth"), "{out}");
    let (code, out) = mfq(&["refined", "models/jsq-d2.toml", "--order", "3"]);
    assert_eq!(code, 2);
    assert!(out.contains("--order 3"), "{out}");
}

/// `mfq refined` on phase-type and heterogeneous models (docs/refined.md, "Phase-type jobs",
/// "Heterogeneous classes"): SQ(2) with H2 jobs (models/sq2-h2.toml) at orders 1 and 2, ps-sq2
/// case A at order 2. Their mean-field response times are the files' published values
/// (6.334997, validation/phase_type.py; 3.887209, docs/models/heterogeneous.md); the refined
/// mean queue length is the mean field plus the sum of V over N (the queue length is linear in
/// the state), and order 2 adds sum A / N^2. Three classes of ps-sq2 make rates of 6 entries:
/// order 2 is refused, saying so.
#[test]
fn refined_command_phase_type_and_classes() {
    let json = |args: &[&str]| -> serde_json::Value {
        let (code, out) = mfq(args);
        assert_eq!(code, 0, "{args:?}: {out}");
        serde_json::from_str(out.trim()).unwrap()
    };
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    for (file, t) in [("models/sq2-h2.toml", 6.334997), ("models/hetero-ps-sq2-caseA.toml", 3.887209)] {
        for order in ["1", "2"] {
            let v = json(&["refined", file, "--order", order, "--servers", "20", "--json"]);
            assert!((f(&v["mean_field"]["mean_response_time"]) - t).abs() < 2e-6, "{file}: {}", v["mean_field"]);
            let l = f(&v["mean_field"]["mean_queue_length"]);
            let sum_a = if order == "2" { f(&v["sum_a"]) } else { 0.0 };
            let want = l + f(&v["sum_v"]) / 20.0 + sum_a / 400.0;
            if file.contains("sq2-h2") {
                assert!((f(&v["estimates"][0]["mean_queue_length"]) - want).abs() < 1e-9, "{file} order {order}");
            }
            assert!(f(&v["sum_v"]).abs() > 0.1 && (order == "1" || sum_a.is_finite()));
        }
    }
    let (code, out) = mfq(&["refined", "models/sq2-h2.toml", "--servers", "10,50"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("mean queue length"), "{out}");
    // case C has three classes (rates of 6 entries): orders 1 and 2 run, with the same V
    let v = json(&["refined", "models/hetero-ps-sq2-caseC.toml", "--json"]);
    assert!((f(&v["mean_field"]["mean_response_time"]) - 5.835446).abs() < 2e-6);
    let v2 = json(&["refined", "models/hetero-ps-sq2-caseC.toml", "--order", "2", "--json"]);
    assert!((f(&v2["sum_v"]) - f(&v["sum_v"])).abs() < 1e-9 && f(&v2["sum_a"]).is_finite(), "{v2}");
}

/// `mfq compare` on a heterogeneous model with a fixed buffer: the simulation of the system's
/// rules runs with buffer K = 3 like its mean field, the refined value `x* + c/N` is shown
/// (`refined_c`, from the transitions). Against the exact chain's 1.49732 at N = 8
/// (docs/refined.md): the simulation agrees within 3 half widths and is more than 3 half
/// widths from the mean field (1.5538), and the refined value (1.4926) is more than ten times
/// closer than the mean field. (The test asked the simulation to fall within one half width of
/// the refined value, which is not the exact answer: a change of random stream failed it.)
#[test]
fn compare_command_refines_heterogeneous_classes() {
    let (code, out) = mfq(&[
        "compare",
        "models/hetero-ps-sq2-caseA.toml",
        "--set",
        "truncation.levels=3",
        "--servers",
        "8",
        "--time",
        "50",
        "--warmup",
        "20",
        "--json",
    ]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let row = &v["rows"][0];
    assert_eq!(row["buffer"].as_u64(), Some(3), "{row}");
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let (mf, refined, sim, hw) =
        (f(&row["mean_field"]), f(&row["refined_mean_field"]), f(&row["simulated"]["mean"]), f(&row["simulated"]["half_width"]));
    let exact = 1.49732;
    assert!(
        hw < 0.02 && (sim - exact).abs() < 3.0 * hw && (sim - mf).abs() > 3.0 * hw && (refined - exact).abs() < 0.1 * (mf - exact).abs(),
        "mean field {mf}, refined {refined}, simulation {sim} +- {hw}, exact {exact}"
    );
}

/// `mfq solve --refined 10 --order 2` on the SIS model: at t = 30 the transient refined value is
/// the steady-state one, x* + V/10 + A/100 with the closed forms of docs/refined.md.
#[test]
fn solve_refined_command() {
    let dir = std::env::temp_dir().join(format!("mfq-solve-refined-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let (code, out) = mfq(&["solve", "models/generic/sis.toml", "--refined", "10", "--order", "2", "--t-end", "30", "--json", "--out", &d]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let last = v["refined"].as_array().unwrap().last().unwrap()[0].as_f64().unwrap();
    let s5 = 5f64.sqrt();
    let want = (s5 - 1.0) / 2.0 - (s5 - 1.0) / 100.0 + (s5 - 3.0) / 5000.0;
    assert!((last - want).abs() < 1e-7, "{last} vs {want}");
    assert!(dir.join("refined-trajectory.csv").exists());
    let _ = std::fs::remove_dir_all(&dir);
    let (code, _) = mfq(&["solve", "models/generic/sis.toml", "--refined", "0.5"]);
    assert_eq!(code, 2);
}

/// Extras whose derivative grids would exceed the work bound are not refined, with a warning;
/// they keep their mean-field values (they vanished from the table, the CSV and the JSON's
/// mean field): hetero-static case A at lambda = 0.9, class 2 an M/M/1 at load 5/6 whose mean
/// response time is 1 / (mu_2 - lambda_2) = 15 (its mean queue length 5), with "-" (blank in
/// the CSV) at every N.
#[test]
fn extras_not_refined_keep_their_mean_field_values() {
    let out = std::env::temp_dir().join(format!("mfq-refined-left-out-{}", std::process::id()));
    let (code, text) =
        mfq(&["refined", "models/hetero-static-caseA.toml", "--set", "lambda=0.9", "--servers", "10,20", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("the extras not refined"), "{text}");
    let row = text.lines().find(|l| l.trim_start().starts_with("class2.mean_response_time")).unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[2..], ["-", "-"], "{row}");
    assert!((cells[1].parse::<f64>().unwrap() - 15.0).abs() < 1e-7, "{row}");
    let csv = std::fs::read_to_string(out.join("refined-estimates.csv")).unwrap();
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = lines[0].iter().position(|h| *h == "class2.mean_response_time").unwrap();
    assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{csv}");
    assert!((lines[1][col].parse::<f64>().unwrap() - 15.0).abs() < 1e-7);
    assert_eq!((lines[2][col], lines[3][col]), ("", ""));
    let _ = std::fs::remove_dir_all(out);
}

/// `mfq` with `args` and the environment variable `env` (name, value) when given: exit code,
/// stdout, stderr and the wall time.
fn mfq_env(args: &[&str], env: Option<(&str, &str)>) -> (i32, String, String, f64) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_mfq"));
    cmd.args(args).current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).env_remove("RUST_BACKTRACE");
    cmd.env_remove(mfq_fixpoint::refined::memory::MEMORY_LIMIT_VAR);
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    let start = std::time::Instant::now();
    let out = cmd.output().unwrap();
    let secs = start.elapsed().as_secs_f64();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr), secs)
}

/// The dense steps of the refined terms need about 14 n x n matrices of f64 (8 bytes): JSQ(1) at
/// lambda = 0.999 takes K = 27612 levels (the M/M/1 tail lambda^K below 1e-12), 14 * 8 * 27612^2
/// = 85.4 GB, and K = 100,000 needs 1.1 TB. These allocations aborted the process (exit code
/// 134, `memory allocation of 6099380352 bytes failed` in `refined::noise_matrix`); each command
/// now refuses at once, exit code 2, naming n, K, the bytes, the limit and what to do, and writes
/// nothing.
#[test]
fn refined_terms_too_large_for_memory_are_refused_before_allocating() {
    let dir = std::env::temp_dir().join(format!("mfq-refined-too-large-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.to_str().unwrap();
    let want = |n: usize| format!("{:.1}", 14.0 * 8.0 * (n as f64).powi(2) / 1e9);
    let cases: [(&[&str], usize); 4] = [
        (&["refined", "models/jsq-d1.toml", "--set", "lambda=0.999", "--out", out], 27612),
        (&["refined", "models/jsq-d2.toml", "--set", "truncation.levels=100000", "--order", "2", "--out", out], 100000),
        (&["refined", "models/jsq-d2.toml", "--set", "truncation.levels=100000", "--json", "--out", out], 100000),
        (&["solve", "models/jsq-d2.toml", "--set", "truncation.levels=100000", "--refined", "10", "--t-end", "1", "--out", out], 100000),
    ];
    for (args, n) in cases {
        let (code, stdout, stderr, secs) = mfq_env(args, None);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(secs < 20.0, "{args:?} took {secs} s");
        for part in [
            format!("n = {n} state entries (truncation level K = {n})"),
            "more than the limit of".into(),
            "truncation.levels".into(),
            "lighter load".into(),
            "MFQ_MEMORY_LIMIT".into(),
        ] {
            assert!(stderr.contains(&part), "{args:?}: {part:?} not in {stderr}");
        }
        // order 1 names the n x n estimate (order 2 and the transient their larger ones)
        if args[0] == "refined" && !args.contains(&"--order") {
            assert!(stderr.contains(&format!("about {} GB", want(n))) || stderr.contains("TB"), "{args:?}: {stderr}");
        }
        if args.contains(&"--json") {
            let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
            assert_eq!(v["error"]["code"], 2, "{v}");
        }
        let written: Vec<_> = std::fs::read_dir(&dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        assert!(written.is_empty(), "{args:?} wrote {written:?}");
    }
    // `compare` keeps its mean field and simulation and says why there is no refined line
    let (code, stdout, stderr, _) = mfq_env(
        &[
            "compare",
            "models/jsq-d2.toml",
            "--set",
            "truncation.levels=100000",
            "--servers",
            "10",
            "--time",
            "20",
            "--warmup",
            "2",
            "--replications",
            "2",
            "--json",
            "--out",
            out,
        ],
        None,
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(v["refined_c"].is_null(), "{v}");
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("no refined mean field") && warnings.contains("n = 100000"), "{warnings}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The limit is set by MFQ_MEMORY_LIMIT: JSQ(2) at lambda = 0.9 has K = 9 levels, 14 * 8 * 81 =
/// 9072 bytes, refused under a limit of 9000 bytes and computed under 9100 (sum V = 3.986 at
/// K = 20 from rmf_tool above; here only that it runs); a malformed value is an input error
/// naming the variable.
#[test]
fn the_memory_limit_is_set_by_its_environment_variable() {
    let var = mfq_fixpoint::refined::memory::MEMORY_LIMIT_VAR;
    let (code, _, stderr, _) = mfq_env(&["refined", "models/jsq-d2.toml", "--servers", "10", "--json"], Some((var, "9000")));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("about 9.1 kB") && stderr.contains("limit of 9.0 kB (set by MFQ_MEMORY_LIMIT)"), "{stderr}");
    let (code, _, stderr, _) = mfq_env(&["refined", "models/jsq-d2.toml", "--servers", "10", "--json"], Some((var, "9100")));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr, _) = mfq_env(&["refined", "models/jsq-d2.toml", "--servers", "10"], Some((var, "lots")));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("MFQ_MEMORY_LIMIT = \"lots\" is not allowed"), "{stderr}");
}

/// Threads of this process named `name` (Linux: /proc/self/task/*/comm).
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.flatten().filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name)).count())
        .unwrap_or(0)
}

/// The worker of the refined terms' dense steps, abandoned at the deadline, kept a core busy
/// to the end of its job: JSQ(1) at lambda = 0.98 (n = 1368 state entries, 23 s of CPU: 11 s
/// of nalgebra's real Schur form, then the triangular solve and products) stopped at 8 s
/// returned at 8 s but its thread `mfq-dense-step` ran 24.6 s more (the test alone). The
/// triangular solve and the drift's second derivative now look at the deadline between blocks:
/// 1.4 s then. The Schur form cannot be interrupted, so the limit here is 14 s, past its end
/// even with the sibling tests on the other core (the old code would run ~9 s more alone).
#[test]
fn an_abandoned_refined_worker_ends_soon_after_the_deadline() {
    if !std::path::Path::new("/proc/self/task").exists() {
        return;
    }
    let m = mfq::Model::from_toml(
        &std::fs::read_to_string(format!("{}/../../models/jsq-d1.toml", env!("CARGO_MANIFEST_DIR"))).unwrap(),
        &["model.lambda=0.98".into()],
    )
    .unwrap();
    let fp = m.fixed_point(&Default::default()).unwrap();
    assert_eq!(fp.x.len(), 1368);
    let limit = 14.0;
    let started = std::time::Instant::now();
    let r = m.refined_at_within(fp, 1, &[10.0], &mfq_model::Deadline::after(limit));
    let returned = started.elapsed().as_secs_f64();
    let e = r.expect_err("stopped at the deadline").to_string();
    assert!(e.contains("the refined terms of order 1 (1368 state entries)"), "{e}");
    assert!(returned < limit + 1.0, "returned after {returned} s");
    let mut lingered = 0.0;
    while threads_named("mfq-dense-step") > 0 && lingered < 30.0 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        lingered = started.elapsed().as_secs_f64() - returned;
    }
    eprintln!("returned after {returned:.2} s; worker ended {lingered:.2} s later");
    assert!(lingered < 5.0, "the worker ran {lingered} s after the deadline");
}
