//! Output files, written whole or not at all.

use crate::Failure;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Creates `dir` (with its parents) and runs `f` in it, again when `f` fails because a
/// directory vanished: another `mfq` process that created a shared parent (the default `out/`)
/// for its probe removes it again when it is empty ([`ensure_writable`]), so two runs started
/// together (parallel tests, a Dask grid) must not fail on each other's clean-up.
fn in_dir<T>(dir: &Path, mut f: impl FnMut() -> std::io::Result<T>) -> Result<T, String> {
    let mut tries = 0;
    loop {
        tries += 1;
        if let Err(e) = std::fs::create_dir_all(dir) {
            // `NotFound`: a parent removed between two steps; `AlreadyExists`: seen (overlay
            // file systems) when the parent is removed while the directory is made
            if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::AlreadyExists) && tries < 20 {
                continue;
            }
            return Err(format!("cannot create directory {}: {e}", dir.display()));
        }
        match f() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 20 => continue,
            r => return r.map_err(|e| e.to_string()),
        }
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, flushed and
/// synced, then renamed over `path`. An existing file is replaced only by a complete one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    in_dir(dir, write).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Failure::io(if e.starts_with("cannot create") { e } else { format!("cannot write {}: {e}", path.display()) })
    })
}

/// Checks, before any work, that files can be written in `dir`: creates it, writes and removes
/// a small probe file there, and removes again the directories it created (a run that ends
/// without output leaves nothing behind).
///
/// # Errors
/// An I/O failure (exit code 5) naming the directory, so that a long job is not lost at its end.
pub fn ensure_writable(dir: &Path) -> Result<(), Failure> {
    let created: Vec<PathBuf> = dir.ancestors().take_while(|a| !a.as_os_str().is_empty() && !a.exists()).map(Path::to_path_buf).collect();
    let probe = dir.join(format!(".mfq-write-probe.{}.tmp", std::process::id()));
    let result = in_dir(dir, || {
        let r = std::fs::File::create(&probe).and_then(|mut f| f.write_all(b"probe"));
        let _ = std::fs::remove_file(&probe);
        r
    })
    .map_err(|e| if e.starts_with("cannot create") { e } else { format!("cannot write in {}: {e}", dir.display()) });
    // innermost first; `remove_dir` leaves a directory that is not empty
    for d in &created {
        let _ = std::fs::remove_dir(d);
    }
    result.map_err(|e| Failure::io(format!("{e} (checked before the work started; nothing was computed)")))
}

/// Writes several files as a set: each is first written whole to a temporary file beside its
/// target, and only when all are complete are they renamed into place. A failure while
/// writing leaves none of the set behind (renames within a directory do not fail in practice).
pub fn write_all_atomic(files: &[(PathBuf, Vec<u8>)]) -> Result<(), Failure> {
    // a target that is a directory would fail at its rename, after others were renamed
    if let Some((path, _)) = files.iter().find(|(p, _)| p.is_dir()) {
        return Err(Failure::io(format!("cannot write {}: it is a directory (no file of the set was written)", path.display())));
    }
    let mut staged: Vec<(PathBuf, &Path)> = Vec::new();
    let cleanup = |staged: &[(PathBuf, &Path)]| {
        for (tmp, _) in staged {
            let _ = std::fs::remove_file(tmp);
        }
    };
    for (path, bytes) in files {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
        let tmp = dir.join(format!(".{name}.{}.set.tmp", std::process::id()));
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()
        };
        if let Err(e) = in_dir(dir, write) {
            let _ = std::fs::remove_file(&tmp);
            cleanup(&staged);
            return Err(Failure::io(format!("cannot write {}: {e} (no file of the set was written)", path.display())));
        }
        staged.push((tmp, path));
    }
    for (i, (tmp, path)) in staged.iter().enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            cleanup(&staged[i..]);
            return Err(Failure::io(format!("cannot write {}: {e}", path.display())));
        }
    }
    Ok(())
}

