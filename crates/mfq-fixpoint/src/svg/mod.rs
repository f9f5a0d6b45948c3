//! SVG plots drawn from finished reports (they never solve).
//!
//! Every function returns the SVG document as a `String`; writing it (atomically) is the
//! caller's business. Text is emitted as SVG `<text>` (plotters' SVG backend, no font files).

use crate::FixedPoint;
use plotters::prelude::*;
use serde::Serialize;

/// A drawing failed (plotters' error, as text).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("plot failed: {0}")]
pub struct PlotError(pub String);

fn err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError(format!("{e:?}"))
}

/// Smallest value shown on log-scale axes; tail entries below it are round-off after Newton.
pub const LOG_FLOOR: f64 = 1e-16;

/// Tick label for a log axis: `1e-6`, `1e0`.
fn log_label(v: &f64) -> String {
    format!("{v:.0e}")
}

/// The distance `||x(t) - x*||_inf` along one trajectory, ready to plot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DistanceSeries {
    /// Legend label (e.g. the initial state's name).
    pub label: String,
    /// Times.
    pub t: Vec<f64>,
    /// `max_i |x_i(t) - x*_i|` at those times.
    pub distance: Vec<f64>,
}

impl DistanceSeries {
    /// The series of a trajectory `(t, x)` against `x_star`.
    pub fn new(label: &str, t: &[f64], x: &[Vec<f64>], x_star: &[f64]) -> Self {
        let distance = x.iter().map(|xi| xi.iter().zip(x_star).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)).collect();
        DistanceSeries { label: label.to_string(), t: t.to_vec(), distance }
    }
}

/// `P(Q >= k)` against `k` on a log scale, one curve per report (e.g. several models).
///
/// # Errors
/// [`PlotError`] if plotters fails; reports without a tail are skipped.
pub fn tail_svg(reports: &[(&str, &FixedPoint)], title: &str) -> Result<String, PlotError> {
    let mut out = String::new();
    let k_max = reports
        .iter()
        .map(|(_, fp)| fp.observables.tail.iter().take_while(|v| **v >= LOG_FLOOR).count())
        .max()
        .unwrap_or(1)
        .max(2);
    {
        let root = SVGBackend::with_string(&mut out, (800, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d(0.5f64..(k_max as f64 + 0.5), (LOG_FLOOR..1.5f64).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("queue length k")
            .y_desc("P(Q >= k)")
            .y_label_formatter(&log_label)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .draw()
            .map_err(err)?;
        for (i, (label, fp)) in reports.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts: Vec<(f64, f64)> = fp
                .observables
                .tail
                .iter()
                .enumerate()
                .filter(|(_, v)| **v >= LOG_FLOOR)
                .map(|(k, v)| ((k + 1) as f64, *v))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(err)?
                .label(*label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled()))).map_err(err)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// `||x(t) - x*||_inf` against `t` on a log scale for each series, with the decay
/// `C exp(-rate t)` predicted by the spectral abscissa (`rate = -alpha`) drawn dashed,
/// anchored at the first series' last point above `1e-9`.
///
/// # Errors
/// [`PlotError`] if plotters fails.
pub fn distance_svg(series: &[DistanceSeries], predicted_rate: Option<f64>, title: &str) -> Result<String, PlotError> {
    let mut out = String::new();
    let t_max = series.iter().filter_map(|s| s.t.last()).fold(1e-9f64, |m, t| m.max(*t));
    let d_max = series.iter().flat_map(|s| s.distance.iter()).fold(1e-12f64, |m, d| m.max(*d)) * 2.0;
    let d_min = 1e-14f64.min(d_max / 10.0);
    {
        let root = SVGBackend::with_string(&mut out, (800, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d(0f64..t_max, (d_min..d_max).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time t (mean job sizes)")
            .y_desc("max_k |x_k(t) - x*_k|")
            .y_label_formatter(&log_label)
            .draw()
            .map_err(err)?;
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts: Vec<(f64, f64)> =
                s.t.iter().zip(&s.distance).filter(|(_, d)| **d >= d_min).map(|(t, d)| (*t, *d)).collect();
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(err)?
                .label(s.label.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        }
        if let (Some(rate), Some(s)) = (predicted_rate, series.first()) {
            if rate > 0.0 {
                if let Some(i) = s.distance.iter().rposition(|d| *d > 1e-9) {
                    let (t0, d0) = (s.t[i], s.distance[i]);
                    let line: Vec<(f64, f64)> = (0..=200)
                        .map(|j| t_max * j as f64 / 200.0)
                        .map(|t| (t, d0 * (-rate * (t - t0)).exp()))
                        .filter(|(_, d)| *d >= d_min && *d <= d_max)
                        .collect();
                    chart
                        .draw_series(DashedLineSeries::new(line, 8, 6, BLACK.stroke_width(1)))
                        .map_err(err)?
                        .label(format!("slope of the spectral abscissa: exp(-{rate:.4} t)"))
                        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(1)));
                }
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// Selected state entries `x_i(t)` against `t` (linear axes), e.g. `x_1..x_5` of a transient.
///
/// # Errors
/// [`PlotError`] if plotters fails.
pub fn trajectory_svg(t: &[f64], x: &[Vec<f64>], entries: &[(usize, String)], title: &str) -> Result<String, PlotError> {
    let mut out = String::new();
    let t_max = t.last().copied().unwrap_or(1.0).max(1e-9);
    let y_max = x.iter().flat_map(|xi| entries.iter().map(move |(i, _)| xi[*i])).fold(0.0f64, f64::max).max(1e-9) * 1.05;
    {
        let root = SVGBackend::with_string(&mut out, (800, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..t_max, 0f64..y_max)
            .map_err(err)?;
        chart.configure_mesh().x_desc("time t (mean job sizes)").y_desc("fraction of servers").draw().map_err(err)?;
        for (c, (i, name)) in entries.iter().enumerate() {
            let color = Palette99::pick(c).to_rgba();
            let pts: Vec<(f64, f64)> = t.iter().zip(x).map(|(ti, xi)| (*ti, xi[*i])).collect();
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(err)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}
