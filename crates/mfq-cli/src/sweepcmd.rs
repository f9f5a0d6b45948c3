//! `mfq sweep` and `mfq figure`.

use crate::output::{ensure_writable, out_dir, write_atomic};
use crate::sweepgrid::{self, sweep_csv, SweptFile};
use crate::{Failure, ModelArgs};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use mfq::sweep::{Axis, PointStatus, SweepPoint, SweepReport};
use mfq_fixpoint::{solve_spec, FixedPointOptions};
use mfq_model::{Deadline, ModelFile};
use mfq_plot::{sweep_svg, tail_svg, SweepPlotStyle, SweepQuantity};
use serde::Deserialize;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Options of `mfq sweep`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Quantity on the y axis
    #[arg(long, value_enum, default_value_t = YArg::MeanResponseTime)]
    pub y: YArg,
    /// Log-scale y axis
    #[arg(long)]
    pub log_y: bool,
    /// Another model file swept with the same settings (repeatable): one curve per file
    #[arg(long = "model", value_name = "FILE")]
    pub models: Vec<PathBuf>,
}

/// Quantities on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum YArg {
    /// Mean response time
    MeanResponseTime,
    /// Mean queue length per server
    MeanQueueLength,
    /// Probability of waiting
    ProbWait,
    /// Throughput per server (jobs completed per server per unit time)
    Throughput,
    /// Probability that an arrival is lost (blocked)
    LossProbability,
}

impl From<YArg> for SweepQuantity {
    fn from(y: YArg) -> Self {
        match y {
            YArg::MeanResponseTime => SweepQuantity::MeanResponseTime,
            YArg::MeanQueueLength => SweepQuantity::MeanQueueLength,
            YArg::ProbWait => SweepQuantity::ProbWait,
            YArg::Throughput => SweepQuantity::Throughput,
            YArg::LossProbability => SweepQuantity::LossProbability,
        }
    }
}

fn progress_bar(total: usize, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total as u64);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} points, {elapsed} ({eta} left)") {
        pb.set_style(style);
    }
    pb
}

/// Runs a sweep of `text` with `sets` (`NAME=VALUE`; ranges/lists are axes, the rest
/// overrides) within `deadline`.
fn run_sweep(path: &Path, text: &str, sets: &[String], quiet: bool, deadline: &Deadline) -> Result<SweepReport, Failure> {
    let label = path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    run_files(&[SweptFile { label, path: path.display().to_string(), text: text.to_string() }], sets, quiet, deadline)
}

/// Runs a sweep of `files` (one curve per file when there are several) with a progress bar.
fn run_files(files: &[SweptFile], sets: &[String], quiet: bool, deadline: &Deadline) -> Result<SweepReport, Failure> {
    let pb = progress_bar(sweepgrid::point_count(files.len(), sets), quiet);
    let report = sweepgrid::run_grid(files, sets, deadline, &|| pb.inc(1));
    pb.finish_and_clear();
    report
}

