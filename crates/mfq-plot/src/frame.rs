//! The one chart set-up of every mfq plot: the canvas at the style's size with a wrapped title,
//! panels, axes ([`Axis`]) with the style's fonts and ranges, curves with a marker and dash
//! pattern per curve ([`Look`]), 95% bars, the legend, and a `<metadata>` element listing the
//! curves drawn (label, marker, dash, colour), which the figure tests read.

use crate::axis::Axis;
use crate::style::{LegendPosition, Style};
use crate::{err, PlotError};
use plotters::coord::Shift;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters_backend::DrawingErrorKind;
use std::cell::RefCell;

/// A chart of this crate: two [`Axis`] on the SVG backend.
pub(crate) type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Axis, Axis>>;
/// A drawing area (a panel) of the SVG backend.
pub(crate) type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;

/// plotters writes a font of size `s` as `font-size = s / 1.24` in the SVG: sizes handed to it
/// are multiplied by this so that the SVG has the style's sizes.
const FONT: f64 = 1.24;

/// Marker shapes, in the order curves get them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Filled circle.
    Circle,
    /// Filled square.
    Square,
    /// Filled triangle pointing up.
    TriangleUp,
    /// Filled diamond.
    Diamond,
    /// Diagonal cross.
    Cross,
    /// Filled triangle pointing down.
    TriangleDown,
    /// Plus sign.
    Plus,
    /// Open circle.
    OpenCircle,
}

const MARKERS: [Marker; 8] = [
    Marker::Circle,
    Marker::Square,
    Marker::TriangleUp,
    Marker::Diamond,
    Marker::Cross,
    Marker::TriangleDown,
    Marker::Plus,
    Marker::OpenCircle,
];

/// Dash patterns, in the order curves get them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    /// Solid line.
    Solid,
    /// Dashes.
    Dashed,
    /// Dots.
    Dotted,
    /// Long dashes.
    LongDash,
}

const DASHES: [Dash; 4] = [Dash::Solid, Dash::Dashed, Dash::Dotted, Dash::LongDash];

impl Marker {
    fn name(self) -> &'static str {
        match self {
            Marker::Circle => "circle",
            Marker::Square => "square",
            Marker::TriangleUp => "triangle-up",
            Marker::Diamond => "diamond",
            Marker::Cross => "cross",
            Marker::TriangleDown => "triangle-down",
            Marker::Plus => "plus",
            Marker::OpenCircle => "open-circle",
        }
    }
}

impl Dash {
    fn name(self) -> &'static str {
        match self {
            Dash::Solid => "solid",
            Dash::Dashed => "dashed",
            Dash::Dotted => "dotted",
            Dash::LongDash => "long-dash",
        }
    }

    /// (dash, gap) in pixels for a line `w` pixels wide; `None` for solid.
    fn pattern(self, w: u32) -> Option<(u32, u32)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((5 * w + 4, 3 * w + 3)),
            Dash::Dotted => Some((w + 1, 2 * w + 3)),
            Dash::LongDash => Some((12 * w + 6, 3 * w + 3)),
        }
    }
}

/// How one curve is drawn: colour, marker (none: no markers), dash pattern, line width and
/// marker radius in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    /// Line and marker colour.
    pub color: RGBColor,
    /// Marker shape, if markers are drawn.
    pub marker: Option<Marker>,
    /// Dash pattern.
    pub dash: Dash,
    /// Line width in pixels.
    pub width: u32,
    /// Marker radius in pixels.
    pub radius: i32,
    /// The curve's index (staggers the markers of dense curves).
    pub index: usize,
}

impl Look {
    /// The look of the `i`-th curve under `style`: colour, marker and dash cycle together, so
    /// that the first eight curves differ in all three (in grayscale: marker and dash). Each
    /// further block of eight shifts the dash pattern by one, so that the (marker, dash) pairs
    /// of the first 32 curves are pairwise distinct (grayscale too).
    pub fn nth(style: &Style, i: usize) -> Look {
        let (r, g, b) = style.palette().color(i);
        let radius = style.marker_radius_px();
        let block = i / MARKERS.len();
        Look {
            color: RGBColor(r, g, b),
            marker: (radius > 0).then_some(MARKERS[i % MARKERS.len()]),
            dash: if style.dashes == Some(false) { Dash::Solid } else { DASHES[(i + block) % DASHES.len()] },
            width: style.line_px(),
            radius,
            index: i,
        }
    }

    /// The same look with another dash pattern.
    pub fn dashed(self, dash: Dash) -> Look {
        Look { dash, ..self }
    }

    /// The same look without markers.
    pub fn plain(self) -> Look {
        Look { marker: None, ..self }
    }

    /// The same look with another colour.
    pub fn colored(self, color: RGBColor) -> Look {
        Look { color, ..self }
    }
}

