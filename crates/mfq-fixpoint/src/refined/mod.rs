//! The refined mean field: the `1/N` correction `E[X^N] ~ x* + V/N` of a density-dependent
//! population process at its fixed point.
//!
//! With `J = Df(x*)`, the noise matrix `Q = sum_l l l^T beta_l(x*)` (from the model's
//! [`transitions`](mfq_model::MeanFieldModel::transitions)) and the Hessian
//! `H^i_{jk} = d^2 f_i / dx_j dx_k (x*)`:
//!
//! ```text
//! J W + W J^T + Q = 0                        (W = lim N Cov(X^N), a Lyapunov equation)
//! V = -J^{-1} b,   b_i = 1/2 sum_{j,k} H^i_{jk} W_{jk}
//! ```
//!
//! (N. Gast and B. Van Houdt, "A refined mean field approximation", Proc. ACM Meas. Anal.
//! Comput. Syst. 1(2), 2017, Theorem 1 and eq. (7)-(8).) The Lyapunov equation is solved by
//! Bartels-Stewart on the real Schur form of `J` (nalgebra's Schur decomposition; 1x1 and 2x2
//! diagonal blocks), `O(n^3)`. The Hessian comes from central differences of the (analytic,
//! where the model has it) Jacobian, one-sided at the boundary of `[0, 1]`.

pub mod local;
pub mod memory;
pub mod order2;
pub mod tensor;
pub mod transient;

pub use order2::SecondOrder;

use mfq_model::{Deadline, Jacobian, MeanFieldModel};
use mfq_ode::linalg::ShiftedLu;
use nalgebra::DMatrix;
use serde::Serialize;

/// The refined mean-field terms at a fixed point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefinedMeanField {
    /// The fixed point `x*`.
    pub x: Vec<f64>,
    /// The `1/N` term: `E[X^N] ~ x* + v / N`.
    pub v: Vec<f64>,
    /// `sum_i v_i` (for tail-form states: the `1/N` correction of the mean queue length).
    pub sum_v: f64,
    /// `W` (row-major `n x n`): `N Cov(X^N) -> W`.
    pub covariance: Vec<f64>,
    /// `max |J W + W J^T + Q|` (the Lyapunov solve's residual).
    pub lyapunov_residual: f64,
    /// Correction `c` of the mean queue length per server, `L_N ~ L + c / N` (tail layouts).
    pub mean_queue_length_correction: Option<f64>,
    /// Correction `c` of the mean response time, `T_N ~ T + c / N` (Little, tail layouts).
    pub mean_response_time_correction: Option<f64>,
    /// The order of the expansion: 1 (`x* + V/N`) or 2 (`x* + V/N + A/N^2`).
    pub order: u8,
    /// The `1/N^2` term (order 2): `E[X^N] ~ x* + v / N + a / N^2`.
    pub a: Option<Vec<f64>>,
    /// `sum_i a_i` (order 2).
    pub sum_a: Option<f64>,
    /// `B` and `C` (order 2): `E[Y Y^T] = W/N + B/N^2`, `E[Y (x) Y (x) Y] = C/N^2` with
    /// `Y = X^N - x*` (row-major `n x n` and `n^3`); not serialised.
    #[serde(skip)]
    pub second: Option<SecondOrder>,
}

impl PartialEq for SecondOrder {
    fn eq(&self, other: &Self) -> bool {
        self.a == other.a && self.b == other.b && self.c == other.c
    }
}

impl RefinedMeanField {
    /// `x* + v / N` (order 1) or `x* + v / N + a / N^2` (order 2) for a system of `n` objects
    /// (servers).
    pub fn at(&self, n: f64) -> Vec<f64> {
        let mut out: Vec<f64> = self.x.iter().zip(&self.v).map(|(x, v)| x + v / n).collect();
        if let Some(a) = &self.a {
            out.iter_mut().zip(a).for_each(|(o, a)| *o += a / (n * n));
        }
        out
    }
}

/// Why the refined terms could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RefinedError {
    /// The model does not provide its transitions (jumps and rates).
    #[error("model {model} does not provide its transitions (jumps and rates), which the refined mean field needs")]
    NoTransitions {
        /// The model's name.
        model: String,
    },
    /// The drift is not differentiable on the feasible set (a sliding boundary, e.g. JIQ).
    #[error(
        "model {model} has a non-smooth drift (a sliding boundary): the refined mean field (an expansion in 1/N of a \
         smooth drift) does not apply"
    )]
    NotSmooth {
        /// The model's name.
        model: String,
    },
    /// `x*` has the wrong length.
    #[error("the state has {got} entries, the model has {expected}")]
    WrongDimension {
        /// Entries given.
        got: usize,
        /// Model dimension.
        expected: usize,
    },
    /// The Lyapunov equation or `J v = -b` is singular (an eigenvalue pair sums to zero, or `J` is singular).
    #[error("singular system in the refined mean field: {0}")]
    Singular(String),
    /// The deadline passed before the job finished (`during`: where it was; `reason`: the
    /// limit or the cancellation).
    #[error("the refined mean field stopped in {during} at {reason}")]
    Stopped {
        /// Where the job was.
        during: String,
        /// The limit as given, or a cancellation.
        reason: String,
    },
    /// The model is outside what this computation handles (the reason says what).
    #[error("refined mean field: {0}")]
    Unsupported(String),
    /// An option outside its range.
    #[error("{field} = {value} is not allowed: {allowed}")]
    BadOption {
        /// The option (`servers`, `t_end`, ...).
        field: String,
        /// The value given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// An order other than 1 or 2.
    #[error("order = {0} is not allowed: 1 (x* + V/N) or 2 (x* + V/N + A/N^2)")]
    BadOrder(u8),
    /// The dense steps would need more memory than the limit ([`memory::check`]): refused
    /// before anything is allocated.
    #[error(
        "{what} over n = {n} state entries{} would need about {} of memory, more than the limit of {} ({limit_source}); allowed: a \
         smaller state: lower the truncation level K (truncation.levels, e.g. --set truncation.levels=K; a fixed-point tail \
         needs K with x_K < truncation.tol) or take a lighter load (a smaller lambda needs fewer levels); or raise the limit \
         with {}",
        levels.map_or(String::new(), |k| format!(" (truncation level K = {k})")),
        memory::human(*bytes),
        memory::human(*limit as f64),
        memory::MEMORY_LIMIT_VAR
    )]
    TooLarge {
        /// The computation refused.
        what: String,
        /// State entries.
        n: usize,
        /// The truncation level of a tail-form model.
        levels: Option<usize>,
        /// The estimated peak ([`memory::dense_bytes`]).
        bytes: f64,
        /// The limit, bytes.
        limit: u64,
        /// Where the limit comes from.
        limit_source: String,
    },
}

