//! Plots of an [`AttractionReport`]: convergence of every run and where each start went.
//! They only read the report (never integrate or solve).

use crate::{draw_legend, err, PlotError};
use mfq_fixpoint::attraction::{AttractionReport, EquilibriumKind, StartRun, LOG10_FLOOR};
use plotters::prelude::*;

const SIZE: (u32, u32) = (900, 600);
/// Colour of runs that did not settle.
const UNSETTLED: RGBColor = RGBColor(150, 150, 150);
/// Colours of the extremal runs (drawn thick, on top).
const EXTREMAL: [RGBColor; 4] = [RGBColor(200, 30, 30), RGBColor(30, 60, 200), RGBColor(20, 140, 60), RGBColor(160, 60, 160)];

fn eq_color(i: usize) -> RGBColor {
    // skip the reds and blues used by the extremal runs
    let c = Palette99::pick(i + 3).to_rgba();
    RGBColor(c.0, c.1, c.2)
}

fn run_color(r: &StartRun) -> RGBColor {
    match (r.settled, r.equilibrium) {
        (true, Some(i)) => eq_color(i),
        _ => UNSETTLED,
    }
}

fn kind_name(k: EquilibriumKind) -> &'static str {
    match k {
        EquilibriumKind::Stable => "stable",
        EquilibriumKind::Unstable => "unstable",
        EquilibriumKind::Degenerate => "degenerate",
        EquilibriumKind::Unknown => "stability unknown",
    }
}

fn group_label(report: &AttractionReport, r: &StartRun) -> String {
    match (r.settled, r.equilibrium) {
        (true, Some(i)) => {
            let e = &report.equilibria[i];
            format!("random starts -> equilibrium #{i} ({} of {})", e.starts, report.options.starts)
        }
        _ => format!("random starts that did not settle by t = {}", report.options.time_limit),
    }
}

