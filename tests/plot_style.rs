//! The plot style from the command line and from figure files: `--title` with `{param}`,
//! `--log-x`, `--width-cm`, `--legend`, `--style FILE`, a figure file's `[style]` table, and
//! errors that name the field (docs/figures.md, "Style").

mod common;
use common::{mfq, text, tmp_dir};

/// The root element's width and the text nodes of an SVG (which must parse as XML).
fn svg(path: &std::path::Path) -> (f64, Vec<String>) {
    let s = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&s).unwrap();
    let w = doc.root_element().attribute("width").unwrap().parse().unwrap();
    let t = doc.descendants().filter(|n| n.tag_name().name() == "text").map(|n| n.text().unwrap_or("").trim().to_string()).collect();
    (w, t)
}

#[test]
fn command_line_style_options_reach_the_svg() {
    let out = tmp_dir("style-flags");
    let o = mfq(&[
        "tail",
        "models/jsq-d2.toml",
        "--set",
        "lambda=0.7",
        "--out",
        out.to_str().unwrap(),
        "--title",
        "JSQ({d}) at lambda = {lambda}",
        "--width-cm",
        "17",
        "--legend",
        "none",
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let (w, texts) = svg(&out.join("tail.svg"));
    assert!((w - (17.0 * 72.0 / 2.54 * 3.0)).abs() < 1.0, "width {w}");
    assert!(texts.iter().any(|t| t == "JSQ(2) at lambda = 0.7"), "{texts:?}");
    // no legend: the curve label is not drawn
    assert!(!texts.iter().any(|t| t.contains("jsq")), "{texts:?}");
}

#[test]
fn style_files_and_bad_values_name_the_field() {
    let dir = tmp_dir("style-file");
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("paper.toml");
    std::fs::write(&good, "[style]\nheight_cm = 5\nlog_y = false\npalette = \"gray\"\n").unwrap();
    let o = mfq(&["tail", "models/jsq-d2.toml", "--out", dir.to_str().unwrap(), "--style", good.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "font_pt = 0.5\n").unwrap();
    let o = mfq(&["tail", "models/jsq-d2.toml", "--out", dir.to_str().unwrap(), "--style", bad.to_str().unwrap()]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr.contains("style.font_pt = 0.5") && stderr.contains("4 to 30"), "{stderr}");
    let typo = dir.join("typo.toml");
    std::fs::write(&typo, "widht_cm = 9\n").unwrap();
    let o = mfq(&["tail", "models/jsq-d2.toml", "--out", dir.to_str().unwrap(), "--style", typo.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("widht_cm"), "{:?}", text(&o));
    // a bad value under a `[style]` table is reported as such (it once read "unknown field style")
    let table = dir.join("table.toml");
    std::fs::write(&table, "[style]\nlegend = \"top\"\n").unwrap();
    let o = mfq(&["tail", "models/jsq-d2.toml", "--out", dir.to_str().unwrap(), "--style", table.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = text(&o).1;
    assert!(stderr.contains("[style]") && stderr.contains("`top`") && !stderr.contains("unknown field"), "{stderr}");
    // issue 19, defect 9: the key is named with the value
    assert!(stderr.contains("style.legend = \"top\": unknown variant `top`"), "{stderr}");
    std::fs::write(&typo, "width_cm = \"wide\"\n").unwrap();
    let o = mfq(&["tail", "models/jsq-d2.toml", "--out", dir.to_str().unwrap(), "--style", typo.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("style.width_cm = \"wide\": invalid type"), "{:?}", text(&o));
    let o = mfq(&["tail", "models/jsq-d2.toml", "--out", dir.to_str().unwrap(), "--legend", "outside"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("upper-right"), "{:?}", text(&o));
}

#[test]
fn a_figure_files_style_table_applies_and_the_command_line_wins() {
    let dir = tmp_dir("style-figure");
    let figs = dir.join("figs");
    std::fs::create_dir_all(&figs).unwrap();
    let fig = "kind = \"tail\"\ntitle = \"tails at lambda = {lambda}\"\nreproduces = \"new\"\ndescription = \"d\"\n\
               models = [[\"JSQ(2)\", \"models/jsq-d2.toml\"]]\nset = [\"lambda=0.8\"]\n\n[style]\nwidth_cm = 10\ny_label = \"tail\"\n";
    std::fs::write(figs.join("t.toml"), fig).unwrap();
    let out = dir.join("out");
    let o = mfq(&["figure", "t", "--figures", figs.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    let (w, texts) = svg(&out.join("t.svg"));
    assert!((w - (10.0 * 72.0 / 2.54 * 3.0)).abs() < 1.0, "width {w}");
    assert!(texts.iter().any(|t| t == "tails at lambda = 0.8") && texts.iter().any(|t| t == "tail"), "{texts:?}");
    let o = mfq(&["figure", "t", "--figures", figs.to_str().unwrap(), "--out", out.to_str().unwrap(), "--width-cm", "12"]);
    assert!(o.status.success(), "{:?}", text(&o));
    assert!((svg(&out.join("t.svg")).0 - (12.0 * 72.0 / 2.54 * 3.0)).abs() < 1.0);
    std::fs::write(figs.join("t.toml"), fig.replace("width_cm = 10", "width_cm = \"wide\"")).unwrap();
    let o = mfq(&["figure", "t", "--figures", figs.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("width_cm"), "{:?}", text(&o));
}

/// Issue 19, defect 11: an unknown placeholder in `--title` is refused, naming it and the
/// parameters there are (JSQ(d): d, kind, lambda).
#[test]
fn an_unknown_placeholder_is_refused() {
    let out = tmp_dir("placeholder");
    for cmd in ["tail", "sweep"] {
        let mut a = vec![cmd, "models/jsq-d2.toml", "--title", "JSQ({d}) at mu = {mu}", "--out", out.to_str().unwrap()];
        if cmd == "sweep" {
            a.extend(["--set", "lambda=0.5,0.6"]);
        }
        let o = mfq(&a);
        let stderr = text(&o).1;
        assert_eq!(o.status.code(), Some(2), "{cmd}: {stderr}");
        assert!(stderr.contains("{mu} is not a parameter; allowed placeholders: d, kind, lambda (--title)"), "{cmd}: {stderr}");
    }
}
