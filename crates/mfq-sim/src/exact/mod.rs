//! Exact finite-N answers: the stationary distribution of the continuous-time Markov chain of
//! `N` objects behind a model's transitions, solved numerically, as an independent check of the
//! mean field and of its refinements.
//!
//! # The chain
//!
//! A model whose [`transitions`](MeanFieldModel::transitions) are known is a density-dependent
//! population process (Kurtz 1970; Gast and Van Houdt, "A refined mean field approximation",
//! SIGMETRICS 2017, eq. (1)): with `N` objects, the state `x` (fractions, a point of the
//! lattice `{x : N x integer}`) jumps to `x + l/N` at rate `N beta_l(x)` for each transition
//! `l`. The chain here is that process restricted to the states reachable from a start state
//! (by default the empty state, all zeros, mapped to the feasible set), found by a
//! breadth-first search and indexed by the combinatorial rank of tail-form states (else a hash
//! map of the packed counts `N x`), built once.
//! [`exact`] returns `E[X^N]` per state entry and the expectations of the model's observables.
//!
//! For the tail-form queueing models (`x_k` = fraction of servers with at least `k` jobs,
//! truncated at `K` levels) this chain **is** the `N`-server system with buffer `K`:
//! `N x_k` counts the servers holding at least `k` jobs; an arrival (rate `N lambda`) samples
//! servers uniformly with replacement and joins a server with exactly `k - 1` jobs with
//! probability `x_{k-1}^d - x_k^d` (JSQ(d), Mitzenmacher 2001, eq. (1)), a departure from a
//! server with exactly `k` jobs happens at rate `N (x_k - x_{k+1})`; the model has no
//! transition that creates level `K + 1`, so an arrival whose chosen server already holds `K`
//! jobs (probability `x_K^d`) is **lost**, exactly as [`crate::SimOptions::buffer`] = `K` in the
//! event-driven simulator and as the truncated mean field (`x_1 = lambda (1 - loss)`). JSQ(2)
//! with `N` servers and buffer `K` has `C(N + K, K)` states (occupancy vectors
//! `N >= n_1 >= ... >= n_K >= 0`), all reachable from the empty state.
//!
//! Observables are expectations over the stationary distribution of the model's observables
//! at each state (tail, mean queue length, loss and waiting probabilities: by PASTA, what an
//! arrival sees), except the mean response time, `E[L] / E[throughput]` (Little's law).
//! Extras are matched by name; the ratios among them are derived from the means in the same
//! way: a class's `mean_response_time` is `E[L_j] / E[theta_j]`, its `share_of_jobs` the
//! share of the mean accepted rate (the mean of the per-state ratios is neither).
//!
//! # Solvers
//!
//! - A chain of one state entry that is skip-free in one direction (every transition lowers
//!   the count by at most 1, or raises it by at most 1: a birth-death chain, or batch arrivals
//!   with single departures) ([`ExactMethod::Auto`] and [`ExactMethod::SparseLu`]): the
//!   balance of the flow across each cut, `pi_{c+1} q(c+1, c) = sum_{j <= c} pi_j q(j, > c)`
//!   (the product form for a birth-death chain), all terms positive and kept with a
//!   logarithmic scale, so every state is exact to round-off in relative terms
//!   ([`ExactMethod::CutRecursion`]). The LU pinned at one state loses the mass of a mode
//!   behind a barrier deeper than double precision: a bistable chain at `N = 2000` gave
//!   `E[X] = 0.067` for `0.713` with residual `1e-16`. `--method iterative` on such a chain
//!   is checked against the recursion and refused when it is more than [`ITERATION_CHECK`]
//!   away (the iteration met its tolerance at `E[X] = 0.632` on that chain).
//! - Up to [`DIRECT_LIMIT`] states, and at every size for a one-entry chain of band `b` (its
//!   largest jump) with `b x states` at most 10^7 (its LU costs `O(b^2 states)`)
//!   ([`ExactMethod::Auto`]), or on request: faer's sparse LU of `Q^T` with the equation of one
//!   state replaced by `pi_s = 1`, then normalised. `s` is the state nearest the fixed point
//!   (pinned at an unlikely state, `pi / pi_s` overflows: SIS from the empty state at
//!   `N = 500`); a singular LU or a solution whose residual is NaN or above `1e3`
//!   [`ExactOptions::tol`] is not taken, and the start state is pinned instead; if that fails
//!   too, `Auto` iterates and `SparseLu` refuses with the reason. Above [`DIRECT_LIMIT`]
//!   states the factorisation's peak memory is estimated first from its symbolic fill bound
//!   ([`LU_BYTES_PER_FILL_ENTRY`]) and refused above the job's memory limit
//!   ([`mfq_model::memory::memory_limit`]: `MFQ_MEMORY_LIMIT`, else half the physical memory,
//!   the same limit as the refined terms' dense steps) ([`ExactError::LuTooLarge`]); from 5,000 states it runs on a helper thread that is
//!   abandoned at the deadline ([`ExactError::TimeLimit`], phase `factorising the chain`).
//!   A multi-entry chain with several modes behind deep barriers is not detected: the LU
//!   pinned near the mean field's fixed point can miss a distant mode.
//! - Above: Gauss-Seidel (a forward and a backward sweep) with iterative aggregation-
//!   disaggregation over the states grouped by the sum of their counts (total jobs; Koury,
//!   McAllister and Stewart, SIAM J. Algebraic Discrete Methods 5(2), 1984): the coarse chain
//!   of the aggregates, solved exactly, fixes the slow mode (the total number of jobs), the
//!   sweeps the rest; Anderson mixing accelerates it, and it starts, for tail-form states, from
//!   the multinomial law of independent servers at the mean field. It stops at
//!   `||pi Q||_1 / max_i |q_ii| <` [`ExactOptions::tol`].
//!
//! [`ExactReport::residual`] is `||pi Q||_1 / max_i |q_ii|` of the solution, whichever solver
//! produced it. Memory: about 100 bytes per state plus 24 bytes per transition (a JSQ(2)
//! chain with `K` levels has up to `2 K` transitions per state); see [`ExactOptions::max_states`].

