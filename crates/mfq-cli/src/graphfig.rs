//! The heavy-traffic figure of redundancy on compatibility graphs (figure kind `heavy-traffic`
//! in `models/figures/`): for each model file (kind `redundancy-graph`), the scaled total number
//! of jobs `(1 - rho) E[N]` (the model's `scaled_jobs`, from the exact product form) against the
//! distance to capacity `1 - rho`, the file's `rho` set to each point in turn. Cardinaels, Borst,
//! van Leeuwaarden (Oper. Res. 72(4), 2024) show that under local stability the graph does not
//! matter in the limit `rho -> 1` (docs/models/redundancy-graph.md).

use crate::Failure;
use mfq_fixpoint::{solve_spec, FixedPointOptions};
use mfq_model::ModelFile;
use mfq_plot::xy::{xy_svg, Draw, XySeries, XyStyle};
use std::fmt::Write as _;

/// What a `heavy-traffic` figure file gives.
pub(crate) struct HeavyTraffic<'a> {
    pub title: &'a str,
    /// (legend label, model file) pairs.
    pub models: &'a [(String, String)],
    /// The values of `1 - rho`.
    pub gaps: &'a [f64],
    pub x_label: &'a str,
    pub y_label: &'a str,
}

/// The value of extra `name` of the fixed point of `text` with `set` applied.
fn extras_at(text: &str, model: &str, set: &[String], names: [&str; 2]) -> Result<[f64; 2], Failure> {
    let file = ModelFile::parse(text, set).map_err(|e| Failure::input(format!("{model}: {e}")))?;
    let fp =
        solve_spec(&file.model, &file.truncation, &FixedPointOptions::default()).map_err(|e| Failure::input(format!("{model}: {e}")))?;
    let get = |name: &str| {
        fp.observables.extras.iter().find(|(n, _)| n == name).map(|(_, v)| *v).ok_or_else(|| {
            Failure::input(format!("{model}: the model has no `{name}` (a heavy-traffic figure takes redundancy-graph models)"))
        })
    };
    Ok([get(names[0])?, get(names[1])?])
}

/// The SVG and the CSV (`model,rho,one_minus_rho,mean_jobs,scaled_jobs`) of the figure.
pub(crate) fn render(fig: &HeavyTraffic, read: &dyn Fn(&str) -> Result<String, Failure>) -> Result<(String, String), Failure> {
    if fig.gaps.is_empty() || fig.gaps.iter().any(|g| !(*g > 0.0 && *g < 1.0)) {
        return Err(Failure::input(format!("{}: gaps: allowed: a non-empty list of values 1 - rho in (0, 1)", fig.title)));
    }
    let mut csv = String::from("model,rho,one_minus_rho,mean_jobs,scaled_jobs\n");
    let mut curves = Vec::new();
    for (i, (label, model)) in fig.models.iter().enumerate() {
        let text = read(model)?;
        let mut points: Vec<(f64, f64)> = Vec::new();
        for &gap in fig.gaps {
            let rho = 1.0 - gap;
            let [jobs, scaled] = extras_at(&text, model, &[format!("rho={rho}")], ["mean_jobs", "scaled_jobs"])?;
            let _ = writeln!(csv, "{},{rho},{gap},{jobs},{scaled}", label.replace([',', '"'], " "));
            points.push((gap, scaled));
        }
        let (x, y) = points.into_iter().unzip();
        curves.push(XySeries { label: label.clone(), x, y, half_width: vec![], draw: Draw::Line, color: i });
    }
    // legend in the lower left, where curves that converge as 1 - rho -> 0 leave room
    let style = XyStyle {
        title: fig.title.to_string(),
        x_label: fig.x_label.to_string(),
        y_label: fig.y_label.to_string(),
        log_x: true,
        log_y: false,
        integer_x: false,
        legend_lower_left: true,
    };
    let svg = xy_svg(&curves, &style).map_err(|e| Failure::io(format!("{}: {e}", fig.title)))?;
    Ok((svg, csv))
}
