//! `mfq simulate` and `mfq compare`: finite-N simulation against the (refined) mean field.

use crate::commands::{deadline_of, fixed_point_of, load, require_converged, time_limit_failure, title, with_error};
use crate::output::{out_dir, write_atomic};
use crate::{Failure, ModelArgs};
use clap::Args;
use mfq_model::{Deadline, Stability};
use mfq_plot::{size_comparison_svg, SizeComparison};
use mfq_sim::{simulate as run_sim, SimError, SimOptions, SimStatus};
use serde_json::json;
use std::io::IsTerminal;

/// Simulation options shared by `simulate` and `compare`.
#[derive(Args, Debug, Clone)]
pub struct SimArgs {
    /// Simulated time per replication after the warm-up (mean job sizes)
    #[arg(long, default_value_t = 5000.0, allow_negative_numbers = true)]
    pub time: f64,
    /// Warm-up time discarded at the start of each replication
    #[arg(long, default_value_t = 500.0, allow_negative_numbers = true)]
    pub warmup: f64,
    /// Independent replications (run in parallel)
    #[arg(long, default_value_t = 4)]
    pub replications: usize,
    /// Batches per replication for the batch-means confidence interval
    #[arg(long, default_value_t = 25)]
    pub batches: usize,
    /// Random seed (replication r uses the stream jumped r times)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl SimArgs {
    /// The simulator's options, with `deadline` (the job's limit and cancel flag) as its limit.
    fn options(&self, servers: usize, quiet: bool, deadline: &Deadline) -> SimOptions {
        SimOptions {
            servers,
            time: self.time,
            warmup: self.warmup,
            replications: self.replications,
            batches: self.batches,
            seed: self.seed,
            buffer: None,
            progress: !quiet && std::io::stderr().is_terminal(),
            deadline: deadline.clone(),
            precision: None,
        }
    }
}

/// Options of `mfq simulate`.
#[derive(Args, Debug)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Number of servers N [default: 1000; k-of-n: the model's servers]
    #[arg(long)]
    pub servers: Option<usize>,
    #[command(flatten)]
    pub sim: SimArgs,
    /// Run until the 95% half width of the headline estimate (mean queue length; opinion kinds:
    /// the fraction x) is at most this, adding replications in rounds (at most 10000), or until
    /// --max-seconds stops it (then it says the target was not reached)
    #[arg(long, allow_negative_numbers = true)]
    pub precision: Option<f64>,
}

/// Options of `mfq compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// System sizes N, comma-separated (sizes below 1000 simulate 1000/N times longer, so that
    /// every size gets about the same number of events)
    #[arg(long, value_delimiter = ',', default_value = "10,20,50,100,1000")]
    pub servers: Vec<usize>,
    #[command(flatten)]
    pub sim: SimArgs,
}

fn sim_failure(path: &std::path::Path, e: SimError) -> Failure {
    Failure::input(format!("{}: {e}", path.display()))
}