/// `mfq sweep`. The output directory is checked before the sweep starts. Within
/// `--max-seconds`, or at a Ctrl-C, the sweep stops and writes the finished points to
/// `sweep-partial.csv` (exit code 4); a point with invalid parameters gives exit code 2 after
/// the other points are written (an unstable point is data, not an error).
pub fn sweep_cmd(args: &SweepArgs) -> Result<(), Failure> {
    let path = &args.model.model;
    let deadline = crate::interrupt::interruptible_deadline(&args.model)?;
    let files = std::iter::once(path).chain(&args.models).map(|p| SweptFile::read(p)).collect::<Result<Vec<_>, _>>()?;
    // `{name}` in --title and the labels: the first file's parameters, swept ones as ranges
    crate::figstyle::note_model(path, &files[0].text, &args.model.set, &deadline)?;
    let dir = out_dir(&args.model.out, path);
    ensure_writable(&dir)?;
    let report = run_files(&files, &args.model.set, args.model.json, &deadline)?;
    let outcome = sweep_outcome(path, &report);
    if let Some(why) = &report.partial {
        return partial_sweep(args, &dir, &report, why, outcome);
    }
    let csv = sweep_csv(&report);
    if let Err(f) = write_atomic(&dir.join("sweep.csv"), csv.as_bytes()) {
        // what was computed is printed before the failure
        out!("{csv}");
        return Err(f);
    }
    let _ = std::fs::remove_file(dir.join("sweep-partial.csv"));
    let style = SweepPlotStyle {
        title: sweepgrid::sweep_title(&files, &report),
        x_label: report.x_axis.name.clone(),
        y_label: None,
        log_y: args.log_y,
        curve_label: format!("{} = {{}}", report.curve_axis.as_ref().map_or("", |c| c.name.as_str())),
        curve_labels: sweepgrid::curve_labels(&report, None),
    };
    // a plot of an earlier sweep in the same directory would pass for this one's: removed first
    let (plots, skipped) = sweepgrid::write_plots(&dir, "sweep", &report, args.y.into(), &style)?;
    let outcome = outcome.and(missing_observable(path, &report, args.y.into()));
    if args.model.json {
        print_json(&report, &outcome);
        return outcome.map_err(|f| Failure { json_printed: true, ..f });
    }
    outln!("{}", counts(&report));
    out!("{csv}");
    let why = if skipped.is_empty() { String::new() } else { format!(" (no plot: {})", skipped.join("; ")) };
    if plots.is_empty() {
        outln!("wrote {}{why}", dir.join("sweep.csv").display());
    } else {
        outln!("wrote {} and {}{why}", dir.join("sweep.csv").display(), plots.join(", "));
    }
    outcome
}

/// Bad input naming `--y` when points were solved and none reports `y`, with the observables
/// that the solved points do report (`--y prob-wait` on a redundancy model, which has no
/// probability of waiting).
fn missing_observable(path: &Path, report: &SweepReport, y: SweepQuantity) -> Result<(), Failure> {
    let solved: Vec<&SweepPoint> = report.points.iter().filter(|p| matches!(p.status, PointStatus::Solved { .. })).collect();
    if solved.is_empty() || solved.iter().any(|p| y.of(p).is_some()) {
        return Ok(());
    }
    let has: Vec<&str> = [
        (SweepQuantity::MeanResponseTime, "mean-response-time"),
        (SweepQuantity::MeanQueueLength, "mean-queue-length"),
        (SweepQuantity::ProbWait, "prob-wait"),
        (SweepQuantity::Throughput, "throughput"),
        (SweepQuantity::LossProbability, "loss-probability"),
    ]
    .into_iter()
    .filter(|(q, _)| solved.iter().any(|p| q.of(p).is_some()))
    .map(|(_, n)| n)
    .collect();
    let name = clap::ValueEnum::to_possible_value(&YArg::from(y)).map_or_else(String::new, |v| v.get_name().to_string());
    Err(Failure::input(format!(
        "--y {name}: {} does not report the {} (no plot drawn; the CSV has the other observables); allowed: {}",
        path.display(),
        y.label(),
        has.join(", ")
    )))
}

impl From<SweepQuantity> for YArg {
    fn from(q: SweepQuantity) -> Self {
        match q {
            SweepQuantity::MeanResponseTime => YArg::MeanResponseTime,
            SweepQuantity::MeanQueueLength => YArg::MeanQueueLength,
            SweepQuantity::ProbWait => YArg::ProbWait,
            SweepQuantity::Throughput => YArg::Throughput,
            SweepQuantity::LossProbability => YArg::LossProbability,
        }
    }
}

/// `N points: S solved, U unstable, F failed, I invalid`, and `B stable, W stability unknown
/// (no queue-length model)` when the model has only a stability region.
fn counts(report: &SweepReport) -> String {
    let count = |f: fn(&PointStatus) -> bool| report.points.iter().filter(|p| f(&p.status)).count();
    let mut s = format!(
        "{} points: {} solved, {} unstable, {} failed, {} invalid",
        report.points.len(),
        count(|s| matches!(s, PointStatus::Solved { .. })),
        count(|s| matches!(s, PointStatus::Unstable { .. })),
        count(|s| matches!(s, PointStatus::Failed { .. })),
        count(|s| matches!(s, PointStatus::Invalid { .. }))
    );
    let (stable, unknown) =
        (count(|s| matches!(s, PointStatus::Stable { .. })), count(|s| matches!(s, PointStatus::StabilityUnknown { .. })));
    if stable + unknown > 0 {
        s.push_str(&format!(", {stable} stable, {unknown} stability unknown (no queue-length model: verdicts only)"));
    }
    s
}

