//! `mfq refined`: the refined mean field (x*, V, A and the refined estimates per N), no simulation.

use crate::commands::{deadline_of, load, title};
use crate::output::write_all_atomic;
use crate::{Failure, ModelArgs};
use clap::Args;
use mfq::{Model, RefinedOptions, RefinedReport};
use mfq_fixpoint::{FixedPointError, FixedPointOptions, FixedPointStatus};
use mfq_model::ModelError;
use serde_json::json;
use std::fmt::Write as _;

/// Options of `mfq refined`.
#[derive(Args, Debug)]
pub struct RefinedArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Order of the expansion: 1 (x* + V/N) or 2 (x* + V/N + A/N^2)
    #[arg(long, default_value_t = 1)]
    pub order: u8,
    /// System sizes N (servers, objects) for the refined estimates, comma-separated
    #[arg(long, value_delimiter = ',', default_value = "10,20,50")]
    pub servers: Vec<f64>,
}

/// Whether `r` is at a degenerate fixed point, where the refined terms do not exist
/// ([`mfq::degeneracy_warning`]): its `V`, `A` and estimates (of order `1/eigenvalue`) are then
/// neither printed nor written, only `x*`, the mean-field observables and the warning.
fn degenerate(r: &RefinedReport) -> bool {
    mfq::degeneracy_warning(&r.fixed_point).is_some()
}

/// Reads one observable off an estimate.
type Getter<'a> = &'a dyn Fn(&mfq::RefinedEstimate) -> Option<f64>;

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.8}"))
}

/// Per-level CSV: k (or the state entry's name), x*, V (A), then the refined state per N; at a
/// degenerate fixed point ([`mfq::degeneracy_warning`]) x* alone.
fn levels_csv(names: &[String], r: &RefinedReport) -> String {
    let t = &r.terms;
    if degenerate(r) {
        let mut s = String::from("entry,x\n");
        for (name, x) in names.iter().zip(&t.x) {
            let _ = writeln!(s, "{},{x:e}", crate::output::csv_field(name));
        }
        return s;
    }
    let mut s = String::from("entry,x,v");
    if t.a.is_some() {
        s.push_str(",a");
    }
    for e in &r.estimates {
        let _ = write!(s, ",refined_n{}", e.servers);
    }
    s.push('\n');
    for i in 0..t.x.len() {
        let _ = write!(s, "{},{:e},{:e}", crate::output::csv_field(&names[i]), t.x[i], t.v[i]);
        if let Some(a) = &t.a {
            let _ = write!(s, ",{:e}", a[i]);
        }
        for e in &r.estimates {
            let _ = write!(s, ",{:e}", e.state[i]);
        }
        s.push('\n');
    }
    s
}

/// The observables, one row per size N (the first row, N = inf, is the mean field).
fn estimates_csv(r: &RefinedReport) -> String {
    let mut s = String::from("servers,mean_queue_length,mean_response_time,prob_wait");
    let extras: Vec<&String> = r.mean_field.iter().flat_map(|m| m.extras.iter().map(|e| &e.0)).collect();
    for name in &extras {
        let _ = write!(s, ",{name}");
    }
    let tail_len = r.mean_field.as_ref().map_or(0, |m| m.tail.len());
    for k in 1..=tail_len {
        let _ = write!(s, ",p_q_ge_{k}");
    }
    s.push('\n');
    let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:e}"));
    let estimates = if degenerate(r) { &[][..] } else { &r.estimates[..] };
    for e in r.mean_field.iter().chain(estimates) {
        let _ = write!(s, "{},{},{},{}", e.servers, f(e.mean_queue_length), f(e.mean_response_time), f(e.prob_wait));
        // by name: the extras not refined have a mean-field value only
        for name in &extras {
            let _ = write!(s, ",{}", f(e.extras.iter().find(|x| &&x.0 == name).map(|x| x.1)));
        }
        for v in &e.tail {
            let _ = write!(s, ",{v:e}");
        }
        s.push('\n');
    }
    s
}