/// The noise matrix `Q = sum_l l l^T beta_l(x)` (row-major `n x n`), or `None` without transitions.
pub fn noise_matrix(model: &dyn MeanFieldModel, x: &[f64]) -> Option<Vec<f64>> {
    let n = model.dim();
    let transitions = model.transitions()?;
    let mut q = vec![0.0; n * n];
    transitions.visit(x, &mut |jump, rate| {
        for &(i, a) in jump {
            for &(j, b) in jump {
                q[i * n + j] += a * b * rate;
            }
        }
    });
    Some(q)
}

/// Solves `A X + X A^T + C = 0` for `X` (`A`, `C` row-major `n x n`) by Bartels-Stewart on the
/// real Schur form of `A`.
///
/// # Errors
/// [`RefinedError::Singular`] when `lambda_i + lambda_j = 0` for two eigenvalues of `A`.
pub fn solve_lyapunov(a: &[f64], c: &[f64], n: usize) -> Result<Vec<f64>, RefinedError> {
    solve_lyapunov_within(a, c, n, &Deadline::none())
}

/// [`solve_lyapunov`] that looks at `deadline` before each block row of the triangular solve
/// (`O(n^2)` work between looks; the real Schur form, nalgebra's, cannot be interrupted and
/// runs to its end), so that a worker abandoned at the deadline ends soon after it.
///
/// # Errors
/// As [`solve_lyapunov`]; [`RefinedError::Stopped`] when `deadline` passes.
pub fn solve_lyapunov_within(a: &[f64], c: &[f64], n: usize, deadline: &Deadline) -> Result<Vec<f64>, RefinedError> {
    let stopped = || RefinedError::Stopped { during: "the Lyapunov solve".into(), reason: deadline.reason() };
    let am = DMatrix::from_row_slice(n, n, a);
    let cm = DMatrix::from_row_slice(n, n, c);
    let (u, t) = am.clone().schur().unpack();
    // A = U T U^T  =>  T Y + Y T^T = -U^T C U,  X = U Y U^T
    let rhs = -(u.transpose() * &cm * &u);
    let scale = t.amax().max(1.0);
    let mut starts = Vec::new();
    let mut i = 0;
    while i < n {
        let two = i + 1 < n && t[(i + 1, i)].abs() > 1e-14 * scale;
        starts.push((i, if two { 2 } else { 1 }));
        i += if two { 2 } else { 1 };
    }
    if deadline.expired() {
        return Err(stopped());
    }
    let mut y = DMatrix::<f64>::zeros(n, n);
    for &(r0, p) in starts.iter().rev() {
        if deadline.expired() {
            return Err(stopped());
        }
        for &(c0, q) in starts.iter().rev() {
            // R = rhs_IJ - sum_{k >= r0 + p} T[i,k] Y[k,j] - sum_{k >= c0 + q} Y[i,k] T[j,k]
            let mut r = [0.0f64; 4];
            for a in 0..p {
                for b in 0..q {
                    let (ii, jj) = (r0 + a, c0 + b);
                    let mut s = rhs[(ii, jj)];
                    for k in r0 + p..n {
                        s -= t[(ii, k)] * y[(k, jj)];
                    }
                    for k in c0 + q..n {
                        s -= y[(ii, k)] * t[(jj, k)];
                    }
                    r[a + p * b] = s; // column-major vec of the p x q block
                }
            }
            // (I_q (x) T_II + T_JJ (x) I_p) vec(Y) = vec(R)
            let m = p * q;
            let mut mat = [0.0f64; 16];
            for b in 0..q {
                for a in 0..p {
                    let row = a + p * b;
                    for a2 in 0..p {
                        mat[row * m + (a2 + p * b)] += t[(r0 + a, r0 + a2)];
                    }
                    for b2 in 0..q {
                        mat[row * m + (a + p * b2)] += t[(c0 + b, c0 + b2)];
                    }
                }
            }
            let sol = solve_small(&mut mat, &mut r, m)
                .ok_or_else(|| RefinedError::Singular(format!("eigenvalues of blocks {r0} and {c0} sum to zero")))?;
            for a in 0..p {
                for b in 0..q {
                    y[(r0 + a, c0 + b)] = sol[a + p * b];
                }
            }
        }
    }
    let x = &u * y * u.transpose();
    let mut out = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            // symmetrise: the exact solution is symmetric when C is
            out[i * n + j] = 0.5 * (x[(i, j)] + x[(j, i)]);
        }
    }
    Ok(out)
}

