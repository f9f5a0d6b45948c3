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

use crate::models::{CostRule, PsSq2, Pull, Sampling, ServerClass, SpeedAware, StaticRouting};
use crate::models::{Jiq, Jsq, OpinionBiased, OpinionStubborn, PodLd, PodLi};
use crate::models::{JobSizeSpec, Lld, PhaseTypeQueue};
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
///
/// Written as a table with a `kind` key (`{"kind": "jsq", "lambda": 0.9, "d": 2}`) and read
/// from one: the table is read first, then the variant named by `kind` from the other keys with
/// their path tracked, so an error names the key (`model.d: invalid type: string "two",
/// expected u32`). serde's own internally tagged enums buffer the table before they know the
/// variant and lose that path. The defaults of the optional keys are those of
/// `ModelSpecByKind`, the private twin the variants are read through.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
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
    /// SQ(d)/JSQ(d) with phase-type job sizes, see [`PhaseTypeQueue`].
    JsqPh {
        /// Arrival rate per server (load `lambda E[S]`).
        lambda: f64,
        /// Servers sampled per arrival (`>= 1`).
        d: u32,
        /// `[model.job_size]`, see [`JobSizeSpec`] (default: exponential, mean 1).
        job_size: JobSizeSpec,
    },
    /// Pod with load-independent errors and phase-type job sizes, see [`PhaseTypeQueue`].
    PodLiPh {
        /// Arrival rate per server.
        lambda: f64,
        /// Servers sampled per arrival.
        d: u32,
        /// Error probability in `[0, 1]`.
        eps: f64,
        /// `[model.job_size]`, see [`JobSizeSpec`].
        job_size: JobSizeSpec,
    },
    /// Join-Idle-Queue with phase-type job sizes, see [`PhaseTypeQueue`].
    JiqPh {
        /// Arrival rate per server.
        lambda: f64,
        /// `[model.job_size]`, see [`JobSizeSpec`].
        job_size: JobSizeSpec,
    },
    /// LL(d), least loaded of `d` by workload, see [`Lld`] (`truncation.levels` counts grid points).
    Lld {
        /// Arrival rate per server.
        lambda: f64,
        /// Servers sampled per arrival.
        d: u32,
        /// `[model.job_size]`, see [`JobSizeSpec`].
        job_size: JobSizeSpec,
    },
    /// Majority-rule opinion dynamics with stubborn agents, see [`OpinionStubborn`] (no queues).
    OpinionStubborn {
        /// Fraction of all agents stubborn with opinion 0, in `[0, 1)`.
        gamma0: f64,
        /// Fraction of all agents stubborn with opinion 1, in `[0, 1)`; `gamma0 + gamma1 < 1`.
        gamma1: f64,
    },
    /// Majority-rule opinion dynamics with biased agents, see [`OpinionBiased`] (no queues).
    OpinionBiased {
        /// Probability that an update adopts opinion 1 outright, in `[0, 1]`.
        alpha: f64,
    },
    /// Speed-aware JSQ on server classes, see [`SpeedAware`].
    SaJsq {
        /// Arrival rate per server.
        lambda: f64,
        /// `[[model.classes]]`: fraction and speed of each class.
        classes: Vec<ServerClass>,
    },
    /// Speed-aware JIQ on server classes, see [`SpeedAware`].
    SaJiq {
        /// Arrival rate per server.
        lambda: f64,
        /// `[[model.classes]]`: fraction and speed of each class.
        classes: Vec<ServerClass>,
    },
    /// Stolyar's PULL on server classes, see [`Pull`].
    Pull {
        /// Arrival rate per server.
        lambda: f64,
        /// `[[model.classes]]`: fraction and speed of each class.
        classes: Vec<ServerClass>,
    },
    /// SQ(2)-type routing on processor-sharing server classes, see [`PsSq2`].
    PsSq2 {
        /// Arrival rate per server.
        lambda: f64,
        /// `[[model.classes]]`: fraction and speed (capacity `C_j`) of each class.
        classes: Vec<ServerClass>,
        /// Class sampling probabilities (default `"uniform"`).
        sampling: Sampling,
        /// Cost compared (default `"sq2"`).
        rule: CostRule,
    },
    /// The optimal static routing over server classes, see [`StaticRouting`].
    StaticRouting {
        /// Arrival rate per server.
        lambda: f64,
        /// `[[model.classes]]`: fraction and speed (capacity) of each class.
        classes: Vec<ServerClass>,
    },
    /// Redundancy-d (copies to `d` servers, cancel on first completion, exponential sizes),
    /// see [`crate::models::redundancy`].
    Redundancy {
        /// Arrival rate of jobs per server.
        lambda: f64,
        /// Copies per job (`>= 1`; `2` for the pair approximations).
        d: u32,
        /// Per-server discipline: `"ps"`, `"fcfs"`, `"lps"` (needs `lps_k`), `"lcfs"` (default `"ps"`).
        discipline: crate::models::redundancy::Discipline,
        /// `"mean-field"` (default) or `"pair"` (`"triplet"` is reserved).
        approximation: crate::models::redundancy::Approximation,
        /// `"iid"` (default) or `"identical"` copy sizes (identical: stability only).
        copies: crate::models::redundancy::Copies,
        /// LPS(k): number of oldest copies sharing a server (only with `discipline = "lps"`).
        lps_k: Option<u32>,
    },
    /// A user-defined model given by its transitions (jumps and rate expressions), see
    /// [`crate::models::generic`] and docs/models/generic.md.
    Generic(Box<crate::models::GenericSpec>),
}

