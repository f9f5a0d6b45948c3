//! Mean-field (fluid-limit) models of large-scale load balancing.
//!
//! A model is an ODE `dx/dt = f(x)` on a vector of occupancy fractions. This crate defines
//! the [`MeanFieldModel`] trait, the state conventions, the observables read off a state, the
//! built-in models and the TOML model-file format ([`spec`]). It does no numerics beyond
//! evaluating drifts and Jacobians: integrators live in `mfq-ode`, fixed points and the
//! global-attraction checker in `mfq-fixpoint`.
//!
//! # State conventions
//!
//! - **Tail form** ([`StateLayout::Tail`]): `x[k-1] = x_k` = fraction of servers with at least
//!   `k` jobs, `k = 1..K`; `x_0 = 1` is implicit and `x_{K+1} = 0`. Truncating this way is
//!   exactly the mean field of the finite-buffer-`K` system (arrivals that would create level
//!   `K + 1` are lost), so a truncated fixed point has `x_1 = lambda (1 - loss)`.
//! - Time unit: the mean job size at a unit-rate server; `lambda` = arrival rate per server.
//!
//! # Example
//!
//! ```
//! use mfq_model::{models::Jsq, MeanFieldModel};
//! let m = Jsq::new(0.9, 2, 30).unwrap();
//! let x = m.analytic_fixed_point().unwrap();          // x_k = 0.9^(2^k - 1)
//! let mut dx = vec![0.0; m.dim()];
//! m.drift(&x, &mut dx);
//! assert!(dx.iter().all(|v| v.abs() < 1e-15));
//! assert!((m.observables(&x).mean_response_time.unwrap() - 2.614057).abs() < 1e-6);
//! ```

pub mod deadline;
pub mod finite;
pub mod jacobian;
pub mod law;
mod layout;
pub mod memory;
pub mod models;
pub mod registry;
pub mod spec;

pub use deadline::{Abandoned, Deadline};
pub use finite::{FiniteSystem, Simulation};
pub use jacobian::{finite_difference_jacobian, Coupling, Csr, Jacobian, Sparsity, SparsityPattern};
pub use law::{off_lattice, ConservationLaw, LAW_TOL};
pub use layout::{StateLayout, Violation};
pub use memory::{memory_limit, BadMemoryLimit, MemoryLimit, MEMORY_LIMIT_VAR};
pub use registry::{Kind, KindSpec, ModelSpec, Param, ParamRange, KINDS};
pub use spec::{ModelFile, Truncation};

use serde::Serialize;

/// Errors for misuse: a parameter outside its range, an unknown model, a malformed file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The model's transitions push the state out of its state space: transitions with a
    /// positive rate at a face where the state sits and a jump that points outward across it
    /// ([`outward_transitions`]), found where a failed fixed-point solve or a transient ended.
    /// The message is separate sentences ([`LEAVES_STATE_SPACE`] first): each transition (its
    /// declaration, rate, the state entry and the face), what is allowed
    /// ([`OUTWARD_ALLOWED`]), and where it was found; it names no command (a caller such as the
    /// CLI says which job met it: `mfq simulate cannot simulate ...`).
    #[error("{}", leaving_message(transitions, found))]
    LeavesStateSpace {
        /// `(field, what it does)` of each transition found, e.g. `("model.transitions[0]", "its
        /// rate \"5\" is 5.0000e0 > 0 at X = 1, where its jump X += 1 would take X above 1")`.
        transitions: Vec<(String, String)>,
        /// Where it was found (`where the transient ends on that face, ...`).
        found: String,
    },
    /// A parameter is outside the range the model is defined for.
    #[error("{field} = {value} is not allowed: {allowed}")]
    OutOfRange {
        /// Dotted name of the parameter, as in the model file (e.g. `model.lambda`).
        field: String,
        /// The value given.
        value: String,
        /// What is allowed (e.g. `a number in (0, 1)`).
        allowed: String,
    },
    /// The model file is not TOML, or does not match the model-file format (an unknown key or
    /// kind, a value of the wrong type).
    #[error("{}{}{message}", after_set.as_ref().map_or(String::new(), |s| format!("after --set {s}: ")), position.as_ref().map_or(String::new(), |p| p.to_string()))]
    File {
        /// Where in the file, when the error has a position there.
        position: Option<FilePosition>,
        /// The `--set` overrides after which the error arose (`d=two --set lambda=0.5`), if any.
        after_set: Option<String>,
        /// What is wrong, starting with the dotted key it is about when there is one
        /// (`model.d: invalid type: string "two", expected an integer in [1, 10000]`: an integer key
        /// of a kind names its own range, not its type's).
        message: String,
    },
    /// A declaration of a generic model is not valid (docs/models/generic.md).
    #[error("{at}: {message}")]
    Declaration {
        /// Where: the dotted key, with the expression's text when an expression is at fault
        /// (`model.transitions[0].rate = "x^"`).
        at: String,
        /// What is wrong, and what is allowed.
        message: String,
    },
    /// Building the model stopped at the job's [`Deadline`] (a time limit or a cancellation):
    /// not a bad input, the model was not finished (`mfq` exits with code 4).
    #[error("{during} stopped at {reason} before it finished")]
    Interrupted {
        /// What was being computed (`the LL(d) workload grid`).
        during: String,
        /// The limit as given (`the wall-clock limit --max-seconds 5`), or a cancellation.
        reason: String,
    },
    /// A `--set NAME=VALUE` override names a key that does not exist or is not a value.
    #[error("--set {name}: {reason}")]
    BadOverride {
        /// The dotted name given.
        name: String,
        /// Why it cannot be applied.
        reason: String,
    },
}

