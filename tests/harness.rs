//! The reliability harness: every bundled model file (`models/*.toml`, `models/generic/*.toml`)
//! over boundary and extreme values of each numeric parameter, through `fixed-point`, `report`,
//! `check` and a short `simulate`, each with `--max-seconds 5`. For every run it asserts:
//!
//! - it finished within 7 s of wall time (the limit plus the time to stop and print);
//! - its exit code is one of docs/errors.md (0, 2, 3, 4, 5; never a panic);
//! - no NaN or infinity in anything it printed or wrote (stdout, JSON, CSV, SVG);
//! - an input error (exit code 2) names the field (the parameter, or a `truncation.` key);
//! - its verdict agrees with the model's declared stability condition
//!   (`MeanFieldModel::stability` of the kind's probe, evaluated here in-process): inside the
//!   region `fixed-point`, `report` and `check` never exit with code 3 nor say "looks
//!   unstable"; outside it they never exit with code 0 (no converged stable fixed point).
//!
//! The values of a parameter come from its machine-readable range in the registry
//! (`Param::range`, shown by `mfq models --json`): each end, just inside and just outside it,
//! below the lower end, tiny (1e-300) and huge (1e300; 1e9 for integers), and the stability
//! boundary +- 1e-4, found by bisection on the declared condition. Generic models vary each of
//! their `[model.parameters]` (0, tiny, huge, negative, +- 1e-4 relative).
//!
//! Failures already known and owned by other work are listed in [`KNOWN_FAILURES`]: the test
//! prints them and fails on any other failure, and on a listed failure that no longer occurs
//! (so that the list only shrinks). The run count and the slowest runs are printed.

use mfq_model::{ModelFile, ParamRange, Stability};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// `--max-seconds` of every run.
const MAX_SECONDS: &str = "5";
/// Wall-clock bound of every run, seconds.
const WALL_LIMIT: f64 = 7.0;
/// A run still going after this many seconds is killed (it has failed the bound already).
const KILL_AFTER: f64 = 30.0;

/// Failures known and owned by other work, each `file|NAME=VALUE|command|check` or, for points
/// found by the boundary search (whose last digits depend on the bisection),
/// `file|NAME@ROLE|command|check` (roles: [`Case::role`]). The test fails on a listed failure that
/// no longer occurs (wall-time entries excepted: they depend on the machine's load), so that the
/// list only shrinks: remove an entry when its fix lands.
const KNOWN_FAILURES: &[&str] = &[
    // Time limits of the checker (class 1): `check` of jsq-d3 d=1 and pod-errors-ld g=1e9
    // ended in 5.06 s and 5.12 s at load 12 on two cores (the deadline is honoured; the
    // staircase order of sq2-h2, which ran minutes, is fixed), but these points overran 7 s of
    // wall time at load 16 (pod-errors-li-unstable at lambda@boundary-: 11.3 s in the CI-sized
    // run of this branch at load 16; 18.7 s before)
    "models/jsq-d3.toml|d=1|check|wall",
    "models/jsq-d3.toml|d=1|report|wall",
    "models/pod-errors-ld.toml|g=1000000000|check|wall",
    "models/pod-errors-ld.toml|g=1000000000|report|wall",
    "models/pod-errors-li-unstable.toml|eps@boundary-|check|wall",
    "models/pod-errors-li-unstable.toml|lambda@boundary-|check|wall",
    "models/pod-errors-li.toml|eps@boundary-|check|wall",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The declared stability of one parameter point.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Declared {
    Stable,
    Unstable,
    Unknown,
    /// The file with this value does not parse or build (an input error is expected).
    Invalid,
}

/// One parameter point of one model file.
struct Case {
    file: String,
    name: String,
    value: f64,
    declared: Declared,
    /// Where the value comes from: `below` (under the lower end), `lo`, `lo+`, `hi-`, `hi`, `hi+`,
    /// `tiny`, `huge`, `boundary-` / `boundary+` (the stability boundary -+ 1e-4), and for
    /// generic parameters `zero`, `negative`, `base+` / `base-` (+- 1e-4 relative).
    role: &'static str,
    /// The file's `model.kind`.
    kind: String,
}

/// A value as `--set` gets it (integers without a fraction).
fn fmt_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:e}")
    }
}

