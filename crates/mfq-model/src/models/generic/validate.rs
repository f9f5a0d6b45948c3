//! Checks of a generic model and the shape of their messages (`KEY = "SOURCE": message
//! (column C)`, or the key, the value and what is allowed): names, the truncation-level
//! parameter, family ranges and boundary values, conservation laws, jumps, the tail family and
//! the tail layout, the initial state, and rates `>= 0` at sampled feasible states. The checks
//! run in the order of the compilation (compile.rs), so that a file with several faults
//! reports the same first one.

use super::expr::{self, Kind};
use super::model::GenericModel;
use super::resolve::Resolver;
use super::{column, parse_expr, GenericSpec, SyntaxError};
use crate::{out_of_range, ModelError};

/// Random feasible states at which the rates are checked to be `>= 0` and finite.
pub const VALIDATION_SAMPLES: usize = 32;

/// The function names of the expression grammar (not allowed as names).
pub(super) const FUNCTIONS: [&str; 7] = ["exp", "log", "sqrt", "abs", "min", "max", "sum"];

// ---------------------------------------------------------------------------------------
// messages

pub(super) fn format_err(key: &str, src: &str, msg: impl std::fmt::Display) -> ModelError {
    ModelError::declaration(format!("{key} = \"{src}\""), msg)
}

pub(super) fn at_col(key: &str, src: &str, offset: usize, msg: impl std::fmt::Display) -> ModelError {
    format_err(key, src, format!("{msg} (column {})", column(src, offset)))
}

pub(super) fn syntax(key: &str, src: &str, e: SyntaxError) -> ModelError {
    at_col(key, src, e.offset, e.message)
}

pub(super) fn scope_text(scope: &[(String, i64)]) -> String {
    if scope.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = scope.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        format!(" at {}", parts.join(", "))
    }
}

// ---------------------------------------------------------------------------------------
// declarations

pub(super) fn check_name(key: &str, name: &str) -> Result<(), ModelError> {
    if !expr::is_name(name) {
        return Err(out_of_range(key, format!("\"{name}\""), "a name: a letter or '_', then letters, digits or '_'"));
    }
    if FUNCTIONS.contains(&name) {
        return Err(out_of_range(key, format!("\"{name}\""), "a name that is not a function (exp, log, sqrt, abs, min, max, sum)"));
    }
    Ok(())
}

/// A name for a new scalar variable or family: a valid name, not used by a parameter or
/// another variable.
pub(super) fn check_new_name(r: &Resolver, key: &str, name: &str) -> Result<(), ModelError> {
    check_name(key, name)?;
    if r.is_defined(name) {
        return Err(out_of_range(key, format!("\"{name}\""), "a name not used by another parameter or variable"));
    }
    Ok(())
}

/// The index of the truncation-level parameter `model.levels` among the parameters, when declared.
pub(super) fn levels_parameter(r: &Resolver, spec: &GenericSpec) -> Result<Option<usize>, ModelError> {
    let Some(p) = &spec.levels else {
        return Ok(None);
    };
    match r.param_ix.get(p) {
        Some(&i) => Ok(Some(i)),
        None => Err(out_of_range("model.levels", format!("\"{p}\""), "the name of a parameter (the truncation level K)")),
    }
}

/// A family `first..=last` (`range` in the file, key `rkey`) has at least one element, and the
/// state stays within `max_state` variables (`used` are declared already).
pub(super) fn check_family_size(rkey: &str, range: &str, first: i64, last: i64, used: usize, max_state: usize) -> Result<(), ModelError> {
    let size = last - first + 1;
    let room = max_state.saturating_sub(used) as i64;
    if !(1..=room).contains(&size) {
        return Err(out_of_range(
            rkey,
            format!("\"{range}\" = {first}..{last}"),
            &format!("a range a..b with b >= a, at most {max_state} state variables in all (see Limits)"),
        ));
    }
    Ok(())
}

/// The index `i` of a boundary key `k` = `family[i]` (key `bkey`): an element of that family
/// outside its range `first..=last`.
pub(super) fn boundary_index(r: &Resolver, bkey: &str, k: &str, family: &str, first: i64, last: i64) -> Result<i64, ModelError> {
    let e = parse_expr(k).map_err(|e| syntax(bkey, k, e))?;
    let Kind::Index(n, idx) = &e.kind else {
        return Err(format_err(bkey, k, format!("expected an element {family}[index]")));
    };
    if n != family {
        return Err(format_err(bkey, k, format!("names family '{n}', not '{family}'")));
    }
    let i = r.integer(idx, k, bkey, &mut Vec::new())?;
    if (first..=last).contains(&i) {
        return Err(format_err(bkey, k, format!("{family}[{i}] is a state variable (inside {first}..{last}), not a boundary value")));
    }
    Ok(i)
}

