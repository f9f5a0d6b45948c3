//! LL(d): each arrival joins the **least loaded** (by workload) of `d` sampled servers; the
//! fixed point is the workload ccdf, solved as an ODE in the workload `w` for phase-type sizes.

// index loops over the phases j, j' and levels k mirror the formulas in the docs
#![allow(clippy::needless_range_loop)]

use crate::finite::{FiniteSystem, Simulation};
use crate::models::params;
use crate::models::phase_type::{JobSizeSpec, PhaseType, MAX_PHASES};
use crate::models::{check_d, check_lambda, check_levels};
use crate::registry::{read_spec, Kind, KindSpec};
use crate::AnalyticJacobian;
mod expcol;

use crate::{out_of_range, Deadline, Jacobian, MeanFieldModel, ModelError, NamedState, Observables, Sparsity, Stability, StateLayout};

/// Block size on the stack: `Fbar` plus up to [`MAX_PHASES`] entries of `xi`.
const NB: usize = MAX_PHASES + 1;

/// LL(d), FCFS unit-rate servers, Poisson arrivals at rate `lambda` per server, job sizes
/// `PH(alpha, A)` (exit rates `nu = -A 1`), load `rho = lambda E[S]`.
///
/// # Equations (Hellemans and Van Houdt, POMACS 2(2) / SIGMETRICS 2018; docs/models/lld.md)
///
/// `Fbar(w)` = fraction of servers with workload above `w`. The equilibrium workload
/// distribution solves `Fbar(w) = rho - lambda int_0^w (1 - Fbar(u)^d) Gbar(w - u) du`, i.e.
/// the DIDE `Fbar'(w) = -lambda [Gbar(w) - Fbar(w)^d + int_0^w Fbar(u)^d g(w - u) du]` with
/// `Fbar(0) = rho`. For phase-type sizes it is the ODE in `w`
///
/// ```text
/// Fbar' = -lambda ((1 - Fbar^d) + alpha A xi),   xi' = (1 - Fbar^d) 1 + A xi,   Fbar(0) = rho, xi(0) = 0,
/// ```
///
/// `xi(w) = int_0^w e^{A(w-u)} 1 (1 - Fbar(u)^d) du`. Since `alpha xi' = (1 - Fbar^d) + alpha A xi`,
/// `Fbar + lambda alpha xi = rho` along the solution: `Fbar` is eliminated and only `xi` is
/// integrated, `xi' = (1 - (rho - lambda alpha xi)^d) 1 + A xi` (this also makes `Fbar -> 0`
/// exact in the discrete solution: its limit solves `Fbar = rho Fbar^d`). The waiting time
/// (FCFS) has ccdf `Fbar(w)^d`, so `E[R] = E[S] + int_0^inf Fbar(w)^d dw`, and `E[L] =
/// lambda E[R]` (Little).
///
/// Exponential sizes with mean 1 (closed forms of the paper, [`exponential_workload_ccdf`],
/// [`exponential_mean_response_time`], [`exponential_response_ccdf`]):
/// `Fbar(w) = (lambda + (lambda^{1-d} - lambda) e^{(d-1) w})^{1/(1-d)}`,
/// `E[R] = sum_n lambda^{dn} / (1 + n(d-1))`.
///
/// # State and "drift"
///
/// LL(d) has no finite-dimensional transient mean field (its state is a workload
/// distribution, a PDE in `t` and `w`). What this model solves is the **fixed-point equation**:
/// [`StateLayout::Workload`], blocks `y_i = (Fbar(w_i), xi(w_i))` at `w_i = (i + 1) h`,
/// `i = 0..points`, and the "drift" is the relaxation toward the grid solution
///
/// ```text
/// dy/dt = y* - y,    xi*_i = Phi_h(xi*_{i-1}),  xi*_{-1} = 0,   Fbar*_i = rho - lambda alpha xi*_i,
/// ```
///
/// where `Phi_h` integrates the `xi` ODE over one grid step `h` with error control:
/// exponential Radau collocation (4 nodes, order 7, the stiff linear part `A` integrated
/// exactly, so H2 laws with `f -> 0` cost no more than others) with step doubling, steps
/// `h / 2^l`, at most `1e-14` of step-doubling difference per step. It is integrated once
/// across the grid when the model is built, with the integrals `int Fbar^d`, `int Fbar` (Radau
/// quadrature on the nodes) and an estimate of their error ([`Lld::error_estimates`]). The
/// grid step is `0.1 E[S]` unless the ccdf decays slowly ([`Lld::automatic_step`]).
/// The Jacobian is `-I` (diagonal band), so Newton lands on `y*` in one
/// step and every transient converges like `e^{-t}`. Time integrations of this model
/// (`mfq solve`, the checker's runs) show that relaxation, **not** the LL(d) dynamics; no order
/// is claimed. (A chain form `d xi_i/dt = Phi_h(xi_{i-1}) - xi_i` has the same equilibrium, but its
/// transients need `O(points)` time to cross the grid, which made reports of `points ~ 4000`
/// models take minutes.) The truncation diagnostic is `Fbar` at the last grid point.
///
/// Stable iff `rho < 1`. Sources: T. Hellemans and B. Van Houdt, "On the power-of-d-choices
/// with least loaded server selection", Proc. ACM Meas. Anal. Comput. Syst. 2(2), 2018
/// (SIGMETRICS 2018), reprinted in T. Hellemans' PhD thesis (Univ. Antwerp), whose equations
/// docs/models/lld.md transcribes.
#[derive(Debug, Clone, PartialEq)]
pub struct Lld {
    lambda: f64,
    d: u32,
    size: PhaseType,
    points: usize,
    step: f64,
    substeps: usize,
    rho: f64,
    m: usize,
    /// `lambda alpha`, used in `Fbar = rho - lambda alpha xi`.
    lam_alpha: Vec<f64>,
    /// Asymptotic decay rate of `Fbar` (a lower bound; [`decay_rate`]).
    decay: f64,
    /// `|lambda alpha (-B)^{-1}|` (see `expcol::Problem::sens`).
    sens: Vec<f64>,
    /// The grid solution `y*` (computed once, at construction).
    target: Vec<f64>,
    /// `[int Fbar^d, int Fbar]` over `[0, inf)` at `y*` and their estimated absolute errors.
    integrals: [f64; 2],
    errors: [f64; 2],
    /// Collocation steps taken across the grid.
    steps: usize,
}