/// Exit code 2 when a point has invalid parameters (named in the message), else success.
fn sweep_outcome(path: &Path, report: &SweepReport) -> Result<(), Failure> {
    let invalid: Vec<&SweepPoint> = report.points.iter().filter(|p| matches!(p.status, PointStatus::Invalid { .. })).collect();
    match invalid.first() {
        None => Ok(()),
        Some(p) => {
            let reason = match &p.status {
                PointStatus::Invalid { reason } => reason.as_str(),
                _ => "",
            };
            let mut at = format!("{} = {}", report.x_axis.name, report.x_axis.text_of(p.x));
            if let (Some(a), Some(c)) = (&report.curve_axis, p.curve) {
                at.push_str(&format!(", {} = {}", a.name, a.text_of(c)));
            }
            if !p.facets.is_empty() {
                at.push_str(&format!(", {}", report.facet_text(&p.facets)));
            }
            Err(Failure::input(format!(
                "{}: {} of {} sweep points have invalid parameters (status invalid in the CSV), the first at {at}: {reason}",
                path.display(),
                invalid.len(),
                report.points.len(),
            )))
        }
    }
}

/// The sweep report as one JSON document, with the error object when `outcome` failed.
fn print_json(report: &SweepReport, outcome: &Result<(), Failure>) {
    let mut value = serde_json::to_value(report).unwrap_or_default();
    if let Err(f) = outcome {
        value = crate::commands::with_error(value, f);
    }
    outln!("{value}");
}

/// A sweep stopped by `--max-seconds` or Ctrl-C: the finished points go to `sweep-partial.csv`
/// (a first line `# partial: ...` says so), a complete `sweep.csv`/`sweep.svg` of an earlier
/// run is removed (it would pass for this one's), exit code 4.
fn partial_sweep(args: &SweepArgs, dir: &Path, report: &SweepReport, why: &str, outcome: Result<(), Failure>) -> Result<(), Failure> {
    let csv = format!("# partial: {why}\n{}", sweep_csv(report));
    let file = dir.join("sweep-partial.csv");
    let written = write_atomic(&file, csv.as_bytes());
    let _ = std::fs::remove_file(dir.join("sweep.csv"));
    sweepgrid::remove_plots(dir, "sweep");
    let mut f =
        Failure::no_convergence(format!("{}: the sweep {why}; the finished points are in {}", args.model.model.display(), file.display()));
    if let Err(w) = &written {
        f.message = format!("{}: the sweep {why}; {}", args.model.model.display(), w.message);
    }
    if let Err(invalid) = outcome {
        f.message.push_str(&format!("; also: {}", invalid.message));
    }
    if args.model.json {
        print_json(report, &Err(Failure::no_convergence(f.message.clone())));
    } else {
        outln!("{} (partial)", counts(report));
        out!("{csv}");
    }
    Err(Failure { json_printed: args.model.json, ..f })
}

