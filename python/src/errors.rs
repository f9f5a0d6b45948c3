//! Rust errors as the Python exceptions of `mfq/_errors.py`, with their fields.

use mfq::errors::{CheckError, ExactError, FixedPointError, ModelError, OdeError, RefinedError, SimError};
use mfq::Error;
use pyo3::prelude::*;

/// What a Python exception carries: `InvalidInput(message, field, value, allowed)` or
/// `Unstable(message, reason)`.
enum Carried {
    Invalid { field: Option<String>, value: Option<String>, allowed: String },
    Unstable { reason: String },
}

fn invalid(field: impl Into<String>, value: impl Into<String>, allowed: impl Into<String>) -> Carried {
    Carried::Invalid { field: Some(field.into()), value: Some(value.into()), allowed: allowed.into() }
}

/// A model-file error: the dotted key it is about (`model.d: ...`) when the message starts with one.
fn model_error(e: &ModelError) -> Carried {
    match e {
        ModelError::OutOfRange { field, value, allowed } => invalid(field, value, allowed),
        ModelError::BadOverride { name, reason } => Carried::Invalid { field: Some(name.clone()), value: None, allowed: reason.clone() },
        ModelError::Declaration { at, message } => Carried::Invalid { field: Some(at.clone()), value: None, allowed: message.clone() },
        ModelError::File { message, .. } => {
            let field = message
                .split_once(": ")
                .map(|(key, _)| key)
                .filter(|key| ["model", "truncation", "title", "source"].iter().any(|top| key.starts_with(top)) && !key.contains(' '))
                .map(str::to_string);
            Carried::Invalid { field, value: None, allowed: e.to_string() }
        }
        other => Carried::Invalid { field: None, value: None, allowed: other.to_string() },
    }
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
        Error::Refined(RefinedError::WrongDimension { got, expected }) => {
            invalid("x", format!("{got} entries"), format!("{expected} entries"))
        }
        Error::Simulation(SimError::OutOfRange { field, value, allowed }) => invalid(field, value, allowed),
        Error::Simulation(SimError::Unsupported { kind, reason }) => invalid("kind", kind, reason),
        Error::Exact(ExactError::OutOfRange { field, value, allowed }) => invalid(field, value, allowed),
        Error::Exact(ExactError::NoTransitions { model }) => invalid("kind", model, e.to_string()),
        Error::InfeasibleStart { constraint, index, amount, rules } => {
            invalid("x0", format!("entry {index} breaks {constraint} by {amount:.3e}"), format!("a feasible state ({rules})"))
        }
        Error::StateSize { entries, dim, levels } => {
            invalid("x", format!("{entries} entries"), format!("{dim} entries (the model's states at K = {levels})"))
        }
        Error::Read { path, reason } => invalid("path", path, format!("a readable model file ({reason})")),
        other => Carried::Invalid { field: None, value: None, allowed: other.to_string() },
    }
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
    };
    Ok(PyErr::from_value(value))
}
