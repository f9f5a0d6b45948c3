//! The `mfq` command as a library: [`run`] parses an argument vector and dispatches it, so that
//! the binary (`src/main.rs`) and the fuzz target of the argument paths (`fuzz/fuzz_targets/cli.rs`)
//! run the same code.
//!
//! A thin layer over the library crates: it reads a model file, applies `--set` overrides,
//! calls the solvers, and writes text, JSON, CSV and SVG. Exit codes: 0 success, 2 invalid
//! input (file, key, value or option), 3 parameters outside the stability region,
//! 4 a solver did not converge, 5 an I/O failure.

/// `println!` that ignores a closed stdout (e.g. `mfq ... | head`) instead of panicking.
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `print!` that ignores a closed stdout.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

mod branchcmd;
mod checkcmd;
mod commands;
mod copiesfig;
mod exactcmd;
mod figstyle;
mod graphfig;
mod interrupt;
mod output;
mod refinedcmd;
mod refinedfig;
mod simcmd;
mod simsweep;
mod sweepcmd;
mod sweepgrid;

use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

/// Mean-field (fluid-limit) models of large-scale load balancing.
#[derive(Parser, Debug)]
#[command(name = "mfq", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    style: figstyle::StyleArgs,
}

/// Options shared by the commands that read a model file.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Model file (TOML), e.g. models/jsq-d2.toml
    pub model: PathBuf,
    /// Override a parameter: NAME=VALUE, repeatable; dotted names reach nested tables
    /// (lambda=0.95, truncation.levels=40)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Print machine-readable JSON on stdout instead of text
    #[arg(long)]
    pub json: bool,
    /// Directory for output files (CSV, JSON, SVG)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Wall-clock limit of the command, in seconds, over every phase: building the model, the
    /// fixed point and the transient (solve, report), the checker (check, report), the
    /// simulation (simulate, compare), the points of a sweep. When it runs out: exit code 4,
    /// status time-limit, no output files (sweep: the finished points in sweep-partial.csv)
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub max_seconds: Option<f64>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The main job: fixed point, tail, observables, transient from the empty state and SVG plots
    Report(ModelArgs),
    /// Transient solution from an initial state: trajectory as CSV (or JSON) and SVG
    Solve(commands::SolveArgs),
    /// Fixed point with residual, iterations, truncation, spectral abscissa and observables
    FixedPoint(ModelArgs),
    /// Uniqueness and global attraction of the fixed point: verdict (certified, evidence, not
    /// unique, unsettled) with the numbers behind it, and convergence SVGs
    Check(checkcmd::CheckArgs),
    /// Queue-length tail P(Q >= k) as a table, CSV and log-scale SVG
    Tail(ModelArgs),
    /// Refined mean field: x*, V (and A with --order 2) and the refined estimates x* + V/N (+ A/N^2)
    /// of the tail, mean queue length, response time and P(wait) for each N (no simulation)
    Refined(refinedcmd::RefinedArgs),
    /// Finite-N simulation: estimates with 95% confidence intervals
    Simulate(simcmd::SimulateArgs),
    /// Mean field, refined mean field and simulation side by side for several N (table + SVG)
    Compare(simcmd::CompareArgs),
    /// The exact N-server chain (finite buffer) beside the mean field x* and x* + V/N
    Exact(exactcmd::ExactArgs),
    /// Sweep one or two parameters: --set lambda=0.5:0.99:50 [--set d=2,3,5]; CSV and SVG
    Sweep(sweepcmd::SweepArgs),
    /// Every equilibrium followed along one parameter: --set alpha=0:0.2:200; stability, fold and
    /// branch points; CSV and the bifurcation diagram (SVG)
    Branches(branchcmd::BranchesArgs),
    /// Regenerate a named paper figure (models/figures/NAME.toml) into out/figures/NAME.svg
    /// (--gallery: into the gallery, docs/figures/)
    Figure(sweepcmd::FigureArgs),
    /// List the built-in models, their parameters and sources
    Models {
        /// Print JSON
        #[arg(long)]
        json: bool,
        /// Print the guide's Markdown table of kinds (docs/guide.md)
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
    },
}

/// A failure with its exit code.
#[derive(Debug)]
pub struct Failure {
    /// Exit code (see the crate docs).
    pub code: u8,
    /// Kind for JSON output: invalid-input, unstable, no-convergence, io.
    pub kind: &'static str,
    /// One-line message.
    pub message: String,
    /// The command already printed its JSON result (with its status): no second JSON document.
    pub json_printed: bool,
}