/// The names under which every model reports its observables beside the extras (the columns
/// of `mfq refined`'s `estimates.csv`, `mfq sweep`'s `sweep.csv` and the simulation sweep's
/// quantities, the keys of the JSON and of the Python results): an extra of one of these names
/// would make two columns or keys of one name (docs/models/generic.md). The tail's columns
/// `p_q_ge_<k>` are refused as well ([`check_extra_name`]).
pub(super) const OUTPUT_NAMES: [&str; 7] =
    ["servers", "mean_queue_length", "mean_response_time", "prob_wait", "throughput", "loss_probability", "mass_at_truncation"];

/// The name of an extra (`model.observables.extras.NAME`) is neither a state name (a scalar
/// variable, reported among the extras already, a family or one of its elements `x[k]`, which
/// the simulations report by name) nor an output name ([`OUTPUT_NAMES`], `p_q_ge_<k>`).
pub(super) fn check_extra_name(r: &Resolver, spec: &GenericSpec, name: &str) -> Result<(), ModelError> {
    let family =
        r.families.iter().map(|f| f.name.as_str()).find(|f| name == *f || name.strip_prefix(f).is_some_and(|rest| rest.starts_with('[')));
    let clash = if r.scalar_ix.contains_key(name) {
        format!("the state variable {name} (every scalar variable is reported among the extras already)")
    } else if let Some(f) = family {
        format!("the family {f} (its elements {f}[k] are state entries, reported by name)")
    } else if OUTPUT_NAMES.contains(&name) {
        format!("the output {name} (a column and key of every model's results)")
    } else if name.strip_prefix("p_q_ge_").is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())) {
        format!("the tail column {name} (P(Q >= k) in the CSV files)")
    } else {
        return Ok(());
    };
    let mut states: Vec<&str> = spec.variables.iter().map(String::as_str).collect();
    let families: Vec<String> = r.families.iter().map(|f| format!("{}[..]", f.name)).collect();
    states.extend(families.iter().map(String::as_str));
    Err(ModelError::declaration(
        format!("model.observables.extras.{name}"),
        format!(
            "the extra {name} has the name of {clash}; allowed: a name other than the state's ({}) and the outputs' ({}, p_q_ge_<k>)",
            if states.is_empty() { "none".to_string() } else { states.join(", ") },
            OUTPUT_NAMES.join(", ")
        ),
    ))
}

// ---------------------------------------------------------------------------------------
// conservation laws and jumps

/// Members of a conservation law (`sum`, key `KEY.sum`): a non-empty list of distinct
/// variables.
pub(super) fn check_law_members(key: &str, sum: &[String], members: &[usize]) -> Result<(), ModelError> {
    let mut sorted = members.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) || members.is_empty() {
        return Err(out_of_range(&format!("{key}.sum"), format!("{sum:?}"), "a non-empty list of distinct state variables"));
    }
    Ok(())
}

