//! The model registry: every built-in model kind, declared in one place by its own module.
//!
//! A kind is a [`Kind`] value (its `kind` key, its parameters with meaning, unit, allowed
//! range and default, its catalogue text and sources, its example file and docs page) plus a
//! parameter struct implementing [`KindSpec`] (how to build the model from the `[model]` table,
//! its arrival rate, its first truncation level, and which finite-N system the simulator runs for
//! it, or why there is none). [`KINDS`] lists them; `mfq models`, the model-file parser,
//! `--set` validation, the simulator dispatch and the guide's table all read that list.
//!
//! # Adding a kind
//!
//! 1. In the model's module (say `models/mm1.rs`): the model struct and its
//!    [`MeanFieldModel`] impl; a parameter struct `Mm1Spec` (serde, `deny_unknown_fields`)
//!    with `impl KindSpec for Mm1Spec`; and `pub static MM1: Kind = Kind { name: "mm1",
//!    read: read_spec::<Mm1Spec>, .. }`.
//! 2. One line in [`KINDS`]: `&crate::models::mm1::MM1,`.
//! 3. Its example model file in `models/` and its docs page in `docs/models/`.
//! 4. Its tests. `tests/registry.rs` then checks, for the new kind as for every other: the
//!    example file exists and builds, the docs page exists, `mfq models` lists it, the analytic
//!    Jacobian equals finite differences at random feasible states, and `simulate` runs it or
//!    refuses with the declared reason.

use crate::finite::Simulation;
use crate::{Deadline, MeanFieldModel, ModelError};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::any::Any;
use std::fmt::Debug;

/// One parameter of a model kind (a key of the `[model]` table).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Param {
    /// Key in the `[model]` table (`lambda`, `job_size`, ...).
    pub name: &'static str,
    /// What it is.
    pub meaning: &'static str,
    /// Its unit (`jobs per unit time per server`), or `""` for a dimensionless number, a name
    /// or a table.
    pub unit: &'static str,
    /// The values allowed, as an error message states them.
    pub allowed: &'static str,
    /// The default when the key is absent, as written in a model file; `None` = required.
    pub default: Option<&'static str>,
    /// The allowed range of a numeric parameter, machine-readable (`None` for tables, names and
    /// texts); [`allowed`](Self::allowed) states it, with conditions between parameters.
    pub range: Option<ParamRange>,
}

/// The allowed values of a numeric parameter: an interval of numbers or integers (the model
/// may still refuse combinations, e.g. `gamma0 + gamma1 < 1`, or a stability condition).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ParamRange {
    /// Lower end.
    pub min: f64,
    /// Whether `min` itself is allowed.
    pub min_inclusive: bool,
    /// Upper end; `None`: unbounded.
    pub max: Option<f64>,
    /// Whether `max` itself is allowed.
    pub max_inclusive: bool,
    /// Integers only.
    pub integer: bool,
}

impl ParamRange {
    /// Numbers `> min`.
    pub const fn above(min: f64) -> Self {
        ParamRange { min, min_inclusive: false, max: None, max_inclusive: false, integer: false }
    }
    /// Numbers in `[min, max]` (`max_inclusive = false`: `[min, max)`).
    pub const fn closed(min: f64, max: f64, max_inclusive: bool) -> Self {
        ParamRange { min, min_inclusive: true, max: Some(max), max_inclusive, integer: false }
    }
    /// Integers in `[min, max]` (`max = None`: `>= min`).
    pub const fn integers(min: f64, max: Option<f64>) -> Self {
        ParamRange { min, min_inclusive: true, max, max_inclusive: true, integer: true }
    }
    /// Whether `v` is in the range.
    pub fn contains(&self, v: f64) -> bool {
        let low = if self.min_inclusive { v >= self.min } else { v > self.min };
        let high = match self.max {
            None => v.is_finite(),
            Some(m) => {
                if self.max_inclusive {
                    v <= m
                } else {
                    v < m
                }
            }
        };
        low && high && (!self.integer || v.fract() == 0.0)
    }
}

/// A built-in model kind: everything the catalogue, the parser and the docs know of it.
///
/// Declared once, as a `static`, by the kind's own module; listed in [`KINDS`].
#[derive(Debug)]
pub struct Kind {
    /// The `kind` key of the `[model]` table (`jsq`).
    pub name: &'static str,
    /// The model in the field's terms, one line (`JSQ(d) / power-of-d ...`).
    pub title: &'static str,
    /// Its parameters, in the order `mfq models` shows them.
    pub params: &'static [Param],
    /// Paper(s), with equation, table or section, the model comes from.
    pub sources: &'static str,
    /// Example model file, from the repository root (`models/jsq-d2.toml`).
    pub example: &'static str,
    /// Docs page, from the repository root (`docs/models/jsq.md`).
    pub docs: &'static str,
    /// Reads the `[model]` table (without its `kind` key) into the kind's parameters: always
    /// [`read_spec::<TheSpec>`](read_spec).
    pub read: fn(toml::Value) -> Result<ModelSpec, ReadError>,
}

