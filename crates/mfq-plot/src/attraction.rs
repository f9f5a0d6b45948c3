//! Plots of an [`AttractionReport`]: convergence of every run and where each start went.
//! They only read the report (never integrate or solve).

use crate::frame::{chart, curve, key, legend, points, render, Chart, Panel};
use crate::style::{LegendPosition, Style};
use crate::{Dash, Look, PlotError};
use mfq_fixpoint::attraction::{AttractionReport, EquilibriumKind, StartRun, LOG10_FLOOR};
use plotters::style::{RGBColor, BLACK};

/// Grey of runs that did not settle.
const UNSETTLED: RGBColor = RGBColor(150, 150, 150);

/// The checker's plots carry long legend entries: full width of a two-column paper (17 cm)
/// unless the style sets the size.
fn wide(st: &Style) -> Style {
    Style { width_cm: Some(st.width_cm.unwrap_or(17.0)), height_cm: Some(st.height_cm.unwrap_or(9.0)), ..st.clone() }
}

/// The look of the runs that reached equilibrium `i` (palette colours from the fifth on, the
/// first four being the extremal runs'), or of unsettled runs (grey).
fn group_look(st: &Style, r: &StartRun, n_eq: usize) -> Look {
    let (i, color) = match (r.settled, r.equilibrium) {
        (true, Some(i)) => (i, None),
        _ => (n_eq, Some(UNSETTLED)),
    };
    let look = Look::nth(st, 4 + i).dashed(Dash::Solid);
    let look = Look { width: (look.width / 2).max(1), ..look };
    color.map_or(look, |c| look.colored(c))
}

/// A run: its line (without markers), a marker at its end, and its legend entry if `label`.
fn run_line<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, look: Look, pts: &[(f64, f64)], label: Option<&str>) -> Result<(), PlotError> {
    curve(chart, look.plain(), pts, None)?;
    if let (Some(last), Some(_)) = (pts.last(), look.marker) {
        points(chart, look, std::slice::from_ref(last), None)?;
    }
    if let Some(l) = label {
        key(chart, look, l, true)?;
    }
    Ok(())
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
    let title = format!("{}: distance to the equilibrium reached ({})", report.model, report.verdict.name());
    let mut panel = Panel::new("time t (model time units)", "max_i |x_i(t) - x_lim,i|", (0.0, t_max), (10f64.powf(y_lo), 10f64.powf(y_hi)));
    (panel.log_y, panel.pad) = (true, false);
    let n_eq = report.equilibria.len();
    let st = wide(&Style::current());
    render(&st, &title, (1, 1), |st, areas| {
        let mut chart = chart(&areas[0], st, &panel)?;
        let line = |r: &StartRun| -> Vec<(f64, f64)> { r.t.iter().zip(&r.log10_distance).map(|(t, d)| (*t, 10f64.powf(*d))).collect() };
        // random starts, one legend entry per group
        let mut labelled: Vec<String> = Vec::new();
        for r in report.runs.iter().filter(|r| !r.extremal) {
            let label = group_label(report, r);
            let new = !labelled.contains(&label);
            if new {
                labelled.push(label.clone());
            }
            run_line(&mut chart, group_look(st, r, n_eq), &line(r), new.then_some(label.as_str()))?;
        }
        // extremal starts, thick, with their end marked
        for (k, r) in report.runs.iter().filter(|r| r.extremal).enumerate() {
            let to = match (r.settled, r.equilibrium) {
                (true, Some(i)) => format!("equilibrium #{i}"),
                _ => "not settled".to_string(),
            };
            let look = Look::nth(st, k % 4);
            let look = Look { width: look.width + 1, ..look };
            run_line(&mut chart, look, &line(r), Some(&format!("extremal start '{}' -> {to}", r.label)))?;
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
                let pts: Vec<(f64, f64)> = (0..=200)
                    .map(|j| t0 + (t_max - t0) * j as f64 / 200.0)
                    .map(|t| (t, d0 + slope * (t - t0)))
                    .filter(|(_, d)| *d >= y_lo && *d <= y_hi)
                    .map(|(t, d)| (t, 10f64.powf(d)))
                    .collect();
                if pts.len() >= 2 {
                    let look = Look::nth(st, 0).colored(BLACK).plain().dashed(Dash::Dashed);
                    let label = format!("predicted slope: spectral abscissa {alpha:.4e} (decay rate {:.4e})", -alpha);
                    curve(&mut chart, look, &pts, Some(&label))?;
                }
            }
        }
        legend(&mut chart, st, LegendPosition::UpperRight)
    })
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