/// Grid points the automatic grid step aims at: `h = max(0.1 E[S], L / TARGET_POINTS)` with
/// `L` the estimated workload at which `Fbar` falls below `1e-14`.
const TARGET_POINTS: f64 = 4096.0;

/// Why an adaptive grid step failed.
fn step_failure(e: expcol::Failure, i: usize, points: usize, deadline: &Deadline, lambda: f64) -> ModelError {
    match e {
        expcol::Failure::Stopped => {
            ModelError::Interrupted { during: format!("the LL(d) workload grid (point {i} of {points})"), reason: deadline.reason() }
        }
        expcol::Failure::NoConvergence => out_of_range(
            "model.lambda",
            lambda,
            "a load at which the collocation steps of the workload ODE converge (they did not at the smallest step)",
        ),
    }
}

impl Lld {
    /// LL(d) with `points` grid points and the automatic grid step [`Lld::automatic_step`]
    /// (`0.1 E[S]` unless the workload ccdf decays slowly); the ODE is integrated with error
    /// control at each point (module `expcol`, docs/models/lld.md "Numerics").
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] for `lambda` (`model.lambda`), `d = 0` (`model.d`),
    /// `points = 0` (`truncation.levels`).
    pub fn new(lambda: f64, d: u32, size: PhaseType, points: usize) -> Result<Self, ModelError> {
        Self::new_within(lambda, d, size, points, &Deadline::none())
    }

    /// [`new`](Self::new) within `deadline`: the grid sweep checks it at every grid point and
    /// every 64 collocation steps.
    ///
    /// # Errors
    /// As [`new`](Self::new), and [`ModelError::Interrupted`] past the deadline.
    pub fn new_within(lambda: f64, d: u32, size: PhaseType, points: usize, deadline: &Deadline) -> Result<Self, ModelError> {
        check_lambda(lambda)?;
        check_d(d)?;
        let h = Self::automatic_step(lambda, d, &size);
        Self::with_grid_within(lambda, d, size, points, h, 2, deadline)
    }

    /// The automatic grid step: `max(0.1 E[S], L / 4096)` with `L = (ln 1e14 + ln(1/(1 - rho))) /
    /// theta` the workload by which `Fbar` has decayed below about `1e-14` (`theta` from
    /// [`decay_rate`]), so that about 4096 points reach the truncation tolerance whatever the
    /// load and the size law (an H2 law with `f -> 1` has a slow phase of mean `~ 1/(1 - f)`).
    pub fn automatic_step(lambda: f64, d: u32, size: &PhaseType) -> f64 {
        let rho = lambda * size.mean();
        let base = 0.1 * size.mean();
        if !(rho < 1.0 && rho > 0.0) {
            return base;
        }
        let theta = decay_rate(lambda, d, size);
        let span = (1e14f64.ln() + (-(1.0 - rho).ln()).max(0.0)) / theta;
        if span.is_finite() {
            base.max(span / TARGET_POINTS)
        } else {
            base
        }
    }

    /// LL(d) on a grid of `points` points spaced `step` (workload units), with at least
    /// `substeps` collocation steps per grid step (more where the error control asks).
    ///
    /// # Errors
    /// As [`new`](Self::new), and `model.grid_step` (not finite or `<= 0`),
    /// `model.substeps` (0).
    pub fn with_grid(lambda: f64, d: u32, size: PhaseType, points: usize, step: f64, substeps: usize) -> Result<Self, ModelError> {
        Self::with_grid_within(lambda, d, size, points, step, substeps, &Deadline::none())
    }

    /// [`with_grid`](Self::with_grid) within `deadline`. At `rho >= 1` (unstable: no
    /// equilibrium) the grid is not integrated and the target is zero; the model's
    /// [`stability`](MeanFieldModel::stability) says why.
    ///
    /// # Errors
    /// As [`with_grid`](Self::with_grid), and [`ModelError::Interrupted`] past the deadline.
    pub fn with_grid_within(
        lambda: f64,
        d: u32,
        size: PhaseType,
        points: usize,
        step: f64,
        substeps: usize,
        deadline: &Deadline,
    ) -> Result<Self, ModelError> {
        check_lambda(lambda)?;
        check_d(d)?;
        check_levels(points)?;
        if !(step.is_finite() && step > 0.0) {
            return Err(out_of_range("model.grid_step", step, "a finite workload step > 0"));
        }
        if substeps == 0 {
            return Err(out_of_range("model.substeps", substeps, "an integer >= 1"));
        }
        let m = size.phases();
        let lam_alpha = size.alpha().iter().map(|a| lambda * a).collect();
        let rho = lambda * size.mean();
        let decay = if rho < 1.0 { decay_rate(lambda, d, &size) } else { 0.0 };
        let sens = if rho < 1.0 { sensitivity(lambda, d, &size) } else { vec![0.0; m] };
        let mut model = Lld {
            sens,
            lambda,
            d,
            rho,
            size,
            points,
            step,
            substeps,
            m,
            lam_alpha,
            decay,
            target: Vec::new(),
            integrals: [0.0; 2],
            errors: [0.0; 2],
            steps: 0,
        };
        if rho < 1.0 {
            let (target, sums) = model.sweep(None, deadline)?;
            model.target = target;
            model.set_integrals(&sums);
        } else {
            model.target = vec![0.0; points * model.block()];
        }
        Ok(model)
    }

    /// The `expcol` problem of this model.
    fn problem(&self) -> expcol::Problem<'_> {
        expcol::Problem {
            m: self.m,
            a: self.size.sub_generator(),
            lam_alpha: &self.lam_alpha,
            rho: self.rho,
            d: self.d as i32,
            sens: &self.sens,
        }
    }

    /// Smallest step level (`2^lmin >= substeps`).
    fn lmin(&self) -> u32 {
        (self.substeps.next_power_of_two().trailing_zeros()).min(expcol::MAX_LEVEL - 2)
    }

    /// Integrates across the grid. `from = None`: from `xi(0) = 0`, one continuous solution
    /// (the grid solution `y*`, layout of [`StateLayout::Workload`]); `from = Some(x)`: each
    /// grid step from the state of `x` at the previous point (for the integrals of any state).
    /// [`ModelError::Interrupted`] when `deadline` passes.
    fn sweep(&self, from: Option<&[f64]>, deadline: &Deadline) -> Result<(Vec<f64>, expcol::Sums), ModelError> {
        let (b, m) = (self.block(), self.m);
        let p = self.problem();
        let mut levels = expcol::Levels::new(self.step);
        let lmin = self.lmin();
        // the first grid step starts at steps of about 1/(8 d mu_max): near w = 0, Fbar^d falls
        // over a width ~ 1/(d mu_max), which the collocation nodes of a coarser step can step
        // over entirely (both halves of the step-doubling test then see 0; e.g. LL(10000),
        // lambda = 0.999: int Fbar^d = 4.5e-9 came out as 6e-17)
        let mu_max = (0..m).map(|i| -self.size.rate(i, i)).fold(0.0f64, f64::max);
        let boundary = (self.step * self.d as f64 * mu_max * 8.0).max(1.0).log2().ceil();
        let mut hint = (boundary as u32).clamp(lmin, expcol::MAX_LEVEL - 2);
        let mut y = vec![0.0; if from.is_none() { self.points * b } else { 0 }];
        let mut xi = [0.0; NB];
        let mut sums = expcol::Sums::default();
        let stop = || deadline.expired();
        for i in 0..self.points {
            if deadline.expired() {
                return Err(step_failure(expcol::Failure::Stopped, i, self.points, deadline, self.lambda));
            }
            if let Some(x) = from {
                xi = self.previous_xi(x, i);
            }
            expcol::grid_step(&p, &mut levels, lmin, &mut hint, &mut xi, &mut sums, &stop)
                .map_err(|e| step_failure(e, i, self.points, deadline, self.lambda))?;
            if from.is_none() {
                // stored within the bounds of `project` (rounding may overshoot `xi_j <= r_j` as
                // `Fbar -> 0`, and the solver would then fight the projection)
                y[i * b] = self.fbar(&xi[..m]).clamp(0.0, 1.0);
                for (j, r) in self.size.mean_residual().iter().enumerate() {
                    y[i * b + 1 + j] = xi[j].clamp(0.0, *r);
                }
            }
        }
        Ok((y, sums))
    }

    /// Stores the integrals of `sums` with the tail beyond the last grid point added and
    /// the error estimate.
    fn set_integrals(&mut self, sums: &expcol::Sums) {
        let (totals, errors) = self.finish(sums, self.target.get((self.points - 1) * self.block()).copied().unwrap_or(0.0));
        self.integrals = totals;
        self.errors = errors;
        self.steps = sums.steps;
    }

    /// `([int Fbar^d, int Fbar], their error estimates)` from the grid sums and `Fbar` at the
    /// last grid point `f_last`: the tail beyond it is added as `Fbar(w) = f_last e^{-theta (w
    /// - w_K)}` (`int Fbar^d = f_last^d / (d theta)`), and counted in full in the estimate,
    /// with the step-doubling differences, the differences of the state carried to the later
    /// integrals by their linear response ([`sensitivity`]) and rounding terms: `4 eps sqrt(steps)`
    /// relative, and that times `rho` as a noise floor of `Fbar` over the grid length; the sum
    /// is doubled. It covers the error in the tests up to `rho = 0.9`; at `d = 1`, `rho = 0.999`
    /// it falls short by up to 9x (true error 2.5e-10 relative, module `adaptive_tests`).
    fn finish(&self, sums: &expcol::Sums, f_last: f64) -> ([f64; 2], [f64; 2]) {
        let f = f_last.max(0.0);
        let theta = self.decay.max(1e-300);
        let tail = [f.powi(self.d as i32) / (self.d as f64 * theta), f / theta];
        let totals = [sums.wait + tail[0], sums.work + tail[1]];
        // rounding: a random walk of a few ulps per step, in the integrals and in `Fbar = rho -
        // lambda alpha xi` (a noise floor of `Fbar` integrated over the grid)
        let ulps = 4.0 * f64::EPSILON * (sums.steps as f64).sqrt();
        let floor = ulps * self.rho * self.points as f64 * self.step;
        // a factor 2 of safety (at d = 1, rho = 0.999 the terms add to 0.1-0.6 of the error
        // against Pollaczek-Khinchine, about 2.5e-10 relative: adaptive_tests)
        let errors = [
            2.0 * (sums.wait_err + sums.f_err_wait + tail[0] + ulps * totals[0] + if self.d == 1 { floor } else { 0.0 }),
            2.0 * (sums.work_err + sums.f_err_work + tail[1] + ulps * totals[1] + floor),
        ];
        (totals, errors)
    }

    /// Load `rho = lambda E[S]` (= `Fbar(0)`, the busy fraction).
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// Grid step `h`.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// Least collocation steps per grid step (the error control takes more where needed).
    pub fn substeps(&self) -> usize {
        self.substeps
    }

    /// Collocation steps taken across the grid when the model was built.
    pub fn collocation_steps(&self) -> usize {
        self.steps
    }

    /// Estimated absolute errors of `[int Fbar^d, int Fbar]` (the mean waiting time, hence
    /// `E[R]`, and the mean workload) at the grid solution (`Lld::finish`).
    pub fn error_estimates(&self) -> [f64; 2] {
        self.errors
    }

    /// Asymptotic decay rate `theta` of `Fbar` used for the grid step and the tail
    /// ([`decay_rate`]).
    pub fn decay_rate(&self) -> f64 {
        self.decay
    }

    /// `Fbar` from `xi`: `rho - lambda alpha xi`.
    #[inline]
    fn fbar(&self, xi: &[f64]) -> f64 {
        self.rho - self.lam_alpha.iter().zip(xi).map(|(a, x)| a * x).sum::<f64>()
    }

    #[inline]
    fn block(&self) -> usize {
        1 + self.m
    }

    /// `xi` of block `i - 1` (zero before the first grid point), on the stack.
    #[inline]
    fn previous_xi(&self, x: &[f64], i: usize) -> [f64; NB] {
        let mut xi = [0.0; NB];
        if i > 0 {
            let b = self.block();
            xi[..self.m].copy_from_slice(&x[(i - 1) * b + 1..i * b]);
        }
        xi
    }

    /// `[int_0^inf Fbar(w)^d dw, int_0^inf Fbar(w) dw]`: the mean waiting time (FCFS) and the
    /// mean workload per server. At the grid solution `y*` these are the values integrated
    /// when the model was built (Radau quadrature on the collocation nodes); for another state
    /// `x` each grid step is integrated again from the state of `x` at the previous point.
    /// The part beyond the last grid point is added as an exponential tail of rate `theta`
    /// ([`Lld::decay_rate`]).
    pub fn integrals(&self, x: &[f64]) -> [f64; 2] {
        let same = x.len() == self.target.len() && x.iter().zip(&self.target).all(|(a, b)| (a - b).abs() <= 1e-15 * b.abs().max(1.0));
        if same || self.rho >= 1.0 {
            return self.integrals;
        }
        match self.sweep(Some(x), &Deadline::none()) {
            Ok((_, sums)) => self.finish(&sums, x.get((self.points - 1) * self.block()).copied().unwrap_or(0.0)).0,
            Err(_) => self.integrals,
        }
    }

    /// The workload ccdf `(w, Fbar(w))` at `w = 0` and at every grid point of `x`.
    pub fn workload_ccdf(&self, x: &[f64]) -> Vec<(f64, f64)> {
        let b = self.block();
        std::iter::once((0.0, self.rho)).chain((0..self.points).map(|i| ((i + 1) as f64 * self.step, x[i * b]))).collect()
    }
}

