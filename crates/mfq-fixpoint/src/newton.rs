//! Pseudo-transient continuation + Newton (the method and its step control: the crate docs,
//! section "Method").

use crate::{local_stability, FixedPoint, FixedPointError, FixedPointStatus, TailPolish, TruncationReport};
use mfq_model::{Deadline, Jacobian, MeanFieldModel, Sparsity};
use mfq_ode::linalg::ShiftedLu;
use serde::Serialize;

/// Options of the fixed-point solvers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FixedPointOptions {
    /// Residual tolerance on `max |f(x)|` (default 1e-12); after reaching it up to three
    /// steps polish the root while they lower the residual, unless it is below
    /// `f64::EPSILON max |x|` already (see the crate docs, "Method").
    pub tol: f64,
    /// Maximum number of linear solves per truncation level (default 500).
    pub max_iter: usize,
    /// First pseudo time step (default 10 mean job sizes).
    pub dt0: f64,
    /// Initial state (default: the empty state, all zeros).
    pub x0: Option<Vec<f64>>,
    /// Eigenvalues (spectral abscissa) are computed up to this dimension (default 600; dense, `O(n^3)`).
    pub max_dim_for_eigenvalues: usize,
    /// Wall-clock limit (and cancel flag) over the whole solve: building the model at every
    /// truncation level and solving it; [`Deadline::none`] (default): no limit. When it runs
    /// out the solve stops with [`FixedPointStatus::TimeLimit`] (the limit as given).
    pub deadline: Deadline,
}

impl Default for FixedPointOptions {
    fn default() -> Self {
        FixedPointOptions { tol: 1e-12, max_iter: 500, dt0: 10.0, x0: None, max_dim_for_eigenvalues: 600, deadline: Deadline::none() }
    }
}

impl FixedPointOptions {
    /// Checks the option ranges.
    ///
    /// # Errors
    /// [`FixedPointError::OutOfRange`] naming the option.
    pub fn validate(&self) -> Result<(), FixedPointError> {
        let bad = |field, value: String, allowed| Err(FixedPointError::OutOfRange { field, value, allowed });
        if !(self.tol.is_finite() && self.tol > 0.0) {
            return bad("tol", self.tol.to_string(), "a number > 0");
        }
        if self.max_iter == 0 {
            return bad("max_iter", "0".into(), "an integer >= 1");
        }
        if !(self.dt0.is_finite() && self.dt0 > 0.0) {
            return bad("dt0", self.dt0.to_string(), "a number > 0");
        }
        if let Some(v) = self.x0.iter().flatten().find(|v| !v.is_finite()) {
            return bad("x0", v.to_string(), "finite entries");
        }
        Ok(())
    }
}

/// Fixed point of one truncated model (fixed dimension), from `opts.x0` or the empty state.
///
/// The report's `truncation` holds the model's own `K` (no growth; see [`crate::solve_spec`]):
/// the number of queue-length levels of its layout, or its dimension for layouts without levels.
///
/// # Errors
/// [`FixedPointError::OutOfRange`] for invalid options or an `x0` of the wrong length.
pub fn solve_model(model: &dyn MeanFieldModel, opts: &FixedPointOptions) -> Result<FixedPoint, FixedPointError> {
    solve_model_with(model, opts, &mut Factors::default())
}

/// Factorisations kept from one fixed-point solve for the next: the LU of `alpha I - J` (with
/// its symbolic analysis) and the Jacobian's storage of the last solve. A sweep over a
/// parameter passes the same `Factors` to every point ([`solve_model_with`],
/// [`crate::solve_spec_with`]): when the next model has the same dimension and sparsity
/// pattern, its solve starts with chord (simplified Newton) steps on the previous point's
/// factorisation, and factorises only when they do not contract the residual (Kelley,
/// "Solving Nonlinear Equations with Newton's Method", SIAM 2003, §2.3 on the chord method;
/// continuation with a frozen Jacobian). A model of another shape drops what is held.
#[derive(Debug, Default)]
pub struct Factors {
    held: Option<Held>,
}

/// What a solve leaves in [`Factors`].
#[derive(Debug)]
struct Held {
    n: usize,
    sparsity: Sparsity,
    jac: Jacobian,
    lu: ShiftedLu,
    /// `alpha` of the factorisation held in `lu`, if it holds one.
    alpha: Option<f64>,
}