/// Gaussian elimination with partial pivoting on an `m x m` system, `m <= 4`.
fn solve_small(a: &mut [f64; 16], b: &mut [f64; 4], m: usize) -> Option<[f64; 4]> {
    for k in 0..m {
        let p = (k..m).max_by(|&i, &j| a[i * m + k].abs().total_cmp(&a[j * m + k].abs()))?;
        if a[p * m + k] == 0.0 || !a[p * m + k].is_finite() {
            return None;
        }
        if p != k {
            for j in 0..m {
                a.swap(k * m + j, p * m + j);
            }
            b.swap(k, p);
        }
        for i in k + 1..m {
            let l = a[i * m + k] / a[k * m + k];
            for j in k..m {
                a[i * m + j] -= l * a[k * m + j];
            }
            b[i] -= l * b[k];
        }
    }
    let mut x = [0.0; 4];
    for k in (0..m).rev() {
        let mut s = b[k];
        for j in k + 1..m {
            s -= a[k * m + j] * x[j];
        }
        x[k] = s / a[k * m + k];
    }
    Some(x)
}

/// The smallest `m` such that the noise vanishes outside the leading `m x m` block
/// (`Q_ij = 0` when `i >= m` or `j >= m`) and `J` does not feed the leading `m` entries into the
/// others (`J_ij = 0` for `i >= m > j`). Then `W` is zero outside that block, which solves the
/// Lyapunov equation of the block alone: `J W + W J^T + Q` has the block's equation in the leading
/// block and `J_21 W_11 = 0` elsewhere. (A tail truncated beyond the levels that hold any mass,
/// e.g. JSQ(2) at K = 100 where `x_k = 0` exactly from k ~ 13 on, has a small noisy block.)
pub fn noisy_block(j: &[f64], q: &[f64], n: usize) -> usize {
    let mut m = (0..n).rev().find(|&i| q[i * n..(i + 1) * n].iter().any(|v| *v != 0.0)).map_or(0, |i| i + 1);
    loop {
        let next = (m..n).rev().find(|&i| j[i * n..i * n + m].iter().any(|v| *v != 0.0)).map_or(m, |i| i + 1);
        if next == m {
            return m;
        }
        m = next;
    }
}

/// `W` (row-major `n x n`) solving `J W + W J^T + Q = 0` on the noisy block ([`noisy_block`],
/// zero elsewhere), the residual `max |J W + W J^T + Q|` over the block, and the block size.
fn covariance(j: &[f64], q: &[f64], n: usize, deadline: &Deadline) -> Result<(Vec<f64>, f64, usize), RefinedError> {
    let m = noisy_block(j, q, n);
    let block = |a: &[f64]| -> Vec<f64> { (0..m * m).map(|e| a[(e / m) * n + e % m]).collect() };
    let (jb, qb) = (block(j), block(q));
    let wb = solve_lyapunov_within(&jb, &qb, m, deadline)?;
    let mut residual = 0.0f64;
    for i in 0..m {
        if deadline.expired() {
            return Err(RefinedError::Stopped { during: "the Lyapunov residual".into(), reason: deadline.reason() });
        }
        for k in 0..m {
            let mut s = qb[i * m + k];
            for l in 0..m {
                s += jb[i * m + l] * wb[l * m + k] + wb[i * m + l] * jb[k * m + l];
            }
            residual = residual.max(s.abs());
        }
    }
    let mut w = vec![0.0; n * n];
    for i in 0..m {
        w[i * n..i * n + m].copy_from_slice(&wb[i * m..(i + 1) * m]);
    }
    Ok((w, residual, m))
}

/// The checks before any dense step of `job` at `x_star`: its size, a smooth drift, the
/// transitions, and the memory the dense steps need ([`memory::check`]).
fn preflight(model: &dyn MeanFieldModel, x_star: &[f64], job: memory::Job) -> Result<(), RefinedError> {
    let n = model.dim();
    if x_star.len() != n {
        return Err(RefinedError::WrongDimension { got: x_star.len(), expected: n });
    }
    if !model.is_smooth() {
        return Err(RefinedError::NotSmooth { model: model.name() });
    }
    if model.transitions().is_none() {
        return Err(RefinedError::NoTransitions { model: model.name() });
    }
    memory::check(n, model.layout().tail_levels(), job)
}

/// The refined mean field of `model` at its fixed point `x_star`.
///
/// # Errors
/// [`RefinedError::NoTransitions`] when the model does not give its transitions;
/// [`RefinedError::NotSmooth`] for a drift with a sliding boundary;
/// [`RefinedError::WrongDimension`]; [`RefinedError::Singular`] when `J` is singular;
/// [`RefinedError::TooLarge`] when the dense `n x n` steps would need more memory than
/// [`memory::memory_limit`] (checked before anything is allocated).
pub fn refined_mean_field(model: &dyn MeanFieldModel, x_star: &[f64]) -> Result<RefinedMeanField, RefinedError> {
    refined_mean_field_within(model, x_star, &Deadline::none())
}

