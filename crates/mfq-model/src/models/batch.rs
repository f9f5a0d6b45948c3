//! Batch processing in a closed network: `n` clients, `m` parallel servers, batches of exactly
//! `b` jobs served at the speed-up `s(b)` (kind `batch`).
//!
//! The system (constructed here from the abstract of Kar, Rehrmann, Mukhopadhyay, Alt, Ciucu,
//! Koeppl, Binnig, Rizk, "On the throughput optimization in large-scale batch-processing
//! systems", Performance Evaluation 144 (2020), arXiv 2009.09433; the paper's own equations are
//! not reproduced, docs/models/batch.md says what is published and what is built here):
//!
//! - `n = alpha m` clients. A client thinks for an Exp(`think_rate`) time, then submits one job
//!   and waits until it has been served; a client has at most one job outstanding.
//! - Jobs join one central FIFO queue. A free server takes exactly `b` jobs as soon as at least
//!   `b` are waiting; it serves the batch in an exponential time of mean `h(b) = b / s(b)` (time
//!   unit: the mean service time of a single job alone, `h(1) = 1`).
//! - The speed-up `s` is increasing and sub-additive with `s(1) = 1` ([`Speedup`]).
//!
//! Because a free server starts a batch as soon as `b` jobs wait, the number of busy servers is
//! `min(floor(N / b), m)` where `N` is the number of jobs in the system (queued or in service):
//! the exact finite network is the birth-and-death-like chain of `N` alone ([`exact_network`]).
//! Its mean field (`n, m -> infinity`, `n / m = alpha`) is one-dimensional in the fraction `u` of
//! clients with a job in the system:
//!
//! ```text
//! du/dt = think_rate (1 - u) - (s(b) / alpha) min(alpha u / b, 1)
//! ```
//!
//! whose right-hand side is strictly decreasing in `u`: the fixed point is unique and globally
//! attractive, and the throughput per server is the closed form
//! `X(b) = min{ alpha / (1/think_rate + h(b)), s(b) }` ([`mean_field_throughput`]).

use crate::finite::{FiniteSystem, Simulation};
use crate::registry::{read_spec, Kind, KindSpec, Param, ParamRange};
use crate::{
    out_of_range, AnalyticJacobian, Deadline, Jacobian, MeanFieldModel, ModelError, Observables, PartialOrder, Sparsity, Stability,
    StateLayout,
};

/// Largest number of clients `n` of the exact network.
pub const MAX_EXACT_CLIENTS: usize = 1_000_000;

/// Most chain states [`exact_optimal_b`] solves in all (one chain of `n + 1` states per batch
/// size; about a second of work).
pub const MAX_SCAN_STATES: usize = 20_000_000;

/// Smallest and largest think rate of the exact finite network ([`BatchExact`]): its chain's
/// rates (`think_rate` times up to `n` clients against service rates of order 1) overflow or
/// underflow outside; the mean field takes any finite rate `> 0`.
pub const MIN_EXACT_THINK_RATE: f64 = 1e-12;
/// See [`MIN_EXACT_THINK_RATE`].
pub const MAX_EXACT_THINK_RATE: f64 = 1e12;
/// Largest `alpha` (clients per server) and table length of a speed-up.
pub const MAX_ALPHA: f64 = 1e6;
const MAX_TABLE: usize = 10_000;
/// Relative round-off allowed in the checks of a speed-up table.
const TABLE_TOL: f64 = 1e-12;

/// The speed-up `s(b)` of a batch of `b` jobs: a batch of `b` jobs takes an exponential time of
/// mean `h(b) = b / s(b)` mean single-job service times. Every form has `s(1) = 1` and is
/// non-decreasing and sub-additive (`s(i + j) <= s(i) + s(j)`, so `s(b) <= b`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "form", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Speedup {
    /// A fixed per-batch overhead plus a per-job cost: `h(b) = 1 + c (b - 1)`,
    /// `s(b) = b / (1 + c (b - 1))`, `c` in `[0, 1]` (`c = 1`: no gain from batching; `c = 0`:
    /// the overhead is everything, `s(b) = b`). `s` is concave with `s(0) = 0`, hence
    /// sub-additive, and increasing.
    Overhead {
        /// Per-job share of the single-job service time.
        c: f64,
    },
    /// `s(b) = b^gamma`, `gamma` in `[0, 1]`.
    Power {
        /// Exponent.
        gamma: f64,
    },
    /// `s(k) = values[k - 1]` for `k = 1 ..= values.len()` (`values[0] = 1`).
    Table {
        /// The speed-ups of batches of 1, 2, ... jobs.
        values: Vec<f64>,
    },
}

impl Speedup {
    /// Checks the form's parameters.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.speedup.c` (not in `[0, 1]`),
    /// `model.speedup.gamma` (not in `[0, 1]`) or `model.speedup.values[i]` (empty or longer than
    /// 10000, not finite, `s(1) != 1`, decreasing, or not sub-additive: the message names the
    /// violated inequality).
    pub fn validate(&self) -> Result<(), ModelError> {
        match self {
            Speedup::Overhead { c } if !(0.0..=1.0).contains(c) => Err(out_of_range(
                "model.speedup.c",
                c,
                "a number in [0, 1] (h(b) = 1 + c (b - 1): c > 1 makes s decreasing, c < 0 super-additive)",
            )),
            Speedup::Power { gamma } if !(0.0..=1.0).contains(gamma) => Err(out_of_range(
                "model.speedup.gamma",
                gamma,
                "a number in [0, 1] (s(b) = b^gamma: gamma > 1 is super-additive, gamma < 0 decreasing)",
            )),
            Speedup::Table { values } => check_table(values),
            _ => Ok(()),
        }
    }

    /// `s(b)` for `b >= 1` (a table is read at `b <= values.len()`, which
    /// [`BatchSpec`] checks).
    pub fn s(&self, b: usize) -> f64 {
        let bf = b as f64;
        match self {
            Speedup::Overhead { c } => bf / (1.0 + c * (bf - 1.0)),
            Speedup::Power { gamma } => bf.powf(*gamma),
            Speedup::Table { values } => values[b - 1],
        }
    }

    /// Mean service time of a batch of `b` jobs, `h(b) = b / s(b)`.
    pub fn h(&self, b: usize) -> f64 {
        match self {
            Speedup::Overhead { c } => 1.0 + c * (b as f64 - 1.0),
            _ => b as f64 / self.s(b),
        }
    }

    /// Largest batch size the speed-up is defined for (`None`: every `b`).
    pub fn max_b(&self) -> Option<usize> {
        match self {
            Speedup::Table { values } => Some(values.len()),
            _ => None,
        }
    }

    /// Whether `h(b) = b / s(b)` is known to be non-decreasing in `b` (the closed forms; a table
    /// need not be).
    fn h_non_decreasing(&self) -> bool {
        !matches!(self, Speedup::Table { .. })
    }
}

