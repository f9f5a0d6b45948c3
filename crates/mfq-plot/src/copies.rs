//! The stability threshold of identical copies under FCFS against `d`, one curve per speed
//! profile ([`mfq::copies::threshold_against_d`]; docs/models/redundancy.md).

use crate::{draw_legend, err, series_color, PlotError};
use mfq::copies::ThresholdPoint;
use plotters::prelude::*;

/// One curve per `(label, points)`: the threshold against `d` (solid, with the 95% half width
/// of its estimate as error bars), and the exact values at `d = 1` and `d = K` as
/// black-edged circles.
///
/// # Errors
/// [`PlotError`] if plotters fails or no profile has a point.
pub fn threshold_svg(profiles: &[(String, Vec<ThresholdPoint>)], title: &str) -> Result<String, PlotError> {
    let all: Vec<&ThresholdPoint> = profiles.iter().flat_map(|(_, p)| p.iter()).collect();
    if all.is_empty() {
        return Err(PlotError("no speed profile has a point".into()));
    }
    let d_max = all.iter().map(|p| p.d).max().unwrap_or(1) as f64;
    let hi = all.iter().map(|p| (p.threshold + p.half_width).max(p.exact.unwrap_or(0.0))).fold(0.0, f64::max);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (800, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d(0.7..d_max + 0.3, 0.0..hi * 1.1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("d (copies per job)")
            .y_desc("lambda_max (arrivals per server per mean size)")
            .x_labels(d_max as usize + 2)
            .x_label_formatter(&|v| if v.fract() == 0.0 { format!("{v:.0}") } else { String::new() })
            .draw()
            .map_err(err)?;
        for (i, (label, points)) in profiles.iter().enumerate() {
            let color = series_color(i);
            let line: Vec<(f64, f64)> = points.iter().map(|p| (p.d as f64, p.threshold)).collect();
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
                .map_err(err)?
                .label(label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart.draw_series(line.iter().map(|&(x, y)| Circle::new((x, y), 3, color.filled()))).map_err(err)?;
            chart
                .draw_series(points.iter().filter(|p| p.half_width > 0.0).map(|p| {
                    ErrorBar::new_vertical(p.d as f64, p.threshold - p.half_width, p.threshold, p.threshold + p.half_width, color, 6)
                }))
                .map_err(err)?;
            chart
                .draw_series(points.iter().filter_map(|p| p.exact.map(|e| Circle::new((p.d as f64, e), 7, BLACK.stroke_width(2)))))
                .map_err(err)?;
        }
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(err)?
            .label("exact (d = 1: min nu; d = K: max nu / K)")
            .legend(|(x, y)| Circle::new((x + 10, y), 6, BLACK.stroke_width(2)));
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}