fn default_discipline() -> crate::models::redundancy::Discipline {
    crate::models::redundancy::Discipline::Ps
}
fn default_approximation() -> crate::models::redundancy::Approximation {
    crate::models::redundancy::Approximation::MeanField
}
fn default_copies() -> crate::models::redundancy::Copies {
    crate::models::redundancy::Copies::Iid
}

/// How the variants of [`ModelSpec`] are read: an externally tagged twin (`{"jsq": {"lambda":
/// 0.9, "d": 2}}`) that serde deserialises without buffering, so that the path of an error is
/// kept. `remote` makes serde build a [`ModelSpec`] from it; the compiler checks that every
/// variant and field matches. The defaults of optional keys live here.
#[derive(Deserialize)]
#[serde(remote = "ModelSpec", rename_all = "kebab-case", deny_unknown_fields)]
enum ModelSpecByKind {
    Jsq {
        lambda: f64,
        d: u32,
    },
    PodLi {
        lambda: f64,
        d: u32,
        eps: f64,
    },
    PodLd {
        lambda: f64,
        d: u32,
        eps: f64,
        g: u32,
    },
    Jiq {
        lambda: f64,
    },
    JsqPh {
        lambda: f64,
        d: u32,
        #[serde(default)]
        job_size: JobSizeSpec,
    },
    PodLiPh {
        lambda: f64,
        d: u32,
        eps: f64,
        #[serde(default)]
        job_size: JobSizeSpec,
    },
    JiqPh {
        lambda: f64,
        #[serde(default)]
        job_size: JobSizeSpec,
    },
    Lld {
        lambda: f64,
        d: u32,
        #[serde(default)]
        job_size: JobSizeSpec,
    },
    OpinionStubborn {
        gamma0: f64,
        gamma1: f64,
    },
    OpinionBiased {
        alpha: f64,
    },
    SaJsq {
        lambda: f64,
        classes: Vec<ServerClass>,
    },
    SaJiq {
        lambda: f64,
        classes: Vec<ServerClass>,
    },
    Pull {
        lambda: f64,
        classes: Vec<ServerClass>,
    },
    PsSq2 {
        lambda: f64,
        classes: Vec<ServerClass>,
        #[serde(default)]
        sampling: Sampling,
        #[serde(default)]
        rule: CostRule,
    },
    StaticRouting {
        lambda: f64,
        classes: Vec<ServerClass>,
    },
    Redundancy {
        lambda: f64,
        d: u32,
        #[serde(default = "default_discipline")]
        discipline: crate::models::redundancy::Discipline,
        #[serde(default = "default_approximation")]
        approximation: crate::models::redundancy::Approximation,
        #[serde(default = "default_copies")]
        copies: crate::models::redundancy::Copies,
        #[serde(default)]
        lps_k: Option<u32>,
    },
    Generic(Box<crate::models::GenericSpec>),
}