/// `|lambda alpha (-B)^{-1}|` entrywise, `B = A + lambda 1 alpha` for `d = 1` and `B = A`
/// otherwise: a change `e` of `xi` changes the later `int Fbar` by `lambda alpha (-B)^{-1} e`
/// (exactly for `d = 1`, where the ODE is linear; for `d >= 2` the term `d Fbar^{d-1}` only
/// speeds the decay). Zeros when the matrix is singular.
pub fn sensitivity(lambda: f64, d: u32, size: &PhaseType) -> Vec<f64> {
    let m = size.phases();
    // (-B)^T u = lambda alpha^T
    let mut neg_t = vec![0.0; m * m];
    for i in 0..m {
        for j in 0..m {
            let b = size.rate(i, j) + if d == 1 { lambda * size.alpha()[j] } else { 0.0 };
            neg_t[j * m + i] = -b;
        }
    }
    let rhs: Vec<f64> = size.alpha().iter().map(|a| lambda * a).collect();
    crate::models::phase_type::solve_dense(&neg_t, &rhs).map_or_else(|| vec![0.0; m], |u| u.iter().map(|v| v.abs()).collect())
}

/// A lower bound on the asymptotic decay rate `theta` of the workload ccdf of LL(d) at `rho <
/// 1`: for `d >= 2` the slowest rate of the size law (`Fbar^d` is negligible in the tail, so
/// `xi' ~ A xi`); for `d = 1` (M/PH/1) the slowest rate of `B = A + lambda 1 alpha` (the ODE is
/// linear, `xi' = (1 - rho) 1 + B xi`). Both are `1 / r` with `r` the spectral radius of the
/// nonnegative matrix `(-B)^{-1}`, bounded above by the Collatz-Wielandt quotient
/// `max_i (M x)_i / x_i` over 100 power iterations (R. S. Varga, Matrix Iterative Analysis,
/// Thm. 2.2). Returns `1 / E[S]` if the matrix is singular.
pub fn decay_rate(lambda: f64, d: u32, size: &PhaseType) -> f64 {
    let m = size.phases();
    let mut neg: Vec<f64> = size.sub_generator().iter().map(|v| -v).collect();
    if d == 1 {
        for i in 0..m {
            for (j, a) in size.alpha().iter().enumerate() {
                neg[i * m + j] -= lambda * a;
            }
        }
    }
    let mut x = vec![1.0; m];
    let mut bound = f64::INFINITY;
    for _ in 0..100 {
        let Some(y) = crate::models::phase_type::solve_dense(&neg, &x) else {
            return 1.0 / size.mean();
        };
        let q = y.iter().zip(&x).map(|(a, b)| a / b).fold(0.0, f64::max);
        bound = bound.min(q);
        let top = y.iter().fold(0.0, |a: f64, v| a.max(v.abs()));
        if !(top.is_finite() && top > 0.0) || y.iter().any(|v| *v <= 0.0) {
            break;
        }
        x = y.iter().map(|v| v / top).collect();
    }
    if bound.is_finite() && bound > 0.0 {
        1.0 / bound
    } else {
        1.0 / size.mean()
    }
}

