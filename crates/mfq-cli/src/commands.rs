//! One function per command; each reads a model file, calls the library, writes output.

use crate::output::{csv_field, ensure_writable, num, out_dir, write_atomic};
use crate::{Failure, ModelArgs};
use clap::Args;
use mfq_fixpoint::{solve_spec, EquilibriumKind, FixedPoint, FixedPointError, FixedPointOptions, FixedPointStatus, DEGENERACY_TOL};
use mfq_model::{Deadline, MeanFieldModel, ModelError, ModelFile, Stability};
use mfq_ode::{Method, SolveOptions};
use mfq_plot::{distance_svg, tail_svg, trajectory_svg, DistanceSeries};
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The command's wall-clock deadline, `--max-seconds` from now ([`Deadline::none`] without
/// the option). Taken when the command starts: one limit for every phase (building the model,
/// the solvers, the simulation), whose messages state the limit as given.
///
/// # Errors
/// Invalid input when the limit is not a finite number of seconds `> 0`.
pub(crate) fn deadline_of(args: &ModelArgs) -> Result<Deadline, Failure> {
    Deadline::checked_after("max_seconds", args.max_seconds)
        .map_err(|e| Failure::input(format!("{}: {e} (--max-seconds)", args.model.display())))
}

/// The failure of a fixed-point solve that did not start or finish: unstable parameters (exit
/// code 3), a model whose construction the deadline stopped (4), bad input (2).
pub(crate) fn fixed_point_failure(args: &ModelArgs, e: &FixedPointError) -> Failure {
    match e {
        FixedPointError::Unstable { .. } => Failure::unstable(format!("{}: {e}", args.model.display())),
        FixedPointError::Model(ModelError::Interrupted { .. }) => {
            Failure::no_convergence(format!("{}: {e}; no files written", args.model.display()))
        }
        _ => Failure::input(format!("{}: {e}", args.model.display())),
    }
}

/// The failure of a command stopped by `--max-seconds` (exit code 4): `what` stopped, where.
pub(crate) fn time_limit_failure(args: &ModelArgs, what: &str) -> Failure {
    Failure::no_convergence(format!(
        "{}: {what} at the wall-clock limit --max-seconds {}; no files written",
        args.model.display(),
        mfq_model::short_number(args.max_seconds.unwrap_or(0.0))
    ))
}

/// Checks before the work that the command's output directory can be written
/// ([`ensure_writable`]): always for commands that write files, with `--out` only for those
/// whose files are optional (`fixed-point`, `simulate`).
///
/// # Errors
/// An I/O failure (exit code 5) naming the directory.
pub(crate) fn check_out(args: &ModelArgs, always: bool) -> Result<(), Failure> {
    if always || args.out.is_some() {
        ensure_writable(&out_dir(&args.out, &args.model))?;
    }
    Ok(())
}

/// `value` with the JSON error object of `failure` as its `error` key (one JSON document for a
/// run that stopped, see docs/errors.md).
pub(crate) fn with_error(mut value: serde_json::Value, failure: &Failure) -> serde_json::Value {
    value["error"] = json!({ "kind": failure.kind, "code": failure.code, "message": failure.message });
    value
}

/// Reads and validates a model file with its overrides.
pub(crate) fn load(args: &ModelArgs) -> Result<ModelFile, Failure> {
    let path = &args.model;
    let text = std::fs::read_to_string(path).map_err(|e| {
        // a missing file, a directory or bytes that are not UTF-8 are bad input, not I/O failures
        use std::io::ErrorKind::{InvalidData, IsADirectory, NotFound};
        let code = if matches!(e.kind(), NotFound | InvalidData | IsADirectory) { Failure::input } else { Failure::io };
        code(format!("cannot read model file {}: {e}", path.display()))
    })?;
    // within --max-seconds: a file of many transitions takes seconds to parse
    let deadline = deadline_of(args)?;
    let mut file = ModelFile::parse_within(&text, &args.set, &deadline).map_err(|e| match e {
        ModelError::Interrupted { .. } => Failure::no_convergence(format!("{}: {e}; no files written", path.display())),
        _ => Failure::input(format!("{}: {e}", path.display())),
    })?;
    crate::figstyle::note_model_file(&file)?;
    // titles end up in SVG text: no control characters; overridden parameters are shown
    if let Some(t) = &mut file.title {
        t.retain(|c| !c.is_control());
        if !args.set.is_empty() {
            t.push_str(&format!(" [--set {}]", args.set.join(", ")));
        }
    }
    Ok(file)
}

pub(crate) fn title(file: &ModelFile) -> String {
    file.title.clone().unwrap_or_else(|| {
        // no title in the file: the kind and its scalar parameters, as TOML-like text (tables
        // and lists, e.g. a generic model's transitions, are left out; at most about 160 characters)
        let v = serde_json::to_value(&file.model).unwrap_or_default();
        let text = match v.as_object() {
            Some(map) => map
                .iter()
                .filter(|(_, v)| !(v.is_object() || v.is_array() || v.is_null()))
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join(", ")
                .replace('"', ""),
            None => file.model.kind().to_string(),
        };
        match text.char_indices().nth(160) {
            Some((cut, _)) => format!("{} ...", &text[..cut]),
            None => text,
        }
    })
}

/// The fixed point of a model file within the command's `deadline` ([`deadline_of`]), with
/// the solver's outcomes mapped to failures.
pub(crate) fn fixed_point_of(args: &ModelArgs, file: &ModelFile, deadline: &Deadline) -> Result<FixedPoint, Failure> {
    let opts = FixedPointOptions { deadline: deadline.clone(), ..Default::default() };
    solve_spec(&file.model, &file.truncation, &opts).map_err(|e| fixed_point_failure(args, &e))
}

