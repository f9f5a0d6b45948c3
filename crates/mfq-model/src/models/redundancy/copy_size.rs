//! The size law of identical copies (`[model.job_size]` of a redundancy model with
//! `copies = "identical"`): any phase-type law of [`JobSizeSpec`], or a deterministic size.
//!
//! All copies of a job carry the **same** size `X` (Anton, Ayesta, Jonckheere, Verloop, "On the
//! stability of redundancy models", Oper. Res. 69(5), 2021: "identical copies"); a copy served
//! at speed `nu` finishes after `X / nu` of service time, and the job leaves when its first copy
//! finishes. docs/models/redundancy.md, "Identical copies with general sizes and speeds".

use crate::models::phase_type::{JobSizeSpec, PhaseType};
use crate::{out_of_range, ModelError};
use serde::{Deserialize, Serialize};

/// The job-size law of identical copies as written in a model file.
///
/// ```toml
/// [model.job_size]
/// law = "deterministic"   # or any law of JobSizeSpec: exponential | h2 | erlang | coxian | phase-type
/// mean = 1.0
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum CopySizeSpec {
    /// Every job has size `mean` (`> 0`, default 1).
    Deterministic {
        /// The size of every job.
        mean: f64,
    },
    /// A phase-type law ([`JobSizeSpec`]).
    PhaseType(JobSizeSpec),
}

impl Default for CopySizeSpec {
    fn default() -> Self {
        CopySizeSpec::PhaseType(JobSizeSpec::default())
    }
}

/// The keys of a deterministic size law besides `law`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeterministicKeys {
    #[serde(default = "one")]
    mean: f64,
}

fn one() -> f64 {
    1.0
}

impl<'de> Deserialize<'de> for CopySizeSpec {
    /// Reads a `[model.job_size]` table: `law = "deterministic"` here, any other law through
    /// [`JobSizeSpec`]; errors start with their key relative to the table (`.mean: ...`).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = toml::Value::deserialize(deserializer)?;
        let deterministic = matches!(&value, toml::Value::Table(t) if t.get("law").and_then(|l| l.as_str()) == Some("deterministic"));
        if deterministic {
            let toml::Value::Table(mut table) = value else { unreachable!("checked above") };
            table.remove("law");
            let keys: DeterministicKeys = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
                let path = crate::spec::dotted_path("", e.path().iter());
                D::Error::custom(format!("{path}: {}", e.into_inner().message()))
            })?;
            return Ok(CopySizeSpec::Deterministic { mean: keys.mean });
        }
        JobSizeSpec::deserialize(value).map(CopySizeSpec::PhaseType).map_err(D::Error::custom)
    }
}

impl Serialize for CopySizeSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            CopySizeSpec::Deterministic { mean } => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("law", "deterministic")?;
                map.serialize_entry("mean", mean)?;
                map.end()
            }
            CopySizeSpec::PhaseType(spec) => spec.serialize(serializer),
        }
    }
}

/// A validated job-size law of identical copies.
#[derive(Debug, Clone, PartialEq)]
pub enum CopySize {
    /// Every job has this size (`> 0`).
    Deterministic(f64),
    /// A phase-type law.
    PhaseType(PhaseType),
}

impl CopySize {
    /// The unit-mean exponential law (the sizes of Anton et al.'s theorems).
    pub fn exponential() -> Self {
        CopySize::PhaseType(PhaseType::exponential(1.0).expect("mean 1 is valid"))
    }

    /// Mean size `E[X]`.
    pub fn mean(&self) -> f64 {
        match self {
            CopySize::Deterministic(x) => *x,
            CopySize::PhaseType(ph) => ph.mean(),
        }
    }

    /// Whether the law is exponential.
    pub fn is_exponential(&self) -> bool {
        matches!(self, CopySize::PhaseType(ph) if ph.is_exponential())
    }

    /// Short description (`deterministic 1`, `H2(mean 1, SCV 9, f 0.5)`, ...).
    pub fn label(&self) -> String {
        match self {
            CopySize::Deterministic(x) => format!("deterministic {}", crate::short_number(*x)),
            CopySize::PhaseType(ph) => ph.label().to_string(),
        }
    }
}

impl CopySizeSpec {
    /// The validated law.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.job_size.mean` (deterministic: finite, `> 0`) or
    /// the field of the phase-type law ([`JobSizeSpec::to_phase_type`]).
    pub fn to_law(&self) -> Result<CopySize, ModelError> {
        match self {
            CopySizeSpec::Deterministic { mean } => {
                if !(mean.is_finite() && *mean > 0.0) {
                    return Err(out_of_range("model.job_size.mean", mean, "a finite number > 0 (the size of every job)"));
                }
                Ok(CopySize::Deterministic(*mean))
            }
            CopySizeSpec::PhaseType(spec) => spec.to_phase_type().map(CopySize::PhaseType),
        }
    }
}

/// Largest number of server speeds (`K`) accepted in `model.speeds`.
pub const MAX_SPEEDS: usize = 10_000;

/// Checks the server speeds of identical copies: `K = speeds.len()` in `[d, 10000]`, every
/// speed finite and `> 0` (work per unit time).
///
/// # Errors
/// [`ModelError::OutOfRange`] naming `model.speeds` or `model.speeds[i]`.
pub fn check_speeds(speeds: &[f64], d: u32) -> Result<(), ModelError> {
    if speeds.len() < d as usize || speeds.len() > MAX_SPEEDS {
        return Err(out_of_range(
            "model.speeds",
            format!("{} speeds", speeds.len()),
            &format!("between d = {d} and {MAX_SPEEDS} speeds, one per server (the d copies go to distinct servers)"),
        ));
    }
    for (i, &v) in speeds.iter().enumerate() {
        if !(v.is_finite() && v > 0.0) {
            return Err(out_of_range(&format!("model.speeds[{i}]"), v, "a finite speed > 0 (work per unit time)"));
        }
    }
    Ok(())
}
