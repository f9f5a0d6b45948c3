//! Finite-N systems of a [`Model`]: the mean field of the system with the file's buffer, exact
//! finite-N answers beside `x*` and `x* + V/N` (the chain and its solvers: `mfq_sim::exact`),
//! and the population simulation of generic models.

use crate::{Error, Model};
use mfq_fixpoint::{
    refined_expansion, refined_mean_field_order, solve_model, FixedPoint, FixedPointOptions, RefinedError, RefinedEstimate,
    RefinedMeanField,
};
use mfq_model::{MeanFieldModel, Simulation};
use mfq_sim::exact::{exact, ExactError, ExactOptions, ExactReport, ExactStatus};
use mfq_sim::{SimOptions, SimReport};
use serde::Serialize;

/// The exact chain at several `N` beside the mean field of the same (finite-buffer) model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExactComparison {
    /// The buffer `K` (truncation level) of the finite-N system, for models with levels.
    pub buffer: Option<usize>,
    /// The names of the state entries (`x_1`, `x`, ...), from the model's layout.
    pub names: Vec<String>,
    /// The fixed point `x*` of the model at that truncation (the mean field of the
    /// finite-buffer system).
    pub fixed_point: FixedPoint,
    /// The refined terms at `x*`, when defined: `V` (Gast and Van Houdt, SIGMETRICS 2017) and
    /// `A` (Gast, Bortolussi, Tribastone, Perf. Eval. 2019) when order 2 is supported (the
    /// derivative grids of the rates within `mfq_fixpoint::refined::local::MAX_WORK`), else `V`
    /// alone (`order` says which).
    pub refined: Option<RefinedMeanField>,
    /// The refined estimates at each `N` (in the order asked), to the order of `refined`:
    /// `x* + V/N (+ A/N^2)` and the observables expanded likewise (empty without `refined`).
    pub refined_estimates: Vec<RefinedEstimate>,
    /// Why there are no refined terms (a non-smooth model, no transitions), when there are none.
    pub refined_unavailable: Option<String>,
    /// The exact answer at each `N`, in the order asked; fewer when the job stopped (`stopped`),
    /// the last one then possibly unfinished (status `Cancelled` or `TimeLimit`).
    pub exact: Vec<ExactReport>,
    /// Why `exact` stops short of the sizes asked (Ctrl-C, the cancel flag of
    /// `ExactOptions::deadline`, or its time limit), when it does.
    pub stopped: Option<String>,
    /// Where a refined estimate is no state of the model at an `N` asked (a constraint of the
    /// layout, e.g. `0 <= x_3`, broken by more than [`OUTSIDE_TOLERANCE`]): one line per `N`
    /// and estimate, e.g. `N = 1: x* + V/N: 0 <= x_3 broken by 1.125e-2 (entry 3)`. The
    /// expansion in `1/N` is asymptotic: at small `N` its terms can overshoot.
    pub outside: Vec<String>,
}

/// How far a refined estimate may break a constraint of the state before
/// [`ExactComparison::outside`] and [`crate::RefinedReport::state_space_warnings`] name it
/// (round-off of the terms is far below).
pub const OUTSIDE_TOLERANCE: f64 = 1e-9;

/// The largest constraint of `layout` that the estimate `y` breaks by more than
/// [`OUTSIDE_TOLERANCE`] (a NaN entry always), if any.
pub(crate) fn broken_constraint(layout: &mfq_model::StateLayout, y: &[f64]) -> Option<mfq_model::Violation> {
    layout.largest_violation(y).filter(|v| v.amount.is_nan() || v.amount > OUTSIDE_TOLERANCE)
}

/// The mean field of the finite-N system a model file describes.
pub struct FiniteMeanField {
    /// The model at the truncation level used.
    pub model: Box<dyn MeanFieldModel>,
    /// Its fixed point.
    pub fixed_point: FixedPoint,
    /// The buffer `K` of every server when the file fixes `truncation.levels` of a model with
    /// levels (then the truncated model is the finite-buffer system's mean field, mass at `K`
    /// and losses included); `None` for an automatic truncation (an unlimited buffer: `x_K <
    /// truncation.tol`) or a model without levels.
    pub buffer: Option<usize>,
}