/// Fails with exit code 4 when the fixed point did not converge (after output was written).
/// A truncation that ran out of room is never called instability when the model's declared
/// condition says stable (then the solver could not finish), nor when it is unknown.
pub(crate) fn require_converged(fp: &FixedPoint, file: &ModelFile) -> Result<(), Failure> {
    match &fp.status {
        FixedPointStatus::Converged => Ok(()),
        FixedPointStatus::TruncationNotReached { mass } => {
            let levels = fp.truncation.levels;
            let declared = file.model.build_probe(file.model.initial_levels().min(levels)).map(|m| m.stability());
            let why = match declared {
                Ok(Stability::Stable { condition }) => format!(
                    "the model is stable ({condition}) but its tail decays too slowly for this truncation: the solver could \
                     not finish; raise truncation.max_levels"
                ),
                _ => "the model's stability is not known in closed form: either it is unstable or its tail needs more levels; \
                      raise truncation.max_levels to tell"
                    .to_string(),
            };
            Err(Failure::no_convergence(format!(
                "the mass at the truncation level stays x_K = {mass:.3e} > truncation.tol = {:e} at K = {levels} \
                 (truncation.max_levels): {why}",
                fp.truncation.tol
            )))
        }
        FixedPointStatus::TimeLimit { seconds } => Err(Failure::no_convergence(format!(
            "the fixed-point solver stopped at the wall-clock limit --max-seconds {} after {} iterations, residual {:.3e}",
            mfq_model::short_number(*seconds),
            fp.iterations,
            fp.residual
        ))),
        s => Err(Failure::no_convergence(format!(
            "the fixed-point solver stopped without converging ({s}) after {} iterations, residual {:.3e}",
            fp.iterations, fp.residual
        ))),
    }
}

fn fixed_point_json(file: &ModelFile, fp: &FixedPoint) -> serde_json::Value {
    json!({
        "model": file.model,
        "title": file.title,
        "name": fp.model,
        "status": fp.status,
        "x": fp.x,
        "residual": fp.residual,
        "iterations": fp.iterations,
        "total_iterations": fp.total_iterations,
        "jacobian": fp.jacobian,
        "spectral_abscissa": fp.spectral_abscissa,
        "jacobian_norm": fp.jacobian_norm,
        "degeneracy_scale": fp.degeneracy_scale,
        "local_stability": fp.local,
        "truncation": fp.truncation,
        "tail_polish": fp.tail_polish,
        "mean_queue_length": fp.observables.mean_queue_length,
        "mean_response_time": fp.observables.mean_response_time,
        "throughput": fp.observables.throughput,
        "prob_wait": fp.observables.prob_wait,
        "loss_probability": fp.observables.loss_probability,
        "extras": fp.observables.extras,
        "notes": file.model.notes(),
    })
}

/// Exit 3 (unstable, with the reason) when the file's parameters have only a stability region
/// (identical copies) and lie outside it: every command that would build a model checks this
/// first, since the model built there only carries the verdict (its drift is not the system's).
pub fn refuse_unstable_region(args: &ModelArgs, file: &ModelFile) -> Result<(), Failure> {
    match file.model.stability_only().map(|r| r.stability) {
        Some(Stability::Unstable { reason }) => Err(Failure::unstable(format!("{}: unstable: {reason}", args.model.display()))),
        _ => Ok(()),
    }
}

/// `Some(exit)` when the file's parameters have a stability region but no queue-length model
/// (redundancy with identical copies): the region is printed as data (text or JSON, exit 0),
/// or the command fails as unstable (exit 3) when the parameters are outside it. The JSON is
/// also written to `write` (the command's file: `fixed-point.json` with `--out`, `report.json`),
/// after it is printed.
fn stability_region_only(args: &ModelArgs, file: &ModelFile, write: Option<PathBuf>) -> Option<Result<(), Failure>> {
    let region = file.model.stability_only()?;
    if let Stability::Unstable { reason } = &region.stability {
        return Some(Err(Failure::unstable(format!("{}: unstable: {reason}", args.model.display()))));
    }
    let value = json!({ "model": file.model, "title": file.title, "stability": region.stability, "stability_region": region });
    let written = |path: &PathBuf| {
        write_atomic(path, serde_json::to_string_pretty(&value).unwrap_or_default().as_bytes())
            .map_err(|f| Failure { json_printed: args.json, ..f })
    };
    if args.json {
        outln!("{value}");
        return Some(write.as_ref().map_or(Ok(()), written));
    }
    let mut s = String::new();
    let _ = writeln!(s, "{}  ({})", title(file), args.model.display());
    let verdict = match &region.stability {
        Stability::Stable { condition } => format!("stable: {condition}"),
        Stability::Unstable { reason } => format!("unstable: {reason}"),
        Stability::Unknown { note } => format!("unknown: {note}"),
    };
    let _ = writeln!(s, "  stability           {verdict}");
    let _ = writeln!(s, "  stability region    {}", region.region);
    if let Some(l) = region.lambda_max {
        let _ = writeln!(s, "  lambda_max          {l:.10} ({})", region.lambda_max_source);
    }
    let _ = writeln!(s, "  note                {}", region.note);
    out!("{s}");
    Some(write.as_ref().map_or(Ok(()), |path| {
        written(path)?;
        outln!("wrote {}", path.display());
        Ok(())
    }))
}