/// A position in a model file, for [`ModelError::File`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePosition {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
    /// The line's text, trimmed and cut to 60 characters (it names the key or the table).
    pub text: String,
}

impl std::fmt::Display for FilePosition {
    /// `TOML parse error at line L, column C (TEXT): `, the prefix of a message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = if self.text.is_empty() { String::new() } else { format!(" ({})", self.text) };
        write!(f, "TOML parse error at line {}, column {}{text}: ", self.line, self.column)
    }
}

impl ModelError {
    /// A [`ModelError::Declaration`] of a generic model: `at` names the key, `message` says
    /// what is wrong and what is allowed.
    pub fn declaration(at: impl Into<String>, message: impl std::fmt::Display) -> Self {
        ModelError::Declaration { at: at.into(), message: message.to_string() }
    }
}

/// Shorthand for an [`ModelError::OutOfRange`]. A number whose plain decimal form is longer
/// than 20 characters (`1e300`, `-1e-300`) is shown in exponent form.
pub fn out_of_range(field: &str, value: impl std::fmt::Display, allowed: &str) -> ModelError {
    let value = value.to_string();
    let value = match value.parse::<f64>() {
        Ok(v) if value.len() > 20 => short_number(v),
        _ => value,
    };
    ModelError::OutOfRange { field: field.to_string(), value, allowed: allowed.to_string() }
}

/// `v` as `{}` prints it, or in exponent form (`1e300`) when that is longer than 20
/// characters: f64's `Display` never uses an exponent, so `1e300` would print 301 digits.
pub fn short_number(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() > 20 {
        format!("{v:e}")
    } else {
        plain
    }
}

/// Quantities read off a state (usually a fixed point). Units: jobs per server, time in mean
/// job sizes at a unit-rate server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observables {
    /// `P(Q >= k)` for `k = 1..K` (queue length at a random server, tail form).
    pub tail: Vec<f64>,
    /// Mean number of jobs per server, `L = sum_k x_k` (`None` for models without queues).
    pub mean_queue_length: Option<f64>,
    /// Rate of accepted jobs per server (`lambda (1 - loss)`; at a fixed point `x_1` for
    /// unit-rate servers); `None` for models without queues.
    pub throughput: Option<f64>,
    /// Mean response (sojourn) time `T = L / throughput` (Little's law); includes service.
    /// `None` for models without queues or with zero throughput.
    pub mean_response_time: Option<f64>,
    /// Probability that an arriving job joins a busy server and so waits, when the model
    /// defines it: a fraction of all arrivals; arrivals lost at a full buffer do not wait
    /// ([`Observables::waiting`]).
    pub prob_wait: Option<f64>,
    /// Probability that an arrival is lost at the truncation level `K`.
    pub loss_probability: f64,
    /// Mass at the truncation level, `x_K`: the truncation diagnostic.
    pub mass_at_truncation: f64,
    /// Model-specific extras, name and value.
    pub extras: Vec<(String, f64)>,
}

