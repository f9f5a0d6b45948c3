//! SVG plots of mfq's results, drawn from finished reports: nothing here solves, integrates or
//! simulates.
//!
//! - [`tail_svg`]: the queue-length tail `P(Q >= k)` of one or more
//!   [`mfq_fixpoint::FixedPoint`]s.
//! - [`distance_svg`]: `||x(t) - x*||_inf` of [`DistanceSeries`] (built from a transient's
//!   times and states, e.g. an `mfq_ode::Trajectory`, and a fixed point), with the decay
//!   predicted by the spectral abscissa.
//! - [`trajectory_svg`]: selected entries `x_i(t)` of a transient.
//! - [`size_comparison_svg`]: simulation against mean field and refined mean field over the
//!   system size, from a [`SizeComparison`] (filled by the caller from a simulation report and
//!   an [`mfq_fixpoint::RefinedMeanField`], so that this crate does not depend on `mfq-sim`).
//! - [`sweep_svg`]: a quantity ([`SweepQuantity`]) of an [`mfq::sweep::SweepReport`].
//! - [`attraction`]: the checker's plots of an [`mfq_fixpoint::AttractionReport`].
//! - [`xy::xy_svg`]: curves and markers (with 95% bars) on linear or log axes, from numbers the
//!   caller computed (the refined mean field's error and tail figures).
//! - [`branches`]: the bifurcation diagram of an `mfq_fixpoint::branches::BranchReport`.
//! - [`simsweep`]: simulated values with confidence bars against a parameter, in panels.
//!
//! Every function returns the SVG document as a `String`; writing it (atomically) is the
//! caller's business. Text is emitted as SVG `<text>` (plotters' SVG backend, no font files).
//!
//! Every plot is drawn with the [`style::Style`] in effect on the calling thread (size, fonts,
//! palette, a marker and dash pattern per curve, axis ranges and scales, legend position,
//! title and label overrides), through one chart set-up (`frame`) and one axis type
//! ([`axis::Axis`], whose ticks are chosen here: a log axis below a decade still gets two
//! labelled ticks, integer axes integer ticks, and no two tick labels are the same).

pub mod attraction;
pub mod axis;
pub mod branches;
mod frame;
pub mod simsweep;
pub mod style;
pub mod xy;

pub use frame::{Dash, Look, Marker};

use frame::{bars, chart, curve, legend, points, render, Panel};
use mfq_fixpoint::FixedPoint;
use serde::Serialize;
use style::{LegendPosition, Style};

/// A drawing failed (plotters' error, as text), or a style value cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("plot failed: {0}")]
pub struct PlotError(pub String);

pub(crate) fn err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError(e.to_string())
}

/// Smallest value shown on log-scale axes; tail entries below it are round-off after Newton.
pub const LOG_FLOOR: f64 = 1e-16;

/// The colour of the `i`-th curve in the current style's palette ([`style::Palette`]).
pub fn series_color(i: usize) -> plotters::style::RGBColor {
    let (r, g, b) = Style::current().palette().color(i);
    plotters::style::RGBColor(r, g, b)
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
    let k_max = reports.iter().map(|(_, fp)| fp.observables.tail.iter().take_while(|v| **v >= LOG_FLOOR).count()).max().unwrap_or(1).max(2);
    // the y axis reaches one decade below the smallest plotted value (not below LOG_FLOOR)
    let smallest =
        reports.iter().flat_map(|(_, fp)| fp.observables.tail.iter().copied()).filter(|v| *v >= LOG_FLOOR).fold(1.0f64, f64::min);
    let floor = 10f64.powf(smallest.log10().floor() - 1.0).max(LOG_FLOOR);
    let mut panel = Panel::new("queue length k", "P(Q >= k)", (0.5, k_max as f64 + 0.5), (floor, 1.5));
    (panel.log_y, panel.integer_x, panel.pad) = (true, true, false);
    render(&Style::current(), title, (1, 1), |st, areas| {
        let mut chart = chart(&areas[0], st, &panel)?;
        for (i, (label, fp)) in reports.iter().enumerate() {
            let pts: Vec<(f64, f64)> =
                fp.observables.tail.iter().enumerate().filter(|(_, v)| **v >= LOG_FLOOR).map(|(k, v)| ((k + 1) as f64, *v)).collect();
            curve(&mut chart, Look::nth(st, i), &pts, Some(label))?;
        }
        legend(&mut chart, st, LegendPosition::UpperRight)
    })
}