/// A named figure: `models/figures/NAME.toml`, tagged by `kind`. Every kind has `title`,
/// `reproduces` (the paper figure, or "new") and `description` (one line for the gallery).
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
enum FigureFile {
    /// A sweep of one model file.
    Sweep {
        title: String,
        reproduces: String,
        description: String,
        /// Model file, relative to the repository root.
        model: String,
        /// `NAME=...` settings: one or two sweeps plus scalar overrides.
        set: Vec<String>,
        /// Quantity on the y axis.
        y: SweepQuantity,
        #[serde(default)]
        log_y: bool,
        x_label: String,
        #[serde(default)]
        y_label: Option<String>,
        /// Legend label, `{}` replaced by the curve value.
        #[serde(default = "default_curve_label")]
        curve_label: String,
    },
    /// One sweep (the same `set`) over several model files, one curve per file.
    ModelsSweep {
        title: String,
        reproduces: String,
        description: String,
        /// (legend label, model file) pairs.
        models: Vec<(String, String)>,
        /// `NAME=...` settings applied to every file: one sweep plus scalar overrides.
        set: Vec<String>,
        /// Quantity on the y axis.
        y: SweepQuantity,
        #[serde(default)]
        log_y: bool,
        x_label: String,
        #[serde(default)]
        y_label: Option<String>,
    },
    /// The attraction checker's convergence plot (and basins, with several equilibria).
    Check {
        title: String,
        reproduces: String,
        description: String,
        /// Model file.
        model: String,
        /// Random starts (default 32).
        #[serde(default = "default_starts")]
        starts: usize,
    },
    /// Simulation against mean field and refined mean field for several system sizes.
    Compare {
        title: String,
        reproduces: String,
        description: String,
        /// Model file.
        model: String,
        /// System sizes.
        servers: Vec<usize>,
        /// Simulated time per replication after the warm-up (scaled by 1000/N below N = 1000).
        time: f64,
        /// Warm-up time.
        warmup: f64,
        /// Legend label of the model's own (`N`-independent) value (default `mean field`).
        #[serde(default)]
        label: Option<String>,
        /// Further approximations drawn as horizontal lines: (legend label, model file), e.g. the
        /// pair and triplet approximations of the same system.
        #[serde(default)]
        lines: Vec<(String, String)>,
    },
    /// Errors of `x*`, `x* + V/N` and `x* + V/N + A/N^2` against the exact chain over `N`
    /// (log-log, fitted slopes), `crate::refinedfig::refined_errors`.
    RefinedErrors {
        title: String,
        reproduces: String,
        description: String,
        /// (legend label, model file, quantity: a state entry name or `mean_queue_length`).
        models: Vec<(String, String, String)>,
        /// System sizes of the exact chain.
        servers: Vec<usize>,
        /// Number of largest sizes the slopes are fitted over.
        fit: usize,
    },
    /// A finite-buffer tail: mean field, refined mean field (order 2), exact chain and
    /// simulation, `crate::refinedfig::refined_tail`.
    RefinedTail {
        title: String,
        reproduces: String,
        description: String,
        /// Model file (with a fixed `truncation.levels`, the buffer).
        model: String,
        /// Sizes solved exactly.
        exact: Vec<usize>,
        /// Sizes simulated.
        simulate: Vec<usize>,
        /// Simulated time per replication after the warm-up.
        time: f64,
        /// Warm-up time.
        warmup: f64,
    },
    /// Every equilibrium of one model file along one parameter: the bifurcation diagram
    /// (`mfq branches`).
    Branches {
        title: String,
        reproduces: String,
        description: String,
        /// Model file.
        model: String,
        /// One `NAME=start:end:points` (or `NAME1,NAME2=...`) plus scalar overrides.
        set: Vec<String>,
    },
    /// Redundancy on compatibility graphs: `(1 - rho) E[N]` against `1 - rho` for several
    /// `redundancy-graph` model files (`crate::graphfig`).
    HeavyTraffic {
        title: String,
        reproduces: String,
        description: String,
        /// (legend label, model file) pairs.
        models: Vec<(String, String)>,
        /// The values of `1 - rho`.
        gaps: Vec<f64>,
        x_label: String,
        y_label: String,
    },
    /// Simulated values with 95% confidence bars against one parameter, in panels of curves
    /// (`crate::simsweep`): kinds without a mean field, or any kind that simulates.
    SimulationSweep(crate::simsweep::SimSweepFigure),
    /// Queue-length tails of several model files on one log-scale plot.
    Tail {
        title: String,
        reproduces: String,
        description: String,
        /// (legend label, model file) pairs.
        models: Vec<(String, String)>,
        /// `NAME=VALUE` overrides applied to every file (e.g. `lambda=0.9`).
        #[serde(default)]
        set: Vec<String>,
    },
    /// Identical copies under FCFS: the stability threshold against `d` per speed profile
    /// (crates/mfq-cli/src/copiesfig.rs).
    CopiesThreshold {
        title: String,
        reproduces: String,
        description: String,
        /// (legend label, server speeds) pairs; `K` = number of speeds.
        profiles: Vec<(String, Vec<f64>)>,
        /// Simulated time of the saturated system per replication after the warm-up.
        time: f64,
        /// Warm-up time.
        warmup: f64,
    },
    /// One sweep drawn once per `[[curves]]` entry (label, model file, extra settings):
    /// `crate::sweepgrid::curves_figure`.
    Curves(crate::sweepgrid::CurvesFigure),
}

