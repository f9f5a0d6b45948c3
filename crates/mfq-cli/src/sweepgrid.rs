//! The grid of `mfq sweep` and of sweep figures: `--set` values to axes, several model files,
//! the CSV of any sweep (numeric, categorical and facet axes), titles that describe the sweep,
//! one plot per facet, and the `curves` figure kind (per-curve model files and settings).

use crate::output::{csv_field, write_atomic};
use crate::Failure;
use mfq::sweep::{sweep_models, Axis, PointStatus, SweepReport};
use mfq_fixpoint::FixedPointOptions;
use mfq_model::{Deadline, ModelFile};
use mfq_plot::{sweep_svg, SweepPlotStyle, SweepQuantity};
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::Path;

/// Splits `NAME=VALUE` settings into scalar overrides and swept axes. The x axis is the first
/// *numeric* axis given (a categorical one is x only when no axis is numeric); the others keep
/// their order: the next one gives the curves, the third and later the facets.
///
/// # Errors
/// Bad input naming the setting: no `=`, a malformed sweep, no swept parameter.
pub(crate) fn split_sets(sets: &[String]) -> Result<(Vec<String>, Vec<Axis>), Failure> {
    let mut overrides = Vec::new();
    let mut axes = Vec::new();
    for s in sets {
        let (name, value) = s.split_once('=').ok_or_else(|| Failure::input(format!("--set {s}: expected NAME=VALUE")))?;
        if Axis::is_sweep(value) {
            axes.push(Axis::parse(name.trim(), value).map_err(|e| Failure::input(e.to_string()))?);
        } else {
            overrides.push(s.clone());
        }
    }
    if axes.is_empty() {
        return Err(Failure::input(
            "--set: no swept parameter given; allowed: one or more, as NAME=start:end:points or NAME=v1,v2,... \
             (e.g. --set lambda=0.5:0.99:50 --set d=2,3,5 --set discipline=ps,fcfs)",
        ));
    }
    if let Some(i) = axes.iter().position(|a| !a.is_categorical()) {
        let x = axes.remove(i);
        axes.insert(0, x);
    }
    Ok((overrides, axes))
}

/// A model file of a sweep: its legend label, path and text.
pub(crate) struct SweptFile {
    pub label: String,
    pub path: String,
    pub text: String,
}

impl SweptFile {
    /// Reads `path`; the label is the file name without `.toml`.
    pub fn read(path: &Path) -> Result<SweptFile, Failure> {
        let text = std::fs::read_to_string(path).map_err(|e| Failure::input(format!("cannot read model file {}: {e}", path.display())))?;
        let label = path.file_stem().map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned());
        Ok(SweptFile { label, path: path.display().to_string(), text })
    }
}

/// Sweeps `files` with `sets` within `deadline`; `tick` is called once per finished point.
pub(crate) fn run_grid(
    files: &[SweptFile],
    sets: &[String],
    deadline: &Deadline,
    tick: &(dyn Fn() + Sync),
) -> Result<SweepReport, Failure> {
    let (overrides, axes) = split_sets(sets)?;
    for (i, f) in files.iter().enumerate() {
        let same = |g: &SweptFile| match (std::fs::canonicalize(&g.path), std::fs::canonicalize(&f.path)) {
            (Ok(a), Ok(b)) => a == b,
            _ => g.path == f.path,
        };
        if let Some(g) = files[..i].iter().find(|g| same(g)) {
            return Err(Failure::input(format!(
                "--model {}: the same model file as {} (it would be swept twice); allowed: each model file once",
                f.path, g.path
            )));
        }
    }
    let models: Vec<(String, String)> = files.iter().map(|f| (f.label.clone(), f.text.clone())).collect();
    let opts = FixedPointOptions { deadline: deadline.clone(), ..Default::default() };
    sweep_models(&models, &overrides, &axes, &opts, tick).map_err(|e| {
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        match e {
            // the deadline passed while a file was read, before any point: exit code 4
            mfq_model::ModelError::Interrupted { .. } => crate::figstyle::stopped_reading(&paths.join(", "), &e),
            e => Failure::input(format!("{}: {e}", paths.join(", "))),
        }
    })
}