/// `||x(t) - x*||_inf` against `t` on a log scale for each series, with the decay
/// `C exp(-rate t)` predicted by the spectral abscissa (`rate = -alpha`) drawn dashed,
/// anchored at the first series' last point above `1e-9`.
///
/// # Errors
/// [`PlotError`] if plotters fails.
pub fn distance_svg(series: &[DistanceSeries], predicted_rate: Option<f64>, title: &str) -> Result<String, PlotError> {
    let t_max = series.iter().filter_map(|s| s.t.last()).fold(1e-9f64, |m, t| m.max(*t));
    let d_max = series.iter().flat_map(|s| s.distance.iter()).fold(1e-12f64, |m, d| m.max(*d)) * 2.0;
    let d_min = 1e-14f64.min(d_max / 10.0);
    let mut panel = Panel::new("time t (mean job sizes)", "max_k |x_k(t) - x*_k|", (0.0, t_max), (d_min, d_max));
    (panel.log_y, panel.pad) = (true, false);
    render(&Style::current(), title, (1, 1), |st, areas| {
        let mut chart = chart(&areas[0], st, &panel)?;
        for (i, s) in series.iter().enumerate() {
            let pts: Vec<(f64, f64)> = s.t.iter().zip(&s.distance).filter(|(_, d)| **d >= d_min).map(|(t, d)| (*t, *d)).collect();
            curve(&mut chart, Look::nth(st, i), &pts, Some(&s.label))?;
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
                    let look = Look::nth(st, series.len()).colored(plotters::style::BLACK).plain().dashed(Dash::Dashed);
                    curve(&mut chart, look, &line, Some(&format!("exp(-{rate:.4} t): spectral abscissa")))?;
                }
            }
        }
        legend(&mut chart, st, LegendPosition::UpperRight)
    })
}

/// Selected state entries `x_i(t)` against `t` (linear axes), e.g. `x_1..x_5` of a transient.
///
/// # Errors
/// [`PlotError`] if plotters fails.
pub fn trajectory_svg(t: &[f64], x: &[Vec<f64>], entries: &[(usize, String)], title: &str) -> Result<String, PlotError> {
    let t_max = t.last().copied().unwrap_or(1.0).max(1e-9);
    let y_max = x.iter().flat_map(|xi| entries.iter().map(move |(i, _)| xi[*i])).fold(0.0f64, f64::max).max(1e-9) * 1.05;
    let mut panel = Panel::new("time t (mean job sizes)", "fraction of servers", (0.0, t_max), (0.0, y_max));
    panel.pad = false;
    render(&Style::current(), title, (1, 1), |st, areas| {
        let mut chart = chart(&areas[0], st, &panel)?;
        for (c, (i, name)) in entries.iter().enumerate() {
            let pts: Vec<(f64, f64)> = t.iter().zip(x).map(|(ti, xi)| (*ti, xi[*i])).collect();
            curve(&mut chart, Look::nth(st, c), &pts, Some(name))?;
        }
        legend(&mut chart, st, LegendPosition::LowerRight)
    })
}

/// Simulation against mean field and refined mean field for several system sizes `N`, ready to
/// plot (filled by the caller from a simulation report and a [`mfq_fixpoint::RefinedMeanField`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeComparison {
    /// The quantity compared, e.g. `mean queue length per server`.
    pub quantity: String,
    /// System sizes `N`.
    pub servers: Vec<f64>,
    /// Simulated means at those sizes.
    pub simulated: Vec<f64>,
    /// 95% confidence half widths of the simulated means.
    pub half_width: Vec<f64>,
    /// The mean-field value (independent of `N`).
    pub mean_field: f64,
    /// The refined mean field's `c` in `value + c / N`, when available.
    pub refined_c: Option<f64>,
    /// Legend label of the `mean_field` line (e.g. `mean field`, `PS pair approximation`).
    pub mean_field_label: String,
    /// Further `N`-independent approximations drawn as horizontal lines: (legend label, value).
    pub lines: Vec<(String, f64)>,
}

