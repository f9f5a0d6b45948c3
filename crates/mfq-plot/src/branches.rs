//! The bifurcation diagram of a [`BranchReport`]: the summary coordinate of every equilibrium
//! against the swept parameter, stable parts solid, unstable (and degenerate) parts dashed, fold
//! points as black circles, branch points as squares, Hopf points and other eigenvalue
//! crossings as triangles.

use crate::frame::{chart, curve, key, legend, points, render, Chart, Panel};
use crate::style::{LegendPosition, Style};
use crate::{Dash, Look, Marker, PlotError};
use mfq_fixpoint::branches::{BranchReport, SpecialKind};
use mfq_fixpoint::EquilibriumKind;
use plotters::style::BLACK;

/// The pieces of one branch with one stability: `(stable, points)`, consecutive pieces sharing
/// their end point so that the drawn curve is unbroken.
fn pieces(points: &[(f64, f64, bool)]) -> Vec<(bool, Vec<(f64, f64)>)> {
    let mut out: Vec<(bool, Vec<(f64, f64)>)> = Vec::new();
    for &(x, y, stable) in points {
        match out.last_mut() {
            Some((s, v)) if *s == stable => v.push((x, y)),
            Some((_, v)) => {
                let last = *v.last().expect("a piece has points");
                out.push((stable, vec![last, (x, y)]));
            }
            None => out.push((stable, vec![(x, y)])),
        }
    }
    out
}

/// The bifurcation diagram: for each branch (its own colour and marker) its summary coordinate
/// against the parameter, solid where the equilibrium is stable (the shared rule of
/// `mfq_fixpoint::classify`), dashed elsewhere; the located special points marked and named in
/// the legend. The y axis is the report's summary coordinate (`x` for one-entry models).
///
/// # Errors
/// [`PlotError`] when there is nothing to draw (no branch points) or plotters fails.
pub fn bifurcation_svg(report: &BranchReport, title: &str) -> Result<String, PlotError> {
    let all: Vec<(f64, f64)> = report.branches.iter().flat_map(|b| b.points.iter().map(|p| (p.parameter, p.summary))).collect();
    if all.is_empty() || all.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return Err(PlotError("no branch points to draw (or a point that is not finite)".into()));
    }
    let (lo, hi) = (report.start.min(report.end), report.start.max(report.end));
    let (ymin, ymax) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (_, y)| (a.min(*y), b.max(*y)));
    let pad = ((ymax - ymin) * 0.06).max(1e-3);
    let x_label = report.parameter.replace(',', " = ");
    let mut panel = Panel::new(&x_label, &report.summary_name, (lo, hi), (ymin - pad, ymax + pad));
    panel.pad = false;
    render(&Style::current(), title, (1, 1), |st, areas| {
        let mut chart = chart(&areas[0], st, &panel)?;
        for (i, b) in report.branches.iter().enumerate() {
            // stability is shown by the dash (solid: stable), the branch by colour and marker
            let look = Look::nth(st, i);
            let pts: Vec<(f64, f64, bool)> = b.points.iter().map(|p| (p.parameter, p.summary, p.kind == EquilibriumKind::Stable)).collect();
            for (stable, piece) in pieces(&pts) {
                curve(&mut chart, look.dashed(if stable { Dash::Solid } else { Dash::Dashed }), &piece, None)?;
            }
            if report.branches.len() > 1 {
                key(&mut chart, look.dashed(Dash::Solid), &format!("branch {}", i + 1), true)?;
            }
        }
        let black = Look::nth(st, 0).colored(BLACK).plain();
        key(&mut chart, black.dashed(Dash::Solid), "stable", true)?;
        key(&mut chart, black.dashed(Dash::Dashed), "unstable", true)?;
        draw_special(&mut chart, st, report)?;
        legend(&mut chart, st, LegendPosition::LowerRight)
    })
}

/// The special points of every branch, one black marker per kind (a point found on two
/// branches, e.g. a pitchfork, is drawn twice at the same place), each kind once in the legend.
fn draw_special<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>, st: &Style, report: &BranchReport) -> Result<(), PlotError> {
    let at = |kind: SpecialKind| -> Vec<(f64, f64)> {
        report.branches.iter().flat_map(|b| &b.special).filter(|s| s.kind == kind).map(|s| (s.parameter, s.summary)).collect()
    };
    let mut crossings = at(SpecialKind::Hopf);
    crossings.extend(at(SpecialKind::EigenvalueCrossing));
    let base = Look::nth(st, 0).colored(BLACK);
    let big = Look { radius: (base.radius * 3 / 2).max(5), ..base };
    for (pts, marker, name) in [
        (at(SpecialKind::Fold), Marker::Circle, "fold"),
        (at(SpecialKind::BranchPoint), Marker::Square, "branch point"),
        (crossings, Marker::TriangleUp, "Hopf point / eigenvalue crossing"),
    ] {
        if !pts.is_empty() {
            points(chart, Look { marker: Some(marker), ..big }, &pts, Some(name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_share_their_ends() {
        let p = pieces(&[(0.0, 0.0, true), (1.0, 1.0, true), (2.0, 2.0, false), (3.0, 3.0, true)]);
        assert_eq!(
            p,
            vec![(true, vec![(0.0, 0.0), (1.0, 1.0)]), (false, vec![(1.0, 1.0), (2.0, 2.0)]), (true, vec![(2.0, 2.0), (3.0, 3.0)])]
        );
    }
}