mod chain;
mod guess;
mod solve;

use mfq_model::memory::{human, memory_limit, MEMORY_LIMIT_VAR};
use mfq_model::{Deadline, MeanFieldModel, Observables, StateLayout};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Largest chain that [`ExactMethod::Auto`] solves by sparse LU (but a banded one-entry chain,
/// factored at every size).
pub const DIRECT_LIMIT: usize = 2_000;

/// Largest total-variation distance `sum |pi - pi_exact|` between a converged iterative
/// solution and the cut recursion's law ([`ExactMethod::CutRecursion`]) that [`exact`]
/// accepts when both apply (`--method iterative` on a one-entry skip-free chain).
pub const ITERATION_CHECK: f64 = 1e-6;

/// Which solver [`exact`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExactMethod {
    /// The cut recursion for a one-entry chain skip-free in one direction; else sparse LU up
    /// to [`DIRECT_LIMIT`] states and for a one-entry chain of band `b` with `b x states` at
    /// most 10^7; the iterative solver otherwise.
    Auto,
    /// The direct solver: faer's sparse LU (exact up to round-off; fill-in makes it slow
    /// beyond ~10^5 states), or the cut recursion for a one-entry chain skip-free in one
    /// direction (what the LU computes for such a chain, in logarithms).
    SparseLu,
    /// Gauss-Seidel with aggregation-disaggregation.
    Iterative,
    /// The balance of the flow across each cut of a one-entry chain that is skip-free in one
    /// direction (a birth-death chain: its product form), with logarithmic scaling: exact to
    /// round-off in relative terms at every state, whatever the range of the probabilities.
    /// Reported when [`Auto`](Self::Auto) or [`SparseLu`](Self::SparseLu) used it; requested
    /// on another chain, refused.
    CutRecursion,
}

