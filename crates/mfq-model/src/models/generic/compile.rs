//! Compiling a [`GenericSpec`] into a [`GenericModel`], in this order (the order of the
//! checks, see validate.rs): the parameters and the truncation level, the scalar variables,
//! the families and their boundary values, the conservation laws (which variables keep a slot
//! of the reduced state), the transitions unrolled over their `for` ranges, the drift and
//! Jacobian programs with the Jacobian's sparsity, the state layout, the observables, the
//! initial state, and last the rates' signs at sampled feasible states.

use std::collections::HashMap;
use std::sync::Arc;

use super::expr::{Expr, Kind};
use super::model::{GenericModel, Law, Observe};
use super::node::{self, Node};
use super::program::{self, Block};
use super::resolve::{for_each_binding, Family, Resolver, Target};
use super::validate::{self, format_err, scope_text, syntax};
use super::{parse_bindings, parse_expr, parse_range, FamilySpec, GenericSpec, OrderSpec, TransitionSpec, Value};
use crate::{out_of_range, ModelError, PartialOrder, Sparsity, SparsityPattern, StateLayout};

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

/// The reduced state: conservation laws eliminate one variable each.
struct Reduced {
    /// Per law: the members (element ids), the eliminated element and the conserved value.
    member_lists: Vec<(Vec<usize>, usize, f64)>,
    /// The state slot of each element (`None`: eliminated).
    slot_of: Vec<Option<usize>>,
    /// Names of the slots, in state order.
    names: Vec<String>,
    /// The laws in the slots (for the projection).
    laws: Vec<Law>,
}

/// Every transition instance (one per value of the `for` bindings, zero constant rates
/// dropped).
struct Unrolled {
    /// Jumps in the slots: `jumps[jump_ptr[i]..jump_ptr[i + 1]]` for instance `i`.
    jumps: Vec<(usize, f64)>,
    jump_ptr: Vec<usize>,
    /// Rate of each instance, resolved.
    rates: Vec<Node>,
    /// Per instance: the transition and the index values (for messages).
    labels: Vec<(usize, String)>,
}

/// The compiled drift and Jacobian.
struct Programs {
    drift_blocks: Vec<Block>,
    /// `(instance, column)` of each Jacobian item.
    jac_items: Vec<(u32, u32)>,
    jac_blocks: Vec<Block>,
    sparsity: Sparsity,
    scratch: usize,
}

impl GenericModel {
    /// Compiles a generic model. With `levels = Some(K)` and a `levels` parameter declared in
    /// the spec, that parameter is set to `K` first.
    ///
    /// # Errors
    /// [`ModelError::Declaration`] naming the key, the column and the index values for: a syntax
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
        Self::within(spec, levels, limits, &crate::Deadline::none())
    }

    /// [`with_limits`](Self::with_limits) within the job's `deadline`: each phase of the
    /// construction (unrolling the transitions, the symbolic derivatives, the sampled rate
    /// checks) watches it, so a model of a million transitions stops near the limit.
    ///
    /// # Errors
    /// As [`new`](Self::new); [`ModelError::Interrupted`] when the deadline passes (or the job
    /// is cancelled) before the model is built.
    pub fn within(spec: &GenericSpec, levels: Option<usize>, limits: Limits, deadline: &crate::Deadline) -> Result<Self, ModelError> {
        let (r, reduced) = declared(spec, levels, limits, deadline)?;
        let Reduced { member_lists, slot_of, names, laws } = reduced;
        let Unrolled { jumps, jump_ptr, rates, labels } = unroll_transitions(&r, spec, &member_lists, &slot_of, limits.max_transitions)?;
        r.check_deadline("the conservation check")?;
        let undeclared = undeclared_conservation(&jumps, &jump_ptr, names.len());
        let Programs { drift_blocks, jac_items, jac_blocks, sparsity, scratch } =
            compile_programs(&r, &rates, &jumps, &jump_ptr, names.len())?;
        r.check_deadline("the rate checks")?;
        let tail_family = validate::tail_family(&r, spec)?;
        let layout = match &spec.levels {
            Some(p) => {
                validate::check_levels_layout(&r, spec, p)?;
                StateLayout::Tail { levels: names.len() }
            }
            None => StateLayout::Named { names: names.clone() },
        };
        let observe = observables(&r, spec, tail_family)?;
        let initial = initial_state(&r, spec, &slot_of)?;
        let flat = super::flat::FlatRates::compile(&rates);
        let model = GenericModel {
            name: spec.name.clone().unwrap_or_else(|| "generic".into()),
            names,
            layout,
            params: r.params.clone(),
            jumps,
            jump_ptr,
            drift_blocks,
            flat,
            jac_items,
            jac_blocks,
            sparsity,
            scratch,
            observe,
            laws,
            initial,
            order: spec.order.map(|o| match o {
                OrderSpec::Componentwise => PartialOrder::Componentwise,
            }),
            labels: labels
                .iter()
                .map(|(ti, at)| {
                    let t = &spec.transitions[*ti];
                    let named = t.name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
                    (format!("model.transitions[{ti}]{named}{at}"), format!("\"{}\"", t.rate.source()))
                })
                .collect(),
        };
        validate::check_rates(&model, spec, &r, &member_lists, &slot_of, &labels)?;
        if let Some(c) = undeclared {
            return Err(undeclared_law_error(&c, &model.names, spec, &r, &slot_of));
        }
        Ok(model)
    }
}