impl<'de> Deserialize<'de> for ModelSpec {
    /// Reads a `[model]` table (see [`ModelSpec`]); errors start with the dotted key they are
    /// about (`model.d: ...`, `model.classes[1].speed: ...`).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// `ModelSpecByKind` as a `Deserialize` type (serde's `remote` gives a function).
        struct ByKind(ModelSpec);
        impl<'de> Deserialize<'de> for ByKind {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                ModelSpecByKind::deserialize(d).map(ByKind)
            }
        }
        by_tag(deserializer, "model", "kind", "a [model] table with a kind (see `mfq models`)").map(|ByKind(m)| m)
    }
}

/// Reads an internally tagged table (the variant named by its key `tag`) through its
/// externally tagged twin `T`, so that errors keep their path: a table `{tag = "v", a = 1}` is
/// read as `T` from `{"v": {a = 1}}`.
///
/// An error inside the table is returned as `PATH: MESSAGE`, `PATH` starting with `name`
/// (`model.d: invalid type: ...`, `model.kind: unknown variant ...`); with an empty `name`
/// the path is relative (`.mean: ...`), for a table inside another one read this way, which
/// puts its own path in front. `expected` describes the table, for a value that is not one.
pub(crate) fn by_tag<'de, D, T>(deserializer: D, name: &str, tag: &'static str, expected: &str) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::de::Error;
    use serde_path_to_error::Segment;
    let value = toml::Value::deserialize(deserializer)?;
    let toml::Value::Table(mut table) = value else {
        return Err(D::Error::invalid_type(unexpected(&value), &expected));
    };
    let variant = match table.remove(tag) {
        Some(toml::Value::String(v)) => v,
        Some(other) => {
            let e = toml::de::Error::invalid_type(unexpected(&other), &format!("a string naming the {tag}").as_str());
            return Err(D::Error::custom(format!("{name}.{tag}: {e}")));
        }
        None => return Err(D::Error::missing_field(tag)),
    };
    let twin = toml::Value::Table(toml::Table::from_iter([(variant, toml::Value::Table(table))]));
    serde_path_to_error::deserialize(twin).map_err(|e| {
        let mut path = name.to_string();
        let mut segments = e.path().iter();
        match segments.next() {
            // no variant was entered: its name is unknown
            None | Some(Segment::Unknown) => path = format!("{name}.{tag}"),
            Some(_) => {
                for s in segments {
                    match s {
                        Segment::Seq { index } => path.push_str(&format!("[{index}]")),
                        Segment::Map { key } | Segment::Enum { variant: key } => path = format!("{path}.{key}"),
                        Segment::Unknown => break,
                    }
                }
            }
        }
        let message = e.into_inner().message().to_string();
        // a tagged table inside this one gave its path relative to itself
        let (inner, message) = relative_path(&message).unwrap_or(("", &message));
        let path = format!("{path}{inner}");
        if path.is_empty() {
            D::Error::custom(message)
        } else {
            D::Error::custom(format!("{path}: {message}"))
        }
    })
}

/// Splits `.key[1].sub: message` (a path relative to a table, see [`by_tag`]) into the path
/// and the message; `None` when `message` does not start with one.
fn relative_path(message: &str) -> Option<(&str, &str)> {
    let (path, rest) = message.split_once(": ")?;
    let is_key_char = |c: char| c.is_ascii_alphanumeric() || "_-.[]".contains(c);
    (path.starts_with(['.', '[']) && path.chars().all(is_key_char)).then_some((path, rest))
}

/// What serde calls a TOML value in an "invalid type" message.
fn unexpected(value: &toml::Value) -> serde::de::Unexpected<'_> {
    use serde::de::Unexpected;
    match value {
        toml::Value::String(s) => Unexpected::Str(s),
        toml::Value::Integer(i) => Unexpected::Signed(*i),
        toml::Value::Float(f) => Unexpected::Float(*f),
        toml::Value::Boolean(b) => Unexpected::Bool(*b),
        toml::Value::Datetime(_) => Unexpected::Other("a datetime"),
        toml::Value::Array(_) => Unexpected::Seq,
        toml::Value::Table(_) => Unexpected::Map,
    }
}

/// Largest state dimension of a model with a dense Jacobian: its Jacobian and LU take
/// `2 n^2` numbers and each linear solve `O(n^3)` (six Newton steps took 12 s at `n = 2000`
/// and 140 s at `n = 4000`); beyond this a truncation is refused instead of exhausting memory
/// or running for hours.
pub const MAX_DENSE_DIM: usize = 2048;

