//! `mfq exact`: the exact N-server (N-object) chain beside the mean field and the refined mean
//! field, through the front door ([`mfq::Model::exact_comparison`]).

use crate::commands::{time_limit_failure, title, with_error};
use crate::output::write_atomic;
use crate::{Failure, ModelArgs};
use clap::Args;
use mfq::{Error, ExactComparison, ExactMethod, ExactOptions, ExactStatus};
use mfq_sim::exact::ExactError;

/// Options of `mfq exact`.
#[derive(Args, Debug)]
pub struct ExactArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// System sizes N, comma-separated
    #[arg(long, value_delimiter = ',', default_value = "10")]
    pub servers: Vec<usize>,
    /// Buffer K of every server (sets truncation.levels; queueing models need one)
    #[arg(long, value_name = "K")]
    pub buffer: Option<usize>,
    /// Solver: auto (the cut recursion for one-entry skip-free chains, sparse LU up to 2000 states and for banded one-entry chains, iterative above), lu (direct: sparse LU or the cut recursion), iterative
    #[arg(long, default_value = "auto", value_parser = ["auto", "lu", "iterative"])]
    pub method: String,
    /// Refuse chains with more states than this (memory: ~300 bytes per state)
    #[arg(long, default_value_t = 4_000_000)]
    pub max_states: usize,
}

fn failure(args: &ExactArgs, e: Error) -> Failure {
    match e {
        Error::Exact(ExactError::TimeLimit { phase, .. }) => {
            time_limit_failure(&args.model, &format!("the exact chain stopped while {phase}"))
        }
        e => Failure::input(format!("{}: {e}", args.model.model.display())),
    }
}

/// `mfq exact`. Stopped by `--max-seconds` or Ctrl-C, it prints the sizes finished (and the
/// one in progress, marked) and exits with code 4, writing no file.
pub fn exact(args: &ExactArgs) -> Result<(), Failure> {
    let deadline = crate::interrupt::interruptible_deadline(&args.model)?;
    if args.servers.is_empty() || args.servers.contains(&0) {
        return Err(Failure::input("--servers: allowed: a comma-separated list of integers >= 1"));
    }
    let mut model_args = args.model.clone();
    if let Some(k) = args.buffer {
        // named as given (`--buffer 0`), not as the key it sets (truncation.levels)
        mfq::check_buffer("--buffer", k).map_err(|e| Failure::input(format!("{}: {e}", args.model.model.display())))?;
        model_args.set.push(format!("truncation.levels={k}"));
    }
    let file = crate::commands::load(&model_args)?;
    crate::commands::refuse_unstable_region(&model_args, &file)?;
    let model = mfq::Model::new(file.model.clone(), file.truncation);
    let method = match args.method.as_str() {
        "lu" => ExactMethod::SparseLu,
        "iterative" => ExactMethod::Iterative,
        _ => ExactMethod::Auto,
    };
    let opts = ExactOptions { method, max_states: args.max_states, deadline, ..Default::default() };
    let cmp = model.exact_comparison(&args.servers, &opts).map_err(|e| failure(args, e))?;
    let value = serde_json::to_value(&cmp).unwrap_or_default();
    if let Some(why) = &cmp.stopped {
        let f = Failure::no_convergence(format!("{}: {why}; the sizes finished are printed, no files written", args.model.model.display()));
        if args.model.json {
            outln!("{}", with_error(value, &f));
        } else {
            print_text(&title(&file), &cmp);
        }
        return Err(Failure { json_printed: args.model.json, ..f });
    }
    let stopped = cmp.exact.iter().find(|r| r.status != ExactStatus::Converged);
    if let Some(r) = stopped {
        let f = match r.status {
            ExactStatus::TimeLimit { .. } | ExactStatus::Cancelled => {
                time_limit_failure(&args.model, &format!("the iterative solver at N = {} stopped", r.servers))
            }
            _ => Failure::no_convergence(format!(
                "{}: the iterative solver at N = {} used {} iterations, residual {:.2e}",
                args.model.model.display(),
                r.servers,
                r.iterations,
                r.residual
            )),
        };
        if args.model.json {
            outln!("{}", with_error(value, &f));
        }
        return Err(Failure { json_printed: args.model.json, ..f });
    }
    if let Some(dir) = &args.model.out {
        write_atomic(&dir.join("exact.json"), serde_json::to_string_pretty(&value).unwrap_or_default().as_bytes())?;
    }
    if args.model.json {
        outln!("{value}");
    } else {
        print_text(&title(&file), &cmp);
    }
    Ok(())
}

/// One row: the mean field, the refined estimates at `n` (order 1, order 2) and the exact value,
/// with the errors.
fn row(name: &str, mf: f64, first: Option<f64>, second: Option<f64>, exact: f64) {
    let show = |x: Option<f64>| x.map_or(format!("{:>13}", "-"), |x| format!("{x:>13.7}"));
    let err = |x: Option<f64>| x.map_or(format!("{:>10}", "-"), |x| format!("{:>10.2e}", x - exact));
    outln!("    {name:<22} {mf:>13.7} {} {} {exact:>13.7} {} {} {}", show(first), show(second), err(Some(mf)), err(first), err(second));
}

