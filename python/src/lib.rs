//! The Python package `mfq`: its compiled module `mfq._mfq`, a thin PyO3 binding of the front
//! door crate `mfq` (the same `mfq::Model` calls the `mfq` command makes; no numerics here).
//!
//! The Pythonic layer (keyword arguments, result classes, exceptions, pickling) is the pure
//! Python package in `python/mfq/`; this module hands it plain values: dicts of numbers and
//! numpy arrays (float64) for the fast fixed point, JSON text of the result structs for the
//! rest. Every call that can take long runs on a worker thread with the GIL released and
//! returns on Ctrl-C ([`run::interruptible`]). Errors become `mfq.InvalidInput` /
//! `mfq.Unstable` with their fields ([`errors::to_py`]); a panic becomes a `RuntimeError`, never
//! an abort. See docs/python.md.

mod errors;
mod run;

use mfq::errors::ExactError;
use mfq::{CheckOptions, Deadline, ExactMethod, ExactOptions, FixedPoint, FixedPointOptions, Method, SimOptions, SolveOptions};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// A transient for Python: times `(m,)`, states `(m, n)`, status tag, status in words.
type TrajectoryParts<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray2<f64>>, String, String);

/// A model (the front door's `mfq::Model`): a model file's kind, parameters and truncation.
#[pyclass(module = "mfq._mfq", name = "Core", frozen)]
struct Core {
    model: mfq::Model,
    /// Whether a fixed point is first tried on the calling thread (see [`INLINE_SECONDS`]).
    inline: bool,
}

/// A fixed point of a small model (at most [`INLINE_MAX_STATES`] states at its first truncation
/// level) is first solved on the calling thread (GIL released) with a wall-clock limit of this
/// many seconds: a JSQ(2) solve takes ~20 us, and handing it to a worker thread costs more than
/// that. A solve not finished by then is run again, whole, on a worker ([`run::interruptible`]),
/// so Ctrl-C is answered at most this much later and the result is the one a single call gives.
const INLINE_SECONDS: f64 = 0.02;

/// See [`INLINE_SECONDS`]: models small enough that one solver step stays well below it.
const INLINE_MAX_STATES: usize = 200;

impl Core {
    fn new(model: mfq::Model) -> Core {
        let inline = model.build(None).is_ok_and(|m| m.dim() <= INLINE_MAX_STATES);
        Core { model, inline }
    }

    /// Checks a state `x` given to `drift` or `jacobian` (truncation level `levels`, default
    /// `len(x)`) as `mfq solve --x0` checks a start ([`mfq::Model::check_state`]): finite entries
    /// and every constraint of the model's layout (`0 <= x_k <= 1`, `x_{k+1} <= x_k`, ...) within
    /// round-off (`mfq_ode::INVARIANT_TOL`). The kinds' rates clamp the entries to `[0, 1]`, so the
    /// drift of a state outside the state space would be that of another state, with a Jacobian
    /// that is not its derivative: such a state is refused, not evaluated. A state of the wrong
    /// size (an empty one included) is refused with its size and the model's (`Error::StateSize`).
    fn check_state(&self, py: Python<'_>, x: &[f64], levels: Option<usize>) -> PyResult<()> {
        check_finite(py, x, "x")?;
        self.model.check_state(x, levels).map_err(|e| errors::state_to_py(py, &e, "x"))
    }
}

/// `Ok` or the Python exception of a front-door error.
fn py_result<T>(py: Python<'_>, r: Result<T, mfq::Error>) -> PyResult<T> {
    r.map_err(|e| errors::to_py(py, &e))
}

/// A result struct as JSON text (the Python layer reads it with `json.loads`).
fn json<T: Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(format!("internal error in mfq: {e}")))
}

/// The `status` tag of a status enum (`converged`, `time-limit`, ...).
fn status_tag<T: Serialize>(status: &T) -> String {
    serde_json::to_value(status).ok().and_then(|v| v.get("status").and_then(|s| s.as_str()).map(str::to_string)).unwrap_or_default()
}