impl Observables {
    /// Observables of a model without queues (e.g. opinion dynamics): only `extras`.
    pub fn extras_only(extras: Vec<(String, f64)>) -> Self {
        Observables {
            tail: Vec::new(),
            mean_queue_length: None,
            throughput: None,
            mean_response_time: None,
            prob_wait: None,
            loss_probability: 0.0,
            mass_at_truncation: 0.0,
            extras,
        }
    }
}

impl Observables {
    /// `P(wait)` of a routing rule that sends an arrival to a busy server with probability
    /// `routed_to_busy` (lost arrivals included), given the probability `loss` that it is lost
    /// at a full buffer (level `K >= 1`, so every lost arrival was routed to a busy server):
    /// `routed_to_busy - loss`, the fraction of all arrivals that join a busy server and wait.
    /// This is what the simulator counts (`waited / offered`) and it is linear in the state's
    /// law, so the exact finite-`N` chain and the refined expansion average it correctly.
    pub fn waiting(routed_to_busy: f64, loss: f64) -> f64 {
        (routed_to_busy - loss).max(0.0)
    }

    /// Observables of a tail-form state `x` (`x[k-1] = x_k`) of unit-rate servers.
    ///
    /// `lambda` is the arrival rate per server, `prob_wait` and `loss_probability` come from
    /// the model's routing rule. Entries are clamped to `[0, 1]` first (values below ~1e-14
    /// after a Newton solve are round-off). Throughput is `lambda (1 - loss)`.
    pub fn from_tail(x: &[f64], lambda: f64, prob_wait: Option<f64>, loss_probability: f64) -> Self {
        let tail: Vec<f64> = x.iter().map(|v| v.clamp(0.0, 1.0)).collect();
        let mean_queue_length: f64 = tail.iter().sum();
        let throughput = lambda * (1.0 - loss_probability);
        let mean_response_time = (throughput > 0.0).then(|| mean_queue_length / throughput);
        Observables {
            mass_at_truncation: tail.last().copied().unwrap_or(0.0),
            tail,
            mean_queue_length: Some(mean_queue_length),
            throughput: Some(throughput),
            mean_response_time,
            prob_wait,
            loss_probability,
            extras: Vec::new(),
        }
    }
}

/// The known stability condition of a model at its parameters, checked before solving.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Stability {
    /// The parameters satisfy the model's (published or derived) stability condition.
    Stable {
        /// The condition, e.g. `lambda < 1`.
        condition: String,
    },
    /// The untruncated system is unstable: queues grow without bound.
    Unstable {
        /// Why, with the numbers (e.g. `lambda = 0.8 >= 1/(eps d) = 0.667`).
        reason: String,
    },
    /// No condition is known; the solvers watch the mass at the truncation level instead.
    Unknown {
        /// What is known.
        note: String,
    },
}

/// What a kind has instead of a queue-length model for some parameters: a stability verdict,
/// the region it comes from and its boundary `lambda_max` (redundancy-d with identical copies,
/// [`models::redundancy::identical_region`]). Data, not an error: `mfq fixed-point` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StabilityRegion {
    /// The verdict at the parameters.
    pub stability: Stability,
    /// The stable region, e.g. `lambda < 1/d`.
    pub region: String,
    /// The largest stable arrival rate per server (`None` when not known), to full precision.
    pub lambda_max: Option<f64>,
    /// How `lambda_max` is known (closed form, or computed, with its accuracy).
    pub lambda_max_source: String,
    /// Why there is no queue-length model and where a verdict for finite `N` comes from.
    pub note: String,
}