fn fixed_point_text(args: &ModelArgs, file: &ModelFile, fp: &FixedPoint, stability: &Stability) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}  ({})", title(file), args.model.display());
    let _ = writeln!(s, "  model               {}", fp.model);
    let status = match &fp.status {
        FixedPointStatus::Converged => "converged".to_string(),
        other => format!("NOT converged: {other}"),
    };
    if has_levels(fp) {
        let _ = writeln!(
            s,
            "  status              {status} (residual max|f(x*)| = {:.2e}, {} iterations over K = {}, {} Jacobian)",
            fp.residual,
            fp.total_iterations,
            fp.truncation.tried.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
            fp.jacobian
        );
        let t = &fp.truncation;
        let _ = if file.truncation.buffer {
            writeln!(s, "  truncation          K = {} (the system's finite buffer), x_K = {:.2e}", t.levels, t.mass_at_truncation)
        } else {
            writeln!(
                s,
                "  truncation          K = {}, x_K = {:.2e} ({}, tol {:e})",
                t.levels,
                t.mass_at_truncation,
                if t.automatic { "automatic" } else { "fixed" },
                t.tol
            )
        };
    } else {
        // no queue-length tail, or a state of fixed size: there is no truncation level
        let _ = writeln!(
            s,
            "  status              {status} (residual max|f(x*)| = {:.2e}, {} Newton/PTC iterations, {} Jacobian)",
            fp.residual, fp.total_iterations, fp.jacobian
        );
        let n = fp.x.len();
        let _ = writeln!(s, "  state               {n} {} of fixed size (no truncation level)", if n == 1 { "entry" } else { "entries" });
    }
    let p = &fp.tail_polish;
    if p.steps > 0 && !p.last_step_kept {
        let _ = writeln!(
            s,
            "  tail polish         {} relative Newton step(s); the last was round-off of the iterative linear solves (it raised \
             the residual and moved entries >= {:.0e} by up to {:.1e} of themselves) and was not kept: those entries are \
             below what the solves resolve",
            p.steps, p.floor, p.last_relative_step
        );
    } else if p.steps > 0 {
        let _ = writeln!(
            s,
            "  tail polish         {} relative Newton step(s); the last moved no entry >= {:.0e} by more than {:.1e} of itself (stop at {:.0e})",
            p.steps, p.floor, p.last_relative_step, p.step_tol
        );
    }
    let cond = match stability {
        Stability::Stable { condition } => condition.clone(),
        Stability::Unstable { reason } => reason.clone(),
        Stability::Unknown { note } => note.clone(),
    };
    let _ = writeln!(s, "  stability condition {cond}");
    if let (Some(a), Some(kind)) = (fp.spectral_abscissa, fp.local) {
        let _ = writeln!(s, "  spectral abscissa   {a:.6e} ({})", local_words(kind, fp.degeneracy_scale.unwrap_or(1.0)));
    }
    if !matches!(fp.status, FixedPointStatus::Converged) {
        // the last iterate is not a fixed point: its observables would read as results
        let _ = writeln!(s, "  observables         not reported: the solve did not converge (the JSON has the last iterate)");
    } else {
        observables_text(&mut s, fp);
    }
    for note in file.model.notes() {
        let _ = writeln!(s, "  note                {note}");
    }
    s
}

/// The observables of a converged fixed point, a line each.
fn observables_text(s: &mut String, fp: &FixedPoint) {
    let o = &fp.observables;
    if let Some(v) = o.mean_queue_length {
        let _ = writeln!(s, "  mean queue length   {}", num(v));
    }
    if let Some(v) = o.mean_response_time {
        let _ = writeln!(s, "  mean response time  {}", num(v));
    }
    if let Some(v) = o.prob_wait {
        let _ = writeln!(s, "  P(wait)             {}", num(v));
    }
    // with the automatic truncation (an infinite buffer) a loss at or below tol is the
    // truncation's, not the system's: not printed (as `sweep` reports it as 0)
    let truncation_only = has_levels(fp) && fp.truncation.automatic && o.loss_probability <= fp.truncation.tol;
    if o.loss_probability > 0.0 && !truncation_only {
        let label = if has_levels(fp) { "P(loss at K)" } else { "P(loss)" };
        let _ = writeln!(s, "  {label:<20}{:.2e}", o.loss_probability);
    }
    for (name, v) in &o.extras {
        // counts (clients, servers, a batch size) are whole numbers: printed as such
        let count = matches!(name.as_str(), "clients" | "servers" | "nodes" | "optimal_b" | "mean_field_optimal_b" | "sign_changes");
        let shown = if count && v.fract() == 0.0 && v.abs() < 1e15 { format!("{v:.0}") } else { num(*v) };
        let _ = writeln!(s, "  {name:<19} {shown}");
    }
}

/// The words for the local character of `x*` (the shared rule of `mfq check`,
/// [`mfq_fixpoint::LocalStability::kind`]); `scale` is the test's scale
/// ([`mfq_fixpoint::degeneracy_scale`]).
fn local_words(kind: EquilibriumKind, scale: f64) -> String {
    match kind {
        EquilibriumKind::Stable => "locally stable".into(),
        EquilibriumKind::Unstable => "NOT locally stable: an eigenvalue with positive real part".into(),
        EquilibriumKind::Degenerate => format!(
            "degenerate: within {:.1e} (= {DEGENERACY_TOL:e} x max(1, min(||J||, |lambda_2|))) of zero, local stability \
             inconclusive; see `mfq check`",
            DEGENERACY_TOL * scale.max(1.0)
        ),
        EquilibriumKind::Unknown => "eigenvalues not computed".into(),
    }
}

/// Most rows of a tail (or state) table printed on the terminal; the CSV has every row.
pub(crate) const MAX_PRINTED_ROWS: usize = 20;