fn text(args: &RefinedArgs, name: &str, names: &[String], r: &RefinedReport) -> String {
    let t = &r.terms;
    let deg = degenerate(r);
    let estimates = if deg { &[][..] } else { &r.estimates[..] };
    let mut s = String::new();
    let _ = writeln!(s, "{name}  ({})", args.model.model.display());
    // a state of fixed size (the SIS's X) has no truncation level to name
    let at = if r.fixed_point.truncation.fixed_size { String::new() } else { format!(" at K = {}", r.fixed_point.truncation.levels) };
    let _ = writeln!(
        s,
        "  refined mean field of order {}{at} ({}), Lyapunov residual {:.1e}, terms {:.3} ms, job {:.3} ms",
        t.order,
        crate::output::count(t.x.len(), "state entry", "state entries"),
        t.lyapunov_residual,
        r.terms_seconds * 1e3,
        r.wall_seconds * 1e3
    );
    if deg {
        let _ = writeln!(s, "  V, A and the refined estimates: none (degenerate fixed point, see the warning); x* and the mean field:");
    } else {
        let _ = write!(s, "  sum V = {:.8}", t.sum_v);
        if let Some(a) = t.sum_a {
            let _ = write!(s, ", sum A = {a:.8}");
        }
        s.push('\n');
    }
    let _ = write!(s, "  {:<10} {:>16}", "entry", "x*");
    if !deg {
        let _ = write!(s, " {:>16}", "V");
        if t.a.is_some() {
            let _ = write!(s, " {:>16}", "A");
        }
    }
    for e in estimates {
        let _ = write!(s, " {:>16}", format!("N = {}", e.servers));
    }
    s.push('\n');
    for i in 0..t.x.len() {
        let _ = write!(s, "  {:<10} {:>16.9e}", names[i], t.x[i]);
        if !deg {
            let _ = write!(s, " {:>16.9e}", t.v[i]);
            if let Some(a) = &t.a {
                let _ = write!(s, " {:>16.9e}", a[i]);
            }
        }
        for e in estimates {
            let _ = write!(s, " {:>16.9e}", e.state[i]);
        }
        s.push('\n');
        if t.x[i].abs() < 1e-14 && (deg || t.v[i].abs() < 1e-14) && i + 1 < t.x.len() {
            let _ = writeln!(s, "  ... (entries {}..{} below 1e-14)", i + 2, t.x.len());
            break;
        }
    }
    let mf = r.mean_field.as_ref();
    // the label column as wide as the longest extra's name
    let w = mf.map_or(0, |m| m.extras.iter().map(|e| e.0.chars().count()).max().unwrap_or(0)).max(20);
    let _ = write!(s, "  {:<w$} {:>14}", "observable", "mean field");
    for e in estimates {
        let _ = write!(s, " {:>14}", format!("N = {}", e.servers));
    }
    s.push('\n');
    let rows: [(&str, Getter); 3] =
        [("mean queue length", &|e| e.mean_queue_length), ("mean response time", &|e| e.mean_response_time), ("P(wait)", &|e| e.prob_wait)];
    for (label, get) in rows {
        if mf.and_then(get).is_none() {
            continue;
        }
        let _ = write!(s, "  {label:<w$} {:>14}", opt(mf.and_then(get)));
        for e in estimates {
            let _ = write!(s, " {:>14}", opt(get(e)));
        }
        s.push('\n');
    }
    for (label, v) in mf.map(|m| m.extras.clone()).unwrap_or_default().iter() {
        let _ = write!(s, "  {label:<w$} {:>14}", opt(Some(*v)));
        // by name: an extra not refined has its mean-field value only
        for e in estimates {
            let _ = write!(s, " {:>14}", opt(e.extras.iter().find(|x| &x.0 == label).map(|x| x.1)));
        }
        s.push('\n');
    }
    s
}