/// One legend entry: its label and the look of its sample (`None`: a note, text alone), with
/// or without a line.
#[derive(Debug, Clone)]
struct Entry {
    label: String,
    look: Option<Look>,
    line: bool,
}

/// The current chart's data polylines (pixels) and legend entries.
type Occupied = (Vec<Vec<(i32, i32)>>, Vec<Entry>);

thread_local! {
    /// Curves drawn into the SVG being rendered on this thread (for its `<metadata>`).
    static DRAWN: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// The current chart's data polylines (pixels) and legend labels, for placing its legend
    /// where it hides the fewest points.
    static OCCUPIED: RefCell<Occupied> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Notes a polyline (data coordinates) of the current chart for the legend placement.
fn occupy(chart: &Chart, pts: &[(f64, f64)]) {
    let px: Vec<(i32, i32)> = pts.iter().map(|p| chart.backend_coord(p)).collect();
    OCCUPIED.with(|o| o.borrow_mut().0.push(px));
}

fn labelled(label: &str, look: Option<Look>, line: bool) {
    OCCUPIED.with(|o| o.borrow_mut().1.push(Entry { label: label.to_string(), look, line }));
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn record(label: &str, look: &Look, line: bool) {
    let dash = if line { look.dash.name() } else { "none" };
    let line = format!(
        "<mfq:curve label=\"{}\" marker=\"{}\" dash=\"{}\" color=\"#{:02x}{:02x}{:02x}\"/>",
        xml_escape(label),
        look.marker.map_or("none", Marker::name),
        dash,
        look.color.0,
        look.color.1,
        look.color.2
    );
    DRAWN.with(|d| d.borrow_mut().push(line));
    labelled(label, Some(*look), dash != "none");
}

/// A marker (or, with `glyph`, a legend sample: a line `len` pixels long in the dash pattern,
/// the marker in its middle) at one point; drawn with the backend's primitives.
struct Mark<C> {
    at: C,
    look: Look,
    /// Legend sample: `(length, with line)`.
    glyph: Option<(i32, bool)>,
}

impl<'a, C> PointCollection<'a, C> for &'a Mark<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Mark<C> {
    fn draw<I: Iterator<Item = (i32, i32)>>(&self, mut pos: I, b: &mut DB, _: (u32, u32)) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else { return Ok(()) };
        let look = self.look;
        let center = match self.glyph {
            None => (x, y),
            Some((len, line)) => {
                let style = look.color.stroke_width(look.width);
                if line {
                    match look.dash.pattern(look.width) {
                        None => b.draw_line((x, y), (x + len, y), &style)?,
                        Some((d, g)) => {
                            let mut t = 0;
                            while t < len {
                                b.draw_line((x + t, y), (x + (t + d as i32).min(len), y), &style)?;
                                t += (d + g) as i32;
                            }
                        }
                    }
                }
                (x + len / 2, y)
            }
        };
        match look.marker {
            Some(m) if look.radius > 0 => draw_marker(b, m, center, look.radius, look.color, look.width),
            _ => Ok(()),
        }
    }
}

/// Draws marker `m` of radius `r` at `c`.
fn draw_marker<DB: DrawingBackend>(
    b: &mut DB,
    m: Marker,
    c: (i32, i32),
    r: i32,
    color: RGBColor,
    w: u32,
) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
    let fill = color.filled();
    let stroke = color.stroke_width(w.max(2));
    let (x, y) = c;
    match m {
        Marker::Circle => b.draw_circle(c, r as u32, &fill, true),
        Marker::OpenCircle => b.draw_circle(c, r as u32, &stroke, false),
        Marker::Square => {
            let s = (f64::from(r) * 0.85).round() as i32;
            b.draw_rect((x - s, y - s), (x + s, y + s), &fill, true)
        }
        Marker::TriangleUp => b.fill_polygon([(x, y - r - 1), (x - r, y + r * 3 / 4), (x + r, y + r * 3 / 4)], &fill),
        Marker::TriangleDown => b.fill_polygon([(x, y + r + 1), (x - r, y - r * 3 / 4), (x + r, y - r * 3 / 4)], &fill),
        Marker::Diamond => b.fill_polygon([(x, y - r - 1), (x + r, y), (x, y + r + 1), (x - r, y)], &fill),
        Marker::Cross => {
            let s = r * 4 / 5;
            b.draw_line((x - s, y - s), (x + s, y + s), &stroke)?;
            b.draw_line((x - s, y + s), (x + s, y - s), &stroke)
        }
        Marker::Plus => {
            b.draw_line((x - r, y), (x + r, y), &stroke)?;
            b.draw_line((x, y - r), (x, y + r), &stroke)
        }
    }
}