/// The declared stability of `text` with `name = value` (stable with `truncation.buffer`).
fn declared(text: &str, name: &str, value: f64) -> Declared {
    let set = [format!("{name}={}", fmt_value(value))];
    let Ok(file) = ModelFile::parse(text, &set) else { return Declared::Invalid };
    if !file.model.has_model() {
        return Declared::Unknown;
    }
    let levels = file.truncation.levels.unwrap_or_else(|| file.model.initial_levels());
    match file.model.build_probe(levels).map(|m| file.truncation.stability_of(m.stability())) {
        Ok(Stability::Stable { .. }) => Declared::Stable,
        Ok(Stability::Unstable { .. }) => Declared::Unstable,
        Ok(_) => Declared::Unknown,
        Err(_) => Declared::Invalid,
    }
}

/// Points where the declared verdict changes between stable and unstable along `name`, found
/// by bisection between 32 samples of `[lo, hi]` (log-spaced when `lo > 0`). The search stops
/// when it has taken `budget` seconds (kinds whose probe is costly to build): the boundaries
/// found so far are returned, and `false` says the search was cut.
fn stability_boundaries(text: &str, name: &str, lo: f64, hi: f64, budget: f64) -> (Vec<f64>, bool) {
    let started = Instant::now();
    let samples: Vec<f64> = (0..=32)
        .map(|i| {
            let t = i as f64 / 32.0;
            if lo > 0.0 {
                lo * (hi / lo).powf(t)
            } else {
                lo + (hi - lo) * t
            }
        })
        .collect();
    let stable = |v: f64| match declared(text, name, v) {
        Declared::Stable => Some(true),
        Declared::Unstable => Some(false),
        _ => None,
    };
    let verdicts: Vec<Option<bool>> =
        samples.iter().map(|&v| if started.elapsed().as_secs_f64() < budget { stable(v) } else { None }).collect();
    let mut out = Vec::new();
    for (w, v) in samples.windows(2).zip(verdicts.windows(2)) {
        let (Some(a), Some(b)) = (v[0], v[1]) else { continue };
        if a == b {
            continue;
        }
        // 48 halvings: well below the 1e-4 offset for any window of a range up to ~1e10
        let (mut x0, mut x1) = (w[0], w[1]);
        for _ in 0..48 {
            let m = 0.5 * (x0 + x1);
            if stable(m) == Some(a) {
                x0 = m;
            } else {
                x1 = m;
            }
        }
        out.push(0.5 * (x0 + x1));
    }
    (out, started.elapsed().as_secs_f64() < budget)
}

/// The values of a parameter with a declared range, around `base` (its value in the file), with
/// their roles (see [`Case::role`]); `budget` bounds the stability-boundary search, seconds.
fn range_values(text: &str, name: &str, r: &ParamRange, base: f64, budget: f64) -> Vec<(&'static str, f64)> {
    let mut v = Vec::new();
    if r.integer {
        let lo = r.min;
        v.extend([("below", lo - 1.0), ("lo", lo), ("lo+", lo + 1.0), ("huge", 1e9)]);
        if let Some(hi) = r.max {
            v.extend([("hi-", hi - 1.0), ("hi", hi), ("hi+", hi + 1.0)]);
        }
    } else {
        let lo = r.min;
        let delta = |x: f64| 1e-6 * x.abs().max(1.0);
        v.extend([("below", lo - 1.0), ("lo", lo), ("lo+", lo + delta(lo)), ("tiny", 1e-300), ("huge", 1e300)]);
        if let Some(hi) = r.max {
            v.extend([("hi-", hi - delta(hi)), ("hi", hi), ("hi+", hi + delta(hi))]);
        }
        let hi = r.max.unwrap_or(base.abs().max(1.0) * 100.0);
        let (boundaries, complete) = stability_boundaries(text, name, lo.max(1e-6), hi, budget);
        if !complete {
            println!("note: the stability-boundary search of {name} stopped after {budget} s ({} found)", boundaries.len());
        }
        for b in boundaries {
            v.extend([("boundary-", b - 1e-4), ("boundary+", b + 1e-4)]);
        }
    }
    v
}