impl MeanFieldModel for Lld {
    fn name(&self) -> String {
        format!("LL({}) with {} jobs", self.d, self.size.label())
    }

    fn dim(&self) -> usize {
        self.points * self.block()
    }

    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        for ((d, t), v) in dx.iter_mut().zip(&self.target).zip(x) {
            *d = t - v;
        }
    }

    fn layout(&self) -> StateLayout {
        StateLayout::Workload { points: self.points, step: self.step, phases: self.m }
    }

    /// `E[R] = E[S] + int Fbar^d`, `E[L] = lambda E[R]`, `P(wait) = rho^d`; no queue-length
    /// tail (the state is a workload); extras: `load_rho`, `mean_waiting_time`,
    /// `mean_workload` (`int Fbar`), `grid_step` (both integrals from [`Lld::integrals`]),
    /// `mean_response_time_error_estimate` and `mean_workload_error_estimate` (absolute,
    /// [`Lld::error_estimates`]).
    fn observables(&self, x: &[f64]) -> Observables {
        let [wait, workload] = self.integrals(x);
        let response = self.size.mean() + wait;
        let b = self.block();
        let last = x.get((self.points - 1) * b).copied().unwrap_or(0.0).max(0.0);
        Observables {
            tail: Vec::new(),
            mean_queue_length: Some(self.lambda * response),
            throughput: Some(self.lambda),
            mean_response_time: Some(response),
            prob_wait: Some(self.rho.powi(self.d as i32)),
            loss_probability: 0.0,
            mass_at_truncation: last,
            extras: vec![
                ("load_rho".into(), self.rho),
                ("mean_waiting_time".into(), wait),
                ("mean_workload".into(), workload),
                ("grid_step".into(), self.step),
                ("mean_response_time_error_estimate".into(), self.errors[0]),
                ("mean_workload_error_estimate".into(), self.errors[1]),
            ],
        }
    }

    /// `empty`: `Fbar = 0`, `xi = 0`; `full`: `Fbar = 1`, `xi` = the mean residual sizes (the
    /// bounds of each entry; any state relaxes to the same point, see the type docs).
    fn extremal_states(&self) -> Vec<NamedState> {
        let b = self.block();
        let mut full = vec![0.0; self.dim()];
        for i in 0..self.points {
            full[i * b] = 1.0;
            full[i * b + 1..(i + 1) * b].copy_from_slice(self.size.mean_residual());
        }
        vec![NamedState { name: "empty".into(), x: vec![0.0; self.dim()] }, NamedState { name: "full".into(), x: full }]
    }

    /// `Fbar` to `[0, 1]`, `xi_j` to `[0, (-A^{-1} 1)_j]`.
    fn project(&self, x: &mut [f64]) {
        let b = self.block();
        let r = self.size.mean_residual();
        for blk in x.chunks_mut(b) {
            blk[0] = blk[0].clamp(0.0, 1.0);
            for (v, rj) in blk[1..].iter_mut().zip(r) {
                *v = v.clamp(0.0, *rj);
            }
        }
    }

    fn stability(&self) -> Stability {
        if self.rho < 1.0 {
            Stability::Stable { condition: format!("rho < 1: rho = lambda E[S] = {}", self.rho) }
        } else {
            Stability::Unstable {
                reason: format!(
                    "rho = lambda E[S] = {} >= 1: more work arrives than the servers can do (LL(d) is stable iff rho < 1)",
                    self.rho
                ),
            }
        }
    }

    /// Exponential sizes only: the closed form `Fbar(w_i)` (mean `s`: `Fbar(w) = Fbar_1(w/s)`
    /// at load `rho`), `xi_i = (rho - Fbar(w_i)) / lambda`. It differs from the grid
    /// solution by the integration error (about `1e-13`).
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        if !(self.size.is_exponential() && self.rho < 1.0) {
            return None;
        }
        let s = self.size.mean();
        let mut x = vec![0.0; self.dim()];
        for i in 0..self.points {
            let f = exponential_workload_ccdf(self.rho, self.d, (i + 1) as f64 * self.step / s);
            x[2 * i] = f;
            x[2 * i + 1] = (self.rho - f) / self.lambda;
        }
        Some(x)
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
}

