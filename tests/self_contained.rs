//! The repository is self-contained: no tracked text file (code, tests, model files, docs,
//! scripts) may refer to notes kept outside the repository or to a path on one machine. Sources
//! are cited as papers (with equation, table or figure) or as files of this repository
//! (docs/references.md, validation/).
//!
//! The files are the ones `git ls-files` lists; without git (a source tarball) the directory is
//! walked instead, skipping build output, VCS data and fuzzing corpora. Binary files and files
//! that are not UTF-8 are skipped. A failure lists every `file:line` with the phrase it matched.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Phrases that point outside the repository, matched case-insensitively. They are built with
/// `concat!` so that this file does not match itself.
fn forbidden() -> Vec<(&'static str, &'static str)> {
    vec![
        (concat!("research", " notes"), "a reference to notes kept outside the repository"),
        (concat!("../", "shared"), "a path to a folder outside the repository"),
        (concat!("/wo", "rk/"), "an absolute path of one machine"),
        (concat!("/ro", "ot/"), "an absolute path of one machine"),
        (concat!("/ho", "me/"), "an absolute path of one machine"),
        (concat!("/Us", "ers/"), "an absolute path of one machine"),
        (concat!("models-pod-", "jiq-jsq"), "a note file outside the repository"),
        (concat!("models-redundancy-", "coxian"), "a note file outside the repository"),
        (concat!("anchors-", "tools"), "a note file outside the repository"),
        (concat!("rust-", "stack"), "a note file outside the repository"),
        (concat!("seed-", "systems"), "a note file outside the repository"),
        (concat!("aesthetics-", "anchors"), "a note file outside the repository"),
    ]
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository root")
}

/// Tracked files by `git ls-files`, or `None` when git is missing or this is not a checkout.
fn git_files(root: &Path) -> Option<Vec<PathBuf>> {
    let out = Command::new("git").arg("-C").arg(root).args(["ls-files", "-z"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let files: Vec<PathBuf> =
        out.stdout.split(|&b| b == 0).filter(|s| !s.is_empty()).map(|s| root.join(String::from_utf8_lossy(s).as_ref())).collect();
    (!files.is_empty()).then_some(files)
}

/// Directories never searched when walking without git (relative to the root).
const SKIP_DIRS: [&str; 8] = [".git", "target", "fuzz/target", "fuzz/corpus", "fuzz/artifacts", "fuzz/coverage", "out", "__pycache__"];

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        let name = entry.file_name().to_string_lossy().to_string();
        if name == ".git" {
            continue; // a directory, or in a worktree a file naming the main checkout
        }
        if path.is_dir() {
            if !SKIP_DIRS.iter().any(|s| rel == *s || name == *s) {
                walk(root, &path, out);
            }
        } else {
            out.push(path);
        }
    }
}

fn files(root: &Path) -> Vec<PathBuf> {
    git_files(root).unwrap_or_else(|| {
        let mut v = Vec::new();
        walk(root, root, &mut v);
        v
    })
}

/// `file:line: phrase (why)` for every forbidden phrase in `text`.
fn violations(rel: &str, text: &str) -> Vec<String> {
    let rules = forbidden();
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        for (phrase, why) in &rules {
            if lower.contains(&phrase.to_lowercase()) {
                found.push(format!("{rel}:{}: \"{phrase}\" ({why}): {}", n + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn no_references_outside_the_repository() {
    let root = root();
    let files = files(&root);
    assert!(files.len() > 50, "only {} files found under {}", files.len(), root.display());
    let mut found = Vec::new();
    let mut searched = 0;
    for path in &files {
        let Ok(bytes) = std::fs::read(path) else { continue };
        if bytes.contains(&0) {
            continue; // binary
        }
        let Ok(text) = String::from_utf8(bytes) else { continue };
        searched += 1;
        let rel = path.strip_prefix(&root).unwrap_or(path).to_string_lossy().replace('\\', "/");
        found.extend(violations(&rel, &text));
    }
    assert!(searched > 50, "only {searched} text files searched");
    assert!(
        found.is_empty(),
        "{} reference(s) to material outside the repository (cite a paper or a file of the repository instead, \
         see docs/references.md):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The matcher itself: every rule fires on a planted line, case-insensitively, and ordinary
/// text (including the word "notes" alone) passes.
#[test]
fn the_matcher_finds_planted_references() {
    for (phrase, _) in forbidden() {
        let text = format!("fine line\nsee {} for details\n", phrase.to_uppercase());
        let v = violations("x.md", &text);
        assert_eq!(v.len(), 1, "{phrase}: {v:?}");
        assert!(v[0].starts_with("x.md:2:"), "{v:?}");
    }
    assert!(violations("y.rs", "// release notes; see docs/references.md and validation/jsq.py\n").is_empty());
}
