//! Rust errors as the Python exceptions of `mfq/_errors.py`, with their fields.

use mfq::errors::{CheckError, ExactError, FixedPointError, ModelError, OdeError, RefinedError, SimError};
use mfq::Error;
use pyo3::prelude::*;

/// What a Python exception carries: `InvalidInput(message, field, value, allowed)`,
/// `Unstable(message, reason)` or `NotConverged(message, status)` (a job the deadline stopped
/// before it had a result).
enum Carried {
    Invalid { field: Option<String>, value: Option<String>, allowed: String },
    Unstable { reason: String },
    Stopped,
    NotConverged,
}

fn invalid(field: impl Into<String>, value: impl Into<String>, allowed: impl Into<String>) -> Carried {
    Carried::Invalid { field: Some(field.into()), value: Some(value.into()), allowed: allowed.into() }
}

/// A model-file error: the dotted key it is about (`model.d: ...`) when the message starts with one.
fn model_error(e: &ModelError) -> Carried {
    match e {
        ModelError::OutOfRange { field, value, allowed } => invalid(field, value, allowed),
        // the first transition that leaves the state space: its field and what it does
        ModelError::LeavesStateSpace { transitions, .. } if !transitions.is_empty() => {
            invalid(&transitions[0].0, &transitions[0].1, mfq::errors::OUTWARD_ALLOWED)
        }
        ModelError::BadOverride { name, reason } => Carried::Invalid { field: Some(name.clone()), value: None, allowed: reason.clone() },
        ModelError::Declaration { at, message } => Carried::Invalid { field: Some(at.clone()), value: None, allowed: message.clone() },
        ModelError::File { message, position, after_set } => {
            let field = message
                .split_once(": ")
                .map(|(key, _)| key)
                .filter(|key| ["model", "truncation", "title", "source"].iter().any(|top| key.starts_with(top)) && !key.contains(' '))
                .map(str::to_string);
            let value = field.as_deref().and_then(|f| file_value(f, position.as_ref().map(|p| p.text.as_str()), after_set.as_deref()));
            Carried::Invalid { field, value, allowed: e.to_string() }
        }
        ModelError::Interrupted { .. } => Carried::Stopped,
        other => Carried::Invalid { field: None, value: None, allowed: other.to_string() },
    }
}

/// The value (TOML text) given for the dotted key `field` of a model-file error (a value of the
/// wrong type: `d = 2.0`, `lambda = "0.5"`): from the file's line the error points at (`KEY =
/// VALUE`, when its key is the field's last part and the line was not cut to the 60 characters of
/// [`mfq_model::FilePosition::text`]), else from the `--set NAME=VALUE` override naming the field.
/// `None` when neither gives it (a missing key, a malformed file).
fn file_value(field: &str, line: Option<&str>, after_set: Option<&str>) -> Option<String> {
    let last = field.rsplit('.').next().unwrap_or(field);
    let last = last.split('[').next().unwrap_or(last);
    let from_line = line
        .filter(|l| l.chars().count() < 60)
        .and_then(|l| l.split_once('='))
        .and_then(|(key, value)| (key.trim().trim_matches('"') == last && !value.trim().is_empty()).then(|| value.trim().to_string()));
    from_line.or_else(|| {
        let short = field.strip_prefix("model.").unwrap_or(field);
        after_set?
            .split(" --set ")
            .find_map(|o| o.split_once('=').filter(|(name, _)| *name == field || *name == short).map(|(_, v)| v.to_string()))
    })
}

fn fixed_point_error(e: &FixedPointError) -> Carried {
    match e {
        FixedPointError::Model(m) => model_error(m),
        FixedPointError::Unstable { reason } => Carried::Unstable { reason: reason.clone() },
        FixedPointError::OutOfRange { field, value, allowed } => invalid(*field, value, *allowed),
        FixedPointError::TruncationTooSmall { levels, mass, tol } => invalid(
            "truncation.levels",
            levels.to_string(),
            format!("a K with x_K < truncation.tol = {tol:e} (here x_K = {mass:.3e}), no truncation.levels (K chosen automatically), or truncation.buffer = true (K is the system's finite buffer)"),
        ),
        other => Carried::Invalid { field: None, value: None, allowed: other.to_string() },
    }
}

fn ode_error(e: &OdeError) -> Carried {
    match e {
        OdeError::WrongDimension { got, expected } => invalid("x0", format!("{got} entries"), format!("{expected} entries")),
        OdeError::OutOfRange { field, value, allowed } => invalid(*field, value, *allowed),
        other => Carried::Invalid { field: None, value: None, allowed: other.to_string() },
    }
}