/// The checks of a speed-up table (see [`Speedup::validate`]); `O(len^2)`.
fn check_table(values: &[f64]) -> Result<(), ModelError> {
    if values.is_empty() || values.len() > MAX_TABLE {
        return Err(out_of_range(
            "model.speedup.values",
            format!("a list of {} values", values.len()),
            "1 to 10000 values s(1), s(2), ...",
        ));
    }
    for (i, v) in values.iter().enumerate() {
        if !v.is_finite() {
            return Err(out_of_range(&format!("model.speedup.values[{i}]"), v, "a finite number"));
        }
    }
    if (values[0] - 1.0).abs() > TABLE_TOL {
        return Err(out_of_range("model.speedup.values[0]", values[0], "1 (s(1) = 1: a batch of one job is a single job)"));
    }
    for i in 1..values.len() {
        if values[i] < values[i - 1] * (1.0 - TABLE_TOL) {
            return Err(out_of_range(
                &format!("model.speedup.values[{i}]"),
                values[i],
                &format!("s({}) >= s({}) = {} (the speed-up must be increasing)", i + 1, i, values[i - 1]),
            ));
        }
    }
    // sub-additive: s(k) <= s(i) + s(k - i) for 1 <= i <= k/2
    for k in 2..=values.len() {
        for i in 1..=k / 2 {
            let bound = values[i - 1] + values[k - i - 1];
            if values[k - 1] > bound * (1.0 + TABLE_TOL) {
                return Err(out_of_range(
                    &format!("model.speedup.values[{}]", k - 1),
                    values[k - 1],
                    &format!("s({k}) <= s({i}) + s({}) = {bound} (the speed-up must be sub-additive)", k - i),
                ));
            }
        }
    }
    Ok(())
}

/// Mean-field throughput per server of batch size `b`:
/// `X(b) = min{ alpha / (1/think_rate + h(b)), s(b) }` (jobs per server per mean single-job
/// service time). The first term is the throughput when servers are never all busy (each
/// client cycles through a think time and one batch service), the second the capacity of `m`
/// busy servers; they are the classical asymptotic bounds of a closed network (Z = 1/think_rate,
/// demand h(b), capacity s(b) per server), which the mean field attains.
pub fn mean_field_throughput(alpha: f64, think_rate: f64, speedup: &Speedup, b: usize) -> f64 {
    (alpha / (1.0 / think_rate + speedup.h(b))).min(speedup.s(b))
}

/// The batch size maximising [`mean_field_throughput`] (ties to the smallest), with its
/// throughput. Scans `b = 1, 2, ...` and stops once `alpha / (1/think_rate + h(b))`, an upper
/// bound of every larger batch size when `h` is non-decreasing, is no better (a table is scanned
/// whole). For the overhead form the answer is one of the integers around
/// [`overhead_crossing`], in `O(1)`; the scan gives the same (tested).
pub fn mean_field_optimal_b(alpha: f64, think_rate: f64, speedup: &Speedup) -> (usize, f64) {
    let last = speedup.max_b().unwrap_or(usize::MAX);
    let (mut best_b, mut best) = (1, mean_field_throughput(alpha, think_rate, speedup, 1));
    let mut b = 2;
    while b <= last {
        let bound = alpha / (1.0 / think_rate + speedup.h(b));
        if speedup.h_non_decreasing() && bound <= best {
            break;
        }
        let x = mean_field_throughput(alpha, think_rate, speedup, b);
        if x > best {
            (best_b, best) = (b, x);
        }
        b += 1;
    }
    (best_b, best)
}

/// For the overhead form `h(b) = 1 + c (b - 1)`: the real `b > 0` where the two terms of
/// [`mean_field_throughput`] cross, `h(b) (alpha - b) = b / think_rate`, i.e. the positive root
/// of `c b^2 + (1 - c - c alpha + 1/think_rate) b - (1 - c) alpha = 0`. The mean-field throughput
/// rises below it and falls above it, so the optimal batch size is its floor or its ceiling
/// (at least 1): the `O(1)` optimum. `None` for the other forms.
pub fn overhead_crossing(alpha: f64, think_rate: f64, speedup: &Speedup) -> Option<f64> {
    let Speedup::Overhead { c } = *speedup else { return None };
    let (qa, qb, qc) = (c, 1.0 - c - c * alpha + 1.0 / think_rate, -(1.0 - c) * alpha);
    if qa == 0.0 {
        return Some(-qc / qb);
    }
    let disc = (qb * qb - 4.0 * qa * qc).max(0.0);
    // the root of larger magnitude first, without cancellation, then Vieta
    let q = -0.5 * (qb + qb.signum() * disc.sqrt());
    let roots = [q / qa, if q != 0.0 { qc / q } else { 0.0 }];
    roots.into_iter().filter(|r| *r >= 0.0).reduce(f64::max)
}

/// Stationary values of the exact finite closed network ([`exact_network`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ExactNetwork {
    /// Clients `n`.
    pub clients: usize,
    /// Servers `m`.
    pub servers: usize,
    /// Completed jobs per server per unit time, `(b / h(b)) E[busy servers] / m`.
    pub throughput: f64,
    /// The same from the clients' side, `think_rate E[thinking clients] / m` (equal in steady
    /// state; their difference is the round-off of the solution).
    pub throughput_clients: f64,
    /// Mean number of jobs in the system (queued or in service) per server, `E[N] / m`.
    pub jobs_per_server: f64,
    /// Mean fraction of busy servers.
    pub busy_fraction: f64,
}

/// Solves the exact finite closed network of `clients` = `n` clients and `servers` = `m`
/// servers for batch size `b`, think rate `think_rate` and mean batch service time `h`.
///
/// The number `N` of jobs in the system determines the state (a free server starts a batch as
/// soon as `b` jobs wait, so `min(floor(N / b), m)` servers are busy and `N - b busy` jobs wait):
/// `N -> N + 1` at rate `think_rate (n - N)`, `N -> N - b` at rate `mu(N) = min(floor(N / b), m) / h`.
/// The only jumps across the cut between `k - 1` and `k` are one arrival up and the
/// completions from `k, ..., k + b - 1` down, so the stationary law satisfies
///
/// ```text
/// pi(k - 1) think_rate (n - k + 1) = sum_{j = k}^{min(k + b - 1, n)} pi(j) mu(j),   k = 1..n,
/// ```
///
/// solved from `pi(n)` downwards, with a binary exponent kept beside each value (the law spans
/// thousands of orders of magnitude at large `n`). The window sum is kept without subtractions,
/// by a queue of two stacks of partial sums (each term is added at most three times), so every
/// quantity is a sum of positive terms and the work is `O(n)` for any `b`.
///
/// # Errors
/// [`ModelError::OutOfRange`] naming `model.servers` (0 servers, or `n > 1000000` clients) or
/// `model.b` (0 or `> n`).
pub fn exact_network(clients: usize, servers: usize, b: usize, think_rate: f64, h: f64) -> Result<ExactNetwork, ModelError> {
    let (n, m) = (clients, servers);
    if m == 0 {
        return Err(out_of_range("model.servers", m, "an integer >= 1"));
    }
    if b == 0 || b > n {
        return Err(out_of_range("model.b", b, &format!("an integer in [1, n] where n = {n} is the number of clients")));
    }
    if n > MAX_EXACT_CLIENTS {
        return Err(out_of_range("model.servers", m, &format!("a network of n <= 1000000 clients (n = {n})")));
    }
    Ok(ExactSolver::new(n, m).solve(b, think_rate, h))
}

