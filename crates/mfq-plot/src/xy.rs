//! Curves and markers on linear or logarithmic axes, from numbers the caller computed: the
//! refined mean field's error plots (error against `N`, log-log), tails against the exact
//! chain and simulation (log y), the heavy-traffic figure of redundancy on compatibility
//! graphs (`(1 - rho) E[N]` against `1 - rho`, log x) and the stability threshold of identical
//! copies against `d`.

use crate::{draw_legend, err, plain_label, series_color, PlotError};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

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
    /// Colour index in the palette ([`series_color`]).
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
fn points(s: &XySeries, style: &XyStyle) -> Vec<(f64, f64, f64)> {
    s.x.iter()
        .zip(&s.y)
        .enumerate()
        .filter(|(_, (x, y))| x.is_finite() && y.is_finite() && (!style.log_x || **x > 0.0) && (!style.log_y || **y > 0.0))
        .map(|(i, (x, y))| (*x, *y, s.half_width.get(i).copied().unwrap_or(0.0)))
        .collect()
}

/// An axis range around `lo..hi`: a margin of 5% (linear) or a factor 1.5 (log).
fn padded(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        let pad = ((hi - lo) * 0.05).max(1e-12);
        (lo - pad, hi + pad)
    }
}

/// The series of `series` on axes of `style` (log or linear each). Dashed series have a
/// dashed legend sample, so curves differ without colour.
///
/// # Errors
/// [`PlotError`] when no series has a point to draw, or plotters fails.
pub fn xy_svg(series: &[XySeries], style: &XyStyle) -> Result<String, PlotError> {
    let pts: Vec<Vec<(f64, f64, f64)>> = series.iter().map(|s| points(s, style)).collect();
    let all = pts.iter().flatten();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y, h) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        let (lo, hi) = if style.log_y && y - h <= 0.0 { (y, y + h) } else { (y - h, y + h) };
        y0 = y0.min(lo);
        y1 = y1.max(hi);
    }
    if !x0.is_finite() {
        return Err(PlotError(format!("{}: no point to plot", style.title)));
    }
    let (x0, x1) = padded(x0, x1, style.log_x);
    let (y0, y1) = padded(y0, y1, style.log_y);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (800, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        match (style.log_x, style.log_y) {
            (true, true) => draw(&root, (x0..x1).log_scale(), (y0..y1).log_scale(), series, &pts, style)?,
            (true, false) => draw(&root, (x0..x1).log_scale(), y0..y1, series, &pts, style)?,
            (false, true) => draw(&root, x0..x1, (y0..y1).log_scale(), series, &pts, style)?,
            (false, false) => draw(&root, x0..x1, y0..y1, series, &pts, style)?,
        }
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// Draws the chart on `root` with the x and y coordinate specs `xs`, `ys`.
fn draw<'a, X, Y>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    xs: X,
    ys: Y,
    series: &[XySeries],
    pts: &[Vec<(f64, f64, f64)>],
    style: &XyStyle,
) -> Result<(), PlotError>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(root)
        .caption(style.title.as_str(), ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(84)
        .build_cartesian_2d(xs, ys)
        .map_err(err)?;
    let integer = |v: &f64| if v.fract() == 0.0 { format!("{v:.0}") } else { String::new() };
    chart
        .configure_mesh()
        .x_desc(style.x_label.as_str())
        .y_desc(style.y_label.as_str())
        .x_label_formatter(if style.integer_x { &integer } else { &plain_label })
        .y_label_formatter(&plain_label)
        .draw()
        .map_err(err)?;
    for (s, p) in series.iter().zip(pts) {
        let color = series_color(s.color);
        let xy: Vec<(f64, f64)> = p.iter().map(|&(x, y, _)| (x, y)).collect();
        // 95% bars of every series that has half widths
        let bars = p.iter().filter(|(_, _, h)| *h > 0.0).map(|&(x, y, h)| {
            let lo = if style.log_y && y - h <= 0.0 { y } else { y - h };
            ErrorBar::new_vertical(x, lo, y, y + h, color.stroke_width(1), 8)
        });
        chart.draw_series(bars).map_err(err)?;
        let anno = match s.draw {
            Draw::Line => {
                chart.draw_series(xy.iter().map(|q| Circle::new(*q, 3, color.filled()))).map_err(err)?;
                chart.draw_series(LineSeries::new(xy, color.stroke_width(2))).map_err(err)?
            }
            Draw::Dashed => {
                chart.draw_series(xy.iter().map(|q| Circle::new(*q, 3, color.filled()))).map_err(err)?;
                chart.draw_series(DashedLineSeries::new(xy, 8, 5, color.stroke_width(2))).map_err(err)?
            }
            Draw::Markers => chart
                .draw_series(xy.iter().map(|q| EmptyElement::at(*q) + Rectangle::new([(-4, -4), (4, 4)], color.stroke_width(2))))
                .map_err(err)?,
        };
        let legend_style = color.stroke_width(2);
        match s.draw {
            Draw::Markers => anno
                .label(s.label.as_str())
                .legend(move |(x, y)| EmptyElement::at((x + 10, y)) + Rectangle::new([(-4, -4), (4, 4)], legend_style)),
            Draw::Dashed => anno.label(s.label.as_str()).legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (7, 0)], legend_style)
                    + PathElement::new(vec![(13, 0), (20, 0)], legend_style)
            }),
            Draw::Line => anno.label(s.label.as_str()).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], legend_style)),
        };
    }
    let position = if style.legend_lower_left { SeriesLabelPosition::LowerLeft } else { SeriesLabelPosition::UpperRight };
    draw_legend(&mut chart, position)
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