impl Factors {
    /// Whether a factorisation is held (for a model of the shape of the last solve).
    pub fn holds_factorisation(&self) -> bool {
        self.held.as_ref().is_some_and(|h| h.alpha.is_some())
    }

    /// The held storage and factorisation when they fit `model` (same dimension and sparsity).
    fn take_for(&mut self, model: &dyn MeanFieldModel) -> Option<Held> {
        let held = self.held.take()?;
        (held.n == model.dim() && held.sparsity == model.sparsity()).then_some(held)
    }
}

/// [`solve_model`] with the factorisations of the previous solve of a sweep (see [`Factors`]),
/// leaving this solve's in `factors`.
///
/// # Errors
/// As [`solve_model`].
pub fn solve_model_with(
    model: &dyn MeanFieldModel,
    opts: &FixedPointOptions,
    factors: &mut Factors,
) -> Result<FixedPoint, FixedPointError> {
    opts.validate()?;
    if let Some(x0) = &opts.x0 {
        if x0.len() != model.dim() {
            return Err(FixedPointError::OutOfRange {
                field: "x0",
                value: format!("{} entries", x0.len()),
                allowed: "as many entries as the model's dimension",
            });
        }
    }
    let mut fp = solve_until(model, opts.x0.as_deref(), opts, &opts.deadline, factors);
    crate::leaving_transitions(model, &fp)?;
    fp.total_iterations = fp.iterations;
    // the K of the layout (class and phase tails hold several entries per level), else the dimension
    fp.truncation.levels = model.layout().level_masses(&fp.x).map_or(model.dim(), |m| m.len());
    fp.truncation.mass_at_truncation = crate::mass_at_truncation(model, &fp.x);
    fp.truncation.tried = vec![fp.truncation.levels];
    if fp.converged() && model.dim() <= opts.max_dim_for_eigenvalues && !opts.deadline.expired() {
        fp.set_local(&local_stability(model, &fp.x));
    }
    Ok(fp)
}

/// A pseudo-transient step follows the flow when its implicit-Euler defect
/// `max_i |f_i(x_new) - (x_new - x)_i / dt|` is at most `ETA` times the residual `max |f(x)|`.
const ETA: f64 = 0.5;
/// Largest growth of `dt` per accepted step allowed by a small defect alone.
const MAX_GROWTH: f64 = 10.0;
/// `dt` is capped here (`1/dt = 1e-15`: a Newton step).
const DT_MAX: f64 = 1e15;
/// Below this `dt` a rejected step is taken anyway (a jump of the drift; see the crate docs).
const DT_MIN: f64 = 1e-8;
/// Pseudo-transient steps (rejected ones count twice) without halving the residual before a
/// Newton probe; doubled after each failed probe.
const STALL_WINDOW: usize = 5;
/// Undamped Newton steps of one probe.
const PROBE_STEPS: usize = 10;
/// A step that contracts the residual at least this much is followed by chord steps with its
/// factorisation, kept while each contracts as much.
const CHORD_RATE: f64 = 0.25;
/// A residual at or below this times `max |x|` is round-off: no polishing.
const ROUND_OFF: f64 = f64::EPSILON;
/// Entries at or above this magnitude are polished to relative accuracy (see
/// [`Iterate::polish_relative`]; below it the relative change is not measured).
pub const RELATIVE_FLOOR: f64 = 1e-250;
/// The relative polish stops once its last step moved no entry above [`RELATIVE_FLOOR`] by
/// more than this relative amount.
pub const RELATIVE_STEP_TOL: f64 = 1e-14;
/// At most this many relative-polish steps.
const RELATIVE_STEPS: usize = 4;
/// Newton steps of the relative polish go on only while each shrinks the largest relative
/// change of the one before at least this much (see [`Iterate::polish_relative`]).
const RELATIVE_CONTRACTION: f64 = 0.1;
/// With iterative linear solves, the relative polish also stops after a step that raised the
/// absolute residual and moved some entry by at least this many times its size (see
/// [`Iterate::polish_relative`]).
const RELATIVE_NOISE: f64 = 1.0;
/// Chord steps (before convergence and as polishing) are used only when a factorisation costs
/// at least this many solves (see [`factor_cost_in_solves`]).
const CHORD_MIN_COST: f64 = 4.0;