impl AnalyticJacobian for Lld {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Banded { lower: 0, upper: 0 }
    }
    /// `-I`: the drift is `y* - y` with `y*` independent of the state.
    fn jacobian(&self, _x: &[f64], jac: &mut Jacobian) {
        jac.clear();
        for i in 0..self.dim() {
            jac.set(i, i, -1.0);
        }
    }
}

/// LL(d) with exponential sizes of mean 1 at arrival rate `lambda < 1`: the workload ccdf
/// `Fbar(w) = (lambda + (lambda^{1-d} - lambda) e^{(d-1) w})^{1/(1-d)}` (`lambda e^{-(1-lambda) w}`
/// for `d = 1`, the M/M/1 workload). Hellemans and Van Houdt 2018 (closed form for exponential
/// sizes).
pub fn exponential_workload_ccdf(lambda: f64, d: u32, w: f64) -> f64 {
    if d == 1 {
        return lambda * (-(1.0 - lambda) * w).exp();
    }
    let dm1 = (d - 1) as f64;
    // (lambda + (lambda^{1-d} - lambda) e^{(d-1)w})^{-1/(d-1)}, in logs to avoid overflow at large w
    let lead = (lambda.powf(-dm1) - lambda).ln() + dm1 * w;
    let inner = lead + (lambda * (-lead).exp()).ln_1p();
    (-inner / dm1).exp()
}