impl FigureFile {
    /// Title, description and the paper figure reproduced.
    fn about(&self) -> (&str, &str, &str) {
        match self {
            FigureFile::Sweep { title, reproduces, description, .. }
            | FigureFile::ModelsSweep { title, reproduces, description, .. }
            | FigureFile::Check { title, reproduces, description, .. }
            | FigureFile::Compare { title, reproduces, description, .. }
            | FigureFile::RefinedErrors { title, reproduces, description, .. }
            | FigureFile::RefinedTail { title, reproduces, description, .. }
            | FigureFile::Branches { title, reproduces, description, .. }
            | FigureFile::Tail { title, reproduces, description, .. }
            | FigureFile::CopiesThreshold { title, reproduces, description, .. }
            | FigureFile::HeavyTraffic { title, reproduces, description, .. } => (title, description, reproduces),
            FigureFile::SimulationSweep(f) => (&f.title, &f.description, &f.reproduces),
            FigureFile::Curves(f) => (&f.title, &f.description, &f.reproduces),
        }
    }
}

fn default_starts() -> usize {
    32
}

fn default_curve_label() -> String {
    "{}".into()
}

/// Options of `mfq figure`.
#[derive(Args, Debug)]
pub struct FigureArgs {
    /// Figure name (a file models/figures/NAME.toml)
    pub name: Option<String>,
    /// Every figure in models/figures/
    #[arg(long)]
    pub all: bool,
    /// Directory with the figure files
    #[arg(long, default_value = "models/figures")]
    pub figures: PathBuf,
    /// Output directory for NAME.svg and NAME.csv (default out/figures; the gallery only with --gallery)
    #[arg(long, conflicts_with = "gallery")]
    pub out: Option<PathBuf>,
    /// Update the gallery: write into docs/figures/ (tracked files), as `just figures` does
    #[arg(long)]
    pub gallery: bool,
    /// Wall-clock limit of the whole command, in seconds (all figures together), as in the other
    /// commands: the sweeps, curves, checks, simulations and fixed points of a figure stop
    /// there, and the figure kinds that take no limit inside (refined errors and tails, heavy
    /// traffic, copies thresholds) are not started after it. When it runs out:
    /// exit code 4, nothing written for an unfinished figure (finished figures are kept)
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub max_seconds: Option<f64>,
}

/// The gallery's directory (docs/figures.md shows its files).
pub const GALLERY_DIR: &str = "docs/figures";

impl FigureArgs {
    /// Where the figures go: `--out DIR`, the gallery with `--gallery`, else `out/figures`, so
    /// that running `mfq figure` never rewrites tracked files unless asked to.
    pub fn out_dir(&self) -> PathBuf {
        match (&self.out, self.gallery) {
            (Some(dir), _) => dir.clone(),
            (None, true) => PathBuf::from(GALLERY_DIR),
            (None, false) => PathBuf::from("out/figures"),
        }
    }
}

