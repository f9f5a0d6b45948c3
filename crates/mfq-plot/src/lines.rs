//! Labelled curves `y(x)` on a logarithmic x axis: for quantities computed point by point by the
//! caller (the heavy-traffic figure of redundancy on compatibility graphs: `(1 - rho) E[N]`
//! against `1 - rho`), where a sweep report's fixed quantities do not apply.

use crate::{draw_legend, err, series_color, PlotError};
use plotters::prelude::*;

/// One curve: legend label and points `(x, y)`, `x > 0`.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Legend label.
    pub label: String,
    /// Points, in x order; non-finite values and `x <= 0` are skipped.
    pub points: Vec<(f64, f64)>,
}

/// The curves on a log-scale x axis and a linear y axis, legend in the lower left (where curves
/// that converge as `x -> 0` leave room).
///
/// # Errors
/// [`PlotError`] if no curve has a drawable point, or plotters fails.
pub fn log_x_lines_svg(curves: &[Curve], title: &str, x_label: &str, y_label: &str) -> Result<String, PlotError> {
    let ok = |p: &&(f64, f64)| p.0 > 0.0 && p.0.is_finite() && p.1.is_finite();
    let all: Vec<(f64, f64)> = curves.iter().flat_map(|c| c.points.iter().filter(ok).copied()).collect();
    if all.is_empty() {
        return Err(PlotError("no curve has a point to plot".into()));
    }
    let fold = |f: fn(f64, f64) -> f64, init: f64, g: fn(&(f64, f64)) -> f64| all.iter().map(g).fold(init, f);
    let (x0, x1) = (fold(f64::min, f64::INFINITY, |p| p.0), fold(f64::max, 0.0, |p| p.0));
    let (lo, hi) = (fold(f64::min, f64::INFINITY, |p| p.1), fold(f64::max, f64::NEG_INFINITY, |p| p.1));
    let (x0, x1) = if x1 > x0 { (x0 / 1.2, x1 * 1.2) } else { (x0 / 2.0, x0 * 2.0) };
    let pad = (hi - lo).max(1e-9) * 0.05;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (800, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d((x0..x1).log_scale(), (lo - pad)..(hi + pad))
            .map_err(err)?;
        chart.configure_mesh().x_desc(x_label).y_desc(y_label).x_label_formatter(&|v| format!("{v}")).draw().map_err(err)?;
        for (i, c) in curves.iter().enumerate() {
            let color = series_color(i);
            let pts: Vec<(f64, f64)> = c.points.iter().filter(ok).copied().collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(err)?
                .label(c.label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled()))).map_err(err)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerLeft)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_curves_and_refuses_empty_input() {
        let c = Curve { label: "curve-label-a".into(), points: vec![(0.01, 1.0), (0.1, 0.9), (0.5, 0.5)] };
        let svg = log_x_lines_svg(&[c], "t", "x", "y").unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("curve-label-a"));
        let empty = Curve { label: "b".into(), points: vec![(0.0, 1.0), (0.1, f64::NAN)] };
        assert!(log_x_lines_svg(&[empty], "t", "x", "y").is_err());
    }
}