/// [`refined_mean_field`] that looks at `deadline` between the blocks of its dense steps (each
/// block row of the Lyapunov solve, each column of the drift's second derivative), so that a
/// worker abandoned at the deadline ([`Deadline::wait_for`]) ends soon after it instead of
/// keeping a core busy to the end of the job. nalgebra's real Schur form inside the Lyapunov
/// solve cannot be interrupted and runs to its end.
///
/// # Errors
/// As [`refined_mean_field`]; [`RefinedError::Stopped`] when `deadline` passes.
pub fn refined_mean_field_within(
    model: &dyn MeanFieldModel,
    x_star: &[f64],
    deadline: &Deadline,
) -> Result<RefinedMeanField, RefinedError> {
    let n = model.dim();
    preflight(model, x_star, memory::Job::FixedPoint { order: 1 })?;
    let q = noise_matrix(model, x_star).ok_or_else(|| RefinedError::NoTransitions { model: model.name() })?;
    let mut jac = Jacobian::new(n, model.sparsity());
    model.jacobian(x_star, &mut jac);
    let j_dense = jac.to_dense();
    let (w, lyapunov_residual, noisy) = covariance(&j_dense, &q, n, deadline)?;
    // b_i = 1/2 sum_k sum_j (dJ_ij/dx_k) W_jk, dJ/dx_k by differences of the Jacobian
    let mut b = vec![0.0; n];
    let mut xp = x_star.to_vec();
    let mut j1 = Jacobian::new(n, model.sparsity());
    let mut j2 = Jacobian::new(n, model.sparsity());
    let mut j3 = Jacobian::new(n, model.sparsity());
    // W_jk = 0 when j or k is outside the noisy block
    for k in 0..noisy {
        if deadline.expired() {
            return Err(RefinedError::Stopped { during: "the second derivative of the drift".into(), reason: deadline.reason() });
        }
        let xk = x_star[k];
        let h = 1e-5 * xk.abs().max(1e-2);
        let (c1, c2, c3, o1, o2, o3);
        if xk - h >= 0.0 && xk + h <= 1.0 {
            (o1, o2, o3) = (-h, h, 0.0);
            (c1, c2, c3) = (-0.5 / h, 0.5 / h, 0.0);
        } else if xk + 2.0 * h <= 1.0 {
            (o1, o2, o3) = (0.0, h, 2.0 * h);
            (c1, c2, c3) = (-1.5 / h, 2.0 / h, -0.5 / h);
        } else {
            (o1, o2, o3) = (0.0, -h, -2.0 * h);
            (c1, c2, c3) = (1.5 / h, -2.0 / h, 0.5 / h);
        }
        for (off, jm) in [(o1, &mut j1), (o2, &mut j2), (o3, &mut j3)] {
            xp[k] = xk + off;
            model.jacobian(&xp, jm);
        }
        xp[k] = xk;
        for (i, bi) in b.iter_mut().enumerate().take(n) {
            let (lo, hi) = j1.row_range(i);
            let mut s = 0.0;
            for j in lo..hi {
                let d = c1 * j1.get(i, j) + c2 * j2.get(i, j) + c3 * j3.get(i, j);
                s += d * w[j * n + k];
            }
            *bi += 0.5 * s;
        }
    }
    let mut lu = ShiftedLu::new(n, model.sparsity());
    lu.factor(0.0, 1.0, &jac).map_err(|e| RefinedError::Singular(format!("the Jacobian at x*: {e}")))?;
    let mut v: Vec<f64> = b.iter().map(|x| -x).collect();
    lu.solve(&mut v);
    let sum_v = v.iter().sum();
    let obs = model.observables(x_star);
    let mean_queue_length_correction = queue_length_correction(model, x_star, &v, &obs);
    let mut r = RefinedMeanField {
        x: x_star.to_vec(),
        v,
        sum_v,
        covariance: w,
        lyapunov_residual,
        mean_queue_length_correction,
        mean_response_time_correction: None,
        order: 1,
        a: None,
        sum_a: None,
        second: None,
    };
    // Little's law T = E[Q] / E[throughput], both expanded: with losses at a finite buffer the
    // throughput has its own 1/N term, c_T = c_L / Theta - L c_Theta / Theta^2
    if let (Some(c), Some(l), Some(thr)) = (mean_queue_length_correction, obs.mean_queue_length, throughput_expansion(model, &r)) {
        if thr.value > 0.0 {
            r.mean_response_time_correction = Some(c / thr.value - l * thr.c1 / (thr.value * thr.value));
        }
    }
    Ok(r)
}