/// Largest number of entry operations of the elimination in [`undeclared_conservation`]
/// (about a second); a check that would need more is skipped.
pub(super) const CONSERVATION_CHECK_WORK: usize = 300_000_000;

/// A linear quantity `c . x` that every transition instance leaves unchanged (`c . v = 0` for
/// every jump vector `v` in the reduced state, a left null vector of the jump matrix and so of
/// the Jacobian at every state), scaled so that its largest entry is 1; `None` when the jumps
/// span the state (no such quantity) or the check is too large ([`CONSERVATION_CHECK_WORK`]).
/// Found by sparse Gaussian elimination of the jump vectors (a row echelon form with one row
/// per leading entry; a jump moves a few entries, so a chain of levels keeps its rows of two
/// entries and the check costs `O(instances)` instead of the `O(instances n^2)` of a dense
/// orthogonalisation), then back substitution for `c` with 1 at the first column without a
/// row.
pub(super) fn undeclared_conservation(jumps: &[(usize, f64)], jump_ptr: &[usize], n: usize) -> Option<Vec<f64>> {
    let instances = jump_ptr.len().saturating_sub(1);
    if n == 0 {
        return None;
    }
    // rows[c]: the row whose leading entry (1) is in column c, its other entries after it
    let mut rows: Vec<Option<Vec<(usize, f64)>>> = vec![None; n];
    let (mut rank, mut work) = (0usize, 0usize);
    let mut v: std::collections::BTreeMap<usize, f64> = std::collections::BTreeMap::new();
    for i in 0..instances {
        if rank == n {
            return None;
        }
        v.clear();
        for &(slot, change) in &jumps[jump_ptr[i]..jump_ptr[i + 1]] {
            *v.entry(slot).or_insert(0.0) += change;
        }
        let scale = v.values().map(|a| a.abs()).fold(0.0, f64::max);
        if scale == 0.0 {
            continue;
        }
        // reduce by the rows of its leading entries until it is zero or has a new leading column
        while let Some((&c, &lead)) = v.iter().next() {
            if lead.abs() <= 1e-9 * scale {
                v.remove(&c);
                continue;
            }
            match &rows[c] {
                Some(row) => {
                    for &(j, r) in row {
                        *v.entry(j).or_insert(0.0) -= lead * r;
                    }
                    work += row.len();
                    v.remove(&c);
                    if work > CONSERVATION_CHECK_WORK {
                        return None;
                    }
                }
                None => {
                    let row = v.iter().filter(|(_, a)| a.abs() > 1e-12 * scale).map(|(&j, &a)| (j, a / lead)).collect();
                    rows[c] = Some(row);
                    rank += 1;
                    break;
                }
            }
        }
    }
    if rank == n {
        return None;
    }
    // c . row = 0 for every row: 1 at the first free column, 0 at the others, and each pivot
    // column from the last, c_r = -sum_{j > r} row_r[j] c_j
    let free = (0..n).find(|&col| rows[col].is_none())?;
    let mut c = vec![0.0; n];
    c[free] = 1.0;
    for r in (0..n).rev() {
        if let Some(row) = &rows[r] {
            c[r] = -row.iter().filter(|(j, _)| *j != r).map(|&(j, a)| a * c[j]).sum::<f64>();
        }
    }
    let top = c.iter().map(|a| a.abs()).fold(0.0, f64::max);
    Some(c.iter().map(|a| if a.abs() < 1e-9 * top { 0.0 } else { a / top }).collect())
}

