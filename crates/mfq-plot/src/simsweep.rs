//! Simulated values against a parameter, with 95% confidence bars: one or more panels of
//! curves (e.g. one panel per service law, one curve per redundancy level), drawn from finished
//! simulation sweeps (`mfq::simsweep`) that the caller has turned into [`SimCurve`]s.

use crate::frame::{bars, chart, curve, legend, render, Area, Panel};
use crate::style::{LegendPosition, Style};
use crate::{Look, PlotError};

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
/// through the means (a marker and dash pattern per curve) and 95% confidence bars at every
/// point. Each panel has the style's panel size.
///
/// # Errors
/// [`PlotError`] if plotters fails, or when no panel has a point.
pub fn simulation_sweep_svg(panels: &[SimPanel], style: &SimSweepStyle) -> Result<String, PlotError> {
    if panels.iter().all(|p| p.curves.iter().all(|c| c.points.is_empty())) {
        return Err(PlotError("no simulated point to draw".into()));
    }
    let cols = panels.len().clamp(1, 2);
    let rows = panels.len().div_ceil(cols);
    render(&Style::current(), &style.title, (cols, rows), |st, areas| {
        for (panel, area) in panels.iter().zip(areas) {
            draw_panel(panel, area, st, style)?;
        }
        Ok(())
    })
}

fn draw_panel(panel: &SimPanel, area: &Area, st: &Style, style: &SimSweepStyle) -> Result<(), PlotError> {
    let (mut x0, mut x1, mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, m, h) in panel.curves.iter().flat_map(|c| c.points.iter()) {
        x0 = x0.min(x);
        x1 = x1.max(x);
        lo = lo.min(m - h);
        hi = hi.max(m + h);
    }
    if !x0.is_finite() {
        return Ok(());
    }
    let log_y = st.log_y.unwrap_or(style.log_y);
    let y = if log_y {
        let lo = lo.max(hi * 1e-6).max(1e-300);
        (lo, hi)
    } else if lo >= 0.0 {
        (0.0, hi + (hi - lo).max(1e-6) * 0.08)
    } else {
        (lo, hi)
    };
    let mut spec = Panel::new(&style.x_label, &style.y_label, (x0, x1), y);
    (spec.caption, spec.log_y) = (Some(panel.title.as_str()), style.log_y);
    let mut chart = chart(area, st, &spec)?;
    for (i, c) in panel.curves.iter().enumerate() {
        let look = Look::nth(st, i);
        bars(&mut chart, look, &c.points)?;
        let pts: Vec<(f64, f64)> = c.points.iter().map(|&(x, m, _)| (x, m)).collect();
        curve(&mut chart, look, &pts, Some(&c.label))?;
    }
    legend(&mut chart, st, LegendPosition::UpperLeft)
}