/// The tail `P(Q >= k)` as a table, down to the first entry below 1e-14 and at most
/// [`MAX_PRINTED_ROWS`] rows: the first ones, `...`, and the last one (every row is in
/// `tail.csv`).
fn tail_table(fp: &FixedPoint) -> String {
    let tail = &fp.observables.tail;
    let shown = tail.iter().position(|v| *v < 1e-14).map_or(tail.len(), |k| k + 1);
    let mut s = String::from("  k   P(Q >= k)\n");
    let row = |s: &mut String, k: usize| {
        let _ = writeln!(s, "  {:<3} {:.10e}", k + 1, tail[k].clamp(0.0, 1.0));
    };
    if shown <= MAX_PRINTED_ROWS {
        (0..shown).for_each(|k| row(&mut s, k));
    } else {
        (0..MAX_PRINTED_ROWS - 2).for_each(|k| row(&mut s, k));
        let _ =
            writeln!(s, "  ... {} rows more (all {} rows, k = 1..{}, in tail.csv)", shown - MAX_PRINTED_ROWS + 1, tail.len(), tail.len());
        row(&mut s, shown - 1);
    }
    s
}

fn tail_csv(fp: &FixedPoint) -> String {
    let mut s = String::from("k,p_q_ge_k\n");
    for (k, v) in fp.observables.tail.iter().enumerate() {
        let _ = writeln!(s, "{},{:e}", k + 1, v.clamp(0.0, 1.0));
    }
    s
}

/// Whether the fixed point has a queue-length tail, hence a meaningful truncation level `K`
/// (the queueing kinds); the others (batch, moldable, mpr-mac, cdn-cache, redundancy-graph,
/// opinion, generic models without a tail family) have a state of fixed size.
fn has_tail(fp: &FixedPoint) -> bool {
    !fp.observables.tail.is_empty()
}

/// Whether the fixed point has a truncation level `K` worth printing: a tail, and a state
/// whose size depends on `K` (the caching system has a tail of requests in service but a
/// state of fixed size, [`mfq_fixpoint::TruncationReport::fixed_size`]).
fn has_levels(fp: &FixedPoint) -> bool {
    has_tail(fp) && !fp.truncation.fixed_size
}

/// The state `x*` of a model without a queue-length tail, `i,x` per line (`state.csv`).
fn state_csv(fp: &FixedPoint) -> String {
    let mut s = String::from("i,x\n");
    for (i, v) in fp.x.iter().enumerate() {
        let _ = writeln!(s, "{},{v:e}", i + 1);
    }
    s
}

/// The state `x*` as a table of at most [`MAX_PRINTED_ROWS`] rows (every row is in `state.csv`).
fn state_table(fp: &FixedPoint) -> String {
    let mut s = String::from("  i   x*_i\n");
    for (i, v) in fp.x.iter().enumerate().take(MAX_PRINTED_ROWS) {
        let _ = writeln!(s, "  {:<3} {}", i + 1, num(*v));
    }
    if fp.x.len() > MAX_PRINTED_ROWS {
        let _ = writeln!(s, "  ... {} entries more (all {} in state.csv)", fp.x.len() - MAX_PRINTED_ROWS, fp.x.len());
    }
    s
}

/// `mfq fixed-point`.
pub fn fixed_point(args: &ModelArgs) -> Result<(), Failure> {
    let deadline = deadline_of(args)?;
    let file = load(args)?;
    check_out(args, false)?;
    if let Some(done) = stability_region_only(args, &file, args.out.as_ref().map(|d| d.join("fixed-point.json"))) {
        return done;
    }
    let fp = fixed_point_of(args, &file, &deadline)?;
    // the probe: the same stability verdict without a second costly construction
    let stability =
        file.truncation.stability_of(file.model.build_probe(fp.truncation.levels).map_err(|e| Failure::input(e.to_string()))?.stability());
    // the JSON value only when it is printed or written (K = 1e7 levels: a second of work)
    let value = if args.json || args.out.is_some() { fixed_point_json(&file, &fp) } else { serde_json::Value::Null };
    let outcome = require_converged(&fp, &file);
    if args.json {
        // one JSON document: the result, plus the error object when the solve did not converge
        let mut value = value.clone();
        if let Err(f) = &outcome {
            value["error"] = json!({ "kind": f.kind, "code": f.code, "message": f.message });
        }
        outln!("{value}");
    } else {
        out!("{}", fixed_point_text(args, &file, &fp, &stability));
    }
    // written after the result is printed, so a failing write loses nothing; a solve stopped by
    // --max-seconds writes no file, as every command
    if let Some(dir) = args.out.as_ref().filter(|_| !matches!(fp.status, FixedPointStatus::TimeLimit { .. })) {
        write_atomic(&dir.join("fixed-point.json"), serde_json::to_string_pretty(&value).unwrap_or_default().as_bytes())
            .map_err(|f| Failure { json_printed: args.json, ..f })?;
    }
    outcome.map_err(|mut f| {
        f.json_printed = args.json;
        f
    })
}

/// `mfq tail`.
pub fn tail(args: &ModelArgs) -> Result<(), Failure> {
    let deadline = deadline_of(args)?;
    let file = load(args)?;
    check_out(args, true)?;
    let fp = fixed_point_of(args, &file, &deadline)?;
    require_converged(&fp, &file)?;
    if !has_tail(&fp) {
        return Err(Failure::input(format!(
            "{}: `mfq tail` does not apply to kind {}: its state ({} {}, no queue-length levels) has no tail \
             P(Q >= k); `mfq fixed-point` prints the state and `mfq report` writes it to state.csv",
            args.model.display(),
            file.model.kind(),
            fp.x.len(),
            if fp.x.len() == 1 { "entry" } else { "entries" }
        )));
    }
    let dir = out_dir(&args.out, &args.model);
    write_atomic(&dir.join("tail.csv"), tail_csv(&fp).as_bytes())?;
    let svg =
        tail_svg(&[(fp.model.as_str(), &fp)], &format!("Queue-length tail: {}", title(&file))).map_err(|e| Failure::io(e.to_string()))?;
    write_atomic(&dir.join("tail.svg"), svg.as_bytes())?;
    if args.json {
        outln!(
            "{}",
            json!({ "tail": fp.observables.tail, "truncation": fp.truncation, "files": [dir.join("tail.csv"), dir.join("tail.svg")] })
        );
    } else {
        if has_levels(&fp) {
            outln!("{}  P(Q >= k) at the fixed point (K = {})", title(&file), fp.truncation.levels);
        } else {
            outln!("{}  P(Q >= k) at the fixed point (state of fixed size)", title(&file));
        }
        out!("{}", tail_table(&fp));
        outln!("wrote {} and {}", dir.join("tail.csv").display(), dir.join("tail.svg").display());
    }
    Ok(())
}