/// Number of points a sweep of `files` with `sets` has (for a progress bar; 0 when the sets are bad).
pub(crate) fn point_count(files: usize, sets: &[String]) -> usize {
    split_sets(sets).map_or(0, |(_, axes)| axes.iter().map(|a| a.values.len()).product::<usize>() * files.max(1))
}

/// The value of `axis` at `v` as a CSV field: numbers as a `--set` writes them (exponent form
/// from 1e15 up), labels quoted when needed.
fn value_field(axis: &Axis, v: f64) -> String {
    csv_field(&axis.text_of(v))
}

/// The CSV of a sweep: one column per swept parameter (x, curve or `curve`, then the facets),
/// the status, the observables and the reason of a point without numbers.
pub(crate) fn sweep_csv(report: &SweepReport) -> String {
    let curve_name = report.curve_axis.as_ref().map_or("curve".to_string(), |c| csv_field(&c.name));
    let mut s = format!("{},{curve_name},", csv_field(&report.x_axis.name));
    for a in &report.facet_axes {
        let _ = write!(s, "{},", csv_field(&a.name));
    }
    s.push_str("status,mean_response_time,mean_queue_length,prob_wait,throughput,loss_probability,residual,levels,iterations,reason\n");
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:e}"));
    for p in &report.points {
        let _ = write!(s, "{},", value_field(&report.x_axis, p.x));
        if let (Some(axis), Some(c)) = (&report.curve_axis, p.curve) {
            s.push_str(&value_field(axis, c));
        }
        s.push(',');
        for (a, v) in report.facet_axes.iter().zip(&p.facets) {
            let _ = write!(s, "{},", value_field(a, *v));
        }
        let _ = match &p.status {
            PointStatus::Solved {
                mean_response_time,
                mean_queue_length,
                prob_wait,
                throughput,
                loss_probability,
                residual,
                levels,
                iterations,
                ..
            } => writeln!(
                s,
                "solved,{},{},{},{},{loss_probability:e},{residual:e},{levels},{iterations},",
                opt(*mean_response_time),
                opt(*mean_queue_length),
                opt(*prob_wait),
                opt(*throughput)
            ),
            PointStatus::Unstable { reason } => writeln!(s, "unstable,,,,,,,,,\"{}\"", reason.replace('"', "'")),
            PointStatus::Stable { reason } => writeln!(s, "stable,,,,,,,,,\"{}\"", reason.replace('"', "'")),
            PointStatus::StabilityUnknown { reason } => writeln!(s, "stability-unknown,,,,,,,,,\"{}\"", reason.replace('"', "'")),
            PointStatus::Failed { reason } => writeln!(s, "failed,,,,,,,,,\"{}\"", reason.replace('"', "'")),
            PointStatus::Invalid { reason } => writeln!(s, "invalid,,,,,,,,,\"{}\"", reason.replace('"', "'")),
        };
    }
    s
}

/// A title that describes the sweep, not the file's single point: the model (the kind's title
/// up to its first parenthesis or punctuation, or the number of files), then each swept parameter with its range or values, e.g.
/// `JSQ(d) / power-of-d: lambda = 0.5 to 0.99 (50 points); d in {1, 2, 3, 5}` (range wording
/// for grids `start:end:points` only).
pub(crate) fn sweep_title(files: &[SweptFile], report: &SweepReport) -> String {
    let what = match files {
        [one] => ModelFile::parse(&one.text, &[]).map_or_else(|_| one.label.clone(), |f| short_title(f.model.kind_info().title)),
        many => format!("{} model files", many.len()),
    };
    let axes: Vec<String> = std::iter::once(&report.x_axis)
        .chain(report.curve_axis.iter().filter(|a| files.len() == 1 || a.name != "model"))
        .map(Axis::assignment)
        .collect();
    format!("{what}: {}", axes.join("; "))
}