/// What a buffer option (`mfq exact --buffer K`, Python's `exact(buffer=K)`) allows: the range
/// of `truncation.levels`, which it sets.
pub const BUFFER_ALLOWED: &str = "an integer in [1, 10000000] (the buffer K of every server; it sets truncation.levels)";

/// Checks the buffer `k` of an exact chain before it is set as `truncation.levels`, so that the
/// error names the option the caller gave, `option` (`--buffer`, `buffer`), not the key it sets.
///
/// # Errors
/// [`Error::Exact`] (`ExactError::OutOfRange`) naming `option`, `k` and [`BUFFER_ALLOWED`].
pub fn check_buffer(option: &str, k: usize) -> Result<(), Error> {
    if (1..=10_000_000).contains(&k) {
        return Ok(());
    }
    Err(Error::Exact(ExactError::OutOfRange { field: option.into(), value: k.to_string(), allowed: BUFFER_ALLOWED.into() }))
}

impl Model {
    /// This model with the buffer `K = k` of every server (`truncation.levels = k`), as the
    /// exact chain reads it; `option` is the caller's name of the buffer option, named in the
    /// error ([`check_buffer`]).
    ///
    /// # Errors
    /// As [`check_buffer`]; [`Error::Model`] when the model is invalid at that level.
    pub fn with_buffer(&self, option: &str, k: usize) -> Result<Model, Error> {
        check_buffer(option, k)?;
        self.with(&[format!("truncation.levels={k}")])
    }

    /// The mean field of the finite-N system: with a fixed `truncation.levels` (and a model
    /// with levels), the fixed point of the model truncated there, whatever its mass at `K`
    /// (the finite-buffer system); otherwise [`fixed_point`](Self::fixed_point).
    ///
    /// # Errors
    /// As [`fixed_point`](Self::fixed_point) and [`build`](Self::build).
    pub fn finite_mean_field(&self, opts: &FixedPointOptions) -> Result<FiniteMeanField, Error> {
        match self.file().truncation.levels.filter(|_| self.has_levels()) {
            Some(k) => {
                let model = self.build(Some(k))?;
                let fixed_point = solve_model(model.as_ref(), opts)?;
                Ok(FiniteMeanField { model, fixed_point, buffer: Some(k) })
            }
            None => {
                let fixed_point = self.fixed_point(opts)?;
                let model = self.build(Some(fixed_point.truncation.levels))?;
                Ok(FiniteMeanField { model, fixed_point, buffer: None })
            }
        }
    }

    /// The population process of a generic model's transitions (its finite-N system) as a
    /// [`SimReport`], started at the fixed point of [`finite_mean_field`](Self::finite_mean_field)
    /// (`mfq_sim::population::simulate_as_report`), or, when that fixed point is unstable (it
    /// may be absorbing for the finite system), at the one reached from the model's
    /// `[model.initial]` state, else at that state ([`population_equilibrium`]).
    /// [`simulate`](Self::simulate) calls this for kinds whose finite-N system is their
    /// population process.
    ///
    /// # Errors
    /// As [`finite_mean_field`](Self::finite_mean_field); [`Error::NotConverged`] when its
    /// fixed point did not converge; [`Error::Simulation`] for the options.
    pub fn simulate_population(&self, opts: &SimOptions) -> Result<SimReport, Error> {
        let fp_opts = FixedPointOptions { deadline: opts.deadline.clone(), ..Default::default() };
        let f = self.finite_mean_field(&fp_opts)?;
        // an unconverged iterate (an unstable load's mass piling up at K = 100,000) is no start
        if !f.fixed_point.converged() {
            return Err(Error::NotConverged { status: f.fixed_point.status.to_string() });
        }
        let x0 = population_equilibrium(f.model.as_ref(), &f.fixed_point, &fp_opts).start;
        let opts = SimOptions { buffer: opts.buffer.or(f.buffer.map(|k| k as u32)), ..opts.clone() };
        Ok(mfq_sim::population::simulate_as_report(self.spec(), f.model.as_ref(), &x0, &opts)?)
    }

    /// Whether the finite-N system of this kind is the population process of its transitions.
    pub(crate) fn is_population(&self) -> bool {
        matches!(self.spec().simulation(), Ok(Simulation::Population))
    }

