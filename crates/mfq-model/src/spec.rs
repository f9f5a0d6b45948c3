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

pub use crate::registry::ModelSpec;
use crate::{Deadline, MeanFieldModel, ModelError};
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
        let mut segments = e.path().iter();
        let path = match segments.next() {
            // no variant was entered: its name is unknown
            None | Some(serde_path_to_error::Segment::Unknown) => format!("{name}.{tag}"),
            Some(_) => dotted_path(name, segments),
        };
        D::Error::custom(with_path(&path, e.into_inner().message()))
    })
}

/// The dotted key of a serde path below the table `name`: `model.classes[1].speed` (stops at
/// the first segment serde could not name).
pub(crate) fn dotted_path<'a>(name: &str, segments: impl Iterator<Item = &'a serde_path_to_error::Segment>) -> String {
    use serde_path_to_error::Segment;
    let mut path = name.to_string();
    for s in segments {
        match s {
            Segment::Seq { index } => path.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => path = format!("{path}.{key}"),
            Segment::Unknown => break,
        }
    }
    path
}

/// `PATH: MESSAGE`, where a message that starts with a path relative to its own table (a
/// tagged table inside this one, read by [`by_tag`] with an empty name) has it appended to
/// `path`; just `MESSAGE` when the path is empty.
pub(crate) fn with_path(path: &str, message: &str) -> String {
    let (inner, message) = relative_path(message).unwrap_or(("", message));
    let path = format!("{path}{inner}");
    if path.is_empty() {
        message.to_string()
    } else {
        format!("{path}: {message}")
    }
}

/// Splits `.key[1].sub: message` (a path relative to a table, see [`by_tag`]) into the path
/// and the message; `None` when `message` does not start with one.
fn relative_path(message: &str) -> Option<(&str, &str)> {
    let (path, rest) = message.split_once(": ")?;
    let is_key_char = |c: char| c.is_ascii_alphanumeric() || "_-.[]".contains(c);
    (path.starts_with(['.', '[']) && path.chars().all(is_key_char)).then_some((path, rest))
}

/// What serde calls a TOML value in an "invalid type" message.
pub(crate) fn unexpected(value: &toml::Value) -> serde::de::Unexpected<'_> {
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

/// Refuses a truncation that makes a dense-Jacobian model larger than [`MAX_DENSE_DIM`]; a
/// model whose state has a fixed size ([`crate::StateLayout::Named`]) is refused naming
/// `model` and its size, not `truncation.levels`.
pub(crate) fn check_dense_size(model: &dyn MeanFieldModel, levels: usize) -> Result<(), ModelError> {
    let n = model.dim();
    if n <= MAX_DENSE_DIM || !matches!(model.sparsity(), crate::Sparsity::Dense) {
        return Ok(());
    }
    if matches!(model.layout(), crate::StateLayout::Named { .. }) {
        // a state of fixed size (e.g. the caching system's server types): its parameters set
        // the size, a truncation level does not
        return Err(crate::out_of_range(
            "model",
            format!("{} with {n} states", model.name()),
            &format!(
                "parameters giving at most {MAX_DENSE_DIM} states: its Jacobian is dense (solving a larger one takes minutes \
                 and gigabytes); choose smaller parameters (e.g. fewer contents)"
            ),
        ));
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
    /// `true`: the fixed `levels` are the system's finite buffer (an arrival to a server
    /// holding `K` jobs is lost), not a truncation of an infinite buffer, so `x_K` is the
    /// blocking mass and is not checked against `tol` (default `false`: a fixed `K` with
    /// `x_K >= tol` is an error). Needs `levels`. With it, `simulate` and simulation sweeps
    /// simulate the system with this buffer ([`buffer_size`](Truncation::buffer_size)); `exact`
    /// and `compare` always read a fixed `levels` as the buffer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub buffer: bool,
}

impl Truncation {
    /// The keys of a `[truncation]` table (the fields of [`Truncation`], in the order the
    /// parser lists them when it refuses another): what `truncation.NAME` may name in an
    /// override or a sweep axis.
    pub const KEYS: [&'static str; 4] = ["levels", "tol", "max_levels", "buffer"];
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
        Truncation { levels: None, tol: default_tol(), max_levels: default_max_levels(), buffer: false }
    }
}

impl Truncation {
    /// The per-server buffer `K` of the finite-N system when [`buffer`](Self::buffer) is set
    /// (`levels`), `None` otherwise (an unlimited buffer).
    pub fn buffer_size(&self) -> Option<usize> {
        self.levels.filter(|_| self.buffer)
    }

    /// The stability verdict of the system this truncation describes, given the model's own
    /// verdict `model` (the infinite-buffer condition, `MeanFieldModel::stability`): with
    /// [`buffer`](Self::buffer) a loss system, stationary at every load (`Stable`, with the
    /// buffer named); otherwise `model` unchanged. Every job that refuses unstable parameters
    /// reads its verdict here.
    pub fn stability_of(&self, model: crate::Stability) -> crate::Stability {
        match self.buffer_size() {
            Some(k) => crate::Stability::Stable {
                condition: format!("finite buffer K = {k} (truncation.buffer): a loss system, stationary at every load"),
            },
            None => model,
        }
    }

    /// Checks the ranges of the truncation keys.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `truncation.levels`, `truncation.tol` (outside
    /// [[`MIN_TRUNCATION_TOL`], 1)), `truncation.max_levels`, or `truncation.buffer` without
    /// `truncation.levels`.
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
        if self.buffer && self.levels.is_none() {
            return Err(crate::out_of_range("truncation.buffer", "true", "only with a fixed truncation.levels (the buffer K)"));
        }
        Ok(())
    }
}