/// Powers of two beyond which [`ExactSolver`] rescales its values (`2^-500`, `2^500`).
const RESCALE_BELOW: f64 = f64::from_bits((1023 - 500) << 52);
/// See [`RESCALE_BELOW`].
const RESCALE_ABOVE: f64 = f64::from_bits((1023 + 500) << 52);

/// `2^e` for `|e| <= 1020`, exact.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

/// The cut-equation solver of [`exact_network`] for one network (`n` clients, `m` servers),
/// with its buffers, reused across batch sizes by [`exact_optimal_b`] (no allocation per `b`).
///
/// `pi(k)` is held as `value[k] 2^exponent[k]`: the values of the current window share one
/// exponent, and all of them are multiplied by an exact power of two whenever a new value
/// leaves `[2^-500, 2^500]` (a term that then drops below the smallest double is below
/// `2^-1000` of the window's largest).
struct ExactSolver {
    n: usize,
    m: usize,
    value: Vec<f64>,
    exponent: Vec<i32>,
    /// The window's newer terms `pi(j) mu(j)` (pushed last).
    back: Vec<f64>,
    /// The window's older terms as partial sums: each entry is the sum of its term and every
    /// newer term of this stack; the oldest on top.
    front: Vec<f64>,
}

impl ExactSolver {
    fn new(n: usize, m: usize) -> Self {
        ExactSolver { n, m, value: vec![0.0; n + 1], exponent: vec![0; n + 1], back: Vec::new(), front: Vec::new() }
    }

    /// Stationary values for batch size `b` (`1 <= b <= n`), think rate `think_rate`, mean batch
    /// time `h`.
    fn solve(&mut self, b: usize, think_rate: f64, h: f64) -> ExactNetwork {
        let (n, m) = (self.n, self.m);
        let rate = 1.0 / h;
        let mu = |j: usize| (j / b).min(m) as f64 * rate;
        self.back.clear();
        self.front.clear();
        let mut scale = 0i32;
        self.value[n] = 1.0;
        self.exponent[n] = 0;
        self.back.push(mu(n));
        let mut back_sum = mu(n);
        for k in (1..=n).rev() {
            // the window holds j = k ..= min(k + b - 1, n); its sum is positive (j = k + b - 1
            // or n is served)
            let window = self.front.last().copied().unwrap_or(0.0) + back_sum;
            let mut v = window / (think_rate * (n - k + 1) as f64);
            if !(RESCALE_BELOW..=RESCALE_ABOVE).contains(&v) {
                let e = v.log2().round() as i32;
                let f = pow2(-e);
                v *= f;
                back_sum *= f;
                self.back.iter_mut().chain(self.front.iter_mut()).for_each(|t| *t *= f);
                scale += e;
            }
            self.value[k - 1] = v;
            self.exponent[k - 1] = scale;
            if k + b - 1 <= n {
                // j = k + b - 1 (the oldest) leaves
                if self.front.is_empty() {
                    let mut acc = 0.0;
                    while let Some(t) = self.back.pop() {
                        acc += t;
                        self.front.push(acc);
                    }
                    back_sum = 0.0;
                }
                self.front.pop();
            }
            let t = v * mu(k - 1);
            self.back.push(t);
            back_sum += t;
        }
        // normalise by the largest pi(k)
        let (top_v, top_e) = self.value.iter().zip(&self.exponent).map(|(v, e)| (*v, *e)).fold((0.0, i32::MIN), |(bv, be), (v, e)| {
            if e > be || (e == be && v > bv) {
                (v, e)
            } else {
                (bv, be)
            }
        });
        let (mut total, mut mean_n, mut mean_busy) = (0.0, 0.0, 0.0);
        for (k, (v, e)) in self.value.iter().zip(&self.exponent).enumerate() {
            let d = e - top_e;
            if d < -1000 {
                continue;
            }
            let p = v / top_v * pow2(d);
            total += p;
            mean_n += p * k as f64;
            mean_busy += p * (k / b).min(m) as f64;
        }
        let (mean_n, mean_busy) = (mean_n / total, mean_busy / total);
        ExactNetwork {
            clients: n,
            servers: m,
            throughput: b as f64 * rate * mean_busy / m as f64,
            throughput_clients: think_rate * (n as f64 - mean_n) / m as f64,
            jobs_per_server: mean_n / m as f64,
            busy_fraction: mean_busy / m as f64,
        }
    }
}

/// The largest batch size [`exact_optimal_b`] reaches for `clients` clients within
/// [`MAX_SCAN_STATES`] (at least 1).
fn scanned_batch_sizes(clients: usize) -> usize {
    (MAX_SCAN_STATES / (clients + 1)).max(1)
}

/// The batch size maximising the exact throughput of the network of `clients` = `n` clients
/// and `servers` servers (ties to the smallest), with that throughput per server, or `None`
/// when the scan's work limit stops it before the optimum is settled.
///
/// Scans `b = 1 ..= min(n, table length)` with one chain of `n + 1` states per `b`
/// ([`exact_network`]), and for the closed forms (non-decreasing `h`) stops once the bound
/// `n / m / (1/think_rate + h(b))` (a job's cycle is at least a think time and its batch's
/// service) is no better. At most [`MAX_SCAN_STATES`] chain states in all: when the limit
/// stops the scan, the optimum is settled only if the bound at the next `b` is no better than
/// the best so far (non-decreasing `h`); otherwise the answer is `None`.
///
/// # Errors
/// As [`exact_network`]; [`ModelError::Interrupted`] when `deadline` passes.
pub fn exact_optimal_b(
    clients: usize,
    servers: usize,
    think_rate: f64,
    speedup: &Speedup,
    deadline: &Deadline,
) -> Result<Option<(usize, f64)>, ModelError> {
    if servers == 0 {
        return Err(out_of_range("model.servers", servers, "an integer >= 1"));
    }
    if clients == 0 || clients > MAX_EXACT_CLIENTS {
        return Err(out_of_range("model.servers", servers, &format!("a network of 1 <= n <= 1000000 clients (n = {clients})")));
    }
    let last = speedup.max_b().unwrap_or(usize::MAX).min(clients);
    let bound = |b: usize| clients as f64 / servers as f64 / (1.0 / think_rate + speedup.h(b));
    let within = scanned_batch_sizes(clients);
    let mut solver = ExactSolver::new(clients, servers);
    let (mut best_b, mut best) = (0, f64::NEG_INFINITY);
    for b in 1..=last {
        if speedup.h_non_decreasing() && bound(b) <= best {
            break;
        }
        if b > within {
            return Ok(None);
        }
        if deadline.expired() {
            return Err(ModelError::Interrupted {
                during: "the exact optimal-b scan of the batch network".into(),
                reason: deadline.reason(),
            });
        }
        let x = solver.solve(b, think_rate, speedup.h(b)).throughput;
        if x > best {
            (best_b, best) = (b, x);
        }
    }
    Ok(Some((best_b, best)))
}

