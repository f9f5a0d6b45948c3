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
/// where `Phi_h` is `substeps` classical Runge-Kutta (RK4) steps of the `xi` ODE over one grid
/// step `h`, integrated once across the grid when the model is built. Its unique equilibrium
/// `y*` is the RK4 solution on the grid (global error
/// `O((h/substeps)^4)`); the Jacobian is `-I` (diagonal band), so Newton lands on `y*` in one
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
    /// The grid solution `y*` (computed once, at construction).
    target: Vec<f64>,
}

impl Lld {
    /// LL(d) with `points` grid points, grid step `h = 0.1 E[S]` and enough RK4 substeps that
    /// `delta max(|A_jj|, lambda d) <= 0.02` (`delta = h / substeps`).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] for `lambda` (`model.lambda`), `d = 0` (`model.d`),
    /// `points = 0` (`truncation.levels`).
    pub fn new(lambda: f64, d: u32, size: PhaseType, points: usize) -> Result<Self, ModelError> {
        Self::new_within(lambda, d, size, points, &Deadline::none())
    }

    /// [`new`](Self::new) within `deadline`: the grid sweep checks it at every grid point.
    ///
    /// # Errors
    /// As [`new`](Self::new), and [`ModelError::Interrupted`] past the deadline.
    pub fn new_within(lambda: f64, d: u32, size: PhaseType, points: usize, deadline: &Deadline) -> Result<Self, ModelError> {
        let h = 0.1 * size.mean();
        let r = (0..size.phases()).map(|j| -size.rate(j, j)).fold(lambda * d as f64, f64::max);
        // (a float-to-usize cast saturates: a huge rate gives a huge count, refused by the deadline)
        let substeps = ((h * r / 0.02).ceil() as usize).max(2);
        Self::with_grid_within(lambda, d, size, points, h, substeps, deadline)
    }

    /// LL(d) on a grid of `points` points spaced `step` (workload units), with `substeps`
    /// RK4 steps per grid step.
    ///
    /// # Errors
    /// As [`new`](Self::new), and `model.grid_step` (not finite or `<= 0`),
    /// `model.substeps` (0).
    pub fn with_grid(lambda: f64, d: u32, size: PhaseType, points: usize, step: f64, substeps: usize) -> Result<Self, ModelError> {
        Self::with_grid_within(lambda, d, size, points, step, substeps, &Deadline::none())
    }