/// Flops of one LU factorisation of `alpha I - J` over those of one solve with it, by the
/// sparsity the model declares: dense `n^3/3` over `2 n^2`; band (`p` lower, `q` upper
/// diagonals) `n p (p + q)` over `n (2 p + q)`; a general sparse pattern (faer's LU with fill-in,
/// plus the Woodbury capacitance matrix of coupled patterns) counts as expensive.
fn factor_cost_in_solves(n: usize, sparsity: &Sparsity) -> f64 {
    match *sparsity {
        Sparsity::Sparse(_) => f64::INFINITY,
        Sparsity::Banded { lower, upper } if lower + upper + 1 < n => (lower * (lower + upper)) as f64 / (2 * lower + upper).max(1) as f64,
        _ => n as f64 / 6.0,
    }
}

#[inline]
fn max_abs(v: &[f64]) -> f64 {
    let mut m = 0.0f64;
    for x in v {
        if !x.is_finite() {
            return f64::INFINITY;
        }
        m = m.max(x.abs());
    }
    m
}

/// State and buffers of one solve.
struct Iterate<'m> {
    model: &'m dyn MeanFieldModel,
    /// Current iterate, its drift and residual `max |f|`.
    x: Vec<f64>,
    f: Vec<f64>,
    r: f64,
    /// Trial step: increment, state, drift.
    dx: Vec<f64>,
    xn: Vec<f64>,
    fnew: Vec<f64>,
    jac: Jacobian,
    lu: ShiftedLu,
    /// `alpha` of the factorisation of `alpha I - J` held in `lu`, if any.
    factored: Option<f64>,
    /// Linear solves so far.
    iters: usize,
    /// LU factorisations so far.
    factorisations: usize,
    /// The solve's deadline: a factorisation that outlasts it is abandoned (see
    /// `ShiftedLu::factor_within`).
    deadline: Deadline,
    /// What the relative polish did.
    tail: TailPolish,
}

impl Iterate<'_> {
    /// One step from `x`: factorises `alpha I - J(x)` and takes a [`chord`](Self::chord) step with
    /// it (`alpha = 1/dt`: pseudo-transient continuation; `alpha = 0`: Newton). Returns the
    /// trial residual and defect, or the column of a zero pivot.
    fn trial(&mut self, alpha: f64) -> Result<(f64, f64), usize> {
        self.model.jacobian(&self.x, &mut self.jac);
        self.factored = None;
        self.factorisations += 1;
        match self.lu.factor_within(alpha, -1.0, &self.jac, &self.deadline) {
            Err(e) => {
                self.iters += 1;
                return Err(e.index);
            }
            // the deadline passed during the factorisation: no step (the caller sees the deadline)
            Ok(false) => return Err(usize::MAX),
            Ok(true) => {}
        }
        self.factored = Some(alpha);
        Ok(self.chord())
    }

    /// One step from `x` with the factorisation held in `lu` (of `alpha I - J(x_old)` at this or
    /// an earlier iterate; from an earlier one it is a chord, or simplified Newton, step): solves
    /// `(alpha I - J(x_old)) dx = f(x)`, sets `xn = P(x + dx)` and `fnew = f(xn)`. Returns the
    /// trial residual `max |f(xn)|` and the implicit-Euler defect `max |f(xn) - alpha (xn - x)|`
    /// (infinite when not finite). Call only with a factorisation (`factored` is `Some`).
    fn chord(&mut self) -> (f64, f64) {
        let alpha = self.factored.unwrap_or(0.0);
        self.iters += 1;
        self.dx.copy_from_slice(&self.f);
        self.lu.solve(&mut self.dx);
        for ((xn, x), dx) in self.xn.iter_mut().zip(&self.x).zip(&self.dx) {
            *xn = x + dx;
        }
        self.model.project(&mut self.xn);
        self.model.drift(&self.xn, &mut self.fnew);
        // max |f(xn)| and the defect in one pass, in 4 lanes (independent dependency chains);
        // `sum` catches NaN, which `max` skips
        let (mut rn, mut defect, mut sum) = ([0.0f64; 4], [0.0f64; 4], [0.0f64; 4]);
        let mut lane = |l: usize, fnew: f64, xn: f64, x: f64| {
            let d = (fnew - alpha * (xn - x)).abs();
            rn[l] = rn[l].max(fnew.abs());
            defect[l] = defect[l].max(d);
            sum[l] += fnew.abs() + d;
        };
        let (f4, x4, o4) = (self.fnew.chunks_exact(4), self.xn.chunks_exact(4), self.x.chunks_exact(4));
        let rest = (f4.remainder(), x4.remainder(), o4.remainder());
        for ((f, xn), x) in f4.zip(x4).zip(o4) {
            for l in 0..4 {
                lane(l, f[l], xn[l], x[l]);
            }
        }
        for ((f, xn), x) in rest.0.iter().zip(rest.1).zip(rest.2) {
            lane(0, *f, *xn, *x);
        }
        let rn = rn.iter().fold(0.0f64, |a, b| a.max(*b));
        let defect = defect.iter().fold(0.0f64, |a, b| a.max(*b));
        if sum.iter().sum::<f64>().is_finite() {
            (rn, defect)
        } else {
            (f64::INFINITY, f64::INFINITY)
        }
    }

    /// Makes the trial state the current one.
    fn accept(&mut self, rn: f64) {
        std::mem::swap(&mut self.x, &mut self.xn);
        std::mem::swap(&mut self.f, &mut self.fnew);
        self.r = rn;
    }
}