/// Mean field of the batch network (see the module docs). State `[u]`: the fraction of clients
/// with a job in the system (queued or in service), in `[0, 1]`.
///
/// Source: system constructed from the abstract of Kar et al., Performance Evaluation 144 (2020),
/// arXiv 2009.09433; drift, fixed point and optimum derived here (docs/models/batch.md).
///
/// ```
/// use mfq_model::models::{BatchNetwork, Speedup};
/// use mfq_model::MeanFieldModel;
/// let m = BatchNetwork::new(20.0, 0.1, 3, Speedup::Overhead { c: 0.2 }).unwrap();
/// // X(3) = min{20 / (10 + 1.4), 3 / 1.4} = 20 / 11.4
/// assert!((m.throughput() - 20.0 / 11.4).abs() < 1e-12);
/// assert_eq!(m.optimal_b().0, 3);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BatchNetwork {
    alpha: f64,
    think_rate: f64,
    b: usize,
    speedup: Speedup,
    /// `s(b)`, `h(b)`.
    s: f64,
    h: f64,
}

/// Checks `alpha`, `think_rate`, `b` and the speed-up.
fn check_params(alpha: f64, think_rate: f64, b: usize, speedup: &Speedup) -> Result<(), ModelError> {
    if !(alpha.is_finite() && alpha > 0.0 && alpha <= MAX_ALPHA) {
        return Err(out_of_range("model.alpha", alpha, "a number in (0, 1e6] (clients per server, n / m)"));
    }
    if !(think_rate.is_finite() && think_rate > 0.0) {
        return Err(out_of_range("model.think_rate", think_rate, "a finite number > 0 (1 / mean think time)"));
    }
    speedup.validate()?;
    if b == 0 {
        return Err(out_of_range("model.b", b, "an integer >= 1"));
    }
    if let Some(max) = speedup.max_b().filter(|max| b > *max) {
        return Err(out_of_range("model.b", b, &format!("an integer in [1, {max}] (the speed-up table gives s(1) .. s({max}))")));
    }
    Ok(())
}

impl BatchNetwork {
    /// `alpha` clients per server, think rate `think_rate`, batch size `b`, speed-up `speedup`.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.alpha` (not in `(0, 1e6]`), `model.think_rate`
    /// (not finite or `<= 0`), `model.b` (0, or beyond a speed-up table) or the speed-up field
    /// ([`Speedup::validate`]).
    pub fn new(alpha: f64, think_rate: f64, b: usize, speedup: Speedup) -> Result<Self, ModelError> {
        check_params(alpha, think_rate, b, &speedup)?;
        let (s, h) = (speedup.s(b), speedup.h(b));
        Ok(BatchNetwork { alpha, think_rate, b, speedup, s, h })
    }

    /// The drift `f(u)`.
    #[inline]
    pub fn f(&self, u: f64) -> f64 {
        self.think_rate * (1.0 - u) - self.s / self.alpha * (self.alpha * u / self.b as f64).min(1.0)
    }

    /// The fixed point in closed form: `u* = think_rate h / (think_rate h + 1)` when
    /// `alpha u* <= b` (some servers idle), else `u* = 1 - s(b) / (think_rate alpha)` (every server
    /// busy, a queue of `alpha - b - s(b)/think_rate` jobs per server).
    pub fn fixed_point(&self) -> f64 {
        let idle = self.think_rate * self.h / (self.think_rate * self.h + 1.0);
        if self.alpha * idle <= self.b as f64 {
            idle
        } else {
            1.0 - self.s / (self.think_rate * self.alpha)
        }
    }

    /// Throughput per server at the fixed point, [`mean_field_throughput`].
    pub fn throughput(&self) -> f64 {
        mean_field_throughput(self.alpha, self.think_rate, &self.speedup, self.b)
    }

    /// [`mean_field_optimal_b`] at these parameters.
    pub fn optimal_b(&self) -> (usize, f64) {
        mean_field_optimal_b(self.alpha, self.think_rate, &self.speedup)
    }
}

impl MeanFieldModel for BatchNetwork {
    fn name(&self) -> String {
        format!("batch(alpha={}, b={})", self.alpha, self.b)
    }
    fn dim(&self) -> usize {
        1
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        dx[0] = self.f(x[0]);
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Named { names: vec!["u".into()] }
    }
    /// Throughput per server, jobs in the system per server (queued or in service) as the mean
    /// queue length, response time from submission to completion (Little), extras `throughput`, `u`,
    /// `busy_fraction`, `queued_per_server`, `thinking_per_server`, `speedup` `s(b)`,
    /// `batch_time` `h(b)`, `optimal_b` and `throughput_at_optimal_b` (mean field), and for the
    /// overhead form `crossing_b`.
    fn observables(&self, x: &[f64]) -> Observables {
        let u = x[0].clamp(0.0, 1.0);
        let z = self.alpha * u;
        let busy = (z / self.b as f64).min(1.0);
        let thr = self.s * busy;
        let (opt_b, opt_x) = self.optimal_b();
        let mut extras = vec![
            ("throughput".into(), thr),
            ("u".into(), u),
            ("busy_fraction".into(), busy),
            ("queued_per_server".into(), (z - self.b as f64).max(0.0)),
            ("thinking_per_server".into(), self.alpha - z),
            ("speedup".into(), self.s),
            ("batch_time".into(), self.h),
            ("optimal_b".into(), opt_b as f64),
            ("throughput_at_optimal_b".into(), opt_x),
        ];
        if let Some(c) = overhead_crossing(self.alpha, self.think_rate, &self.speedup) {
            extras.push(("crossing_b".into(), c));
        }
        Observables {
            tail: Vec::new(),
            mean_queue_length: Some(z),
            throughput: Some(thr),
            mean_response_time: (thr > 0.0).then(|| z / thr),
            prob_wait: None,
            loss_probability: 0.0,
            mass_at_truncation: 0.0,
            extras,
        }
    }
    /// One-dimensional drifts are cooperative.
    fn order(&self) -> Option<PartialOrder> {
        Some(PartialOrder::Componentwise)
    }
    fn stability(&self) -> Stability {
        Stability::Stable {
            condition:
                "closed network: finitely many clients, the drift is strictly decreasing in u (unique, globally attractive fixed point)"
                    .into(),
        }
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        Some(vec![self.fixed_point()])
    }
    /// The drift has a kink at `u = b / alpha` (all servers just busy).
    fn is_smooth(&self) -> bool {
        false
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
}

impl AnalyticJacobian for BatchNetwork {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Dense
    }
    /// `-think_rate - s(b)/b` below the kink (`alpha u < b`), `-think_rate` above.
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        let below = self.alpha * x[0] < self.b as f64;
        jac.set(0, 0, -self.think_rate - if below { self.s / self.b as f64 } else { 0.0 });
    }
}