/// Size of a model-file text from which [`ModelFile::parse_within`] parses on a helper thread
/// (a smaller text parses in well under a millisecond per kilobyte: about 3 ms here).
pub const PARSE_THREAD_BYTES: usize = 256 * 1024;

impl ModelFile {
    /// Parses a model file and applies `overrides` (`NAME=VALUE` strings) without checking
    /// that the model builds: for reading its parameters (e.g. a figure's placeholders).
    /// [`parse`](Self::parse) is this, then every range and the model checked.
    ///
    /// # Errors
    /// [`ModelError::File`] for malformed TOML, unknown keys or kinds, wrong types;
    /// [`ModelError::BadOverride`] for an override that names no key.
    pub fn parse_declarations(text: &str, overrides: &[String]) -> Result<Self, ModelError> {
        if overrides.is_empty() {
            // one parse of the text (a model of many transitions takes a while to parse)
            return toml::from_str(text).map_err(|e| file_error(&e, text));
        }
        let mut doc: toml::Table = text.parse().map_err(|e: toml::de::Error| file_error(&e, text))?;
        for o in overrides {
            apply_override(&mut doc, o)?;
        }
        ModelFile::deserialize(doc).map_err(|e| match file_error(&e, "") {
            ModelError::File { position, message, .. } => {
                ModelError::File { position, after_set: Some(printable(&overrides.join(" --set "))), message }
            }
            other => other,
        })
    }

    /// Parses a model file and applies `overrides` (`NAME=VALUE` strings), then checks every range.
    ///
    /// # Errors
    /// [`ModelError::File`] for malformed TOML, unknown keys or kinds, wrong types (the
    /// message has the line and the key); [`ModelError::BadOverride`] for an override that
    /// names no key; [`ModelError::OutOfRange`] for a value outside its range.
    pub fn parse(text: &str, overrides: &[String]) -> Result<Self, ModelError> {
        Self::checked(Self::parse_declarations(text, overrides)?)
    }

    /// [`parse`](Self::parse) within the job's `deadline` (its wall-clock limit and cancel
    /// flag). The toml crate's parse cannot be interrupted (a file of 200,000 transitions, 16
    /// MB, takes about 2 s): for a text of at least [`PARSE_THREAD_BYTES`] under a bounded
    /// deadline it runs on a helper thread while this thread watches the deadline every 10 ms,
    /// and is abandoned there (the helper finishes on its own and its result is dropped; no
    /// thread is killed). The checks that follow are not started past the deadline (the model's
    /// own check takes at most the quarter of a second [`parse`](Self::parse) allows it).
    ///
    /// # Errors
    /// As [`parse`](Self::parse); [`ModelError::Interrupted`] when the deadline passes while
    /// the text is parsed.
    pub fn parse_within(text: &str, overrides: &[String], deadline: &Deadline) -> Result<Self, ModelError> {
        if !deadline.expired() && (deadline.is_unbounded() || text.len() < PARSE_THREAD_BYTES) {
            return Self::parse(text, overrides);
        }
        Self::checked_within(Self::parse_declarations_within(text, overrides, deadline)?, deadline)
    }