/// The parameter points of one model file; `budget`: seconds for each parameter's
/// stability-boundary search.
fn cases(path: &Path, budget: f64) -> Vec<Case> {
    let rel = path.strip_prefix(root()).unwrap_or(path).to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).expect("model file");
    let doc: toml::Table = text.parse().expect("bundled model files are TOML");
    let model = doc.get("model").and_then(|m| m.as_table()).cloned().unwrap_or_default();
    let kind = model.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    let mut points: Vec<(String, &'static str, f64)> = Vec::new();
    if kind == "generic" {
        let params = model.get("parameters").and_then(|p| p.as_table()).cloned().unwrap_or_default();
        for (name, value) in &params {
            let Some(base) = value.as_float().or_else(|| value.as_integer().map(|i| i as f64)) else { continue };
            let values = [
                ("zero", 0.0),
                ("tiny", 1e-300),
                ("huge", 1e300),
                ("negative", -1.0),
                ("base+", base * (1.0 + 1e-4)),
                ("base-", base * (1.0 - 1e-4)),
            ];
            for (role, x) in values {
                points.push((name.clone(), role, x));
            }
        }
    } else if let Some(k) = mfq_model::registry::kind(kind) {
        for p in k.params {
            let (Some(r), Some(value)) = (p.range, model.get(p.name)) else { continue };
            let base = value.as_float().or_else(|| value.as_integer().map(|i| i as f64)).unwrap_or(1.0);
            for (role, x) in range_values(&text, p.name, &r, base, budget) {
                points.push((p.name.to_string(), role, x));
            }
        }
    }
    let mut seen = BTreeSet::new();
    points
        .into_iter()
        .filter(|(n, _, x)| x.is_finite() && seen.insert(format!("{n}={}", fmt_value(*x))))
        .map(|(name, role, value)| Case {
            declared: declared(&text, &name, value),
            file: rel.clone(),
            name,
            value,
            role,
            kind: kind.to_string(),
        })
        .collect()
}

/// The commands run on every point.
fn commands(file: &str, set: &str, out: &str) -> Vec<(&'static str, Vec<String>)> {
    let base =
        |cmd: &str| vec![cmd.to_string(), file.to_string(), "--set".into(), set.to_string(), "--max-seconds".into(), MAX_SECONDS.into()];
    let with = |mut v: Vec<String>, extra: &[&str]| {
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    vec![
        ("fixed-point", with(base("fixed-point"), &["--json"])),
        ("report", with(base("report"), &["--out", out])),
        ("check", with(base("check"), &["--json", "--starts", "8", "--out", out])),
        (
            "simulate",
            with(base("simulate"), &["--json", "--servers", "20", "--time", "50", "--warmup", "5", "--replications", "2", "--out", out]),
        ),
    ]
}

/// Tokens of `s` that read as a number but are not finite (`NaN`, `inf`, `1e999`).
fn non_finite(s: &str) -> Option<String> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '+'))
        .find(|t| !t.is_empty() && t.parse::<f64>().is_ok_and(|v| !v.is_finite()))
        .map(str::to_string)
}

/// What one run did.
struct Run {
    key: String,
    /// `file|NAME@ROLE|command`, the value-independent form of `key`.
    pattern: String,
    seconds: f64,
    failures: Vec<String>,
}