/// The error for a conserved quantity `c . x` that no `[[model.conservation]]` declares: the
/// fixed points then form a family (one per value of `c . x`) and the solver could stop
/// anywhere on it, e.g. at the empty state.
fn undeclared_law_error(c: &[f64], names: &[String], spec: &GenericSpec, r: &Resolver, slot_of: &[Option<usize>]) -> ModelError {
    let terms: Vec<String> = c
        .iter()
        .zip(names)
        .filter(|(a, _)| **a != 0.0)
        .map(|(a, name)| if (a - 1.0).abs() < 1e-12 { name.clone() } else { format!("{} {name}", crate::short_number(*a)) })
        .collect();
    let ones = c.iter().all(|a| *a == 0.0 || (a - 1.0).abs() < 1e-12);
    let initial = initial_state(r, spec, slot_of).ok().flatten().map(|x| x.iter().zip(c).map(|(v, a)| v * a).sum::<f64>());
    let value = initial.map_or("its value".to_string(), |v| format!("{v:.12} (its value at model.initial)").replace(".000000000000 ", " "));
    let how = if ones {
        // a whole family is named by its name (as `sum` accepts it), other entries one by one
        let mut members: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
        for t in &terms {
            if let Some((f, _)) = t.split_once('[') {
                *members.entry(f).or_default() += 1;
            }
        }
        let mut sum: Vec<String> = Vec::new();
        for t in &terms {
            let family = t.split_once('[').map(|(f, _)| f);
            let whole = family
                .and_then(|f| r.families.iter().find(|fam| fam.name == f))
                .is_some_and(|fam| members.get(fam.name.as_str()) == Some(&(fam.last - fam.first + 1)));
            let item = if whole { family.unwrap_or(t).to_string() } else { t.clone() };
            if !sum.contains(&item) {
                sum.push(item);
            }
        }
        format!(
            "declare it: [[model.conservation]] with sum = [{}] and value = {value}",
            sum.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(", ")
        )
    } else {
        "change the variables so that it is a plain sum, then declare it in [[model.conservation]]".to_string()
    };
    ModelError::declaration(
        "model.conservation",
        format!(
            "the transitions conserve {} (every jump leaves it unchanged: a left null vector of the Jacobian), but no \
             conservation law declares it, so the fixed points form a family and the solver could stop anywhere on it \
             (e.g. at the empty state); {how}",
            if terms.len() > 8 {
                format!("{} + ... + {} ({} terms)", terms[..3].join(" + "), terms[terms.len() - 1], terms.len())
            } else {
                terms.join(" + ")
            }
        ),
    )
}

/// Declares the scalar variables (element ids `0..variables.len()`).
/// The parameters (the truncation-level one set to `levels`), the declared variables and
/// families, and the state left after the conservation laws: the first phase of
/// [`GenericModel::within`], without the transitions.
fn declared(
    spec: &GenericSpec,
    levels: Option<usize>,
    limits: Limits,
    deadline: &crate::Deadline,
) -> Result<(Resolver, Reduced), ModelError> {
    let mut r = Resolver::parameters_only(spec)?;
    r.deadline = deadline.clone();
    r.budget.set(limits.max_nodes);
    r.max_nodes = limits.max_nodes;
    // the truncation-level parameter
    if let (Some(i), Some(k)) = (validate::levels_parameter(&r, spec)?, levels) {
        r.params[i].1 = k as f64;
    }
    declare_variables(&mut r, spec)?;
    for (fi, f) in spec.families.iter().enumerate() {
        declare_family(&mut r, fi, f, limits.max_state)?;
    }
    if r.element_names.is_empty() {
        return Err(ModelError::declaration("model", "a generic model needs state variables (model.variables or model.families)"));
    }
    let reduced = reduce(&mut r, spec)?;
    Ok((r, reduced))
}