/// Redundancy-d with identical copies under FCFS on `N = --servers` servers (general size
/// law, server speeds): `lambda_max` of the saturated system (closed form, exact chain or
/// simulation with its 95% interval; Anton, Ayesta, Jonckheere and Verloop 2021), the verdict
/// at `lambda`, and the finite system at `lambda` simulated from its rules
/// ([`mfq::copies::identical_copies`]). An unstable verdict exits with code 3 after printing.
fn identical_copies(
    args: &SimulateArgs,
    servers: usize,
    spec: &mfq_model::models::RedundancySpec,
    deadline: &Deadline,
) -> Result<(), Failure> {
    let opts = args.sim.options(servers, true, deadline);
    let r = mfq::copies::identical_copies(spec, &opts, true).map_err(|e| Failure::input(format!("{}: {e}", args.model.model.display())))?;
    let l = &r.lambda_max;
    let threshold = match l.method {
        "simulated" => format!("lambda_max = {:.5} +- {:.5} (saturated-system simulation, 95% CI)", l.value, l.half_width),
        "exact-chain" => {
            format!("lambda_max = {:.6} (exact chain of the saturated system, truncation error {:.1e})", l.value, l.half_width)
        }
        "finite-system" => format!(
            "lambda_max = {:.5} +- {:.5} (estimated from the finite system itself, 95% CI; docs/models/redundancy.md)",
            l.value, l.half_width
        ),
        _ => format!("lambda_max = {:.6} (closed form)", l.value),
    };
    let (word, unstable) = match &r.verdict {
        mfq_model::Stability::Stable { .. } => ("stable", false),
        mfq_model::Stability::Unstable { .. } => ("unstable", true),
        mfq_model::Stability::Unknown { .. } => ("undecided (lambda inside the simulated interval)", false),
    };
    let verdict = format!(
        "{}: identical copies ({}) under FCFS on N = {} servers: {word} at lambda = {} ({threshold}; stable iff lambda < lambda_max, \
         Anton, Ayesta, Jonckheere and Verloop 2021)",
        args.model.model.display(),
        r.size_law,
        r.speeds.len(),
        r.lambda
    );
    let stopped = r.finite_system.as_ref().is_some_and(|f| f.status != mfq_sim::SimStatus::Completed);
    if args.model.json {
        outln!("{}", serde_json::to_value(&r).unwrap_or_default());
    } else {
        outln!("{verdict}");
        if let Some(f) = r.finite_system.as_ref().filter(|_| !stopped) {
            let e = |e: &mfq_sim::Estimate| format!("{:.6} +- {:.6}", e.mean, e.half_width);
            outln!(
                "  finite system simulated at lambda = {} ({} replications x {} time units after a warm-up of {}):",
                r.lambda,
                args.sim.replications,
                args.sim.time,
                args.sim.warmup
            );
            outln!("  jobs per server         {} (time average, 95% CI)", e(&f.jobs_per_server));
            outln!(
                "  growth per server       {} jobs per unit time (0 when stable, lambda - lambda_max when not)",
                e(&f.growth_per_server)
            );
            outln!("  throughput per server   {}", e(&f.throughput_per_server));
            outln!("  jobs per server at end  {:.3}", f.final_jobs_per_server);
        }
    }
    if stopped {
        let f = time_limit_failure(&args.model, "the finite-system simulation stopped before its horizon");
        return Err(Failure { json_printed: args.model.json, ..f });
    }
    if unstable {
        return Err(Failure { json_printed: args.model.json, ..Failure::unstable(verdict) });
    }
    Ok(())
}