/// Refuses a truncation that makes a dense-Jacobian model larger than [`MAX_DENSE_DIM`].
fn check_dense_size(model: &dyn MeanFieldModel, levels: usize) -> Result<(), ModelError> {
    let n = model.dim();
    if n <= MAX_DENSE_DIM || !matches!(model.sparsity(), crate::Sparsity::Dense) {
        return Ok(());
    }
    let per_level = n.div_ceil(levels.max(1)).max(1);
    Err(crate::out_of_range(
        "truncation.levels",
        levels,
        &format!(
            "at most {} for this model: its Jacobian is dense and K = {levels} gives {n} states (at most {MAX_DENSE_DIM}); \
             lower truncation.levels or truncation.max_levels",
            MAX_DENSE_DIM / per_level
        ),
    ))
}

/// Truncation of the queue-length levels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Truncation {
    /// Fixed truncation level K; when absent K grows until `x_K < tol`.
    #[serde(default)]
    pub levels: Option<usize>,
    /// Target mass at the truncation level, in [[`MIN_TRUNCATION_TOL`], 1) (default 1e-12).
    #[serde(default = "default_tol")]
    pub tol: f64,
    /// Largest K the automatic growth may reach (default 100000).
    #[serde(default = "default_max_levels")]
    pub max_levels: usize,
}

fn default_tol() -> f64 {
    1e-12
}