/// The exact finite network of `servers` servers as a model: its state is `E[N] / n` of the
/// exact stationary law ([`exact_network`]), its drift the relaxation `u* - u` towards it (the
/// model has no dynamics: see [`MeanFieldModel::dynamics_note`]). Observables are the exact
/// stationary ones, whatever the state.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchExact {
    mean_field: BatchNetwork,
    exact: ExactNetwork,
    /// [`exact_optimal_b`]: `None` when its work limit left the optimum unsettled.
    optimal: Option<(usize, f64)>,
}

impl BatchExact {
    /// The network of `servers` servers and `alpha servers` clients.
    ///
    /// # Errors
    /// As [`BatchNetwork::new`]; `model.think_rate` outside [`MIN_EXACT_THINK_RATE`, `MAX_EXACT_THINK_RATE`];
    /// `model.servers` when `alpha servers` is not an integer, and as
    /// [`exact_network`].
    pub fn new(alpha: f64, think_rate: f64, b: usize, speedup: Speedup, servers: usize) -> Result<Self, ModelError> {
        Self::new_within(alpha, think_rate, b, speedup, servers, &Deadline::none())
    }

    /// [`new`](Self::new) within the job's `deadline` (the optimal-b scan watches it).
    ///
    /// # Errors
    /// As [`new`](Self::new), and [`ModelError::Interrupted`].
    pub fn new_within(
        alpha: f64,
        think_rate: f64,
        b: usize,
        speedup: Speedup,
        servers: usize,
        deadline: &Deadline,
    ) -> Result<Self, ModelError> {
        let mean_field = BatchNetwork::new(alpha, think_rate, b, speedup)?;
        if !(MIN_EXACT_THINK_RATE..=MAX_EXACT_THINK_RATE).contains(&think_rate) {
            return Err(out_of_range(
                "model.think_rate",
                think_rate,
                "a number in [1e-12, 1e12] for the exact finite network (outside it the chain's rates overflow or underflow; \
                 the mean field, without model.servers, takes any finite rate > 0)",
            ));
        }
        let clients = clients_of(alpha, servers)?;
        let exact = exact_network(clients, servers, b, think_rate, mean_field.h)?;
        let optimal = exact_optimal_b(clients, servers, think_rate, &mean_field.speedup, deadline)?;
        Ok(BatchExact { mean_field, exact, optimal })
    }

    /// The exact stationary values.
    pub fn exact(&self) -> &ExactNetwork {
        &self.exact
    }
}

/// `n = alpha m`, which must be an integer.
fn clients_of(alpha: f64, servers: usize) -> Result<usize, ModelError> {
    if servers == 0 {
        return Err(out_of_range("model.servers", servers, "an integer >= 1"));
    }
    let n = alpha * servers as f64;
    if (n - n.round()).abs() > 1e-9 * n.max(1.0) || n.round() < 1.0 || n > MAX_EXACT_CLIENTS as f64 {
        return Err(out_of_range(
            "model.servers",
            servers,
            &format!("a number m of servers with n = alpha m an integer in [1, 1000000] (alpha = {alpha}, alpha m = {n})"),
        ));
    }
    Ok(n.round() as usize)
}

impl MeanFieldModel for BatchExact {
    fn name(&self) -> String {
        format!("batch exact(n={}, m={}, b={})", self.exact.clients, self.exact.servers, self.mean_field.b)
    }
    fn dim(&self) -> usize {
        1
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        dx[0] = self.exact.jobs_per_server / self.mean_field.alpha - x[0];
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Named { names: vec!["u".into()] }
    }
    /// The exact stationary throughput, jobs per server and response time (Little), extras
    /// `throughput`, `busy_fraction`, `mean_field_throughput`, `optimal_b` and `throughput_at_optimal_b`
    /// (exact, this `m`; absent when the scan's work limit left them unsettled, see
    /// [`exact_optimal_b`]), `mean_field_optimal_b`, `clients`, `servers`.
    fn observables(&self, _x: &[f64]) -> Observables {
        let e = &self.exact;
        let (mf_b, _) = self.mean_field.optimal_b();
        let mut extras = vec![
            ("throughput".into(), e.throughput),
            ("busy_fraction".into(), e.busy_fraction),
            ("mean_field_throughput".into(), self.mean_field.throughput()),
        ];
        if let Some((b, x)) = self.optimal {
            extras.push(("optimal_b".into(), b as f64));
            extras.push(("throughput_at_optimal_b".into(), x));
        }
        extras.push(("mean_field_optimal_b".into(), mf_b as f64));
        extras.push(("clients".into(), e.clients as f64));
        extras.push(("servers".into(), e.servers as f64));
        Observables {
            tail: Vec::new(),
            mean_queue_length: Some(e.jobs_per_server),
            throughput: Some(e.throughput),
            mean_response_time: (e.throughput > 0.0).then(|| e.jobs_per_server / e.throughput),
            prob_wait: None,
            loss_probability: 0.0,
            mass_at_truncation: 0.0,
            extras,
        }
    }
    fn stability(&self) -> Stability {
        Stability::Stable { condition: "finite closed network: an irreducible finite Markov chain".into() }
    }
    fn dynamics_note(&self) -> Option<String> {
        Some(EXACT_NOTE.into())
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        Some(vec![self.exact.jobs_per_server / self.mean_field.alpha])
    }
}

const EXACT_NOTE: &str = "with model.servers set, the batch kind is the exact stationary solution of the finite network \
(a relaxation towards it, not its dynamics); drop model.servers for the mean field";

/// `kind = "batch"`: the parameters of [`BatchNetwork`] (or [`BatchExact`] with `servers`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchSpec {
    /// Clients per server, `alpha = n / m`.
    pub alpha: f64,
    /// Rate at which a thinking client submits its job (1 / mean think time).
    pub think_rate: f64,
    /// Batch size.
    pub b: usize,
    /// The speed-up function.
    pub speedup: Speedup,
    /// Number of servers `m` of the exact finite network; `None`: the mean-field limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<usize>,
}