/// `mfq simulate`. A simulation stopped by `--max-seconds` prints no estimates and writes no
/// files (exit code 4).
pub fn simulate(args: &SimulateArgs) -> Result<(), Failure> {
    let deadline = deadline_of(&args.model)?;
    let file = load(&args.model)?;
    crate::commands::check_out(&args.model, false)?;
    // the model's own size (k-of-n), else --servers, else 1000
    let servers = args.servers.or_else(|| mfq::simsweep::model_servers(&file.model)).unwrap_or(1000);
    let population = matches!(file.model.simulation(), Ok(mfq_model::Simulation::Population));
    let identical = file.model.downcast_ref::<mfq_model::models::RedundancySpec>().filter(|r| r.is_identical_fcfs());
    if let Some(p) = args.precision {
        if identical.is_some() || population {
            return Err(Failure::input(format!(
                "--precision = {p}: not available for kind {} (only for the simulators of `mfq simulate` that report a mean queue length or opinion fraction)",
                file.model.kind()
            )));
        }
    }
    if let Some(r) = identical {
        return identical_copies(args, servers, r, &deadline);
    }
    // a kind with only a stability region (k-of-n): unstable is refused, unknown is said beside
    // the estimates (they mean something only if the system is stable)
    let unknown = match file.model.stability_only().map(|r| r.stability) {
        Some(Stability::Unstable { reason }) => {
            return Err(Failure::unstable(format!("{}: unstable: {reason}", args.model.model.display())));
        }
        Some(Stability::Unknown { note }) => Some(note),
        _ => None,
    };
    // the same stability condition as the fixed point: no stationary estimate of an unstable system
    if let Ok(m) = file.model.build_probe(file.truncation.levels.unwrap_or_else(|| file.model.initial_levels())) {
        if let mfq_model::Stability::Unstable { reason } = file.truncation.stability_of(m.stability()) {
            return Err(Failure::unstable(format!("{}: unstable: {reason}", args.model.model.display())));
        }
    }
    if population {
        return simulate_generic(args, servers, &file, &deadline);
    }
    let buffer = file.truncation.buffer_size().map(|k| k as u32);
    let opts = SimOptions { precision: args.precision, buffer, ..args.sim.options(servers, args.model.json, &deadline) };
    let report = run_sim(&file.model, &opts).map_err(|e| sim_failure(&args.model.model, e))?;
    let mut value = serde_json::to_value(&report).unwrap_or_default();
    if let Some(note) = &unknown {
        value["stability_unknown"] = json!(note);
    }
    // with a precision target the rounds the deadline did not cut keep their estimates
    if let Some(p) = report.precision.as_ref().filter(|p| !p.reached && p.half_width.is_finite()) {
        let why = match report.status {
            SimStatus::Completed => format!("after the largest number of replications, {}", report.options.replications),
            _ => format!("when {} stopped it", deadline.reason()),
        };
        let message = format!(
            "{}: precision target {} not reached: the 95% half width of {} was {:.3e} {why}",
            args.model.model.display(),
            p.target,
            p.quantity,
            p.half_width
        );
        let f = Failure::no_convergence(message);
        if args.model.json {
            outln!("{}", with_error(value, &f));
        } else {
            print_report(args, &file, &report);
        }
        return Err(Failure { json_printed: args.model.json, ..f });
    }
    if report.status != SimStatus::Completed {
        let f = time_limit_failure(&args.model, &format!("the simulation stopped after {} events", report.events));
        if args.model.json {
            outln!("{}", with_error(value, &f));
        } else {
            outln!("{}  simulated with N = {} servers ({})", title(&file), report.options.servers, args.model.model.display());
            outln!(
                "  stopped at the wall-clock limit after {} events in {:.2} s: no estimates (they would cover only part of the horizon)",
                report.events,
                report.wall_seconds
            );
        }
        return Err(Failure { json_printed: args.model.json, ..f });
    }
    if let Some(dir) = &args.model.out {
        write_atomic(&dir.join("simulation.json"), serde_json::to_string_pretty(&value).unwrap_or_default().as_bytes())?;
    }
    if args.model.json {
        outln!("{value}");
        return Ok(());
    }
    print_report(args, &file, &report);
    if let Some(note) = &unknown {
        outln!(
            "  stability           unknown: {note}; the estimates mean something only if the system is stable \
             (a value that keeps growing with --time shows it is not)"
        );
    }
    Ok(())
}