/// The `1/N` correction `L'(x*) V` of the mean queue length per server, for layouts made of
/// queue-length levels, where `L` is linear in the state: `sum_k x_k` (tail form, the
/// correction is `sum V`), `sum_{k,j} x_{k,j}` (phase tails), `sum_j gamma_j sum_k x_{j,k}`
/// (class tails: the weights `gamma_j` are the model's, so `L'` comes from differences of its
/// observables, exact for a linear `L`). `None` for other layouts or without a queue length.
fn queue_length_correction(model: &dyn MeanFieldModel, x_star: &[f64], v: &[f64], obs: &mfq_model::Observables) -> Option<f64> {
    let layout = model.layout();
    // linear in the state: the sum of every entry (no difference, whose step could pass a
    // phase tail's level mass beyond 1, where the model clamps it)
    if layout.tail_levels().is_some() || matches!(layout, mfq_model::StateLayout::PhaseTail { .. }) {
        obs.mean_queue_length?;
        return Some(v.iter().sum());
    }
    let l0 = obs.mean_queue_length?;
    layout.level_masses(x_star)?;
    let mut y = x_star.to_vec();
    let mut c = 0.0;
    for (i, &vi) in v.iter().enumerate().filter(|(_, vi)| **vi != 0.0) {
        // a power of two, stepping inwards: exact nodes and no clamp inside the model
        let h = if x_star[i] + 1.0 / 64.0 <= 1.0 { 1.0 / 64.0 } else { -1.0 / 64.0 };
        y[i] = x_star[i] + h;
        let l = model.observables(&y).mean_queue_length?;
        y[i] = x_star[i];
        c += (l - l0) / h * vi;
    }
    Some(c)
}

/// The refined mean field of `model` at its fixed point `x_star` to `order` 1 (`V`) or 2 (`V`
/// and `A`, docs/refined.md).
///
/// # Errors
/// As [`refined_mean_field`]; [`RefinedError::BadOrder`]; for order 2,
/// [`RefinedError::Unsupported`] when the rates depend on so many state entries that their
/// derivative grids exceed `refined::local::MAX_WORK`, and [`RefinedError::TooLarge`] when its
/// `n^3` tensors exceed the memory limit (checked before the order-1 terms are computed).
pub fn refined_mean_field_order(model: &dyn MeanFieldModel, x_star: &[f64], order: u8) -> Result<RefinedMeanField, RefinedError> {
    refined_mean_field_order_within(model, x_star, order, &Deadline::none())
}

/// [`refined_mean_field_order`] whose order-1 terms look at `deadline` between blocks
/// ([`refined_mean_field_within`]) and whose order-2 tensors look at it once per outer row
/// ([`order2::second_order_within`]).
///
/// # Errors
/// As [`refined_mean_field_order`]; [`RefinedError::Stopped`] when `deadline` passes.
pub fn refined_mean_field_order_within(
    model: &dyn MeanFieldModel,
    x_star: &[f64],
    order: u8,
    deadline: &Deadline,
) -> Result<RefinedMeanField, RefinedError> {
    if !(1..=2).contains(&order) {
        return Err(RefinedError::BadOrder(order));
    }
    preflight(model, x_star, memory::Job::FixedPoint { order })?;
    let mut r = refined_mean_field_within(model, x_star, deadline)?;
    if order == 2 {
        let n = model.dim();
        let q = noise_matrix(model, x_star).ok_or_else(|| RefinedError::NoTransitions { model: model.name() })?;
        let mut jac = Jacobian::new(n, model.sparsity());
        model.jacobian(x_star, &mut jac);
        let s = order2::second_order_within(model, x_star, &jac.to_dense(), &q, &r.covariance, &r.v, deadline)?;
        r.sum_a = Some(s.a.iter().sum());
        r.a = Some(s.a.clone());
        r.second = Some(s);
        r.order = 2;
    }
    Ok(r)
}

/// Refined estimates of the observables for `N` servers (objects).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefinedEstimate {
    /// `N`.
    pub servers: f64,
    /// `E[X^N]` to the order of the expansion (layout: the model's).
    pub state: Vec<f64>,
    /// `P(Q >= k)`, `k = 1..K` (empty for models without queues).
    pub tail: Vec<f64>,
    /// Mean number of jobs per server, the sum of the tail.
    pub mean_queue_length: Option<f64>,
    /// Mean response time: the mean queue length over the expanded throughput (Little's law).
    pub mean_response_time: Option<f64>,
    /// Probability that an arrival waits, `E[h(X^N)]` of the model's `h` (a nonlinear function:
    /// its expansion uses the covariance, see docs/refined.md).
    pub prob_wait: Option<f64>,
    /// The model's extras, `E[h(X^N)]` each.
    pub extras: Vec<(String, f64)>,
}

/// The expansion `E[g(X^N)] ~ g(x*) + c1/N + c2/N^2` of functions with local derivatives `ld`:
/// `c1 = g' V + 1/2 g'' : W`, `c2 = g' A + 1/2 g'' : B + 1/6 g''' : C + 1/8 g'''' : (W, W)`.
fn expansion_terms(ld: &local::LocalDerivatives, r: &RefinedMeanField, n: usize) -> Vec<(f64, f64, f64)> {
    (0..ld.value.len())
        .map(|t| {
            let s = &ld.support[t];
            if s.is_empty() {
                return (ld.value[t], 0.0, 0.0);
            }
            let d = &ld.d[t];
            let c1 = s.iter().zip(&d[0]).map(|(&i, g)| g * r.v[i]).sum::<f64>() + 0.5 * order2::contract2(&d[1], s, &r.covariance, n);
            let c2 = match (&r.second, d.len()) {
                (Some(so), 4) => {
                    s.iter().zip(&d[0]).map(|(&i, g)| g * so.a[i]).sum::<f64>()
                        + 0.5 * order2::contract2(&d[1], s, &so.b, n)
                        + order2::contract3(&d[2], s, &so.c, n) / 6.0
                        + order2::contract4ww(&d[3], s, &r.covariance, n) / 8.0
                }
                _ => 0.0,
            };
            (ld.value[t], c1, c2)
        })
        .collect()
}