fn run_one(case: &Case, command: &str, args: &[String], out: &Path) -> Run {
    let set = format!("{}={}", case.name, fmt_value(case.value));
    let key = format!("{}|{set}|{command}", case.file);
    let pattern = format!("{}|{}@{}|{command}", case.file, case.name, case.role);
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mfq"))
        .args(args)
        .current_dir(root())
        .env_remove("RUST_BACKTRACE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mfq runs");
    // a run that hangs is killed after KILL_AFTER seconds (it fails the wall-time check)
    let (mut so, mut se) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let err = std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = se.read_to_end(&mut b);
            b
        });
        let mut a = Vec::new();
        let _ = so.read_to_end(&mut a);
        (a, err.join().unwrap_or_default())
    });
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break st;
        }
        if started.elapsed().as_secs_f64() > KILL_AFTER {
            let _ = child.kill();
            break child.wait().expect("mfq ends");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let (stdout_bytes, stderr_bytes) = reader.join().expect("reader");
    let o = std::process::Output { status, stdout: stdout_bytes, stderr: stderr_bytes };
    let seconds = started.elapsed().as_secs_f64();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let code = o.status.code();
    let mut failures = Vec::new();
    let mut fail = |check: &str, detail: String| failures.push(format!("{key}|{check}: {detail}"));
    if seconds > WALL_LIMIT {
        fail("wall", format!("took {seconds:.1} s"));
    }
    if !matches!(code, Some(0 | 2 | 3 | 4 | 5)) {
        fail("exit", format!("exit code {code:?}; stderr: {}", stderr.trim()));
    }
    if let Some(t) = non_finite(&stdout) {
        fail("nan", format!("stdout has '{t}'"));
    }
    for entry in std::fs::read_dir(out).into_iter().flatten().flatten() {
        if let Some(t) = std::fs::read_to_string(entry.path()).ok().as_deref().and_then(non_finite) {
            fail("nan", format!("{} has '{t}'", entry.file_name().to_string_lossy()));
        }
    }
    // the field: the parameter, a truncation key, an option of the command (`servers`), or the
    // kind when the command does not apply to it (`check` of a kind without dynamics)
    let named = [case.name.as_str(), "truncation.", "servers", "replications", "starts", case.kind.as_str()]
        .iter()
        .any(|f| !f.is_empty() && stderr.contains(f));
    if code == Some(2) && !named {
        fail("field", format!("input error without the field: {}", stderr.trim()));
    }
    if command != "simulate" {
        match case.declared {
            Declared::Stable if code == Some(3) || stdout.contains("looks unstable") || stderr.contains("looks unstable") => {
                fail("verdict", format!("inside the stability region, exit {code:?}: {}", stderr.trim()))
            }
            Declared::Unstable if code == Some(0) => fail("verdict", "outside the stability region, exit code 0".into()),
            _ => {}
        }
    }
    Run { key, pattern, seconds, failures }
}

/// Every bundled model file: `models/*.toml` and the files of each subdirectory of `models/` that
/// are models (a `[model]` table; `models/figures/` holds figure descriptions, not models).
fn model_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root().join("models")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).expect("models/").flatten() {
            let path = e.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "toml") && is_model(&path) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Whether the TOML file at `path` describes a model (it has a `[model]` table).
fn is_model(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .is_some_and(|doc| doc.get("model").is_some_and(|m| m.is_table()))
}

/// The parameter points of every file in `files`, built on parallel workers.
fn all_cases(files: &[PathBuf], budget: f64) -> Vec<Case> {
    let next = AtomicUsize::new(0);
    let out = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers() {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(f) = files.get(i) else { break };
                let c = cases(f, budget);
                out.lock().expect("no poisoned lock").push((i, c));
            });
        }
    });
    let mut out = out.into_inner().expect("no poisoned lock");
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().flat_map(|(_, c)| c).collect()
}

/// Parallel runs: at most 4, at least 2 (the CI machine has two cores).
fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 4)
}

/// Runs `jobs` (a case index and a command) on parallel workers.
fn run_jobs(all: &[Case], jobs: &[(usize, &'static str)]) -> Vec<Run> {
    let next = AtomicUsize::new(0);
    let runs = Mutex::new(Vec::new());
    let tmp = std::env::temp_dir().join(format!("mfq-harness-{}-{}", std::process::id(), jobs.len()));
    std::thread::scope(|s| {
        for _ in 0..workers() {
            s.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(i, command)) = jobs.get(j) else { break };
                let case = &all[i];
                let out = tmp.join(format!("run-{j}"));
                let set = format!("{}={}", case.name, fmt_value(case.value));
                let args = commands(&case.file, &set, out.to_str().expect("utf-8 temp dir"));
                let (_, args) = args.into_iter().find(|(c, _)| *c == command).expect("command");
                let run = run_one(case, command, &args, &out);
                let _ = std::fs::remove_dir_all(&out);
                runs.lock().expect("no poisoned lock").push(run);
            });
        }
    });
    let _ = std::fs::remove_dir_all(&tmp);
    let mut runs = runs.into_inner().expect("no poisoned lock");
    runs.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    runs
}

