//! The model file's `[model]` table of `kind = "generic"`: the serde types of every key
//! (docs/models/generic.md) and what a spec answers before it is compiled.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::resolve::Resolver;
use super::GenericModel;
use crate::ModelError;

/// A number, or an expression (a string) in the parameters and the indices in scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A number.
    Number(f64),
    /// An expression, e.g. `"lambda * (x[k-1]^2 - x[k]^2)"`.
    Expr(String),
}

impl Value {
    pub(super) fn source(&self) -> String {
        match self {
            Value::Number(v) => format!("{v}"),
            Value::Expr(s) => s.clone(),
        }
    }
}

/// An indexed family of state variables `name[k]`, `k` in `range`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilySpec {
    /// The family's name, e.g. `x`.
    pub name: String,
    /// Inclusive index range `a..b` in the parameters, e.g. `"1..K"`.
    pub range: String,
    /// Whether the family is a queue-length tail (`x[k]` = fraction of servers with at least
    /// `k` jobs): non-increasing in `k` at feasible states.
    #[serde(default)]
    pub tail: bool,
    /// Values of elements outside the range, e.g. `{ "x[0]" = 1, "x[K+1]" = 0 }`.
    #[serde(default)]
    pub boundary: BTreeMap<String, Value>,
}

/// A transition: the state jumps by `jump / N` at rate `N rate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransitionSpec {
    /// Optional label used in messages.
    #[serde(default)]
    pub name: Option<String>,
    /// Index ranges, e.g. `"k = 1..K"` or `"j = 1..2, k = 1..K"`: one transition per value.
    #[serde(default, rename = "for")]
    pub for_each: Option<String>,
    /// Which variables change and by how much (in units of `1/N`), e.g. `{ "x[k]" = 1 }`.
    pub jump: BTreeMap<String, Value>,
    /// The rate per object, an expression in the parameters, indices and state.
    pub rate: Value,
}

/// A conservation law `sum of the listed variables = value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConservationSpec {
    /// The variables summed: scalars, elements `x[3]`, or a whole family `x`.
    pub sum: Vec<String>,
    /// The conserved value (number or expression in the parameters).
    pub value: Value,
    /// The variable computed from the others (default: the last one of `sum`).
    #[serde(default)]
    pub eliminate: Option<String>,
}

/// What the observables report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObservablesSpec {
    /// The family holding the queue-length tail `P(Q >= k)` (default: the only family with
    /// `tail = true`, if exactly one); it must start at index 1.
    #[serde(default)]
    pub tail: Option<String>,
    /// Arrival rate per server, for the throughput and Little's law `T = L / throughput`.
    #[serde(default)]
    pub arrival_rate: Option<Value>,
    /// Probability that an arrival is lost (default 0), an expression in the state.
    #[serde(default)]
    pub loss: Option<Value>,
    /// Probability that an arrival waits, an expression in the state.
    #[serde(default)]
    pub prob_wait: Option<Value>,
    /// Named expressions reported as extras.
    #[serde(default)]
    pub extras: BTreeMap<String, Value>,
}

/// A partial order the model claims to be cooperative in (checked by the attraction checker).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OrderSpec {
    /// `x <= y` iff `x_i <= y_i` for every entry.
    Componentwise,
}

/// `kind = "generic"`: a model given by its transitions. See the module docs and
/// docs/models/generic.md for every key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenericSpec {
    /// Name used in reports (default `generic`).
    #[serde(default)]
    pub name: Option<String>,
    /// Parameters: name and value (`--set NAME=VALUE` changes them).
    #[serde(default)]
    pub parameters: BTreeMap<String, f64>,
    /// The parameter that is the truncation level of a tail-form state (the automatic
    /// truncation and `truncation.levels` set it); allowed when the state is one tail family
    /// `x[1..P]`.
    #[serde(default)]
    pub levels: Option<String>,
    /// Scalar state variables.
    #[serde(default)]
    pub variables: Vec<String>,
    /// Indexed families of state variables.
    #[serde(default)]
    pub families: Vec<FamilySpec>,
    /// The transitions.
    #[serde(default)]
    pub transitions: Vec<TransitionSpec>,
    /// Conservation laws.
    #[serde(default)]
    pub conservation: Vec<ConservationSpec>,
    /// An initial state (unlisted variables are 0), e.g. `{ S = 0.99, I = 0.01 }`.
    #[serde(default)]
    pub initial: BTreeMap<String, f64>,
    /// Observables.
    #[serde(default)]
    pub observables: ObservablesSpec,
    /// A claimed cooperative order.
    #[serde(default)]
    pub order: Option<OrderSpec>,
}

impl GenericSpec {
    /// The arrival rate per server (`observables.arrival_rate`), when given and computable
    /// from the parameters.
    pub fn lambda(&self) -> Option<f64> {
        let v = self.observables.arrival_rate.as_ref()?;
        let r = Resolver::parameters_only(self).ok()?;
        r.constant(v, "model.observables.arrival_rate", &mut Vec::new()).ok()
    }

    /// The first truncation level of the automatic growth: the value of the `levels`
    /// parameter, else the model's dimension (the state size is then fixed).
    pub fn initial_levels(&self) -> usize {
        match &self.levels {
            Some(p) => self.parameters.get(p).filter(|v| v.is_finite() && **v >= 2.0 && **v <= 1e7).map_or(16, |v| *v as usize),
            None => super::compile::dimension(self, None).map_or(16, |d| d.max(1)),
        }
    }

    /// The model, with the `levels` parameter (if declared) set to `levels`.
    ///
    /// # Errors
    /// See [`GenericModel::new`].
    pub fn build(&self, levels: usize) -> Result<GenericModel, ModelError> {
        GenericModel::new(self, Some(levels))
    }
}