impl Kind {
    /// The declared parameter `name`, if any.
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.name == name)
    }
}

/// Every built-in model kind, in the order `mfq models` lists them. One line per kind.
pub static KINDS: &[&Kind] = &[
    &crate::models::JSQ,
    &crate::models::POD_LI,
    &crate::models::POD_LD,
    &crate::models::JIQ,
    &crate::models::JSQ_PH,
    &crate::models::POD_LI_PH,
    &crate::models::JIQ_PH,
    &crate::models::LLD,
    &crate::models::OPINION_STUBBORN,
    &crate::models::OPINION_BIASED,
    &crate::models::REDUNDANCY,
    &crate::models::SA_JSQ,
    &crate::models::SA_JIQ,
    &crate::models::PULL,
    &crate::models::PS_SQ2,
    &crate::models::STATIC_ROUTING,
    &crate::models::BATCH,
    &crate::models::MOLDABLE,
    &crate::models::LQF,
    &crate::models::MPR_MAC,
    &crate::models::REDUNDANCY_GRAPH,
    &crate::models::K_OF_N,
    &crate::models::CDN_CACHE,
    &crate::models::GENERIC,
];

/// The kind named `name`, if it is built in.
pub fn kind(name: &str) -> Option<&'static Kind> {
    KINDS.iter().copied().find(|k| k.name == name)
}

/// The parameters of one model kind, read from a `[model]` table: what the kind's module
/// implements. Everything but [`kind`](Self::kind), [`lambda`](Self::lambda),
/// [`build`](Self::build) and [`simulation`](Self::simulation) has a default.
pub trait KindSpec: Serialize + DeserializeOwned + Clone + Debug + PartialEq + Send + Sync + 'static {
    /// The kind's declaration.
    fn kind(&self) -> &'static Kind;

    /// Arrival rate per server; `None` for models without queues (opinion dynamics).
    fn lambda(&self) -> Option<f64>;

    /// The model truncated at `levels` = K (kinds without levels ignore it).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming the parameter outside its range.
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError>;

    /// [`build`](Self::build) within the job's `deadline`: kinds whose construction is costly
    /// (a grid, renewal equations) check it as they go and stop with
    /// [`ModelError::Interrupted`]. Default: [`build`](Self::build) (cheap constructions).
    ///
    /// # Errors
    /// As [`build`](Self::build), and [`ModelError::Interrupted`].
    fn build_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        let _ = deadline;
        self.build(levels)
    }

    /// Checks the parameters as [`build`](Self::build) does, without what a model computes
    /// when it is built (default: builds it). Kinds whose build is costly override it.
    ///
    /// # Errors
    /// As [`build`](Self::build).
    fn validate(&self, levels: usize) -> Result<(), ModelError> {
        self.build(levels).map(|_| ())
    }

    /// A model with the same [`MeanFieldModel::stability`] verdict, cheap to build (default:
    /// [`build`](Self::build)).
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    fn build_probe(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        self.build(levels)
    }

    /// [`build_probe`](Self::build_probe) within the job's `deadline` (default: the probe,
    /// which is cheap for most kinds; kinds whose probe is the whole model watch the deadline).
    ///
    /// # Errors
    /// As [`build_probe`](Self::build_probe), and [`ModelError::Interrupted`].
    fn build_probe_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        let _ = deadline;
        self.build_probe(levels)
    }

    /// `Some(reason)` when the built model's drift is not the system's dynamics (see
    /// [`MeanFieldModel::dynamics_note`]), known without building it. Default `None`.
    fn dynamics_note(&self) -> Option<String> {
        None
    }

    /// The first truncation level of the automatic growth (default 16).
    fn initial_levels(&self) -> usize {
        16
    }

    /// Whether a file of this kind holds a model to solve (default `true`); `false` for kinds
    /// whose only output is a verdict given by another job (redundancy with identical copies
    /// under FCFS: `mfq simulate`). Such files skip [`validate`](Self::validate) at parse time.
    fn has_model(&self) -> bool {
        true
    }

    /// The finite-N system the simulator runs for these parameters, or why there is none.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] when a parameter the system needs is invalid (a job-size
    /// law that is not one).
    fn simulation(&self) -> Result<Simulation, ModelError>;

    /// What the output must say about these parameters so that nothing is silently
    /// substituted: a parameter the chosen approximation ignores, or which system the
    /// headline numbers describe (default: nothing). Printed as `note` lines and the JSON key
    /// `notes`.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// `Some` when these parameters have a stability region but no queue-length model (the
    /// answer of `fixed-point` is that region, as data); default `None`.
    fn stability_only(&self) -> Option<crate::StabilityRegion> {
        None
    }

    /// Whether the truncation level is a per-server buffer of jobs in the model and in the
    /// finite-N system alike (an arrival to a server holding `K` jobs is lost), so that
    /// `truncation.buffer = true` means that system. Default: the model's state is a
    /// queue-length tail (`x_k`, per class or per phase: [`crate::StateLayout::Tail`],
    /// `ClassTail`, `PhaseTail`). Redundancy overrides it (`K` counts copies there, and the
    /// finite system drops a whole job when one of its servers is full).
    fn has_job_buffer(&self) -> bool {
        self.build_probe(4).is_ok_and(|m| {
            matches!(
                m.layout(),
                crate::StateLayout::Tail { .. } | crate::StateLayout::ClassTail { .. } | crate::StateLayout::PhaseTail { .. }
            )
        })
    }
}