/// A partial order on states in which a model may be cooperative (monotone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartialOrder {
    /// `x <= y` iff `x_i <= y_i` for every entry (tail form: stochastic order of queue lengths).
    Componentwise,
    /// Staircase (product) order on the per-server states `(k, j)` of a
    /// [`StateLayout::PhaseTail`] state: `(k, j) <= (k', j')` iff `k <= k'` and `j <= j'` (idle
    /// below all, last phase highest), lifted to the stochastic order of the per-server
    /// distributions. `x <= y` iff `Phi_U(x) <= Phi_U(y)` for every up-set (staircase) `U`,
    /// `Phi_U(x) = sum_j x_{K_j, j}` with thresholds `K_1 >= K_2 >= ... >= K_phases`. Not a
    /// simplicial cone: test cooperativity with `PartialOrder::cooperativity` (cross-positivity
    /// over the up-sets and the cone's generators), not with the sign of `J_ij`. Methods and
    /// source: `models::coxian`.
    Staircase {
        /// Truncation level `K`.
        levels: usize,
        /// Number of phases.
        phases: usize,
    },
    /// Lexicographic total order `(k, 1) < (k, 2) < ... < (k, phases) < (k + 1, 1)` on the
    /// per-server states of a [`StateLayout::PhaseTail`] state: componentwise in the tail
    /// coordinates of that chain. Not preserved by SQ(d) with H2 jobs (docs/models/phase-type.md);
    /// kept so that tests and the checker can show the violation.
    Lexicographic {
        /// Truncation level `K`.
        levels: usize,
        /// Number of phases.
        phases: usize,
    },
}

impl std::fmt::Display for PartialOrder {
    /// The order's name (`componentwise`, `staircase`, `lexicographic`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PartialOrder::Componentwise => "componentwise",
            PartialOrder::Staircase { .. } => "staircase",
            PartialOrder::Lexicographic { .. } => "lexicographic",
        })
    }
}

/// A state with a name, e.g. the empty or the full state used as extremal starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NamedState {
    /// Short name (`empty`, `full`).
    pub name: String,
    /// The state, of length [`MeanFieldModel::dim`].
    pub x: Vec<f64>,
}

/// The callback of [`MeanFieldModel::transitions`]: `visit(jump, rate)` for each transition,
/// `jump` = `(state index, change in units of 1/N)` pairs, `rate` per object.
pub type TransitionVisitor<'a> = dyn FnMut(&[(usize, f64)], f64) + 'a;

/// A mean-field model `dx/dt = f(x)` on occupancy fractions.
///
/// Only [`name`](Self::name), [`dim`](Self::dim), [`drift`](Self::drift),
/// [`layout`](Self::layout) and [`observables`](Self::observables) need a model's own code.
/// Optional capabilities are `Option`-returning methods: an analytic Jacobian with its sparsity
/// ([`analytic_jacobian`](Self::analytic_jacobian), an [`AnalyticJacobian`]), the jumps and
/// rates ([`transitions`](Self::transitions), a [`Transitions`]), a monotone order, a
/// closed-form fixed point; the rest have defaults (empty/full extremal states, unknown
/// stability). On `dyn MeanFieldModel`, [`jacobian`](Self::jacobian) and
/// [`sparsity`](Self::sparsity) use the analytic Jacobian or finite differences.
pub trait MeanFieldModel: Send + Sync {
    /// Short identifier, e.g. `JSQ(2)`.
    fn name(&self) -> String;

    /// Number of state entries.
    fn dim(&self) -> usize;

    /// Writes the drift `f(x)` into `dx` (both of length [`dim`](Self::dim)). Must not allocate.
    fn drift(&self, x: &[f64], dx: &mut [f64]);