/// The dimension of the model's state (its variables and family members less one per
/// conservation law) with the `levels` parameter at `levels`, from the declarations alone:
/// the transitions are not unrolled, so this is cheap for a model of many transitions.
///
/// # Errors
/// As [`GenericModel::new`] for the declarations, parameters and conservation laws.
pub(crate) fn dimension(spec: &GenericSpec, levels: Option<usize>) -> Result<usize, ModelError> {
    let (_, reduced) = declared(spec, levels, Limits::default(), &crate::Deadline::none())?;
    Ok(reduced.names.len())
}

fn declare_variables(r: &mut Resolver, spec: &GenericSpec) -> Result<(), ModelError> {
    for (i, name) in spec.variables.iter().enumerate() {
        validate::check_new_name(r, &format!("model.variables[{i}]"), name)?;
        r.scalar_ix.insert(name.clone(), r.element_names.len());
        r.element_names.push(name.clone());
    }
    Ok(())
}

/// Declares family `fi` (its elements follow the elements declared so far), then reads its
/// boundary values (which may refer to the family itself).
fn declare_family(r: &mut Resolver, fi: usize, f: &FamilySpec, max_state: usize) -> Result<(), ModelError> {
    let key = format!("model.families[{fi}]");
    validate::check_new_name(r, &format!("{key}.name"), &f.name)?;
    let rkey = format!("{key}.range");
    let range = parse_range(&f.range).map_err(|e| syntax(&rkey, &f.range, e))?;
    let first = r.integer(&range.from, &f.range, &rkey, &mut Vec::new())?;
    let last = r.integer(&range.to, &f.range, &rkey, &mut Vec::new())?;
    validate::check_family_size(&rkey, &f.range, first, last, r.element_names.len(), max_state)?;
    let base = r.element_names.len();
    r.element_names.extend((first..=last).map(|k| format!("{}[{k}]", f.name)));
    r.family_ix.insert(f.name.clone(), r.families.len());
    r.families.push(Family { name: f.name.clone(), first, last, base, boundary: HashMap::new(), tail: f.tail });
    // boundary values
    let mut boundary = HashMap::new();
    for (k, v) in &f.boundary {
        let bkey = format!("{key}.boundary");
        let i = validate::boundary_index(r, &bkey, k, &f.name, first, last)?;
        let value = r.constant(v, &format!("{bkey}.\"{k}\""), &mut Vec::new())?;
        boundary.insert(i, value);
    }
    r.families.last_mut().expect("just pushed").boundary = boundary;
    Ok(())
}

/// The conservation laws: their members and eliminated variables, the slots of the kept
/// variables, and `r.subst` (each element as an expression in the slots: a `Var`, or the
/// elimination formula).
fn reduce(r: &mut Resolver, spec: &GenericSpec) -> Result<Reduced, ModelError> {
    let n_elements = r.element_names.len();
    let mut member_lists: Vec<(Vec<usize>, usize, f64)> = Vec::new();
    let mut eliminated_by: Vec<Option<usize>> = vec![None; n_elements];
    for (li, law) in spec.conservation.iter().enumerate() {
        let key = format!("model.conservation[{li}]");
        let members = law_members(r, &key, &law.sum)?;
        validate::check_law_members(&key, &law.sum, &members)?;
        let value = r.constant(&law.value, &format!("{key}.value"), &mut Vec::new())?;
        validate::check_law_value(&key, value, members.len())?;
        let elim = eliminated(r, &key, law.eliminate.as_deref(), &members)?;
        if eliminated_by[elim].is_some() {
            return Err(out_of_range(&format!("{key}.eliminate"), &r.element_names[elim], "a variable not eliminated by another law"));
        }
        eliminated_by[elim] = Some(li);
        member_lists.push((members, elim, value));
    }
    validate::check_eliminated_once(&member_lists, &eliminated_by, &r.element_names)?;
    // slots
    let mut slot_of: Vec<Option<usize>> = vec![None; n_elements];
    let mut names = Vec::new();
    for e in 0..n_elements {
        if eliminated_by[e].is_none() {
            slot_of[e] = Some(names.len());
            names.push(r.element_names[e].clone());
        }
    }
    if names.is_empty() {
        return Err(ModelError::declaration(
            "model.conservation",
            "every state variable is eliminated; allowed: laws that leave at least one variable",
        ));
    }
    r.subst = (0..n_elements).map(|e| slot_of[e].map_or(Node::Const(0.0), |s| Node::Var(s as u32))).collect();
    let mut laws = Vec::new();
    for (li, (members, elim, value)) in member_lists.iter().enumerate() {
        let others: Vec<usize> = members.iter().copied().filter(|m| m != elim).collect();
        let mut terms = vec![Node::Const(*value)];
        terms.extend(others.iter().map(|&m| node::neg(r.subst[m].clone())));
        r.subst[*elim] = node::add(terms);
        // names for messages: a long family is shortened to its first and last members
        let names: Vec<&str> = others.iter().map(|&m| r.element_names[m].as_str()).collect();
        let kept_names =
            if names.len() > 6 { format!("{} + {} + ... + {}", names[0], names[1], names[names.len() - 1]) } else { names.join(" + ") };
        let law = &spec.conservation[li];
        laws.push(Law {
            kept: others.iter().map(|&m| slot_of[m].expect("kept")).collect(),
            value: *value,
            label: format!("{} = {} (model.conservation[{li}])", law.sum.join(" + "), law.value.source()),
            kept_names,
            eliminated: r.element_names[*elim].clone(),
        });
    }
    Ok(Reduced { member_lists, slot_of, names, laws })
}