/// Prints the slowest runs and the failures; the failures that [`KNOWN_FAILURES`] does not list.
/// With `complete` (every point was run), a listed failure that no longer occurs counts too.
fn judge(runs: &[Run], complete: bool) -> (Vec<String>, Vec<&'static str>) {
    for r in runs.iter().take(8) {
        println!("  slowest: {:.2} s  {}", r.seconds, r.key);
    }
    // each failure as `key|check: detail` and `pattern|check`
    let failures: Vec<(&String, String)> =
        runs.iter().flat_map(|r| r.failures.iter().map(|f| (f, format!("{}{}", r.pattern, &f[r.key.len()..])))).collect();
    let listed = |f: &(&String, String), k: &str| f.0.starts_with(k) || f.1.starts_with(k);
    let known = |f: &(&String, String)| KNOWN_FAILURES.iter().any(|k| listed(f, k));
    let mut new = Vec::new();
    for f in &failures {
        if known(f) {
            println!("known failure (owned elsewhere): {}", f.0);
        } else {
            println!("FAILURE: {}", f.0);
            new.push(f.0.to_string());
        }
    }
    let gone: Vec<&'static str> = if complete {
        KNOWN_FAILURES.iter().copied().filter(|k| !k.ends_with("|wall") && !failures.iter().any(|f| listed(f, k))).collect()
    } else {
        Vec::new()
    };
    for k in &gone {
        println!("listed failure no longer occurs (remove it from KNOWN_FAILURES): {k}");
    }
    (new, gone)
}

/// The whole grid: every point of every model file through the four commands.
/// `MFQ_HARNESS_FILES=jsq,lld` restricts it to the files whose path contains one of the words.
#[test]
#[ignore = "about 25 minutes on two cores; run with `just harness`"]
fn every_model_file_at_boundary_and_extreme_values() {
    let filter = std::env::var("MFQ_HARNESS_FILES").unwrap_or_default();
    let words: Vec<&str> = filter.split(',').filter(|w| !w.is_empty()).collect();
    let files: Vec<PathBuf> =
        model_files().into_iter().filter(|f| words.is_empty() || words.iter().any(|w| f.to_string_lossy().contains(w))).collect();
    let started = Instant::now();
    let all = all_cases(&files, 20.0);
    println!("{} parameter points of {} model files in {:.0} s", all.len(), files.len(), started.elapsed().as_secs_f64());
    let jobs: Vec<(usize, &'static str)> =
        (0..all.len()).flat_map(|i| ["fixed-point", "report", "check", "simulate"].map(|c| (i, c))).collect();
    let runs = run_jobs(&all, &jobs);
    println!("{} runs in {:.0} s", runs.len(), started.elapsed().as_secs_f64());
    let (new, gone) = judge(&runs, words.is_empty());
    assert!(new.is_empty() && gone.is_empty(), "{} new failures, {} listed failures gone (see above)", new.len(), gone.len());
}

/// Roles sampled by the CI-sized run, in order of preference: the stability boundary from the
/// stable side and from the unstable side, then the extremes and the ends of the range.
const CI_ROLES: [&str; 9] = ["boundary-", "boundary+", "huge", "hi+", "below", "tiny", "lo", "base+", "negative"];

/// The CI-sized harness: for every model file, two points (the first two of [`CI_ROLES`] it has,
/// over its first parameters), each through one command; the commands rotate over the files so
/// that each file's pair and each command is covered. Same assertions as the whole grid.
#[test]
fn every_model_file_at_two_boundary_or_extreme_points() {
    let started = Instant::now();
    let files = model_files();
    // a short boundary search: a costly probe (the LCFS limit, LL(d)) keeps its extremes only
    let all = all_cases(&files, 1.0);
    let mut jobs: Vec<(usize, &'static str)> = Vec::new();
    const COMMANDS: [&str; 4] = ["fixed-point", "check", "report", "simulate"];
    for (n, f) in files.iter().enumerate() {
        let rel = f.strip_prefix(root()).unwrap_or(f).to_string_lossy().into_owned();
        let mine: Vec<usize> = (0..all.len()).filter(|&i| all[i].file == rel).collect();
        let mut picked: Vec<usize> = Vec::new();
        for role in CI_ROLES {
            if let Some(&i) = mine.iter().find(|&&i| all[i].role == role && !picked.contains(&i)) {
                picked.push(i);
            }
            if picked.len() == 2 {
                break;
            }
        }
        for (j, &i) in picked.iter().enumerate() {
            jobs.push((i, COMMANDS[(n + 2 * j) % COMMANDS.len()]));
        }
    }
    let runs = run_jobs(&all, &jobs);
    println!("{} runs over {} model files in {:.0} s", runs.len(), files.len(), started.elapsed().as_secs_f64());
    assert!(runs.len() >= files.len(), "at least one run per model file");
    let (new, _) = judge(&runs, false);
    assert!(new.is_empty(), "{} new failures (see above)", new.len());
}
