//! The figure kind `simulation-sweep` (`models/figures/*.toml`): simulated values with their 95%
//! confidence intervals against one parameter, one curve per (model file, settings), in panels.
//! Any kind that `mfq simulate` runs can be drawn; unstable points (the kind's stability
//! condition) are left out of the plot and listed in the CSV.

use crate::output::write_atomic;
use crate::Failure;
use mfq::simsweep::{simulation_sweep, SimPointStatus};
use mfq::sweep::Axis;
use mfq_plot::simsweep::{simulation_sweep_svg, SimCurve, SimPanel, SimSweepStyle};
use mfq_sim::SimOptions;
use serde::Deserialize;
use std::fmt::Write;
use std::path::Path;

/// One curve of a panel: a model file with `NAME=VALUE` settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveSpec {
    /// Legend label.
    label: String,
    /// Model file, relative to the repository root.
    model: String,
    /// `NAME=VALUE` settings of this curve.
    #[serde(default)]
    set: Vec<String>,
}

/// One panel: a caption and its curves.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PanelSpec {
    title: String,
    curves: Vec<CurveSpec>,
}

/// A `simulation-sweep` figure file (after its `kind`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSweepFigure {
    pub title: String,
    pub reproduces: String,
    pub description: String,
    /// The swept parameter, `NAME=a:b:n` or `NAME=v1,v2,...`.
    x: String,
    /// The quantity drawn: `mean_response_time`, `mean_queue_length`, `throughput` or an extra.
    #[serde(default = "default_y")]
    y: String,
    x_label: String,
    y_label: String,
    #[serde(default)]
    log_y: bool,
    /// Points whose mean is above are not drawn (listed in the CSV as `above-y-max`).
    #[serde(default)]
    y_max: Option<f64>,
    /// Servers `N` for the kinds whose size is the simulator's (default 1000).
    #[serde(default)]
    servers: Option<usize>,
    time: f64,
    warmup: f64,
    #[serde(default = "default_replications")]
    replications: usize,
    #[serde(default = "default_batches")]
    batches: usize,
    #[serde(default = "default_seed")]
    seed: u64,
    panels: Vec<PanelSpec>,
}

fn default_y() -> String {
    "mean_response_time".into()
}
fn default_replications() -> usize {
    4
}
fn default_batches() -> usize {
    25
}
fn default_seed() -> u64 {
    1
}

/// Renders the figure `name` (`fig`, read from `path`) to `out/NAME.svg` and `out/NAME.csv`.
pub fn figure(path: &Path, out: &Path, name: &str, fig: &SimSweepFigure, deadline: &mfq_model::Deadline) -> Result<(), Failure> {
    let bad = |e: String| Failure::input(format!("{}: {e}", path.display()));
    let (axis_name, axis_text) =
        fig.x.split_once('=').ok_or_else(|| bad(format!("x = '{}': expected NAME=a:b:n or NAME=v1,v2,...", fig.x)))?;
    let axis = Axis::parse(axis_name.trim(), axis_text.trim()).map_err(|e| bad(e.to_string()))?;
    if axis.is_categorical() {
        return Err(bad(format!(
            "x = '{}': the x axis of a simulation sweep takes numbers; names and tables go in the curves' set",
            fig.x
        )));
    }
    let opts = SimOptions {
        servers: fig.servers.unwrap_or(1000),
        time: fig.time,
        warmup: fig.warmup,
        replications: fig.replications,
        batches: fig.batches,
        seed: fig.seed,
        deadline: deadline.clone(),
        ..Default::default()
    };
    opts.validate().map_err(|e| bad(e.to_string()))?;
    let mut csv = String::from("panel,curve,x,status,mean,half_width,note\n");
    let quote = |s: &str| if s.contains([',', '"']) { format!("\"{}\"", s.replace('"', "'")) } else { s.to_string() };
    let mut panels = Vec::new();
    for p in &fig.panels {
        let mut curves = Vec::new();
        for c in &p.curves {
            let text = std::fs::read_to_string(&c.model).map_err(|e| bad(format!("cannot read model {}: {e}", c.model)))?;
            let report = simulation_sweep(&text, &c.set, &axis, &opts, &|| {}).map_err(|e| bad(format!("{}: {e}", c.model)))?;
            if deadline.expired() {
                return Err(Failure::no_convergence(format!("{name}: not drawn: stopped at {} before it finished", deadline.reason())));
            }
            let mut points = Vec::new();
            for pt in &report.points {
                let (status, mean, hw, note) = match (&pt.status, pt.status.estimate(&fig.y)) {
                    (_, Some(e)) if fig.y_max.is_some_and(|m| e.mean > m) => ("above-y-max", e.mean, e.half_width, String::new()),
                    (_, Some(e)) => {
                        points.push((pt.x, e.mean, e.half_width));
                        ("simulated", e.mean, e.half_width, String::new())
                    }
                    (SimPointStatus::Unstable { reason }, None) => ("unstable", f64::NAN, f64::NAN, reason.clone()),
                    (SimPointStatus::Invalid { reason }, None) => {
                        return Err(bad(format!("{} at {} = {}: {reason}", c.model, axis.name, pt.x)))
                    }
                    (SimPointStatus::Simulated { .. }, None) => {
                        return Err(bad(format!(
                            "{} at {} = {}: no estimate named {}: the simulation does not observe it there (a generic model's \
                             population process observes its state entries only, docs/simulation.md) or it is undefined",
                            c.model, axis.name, pt.x, fig.y
                        )))
                    }
                };
                // no estimate (an unstable point): empty cells, as sweep.csv writes them, not NaN
                let cell = |v: f64| if v.is_finite() { v.to_string() } else { String::new() };
                let _ =
                    writeln!(csv, "{},{},{},{status},{},{},{}", quote(&p.title), quote(&c.label), pt.x, cell(mean), cell(hw), quote(&note));
            }
            curves.push(SimCurve { label: c.label.clone(), points });
        }
        panels.push(SimPanel { title: p.title.clone(), curves });
    }
    let style = SimSweepStyle { title: fig.title.clone(), x_label: fig.x_label.clone(), y_label: fig.y_label.clone(), log_y: fig.log_y };
    let svg = simulation_sweep_svg(&panels, &style).map_err(|e| Failure::io(format!("{name}: {e}")))?;
    write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
    write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
    Ok(())
}