/// The PTC + Newton iteration (options assumed valid; buffers allocated once) with an absolute
/// deadline (shared by every truncation level of one solve), starting from the factorisation
/// held in `factors` when it fits and leaving its own there.
pub(crate) fn solve_until(
    model: &dyn MeanFieldModel,
    x0: Option<&[f64]>,
    opts: &FixedPointOptions,
    deadline: &Deadline,
    factors: &mut Factors,
) -> FixedPoint {
    let mut it = Iterate::new(model, x0, factors.take_for(model));
    it.deadline = deadline.clone();
    let status = it.iterate(opts, deadline);
    let (fp, held) = it.report(status);
    factors.held = Some(held);
    fp
}

/// Whether the wall-clock `deadline` has passed (or the job was cancelled).
fn timed_out(deadline: &Deadline) -> bool {
    deadline.expired()
}

/// The pseudo-transient step control between steps.
struct StepControl {
    /// Pseudo time step.
    dt: f64,
    /// Whether the last pseudo-transient step was rejected (the next one then may not grow dt
    /// from its defect alone).
    rejected: bool,
    /// Stall detection: steps (rejected ones count twice) since the residual last fell below
    /// half of `r_ref`, and the number of such steps that triggers a Newton probe.
    r_ref: f64,
    since: usize,
    window: usize,
}

impl<'m> Iterate<'m> {
    /// The iterate at `P(x0)` (the empty state when `x0` is `None`), with its drift and buffers
    /// (those of `held`, and its factorisation, when given).
    fn new(model: &'m dyn MeanFieldModel, x0: Option<&[f64]>, held: Option<Held>) -> Self {
        let n = model.dim();
        let mut x = x0.map_or_else(|| vec![0.0; n], <[f64]>::to_vec);
        model.project(&mut x);
        let mut f = vec![0.0; n];
        model.drift(&x, &mut f);
        let r = max_abs(&f);
        let (jac, lu, factored) = match held {
            Some(h) => (h.jac, h.lu, h.alpha),
            None => (Jacobian::new(n, model.sparsity()), ShiftedLu::new(n, model.sparsity()), None),
        };
        Iterate {
            model,
            x,
            f,
            r,
            dx: vec![0.0; n],
            xn: vec![0.0; n],
            fnew: vec![0.0; n],
            jac,
            lu,
            factored,
            deadline: Deadline::none(),
            iters: 0,
            factorisations: 0,
            tail: TailPolish::default(),
        }
    }

    /// The main loop (crate docs, "Method"): polish and stop at the tolerance, stop at the
    /// iteration budget or the deadline, probe with Newton steps after a stall, else one
    /// pseudo-transient step. Every pass costs one linear solve or stops.
    fn iterate(&mut self, opts: &FixedPointOptions, deadline: &Deadline) -> FixedPointStatus {
        let (mut saved_x, mut saved_f) = (Vec::new(), Vec::new());
        // (an iterative solve, GMRES with an incomplete LU, costs more than the factorisation)
        let reuse_factors = !self.lu.is_iterative() && factor_cost_in_solves(self.model.dim(), &self.model.sparsity()) >= CHORD_MIN_COST;
        let mut ctl = StepControl { dt: opts.dt0, rejected: false, r_ref: self.r, since: 0, window: STALL_WINDOW };
        // a factorisation held from the previous point of a sweep: chord steps with it first
        if reuse_factors && self.factored.is_some() && self.r > opts.tol {
            self.chord_steps(opts, deadline);
            ctl.r_ref = self.r;
        }
        loop {
            if !self.r.is_finite() {
                return FixedPointStatus::NonFinite;
            }
            if self.r <= opts.tol {
                self.polish(opts, reuse_factors);
                return FixedPointStatus::Converged;
            }
            if self.iters >= opts.max_iter {
                return FixedPointStatus::MaxIterations;
            }
            if timed_out(deadline) {
                return FixedPointStatus::TimeLimit { seconds: deadline.limit().unwrap_or(0.0) };
            }
            if ctl.since >= ctl.window {
                if !self.watchdog(opts, deadline, &mut saved_x, &mut saved_f) {
                    ctl.window *= 2;
                    ctl.since = 0;
                }
                continue;
            }
            ctl.since += 1;
            if let Some(status) = self.pseudo_transient_step(opts, deadline, &mut ctl, reuse_factors) {
                return status;
            }
        }
    }