/// [`KindSpec`] as a trait object (implemented for every `KindSpec`).
trait DynSpec: Debug + Send + Sync {
    fn kind(&self) -> &'static Kind;
    fn lambda(&self) -> Option<f64>;
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError>;
    fn build_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError>;
    fn validate(&self, levels: usize) -> Result<(), ModelError>;
    fn build_probe(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError>;
    fn build_probe_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError>;
    fn dynamics_note(&self) -> Option<String>;
    fn initial_levels(&self) -> usize;
    fn has_model(&self) -> bool;
    fn simulation(&self) -> Result<Simulation, ModelError>;
    fn notes(&self) -> Vec<String>;
    fn stability_only(&self) -> Option<crate::StabilityRegion>;
    fn has_job_buffer(&self) -> bool;
    fn serialized(&self) -> &dyn erased_serde::Serialize;
    fn clone_box(&self) -> Box<dyn DynSpec>;
    fn as_any(&self) -> &dyn Any;
    fn eq_dyn(&self, other: &dyn DynSpec) -> bool;
}

impl<T: KindSpec> DynSpec for T {
    fn kind(&self) -> &'static Kind {
        KindSpec::kind(self)
    }
    fn lambda(&self) -> Option<f64> {
        KindSpec::lambda(self)
    }
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        KindSpec::build(self, levels)
    }
    fn build_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        KindSpec::build_within(self, levels, deadline)
    }
    fn validate(&self, levels: usize) -> Result<(), ModelError> {
        KindSpec::validate(self, levels)
    }
    fn build_probe(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        KindSpec::build_probe(self, levels)
    }
    fn build_probe_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        KindSpec::build_probe_within(self, levels, deadline)
    }
    fn dynamics_note(&self) -> Option<String> {
        KindSpec::dynamics_note(self)
    }
    fn initial_levels(&self) -> usize {
        KindSpec::initial_levels(self)
    }
    fn has_model(&self) -> bool {
        KindSpec::has_model(self)
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        KindSpec::simulation(self)
    }
    fn notes(&self) -> Vec<String> {
        KindSpec::notes(self)
    }
    fn stability_only(&self) -> Option<crate::StabilityRegion> {
        KindSpec::stability_only(self)
    }
    fn has_job_buffer(&self) -> bool {
        KindSpec::has_job_buffer(self)
    }
    fn serialized(&self) -> &dyn erased_serde::Serialize {
        self
    }
    fn clone_box(&self) -> Box<dyn DynSpec> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn eq_dyn(&self, other: &dyn DynSpec) -> bool {
        other.as_any().downcast_ref::<T>().is_some_and(|o| o == self)
    }
}

/// A built-in model with its parameters: one kind's [`KindSpec`], read from a `[model]` table
/// (tagged by `kind`) or made in code with `ModelSpec::from(JsqSpec { lambda: 0.9, d: 2 })`.
///
/// Written as a table with a `kind` key (`{"kind": "jsq", "lambda": 0.9, "d": 2}`) and read from
/// one; an error names the key (`model.d: invalid type: string "two", expected u32`).
pub struct ModelSpec(Box<dyn DynSpec>);