    /// [`parse_declarations`](Self::parse_declarations) within `deadline`, as
    /// [`parse_within`](Self::parse_within) parses (a large text on a helper thread abandoned
    /// at the deadline): for reading a model file's parameters under a job's limit.
    ///
    /// # Errors
    /// As [`parse_declarations`](Self::parse_declarations); [`ModelError::Interrupted`] when
    /// the deadline passes first.
    pub fn parse_declarations_within(text: &str, overrides: &[String], deadline: &Deadline) -> Result<Self, ModelError> {
        let interrupted = || ModelError::Interrupted {
            during: format!("reading the model file (the TOML parse of {} bytes)", text.len()),
            reason: deadline.reason(),
        };
        if deadline.expired() {
            // the time went to the work before this read (a job that reads its model again)
            return Err(ModelError::Interrupted {
                during: format!("the job, before it read the model file ({} bytes of TOML),", text.len()),
                reason: deadline.reason(),
            });
        }
        if deadline.is_unbounded() || text.len() < PARSE_THREAD_BYTES {
            return Self::parse_declarations(text, overrides);
        }
        let (owned, set) = (text.to_owned(), overrides.to_vec());
        match deadline.wait_for("mfq-parse", move || Self::parse_declarations(&owned, &set)) {
            Ok(result) => result,
            Err(crate::Abandoned::Expired) => Err(interrupted()),
            // no helper thread, or it ended without an answer (it panicked): parse here, as
            // `parse` would, and check the deadline after
            Err(crate::Abandoned::NoThread | crate::Abandoned::Panicked) => {
                let file = Self::parse_declarations(text, overrides)?;
                if deadline.expired() {
                    return Err(interrupted());
                }
                Ok(file)
            }
        }
    }

    /// The checks of [`parse`](Self::parse) after the declarations are read.
    fn checked(file: Self) -> Result<Self, ModelError> {
        Self::checked_within(file, &Deadline::none())
    }

    /// [`checked`](Self::checked), whose model check also stops at `deadline` (`Interrupted`).
    fn checked_within(file: Self, deadline: &Deadline) -> Result<Self, ModelError> {
        if deadline.expired() {
            return Err(ModelError::Interrupted { during: "checking the model file".into(), reason: deadline.reason() });
        }
        file.truncation.validate()?;
        if file.truncation.buffer && !file.model.has_job_buffer() {
            return Err(crate::out_of_range(
                "truncation.buffer",
                "true",
                &format!(
                    "only for kinds whose truncation level is a per-server buffer of jobs (a queue-length tail x_k, not {}: \
                     remove truncation.buffer)",
                    file.model.kind()
                ),
            ));
        }
        // kinds whose only output is a verdict given by another job may opt out (KindSpec::has_model)
        if file.model.has_model() {
            file.model.validate(file.truncation.levels.unwrap_or_else(|| file.model.initial_levels()))?;
        }
        Ok(file)
    }
}

/// A TOML or format error as one line: `TOML parse error at line L, column C: MESSAGE` when
/// the error has a position in `text`, else the message and the key path (`... in `model``).
/// (The toml crate's own `Display` spreads the error over five lines with a source excerpt.)
fn file_error(e: &toml::de::Error, text: &str) -> ModelError {
    // an integer beyond 64 bits (`d = 1000000000000000000000000000000`): the toml crate says
    // only "expected any valid TOML value"; name the key, the value and the key's range
    if e.message().contains("invalid type: integer") {
        if let Some((path, literal, kind)) = oversized_integer(text) {
            return oversized(kind.as_deref(), &path, &literal);
        }
    }
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
        // the truncation keys are integers >= 1 and >= 2: say their range, as validate() does
        for (key, range) in [("levels", "[1, 10000000]"), ("max_levels", "[2, 10000000]")] {
            let tail = format!(", expected usize in `truncation.{key}`");
            if let Some(head) = line.strip_suffix(&tail) {
                line = format!("truncation.{key}: {head}, expected an integer in {range}");
            }
        }
        for (from, to) in TYPES {
            line = line.replace(from, to);
        }
        line
    };
    // an error inside [model] names its key (`model.d: ...`): point at that key's line
    let keyed = e.message().split_once(": ").filter(|(path, _)| path.starts_with("model")).map(|(path, _)| path);
    let span = keyed.and_then(|path| key_span(text, path)).or_else(|| e.span());
    let (position, message) = match span.clone().and_then(|span| text.get(..span.start)) {
        Some(before) => {
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            // the line itself, which names the key or the table
            let source: String = text.lines().nth(line - 1).unwrap_or("").trim().chars().take(60).collect();
            let mut message = join(e.message());
            // `levels = 2.5` in [truncation]: the key is on the line, its range goes in the message
            for (key, range) in [("max_levels", "[2, 10000000]"), ("levels", "[1, 10000000]")] {
                let on_line = source.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with('='));
                if keyed.is_none() && on_line && message.ends_with("expected an integer >= 0") {
                    message = format!("truncation.{key}: {}in {range}", message.trim_end_matches(">= 0"));
                }
            }
            // an unknown key outside [model] (`levelz` in [truncation]): name it by its path
            let unknown = keyed.is_none() && message.starts_with("unknown field `");
            if let Some(path) = span.filter(|_| unknown).and_then(|span| key_at(text, span.start)) {
                message = format!("{path}: {message}");
            }
            (Some(crate::FilePosition { line, column, text: printable(&source) }), message)
        }
        // the message without the ` in `model`` that repeats the key
        None if keyed.is_some() => (None, join(e.message())),
        // `unknown field `levelz`, ... in `truncation``: the key's path first, as inside [model]
        None => {
            let message = join(&e.to_string());
            let unknown = message.strip_prefix("unknown field `").and_then(|rest| rest.split_once('`')).map(|(key, _)| key.to_string());
            match (unknown, message.rsplit_once(" in `")) {
                (Some(key), Some((head, table))) if table.ends_with('`') => {
                    (None, format!("{}.{key}: {head}", table.trim_end_matches('`')))
                }
                _ => (None, message),
            }
        }
    };
    ModelError::File { position, after_set: None, message }
}