/// The fixed point as a dict of plain values and float64 arrays (keys: the fields of
/// `mfq.FixedPoint`). A solve that did not converge has no observables (`Model::fixed_point`
/// drops them; `loss_probability`, kept there as a truncation diagnostic, is `None` here too).
fn fixed_point_dict<'py>(py: Python<'py>, fp: FixedPoint) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let converged = fp.converged();
    let o = fp.observables;
    d.set_item(intern!(py, "model"), fp.model)?;
    d.set_item(intern!(py, "status"), status_tag(&fp.status))?;
    d.set_item(intern!(py, "status_message"), fp.status.to_string())?;
    d.set_item(intern!(py, "x"), PyArray1::from_vec(py, fp.x))?;
    d.set_item(intern!(py, "tail"), PyArray1::from_vec(py, o.tail))?;
    d.set_item(intern!(py, "residual"), fp.residual)?;
    d.set_item(intern!(py, "truncation"), fp.truncation.levels)?;
    d.set_item(intern!(py, "mass_at_truncation"), fp.truncation.mass_at_truncation)?;
    d.set_item(intern!(py, "levels_tried"), fp.truncation.tried)?;
    d.set_item(intern!(py, "iterations"), fp.iterations)?;
    d.set_item(intern!(py, "total_iterations"), fp.total_iterations)?;
    d.set_item(intern!(py, "spectral_abscissa"), fp.spectral_abscissa)?;
    d.set_item(intern!(py, "jacobian"), fp.jacobian)?;
    d.set_item(intern!(py, "mean_queue_length"), o.mean_queue_length)?;
    d.set_item(intern!(py, "mean_response_time"), o.mean_response_time)?;
    d.set_item(intern!(py, "prob_wait"), o.prob_wait)?;
    d.set_item(intern!(py, "throughput"), o.throughput)?;
    d.set_item(intern!(py, "loss_probability"), converged.then_some(o.loss_probability))?;
    let extras = PyDict::new(py);
    for (name, value) in o.extras {
        extras.set_item(name, value)?;
    }
    d.set_item(intern!(py, "extras"), extras)?;
    Ok(d)
}

/// `InvalidInput` naming the first entry of the state `x` (the argument `field`) that is not a
/// finite number (NaN or an infinity), as a 1-based entry and as the Python index.
fn check_finite(py: Python<'_>, x: &[f64], field: &str) -> PyResult<()> {
    match x.iter().position(|v| !v.is_finite()) {
        Some(i) => {
            let (entry, v) = (i + 1, x[i]);
            let allowed = "finite numbers (a state of the model)";
            let message = format!("{field}: entry {entry} ({field}[{i}] in Python) is {v}, not a finite number; allowed: {allowed}");
            Err(errors::invalid_input(py, message, field, format!("entry {entry} = {v}"), allowed))
        }
        None => Ok(()),
    }
}

/// The Python exception for an error of [`mfq::Model::check_fixed_point_start`] (the argument
/// `x0`).
fn start_error(py: Python<'_>, e: mfq::Error) -> PyErr {
    match e {
        mfq::Error::StateSize { entries, dim, levels } => errors::invalid_input(
            py,
            format!(
                "x0 has {entries} entries; the solver starts at truncation level K = {levels}, where the model has {dim} states (a \
                 start of another size would be dropped: give {dim} entries, or fix truncation.levels at the level of x0)"
            ),
            "x0",
            format!("{entries} entries"),
            &format!("{dim} entries (the model's states at K = {levels})"),
        ),
        e => errors::state_to_py(py, &e, "x0"),
    }
}

fn method(name: &str) -> Result<Method, mfq::Error> {
    Ok(match name {
        "auto" => Method::Auto,
        "dopri5" => Method::Dopri5,
        "dop853" => Method::Dop853,
        "rosenbrock23" => Method::Rosenbrock23,
        "bdf" => Method::Bdf,
        other => {
            return Err(mfq::errors::ModelError::OutOfRange {
                field: "method".into(),
                value: other.into(),
                allowed: "one of auto, dopri5, dop853, rosenbrock23, bdf".into(),
            }
            .into())
        }
    })
}