fn carried(e: &Error) -> Carried {
    match e {
        Error::Model(m) => model_error(m),
        Error::FixedPoint(f) => fixed_point_error(f),
        Error::Transient(o) => ode_error(o),
        Error::Check(CheckError::OutOfRange { field, value, allowed }) => invalid(*field, value, *allowed),
        Error::Check(CheckError::FixedPoint(f)) => fixed_point_error(f),
        Error::Check(CheckError::Integration { start, source }) => match ode_error(source) {
            Carried::Invalid { value, allowed, .. } => Carried::Invalid { field: Some(format!("start '{start}'")), value, allowed },
            u => u,
        },
        Error::Refined(RefinedError::NoTransitions { model } | RefinedError::NotSmooth { model }) => invalid("kind", model, e.to_string()),
        Error::Refined(RefinedError::BadOption { field, value, allowed }) => invalid(field, value, allowed),
        Error::Refined(RefinedError::Stopped { .. }) => Carried::Stopped,
        Error::Refined(RefinedError::TooLarge { n, levels, limit, .. }) => match levels {
            Some(k) => invalid(
                "truncation.levels",
                k.to_string(),
                format!("a truncation level whose refined terms fit in the memory limit of {limit} bytes"),
            ),
            None => invalid(
                "truncation.levels",
                format!("{n} state entries"),
                format!("a state whose refined terms fit in the memory limit of {limit} bytes"),
            ),
        },
        Error::NotConverged { .. } => Carried::NotConverged,
        Error::Refined(RefinedError::WrongDimension { got, expected }) => {
            invalid("x", format!("{got} entries"), format!("{expected} entries"))
        }
        Error::Simulation(SimError::OutOfRange { field, value, allowed }) => invalid(field, value, allowed),
        Error::Simulation(SimError::Unsupported { kind, reason }) => invalid("kind", kind, reason),
        Error::Exact(ExactError::OutOfRange { field, value, allowed }) => invalid(field, value, allowed),
        Error::Exact(ExactError::NoTransitions { model }) => invalid("kind", model, e.to_string()),
        // the option that refused the chain: `max_states` (its value), with the chain's size
        Error::Exact(ExactError::TooManyStates { estimate, limit }) => invalid(
            "max_states",
            limit.to_string(),
            match estimate {
                Some(n) => format!("an integer >= the chain's {n:.3e} states (~300 bytes per state), or fewer servers or a smaller buffer"),
                None => format!("an integer above the chain's size (more than {limit} states; ~300 bytes per state), or fewer servers or a smaller buffer"),
            },
        ),
        Error::InfeasibleStart { constraint, index, amount, rules } => {
            invalid("x0", format!("entry {index} breaks {constraint} by {amount:.3e}"), format!("a feasible state ({rules})"))
        }
        Error::BrokenLaw { law, members, sum, allowed } => invalid("x0", format!("{members} = {sum} (the law {law})"), allowed),
        Error::StateSize { entries, dim, levels } => {
            invalid("x", format!("{entries} entries"), format!("{dim} entries (the model's states at K = {levels})"))
        }
        Error::StateEntries { entries, dim, names } => invalid("x", entry_count(*entries), state_entries_allowed(*dim, names)),
        Error::Read { path, reason } => invalid("path", path, format!("a readable model file ({reason})")),
        Error::NoInitialState { .. } => invalid("x0", "'initial'", e.to_string()),
        other => Carried::Invalid { field: None, value: None, allowed: other.to_string() },
    }
}

/// `1 entry` or `n entries`.
fn entry_count(n: usize) -> String {
    if n == 1 {
        "1 entry".to_string()
    } else {
        format!("{n} entries")
    }
}

/// The `.allowed` of [`Error::StateEntries`]: the model's state entries, `dim` of them named
/// `names` (the first six), at every truncation level (its size has none).
fn state_entries_allowed(dim: usize, names: &str) -> String {
    format!("{} ({names}; the same at every truncation level)", entry_count(dim))
}

/// `mfq.InvalidInput(message, field, value, allowed)` raised by the binding itself (a check
/// of its own arguments, not a Rust error).
pub fn invalid_input(py: Python<'_>, message: String, field: &str, value: String, allowed: &str) -> PyErr {
    new_invalid_input(py, message, Some(field.to_string()), Some(value), allowed.to_string())
}