/// Draws the figure `name` into `out`; returns the lines that describe it.
fn figure(dir: &Path, out: &Path, name: &str, deadline: &Deadline) -> Result<String, Failure> {
    let stopped = || Failure::no_convergence(format!("{name}: not drawn: stopped at {} before it finished", deadline.reason()));
    let path = dir.join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).map_err(|e| Failure::input(format!("cannot read figure {}: {e}", path.display())))?;
    let (style, text) = crate::figstyle::split(&text, &path)?;
    let fig: FigureFile = toml::from_str(&text).map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let _style = crate::figstyle::install_figure_style(style, &text, deadline)?;
    if deadline.expired() {
        return Err(stopped());
    }
    let read = |model: &str| {
        std::fs::read_to_string(model).map_err(|e| Failure::input(format!("{}: cannot read model {model}: {e}", path.display())))
    };
    match &fig {
        FigureFile::Sweep { title, model, set, y, log_y, x_label, y_label, curve_label, .. } => {
            let text = read(model)?;
            let report = complete(run_sweep(Path::new(model), &text, set, false, deadline)?)?;
            if !report.facet_axes.is_empty() || report.x_axis.is_categorical() {
                return Err(Failure::input(format!(
                    "{}: a sweep figure has one plot: one numeric swept parameter (x) and at most one more (curves); \
                     use `mfq sweep` for facets, or a curves figure",
                    path.display()
                )));
            }
            let style = SweepPlotStyle {
                title: title.clone(),
                x_label: x_label.clone(),
                y_label: y_label.clone(),
                log_y: *log_y,
                curve_label: curve_label.clone(),
                curve_labels: sweepgrid::curve_labels(&report, Some(curve_label)),
            };
            let svg = sweep_svg(&report, *y, &style).map_err(|e| Failure::no_convergence(format!("{name}: {e}")))?;
            write_atomic(&out.join(format!("{name}.csv")), sweep_csv(&report).as_bytes())?;
            write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
        }
        FigureFile::ModelsSweep { title, models, set, y, log_y, x_label, y_label, .. } => {
            let mut combined: Option<SweepReport> = None;
            let mut csv = String::new();
            for (i, (label, model)) in models.iter().enumerate() {
                let text = read(model)?;
                let mut report = complete(run_sweep(Path::new(model), &text, set, false, deadline)?)?;
                let body = sweep_csv(&report);
                let mut lines = body.lines();
                if let Some(head) = lines.next() {
                    if csv.is_empty() {
                        let _ = writeln!(csv, "model,{head}");
                    }
                }
                let label_csv = if label.contains([',', '"']) { format!("\"{}\"", label.replace('"', "'")) } else { label.clone() };
                for l in lines {
                    let _ = writeln!(csv, "{label_csv},{l}");
                }
                report.points.iter_mut().for_each(|p| p.curve = Some(i as f64));
                match &mut combined {
                    None => combined = Some(report),
                    Some(c) => c.points.extend(report.points),
                }
            }
            let mut report = combined.ok_or_else(|| Failure::input(format!("{}: no models", path.display())))?;
            report.curve_axis = Some(Axis::categories("model", models.iter().map(|(l, _)| l.clone()).collect()));
            let style = SweepPlotStyle {
                title: title.clone(),
                x_label: x_label.clone(),
                y_label: y_label.clone(),
                log_y: *log_y,
                curve_label: "{}".into(),
                curve_labels: Some(models.iter().map(|(l, _)| l.clone()).collect()),
            };
            let svg = sweep_svg(&report, *y, &style).map_err(|e| Failure::no_convergence(format!("{name}: {e}")))?;
            write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
            write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
        }
        FigureFile::Check { model, starts, .. } => {
            let args = ModelArgs { model: PathBuf::from(model), set: vec![], json: false, out: None, max_seconds: deadline.limit() };
            let opts = mfq_fixpoint::CheckOptions { starts: *starts, ..Default::default() };
            let report = crate::checkcmd::run_check(&args, &opts, deadline)?;
            if deadline.expired() {
                return Err(stopped());
            }
            let svg = mfq_plot::attraction::convergence_svg(&report).map_err(|e| Failure::io(e.to_string()))?;
            write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
            if matches!(report.verdict, mfq_fixpoint::Verdict::NotUnique { .. }) {
                let b = mfq_plot::attraction::basins_svg(&report).map_err(|e| Failure::io(e.to_string()))?;
                write_atomic(&out.join(format!("{name}-basins.svg")), b.as_bytes())?;
            }
            let mut csv = String::from("verdict,equilibrium,kind,share,spectral_abscissa,x\n");
            for (i, e) in report.equilibria.iter().enumerate() {
                let xs: Vec<String> = e.x.iter().map(|v| format!("{v:e}")).collect();
                let _ = writeln!(
                    csv,
                    "{},{i},{:?},{},{},{}",
                    report.verdict.name(),
                    e.kind,
                    e.share,
                    e.local.as_ref().map_or(String::new(), |l| format!("{:e}", l.spectral_abscissa)),
                    xs.join(" ")
                );
            }
            write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
        }
        FigureFile::Compare { title, model, servers, time, warmup, label, lines, .. } => {
            let args = ModelArgs { model: PathBuf::from(model), set: vec![], json: false, out: None, max_seconds: deadline.limit() };
            let file = crate::commands::load(&args)?;
            let sim = crate::simcmd::SimArgs { time: *time, warmup: *warmup, replications: 4, batches: 25, seed: 1 };
            let (mut cmp, _, _) = crate::simcmd::comparison(&args, &file, servers, &sim, true, deadline)?;
            if let Some(label) = label {
                cmp.mean_field_label = label.clone();
            }
            for (line_label, line_model) in lines {
                let fp = solve_file(&read(line_model)?, line_model, &[], deadline)?;
                let v = fp
                    .observables
                    .mean_queue_length
                    .ok_or_else(|| Failure::input(format!("{line_model}: the model has no queue length")))?;
                cmp.lines.push((line_label.clone(), v));
            }
            let svg = mfq_plot::size_comparison_svg(&cmp, title).map_err(|e| Failure::io(e.to_string()))?;
            let mut csv = String::from("servers,simulated,half_width,mean_field,refined_mean_field");
            for (l, _) in &cmp.lines {
                let _ = write!(csv, ",{}", l.replace([',', '"'], " "));
            }
            csv.push('\n');
            for i in 0..cmp.servers.len() {
                let refined = cmp.refined_c.map_or(String::new(), |c| format!("{}", cmp.mean_field + c / cmp.servers[i]));
                let _ = write!(csv, "{},{},{},{},{refined}", cmp.servers[i], cmp.simulated[i], cmp.half_width[i], cmp.mean_field);
                for (_, v) in &cmp.lines {
                    let _ = write!(csv, ",{v}");
                }
                csv.push('\n');
            }
            write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
            write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
        }
        FigureFile::RefinedErrors { title, models, servers, fit, .. } => {
            let (csv, svg) = crate::refinedfig::refined_errors(title, models, servers, *fit)?;
            write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
            write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
        }
        FigureFile::RefinedTail { title, model, exact, simulate, time, warmup, .. } => {
            let (csv, svg) = crate::refinedfig::refined_tail(title, model, exact, simulate, *time, *warmup)?;
            write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
            write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
        }
        FigureFile::Branches { title, model, set, .. } => crate::branchcmd::figure(out, name, title, model, set, deadline)?,
        FigureFile::HeavyTraffic { title, models, gaps, x_label, y_label, .. } => {
            let fig = crate::graphfig::HeavyTraffic { title, models, gaps, x_label, y_label };
            let (svg, csv) = crate::graphfig::render(&fig, &read)?;
            write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
            write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
        }
        FigureFile::SimulationSweep(f) => crate::simsweep::figure(&path, out, name, f, deadline)?,
        FigureFile::Curves(f) => {
            let (csv, svg) = crate::sweepgrid::curves_figure(&path, f, deadline)?;
            write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
            write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
        }
        FigureFile::Tail { title, models, set, .. } => {
            let mut fps = Vec::new();
            for (label, model) in models {
                fps.push((label.clone(), solve_file(&read(model)?, model, set, deadline)?));
            }
            let refs: Vec<(&str, &mfq_fixpoint::FixedPoint)> = fps.iter().map(|(l, f)| (l.as_str(), f)).collect();
            let svg = tail_svg(&refs, title).map_err(|e| Failure::io(e.to_string()))?;
            let mut csv = String::from("model,k,p_q_ge_k\n");
            for (label, fp) in &fps {
                let label = if label.contains([',', '"']) { format!("\"{}\"", label.replace('"', "'")) } else { label.clone() };
                for (k, v) in fp.observables.tail.iter().enumerate() {
                    let _ = writeln!(csv, "{label},{},{v:e}", k + 1);
                }
            }
            write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
            write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
        }
        FigureFile::CopiesThreshold { title, profiles, time, warmup, .. } => {
            crate::copiesfig::figure(out, name, title, profiles, *time, *warmup)?;
        }
    }
    let (title, description, reproduces) = fig.about();
    Ok(format!("{name}: {title}\n    {description}\n    reproduces: {reproduces}\n    -> {}", out.join(format!("{name}.svg")).display()))
}