/// Plot-specific defaults of one panel, overridden by the style's fields.
#[derive(Debug, Clone)]
pub(crate) struct Panel<'s> {
    /// Panel caption (multi-panel figures), drawn above the chart.
    pub caption: Option<&'s str>,
    /// x axis label.
    pub x_label: &'s str,
    /// y axis label.
    pub y_label: &'s str,
    /// Data range of x (before padding).
    pub x: (f64, f64),
    /// Data range of y (before padding).
    pub y: (f64, f64),
    /// Logarithmic x axis unless the style says otherwise.
    pub log_x: bool,
    /// Logarithmic y axis unless the style says otherwise.
    pub log_y: bool,
    /// Integer ticks on x.
    pub integer_x: bool,
    /// Pad the data ranges (5% linear, a factor 1.3 log); false: use them as given.
    pub pad: bool,
}

impl Panel<'_> {
    /// A panel with linear axes over the data ranges, padded.
    pub fn new<'s>(x_label: &'s str, y_label: &'s str, x: (f64, f64), y: (f64, f64)) -> Panel<'s> {
        Panel { caption: None, x_label, y_label, x, y, log_x: false, log_y: false, integer_x: false, pad: true }
    }
}

fn padded((lo, hi): (f64, f64), log: bool, pad: bool) -> (f64, f64) {
    if !pad {
        return (lo, hi);
    }
    if log {
        (lo / 1.3, hi * 1.3)
    } else {
        let p = ((hi - lo) * 0.05).max(1e-12 * hi.abs().max(1.0));
        (lo - p, hi + p)
    }
}

/// The axes of `panel` under `style`: the style's ranges and scales win.
pub(crate) fn axes(style: &Style, panel: &Panel) -> (Axis, Axis) {
    let log_x = style.log_x.unwrap_or(panel.log_x);
    let log_y = style.log_y.unwrap_or(panel.log_y);
    let fit = |r: (f64, f64), log: bool| {
        if log {
            // a log axis over data with non-positive values: keep the positive part
            (if r.0 > 0.0 { r.0 } else { r.1 / 10.0 }, r.1)
        } else {
            r
        }
    };
    let (x0, x1) = style.x_range.map_or_else(|| padded(fit(panel.x, log_x), log_x, panel.pad), |[a, b]| (a, b));
    let (y0, y1) = style.y_range.map_or_else(|| padded(fit(panel.y, log_y), log_y, panel.pad), |[a, b]| (a, b));
    (Axis::new(x0, x1, log_x, panel.integer_x && !log_x), Axis::new(y0, y1, log_y, false))
}

/// Renders a figure of `cols x rows` panels with `title` (the style's title override and
/// `{param}` substitution applied, wrapped to the width) and returns the SVG, with a
/// `<metadata>` element listing the curves drawn. `draw` gets the style and the panels.
pub(crate) fn render<F>(style: &Style, title: &str, (cols, rows): (usize, usize), draw: F) -> Result<String, PlotError>
where
    F: FnOnce(&Style, &[Area<'_>]) -> Result<(), PlotError>,
{
    style.validate().map_err(|e| PlotError(e.to_string()))?;
    let title = style.title_or(title);
    let (w, h) = style.size_px();
    let width = w * cols.max(1) as u32;
    let tpx = style.title_px();
    // wrap the title at the estimated number of characters per line
    let per_line = ((f64::from(width) - 2.0 * tpx) / (0.54 * tpx)).max(10.0) as usize;
    let lines = wrap(&title, per_line);
    let title_h = if title.is_empty() { 0 } else { (lines.len() as f64 * tpx * 1.25 + tpx * 0.5).round() as u32 };
    let height = h * rows.max(1) as u32 + title_h;
    DRAWN.with(|d| d.borrow_mut().clear());
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let font = ("sans-serif", tpx * FONT).into_font().color(&BLACK).pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ));
        for (i, l) in lines.iter().enumerate() {
            root.draw_text(l, &font, ((width / 2) as i32, (tpx * 0.3 + i as f64 * tpx * 1.25) as i32)).map_err(err)?;
        }
        let (_, body) = root.split_vertically(title_h);
        let panels = body.split_evenly((rows.max(1), cols.max(1)));
        draw(style, &panels)?;
        root.present().map_err(err)?;
    }
    let drawn = DRAWN.with(|d| std::mem::take(&mut *d.borrow_mut()));
    Ok(with_metadata(out, &drawn))
}

/// Inserts the `<metadata>` element (curves drawn) after the opening `<svg ...>` tag.
fn with_metadata(svg: String, drawn: &[String]) -> String {
    let Some(end) = svg.find('>') else { return svg };
    let meta = format!("\n<metadata xmlns:mfq=\"urn:mfq:curves\">{}</metadata>", drawn.concat());
    let mut s = String::with_capacity(svg.len() + meta.len());
    s.push_str(&svg[..=end]);
    s.push_str(&meta);
    s.push_str(&svg[end + 1..]);
    s
}