/// One observable's expansion `E[g(X^N)] ~ value + c1 / N + c2 / N^2` (`c2 = 0` at order 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Expansion {
    /// `g(x*)`, the mean-field value.
    pub value: f64,
    /// The `1/N` coefficient `c1 = g' V + 1/2 g'' : W`.
    pub c1: f64,
    /// The `1/N^2` coefficient `c2 = g' A + 1/2 g'' : B + 1/6 g''' : C + 1/8 g'''' : (W, W)`
    /// (0 for terms of order 1).
    pub c2: f64,
}

impl Expansion {
    /// `value + c1 / n + c2 / n^2` for `n` servers (objects); `value` for `n` infinite.
    pub fn at(&self, n: f64) -> f64 {
        self.value + self.c1 / n + self.c2 / (n * n)
    }
}

/// The expansions of a model's observables from refined terms of order 1 or 2: what
/// [`refined_estimates`] evaluates at each size, kept so that callers (the Python package) can
/// evaluate any `N` without solving again.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefinedExpansion {
    /// `P(Q >= k)`, `k = 1..K` (empty for models without queues).
    pub tail: Vec<Expansion>,
    /// `P(wait)` (`None`: the model has none, or its function depends on so many state
    /// entries that its derivative grids exceed `refined::local::OBSERVABLE_WORK`).
    pub prob_wait: Option<Expansion>,
    /// The model's extras by name; its ratios (`P.mean_response_time`, `P.share_of_jobs`)
    /// are the series of the ratios of the expansions of their parts, not expansions of the
    /// per-state ratios.
    pub extras: Vec<(String, Expansion)>,
    /// Whether the model has a mean queue length and its tail was expanded (then the sum of the
    /// tail).
    pub has_queue_length: bool,
    /// The throughput per server (accepted jobs per unit time), dividing the mean queue length
    /// in Little's law, `T = E[Q] / E[throughput]`; it has its own terms when arrivals are lost
    /// at a finite buffer (`None`: the model has none).
    pub throughput: Option<Expansion>,
    /// The observables the model has but that were not expanded, each with why (derivative
    /// grids over `refined::local::OBSERVABLE_WORK`): a caller reports them as warnings.
    pub left_out: Vec<String>,
}

impl RefinedExpansion {
    /// The refined estimates for `n` servers (objects); the state is `r.at(n)` (`x*` for `n`
    /// infinite).
    pub fn estimate(&self, r: &RefinedMeanField, n: f64) -> RefinedEstimate {
        let tail: Vec<f64> = self.tail.iter().map(|t| t.at(n)).collect();
        let mean_queue_length = self.has_queue_length.then(|| tail.iter().sum::<f64>());
        let mean_response_time = match (mean_queue_length, self.throughput.map(|t| t.at(n))) {
            (Some(l), Some(t)) if t > 0.0 => Some(l / t),
            _ => None,
        };
        RefinedEstimate {
            servers: n,
            state: r.at(n),
            tail,
            mean_queue_length,
            mean_response_time,
            prob_wait: self.prob_wait.map(|w| w.at(n)),
            extras: self.extras.iter().map(|(name, e)| (name.clone(), e.at(n))).collect(),
        }
    }
}

/// The expansions of the observables of `model` (tail, `P(wait)`, extras) from the terms `r`
/// (of order 1 or 2). Observables that are nonlinear in the state are expanded with the moments
/// (`W`, and `B`, `C` at order 2), not evaluated at `x* + V/N`. An observable whose function
/// depends on so many state entries that its derivative grids exceed
/// `refined::local::OBSERVABLE_WORK` is left out (`None`, missing from the extras, or, for the
/// tail, an empty tail and no mean queue length) and named in
/// [`RefinedExpansion::left_out`].
pub fn refined_expansion(model: &dyn MeanFieldModel, r: &RefinedMeanField) -> RefinedExpansion {
    let n = r.x.len();
    let order = if r.second.is_some() { 4 } else { 2 };
    let obs = model.observables(&r.x);
    let mut left_out = Vec::new();
    // `labels`: the functions' names, for a message about the one with the largest support
    let mut group = |what: &str, labels: &[String], f: &dyn Fn(&mfq_model::Observables) -> Vec<f64>| -> Option<Vec<Expansion>> {
        let ld = local::local_derivatives(&r.x, order, local::OBSERVABLE_WORK, &mut |y, out| {
            out.clear();
            out.extend(f(&model.observables(y)));
        });
        match ld {
            Ok(ld) => Some(expansion_terms(&ld, r, n).into_iter().map(|(value, c1, c2)| Expansion { value, c1, c2 }).collect()),
            Err(e) => {
                left_out.push(format!("{what} not refined: {}", observable_error(e, labels)));
                None
            }
        }
    };
    let has_tail = !obs.tail.is_empty();
    let tail = if !has_tail {
        Some(Vec::new())
    } else if let Some(t) = linear_tail(model, r, &obs.tail) {
        Some(t)
    } else {
        group("the tail, the mean queue length and the mean response time", &[], &|o| o.tail.clone())
    };
    let prob_wait = if obs.prob_wait.is_some() { group("P(wait)", &[], &|o| o.prob_wait.into_iter().collect()) } else { None };
    // a share of jobs is expanded as `share throughput` too (the class's accepted rate, linear
    // in its state), the ratio taken after (see `ratio_extras`)
    let extras = if obs.extras.is_empty() {
        Vec::new()
    } else {
        let names: Vec<String> = obs.extras.iter().map(|e| e.0.clone()).collect();
        group("the extras", &names, &|o| {
            let t = o.throughput.unwrap_or(0.0);
            let shares = o.extras.iter().filter(|e| e.0.ends_with(".share_of_jobs")).map(|e| e.1 * t);
            o.extras.iter().map(|e| e.1).chain(shares).collect()
        })
        .map(|e| {
            let (plain, shares) = e.split_at(obs.extras.len());
            ratio_extras(&obs.extras, plain, shares, r.second.is_some())
        })
        .unwrap_or_default()
    };
    let throughput = throughput_expansion(model, r);
    // without the tail's expansion there is no mean queue length to report (not a zero sum)
    let has_queue_length = obs.mean_queue_length.is_some() && tail.is_some();
    RefinedExpansion {
        tail: tail.unwrap_or_default(),
        prob_wait: prob_wait.and_then(|w| w.first().copied()),
        extras,
        has_queue_length,
        throughput,
        left_out,
    }
}