/// `mfq.InvalidInput(message, field, value, allowed)`, `field` and `value` `None` where absent
/// (or the error met in making it).
fn new_invalid_input(py: Python<'_>, message: String, field: Option<String>, value: Option<String>, allowed: String) -> PyErr {
    let made = py
        .import("mfq._errors")
        .and_then(|m| m.getattr("InvalidInput"))
        .and_then(|cls| cls.call1((message, field, value, allowed)))
        .map(PyErr::from_value);
    match made {
        Ok(err) => err,
        Err(err) => err,
    }
}

/// The Python exception for an error about a state the caller passed as the argument `field`
/// (`"x"` of `drift` and `jacobian`, `"x0"` of `fixed_point` and `solve`): a state of the wrong
/// size ([`Error::StateSize`], [`Error::StateEntries`] for a model whose size has no truncation
/// level) or outside the state space ([`Error::InfeasibleStart`],
/// [`Error::BrokenLaw`]: a conservation law broken) names
/// `field`, in `.field` and in the message; any other error as [`to_py`].
pub fn state_to_py(py: Python<'_>, e: &Error, field: &str) -> PyErr {
    let (value, allowed) = match e {
        Error::InfeasibleStart { constraint, index, amount, rules } => {
            (format!("entry {index} breaks {constraint} by {amount:.3e}"), format!("a feasible state ({rules})"))
        }
        Error::BrokenLaw { law, members, sum, allowed } => (format!("{members} = {sum} (the law {law})"), allowed.clone()),
        Error::StateSize { entries, dim, levels } => {
            (format!("{entries} entries"), format!("{dim} entries (the model's states at K = {levels})"))
        }
        Error::StateEntries { entries, dim, names } => (entry_count(*entries), state_entries_allowed(*dim, names)),
        _ => return to_py(py, e),
    };
    // the front door's messages say `x0 breaks ...` (a start) and `x has ...` (a drift's state)
    let text = e.to_string();
    let rest = text.strip_prefix("x0 ").or_else(|| text.strip_prefix("x ")).unwrap_or(&text);
    invalid_input(py, format!("{field} {rest}"), field, value, &allowed)
}

/// The Python exception for `e`: `mfq.InvalidInput` (`.field`, `.value`, `.allowed`) or
/// `mfq.Unstable` (`.reason`), with the Rust message as its text.
pub fn to_py(py: Python<'_>, e: &Error) -> PyErr {
    match make(py, e) {
        Ok(err) => err,
        Err(err) => err,
    }
}

fn make(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    let module = py.import("mfq._errors")?;
    let message = e.to_string();
    let value = match carried(e) {
        Carried::Invalid { field, value, allowed } => module.getattr("InvalidInput")?.call1((message, field, value, allowed))?,
        Carried::Unstable { reason } => module.getattr("Unstable")?.call1((message, reason))?,
        Carried::Stopped => module.getattr("NotConverged")?.call1((message, "stopped"))?,
        Carried::NotConverged => module.getattr("NotConverged")?.call1((message, "not-converged"))?,
    };
    Ok(PyErr::from_value(value))
}

/// Where the text and the overrides of a model built from Python come from, for the words of
/// its errors: the front door's say `after --set NAME=VALUE` (the CLI's option) and `TOML parse
/// error at line L, column C` (a line of the file).
pub struct Origin<'a> {
    /// The text was written from a dict (`mfq.Model(spec, **params)`): a line of it means
    /// nothing to the caller, who gave keys.
    pub dict: bool,
    /// The Python call that took the overrides (`with_`, `Model.from_toml`).
    pub call: &'a str,
    /// The overrides (`NAME=VALUE`, the value as TOML text).
    pub overrides: &'a [String],
}

/// The overrides as the Python call's keyword arguments: `with_(lam=0.95, d="two")`, a dotted
/// name as `**{"truncation.levelz": 3}` (`lambda`, a Python keyword, is given as `lam`).
fn call_text(origin: &Origin<'_>) -> String {
    let args: Vec<String> = origin
        .overrides
        .iter()
        .map(|o| {
            let (name, value) = o.split_once('=').unwrap_or((o.as_str(), ""));
            let name = name.trim();
            let plain = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if plain {
                format!("{}={value}", python_keyword(name))
            } else {
                format!("**{{{}: {value}}}", serde_json::Value::String(name.to_string()))
            }
        })
        .collect();
    format!("{}({})", origin.call, args.join(", "))
}