impl ModelSpec {
    /// Wraps one kind's parameters.
    pub fn new<T: KindSpec>(spec: T) -> Self {
        ModelSpec(Box::new(spec))
    }

    /// The kind's declaration.
    pub fn kind_info(&self) -> &'static Kind {
        self.0.kind()
    }

    /// The `kind` key of this model (`jsq`).
    pub fn kind(&self) -> &'static str {
        self.0.kind().name
    }

    /// Arrival rate per server; `None` for models without queues (opinion dynamics).
    pub fn lambda(&self) -> Option<f64> {
        self.0.lambda()
    }

    /// The model truncated at `levels` = K (queueing models; models without levels, such as
    /// the opinion models, ignore `levels`). A model with a dense Jacobian larger than
    /// [`MAX_DENSE_DIM`](crate::spec::MAX_DENSE_DIM) states is refused.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] when a parameter is outside its range (the field is named).
    pub fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        let model = self.0.build(levels)?;
        crate::spec::check_dense_size(model.as_ref(), levels)?;
        Ok(model)
    }

    /// [`build`](Self::build) within `deadline` (see [`KindSpec::build_within`]).
    ///
    /// # Errors
    /// As [`build`](Self::build), and [`ModelError::Interrupted`] when the deadline passes (or
    /// the job is cancelled) during a costly construction.
    pub fn build_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        // (only costly constructions check the deadline: a cheap model is built even past it,
        // so that the phase after it can report what it reached)
        let model = self.0.build_within(levels, deadline)?;
        crate::spec::check_dense_size(model.as_ref(), levels)?;
        Ok(model)
    }

    /// Checks the parameters as [`build`](Self::build) does, without what a model computes
    /// when it is built (the LCFS limit of redundancy solves its renewal equations at build,
    /// seconds; here only its parameters are checked). Used to validate a model file, and by
    /// commands that do not need the model's solution (`simulate`).
    ///
    /// # Errors
    /// As [`build`](Self::build).
    pub fn validate(&self, levels: usize) -> Result<(), ModelError> {
        self.0.validate(levels)
    }

    /// A model with the same parameters and the same [`MeanFieldModel::stability`] verdict,
    /// cheap to build: [`build`](Self::build) except for the LCFS limit of redundancy, whose
    /// probe is the redundancy mean field.
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    pub fn build_probe(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        self.0.build_probe(levels)
    }

    /// [`build_probe`](Self::build_probe) within the job's `deadline`.
    ///
    /// # Errors
    /// As [`build_probe`](Self::build_probe), and [`ModelError::Interrupted`] when the deadline
    /// passes while a costly probe is built (a generic model's probe is the model).
    pub fn build_probe_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        self.0.build_probe_within(levels, deadline)
    }

    /// `Some(reason)` for models without dynamics, as [`MeanFieldModel::dynamics_note`] of the
    /// built model but without building it: their transients and attraction checks mean nothing.
    pub fn dynamics_note(&self) -> Option<String> {
        self.0.dynamics_note()
    }

    /// A first truncation level for the automatic growth (cheap models start small).
    pub fn initial_levels(&self) -> usize {
        self.0.initial_levels()
    }

    /// Whether the file holds a model to solve (see [`KindSpec::has_model`]).
    pub fn has_model(&self) -> bool {
        self.0.has_model()
    }

    /// What the output must say about these parameters (see [`KindSpec::notes`]).
    pub fn notes(&self) -> Vec<String> {
        self.0.notes()
    }

    /// The stability region of parameters without a queue-length model (see
    /// [`KindSpec::stability_only`]).
    pub fn stability_only(&self) -> Option<crate::StabilityRegion> {
        self.0.stability_only()
    }

    /// Whether `truncation.buffer = true` is meaningful for this kind (see
    /// [`KindSpec::has_job_buffer`]).
    pub fn has_job_buffer(&self) -> bool {
        self.0.has_job_buffer()
    }

    /// The finite-N system the simulator runs, or why there is none (see [`Simulation`]).
    ///
    /// # Errors
    /// As [`KindSpec::simulation`].
    pub fn simulation(&self) -> Result<Simulation, ModelError> {
        self.0.simulation()
    }

    /// The parameters as the kind's own struct, when they are of kind `T`.
    pub fn downcast_ref<T: KindSpec>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }
}

impl<T: KindSpec> From<T> for ModelSpec {
    fn from(spec: T) -> Self {
        ModelSpec::new(spec)
    }
}

impl Clone for ModelSpec {
    fn clone(&self) -> Self {
        ModelSpec(self.0.clone_box())
    }
}

impl Debug for ModelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for ModelSpec {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_dyn(other.0.as_ref())
    }
}