#[pymethods]
impl Core {
    /// The model of a model file's text with `overrides` (`NAME=VALUE`, as `--set`), read
    /// within `max_seconds` (checked by the Python layer; a large file's parse stops there
    /// with `ModelError::Interrupted`, `mfq::Model::from_toml_within`). `from_dict`: the text
    /// was written from a dict (`mfq.Model(...)`), so an error names the dict's key, not a line
    /// of the text; `call`: the Python call that took the overrides, named by their errors
    /// instead of `--set` ([`errors::model_to_py`]).
    #[staticmethod]
    #[pyo3(signature = (text, overrides = Vec::new(), max_seconds = None, from_dict = false, call = "Model.from_toml"))]
    fn from_toml(
        py: Python<'_>,
        text: &str,
        overrides: Vec<String>,
        max_seconds: Option<f64>,
        from_dict: bool,
        call: &str,
    ) -> PyResult<Core> {
        let deadline = max_seconds.map_or_else(Deadline::none, Deadline::after);
        let origin = errors::Origin { dict: from_dict, call, overrides: &overrides };
        let model = mfq::Model::from_toml_within(text, &overrides, &deadline).map_err(|e| errors::model_to_py(py, &e, &origin))?;
        Ok(Core::new(model))
    }

    /// The model of the model file at `path` with `overrides`, read within `max_seconds` (as
    /// [`from_toml`](Self::from_toml); an override's error names `Model.from_file`).
    #[staticmethod]
    #[pyo3(signature = (path, overrides = Vec::new(), max_seconds = None))]
    fn from_file(py: Python<'_>, path: PathBuf, overrides: Vec<String>, max_seconds: Option<f64>) -> PyResult<Core> {
        let deadline = max_seconds.map_or_else(Deadline::none, Deadline::after);
        let origin = errors::Origin { dict: false, call: "Model.from_file", overrides: &overrides };
        let model = mfq::Model::from_file_within(&path, &overrides, &deadline).map_err(|e| errors::model_to_py(py, &e, &origin))?;
        Ok(Core::new(model))
    }

    /// The same model with `overrides` applied (`Model.with_`: an error names that call and its
    /// arguments, not `--set`).
    fn with_overrides(&self, py: Python<'_>, overrides: Vec<String>) -> PyResult<Core> {
        let origin = errors::Origin { dict: false, call: "with_", overrides: &overrides };
        Ok(Core::new(self.model.with(&overrides).map_err(|e| errors::model_to_py(py, &e, &origin))?))
    }

    /// The model as model-file text (TOML).
    fn to_toml(&self, py: Python<'_>) -> PyResult<String> {
        py_result(py, self.model.to_toml())
    }

