//! The style machinery end to end: plots drawn under an installed [`Style`] parse as XML, have
//! the size asked for in cm, the overridden title with `{param}` substituted, log-x ticks
//! below a decade, distinct markers/dashes per curve (from the SVG's metadata and from the
//! shapes drawn), and no NaN or inf coordinates.

use mfq_plot::style::{LegendPosition, Palette, Style, PX_PER_CM};
use mfq_plot::xy::{xy_svg, Draw, XySeries, XyStyle};

/// Every numeric attribute of every element is finite; returns the document's text nodes.
fn parse(svg: &str) -> (roxmltree::Document<'_>, Vec<String>) {
    let doc = roxmltree::Document::parse(svg).expect("the SVG parses as XML");
    let mut texts = Vec::new();
    for n in doc.descendants() {
        for a in n.attributes() {
            if ["x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "width", "height", "points", "d"].contains(&a.name()) {
                let v = a.value().to_ascii_lowercase();
                assert!(!v.contains("nan") && !v.contains("inf"), "{} = {}", a.name(), a.value());
            }
        }
        if n.is_element() && n.tag_name().name() == "text" {
            texts.push(n.text().unwrap_or("").to_string());
        }
    }
    (doc, texts)
}

/// `(marker, dash)` of every curve in the metadata.
fn curves(doc: &roxmltree::Document) -> Vec<(String, String, String)> {
    doc.descendants()
        .filter(|n| n.tag_name().name() == "curve")
        .map(|n| {
            (
                n.attribute("label").unwrap().to_string(),
                n.attribute("marker").unwrap().to_string(),
                n.attribute("dash").unwrap().to_string(),
            )
        })
        .collect()
}

fn series(n: usize) -> Vec<XySeries> {
    (0..n)
        .map(|i| XySeries {
            label: format!("curve {i}"),
            x: (0..30).map(|j| 0.3 + 0.02 * j as f64).collect(),
            y: (0..30).map(|j| (1.0 + i as f64) * (1.0 + 0.1 * j as f64)).collect(),
            half_width: vec![],
            draw: Draw::Line,
            color: i,
        })
        .collect()
}

fn xy_style() -> XyStyle {
    XyStyle {
        title: "default title".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        log_x: false,
        log_y: false,
        integer_x: false,
        legend_lower_left: false,
    }
}

#[test]
fn an_installed_style_reaches_the_svg() {
    let style = Style {
        width_cm: Some(12.0),
        height_cm: Some(8.0),
        log_x: Some(true),
        legend: Some(LegendPosition::LowerRight),
        palette: Some(Palette::Gray),
        title: Some("JSQ({d}) at lambda = {lambda}".into()),
        y_label: Some("mean response time".into()),
        params: vec![("d".into(), "2".into()), ("lambda".into(), "0.9".into())],
        ..Style::default()
    };
    let svg = {
        let _g = style.install();
        xy_svg(&series(6), &xy_style()).unwrap()
    };
    let (doc, texts) = parse(&svg);
    let texts: Vec<String> = texts.iter().map(|t| t.trim().to_string()).collect();
    let root = doc.root_element();
    assert_eq!(root.attribute("width").unwrap(), format!("{}", (12.0 * PX_PER_CM).round()));
    assert!(texts.iter().any(|t| t == "JSQ(2) at lambda = 0.9"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "mean response time"));
    // log x over 0.3 .. 0.88 (less than a decade; padded 0.23 .. 1.14): three labelled ticks
    let texts: Vec<String> = texts.iter().map(|t| t.trim().to_string()).collect();
    for t in ["0.3", "0.5", "1"] {
        assert!(texts.iter().any(|s| s == t), "tick {t} missing: {texts:?}");
    }
    // six curves: six different (marker, dash) pairs, and six different markers drawn
    let c = curves(&doc);
    assert_eq!(c.len(), 6);
    let mut looks: Vec<(String, String)> = c.iter().map(|(_, m, d)| (m.clone(), d.clone())).collect();
    looks.sort();
    looks.dedup();
    assert_eq!(looks.len(), 6, "{c:?}");
    // the gray palette: no colour other than greys in the curves' strokes
    assert!(!svg.contains("#0072B2") && !svg.contains("#0072b2"));
    // after the guard, the default style again
    let svg = xy_svg(&series(1), &xy_style()).unwrap();
    assert!(svg.contains("default title"));
}

#[test]
fn bad_style_values_are_errors_naming_the_field() {
    let _g = Style { x_range: Some([2.0, 1.0]), ..Style::default() }.install();
    let e = xy_svg(&series(1), &xy_style()).unwrap_err();
    assert!(e.0.contains("style.x_range"), "{e}");
}

#[test]
fn defaults_are_sized_for_one_paper_column() {
    let svg = xy_svg(&series(3), &xy_style()).unwrap();
    let (doc, _) = parse(&svg);
    let w: f64 = doc.root_element().attribute("width").unwrap().parse().unwrap();
    assert!((w / PX_PER_CM - 8.5).abs() < 0.01);
    // fonts of at least 7 pt (the legend; ticks 8 pt, title 9 pt): 3 px per pt on a 723 px
    // (8.5 cm) wide SVG
    let sizes: Vec<f64> = doc.descendants().filter_map(|n| n.attribute("font-size")).filter_map(|s| s.parse().ok()).collect();
    assert!(!sizes.is_empty() && sizes.iter().all(|s| *s >= 7.0 * 3.0 - 0.5), "{sizes:?}");
}