/// `log10 ||x(t) - x_lim||_inf` against `t` for every run of `report`: random starts thin and
/// coloured by the equilibrium they reached (grey: not settled), extremal starts thick and
/// labelled, with a dashed line of the slope `alpha / ln 10` predicted by the spectral
/// abscissa `alpha` at `x*`, anchored on the first extremal run that reached `x*` where it
/// first comes within `1e-4`. Distances are to each run's own limit (to `x*` for runs that did
/// not settle), see [`StartRun::log10_distance`].
///
/// # Errors
/// [`PlotError`] if plotters fails.
pub fn convergence_svg(report: &AttractionReport) -> Result<String, PlotError> {
    let mut out = String::new();
    let t_max = report.runs.iter().filter_map(|r| r.t.last()).fold(1e-3f64, |m, t| m.max(*t));
    let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for d in report.runs.iter().flat_map(|r| r.log10_distance.iter()) {
        y_lo = y_lo.min(*d);
        y_hi = y_hi.max(*d);
    }
    if !y_lo.is_finite() {
        (y_lo, y_hi) = (LOG10_FLOOR, 0.0);
    }
    let (y_lo, y_hi) = ((y_lo - 0.5).floor().max(LOG10_FLOOR), (y_hi + 0.5).ceil().max(y_lo + 1.0));
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let caption = format!("{}: distance to the equilibrium reached ({})", report.model, report.verdict.name());
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(0f64..t_max, y_lo..y_hi)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time t (model time units)")
            .y_desc("max_i |x_i(t) - x_lim,i|  (log scale)")
            .y_label_formatter(&|v| format!("1e{v:.0}"))
            .draw()
            .map_err(err)?;
        // random starts, one legend entry per group
        let mut labelled: Vec<String> = Vec::new();
        for r in report.runs.iter().filter(|r| !r.extremal) {
            let color = run_color(r);
            let pts: Vec<(f64, f64)> = r.t.iter().copied().zip(r.log10_distance.iter().copied()).collect();
            let series = chart.draw_series(LineSeries::new(pts, color.mix(0.6).stroke_width(1))).map_err(err)?;
            let label = group_label(report, r);
            if !labelled.contains(&label) {
                labelled.push(label.clone());
                series.label(label).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            }
        }
        // extremal starts, thick, with their end marked
        for (k, r) in report.runs.iter().filter(|r| r.extremal).enumerate() {
            let color = EXTREMAL[k % EXTREMAL.len()];
            let pts: Vec<(f64, f64)> = r.t.iter().copied().zip(r.log10_distance.iter().copied()).collect();
            let to = match (r.settled, r.equilibrium) {
                (true, Some(i)) => format!("equilibrium #{i}"),
                _ => "not settled".to_string(),
            };
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(3)))
                .map_err(err)?
                .label(format!("extremal start '{}' -> {to}", r.label))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(3)));
            if let Some(last) = pts.last() {
                chart.draw_series(std::iter::once(Circle::new(*last, 5, color.filled()))).map_err(err)?;
            }
        }
        // predicted slope at x*
        if let (Some(local), Some(reference)) = (&report.local, report.reference) {
            let alpha = local.spectral_abscissa;
            let anchor = report
                .runs
                .iter()
                .filter(|r| r.extremal && r.settled && r.equilibrium == Some(reference))
                .chain(report.runs.iter().filter(|r| r.settled && r.equilibrium == Some(reference)))
                .find_map(|r| r.t.iter().zip(&r.log10_distance).find(|(_, d)| **d <= -4.0).map(|(t, d)| (*t, *d)));
            if let (true, Some((t0, d0))) = (alpha < 0.0, anchor) {
                let slope = alpha / std::f64::consts::LN_10;
                let line: Vec<(f64, f64)> = (0..=200)
                    .map(|j| t0 + (t_max - t0) * j as f64 / 200.0)
                    .map(|t| (t, d0 + slope * (t - t0)))
                    .filter(|(_, d)| *d >= y_lo && *d <= y_hi)
                    .collect();
                if line.len() >= 2 {
                    chart
                        .draw_series(DashedLineSeries::new(line, 10, 6, BLACK.stroke_width(2)))
                        .map_err(err)?
                        .label(format!("predicted slope: spectral abscissa {alpha:.4e} (decay rate {:.4e})", -alpha))
                        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
                }
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// Where each start went. One-dimensional models: `x(t)` against `t` for every run,
/// coloured by the equilibrium reached (grey: not settled), with every equilibrium drawn as a
/// horizontal line (solid: stable, dashed: otherwise); when runs that did not settle go on
/// much longer than the settled ones, the time axis is cut at 5 times the last settling time
/// (the caption says so). Larger models: the summary coordinate
/// at `t = 0` against its value at the end, coloured the same way (extremal starts as
/// triangles, unsettled runs as crosses), with each equilibrium's summary value as a
/// horizontal line. The legend gives each equilibrium's value, stability and share of starts.
///
/// # Errors
/// [`PlotError`] if plotters fails.
pub fn basins_svg(report: &AttractionReport) -> Result<String, PlotError> {
    if report.dim == 1 {
        basins_1d(report)
    } else {
        basins_scatter(report)
    }
}

fn eq_legend(report: &AttractionReport, i: usize) -> String {
    let e = &report.equilibria[i];
    format!(
        "equilibrium #{i}{}: {} = {:.6}, {}, {} of {} starts",
        if report.reference == Some(i) { " (x*)" } else { "" },
        report.summary_name,
        e.summary,
        kind_name(e.kind),
        e.starts,
        report.options.starts
    )
}

fn basins_1d(report: &AttractionReport) -> Result<String, PlotError> {
    let mut out = String::new();
    let t_all = report.runs.iter().filter_map(|r| r.t.last()).fold(1e-3f64, |m, t| m.max(*t));
    // runs that do not settle (degenerate equilibria) would squeeze the settled ones into
    // the left edge: cut the time axis at 5x the last settling time, and say so
    let t_settled = report.runs.iter().filter(|r| r.settled).map(|r| r.t_reached).fold(0.0f64, f64::max);
    let t_max = if t_settled > 0.0 && 5.0 * t_settled < t_all { 5.0 * t_settled } else { t_all };
    let cut = if t_max < t_all { format!(", t axis cut at {t_max:.3}") } else { String::new() };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for v in report.runs.iter().flat_map(|r| r.summary.iter()).chain(report.equilibria.iter().map(|e| &e.summary)) {
        lo = lo.min(*v);
        hi = hi.max(*v);
    }
    let pad = 0.03 * (hi - lo).max(1e-9);
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{}: trajectories and equilibria ({}{cut})", report.model, report.verdict.name()), ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..t_max, (lo - pad)..(hi + pad))
            .map_err(err)?;
        chart.configure_mesh().x_desc("time t (model time units)").y_desc(report.summary_name.as_str()).draw().map_err(err)?;
        let mut unsettled_labelled = false;
        for r in &report.runs {
            let color = run_color(r);
            let pts: Vec<(f64, f64)> = r.t.iter().copied().zip(r.summary.iter().copied()).filter(|(t, _)| *t <= t_max).collect();
            let width = if r.extremal { 3 } else { 1 };
            let series = chart.draw_series(LineSeries::new(pts, color.stroke_width(width))).map_err(err)?;
            if !r.settled && !unsettled_labelled {
                unsettled_labelled = true;
                series
                    .label(format!("did not settle by t = {}", report.options.time_limit))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            }
        }
        for (i, e) in report.equilibria.iter().enumerate() {
            let color = eq_color(i);
            let line = vec![(0.0, e.summary), (t_max, e.summary)];
            let series = if e.kind == EquilibriumKind::Stable {
                chart.draw_series(LineSeries::new(line, color.stroke_width(2))).map_err(err)?
            } else {
                chart.draw_series(DashedLineSeries::new(line, 10, 6, color.stroke_width(2))).map_err(err)?
            };
            series.label(eq_legend(report, i)).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

fn basins_scatter(report: &AttractionReport) -> Result<String, PlotError> {
    let mut out = String::new();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in &report.runs {
        for v in [r.summary_start, r.summary_end] {
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    let pad = 0.05 * (hi - lo).max(1e-9);
    let range = (lo - pad)..(hi + pad);
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{}: where each start went ({})", report.model, report.verdict.name()), ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(range.clone(), range)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(format!("{} at t = 0", report.summary_name))
            .y_desc(format!("{} at the end", report.summary_name))
            .draw()
            .map_err(err)?;
        // every equilibrium as a horizontal line at its summary value
        let (x0, x1) = (lo - pad, hi + pad);
        for (i, e) in report.equilibria.iter().enumerate() {
            let color = eq_color(i);
            let line = vec![(x0, e.summary), (x1, e.summary)];
            let series = if e.kind == EquilibriumKind::Stable {
                chart.draw_series(LineSeries::new(line, color.stroke_width(1))).map_err(err)?
            } else {
                chart.draw_series(DashedLineSeries::new(line, 10, 6, color.stroke_width(1))).map_err(err)?
            };
            series.label(eq_legend(report, i)).legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled()));
        }
        let mut unsettled_labelled = false;
        for r in &report.runs {
            let color = run_color(r);
            let p = (r.summary_start, r.summary_end);
            if r.extremal {
                chart.draw_series(std::iter::once(TriangleMarker::new(p, 9, color.filled()))).map_err(err)?;
            } else if r.settled {
                chart.draw_series(std::iter::once(Circle::new(p, 5, color.filled()))).map_err(err)?;
            } else {
                let series = chart.draw_series(std::iter::once(Cross::new(p, 6, color.stroke_width(2)))).map_err(err)?;
                if !unsettled_labelled {
                    unsettled_labelled = true;
                    series
                        .label(format!("did not settle by t = {} (crosses)", report.options.time_limit))
                        .legend(move |(x, y)| Cross::new((x + 10, y), 5, color.stroke_width(2)));
                }
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}
