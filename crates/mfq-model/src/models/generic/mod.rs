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

mod expr;
mod kind;
mod node;
mod program;

use crate::{AnalyticJacobian, TransitionVisitor, Transitions};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use self::expr::{Expr, Kind};
use self::node::{Fun, Node};
use self::program::{with_scratch, Block, CHUNK};
use crate::{
    out_of_range, Jacobian, MeanFieldModel, ModelError, NamedState, Observables, PartialOrder, Sparsity, SparsityPattern, Stability,
    StateLayout,
};

pub use self::expr::{column, parse_bindings, parse_expr, parse_range, RangeExpr, SyntaxError};
pub use self::kind::GENERIC;

/// Size limits of a generic model, checked while it is compiled (so that a file asking for
/// too much fails with a message instead of exhausting memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest number of state variables (scalars plus family elements), default 2,000,000.
    pub max_state: usize,
    /// Largest number of transitions after unrolling `for` (counting zero-rate ones),
    /// default 4,000,000.
    pub max_transitions: usize,
    /// Largest number of resolved expression nodes (rates, unrolled sums and their
    /// derivatives), default 40,000,000 (about 2 GB).
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_state: 2_000_000, max_transitions: 4_000_000, max_nodes: 40_000_000 }
    }
}
/// Random feasible states at which the rates are checked to be `>= 0` and finite.
pub const VALIDATION_SAMPLES: usize = 32;

const FUNCTIONS: [&str; 7] = ["exp", "log", "sqrt", "abs", "min", "max", "sum"];

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
    fn source(&self) -> String {
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
            None => GenericModel::new(self, None).map_or(16, |m| m.dim().max(1)),
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

// ---------------------------------------------------------------------------------------
// resolution: names, elements, expressions

fn format_err(key: &str, src: &str, msg: impl std::fmt::Display) -> ModelError {
    ModelError::Format(format!("{key} = \"{src}\": {msg}"))
}

fn at_col(key: &str, src: &str, offset: usize, msg: impl std::fmt::Display) -> ModelError {
    format_err(key, src, format!("{msg} (column {})", column(src, offset)))
}

fn syntax(key: &str, src: &str, e: SyntaxError) -> ModelError {
    at_col(key, src, e.offset, e.message)
}

fn scope_text(scope: &[(String, i64)]) -> String {
    if scope.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = scope.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        format!(" at {}", parts.join(", "))
    }
}

#[derive(Debug, Clone)]
struct Family {
    name: String,
    first: i64,
    last: i64,
    /// Element id of `name[first]`.
    base: usize,
    boundary: HashMap<i64, f64>,
    tail: bool,
}

/// Where a reference to a variable lands.
enum Target {
    /// A state element (scalar or family element), by element id.
    Element(usize),
    /// A boundary value.
    Boundary(f64),
}

struct Resolver {
    params: Vec<(String, f64)>,
    param_ix: HashMap<String, usize>,
    scalar_ix: HashMap<String, usize>,
    families: Vec<Family>,
    family_ix: HashMap<String, usize>,
    /// Expression of each element in the state slots (a `Var`, or the elimination formula).
    subst: Vec<Node>,
    /// Display name of each element.
    element_names: Vec<String>,
    /// Expression nodes still allowed.
    budget: std::cell::Cell<usize>,
    max_nodes: usize,
}

impl Resolver {
    fn parameters_only(spec: &GenericSpec) -> Result<Resolver, ModelError> {
        let mut r = Resolver {
            params: Vec::new(),
            param_ix: HashMap::new(),
            scalar_ix: HashMap::new(),
            families: Vec::new(),
            family_ix: HashMap::new(),
            subst: Vec::new(),
            element_names: Vec::new(),
            budget: std::cell::Cell::new(Limits::default().max_nodes),
            max_nodes: Limits::default().max_nodes,
        };
        for (name, v) in &spec.parameters {
            let key = format!("model.parameters.{name}");
            check_name(&key, name)?;
            if !v.is_finite() {
                return Err(out_of_range(&key, v, "a finite number"));
            }
            r.param_ix.insert(name.clone(), r.params.len());
            r.params.push((name.clone(), *v));
        }
        Ok(r)
    }

