//! Name resolution: parameters become constants, `for` ranges and `sum(k = a..b, ...)` are
//! unrolled, `x[k-1]` becomes a state slot (or the formula of an eliminated variable) or a
//! boundary constant; errors name the key, the column and the index values.

use std::collections::HashMap;

use super::expr::{Expr, Kind};
use super::node::{self, Fun, Node};
use super::validate::{at_col, check_name, format_err, scope_text, syntax, FUNCTIONS};
use super::{parse_expr, GenericSpec, Limits, RangeExpr, Value};
use crate::{out_of_range, ModelError};

/// A declared family `name[first..=last]`: its elements, boundary values and kind.
#[derive(Debug, Clone)]
pub(super) struct Family {
    pub(super) name: String,
    pub(super) first: i64,
    pub(super) last: i64,
    /// Element id of `name[first]`.
    pub(super) base: usize,
    pub(super) boundary: HashMap<i64, f64>,
    pub(super) tail: bool,
}

/// Where a reference to a variable lands.
pub(super) enum Target {
    /// A state element (scalar or family element), by element id.
    Element(usize),
    /// A boundary value.
    Boundary(f64),
}

pub(super) struct Resolver {
    pub(super) params: Vec<(String, f64)>,
    pub(super) param_ix: HashMap<String, usize>,
    pub(super) scalar_ix: HashMap<String, usize>,
    pub(super) families: Vec<Family>,
    pub(super) family_ix: HashMap<String, usize>,
    /// Expression of each element in the state slots (a `Var`, or the elimination formula).
    pub(super) subst: Vec<Node>,
    /// Display name of each element.
    pub(super) element_names: Vec<String>,
    /// Expression nodes still allowed.
    pub(super) budget: std::cell::Cell<usize>,
    pub(super) max_nodes: usize,
    /// The job's deadline: construction stops with [`ModelError::Interrupted`] when it passes.
    pub(super) deadline: crate::Deadline,
}

impl Resolver {
    pub(super) fn parameters_only(spec: &GenericSpec) -> Result<Resolver, ModelError> {
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
            deadline: crate::Deadline::none(),
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

    /// `Err(ModelError::Interrupted)` when the job's deadline has passed during `phase` (e.g.
    /// `unrolling the transitions`).
    pub(super) fn check_deadline(&self, phase: &str) -> Result<(), ModelError> {
        if self.deadline.expired() {
            return Err(ModelError::Interrupted {
                during: format!("building the generic model ({phase})"),
                reason: self.deadline.reason(),
            });
        }
        Ok(())
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

    pub(super) fn is_defined(&self, name: &str) -> bool {
        self.param_ix.contains_key(name) || self.scalar_ix.contains_key(name) || self.family_ix.contains_key(name)
    }

    /// An integer from an index expression.
    pub(super) fn integer(&self, e: &Expr, src: &str, key: &str, scope: &mut Vec<(String, i64)>) -> Result<i64, ModelError> {
        let n = self.resolve(e, src, key, scope)?;
        match n.as_const() {
            Some(v) if v.is_finite() && (v - v.round()).abs() <= 1e-9 && v.abs() <= 1e12 => Ok(v.round() as i64),
            Some(v) => Err(at_col(key, src, e.span.start, format!("the index {v}{} is not an integer", scope_text(scope)))),
            None => Err(at_col(key, src, e.span.start, "an index must not depend on the state (only on parameters and indices)")),
        }
    }

    /// A constant (in parameters and indices) from a value.
    pub(super) fn constant(&self, v: &Value, key: &str, scope: &mut Vec<(String, i64)>) -> Result<f64, ModelError> {
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
    pub(super) fn target(&self, e: &Expr, src: &str, key: &str, scope: &mut Vec<(String, i64)>) -> Result<Target, ModelError> {
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
    pub(super) fn charge(&self, n: usize) -> Result<(), ModelError> {
        match self.budget.get().checked_sub(n) {
            Some(left) => {
                self.budget.set(left);
                Ok(())
            }
            None => Err(self.too_large()),
        }
    }

    /// Element `i` as an expression in the slots; before the conservation laws are reduced
    /// (`subst` still empty: a boundary value or a law's value that names the state), a
    /// variable, so that [`constant`](Self::constant) refuses it as depending on the state.
    fn element(&self, i: usize) -> Node {
        self.subst.get(i).cloned().unwrap_or(Node::Var(i as u32))
    }

    pub(super) fn resolve(&self, e: &Expr, src: &str, key: &str, scope: &mut Vec<(String, i64)>) -> Result<Node, ModelError> {
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
                        Target::Element(i) => self.element(i),
                        Target::Boundary(v) => Node::Const(v),
                    }
                }
            }
            Kind::Index(..) => match self.target(e, src, key, scope)? {
                Target::Element(i) => self.element(i),
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

/// Called once per combination of index values (the scope).
pub(super) type InstanceFn<'a> = dyn FnMut(&mut Vec<(String, i64)>) -> Result<(), ModelError> + 'a;

/// Calls `f` for every combination of the `for` bindings (nested, in order).
pub(super) fn for_each_binding(
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
            return Err(ModelError::declaration(key, "more transitions after unrolling than allowed (see Limits)"));
        }
        *iterations -= 1;
        scope.push((name.clone(), k));
        let res = for_each_binding(r, rest, src, key, scope, iterations, f);
        scope.pop();
        res?;
    }
    Ok(())
}