/// Splits `text` into lines of at most about `n` characters at spaces, never inside an
/// assignment `NAME = VALUE` or `NAME in {...}` (from the name to the `;`, `:` or `, NAME =`
/// that ends it, outside braces): a title's line breaks fall between assignments. An
/// assignment longer than a line alone is split at its spaces.
fn wrap(text: &str, n: usize) -> Vec<String> {
    let t: Vec<&str> = text.split_whitespace().collect();
    // the units: runs of words with no break inside
    let mut units: Vec<String> = Vec::new();
    let (mut inside, mut depth, mut cur) = (false, 0i32, String::new());
    for (k, w) in t.iter().enumerate() {
        if matches!(t.get(k + 1), Some(&"=") | Some(&"in")) {
            // a new assignment: a break may come before its name
            if inside && depth <= 0 && !cur.is_empty() {
                units.push(std::mem::take(&mut cur));
            }
            inside = true;
        }
        depth += w.matches('{').count() as i32 - w.matches('}').count() as i32;
        let ends = depth <= 0 && (w.ends_with(';') || w.ends_with(':') || (w.ends_with(',') && t.get(k + 2) == Some(&"=")));
        if ends {
            (inside, depth) = (false, 0);
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
        if !inside {
            units.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        units.push(cur);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for unit in units {
        if !line.is_empty() && line.chars().count() + 1 + unit.chars().count() > n {
            lines.push(std::mem::take(&mut line));
        }
        if unit.chars().count() > n && line.is_empty() {
            // longer than a line alone: at its spaces, a name kept with `=` (or `in`) and the
            // value's first word
            let words: Vec<&str> = unit.split(' ').collect();
            let mut pieces: Vec<String> = Vec::new();
            let mut i = 0;
            while i < words.len() {
                let mut piece = words[i].to_string();
                while i + 1 < words.len() && [words[i], words[i + 1]].iter().any(|w| *w == "=" || *w == "in") {
                    i += 1;
                    piece.push(' ');
                    piece.push_str(words[i]);
                }
                pieces.push(piece);
                i += 1;
            }
            for word in &pieces {
                if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > n {
                    lines.push(std::mem::take(&mut line));
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
            continue;
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&unit);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The chart of one panel: caption, axes (style overrides applied), mesh with the style's fonts
/// and tick labels ([`tick_label`]).
pub(crate) fn chart<'a, 'b>(area: &'a Area<'b>, style: &Style, panel: &Panel) -> Result<Chart<'a, 'b>, PlotError> {
    let (xa, ya) = axes(style, panel);
    let f = style.font_px();
    let longest = ya.ticks().iter().map(|v| ya.label(*v).chars().count()).max().unwrap_or(1) as f64;
    let (xf, yf) = (xa.clone(), ya.clone());
    let mut b = ChartBuilder::on(area);
    if let Some(c) = panel.caption {
        b.caption(style.substitute(c), ("sans-serif", f * 1.05 * FONT));
    }
    b.margin_top((f * 0.6) as u32)
        .margin_right((f * 1.2) as u32)
        .margin_left((f * 0.3) as u32)
        .margin_bottom((f * 0.3) as u32)
        .x_label_area_size((f * 2.7) as u32)
        .y_label_area_size((f * (1.9 + 0.56 * longest) + 6.0) as u32);
    let mut chart = b.build_cartesian_2d(xa, ya).map_err(err)?;
    OCCUPIED.with(|o| *o.borrow_mut() = (Vec::new(), Vec::new()));
    let (xl, yl) = (style.x_label_or(panel.x_label), style.y_label_or(panel.y_label));
    // axis labels longer than their axis get a smaller font (both, down to 70%), not clipped
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let fit = |text: &str, len: i32| (f64::from(len) / (0.56 * text.chars().count().max(1) as f64)).clamp(0.7 * f, f);
    let (fx, fy) = (fit(&xl, xr.end - xr.start), fit(&yl, yr.end - yr.start + (f * 2.0) as i32));
    chart
        .configure_mesh()
        .x_desc(xl)
        .y_desc(yl)
        .label_style(("sans-serif", f * FONT))
        .axis_desc_style(("sans-serif", fx.min(fy) * FONT))
        .x_label_formatter(&|v| xf.label(*v))
        .y_label_formatter(&|v| yf.label(*v))
        .bold_line_style(RGBColor(222, 222, 222).stroke_width(1))
        .light_line_style(RGBColor(243, 243, 243).stroke_width(1))
        .axis_style(BLACK.stroke_width(1))
        .set_all_tick_mark_size((f * 0.3) as u32)
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// The points of `pts` that the chart's axes can show (finite, positive on log axes).
pub(crate) fn visible(chart: &Chart, pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let spec = chart.as_coord_spec();
    pts.iter().copied().filter(|(x, y)| spec.x_spec().accepts(*x) && spec.y_spec().accepts(*y)).collect()
}

/// A curve through `pts` drawn with `look` (line with its dash pattern, markers on every point
/// of short curves and on about ten staggered points of dense ones), labelled in the legend
/// and recorded in the metadata when `label` is given.
pub(crate) fn curve<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, look: Look, pts: &[(f64, f64)], label: Option<&str>) -> Result<(), PlotError> {
    let pts = visible(chart, pts);
    if pts.is_empty() {
        return Ok(());
    }
    occupy(chart, &pts);
    let style = look.color.stroke_width(look.width);
    let anno = match look.dash.pattern(look.width) {
        None => chart.draw_series(LineSeries::new(pts.clone(), style)).map_err(err)?,
        Some((d, g)) => chart.draw_series(DashedLineSeries::new(pts.clone(), d, g, style)).map_err(err)?,
    };
    if let Some(l) = label {
        let len = legend_len(look);
        anno.label(l).legend(move |at| Mark { at, look, glyph: Some((len, true)) });
        record(l, &look, true);
    }
    if let Some(m) = look.marker {
        let every = if pts.len() <= 16 { 1 } else { pts.len().div_ceil(10) };
        let phase = (look.index * every / 3) % every;
        let marks = pts.iter().enumerate().filter(|(i, _)| i % every == phase).map(|(_, p)| *p);
        chart.draw_series(marks.map(|at| Mark { at, look: Look { marker: Some(m), ..look }, glyph: None })).map_err(err)?;
    }
    Ok(())
}

/// Markers alone at `pts` (data points, e.g. simulation), with `look`'s marker (a circle when
/// the style turns markers off, so that the points stay visible).
pub(crate) fn points<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, look: Look, pts: &[(f64, f64)], label: Option<&str>) -> Result<(), PlotError> {
    let look = Look { marker: Some(look.marker.unwrap_or(Marker::Circle)), radius: look.radius.max(3), ..look };
    let pts = visible(chart, pts);
    for p in &pts {
        occupy(chart, std::slice::from_ref(p));
    }
    let m = look.marker.unwrap_or(Marker::Circle);
    let anno =
        chart.draw_series(pts.iter().map(|at| Mark { at: *at, look: Look { marker: Some(m), ..look }, glyph: None })).map_err(err)?;
    if let Some(l) = label {
        let len = legend_len(look);
        anno.label(l).legend(move |at| Mark { at, look, glyph: Some((len, false)) });
        record(l, &look, false);
    }
    Ok(())
}

/// A legend entry alone (nothing drawn in the chart): `look`'s line sample (`line`) and marker.
pub(crate) fn key<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, look: Look, label: &str, line: bool) -> Result<(), PlotError> {
    let len = legend_len(look);
    chart.draw_series(std::iter::empty::<Mark<(f64, f64)>>()).map_err(err)?.label(label).legend(move |at| Mark {
        at,
        look,
        glyph: Some((len, line)),
    });
    record(label, &look, line);
    Ok(())
}

/// A legend entry of text alone (e.g. which points are left out of the curves and why),
/// recorded in the metadata as `<mfq:note text="..."/>` (not a curve).
pub(crate) fn note<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, text: &str) -> Result<(), PlotError> {
    chart.draw_series(std::iter::empty::<Mark<(f64, f64)>>()).map_err(err)?.label(text).legend(EmptyElement::at);
    DRAWN.with(|d| d.borrow_mut().push(format!("<mfq:note text=\"{}\"/>", xml_escape(text))));
    labelled(text, None, false);
    Ok(())
}

/// A vertical bar from `lo` to `hi` (data coordinates) with caps `cap` pixels wide.
struct Bar {
    ends: [(f64, f64); 2],
    cap: i32,
    style: ShapeStyle,
}

impl<'a> PointCollection<'a, (f64, f64)> for &'a Bar {
    type Point = &'a (f64, f64);
    type IntoIter = &'a [(f64, f64)];
    fn point_iter(self) -> Self::IntoIter {
        &self.ends
    }
}

impl<DB: DrawingBackend> Drawable<DB> for Bar {
    fn draw<I: Iterator<Item = (i32, i32)>>(&self, mut pos: I, b: &mut DB, _: (u32, u32)) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let (Some(p), Some(q)) = (pos.next(), pos.next()) else { return Ok(()) };
        b.draw_line(p, q, &self.style)?;
        b.draw_line((p.0 - self.cap, p.1), (p.0 + self.cap, p.1), &self.style)?;
        b.draw_line((q.0 - self.cap, q.1), (q.0 + self.cap, q.1), &self.style)
    }
}

/// Vertical 95% bars `(x, y, half width)` in `look`'s colour (on a log axis, bars reaching
/// zero or below stop at `y`).
pub(crate) fn bars<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, look: Look, pts: &[(f64, f64, f64)]) -> Result<(), PlotError> {
    let spec = chart.as_coord_spec();
    let log_y = spec.y_spec().is_log();
    let cap = look.radius.max(3);
    let bars: Vec<Bar> = pts
        .iter()
        .filter(|(x, y, h)| *h > 0.0 && h.is_finite() && spec.x_spec().accepts(*x) && spec.y_spec().accepts(*y))
        .map(|&(x, y, h)| {
            let lo = if log_y && y - h <= 0.0 { y } else { y - h };
            Bar { ends: [(x, lo), (x, y + h)], cap, style: look.color.stroke_width(look.width.max(1)) }
        })
        .collect();
    for b in &bars {
        occupy(chart, &b.ends);
    }
    chart.draw_series(bars).map_err(err)?;
    Ok(())
}

fn legend_len(look: Look) -> i32 {
    (look.radius * 2 + 30).max(36)
}

/// The number of drawn points (polylines sampled every 4 pixels) inside `rect`.
fn hidden(rect: (i32, i32, i32, i32)) -> usize {
    let (x0, y0, x1, y1) = rect;
    let inside = |(x, y): (i32, i32)| x >= x0 && x <= x1 && y >= y0 && y <= y1;
    OCCUPIED.with(|o| {
        let o = o.borrow();
        let mut n = 0;
        for line in &o.0 {
            n += line.iter().filter(|p| inside(**p)).count();
            for w in line.windows(2) {
                let (a, b) = (w[0], w[1]);
                let steps = ((b.0 - a.0).abs().max((b.1 - a.1).abs()) / 4).min(400);
                n += (1..steps).filter(|i| inside((a.0 + (b.0 - a.0) * i / steps, a.1 + (b.1 - a.1) * i / steps))).count();
            }
        }
        n
    })
}

/// Where a legend box of `w x h` pixels goes: the style's position; without one, the plot's
/// `default` unless another corner (or edge middle) hides fewer of the drawn points. Returns
/// the position and the box's top-left corner (absolute pixels).
fn place(chart: &Chart, style: &Style, default: LegendPosition, (w, h): (i32, i32), m: i32) -> (LegendPosition, (i32, i32)) {
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let (cx, cy) = ((xr.start + xr.end - w) / 2, (yr.start + yr.end - h) / 2);
    let corner = |p: LegendPosition| {
        let x = match p {
            LegendPosition::UpperLeft | LegendPosition::LowerLeft | LegendPosition::MiddleLeft => xr.start + m,
            LegendPosition::UpperMiddle | LegendPosition::LowerMiddle => cx,
            _ => xr.end - m - w,
        };
        let y = match p {
            LegendPosition::UpperLeft | LegendPosition::UpperRight | LegendPosition::UpperMiddle => yr.start + m,
            LegendPosition::MiddleLeft | LegendPosition::MiddleRight => cy,
            _ => yr.end - m - h,
        };
        (x, y)
    };
    let chosen = style.legend.unwrap_or_else(|| {
        let score = |p: LegendPosition| {
            let (x, y) = corner(p);
            hidden((x, y, x + w, y + h))
        };
        let mut best = (score(default), default);
        for p in [
            LegendPosition::UpperRight,
            LegendPosition::UpperLeft,
            LegendPosition::LowerRight,
            LegendPosition::LowerLeft,
            LegendPosition::MiddleRight,
            LegendPosition::MiddleLeft,
            LegendPosition::UpperMiddle,
            LegendPosition::LowerMiddle,
        ] {
            let n = score(p);
            if n < best.0 {
                best = (n, p);
            }
        }
        best.1
    });
    // a box wider than the plot starts at its left edge (never left of it, where it is cut)
    let (x, y) = corner(chosen);
    (chosen, (x.max(xr.start + m), y))
}

/// Legend layout of `entries` in a plot area of `plot` = (width, height) pixels, with the legend
/// font `f` and sample length `len`: the curves one column while it fills at most half the plot's
/// height, else in as many columns (filled top to bottom) as keep it there; notes (entries
/// without a sample) in rows below, across, wrapped between words to the plot's width. Returns
/// the rows per column, the columns' widths, the box's size (pixels) and the notes' lines.
fn layout(entries: &[Entry], plot: (i32, i32), f: f64, len: i32) -> (usize, Vec<i32>, (i32, i32), Vec<String>) {
    let row = f * 1.45;
    let char_w = 0.56 * f;
    let text = |label: &str| (char_w * label.chars().count() as f64) as i32;
    let (samples, notes): (Vec<&Entry>, Vec<&Entry>) = entries.iter().partition(|e| e.look.is_some());
    let fit = (((f64::from(plot.0) - 2.0 * f - 8.0) / char_w).floor() as usize).max(12);
    let lines: Vec<String> = notes.iter().flat_map(|e| wrap_words(&e.label, fit)).collect();
    let n = samples.len().max(1);
    let max_rows = (((0.5 * f64::from(plot.1) - f) / row).floor() as usize).saturating_sub(lines.len()).max(1);
    let cols = n.div_ceil(max_rows);
    let rows = n.div_ceil(cols);
    let widths: Vec<i32> = samples.chunks(rows).map(|c| c.iter().map(|e| len + 16 + text(&e.label)).max().unwrap_or(0)).collect();
    let note_w = lines.iter().map(|l| 8 + text(l)).max().unwrap_or(0);
    let w = widths.iter().sum::<i32>().max(note_w) + (f * 0.5) as i32;
    (rows, widths, (w, ((rows.min(samples.len()) + lines.len()) as f64 * row + f) as i32), lines)
}

/// `text` broken between words into lines of at most `fit` characters (a longer word keeps its
/// own line); a comparison (`lambda >= 0.8`, `d = 2`) is kept on one line.
fn wrap_words(text: &str, fit: usize) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut glue = false;
    for token in text.split(' ') {
        let op = matches!(token, "=" | ">=" | "<=" | "<" | ">");
        match words.last_mut() {
            Some(w) if op || glue => {
                w.push(' ');
                w.push_str(token);
            }
            _ => words.push(token.to_string()),
        }
        glue = op;
    }
    let mut lines: Vec<String> = Vec::new();
    for word in &words {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= fit => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.clone()),
        }
    }
    lines
}