/// The tail's expansions when the tail is linear in the state, the level masses of a tail form
/// (`x_k`) or of a phase tail (`sum_j x_{k,j}`) and `tail` (the model's, at `x*`) is them: then
/// `E[L(X^N)] = L(E[X^N])` exactly, `c1 = L(V)`, `c2 = L(A)`, with no difference grid (whose
/// nodes, each entry within `[0, 1]`, can put a phase tail's sum past 1, where the model's
/// clamp of the tail to `[0, 1]` bends it: Erlang-3 JSQ(2) at lambda = 0.97 had `c2 = 6060` for
/// `P(Q >= 1)`, whose `A` term is `-4e-7`). `None` for other layouts.
fn linear_tail(model: &dyn MeanFieldModel, r: &RefinedMeanField, tail: &[f64]) -> Option<Vec<Expansion>> {
    let layout = model.layout();
    if !matches!(layout, mfq_model::StateLayout::Tail { .. } | mfq_model::StateLayout::PhaseTail { .. }) {
        return None;
    }
    let value = layout.level_masses(&r.x)?;
    if value.len() != tail.len() || value.iter().zip(tail).any(|(a, b)| (a - b).abs() > 1e-12) {
        return None;
    }
    let c1 = layout.level_masses(&r.v)?;
    let c2 = match &r.a {
        Some(a) => layout.level_masses(a)?,
        None => vec![0.0; value.len()],
    };
    Some(value.into_iter().zip(c1).zip(c2).map(|((value, c1), c2)| Expansion { value, c1, c2 }).collect())
}

/// Why an observable's derivative grids could not be formed, in words (`labels`: the functions'
/// names, to name the one with the largest support when known).
fn observable_error(e: local::LocalError, labels: &[String]) -> String {
    match e {
        local::LocalError::SupportTooLarge { index, size, work } => format!(
            "{} depends on {size} state entries, and the derivative grids would need {work:.1e} values, more than the limit \
             of {:.0e}",
            labels.get(index).map_or_else(|| "the largest function".to_string(), |n| format!("the largest, {n},")),
            local::OBSERVABLE_WORK
        ),
        local::LocalError::Inconsistent(m) => m,
    }
}

/// The series of `a / b` to the order of the terms (`c2 = 0` at order 1); `None` when
/// `b.value <= 0`.
fn ratio(a: Expansion, b: Expansion, second: bool) -> Option<Expansion> {
    (b.value > 0.0).then(|| {
        let value = a.value / b.value;
        let c1 = (a.c1 - value * b.c1) / b.value;
        let c2 = if second { (a.c2 - value * b.c2 - c1 * b.c1) / b.value } else { 0.0 };
        Expansion { value, c1, c2 }
    })
}

/// The extras at `x*` (`names`, for their names and values) with their expansions `plain`,
/// the ratios among them derived from the expansions of their parts, since the expectation of
/// a per-state ratio is not the stationary ratio (by `O(1/N)`; the exact chain of PS-LSC case
/// A, `N = 16`, buffer 3, gives `class2.mean_response_time` 4.9917, its refined order-2
/// estimate was 5.6316 against the mean field's 5.1038, and is now 4.9924):
/// `P.mean_response_time` = `P.mean_queue_length / P.throughput` (Little's law, as the overall
/// response time; left out at zero throughput) where both parts are extras, and the
/// `P.share_of_jobs` (their expansions as `share throughput`: `shares`, in order) over their
/// sum, the total accepted rate, where they sum to 1 at `x*`. Otherwise (a generic model's own
/// expressions) an extra keeps its own expansion.
fn ratio_extras(names: &[(String, f64)], plain: &[Expansion], shares: &[Expansion], second: bool) -> Vec<(String, Expansion)> {
    let zero = Expansion { value: 0.0, c1: 0.0, c2: 0.0 };
    let find = |name: String| names.iter().position(|(n, _)| *n == name).map(|i| plain[i]);
    let total = shares.iter().fold(zero, |t, e| Expansion { value: t.value + e.value, c1: t.c1 + e.c1, c2: t.c2 + e.c2 });
    let share_sum: f64 = names.iter().filter(|(n, _)| n.ends_with(".share_of_jobs")).map(|e| e.1).sum();
    let mut share = shares.iter();
    names
        .iter()
        .zip(plain)
        .filter_map(|((name, _), e)| {
            let parts = |p: &str| find(format!("{p}.mean_queue_length")).zip(find(format!("{p}.throughput")));
            let derived = if name.ends_with(".share_of_jobs") {
                let s = share.next().copied();
                match s {
                    Some(s) if (share_sum - 1.0).abs() < 1e-9 => Some(ratio(s, total, second).unwrap_or(zero)),
                    _ => Some(*e),
                }
            } else if let Some((l, t)) = name.strip_suffix(".mean_response_time").and_then(parts) {
                ratio(l, t, second)
            } else {
                Some(*e)
            };
            derived.map(|d| (name.clone(), d))
        })
        .collect()
}