/// LL(d) with exponential sizes of mean 1: `E[R] = sum_{n >= 0} lambda^{dn} / (1 + n(d-1))`
/// (Hellemans and Van Houdt 2018). Summed until the terms are below 1e-17.
pub fn exponential_mean_response_time(lambda: f64, d: u32) -> f64 {
    let q = lambda.powi(d as i32);
    let mut term = 1.0;
    let mut total: f64 = 0.0;
    let mut n = 0u32;
    while term > 1e-17 * total.max(1.0) || n < 2 {
        total += term / (1.0 + n as f64 * (d as f64 - 1.0));
        term *= q;
        n += 1;
        if n > 10_000_000 {
            break;
        }
    }
    total
}

/// LL(d), FCFS, exponential sizes of mean 1: response-time ccdf
/// `P(R > w) = (lambda^d + (1 - lambda^d) e^{(d-1) w})^{1/(1-d)}` (`e^{-(1-lambda) w}` for
/// `d = 1`). Hellemans and Van Houdt 2018.
pub fn exponential_response_ccdf(lambda: f64, d: u32, w: f64) -> f64 {
    if d == 1 {
        return (-(1.0 - lambda) * w).exp();
    }
    let q = lambda.powi(d as i32);
    let dm1 = (d - 1) as f64;
    (-(q + (1.0 - q) * (dm1 * w).exp()).ln() / dm1).exp()
}