impl Serialize for ModelSpec {
    /// The kind's parameters after a `kind` key, as an internally tagged enum would write them.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tagged<'a> {
            kind: &'static str,
            #[serde(flatten)]
            params: &'a dyn erased_serde::Serialize,
        }
        Tagged { kind: self.kind(), params: self.0.serialized() }.serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for ModelSpec {
    /// Reads a `[model]` table (see [`ModelSpec`]); errors start with the dotted key they are
    /// about (`model.d: ...`, `model.classes[1].speed: ...`).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = toml::Value::deserialize(deserializer)?;
        let toml::Value::Table(mut table) = value else {
            return Err(D::Error::invalid_type(crate::spec::unexpected(&value), &"a [model] table with a kind (see `mfq models`)"));
        };
        let name = match table.remove("kind") {
            Some(toml::Value::String(v)) => v,
            Some(other) => {
                let e = toml::de::Error::invalid_type(crate::spec::unexpected(&other), &"a string naming the kind");
                return Err(D::Error::custom(format!("model.kind: {e}")));
            }
            None => return Err(D::Error::missing_field("kind")),
        };
        let Some(kind) = kind(&name) else {
            let names: Vec<String> = KINDS.iter().map(|k| format!("`{}`", k.name)).collect();
            return Err(D::Error::custom(format!("model.kind: unknown variant `{name}`, expected one of {}", names.join(", "))));
        };
        (kind.read)(toml::Value::Table(table)).map_err(|e| D::Error::custom(integer_range_named(kind, e.0)))
    }
}

/// Integer keys inside the tables of a `[model]` (not declared [`Param`]s of their own), with
/// their indices left out (`types[].servers[]`), and the values they allow, as their checks
/// state them.
const NESTED_INTEGERS: &[(&str, &str)] =
    &[("job_size.k", "an integer in [1, 16]"), ("types[].servers[]", "a server number in 1..=K, K the number of entries of model.mu")];

/// `message` (`model.PATH: ...`, a [`ReadError`]'s) with the range of the integer key `PATH`
/// in place of the range of its Rust type: serde says `expected u32` (the file parser's
/// `expected an integer >= 0 (32 bits)`) for `d = -1` or `d = 1e12`, which is not what the key
/// allows (`d`: an integer in [1, 10000]). The key's range is its [`Param::allowed`], or for a
/// key inside a table its entry of [`NESTED_INTEGERS`]; other messages are returned unchanged.
fn integer_range_named(kind: &Kind, message: String) -> String {
    const TYPES: [&str; 8] = ["u8", "u16", "u32", "u64", "usize", "i32", "i64", "isize"];
    let Some((path, rest)) = message.strip_prefix("model.").and_then(|m| m.split_once(": ")) else { return message };
    let Some(head) = TYPES.iter().find_map(|t| rest.strip_suffix(&format!(", expected {t}"))) else { return message };
    let allowed = match kind.param(path) {
        Some(Param { allowed, range: Some(ParamRange { integer: true, .. }), .. }) => match allowed.strip_prefix("integer") {
            Some(more) => format!("an integer{more}"),
            None => allowed.to_string(),
        },
        Some(_) => return message,
        None => {
            // `types[2].servers[0]` -> `types[].servers[]`
            let mut key = String::new();
            let mut inside = false;
            for c in path.chars() {
                match c {
                    '[' => {
                        inside = true;
                        key.push(c);
                    }
                    ']' => inside = false,
                    _ if inside => continue,
                    _ => {}
                }
                if !inside {
                    key.push(c);
                }
            }
            match NESTED_INTEGERS.iter().find(|(k, _)| *k == key) {
                Some((_, allowed)) => allowed.to_string(),
                None => return message,
            }
        }
    };
    format!("model.{path}: {head}, expected {allowed}")
}

/// An error reading a kind's parameters, as `model.PATH: MESSAGE`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadError(pub String);

/// Reads the `[model]` table (without `kind`) as the parameters `T` of one kind, with the path
/// of an error kept: `model.d: invalid type: ...`, `model.classes[1].speed: ...`. What every
/// [`Kind::read`] is.
///
/// # Errors
/// [`ReadError`] with the dotted key and serde's message.
pub fn read_spec<T: KindSpec>(table: toml::Value) -> Result<ModelSpec, ReadError> {
    serde_path_to_error::deserialize::<_, T>(table).map(ModelSpec::new).map_err(|e| {
        let path = crate::spec::dotted_path("model", e.path().iter());
        ReadError(crate::spec::with_path(&path, e.into_inner().message()))
    })
}