/// The `batch` kind.
pub static BATCH: Kind = Kind {
    name: "batch",
    title: "Batch processing in a closed network: n = alpha m clients, m servers, batches of b jobs at speed-up s(b); throughput and optimal b",
    params: &[
        Param { name: "alpha", meaning: "clients per server, n / m", unit: "", allowed: "(0, 1e6]", default: None, range: Some(ParamRange { min: 0.0, min_inclusive: false, max: Some(1e6), max_inclusive: true, integer: false }) },
        Param {
            name: "think_rate",
            meaning: "rate at which a thinking client submits its job (1 / mean think time)",
            unit: "per mean single-job service time",
            allowed: "> 0",
            default: None,
            range: Some(ParamRange::above(0.0)),
        },
        Param { name: "b", meaning: "batch size (a free server takes exactly b waiting jobs)", unit: "jobs", allowed: "integer >= 1", default: None, range: Some(ParamRange::integers(1.0, None)) },
        Param {
            name: "speedup",
            meaning: "[model.speedup] table: form = overhead (c: h(b) = 1 + c (b - 1)) | power (gamma: s(b) = b^gamma) | table (values = [s(1), s(2), ...])",
            unit: "",
            allowed: "s(1) = 1, s increasing and sub-additive: c in [0, 1], gamma in [0, 1], a table checked entry by entry",
            default: None,
            range: None,
        },
        Param {
            name: "servers",
            meaning: "m of the exact finite network (n = alpha m clients); absent: the mean-field limit",
            unit: "servers",
            allowed: "integer >= 1 with alpha m an integer, b <= alpha m <= 1000000",
            default: Some("none (mean field)"),
            range: Some(ParamRange::integers(1.0, Some(1e6))),
        },
    ],
    sources: "Kar, Rehrmann, Mukhopadhyay, Alt, Ciucu, Koeppl, Binnig, Rizk, Perf. Eval. 144 (2020), arXiv 2009.09433 (abstract; model, closed form and exact chain constructed here)",
    example: "models/batch.toml",
    docs: "docs/models/batch.md",
    read: read_spec::<BatchSpec>,
};