/// A kind's title up to its first ` (`, `:`, `;` or `,` (`Redundancy-d`, `JSQ(d) / power-of-d`).
fn short_title(title: &str) -> String {
    let end = [" (", ":", ";", ","].iter().filter_map(|c| title.find(c)).min().unwrap_or(title.len());
    title[..end].trim().to_string()
}

/// Legend labels of a categorical curve axis (`NAME = VALUE`, the model files' labels as they
/// are), through `template` (`{}` is the value) when given.
pub(crate) fn curve_labels(report: &SweepReport, template: Option<&str>) -> Option<Vec<String>> {
    let axis = report.curve_axis.as_ref().filter(|a| a.is_categorical())?;
    Some(
        axis.values
            .iter()
            .map(|v| match template {
                Some(t) => t.replace("{}", &axis.text_of(*v)),
                None if axis.name == "model" => axis.text_of(*v),
                None => format!("{} = {}", axis.name, axis.text_of(*v)),
            })
            .collect(),
    )
}

/// The file name of one facet's plot: `STEM-NAME=VALUE[-NAME=VALUE].svg`, characters other than
/// letters, digits and `.=_-` replaced by `_`.
pub(crate) fn facet_file(stem: &str, report: &SweepReport, values: &[f64]) -> String {
    let parts: Vec<String> = report.facet_axes.iter().zip(values).map(|(a, v)| format!("{}={}", a.name, a.text_of(*v))).collect();
    let safe: String = parts.join("-").chars().map(|c| if c.is_ascii_alphanumeric() || ".=_-".contains(c) { c } else { '_' }).collect();
    format!("{stem}-{safe}.svg")
}

/// Draws `report` into `dir`: `STEM.svg` without facets, one `STEM-FACET.svg` per combination of
/// facet values otherwise (each titled with its facet values). Returns the files written and,
/// for each plot that has nothing to draw (skipped), why: `"NAME: reason"`, or the reason alone
/// when no plot can be drawn at all (the caller prints them with its summary line). Plots of
/// an earlier run (`STEM.svg`, `STEM-*.svg`) are removed first, so none passes for this run's.
pub(crate) fn write_plots(
    dir: &Path,
    stem: &str,
    report: &SweepReport,
    y: SweepQuantity,
    style: &SweepPlotStyle,
) -> Result<(Vec<String>, Vec<String>), Failure> {
    remove_plots(dir, stem);
    if report.x_axis.is_categorical() {
        return Ok((vec![], vec!["no swept parameter is numeric (the x axis of a plot); the CSV has every point".into()]));
    }
    let (mut written, mut skipped) = (Vec::new(), Vec::new());
    for values in report.facet_values() {
        let (sub, name, title) = if report.facet_axes.is_empty() {
            (report.clone(), format!("{stem}.svg"), style.title.clone())
        } else {
            (report.facet(&values), facet_file(stem, report, &values), format!("{} ({})", style.title, report.facet_text(&values)))
        };
        match sweep_svg(&sub, y, &SweepPlotStyle { title, ..style.clone() }) {
            Ok(svg) => {
                write_atomic(&dir.join(&name), svg.as_bytes())?;
                written.push(name);
            }
            Err(e) if report.facet_axes.is_empty() => skipped.push(e.0),
            Err(e) => skipped.push(format!("{name}: {}", e.0)),
        }
    }
    Ok((written, skipped))
}

/// Removes `STEM.svg` and `STEM-*.svg` in `dir`.
pub(crate) fn remove_plots(dir: &Path, stem: &str) {
    let _ = std::fs::remove_file(dir.join(format!("{stem}.svg")));
    let prefix = format!("{stem}-");
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && name.ends_with(".svg") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// One curve of a `curves` figure: a legend label, optionally its own model file, and settings
/// added to the figure's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CurveSpec {
    /// Legend label.
    pub label: String,
    /// Model file (default: the figure's `model`).
    #[serde(default)]
    pub model: Option<String>,
    /// `NAME=VALUE` settings of this curve (scalars), after the figure's `set`.
    #[serde(default)]
    pub set: Vec<String>,
}