    /// The analytic Jacobian with its sparsity, when the model has one. Default `None`: the
    /// solvers use forward differences of the drift on a dense pattern
    /// ([`jacobian`](Self::jacobian) on `dyn MeanFieldModel`).
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        None
    }

    /// What `x[i]` means.
    fn layout(&self) -> StateLayout;

    /// Tails, mean queue length, mean response time and extras at the state `x`.
    fn observables(&self, x: &[f64]) -> Observables;

    /// An order in which the drift is cooperative, if the model claims one (checked
    /// numerically by the attraction checker, never trusted blindly).
    fn order(&self) -> Option<PartialOrder> {
        None
    }

    /// Extremal feasible states: the minimal and maximal ones of [`order`](Self::order).
    /// Default: `empty` (all zero) and `full` (all one).
    fn extremal_states(&self) -> Vec<NamedState> {
        vec![NamedState { name: "empty".into(), x: vec![0.0; self.dim()] }, NamedState { name: "full".into(), x: vec![1.0; self.dim()] }]
    }

    /// Maps a state back to the feasible set after a solver step (default: clamp every
    /// entry to `[0, 1]`).
    fn project(&self, x: &mut [f64]) {
        x.iter_mut().for_each(|v| *v = v.clamp(0.0, 1.0));
    }

    /// The linear conservation laws of the state (a generic model's `[[model.conservation]]`,
    /// each with its eliminated member): a start state must keep them
    /// ([`ConservationLaw::broken_by`]), and the `N`-object chain needs `N value` whole
    /// ([`off_lattice`]). Default: none (the built-in kinds' constraints are in their
    /// [`layout`](Self::layout)).
    fn conservation_laws(&self) -> Vec<ConservationLaw> {
        Vec::new()
    }

    /// The stability condition at the model's parameters.
    fn stability(&self) -> Stability {
        Stability::Unknown { note: "no stability condition is known for this model".into() }
    }

    /// A starting state for the fixed-point solvers when the caller gives none, for models
    /// whose empty state is far from the fixed point in Newton's sense (the pair and triplet
    /// approximations start from the independent closure of the mean-field fixed point).
    /// Default `None`: the solvers start from the empty state (all zero).
    fn start_state(&self) -> Option<Vec<f64>> {
        None
    }

    /// `Some(reason)` when [`drift`](Self::drift) is not the dynamics of the system but only a
    /// relaxation towards a stationary solution computed otherwise (e.g. by renewal
    /// equations): transients and attraction checks of such a model mean nothing, and the CLI
    /// refuses them with `reason`. Default `None`: the drift is the model's dynamics.
    fn dynamics_note(&self) -> Option<String> {
        None
    }

    /// The fixed point in closed form, when one exists (used by tests and as a cross-check).
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        None
    }

    /// Whether the drift is differentiable on the whole feasible set. Models with a sliding
    /// boundary (JIQ at `x_1 = 1`, pinned saturated classes) return `false`: their finite-N
    /// systems live on that boundary, so expansions in `1/N` around the fixed point (the
    /// refined mean field) do not apply. Default `true`.
    fn is_smooth(&self) -> bool {
        true
    }

    /// The model as a density-dependent population process (its jumps and rates), when it
    /// provides them: what the refined mean field, the noise matrix and the population
    /// simulator of `mfq-sim` need. Default `None`.
    fn transitions(&self) -> Option<&dyn Transitions> {
        None
    }
}

/// Optional capability of a [`MeanFieldModel`]: its analytic Jacobian and which entries of it
/// can be non-zero.
pub trait AnalyticJacobian {
    /// Which Jacobian entries can be non-zero (banded, sparse with an optional low-rank
    /// coupling, or dense).
    fn sparsity(&self) -> Sparsity;

    /// Writes the Jacobian `J[i][j] = d f_i / d x_j` at `x` (length `dim`) into `jac` (created
    /// with [`sparsity`](Self::sparsity)). Must not allocate.
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian);
}

/// Optional capability of a [`MeanFieldModel`]: the model as a density-dependent population
/// process (Kurtz 1970; Gast and Van Houdt, "A refined mean field approximation", SIGMETRICS
/// 2017, eq. (1)).
pub trait Transitions {
    /// Calls `visit(jump, rate)` for every transition at state `x`, where `jump` lists
    /// `(index, change)` of the state in units of `1/N` (one object changing) and `rate` is the
    /// rate per object, so that `f(x) = sum_l jump_l rate_l(x)`.
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>);

    /// The same transitions one at a time ([`IndexedTransitions`]), when the model can
    /// evaluate a single rate and say which state entries it reads (default: `None`; the
    /// generic models can). Simulators then re-evaluate only the rates an event changed.
    fn indexed(&self) -> Option<&dyn IndexedTransitions> {
        None
    }
}

