//! `mfq branches`: every equilibrium followed along one parameter (bifurcation diagram), and the
//! `branches` figure kind of `mfq figure`.

use crate::commands::{deadline_of, with_error};
use crate::output::{ensure_writable, num, out_dir, write_all_atomic};
use crate::{Failure, ModelArgs};
use clap::Args;
use mfq::errors::{CheckError, FixedPointError};
use mfq::{BranchOptions, BranchReport, Model};
use mfq_fixpoint::branches::BranchEnd;
use mfq_model::Deadline;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options of `mfq branches`.
#[derive(Args, Debug)]
pub struct BranchesArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Random starts of the checker that finds the equilibria at the first parameter value
    #[arg(long, default_value_t = 32)]
    pub starts: usize,
}

/// The model with the scalar `--set` overrides and the options of the one swept setting
/// (`NAME=start:end:points`, `NAME1,NAME2=...` for several parameters set alike).
fn setup(path: &Path, sets: &[String], starts: usize, deadline: &Deadline) -> Result<(Model, BranchOptions), Failure> {
    let (ranges, overrides): (Vec<&String>, Vec<&String>) =
        sets.iter().partition(|s| s.split_once('=').is_some_and(|(_, v)| v.split(':').count() == 3));
    let [setting] = ranges[..] else {
        return Err(Failure::input(format!(
            "--set: {} swept parameters given; allowed: exactly one, as NAME=start:end:points (e.g. --set alpha=0:0.2:200, \
             or --set gamma0,gamma1=0:0.4:200 to set two parameters alike)",
            ranges.len()
        )));
    };
    let overrides: Vec<String> = overrides.into_iter().cloned().collect();
    // within --max-seconds: a file of many transitions takes seconds to parse
    let model = Model::from_file_within(path, &overrides, deadline).map_err(|e| match e {
        e if e.interrupted() => Failure::no_convergence(format!("{}: {e}; no files written", path.display())),
        e => Failure::input(format!("{}: {e}", path.display())),
    })?;
    let mut opts = BranchOptions::from_set(setting).map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    opts.starts = starts;
    opts.deadline = deadline.clone();
    Ok((model, opts))
}

/// Runs the branches: unstable parameters at the first value exit with code 3, bad input 2.
fn run(path: &Path, model: &Model, opts: &BranchOptions) -> Result<BranchReport, Failure> {
    model.branches(opts).map_err(|e| {
        let message = format!("{}: {e}", path.display());
        match e {
            mfq::Error::FixedPoint(FixedPointError::Unstable { .. })
            | mfq::Error::Check(CheckError::FixedPoint(FixedPointError::Unstable { .. })) => Failure::unstable(message),
            // the deadline passed while the model was read or built again at a parameter value
            e if e.interrupted() => Failure::no_convergence(format!("{message}; no files written")),
            _ => Failure::input(message),
        }
    })
}

/// The points of every branch: `branch,point,PARAM,summary,stability,spectral_abscissa,residual,x`
/// (`x`: the state entries separated by spaces).
pub(crate) fn points_csv(r: &BranchReport) -> String {
    let mut s = format!("branch,point,{},summary,stability,spectral_abscissa,residual,x\n", r.parameter.replace(',', "="));
    for (i, b) in r.branches.iter().enumerate() {
        for (j, p) in b.points.iter().enumerate() {
            let x: Vec<String> = p.x.iter().map(|v| format!("{v:e}")).collect();
            let alpha = if p.spectral_abscissa.is_finite() { format!("{:e}", p.spectral_abscissa) } else { String::new() };
            let _ = writeln!(s, "{i},{j},{:e},{:e},{},{alpha},{:e},{}", p.parameter, p.summary, p.kind, p.residual, x.join(" "));
        }
    }
    s
}