/// Options of `mfq solve`.
#[derive(Args, Debug)]
pub struct SolveArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Final time (mean job sizes)
    #[arg(long, default_value_t = 50.0, allow_negative_numbers = true)]
    pub t_end: f64,
    /// Initial state: empty, full, initial (the model file's [model.initial] state), or comma-separated values x_1,x_2,... (padded with zeros)
    #[arg(long, default_value = "empty")]
    pub x0: String,
    /// Integration method
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// Relative tolerance
    #[arg(long, default_value_t = 1e-8)]
    pub rtol: f64,
    /// Absolute tolerance
    #[arg(long, default_value_t = 1e-12)]
    pub atol: f64,
    /// Truncation level K for the transient (default: the fixed point's automatic K, at least 20)
    #[arg(long)]
    pub levels: Option<usize>,
    /// Also the transient refined mean field x(t) + V(t)/N (+ A(t)/N^2) for N servers (objects),
    /// written as refined-trajectory.csv (docs/refined.md)
    #[arg(long, value_name = "N")]
    pub refined: Option<f64>,
    /// Order of the transient refined mean field with --refined: 1 or 2
    #[arg(long, default_value_t = 1)]
    pub order: u8,
}

/// Integration methods on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum MethodArg {
    /// BDF for sparse models of 2000 states or more (pair, triplet approximations); otherwise Dopri5, switching to Rosenbrock23 when stiff
    Auto,
    /// Dormand-Prince 5(4)
    Dopri5,
    /// Dormand-Prince 8(5,3)
    Dop853,
    /// Rosenbrock 2(3), L-stable
    Rosenbrock23,
    /// Variable-order BDF/NDF (orders 1-5, MATLAB's ode15s), Jacobian and LU held across steps: large stiff models
    Bdf,
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Self {
        match m {
            MethodArg::Auto => Method::Auto,
            MethodArg::Dopri5 => Method::Dopri5,
            MethodArg::Dop853 => Method::Dop853,
            MethodArg::Rosenbrock23 => Method::Rosenbrock23,
            MethodArg::Bdf => Method::Bdf,
        }
    }
}

fn initial_state(model: &dyn MeanFieldModel, spec: &str) -> Result<Vec<f64>, Failure> {
    let n = model.dim();
    // a named start (`empty`, `full`, `initial`): the front door's, as Python's `x0="full"` reads it
    if let Some(x) = mfq::named_start(model, spec).map_err(|e| Failure::input(format!("--x0 {spec}: {e}")))? {
        return Ok(x);
    }
    let list = spec;
    let mut x = Vec::new();
    for part in list.split(',') {
        let v: f64 = part.trim().parse().map_err(|_| {
            Failure::input(format!(
                "--x0 {list}: '{part}' is not a number; allowed: empty, full, initial (the file's [model.initial]), or numbers in [0, 1]"
            ))
        })?;
        if !(0.0..=1.0).contains(&v) {
            let i = x.len();
            let name = if i < n { model.layout().name(i) } else { format!("entry {}", i + 1) };
            return Err(Failure::input(format!(
                "--x0 {list}: entry {} ({name}) = {v} breaks 0 <= {name} <= 1; allowed: numbers in [0, 1]",
                i + 1
            )));
        }
        x.push(v);
    }
    if x.len() > n {
        return Err(Failure::input(format!(
            "--x0 has {} values, the model has {}; allowed: at most {} (missing ones are 0)",
            x.len(),
            crate::output::count(n, "state entry", "state entries"),
            crate::output::count(n, "value", "values")
        )));
    }
    x.resize(n, 0.0);
    // the state must mean something in the model's layout (monotone tails, phases
    // summing to at most 1, ...): name the broken constraint and the entry
    if let Some(v) = model.layout().largest_violation(&x).filter(|v| v.amount > mfq_ode::INVARIANT_TOL) {
        return Err(Failure::input(format!(
            "--x0 {list}: the start state breaks the constraint {} of the model's layout by {:.3e} at entry {} \
             (values padded with zeros); allowed: a feasible state ({})",
            v.constraint,
            v.amount,
            v.index + 1,
            model.layout().rules()
        )));
    }
    // and keep the model's conservation laws (the front door's check, as for Python)
    mfq::check_laws(model, &x).map_err(|e| Failure::input(format!("--x0 {list}: {e}")))?;
    Ok(x)
}

fn run_transient(model: &dyn MeanFieldModel, x0: &[f64], opts: &SolveOptions, job: &Deadline) -> Result<mfq_ode::Trajectory, Failure> {
    let tr = mfq_ode::solve_within(model, x0, opts, job).map_err(|e| Failure::input(e.to_string()))?;
    // a transition that pushes the state out where the run ends (the front door's check, as
    // for Python's `solve`): the fixed-point solve refuses such a model, but a fixed --levels
    // skips it
    mfq::leaving_state_space(model, &tr).map_err(|e| Failure::input(e.to_string()))?;
    Ok(tr)
}