    /// Whether the model's size depends on its truncation level (a buffer `K`): false for a
    /// state of fixed size (a generic model of named variables such as the SIS's `X`), whose
    /// messages then name its state entries, not a level.
    pub fn has_levels(&self) -> bool {
        let dim = |k| self.spec().build_probe(k).map(|m| m.dim()).ok();
        dim(2) != dim(3)
    }

    /// The model as the finite-N system has it: built at the file's fixed truncation level
    /// `K` (the buffer: an arrival to a server holding `K` jobs is lost), or at any level for
    /// models whose size has none.
    ///
    /// # Errors
    /// [`Error::Exact`] naming `truncation.levels` when the model has levels and the file does
    /// not fix them, or when the file fixes them for a model without levels (a buffer that
    /// would be ignored); [`Error::Model`] for the model.
    pub fn finite_buffer_model(&self) -> Result<Box<dyn MeanFieldModel>, Error> {
        match self.file().truncation.levels {
            // a buffer on a model whose state has no levels was ignored without a word
            Some(k) if !self.has_levels() => Err(Error::Exact(ExactError::OutOfRange {
                field: "truncation.levels".into(),
                value: k.to_string(),
                allowed: "no fixed level (no --buffer) for this model: its state has no queue levels (its size does not depend on \
                          a truncation level), so a buffer does not apply"
                    .into(),
            })),
            Some(k) => self.build(Some(k)),
            None if self.has_levels() => Err(Error::Exact(ExactError::OutOfRange {
                field: "truncation.levels".into(),
                value: "automatic".into(),
                allowed: "a fixed truncation level K, the buffer of the finite-N system (e.g. --set truncation.levels=5)".into(),
            })),
            None => self.build(None),
        }
    }

    /// The exact stationary expectations of the `N = opts.servers` chain of the finite-buffer
    /// model ([`finite_buffer_model`](Self::finite_buffer_model); see `mfq_sim::exact`).
    ///
    /// ```
    /// // M/M/1 with buffer 4 (random routing): E[x_1] = (rho - rho^5) / (1 - rho^5)
    /// let m = mfq::Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.5\nd = 1\n[truncation]\nlevels = 4\n", &[]).unwrap();
    /// let r = m.exact(&mfq::ExactOptions { servers: 3, ..Default::default() }).unwrap();
    /// assert!((r.mean[0] - (0.5 - 0.5f64.powi(5)) / (1.0 - 0.5f64.powi(5))).abs() < 1e-12);
    /// ```
    ///
    /// # Errors
    /// As [`finite_buffer_model`](Self::finite_buffer_model); [`Error::Exact`] from the chain
    /// (options, a chain over the state limit, a model without transitions, time limit).
    pub fn exact(&self, opts: &ExactOptions) -> Result<ExactReport, Error> {
        let model = self.finite_buffer_model()?;
        Ok(exact(model.as_ref(), opts)?)
    }