/// The expansion of the model's throughput per server (a function of the state: with a finite
/// buffer, arrivals lost at full servers depend on it); `None` when the model has none. When its
/// derivative grids exceed `refined::local::OBSERVABLE_WORK` (heterogeneous classes) the mean-field
/// throughput is used as a constant: exact when no arrivals are lost (the automatic truncation
/// level), an `O(1/N)` bias in the response time of a small finite buffer.
fn throughput_expansion(model: &dyn MeanFieldModel, r: &RefinedMeanField) -> Option<Expansion> {
    let value = model.observables(&r.x).throughput?;
    let order = if r.second.is_some() { 4 } else { 2 };
    let ld = local::local_derivatives(&r.x, order, local::OBSERVABLE_WORK, &mut |y, out| {
        out.clear();
        out.extend(model.observables(y).throughput);
    });
    let expanded = ld.ok().and_then(|ld| expansion_terms(&ld, r, r.x.len()).first().map(|&(value, c1, c2)| Expansion { value, c1, c2 }));
    Some(expanded.unwrap_or(Expansion { value, c1: 0.0, c2: 0.0 }))
}

/// The refined estimates of the observables of `model` (tail, mean queue length, mean response
/// time, `P(wait)`, extras) for each size in `servers`, from the terms `r` (of order 1 or 2):
/// [`refined_expansion`] evaluated at each size (the mean queue length is the sum of the tail,
/// the mean response time that over the expanded throughput, Little's law).
pub fn refined_estimates(model: &dyn MeanFieldModel, r: &RefinedMeanField, servers: &[f64]) -> Vec<RefinedEstimate> {
    let e = refined_expansion(model, r);
    servers.iter().map(|&m| e.estimate(r, m)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JSQ(2) at lambda = 0.9, K = 60: x_k = 0 exactly from k = 13 on, so the noise lives on a
    /// small leading block; W from that block equals the dense solve of the whole equation.
    #[test]
    fn noisy_block_gives_the_full_solution() {
        let jsq = mfq_model::models::Jsq::new(0.9, 2, 60).unwrap();
        let x = jsq.analytic_fixed_point().unwrap();
        let m: &dyn MeanFieldModel = &jsq;
        let n = 60;
        let q = noise_matrix(m, &x).unwrap();
        let mut jac = Jacobian::new(n, m.sparsity());
        m.jacobian(&x, &mut jac);
        let j = jac.to_dense();
        let (w, res, block) = covariance(&j, &q, n, &Deadline::none()).unwrap();
        assert!(block < 20 && block > 8, "block {block}");
        assert!(res < 1e-12);
        let full = solve_lyapunov(&j, &q, n).unwrap();
        let err = w.iter().zip(&full).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(err < 1e-12, "{err}");
    }

    /// A large-K order-2 job stops at a short limit with [`RefinedError::Stopped`] instead of
    /// finishing: JSQ(1) at lambda = 0.85, K = 150, whose order-1 terms take some 0.03 s and
    /// whose order-2 tensors (`O(n^4)`) about a second, ran on past the limit to a result (the
    /// order-2 loops never looked at the deadline; the front door abandoned the worker, which
    /// kept computing). Where it stops depends on the machine's speed, so only the error is
    /// asserted, not the time or the phase.
    #[test]
    fn a_large_order_2_job_stops_at_the_deadline() {
        let jsq = mfq_model::models::Jsq::new(0.85, 1, 150).unwrap();
        let x = jsq.analytic_fixed_point().unwrap();
        let r = refined_mean_field_order_within(&jsq, &x, 2, &Deadline::after(0.3));
        // (a finished job would print its n^3 tensors: its order only)
        assert!(matches!(&r, Err(RefinedError::Stopped { reason, .. }) if reason.contains("0.3")), "{:?}", r.as_ref().map(|t| t.order));
    }

    #[test]
    fn lyapunov_with_complex_eigenvalues() {
        // A with a complex pair and a real eigenvalue; check the residual
        let a = [-1.0, 2.0, 0.3, -2.0, -1.0, 0.1, 0.0, 0.5, -3.0];
        let c = [2.0, 0.5, 0.1, 0.5, 1.0, 0.2, 0.1, 0.2, 3.0];
        let x = solve_lyapunov(&a, &c, 3).unwrap();
        for i in 0..3 {
            for k in 0..3 {
                let mut s = c[i * 3 + k];
                for m in 0..3 {
                    s += a[i * 3 + m] * x[m * 3 + k] + x[i * 3 + m] * a[k * 3 + m];
                }
                assert!(s.abs() < 1e-12, "({i},{k}) {s}");
            }
        }
    }
}