/// The elements of a conservation law's `sum` (key `KEY.sum`): scalars, elements, whole families.
fn law_members(r: &Resolver, key: &str, sum: &[String]) -> Result<Vec<usize>, ModelError> {
    let mut members = Vec::new();
    for m in sum {
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
    Ok(members)
}

/// The element a conservation law eliminates: `eliminate` (one of the members), default the
/// last member.
fn eliminated(r: &Resolver, key: &str, eliminate: Option<&str>, members: &[usize]) -> Result<usize, ModelError> {
    let Some(s) = eliminate else {
        return Ok(*members.last().expect("non-empty"));
    };
    let ekey = format!("{key}.eliminate");
    let e = parse_expr(s).map_err(|e| syntax(&ekey, s, e))?;
    match r.target(&e, s, &ekey, &mut Vec::new())? {
        Target::Element(i) if members.contains(&i) => Ok(i),
        _ => Err(out_of_range(&ekey, format!("\"{s}\""), "one of the variables of the sum")),
    }
}

/// Every transition, unrolled over its `for` bindings (at most `max_transitions` instances in all).
fn unroll_transitions(
    r: &Resolver,
    spec: &GenericSpec,
    member_lists: &[(Vec<usize>, usize, f64)],
    slot_of: &[Option<usize>],
    max_transitions: usize,
) -> Result<Unrolled, ModelError> {
    let mut out = Unrolled { jumps: Vec::new(), jump_ptr: vec![0usize], rates: Vec::new(), labels: Vec::new() };
    if spec.transitions.is_empty() {
        return Err(ModelError::declaration("model.transitions", "a generic model needs at least one transition"));
    }
    let mut iterations = max_transitions;
    // each law's members sorted, for the jumps' checks by binary search (a linear search was
    // quadratic in a long family's size)
    let sorted: Vec<Vec<usize>> = member_lists
        .iter()
        .map(|(m, _, _)| {
            let mut m = m.clone();
            m.sort_unstable();
            m
        })
        .collect();
    for (ti, t) in spec.transitions.iter().enumerate() {
        unroll_transition(r, ti, t, &sorted, slot_of, &mut iterations, &mut out)?;
    }
    Ok(out)
}

/// The instances of transition `ti` (one per combination of its `for` bindings), appended to
/// `out`; `iterations` counts down the instances still allowed; `laws`: the members of each
/// conservation law, sorted.
fn unroll_transition(
    r: &Resolver,
    ti: usize,
    t: &TransitionSpec,
    laws: &[Vec<usize>],
    slot_of: &[Option<usize>],
    iterations: &mut usize,
    out: &mut Unrolled,
) -> Result<(), ModelError> {
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
        return Err(ModelError::declaration(format!("{key}.jump"), "empty; allowed: a table of variable = change, e.g. { \"x[k]\" = 1 }"));
    }
    let rkey = format!("{key}.rate");
    let rate_src = t.rate.source();
    let rate_expr = match &t.rate {
        Value::Number(v) => Expr { kind: Kind::Num(*v), span: 0..0 },
        Value::Expr(s) => parse_expr(s).map_err(|e| syntax(&rkey, s, e))?,
    };
    let for_src = t.for_each.clone().unwrap_or_default();
    let mut body = |scope: &mut Vec<(String, i64)>| -> Result<(), ModelError> {
        if out.rates.len() % 1024 == 1023 {
            r.check_deadline("unrolling the transitions")?;
        }
        let jump = instance_jump(r, &key, &jump_keys, scope, laws, slot_of)?;
        let rate = r.resolve(&rate_expr, &rate_src, &rkey, scope)?;
        if let Some(c) = rate.as_const() {
            if !(c >= 0.0 && c.is_finite()) {
                return Err(out_of_range(&format!("{rkey}{}", scope_text(scope)), c, "a rate >= 0 (finite)"));
            }
            if c == 0.0 {
                return Ok(());
            }
        }
        out.jumps.extend(jump);
        out.jump_ptr.push(out.jumps.len());
        out.rates.push(rate);
        out.labels.push((ti, scope_text(scope)));
        Ok(())
    };
    for_each_binding(r, &bindings, &for_src, &format!("{key}.for"), &mut Vec::new(), iterations, &mut body)
}