/// The legend at the style's position; without one, at the plot's `default` unless another
/// corner (or edge middle) hides fewer of the drawn points; in the style's legend font. A
/// legend taller than half the plot gets several columns.
pub(crate) fn legend<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, style: &Style, default: LegendPosition) -> Result<(), PlotError> {
    if style.legend == Some(LegendPosition::None) {
        return Ok(());
    }
    let f = style.legend_px();
    let len = (style.marker_radius_px() * 2 + 30).max(36);
    let entries = OCCUPIED.with(|o| o.borrow().1.clone());
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let (rows, widths, size, lines) = layout(&entries, (xr.end - xr.start, yr.end - yr.start), f, len);
    let m = (f * 0.5) as i32;
    let (chosen, (x0, y0)) = place(chart, style, default, size, m);
    if chosen == LegendPosition::None {
        return Ok(());
    }
    // drawn here for every legend, one column or several: plotters' own series labels put the
    // line samples over the labels' first letters in a box at the left edge
    columns(chart, &entries, (x0, y0), (rows, &widths, size, &lines), f, len)
}

/// A legend of `entries` in columns of the given widths (curves filled top to bottom, `rows`
/// each; the notes' `lines` in rows below, across), its box of `size` pixels at `at` (absolute pixels),
/// each curve its sample (`len` pixels) and its label.
fn columns(
    chart: &Chart,
    entries: &[Entry],
    at: (i32, i32),
    (rows, widths, size, lines): (usize, &[i32], (i32, i32), &[String]),
    f: f64,
    len: i32,
) -> Result<(), PlotError> {
    let area = chart.plotting_area().strip_coord_spec();
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let (x0, y0) = (at.0 - xr.start, at.1 - yr.start);
    let rect = [(x0, y0), (x0 + size.0, y0 + size.1)];
    area.draw(&Rectangle::new(rect, WHITE.mix(0.85).filled())).map_err(err)?;
    area.draw(&Rectangle::new(rect, BLACK.stroke_width(1))).map_err(err)?;
    let font = ("sans-serif", f * FONT)
        .into_font()
        .color(&BLACK)
        .pos(plotters::style::text_anchor::Pos::new(plotters::style::text_anchor::HPos::Left, plotters::style::text_anchor::VPos::Center));
    let row_y = |r: usize| y0 + (f * 0.5 + (r as f64 + 0.5) * f * 1.45) as i32;
    let samples: Vec<&Entry> = entries.iter().filter(|e| e.look.is_some()).collect();
    for (i, e) in samples.iter().enumerate() {
        let (c, r) = (i / rows, i % rows);
        let x = x0 + (f * 0.5) as i32 + widths[..c].iter().sum::<i32>();
        if let Some(look) = e.look {
            area.draw(&Mark { at: (x, row_y(r)), look, glyph: Some((len, e.line)) }).map_err(err)?;
        }
        area.draw(&Text::new(e.label.clone(), (x + len + 6, row_y(r)), font.clone())).map_err(err)?;
    }
    for (i, l) in lines.iter().enumerate() {
        area.draw(&Text::new(l.clone(), (x0 + (f * 0.5) as i32, row_y(rows.min(samples.len()) + i)), font.clone())).map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_differ_for_eight_curves_and_in_grayscale() {
        let gray = Style { palette: Some(crate::style::Palette::Gray), ..Style::default() };
        let looks: Vec<Look> = (0..8).map(|i| Look::nth(&gray, i)).collect();
        for i in 0..8 {
            for j in 0..i {
                assert!(looks[i].marker != looks[j].marker, "curves {i} and {j} share a marker");
            }
        }
        let plain = Style { markers: Some(false), dashes: Some(false), ..Style::default() };
        assert_eq!(Look::nth(&plain, 3).marker, None);
        assert_eq!(Look::nth(&plain, 3).dash, Dash::Solid);
    }

    #[test]
    fn titles_wrap_at_spaces() {
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("", 6), Vec::<String>::new());
    }

    /// Issue 19 (a new user's try): a title broke between a name and its value ("lambda =" /
    /// "0.9"); breaks now fall between assignments only.
    #[test]
    fn titles_wrap_between_assignments_only() {
        let t = "JSQ(d) / power-of-d: lambda = 0.5 to 0.99 (50 points); d in {1, 2, 5, 10, 20}";
        for n in 10..80 {
            let lines = wrap(t, n);
            assert_eq!(lines.join(" "), t, "{n}");
            for l in &lines {
                assert!(!l.ends_with('=') && !l.starts_with('=') && !l.ends_with(" in") && !l.ends_with('{'), "{n}: {lines:?}");
            }
            if n >= 36 {
                // every line boundary is one of the two separators
                assert!(
                    lines.iter().all(|l| ["JSQ(d)", "power-of-d:", "lambda", "d in"].iter().any(|s| l.starts_with(s))),
                    "{n}: {lines:?}"
                );
            }
        }
        assert_eq!(wrap(t, 40), ["JSQ(d) / power-of-d:", "lambda = 0.5 to 0.99 (50 points);", "d in {1, 2, 5, 10, 20}"]);
        let facets = "2 model files: lambda = 0.1 to 0.9 (9 points) (truncation.tol = 0.0000000001, d = 3)";
        assert_eq!(wrap(facets, 48), ["2 model files: lambda = 0.1 to 0.9 (9 points)", "(truncation.tol = 0.0000000001, d = 3)"]);
    }

    /// Issue 19: curves 9 and beyond had the looks of curves 1 to 8; the first 32 differ in
    /// (marker, dash) and so in grayscale, and in (colour, marker, dash) in every palette.
    #[test]
    fn looks_differ_for_twenty_four_curves() {
        for palette in [crate::style::Palette::OkabeIto, crate::style::Palette::Tableau, crate::style::Palette::Gray] {
            let st = Style { palette: Some(palette), ..Style::default() };
            let looks: Vec<Look> = (0..32).map(|i| Look::nth(&st, i)).collect();
            for i in 0..looks.len() {
                for j in 0..i {
                    assert!((looks[i].marker, looks[i].dash) != (looks[j].marker, looks[j].dash), "{palette:?}: curves {i} and {j}");
                }
            }
        }
    }

    /// Eleven entries at the default size do not fit one column in half the plot: several
    /// columns, each at most half the plot high; three entries keep one column.
    #[test]
    fn long_legends_get_columns() {
        let st = Style::default();
        let look = Look::nth(&st, 0);
        let e = |n: usize| (0..n).map(|i| Entry { label: format!("d = {i}"), look: Some(look), line: true }).collect::<Vec<_>>();
        let (f, h) = (st.legend_px(), 430);
        let (rows, widths, (_, height), _) = layout(&e(11), (500, h), f, 40);
        let cols = widths.len();
        assert!(cols >= 2 && rows * cols >= 11 && height <= h / 2, "{rows} x {cols}, {height} px of {h}");
        assert_eq!(layout(&e(3), (500, h), f, 40).1.len(), 1);
    }

    /// A note longer than the plot is wide is broken between words into lines that fit, and the
    /// box is no wider than the plot.
    #[test]
    fn long_notes_wrap_to_the_plot_width() {
        let st = Style::default();
        let f = st.legend_px();
        let note = "lambda = 0.5: unstable, omitted: eps >= 0.675 (14 points)";
        let entries = [Entry { label: note.into(), look: None, line: false }];
        let (_, _, (w, _), lines) = layout(&entries, (200, 400), f, 40);
        assert!(lines.len() >= 2 && w <= 200, "{lines:?}, box {w} px");
        assert_eq!(lines.join(" "), note);
        let (_, _, _, lines) = layout(&entries, (2000, 400), f, 40);
        assert_eq!(lines, [note]);
        // comparisons stay whole
        assert_eq!(wrap_words("unstable for lambda >= 0.8", 21), ["unstable for", "lambda >= 0.8"]);
    }
}
