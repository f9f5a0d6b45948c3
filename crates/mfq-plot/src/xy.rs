//! Curves and markers on linear or logarithmic axes, from numbers the caller computed: the
//! refined mean field's error plots (error against `N`, log-log), tails against the exact
//! chain and simulation (log y), the heavy-traffic figure of redundancy on compatibility
//! graphs (`(1 - rho) E[N]` against `1 - rho`, log x) and the stability threshold of identical
//! copies against `d`.

use crate::frame::{bars, chart, curve, legend, points, render, Panel};
use crate::style::{LegendPosition, Style};
use crate::{Dash, Look, PlotError};

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draw {
    /// A solid line with a filled circle at each point.
    Line,
    /// A dashed line with a filled circle at each point.
    Dashed,
    /// Markers alone (open squares).
    Markers,
}

/// One series: points `(x[i], y[i])`, optional half widths of 95% intervals on `y` (drawn as
/// vertical bars whatever the style).
#[derive(Debug, Clone, PartialEq)]
pub struct XySeries {
    /// Legend label.
    pub label: String,
    /// Abscissae.
    pub x: Vec<f64>,
    /// Ordinates (same length as `x`); non-finite values, and values `<= 0` on a log axis,
    /// are left out.
    pub y: Vec<f64>,
    /// Half widths of `y`'s 95% intervals (empty: none).
    pub half_width: Vec<f64>,
    /// Style.
    pub draw: Draw,
    /// Index of the series' look: colour, marker and dash pattern ([`Look::nth`]).
    pub color: usize,
}

/// Title, axis labels and scales of an [`xy_svg`] plot.
#[derive(Debug, Clone, PartialEq)]
pub struct XyStyle {
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// Integer ticks on the x axis (e.g. queue lengths).
    pub integer_x: bool,
    /// Legend in the lower left corner (else upper right).
    pub legend_lower_left: bool,
}

/// The plotted points of `s` (finite, and positive on log axes).
fn plotted(s: &XySeries, style: &XyStyle) -> Vec<(f64, f64, f64)> {
    s.x.iter()
        .zip(&s.y)
        .enumerate()
        .filter(|(_, (x, y))| x.is_finite() && y.is_finite() && (!style.log_x || **x > 0.0) && (!style.log_y || **y > 0.0))
        .map(|(i, (x, y))| (*x, *y, s.half_width.get(i).copied().unwrap_or(0.0)))
        .collect()
}

/// The series of `series` on axes of `style` (log or linear each; the thread's
/// [`crate::style::Style`] may override scales, ranges and labels). Every series gets the colour
/// and marker of [`Look::nth`] of its index; `Draw::Line` is solid, `Draw::Dashed` dashed (so
/// series of one index differ by dash), `Draw::Markers` draws markers alone.
///
/// # Errors
/// [`PlotError`] when no series has a point to draw, or plotters fails.
pub fn xy_svg(series: &[XySeries], style: &XyStyle) -> Result<String, PlotError> {
    let st = Style::current();
    let log_x = st.log_x.unwrap_or(style.log_x);
    let log_y = st.log_y.unwrap_or(style.log_y);
    let eff = XyStyle { log_x, log_y, ..style.clone() };
    let pts: Vec<Vec<(f64, f64, f64)>> = series.iter().map(|s| plotted(s, &eff)).collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y, h) in pts.iter().flatten() {
        x0 = x0.min(x);
        x1 = x1.max(x);
        let (lo, hi) = if log_y && y - h <= 0.0 { (y, y + h) } else { (y - h, y + h) };
        y0 = y0.min(lo);
        y1 = y1.max(hi);
    }
    if !x0.is_finite() {
        return Err(PlotError(format!("{}: no point to plot", style.title)));
    }
    let mut panel = Panel::new(&style.x_label, &style.y_label, (x0, x1), (y0, y1));
    (panel.log_x, panel.log_y, panel.integer_x) = (log_x, log_y, style.integer_x);
    let position = if style.legend_lower_left { LegendPosition::LowerLeft } else { LegendPosition::UpperRight };
    render(&st, &style.title, (1, 1), |st, areas| {
        let mut chart = chart(&areas[0], st, &panel)?;
        for (s, p) in series.iter().zip(&pts) {
            let look = Look::nth(st, s.color);
            // 95% bars of every series that has half widths
            bars(&mut chart, look, p)?;
            let xy: Vec<(f64, f64)> = p.iter().map(|&(x, y, _)| (x, y)).collect();
            match s.draw {
                Draw::Line => curve(&mut chart, look.dashed(Dash::Solid), &xy, Some(&s.label))?,
                Draw::Dashed => curve(&mut chart, look.dashed(Dash::Dashed), &xy, Some(&s.label))?,
                Draw::Markers => points(&mut chart, look, &xy, Some(&s.label))?,
            }
        }
        legend(&mut chart, st, position)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style(log_x: bool, log_y: bool) -> XyStyle {
        XyStyle { title: "t".into(), x_label: "x".into(), y_label: "y".into(), log_x, log_y, integer_x: false, legend_lower_left: true }
    }

    /// Labels reach the SVG; series with no drawable point (x <= 0 on a log axis, NaN) are an
    /// error, not an empty chart.
    #[test]
    fn draws_series_and_refuses_empty_input() {
        let s = XySeries {
            label: "curve-label-a".into(),
            x: vec![0.01, 0.1, 0.5],
            y: vec![1.0, 0.9, 0.5],
            half_width: vec![],
            draw: Draw::Dashed,
            color: 0,
        };
        for (lx, ly) in [(true, false), (true, true), (false, true), (false, false)] {
            let svg = xy_svg(std::slice::from_ref(&s), &style(lx, ly)).unwrap();
            assert!(svg.starts_with("<svg") && svg.contains("curve-label-a") && !svg.contains("NaN"));
        }
        let empty = XySeries { label: "b".into(), x: vec![0.0, 0.1], y: vec![1.0, f64::NAN], ..s };
        assert!(xy_svg(&[empty], &style(true, false)).is_err());
    }
}