#[cfg(test)]
mod adaptive_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::testutil::jacobian_error;

    #[test]
    fn jacobian_equals_central_differences() {
        for size in
            [PhaseType::exponential(1.0).unwrap(), PhaseType::h2_from_moments(1.0, 9.0, 0.5).unwrap(), PhaseType::erlang(3, 1.0).unwrap()]
        {
            let m = Lld::new(0.8, 2, size, 12).unwrap();
            let mut x = m.extremal_states()[1].x.clone();
            x.iter_mut().enumerate().for_each(|(i, v)| *v *= 0.3 + 0.5 * ((i * 7 % 11) as f64 / 11.0));
            assert!(jacobian_error(&m, &x) < 1e-6, "{}", m.name());
        }
    }

    /// d = 2, lambda = 0.5: the closed form at the grid; the relaxation residual vanishes there
    /// up to the integration error.
    #[test]
    fn closed_form_is_nearly_a_root() {
        let m = Lld::new(0.5, 2, PhaseType::exponential(1.0).unwrap(), 100).unwrap();
        let x = m.analytic_fixed_point().unwrap();
        let mut dx = vec![0.0; m.dim()];
        m.drift(&x, &mut dx);
        let r = dx.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(r < 1e-9, "residual {r}");
    }

    #[test]
    fn closed_forms_agree_with_each_other() {
        // d = 2: sum_n lambda^{2n}/(1+n) = -ln(1 - lambda^2)/lambda^2 (Hellemans and Van Houdt 2018: E[L_2] = -log(1-lambda^2)/lambda)
        for lambda in [0.3, 0.5, 0.9, 0.99] {
            let er = exponential_mean_response_time(lambda, 2);
            let closed = -(1.0 - lambda * lambda).ln() / (lambda * lambda);
            assert!((er - closed).abs() < 1e-12 * closed, "{er} vs {closed}");
        }
        // Fbar(0) = lambda, response ccdf at 0 is 1
        assert!((exponential_workload_ccdf(0.7, 3, 0.0) - 0.7).abs() < 1e-15);
        assert!((exponential_response_ccdf(0.7, 3, 0.0) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn bad_grid_is_rejected() {
        let e = Lld::with_grid(0.5, 2, PhaseType::exponential(1.0).unwrap(), 10, 0.0, 4).unwrap_err();
        assert!(e.to_string().contains("model.grid_step = 0"), "{e}");
    }
}

/// `kind = "lld"`: the parameters of [`Lld`] in a model file (`truncation.levels` counts grid
/// points).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LldSpec {
    /// Arrival rate per server.
    pub lambda: f64,
    /// Servers sampled per arrival.
    pub d: u32,
    /// `[model.job_size]`, see [`JobSizeSpec`].
    #[serde(default)]
    pub job_size: JobSizeSpec,
}

/// The `lld` kind.
pub static LLD: Kind = Kind {
    name: "lld",
    title: "LL(d): least loaded of d by workload (fixed point: workload ccdf by an ODE in w)",
    params: &[params::LAMBDA_PT, params::D, params::JOB_SIZE],
    sources: "Hellemans and Van Houdt, SIGMETRICS 2018 (POMACS 2(2)); closed forms for exponential sizes",
    example: "models/lld2-h2.toml",
    docs: "docs/models/lld.md",
    read: read_spec::<LldSpec>,
};

impl KindSpec for LldSpec {
    fn kind(&self) -> &'static Kind {
        &LLD
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        self.build_within(levels, &Deadline::none())
    }
    /// The grid sweep checks the deadline at every grid point.
    fn build_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        // `levels` = number of workload grid points
        Ok(Box::new(Lld::new_within(self.lambda, self.d, self.job_size.to_phase_type()?, levels, deadline)?))
    }
    /// The parameter checks of [`build`](KindSpec::build) without the grid (see `build_probe`).
    fn validate(&self, levels: usize) -> Result<(), ModelError> {
        check_levels(levels)?;
        self.build_probe(levels).map(|_| ())
    }
    /// One grid point: the same parameters and stability verdict (`rho < 1`, checked before
    /// any integration: at `rho >= 1` nothing is integrated) at the cost of one grid step.
    fn build_probe(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        let size = self.job_size.to_phase_type()?;
        let step = 0.1 * size.mean();
        Ok(Box::new(Lld::with_grid(self.lambda, self.d, size, 1, step, 1)?))
    }
    /// Workload grid points (step [`Lld::automatic_step`]).
    fn initial_levels(&self) -> usize {
        128
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        Ok(Simulation::System(FiniteSystem::LeastLoaded { lambda: self.lambda, d: self.d, job_size: self.job_size.to_phase_type()? }))
    }
}