fn levels_for(args: &ModelArgs, file: &ModelFile, fixed: Option<usize>, deadline: &Deadline) -> Result<usize, Failure> {
    if let Some(k) = fixed.or(file.truncation.levels) {
        return Ok(k);
    }
    // the fixed point's automatic K, so the transient and the fixed point share one truncation
    let opts = FixedPointOptions { deadline: deadline.clone(), ..Default::default() };
    match solve_spec(&file.model, &file.truncation, &opts) {
        Ok(fp) => Ok(fp.truncation.levels.max(20)),
        Err(FixedPointError::Unstable { .. }) => Ok(50),
        Err(e) => Err(fixed_point_failure(args, &e)),
    }
}

fn trajectory_csv(model: &dyn MeanFieldModel, tr: &mfq_ode::Trajectory) -> String {
    let layout = model.layout();
    let mut s = String::from("t");
    for i in 0..model.dim() {
        let _ = write!(s, ",{}", csv_field(&layout.name(i)));
    }
    s.push('\n');
    for (t, x) in tr.t.iter().zip(&tr.x) {
        let _ = write!(s, "{t:e}");
        for v in x {
            let _ = write!(s, ",{v:e}");
        }
        s.push('\n');
    }
    s
}

/// `mfq solve`. A run stopped by `--max-seconds` writes no files; any run that stops early
/// exits with code 4 after printing what it reached.
pub fn solve(args: &SolveArgs) -> Result<(), Failure> {
    let deadline = deadline_of(&args.model)?;
    let file = load(&args.model)?;
    check_out(&args.model, true)?;
    if !(args.t_end.is_finite() && args.t_end > 0.0) {
        return Err(Failure::input(format!("--t-end {}: allowed: a finite time > 0", args.t_end)));
    }
    if let Some(k) = args.levels.filter(|k| !(1..=10_000_000).contains(k)) {
        return Err(Failure::input(format!("--levels {k}: allowed: an integer in [1, 10000000]")));
    }
    refuse_unstable_region(&args.model, &file)?;
    if let Some(note) = file.model.dynamics_note() {
        return Err(Failure::input(format!("{}: no transient: {note}", args.model.model.display())));
    }
    let k = levels_for(&args.model, &file, args.levels, &deadline)?;
    let model = file.model.build_within(k, &deadline).map_err(|e| fixed_point_failure(&args.model, &e.into()))?;
    let x0 = initial_state(model.as_ref(), &args.x0)?;
    let opts = SolveOptions { t_end: args.t_end, rtol: args.rtol, atol: args.atol, method: args.method.into(), ..Default::default() };
    if let Some(n) = args.refined {
        return solve_refined(args, &file, model.as_ref(), &x0, n, &opts, &deadline);
    }
    let tr = run_transient(model.as_ref(), &x0, &opts, &deadline)?;
    let timed_out = matches!(tr.status, mfq_ode::Status::TimeLimit { .. });
    let dir = out_dir(&args.model.out, &args.model.model);
    if !timed_out {
        write_atomic(&dir.join("trajectory.csv"), trajectory_csv(model.as_ref(), &tr).as_bytes())?;
        let shown: Vec<(usize, String)> = (0..model.dim().min(6)).map(|i| (i, model.layout().name(i))).collect();
        let svg = trajectory_svg(&tr.t, &tr.x, &shown, &format!("Transient: {}", title(&file))).map_err(|e| Failure::io(e.to_string()))?;
        write_atomic(&dir.join("trajectory.svg"), svg.as_bytes())?;
    }
    let outcome = match &tr.status {
        s if s.is_success() => Ok(()),
        mfq_ode::Status::TimeLimit { t } => Err(time_limit_failure(&args.model, &format!("the integration stopped at t = {}", num(*t)))),
        s => Err(Failure::no_convergence(format!("the integration stopped early: {s}"))),
    };
    if args.model.json {
        // one JSON document: the result, with the error object when the run stopped early;
        // serialised straight from the trajectory into a buffer (a stopped run of K = 2000
        // holds ~10^7 numbers: built as a `Value` and printed line-buffered, that took longer
        // than the --max-seconds it was stopped by)
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<serde_json::Value>,
            invariants: &'a Option<mfq_ode::InvariantBreaks>,
            levels: usize,
            stats: &'a mfq_ode::Stats,
            status: &'a mfq_ode::Status,
            t: &'a [f64],
            x: &'a [Vec<f64>],
        }
        let error = outcome.as_ref().err().map(|f| with_error(json!({}), f)["error"].take());
        let doc = Doc { error, invariants: &tr.invariants, levels: k, stats: &tr.stats, status: &tr.status, t: &tr.t, x: &tr.x };
        crate::output::print_json(&doc);
    } else {
        outln!("{}  transient from {} to t = {}", title(&file), args.x0, args.t_end);
        // a state of fixed size (the SIS's X) has no truncation level to name
        let size = if mfq::Model::new(file.model.clone(), file.truncation).has_levels() {
            format!("K = {k}")
        } else {
            format!("{} (no truncation level)", crate::output::count(model.dim(), "state entry", "state entries"))
        };
        outln!("  status: {}; {} steps ({} rejected), {size}", tr.status, tr.stats.accepted_steps, tr.stats.rejected_steps);
        if let Some(b) = &tr.invariants {
            outln!("  WARNING: {b}");
        }
        if let Some(t) = tr.stats.switched_to_stiff_at {
            outln!("  switched to the stiff method (Rosenbrock23) at t = {t:.4}");
        } else if tr.stats.stiff_method == Some(Method::Bdf) {
            let s = &tr.stats;
            outln!(
                "  method: BDF ({} Jacobians, {} LU factorisations, {} drift evaluations)",
                s.jacobian_evals,
                s.factorisations,
                s.drift_evals
            );
        }
        let last = tr.last();
        let shown: Vec<String> = last.iter().take(6).map(|v| format!("{v:.6}")).collect();
        outln!("  x(t = {}) = {} ...", num(tr.t_last()), shown.join(", "));
        if timed_out {
            outln!(
                "  stopped at the wall-clock limit (--max-seconds {}): no files written",
                mfq_model::short_number(args.model.max_seconds.unwrap_or(0.0))
            );
        } else {
            outln!("wrote {} and {}", dir.join("trajectory.csv").display(), dir.join("trajectory.svg").display());
        }
    }
    outcome.map_err(|mut f| {
        f.json_printed = args.model.json;
        f
    })
}