/// Options of [`exact`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExactOptions {
    /// Number of objects (servers) `N`, `1 ..= 100000`. Default 10.
    pub servers: usize,
    /// Start state of the search (fractions, rounded to multiples of `1/N`); `None` (default):
    /// the empty state (all zeros), mapped to the feasible set.
    pub start: Option<Vec<f64>>,
    /// Refuse chains with more states than this (a memory limit: ~300 bytes per state for
    /// JSQ(2) with 8 levels). Default 4,000,000. (The sparse LU is held to the job's memory
    /// limit instead, [`mfq_model::memory::memory_limit`].)
    pub max_states: usize,
    /// The solver.
    pub method: ExactMethod,
    /// Stop the iterative solver at `||pi Q||_1 / max_i |q_ii| < tol` (`(0, 1e-3]`). Default 1e-13.
    pub tol: f64,
    /// Iterations of the iterative solver (`>= 1`). Default 20000.
    pub max_iterations: usize,
    /// Wall-clock limit and cancel flag (`mfq_model::Deadline`; default none): checked every
    /// 4,096 states while building and every 65,536 states inside the solver's sweeps, so a
    /// Ctrl-C or `--max-seconds` stops the job within a fraction of a second.
    #[serde(skip_deserializing)]
    pub deadline: Deadline,
}

impl Default for ExactOptions {
    fn default() -> Self {
        ExactOptions {
            servers: 10,
            start: None,
            max_states: 4_000_000,
            method: ExactMethod::Auto,
            tol: 1e-13,
            max_iterations: 20_000,
            deadline: Deadline::none(),
        }
    }
}

/// Peak bytes of the sparse LU per entry of its symbolic fill bound
/// (`solve::lu_fill_bound`, an upper bound on the entries of `L` and `U`), as measured on
/// JSQ(2) chains: 0.89 GB at 19,448 states (bound 2.9e8 entries), 3.3 GB at 38,760 states
/// (bound 9.9e8); the bound overstates the fill about fourfold, the 12 bytes of a stored entry
/// make up most of the difference.
pub const LU_BYTES_PER_FILL_ENTRY: f64 = 3.5;

/// Why [`exact`] could not produce an answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ExactError {
    /// An option outside its range.
    #[error("{field} = {value} is not allowed: {allowed}")]
    OutOfRange {
        /// The option.
        field: String,
        /// The value given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// The model does not provide its transitions.
    #[error("model {model} does not provide its transitions (jumps and rates): it has no exact finite-N chain")]
    NoTransitions {
        /// The model's name.
        model: String,
    },
    /// The chain is larger than [`ExactOptions::max_states`].
    #[error("the exact chain has {} states, more than the limit of {limit} (max_states, a memory limit of ~300 bytes per state): use fewer servers or a smaller buffer, or raise the limit", estimate.map_or_else(|| format!("more than {limit}"), |e| format!("{e:.3e}")))]
    TooManyStates {
        /// The state count, when it is known before the search (tail-form models).
        estimate: Option<f64>,
        /// The limit.
        limit: usize,
    },
    /// The sparse LU's factors would not fit the job's memory limit
    /// ([`mfq_model::memory::memory_limit`]): refused before factorising.
    #[error(
        "the sparse LU of the chain's {states} states would need about {} of memory (from the fill bound of its symbolic \
         analysis, {entries:.3e} entries, at {LU_BYTES_PER_FILL_ENTRY} bytes each as measured), more than the limit of {} \
         ({limit_source}): use --method iterative (or auto), fewer servers or a smaller buffer, or raise the limit with {}",
        human(*bytes),
        human(*limit as f64),
        MEMORY_LIMIT_VAR
    )]
    LuTooLarge {
        /// States of the chain.
        states: usize,
        /// Entries of the factors (an upper bound, from the symbolic analysis).
        entries: f64,
        /// Bytes the factorisation would take (estimated from `entries`).
        bytes: f64,
        /// The limit, bytes.
        limit: u64,
        /// Where the limit comes from (`set by MFQ_MEMORY_LIMIT`, `half the physical memory of
        /// 25.3 GB`).
        limit_source: String,
    },
    /// A rate is negative or not finite at a state of the chain.
    #[error("a rate is {rate} at the state x = {state:?}: rates must be finite and >= 0")]
    BadRate {
        /// The state (fractions).
        state: Vec<f64>,
        /// The rate.
        rate: f64,
    },
    /// A transition at positive rate leads off the lattice or out of the feasible set.
    #[error("at the state x = {state:?}: {reason}; the exact chain needs jumps of whole objects that keep the state feasible")]
    BadJump {
        /// The state (fractions).
        state: Vec<f64>,
        /// What is wrong.
        reason: String,
    },
    /// A state without transitions out was reached, and the chain has other states.
    #[error("the chain reaches the absorbing state x = {state:?} from the start state: its stationary distribution sits there (choose another start state)")]
    Absorbing {
        /// The state (fractions).
        state: Vec<f64>,
    },
    /// The wall-clock limit ran out, or the cancel flag was set.
    #[error("{reason} stopped the job while {phase} ({states} states)")]
    TimeLimit {
        /// `the wall-clock limit --max-seconds S` or `cancellation (interrupted)`
        /// ([`Deadline::reason`]).
        reason: String,
        /// What was being done.
        phase: &'static str,
        /// States found so far.
        states: usize,
    },
    /// The sparse LU failed.
    #[error("{0}")]
    Solver(String),
}