/// The dotted path (`truncation.levelz`) of the key that starts at byte `start` of the TOML
/// document `text`; `None` when `text` does not parse or no key starts there.
fn key_at(text: &str, start: usize) -> Option<String> {
    fn walk(table: &toml::de::DeTable<'_>, prefix: &str, start: usize) -> Option<String> {
        table.iter().find_map(|(k, v)| {
            let path = if prefix.is_empty() { k.get_ref().to_string() } else { format!("{prefix}.{}", k.get_ref()) };
            if k.span().start == start {
                return Some(path);
            }
            match v.get_ref() {
                toml::de::DeValue::Table(t) => walk(t, &path, start),
                toml::de::DeValue::Array(a) => a.iter().enumerate().find_map(|(i, e)| match e.get_ref() {
                    toml::de::DeValue::Table(t) => walk(t, &format!("{path}[{i}]"), start),
                    _ => None,
                }),
                _ => None,
            }
        })
    }
    walk(toml::de::DeTable::parse(text).ok()?.get_ref(), "", start)
}

/// The first integer of the TOML document `text` that does not fit in 64 bits, as (its dotted
/// key, `model.d` or `model.classes[1].speed`, its literal, and the file's `model.kind`); `None` when there is none or
/// `text` does not parse. (The toml crate's document parser keeps integers as text; only their
/// conversion to a value refuses those beyond `i64`.)
fn oversized_integer(text: &str) -> Option<(String, String, Option<String>)> {
    fn walk(value: &toml::de::DeValue<'_>, path: String) -> Option<(String, String)> {
        match value {
            toml::de::DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix()).is_err().then(|| (path, i.to_string())),
            toml::de::DeValue::Table(t) => t.iter().find_map(|(k, v)| {
                let key = if path.is_empty() { k.get_ref().to_string() } else { format!("{path}.{}", k.get_ref()) };
                walk(v.get_ref(), key)
            }),
            toml::de::DeValue::Array(a) => a.iter().enumerate().find_map(|(i, v)| walk(v.get_ref(), format!("{path}[{i}]"))),
            _ => None,
        }
    }
    let doc = toml::de::DeTable::parse(text).ok()?.into_inner();
    let kind = doc.get("model").and_then(|m| m.get_ref().get("kind")).and_then(|k| k.get_ref().as_str()).map(str::to_string);
    let (path, literal) = walk(&toml::de::DeValue::Table(doc), String::new())?;
    Some((path, literal, kind))
}