    /// The exact chain at each of `servers` beside the fixed point `x*` and the refined terms
    /// of the same finite-buffer model; `opts.deadline` bounds the whole call, and when it
    /// expires or its cancel flag is set (Ctrl-C) the call returns what it has: the sizes
    /// finished, the one in progress when its iterative solver was stopped, and the reason in
    /// `stopped`.
    ///
    /// # Errors
    /// As [`exact`](Self::exact); [`Error::FixedPoint`] for the fixed-point options.
    pub fn exact_comparison(&self, servers: &[usize], opts: &ExactOptions) -> Result<ExactComparison, Error> {
        let model = self.finite_buffer_model()?;
        // the chains' own checks first: nothing is solved for a chain that cannot be built
        for &n in servers {
            mfq_sim::exact::check_feasible(model.as_ref(), &ExactOptions { servers: n, ..opts.clone() })?;
        }
        let deadline = opts.deadline.clone();
        let fixed_point = solve_model(model.as_ref(), &FixedPointOptions { deadline: deadline.clone(), ..Default::default() })?;
        let (refined, refined_unavailable) = if fixed_point.converged() {
            // order 2 where the rates allow it, else order 1 (dense steps: within the deadline)
            let x = fixed_point.x.clone();
            let during = format!("the refined terms ({} state entries)", x.len());
            let terms = self.within(&deadline, &during, move |m| {
                let model = m.finite_buffer_model()?;
                let terms = match refined_mean_field_order(model.as_ref(), &x, 2) {
                    Err(RefinedError::Unsupported(_) | RefinedError::TooLarge { .. }) => refined_mean_field_order(model.as_ref(), &x, 1),
                    r => r,
                };
                Ok(terms?)
            });
            match terms {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(e.to_string())),
            }
        } else {
            (None, Some(format!("the fixed point did not converge ({})", fixed_point.status)))
        };
        let refined_estimates = refined.as_ref().map_or_else(Vec::new, |r| {
            let e = refined_expansion(model.as_ref(), r);
            servers.iter().map(|&n| e.estimate(r, n as f64)).collect()
        });
        let (exact, stopped) = exact_sizes(model.as_ref(), servers, opts)?;
        let buffer = if self.has_levels() { self.file().truncation.levels } else { None };
        let layout = model.layout();
        let names = (0..model.dim()).map(|i| layout.name(i)).collect();
        let mut outside = Vec::new();
        if let Some(r) = &refined {
            for e in &refined_estimates {
                let first: Vec<f64> = fixed_point.x.iter().zip(&r.v).map(|(x, v)| x + v / e.servers).collect();
                let columns = if r.a.is_some() {
                    vec![("x* + V/N", first), ("x* + V/N + A/N^2", e.state.clone())]
                } else {
                    vec![("x* + V/N", first)]
                };
                for (what, y) in columns {
                    if let Some(v) = broken_constraint(&layout, &y) {
                        outside.push(format!("N = {}: {what}: {v}", e.servers));
                    }
                }
            }
        }
        Ok(ExactComparison { buffer, names, fixed_point, refined, refined_estimates, refined_unavailable, exact, stopped, outside })
    }
}

/// The exact chains at `servers` in turn, until the deadline of `opts` stops one: then the
/// reports so far (the stopped iterative solve included) and why.
fn exact_sizes(model: &dyn MeanFieldModel, servers: &[usize], opts: &ExactOptions) -> Result<(Vec<ExactReport>, Option<String>), Error> {
    let mut out = Vec::with_capacity(servers.len());
    for &n in servers {
        match exact(model, &ExactOptions { servers: n, ..opts.clone() }) {
            Ok(r) => {
                let halted = matches!(r.status, ExactStatus::Cancelled | ExactStatus::TimeLimit { .. });
                out.push(r);
                if halted {
                    return Ok((out, Some(format!("the iterative solver at N = {n} was stopped by {}", opts.deadline.reason()))));
                }
            }
            Err(e @ ExactError::TimeLimit { .. }) => return Ok((out, Some(format!("at N = {n}: {e}")))),
            Err(e) => return Err(e.into()),
        }
    }
    Ok((out, None))
}

/// The fixed point a population process is compared with, and where it starts
/// ([`population_equilibrium`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PopulationEquilibrium {
    /// The fixed point the simulated process is compared with: the one found from the empty
    /// state, or, when that one is unstable, the one the mean field reaches from
    /// `[model.initial]` (when it is not unstable too). Check its `local` field: it is still
    /// the unstable one when no other was found.
    pub fixed_point: FixedPoint,
    /// Where the process starts (state entries, fractions): `fixed_point.x`, or the model's
    /// `[model.initial]` state when `fixed_point` is unstable and that state is given.
    pub start: Vec<f64>,
    /// Where `fixed_point` was found from: `"empty"` (the solve from the empty state) or
    /// `"initial"` (from `[model.initial]`).
    pub found_from: &'static str,
    /// The unstable fixed point found from the empty state, when `fixed_point` is another one
    /// (reached from `[model.initial]`).
    pub unstable_from_empty: Option<FixedPoint>,
}

/// How long [`population_equilibrium`] follows the mean field from `[model.initial]` (in the
/// model's time unit) before it solves for the fixed point there: the checker's horizon
/// (`mfq check`'s trajectories settle within it).
pub const FLOW_TIME: f64 = 1e4;