/// The quantity against `N` (log axis): simulation with 95% CI bars, the mean field and the
/// further approximations of `cmp.lines` as horizontal lines, and the refined mean field
/// `x* + c/N` as a curve.
///
/// # Errors
/// [`PlotError`] if plotters fails.
pub fn size_comparison_svg(cmp: &SizeComparison, title: &str) -> Result<String, PlotError> {
    let n_min = cmp.servers.iter().copied().fold(f64::INFINITY, f64::min).max(1.0);
    let n_max = cmp.servers.iter().copied().fold(1.0f64, f64::max).max(n_min * 10.0);
    let refined = |n: f64| cmp.refined_c.map(|c| cmp.mean_field + c / n);
    let mut lo = cmp.mean_field;
    let mut hi = cmp.mean_field;
    for (_, v) in &cmp.lines {
        lo = lo.min(*v);
        hi = hi.max(*v);
    }
    for (m, h) in cmp.simulated.iter().zip(&cmp.half_width) {
        lo = lo.min(m - h);
        hi = hi.max(m + h);
    }
    if let Some(r) = refined(n_min * 0.8) {
        hi = hi.max(r);
        lo = lo.min(r);
    }
    let pad = (hi - lo).max(1e-6) * 0.1;
    let (a, b) = (n_min * 0.8, n_max * 1.25);
    let mut panel = Panel::new("number of servers N", &cmp.quantity, (a, b), (lo - pad, hi + pad));
    (panel.log_x, panel.pad) = (true, false);
    render(&Style::current(), title, (1, 1), |st, areas| {
        let mut chart = chart(&areas[0], st, &panel)?;
        curve(&mut chart, Look::nth(st, 0).plain(), &[(a, cmp.mean_field), (b, cmp.mean_field)], Some(&cmp.mean_field_label))?;
        for (i, (label, v)) in cmp.lines.iter().enumerate() {
            // markers at the ends: lines of the same dash stay distinct
            curve(&mut chart, Look::nth(st, i + 3), &[(a, *v), (b, *v)], Some(label))?;
        }
        if cmp.refined_c.is_some() {
            let pts: Vec<(f64, f64)> =
                (0..=200).map(|i| a * (b / a).powf(i as f64 / 200.0)).filter_map(|n| refined(n).map(|v| (n, v))).collect();
            curve(&mut chart, Look::nth(st, 1).plain(), &pts, Some("refined mean field x* + c/N"))?;
        }
        let sim: Vec<(f64, f64)> = cmp.servers.iter().copied().zip(cmp.simulated.iter().copied()).collect();
        let look = Look::nth(st, 2);
        let with_hw: Vec<(f64, f64, f64)> = sim.iter().zip(&cmp.half_width).map(|((n, m), h)| (*n, *m, *h)).collect();
        bars(&mut chart, look, &with_hw)?;
        points(&mut chart, look, &sim, Some("simulation (95% CI)"))?;
        legend(&mut chart, st, LegendPosition::UpperRight)
    })
}

/// A quantity of a sweep point to plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepQuantity {
    /// Mean response time.
    MeanResponseTime,
    /// Mean queue length per server.
    MeanQueueLength,
    /// Probability of waiting.
    ProbWait,
    /// Throughput per server.
    Throughput,
    /// Probability that an arrival is lost (blocked).
    LossProbability,
}

impl SweepQuantity {
    /// The value at a sweep point, if solved and defined.
    pub fn of(self, p: &mfq::sweep::SweepPoint) -> Option<f64> {
        match &p.status {
            mfq::sweep::PointStatus::Solved { mean_response_time, mean_queue_length, prob_wait, throughput, loss_probability, .. } => {
                match self {
                    SweepQuantity::MeanResponseTime => *mean_response_time,
                    SweepQuantity::MeanQueueLength => *mean_queue_length,
                    SweepQuantity::ProbWait => *prob_wait,
                    SweepQuantity::Throughput => *throughput,
                    SweepQuantity::LossProbability => Some(*loss_probability),
                }
            }
            _ => None,
        }
    }