fn out_of_range(field: &str, value: impl std::fmt::Display, allowed: &str) -> ExactError {
    ExactError::OutOfRange { field: field.into(), value: value.to_string(), allowed: allowed.into() }
}

/// How the solve ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum ExactStatus {
    /// Solved: by LU, or the iteration met its tolerance.
    Converged,
    /// The iterative solver used all its iterations; the answer is the last iterate.
    MaxIterations,
    /// The wall-clock limit stopped the iterative solver; the answer is the last iterate.
    TimeLimit {
        /// The limit, in seconds.
        seconds: f64,
    },
    /// The cancel flag of [`ExactOptions::deadline`] stopped the iterative solver (Ctrl-C);
    /// the answer is the last iterate.
    Cancelled,
}

/// The exact stationary answers of the `N`-object chain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExactReport {
    /// `N`.
    pub servers: usize,
    /// States of the chain.
    pub states: usize,
    /// Non-zero off-diagonal entries of its generator.
    pub transitions: usize,
    /// `E[X^N]`, per state entry (the model's layout).
    pub mean: Vec<f64>,
    /// Expectations of the model's observables (mean response time by Little's law).
    pub observables: Observables,
    /// `||pi Q||_1 / max_i |q_ii|` of the stationary distribution found.
    pub residual: f64,
    /// The solver used (never `Auto`).
    pub method: ExactMethod,
    /// Iterations of the iterative solver (0 for LU).
    pub iterations: usize,
    /// How the solve ended.
    pub status: ExactStatus,
    /// Time to build the chain, seconds.
    pub build_seconds: f64,
    /// Time to solve it, seconds.
    pub solve_seconds: f64,
    /// The start state (fractions) when it is absorbing: no transition has a positive rate
    /// there, so the chain is that one state and its stationary law the point mass there (no
    /// solve; `method` is then only what would have been used). For a finite-N SIS whose
    /// search starts at `X = 0` this is the exact answer; the behaviour before absorption from
    /// other states (the quasi-stationary law) is not computed. `None` otherwise.
    pub absorbing: Option<Vec<f64>>,
}

/// The number of states of the chain before building it, when the layout tells it: `C(N + K,
/// K)` for a tail-form state of `K` levels (occupancy vectors `N >= n_1 >= ... >= n_K >= 0`),
/// `None` otherwise (the search counts them).
pub fn state_count_estimate(model: &dyn MeanFieldModel, servers: usize) -> Option<f64> {
    match model.layout() {
        StateLayout::Tail { levels } => {
            let (n, k) = (servers as f64, levels as f64);
            // C(N + K, K) = prod_{i=1..min} (N + K + 1 - i) / i, in floating point
            let m = servers.min(levels);
            let big = n.max(k);
            Some((1..=m).fold(1.0, |c, i| c * (big + i as f64) / i as f64))
        }
        _ => None,
    }
}