/// Smallest `truncation.tol`: double precision cannot honour less. Tail entries below about
/// `1e-14` are round-off after Newton's method (the fixed point's residual tolerance is
/// `1e-12`), so `x_K < tol` would be met, or missed, by round-off alone.
pub const MIN_TRUNCATION_TOL: f64 = 1e-14;
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
    /// [`ModelError::OutOfRange`] naming `truncation.levels`, `truncation.tol` (outside
    /// [[`MIN_TRUNCATION_TOL`], 1)) or `truncation.max_levels`.
    pub fn validate(&self) -> Result<(), ModelError> {
        if let Some(k) = self.levels {
            if !(1..=10_000_000).contains(&k) {
                return Err(crate::out_of_range("truncation.levels", k, "an integer in [1, 10000000]"));
            }
        }
        if !(self.tol.is_finite() && (MIN_TRUNCATION_TOL..1.0).contains(&self.tol)) {
            return Err(crate::out_of_range(
                "truncation.tol",
                self.tol,
                "a number in [1e-14, 1) (tail entries below ~1e-14 are round-off in double precision)",
            ));
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
            ModelSpec::JsqPh { .. } => "jsq-ph",
            ModelSpec::PodLiPh { .. } => "pod-li-ph",
            ModelSpec::JiqPh { .. } => "jiq-ph",
            ModelSpec::Lld { .. } => "lld",
            ModelSpec::OpinionStubborn { .. } => "opinion-stubborn",
            ModelSpec::OpinionBiased { .. } => "opinion-biased",
            ModelSpec::SaJsq { .. } => "sa-jsq",
            ModelSpec::SaJiq { .. } => "sa-jiq",
            ModelSpec::Pull { .. } => "pull",
            ModelSpec::PsSq2 { .. } => "ps-sq2",
            ModelSpec::StaticRouting { .. } => "static-routing",
            ModelSpec::Redundancy { .. } => "redundancy",
            ModelSpec::Generic(_) => "generic",
        }
    }

    /// Arrival rate per server; `None` for models without queues (opinion dynamics).
    pub fn lambda(&self) -> Option<f64> {
        match *self {
            ModelSpec::Jsq { lambda, .. }
            | ModelSpec::PodLi { lambda, .. }
            | ModelSpec::PodLd { lambda, .. }
            | ModelSpec::Jiq { lambda } => Some(lambda),
            ModelSpec::JsqPh { lambda, .. }
            | ModelSpec::PodLiPh { lambda, .. }
            | ModelSpec::JiqPh { lambda, .. }
            | ModelSpec::Lld { lambda, .. } => Some(lambda),
            ModelSpec::OpinionStubborn { .. } | ModelSpec::OpinionBiased { .. } => None,
            ModelSpec::SaJsq { lambda, .. }
            | ModelSpec::SaJiq { lambda, .. }
            | ModelSpec::Pull { lambda, .. }
            | ModelSpec::PsSq2 { lambda, .. }
            | ModelSpec::StaticRouting { lambda, .. } => Some(lambda),
            ModelSpec::Redundancy { lambda, .. } => Some(lambda),
            // `observables.arrival_rate`, when declared
            ModelSpec::Generic(ref g) => g.lambda(),
        }
    }

    /// Checks the parameters as [`build`](Self::build) does, without what a model computes
    /// when it is built (the LCFS limit of redundancy solves its renewal equations at build,
    /// seconds; here only its parameters are checked). Used to validate a model file, and by
    /// commands that do not need the model's solution (`simulate`).
    ///
    /// # Errors
    /// As [`build`](Self::build).
    pub fn validate(&self, levels: usize) -> Result<(), ModelError> {
        match *self {
            ModelSpec::Redundancy { lambda, d, discipline, approximation, copies, lps_k } => {
                crate::models::redundancy::validate(lambda, d, discipline, approximation, copies, lps_k, levels)
            }
            _ => self.build(levels).map(|_| ()),
        }
    }

    /// A model with the same parameters and the same [`MeanFieldModel::stability`] verdict,
    /// cheap to build: [`build`](Self::build) except for the LCFS limit of redundancy, whose
    /// probe is the redundancy mean field (the limit solves its renewal equations at build).
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    pub fn build_probe(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        use crate::models::redundancy::Approximation;
        match *self {
            ModelSpec::Redundancy { lambda, d, discipline, approximation: Approximation::Limit, copies, lps_k } => {
                self.validate(levels)?;
                crate::models::redundancy::build(lambda, d, discipline, Approximation::MeanField, copies, lps_k, levels.min(64))
            }
            _ => self.build(levels),
        }
    }

    /// `Some(reason)` for models without dynamics, as [`MeanFieldModel::dynamics_note`] of the
    /// built model but without building it (the LCFS limit of redundancy): their transients
    /// and attraction checks mean nothing.
    pub fn dynamics_note(&self) -> Option<String> {
        match self {
            ModelSpec::Redundancy { approximation: crate::models::redundancy::Approximation::Limit, .. } => {
                Some(crate::models::redundancy::LIMIT_DYNAMICS_NOTE.to_string())
            }
            _ => None,
        }
    }

    /// The model truncated at `levels` = K (queueing models; models without levels, such as
    /// the opinion models, ignore `levels`).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] when a parameter is outside its range (the field is named).
    pub fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        let model: Box<dyn MeanFieldModel> = match *self {
            ModelSpec::Jsq { lambda, d } => Box::new(Jsq::new(lambda, d, levels)?),
            ModelSpec::PodLi { lambda, d, eps } => Box::new(PodLi::new(lambda, d, eps, levels)?),
            ModelSpec::PodLd { lambda, d, eps, g } => Box::new(PodLd::new(lambda, d, eps, g, levels)?),
            ModelSpec::Jiq { lambda } => Box::new(Jiq::new(lambda, levels.max(2))?),
            ModelSpec::JsqPh { lambda, d, ref job_size } => Box::new(PhaseTypeQueue::jsq(lambda, d, job_size.to_phase_type()?, levels)?),
            ModelSpec::PodLiPh { lambda, d, eps, ref job_size } => {
                Box::new(PhaseTypeQueue::pod_li(lambda, d, eps, job_size.to_phase_type()?, levels)?)
            }
            ModelSpec::JiqPh { lambda, ref job_size } => Box::new(PhaseTypeQueue::jiq(lambda, job_size.to_phase_type()?, levels.max(2))?),
            // `levels` = number of workload grid points
            ModelSpec::Lld { lambda, d, ref job_size } => Box::new(Lld::new(lambda, d, job_size.to_phase_type()?, levels)?),
            // one-dimensional: `levels` does not apply
            ModelSpec::OpinionStubborn { gamma0, gamma1 } => Box::new(OpinionStubborn::new(gamma0, gamma1)?),
            ModelSpec::OpinionBiased { alpha } => Box::new(OpinionBiased::new(alpha)?),
            ModelSpec::SaJsq { lambda, ref classes } => Box::new(SpeedAware::jsq(lambda, classes, levels)?),
            ModelSpec::SaJiq { lambda, ref classes } => Box::new(SpeedAware::jiq(lambda, classes, levels)?),
            ModelSpec::Pull { lambda, ref classes } => Box::new(Pull::new(lambda, classes, levels)?),
            ModelSpec::PsSq2 { lambda, ref classes, ref sampling, rule } => {
                Box::new(PsSq2::new(lambda, classes, sampling.clone(), rule, levels)?)
            }
            ModelSpec::StaticRouting { lambda, ref classes } => Box::new(StaticRouting::new(lambda, classes, levels)?),
            ModelSpec::Redundancy { lambda, d, discipline, approximation, copies, lps_k } => {
                crate::models::redundancy::build(lambda, d, discipline, approximation, copies, lps_k, levels)?
            }
            // `levels` sets the parameter named by `model.levels`, if any; else the size is fixed
            ModelSpec::Generic(ref g) => Box::new(g.build(levels)?),
        };
        check_dense_size(model.as_ref(), levels)?;
        Ok(model)
    }

    /// A first truncation level for the automatic growth (cheap models start small).
    pub fn initial_levels(&self) -> usize {
        match self {
            // heterogeneous PS routing: start where most fixed points fit (class-tail states
            // are not warm-started level by level when K grows)
            ModelSpec::PsSq2 { .. } => 64,
            // pair approximations: K^2 states, K >= lps_k + 2
            ModelSpec::Redundancy { approximation, lps_k, .. } => crate::models::redundancy::initial_levels(*approximation, *lps_k),
            // workload grid points (step 0.1 E[S])
            ModelSpec::Lld { .. } => 128,
            // the `levels` parameter's value, or the (fixed) dimension
            ModelSpec::Generic(g) => g.initial_levels(),
            _ => 16,
        }
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
        let mut doc: toml::Table = text.parse().map_err(|e: toml::de::Error| ModelError::Format(one_line(&e, text)))?;
        for o in overrides {
            apply_override(&mut doc, o)?;
        }
        let file: ModelFile = if overrides.is_empty() {
            toml::from_str(text).map_err(|e| ModelError::Format(one_line(&e, text)))?
        } else {
            ModelFile::deserialize(doc)
                .map_err(|e| ModelError::Format(format!("after --set {}: {}", printable(&overrides.join(" --set ")), one_line(&e, ""))))?
        };
        file.truncation.validate()?;
        // identical copies under FCFS have a finite-N stability verdict (the saturated system,
        // `mfq simulate`) but no model to build: their parameters are checked by that verdict
        if !file.model.is_identical_fcfs_redundancy() {
            file.model.validate(file.truncation.levels.unwrap_or_else(|| file.model.initial_levels()))?;
        }
        Ok(file)
    }
}