/// Optional capability of a [`Transitions`]: the transitions numbered `0..count()`, each with
/// its jump, its rate alone and the state entries that rate depends on, so that a simulator
/// re-evaluates after an event only the rates that read an entry the event changed (the
/// dependency graph of Gibson and Bruck's next-reaction method, J. Phys. Chem. A 104(9), 2000).
/// The transitions and rates are those of [`Transitions::visit`], possibly in another order.
pub trait IndexedTransitions {
    /// Number of transitions.
    fn count(&self) -> usize;
    /// The jump of transition `l < count()`: `(state index, change in units of 1/N)` pairs.
    fn jump(&self, l: usize) -> &[(usize, f64)];
    /// The state indices the rate of transition `l` reads (sorted, without repeats): its rate
    /// changes only when one of them does.
    fn reads(&self, l: usize) -> &[usize];
    /// The rate per object of transition `l` at `x` (length `dim`), as `visit` gives it.
    /// Must not allocate.
    fn rate(&self, l: usize, x: &[f64]) -> f64;
    /// The rates per object of the transitions `ls` at `x` into `out` (the same length as
    /// `ls`), each as [`rate`](Self::rate) gives it, in one call (default: `rate` one at a
    /// time). Must not allocate.
    fn rates(&self, ls: &[usize], x: &[f64], out: &mut [f64]) {
        for (o, &l) in out.iter_mut().zip(ls) {
            *o = self.rate(l, x);
        }
    }
    /// Where transition `l` is declared, for messages (a generic model's
    /// `model.transitions[0] (infect) at k = 3`, with its rate expression in quotes); default
    /// `None`.
    fn label(&self, l: usize) -> Option<(String, String)> {
        let _ = l;
        None
    }
    /// The rate of transition `l` as a [`RateForm`], when it has that shape and the form gives
    /// [`rate`](Self::rate)'s value (default: `None`; simulators then call `rate`).
    fn form(&self, l: usize) -> Option<RateForm> {
        let _ = l;
        None
    }
}

/// A rate of the shape `((a + b (x_i x_i2)) - d (x_j x_j2)) (e x_k)`, evaluated in that order,
/// where an index `None` stands for the constant 1. It covers the common shapes of generic
/// models' rates with the same operations in the same order: a constant, `c x_i`, `c (x_i -
/// x_j)`, `c (a - x_j)`, `c ((a - x_i) - x_j)`, mass-action products `c x_i x_j`, `(a + b x_i)
/// x_j` and the difference of squares `c (x_i^2 - x_j^2)` of JSQ(2) (Mitzenmacher 2001, eq. (1);
/// `models/generic/jsq2.toml`) (a unit coefficient, a zero term or a factor of the constant 1 is
/// exact in floating point, so the value is that of the shape itself, up to the sign of a zero),
/// so that a simulator can evaluate every rate of a model by one branch-free formula.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateForm {
    /// The constant term `a`.
    pub a: f64,
    /// The coefficient `b` of `x_i`.
    pub b: f64,
    /// The index `i` (`None`: the constant 1).
    pub i: Option<usize>,
    /// The index `i2` of the second factor of `b`'s term (`None`: the constant 1).
    pub i2: Option<usize>,
    /// The coefficient `d` of the subtracted `x_j`.
    pub d: f64,
    /// The index `j` (`None`: the constant 1).
    pub j: Option<usize>,
    /// The index `j2` of the second factor of `d`'s term (`None`: the constant 1).
    pub j2: Option<usize>,
    /// The factor `e` of the multiplier `x_k`.
    pub e: f64,
    /// The index `k` (`None`: the constant 1).
    pub k: Option<usize>,
}

impl RateForm {
    /// The value at `x`: `((a + b (x_i x_i2)) - d (x_j x_j2)) (e x_k)`.
    pub fn eval(&self, x: &[f64]) -> f64 {
        let v = |i: Option<usize>| i.map_or(1.0, |i| x[i]);
        ((self.a + self.b * (v(self.i) * v(self.i2))) - self.d * (v(self.j) * v(self.j2))) * (self.e * v(self.k))
    }
}

impl dyn MeanFieldModel + '_ {
    /// Which Jacobian entries can be non-zero: the analytic Jacobian's pattern, or dense.
    pub fn sparsity(&self) -> Sparsity {
        self.analytic_jacobian().map_or(Sparsity::Dense, |j| j.sparsity())
    }

    /// Writes the Jacobian at `x` into `jac` (created with [`sparsity`](Self::sparsity)): the
    /// analytic one, or forward differences of the drift (which allocate their work buffers).
    pub fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        match self.analytic_jacobian() {
            Some(j) => j.jacobian(x, jac),
            None => {
                let mut work = Default::default();
                finite_difference_jacobian(&|x, dx| self.drift(x, dx), x, jac, &mut work);
            }
        }
    }

    /// Whether [`jacobian`](Self::jacobian) is analytic (for reports).
    pub fn has_analytic_jacobian(&self) -> bool {
        self.analytic_jacobian().is_some()
    }
}