/// Largest size of one entry's change in a jump (objects per event).
const MAX_JUMP: f64 = 1e6;

/// The jump of one instance of transition `key` (index values `scope`) in the slots: the
/// changes of `jump_keys` (element expression, source, change) summed per element, checked
/// against the conservation laws (`laws`: their members, sorted), without eliminated variables
/// and zero changes.
fn instance_jump(
    r: &Resolver,
    key: &str,
    jump_keys: &[(Expr, &String, &Value)],
    scope: &mut Vec<(String, i64)>,
    laws: &[Vec<usize>],
    slot_of: &[Option<usize>],
) -> Result<Vec<(usize, f64)>, ModelError> {
    let mut changes: Vec<(usize, f64)> = Vec::new();
    for (e, k, v) in jump_keys {
        let jkey = format!("{key}.jump");
        let target = r.target(e, k, &jkey, scope)?;
        let Target::Element(el) = target else {
            return Err(format_err(&jkey, k, format!("jump outside the state{}: a boundary value cannot change", scope_text(scope))));
        };
        let amount = r.constant(v, &format!("{jkey}.\"{k}\""), scope)?;
        // an entry is a fraction of the N objects: a jump moves it by `amount / N`, so a change
        // beyond a million objects per event is an error in the file, not a model
        if !(amount.is_finite() && amount.abs() <= MAX_JUMP) {
            return Err(out_of_range(&format!("{jkey}.\"{k}\""), amount, "a finite change of at most 1e6 in size (objects per event)"));
        }
        match changes.iter_mut().find(|(e, _)| *e == el) {
            Some(c) => c.1 += amount,
            None => changes.push((el, amount)),
        }
    }
    validate::check_jump_keeps_laws(key, scope, &changes, laws)?;
    let reduced: Vec<(usize, f64)> = changes.iter().filter_map(|&(e, a)| slot_of[e].filter(|_| a != 0.0).map(|s| (s, a))).collect();
    if reduced.is_empty() {
        return Err(ModelError::declaration(format!("{key}.jump{}", scope_text(scope)), "changes no state variable"));
    }
    Ok(reduced)
}