/// The text of a simulation report.
fn print_report(args: &SimulateArgs, file: &mfq_model::ModelFile, report: &mfq_sim::SimReport) {
    let buffer = report.options.buffer.map(|k| format!(", finite buffer K = {k} per server")).unwrap_or_default();
    outln!("{}  simulated with N = {} servers{buffer} ({})", title(file), report.options.servers, args.model.model.display());
    outln!(
        "  {} replications x {} time units after a warm-up of {}, {} batches each; seed {} (replication r on its own stream)",
        report.options.replications,
        args.sim.time,
        args.sim.warmup,
        args.sim.batches,
        args.sim.seed
    );
    if let Some(p) = &report.precision {
        let verdict = if p.reached { "reached" } else { "NOT reached" };
        outln!("  precision target {} on the 95% half width of {}: {verdict} ({:.3e})", p.target, p.quantity, p.half_width);
    }
    // quantities a model does not define (e.g. queue lengths of opinion dynamics) are not printed
    let est = |name: &str, e: Option<&mfq_sim::Estimate>| {
        if let Some(e) = e.filter(|e| e.mean.is_finite() && e.half_width.is_finite()) {
            outln!("  {name:<19} {:.6} +- {:.6} (95% CI)", e.mean, e.half_width);
        }
    };
    est("mean queue length", report.mean_queue_length.as_ref());
    est("mean response time", report.mean_response_time.as_ref());
    est("P(wait)", report.prob_wait.as_ref());
    est("throughput", report.throughput.as_ref());
    if report.options.buffer.is_some() {
        est("P(loss)", report.loss_probability.as_ref());
    }
    for (name, e) in &report.extras {
        est(name, Some(e));
    }
    let tail: Vec<_> = report.tail.iter().filter(|e| e.mean.is_finite()).take(12).collect();
    if !tail.is_empty() {
        outln!("  tail P(Q >= k):");
        for (k, e) in tail.iter().enumerate() {
            outln!("    {:<3} {:.6e} +- {:.1e}", k + 1, e.mean, e.half_width);
        }
    }
    outln!("  {} events in {:.2} s ({:.1e} events/s)", report.events, report.wall_seconds, report.events_per_second);
    for w in interval_warnings(report) {
        outln!("  warning: {w}");
    }
}

/// Lag-1 autocorrelation of the batch means above which the intervals are said to be too
/// narrow: about three standard errors of the estimate under independence at the default 4
/// replications of 25 batches (`1/sqrt(96) ~ 0.1`).
const BATCH_CORRELATION_WARNING: f64 = 0.3;

/// What the diagnostics of `report` say against its intervals (`SimReport::diagnostics`), one
/// sentence each: correlated batch means (intervals too narrow), a departure rate away from
/// the throughput (warm-up or horizon too short), replication means that spread more than the
/// pooled interval allows. Empty when nothing is flagged.
fn interval_warnings(report: &mfq_sim::SimReport) -> Vec<String> {
    let d = &report.diagnostics;
    let mut w = Vec::new();
    if let Some(lag1) = d.batch_lag1_autocorrelation.filter(|&c| c > BATCH_CORRELATION_WARNING) {
        w.push(format!(
            "consecutive batch means are correlated (lag-1 autocorrelation {lag1:.2} > {BATCH_CORRELATION_WARNING}): the 95% intervals \
             are too narrow; use fewer, longer batches (--batches) or a longer --time"
        ));
    }
    // redundancy counts the throughput in copies and the departures in jobs (d copies each)
    if let (Some(dep), Some(thr)) = (&d.departure_rate, &report.throughput) {
        if report.model.kind() != "redundancy"
            && [dep.mean, dep.half_width, thr.mean, thr.half_width].iter().all(|v| v.is_finite())
            && (dep.mean - thr.mean).abs() > 2.0 * (dep.half_width + thr.half_width).max(1e-3 * thr.mean.abs())
        {
            w.push(format!(
                "the departure rate {:.6} differs from the throughput {:.6} beyond their intervals: the system is not in steady state \
                 over the measured time (a longer --warmup or --time, or an unstable system)",
                dep.mean, thr.mean
            ));
        }
    }
    let (rep, pooled) = (d.replication_half_width.unwrap_or(f64::NAN), report.mean_queue_length.map_or(f64::NAN, |l| l.half_width));
    if rep.is_finite() && pooled.is_finite() && pooled > 0.0 && rep > 3.0 * pooled {
        w.push(format!(
            "the replication means of the queue length spread more (95% half width {rep:.3e}) than the pooled batch-means \
             interval says ({pooled:.3e}): trust the wider one, or run longer"
        ));
    }
    w
}