/// A `curves` figure: one sweep (`set`: one swept parameter, the x axis, plus scalar settings)
/// drawn once per `[[curves]]` entry, each with its own model file and settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CurvesFigure {
    pub title: String,
    pub reproduces: String,
    pub description: String,
    /// Model file of the curves that name none.
    #[serde(default)]
    pub model: Option<String>,
    /// `NAME=...` settings of every curve: one sweep plus scalar overrides.
    pub set: Vec<String>,
    /// The curves.
    pub curves: Vec<CurveSpec>,
    /// Quantity on the y axis.
    pub y: SweepQuantity,
    #[serde(default)]
    pub log_y: bool,
    pub x_label: String,
    #[serde(default)]
    pub y_label: Option<String>,
}

/// Computes a `curves` figure: its CSV (column `curve` = the label) and SVG.
///
/// # Errors
/// Bad input naming the figure file and the curve: a curve without a model file, a swept
/// setting in a curve's `set`, not exactly one swept parameter in the figure's `set`, invalid
/// parameters at a point; no convergence when a point did not converge or has no value.
pub(crate) fn curves_figure(path: &Path, fig: &CurvesFigure, deadline: &Deadline) -> Result<(String, String), Failure> {
    let bad = |m: String| Failure::input(format!("{}: {m}", path.display()));
    let (_, axes) = split_sets(&fig.set).map_err(|f| bad(f.message))?;
    if axes.len() != 1 {
        return Err(bad(format!("set has {} swept parameters; allowed: one (the x axis; curves come from [[curves]])", axes.len())));
    }
    if fig.curves.is_empty() {
        return Err(bad("no [[curves]]; allowed: one or more, each with a label".into()));
    }
    let mut combined: Option<SweepReport> = None;
    for (i, c) in fig.curves.iter().enumerate() {
        let model = c
            .model
            .as_ref()
            .or(fig.model.as_ref())
            .ok_or_else(|| bad(format!("curve '{}' has no model file and the figure none", c.label)))?;
        if let Some(s) = c.set.iter().find(|s| s.split_once('=').is_some_and(|(_, v)| Axis::is_sweep(v))) {
            return Err(bad(format!("curve '{}': set {s} is a sweep; allowed: single values (the sweep is the figure's set)", c.label)));
        }
        let file = SweptFile::read(Path::new(model))?;
        let sets: Vec<String> = fig.set.iter().chain(&c.set).cloned().collect();
        let mut report = run_grid(std::slice::from_ref(&file), &sets, deadline, &|| {})
            .map_err(|f| Failure { message: format!("curve '{}': {}", c.label, f.message), ..f })?;
        if let Some(why) = &report.partial {
            return Err(Failure::no_convergence(format!("{}: curve '{}': the sweep {why}", path.display(), c.label)));
        }
        if let Some((p, reason)) = report.points.iter().find_map(|p| match &p.status {
            PointStatus::Invalid { reason } => Some((p, reason)),
            _ => None,
        }) {
            return Err(bad(format!("curve '{}' has invalid parameters at {} = {}: {reason}", c.label, report.x_axis.name, p.x)));
        }
        report.points.iter_mut().for_each(|p| p.curve = Some(i as f64));
        match &mut combined {
            None => combined = Some(report),
            Some(r) => r.points.extend(report.points),
        }
    }
    let mut report = combined.ok_or_else(|| bad("no curves".into()))?;
    report.curve_axis = Some(Axis::categories("curve", fig.curves.iter().map(|c| c.label.clone()).collect()));
    let style = SweepPlotStyle {
        title: fig.title.clone(),
        x_label: fig.x_label.clone(),
        y_label: fig.y_label.clone(),
        log_y: fig.log_y,
        curve_label: "{}".into(),
        curve_labels: curve_labels(&report, Some("{}")),
    };
    let svg = sweep_svg(&report, fig.y, &style).map_err(|e| Failure::no_convergence(format!("{}: {e}", path.display())))?;
    Ok((sweep_csv(&report), svg))
}