/// The drift program (the rates, grouped by shape), the Jacobian program (the rates' symbolic
/// derivatives, grouped by shape; each charged to the node budget) and the Jacobian's sparsity.
fn compile_programs(r: &Resolver, rates: &[Node], jumps: &[(usize, f64)], jump_ptr: &[usize], dim: usize) -> Result<Programs, ModelError> {
    // compile the drift
    let rate_refs: Vec<&Node> = rates.iter().collect();
    let items: Vec<u32> = (0..rates.len() as u32).collect();
    let drift_blocks = program::compile_blocks(&rate_refs, &items);
    // the Jacobian: symbolic derivatives, grouped by shape
    let mut jac_items = Vec::new();
    let mut derivs = Vec::new();
    r.check_deadline("compiling the drift")?;
    for (i, rate) in rates.iter().enumerate() {
        if i % 1024 == 1023 {
            r.check_deadline("the symbolic Jacobian")?;
        }
        for (j, d) in node::gradient(rate) {
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
    let sparsity = choose_sparsity(dim, &jac_items, jumps, jump_ptr);
    let scratch = drift_blocks.iter().chain(&jac_blocks).map(Block::scratch_len).max().unwrap_or(0);
    Ok(Programs { drift_blocks, jac_items, jac_blocks, sparsity, scratch })
}

/// The observables: the tail family's elements, the arrival rate (a constant), loss,
/// probability of waiting and extras (expressions in the state; the scalar variables come
/// first among the extras).
fn observables(r: &Resolver, spec: &GenericSpec, tail_family: Option<usize>) -> Result<Observe, ModelError> {
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
        validate::check_extra_name(r, spec, name)?;
        extras.push((name.clone(), state_expr(v, &format!("model.observables.extras.{name}"))?));
    }
    let tail = tail_family.map(|fi| {
        let f = &r.families[fi];
        (0..(f.last - f.first + 1) as usize).map(|k| r.subst[f.base + k].clone()).collect()
    });
    Ok(Observe { tail, arrival_rate, loss, prob_wait, extras })
}

/// The declared initial state (`[model.initial]`) in the slots; `None` when none is declared.
fn initial_state(r: &Resolver, spec: &GenericSpec, slot_of: &[Option<usize>]) -> Result<Option<Vec<f64>>, ModelError> {
    if spec.initial.is_empty() {
        return Ok(None);
    }
    let n_elements = r.element_names.len();
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
    validate::check_initial_laws(r, slot_of, &values, &given, &x)?;
    Ok(Some(x))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Jump vectors as `(jumps, jump_ptr)`.
    fn pack(vectors: &[Vec<(usize, f64)>]) -> (Vec<(usize, f64)>, Vec<usize>) {
        let mut ptr = vec![0];
        let mut jumps = Vec::new();
        for v in vectors {
            jumps.extend_from_slice(v);
            ptr.push(jumps.len());
        }
        (jumps, ptr)
    }

    /// `c . v` for every vector, and `c` not zero.
    fn conserved_by_all(c: &[f64], vectors: &[Vec<(usize, f64)>]) -> bool {
        c.iter().any(|a| *a != 0.0) && vectors.iter().all(|v| v.iter().map(|&(j, a)| c[j] * a).sum::<f64>().abs() < 1e-9)
    }

    /// The M/M/1/K chain in occupancy form, `y_0..y_K` with moves `y_k -> y_(k+1)` and back: the
    /// sum is conserved, found as all ones, at K = 200,000 (about `4 K` operations, where the
    /// dense orthogonalisation needed `8 K^3` and was skipped above K ~ 500); the tail form
    /// `x_1..x_K` (arrivals `+1`, departures `-1` at one level) conserves nothing; two separate
    /// chains conserve their two sums, and the vector found is conserved by every jump.
    #[test]
    fn conserved_quantities_by_sparse_elimination() {
        let k = 200_000;
        let chain = |base: usize, k: usize| -> Vec<Vec<(usize, f64)>> {
            (0..k).flat_map(|i| [vec![(base + i, -1.0), (base + i + 1, 1.0)], vec![(base + i + 1, -1.0), (base + i, 1.0)]]).collect()
        };
        let moves = chain(0, k);
        let (jumps, ptr) = pack(&moves);
        let c = undeclared_conservation(&jumps, &ptr, k + 1).expect("the sum is conserved");
        assert!(c.iter().all(|a| *a == 1.0));
        let tail: Vec<Vec<(usize, f64)>> = (0..500).flat_map(|i| [vec![(i, 1.0)], vec![(i, -1.0)]]).collect();
        let (jumps, ptr) = pack(&tail);
        assert_eq!(undeclared_conservation(&jumps, &ptr, 500), None);
        let mut two = chain(0, 30);
        two.extend(chain(31, 19));
        // a move that changes both chains at once, 2 y_0 -> 3 y_31 (weights of the two sums 3, 2)
        two.push(vec![(0, -2.0), (31, 3.0)]);
        let (jumps, ptr) = pack(&two);
        let c = undeclared_conservation(&jumps, &ptr, 51).expect("a weighted sum is conserved");
        assert!(conserved_by_all(&c, &two), "{c:?}");
        assert!((c[0] - 1.0).abs() < 1e-12 && (c[31] - 2.0 / 3.0).abs() < 1e-12, "{c:?}");
    }
}