/// Mean field, refined mean field and simulations at the sizes `servers` for a model file, and
/// the warnings owed with them (a degenerate fixed point: no refined line, [`mfq::degeneracy_warning`]).
pub(crate) fn comparison(
    model_args: &ModelArgs,
    file: &mfq_model::ModelFile,
    servers: &[usize],
    sim: &SimArgs,
    quiet: bool,
    deadline: &Deadline,
) -> Result<(SizeComparison, Vec<serde_json::Value>, Vec<String>), Failure> {
    if servers.is_empty() || servers.contains(&0) {
        return Err(Failure::input("--servers: allowed: a comma-separated list of integers >= 1"));
    }
    // with a fixed truncation level K the system simulated has buffer K, as its mean field
    let m = mfq::Model::new(file.model.clone(), file.truncation);
    let fp_opts = mfq_fixpoint::FixedPointOptions { deadline: deadline.clone(), ..Default::default() };
    let finite = m.finite_mean_field(&fp_opts).map_err(|e| match e {
        mfq::Error::FixedPoint(mfq_fixpoint::FixedPointError::Unstable { .. }) => {
            Failure::unstable(format!("{}: {e}", model_args.model.display()))
        }
        _ => Failure::input(format!("{}: {e}", model_args.model.display())),
    })?;
    require_converged(&finite.fixed_point, file)?;
    // a population process is compared with the fixed point it is simulated from: the one
    // reached from [model.initial] when the one from the empty state is unstable (mfq::population_equilibrium)
    let population = matches!(file.model.simulation(), Ok(mfq_model::Simulation::Population));
    let eq = population.then(|| mfq::population_equilibrium(finite.model.as_ref(), &finite.fixed_point, &fp_opts));
    let fp = eq.as_ref().map_or(&finite.fixed_point, |e| &e.fixed_point);
    // at a degenerate fixed point the refined terms are of the order of 1/eigenvalue: not drawn
    let mut warnings: Vec<String> = mfq::degeneracy_warning(fp).into_iter().collect();
    // the refined line is still drawn at an unstable x*, with the warning
    let unstable = mfq::conditioning_warning(fp, 1);
    // (the terms' dense steps within the deadline: past it no refined line, and the
    // simulations that follow stop at once)
    let refined = match m.refined_of_order_within(fp, 1, deadline) {
        Ok(r) => Some(r).filter(|_| warnings.is_empty()),
        // too large for memory, no transitions, ...: said, not dropped in silence (the deadline
        // stops the simulations that follow, which say so; a degenerate x* has its warning)
        Err(e) if !deadline.expired() && warnings.is_empty() => {
            warnings.push(format!("no refined mean field: {e}"));
            None
        }
        Err(_) => None,
    };
    warnings.extend(unstable);
    // (after the refined terms: this warning does not stop their line, drawn at the stable fixed point)
    if let Some(u) = eq.as_ref().and_then(|e| e.unstable_from_empty.as_ref()) {
        warnings.push(format!(
            "the fixed point found from the empty state, {}, is unstable{}: the mean field shown is the \
             fixed point reached from [model.initial] ({}), where the simulations start",
            state_summary(&finite.model.layout(), &u.x),
            u.spectral_abscissa.map_or(String::new(), |a| format!(" (spectral abscissa {a:.3e})")),
            fp.local.map_or("stability not computed".to_string(), |k| k.to_string())
        ));
    }
    // sizes whose refined state x* + V/N is no state (near a degenerate point): said, as `refined` does
    if let Some(r) = &refined {
        let layout = finite.model.layout();
        for &n in servers {
            let state: Vec<f64> = fp.x.iter().zip(&r.v).map(|(x, v)| x + v / n as f64).collect();
            warnings.extend(mfq::state_space_warning(&layout, n as f64, &state));
        }
    }
    // models without queues (generic ones such as SIS): the first state entry
    // (`entry`: the state entry's name, `x[1]` for a family's first member, as the simulation's extras name it)
    let (quantity, entry, mean_field, correction) = match fp.observables.mean_queue_length {
        Some(l) => ("mean queue length per server".to_string(), None, l, refined.as_ref().and_then(|r| r.mean_queue_length_correction)),
        None if !fp.x.is_empty() => {
            let entry = finite.model.layout().name(0);
            (format!("E[{entry}]"), Some(entry), fp.x[0], refined.as_ref().map(|r| r.v[0]))
        }
        None => return Err(Failure::input("the model has no queue lengths to compare")),
    };
    let mut rows = Vec::new();
    let mut cmp = SizeComparison {
        quantity: quantity.clone(),
        servers: Vec::new(),
        simulated: Vec::new(),
        half_width: Vec::new(),
        mean_field,
        refined_c: correction,
        mean_field_label: "mean field".into(),
        lines: Vec::new(),
    };
    for &n in servers {
        // equal work per size: small systems run longer (time x 1000/N for N < 1000)
        let mut opts = sim.options(n, quiet, deadline);
        opts.time *= (1000.0 / n as f64).max(1.0);
        opts.buffer = finite.buffer.map(|k| k as u32);
        let rep = match m.simulate(&opts) {
            Ok(rep) => rep,
            Err(mfq::Error::Simulation(e)) => return Err(sim_failure(&model_args.model, e)),
            Err(e) => return Err(Failure::input(format!("{}: {e}", model_args.model.display()))),
        };
        // a simulation cut short by the deadline has no estimates to compare (its partial ones are dropped)
        if rep.status != SimStatus::Completed {
            return Err(time_limit_failure(model_args, &format!("the simulation at N = {n} stopped")));
        }
        // the quantity compared: the mean queue length, or the first state entry by name
        let estimate = match &entry {
            None => rep.mean_queue_length,
            Some(entry) => rep.extras.get(entry).copied(),
        };
        let Some(simulated) = estimate.filter(|e| e.mean.is_finite()) else {
            return Err(Failure::input(format!("{}: the simulation at N = {n} has no estimate of {quantity}", model_args.model.display())));
        };
        let refined_value = cmp.refined_c.map(|c| mean_field + c / n as f64);
        // a chain absorbed before the measured time (the logistic SIS extinct at small N): its
        // `0 +- 0` is said, in the row and as a warning
        let absorption = mfq::report_absorption(finite.model.as_ref(), &rep, Some(&fp.x));
        if let Some(a) = &absorption {
            warnings.push(format!("N = {n}: {}", a.message));
        }
        rows.push(json!({
            "servers": n,
            "simulated": simulated,
            "absorbing": absorption.as_ref().map(|a| &a.state),
            "absorption": absorption,
            "buffer": finite.buffer,
            "mean_field": mean_field,
            "refined_mean_field": refined_value,
            "events_per_second": rep.events_per_second,
        }));
        cmp.servers.push(n as f64);
        cmp.simulated.push(simulated.mean);
        cmp.half_width.push(simulated.half_width);
    }
    Ok((cmp, rows, warnings))
}