    /// Polishing a converged iterate: up to three steps while they lower the residual, none
    /// once it is at the round-off of the state's scale (ROUND_OFF max |x|: drift terms are
    /// rates times fractions). Newton steps; chord steps with the last factorisation (one solve
    /// each) where factorisations are costly (they stop higher, ~3e-14 against ~1e-16 on the
    /// redundancy pair approximation, still far below tol). Then the relative polish
    /// ([`Self::polish_relative`]).
    fn polish(&mut self, opts: &FixedPointOptions, reuse_factors: bool) {
        // the trial residual of a last step that was computed but not kept (in `xn`, `fnew`)
        let mut unkept = None;
        if self.r > ROUND_OFF * max_abs(&self.x) {
            for _ in 0..3 {
                if self.iters >= opts.max_iter {
                    break;
                }
                let step = if reuse_factors && self.factored.is_some() { Ok(self.chord()) } else { self.trial(0.0) };
                match step {
                    Ok((rn, _)) if rn < self.r => self.accept(rn),
                    Ok((rn, _)) => {
                        unkept = Some(rn);
                        break;
                    }
                    _ => break,
                }
            }
        }
        self.polish_relative(opts, reuse_factors, unkept);
    }

    /// The relative polish of the tail. An absolute residual at round-off (`~1e-17`) leaves an
    /// entry `x_k ~ 1e-10` wrong by `~1e-19`, i.e. `1e-9` relative, and a tail is read on a log
    /// scale. Each drift entry is computed to round-off *relative to its own terms* (rates
    /// times fractions of size `~x_k`), so further Newton steps (chord steps with the last
    /// factorisation where factorisations are costly) fix the small entries too: Newton's step
    /// is the same in the variables `ln x_k` (rows and columns scaled by `x_k`), and the LU
    /// solve's error is relative to the step's largest entry. None is taken when the residual in
    /// those variables, `max |f_k / x_k|` over `|x_k| >= RELATIVE_FLOOR`, is at most
    /// `RELATIVE_STEP_TOL` already (rates are of order one per mean job size). Steps continue while the last
    /// one moved some entry with `|x_k| >= RELATIVE_FLOOR` by more than `RELATIVE_STEP_TOL
    /// |x_k|`, at most `RELATIVE_STEPS`; a step that raises the residual above its round-off
    /// level is undone. Newton steps (a fresh factorisation at each iterate: not chord steps)
    /// also stop after a step whose largest relative change is not at least
    /// `1 / RELATIVE_CONTRACTION` = 10 times smaller than the one before: Newton's relative
    /// changes shrink quadratically while the small entries are resolved, and when they do not,
    /// those entries are set by round-off (of the solve, or of drift terms far larger than
    /// `x_k` that cancel), and each further step moves them at random. (The redundancy
    /// triplet approximation at K = 30, Newton steps solved by GMRES: largest relative changes
    /// 383, 98, 2457, 239 in four steps, three of them a solve each; now two steps, one solve.
    /// Its chord steps with the complete LU do not settle either: 11, 151, 7.0, 3.0.)
    /// With iterative solves (GMRES with an incomplete LU, whose error is normwise: a relative
    /// residual of 1e-12 of the whole step) the polish also stops at a step that raised the
    /// absolute residual (it is at its round-off level) and moved some entry by at least
    /// `RELATIVE_NOISE` = 1 times its size, and does not keep it: such entries lie below what
    /// the solve resolves, and the next step would move them at random again, at the cost of a
    /// full solve. (The
    /// triplet at K = 30: the first step, `unkept` below, raised the residual from 8.8e-14 to
    /// 1.7e-13 and moved an entry 383 times its size; the second step, one solve of the five
    /// left, moved them 98 times and was then dropped by the contraction rule anyway.) The
    /// direct solves of the other models (JSQ(d), Pod, where the polish resolves real tails)
    /// are not concerned.
    /// The last step's largest relative change is reported ([`TailPolish`]).
    ///
    /// `unkept`: the trial residual of a step from the current iterate that [`Self::polish`]
    /// computed and did not keep (it raised the residual; it is still in `xn`, `fnew`). The
    /// first step here would be the same step (same iterate, Jacobian and solve: the same
    /// numbers), so it is taken from there instead of being solved again (one solve less: a
    /// GMRES solve of the triplet approximation at K = 30 costs about a tenth of the solve).
    fn polish_relative(&mut self, opts: &FixedPointOptions, reuse_factors: bool, mut unkept: Option<f64>) {
        let floor_r = self.r.max(ROUND_OFF * max_abs(&self.x));
        // the residual in the variables ln x_k: already at the threshold, no step
        let log_residual =
            self.x.iter().zip(&self.f).filter(|(x, _)| x.abs() >= RELATIVE_FLOOR).fold(0.0f64, |m, (x, f)| m.max((f / x).abs()));
        if log_residual <= RELATIVE_STEP_TOL {
            return;
        }
        let mut last_rel = f64::INFINITY;
        let iterative = self.lu.is_iterative();
        for _ in 0..RELATIVE_STEPS {
            if self.iters >= opts.max_iter || self.deadline.expired() {
                break;
            }
            let step = if let Some(rn) = unkept.take() {
                Ok((rn, 0.0))
            } else if reuse_factors && self.factored.is_some() {
                Ok(self.chord())
            } else {
                self.trial(0.0)
            };
            let rn = match step {
                Ok((rn, _)) if rn <= 2.0 * floor_r => rn,
                _ => break,
            };
            let rel = self
                .x
                .iter()
                .zip(&self.xn)
                .filter(|(x, _)| x.abs() >= RELATIVE_FLOOR)
                .fold(0.0f64, |m, (x, xn)| m.max(((xn - x) / x).abs()));
            self.tail.steps += 1;
            self.tail.last_relative_step = rel;
            if iterative && rn > self.r && rel >= RELATIVE_NOISE {
                // round-off noise of the iterative solve: not kept (the residual stays lower)
                self.tail.last_step_kept = false;
                break;
            }
            self.accept(rn);
            if rel <= RELATIVE_STEP_TOL || (!reuse_factors && rel > RELATIVE_CONTRACTION * last_rel) {
                break;
            }
            last_rel = rel;
        }
    }

