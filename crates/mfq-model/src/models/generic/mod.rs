//! User-defined models from a file: a density-dependent population process given by its
//! transitions (a jump and a rate expression each), compiled once into vectorised programs.
//!
//! A generic model is what rmf_tool calls a DDPP (Gast and Van Houdt, "A refined mean field
//! approximation", POMACS 1(2), 2017, eq. (1)): for a system of `N` objects the state `x`
//! (fractions) jumps to `x + l/N` at rate `N beta_l(x)` for every transition `l`, so that the
//! mean-field drift is
//!
//! ```text
//! dx/dt = f(x) = sum_l l beta_l(x).
//! ```
//!
//! The model file declares parameters, state variables (scalars and indexed families
//! `x[k]`, with boundary values such as `x[0] = 1`), transitions (a sparse jump and a rate
//! expression, optionally for every `k` of a range), conservation laws and observables:
//!
//! ```toml
//! [model]
//! kind = "generic"
//! name = "JSQ(2)"
//! levels = "K"                       # K is the truncation level (tail-form state)
//!
//! [model.parameters]
//! lambda = 0.9
//! K = 20
//!
//! [[model.families]]
//! name = "x"                         # x[k] = fraction of servers with at least k jobs
//! range = "1..K"
//! tail = true
//! boundary = { "x[0]" = 1, "x[K+1]" = 0 }
//!
//! [[model.transitions]]
//! for = "k = 1..K"
//! jump = { "x[k]" = 1 }
//! rate = "lambda * (x[k-1]^2 - x[k]^2)"
//!
//! [[model.transitions]]
//! for = "k = 1..K"
//! jump = { "x[k]" = -1 }
//! rate = "x[k] - x[k+1]"
//!
//! [model.observables]
//! arrival_rate = "lambda"
//! loss = "x[K]^2"
//! ```
//!
//! Every key, the expression grammar and the validation rules are in docs/models/generic.md.
//!
//! # Method
//!
//! - **Parsing**: `winnow` (a Pratt parser for the operators), once per expression.
//! - **Resolution**: parameters become constants, `for` ranges and `sum(k = a..b, ...)` are
//!   unrolled, `x[k-1]` becomes a state slot or a boundary constant; errors name the key, the
//!   column and the index values.
//! - **Derivatives**: symbolic differentiation of the resolved expression trees, simplified by
//!   constant folding (`min`/`max`/`abs` piecewise); the Jacobian is exact, with the sparsity
//!   read off the transitions (`J_ij != 0` only if a transition that moves `x_i` has a rate
//!   that reads `x_j`): banded when the band is narrow, a sparse pattern when the state is
//!   large, dense otherwise.
//! - **Evaluation**: rate expressions (and derivatives) of the same shape, e.g. the `K`
//!   instances of a `for` transition, run as one vectorised register program (see
//!   `program.rs`); the drift scatters `jump * rate` into `dx`. No allocation per call.
//! - **Conservation laws** `sum_m x_m = c` eliminate one variable each (default the last of
//!   the sum), so that the Jacobian of the reduced state is not singular; the eliminated
//!   variables are reported among the observables' extras.
//!
//! # Modules
//!
//! - `parse`: the model file's keys ([`GenericSpec`] and its parts).
//! - `resolve`: names, elements and expressions in the parameters, indices and state.
//! - `validate`: the checks of names, parameters, ranges, laws, jumps and rates, and the
//!   shape of their messages.
//! - `compile`: [`GenericModel::new`]: declarations, conservation laws, transitions,
//!   programs, sparsity, layout, observables, initial state.
//! - `model`: the compiled [`GenericModel`] and its [`MeanFieldModel`](crate::MeanFieldModel)
//!   implementation.
//! - `expr` (the parser), `node` (resolved expression trees, derivatives), `program`
//!   (vectorised evaluation).

mod compile;
mod expr;
mod flat;
mod kind;
mod model;
mod node;
mod parse;
mod program;
mod resolve;
mod validate;

pub use self::compile::Limits;
pub use self::expr::{column, parse_bindings, parse_expr, parse_range, RangeExpr, SyntaxError};
pub use self::kind::GENERIC;
pub use self::model::GenericModel;
pub use self::parse::{ConservationSpec, FamilySpec, GenericSpec, ObservablesSpec, OrderSpec, TransitionSpec, Value};
pub use self::validate::VALIDATION_SAMPLES;