/// `mfq compare`: mean field, refined mean field and simulation side by side.
pub fn compare(args: &CompareArgs) -> Result<(), Failure> {
    let deadline = deadline_of(&args.model)?;
    let file = load(&args.model)?;
    crate::commands::check_out(&args.model, true)?;
    crate::commands::refuse_unstable_region(&args.model, &file)?;
    let (cmp, rows, warnings) = comparison(&args.model, &file, &args.servers, &args.sim, args.model.json, &deadline)?;
    let mean_field = cmp.mean_field;
    let dir = out_dir(&args.model.out, &args.model.model);
    let svg = size_comparison_svg(&cmp, &format!("Simulation vs mean field: {}", title(&file))).map_err(|e| Failure::io(e.to_string()))?;
    write_atomic(&dir.join("compare.svg"), svg.as_bytes())?;
    let notes = file.model.notes();
    let value = json!({ "quantity": cmp.quantity, "rows": rows, "refined_c": cmp.refined_c, "model": file.model, "warnings": warnings, "notes": notes });
    write_atomic(&dir.join("compare.json"), serde_json::to_string_pretty(&value).unwrap_or_default().as_bytes())?;
    if args.model.json {
        outln!("{value}");
        return Ok(());
    }
    let buffer = match file.truncation.levels {
        Some(k) if rows.first().is_some_and(|r| !r["buffer"].is_null()) => {
            format!(" (finite buffer K = {k} in the mean field and the simulation)")
        }
        _ => String::new(),
    };
    outln!("{}: {}{buffer}", title(&file), cmp.quantity);
    match cmp.refined_c {
        Some(c) => {
            let sign = if c < 0.0 { '-' } else { '+' };
            outln!("  mean field {mean_field:.6}; refined mean field {mean_field:.6} {sign} {:.6}/N", c.abs())
        }
        None if !warnings.is_empty() => outln!("  mean field {mean_field:.6}; refined mean field not drawn (see the warning)"),
        None => outln!("  mean field {mean_field:.6}; refined mean field not available for this model"),
    }
    outln!("  {:>8} {:>12} {:>12} {:>22}", "N", "mean field", "refined", "simulation (95% CI)");
    for (i, n) in args.servers.iter().enumerate() {
        let refined = cmp.refined_c.map_or("-".to_string(), |c| format!("{:.6}", mean_field + c / *n as f64));
        outln!("  {:>8} {:>12.6} {:>12} {:>12.6} +- {:.6}", n, mean_field, refined, cmp.simulated[i], cmp.half_width[i]);
    }
    for w in &warnings {
        outln!("  warning: {w}");
    }
    for n in &notes {
        outln!("  note: {n}");
    }
    outln!("wrote {} and compare.json", dir.join("compare.svg").display());
    Ok(())
}