/// The error for an integer beyond 64 bits given to the dotted key `path` (in a file or a
/// `--set`): [`ModelError::OutOfRange`] with the key's range, that of the parameter of the
/// file's `kind` (the registry) or of a truncation key, else TOML's 64 bits.
fn oversized(kind: Option<&str>, path: &str, literal: &str) -> ModelError {
    let kind = kind.and_then(crate::registry::kind);
    let param = path.strip_prefix("model.").and_then(|key| kind.and_then(|k| k.param(key)));
    let allowed = match (param, path) {
        (Some(p), _) => p.allowed.to_string(),
        (None, "truncation.levels") => "an integer in [1, 10000000]".into(),
        (None, "truncation.max_levels") => "an integer in [2, 10000000]".into(),
        _ => format!("an integer in [{}, {}] (a TOML integer has 64 bits)", i64::MIN, i64::MAX),
    };
    let allowed = if allowed.starts_with("integer") { format!("an {allowed}") } else { allowed };
    crate::out_of_range(path, literal, &allowed)
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

/// The value the model file `text` gives the key that the override name `name` refers to (as
/// [`has_key`]: `alpha` means `model.alpha`, a generic model's declared parameter
/// `model.parameters.NAME`); `None` when the file does not set it (or does not parse).
pub fn value_of(text: &str, name: &str) -> Option<toml::Value> {
    value_in(&text.parse::<toml::Table>().ok()?, name)
}

/// [`value_of`] in a model file already read as a TOML table `doc` (e.g.
/// `toml::Table::try_from(&model_file)`, without writing and parsing its text again).
pub fn value_in(doc: &toml::Table, name: &str) -> Option<toml::Value> {
    let parts = generic_parameter_path(doc, name.trim()).unwrap_or_else(|| key_path(name.trim()));
    let (last, path) = parts.split_last()?;
    let mut node = doc;
    for p in path {
        node = node.get(*p)?.as_table()?;
    }
    node.get(*last).cloned()
}

/// Why the override path `parts` names no parameter of the model in `doc`, or `None` when it
/// does: a key of `[model]` must be a parameter the kind declares (the registry), and a generic
/// model's `parameters.NAME` (or a bare `NAME`) one of its `[model.parameters]`. The truncation
/// level `K` of the built-in kinds is `truncation.levels`, not a model parameter: the message says so.
fn undeclared(doc: &toml::Table, parts: &[&str]) -> Option<String> {
    let model = doc.get("model").and_then(|m| m.as_table())?;
    let kind_name = model.get("kind").and_then(|k| k.as_str())?;
    let ["model", key, rest @ ..] = parts else { return None };
    let hint = |key: &str| {
        if ["K", "k", "levels"].contains(&key) {
            "; the truncation level K is set with --set truncation.levels=K (fixed) or truncation.max_levels (the automatic truncation's cap)"
        } else {
            ""
        }
    };
    if kind_name == "generic" {
        let declared: Vec<&str> =
            model.get("parameters").and_then(|p| p.as_table()).map_or_else(Vec::new, |p| p.keys().map(String::as_str).collect());
        let list = if declared.is_empty() { "none".to_string() } else { declared.join(", ") };
        let name = match (*key, rest) {
            ("parameters", [name]) if !declared.contains(name) => *name,
            // a bare NAME that is not a declared parameter (generic_parameter_path did not match)
            (name, []) if crate::registry::kind("generic").is_some_and(|k| k.param(name).is_none()) => name,
            _ => return None,
        };
        return Some(format!("the generic model declares no parameter '{name}' (its [model.parameters]: {list}){}", hint(name)));
    }
    let kind = crate::registry::kind(kind_name)?;
    if *key != "kind" && kind.param(key).is_none() {
        let names: Vec<&str> = kind.params.iter().map(|p| p.name).collect();
        return Some(format!(
            "kind {} has no parameter '{key}' (its parameters: {}; see `mfq models`){}",
            kind.name,
            names.join(", "),
            hint(key)
        ));
    }
    None
}

/// Applies one `NAME=VALUE` override to a parsed model file (see the module docs).
///
/// # Errors
/// [`ModelError::BadOverride`] when there is no `=`, the name is empty, a part of the path
/// is not a table or does not exist, or the value is a number beyond the largest double
/// (`1e400`) or below the smallest positive one (`1e-400`).
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
    if let Some(reason) = undeclared(doc, &parts) {
        return Err(bad(reason));
    }
    let value = value.trim();
    // one TOML value, or else the text as a string (`0.9\nlambda = 3` is not a value)
    let parsed: toml::Value = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .filter(|t| t.len() == 1)
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    // a number beyond the largest double is not a TOML value (it would be read as the string
    // "1e400"): say that it overflows
    if let toml::Value::String(_) = parsed {
        if value.parse::<f64>().is_ok_and(f64::is_infinite) && value.chars().any(|c| c.is_ascii_digit()) {
            return Err(bad(format!("{value} is beyond the largest number (about 1.8e308); allowed: a finite number")));
        }
    }
    // TOML reads a number below the smallest double as 0: say so rather than echo 0
    if let toml::Value::Float(f) = parsed {
        let mantissa = value.split(['e', 'E']).next().unwrap_or("");
        if f == 0.0 && mantissa.chars().any(|c| ('1'..='9').contains(&c)) {
            return Err(bad(format!("{value} is below the smallest positive number (about 2.2e-308) and would be read as 0")));
        }
    }
    // an integer beyond 64 bits is not a TOML value either (it would be read as a string)
    if let toml::Value::String(_) = parsed {
        let digits = value.strip_prefix(['+', '-']).unwrap_or(value).replace('_', "");
        let integer = !digits.starts_with('0') && digits.chars().all(|c| c.is_ascii_digit());
        if integer && !digits.is_empty() && value.replace('_', "").parse::<i64>().is_err() {
            let kind = doc.get("model").and_then(|m| m.get("kind")).and_then(|k| k.as_str());
            return Err(oversized(kind, &parts.join("."), value));
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
    use crate::models::{JiqSpec, JsqSpec, OpinionBiasedSpec, OpinionStubbornSpec};

    const JSQ: &str = "[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n";

    #[test]
    fn generic_overrides_must_name_a_declared_parameter() {
        let generic = "[model]\nkind = \"generic\"\n[model.parameters]\nmu = 2.0\nrho = 0.3\n";
        for set in ["parameters.nu=1", "model.parameters.nu=1", "nu=1"] {
            let e = ModelFile::parse(generic, &[set.into()]).unwrap_err().to_string();
            assert!(e.contains("'nu'") && e.contains("mu, rho"), "{set}: {e}");
        }
        let e = ModelFile::parse("[model]\nkind = \"generic\"\n", &["parameters.a=1".into()]).unwrap_err().to_string();
        assert!(e.contains("'a'") && e.contains("none"), "{e}");
        // a declared one is applied (the parse then fails later, for the empty model, not on the name)
        let mut doc: toml::Table = generic.parse().unwrap();
        apply_override(&mut doc, "parameters.rho=0.7").unwrap();
        apply_override(&mut doc, "mu=5").unwrap();
        assert_eq!(doc["model"]["parameters"]["rho"].as_float(), Some(0.7));
        assert_eq!(doc["model"]["parameters"]["mu"].as_integer(), Some(5));
    }

    #[test]
    fn the_truncation_level_is_named_where_k_is_tried() {
        for set in ["K=30", "levels=30", "model.K=30"] {
            let e = ModelFile::parse(JSQ, &[set.into()]).unwrap_err().to_string();
            assert!(e.contains("truncation.levels") && e.contains("lambda, d"), "{set}: {e}");
        }
        for (set, key, range) in [
            ("truncation.levels=0", "truncation.levels", "[1, 10000000]"),
            ("truncation.levels=2.5", "truncation.levels", "[1, 10000000]"),
            ("truncation.levels=-3", "truncation.levels", "[1, 10000000]"),
            ("truncation.max_levels=7.5", "truncation.max_levels", "[2, 10000000]"),
        ] {
            let e = ModelFile::parse(JSQ, &[set.into()]).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains(range) && !e.contains("usize"), "{set}: {e}");
        }
        let e = ModelFile::parse(&format!("{JSQ}[truncation]\nlevels = 1.5\n"), &[]).unwrap_err().to_string();
        assert!(e.contains("levels = 1.5") && e.contains("[1, 10000000]"), "{e}");
    }

    /// [`Truncation::KEYS`] are the keys the parser takes, in the order it lists them.
    #[test]
    fn the_truncation_keys_are_the_parsers() {
        let e = ModelFile::parse(&format!("{JSQ}[truncation]\nlevelz = 3\n"), &[]).unwrap_err().to_string();
        let listed: Vec<String> = Truncation::KEYS.iter().map(|k| format!("`{k}`")).collect();
        assert!(e.ends_with(&format!("expected one of {}", listed.join(", "))), "{e}");
        let t = toml::Table::try_from(Truncation { levels: Some(3), buffer: true, ..Default::default() }).unwrap();
        assert_eq!(t.keys().map(String::as_str).collect::<Vec<_>>().len(), Truncation::KEYS.len());
        assert!(t.keys().all(|k| Truncation::KEYS.contains(&k.as_str())), "{t:?}");
    }

    #[test]
    fn parses_and_overrides() {
        let f = ModelFile::parse(JSQ, &["lambda=0.95".into(), "truncation.levels=40".into()]).unwrap();
        assert_eq!(f.model, JsqSpec { lambda: 0.95, d: 2 }.into());
        assert_eq!(f.truncation.levels, Some(40));
        let f = ModelFile::parse(JSQ, &["model.d=3".into()]).unwrap();
        assert_eq!(f.model, JsqSpec { lambda: 0.9, d: 3 }.into());
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
        assert!(matches!(e, ModelError::File { position: Some(_), .. }));
    }

    #[test]
    fn opinion_kinds_parse_and_have_no_lambda() {
        let f = ModelFile::parse("[model]\nkind = \"opinion-stubborn\"\ngamma0 = 0.1\ngamma1 = 0.1\n", &[]).unwrap();
        assert_eq!(f.model, OpinionStubbornSpec { gamma0: 0.1, gamma1: 0.1 }.into());
        assert_eq!((f.model.kind(), f.model.lambda()), ("opinion-stubborn", None));
        assert_eq!(f.model.build(16).unwrap().dim(), 1);
        let f = ModelFile::parse("[model]\nkind = \"opinion-biased\"\nalpha = 0.05\n", &["alpha=0.2".into()]).unwrap();
        assert_eq!(f.model, OpinionBiasedSpec { alpha: 0.2 }.into());
        let e = ModelFile::parse("[model]\nkind = \"opinion-biased\"\nalpha = 2\n", &[]).unwrap_err();
        assert!(e.to_string().contains("model.alpha = 2"), "{e}");
        assert_eq!(ModelSpec::from(JiqSpec { lambda: 0.5 }).lambda(), Some(0.5));
    }

    #[test]
    fn type_errors_name_the_key_and_its_line() {
        let e = ModelFile::parse("[model]\nkind = \"jsq\"\nlambda = 0.9\nd = \"two\"\n", &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "TOML parse error at line 4, column 1 (d = \"two\"): model.d: invalid type: string \"two\", expected an integer in [1, 10000]"
        );
        // through an override: no line, the key all the same (once)
        let e = ModelFile::parse(JSQ, &["d=two".into()]).unwrap_err();
        assert_eq!(e.to_string(), "after --set d=two: model.d: invalid type: string \"two\", expected an integer in [1, 10000]");
        // inside a tagged table inside [model]
        let text = "[model]\nkind = \"jsq-ph\"\nlambda = 0.5\nd = 2\n[model.job_size]\nlaw = \"erlang\"\nk = -3\n";
        let e = ModelFile::parse(text, &[]).unwrap_err();
        assert!(
            e.to_string().starts_with("TOML parse error at line 7, column 1 (k = -3): model.job_size.k: invalid value: integer `-3`"),
            "{e}"
        );
    }

    /// Every integer key of every kind (its `Param` with an integer range) names the range its
    /// `allowed` states, not its Rust type's (`an integer >= 0 (32 bits)`, `expected usize`),
    /// for a negative value, a fraction and a string alike.
    #[test]
    fn every_integer_key_names_its_own_range() {
        let mut checked = 0;
        for kind in crate::registry::KINDS {
            for p in kind.params.iter().filter(|p| p.range.is_some_and(|r| r.integer)) {
                let allowed = format!("an {}", p.allowed);
                assert!(p.allowed.starts_with("integer"), "{}.{}: {}", kind.name, p.name, p.allowed);
                for (value, found) in [
                    ("-1", "invalid value: integer `-1`"),
                    ("2.5", "invalid type: floating point `2.5`"),
                    ("\"x\"", "invalid type: string \"x\""),
                ] {
                    let text = format!("[model]\nkind = \"{}\"\n{} = {value}\n", kind.name, p.name);
                    let e = ModelFile::parse(&text, &[]).unwrap_err().to_string();
                    let want = format!("model.{}: {found}, expected {allowed}", p.name);
                    assert!(e.ends_with(&want), "{}.{} = {value}: {e}\nwant: {want}", kind.name, p.name);
                    checked += 1;
                }
            }
        }
        assert!(checked >= 3 * 25, "{checked}");
        // the integer keys inside tables of [model]: Erlang phases, a compatibility graph's servers
        let text = "[model]\nkind = \"jsq-ph\"\nlambda = 0.5\nd = 2\n[model.job_size]\nlaw = \"erlang\"\nk = 2.5\n";
        let e = ModelFile::parse(text, &[]).unwrap_err().to_string();
        assert!(e.ends_with("model.job_size.k: invalid type: floating point `2.5`, expected an integer in [1, 16]"), "{e}");
        let text = "[model]\nkind = \"redundancy-graph\"\nmu = [1.0, 1.0]\n[[model.types]]\nlambda = 0.5\nservers = [1, -1]\n";
        let e = ModelFile::parse(text, &[]).unwrap_err().to_string();
        assert!(e.ends_with("model.types[0].servers[1]: invalid value: integer `-1`, expected a server number in 1..=K, K the number of entries of model.mu"), "{e}");
    }

    #[test]
    fn specs_serialize_tagged_and_read_back() {
        let text = "[model]\nkind = \"pod-li-ph\"\nlambda = 0.5\nd = 2\neps = 0.1\n[model.job_size]\nlaw = \"h2\"\nscv = 4.0\n";
        let f = ModelFile::parse(text, &[]).unwrap();
        let written = toml::to_string(&f).unwrap();
        assert!(written.contains("kind = \"pod-li-ph\"") && written.contains("law = \"h2\""), "{written}");
        assert_eq!(ModelFile::parse(&written, &[]).unwrap(), f);
    }

    /// An unknown key of [truncation] (`levelz`) named no key path, so the Python package's
    /// `InvalidInput.field` was `None`: the message starts with its path, in a file and after
    /// `--set`, as an unknown key of [model] does (`model.levelz: ...`).
    #[test]
    fn unknown_truncation_keys_name_their_path() {
        let e = ModelFile::parse(&format!("{JSQ}[truncation]\nlevelz = 3\n"), &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "TOML parse error at line 6, column 1 (levelz = 3): truncation.levelz: unknown field `levelz`, expected one of `levels`, `tol`, `max_levels`, `buffer`"
        );
        let e = ModelFile::parse(JSQ, &["truncation.levelz=3".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "after --set truncation.levelz=3: truncation.levelz: unknown field `levelz`, expected one of `levels`, `tol`, `max_levels`, `buffer`"
        );
        // a top-level key is its own path
        let e = ModelFile::parse(&format!("modelz = 1\n{JSQ}"), &[]).unwrap_err().to_string();
        assert!(e.contains("(modelz = 1): modelz: unknown field `modelz`, expected one of"), "{e}");
    }

    /// An integer beyond TOML's 64 bits (`d = 10**30` from Python) named the allowed range of
    /// no key ("expected any valid TOML value"): now the key, the value and the key's range, in
    /// a file, through `--set`, and for a truncation key or a key of no kind.
    #[test]
    fn integers_beyond_64_bits_name_the_key_and_its_range() {
        let big = "1000000000000000000000000000000";
        let e = ModelFile::parse(&format!("[model]\nkind = \"jsq\"\nlambda = 0.9\nd = {big}\n"), &[]).unwrap_err();
        // (a number longer than 20 digits is shown in exponent form, as every value is)
        assert_eq!(e.to_string(), "model.d = 1e30 is not allowed: an integer in [1, 10000]");
        assert!(matches!(&e, ModelError::OutOfRange { field, value, .. } if field == "model.d" && value == "1e30"), "{e:?}");
        let e = ModelFile::parse(JSQ, &[format!("d={big}")]).unwrap_err();
        assert_eq!(e.to_string(), "model.d = 1e30 is not allowed: an integer in [1, 10000]");
        let e = ModelFile::parse(JSQ, &[format!("d=-{big}")]).unwrap_err();
        assert_eq!(e.to_string(), "model.d = -1e30 is not allowed: an integer in [1, 10000]");
        let e = ModelFile::parse(&format!("{JSQ}[truncation]\nlevels = {big}\n"), &[]).unwrap_err();
        assert_eq!(e.to_string(), "truncation.levels = 1e30 is not allowed: an integer in [1, 10000000]");
        let e = ModelFile::parse(&format!("{JSQ}bogus = 99999999999999999999\n"), &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "model.bogus = 99999999999999999999 is not allowed: an integer in [-9223372036854775808, 9223372036854775807] (a TOML integer has 64 bits)"
        );
        // the largest 64-bit integer is a value: its range is the key's own check
        let e = ModelFile::parse(JSQ, &["d=9223372036854775807".into()]).unwrap_err().to_string();
        assert!(e.contains("model.d") && e.contains("[1, 10000]"), "{e}");
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