impl Failure {
    /// Invalid input (exit code 2).
    pub fn input(message: impl Into<String>) -> Self {
        Failure { code: 2, kind: "invalid-input", message: message.into(), json_printed: false }
    }
    /// Unstable parameters (exit code 3).
    pub fn unstable(message: impl Into<String>) -> Self {
        Failure { code: 3, kind: "unstable", message: message.into(), json_printed: false }
    }
    /// No convergence (exit code 4).
    pub fn no_convergence(message: impl Into<String>) -> Self {
        Failure { code: 4, kind: "no-convergence", message: message.into(), json_printed: false }
    }
    /// I/O failure (exit code 5).
    pub fn io(message: impl Into<String>) -> Self {
        Failure { code: 5, kind: "io", message: message.into(), json_printed: false }
    }
}

/// Runs `mfq` on `args` (the program name first, as `std::env::args_os()` gives it) and returns
/// the exit code: 0 success, 2 invalid input (including clap's argument errors; 0 for `--help`
/// and `--version`), 3 unstable, 4 no convergence, 5 I/O (docs/errors.md). Prints the results on
/// stdout and the one-line error on stderr (with `--json`, also as a JSON object on stdout);
/// never exits the process.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // help and version on stdout (code 0), usage errors on stderr (code 2)
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let json = match &cli.command {
        Command::Report(a) | Command::FixedPoint(a) | Command::Tail(a) => a.json,
        Command::Solve(a) => a.model.json,
        Command::Check(a) => a.model.json,
        Command::Refined(a) => a.model.json,
        Command::Simulate(a) => a.model.json,
        Command::Compare(a) => a.model.json,
        Command::Exact(a) => a.model.json,
        Command::Sweep(a) => a.model.json,
        Command::Branches(a) => a.model.json,
        Command::Figure(_) => false,
        Command::Models { json, .. } => *json,
    };
    let job = job_of(&cli.command);
    let result = match cli.style.install() {
        Err(f) => Err(f),
        Ok(()) => match cli.command {
            Command::Report(a) => commands::report(&a),
            Command::Solve(a) => commands::solve(&a),
            Command::FixedPoint(a) => commands::fixed_point(&a),
            Command::Tail(a) => commands::tail(&a),
            Command::Check(a) => checkcmd::check(&a),
            Command::Refined(a) => refinedcmd::refined(&a),
            Command::Simulate(a) => simcmd::simulate(&a),
            Command::Compare(a) => simcmd::compare(&a),
            Command::Exact(a) => exactcmd::exact(&a),
            Command::Sweep(a) => sweepcmd::sweep_cmd(&a),
            Command::Branches(a) => branchcmd::branches_cmd(&a),
            Command::Figure(a) => sweepcmd::figure_cmd(&a),
            Command::Models { json, markdown } => commands::models(json, markdown),
        },
    };
    match result {
        Ok(()) => 0,
        Err(mut f) => {
            f.message = with_job(&f.message, job);
            if json && !f.json_printed {
                let v = serde_json::json!({ "error": { "kind": f.kind, "code": f.code, "message": f.message } });
                outln!("{v}");
            }
            eprintln!("mfq: error: {}", f.message);
            f.code
        }
    }
}

/// The command's name and its own job, as a failure names it (`mfq simulate cannot simulate
/// the population process ...`): the fixed-point solve that finds a fault of the model
/// ([`mfq_model::ModelError::LeavesStateSpace`]) runs on behalf of every command.
fn job_of(command: &Command) -> (&'static str, &'static str) {
    match command {
        Command::Report(_) => ("report", "report on this model (its fixed point, tail and transient)"),
        Command::Solve(_) => ("solve", "solve this model's transient (the run also solves for its fixed point)"),
        Command::FixedPoint(_) => ("fixed-point", "solve for this model's fixed point"),
        Command::Tail(_) => ("tail", "compute this model's tail (at its fixed point)"),
        Command::Check(_) => ("check", "check the attraction of this model's fixed point"),
        Command::Refined(_) => ("refined", "compute this model's refined mean field (an expansion at its fixed point)"),
        Command::Simulate(_) => ("simulate", "simulate this model's population process (it starts at the mean field's fixed point)"),
        Command::Compare(_) => ("compare", "compare this model's simulations with its mean field"),
        Command::Exact(_) => ("exact", "solve this model's exact finite-N chain (beside its mean-field fixed point)"),
        Command::Sweep(_) => ("sweep", "sweep this model (each point solves for its fixed point)"),
        Command::Branches(_) => ("branches", "follow this model's equilibrium branches"),
        Command::Figure(_) => ("figure", "draw this figure"),
        Command::Models { .. } => ("models", "list the models"),
    }
}

/// `message` with the command's job said before a fault of the model that the library found
/// while solving for the fixed point or the transient ([`mfq_model::LEAVES_STATE_SPACE`], whose message names
/// no command): `leaving.toml: mfq simulate cannot simulate this model's population process
/// (...). The model lets its population leave the state space. ...`; other messages unchanged.
fn with_job(message: &str, (name, job): (&str, &str)) -> String {
    match message.find(mfq_model::LEAVES_STATE_SPACE) {
        Some(at) => format!("{}mfq {name} cannot {job}. {}", &message[..at], &message[at..]),
        None => message.to_string(),
    }
}