    /// The `kind` key.
    #[getter]
    fn kind(&self) -> &'static str {
        self.model.spec().kind()
    }

    /// The file's title, if any.
    #[getter]
    fn title(&self) -> Option<String> {
        self.model.file().title.clone()
    }

    /// The fixed point as a dict (see `mfq.FixedPoint`).
    #[pyo3(signature = (tol = 1e-12, max_iter = 500, max_seconds = None, x0 = None))]
    fn fixed_point<'py>(
        &self,
        py: Python<'py>,
        tol: f64,
        max_iter: usize,
        max_seconds: Option<f64>,
        x0: Option<Vec<f64>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut opts = FixedPointOptions {
            tol,
            max_iter,
            deadline: max_seconds.map_or_else(Deadline::none, Deadline::after),
            x0,
            ..Default::default()
        };
        let start = Instant::now();
        if let Some(x) = &opts.x0 {
            check_finite(py, x, "x0")?;
        }
        // the start is checked on the calling thread for a small model, else on the worker (a
        // large model takes long to build, and Ctrl-C must be answered meanwhile)
        if let (true, Some(x)) = (self.inline, &opts.x0) {
            let model = &self.model;
            py.detach(|| model.check_fixed_point_start(x)).map_err(|e| start_error(py, e))?;
        }
        if self.inline {
            let limit = max_seconds.map_or(INLINE_SECONDS, |s| s.min(INLINE_SECONDS));
            let quick = FixedPointOptions { deadline: Deadline::after(limit), ..opts.clone() };
            let model = &self.model;
            let fp = py_result(py, py.detach(|| model.fixed_point(&quick)))?;
            // done, or stopped by the caller's own limit: that is the answer
            if status_tag(&fp.status) != "time-limit" || max_seconds.is_some_and(|s| s <= INLINE_SECONDS) {
                return fixed_point_dict(py, fp);
            }
            py.check_signals()?;
            opts.deadline = max_seconds.map_or_else(Deadline::none, |s| Deadline::after((s - start.elapsed().as_secs_f64()).max(1e-9)));
        }
        let (model, check) = (self.model.clone(), !self.inline);
        let fp = run::interruptible(py, move |cancel| {
            if let (true, Some(x)) = (check, &opts.x0) {
                model.check_fixed_point_start(x).map_err(|e| (true, e))?;
            }
            model.fixed_point(&FixedPointOptions { deadline: opts.deadline.clone().with_cancel(cancel), ..opts }).map_err(|e| (false, e))
        })?;
        let fp = fp.map_err(|(at_start, e)| if at_start { start_error(py, e) } else { errors::to_py(py, &e) })?;
        fixed_point_dict(py, fp)
    }

    /// The mean wall-clock seconds of `repeats` fixed-point solves run in Rust, in this thread,
    /// with no Python in between: the in-process time the benchmark
    /// (python/bench/bench_fixed_point.py) compares a call from Python with.
    #[pyo3(signature = (repeats, tol = 1e-12, max_seconds = None))]
    fn time_fixed_point(&self, py: Python<'_>, repeats: usize, tol: f64, max_seconds: Option<f64>) -> PyResult<f64> {
        let opts = FixedPointOptions { tol, deadline: max_seconds.map_or_else(Deadline::none, Deadline::after), ..Default::default() };
        let model = &self.model;
        let out = py.detach(|| -> Result<f64, mfq::Error> {
            let start = Instant::now();
            for _ in 0..repeats.max(1) {
                std::hint::black_box(model.fixed_point(&opts)?);
            }
            Ok(start.elapsed().as_secs_f64() / repeats.max(1) as f64)
        });
        py_result(py, out)
    }

    /// The drift `f(x)` at truncation level `levels` (default `len(x)`), for a state `x` of the
    /// model ([`Core::check_state`]).
    #[pyo3(signature = (x, levels = None))]
    fn drift<'py>(&self, py: Python<'py>, x: PyReadonlyArray1<'py, f64>, levels: Option<usize>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = x.as_slice()?;
        self.check_state(py, x, levels)?;
        let f = self.model.drift(x, levels).map_err(|e| errors::state_to_py(py, &e, "x"))?;
        Ok(PyArray1::from_vec(py, f))
    }

    /// The Jacobian of the drift at `x`, dense `(n, n)`, for a state `x` of the model
    /// ([`Core::check_state`]).
    #[pyo3(signature = (x, levels = None))]
    fn jacobian<'py>(&self, py: Python<'py>, x: PyReadonlyArray1<'py, f64>, levels: Option<usize>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let x = x.as_slice()?;
        self.check_state(py, x, levels)?;
        let j = self.model.jacobian(x, levels).map_err(|e| errors::state_to_py(py, &e, "x"))?;
        PyArray1::from_vec(py, j).reshape([x.len(), x.len()])
    }

    /// The number of states at truncation level `levels` (default: the file's or the kind's first level).
    #[pyo3(signature = (levels = None))]
    fn dim(&self, py: Python<'_>, levels: Option<usize>) -> PyResult<usize> {
        Ok(py_result(py, self.model.build(levels))?.dim())
    }

    /// The start named `name` (`mfq::START_NAMES`: `empty`, `full`, `initial`) at truncation
    /// level `levels` (`mfq::Model::named_state`, as `mfq solve --x0 NAME`), or `None` for
    /// another name; `InvalidInput` (`field == "x0"`) for `initial` when the model declares no
    /// `[model.initial]` state.
    #[pyo3(signature = (name, levels = None))]
    fn named_state<'py>(&self, py: Python<'py>, name: &str, levels: Option<usize>) -> PyResult<Option<Bound<'py, PyArray1<f64>>>> {
        match self.model.named_state(name, levels) {
            Err(e @ mfq::Error::NoInitialState { .. }) => {
                let allowed = e.to_string();
                Err(errors::invalid_input(py, format!("x0 = '{name}' is not allowed: {allowed}"), "x0", format!("'{name}'"), &allowed))
            }
            r => Ok(py_result(py, r)?.map(|x| PyArray1::from_vec(py, x))),
        }
    }

    /// The transient from `x0` at the times `t_eval` (increasing, `>= 0`; the ODE is
    /// autonomous, so each interval is one call of the front door from the previous state).
    /// Returns `(t, x (len(t), n), status, message)`; `t` stops early where a run did not end
    /// with success.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (x0, t_eval, levels = None, rtol = 1e-8, atol = 1e-12, method_name = "auto", max_seconds = None))]
    fn transient<'py>(
        &self,
        py: Python<'py>,
        x0: Vec<f64>,
        t_eval: Vec<f64>,
        levels: Option<usize>,
        rtol: f64,
        atol: f64,
        method_name: &str,
        max_seconds: Option<f64>,
    ) -> PyResult<TrajectoryParts<'py>> {
        let method = py_result(py, method(method_name))?;
        check_finite(py, &x0, "x0")?;
        let model = self.model.clone();
        let levels = levels.or(Some(x0.len()));
        // one deadline over every interval, with the Ctrl-C flag of `interruptible`
        let limit = max_seconds.map_or_else(Deadline::none, Deadline::after);
        let out = run::interruptible(py, move |cancel| -> Result<_, mfq::Error> {
            let job = limit.with_cancel(cancel);
            // the start must be a state of the model (as `mfq solve --x0` checks); later
            // intervals continue from the integrator's own states
            model.check_start(levels, &x0)?;
            let (mut t, mut xs) = (Vec::with_capacity(t_eval.len()), Vec::with_capacity(t_eval.len()));
            let (mut now, mut x) = (0.0, x0);
            let (mut tag, mut message) = ("success".to_string(), "reached the last time".to_string());
            for &target in &t_eval {
                if target > now {
                    let opts = SolveOptions { t_end: target - now, rtol, atol, method, record_steps: false, ..Default::default() };
                    let traj = model.transient_within(levels, &x, &opts, &job)?;
                    x = traj.last().to_vec();
                    if status_tag(&traj.status) != "success" {
                        tag = status_tag(&traj.status);
                        message = traj.status.to_string();
                        t.push(now + traj.t_last());
                        xs.push(x);
                        return Ok((t, xs, tag, message));
                    }
                    now = target;
                }
                t.push(target);
                xs.push(x.clone());
            }
            Ok((t, xs, tag, message))
        })?;
        let (t, xs, tag, message) = py_result(py, out)?;
        let n = xs.first().map_or(0, Vec::len);
        let rows = t.len();
        let flat: Vec<f64> = xs.into_iter().flatten().collect();
        Ok((PyArray1::from_vec(py, t), PyArray1::from_vec(py, flat).reshape([rows, n])?, tag, message))
    }

    /// The refined mean field of `order` 1 or 2 (JSON of `mfq::RefinedReport`: the fixed point,
    /// the terms, the estimates at `servers` and the expansions behind them) and the fixed point
    /// as a dict. The fixed point is `None` in the JSON's place when it did not converge (then
    /// the JSON is `None`).
    #[pyo3(signature = (order = 1, servers = Vec::new(), max_seconds = None))]
    fn refined<'py>(
        &self,
        py: Python<'py>,
        order: u8,
        servers: Vec<f64>,
        max_seconds: Option<f64>,
    ) -> PyResult<(Bound<'py, PyDict>, Option<String>)> {
        let model = self.model.clone();
        let out = run::interruptible(py, move |cancel| -> Result<_, mfq::Error> {
            let deadline = max_seconds.map_or_else(Deadline::none, Deadline::after).with_cancel(cancel);
            let fp = model.fixed_point(&FixedPointOptions { deadline: deadline.clone(), ..Default::default() })?;
            if !fp.converged() {
                return Ok((fp, None));
            }
            // the terms' dense steps within the same deadline (and Ctrl-C)
            let r = model.refined_at_within(fp, order, &servers, &deadline)?;
            Ok((r.fixed_point.clone(), Some(r)))
        })?;
        let (fp, r) = py_result(py, out)?;
        let r = r.map(|r| json(&r)).transpose()?;
        Ok((fixed_point_dict(py, fp)?, r))
    }

    /// The attraction checker's report: `(fixed point dict, report JSON, summary text)`.
    /// `starts`: `None` is the default (32, capped on large stiff models); a number given is
    /// run on every model.
    #[pyo3(signature = (starts = None, seed = 1, max_seconds = None))]
    fn check<'py>(
        &self,
        py: Python<'py>,
        starts: Option<usize>,
        seed: u64,
        max_seconds: Option<f64>,
    ) -> PyResult<(Bound<'py, PyDict>, String, String)> {
        let model = self.model.clone();
        let defaults = CheckOptions::default();
        let opts = CheckOptions {
            starts: starts.unwrap_or(defaults.starts),
            large_model_starts: if starts.is_some() { None } else { defaults.large_model_starts },
            seed,
            deadline: max_seconds.map_or_else(Deadline::none, Deadline::after),
            ..defaults
        };
        let r = run::interruptible(py, move |cancel| {
            model.check(&CheckOptions { deadline: opts.deadline.clone().with_cancel(cancel), ..opts })
        })?;
        let r = py_result(py, r)?;
        let text = json(&r)?;
        Ok((fixed_point_dict(py, r.fixed_point.clone())?, text, r.summary()))
    }

    /// The finite-N simulation report (JSON).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (servers, time, warmup, replications, batches, seed, buffer = None, max_seconds = None))]
    fn simulate(
        &self,
        py: Python<'_>,
        servers: usize,
        time: f64,
        warmup: f64,
        replications: usize,
        batches: usize,
        seed: u64,
        buffer: Option<u32>,
        max_seconds: Option<f64>,
    ) -> PyResult<String> {
        let model = self.model.clone();
        let deadline = Deadline::checked_after("max_seconds", max_seconds).map_err(|_| {
            let value = max_seconds.unwrap_or(f64::NAN).to_string();
            let allowed = "a finite number of seconds > 0".to_string();
            errors::to_py(py, &mfq::Error::Simulation(mfq::SimError::OutOfRange { field: "max_seconds".into(), value, allowed }))
        })?;
        // an unstable system (outside its stability region; with a buffer it is a loss system,
        // stable at every load) is refused by the front door, as `mfq simulate` refuses it
        let opts = SimOptions { servers, time, warmup, replications, batches, seed, buffer, progress: false, deadline, precision: None };
        // Ctrl-C sets the cancel flag: the replications stop at their next check
        // (on the worker: the verdict builds the model, which may take long)
        let r = run::interruptible(py, move |cancel| {
            model.simulate(&SimOptions { deadline: opts.deadline.clone().with_cancel(cancel), ..opts })
        })?;
        json(&py_result(py, r)?)
    }

    /// The exact chain of the finite-buffer system at each of `servers` beside `x*` and the
    /// refined terms (JSON of `mfq::ExactComparison`); `buffer` sets `truncation.levels`. Ctrl-C
    /// (the cancel flag) and `max_seconds` stop it; `stopped` in the JSON then says where.
    #[pyo3(signature = (servers, buffer = None, method = "auto", max_states = 4_000_000, max_seconds = None))]
    fn exact(
        &self,
        py: Python<'_>,
        servers: Vec<usize>,
        buffer: Option<usize>,
        method: &str,
        max_states: usize,
        max_seconds: Option<f64>,
    ) -> PyResult<String> {
        let bad = |field: &str, value: String, allowed: &str| {
            let e = ExactError::OutOfRange { field: field.into(), value, allowed: allowed.into() };
            errors::to_py(py, &mfq::Error::Exact(e))
        };
        let method = match method {
            "auto" => ExactMethod::Auto,
            "lu" => ExactMethod::SparseLu,
            "iterative" => ExactMethod::Iterative,
            other => return Err(bad("method", other.to_string(), "\"auto\", \"lu\" or \"iterative\"")),
        };
        if servers.is_empty() || servers.contains(&0) {
            return Err(bad("servers", format!("{servers:?}"), "one or more integers >= 1"));
        }
        let deadline = Deadline::checked_after("max_seconds", max_seconds)
            .map_err(|_| bad("max_seconds", max_seconds.unwrap_or(f64::NAN).to_string(), "a finite number of seconds > 0"))?;
        let model = match buffer {
            Some(k) => py_result(py, self.model.with_buffer("buffer", k))?,
            None => self.model.clone(),
        };
        let out = run::interruptible(py, move |cancel| {
            let opts = ExactOptions { method, max_states, deadline: deadline.with_cancel(cancel), ..Default::default() };
            model.exact_comparison(&servers, &opts)
        })?;
        json(&py_result(py, out)?)
    }
}