impl ModelSpec {
    /// Whether this is redundancy-d with identical copies under FCFS (`kind = "redundancy"`,
    /// `copies = "identical"`, `discipline = "fcfs"`): a model whose only output is its stability
    /// verdict (infinite `N`: [`crate::models::redundancy::identical_stability`]; finite `N`:
    /// the saturated system of `mfq_sim::saturated`).
    pub fn is_identical_fcfs_redundancy(&self) -> bool {
        matches!(
            self,
            ModelSpec::Redundancy {
                copies: crate::models::redundancy::Copies::Identical,
                discipline: crate::models::redundancy::Discipline::Fcfs,
                ..
            }
        )
    }
}

/// A TOML or format error as one line: `TOML parse error at line L, column C: MESSAGE` when
/// the error has a position in `text`, else the message and the key path (`... in `model``).
/// (The toml crate's own `Display` spreads the error over five lines with a source excerpt.)
fn one_line(e: &toml::de::Error, text: &str) -> String {
    // serde names Rust types; say what the file must hold instead
    const TYPES: [(&str, &str); 6] = [
        ("struct Truncation", "a [truncation] table"),
        ("struct ServerClass", "a [[model.classes]] table with fraction and speed"),
        // a number where a name is expected (`discipline = 3`)
        ("invalid type: unit variant, expected string only", "expected a name in quotes (see `mfq models`)"),
        ("expected usize", "expected an integer >= 0"),
        ("expected u32", "expected an integer >= 0 (32 bits)"),
        ("expected u64", "expected an integer >= 0"),
    ];
    let join = |s: &str| {
        let mut line = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
        for (from, to) in TYPES {
            line = line.replace(from, to);
        }
        line
    };
    // an error inside [model] names its key (`model.d: ...`): point at that key's line
    let keyed = e.message().split_once(": ").filter(|(path, _)| path.starts_with("model")).map(|(path, _)| path);
    let span = keyed.and_then(|path| key_span(text, path)).or_else(|| e.span());
    match span.and_then(|span| text.get(..span.start)) {
        Some(before) => {
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            // the line itself, which names the key or the table
            let source: String = text.lines().nth(line - 1).unwrap_or("").trim().chars().take(60).collect();
            let source = if source.is_empty() { String::new() } else { format!(" ({})", printable(&source)) };
            format!("TOML parse error at line {line}, column {column}{source}: {}", join(e.message()))
        }
        // the message without the ` in `model`` that repeats the key
        None if keyed.is_some() => join(e.message()),
        None => join(&e.to_string()),
    }
}

