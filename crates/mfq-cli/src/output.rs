//! Output files, written whole or not at all.

use crate::Failure;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, flushed and
/// synced, then renamed over `path`. An existing file is replaced only by a complete one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| Failure::io(format!("cannot create directory {}: {e}", dir.display())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Failure::io(format!("cannot write {}: {e}", path.display()))
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
    let result = std::fs::create_dir_all(dir).map_err(|e| format!("cannot create directory {}: {e}", dir.display())).and_then(|()| {
        let probe = dir.join(format!(".mfq-write-probe.{}.tmp", std::process::id()));
        let r = std::fs::File::create(&probe).and_then(|mut f| f.write_all(b"probe"));
        let _ = std::fs::remove_file(&probe);
        r.map_err(|e| format!("cannot write in {}: {e}", dir.display()))
    });
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
            std::fs::create_dir_all(dir)?;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()
        };
        if let Err(e) = write() {
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
