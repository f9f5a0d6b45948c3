//! `mfq check`: uniqueness and global attraction of the fixed point.

use crate::commands::{deadline_of, fixed_point_of, load, time_limit_failure, title, with_error};
use crate::output::{check_plots, out_dir, write_all_atomic};
use crate::{Failure, ModelArgs};
use clap::Args;
use mfq_fixpoint::{check_with_fixed_point, AttractionReport, CheckOptions, FixedPointStatus, Verdict};
use mfq_model::Deadline;
use std::io::IsTerminal;

/// Options of `mfq check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Number of seeded random feasible initial states [default: 32; 6 on sparse models of 2000
    /// states or more (pair and triplet approximations), where each run is a stiff BDF solve]
    #[arg(long)]
    pub starts: Option<usize>,
    /// Seed of the random starts
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// A run has settled once max |f(x)| < tol
    #[arg(long, default_value_t = 1e-10)]
    pub tol: f64,
    /// Longest integration of one run (model time, mean job sizes)
    #[arg(long, default_value_t = 1e4, allow_negative_numbers = true)]
    pub time_limit: f64,
}

/// Runs the checker on a model file's fixed point (shared with `figure`), both within the
/// wall-clock `deadline` (the checker gets the time the fixed point left).
pub(crate) fn run_check(args: &ModelArgs, opts: &CheckOptions, deadline: &Deadline) -> Result<AttractionReport, Failure> {
    let file = load(args)?;
    if let Some(note) = file.model.dynamics_note() {
        return Err(Failure::input(format!("{}: nothing to check: {note}", args.model.display())));
    }
    let fp = fixed_point_of(args, &file, deadline)?;
    if fp.status != FixedPointStatus::Converged {
        return Err(Failure::no_convergence(format!(
            "{}: the fixed point did not converge ({}); nothing to check",
            args.model.display(),
            fp.status
        )));
    }
    let model =
        file.model.build_within(fp.truncation.levels, deadline).map_err(|e| crate::commands::fixed_point_failure(args, &e.into()))?;
    let opts = CheckOptions { deadline: deadline.clone(), ..opts.clone() };
    check_with_fixed_point(model.as_ref(), fp, &opts).map_err(|e| Failure::input(format!("{}: {e}", args.model.display())))
}

/// `mfq check`. A check stopped by `--max-seconds` prints its report and writes no files
/// (exit code 4).
pub fn check(args: &CheckArgs) -> Result<(), Failure> {
    let deadline = deadline_of(&args.model)?;
    let opts = CheckOptions {
        starts: args.starts.unwrap_or(CheckOptions::default().starts),
        // a number of starts given is run on every model
        large_model_starts: if args.starts.is_some() { None } else { CheckOptions::default().large_model_starts },
        seed: args.seed,
        tol: args.tol,
        time_limit: args.time_limit,
        progress: if !args.model.json && std::io::stderr().is_terminal() { progress_bar(&args.model.model) } else { Default::default() },
        ..Default::default()
    };
    opts.validate().map_err(|e| Failure::input(format!("--{}", e.to_string().replace('_', "-"))))?;
    crate::commands::check_out(&args.model, true)?;
    let report = run_check(&args.model, &opts, &deadline)?;
    if let Verdict::TimeLimit { unsettled, runs, .. } = report.verdict {
        let f = time_limit_failure(&args.model, &format!("the check stopped with {unsettled} of {runs} runs unsettled"));
        if args.model.json {
            outln!("{}", with_error(serde_json::to_value(&report).unwrap_or_default(), &f));
        } else {
            outln!("{}", report.to_string().trim_end());
        }
        return Err(Failure { json_printed: args.model.json, ..f });
    }
    let dir = out_dir(&args.model.out, &args.model.model);
    let mut set = check_plots(&dir, &report)?;
    let files: Vec<std::path::PathBuf> = set.iter().map(|(p, _)| p.clone()).collect();
    set.push((dir.join("check.json"), serde_json::to_string_pretty(&report).unwrap_or_default().into_bytes()));
    write_all_atomic(&set)?;
    if args.model.json {
        outln!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        let file = load(&args.model)?;
        outln!("{}  ({})", title(&file), args.model.model.display());
        outln!("{}", report.to_string().trim_end());
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        outln!("wrote {}, check.json", names.join(", "));
    }
    Ok(())
}

/// A progress bar on stderr for the checker's runs (the library only reports `done` of `total`).
fn progress_bar(model: &std::path::Path) -> mfq_fixpoint::attraction::Progress {
    let bar = indicatif::ProgressBar::new(0);
    if let Ok(style) = indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} runs ({elapsed})") {
        bar.set_style(style);
    }
    bar.set_message(format!("check {}", model.display()));
    mfq_fixpoint::attraction::Progress::new(move |done, total| {
        bar.set_length(total);
        bar.set_position(done);
        if done == total {
            bar.finish_and_clear();
        }
    })
}