    /// The watchdog: a few undamped Newton steps, kept if they reach the tolerance (they may
    /// climb on the way), undone otherwise (`saved_x`, `saved_f`: buffers for the undo). Only
    /// a root is kept: a step that merely lowers the residual may lead back into the
    /// bottleneck of a near-root (a "ghost"). Returns whether the probe was kept.
    fn watchdog(&mut self, opts: &FixedPointOptions, deadline: &Deadline, saved_x: &mut Vec<f64>, saved_f: &mut Vec<f64>) -> bool {
        saved_x.clone_from(&self.x);
        saved_f.clone_from(&self.f);
        let r0 = self.r;
        let mut last = [f64::NAN; 2]; // residuals two steps and one step back
        for _ in 0..PROBE_STEPS {
            if self.r <= opts.tol || self.iters >= opts.max_iter || timed_out(deadline) {
                break;
            }
            match self.trial(0.0) {
                // a residual seen two steps ago: Newton cycles (e.g. through the projection)
                Ok((rn, _)) if (rn - last[1]).abs() <= 1e-9 * rn => break,
                Ok((rn, _)) if rn.is_finite() => {
                    last = [last[1], self.r];
                    self.accept(rn);
                }
                _ => break,
            }
        }
        if self.r > opts.tol {
            std::mem::swap(&mut self.x, saved_x);
            std::mem::swap(&mut self.f, saved_f);
            self.r = r0;
            return false;
        }
        true
    }

