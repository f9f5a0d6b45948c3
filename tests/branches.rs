//! `mfq branches` through the binary (docs/branches.md): the fold of the biased opinion model at
//! alpha = 1/9 and the pitchfork of the symmetric stubborn model at gamma = 1/4 in its files, bad
//! input refused with the field and what is allowed, `--max-seconds`; and `mfq figure` leaves
//! the gallery alone unless asked (`--gallery`).

mod common;
use common::{mfq, text, tmp_dir};

/// The special points of a run, read back from `special-points.csv`: `(kind, parameter)`.
fn special(dir: &std::path::Path) -> Vec<(String, f64)> {
    let csv = std::fs::read_to_string(dir.join("special-points.csv")).unwrap();
    csv.lines().skip(1).map(|l| l.split(',').collect::<Vec<_>>()).map(|c| (c[1].to_string(), c[2].parse().unwrap())).collect()
}

#[test]
fn fold_and_pitchfork_of_the_opinion_models() {
    let dir = tmp_dir("biased");
    let o = mfq(&["branches", "models/opinion-biased.toml", "--set", "alpha=0:0.2:200", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let s = special(&dir);
    assert!(s.len() == 1 && s[0].0 == "fold" && (s[0].1 - 1.0 / 9.0).abs() < 1e-8, "{s:?}");
    let svg = std::fs::read_to_string(dir.join("branches.svg")).unwrap();
    assert!(svg.contains("</svg>") && !svg.contains("NaN") && !svg.contains("inf"));
    let dir = tmp_dir("stubborn");
    let o =
        mfq(&["branches", "models/opinion-stubborn.toml", "--set", "gamma0,gamma1=0:0.4:200", "--json", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["starts"].as_array().unwrap().len(), 3);
    assert!(special(&dir).iter().all(|(k, p)| k == "branch-point" && (p - 0.25).abs() < 1e-8), "{:?}", special(&dir));
}

#[test]
fn bad_input_is_refused_with_the_reason() {
    for (set, want) in [
        ("beta=0:0.2:20", "no parameter 'beta'"),
        ("alpha=0.1:0.1:20", "empty range"),
        ("alpha=0:0.2:1", "number of points"),
        ("alpha=0:1.5:20", "model.alpha = 1.5"),
    ] {
        let o = mfq(&["branches", "models/opinion-biased.toml", "--set", set]);
        let (_, err) = text(&o);
        assert!(o.status.code() == Some(2) && err.contains(want), "{set}: {err}");
    }
    let o = mfq(&["branches", "models/jsq-d2.toml", "--set", "d=1:3:10"]);
    assert!(o.status.code() == Some(2) && text(&o).1.contains("integers only"), "{:?}", text(&o));
    let o = mfq(&["branches", "models/opinion-biased.toml", "--set", "alpha=0.05"]);
    assert!(o.status.code() == Some(2) && text(&o).1.contains("exactly one"), "{:?}", text(&o));
    let o = mfq(&["figure", "checker-opinion", "--gallery", "--out", "somewhere"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}

/// A run past `--max-seconds` stops with exit code 4 and writes no files.
#[test]
fn max_seconds_stops_it() {
    let dir = tmp_dir("limit");
    let o = mfq(&[
        "branches",
        "models/opinion-biased.toml",
        "--set",
        "alpha=0:0.2:100000",
        "--max-seconds",
        "0.05",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(4), "{:?}", text(&o));
    assert!(text(&o).1.contains("max-seconds 0.05") && !dir.join("branches.csv").exists(), "{:?}", text(&o));
}

/// A queue: JSQ(2) along lambda in [0.5, 0.95] has one stable branch, the mean queue length
/// `sum_k lambda^(2^k - 1)` (Mitzenmacher, IEEE TPDS 12(10), 2001) at every point, with the
/// truncation level chosen for the end of the range.
#[test]
fn jsq2_branch_is_the_closed_form() {
    let dir = tmp_dir("jsq");
    let o = mfq(&["branches", "models/jsq-d2.toml", "--set", "lambda=0.5:0.95:50", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(special(&dir).is_empty());
    let csv = std::fs::read_to_string(dir.join("branches.csv")).unwrap();
    let mut last = 0.0;
    for l in csv.lines().skip(1) {
        let c: Vec<&str> = l.split(',').collect();
        let (lambda, l_mean): (f64, f64) = (c[2].parse().unwrap(), c[3].parse().unwrap());
        let want: f64 = (1..20).map(|k| lambda.powi(2i32.pow(k) - 1)).sum();
        assert!((l_mean - want).abs() < 1e-8 && c[4] == "stable", "lambda {lambda}: {l_mean} vs {want}");
        last = lambda;
    }
    assert_eq!(last, 0.95);
}

/// `mfq figure NAME` without `--out` writes into out/figures/ (ignored by git) and leaves the
/// gallery's tracked files alone.
#[test]
fn figure_writes_outside_the_gallery_by_default() {
    let root = common::root();
    let gallery = root.join("docs/figures/branches-opinion-biased.svg");
    let before = std::fs::read(&gallery).unwrap();
    let modified = std::fs::metadata(&gallery).unwrap().modified().unwrap();
    let o = mfq(&["figure", "branches-opinion-biased"]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!(text(&o).0.contains("out/figures/branches-opinion-biased.svg"), "{:?}", text(&o));
    assert!(root.join("out/figures/branches-opinion-biased.svg").is_file());
    assert_eq!(std::fs::metadata(&gallery).unwrap().modified().unwrap(), modified);
    assert_eq!(std::fs::read(&gallery).unwrap(), before);
}