/// `mfq simulate` for a generic model: the N-object population process of its transitions,
/// started at the mean-field fixed point (rounded to multiples of 1/N), or at `[model.initial]`
/// when that fixed point is unstable ([`mfq::population_equilibrium`]). It observes the time
/// average of every state entry, printed beside the fixed point (`--json`, `--out
/// DIR/simulation.json`); nothing else (no throughput, loss or wait: docs/simulation.md).
fn simulate_generic(args: &SimulateArgs, servers: usize, file: &mfq_model::ModelFile, deadline: &Deadline) -> Result<(), Failure> {
    // the options' ranges of every simulation (two batches at least: a half width needs them)
    args.sim.options(servers, true, deadline).validate().map_err(|e| sim_failure(&args.model.model, e))?;
    let fp = fixed_point_of(&args.model, file, deadline)?;
    require_converged(&fp, file)?;
    let model = file
        .model
        .build_within(fp.truncation.levels, deadline)
        .map_err(|e| crate::commands::fixed_point_failure(&args.model, &e.into()))?;
    let opts = mfq_sim::population::PopulationOptions {
        objects: servers,
        time: args.sim.time,
        warmup: args.sim.warmup,
        batches: args.sim.batches,
        replications: args.sim.replications,
        seed: args.sim.seed,
        deadline: deadline.clone(),
        ..Default::default()
    };
    let fp_opts = mfq_fixpoint::FixedPointOptions { deadline: deadline.clone(), ..Default::default() };
    let eq = mfq::population_equilibrium(model.as_ref(), &fp, &fp_opts);
    let fp = &eq.fixed_point;
    let rep = mfq_sim::population::simulate_population(model.as_ref(), &eq.start, &opts).map_err(|e| sim_failure(&args.model.model, e))?;
    // a chain absorbed before the measured time (the logistic SIS extinct at small N): said
    let absorption = (rep.status == SimStatus::Completed)
        .then(|| mfq::population_absorption(model.as_ref(), &rep.mean, rep.events, servers, args.sim.warmup, Some(&fp.x)))
        .flatten();
    if rep.status != SimStatus::Completed {
        let f = time_limit_failure(&args.model, &format!("the simulation stopped after {} events", rep.events));
        if args.model.json {
            outln!("{}", with_error(serde_json::json!({ "events": rep.events, "status": rep.status, "fixed_point": fp.x }), &f));
        } else {
            outln!("{}  population process with N = {} objects ({})", title(file), servers, args.model.model.display());
            outln!("  stopped at the wall-clock limit after {} events: no estimates", rep.events);
        }
        return Err(Failure { json_printed: args.model.json, ..f });
    }
    let value = serde_json::json!({
        "mean": rep.mean,
        "fixed_point": fp.x,
        "fixed_point_stability": fp.local,
        "fixed_point_from": eq.found_from,
        "unstable_fixed_point_from_empty": eq.unstable_from_empty.as_ref().map(|u| &u.x),
        "start": eq.start,
        "events": rep.events,
        "stopped_early": rep.stopped_early,
        "absorbing": absorption.as_ref().map(|a| &a.state),
        "absorption": absorption,
    });
    if let Some(dir) = &args.model.out {
        write_atomic(&dir.join("simulation.json"), serde_json::to_string_pretty(&value).unwrap_or_default().as_bytes())?;
    }
    if args.model.json {
        outln!("{value}");
        return Ok(());
    }
    outln!("{}  population process with N = {} objects ({})", title(file), servers, args.model.model.display());
    outln!("  {:<12} {:>14} {:>24}", "state", "mean field", "simulation (95% CI)");
    let layout = model.layout();
    let rows = crate::commands::MAX_PRINTED_ROWS;
    for (i, e) in rep.mean.iter().enumerate().take(rows) {
        outln!("  {:<12} {:>14.6} {:>14.6} +- {:.6}", layout.name(i), fp.x[i], e.mean, e.half_width);
    }
    if rep.mean.len() > rows {
        outln!("  ... {} entries more (all {} in --json and --out's simulation.json)", rep.mean.len() - rows, rep.mean.len());
    }
    outln!("  {} events{}", rep.events, if rep.stopped_early { " (stopped early at the event limit)" } else { "" });
    let state = |x: &[f64]| state_summary(&layout, x);
    let abscissa = |fp: &mfq_fixpoint::FixedPoint| fp.spectral_abscissa.map_or(String::new(), |a| format!(", spectral abscissa {a:.3e}"));
    if let Some(u) = &eq.unstable_from_empty {
        // an unstable point that is absorbing for the finite system (the SIS's X = 0) is left by
        // the mean field, but never by the finite system once there
        let absorbing = absorption.as_ref().is_some_and(|a| a.state.iter().zip(&u.x).all(|(p, q)| (p - q).abs() <= 1e-9));
        let there = if absorbing {
            "the mean field leaves it from any nearby state, but it is absorbing for the finite system (see below)"
        } else {
            "the finite system does not stay there"
        };
        outln!(
            "  mean field: the fixed point reached from [model.initial] ({}{}), where the simulation started; the fixed point \
             found from the empty state, {}, is UNSTABLE{}: {there}",
            fp.local.map_or("stability not computed".to_string(), |k| k.to_string()),
            abscissa(fp),
            state(&u.x),
            abscissa(u)
        );
    } else if fp.local == Some(mfq_fixpoint::EquilibriumKind::Unstable) {
        let started = if eq.start == fp.x {
            "the simulation started there".to_string()
        } else {
            format!("the simulation started at [model.initial], {}", state(&eq.start))
        };
        // (an absorbing start is never left: said below, not "the finite system leaves it")
        let at_start = absorption.as_ref().is_some_and(|a| a.when == mfq::AbsorbedWhen::AtStart);
        let leaves = if at_start { "" } else { "the finite system leaves it; " };
        outln!("  mean field: an UNSTABLE fixed point{} (no stable one was reached from [model.initial]): {leaves}{started}", abscissa(fp));
    }
    if let Some(a) = &absorption {
        outln!("  {}: {}", if a.when == mfq::AbsorbedWhen::Probably { "PROBABLY ABSORBED" } else { "ABSORBED" }, a.message);
    }
    Ok(())
}

/// A state `x` in a message: its first six entries by name (`X = 0.500000`), then `...`.
fn state_summary(layout: &mfq_model::StateLayout, x: &[f64]) -> String {
    let shown: Vec<String> = x.iter().enumerate().take(6).map(|(i, v)| format!("{} = {v:.6}", layout.name(i))).collect();
    format!("{}{}", shown.join(", "), if x.len() > 6 { ", ..." } else { "" })
}