impl ExactOptions {
    /// Checks the options' ranges.
    ///
    /// # Errors
    /// [`ExactError::OutOfRange`] naming the option.
    pub fn validate(&self) -> Result<(), ExactError> {
        if !(1..=100_000).contains(&self.servers) {
            return Err(out_of_range("servers", self.servers, "an integer in [1, 100000]"));
        }
        if self.max_states == 0 {
            return Err(out_of_range("max_states", 0, "an integer >= 1"));
        }
        if !(self.tol > 0.0 && self.tol <= 1e-3) {
            return Err(out_of_range("tol", self.tol, "a number in (0, 1e-3]"));
        }
        if self.max_iterations == 0 {
            return Err(out_of_range("max_iterations", 0, "an integer >= 1"));
        }
        Ok(())
    }
}

/// The start state's counts `round(N x)`.
fn start_counts(model: &dyn MeanFieldModel, opts: &ExactOptions) -> Result<Vec<u32>, ExactError> {
    let n = opts.servers as f64;
    let mut x = match &opts.start {
        Some(x) if x.len() != model.dim() => {
            return Err(out_of_range("start", format!("{} entries", x.len()), &format!("{} entries (the model's dimension)", model.dim())))
        }
        Some(x) => {
            if let Some(v) = x.iter().find(|v| !(0.0..=1.0).contains(*v)) {
                return Err(out_of_range("start", v, "fractions in [0, 1]"));
            }
            x.clone()
        }
        None => vec![0.0; model.dim()],
    };
    model.project(&mut x);
    Ok(x.iter().map(|v| (v * n).round() as u32).collect())
}

/// The checks [`exact`] makes before it builds anything, for a caller with other work to do
/// first (a fixed point, refined terms): the options, the model's transitions, a whole number
/// of objects in each conservation law (`N value`, [`mfq_model::off_lattice`]: else
/// [`ExactError::OutOfRange`] naming `servers`), the state count where the layout gives it, and the size of a state's key (each of the `dim` entries'
/// counts takes `ceil(log2(N + 1))` bits, 128 in all at most).
///
/// # Errors
/// [`ExactError`] as [`exact`] for these causes.
pub fn check_feasible(model: &dyn MeanFieldModel, opts: &ExactOptions) -> Result<(), ExactError> {
    opts.validate()?;
    if model.transitions().is_none() {
        return Err(ExactError::NoTransitions { model: model.name() });
    }
    // a conservation law must hold a whole number of objects (the check the population
    // process makes too)
    if let Some(allowed) = mfq_model::off_lattice(&model.conservation_laws(), opts.servers) {
        return Err(out_of_range("servers", opts.servers, &allowed));
    }
    if let Some(count) = state_count_estimate(model, opts.servers).filter(|&c| c > opts.max_states as f64) {
        return Err(ExactError::TooManyStates { estimate: Some(count), limit: opts.max_states });
    }
    let bits = chain::bits_for(opts.servers) as usize;
    if model.dim() * bits > 128 {
        return Err(out_of_range(
            "state entries",
            model.dim(),
            &format!(
                "at most {} entries at N = {} ({bits} bits per count, 128 bits per state): a lower truncation level or buffer",
                128 / bits,
                opts.servers
            ),
        ));
    }
    Ok(())
}