/// The fixed point that the population process of `model` is compared with, and where it
/// starts, from the converged fixed point `fp` found from the empty state.
///
/// When `fp` is unstable and the model declares `[model.initial]`, the mean field is followed
/// from that state (the ODE, until `max |f| < 1e-8` or time [`FLOW_TIME`]) and the fixed point
/// solved from where it ends (`opts.x0` replaced);
/// a converged solution that is not unstable is the one compared with, and the process starts
/// there (its truncation report is `fp`'s: the same model). A repelling fixed point may be
/// absorbing for the finite system: the logistic SIS's `X = 0` at `beta = 2`, found from the
/// empty state (no event ever happens there), while the mean field from any `X > 0` goes to
/// `X = 1 - 1 / beta` (docs/simulation.md). When no other fixed point is found, `fp` stays
/// the one compared with (its `local` says unstable) and the process starts at
/// `[model.initial]`, if given. `mfq simulate`, `mfq compare` and [`Model::simulate`] use
/// this.
pub fn population_equilibrium(model: &dyn MeanFieldModel, fp: &FixedPoint, opts: &FixedPointOptions) -> PopulationEquilibrium {
    let unchanged =
        |start: Vec<f64>| PopulationEquilibrium { fixed_point: fp.clone(), start, found_from: "empty", unstable_from_empty: None };
    if fp.local != Some(mfq_fixpoint::EquilibriumKind::Unstable) {
        return unchanged(fp.x.clone());
    }
    let Some(initial) = model.extremal_states().into_iter().find(|s| s.name == "initial").map(|s| s.x) else {
        return unchanged(fp.x.clone());
    };
    // the trajectory from [model.initial] to where the drift is small, then Newton from there
    // (pseudo-transient steps straight from X = 0.1 overshot onto the face X = 0: the unstable root again)
    let ode = mfq_ode::SolveOptions { t_end: FLOW_TIME, steady_tol: Some(1e-8), record_steps: false, ..Default::default() };
    let Some(end) = mfq_ode::solve_within(model, &initial, &ode, &opts.deadline).ok().and_then(|t| t.x.last().cloned()) else {
        return unchanged(initial);
    };
    let from_initial = solve_model(model, &FixedPointOptions { x0: Some(end), ..opts.clone() });
    match from_initial {
        Ok(mut other) if other.converged() && other.local.is_some() && other.local != Some(mfq_fixpoint::EquilibriumKind::Unstable) => {
            other.truncation = fp.truncation.clone();
            other.total_iterations += fp.total_iterations;
            PopulationEquilibrium {
                start: other.x.clone(),
                fixed_point: other,
                found_from: "initial",
                unstable_from_empty: Some(fp.clone()),
            }
        }
        _ => unchanged(initial),
    }
}

/// When a population simulation found its chain absorbed ([`population_absorption`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AbsorbedWhen {
    /// The start state itself is absorbing: no event happened at all.
    AtStart,
    /// Every replication reached it before the end of its warm-up: the measured time saw only
    /// that state (the time of absorption within the warm-up is not recorded).
    DuringWarmup,
    /// Probably some replications during the measured time: the averages are not one state, but
    /// lie nearer an absorbing state of the model (its empty or full state) than the mean-field
    /// fixed point (the simulator does not record whether or when a replication was absorbed).
    Probably,
}

/// An absorbing state in which a population simulation spent all its measured time: no
/// transition has a positive rate there, so the finite chain, once there, never leaves, and
/// its time averages are that state exactly (zero-width intervals). As
/// [`ExactReport::absorbing`] for the exact chain; a simulation says it so that its `0 +- 0`
/// (the logistic SIS at small `N`, extinct) is explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Absorption {
    /// The absorbing state (fractions, the model's layout).
    pub state: Vec<f64>,
    /// When the chain was found there.
    pub when: AbsorbedWhen,
    /// The warm-up of each replication (model time), before whose end it was reached.
    pub warmup: f64,
    /// The sentence that says so, with the state by name (`the chain reached the absorbing
    /// state X = 0 ...`).
    pub message: String,
}