/// A figure's sweep must be complete and without invalid points.
fn complete(report: SweepReport) -> Result<SweepReport, Failure> {
    if let Some(why) = &report.partial {
        return Err(Failure::no_convergence(format!("the figure's sweep {why}")));
    }
    for p in &report.points {
        if let PointStatus::Invalid { reason } = &p.status {
            return Err(Failure::input(format!("the figure's sweep has invalid parameters at {} = {}: {reason}", report.x_axis.name, p.x)));
        }
    }
    Ok(report)
}

/// The converged fixed point of the model file `model` (its text) with `NAME=VALUE` overrides,
/// within `deadline`.
fn solve_file(text: &str, model: &str, set: &[String], deadline: &Deadline) -> Result<mfq_fixpoint::FixedPoint, Failure> {
    let file = ModelFile::parse_within(text, set, deadline).map_err(|e| match e {
        mfq_model::ModelError::Interrupted { .. } => crate::figstyle::stopped_reading(model, &e),
        e => Failure::input(format!("{model}: {e}")),
    })?;
    let opts = FixedPointOptions { deadline: deadline.clone(), ..FixedPointOptions::default() };
    let fp = solve_spec(&file.model, &file.truncation, &opts).map_err(|e| match e {
        mfq_fixpoint::FixedPointError::Model(mfq_model::ModelError::Interrupted { .. }) => Failure::no_convergence(format!("{model}: {e}")),
        e => Failure::input(format!("{model}: {e}")),
    })?;
    if !fp.converged() {
        return Err(Failure::no_convergence(format!("{model}: the fixed point did not converge ({})", fp.status)));
    }
    Ok(fp)
}