/// Prints `value` as one line of JSON on stdout through a buffer (a large document, such as a
/// transient's trajectory, is written in big blocks rather than through the line-buffered
/// stdout); a closed stdout is ignored, as by `outln!`.
pub(crate) fn print_json(value: &impl serde::Serialize) {
    let mut w = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let _ = serde_json::to_writer(&mut w, value).map_err(std::io::Error::from).and_then(|()| writeln!(w)).and_then(|()| w.flush());
}

/// The output directory: `--out DIR`, or `out/<model file stem>`.
pub fn out_dir(out: &Option<PathBuf>, model: &Path) -> PathBuf {
    out.clone().unwrap_or_else(|| {
        let stem = model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
        PathBuf::from("out").join(stem)
    })
}

/// A number for text output: fixed for moderate magnitudes, scientific otherwise.
pub fn num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if (1e-4..1e6).contains(&v.abs()) {
        format!("{v:.6}")
    } else {
        format!("{v:.6e}")
    }
}

/// The checker's plots for a report: `attraction.svg` (and `basins.svg` when there are
/// several equilibria), as (path, contents) to write as a set.
pub(crate) fn check_plots(
    dir: &std::path::Path,
    report: &mfq_fixpoint::AttractionReport,
) -> Result<Vec<(std::path::PathBuf, Vec<u8>)>, Failure> {
    let mut files = vec![(
        dir.join("attraction.svg"),
        mfq_plot::attraction::convergence_svg(report).map_err(|e| Failure::io(e.to_string()))?.into_bytes(),
    )];
    if matches!(report.verdict, mfq_fixpoint::Verdict::NotUnique { .. }) {
        files
            .push((dir.join("basins.svg"), mfq_plot::attraction::basins_svg(report).map_err(|e| Failure::io(e.to_string()))?.into_bytes()));
    }
    Ok(files)
}

/// A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or a line
/// break (state names such as `P[0,0]` of the pair approximations, table values of sweeps).
pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `n` followed by the singular or plural noun: `count(1, "state entry", "state entries")` is
/// "1 state entry".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// A run whose output directory's parent another run creates and removes again (the
    /// default `out/`, which [`ensure_writable`] of a concurrent run removes when it found it
    /// missing and left it empty): the probe and the write succeed. Here a thread does that
    /// churn every few tens of microseconds; tests/branches.rs hit it once on a fresh checkout, where `mfq
    /// figure` and `mfq branches` ran side by side.
    #[test]
    fn a_parent_removed_by_a_concurrent_run_does_not_fail_the_probe() {
        let root = std::env::temp_dir().join(format!("mfq-output-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let parent = root.join("out");
        let done = Arc::new(AtomicBool::new(false));
        let churn = {
            let (parent, done) = (parent.clone(), done.clone());
            std::thread::spawn(move || {
                // another run's probe: the parent made, a moment's work, then removed if empty
                while !done.load(Ordering::Relaxed) {
                    let _ = std::fs::create_dir(&parent);
                    std::thread::sleep(std::time::Duration::from_micros(20));
                    let _ = std::fs::remove_dir(&parent);
                    std::thread::sleep(std::time::Duration::from_micros(20));
                }
            })
        };
        let dir = parent.join("model");
        let mut failures = Vec::new();
        for i in 0..6000 {
            if let Err(f) = ensure_writable(&dir) {
                failures.push(format!("probe {i}: {}", f.message));
            }
            if i % 100 == 0 {
                match write_atomic(&dir.join("a.csv"), b"x\n") {
                    Ok(()) => assert_eq!(std::fs::read(dir.join("a.csv")).unwrap(), b"x\n"),
                    Err(f) => failures.push(format!("write {i}: {}", f.message)),
                }
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
        done.store(true, Ordering::Relaxed);
        churn.join().unwrap();
        let _ = std::fs::remove_dir_all(&root);
        assert!(failures.is_empty(), "{} failures, first: {:?}", failures.len(), failures.first());
    }
}