/// Whether a population simulation of `model` with `objects` objects spent all its measured
/// time in one absorbing state: every time average `mean` (the model's layout) has a zero-width
/// interval (below `1e-9`) and lies on the lattice of multiples of `1 / objects`, and at that
/// state no transition has a positive rate (`> 0`: the model's own rates, [`Transitions`]).
/// `events` (0: it started there) and `warmup` say when. Otherwise, when the averages lie
/// nearer (in the largest entry) an absorbing empty or full state
/// ([`MeanFieldModel::extremal_states`]) than the mean-field `fixed_point`,
/// [`AbsorbedWhen::Probably`] (some replications were absorbed during the measured time; the
/// simulator does not record the time of absorption). `None` otherwise, or when the model
/// gives no transitions.
///
/// [`Transitions`]: mfq_model::Transitions
pub fn population_absorption(
    model: &dyn MeanFieldModel,
    mean: &[mfq_sim::Estimate],
    events: u64,
    objects: usize,
    warmup: f64,
    fixed_point: Option<&[f64]>,
) -> Option<Absorption> {
    let t = model.transitions()?;
    if mean.len() != model.dim() || mean.is_empty() || objects == 0 || mean.iter().any(|e| !e.mean.is_finite()) {
        return None;
    }
    // no transition with a positive rate that moves the state
    let absorbing = |x: &[f64]| {
        let mut moves = false;
        t.visit(x, &mut |jump: &[(usize, f64)], rate: f64| {
            if rate > 0.0 && jump.iter().any(|&(_, c)| c != 0.0) {
                moves = true;
            }
        });
        !moves
    };
    let n = objects as f64;
    let lattice: Option<Vec<f64>> = mean
        .iter()
        .map(|e| {
            let k = (e.mean * n).round();
            (e.half_width.is_finite() && e.half_width <= 1e-9 && (e.mean * n - k).abs() <= 1e-6).then_some(k / n)
        })
        .collect();
    let (state, when) = match lattice.filter(|x| absorbing(x)) {
        Some(x) => (x, if events == 0 { AbsorbedWhen::AtStart } else { AbsorbedWhen::DuringWarmup }),
        None => {
            // averages nearer an absorbing empty or full state than the mean field
            let fp = fixed_point.filter(|f| f.len() == mean.len())?;
            let dist = |x: &[f64]| mean.iter().zip(x).fold(0.0f64, |m, (e, v)| m.max((e.mean - v).abs()));
            let near =
                model.extremal_states().into_iter().map(|s| s.x).find(|x| x.len() == mean.len() && absorbing(x) && dist(x) < dist(fp))?;
            (near, AbsorbedWhen::Probably)
        }
    };
    let layout = model.layout();
    let shown: Vec<String> = state.iter().enumerate().take(6).map(|(i, v)| format!("{} = {v}", layout.name(i))).collect();
    let named = format!("{}{}", shown.join(", "), if state.len() > 6 { ", ..." } else { "" });
    if when == AbsorbedWhen::Probably {
        let message = format!(
            "the time averages lie nearer the absorbing state {named} (no transition has a positive rate there: the \
             finite system, once there, never leaves) than the mean field: some replications probably reached it during \
             the measured time and stayed (the simulator does not record whether or when), so the averages mix it with \
             the behaviour before absorption; a larger N makes absorption slower"
        );
        return Some(Absorption { state, when, warmup, message });
    }
    let how = match when {
        AbsorbedWhen::AtStart => format!("the chain started in the absorbing state {named} and no event happened"),
        _ => format!(
            "the chain reached the absorbing state {named} in every replication before the end of the warm-up (t = {})",
            mfq_model::short_number(warmup)
        ),
    };
    let message = format!(
        "{how}: no transition has a positive rate there, so the finite system, once there, never leaves, and the time \
         averages are that state exactly (the interval of zero width); the behaviour before absorption (the \
         quasi-stationary law, which the mean field describes) is not measured: a larger N makes absorption slower"
    );
    Some(Absorption { state, when, warmup, message })
}

/// [`population_absorption`] of a simulation report of `model`'s population process
/// ([`Model::simulate`] of a generic model): its time averages in the model's layout (the tail
/// of a tail-form state, else every entry by name in `extras`).
pub fn report_absorption(model: &dyn MeanFieldModel, report: &SimReport, fixed_point: Option<&[f64]>) -> Option<Absorption> {
    let layout = model.layout();
    let mean: Vec<mfq_sim::Estimate> = match layout {
        mfq_model::StateLayout::Tail { .. } if report.tail.len() == model.dim() => report.tail.clone(),
        _ => (0..model.dim()).map(|i| report.extras.get(&layout.name(i)).copied()).collect::<Option<Vec<_>>>()?,
    };
    population_absorption(model, &mean, report.events, report.options.servers, report.options.warmup, fixed_point)
}