    /// [`with_grid`](Self::with_grid) within `deadline`.
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
        let mut model = Lld { lambda, d, rho: lambda * size.mean(), size, points, step, substeps, m, lam_alpha, target: Vec::new() };
        model.target = model.sweep(deadline)?;
        Ok(model)
    }

    /// The grid solution `y*`: the `xi` ODE integrated from `xi(0) = 0` across the grid, with
    /// `Fbar = rho - lambda alpha xi` at each point (layout of [`StateLayout::Workload`]);
    /// [`ModelError::Interrupted`] when `deadline` passes (checked at every grid point).
    fn sweep(&self, deadline: &Deadline) -> Result<Vec<f64>, ModelError> {
        let (b, m) = (self.block(), self.m);
        let mut y = vec![0.0; self.points * b];
        let mut xi = [0.0; NB];
        for i in 0..self.points {
            if deadline.expired() {
                return Err(ModelError::Interrupted {
                    during: format!("the LL(d) workload grid (point {i} of {}, {} RK4 substeps each)", self.points, self.substeps),
                    reason: deadline.reason(),
                });
            }
            self.grid_step(&mut xi, None);
            y[i * b] = self.fbar(&xi[..m]);
            y[i * b + 1..(i + 1) * b].copy_from_slice(&xi[..m]);
        }
        Ok(y)
    }

    /// Load `rho = lambda E[S]` (= `Fbar(0)`, the busy fraction).
    pub fn rho(&self) -> f64 {
        self.rho
    }

    /// Grid step `h`.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// RK4 substeps per grid step.
    pub fn substeps(&self) -> usize {
        self.substeps
    }

    /// `Fbar` from `xi`: `rho - lambda alpha xi`.
    #[inline]
    fn fbar(&self, xi: &[f64]) -> f64 {
        self.rho - self.lam_alpha.iter().zip(xi).map(|(a, x)| a * x).sum::<f64>()
    }

    /// Right-hand side of the `xi` ODE, `(1 - Fbar^d) 1 + A xi` with `Fbar = rho - lambda alpha xi`.
    #[inline]
    fn rhs(&self, xi: &[f64; NB], out: &mut [f64; NB]) {
        let m = self.m;
        let f = self.fbar(&xi[..m]);
        let s = 1.0 - f.powi(self.d as i32);
        for j in 0..m {
            out[j] = s + (0..m).map(|l| self.size.rate(j, l) * xi[l]).sum::<f64>();
        }
    }

    /// One grid step `Phi_h`: `substeps` RK4 steps from `xi`. With `acc`, accumulates
    /// `[int Fbar^d dw, int Fbar dw]` over the step by the same RK4 stages (fourth-order
    /// quadrature).
    fn grid_step(&self, xi: &mut [f64; NB], mut acc: Option<&mut [f64; 2]>) {
        let m = self.m;
        let dl = self.step / self.substeps as f64;
        let fd = |x: &[f64; NB]| {
            let f = self.fbar(&x[..m]);
            [f.powi(self.d as i32), f]
        };
        let (mut k1, mut k2, mut k3, mut k4) = ([0.0; NB], [0.0; NB], [0.0; NB], [0.0; NB]);
        let mut y = [0.0; NB];
        for _ in 0..self.substeps {
            self.rhs(xi, &mut k1);
            let c1 = fd(xi);
            axpy(&mut y, xi, 0.5 * dl, &k1, m);
            self.rhs(&y, &mut k2);
            let c2 = fd(&y);
            axpy(&mut y, xi, 0.5 * dl, &k2, m);
            self.rhs(&y, &mut k3);
            let c3 = fd(&y);
            axpy(&mut y, xi, dl, &k3, m);
            self.rhs(&y, &mut k4);
            let c4 = fd(&y);
            for j in 0..m {
                xi[j] += dl / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
            }
            if let Some(a) = acc.as_deref_mut() {
                a[0] += dl / 6.0 * (c1[0] + 2.0 * c2[0] + 2.0 * c3[0] + c4[0]);
                a[1] += dl / 6.0 * (c1[1] + 2.0 * c2[1] + 2.0 * c3[1] + c4[1]);
            }
        }
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

    /// `[int_0^{w_K} Fbar(w)^d dw, int_0^{w_K} Fbar(w) dw]`: the mean waiting time (FCFS) and
    /// the mean workload per server, integrated with the same RK4 stages from the grid values
    /// in `x` (the part beyond the last grid point, of the order of `Fbar(w_K)` times the
    /// tail's decay length, is not added).
    pub fn integrals(&self, x: &[f64]) -> [f64; 2] {
        let mut total = [0.0; 2];
        for i in 0..self.points {
            let mut xi = self.previous_xi(x, i);
            self.grid_step(&mut xi, Some(&mut total));
        }
        total
    }

    /// The workload ccdf `(w, Fbar(w))` at `w = 0` and at every grid point of `x`.
    pub fn workload_ccdf(&self, x: &[f64]) -> Vec<(f64, f64)> {
        let b = self.block();
        std::iter::once((0.0, self.rho)).chain((0..self.points).map(|i| ((i + 1) as f64 * self.step, x[i * b]))).collect()
    }
}

/// `a = x + c k` on the first `m` entries.
#[inline]
fn axpy(a: &mut [f64; NB], x: &[f64; NB], c: f64, k: &[f64; NB], m: usize) {
    for j in 0..m {
        a[j] = x[j] + c * k[j];
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
    /// `mean_workload` (`int Fbar`), `grid_step` (both integrals from [`Lld::integrals`]).
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
    /// at load `rho`), `xi_i = (rho - Fbar(w_i)) / lambda`. It differs from the RK4 grid
    /// solution by the integration error `O((h/substeps)^4)`.
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

    /// d = 2, lambda = 0.5: the closed form at the RK4 grid; the relaxation residual vanishes there
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
    /// One grid point with one substep: the same parameters and stability verdict (`rho < 1`)
    /// without the grid, whose cost grows with `lambda d` (`lambda = 1e6` would take minutes
    /// before the stability check).
    /// The parameter checks of [`build`](KindSpec::build) without the grid (see `build_probe`).
    fn validate(&self, levels: usize) -> Result<(), ModelError> {
        check_levels(levels)?;
        self.build_probe(levels).map(|_| ())
    }
    fn build_probe(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        let size = self.job_size.to_phase_type()?;
        let step = 0.1 * size.mean();
        Ok(Box::new(Lld::with_grid(self.lambda, self.d, size, 1, step, 1)?))
    }
    /// Workload grid points (step 0.1 E[S]).
    fn initial_levels(&self) -> usize {
        128
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        Ok(Simulation::System(FiniteSystem::LeastLoaded { lambda: self.lambda, d: self.d, job_size: self.job_size.to_phase_type()? }))
    }
}