/// Where the dotted key `path` (`model.classes[1].speed`) is in the TOML document `text`: the
/// span of the key (or, for an array element, of the element); `None` when `text` does not
/// parse or has no such key.
fn key_span(text: &str, path: &str) -> Option<std::ops::Range<usize>> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let mut table = doc.get_ref();
    let mut span = None;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        let (key, indices) = part.split_once('[').map_or((part, ""), |(k, i)| (k, i));
        let (k, v) = table.get_key_value(key)?;
        span = Some(k.span());
        let mut value = v;
        for index in indices.split('[').filter(|i| !i.is_empty()) {
            let i: usize = index.trim_end_matches(']').parse().ok()?;
            value = value.get_ref().as_array()?.get(i)?;
            span = Some(value.span());
        }
        if parts.peek().is_some() {
            table = value.get_ref().as_table()?;
        }
    }
    span
}

/// `s` with control characters escaped (`\n`), so that an override echoed in a message
/// keeps the message on one line.
fn printable(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

const TOP_LEVEL_KEYS: [&str; 4] = ["title", "source", "model", "truncation"];

/// The full dotted path of an override name: names whose first part is not a top-level key
/// are taken inside `[model]`.
fn key_path(name: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = name.split('.').collect();
    if !TOP_LEVEL_KEYS.contains(&parts[0]) {
        parts.insert(0, "model");
    }
    parts
}

/// For a generic model (`kind = "generic"`), `NAME` alone means `model.parameters.NAME` when
/// that parameter is declared (`--set K=50`).
fn generic_parameter_path<'a>(doc: &toml::Table, name: &'a str) -> Option<Vec<&'a str>> {
    let model = doc.get("model")?.as_table()?;
    let declared = model.get("kind")?.as_str()? == "generic"
        && !name.contains('.')
        && model.get("parameters").and_then(|p| p.as_table()).is_some_and(|p| p.contains_key(name));
    declared.then(|| vec!["model", "parameters", name])
}

/// Whether the model file `text` sets the key that the override name `name` refers to (e.g.
/// before sweeping it). Keys of `[truncation]` always count (they have defaults).
pub fn has_key(text: &str, name: &str) -> bool {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return false;
    };
    let parts = generic_parameter_path(&doc, name.trim()).unwrap_or_else(|| key_path(name.trim()));
    if parts[0] == "truncation" {
        return true;
    }
    let (last, path) = parts.split_last().expect("non-empty");
    let mut node = Some(&doc);
    for p in path {
        node = node.and_then(|t| t.get(*p)).and_then(|v| v.as_table());
    }
    node.is_some_and(|t| t.contains_key(*last))
}

