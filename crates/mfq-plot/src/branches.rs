//! The bifurcation diagram of a [`BranchReport`]: the summary coordinate of every equilibrium
//! against the swept parameter, stable parts solid, unstable (and degenerate) parts dashed, fold
//! points as filled circles, branch points as squares, Hopf points and other eigenvalue
//! crossings as triangles.

use crate::{draw_legend, err, plain_label, series_color, PlotError};
use mfq_fixpoint::branches::{BranchReport, SpecialKind};
use mfq_fixpoint::EquilibriumKind;
use plotters::prelude::*;

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

/// The bifurcation diagram: for each branch (one colour each) its summary coordinate against
/// the parameter, solid where the equilibrium is stable (the shared rule of
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
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (800, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(lo..hi, (ymin - pad)..(ymax + pad))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(report.parameter.replace(',', " = "))
            .y_desc(report.summary_name.as_str())
            .x_label_formatter(&plain_label)
            .y_label_formatter(&plain_label)
            .draw()
            .map_err(err)?;
        let (mut solid_labelled, mut dashed_labelled) = (false, false);
        for (i, b) in report.branches.iter().enumerate() {
            let color = series_color(i);
            let pts: Vec<(f64, f64, bool)> = b.points.iter().map(|p| (p.parameter, p.summary, p.kind == EquilibriumKind::Stable)).collect();
            for (stable, piece) in pieces(&pts) {
                if stable {
                    let s = chart.draw_series(LineSeries::new(piece, color.stroke_width(3))).map_err(err)?;
                    if !solid_labelled {
                        s.label("stable").legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK.stroke_width(3)));
                        solid_labelled = true;
                    }
                } else {
                    let s = chart.draw_series(DashedLineSeries::new(piece, 9, 6, color.stroke_width(2))).map_err(err)?;
                    if !dashed_labelled {
                        s.label("unstable").legend(|(x, y)| {
                            EmptyElement::at((x, y))
                                + PathElement::new(vec![(0, 0), (9, 0)], BLACK.stroke_width(2))
                                + PathElement::new(vec![(15, 0), (24, 0)], BLACK.stroke_width(2))
                        });
                        dashed_labelled = true;
                    }
                }
            }
        }
        draw_special(&mut chart, report)?;
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// The special points of every branch, one marker per kind (a point found on two branches,
/// e.g. a pitchfork, is drawn twice at the same place), each kind once in the legend.
fn draw_special(
    chart: &mut ChartContext<
        '_,
        SVGBackend<'_>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    report: &BranchReport,
) -> Result<(), PlotError> {
    let at = |kind: SpecialKind| -> Vec<(f64, f64)> {
        report.branches.iter().flat_map(|b| &b.special).filter(|s| s.kind == kind).map(|s| (s.parameter, s.summary)).collect()
    };
    let folds = at(SpecialKind::Fold);
    if !folds.is_empty() {
        chart
            .draw_series(folds.into_iter().map(|c| Circle::new(c, 6, BLACK.filled())))
            .map_err(err)?
            .label("fold")
            .legend(|(x, y)| Circle::new((x + 12, y), 5, BLACK.filled()));
    }
    let bps = at(SpecialKind::BranchPoint);
    if !bps.is_empty() {
        chart
            .draw_series(bps.into_iter().map(|c| EmptyElement::at(c) + Rectangle::new([(-6, -6), (6, 6)], BLACK.filled())))
            .map_err(err)?
            .label("branch point")
            .legend(|(x, y)| Rectangle::new([(x + 7, y - 5), (x + 17, y + 5)], BLACK.filled()));
    }
    let mut crossings = at(SpecialKind::Hopf);
    crossings.extend(at(SpecialKind::EigenvalueCrossing));
    if !crossings.is_empty() {
        chart
            .draw_series(crossings.into_iter().map(|c| TriangleMarker::new(c, 7, BLACK.filled())))
            .map_err(err)?
            .label("Hopf point / eigenvalue crossing")
            .legend(|(x, y)| TriangleMarker::new((x + 12, y), 6, BLACK.filled()));
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
