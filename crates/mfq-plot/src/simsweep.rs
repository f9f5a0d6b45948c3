//! Simulated values against a parameter, with 95% confidence bars: one or more panels of
//! curves (e.g. one panel per service law, one curve per redundancy level), drawn from finished
//! simulation sweeps (`mfq::simsweep`) that the caller has turned into [`SimCurve`]s.

use crate::{draw_legend, err, series_color, PlotError};
use plotters::prelude::*;

/// One curve: its legend label and its points `(x, mean, 95% half width)`.
#[derive(Debug, Clone, PartialEq)]
pub struct SimCurve {
    /// Legend label.
    pub label: String,
    /// `(x, mean, half width)`, in x order.
    pub points: Vec<(f64, f64, f64)>,
}

/// One panel: a title and its curves.
#[derive(Debug, Clone, PartialEq)]
pub struct SimPanel {
    /// Panel caption.
    pub title: String,
    /// Its curves.
    pub curves: Vec<SimCurve>,
}

/// Titles and axes of [`simulation_sweep_svg`].
#[derive(Debug, Clone, PartialEq)]
pub struct SimSweepStyle {
    /// Title of the whole figure.
    pub title: String,
    /// x axis label.
    pub x_label: String,
    /// y axis label.
    pub y_label: String,
    /// Logarithmic y axis.
    pub log_y: bool,
}

/// The panels in a grid of two columns (one row for one panel), each with its curves as lines
/// through the means and 95% confidence bars at every point.
///
/// # Errors
/// [`PlotError`] if plotters fails, or when no panel has a point.
pub fn simulation_sweep_svg(panels: &[SimPanel], style: &SimSweepStyle) -> Result<String, PlotError> {
    if panels.iter().all(|p| p.curves.iter().all(|c| c.points.is_empty())) {
        return Err(PlotError("no simulated point to draw".into()));
    }
    let cols = panels.len().clamp(1, 2);
    let rows = panels.len().div_ceil(cols);
    let mut out = String::new();
    {
        let size = (620 * cols as u32, 80 + 480 * rows as u32);
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(&style.title, ("sans-serif", 24)).map_err(err)?;
        let areas = root.split_evenly((rows, cols));
        for (panel, area) in panels.iter().zip(areas.iter()) {
            draw_panel(panel, area, style)?;
        }
        root.present().map_err(err)?;
    }
    Ok(out)
}

fn draw_panel(panel: &SimPanel, area: &DrawingArea<SVGBackend, plotters::coord::Shift>, style: &SimSweepStyle) -> Result<(), PlotError> {
    let pts = || panel.curves.iter().flat_map(|c| c.points.iter());
    let (mut x0, mut x1, mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, m, h) in pts() {
        x0 = x0.min(x);
        x1 = x1.max(x);
        lo = lo.min(m - h);
        hi = hi.max(m + h);
    }
    if !x0.is_finite() {
        return Ok(());
    }
    let xpad = (x1 - x0).max(1e-6) * 0.04;
    let (xr, caption) = ((x0 - xpad)..(x1 + xpad), (panel.title.as_str(), ("sans-serif", 18)));
    let mut builder = ChartBuilder::on(area);
    builder.caption(caption.0, caption.1).margin(12).x_label_area_size(44).y_label_area_size(64);
    if style.log_y {
        let lo = lo.max(hi * 1e-6).max(1e-300);
        let mut chart = builder.build_cartesian_2d(xr, (lo / 1.2..hi * 1.2).log_scale()).map_err(err)?;
        chart.configure_mesh().x_desc(style.x_label.as_str()).y_desc(style.y_label.as_str()).draw().map_err(err)?;
        draw_curves(&mut chart, panel)
    } else {
        let pad = (hi - lo).max(1e-6) * 0.08;
        let y0 = if lo >= 0.0 { 0.0 } else { lo - pad };
        let mut chart = builder.build_cartesian_2d(xr, y0..(hi + pad)).map_err(err)?;
        chart.configure_mesh().x_desc(style.x_label.as_str()).y_desc(style.y_label.as_str()).draw().map_err(err)?;
        draw_curves(&mut chart, panel)
    }
}

fn draw_curves<'a, CT>(chart: &mut ChartContext<'a, SVGBackend<'a>, CT>, panel: &SimPanel) -> Result<(), PlotError>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    for (i, c) in panel.curves.iter().enumerate() {
        let colour = series_color(i);
        chart
            .draw_series(LineSeries::new(c.points.iter().map(|&(x, m, _)| (x, m)), colour.stroke_width(2)))
            .map_err(err)?
            .label(c.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
        chart.draw_series(c.points.iter().map(|&(x, m, h)| ErrorBar::new_vertical(x, m - h, m, m + h, colour.filled(), 6))).map_err(err)?;
    }
    draw_legend(chart, SeriesLabelPosition::UpperLeft)
}