/// The figure names of the directory `dir` (its `NAME.toml` files), sorted.
fn figure_names(dir: &Path) -> Result<Vec<String>, Failure> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Failure::input(format!("cannot list {}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    v.sort();
    Ok(v)
}

/// `mfq figure NAME` / `--all`. A NAME without a file `NAME.toml` in the figures directory is
/// refused with the valid names.
pub fn figure_cmd(args: &FigureArgs) -> Result<(), Failure> {
    let names: Vec<String> = if args.all {
        figure_names(&args.figures)?
    } else {
        match &args.name {
            Some(n) if !args.figures.join(format!("{n}.toml")).is_file() => {
                let valid = figure_names(&args.figures)?;
                return Err(Failure::input(format!(
                    "figure {n}: no such figure (no file {}); allowed: one of {}",
                    args.figures.join(format!("{n}.toml")).display(),
                    valid.join(", ")
                )));
            }
            Some(n) => vec![n.clone()],
            None => return Err(Failure::input("mfq figure: give a NAME (a file models/figures/NAME.toml) or --all")),
        }
    };
    let out = args.out_dir();
    ensure_writable(&out)?;
    let deadline =
        Deadline::checked_after("--max-seconds", args.max_seconds).map_err(Failure::input)?.with_cancel(crate::interrupt::interrupt_flag());
    // figures are independent: drawn on as many threads as there are cores, each taking the next
    // name; printed in name order, the first failure (in name order) reported
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Vec<std::sync::Mutex<Option<Result<String, Failure>>>> = names.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(names.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(n) = names.get(i) else { break };
                let r = figure(&args.figures, &out, n, &deadline);
                let failed = r.is_err();
                if let Ok(mut slot) = done[i].lock() {
                    *slot = Some(r);
                }
                if failed {
                    // stop handing out names; figures already started finish
                    next.store(names.len(), Ordering::Relaxed);
                }
            });
        }
    });
    let results: Vec<Option<Result<String, Failure>>> = done.into_iter().map(|slot| slot.into_inner().ok().flatten()).collect();
    // every finished figure is printed; the first failure (in name order) is the error, and its
    // message names the other figures that failed and those never started
    let mut first: Option<Failure> = None;
    let (mut failed, mut unstarted) = (Vec::new(), Vec::new());
    for (name, r) in names.iter().zip(results) {
        match r {
            Some(Ok(text)) => outln!("{text}"),
            Some(Err(e)) if first.is_none() => first = Some(e),
            Some(Err(_)) => failed.push(name.as_str()),
            None => unstarted.push(name.as_str()),
        }
    }
    let Some(mut e) = first else { return Ok(()) };
    if !failed.is_empty() {
        e.message.push_str(&format!("; also not drawn: {}", failed.join(", ")));
    }
    if !unstarted.is_empty() {
        e.message.push_str(&format!("; not started: {} ({} figures)", unstarted.join(", "), unstarted.len()));
    }
    Err(e)
}