/// `mfq solve --refined N`: the moment equations of the refined mean field along the trajectory,
/// on a grid of 200 steps. The mean field's own transient (`opts`) is run first and refused as
/// plain `mfq solve` refuses it when a transition pushes its state out of the state space
/// ([`run_transient`], `mfq::leaving_state_space`): the moment equations are not projected onto
/// the state space, so at a fixed `--levels` (no fixed point to refuse the model) they ran on
/// past the face (`X += 1` at the constant rate 5 wrote X = 25 at t = 5, exit 0).
fn solve_refined(
    args: &SolveArgs,
    file: &ModelFile,
    model: &dyn MeanFieldModel,
    x0: &[f64],
    n: f64,
    opts: &SolveOptions,
    deadline: &mfq_model::Deadline,
) -> Result<(), Failure> {
    if !(n.is_finite() && n >= 1.0) {
        return Err(Failure::input(format!("--refined {n}: allowed: a number of servers (objects) N >= 1")));
    }
    // a run the deadline stops here leaves the moment equations to stop at it, with their message
    run_transient(model, x0, opts, deadline)?;
    let tol = (args.rtol.max(1e-12), args.atol.max(1e-14));
    let tr = mfq_fixpoint::refined_transient(model, x0, args.t_end, 200, args.order, tol, deadline).map_err(|e| match e {
        mfq_fixpoint::RefinedError::Stopped { .. } => {
            Failure::no_convergence(format!("{}: {e}; no files written", args.model.model.display()))
        }
        e => Failure::input(format!("{}: {e}", args.model.model.display())),
    })?;
    let layout = model.layout();
    let mut csv = String::from("t");
    for i in 0..model.dim() {
        let _ = write!(csv, ",{}", csv_field(&layout.name(i)));
    }
    for i in 0..model.dim() {
        let _ = write!(csv, ",{}", csv_field(&format!("refined_{}", layout.name(i))));
    }
    csv.push('\n');
    let rows: Vec<Vec<f64>> = (0..tr.t.len()).map(|i| tr.at(i, n)).collect();
    for (i, t) in tr.t.iter().enumerate() {
        let _ = write!(csv, "{t:e}");
        for v in tr.x[i].iter().chain(&rows[i]) {
            let _ = write!(csv, ",{v:e}");
        }
        csv.push('\n');
    }
    let dir = out_dir(&args.model.out, &args.model.model);
    write_atomic(&dir.join("refined-trajectory.csv"), csv.as_bytes())?;
    if args.model.json {
        outln!("{}", json!({ "servers": n, "order": tr.order, "t": tr.t, "x": tr.x, "v": tr.v, "a": tr.a, "refined": rows }));
    } else {
        outln!("{}  transient refined mean field of order {} for N = {n}, from {} to t = {}", title(file), tr.order, args.x0, args.t_end);
        let last = tr.t.len() - 1;
        let shown: Vec<String> = tr.x[last].iter().zip(&rows[last]).take(6).map(|(x, r)| format!("{x:.6} -> {r:.6}")).collect();
        outln!("  x(t) -> refined at t = {}: {} ...", tr.t[last], shown.join(", "));
        outln!("wrote {}", dir.join("refined-trajectory.csv").display());
    }
    Ok(())
}

/// The files of a fixed point's tail: `tail.csv` and `tail.svg`, or `state.csv` for a model
/// without a queue-length tail ([`has_tail`]); their contents and their paths.
#[allow(clippy::type_complexity)]
fn tail_files(
    file: &ModelFile,
    fp: &FixedPoint,
    dir: &std::path::Path,
) -> Result<(Vec<(std::path::PathBuf, Vec<u8>)>, Vec<std::path::PathBuf>), Failure> {
    if !has_tail(fp) {
        return Ok((vec![(dir.join("state.csv"), state_csv(fp).into_bytes())], vec![dir.join("state.csv")]));
    }
    let tail_plot =
        tail_svg(&[(fp.model.as_str(), fp)], &format!("Queue-length tail: {}", title(file))).map_err(|e| Failure::io(e.to_string()))?;
    Ok((
        vec![(dir.join("tail.csv"), tail_csv(fp).into_bytes()), (dir.join("tail.svg"), tail_plot.into_bytes())],
        vec![dir.join("tail.csv"), dir.join("tail.svg")],
    ))
}

/// `tail:` and the tail table, or `state:` and the state for a model without a tail.
fn tail_or_state_table(fp: &FixedPoint) -> String {
    if has_tail(fp) {
        format!("tail:\n{}", tail_table(fp))
    } else {
        format!("state:\n{}", state_table(fp))
    }
}

/// `report` for a large model or one without dynamics: the fixed point, its tail (CSV, SVG)
/// and `report.json`, with the transient and the attraction check marked as skipped and `why`.
fn report_without_dynamics(
    args: &ModelArgs,
    file: &ModelFile,
    fp: &FixedPoint,
    stability: &Stability,
    dir: &std::path::Path,
    why: &str,
) -> Result<(), Failure> {
    let (mut set, mut files) = tail_files(file, fp, dir)?;
    files.insert(0, dir.join("report.json"));
    let mut value = fixed_point_json(file, fp);
    value["stability"] = json!(stability);
    value["attraction"] = json!({ "skipped": why });
    value["transient"] = json!({ "skipped": why });
    value["files"] = json!(files);
    set.push((dir.join("report.json"), serde_json::to_string_pretty(&value).unwrap_or_default().into_bytes()));
    crate::output::write_all_atomic(&set)?;
    if args.json {
        outln!("{value}");
    } else {
        out!("{}", fixed_point_text(args, file, fp, stability));
        outln!("  transient           skipped: {why}");
        outln!("  attraction          skipped: {why}");
        out!("{}", tail_or_state_table(fp));
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        outln!("wrote {}", names.join(", "));
    }
    Ok(())
}