impl KindSpec for BatchSpec {
    fn kind(&self) -> &'static Kind {
        &BATCH
    }
    /// No arrival rate per server: a closed network.
    fn lambda(&self) -> Option<f64> {
        None
    }
    /// One-dimensional: `levels` does not apply.
    fn build(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        match self.servers {
            None => Ok(Box::new(BatchNetwork::new(self.alpha, self.think_rate, self.b, self.speedup.clone())?)),
            Some(m) => Ok(Box::new(BatchExact::new(self.alpha, self.think_rate, self.b, self.speedup.clone(), m)?)),
        }
    }
    /// The exact network's optimal-b scan watches `deadline`.
    fn build_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        match self.servers {
            None => self.build(levels),
            Some(m) => Ok(Box::new(BatchExact::new_within(self.alpha, self.think_rate, self.b, self.speedup.clone(), m, deadline)?)),
        }
    }
    /// With `servers`, when the optimal-b scan may reach its work limit: which `b` it covers.
    fn notes(&self) -> Vec<String> {
        let Some(m) = self.servers else { return Vec::new() };
        let Ok(n) = clients_of(self.alpha, m) else { return Vec::new() };
        let last = self.speedup.max_b().unwrap_or(usize::MAX).min(n);
        let within = scanned_batch_sizes(n);
        if last <= within {
            return Vec::new();
        }
        vec![format!(
            "the exact optimal b is searched over b = 1..{within} only (one chain of n + 1 = {} states per b, at most 2e7 states in all): \
             optimal_b and throughput_at_optimal_b are printed only when the bound n / m / (1/think_rate + h(b)) on the throughput \
             of every larger b (h(b) = b / s(b), a batch's mean service time) settles the optimum there; \
             mean_field_optimal_b is the mean field's",
            n + 1
        )]
    }
    fn validate(&self, _levels: usize) -> Result<(), ModelError> {
        check_params(self.alpha, self.think_rate, self.b, &self.speedup)?;
        if let Some(m) = self.servers {
            let n = clients_of(self.alpha, m)?;
            if self.b > n {
                return Err(out_of_range("model.b", self.b, &format!("an integer in [1, n] where n = alpha × servers = {n} clients")));
            }
        }
        Ok(())
    }
    fn dynamics_note(&self) -> Option<String> {
        self.servers.map(|_| EXACT_NOTE.to_string())
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        check_params(self.alpha, self.think_rate, self.b, &self.speedup)?;
        Ok(Simulation::System(FiniteSystem::Batch {
            alpha: self.alpha,
            think_rate: self.think_rate,
            b: self.b,
            batch_time: self.speedup.h(self.b),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C02: Speedup = Speedup::Overhead { c: 0.2 };

    /// The natural two-dimensional chain of the network, written from its rules: state
    /// `(j, q)` = (busy servers, waiting jobs), with a free server starting a batch whenever `b`
    /// jobs wait; stationary law by dense Gaussian elimination. Returns the throughput per server.
    fn two_dimensional_chain(n: usize, m: usize, b: usize, think: f64, h: f64) -> f64 {
        // canonical states: j < m and q < b, or j = m; b j + q <= n
        let mut states = Vec::new();
        for j in 0..=m {
            for q in 0..=n {
                if b * j + q <= n && (j == m || q < b) {
                    states.push((j, q));
                }
            }
        }
        let idx = |s: (usize, usize)| states.iter().position(|t| *t == s).unwrap();
        let ns = states.len();
        // a[i][col] = Q[col][i] (balance equations), last row replaced by normalisation
        let mut a = vec![vec![0.0; ns + 1]; ns];
        for (col, &(j, q)) in states.iter().enumerate() {
            let thinking = n - b * j - q;
            let mut jump = |to: (usize, usize), rate: f64| {
                if rate > 0.0 {
                    let i = idx(to);
                    a[i][col] += rate;
                    a[col][col] -= rate;
                }
            };
            // a client submits: start a batch if a server is free and b jobs now wait
            let arrive = if j < m && q + 1 == b { (j + 1, 0) } else { (j, q + 1) };
            jump(arrive, think * thinking as f64);
            // a batch completes: the freed server takes b waiting jobs if there are
            let done = if q >= b { (j, q - b) } else { (j - usize::from(j > 0), q) };
            jump(done, j as f64 / h);
        }
        for v in a[ns - 1].iter_mut() {
            *v = 1.0;
        }
        a[ns - 1][ns] = 1.0;
        // Gaussian elimination with partial pivoting
        for c in 0..ns {
            let p = (c..ns).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs())).unwrap();
            a.swap(c, p);
            let pivot = a[c].clone();
            for (r, row) in a.iter_mut().enumerate() {
                if r != c && row[c] != 0.0 {
                    let f = row[c] / pivot[c];
                    for (v, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                        *v -= f * p;
                    }
                }
            }
        }
        let pi: Vec<f64> = (0..ns).map(|i| a[i][ns] / a[i][i]).collect();
        states.iter().zip(&pi).map(|(&(j, _), p)| p * j as f64).sum::<f64>() * b as f64 / h / m as f64
    }

    /// The cut equations equal the two-dimensional chain solved densely.
    #[test]
    fn exact_network_equals_the_two_dimensional_chain() {
        for (n, m, b, think, sp) in [
            (12, 3, 2, 0.7, C02),
            (20, 2, 3, 0.1, C02),
            (9, 4, 1, 1.3, Speedup::Power { gamma: 0.5 }),
            (15, 2, 5, 0.4, Speedup::Power { gamma: 0.3 }),
            (7, 1, 7, 2.0, Speedup::Overhead { c: 0.0 }),
            (10, 5, 4, 0.5, Speedup::Overhead { c: 1.0 }),
        ] {
            let h = sp.h(b);
            let e = exact_network(n, m, b, think, h).unwrap();
            let dense = two_dimensional_chain(n, m, b, think, h);
            assert!((e.throughput - dense).abs() < 1e-11 * dense, "n={n} m={m} b={b}: {} vs {dense}", e.throughput);
            assert!((e.throughput - e.throughput_clients).abs() < 1e-11 * dense, "{e:?}");
        }
    }

    /// b = 1, one server: the machine-repairman model, whose stationary law is
    /// `pi(N) ∝ n! / (n - N)! (think h)^N` (Kleinrock, Queueing Systems I, sec. 3.8).
    #[test]
    fn one_server_and_b_1_is_the_machine_repairman_model() {
        let (n, think, h) = (8usize, 0.3, 1.0);
        let mut w = vec![1.0];
        for k in 1..=n {
            w.push(w[k - 1] * (n - k + 1) as f64 * think * h);
        }
        let total: f64 = w.iter().sum();
        let busy = 1.0 - w[0] / total;
        let e = exact_network(n, 1, 1, think, h).unwrap();
        assert!((e.throughput - busy / h).abs() < 1e-13, "{} vs {}", e.throughput, busy / h);
    }

    /// The fixed point is a zero of the drift, on both sides of the kink, and its observables
    /// give the closed-form throughput.
    #[test]
    fn fixed_point_is_the_closed_form() {
        for (alpha, think, b, sp) in [
            (20.0, 0.1, 3, C02),
            (20.0, 0.1, 1, C02),
            (20.0, 0.1, 8, C02),
            (5.0, 2.0, 2, Speedup::Power { gamma: 0.5 }),
            (3.0, 1.0, 5, Speedup::Overhead { c: 0.5 }),
        ] {
            let m = BatchNetwork::new(alpha, think, b, sp).unwrap();
            let u = m.fixed_point();
            assert!(m.f(u).abs() < 1e-13, "{alpha} {b}: f(u*) = {}", m.f(u));
            let obs = m.observables(&[u]);
            assert!((obs.throughput.unwrap() - m.throughput()).abs() < 1e-12);
            // the clients' side: think_rate x thinking clients per server
            let thinking = obs.extras.iter().find(|e| e.0 == "thinking_per_server").unwrap().1;
            assert!((think * thinking - m.throughput()).abs() < 1e-12);
        }
    }

    /// Mean-field X(b) for alpha = 20, think_rate = 0.1, h(b) = 1 + 0.2 (b - 1), by hand:
    /// min{20 / (10 + h), b / h}.
    #[test]
    fn mean_field_throughput_and_optimum_by_hand() {
        let want = [1.0, 2.0 / 1.2, 20.0 / 11.4, 20.0 / 11.6, 20.0 / 11.8, 20.0 / 12.0];
        for (i, w) in want.iter().enumerate() {
            assert!((mean_field_throughput(20.0, 0.1, &C02, i + 1) - w).abs() < 1e-14, "b = {}", i + 1);
        }
        assert_eq!(mean_field_optimal_b(20.0, 0.1, &C02), (3, 20.0 / 11.4));
        // crossing: 0.2 b^2 + (1 - 0.2 - 4 + 10) b - 16 = 0
        let c = overhead_crossing(20.0, 0.1, &C02).unwrap();
        assert!((0.2 * c * c + 6.8 * c - 16.0).abs() < 1e-12 && (c - 2.2088).abs() < 1e-3, "{c}");
    }

    /// The O(1) optimum (floor or ceiling of the crossing) equals the scan, over a grid.
    #[test]
    fn overhead_crossing_brackets_the_scanned_optimum() {
        for alpha in [0.5, 2.0, 7.0, 20.0, 100.0, 1000.0] {
            for think in [0.01, 0.1, 1.0, 10.0] {
                for c in [0.0, 0.05, 0.2, 0.5, 0.9] {
                    let sp = Speedup::Overhead { c };
                    let (b, x) = mean_field_optimal_b(alpha, think, &sp);
                    let r = overhead_crossing(alpha, think, &sp).unwrap();
                    let cands = [r.floor().max(1.0) as usize, r.ceil().max(1.0) as usize];
                    let best = cands.iter().map(|&k| mean_field_throughput(alpha, think, &sp, k)).fold(f64::MIN, f64::max);
                    assert!((best - x).abs() <= 1e-12 * x, "alpha {alpha} think {think} c {c}: scan b = {b} ({x}), crossing {r} ({best})");
                }
            }
        }
    }

    #[test]
    fn bad_speedups_and_sizes_are_refused_with_the_field() {
        let err = |sp: Speedup, b: usize| BatchNetwork::new(20.0, 0.1, b, sp).unwrap_err().to_string();
        let e = err(Speedup::Table { values: vec![1.0, 2.5] }, 1);
        assert!(e.contains("model.speedup.values[1] = 2.5") && e.contains("sub-additive"), "{e}");
        let e = err(Speedup::Table { values: vec![1.0, 1.8, 1.7] }, 1);
        assert!(e.contains("model.speedup.values[2] = 1.7") && e.contains("increasing"), "{e}");
        let e = err(Speedup::Table { values: vec![1.0, 1.5, 2.0, 3.1] }, 1);
        assert!(e.contains("model.speedup.values[3] = 3.1") && e.contains("s(4) <= s(1) + s(3) = 3"), "{e}");
        let e = err(Speedup::Table { values: vec![0.9, 1.5] }, 1);
        assert!(e.contains("model.speedup.values[0] = 0.9") && e.contains("s(1) = 1"), "{e}");
        let e = err(Speedup::Table { values: vec![1.0, 1.5] }, 3);
        assert!(e.contains("model.b = 3") && e.contains("[1, 2]"), "{e}");
        let e = err(Speedup::Overhead { c: 1.5 }, 2);
        assert!(e.contains("model.speedup.c = 1.5"), "{e}");
        let e = err(Speedup::Power { gamma: 1.2 }, 2);
        assert!(e.contains("model.speedup.gamma = 1.2") && e.contains("super-additive"), "{e}");
        assert!(err(C02, 0).contains("model.b = 0"));
        assert!(BatchNetwork::new(f64::NAN, 0.1, 1, C02).unwrap_err().to_string().contains("model.alpha"));
        assert!(BatchNetwork::new(2.0, 0.0, 1, C02).unwrap_err().to_string().contains("model.think_rate = 0"));
        // b > n, and alpha m not an integer
        let e = BatchExact::new(2.0, 0.1, 5, C02, 2).unwrap_err().to_string();
        assert!(e.contains("model.b = 5") && e.contains("n = 4"), "{e}");
        let e = BatchExact::new(2.5, 0.1, 1, C02, 3).unwrap_err().to_string();
        assert!(e.contains("model.servers = 3") && e.contains("integer"), "{e}");
        // a valid table passes: s(k) = sqrt(k) values
        let t = Speedup::Table { values: (1..=6).map(|k| (k as f64).sqrt()).collect() };
        assert!(BatchNetwork::new(20.0, 0.1, 6, t).is_ok());
    }
}
#[cfg(test)]
mod limit_tests {
    use super::*;

    /// The mean-field throughput is the limit of the exact one as n = alpha m grows: for
    /// alpha = 10, think_rate = 0.5, s(b) = sqrt(b), at the mean-field optimum b = 6, the gap
    /// falls at every step of m = 1, 2, 5, ..., 1000 and like 1/m at the end (docs/models/batch.md
    /// has the table). The exact optimal b moves from 4 (m = 1) to the mean field's 6 (m >= 10).
    #[test]
    fn exact_throughput_tends_to_the_mean_field_and_so_does_the_optimal_b() {
        let sp = Speedup::Power { gamma: 0.5 };
        let (alpha, think) = (10usize, 0.5);
        let (mf_b, mf_x) = mean_field_optimal_b(alpha as f64, think, &sp);
        assert_eq!(mf_b, 6);
        assert!((mf_x - 10.0 / (2.0 + 6f64.sqrt())).abs() < 1e-14);
        let mut last_gap = f64::INFINITY;
        let mut gaps = Vec::new();
        for m in [1usize, 2, 5, 10, 20, 50, 100, 1000] {
            let e = exact_network(alpha * m, m, mf_b, think, sp.h(mf_b)).unwrap();
            let gap = mf_x - e.throughput;
            assert!(gap > 0.0 && gap < last_gap, "m = {m}: gap {gap} after {last_gap}");
            last_gap = gap;
            gaps.push((m, gap));
            let (b, x) = exact_optimal_b(alpha * m, m, think, &sp, &Deadline::none()).unwrap().unwrap();
            let want = match m {
                1 => 4,
                2 | 5 => 5,
                _ => 6,
            };
            assert_eq!(b, want, "m = {m}");
            // the mean-field b loses little even where it is not the exact optimum
            assert!(x - e.throughput <= if m == 1 { 0.05 * x } else { 0.02 * x }, "m = {m}");
        }
        let (g100, g1000) = (gaps[6].1, gaps[7].1);
        assert!(g1000 < 1e-3 && g100 / g1000 > 5.0, "gaps {gaps:?}");
    }
}

#[cfg(test)]
mod exact_range_tests {
    use super::*;

    /// b = 1, one server, n = 3000 clients with think h = 50: the machine-repairman law
    /// `pi(N) ∝ n! / (n - N)! (think h)^N` spans about 10^15000, so the solver rescales
    /// hundreds of times; the mean number of jobs and the throughput match the law summed in
    /// logarithms.
    #[test]
    fn machine_repairman_across_thousands_of_orders_of_magnitude() {
        for (n, think, h) in [(3000usize, 50.0, 1.0), (3000, 1e-3, 1.0), (2000, 0.02, 2.5)] {
            let mut logs = vec![0.0f64];
            for k in 1..=n {
                logs.push(logs[k - 1] + ((n - k + 1) as f64 * think * h).ln());
            }
            let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let w: Vec<f64> = logs.iter().map(|l| (l - top).exp()).collect();
            let total: f64 = w.iter().sum();
            let mean_n: f64 = w.iter().enumerate().map(|(k, p)| p * k as f64).sum::<f64>() / total;
            let busy = 1.0 - w[0] / total;
            let e = exact_network(n, 1, 1, think, h).unwrap();
            assert!((e.jobs_per_server - mean_n).abs() < 1e-11 * mean_n, "n={n} think={think}: {} vs {mean_n}", e.jobs_per_server);
            assert!((e.throughput - busy / h).abs() < 1e-12, "n={n} think={think}: {} vs {}", e.throughput, busy / h);
        }
    }

    /// The optimal-b scan: settled by the bound within the work limit (`Some`), cut by it before
    /// the bound settles the optimum (`None`: n = 10000 with s(b) = sqrt(b) peaks near b = 9800,
    /// past the 1999 chains of the limit), and stopped by an expired deadline (`Interrupted`).
    #[test]
    fn optimal_b_scan_limits() {
        let sp = Speedup::Power { gamma: 0.5 };
        let (b, x) = exact_optimal_b(100, 1, 0.5, &sp, &Deadline::none()).unwrap().unwrap();
        // every b by brute force
        let best = (1..=100usize)
            .map(|b| (b, exact_network(100, 1, b, 0.5, sp.h(b)).unwrap().throughput))
            .fold((0, f64::NEG_INFINITY), |acc, (b, x)| if x > acc.1 { (b, x) } else { acc });
        assert_eq!((b, x), best);
        assert_eq!(exact_optimal_b(10_000, 1, 0.5, &sp, &Deadline::none()).unwrap(), None);
        let spec = BatchSpec { alpha: 10_000.0, think_rate: 0.5, b: 6, speedup: sp.clone(), servers: Some(1) };
        assert!(spec.notes()[0].contains("b = 1..1999"), "{:?}", spec.notes());
        let done = Deadline::after(1e-9);
        std::thread::sleep(std::time::Duration::from_millis(2));
        let e = exact_optimal_b(3000, 1, 0.5, &sp, &done).unwrap_err();
        assert!(matches!(e, ModelError::Interrupted { .. }), "{e}");
    }

    /// The exact network refuses think rates outside [1e-12, 1e12] naming the field (the
    /// chain's rates overflowed to a non-finite drift at 1e300 and 1e-300), and solves the ends.
    #[test]
    fn exact_network_think_rate_range() {
        let sp = || Speedup::Power { gamma: 0.5 };
        for t in [1e300, 1e-300, 2e12, 5e-13] {
            let e = BatchExact::new(10.0, t, 6, sp(), 2).unwrap_err();
            assert!(e.to_string().contains("model.think_rate"), "{e}");
        }
        for t in [1e12, 1e-12, 0.5] {
            let m = BatchExact::new(10.0, t, 6, sp(), 2).unwrap();
            assert!(m.exact().throughput.is_finite() && m.exact().jobs_per_server.is_finite(), "{t}");
        }
    }
}