fn print_text(title: &str, cmp: &ExactComparison) {
    let buffer = cmp.buffer.map_or(String::new(), |k| format!(", buffer K = {k} (arrivals to a full server are lost)"));
    outln!("{title}: exact N-object chain{buffer}");
    if let Some(why) = &cmp.refined_unavailable {
        outln!("  refined mean field not available: {why}");
    } else if cmp.refined.as_ref().is_some_and(|r| r.order < 2) {
        outln!("  the 1/N^2 term is not available for this model (the rates depend on too many state entries for its derivative grids)");
    }
    if cmp.fixed_point.local == Some(mfq_fixpoint::EquilibriumKind::Unstable) {
        let a = cmp.fixed_point.spectral_abscissa.map_or(String::new(), |a| format!(" (spectral abscissa {a:.3e})"));
        outln!(
            "  x* (found from the empty state) is UNSTABLE{a}: the mean field from nearby states leaves it (`mfq check` shows the \
             equilibria); x* + V/N describes fluctuations around it, not the finite system"
        );
    }
    let x = &cmp.fixed_point.x;
    let r1 = cmp.refined.as_ref();
    let obs = &cmp.fixed_point.observables;
    for (j, r) in cmp.exact.iter().enumerate() {
        let n = r.servers as f64;
        outln!(
            "  N = {}: {} states, {} transitions, {}, residual {:.1e}, {:.2} s",
            r.servers,
            r.states,
            r.transitions,
            match r.method {
                _ if r.absorbing.is_some() => "no solve (one absorbing state)".to_string(),
                ExactMethod::SparseLu => "sparse LU".to_string(),
                ExactMethod::CutRecursion => "cut recursion (one-entry skip-free chain, exact in logarithms)".to_string(),
                _ => format!("Gauss-Seidel with aggregation, {} iterations", r.iterations),
            },
            r.residual,
            r.build_seconds + r.solve_seconds
        );
        if let Some(state) = &r.absorbing {
            let shown: Vec<String> = cmp.names.iter().zip(state).take(6).map(|(n, v)| format!("{n} = {v}")).collect();
            outln!(
                "    the start state of the search (the empty state), {}, is ABSORBING: no transition has a positive rate there, \
                 so the chain is that one state and its stationary law the point mass there (exact: the finite system, once \
                 there, never leaves); the behaviour before absorption from other states (the quasi-stationary law) is not \
                 computed",
                shown.join(", ")
            );
        }
        if matches!(r.status, ExactStatus::Cancelled | ExactStatus::TimeLimit { .. }) {
            outln!("    stopped before convergence (after {} iterations): no expectations", r.iterations);
            continue;
        }
        outln!(
            "    {:<22} {:>13} {:>13} {:>13} {:>13} {:>10} {:>10} {:>10}",
            "",
            "x*",
            "x* + V/N",
            "+ A/N^2",
            "exact",
            "err x*",
            "err +V/N",
            "err +A/N^2"
        );
        let est = cmp.refined_estimates.get(j);
        let second = |i: usize| r1.filter(|t| t.a.is_some()).and_then(|_| est.map(|e| e.state[i]));
        for (i, e) in r.mean.iter().enumerate().take(30) {
            row(&format!("E[{}]", cmp.names[i]), x[i], r1.map(|t| x[i] + t.v[i] / n), second(i), *e);
        }
        let has_a = r1.is_some_and(|t| t.a.is_some());
        if let (Some(l), Some(le)) = (obs.mean_queue_length, r.observables.mean_queue_length) {
            let c = r1.and_then(|t| t.mean_queue_length_correction).map(|c| l + c / n);
            row("mean queue length", l, c, est.filter(|_| has_a).and_then(|e| e.mean_queue_length), le);
        }
        if let (Some(t), Some(te)) = (obs.mean_response_time, r.observables.mean_response_time) {
            let c = r1.and_then(|r| r.mean_response_time_correction).map(|c| t + c / n);
            row("mean response time", t, c, est.filter(|_| has_a).and_then(|e| e.mean_response_time), te);
        }
        if let (Some(p), Some(pe)) = (obs.prob_wait, r.observables.prob_wait) {
            // the refined P(wait) is expanded to the order of the terms: its column
            let refined = est.and_then(|e| e.prob_wait);
            let (first, second) = if has_a { (None, refined) } else { (refined, None) };
            row("P(wait)", p, first, second, pe);
        }
        if obs.loss_probability > 0.0 || r.observables.loss_probability > 0.0 {
            row("loss probability", obs.loss_probability, None, None, r.observables.loss_probability);
        }
    }
    for line in &cmp.outside {
        outln!("  WARNING: the refined estimate is no state at {line} (the 1/N expansion overshoots at small N)");
    }
}