/// `mfq report`: the main job.
pub fn report(args: &ModelArgs) -> Result<(), Failure> {
    let deadline = deadline_of(args)?;
    let file = load(args)?;
    check_out(args, true)?;
    if let Some(done) = stability_region_only(args, &file, Some(out_dir(&args.out, &args.model).join("report.json"))) {
        return done;
    }
    // the report is assembled by the library (the Python package calls the same function)
    let opts = mfq::ReportOptions { deadline, ..Default::default() };
    let report = mfq::report::report(&file.model, &file.truncation, &opts).map_err(|e| match e {
        mfq::Error::FixedPoint(e) => fixed_point_failure(args, &e),
        mfq::Error::Model(e) => fixed_point_failure(args, &e.into()),
        _ => Failure::input(format!("{}: {e}", args.model.display())),
    })?;
    let (fp, stability) = (&report.fixed_point, &report.stability);
    if let Err(f) = require_converged(fp, &file) {
        // as `fixed-point`: what the solver reached (with the error object under --json), no file
        if args.json {
            outln!("{}", with_error(fixed_point_json(&file, fp), &f));
        } else {
            out!("{}", fixed_point_text(args, &file, fp, stability));
        }
        return Err(Failure { json_printed: args.json, ..f });
    }
    let dir = out_dir(&args.out, &args.model);
    let (tr, distance, check, starts) = match &report.dynamics {
        mfq::Dynamics::Done { transient, distance, check, starts } => (transient, distance, check, *starts),
        mfq::Dynamics::Skipped { reason } => return report_without_dynamics(args, &file, fp, stability, &dir, reason),
        _ => return Err(Failure::no_convergence(format!("{}: the report has no dynamics", args.model.display()))),
    };
    // stopped by --max-seconds: the fixed point is printed, no file is written
    if let Some(what) = report.stopped() {
        let f = time_limit_failure(args, what);
        if args.json {
            outln!("{}", with_error(fixed_point_json(&file, fp), &f));
        } else {
            out!("{}", fixed_point_text(args, &file, fp, stability));
        }
        return Err(Failure { json_printed: args.json, ..f });
    }
    let series = DistanceSeries { label: "from the empty state".into(), t: tr.t.clone(), distance: distance.clone() };
    let rate = fp.spectral_abscissa.map(|a| -a);
    let name = title(&file);
    let conv_file = dir.join("convergence.svg");
    let (tail_set, tail_paths) = tail_files(&file, fp, &dir)?;
    let conv_plot = distance_svg(std::slice::from_ref(&series), rate, &format!("Distance to the fixed point: {name}"))
        .map_err(|e| Failure::io(e.to_string()))?;
    let check_plots = crate::output::check_plots(&dir, check)?;
    let mut value = fixed_point_json(&file, fp);
    value["stability"] = json!(stability);
    value["attraction"] = json!({ "verdict": check.verdict, "summary": check.summary(), "starts": starts });
    value["transient"] = json!({
        "from": "empty",
        "status": tr.status,
        "t_end": tr.t_last(),
        "steps": tr.stats.accepted_steps,
        "switched_to_stiff_at": tr.stats.switched_to_stiff_at,
        "invariants": tr.invariants,
        "final_distance": series.distance.last(),
    });
    let mut files = vec![dir.join("report.json")];
    files.extend(tail_paths);
    files.push(conv_file.clone());
    files.extend(check_plots.iter().map(|(p, _)| p.clone()));
    value["files"] = json!(files);
    let mut set = tail_set;
    set.extend([
        (conv_file, conv_plot.into_bytes()),
        (dir.join("report.json"), serde_json::to_string_pretty(&value).unwrap_or_default().into_bytes()),
    ]);
    set.extend(check_plots);
    crate::output::write_all_atomic(&set)?;
    if args.json {
        outln!("{value}");
    } else {
        out!("{}", fixed_point_text(args, &file, fp, stability));
        let how = match &tr.status {
            mfq_ode::Status::SteadyState { t } => format!("drift below 1e-10 at t = {t:.2}"),
            mfq_ode::Status::Success => format!("reached t = {:.2}", tr.t_last()),
            other => format!("stopped early ({other}) at t = {:.2}", tr.t_last()),
        };
        outln!("  transient           from empty: {how}, distance to x* {:.2e}", series.distance.last().copied().unwrap_or(0.0));
        // the verdict with what it rests on (a sampled cooperativity test on the truncated
        // system for `certified`), not only the number of starts
        if has_levels(fp) {
            outln!("  attraction          {} (truncated at K = {}; `mfq check` for more starts)", check.verdict, fp.truncation.levels);
        } else {
            outln!("  attraction          {} (`mfq check` for more starts)", check.verdict);
        }
        out!("{}", tail_or_state_table(fp));
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        outln!("wrote {}", names.join(", "));
    }
    Ok(())
}

/// `mfq models`: the registry's kinds, their parameters and sources (`--markdown`: the
/// guide's table).
pub fn models(json: bool, markdown: bool) -> Result<(), Failure> {
    if markdown {
        out!("{}", mfq::guide_table());
        return Ok(());
    }
    if json {
        outln!("{}", serde_json::to_string(&mfq::catalog()).unwrap_or_default());
        return Ok(());
    }
    out!("{}", mfq::catalog_text());
    Ok(())
}