/// The horizontal line of each equilibrium from `x0` to `x1` (solid: stable, dashed: not),
/// with its own marker at both ends, named in the legend.
fn equilibrium_lines<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b>,
    st: &Style,
    report: &AttractionReport,
    x0: f64,
    x1: f64,
) -> Result<(), PlotError> {
    for (i, e) in report.equilibria.iter().enumerate() {
        let dash = if e.kind == EquilibriumKind::Stable { Dash::Solid } else { Dash::Dashed };
        let look = Look::nth(st, 4 + i).dashed(dash);
        curve(chart, look, &[(x0, e.summary), (x1, e.summary)], Some(&eq_legend(report, i)))?;
    }
    Ok(())
}

fn basins_1d(report: &AttractionReport) -> Result<String, PlotError> {
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
    let title = format!("{}: trajectories and equilibria ({}{cut})", report.model, report.verdict.name());
    let mut panel = Panel::new("time t (model time units)", &report.summary_name, (0.0, t_max), (lo - pad, hi + pad));
    panel.pad = false;
    let n_eq = report.equilibria.len();
    let st = wide(&Style::current());
    render(&st, &title, (1, 1), |st, areas| {
        let mut chart = chart(&areas[0], st, &panel)?;
        let mut unsettled_labelled = false;
        for r in &report.runs {
            let look = group_look(st, r, n_eq).plain();
            let look = if r.extremal { Look { width: look.width * 3, ..look } } else { look };
            let pts: Vec<(f64, f64)> = r.t.iter().copied().zip(r.summary.iter().copied()).filter(|(t, _)| *t <= t_max).collect();
            curve(&mut chart, look, &pts, None)?;
            if !r.settled && !unsettled_labelled {
                unsettled_labelled = true;
                key(&mut chart, look, &format!("did not settle by t = {}", report.options.time_limit), true)?;
            }
        }
        equilibrium_lines(&mut chart, st, report, 0.0, t_max)?;
        legend(&mut chart, st, LegendPosition::UpperRight)
    })
}

fn basins_scatter(report: &AttractionReport) -> Result<String, PlotError> {
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
    let title = format!("{}: where each start went ({})", report.model, report.verdict.name());
    let (xl, yl) = (format!("{} at t = 0", report.summary_name), format!("{} at the end", report.summary_name));
    let mut panel = Panel::new(&xl, &yl, (lo - pad, hi + pad), (lo - pad, hi + pad));
    panel.pad = false;
    let n_eq = report.equilibria.len();
    let st = wide(&Style::current());
    render(&st, &title, (1, 1), |st, areas| {
        let mut chart = chart(&areas[0], st, &panel)?;
        // every equilibrium as a horizontal line at its summary value
        equilibrium_lines(&mut chart, st, report, lo - pad, hi + pad)?;
        let mut unsettled_labelled = false;
        let mut extremal_labelled = false;
        for r in &report.runs {
            let p = [(r.summary_start, r.summary_end)];
            let look = group_look(st, r, n_eq);
            if r.extremal {
                let look = Look { marker: Some(crate::Marker::TriangleUp), radius: look.radius * 3 / 2, ..look };
                points(&mut chart, look, &p, None)?;
                if !extremal_labelled {
                    extremal_labelled = true;
                    key(&mut chart, look.colored(BLACK), "extremal starts (triangles)", false)?;
                }
            } else if r.settled {
                points(&mut chart, look, &p, None)?;
            } else {
                let look = Look { marker: Some(crate::Marker::Cross), ..look };
                points(&mut chart, look, &p, None)?;
                if !unsettled_labelled {
                    unsettled_labelled = true;
                    key(&mut chart, look, &format!("did not settle by t = {} (crosses)", report.options.time_limit), false)?;
                }
            }
        }
        legend(&mut chart, st, LegendPosition::LowerRight)
    })
}