    fn known_names(&self, scope: &[(String, i64)]) -> String {
        let mut parts = Vec::new();
        if !self.params.is_empty() {
            parts.push(format!("parameters {}", self.params.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")));
        }
        let mut scalars: Vec<(&String, &usize)> = self.scalar_ix.iter().collect();
        scalars.sort_by_key(|(_, i)| **i);
        if !scalars.is_empty() {
            parts.push(format!("variables {}", scalars.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")));
        }
        if !self.families.is_empty() {
            let f: Vec<String> = self.families.iter().map(|f| format!("{}[{}..{}]", f.name, f.first, f.last)).collect();
            parts.push(format!("families {}", f.join(", ")));
        }
        if !scope.is_empty() {
            parts.push(format!("indices {}", scope.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")));
        }
        if parts.is_empty() {
            "nothing is defined".into()
        } else {
            parts.join("; ")
        }
    }

    fn is_defined(&self, name: &str) -> bool {
        self.param_ix.contains_key(name) || self.scalar_ix.contains_key(name) || self.family_ix.contains_key(name)
    }

    /// An integer from an index expression.
    fn integer(&self, e: &Expr, src: &str, key: &str, scope: &mut Vec<(String, i64)>) -> Result<i64, ModelError> {
        let n = self.resolve(e, src, key, scope)?;
        match n.as_const() {
            Some(v) if v.is_finite() && (v - v.round()).abs() <= 1e-9 && v.abs() <= 1e12 => Ok(v.round() as i64),
            Some(v) => Err(at_col(key, src, e.span.start, format!("the index {v}{} is not an integer", scope_text(scope)))),
            None => Err(at_col(key, src, e.span.start, "an index must not depend on the state (only on parameters and indices)")),
        }
    }

    /// A constant (in parameters and indices) from a value.
    fn constant(&self, v: &Value, key: &str, scope: &mut Vec<(String, i64)>) -> Result<f64, ModelError> {
        match v {
            Value::Number(x) => Ok(*x),
            Value::Expr(src) => {
                let e = parse_expr(src).map_err(|e| syntax(key, src, e))?;
                let n = self.resolve(&e, src, key, scope)?;
                n.as_const().ok_or_else(|| format_err(key, src, "must not depend on the state (only on parameters and indices)"))
            }
        }
    }

    /// Where `name` or `name[idx]` points.
    fn target(&self, e: &Expr, src: &str, key: &str, scope: &mut Vec<(String, i64)>) -> Result<Target, ModelError> {
        match &e.kind {
            Kind::Name(n) => {
                if let Some(&i) = self.scalar_ix.get(n) {
                    return Ok(Target::Element(i));
                }
                if self.family_ix.contains_key(n) {
                    return Err(at_col(key, src, e.span.start, format!("'{n}' is a family: write {n}[k]")));
                }
                Err(at_col(key, src, e.span.start, format!("'{n}' is not a state variable; known: {}", self.known_names(scope))))
            }
            Kind::Index(n, idx) => {
                let Some(&fi) = self.family_ix.get(n) else {
                    let what = if self.is_defined(n) { "is not a family" } else { "is unknown" };
                    return Err(at_col(key, src, e.span.start, format!("'{n}' {what}; known: {}", self.known_names(scope))));
                };
                let k = self.integer(idx, src, key, scope)?;
                let f = &self.families[fi];
                if (f.first..=f.last).contains(&k) {
                    Ok(Target::Element(f.base + (k - f.first) as usize))
                } else if let Some(v) = f.boundary.get(&k) {
                    Ok(Target::Boundary(*v))
                } else {
                    Err(at_col(
                        key,
                        src,
                        e.span.start,
                        format!(
                            "{n}[{k}]{} is outside the family {n}[{}..{}] and has no boundary value",
                            scope_text(scope),
                            f.first,
                            f.last
                        ),
                    ))
                }
            }
            _ => Err(at_col(key, src, e.span.start, "expected a variable: a name or name[index]")),
        }
    }

    fn too_large(&self) -> ModelError {
        out_of_range(
            "model",
            "a model",
            &format!("at most {} expression nodes (rates, unrolled sums and their derivatives); see Limits", self.max_nodes),
        )
    }

    /// Takes `n` nodes from the budget.
    fn charge(&self, n: usize) -> Result<(), ModelError> {
        match self.budget.get().checked_sub(n) {
            Some(left) => {
                self.budget.set(left);
                Ok(())
            }
            None => Err(self.too_large()),
        }
    }

    fn resolve(&self, e: &Expr, src: &str, key: &str, scope: &mut Vec<(String, i64)>) -> Result<Node, ModelError> {
        self.charge(1)?;
        let err = |msg: String| at_col(key, src, e.span.start, msg);
        Ok(match &e.kind {
            Kind::Num(v) => Node::Const(*v),
            Kind::Name(n) => {
                if let Some((_, v)) = scope.iter().rev().find(|(s, _)| s == n) {
                    Node::Const(*v as f64)
                } else if let Some(&i) = self.param_ix.get(n) {
                    Node::Const(self.params[i].1)
                } else {
                    match self.target(e, src, key, scope)? {
                        Target::Element(i) => self.subst[i].clone(),
                        Target::Boundary(v) => Node::Const(v),
                    }
                }
            }
            Kind::Index(..) => match self.target(e, src, key, scope)? {
                Target::Element(i) => self.subst[i].clone(),
                Target::Boundary(v) => Node::Const(v),
            },
            Kind::Neg(a) => node::neg(self.resolve(a, src, key, scope)?),
            Kind::Sum(terms) => {
                let mut out = Vec::with_capacity(terms.len());
                for (minus, t) in terms {
                    let n = self.resolve(t, src, key, scope)?;
                    out.push(if *minus { node::neg(n) } else { n });
                }
                node::add(out)
            }
            Kind::Product(f) => node::mul(f.iter().map(|f| self.resolve(f, src, key, scope)).collect::<Result<_, _>>()?),
            Kind::Div(a, b) => node::div(self.resolve(a, src, key, scope)?, self.resolve(b, src, key, scope)?),
            Kind::Pow(a, b) => node::pow(self.resolve(a, src, key, scope)?, self.resolve(b, src, key, scope)?),
            Kind::Call(name, args) => {
                let one = |f: Fun| -> Result<Node, ModelError> {
                    if args.len() != 1 {
                        return Err(err(format!("{name}() takes one argument, got {}", args.len())));
                    }
                    Ok(node::fun(f, self.resolve(&args[0], src, key, &mut scope.clone())?))
                };
                match name.as_str() {
                    "exp" => one(Fun::Exp)?,
                    "log" => one(Fun::Log)?,
                    "sqrt" => one(Fun::Sqrt)?,
                    "abs" => one(Fun::Abs)?,
                    "min" | "max" => {
                        if args.len() < 2 {
                            return Err(err(format!("{name}() takes at least two arguments, got {}", args.len())));
                        }
                        let mut acc = self.resolve(&args[0], src, key, scope)?;
                        for a in &args[1..] {
                            let b = self.resolve(a, src, key, scope)?;
                            acc = if name == "min" { node::min(acc, b) } else { node::max(acc, b) };
                        }
                        acc
                    }
                    other => {
                        return Err(err(format!("unknown function '{other}'; allowed: exp, log, sqrt, abs, min, max, sum(k = a..b, expr)")))
                    }
                }
            }
            Kind::SumOver { index, from, to, body } => {
                if self.is_defined(index) || scope.iter().any(|(s, _)| s == index) || FUNCTIONS.contains(&index.as_str()) {
                    return Err(err(format!("the sum index '{index}' is already a name in use")));
                }
                let a = self.integer(from, src, key, scope)?;
                let b = self.integer(to, src, key, scope)?;
                let count = (b - a + 1).max(0) as usize;
                if count > self.budget.get() {
                    return Err(self.too_large());
                }
                let mut terms = Vec::with_capacity(count);
                for k in a..=b {
                    scope.push((index.clone(), k));
                    let t = self.resolve(body, src, key, scope);
                    scope.pop();
                    terms.push(t?);
                }
                node::add(terms)
            }
        })
    }
}

fn check_name(key: &str, name: &str) -> Result<(), ModelError> {
    if !expr::is_name(name) {
        return Err(out_of_range(key, format!("\"{name}\""), "a name: a letter or '_', then letters, digits or '_'"));
    }
    if FUNCTIONS.contains(&name) {
        return Err(out_of_range(key, format!("\"{name}\""), "a name that is not a function (exp, log, sqrt, abs, min, max, sum)"));
    }
    Ok(())
}

/// Called once per combination of index values (the scope).
type InstanceFn<'a> = dyn FnMut(&mut Vec<(String, i64)>) -> Result<(), ModelError> + 'a;

/// Calls `f` for every combination of the `for` bindings (nested, in order).
fn for_each_binding(
    r: &Resolver,
    bindings: &[RangeExpr],
    src: &str,
    key: &str,
    scope: &mut Vec<(String, i64)>,
    iterations: &mut usize,
    f: &mut InstanceFn<'_>,
) -> Result<(), ModelError> {
    let Some((b, rest)) = bindings.split_first() else {
        return f(scope);
    };
    let (name, span) = b.index.clone().expect("bindings have names");
    if r.is_defined(&name) || scope.iter().any(|(s, _)| *s == name) || FUNCTIONS.contains(&name.as_str()) {
        return Err(at_col(key, src, span.start, format!("the index '{name}' is already a name in use")));
    }
    let a = r.integer(&b.from, src, key, scope)?;
    let z = r.integer(&b.to, src, key, scope)?;
    for k in a..=z {
        if *iterations == 0 {
            return Err(ModelError::Format(format!("{key}: more transitions after unrolling than allowed (see Limits)")));
        }
        *iterations -= 1;
        scope.push((name.clone(), k));
        let res = for_each_binding(r, rest, src, key, scope, iterations, f);
        scope.pop();
        res?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// the model

/// A model given by its transitions in a model file (`kind = "generic"`), compiled.
///
/// State: the scalar variables in declared order, then each family `x[a..b]` in order,
/// without the variables eliminated by conservation laws (see [`GenericModel::state_names`]).
/// Drift `f(x) = sum_l l beta_l(x)`; the Jacobian is the symbolic derivative (exact), with
/// the sparsity of the transitions. See the module docs and docs/models/generic.md.
///
/// Source: the density-dependent population processes of Kurtz ("Solutions of ordinary
/// differential equations as limits of pure jump Markov processes", J. Appl. Prob. 7(1), 1970)
/// in the form of rmf_tool's DDPP class (Gast, Allmeier, Van Houdt).
///
/// ```
/// use mfq_model::{MeanFieldModel, ModelFile};
/// let text = r#"
/// [model]
/// kind = "generic"
/// variables = ["S", "I"]
/// [model.parameters]
/// beta = 2.0
/// [[model.transitions]]
/// jump = { S = -1, I = 1 }
/// rate = "(0.1 + beta * I) * S"
/// [[model.transitions]]
/// jump = { S = 1, I = -1 }
/// rate = "I"
/// "#;
/// let file = ModelFile::parse(text, &[]).unwrap();
/// let m = file.model.build(1).unwrap();
/// let mut dx = [0.0; 2];
/// m.drift(&[0.5, 0.5], &mut dx);
/// assert!((dx[0] - (-(0.1 + 1.0) * 0.5 + 0.5)).abs() < 1e-15);
/// ```
#[derive(Debug, Clone)]
pub struct GenericModel {
    name: String,
    names: Vec<String>,
    layout: StateLayout,
    params: Vec<(String, f64)>,
    /// Jumps of every transition instance: `jumps[jump_ptr[i]..jump_ptr[i + 1]]`.
    jumps: Vec<(usize, f64)>,
    jump_ptr: Vec<usize>,
    drift_blocks: Vec<Block>,
    /// `(instance, column)` of each Jacobian item.
    jac_items: Vec<(u32, u32)>,
    jac_blocks: Vec<Block>,
    sparsity: Sparsity,
    scratch: usize,
    observe: Observe,
    laws: Vec<Law>,
    initial: Option<Vec<f64>>,
    order: Option<PartialOrder>,
}

#[derive(Debug, Clone)]
struct Law {
    /// Slots of the kept members.
    kept: Vec<usize>,
    value: f64,
}

#[derive(Debug, Clone)]
struct Observe {
    tail: Option<Vec<Node>>,
    arrival_rate: Option<f64>,
    loss: Option<Node>,
    prob_wait: Option<Node>,
    extras: Vec<(String, Node)>,
}

/// A tiny deterministic generator (SplitMix64) for the validation samples.
struct SplitMix(u64);

impl SplitMix {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        // in (0, 1)
        ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

impl GenericModel {
    /// Compiles a generic model. With `levels = Some(K)` and a `levels` parameter declared in
    /// the spec, that parameter is set to `K` first.
    ///
    /// # Errors
    /// [`ModelError::Format`] naming the key, the column and the index values for: a syntax
    /// error; an unknown name; an index outside a family without a boundary value; a jump
    /// outside the state; a jump that breaks a declared conservation law; a rate that is
    /// negative or not finite at a sampled feasible state (or a negative constant rate).
    /// [`ModelError::OutOfRange`] for a bad parameter value, name or family size.
    pub fn new(spec: &GenericSpec, levels: Option<usize>) -> Result<Self, ModelError> {
        Self::with_limits(spec, levels, Limits::default())
    }

    /// [`new`](Self::new) with other size limits (e.g. small ones for untrusted files).
    ///
    /// # Errors
    /// As [`new`](Self::new); [`ModelError::OutOfRange`] naming `model` when a limit is exceeded.
    pub fn with_limits(spec: &GenericSpec, levels: Option<usize>, limits: Limits) -> Result<Self, ModelError> {
        let mut r = Resolver::parameters_only(spec)?;
        r.budget.set(limits.max_nodes);
        r.max_nodes = limits.max_nodes;
        let mut iterations = limits.max_transitions;
        // the truncation-level parameter
        if let Some(p) = &spec.levels {
            let Some(&i) = r.param_ix.get(p) else {
                return Err(out_of_range("model.levels", format!("\"{p}\""), "the name of a parameter (the truncation level K)"));
            };
            if let Some(k) = levels {
                r.params[i].1 = k as f64;
            }
        }
        // scalar variables
        for (i, name) in spec.variables.iter().enumerate() {
            let key = format!("model.variables[{i}]");
            check_name(&key, name)?;
            if r.is_defined(name) {
                return Err(out_of_range(&key, format!("\"{name}\""), "a name not used by another parameter or variable"));
            }
            r.scalar_ix.insert(name.clone(), r.element_names.len());
            r.element_names.push(name.clone());
        }
        // families
        for (fi, f) in spec.families.iter().enumerate() {
            let key = format!("model.families[{fi}]");
            check_name(&format!("{key}.name"), &f.name)?;
            if r.is_defined(&f.name) {
                return Err(out_of_range(
                    &format!("{key}.name"),
                    format!("\"{}\"", f.name),
                    "a name not used by another parameter or variable",
                ));
            }
            let rkey = format!("{key}.range");
            let range = parse_range(&f.range).map_err(|e| syntax(&rkey, &f.range, e))?;
            let first = r.integer(&range.from, &f.range, &rkey, &mut Vec::new())?;
            let last = r.integer(&range.to, &f.range, &rkey, &mut Vec::new())?;
            let size = last - first + 1;
            let room = limits.max_state.saturating_sub(r.element_names.len()) as i64;
            if !(1..=room).contains(&size) {
                return Err(out_of_range(
                    &rkey,
                    format!("\"{}\" = {first}..{last}", f.range),
                    &format!("a range a..b with b >= a, at most {} state variables in all (see Limits)", limits.max_state),
                ));
            }
            let base = r.element_names.len();
            r.element_names.extend((first..=last).map(|k| format!("{}[{k}]", f.name)));
            r.family_ix.insert(f.name.clone(), r.families.len());
            r.families.push(Family { name: f.name.clone(), first, last, base, boundary: HashMap::new(), tail: f.tail });
            // boundary values
            let mut boundary = HashMap::new();
            for (k, v) in &f.boundary {
                let bkey = format!("{key}.boundary");
                let e = parse_expr(k).map_err(|e| syntax(&bkey, k, e))?;
                let Kind::Index(n, idx) = &e.kind else {
                    return Err(format_err(&bkey, k, format!("expected an element {}[index]", f.name)));
                };
                if *n != f.name {
                    return Err(format_err(&bkey, k, format!("names family '{n}', not '{}'", f.name)));
                }
                let i = r.integer(idx, k, &bkey, &mut Vec::new())?;
                if (first..=last).contains(&i) {
                    return Err(format_err(
                        &bkey,
                        k,
                        format!("{}[{i}] is a state variable (inside {first}..{last}), not a boundary value", f.name),
                    ));
                }
                let value = r.constant(v, &format!("{bkey}.\"{k}\""), &mut Vec::new())?;
                boundary.insert(i, value);
            }
            r.families.last_mut().expect("just pushed").boundary = boundary;
        }
        let n_elements = r.element_names.len();
        if n_elements == 0 {
            return Err(ModelError::Format("model: a generic model needs state variables (model.variables or model.families)".into()));
        }
        // conservation laws: members, eliminated element
        let mut member_lists: Vec<(Vec<usize>, usize, f64)> = Vec::new();
        let mut eliminated_by: Vec<Option<usize>> = vec![None; n_elements];
        for (li, law) in spec.conservation.iter().enumerate() {
            let key = format!("model.conservation[{li}]");
            let mut members = Vec::new();
            for m in &law.sum {
                let skey = format!("{key}.sum");
                let e = parse_expr(m).map_err(|e| syntax(&skey, m, e))?;
                match &e.kind {
                    Kind::Name(n) if r.family_ix.contains_key(n) => {
                        let f = &r.families[r.family_ix[n]];
                        members.extend(f.base..f.base + (f.last - f.first + 1) as usize);
                    }
                    _ => match r.target(&e, m, &skey, &mut Vec::new())? {
                        Target::Element(i) => members.push(i),
                        Target::Boundary(_) => return Err(format_err(&skey, m, "is a boundary value, not a state variable")),
                    },
                }
            }
            let mut sorted = members.clone();
            sorted.sort_unstable();
            if sorted.windows(2).any(|w| w[0] == w[1]) || members.is_empty() {
                return Err(out_of_range(&format!("{key}.sum"), format!("{:?}", law.sum), "a non-empty list of distinct state variables"));
            }
            let value = r.constant(&law.value, &format!("{key}.value"), &mut Vec::new())?;
            let elim = match &law.eliminate {
                None => *members.last().expect("non-empty"),
                Some(s) => {
                    let ekey = format!("{key}.eliminate");
                    let e = parse_expr(s).map_err(|e| syntax(&ekey, s, e))?;
                    match r.target(&e, s, &ekey, &mut Vec::new())? {
                        Target::Element(i) if members.contains(&i) => i,
                        _ => return Err(out_of_range(&ekey, format!("\"{s}\""), "one of the variables of the sum")),
                    }
                }
            };
            if eliminated_by[elim].is_some() {
                return Err(out_of_range(&format!("{key}.eliminate"), &r.element_names[elim], "a variable not eliminated by another law"));
            }
            eliminated_by[elim] = Some(li);
            member_lists.push((members, elim, value));
        }
        // an eliminated variable appears in its own law only
        for (li, (members, _, _)) in member_lists.iter().enumerate() {
            for &m in members {
                if let Some(other) = eliminated_by[m] {
                    if other != li {
                        return Err(ModelError::Format(format!(
                            "model.conservation[{li}].sum: {} is eliminated by model.conservation[{other}]; allowed: an eliminated variable appears in one law only (set eliminate = ...)",
                            r.element_names[m]
                        )));
                    }
                }
            }
        }
        // slots
        let mut slot_of: Vec<Option<usize>> = vec![None; n_elements];
        let mut names = Vec::new();
        for e in 0..n_elements {
            if eliminated_by[e].is_none() {
                slot_of[e] = Some(names.len());
                names.push(r.element_names[e].clone());
            }
        }
        let dim = names.len();
        if dim == 0 {
            return Err(ModelError::Format(
                "model.conservation: every state variable is eliminated; allowed: laws that leave at least one variable".into(),
            ));
        }
        r.subst = (0..n_elements).map(|e| slot_of[e].map_or(Node::Const(0.0), |s| Node::Var(s as u32))).collect();
        let mut laws = Vec::new();
        for (members, elim, value) in &member_lists {
            let others: Vec<usize> = members.iter().copied().filter(|m| m != elim).collect();
            let mut terms = vec![Node::Const(*value)];
            terms.extend(others.iter().map(|&m| node::neg(r.subst[m].clone())));
            r.subst[*elim] = node::add(terms);
            laws.push(Law { kept: others.iter().map(|&m| slot_of[m].expect("kept")).collect(), value: *value });
        }
        // transitions
        let mut jumps: Vec<(usize, f64)> = Vec::new();
        let mut jump_ptr = vec![0usize];
        let mut rates: Vec<Node> = Vec::new();
        // per instance: the transition and the index values (for messages)
        let mut labels: Vec<(usize, String)> = Vec::new();
        if spec.transitions.is_empty() {
            return Err(ModelError::Format("model.transitions: a generic model needs at least one transition".into()));
        }
        for (ti, t) in spec.transitions.iter().enumerate() {
            let key = format!("model.transitions[{ti}]");
            let bindings = match &t.for_each {
                Some(src) => parse_bindings(src).map_err(|e| syntax(&format!("{key}.for"), src, e))?,
                None => Vec::new(),
            };
            let mut jump_keys = Vec::new();
            for (k, v) in &t.jump {
                let jkey = format!("{key}.jump");
                jump_keys.push((parse_expr(k).map_err(|e| syntax(&jkey, k, e))?, k, v));
            }
            if jump_keys.is_empty() {
                return Err(ModelError::Format(format!(
                    "{key}.jump: empty; allowed: a table of variable = change, e.g. {{ \"x[k]\" = 1 }}"
                )));
            }
            let rkey = format!("{key}.rate");
            let rate_src = t.rate.source();
            let rate_expr = match &t.rate {
                Value::Number(v) => Expr { kind: Kind::Num(*v), span: 0..0 },
                Value::Expr(s) => parse_expr(s).map_err(|e| syntax(&rkey, s, e))?,
            };
            let for_src = t.for_each.clone().unwrap_or_default();
            let mut body = |scope: &mut Vec<(String, i64)>| -> Result<(), ModelError> {
                let mut changes: Vec<(usize, f64)> = Vec::new();
                for (e, k, v) in &jump_keys {
                    let jkey = format!("{key}.jump");
                    let target = r.target(e, k, &jkey, scope)?;
                    let Target::Element(el) = target else {
                        return Err(format_err(
                            &jkey,
                            k,
                            format!("jump outside the state{}: a boundary value cannot change", scope_text(scope)),
                        ));
                    };
                    let amount = r.constant(v, &format!("{jkey}.\"{k}\""), scope)?;
                    if !amount.is_finite() {
                        return Err(out_of_range(&format!("{jkey}.\"{k}\""), amount, "a finite change"));
                    }
                    match changes.iter_mut().find(|(e, _)| *e == el) {
                        Some(c) => c.1 += amount,
                        None => changes.push((el, amount)),
                    }
                }
                for (li, (members, _, _)) in member_lists.iter().enumerate() {
                    let net: f64 = changes.iter().filter(|(e, _)| members.contains(e)).map(|(_, a)| a).sum();
                    let scale: f64 = changes.iter().map(|(_, a)| a.abs()).sum::<f64>().max(1.0);
                    if net.abs() > 1e-12 * scale {
                        return Err(ModelError::Format(format!(
                            "{key}.jump{}: changes the sum of model.conservation[{li}] by {net}; allowed: jumps that keep every declared conservation law",
                            scope_text(scope)
                        )));
                    }
                }
                let reduced: Vec<(usize, f64)> =
                    changes.iter().filter_map(|&(e, a)| slot_of[e].filter(|_| a != 0.0).map(|s| (s, a))).collect();
                if reduced.is_empty() {
                    return Err(ModelError::Format(format!("{key}.jump{}: changes no state variable", scope_text(scope))));
                }
                let rate = r.resolve(&rate_expr, &rate_src, &rkey, scope)?;
                if let Some(c) = rate.as_const() {
                    if !(c >= 0.0 && c.is_finite()) {
                        return Err(out_of_range(&format!("{rkey}{}", scope_text(scope)), c, "a rate >= 0 (finite)"));
                    }
                    if c == 0.0 {
                        return Ok(());
                    }
                }
                jumps.extend(reduced);
                jump_ptr.push(jumps.len());
                rates.push(rate);
                labels.push((ti, scope_text(scope)));
                Ok(())
            };
            for_each_binding(&r, &bindings, &for_src, &format!("{key}.for"), &mut Vec::new(), &mut iterations, &mut body)?;
        }
        // compile the drift
        let rate_refs: Vec<&Node> = rates.iter().collect();
        let items: Vec<u32> = (0..rates.len() as u32).collect();
        let drift_blocks = program::compile_blocks(&rate_refs, &items);
        // the Jacobian: symbolic derivatives, grouped by shape
        let mut jac_items = Vec::new();
        let mut derivs = Vec::new();
        let mut vars = Vec::new();
        for (i, rate) in rates.iter().enumerate() {
            vars.clear();
            rate.vars(&mut vars);
            vars.sort_unstable();
            vars.dedup();
            for &j in &vars {
                let d = node::derivative(rate, j);
                r.charge(d.size())?;
                if !d.is_zero() {
                    jac_items.push((i as u32, j));
                    derivs.push(d);
                }
            }
        }
        let d_refs: Vec<&Node> = derivs.iter().collect();
        let d_items: Vec<u32> = (0..derivs.len() as u32).collect();
        let jac_blocks = program::compile_blocks(&d_refs, &d_items);
        let sparsity = choose_sparsity(dim, &jac_items, &jumps, &jump_ptr);
        let scratch = drift_blocks.iter().chain(&jac_blocks).map(Block::scratch_len).max().unwrap_or(0);
        // layout
        let tail_family = match &spec.observables.tail {
            Some(n) => Some(*r.family_ix.get(n).ok_or_else(|| {
                out_of_range("model.observables.tail", format!("\"{n}\""), "the name of a family (declared in [[model.families]])")
            })?),
            None => {
                let tails: Vec<usize> = (0..r.families.len()).filter(|&i| r.families[i].tail).collect();
                (tails.len() == 1).then(|| tails[0])
            }
        };
        if let Some(fi) = tail_family {
            if r.families[fi].first != 1 {
                return Err(out_of_range(
                    "model.observables.tail",
                    format!("\"{}\" (range {}..{})", r.families[fi].name, r.families[fi].first, r.families[fi].last),
                    "a family indexed from 1 (x[k] = P(Q >= k))",
                ));
            }
        }
        let layout = match &spec.levels {
            Some(p) => {
                let ok = r.families.len() == 1
                    && spec.variables.is_empty()
                    && spec.conservation.is_empty()
                    && r.families[0].tail
                    && r.families[0].first == 1
                    && r.families[0].last as f64 == r.params[r.param_ix[p]].1;
                if !ok {
                    return Err(out_of_range(
                        "model.levels",
                        format!("\"{p}\""),
                        "a parameter P when the state is exactly one family with tail = true and range = \"1..P\"",
                    ));
                }
                StateLayout::Tail { levels: dim }
            }
            None => StateLayout::Named { names: names.clone() },
        };
        // observables
        let no_scope = &mut Vec::new();
        let obs = &spec.observables;
        let state_expr = |v: &Value, key: &str| -> Result<Node, ModelError> {
            match v {
                Value::Number(x) => Ok(Node::Const(*x)),
                Value::Expr(s) => {
                    let e = parse_expr(s).map_err(|e| syntax(key, s, e))?;
                    r.resolve(&e, s, key, &mut Vec::new())
                }
            }
        };
        let arrival_rate = obs.arrival_rate.as_ref().map(|v| r.constant(v, "model.observables.arrival_rate", no_scope)).transpose()?;
        let loss = obs.loss.as_ref().map(|v| state_expr(v, "model.observables.loss")).transpose()?;
        let prob_wait = obs.prob_wait.as_ref().map(|v| state_expr(v, "model.observables.prob_wait")).transpose()?;
        let mut extras: Vec<(String, Node)> = spec.variables.iter().map(|v| (v.clone(), r.subst[r.scalar_ix[v]].clone())).collect();
        for (name, v) in &obs.extras {
            extras.push((name.clone(), state_expr(v, &format!("model.observables.extras.{name}"))?));
        }
        let tail = tail_family.map(|fi| {
            let f = &r.families[fi];
            (0..(f.last - f.first + 1) as usize).map(|k| r.subst[f.base + k].clone()).collect()
        });
        let observe = Observe { tail, arrival_rate, loss, prob_wait, extras };
        let mut model = GenericModel {
            name: spec.name.clone().unwrap_or_else(|| "generic".into()),
            names,
            layout,
            params: r.params.clone(),
            jumps,
            jump_ptr,
            drift_blocks,
            jac_items,
            jac_blocks,
            sparsity,
            scratch,
            observe,
            laws,
            initial: None,
            order: spec.order.map(|o| match o {
                OrderSpec::Componentwise => PartialOrder::Componentwise,
            }),
        };
        // initial state
        if !spec.initial.is_empty() {
            let mut values = vec![0.0; n_elements];
            let mut given = vec![false; n_elements];
            for (k, v) in &spec.initial {
                let key = format!("model.initial.\"{k}\"");
                let e = parse_expr(k).map_err(|e| syntax("model.initial", k, e))?;
                match r.target(&e, k, "model.initial", &mut Vec::new())? {
                    Target::Element(i) => {
                        if !(v.is_finite() && (0.0..=1.0).contains(v)) {
                            return Err(out_of_range(&key, v, "a fraction in [0, 1]"));
                        }
                        values[i] = *v;
                        given[i] = true;
                    }
                    Target::Boundary(_) => return Err(format_err("model.initial", k, "is a boundary value, not a state variable")),
                }
            }
            let x: Vec<f64> = (0..n_elements).filter_map(|e| slot_of[e].map(|_| values[e])).collect();
            for e in 0..n_elements {
                if slot_of[e].is_none() && given[e] {
                    let implied = r.subst[e].eval(&x);
                    if (implied - values[e]).abs() > 1e-9 {
                        return Err(ModelError::Format(format!(
                            "model.initial: {} = {} but the conservation law gives {implied}; allowed: values that satisfy the declared conservation laws",
                            r.element_names[e], values[e]
                        )));
                    }
                }
            }
            model.initial = Some(x);
        }
        // validation: rates >= 0 and finite at random feasible states
        let mut rng = SplitMix(0x5eed_9e4e_71c0_de00);
        let mut values = vec![0.0; n_elements];
        let mut x = vec![0.0; dim];
        for _ in 0..VALIDATION_SAMPLES {
            for v in values.iter_mut().take(spec.variables.len()) {
                *v = rng.next_f64();
            }
            for f in &r.families {
                let n = (f.last - f.first + 1) as usize;
                let part = &mut values[f.base..f.base + n];
                part.iter_mut().for_each(|v| *v = rng.next_f64());
                if f.tail {
                    part.sort_unstable_by(|a, b| b.total_cmp(a));
                }
            }
            for (members, _, value) in &member_lists {
                let w: Vec<f64> = members.iter().map(|_| -rng.next_f64().ln()).collect();
                let total: f64 = w.iter().sum();
                for (m, wm) in members.iter().zip(&w) {
                    values[*m] = value * wm / total;
                }
            }
            for e in 0..n_elements {
                if let Some(s) = slot_of[e] {
                    x[s] = values[e];
                }
            }
            let mut bad: Option<(usize, f64)> = None;
            model.for_each_rate(&x, &mut |i, rate| {
                if bad.is_none() && !(rate >= -1e-12 && rate.is_finite()) {
                    bad = Some((i, rate));
                }
            });
            if let Some((i, rate)) = bad {
                let shown: Vec<String> = model.names.iter().zip(&x).take(8).map(|(n, v)| format!("{n} = {v:.4}")).collect();
                let more = if dim > 8 { ", ..." } else { "" };
                let (ti, at) = &labels[i];
                let t = &spec.transitions[*ti];
                let named = t.name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
                return Err(ModelError::OutOfRange {
                    field: format!("model.transitions[{ti}].rate{named}"),
                    value: format!("\"{}\"{at} = {rate:.4e} at the feasible state ({}{more})", t.rate.source(), shown.join(", ")),
                    allowed: "a rate >= 0 and finite at every feasible state (entries in [0, 1], tail families non-increasing, conservation laws kept)"
                        .into(),
                });
            }
        }
        Ok(model)
    }

    /// Evaluates every transition rate at `x`: `f(instance, rate)`.
    fn for_each_rate(&self, x: &[f64], f: &mut dyn FnMut(usize, f64)) {
        with_scratch(self.scratch, |regs| {
            for b in &self.drift_blocks {
                for l0 in (0..b.lanes()).step_by(CHUNK) {
                    let w = CHUNK.min(b.lanes() - l0);
                    let out = b.run(x, regs, l0, w);
                    for (r, &item) in out.iter().zip(&b.items[l0..l0 + w]) {
                        f(item as usize, *r);
                    }
                }
            }
        });
    }

    /// Names of the state entries (`S`, `x[3]`), in state order.
    pub fn state_names(&self) -> &[String] {
        &self.names
    }

    /// Parameter names and values (after `--set` and the truncation level).
    pub fn parameters(&self) -> &[(String, f64)] {
        &self.params
    }

    /// The declared initial state (`[model.initial]`), if any.
    pub fn initial_state(&self) -> Option<&[f64]> {
        self.initial.as_deref()
    }

    /// Number of transitions after unrolling `for` (zero-rate ones dropped).
    pub fn transition_count(&self) -> usize {
        self.jump_ptr.len() - 1
    }

    /// Number of compiled vectorised programs (drift, Jacobian): a measure of how well the
    /// transitions vectorise.
    pub fn program_count(&self) -> (usize, usize) {
        (self.drift_blocks.len(), self.jac_blocks.len())
    }
}

/// Banded when the band is about as small as the pattern, a sparse pattern for large sparse
/// states, dense otherwise. The diagonal is always in the pattern.
fn choose_sparsity(n: usize, jac_items: &[(u32, u32)], jumps: &[(usize, f64)], jump_ptr: &[usize]) -> Sparsity {
    let mut entries: Vec<(usize, usize)> = (0..n).map(|i| (i, i)).collect();
    for &(inst, col) in jac_items {
        for &(s, _) in &jumps[jump_ptr[inst as usize]..jump_ptr[inst as usize + 1]] {
            entries.push((s, col as usize));
        }
    }
    entries.sort_unstable();
    entries.dedup();
    let (mut lower, mut upper) = (0usize, 0usize);
    for &(i, j) in &entries {
        lower = lower.max(i.saturating_sub(j));
        upper = upper.max(j.saturating_sub(i));
    }
    let nnz = entries.len();
    let width = 2 * lower + upper + 1;
    if n <= 3 || (lower + upper + 1 >= n && n <= 400) {
        return Sparsity::Dense;
    }
    if width * n <= 3 * nnz + 6 * n {
        return Sparsity::Banded { lower, upper };
    }
    if n >= 40 && nnz * 10 <= n * n {
        let mut rows = vec![Vec::new(); n];
        for (i, j) in entries {
            rows[i].push(j);
        }
        return Sparsity::Sparse(Arc::new(SparsityPattern::from_rows(n, rows)));
    }
    Sparsity::Dense
}

impl MeanFieldModel for GenericModel {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn dim(&self) -> usize {
        self.names.len()
    }

    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        dx.fill(0.0);
        let (jumps, ptr) = (&self.jumps, &self.jump_ptr);
        self.for_each_rate(x, &mut |i, r| {
            for &(s, c) in &jumps[ptr[i]..ptr[i + 1]] {
                dx[s] += c * r;
            }
        });
    }

    fn layout(&self) -> StateLayout {
        self.layout.clone()
    }

    fn observables(&self, x: &[f64]) -> Observables {
        let o = &self.observe;
        let extras: Vec<(String, f64)> = o.extras.iter().map(|(n, e)| (n.clone(), e.eval(x))).collect();
        let Some(tail) = &o.tail else {
            return Observables::extras_only(extras);
        };
        let t: Vec<f64> = tail.iter().map(|e| e.eval(x)).collect();
        let loss = o.loss.as_ref().map_or(0.0, |e| e.eval(x));
        let prob_wait = o.prob_wait.as_ref().map(|e| e.eval(x));
        let mut obs = match o.arrival_rate {
            Some(lambda) => Observables::from_tail(&t, lambda, prob_wait, loss),
            None => {
                let mut obs = Observables::from_tail(&t, 0.0, prob_wait, loss);
                obs.throughput = None;
                obs
            }
        };
        obs.extras = extras;
        obs
    }

    fn order(&self) -> Option<PartialOrder> {
        self.order
    }

    fn extremal_states(&self) -> Vec<NamedState> {
        let n = self.dim();
        let mut out = Vec::new();
        for (name, v) in [("empty", 0.0), ("full", 1.0)] {
            let mut x = vec![v; n];
            self.project(&mut x);
            out.push(NamedState { name: name.into(), x });
        }
        if let Some(x) = &self.initial {
            out.push(NamedState { name: "initial".into(), x: x.clone() });
        }
        out
    }

    /// Clamps every entry to `[0, 1]`, then scales the kept members of a conservation law
    /// down when they exceed the conserved value (so that the eliminated variable is `>= 0`).
    fn project(&self, x: &mut [f64]) {
        x.iter_mut().for_each(|v| *v = v.clamp(0.0, 1.0));
        for law in &self.laws {
            let s: f64 = law.kept.iter().map(|&i| x[i]).sum();
            if s > law.value && s > 0.0 {
                let f = law.value.max(0.0) / s;
                law.kept.iter().for_each(|&i| x[i] *= f);
            }
        }
    }

    fn stability(&self) -> Stability {
        Stability::Unknown {
            note: "generic model: no stability condition is known; the solvers watch the residual and the mass at the truncation level"
                .into(),
        }
    }

    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
    fn transitions(&self) -> Option<&dyn Transitions> {
        Some(self)
    }
}

impl AnalyticJacobian for GenericModel {
    fn sparsity(&self) -> Sparsity {
        self.sparsity.clone()
    }
    fn jacobian(&self, x: &[f64], jac: &mut Jacobian) {
        jac.clear();
        with_scratch(self.scratch, |regs| {
            for b in &self.jac_blocks {
                for l0 in (0..b.lanes()).step_by(CHUNK) {
                    let w = CHUNK.min(b.lanes() - l0);
                    let out = b.run(x, regs, l0, w);
                    for (d, &item) in out.iter().zip(&b.items[l0..l0 + w]) {
                        let (inst, col) = self.jac_items[item as usize];
                        let inst = inst as usize;
                        for &(s, c) in &self.jumps[self.jump_ptr[inst]..self.jump_ptr[inst + 1]] {
                            jac.add(s, col as usize, c * d);
                        }
                    }
                }
            }
        });
    }
}

impl Transitions for GenericModel {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        let (jumps, ptr) = (&self.jumps, &self.jump_ptr);
        self.for_each_rate(x, &mut |i, r| visit(&jumps[ptr[i]..ptr[i + 1]], r));
    }
}