/// The exact stationary expectations of the `N`-object chain of `model` (see the module docs).
///
/// # Errors
/// [`ExactError`]: bad options, a model without transitions, a chain over the state limit
/// (refused from the state count before building when the layout gives it), a transition off
/// the lattice, an absorbing state, the wall-clock limit while building or factorising, a
/// sparse LU over the memory limit ([`ExactError::LuTooLarge`]; a malformed `MFQ_MEMORY_LIMIT`:
/// [`ExactError::OutOfRange`] naming it), a failed LU, an iterative
/// solution that the cut recursion contradicts, [`ExactMethod::CutRecursion`] requested for a
/// chain it does not apply to.
pub fn exact(model: &dyn MeanFieldModel, opts: &ExactOptions) -> Result<ExactReport, ExactError> {
    let started = Instant::now();
    let deadline = &opts.deadline;
    check_feasible(model, opts)?;
    // read before any work, so that a malformed MFQ_MEMORY_LIMIT is refused at once
    let memory = memory_limit().map_err(|e| ExactError::OutOfRange {
        field: MEMORY_LIMIT_VAR.into(),
        value: e.quoted(),
        allowed: mfq_model::memory::MEMORY_LIMIT_ALLOWED.into(),
    })?;
    let start = start_counts(model, opts)?;
    let search = chain::Search { n: opts.servers, start: &start, max_states: opts.max_states, deadline };
    let mut chain = chain::build(model, &search)?;
    let build_seconds = started.elapsed().as_secs_f64();
    if chain.len() > 1 {
        if let Some(i) = chain.diag.iter().position(|&d| d <= 0.0) {
            return Err(ExactError::Absorbing { state: fractions(&chain, i) });
        }
    }
    let transitions = chain.out_to.len();
    // a one-entry chain skip-free in one direction: the cut recursion, exact in relative terms
    // (the LU pinned in one mode of a bistable chain lost the other: E[X] = 0.067 for 0.713)
    let stopped = |phase: &'static str| ExactError::TimeLimit { reason: deadline.reason(), phase, states: chain.len() };
    let recursion = if chain.len() > 1 && opts.method != ExactMethod::Iterative {
        solve::cut_recursion(&chain, deadline).map_err(|()| stopped("solving the cut recursion"))?
    } else {
        None
    };
    if opts.method == ExactMethod::CutRecursion && recursion.is_none() && chain.len() > 1 {
        return Err(out_of_range(
            "method",
            "cut-recursion",
            "a chain of one state entry whose transitions all lower its count by at most 1 (or all raise it by at most 1), \
             with flow across every cut; use auto, sparse-lu or iterative",
        ));
    }
    let mut method = match opts.method {
        _ if recursion.is_some() => ExactMethod::CutRecursion,
        ExactMethod::Auto if chain.len() <= DIRECT_LIMIT || solve::banded(&chain) => ExactMethod::SparseLu,
        ExactMethod::Auto => ExactMethod::Iterative,
        m => m,
    };
    // pinned at a likely state (pinned at the start state, `pi / pi_start` overflowed for SIS
    // from the empty state at N = 500), else at the start state
    let pins = || {
        let likely = guess::likely_state(model, &chain, solve::uniformisation_rate(&chain));
        [likely, 0].into_iter().take(if likely == 0 { 1 } else { 2 })
    };
    if method == ExactMethod::SparseLu && chain.len() > DIRECT_LIMIT && !solve::banded(&chain) {
        // the factors' size before factorising (JSQ(2), N = 14, K = 6: 38,760 states took 3.3 GB)
        let entries = solve::lu_fill_bound(&chain).map_err(ExactError::Solver)?;
        let bytes = entries * LU_BYTES_PER_FILL_ENTRY;
        if bytes > memory.bytes as f64 {
            return Err(ExactError::LuTooLarge {
                states: chain.len(),
                entries,
                bytes,
                limit: memory.bytes,
                limit_source: memory.source.clone(),
            });
        }
    }
    let mut lu_error = None;
    let direct = match method {
        _ if chain.len() == 1 => Some((vec![1.0], 0.0)),
        ExactMethod::CutRecursion => recursion.clone().map(|pi| {
            let r = solve::residual_by_rows(&chain, &pi);
            (pi, r)
        }),
        ExactMethod::SparseLu => {
            let mut found = None;
            for pin in pins() {
                match solve::solve_lu_within(&chain, pin, deadline) {
                    Ok(pi) => {
                        let r = solve::residual_by_rows(&chain, &pi);
                        if r.is_nan() || r > 1e3 * opts.tol {
                            lu_error = Some(format!(
                                "the sparse LU's solution has residual {r:.1e}, above the tolerance {:.0e}: the chain's probabilities \
                                 span more than double precision; --method iterative solves it",
                                opts.tol
                            ));
                        } else {
                            found = Some((pi, r));
                            break;
                        }
                    }
                    Err(solve::LuFailure::Stopped) => return Err(stopped("factorising the chain (sparse LU)")),
                    // a pin outside the closed class makes the LU singular
                    Err(solve::LuFailure::Failed(e)) => lu_error = Some(e),
                }
            }
            found
        }
        _ => None,
    };
    if direct.is_none() && opts.method == ExactMethod::SparseLu {
        return Err(ExactError::Solver(lu_error.unwrap_or_else(|| "the sparse LU failed".into())));
    }
    let (pi, residual, iterations, status) = if let Some((pi, r)) = direct {
        (pi, r, 0, ExactStatus::Converged)
    } else {
        method = ExactMethod::Iterative;
        // the cut recursion checks the iteration where it applies: a bistable one-entry chain
        // met the tolerance 1e-13 with E[X] = 0.632 for 0.713 (the slow mode not mixed)
        let check = if opts.method == ExactMethod::Iterative && chain.len() > 1 {
            solve::cut_recursion(&chain, deadline).map_err(|()| stopped("solving the cut recursion"))?
        } else {
            None
        };
        let inc = solve::Incoming::take(&mut chain);
        let start = guess::initial_guess(model, &chain, solve::uniformisation_rate(&chain));
        let it = solve::solve_iterative(&chain, &inc, start, opts.tol, opts.max_iterations, deadline);
        let status = match (it.converged, it.timed_out, deadline.limit()) {
            (true, _, _) => ExactStatus::Converged,
            (false, true, _) if deadline.cancelled() => ExactStatus::Cancelled,
            (false, true, Some(seconds)) => ExactStatus::TimeLimit { seconds },
            _ => ExactStatus::MaxIterations,
        };
        if let (Some(exact), ExactStatus::Converged) = (&check, status) {
            let gap: f64 = exact.iter().zip(&it.pi).map(|(a, b)| (a - b).abs()).sum();
            if gap > ITERATION_CHECK {
                return Err(ExactError::Solver(format!(
                    "the iterative solution (residual {:.1e}) is {gap:.2e} away in total variation (sum |pi - pi_exact|) from the \
                     chain's exact law by the cut recursion, more than {ITERATION_CHECK:.0e}: the chain has modes separated by \
                     a barrier that the iteration does not cross; --method auto solves it by the cut recursion",
                    it.residual
                )));
            }
        }
        (it.pi, it.residual, it.iterations, status)
    };
    let (mean, observables) = expectations(model, &chain, &pi);
    let solve_seconds = started.elapsed().as_secs_f64() - build_seconds;
    Ok(ExactReport {
        servers: opts.servers,
        states: chain.len(),
        transitions,
        mean,
        observables,
        residual,
        method,
        iterations,
        status,
        build_seconds,
        solve_seconds,
        absorbing: (chain.len() == 1 && chain.diag[0] <= 0.0).then(|| fractions(&chain, 0)),
    })
}