/// Applies one `NAME=VALUE` override to a parsed model file (see the module docs).
///
/// # Errors
/// [`ModelError::BadOverride`] when there is no `=`, the name is empty, or a part of the path
/// is not a table or does not exist.
pub fn apply_override(doc: &mut toml::Table, assignment: &str) -> Result<(), ModelError> {
    let (name, value) = assignment
        .split_once('=')
        .ok_or_else(|| ModelError::BadOverride { name: printable(assignment), reason: "expected NAME=VALUE, e.g. lambda=0.95".into() })?;
    let name = name.trim();
    let bad = |reason: String| ModelError::BadOverride { name: printable(name), reason };
    let parts = generic_parameter_path(doc, name).unwrap_or_else(|| key_path(name));
    if parts.iter().any(|p| p.is_empty()) {
        return Err(bad("empty key in the name".into()));
    }
    let value = value.trim();
    // one TOML value, or else the text as a string (`0.9\nlambda = 3` is not a value)
    let parsed: toml::Value = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .filter(|t| t.len() == 1)
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    // TOML reads a number below the smallest double as 0: say so rather than echo 0
    if let toml::Value::Float(f) = parsed {
        let mantissa = value.split(['e', 'E']).next().unwrap_or("");
        if f == 0.0 && mantissa.chars().any(|c| ('1'..='9').contains(&c)) {
            return Err(bad(format!("{value} is below the smallest positive number (about 2.2e-308) and would be read as 0")));
        }
    }
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
    fn opinion_kinds_parse_and_have_no_lambda() {
        let f = ModelFile::parse("[model]\nkind = \"opinion-stubborn\"\ngamma0 = 0.1\ngamma1 = 0.1\n", &[]).unwrap();
        assert_eq!(f.model, ModelSpec::OpinionStubborn { gamma0: 0.1, gamma1: 0.1 });
        assert_eq!((f.model.kind(), f.model.lambda()), ("opinion-stubborn", None));
        assert_eq!(f.model.build(16).unwrap().dim(), 1);
        let f = ModelFile::parse("[model]\nkind = \"opinion-biased\"\nalpha = 0.05\n", &["alpha=0.2".into()]).unwrap();
        assert_eq!(f.model, ModelSpec::OpinionBiased { alpha: 0.2 });
        let e = ModelFile::parse("[model]\nkind = \"opinion-biased\"\nalpha = 2\n", &[]).unwrap_err();
        assert!(e.to_string().contains("model.alpha = 2"), "{e}");
        assert_eq!(ModelSpec::Jiq { lambda: 0.5 }.lambda(), Some(0.5));
    }

    #[test]
    fn type_errors_name_the_key_and_its_line() {
        let e = ModelFile::parse("[model]\nkind = \"jsq\"\nlambda = 0.9\nd = \"two\"\n", &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "TOML parse error at line 4, column 1 (d = \"two\"): model.d: invalid type: string \"two\", expected an integer >= 0 (32 bits)"
        );
        // through an override: no line, the key all the same (once)
        let e = ModelFile::parse(JSQ, &["d=two".into()]).unwrap_err();
        assert_eq!(e.to_string(), "after --set d=two: model.d: invalid type: string \"two\", expected an integer >= 0 (32 bits)");
        // inside a tagged table inside [model]
        let text = "[model]\nkind = \"jsq-ph\"\nlambda = 0.5\nd = 2\n[model.job_size]\nlaw = \"erlang\"\nk = -3\n";
        let e = ModelFile::parse(text, &[]).unwrap_err();
        assert!(
            e.to_string().starts_with("TOML parse error at line 7, column 1 (k = -3): model.job_size.k: invalid value: integer `-3`"),
            "{e}"
        );
    }

    #[test]
    fn specs_serialize_tagged_and_read_back() {
        let text = "[model]\nkind = \"pod-li-ph\"\nlambda = 0.5\nd = 2\neps = 0.1\n[model.job_size]\nlaw = \"h2\"\nscv = 4.0\n";
        let f = ModelFile::parse(text, &[]).unwrap();
        let written = toml::to_string(&f).unwrap();
        assert!(written.contains("kind = \"pod-li-ph\"") && written.contains("law = \"h2\""), "{written}");
        assert_eq!(ModelFile::parse(&written, &[]).unwrap(), f);
    }

    #[test]
    fn out_of_range_values_name_the_field() {
        let e = ModelFile::parse(JSQ, &["lambda=0".into()]).unwrap_err();
        assert!(e.to_string().contains("model.lambda = 0"), "{e}");
        let e = ModelFile::parse(JSQ, &["truncation.tol=2".into()]).unwrap_err();
        assert!(e.to_string().contains("truncation.tol = 2"), "{e}");
        // below what double precision can honour
        let e = ModelFile::parse(JSQ, &["truncation.tol=1e-15".into()]).unwrap_err();
        assert!(e.to_string().contains("truncation.tol = 0.000000000000001 is not allowed: a number in [1e-14, 1)"), "{e}");
        assert!(ModelFile::parse(JSQ, &["truncation.tol=1e-14".into()]).is_ok());
    }
}