/// The located special points: `branch,kind,PARAM,summary,stability_change,spectral_abscissa,residual,x`.
pub(crate) fn special_csv(r: &BranchReport) -> String {
    let mut s = format!("branch,kind,{},summary,stability_change,spectral_abscissa,residual,x\n", r.parameter.replace(',', "="));
    for (i, b) in r.branches.iter().enumerate() {
        for p in &b.special {
            let x: Vec<String> = p.x.iter().map(|v| format!("{v:e}")).collect();
            let kind = serde_json::to_value(p.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            let alpha = if p.spectral_abscissa.is_finite() { format!("{:e}", p.spectral_abscissa) } else { String::new() };
            let _ =
                writeln!(s, "{i},{kind},{:e},{:e},{},{alpha},{:e},{}", p.parameter, p.summary, p.stability_change, p.residual, x.join(" "));
        }
    }
    s
}

/// Why a branch ended, in words.
fn end_text(end: &BranchEnd) -> String {
    match end {
        BranchEnd::RangeEnd => "at the end of the range".into(),
        BranchEnd::RangeStart => "back at the start of the range".into(),
        BranchEnd::LeftFeasibleSet => "where it leaves the feasible set".into(),
        BranchEnd::ClosedLoop => "closed on itself".into(),
        BranchEnd::MaxSteps => "after the most steps allowed".into(),
        BranchEnd::StepTooSmall => "where the corrector failed down to the smallest step".into(),
        BranchEnd::Model { reason } => format!("where the model refused the parameter: {reason}"),
        BranchEnd::TimeLimit { reason } => format!("at {reason}"),
    }
}

/// The report as text: one paragraph per branch.
fn text(r: &BranchReport) -> String {
    // tied parameters (`gamma0,gamma1`) read as one value: gamma0 = gamma1 = 0.2
    let parameter = r.parameter.replace(',', " = ");
    let mut s = format!("{} equilibria at {parameter} = {}; {} branches\n", r.starts.len(), r.start, r.branches.len());
    for (i, b) in r.branches.iter().enumerate() {
        let (first, last) = (b.points.first(), b.points.last());
        let _ = write!(s, "branch {i} from {} = {}", r.summary_name, first.map_or("?".into(), |p| num(p.summary)));
        if let Some(from) = &b.switched_from {
            let _ = write!(s, " (switched at the branch point of branch {} at {parameter} = {:.12})", from.branch, from.parameter);
        }
        if let Some(l) = last {
            let _ = write!(
                s,
                ": {} points, ends {} ({} = {}, {} = {})",
                b.points.len(),
                end_text(&b.end),
                parameter,
                num(l.parameter),
                r.summary_name,
                num(l.summary)
            );
        }
        for j in &b.also_starts {
            let _ = write!(s, "; reaches start {j}");
        }
        s.push('\n');
        for p in &b.special {
            let kind = serde_json::to_value(p.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            let change = if p.stability_change { ", stability changes" } else { "" };
            let _ = writeln!(s, "    {kind} at {parameter} = {:.12} ({} = {}){change}", p.parameter, r.summary_name, num(p.summary));
        }
    }
    s
}

/// `mfq branches`: JSON (`--json`) or text on stdout; `branches.csv`, `special-points.csv` and
/// the bifurcation diagram `branches.svg` in the output directory. Stopped by `--max-seconds`:
/// the report so far is printed, no files, exit code 4.
pub fn branches_cmd(args: &BranchesArgs) -> Result<(), Failure> {
    let path = &args.model.model;
    let deadline = deadline_of(&args.model)?;
    let (model, opts) = setup(path, &args.model.set, args.starts, &deadline)?;
    let dir = out_dir(&args.model.out, path);
    ensure_writable(&dir)?;
    let report = run(path, &model, &opts)?;
    if let Some(why) = &report.partial {
        // `why` names the limit already ("stopped at the wall-clock limit --max-seconds 0.05 during ...")
        let f = Failure::no_convergence(format!("{}: the continuation {why}; no files written", path.display()));
        if args.model.json {
            outln!("{}", with_error(serde_json::to_value(&report).unwrap_or_default(), &f));
        } else {
            out!("{}", text(&report));
        }
        return Err(Failure { json_printed: args.model.json, ..f });
    }
    let title = format!("Equilibria of {} against {}", model.spec().kind(), report.parameter);
    let files = files(&dir, "branches", &report, &title)?;
    write_all_atomic(&files)?;
    if args.model.json {
        outln!("{}", serde_json::to_value(&report).unwrap_or_default());
    } else {
        out!("{}", text(&report));
        outln!("wrote {} (and special-points.csv, branches.svg)", dir.join("branches.csv").display());
    }
    Ok(())
}

/// The files of a report: `NAME.csv` (points), `NAME-special.csv` or `special-points.csv`, `NAME.svg`.
fn files(dir: &Path, name: &str, report: &BranchReport, title: &str) -> Result<Vec<(PathBuf, Vec<u8>)>, Failure> {
    let svg = mfq_plot::branches::bifurcation_svg(report, title).map_err(|e| Failure::no_convergence(format!("{name}: {e}")))?;
    let special = if name == "branches" { "special-points.csv".to_string() } else { format!("{name}-special.csv") };
    Ok(vec![
        (dir.join(format!("{name}.csv")), points_csv(report).into_bytes()),
        (dir.join(special), special_csv(report).into_bytes()),
        (dir.join(format!("{name}.svg")), svg.into_bytes()),
    ])
}

/// The `branches` figure kind: `model` with `set` (one swept `NAME=start:end:points` and scalar
/// overrides) into `out/NAME.svg`, `NAME.csv` and `NAME-special.csv`, within `deadline`.
pub(crate) fn figure(out: &Path, name: &str, title: &str, model: &str, set: &[String], deadline: &Deadline) -> Result<(), Failure> {
    let path = Path::new(model);
    let (m, opts) = setup(path, set, 32, deadline)?;
    let report = run(path, &m, &opts)?;
    if let Some(why) = &report.partial {
        return Err(Failure::no_convergence(format!("{name}: not drawn: the continuation {why}")));
    }
    write_all_atomic(&files(out, name, &report, title)?)
}