/// The first sentence of [`ModelError::LeavesStateSpace`]'s message (callers that say which
/// job met it, such as the CLI, find it by this).
pub const LEAVES_STATE_SPACE: &str = "The model lets its population leave the state space.";

/// The message of [`ModelError::LeavesStateSpace`]: one sentence per transition, then what is
/// allowed, then where it was found.
fn leaving_message(transitions: &[(String, String)], found: &str) -> String {
    let mut out = String::from(LEAVES_STATE_SPACE);
    for (field, what) in transitions {
        out.push_str(&format!(" {field}: {what}."));
    }
    out.push_str(&format!(" Allowed: {OUTWARD_ALLOWED}."));
    out.push_str(&format!(" It was found {found}."));
    out
}

/// What is allowed instead of a transition that [`outward_transitions`] finds: the `allowed`
/// text of the error the fixed-point solve (`mfq_fixpoint`) and the front door's transient
/// (`mfq::leaving_state_space`) give for it.
pub const OUTWARD_ALLOWED: &str = "transitions whose rate is 0 wherever their jump would leave the state space (every entry in \
                                   [0, 1], conservation laws kept): a factor that vanishes at the face, e.g. (1 - X) for a jump X += 1";

/// The transitions that push the state `x` out of the state space: at a face where `x` sits
/// (an entry within `1e-9` of 0 or 1, or a conservation law's eliminated member within `1e-9`
/// of 0 or 1), a transition whose rate is above `1e-9` and whose jump points outward across
/// it. Each as `(field, text)`: the transition's declaration
/// ([`IndexedTransitions::label`]) and what it does there (`its rate "5" is 5.0000e0 > 0 at
/// X = 1, where its jump X += 1 would take X above 1`). Only models whose transitions have labels (generic ones); at most
/// `max` of them. A diagnostic for a failed fixed-point solve: a valid model has no such
/// transition at any state its dynamics reach (its finite-N chain would leave `[0, 1]`).
pub fn outward_transitions(model: &dyn MeanFieldModel, x: &[f64], max: usize) -> Vec<(String, String)> {
    const FACE: f64 = 1e-9;
    const RATE: f64 = 1e-9;
    let Some(t) = model.transitions().and_then(|t| t.indexed()) else {
        return Vec::new();
    };
    if x.len() != model.dim() || x.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let layout = model.layout();
    let laws = model.conservation_laws();
    let mut out = Vec::new();
    for l in 0..t.count() {
        if out.len() >= max {
            break;
        }
        let Some((field, rate_text)) = t.label(l) else {
            continue;
        };
        let rate = t.rate(l, x);
        // a NaN rate is no evidence either
        if rate.is_nan() || rate <= RATE {
            continue;
        }
        let jump = t.jump(l);
        let mut leaves = None;
        for &(i, c) in jump {
            let name = layout.name(i);
            if x[i] <= FACE && c < 0.0 {
                leaves = Some(format!("at {name} = {}, where its jump {name} -= {} would take {name} below 0", x[i], -c));
            } else if x[i] >= 1.0 - FACE && c > 0.0 {
                leaves = Some(format!("at {name} = {}, where its jump {name} += {c} would take {name} above 1", x[i]));
            }
            if leaves.is_some() {
                break;
            }
        }
        if leaves.is_none() {
            for law in &laws {
                let Some(elim) = &law.eliminated else { continue };
                let e = law.value - law.kept.iter().map(|&i| x[i]).sum::<f64>();
                let c: f64 = -jump.iter().filter(|(i, _)| law.kept.contains(i)).map(|(_, c)| c).sum::<f64>();
                if e <= FACE && c < 0.0 {
                    leaves = Some(format!(
                        "at {elim} = {e:.3e} ({elim} = {} - {}), where its jump {elim} -= {} would take {elim} below 0",
                        law.value, law.kept_names, -c
                    ));
                } else if e >= 1.0 - FACE && c > 0.0 {
                    leaves = Some(format!(
                        "at {elim} = {e} ({elim} = {} - {}), where its jump {elim} += {c} would take {elim} above 1",
                        law.value, law.kept_names
                    ));
                }
                if leaves.is_some() {
                    break;
                }
            }
        }
        if let Some(how) = leaves {
            out.push((field, format!("its rate {rate_text} is {rate:.4e} > 0 {how}")));
        }
    }
    out
}