    /// Axis label.
    pub fn label(self) -> &'static str {
        match self {
            SweepQuantity::MeanResponseTime => "mean response time E[T]",
            SweepQuantity::MeanQueueLength => "mean queue length per server",
            SweepQuantity::ProbWait => "probability of waiting",
            SweepQuantity::Throughput => "throughput per server",
            SweepQuantity::LossProbability => "loss probability",
        }
    }
}

/// Labels and scales of a sweep plot.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPlotStyle {
    /// Title.
    pub title: String,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label (default: the quantity's).
    pub y_label: Option<String>,
    /// Log-scale y axis.
    pub log_y: bool,
    /// Legend label of a curve from its value (e.g. `d = 2`).
    pub curve_label: String,
    /// Legend labels by curve index, overriding `curve_label` (curves of different models,
    /// whose curve values are `0, 1, 2, ...`).
    pub curve_labels: Option<Vec<String>>,
}

/// One curve per value of the curve axis: `quantity` against the x axis. Points without a
/// value (unstable, failed, invalid) are left out and the curve is broken there; the legend
/// says which ([`omitted`]: "every curve: unstable for lambda >= 1 (not drawn)"). An x axis whose
/// values are all integers (e.g. `d`) gets integer ticks.
///
/// # Errors
/// [`PlotError`] if plotters fails or no point has a value (the message says whether the
/// solved points lack the quantity, or no point was solved).
pub fn sweep_svg(report: &mfq::sweep::SweepReport, quantity: SweepQuantity, style: &SweepPlotStyle) -> Result<String, PlotError> {
    let values: Vec<f64> = report.points.iter().filter_map(|p| quantity.of(p)).filter(|v| v.is_finite()).collect();
    if values.is_empty() {
        use mfq::sweep::PointStatus;
        let solved = report.points.iter().any(|p| matches!(p.status, PointStatus::Solved { .. }));
        let verdicts_only =
            report.points.iter().any(|p| matches!(p.status, PointStatus::Stable { .. } | PointStatus::StabilityUnknown { .. }));
        return Err(PlotError(if solved {
            format!("the model does not report {} (no solved point has it)", quantity.label())
        } else if verdicts_only {
            "the model has no queue-length model, only a stability region: the CSV's status column gives the verdict of each point".into()
        } else {
            "no point of the sweep has a value to plot (all unstable, failed or invalid)".into()
        }));
    }
    let (x0, x1) = (
        report.x_axis.values.iter().copied().fold(f64::INFINITY, f64::min),
        report.x_axis.values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let curves: Vec<Option<f64>> = match &report.curve_axis {
        Some(a) => a.values.iter().map(|v| Some(*v)).collect(),
        None => vec![None],
    };
    let y_label = style.y_label.clone().unwrap_or_else(|| quantity.label().to_string());
    let mut panel = Panel::new(&style.x_label, &y_label, (x0, x1), (lo, hi));
    panel.log_y = style.log_y && lo > 0.0;
    panel.integer_x = !report.x_axis.is_categorical() && report.x_axis.values.iter().all(|v| v.fract() == 0.0);
    let label_of = |i: usize, c: &Option<f64>| match (c, &style.curve_labels) {
        (Some(_), Some(labels)) => labels.get(i).cloned().unwrap_or_default(),
        (Some(v), None) => style.curve_label.replace("{}", &axis::tick_label(*v)),
        (None, _) => y_label.clone(),
    };
    let notes = omitted(report, &|i, c| label_of(i, c));
    render(&Style::current(), &style.title, (1, 1), |st, areas| {
        let mut chart = chart(&areas[0], st, &panel)?;
        for (i, c) in curves.iter().enumerate() {
            // runs of consecutive points with a value: the curve is broken at the others
            let mut runs: Vec<Vec<(f64, f64)>> = vec![vec![]];
            for p in report.curve(*c) {
                match quantity.of(p).filter(|v| v.is_finite()) {
                    Some(v) => runs.last_mut().expect("one run").push((p.x, v)),
                    None if runs.last().is_some_and(|r| !r.is_empty()) => runs.push(vec![]),
                    None => {}
                }
            }
            let look = Look::nth(st, i);
            let label = label_of(i, c);
            for (k, run) in runs.iter().filter(|r| !r.is_empty()).enumerate() {
                curve(&mut chart, look, run, (k == 0).then_some(label.as_str()))?;
            }
        }
        for n in &notes {
            frame::note(&mut chart, n)?;
        }
        legend(&mut chart, st, LegendPosition::UpperLeft)
    })
}

/// Which points of a sweep have no value and why, one line per status (`unstable`, `failed`,
/// `invalid`, `stable` and `stability unknown` of a model with only a stability region): where on the x axis, for every curve when the curves agree ("every curve:
/// unstable for lambda >= 1 (not drawn)"), else per curve, named by `label_of(index, value)`
/// ("lambda = 0.5: unstable for eps >= 0.675"); at most six lines. How many points each line
/// covers is in the CSV's status column.
pub fn omitted(report: &mfq::sweep::SweepReport, label_of: &dyn Fn(usize, &Option<f64>) -> String) -> Vec<String> {
    use mfq::sweep::PointStatus;
    let curves: Vec<Option<f64>> = match &report.curve_axis {
        Some(a) => a.values.iter().map(|v| Some(*v)).collect(),
        None => vec![None],
    };
    let mut notes = Vec::new();
    for (what, is) in [
        ("unstable", (|s: &PointStatus| matches!(s, PointStatus::Unstable { .. })) as fn(&PointStatus) -> bool),
        ("failed", |s| matches!(s, PointStatus::Failed { .. })),
        ("invalid", |s| matches!(s, PointStatus::Invalid { .. })),
        ("stable, no queue-length model,", |s| matches!(s, PointStatus::Stable { .. })),
        ("stability unknown", |s| matches!(s, PointStatus::StabilityUnknown { .. })),
    ] {
        let per: Vec<Vec<f64>> = curves.iter().map(|c| report.curve(*c).filter(|p| is(&p.status)).map(|p| p.x).collect()).collect();
        if per.iter().all(Vec::is_empty) {
            continue;
        }
        if per.iter().all(|xs| *xs == per[0]) {
            let each = if curves.len() > 1 { "every curve: " } else { "" };
            notes.push(format!("{each}{what} for {} (not drawn)", where_text(&report.x_axis, &per[0])));
        } else {
            for (i, (c, xs)) in curves.iter().zip(&per).enumerate().filter(|(_, (_, xs))| !xs.is_empty()) {
                notes.push(format!("{}: {what} for {}", label_of(i, c), where_text(&report.x_axis, xs)));
            }
        }
    }
    if notes.len() > 6 {
        let more = notes.len() - 5;
        notes.truncate(5);
        notes.push(format!("... {more} more lines: see the CSV's status column"));
    }
    notes
}

/// Where the values `xs` of `axis` lie: `NAME >= a` (every axis value from `a` up),
/// `NAME <= b`, `a <= NAME <= b` (every value in between), else `NAME = a, b, c`.
fn where_text(axis: &mfq::sweep::Axis, xs: &[f64]) -> String {
    let name = &axis.name;
    let (a, b) = (xs.iter().copied().fold(f64::INFINITY, f64::min), xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let within = |lo: f64, hi: f64| axis.values.iter().filter(|v| (lo..=hi).contains(*v)).count() == xs.len();
    let (min, max) =
        (axis.values.iter().copied().fold(f64::INFINITY, f64::min), axis.values.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let t = |v: f64| axis.text_of(v);
    if xs.len() == 1 {
        format!("{name} = {}", t(a))
    } else if b == max && within(a, max) {
        format!("{name} >= {}", t(a))
    } else if a == min && within(min, b) {
        format!("{name} <= {}", t(b))
    } else if within(a, b) {
        format!("{} <= {name} <= {}", t(a), t(b))
    } else {
        let mut sorted = xs.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mut list: Vec<String> = sorted.iter().take(5).map(|v| t(*v)).collect();
        if sorted.len() > 5 {
            list.push("...".into());
        }
        format!("{name} = {}", list.join(", "))
    }
}