    /// One pseudo-transient step with `dt = ctl.dt`: accepted (then `dt` grows, and chord steps
    /// follow a fast contraction where factorisations are costly), rejected (`dt` shrinks), or
    /// taken anyway below `DT_MIN` (a jump of the drift). `Some(status)` when the solve must
    /// stop (a non-finite drift wherever the step lands, a singular matrix).
    fn pseudo_transient_step(
        &mut self,
        opts: &FixedPointOptions,
        deadline: &Deadline,
        ctl: &mut StepControl,
        reuse_factors: bool,
    ) -> Option<FixedPointStatus> {
        let r = self.r;
        match self.trial(1.0 / ctl.dt) {
            Ok((rn, defect)) if defect <= ETA * r || (rn < r && defect <= 2.0 * rn) => {
                // x_new follows the flow (a small implicit-Euler defect), or lowers the residual
                // with a defect of the order of the new residual (Newton-like; a jump back
                // against the flow has a large defect). Grow dt as the defect allows (it scales
                // like dt^2 while steps are short; no growth right after a rejection) and, after
                // a step that lowered the residual, at least by switched evolution relaxation
                // (r / rn) and twofold (plain SER stalls when a slow mode, lambda -> 1, barely
                // moves)
                let q = (defect / (ETA * r)).max(1e-12);
                let cap = if ctl.rejected { 1.0 } else { MAX_GROWTH };
                let mut growth = (0.8 / q.sqrt()).clamp(0.5, cap);
                if rn < r {
                    growth = growth.max(r / rn.max(f64::MIN_POSITIVE)).max(2.0);
                }
                ctl.dt = (ctl.dt * growth).min(DT_MAX);
                self.accept(rn);
                ctl.rejected = false;
                if reuse_factors && rn <= CHORD_RATE * r {
                    self.chord_steps(opts, deadline);
                }
                if self.r <= 0.5 * ctl.r_ref {
                    (ctl.r_ref, ctl.since) = (self.r, 0);
                }
            }
            Ok((_, defect)) if ctl.dt > DT_MIN => {
                // rejected: shrink dt from the defect (by 2x to 10x)
                ctl.since += 1; // a rejection counts twice towards a stall
                ctl.rejected = true;
                ctl.dt *= (0.8 / (defect / (ETA * r)).sqrt()).clamp(0.1, 0.5);
            }
            Ok((rn, _)) if rn.is_finite() => {
                // so short a step follows the ODE, yet it is far from consistent: the drift
                // jumps between x and x_new (a switching surface, e.g. a server class that
                // saturates). Take it and restart dt
                self.accept(rn);
                ctl.rejected = false;
                ctl.dt = opts.dt0;
            }
            // the drift is not finite wherever a step lands: report the last finite iterate
            Ok(_) => return Some(FixedPointStatus::NonFinite),
            Err(_) if ctl.dt > DT_MIN => {
                ctl.since += 1;
                ctl.rejected = true;
                ctl.dt *= 0.1;
            }
            Err(_) if self.deadline.expired() => {
                return Some(FixedPointStatus::TimeLimit { seconds: self.deadline.limit().unwrap_or(0.0) })
            }
            Err(index) => return Some(FixedPointStatus::Singular { index }),
        }
        None
    }

    /// After a fast contraction with a costly factorisation: reuse it (chord steps) while each
    /// step still contracts the residual CHORD_RATE-fold and follows the same acceptance rules.
    fn chord_steps(&mut self, opts: &FixedPointOptions, deadline: &Deadline) {
        while self.r > opts.tol && self.iters < opts.max_iter && !timed_out(deadline) {
            let r = self.r;
            match self.chord() {
                (rc, defect) if rc <= CHORD_RATE * r && (defect <= ETA * r || defect <= 2.0 * rc) => self.accept(rc),
                _ => break,
            }
        }
    }

    /// The report of the solve that ended with `status`: the last accepted iterate, its
    /// residual and observables (truncation, spectral abscissa: filled in by the callers); and
    /// the storage and factorisation for the next solve of a sweep.
    fn report(self, status: FixedPointStatus) -> (FixedPoint, Held) {
        let Iterate { model, x, r, iters, factorisations, jac, lu, factored, tail, .. } = self;
        let n = model.dim();
        let observables = model.observables(&x);
        let held = Held { n, sparsity: model.sparsity(), jac, lu, alpha: factored };
        let fp = FixedPoint {
            model: model.name(),
            residual: r,
            iterations: iters,
            total_iterations: iters,
            factorisations,
            status,
            truncation: TruncationReport {
                levels: n,
                mass_at_truncation: 0.0,
                tol: 0.0,
                automatic: false,
                tried: vec![],
                fixed_size: false,
                buffer: false,
            },
            spectral_abscissa: None,
            jacobian_norm: None,
            degeneracy_scale: None,
            local: None,
            jacobian: if model.has_analytic_jacobian() { "analytic" } else { "finite differences" },
            observables,
            tail_polish: tail,
            x,
        };
        (fp, held)
    }
}

