//! Helpers shared by the integration tests that run the `mfq` binary (`mod common;` in each).
#![allow(dead_code)] // each test crate uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (model files are named from it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the `mfq` binary with `args` from the repository root, without backtraces.
pub fn mfq(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mfq")).args(args).current_dir(root()).env_remove("RUST_BACKTRACE").output().expect("mfq runs")
}

/// [`mfq`] with the environment variable `var` set to `value`.
pub fn mfq_with_env(args: &[&str], var: &str, value: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mfq"))
        .args(args)
        .current_dir(root())
        .env_remove("RUST_BACKTRACE")
        .env(var, value)
        .output()
        .expect("mfq runs")
}

/// `(stdout, stderr)` of a run, as text.
pub fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// An empty scratch directory named after the test crate, `name` and this process.
pub fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mfq-{}-{name}-{}", env!("CARGO_CRATE_NAME"), std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}