/// `mfq refined`.
pub fn refined(args: &RefinedArgs) -> Result<(), Failure> {
    let deadline = deadline_of(&args.model)?;
    let file = load(&args.model)?;
    let path = args.model.model.display().to_string();
    if !(1..=2).contains(&args.order) {
        return Err(Failure::input(format!("--order {}: allowed: 1 (x* + V/N) or 2 (x* + V/N + A/N^2)", args.order)));
    }
    crate::commands::refuse_unstable_region(&args.model, &file)?;
    if let Some(note) = file.model.dynamics_note() {
        return Err(Failure::input(format!("{path}: no refined mean field: {note}")));
    }
    let model = Model::new(file.model.clone(), file.truncation);
    let opts = RefinedOptions {
        order: args.order,
        servers: args.servers.clone(),
        fixed_point: FixedPointOptions { deadline: deadline.clone(), ..Default::default() },
    };
    let r = model.refined_terms(&opts).map_err(|e| match e {
        mfq::Error::FixedPoint(FixedPointError::Unstable { .. }) => Failure::unstable(format!("{path}: {e}")),
        mfq::Error::NotAFixedPoint { .. } => Failure::no_convergence(format!("{path}: the fixed point did not converge: {e}")),
        mfq::Error::Model(ModelError::Interrupted { .. })
        | mfq::Error::FixedPoint(FixedPointError::Model(ModelError::Interrupted { .. })) => {
            Failure::no_convergence(format!("{path}: {e}; no files written"))
        }
        _ => Failure::input(format!("{path}: {e}")),
    })?;
    if !matches!(r.fixed_point.status, FixedPointStatus::Converged) {
        return Err(Failure::no_convergence(format!("{path}: the fixed-point solver stopped: {}", r.fixed_point.status)));
    }
    let built = file.model.build(r.fixed_point.truncation.levels).map_err(|e| Failure::input(e.to_string()))?;
    let names: Vec<String> = (0..built.dim()).map(|i| built.layout().name(i)).collect();
    let deg = degenerate(&r);
    // at a degenerate fixed point the terms do not exist: the first warning says so, and the
    // sizes' state-space warnings (about estimates of order 1/eigenvalue) would only repeat it
    let warnings: Vec<&String> = r.warnings.iter().take(if deg { 1 } else { usize::MAX }).collect();
    let notes = file.model.notes();
    let none = |v: serde_json::Value| if deg { serde_json::Value::Null } else { v };
    let value = json!({
        "warnings": warnings,
        "notes": notes,
        "model": file.model,
        "title": file.title,
        "name": r.fixed_point.model,
        "order": r.terms.order,
        "levels": r.fixed_point.truncation.levels,
        "entries": names,
        "x": r.terms.x,
        "v": none(json!(r.terms.v)),
        "a": none(json!(r.terms.a)),
        "sum_v": none(json!(r.terms.sum_v)),
        "sum_a": none(json!(r.terms.sum_a)),
        "lyapunov_residual": r.terms.lyapunov_residual,
        "mean_field": r.mean_field,
        "estimates": none(json!(r.estimates)),
        "expansion": none(json!(r.expansion)),
        "terms_seconds": r.terms_seconds,
        "wall_seconds": r.wall_seconds,
    });
    if let Some(dir) = &args.model.out {
        write_all_atomic(&[
            (dir.join("refined.json"), serde_json::to_string_pretty(&value).unwrap_or_default().into_bytes()),
            (dir.join("refined-levels.csv"), levels_csv(&names, &r).into_bytes()),
            (dir.join("refined-estimates.csv"), estimates_csv(&r).into_bytes()),
        ])?;
    }
    if args.model.json {
        outln!("{value}");
    } else {
        out!("{}", text(args, &title(&file), &names, &r));
        for w in warnings {
            outln!("  warning: {w}");
        }
        for n in &notes {
            outln!("  note: {n}");
        }
        if let Some(dir) = &args.model.out {
            outln!("wrote {}, refined-levels.csv, refined-estimates.csv", dir.join("refined.json").display());
        }
    }
    Ok(())
}
