//! The TOML model-file format and `--set NAME=VALUE` overrides.
//!
//! ```toml
//! title = "JSQ(2) at lambda = 0.9"      # optional
//! source = "Mitzenmacher 2001"          # optional
//!
//! [model]
//! kind = "jsq"                          # see `mfq models`
//! lambda = 0.9
//! d = 2
//!
//! [truncation]                          # optional
//! tol = 1e-12                           # grow K until x_K < tol (default)
//! # levels = 40                         # or fix K
//! max_levels = 100000
//! ```
//!
//! Unknown keys are errors. An override `NAME=VALUE` names a dotted path from the document
//! root (`truncation.levels=40`); a path whose first part is not a top-level key is taken
//! inside `[model]` (`lambda=0.95` sets `model.lambda`). `VALUE` is read as a TOML value
//! (`0.95`, `3`, `"jsq"`, `true`), or as a string when it is not one.

use crate::models::{Jiq, Jsq, PodLd, PodLi};
use crate::{MeanFieldModel, ModelError};
use serde::{Deserialize, Serialize};

/// A whole model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    /// Free-text title used in reports and plots.
    #[serde(default)]
    pub title: Option<String>,
    /// Where the parameters come from (paper, figure, table).
    #[serde(default)]
    pub source: Option<String>,
    /// The model and its parameters.
    pub model: ModelSpec,
    /// How the state is truncated.
    #[serde(default)]
    pub truncation: Truncation,
}

/// A built-in model with its parameters, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ModelSpec {
    /// JSQ(d) / power-of-d, see [`Jsq`].
    Jsq {
        /// Arrival rate per server.
        lambda: f64,
        /// Servers sampled per arrival (`>= 1`).
        d: u32,
    },
    /// Pod with load-independent comparison errors, see [`PodLi`].
    PodLi {
        /// Arrival rate per server.
        lambda: f64,
        /// Servers sampled per arrival.
        d: u32,
        /// Error probability in `[0, 1]`.
        eps: f64,
    },
    /// Pod with load-dependent comparison errors, see [`PodLd`].
    PodLd {
        /// Arrival rate per server.
        lambda: f64,
        /// Servers sampled per arrival.
        d: u32,
        /// Error probability in `[0, 1]`.
        eps: f64,
        /// Errors happen only when `max - min <= g` among the sampled queue lengths.
        g: u32,
    },
    /// Join-Idle-Queue, see [`Jiq`].
    Jiq {
        /// Arrival rate per server.
        lambda: f64,
    },
}

/// Truncation of the queue-length levels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Truncation {
    /// Fixed truncation level K; when absent K grows until `x_K < tol`.
    #[serde(default)]
    pub levels: Option<usize>,
    /// Target mass at the truncation level (default 1e-12).
    #[serde(default = "default_tol")]
    pub tol: f64,
    /// Largest K the automatic growth may reach (default 100000).
    #[serde(default = "default_max_levels")]
    pub max_levels: usize,
}

fn default_tol() -> f64 {
    1e-12
}
fn default_max_levels() -> usize {
    100_000
}

impl Default for Truncation {
    fn default() -> Self {
        Truncation { levels: None, tol: default_tol(), max_levels: default_max_levels() }
    }
}

impl Truncation {
    /// Checks the ranges of the truncation keys.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `truncation.levels`, `truncation.tol` or `truncation.max_levels`.
    pub fn validate(&self) -> Result<(), ModelError> {
        if let Some(k) = self.levels {
            if !(1..=10_000_000).contains(&k) {
                return Err(crate::out_of_range("truncation.levels", k, "an integer in [1, 10000000]"));
            }
        }
        if !(self.tol.is_finite() && self.tol > 0.0 && self.tol < 1.0) {
            return Err(crate::out_of_range("truncation.tol", self.tol, "a number in (0, 1)"));
        }
        if !(2..=10_000_000).contains(&self.max_levels) {
            return Err(crate::out_of_range("truncation.max_levels", self.max_levels, "an integer in [2, 10000000]"));
        }
        Ok(())
    }
}

