//! Fuzz target: the command line's argument paths. The input becomes an argument vector and
//! `mfq_cli::run` parses and dispatches it in-process, as the `mfq` binary would. Must never
//! panic; any exit code clap or docs/errors.md allows is fine.
//!
//! - The input is split on NUL and whitespace into at most 24 arguments; `@N` names the N-th
//!   bundled model file ([`MODELS`]), so that mutations reach the solvers (fuzz/cli.dict and
//!   fuzz/seeds/cli give real subcommands, flags and overrides).
//! - It runs in a temporary directory holding a copy of `models/` (so give libFuzzer absolute
//!   corpus paths, as `just fuzz cli` does): output files (`out/...`,
//!   `--out DIR`) go there. An argument that could reach outside it (an absolute path, `~`,
//!   `..`) is replaced by a bundled model file.
//! - Time and size are capped: every run of three or more digits is cut to its first two (K,
//!   d, N, points and exponents stay below 100), the costly options of `simulate`, `compare`
//!   and `check` get small values unless the input sets them, every model command gets
//!   `--max-seconds 1` (an input's own limit is kept up to 1 s), and `figure` runs only on names that do not
//!   exist (a real figure runs whole sweeps).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::Once;

/// Bundled model files, by `@N`. The redundancy pair approximations are left out: `report` on
/// them takes minutes (their size limit is an open item of docs/errors.md).
const MODELS: &[&str] = &[
    "models/jsq-d2.toml",
    "models/jsq-d1.toml",
    "models/jiq.toml",
    "models/jiq-h2.toml",
    "models/pod-errors-li.toml",
    "models/pod-errors-ld.toml",
    "models/pod-errors-li-unstable.toml",
    "models/pod-li-h2.toml",
    "models/sq2-h2.toml",
    "models/lld2-exp.toml",
    "models/opinion-biased.toml",
    "models/opinion-stubborn.toml",
    "models/hetero-sa-jsq-caseA.toml",
    "models/hetero-sa-jiq-caseA.toml",
    "models/hetero-pull-caseB.toml",
    "models/hetero-ps-sq2-caseA.toml",
    "models/hetero-static-caseA.toml",
    "models/redundancy-mf-d2.toml",
    "models/redundancy-identical-ps-unstable.toml",
    "models/generic/jsq2.toml",
    "models/generic/sir.toml",
    "models/generic/two-class.toml",
];

/// Commands that read a model file and take `--max-seconds`.
const MODEL_COMMANDS: &[&str] = &["report", "solve", "fixed-point", "check", "tail", "simulate", "compare", "sweep", "branches"];

/// Small values for costly options, per command, used when the input does not set them.
const CAPS: &[(&str, &[(&str, &str)])] = &[
    ("simulate", &[("--servers", "20"), ("--time", "20"), ("--warmup", "2"), ("--replications", "1"), ("--batches", "4")]),
    ("compare", &[("--servers", "5,20"), ("--time", "20"), ("--warmup", "2"), ("--replications", "1"), ("--batches", "4")]),
    ("check", &[("--starts", "4"), ("--time-limit", "50")]),
];

/// Creates the temporary working directory with a copy of `models/` and enters it (once).
fn sandbox() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let dir = std::env::temp_dir().join(format!("mfq-fuzz-cli-{}", std::process::id()));
        copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../models"), &dir.join("models")).expect("copy models/");
        std::env::set_current_dir(&dir).expect("enter the sandbox");
    });
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// `arg` with every run of three or more ASCII digits cut to its first two.
fn cap_digits(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len());
    let mut run = 0;
    for c in arg.chars() {
        run = if c.is_ascii_digit() { run + 1 } else { 0 };
        if run <= 2 {
            out.push(c);
        }
    }
    out
}

/// Whether `arg` could name a file outside the working directory (`/x`, `~/x`, `../x`,
/// `--out=/x`, `lambda=..`).
fn escapes(arg: &str) -> bool {
    arg.contains("..") || arg.split('=').any(|part| part.starts_with('/') || part.starts_with('~'))
}

/// The argument vector for one input, or `None` for an input not to run (a real figure).
fn arguments(data: &[u8]) -> Option<Vec<String>> {
    let text = String::from_utf8_lossy(data);
    let mut args: Vec<String> = text
        .split(|c: char| c == '\0' || c.is_whitespace())
        .filter(|a| !a.is_empty())
        .take(24)
        .map(|a| {
            let a = cap_digits(a);
            if let Some(n) = a.strip_prefix('@') {
                MODELS[n.parse::<usize>().unwrap_or(0) % MODELS.len()].to_string()
            } else if escapes(&a) {
                MODELS[a.len() % MODELS.len()].to_string()
            } else {
                a
            }
        })
        .collect();
    let command = args.iter().position(|a| !a.starts_with('-'));
    let name = command.map(|i| args[i].clone()).unwrap_or_default();
    let has = |args: &[String], flag: &str| args.iter().any(|a| a == flag || a.starts_with(&format!("{flag}=")));
    if name == "figure" && (has(&args, "--all") || args.iter().any(|a| Path::new("models/figures").join(format!("{a}.toml")).is_file()))
    {
        return None;
    }
    if let Some(i) = command {
        let mut extra: Vec<String> = Vec::new();
        if MODEL_COMMANDS.contains(&name.as_str()) && !has(&args, "--max-seconds") {
            extra.extend(["--max-seconds".to_string(), "1".to_string()]);
        }
        for (flag, value) in CAPS.iter().filter(|(c, _)| *c == name).flat_map(|(_, caps)| caps.iter()) {
            if !has(&args, flag) {
                extra.extend([flag.to_string(), value.to_string()]);
            }
        }
        // right after the subcommand, before any `--` that would make them positional
        args.splice(i + 1..i + 1, extra);
    }
    // a time limit the input sets is kept, but at most 1 s
    for i in 0..args.len() {
        let long = |v: &str| v.parse::<f64>().is_ok_and(|s| s > 1.0);
        if args[i] == "--max-seconds" && args.get(i + 1).is_some_and(|v| long(v)) {
            args[i + 1] = "1".to_string();
        } else if args[i].strip_prefix("--max-seconds=").is_some_and(long) {
            args[i] = "--max-seconds=1".to_string();
        }
    }
    args.insert(0, "mfq".to_string());
    Some(args)
}

fuzz_target!(|data: &[u8]| {
    sandbox();
    if let Some(args) = arguments(data) {
        let code = mfq_cli::run(args.clone());
        // docs/errors.md: 0 success, 2 invalid input, 3 unstable, 4 no convergence, 5 I/O
        assert!(matches!(code, 0 | 2 | 3 | 4 | 5), "exit code {code} for {args:?}");
    }
});