fn fractions(chain: &chain::Chain, i: usize) -> Vec<f64> {
    let mut c = vec![0u32; chain.dim];
    chain.counts(i, &mut c);
    c.iter().map(|&v| v as f64 / chain.n as f64).collect()
}

/// `E[X]` and the expectations of the observables under `pi`. Extras are matched by name (a
/// model may omit one at some states, e.g. a class's response time while it has no
/// throughput), in the order they first appear; two kinds of extra are ratios, whose
/// per-state mean is not the stationary value, and are derived from the means instead:
/// `P.mean_response_time` = `E[P.mean_queue_length] / E[P.throughput]` (Little's law, as the
/// overall mean response time; left out at zero throughput) where both parts are extras, and
/// `P.share_of_jobs` = `E[share throughput] / E[throughput]` (the share of the accepted jobs;
/// `throughput` the overall one) where the shares sum to 1 at every state. Otherwise (a
/// generic model's own expressions) an extra is the mean of its per-state values.
fn expectations(model: &dyn MeanFieldModel, chain: &chain::Chain, pi: &[f64]) -> (Vec<f64>, Observables) {
    let dim = chain.dim;
    let big_n = chain.n as f64;
    let mut mean = vec![0.0; dim];
    let (mut counts, mut x) = (vec![0u32; dim], vec![0.0; dim]);
    let mut acc: Option<Observables> = None;
    // name, E[value], E[value throughput]
    let mut extras: Vec<(String, f64, f64)> = Vec::new();
    let mut shares_sum_to_one = true;
    let add = |a: Option<f64>, b: Option<f64>, p: f64| a.zip(b).map(|(a, b)| a + p * b);
    for (i, &p) in pi.iter().enumerate() {
        chain.counts(i, &mut counts);
        x.iter_mut().zip(&counts).for_each(|(v, &c)| *v = c as f64 / big_n);
        mean.iter_mut().zip(&x).for_each(|(m, v)| *m += p * v);
        let o = model.observables(&x);
        let throughput = o.throughput.unwrap_or(0.0);
        let mut shares = 0.0;
        for (j, (name, v)) in o.extras.iter().enumerate() {
            if name.ends_with(".share_of_jobs") {
                shares += v;
            }
            // the same names in the same order at most states: the place `j` first
            let slot = match extras.get(j) {
                Some((n, ..)) if n == name => Some(j),
                _ => extras.iter().position(|(n, ..)| n == name),
            };
            match slot {
                Some(k) => {
                    extras[k].1 += p * v;
                    extras[k].2 += p * v * throughput;
                }
                None => extras.push((name.clone(), p * v, p * v * throughput)),
            }
        }
        shares_sum_to_one &= shares == 0.0 || (shares - 1.0).abs() < 1e-9;
        acc = Some(match acc {
            None => {
                let mut z = o;
                z.tail.iter_mut().for_each(|a| *a *= p);
                z.mean_queue_length = z.mean_queue_length.map(|v| p * v);
                z.throughput = z.throughput.map(|v| p * v);
                z.prob_wait = z.prob_wait.map(|v| p * v);
                z.loss_probability *= p;
                z.mass_at_truncation *= p;
                z
            }
            Some(mut a) => {
                a.tail.iter_mut().zip(&o.tail).for_each(|(a, b)| *a += p * b);
                a.mean_queue_length = add(a.mean_queue_length, o.mean_queue_length, p);
                a.throughput = add(a.throughput, o.throughput, p);
                a.prob_wait = add(a.prob_wait, o.prob_wait, p);
                a.loss_probability += p * o.loss_probability;
                a.mass_at_truncation += p * o.mass_at_truncation;
                a
            }
        });
    }
    let mut obs = acc.unwrap_or_else(|| Observables::extras_only(Vec::new()));
    obs.mean_response_time = obs.mean_queue_length.zip(obs.throughput).and_then(|(l, t)| (t > 0.0).then(|| l / t));
    let value = |name: &str| extras.iter().find(|(n, ..)| n == name).map(|e| e.1);
    let throughput = obs.throughput.unwrap_or(0.0);
    let derived: Vec<(String, f64)> = extras
        .iter()
        .filter_map(|(name, v, v_throughput)| {
            if let Some(prefix) = name.strip_suffix(".mean_response_time") {
                if let Some((l, t)) = value(&format!("{prefix}.mean_queue_length")).zip(value(&format!("{prefix}.throughput"))) {
                    return (t > 0.0).then(|| (name.clone(), l / t));
                }
            }
            if name.ends_with(".share_of_jobs") && shares_sum_to_one {
                return Some((name.clone(), if throughput > 0.0 { v_throughput / throughput } else { 0.0 }));
            }
            Some((name.clone(), *v))
        })
        .collect();
    obs.extras = derived;
    (mean, obs)
}