#[cfg(test)]
mod factors_tests {
    use super::*;
    use mfq_model::models::redundancy::{Discipline, RedundancyPair};

    /// A sweep of the PS pair approximation (K = 60) with one [`Factors`] and warm starts
    /// meets the values of an independent implementation (explicit RK4 from empty,
    /// validation/redundancy.py; the same table as tests/redundancy.rs), agrees with fresh
    /// solves, and starts points from the held factorisation (fewer factorisations).
    #[test]
    fn a_sweep_with_held_factorisations_meets_the_reference_values() {
        let published = [(0.5, 0.78142), (0.7, 1.48412), (0.8, 2.12460), (0.9, 3.38752)];
        let lambdas = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9];
        let mut factors = Factors::default();
        let (mut warm, mut held_lu, mut fresh_lu) = (None::<Vec<f64>>, 0, 0);
        for lambda in lambdas {
            let m = RedundancyPair::new(lambda, 2, Discipline::Ps, 1, 60).unwrap();
            let x0 = warm.take().or_else(|| m.mean_field_start());
            let opts = FixedPointOptions { max_dim_for_eigenvalues: 0, x0: x0.clone(), ..Default::default() };
            let fp = solve_model_with(&m, &opts, &mut factors).unwrap();
            assert!(fp.converged() && fp.residual < 1e-12, "lambda {lambda}: {:?} {:e}", fp.status, fp.residual);
            assert!(factors.holds_factorisation());
            let fresh = solve_model(&m, &opts).unwrap();
            let got = fp.observables.mean_queue_length.unwrap();
            assert!((got - fresh.observables.mean_queue_length.unwrap()).abs() < 1e-10, "lambda {lambda}");
            if let Some((_, want)) = published.iter().find(|(l, _)| *l == lambda) {
                assert!((got - want).abs() < 6e-6, "lambda {lambda}: {got} vs {want}");
            }
            held_lu += fp.factorisations;
            fresh_lu += fresh.factorisations;
            warm = Some(fp.x);
        }
        // (the steps here are large: the chord phase saves factorisations on fine sweeps, bench/rows-heavy.md)
        assert!(held_lu <= fresh_lu, "{held_lu} factorisations with held ones, {fresh_lu} without");
    }

    /// The relative polish stops when its Newton steps do not contract: the PS triplet at
    /// K = 24 (GMRES solves with an incomplete LU) has entries that round-off sets, which
    /// every step moves by many times their size; the polish stops before its fourth step
    /// (by the contraction rule, or by `RELATIVE_NOISE` after a step that raised the residual),
    /// its last relative change far above the step tolerance, and the fixed point stays at the
    /// tolerance.
    #[test]
    fn the_relative_polish_stops_when_newton_steps_do_not_contract() {
        use mfq_model::models::redundancy::RedundancyTriplet;
        let m = RedundancyTriplet::new(0.9, 2, 24).unwrap();
        let opts = FixedPointOptions { max_dim_for_eigenvalues: 0, x0: m.mean_field_start(), ..Default::default() };
        let fp = solve_model(&m, &opts).unwrap();
        assert!(fp.converged() && fp.residual < 1e-12, "{:?} {:e}", fp.status, fp.residual);
        let p = &fp.tail_polish;
        assert!(p.steps < RELATIVE_STEPS && p.last_relative_step > RELATIVE_STEP_TOL, "{p:?}");
    }

    /// A model of another dimension drops what is held.
    #[test]
    fn factors_of_another_shape_are_dropped() {
        let mut factors = Factors::default();
        let a = RedundancyPair::new(0.7, 2, Discipline::Ps, 1, 20).unwrap();
        solve_model_with(&a, &FixedPointOptions { max_dim_for_eigenvalues: 0, ..Default::default() }, &mut factors).unwrap();
        let b = RedundancyPair::new(0.7, 2, Discipline::Ps, 1, 24).unwrap();
        assert!(factors.take_for(&b).is_none());
        assert!(factors.held.is_none());
    }
}