/// The Python keyword of the model file's key `name`: `lam` for `lambda` (a Python keyword),
/// any other name as itself (a dotted one is given as `**{"truncation.levels": ...}`).
fn python_keyword(name: &str) -> &str {
    match name {
        "lambda" => "lam",
        other => other,
    }
}

/// `text` without the front door's `after --set NAME=VALUE: ` (the CLI's option, with the
/// assignments it parsed the file with): up to the `: ` that starts the file's message (a
/// dotted key `model.d: ...`, or `TOML parse error at ...`). Unchanged when there is none.
fn without_after_set(text: &str) -> String {
    let Some(at) = text.find("after --set ") else { return text.to_string() };
    let rest = &text[at..];
    let end = rest.match_indices(": ").map(|(i, _)| i + 2).find(|&i| {
        let next = &rest[i..];
        next.starts_with("TOML parse error") || ["model", "truncation", "title", "source"].iter().any(|top| next.starts_with(top))
    });
    match end {
        Some(end) => format!("{}{}", &text[..at], &rest[end..]),
        None => text.to_string(),
    }
}

/// The reason of a sweep point refused for its parameters (`mfq::sweep::PointStatus::Invalid`)
/// in Python's words: without the `after --set lambda=0.5 --set d=2.5: ` of the front door
/// (the CLI's option; the point's row holds its values), e.g. `model.d: invalid type: floating
/// point `2.5`, expected an integer in [1, 10000]`.
pub fn sweep_point_reason(reason: &str) -> String {
    without_after_set(reason)
}

/// The Python exception for an error of `mfq.sweep` (`mfq::sweep::sweep_models`): as
/// [`to_py`], with a refused axis named by the sweep's keyword argument instead of the CLI's
/// `--set NAME` (`mfq.sweep keyword lam: the value x is not allowed: model.lambda takes a
/// finite number ...`, `mfq.sweep keyword truncation.levles: ...`) and without the front door's
/// `after --set NAME=VALUE: ` in the message and `.allowed`; `.field` is the key the axis sets
/// (`lambda`, `truncation.levles`).
pub fn sweep_to_py(py: Python<'_>, e: &Error) -> PyErr {
    let Error::Model(ModelError::BadOverride { name, reason }) = e else { return to_py(py, e) };
    let Carried::Invalid { field, value, .. } = carried(e) else { return to_py(py, e) };
    let allowed = without_after_set(reason);
    let message =
        if name.is_empty() { format!("mfq.sweep: {allowed}") } else { format!("mfq.sweep keyword {}: {allowed}", python_keyword(name)) };
    new_invalid_input(py, message, field, value, allowed)
}

/// The message of a model error in the words of its Python `origin`, or `None` when the front
/// door's words are already right (no override, no position in a dict's text).
fn reworded(e: &Error, field: Option<&str>, origin: &Origin<'_>) -> Option<String> {
    match e {
        Error::Model(ModelError::File { position, after_set, message }) => {
            let head = if after_set.is_some() { format!("{}: ", call_text(origin)) } else { String::new() };
            let body = match (origin.dict, position) {
                // the dict's key (keyword) is the message's dotted key
                (true, _) if field.is_some() => format!("mfq.Model key {message}"),
                (true, _) => format!("mfq.Model: {message}"),
                (false, Some(p)) => format!("{p}{message}"),
                (false, None) => message.clone(),
            };
            (origin.dict || after_set.is_some()).then(|| format!("{head}{body}"))
        }
        Error::Model(ModelError::BadOverride { reason, .. }) if !origin.overrides.is_empty() => {
            Some(format!("{}: {reason}", call_text(origin)))
        }
        _ => None,
    }
}

/// The Python exception for an error of building a model from Python ([`Origin`]): as
/// [`to_py`], with the message (and `.allowed`, where it is the message) in the words of the
/// call that gave the input (`with_(d="two"): model.d: ...`, `mfq.Model key truncation.levelz:
/// ...`); `.field` and `.value` as the front door's error gives them.
pub fn model_to_py(py: Python<'_>, e: &Error, origin: &Origin<'_>) -> PyErr {
    let Carried::Invalid { field, value, allowed } = carried(e) else { return to_py(py, e) };
    let Some(message) = reworded(e, field.as_deref(), origin) else { return to_py(py, e) };
    let allowed = if allowed == e.to_string() { message.clone() } else { allowed };
    new_invalid_input(py, message, field, value, allowed)
}