/// An eliminated variable appears in its own law only (`member_lists`: members, eliminated
/// element and value of each law; `eliminated_by`: the law eliminating each element).
pub(super) fn check_eliminated_once(
    member_lists: &[(Vec<usize>, usize, f64)],
    eliminated_by: &[Option<usize>],
    element_names: &[String],
) -> Result<(), ModelError> {
    for (li, (members, _, _)) in member_lists.iter().enumerate() {
        for &m in members {
            if let Some(other) = eliminated_by[m] {
                if other != li {
                    return Err(ModelError::declaration(
                        format!("model.conservation[{li}].sum"),
                        format!(
                            "{} is eliminated by model.conservation[{other}]; allowed: an eliminated variable appears in one law only (set eliminate = ...)",
                            element_names[m]
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The jump `changes` (element, change) of an instance of transition `key` keeps every
/// conservation law (up to round-off); `laws`: each law's members, sorted.
pub(super) fn check_jump_keeps_laws(
    key: &str,
    scope: &[(String, i64)],
    changes: &[(usize, f64)],
    laws: &[Vec<usize>],
) -> Result<(), ModelError> {
    for (li, members) in laws.iter().enumerate() {
        let net: f64 = changes.iter().filter(|(e, _)| members.binary_search(e).is_ok()).map(|(_, a)| a).sum();
        let scale: f64 = changes.iter().map(|(_, a)| a.abs()).sum::<f64>().max(1.0);
        if net.abs() > 1e-12 * scale {
            return Err(ModelError::declaration(
                format!("{key}.jump{}", scope_text(scope)),
                format!("changes the sum of model.conservation[{li}] by {net}; allowed: jumps that keep every declared conservation law"),
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// tail, layout, initial state

/// The family holding the queue-length tail: `observables.tail`, else the only family with
/// `tail = true` (none if there are several); it must be indexed from 1.
pub(super) fn tail_family(r: &Resolver, spec: &GenericSpec) -> Result<Option<usize>, ModelError> {
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
    Ok(tail_family)
}

/// A truncation-level parameter `p` (`model.levels`) needs a tail-form state: exactly one
/// family, with `tail = true` and range `1..p`.
pub(super) fn check_levels_layout(r: &Resolver, spec: &GenericSpec, p: &str) -> Result<(), ModelError> {
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
    Ok(())
}

/// The values given in `[model.initial]` for eliminated variables (`given`, `values`, by
/// element) agree with the conservation laws at the initial state `x` (in the slots).
pub(super) fn check_initial_laws(
    r: &Resolver,
    slot_of: &[Option<usize>],
    values: &[f64],
    given: &[bool],
    x: &[f64],
) -> Result<(), ModelError> {
    let n_elements = r.element_names.len();
    for e in 0..n_elements {
        if slot_of[e].is_none() && given[e] {
            let implied = r.subst[e].eval(x);
            if (implied - values[e]).abs() > 1e-9 {
                return Err(ModelError::declaration(
                    "model.initial",
                    format!(
                        "{} = {} but the conservation law gives {implied}; allowed: values that satisfy the declared conservation laws",
                        r.element_names[e], values[e]
                    ),
                ));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// rates at sampled feasible states

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

/// The rates at `x` are `>= 0` and finite, and so are their derivatives (the Jacobian the
/// solvers use); the error names the transition, its index values, the variable and the state.
fn check_rates_at(model: &GenericModel, spec: &GenericSpec, labels: &[(usize, String)], x: &[f64]) -> Result<(), ModelError> {
    let dim = model.names.len();
    let state = || {
        let shown: Vec<String> = model.names.iter().zip(x).take(8).map(|(n, v)| format!("{n} = {v:.4}")).collect();
        format!("{}{}", shown.join(", "), if dim > 8 { ", ..." } else { "" })
    };
    let transition = |i: usize| {
        let (ti, at) = &labels[i];
        let t = &spec.transitions[*ti];
        let named = t.name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
        (format!("model.transitions[{ti}].rate{named}"), format!("\"{}\"{at}", t.rate.source()))
    };
    let mut bad: Option<(usize, f64)> = None;
    model.for_each_rate(x, &mut |i, rate| {
        if bad.is_none() && !(rate >= -1e-12 && rate.is_finite()) {
            bad = Some((i, rate));
        }
    });
    if let Some((i, rate)) = bad {
        let (field, rate_text) = transition(i);
        return Err(ModelError::OutOfRange {
            field,
            value: format!("{rate_text} = {rate:.4e} at the feasible state ({})", state()),
            allowed:
                "a rate >= 0 and finite at every feasible state (entries in [0, 1], tail families non-increasing, conservation laws kept)"
                    .into(),
        });
    }
    let mut bad: Option<(usize, usize, f64)> = None;
    model.for_each_rate_derivative(x, |i, col, d: f64| {
        if bad.is_none() && !d.is_finite() {
            bad = Some((i, col, d));
        }
    });
    if let Some((i, col, d)) = bad {
        let (field, rate_text) = transition(i);
        let mut rate = f64::NAN;
        model.for_each_rate(x, &mut |j, r| {
            if j == i {
                rate = r;
            }
        });
        return Err(ModelError::OutOfRange {
            field,
            value: format!(
                "{rate_text} = {rate:.4e} is finite but its derivative with respect to {} is {} at the state ({})",
                model.names[col],
                non_finite_words(d),
                state()
            ),
            allowed: "a rate whose derivatives are finite at every feasible state (the solvers use the Jacobian; a floor such \
                      as max(x, 1e-290) in a denominator overflows the derivative: use a floor such as 1e-12)"
                .into(),
        });
    }
    Ok(())
}

/// A non-finite number in words, for messages (an output never prints `inf` or `NaN`).
fn non_finite_words(d: f64) -> &'static str {
    if d.is_nan() {
        "undefined (0/0 or an infinite difference)"
    } else if d > 0.0 {
        "infinite (positive: it overflows)"
    } else {
        "infinite (negative: it overflows)"
    }
}

/// `clamp(u_i + t, 0, 1)` for the shift `t` at which they sum to `value` (in `[0, n]` for `n`
/// entries, [`check_law_value`]): a feasible state of the law `sum = value` with every entry in
/// `[0, 1]` and the order of `u` kept (a tail family stays non-increasing). The sum is
/// nondecreasing and continuous in `t`, from 0 at `t = -1` to `n` at `t = 1`: bisection.
fn shift_to_sum(u: &[f64], value: f64) -> Vec<f64> {
    let at = |t: f64| u.iter().map(|x| (x + t).clamp(0.0, 1.0)).sum::<f64>();
    let (mut lo, mut hi) = (-1.0_f64, 1.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if at(mid) < value {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = 0.5 * (lo + hi);
    u.iter().map(|x| (x + t).clamp(0.0, 1.0)).collect()
}

/// The value of a conservation law (key `KEY.value`) over `members` state entries, each in
/// `[0, 1]`: in `[0, members]`, else no state is feasible.
///
/// # Errors
/// [`ModelError::OutOfRange`] naming `KEY.value`, the value and the allowed range.
pub(super) fn check_law_value(key: &str, value: f64, members: usize) -> Result<(), ModelError> {
    if !(value.is_finite() && (0.0..=members as f64).contains(&value)) {
        return Err(out_of_range(
            &format!("{key}.value"),
            value,
            &format!("a number in [0, {members}]: the sum of the law's {members} members, each in [0, 1]"),
        ));
    }
    Ok(())
}

/// Every rate of `model` is `>= 0` (up to `-1e-12`) and finite at [`VALIDATION_SAMPLES`]
/// random feasible states: entries in (0, 1), tail families non-increasing, conservation laws
/// kept with every member (the eliminated one too) in [0, 1]: a law's members uniform on its
/// simplex when that draw is feasible, else their own draws shifted together to the law's
/// value ([`shift_to_sum`]; members shared by two laws keep the later law's values).
/// `labels` names the transition and index values of each instance.
/// Then the extremal states.
///
/// # Errors
/// [`ModelError::OutOfRange`] naming the transition's rate, its value and the state
/// ([`check_rates_at`]); [`ModelError::Interrupted`] past the deadline.
pub(super) fn check_rates(
    model: &GenericModel,
    spec: &GenericSpec,
    r: &Resolver,
    member_lists: &[(Vec<usize>, usize, f64)],
    slot_of: &[Option<usize>],
    labels: &[(usize, String)],
) -> Result<(), ModelError> {
    let n_elements = r.element_names.len();
    let dim = model.names.len();
    let mut in_tail = vec![false; n_elements];
    for f in r.families.iter().filter(|f| f.tail) {
        in_tail[f.base..f.base + (f.last - f.first + 1) as usize].iter_mut().for_each(|t| *t = true);
    }
    let mut rng = SplitMix(0x5eed_9e4e_71c0_de00);
    let mut values = vec![0.0; n_elements];
    let mut x = vec![0.0; dim];
    for _ in 0..VALIDATION_SAMPLES {
        r.check_deadline("the sampled rate checks")?;
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
        for (members, _, value) in member_lists {
            let w: Vec<f64> = members.iter().map(|_| -rng.next_f64().ln()).collect();
            let total: f64 = w.iter().sum();
            let uniform: Vec<f64> = w.iter().map(|wm| value * wm / total).collect();
            // uniform on the simplex when that is feasible: every member in [0, 1] (always for a
            // value <= 1) and none in a tail family (the draw does not keep the order); else the
            // members' own draws shifted together until they sum to the value
            let feasible = uniform.iter().all(|v| *v <= 1.0) && !members.iter().any(|m| in_tail[*m]);
            let own: Vec<f64> = members.iter().map(|m| values[*m]).collect();
            let fitted = if feasible { uniform } else { shift_to_sum(&own, *value) };
            for (m, v) in members.iter().zip(fitted) {
                values[*m] = v;
            }
        }
        for e in 0..n_elements {
            if let Some(s) = slot_of[e] {
                x[s] = values[e];
            }
        }
        check_rates_at(model, spec, labels, &x)?;
    }
    // the extremal states too: the solvers start there (a floor such as max(x, 1e-290) in a
    // denominator is finite at random states and overflows its derivative at the empty state)
    for state in crate::MeanFieldModel::extremal_states(model) {
        check_rates_at(model, spec, labels, &state.x)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shifted draws sum to the law's value, stay in [0, 1] and keep their order (a tail
    /// family stays non-increasing), for values below and above 1 and at the ends.
    #[test]
    fn shifted_draws_sum_to_the_value_in_range_and_in_order() {
        let u = [0.9, 0.7, 0.4, 0.35, 0.1];
        for value in [0.0, 0.3, 1.0, 2.2, 3.0, 4.7, 5.0] {
            let x = shift_to_sum(&u, value);
            let sum: f64 = x.iter().sum();
            assert!((sum - value).abs() < 1e-12, "{value}: {x:?}");
            assert!(x.iter().all(|v| (0.0..=1.0).contains(v)), "{value}: {x:?}");
            assert!(x.windows(2).all(|w| w[0] >= w[1]), "{value}: {x:?}");
        }
        assert!(check_law_value("model.conservation[0]", 5.5, 5).unwrap_err().to_string().contains("a number in [0, 5]"));
        assert!(check_law_value("model.conservation[0]", -0.1, 5).is_err() && check_law_value("k", 5.0, 5).is_ok());
    }
}