impl ModelSpec {
    /// The `kind` key of this model.
    pub fn kind(&self) -> &'static str {
        match self {
            ModelSpec::Jsq { .. } => "jsq",
            ModelSpec::PodLi { .. } => "pod-li",
            ModelSpec::PodLd { .. } => "pod-ld",
            ModelSpec::Jiq { .. } => "jiq",
        }
    }

    /// Arrival rate per server.
    pub fn lambda(&self) -> f64 {
        match *self {
            ModelSpec::Jsq { lambda, .. }
            | ModelSpec::PodLi { lambda, .. }
            | ModelSpec::PodLd { lambda, .. }
            | ModelSpec::Jiq { lambda } => lambda,
        }
    }

    /// The model truncated at `levels` = K.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] when a parameter is outside its range (the field is named).
    pub fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(match *self {
            ModelSpec::Jsq { lambda, d } => Box::new(Jsq::new(lambda, d, levels)?),
            ModelSpec::PodLi { lambda, d, eps } => Box::new(PodLi::new(lambda, d, eps, levels)?),
            ModelSpec::PodLd { lambda, d, eps, g } => Box::new(PodLd::new(lambda, d, eps, g, levels)?),
            ModelSpec::Jiq { lambda } => Box::new(Jiq::new(lambda, levels.max(2))?),
        })
    }

    /// A first truncation level for the automatic growth (cheap models start small).
    pub fn initial_levels(&self) -> usize {
        16
    }
}

impl ModelFile {
    /// Parses a model file and applies `overrides` (`NAME=VALUE` strings), then checks every range.
    ///
    /// # Errors
    /// [`ModelError::Format`] for malformed TOML, unknown keys or kinds, wrong types (the
    /// message has the line and the key); [`ModelError::BadOverride`] for an override that
    /// names no key; [`ModelError::OutOfRange`] for a value outside its range.
    pub fn parse(text: &str, overrides: &[String]) -> Result<Self, ModelError> {
        let mut doc: toml::Table = text.parse().map_err(|e: toml::de::Error| ModelError::Format(e.to_string()))?;
        for o in overrides {
            apply_override(&mut doc, o)?;
        }
        let file: ModelFile = if overrides.is_empty() {
            toml::from_str(text).map_err(|e| ModelError::Format(e.to_string()))?
        } else {
            ModelFile::deserialize(doc)
                .map_err(|e| ModelError::Format(format!("after --set {}: {}", overrides.join(" --set "), e.to_string().trim_end())))?
        };
        file.truncation.validate()?;
        file.model.build(file.truncation.levels.unwrap_or(2).max(2))?;
        Ok(file)
    }
}

const TOP_LEVEL_KEYS: [&str; 4] = ["title", "source", "model", "truncation"];

/// Applies one `NAME=VALUE` override to a parsed model file (see the module docs).
///
/// # Errors
/// [`ModelError::BadOverride`] when there is no `=`, the name is empty, or a part of the path
/// is not a table or does not exist.
pub fn apply_override(doc: &mut toml::Table, assignment: &str) -> Result<(), ModelError> {
    let (name, value) = assignment.split_once('=').ok_or_else(|| ModelError::BadOverride {
        name: assignment.to_string(),
        reason: "expected NAME=VALUE, e.g. lambda=0.95".into(),
    })?;
    let name = name.trim();
    let bad = |reason: String| ModelError::BadOverride { name: name.to_string(), reason };
    let mut parts: Vec<&str> = name.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(bad("empty key in the name".into()));
    }
    if !TOP_LEVEL_KEYS.contains(&parts[0]) {
        parts.insert(0, "model");
    }
    let value = value.trim();
    let parsed: toml::Value = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    let (last, path) = parts.split_last().expect("non-empty");
    let mut table = doc;
    for p in path {
        table = table
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| bad(format!("'{p}' is not a table")))?;
    }
    table.insert(last.to_string(), parsed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSQ: &str = "[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n";

    #[test]
    fn parses_and_overrides() {
        let f = ModelFile::parse(JSQ, &["lambda=0.95".into(), "truncation.levels=40".into()]).unwrap();
        assert_eq!(f.model, ModelSpec::Jsq { lambda: 0.95, d: 2 });
        assert_eq!(f.truncation.levels, Some(40));
        let f = ModelFile::parse(JSQ, &["model.d=3".into()]).unwrap();
        assert_eq!(f.model, ModelSpec::Jsq { lambda: 0.9, d: 3 });
    }

    #[test]
    fn unknown_keys_and_kinds_are_errors() {
        let e = ModelFile::parse(&format!("{JSQ}bogus = 1\n"), &[]).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = ModelFile::parse("[model]\nkind = \"nope\"\nlambda = 0.5\n", &[]).unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
        let e = ModelFile::parse(JSQ, &["foo=1".into()]).unwrap_err();
        assert!(e.to_string().contains("foo"), "{e}");
        let e = ModelFile::parse("[model\nkind=", &[]).unwrap_err();
        assert!(matches!(e, ModelError::Format(_)));
    }

    #[test]
    fn out_of_range_values_name_the_field() {
        let e = ModelFile::parse(JSQ, &["lambda=0".into()]).unwrap_err();
        assert!(e.to_string().contains("model.lambda = 0"), "{e}");
        let e = ModelFile::parse(JSQ, &["truncation.tol=2".into()]).unwrap_err();
        assert!(e.to_string().contains("truncation.tol = 2"), "{e}");
    }
}