/// A sweep of the model file `text` (JSON of `mfq::sweep::SweepReport`).
#[pyfunction]
#[pyo3(signature = (text, x_name, x_values, curve_name = None, curve_values = None, max_seconds = None))]
fn sweep(
    py: Python<'_>,
    text: String,
    x_name: String,
    x_values: Vec<f64>,
    curve_name: Option<String>,
    curve_values: Option<Vec<f64>>,
    max_seconds: Option<f64>,
) -> PyResult<String> {
    let x_axis = mfq::sweep::Axis::numbers(&x_name, x_values);
    let curve = curve_name.zip(curve_values).map(|(name, values)| mfq::sweep::Axis::numbers(&name, values));
    let opts = FixedPointOptions { deadline: max_seconds.map_or_else(Deadline::none, Deadline::after), ..Default::default() };
    let r = run::interruptible(py, move |cancel| {
        let opts = FixedPointOptions { deadline: opts.deadline.clone().with_cancel(cancel), ..opts };
        mfq::sweep::sweep(&text, &[], &x_axis, curve.as_ref(), &opts, &|| {})
    })?;
    json(&sweep_result(py, r)?)
}

/// A sweep of the model file `text` over any number of axes (JSON of `mfq::sweep::SweepReport`):
/// each axis is `(name, values, labels)`, numeric when `labels` is `None`, else categorical with
/// one label (a name or a TOML value) per value (`mfq::sweep::Axis::categories`). The first axis
/// is the x axis, the second gives the curves, the others the facets (`mfq::sweep::sweep_models`).
#[pyfunction]
#[pyo3(signature = (text, axes, max_seconds = None))]
fn sweep_axes(
    py: Python<'_>,
    text: String,
    axes: Vec<(String, Vec<f64>, Option<Vec<String>>)>,
    max_seconds: Option<f64>,
) -> PyResult<String> {
    let axes: Vec<mfq::sweep::Axis> = axes
        .into_iter()
        .map(|(name, values, labels)| match labels {
            Some(labels) => mfq::sweep::Axis::categories(&name, labels),
            None => mfq::sweep::Axis::numbers(&name, values),
        })
        .collect();
    let opts = FixedPointOptions { deadline: max_seconds.map_or_else(Deadline::none, Deadline::after), ..Default::default() };
    let r = run::interruptible(py, move |cancel| {
        let opts = FixedPointOptions { deadline: opts.deadline.clone().with_cancel(cancel), ..opts };
        mfq::sweep::sweep_models(&[(String::new(), text)], &[], &axes, &opts, &|| {})
    })?;
    json(&sweep_result(py, r)?)
}

/// A sweep's report or its Python exception, in the words of the Python call
/// ([`errors::sweep_to_py`]: the keyword of a refused axis, not the CLI's `--set NAME`; the
/// reasons of invalid points without the front door's `after --set ...`,
/// [`errors::sweep_point_reason`]).
fn sweep_result(py: Python<'_>, r: Result<mfq::sweep::SweepReport, mfq::errors::ModelError>) -> PyResult<mfq::sweep::SweepReport> {
    let mut report = r.map_err(|e| errors::sweep_to_py(py, &mfq::Error::from(e)))?;
    for p in &mut report.points {
        if let mfq::sweep::PointStatus::Invalid { reason } = &mut p.status {
            *reason = errors::sweep_point_reason(reason);
        }
    }
    Ok(report)
}

/// The catalogue of built-in kinds (JSON, as `mfq models --json`).
#[pyfunction]
fn catalog() -> PyResult<String> {
    json(&mfq::catalog())
}

/// The compiled part of the Python package `mfq`.
#[pymodule]
fn _mfq(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Core>()?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_axes, m)?)?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_AXIS_POINTS", mfq::sweep::MAX_AXIS_POINTS)?;
    m.add("START_NAMES", mfq::START_NAMES.to_vec())?;
    Ok(())
}
