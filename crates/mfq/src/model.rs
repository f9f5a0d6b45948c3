//! A model value: a model file (or a kind's parameters) with its truncation, and one call per
//! job on it.

use crate::report::{report, Report, ReportOptions};
use crate::Error;
use mfq_fixpoint::{
    check_with_fixed_point, refined_expansion, refined_mean_field_order_within, refined_transient, solve_spec, AttractionReport,
    CheckOptions, FixedPoint, FixedPointOptions, RefinedError, RefinedEstimate, RefinedExpansion, RefinedMeanField, RefinedTrajectory,
};
use mfq_model::{Deadline, Jacobian, MeanFieldModel, ModelFile, ModelSpec, Truncation};
use mfq_ode::{SolveOptions, Trajectory};
use mfq_sim::{SimOptions, SimReport};
use serde::Serialize;
use std::path::Path;

/// A model to work on: a kind with its parameters (a [`ModelSpec`]), its truncation, and the
/// title and source of its file. Built from a model file, its text, or a kind's parameters in
/// code; each job is one method returning a result struct with a status.
///
/// ```
/// let m = mfq::Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n", &[]).unwrap();
/// let fp = m.fixed_point(&Default::default()).unwrap();
/// assert!(fp.converged());
/// // Mitzenmacher 2001: T = sum_k 0.9^(2^k - 2) = 2.614057...
/// assert!((fp.observables.mean_response_time.unwrap() - 2.614057).abs() < 1e-6);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    file: ModelFile,
}

impl Model {
    /// The model of a model file's text, with `overrides` (`NAME=VALUE`, as `--set`) applied.
    ///
    /// # Errors
    /// [`Error::Model`]: malformed TOML, an unknown kind or key, a value outside its range.
    pub fn from_toml(text: &str, overrides: &[String]) -> Result<Model, Error> {
        Model::from_toml_within(text, overrides, &Deadline::none())
    }

    /// [`from_toml`](Self::from_toml) within `deadline` (a wall-clock limit and cancel flag):
    /// the parse of a large text (a generic model of 200,000 transitions, 16 MB, takes about
    /// 2 s) runs on a helper thread abandoned at the deadline ([`ModelFile::parse_within`]).
    /// The front door for every caller that reads a model file under a job's limit.
    ///
    /// # Errors
    /// As [`from_toml`](Self::from_toml); [`Error::Model`] with
    /// `ModelError::Interrupted` when the deadline passes while the text is read.
    pub fn from_toml_within(text: &str, overrides: &[String], deadline: &Deadline) -> Result<Model, Error> {
        Ok(Model { file: ModelFile::parse_within(text, overrides, deadline)? })
    }

    /// The model of the model file at `path`, with `overrides` applied.
    ///
    /// # Errors
    /// [`Error::Read`] when the file cannot be read; as [`from_toml`](Self::from_toml).
    pub fn from_file(path: &Path, overrides: &[String]) -> Result<Model, Error> {
        Model::from_file_within(path, overrides, &Deadline::none())
    }

    /// [`from_file`](Self::from_file) within `deadline`, as
    /// [`from_toml_within`](Self::from_toml_within).
    ///
    /// # Errors
    /// As [`from_file`](Self::from_file) and [`from_toml_within`](Self::from_toml_within).
    pub fn from_file_within(path: &Path, overrides: &[String], deadline: &Deadline) -> Result<Model, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Read { path: path.display().to_string(), reason: e.to_string() })?;
        Model::from_toml_within(&text, overrides, deadline)
    }

    /// The model of a kind's parameters (`mfq_model::models::JsqSpec { lambda: 0.9, d: 2 }`),
    /// truncated as `truncation` says.
    pub fn new(spec: impl Into<ModelSpec>, truncation: Truncation) -> Model {
        Model { file: ModelFile { title: None, source: None, model: spec.into(), truncation } }
    }

    /// The same model with `overrides` (`NAME=VALUE`) applied.
    ///
    /// # Errors
    /// As [`from_toml`](Self::from_toml).
    pub fn with(&self, overrides: &[String]) -> Result<Model, Error> {
        Model::from_toml(&self.to_toml()?, overrides)
    }

    /// The model as model-file text (TOML): `Model::from_toml(&m.to_toml()?, &[])` is `m` again
    /// (how the Python package pickles a model).
    ///
    /// # Errors
    /// [`Error::Read`] if the model cannot be written as TOML (not expected for a parsed model).
    pub fn to_toml(&self) -> Result<String, Error> {
        // the document through its buffer's `Display`, which writes the tables in order:
        // `toml::to_string` (toml 1.2) inserts each table into the text written so far, which
        // is quadratic in the tables (a generic model of 200,000 transitions, 19 MB: 80 s,
        // now well under a second; the same text)
        let mut buffer = toml::ser::Buffer::new();
        serde::Serialize::serialize(&self.file, toml::ser::Serializer::new(&mut buffer))
            .map_err(|e| Error::Read { path: "(model)".into(), reason: e.to_string() })?;
        Ok(buffer.to_string())
    }

    /// The model file: title, source, kind with parameters, truncation.
    pub fn file(&self) -> &ModelFile {
        &self.file
    }

    /// The kind with its parameters.
    pub fn spec(&self) -> &ModelSpec {
        &self.file.model
    }

    /// The model built at truncation level `levels` (the file's, or the kind's first level of
    /// the automatic growth, when `None`).
    ///
    /// # Errors
    /// [`Error::Model`] when a parameter is outside its range at that truncation, or when the
    /// kind has only a stability region ([`ModelSpec::stability_only`]: redundancy with identical
    /// copies) and the parameters lie inside it (it has no drift to build);
    /// [`Error::FixedPoint`] with `FixedPointError::Unstable` (the region's reason) when they lie
    /// outside it. So every job of a region-only model but [`fixed_point`](Self::fixed_point)
    /// and the report refuses it with the region's answer (the Python package's
    /// `Model.solve` integrated the i.i.d. mean field there before).
    pub fn build(&self, levels: Option<usize>) -> Result<Box<dyn MeanFieldModel>, Error> {
        if let Some(mfq_model::StabilityRegion { stability: mfq_model::Stability::Unstable { reason }, .. }) =
            self.file.model.stability_only()
        {
            return Err(Error::FixedPoint(mfq_fixpoint::FixedPointError::Unstable { reason }));
        }
        let levels = levels.or(self.file.truncation.levels).unwrap_or_else(|| self.file.model.initial_levels());
        Ok(self.file.model.build(levels)?)
    }

    /// The model built for the state `x`: at truncation level `levels`, or, when `None`, at the
    /// level `K = x.len()` (tail-form states, `x[k-1] = x_k`; other layouts pass `levels`).
    ///
    /// # Errors
    /// [`Error::StateSize`] when `x` does not have the model's dimension at that level
    /// ([`Error::StateEntries`] for a model whose size has no level); [`Error::Model`] as
    /// [`build`](Self::build).
    fn build_for_state(&self, x: &[f64], levels: Option<usize>) -> Result<Box<dyn MeanFieldModel>, Error> {
        if x.is_empty() && levels.is_none() {
            // `K = 0` is no level: the empty state is named with the size at the first level
            // (it was `truncation.levels = 0 is not allowed`, an error about a key not given)
            let first = self.file.truncation.levels.unwrap_or_else(|| self.file.model.initial_levels());
            return Err(self.state_size(0, self.build(Some(first))?.as_ref(), first));
        }
        let levels = levels.unwrap_or(x.len());
        let model = self.build(Some(levels))?;
        if model.dim() != x.len() {
            return Err(self.state_size(x.len(), model.as_ref(), levels));
        }
        Ok(model)
    }

    /// The error for a state of `entries` entries where `model` (built at `levels`) has
    /// another size: [`Error::StateSize`] naming the level, or, for a model whose size has no
    /// level (a one-variable generic model), [`Error::StateEntries`] naming its state entries.
    fn state_size(&self, entries: usize, model: &dyn MeanFieldModel, levels: usize) -> Error {
        if self.has_levels() {
            return Error::StateSize { entries, dim: model.dim(), levels };
        }
        let layout = model.layout();
        let shown: Vec<String> = (0..model.dim().min(6)).map(|i| layout.name(i)).collect();
        let names = format!("{}{}", shown.join(", "), if model.dim() > 6 { ", ..." } else { "" });
        Error::StateEntries { entries, dim: model.dim(), names }
    }

    /// The drift `f(x)` (the right-hand side of the mean-field ODE `dx/dt = f(x)`, same layout
    /// and length as `x`) at truncation level `levels` (default: `K = x.len()`, see
    /// [`build_for_state`](Self::build_for_state)).
    ///
    /// # Errors
    /// [`Error::StateSize`] for a state of another size ([`Error::StateEntries`] for a model
    /// whose size has no truncation level); [`Error::Model`] for the model.
    pub fn drift(&self, x: &[f64], levels: Option<usize>) -> Result<Vec<f64>, Error> {
        let model = self.build_for_state(x, levels)?;
        let mut dx = vec![0.0; x.len()];
        model.drift(x, &mut dx);
        Ok(dx)
    }

    /// The Jacobian `J[i][j] = d f_i / d x_j` of the drift at `x`, dense and row-major
    /// (`n x n`, `n = x.len()`): the model's analytic Jacobian, or forward differences for a
    /// model without one. Truncation level as [`drift`](Self::drift).
    ///
    /// # Errors
    /// As [`drift`](Self::drift).
    pub fn jacobian(&self, x: &[f64], levels: Option<usize>) -> Result<Vec<f64>, Error> {
        let model = self.build_for_state(x, levels)?;
        let mut jac = Jacobian::new(x.len(), model.sparsity());
        model.jacobian(x, &mut jac);
        Ok(jac.to_dense())
    }

    /// The fixed point, with the truncation level grown automatically (or fixed by the file),
    /// after checking the model's stability condition. A run that did not converge is a result
    /// with its status, not an error: its `x` is the last iterate, and its observables are not
    /// reported (the last iterate is not a fixed point, so its values would read as results):
    /// `tail` and `extras` are empty and `mean_queue_length`, `mean_response_time`,
    /// `throughput` and `prob_wait` are `None`, as `mfq fixed-point` prints "observables not
    /// reported". Only the truncation diagnostics of the last iterate stay
    /// (`observables.mass_at_truncation`, `observables.loss_probability`, `truncation`).
    ///
    /// # Errors
    /// [`Error::FixedPoint`]: bad options, or parameters outside the stability region
    /// (`FixedPointError::Unstable`, with the reason).
    pub fn fixed_point(&self, opts: &FixedPointOptions) -> Result<FixedPoint, Error> {
        let mut fp = solve_spec(&self.file.model, &self.file.truncation, opts)?;
        if !fp.converged() {
            let o = &mut fp.observables;
            o.tail.clear();
            o.extras.clear();
            (o.mean_queue_length, o.mean_response_time, o.throughput, o.prob_wait) = (None, None, None, None);
        }
        Ok(fp)
    }

    /// The start named `name` (one of [`START_NAMES`]) of the model built at truncation level
    /// `levels` (the file's or the kind's first level when `None`), as `mfq solve --x0 NAME`
    /// reads it: [`named_start`]; `Ok(None)` for a name that is not one.
    ///
    /// # Errors
    /// As [`build`](Self::build); [`Error::NoInitialState`] for `initial` when the model
    /// declares no `[model.initial]` state.
    pub fn named_state(&self, name: &str, levels: Option<usize>) -> Result<Option<Vec<f64>>, Error> {
        if !START_NAMES.contains(&name) {
            return Ok(None);
        }
        named_start(self.build(levels)?.as_ref(), name)
    }

    /// Checks that `x` is a state of the model for [`drift`](Self::drift) and
    /// [`jacobian`](Self::jacobian): of the model's size at truncation level `levels` (default
    /// `K = x.len()`), and in its state space as [`check_start`](Self::check_start) tests a start.
    ///
    /// # Errors
    /// [`Error::StateSize`] for a state of another size (an empty one: the size at the model's
    /// first level); as [`check_start`](Self::check_start).
    pub fn check_state(&self, x: &[f64], levels: Option<usize>) -> Result<(), Error> {
        let model = self.build_for_state(x, levels)?;
        self.check_start_of(model.as_ref(), x)
    }

    /// Checks that `x0` is a state of the model at truncation level `levels` (as
    /// [`transient`](Self::transient) builds it): no constraint of its layout broken by more than `mfq_ode::INVARIANT_TOL` (`0 <= x_k <= 1`,
    /// `x_{k+1} <= x_k`, phase and class constraints: [`mfq_model::StateLayout::largest_violation`]),
    /// and every conservation law of the model kept ([`check_laws`]).
    /// `mfq solve --x0` makes the same test; a transient itself accepts any finite start, so
    /// that a run can continue from the round-off of another.
    ///
    /// A start of the wrong size passes: the transient reports it (`OdeError::WrongDimension`).
    ///
    /// # Errors
    /// [`Error::InfeasibleStart`] naming the broken constraint; [`Error::BrokenLaw`] naming the
    /// broken conservation law; [`Error::Model`] as [`build`](Self::build).
    pub fn check_start(&self, levels: Option<usize>, x0: &[f64]) -> Result<(), Error> {
        let model = self.build(levels)?;
        if model.dim() != x0.len() {
            // the transient reports the size (`OdeError::WrongDimension`, naming x0)
            return Ok(());
        }
        self.check_start_of(model.as_ref(), x0)
    }

    /// [`check_start`](Self::check_start) on the model already built, of `x0`'s size.
    fn check_start_of(&self, model: &dyn MeanFieldModel, x0: &[f64]) -> Result<(), Error> {
        let layout = model.layout();
        match layout.largest_violation(x0).filter(|v| v.amount.is_nan() || v.amount > mfq_ode::INVARIANT_TOL) {
            Some(v) => {
                Err(Error::InfeasibleStart { constraint: v.constraint, index: v.index + 1, amount: v.amount, rules: layout.rules() })
            }
            None => check_laws(model, x0),
        }
    }

    /// Checks a start `x0` of the fixed-point solver as the solver reads it
    /// (`mfq_fixpoint::solve_spec`): a tail `x_1..x_K` of any length sets the first level `K` of an
    /// automatic truncation (within `[2, truncation.max_levels]`, padded with zeros or cut, as the
    /// solver does); any other start must be a state of the model at its first truncation level
    /// (the solver would otherwise drop it and start from empty without saying so). The state it
    /// reads must then lie in the state space as `mfq solve --x0` checks it
    /// ([`check_start`](Self::check_start)).
    ///
    /// # Errors
    /// [`Error::StateSize`] for a start of another size (or none at all; [`Error::StateEntries`]
    /// for a model whose size has no truncation level);
    /// [`Error::InfeasibleStart`] naming the broken constraint; [`Error::Model`] for the
    /// model.
    pub fn check_fixed_point_start(&self, x0: &[f64]) -> Result<(), Error> {
        let t = &self.file().truncation;
        let first = t.levels.unwrap_or_else(|| self.spec().initial_levels().min(t.max_levels));
        let probe = self.build(Some(first))?;
        if x0.is_empty() {
            return Err(self.state_size(0, probe.as_ref(), first));
        }
        let probe_layout = probe.layout();
        let (from, levels) = match probe_layout.start_truncation(x0) {
            Some((layout, k)) if t.levels.is_none() => (layout, k.clamp(2, t.max_levels)),
            _ => (probe_layout, first),
        };
        let built = if levels == first { probe } else { self.build(Some(levels))? };
        match from.resize(x0, &built.layout()) {
            Some(start) => self.check_start(Some(levels), &start),
            None => Err(self.state_size(x0.len(), built.as_ref(), levels)),
        }
    }

    /// The transient `x(t)` from `x0` (length: the model's dimension at `levels`).
    ///
    /// # Errors
    /// [`Error::Model`] for the model, or naming the transitions that push the state out of
    /// the state space where the transient ends ([`leaving_state_space`]); [`Error::Transient`]
    /// for `x0` or the options.
    pub fn transient(&self, levels: Option<usize>, x0: &[f64], opts: &SolveOptions) -> Result<Trajectory, Error> {
        self.transient_within(levels, x0, opts, &Deadline::none())
    }

    /// [`transient`](Self::transient) within the job's `deadline` (its wall-clock limit and
    /// cancel flag: the run stops with `Status::TimeLimit` when it expires; see
    /// `mfq_ode::solve_within`).
    ///
    /// # Errors
    /// As [`transient`](Self::transient).
    pub fn transient_within(
        &self,
        levels: Option<usize>,
        x0: &[f64],
        opts: &SolveOptions,
        deadline: &Deadline,
    ) -> Result<Trajectory, Error> {
        let model = self.build(levels)?;
        let traj = mfq_ode::solve_within(model.as_ref(), x0, opts, deadline)?;
        leaving_state_space(model.as_ref(), &traj)?;
        Ok(traj)
    }

    /// The refined mean field's `1/N` term `V` at the fixed point `fp` (Gast and Van Houdt,
    /// SIGMETRICS 2017).
    ///
    /// # Errors
    /// [`Error::NotAFixedPoint`] when `fp` is not a fixed point of this model (another size, or
    /// `max |f(x)| > 1e-8`); [`Error::Model`] for the model; [`Error::Refined`] when the model has no transitions,
    /// is not smooth, or its Lyapunov equation is singular.
    pub fn refined(&self, fp: &FixedPoint) -> Result<RefinedMeanField, Error> {
        self.refined_of_order(fp, 1)
    }

    /// The refined terms of `order` 1 (`V`) or 2 (`V` and `A`) at the fixed point `fp`
    /// (docs/refined.md).
    ///
    /// # Errors
    /// As [`refined`](Self::refined); [`Error::Refined`] with `BadOrder`, or `Unsupported` for
    /// order 2 when the rates depend on so many state entries that their derivative grids
    /// exceed `mfq_fixpoint::refined::local::MAX_WORK`.
    pub fn refined_of_order(&self, fp: &FixedPoint, order: u8) -> Result<RefinedMeanField, Error> {
        self.refined_of_order_until(fp, order, &Deadline::none())
    }

    /// [`refined_of_order`](Self::refined_of_order) whose dense steps look at `deadline`
    /// between blocks (`mfq_fixpoint::refined_mean_field_order_within`): the worker of
    /// [`refined_of_order_within`](Self::refined_of_order_within) ends soon after the deadline.
    fn refined_of_order_until(&self, fp: &FixedPoint, order: u8, deadline: &Deadline) -> Result<RefinedMeanField, Error> {
        let model = self.build(Some(fp.truncation.levels))?;
        // the fixed point must be this model's: right size, drift (near) zero
        let mut dx = vec![0.0; model.dim()];
        let residual = if fp.x.len() == dx.len() {
            model.drift(&fp.x, &mut dx);
            dx.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
        } else {
            f64::INFINITY
        };
        if residual.is_nan() || residual > 1e-8 {
            return Err(Error::NotAFixedPoint { entries: fp.x.len(), dim: model.dim(), residual });
        }
        Ok(refined_mean_field_order_within(model.as_ref(), &fp.x, order, deadline)?)
    }

    /// [`refined_of_order`](Self::refined_of_order) on a worker thread when `deadline` can stop
    /// the job (see [`refined_at_within`](Self::refined_at_within)), else on this one.
    ///
    /// # Errors
    /// As [`refined_of_order`](Self::refined_of_order); [`Error::Model`] with
    /// `ModelError::Interrupted` when the deadline passes first.
    pub fn refined_of_order_within(&self, fp: &FixedPoint, order: u8, deadline: &Deadline) -> Result<RefinedMeanField, Error> {
        let during = format!("the refined terms of order {order} ({} state entries)", fp.x.len());
        let fixed_point = fp.clone();
        let worker_deadline = deadline.clone();
        self.within(deadline, &during, move |m| m.refined_of_order_until(&fixed_point, order, &worker_deadline))
    }

    /// `job(self)` on a worker thread, waited for until `deadline` passes (then
    /// `ModelError::Interrupted`, `during` naming the job; the worker's result, when it comes,
    /// is dropped); on this thread when nothing can stop the job. For the dense steps that
    /// cannot stop part-way (`O(n^3)` factorisations).
    pub(crate) fn within<T: Send + 'static>(
        &self,
        deadline: &Deadline,
        during: &str,
        job: impl FnOnce(&Model) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        if deadline.is_unbounded() {
            return job(self);
        }
        let interrupted = || Error::Model(mfq_model::ModelError::Interrupted { during: during.to_string(), reason: deadline.reason() });
        if deadline.expired() {
            return Err(interrupted());
        }
        let model = self.clone();
        match deadline.wait_for("mfq-dense-step", move || job(&model)) {
            // a job that looked at the deadline itself and stopped is said as one abandoned
            Ok(Err(_)) if deadline.expired() => Err(interrupted()),
            Ok(result) => result,
            Err(mfq_model::Abandoned::Expired) => Err(interrupted()),
            Err(mfq_model::Abandoned::NoThread) => {
                Err(Error::Refined(RefinedError::Unsupported(format!("{during}: no worker thread could be started"))))
            }
            Err(mfq_model::Abandoned::Panicked) => {
                Err(Error::Refined(RefinedError::Unsupported(format!("{during}: the worker thread stopped without a result"))))
            }
        }
    }

    /// The refined mean field of the model: its fixed point, the terms of `opts.order`, and the
    /// refined estimates of the observables at each size of `opts.servers` (no simulation).
    ///
    /// # Errors
    /// [`Error::FixedPoint`] as [`fixed_point`](Self::fixed_point); [`Error::NotAFixedPoint`]
    /// when the solve did not converge; [`Error::Refined`] as
    /// [`refined_of_order`](Self::refined_of_order), or `BadOption` for a size that is not a
    /// finite number >= 1; [`Error::Model`] with `ModelError::Interrupted` when
    /// `opts.fixed_point.deadline` passes during the terms
    /// ([`refined_at_within`](Self::refined_at_within)).
    pub fn refined_terms(&self, opts: &RefinedOptions) -> Result<RefinedReport, Error> {
        let start = std::time::Instant::now();
        check_sizes(&opts.servers)?;
        let fp = self.fixed_point(&opts.fixed_point)?;
        let mut r = self.refined_at_within(fp, opts.order, &opts.servers, &opts.fixed_point.deadline)?;
        r.wall_seconds = start.elapsed().as_secs_f64();
        Ok(r)
    }

    /// As [`refined_terms`](Self::refined_terms) at a fixed point `fp` already solved (a
    /// caller that must see a non-converged solve first, the Python package, solves it once).
    ///
    /// # Errors
    /// [`Error::NotAFixedPoint`] when `fp` is not this model's converged fixed point;
    /// [`Error::Refined`] as [`refined_of_order`](Self::refined_of_order), or `BadOption` for a
    /// size that is not a finite number >= 1; [`Error::DegenerateFixedPoint`] when the terms fail
    /// (an exactly singular equation) at a degenerate fixed point.
    pub fn refined_at(&self, fp: FixedPoint, order: u8, servers: &[f64]) -> Result<RefinedReport, Error> {
        self.refined_at_within(fp, order, servers, &Deadline::none())
    }

    /// As [`refined_at`](Self::refined_at), stopped by `deadline` (its wall-clock limit or its
    /// cancellation flag). The terms' dense steps (the Lyapunov equation of `W`, `O(n^3)` for
    /// `n` noisy state entries, and at order 2 the tensors `B`, `C`) cannot stop part-way, so
    /// under a deadline they run on a worker thread that the caller stops waiting for: at the
    /// deadline the call returns and the worker's result, when it comes, is dropped (its thread
    /// ends then).
    ///
    /// # Errors
    /// As [`refined_at`](Self::refined_at); [`Error::Model`] with
    /// `ModelError::Interrupted` when the deadline passes before the terms are done.
    pub fn refined_at_within(&self, fp: FixedPoint, order: u8, servers: &[f64], deadline: &Deadline) -> Result<RefinedReport, Error> {
        let start = std::time::Instant::now();
        check_sizes(servers)?;
        let terms = match self.refined_of_order_within(&fp, order, deadline) {
            Err(Error::Refined(cause)) if degeneracy_warning(&fp).is_some() => {
                return Err(Error::DegenerateFixedPoint { warning: degeneracy_warning(&fp).unwrap_or_default(), cause })
            }
            other => other?,
        };
        let terms_seconds = start.elapsed().as_secs_f64();
        let model = self.build(Some(fp.truncation.levels))?;
        let expansion = refined_expansion(model.as_ref(), &terms);
        let estimates = servers.iter().map(|&n| expansion.estimate(&terms, n)).collect();
        let mut limit = expansion.estimate(&terms, f64::INFINITY);
        // the extras not refined (too many state entries) keep their mean-field values
        for (name, v) in model.observables(&terms.x).extras {
            if !limit.extras.iter().any(|e| e.0 == name) {
                limit.extras.push((name, v));
            }
        }
        let limit = Some(limit);
        let mut r = RefinedReport {
            fixed_point: fp,
            terms,
            mean_field: limit,
            estimates,
            expansion,
            warnings: Vec::new(),
            terms_seconds,
            wall_seconds: start.elapsed().as_secs_f64(),
        };
        r.warnings = degeneracy_warning(&r.fixed_point)
            .into_iter()
            .chain(conditioning_warning(&r.fixed_point, order))
            .chain(r.state_space_warnings(&model.layout()))
            .chain(r.expansion.left_out.iter().cloned())
            .collect();
        Ok(r)
    }

    /// The transient refined mean field `x(t) + V(t)/N (+ A(t)/N^2)` from `x0` (length: the
    /// model's dimension at `levels`) over `[0, t_end]`, at `points + 1` times, to `order` 1 or 2.
    ///
    /// # Errors
    /// [`Error::Model`]; [`Error::Refined`] (see `mfq_fixpoint::refined_transient`).
    pub fn refined_transient(
        &self,
        levels: Option<usize>,
        x0: &[f64],
        t_end: f64,
        points: usize,
        order: u8,
    ) -> Result<RefinedTrajectory, Error> {
        let model = self.build(levels)?;
        Ok(refined_transient(model.as_ref(), x0, t_end, points, order, (1e-9, 1e-12), &Deadline::none())?)
    }

    /// Is the fixed point unique and globally attracting? The checker's verdict with the
    /// numbers behind it, at the truncation level of the fixed point.
    ///
    /// # Errors
    /// [`Error::FixedPoint`], [`Error::Model`] as [`fixed_point`](Self::fixed_point);
    /// [`Error::Check`] for bad options.
    pub fn check(&self, opts: &CheckOptions) -> Result<AttractionReport, Error> {
        let fp = self.fixed_point(&FixedPointOptions { deadline: opts.deadline.clone(), ..Default::default() })?;
        let model = self.build(Some(fp.truncation.levels))?;
        // the checker starts from this fixed point instead of solving it again
        Ok(check_with_fixed_point(model.as_ref(), fp, opts)?)
    }

    /// The finite-N simulation of the system the kind declares (generic models: the
    /// population process of their transitions, [`simulate_population`](Self::simulate_population)),
    /// with the file's buffer `K` ([`Truncation::buffer_size`](mfq_model::Truncation::buffer_size))
    /// unless `opts.buffer` sets one.
    ///
    /// The system must be stable (its kind's stability verdict at these parameters, as the
    /// fixed point reads it; with a buffer, `opts.buffer` or the file's, it is a loss system,
    /// stable at every load): an unstable one has no stationary estimate.
    ///
    /// A run the deadline stopped reports only the estimates it could make
    /// ([`SimReport::without_undefined`]: none before two batches finished), never `NaN`.
    ///
    /// # Errors
    /// [`Error::FixedPoint`] with `FixedPointError::Unstable` (the reason) for an unstable
    /// system; [`Error::Simulation`]: options or parameters out of range, or a kind without a
    /// finite-N system (with the declared reason); for generic models as `simulate_population`.
    pub fn simulate(&self, opts: &SimOptions) -> Result<SimReport, Error> {
        self.simulate_all(opts).map(SimReport::without_undefined)
    }

    /// [`simulate`](Self::simulate) before the undefined estimates of a stopped run are left out.
    fn simulate_all(&self, opts: &SimOptions) -> Result<SimReport, Error> {
        let mut file = self.file.clone();
        if let Some(k) = opts.buffer {
            file.truncation.levels = Some(k as usize);
            file.truncation.buffer = true;
        }
        if let Some(reason) = crate::simsweep::unstable_reason(&file) {
            return Err(Error::FixedPoint(mfq_fixpoint::FixedPointError::Unstable { reason }));
        }
        if self.is_population() {
            return self.simulate_population(opts);
        }
        let buffer = opts.buffer.or(self.file.truncation.buffer_size().map(|k| k as u32));
        Ok(mfq_sim::simulate(&self.file.model, &SimOptions { buffer, ..opts.clone() })?)
    }

    /// The main job: fixed point, stability, transient from the empty state and attraction
    /// verdict (see [`report`](crate::report::report)).
    ///
    /// # Errors
    /// As [`report`](crate::report::report).
    pub fn report(&self, opts: &ReportOptions) -> Result<Report, Error> {
        report(&self.file.model, &self.file.truncation, opts)
    }
}

/// Sizes for refined estimates must be finite numbers `N >= 1`.
fn check_sizes(servers: &[f64]) -> Result<(), Error> {
    match servers.iter().find(|n| !(n.is_finite() && **n >= 1.0)) {
        Some(bad) => Err(RefinedError::BadOption {
            field: "servers".into(),
            value: mfq_model::short_number(*bad),
            allowed: "finite numbers of servers (objects) N >= 1".into(),
        }
        .into()),
        None => Ok(()),
    }
}

/// Options of [`Model::refined_terms`].
#[derive(Debug, Clone, PartialEq)]
pub struct RefinedOptions {
    /// 1: `x* + V/N`; 2: `x* + V/N + A/N^2`.
    pub order: u8,
    /// Sizes `N` (servers, objects) at which to give the refined estimates.
    pub servers: Vec<f64>,
    /// Options of the fixed-point solve.
    pub fixed_point: FixedPointOptions,
}

impl Default for RefinedOptions {
    /// Order 1 at N = 10, 20, 50.
    fn default() -> Self {
        RefinedOptions { order: 1, servers: vec![10.0, 20.0, 50.0], fixed_point: FixedPointOptions::default() }
    }
}

/// What [`Model::refined_terms`] returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefinedReport {
    /// The fixed point `x*`.
    pub fixed_point: FixedPoint,
    /// `V` (and `A`), `W`.
    pub terms: RefinedMeanField,
    /// The mean-field values of the same observables (`N` infinite), and of every extra of the
    /// model: those not refined ([`RefinedExpansion::left_out`]) are here only, not in the
    /// estimates.
    pub mean_field: Option<RefinedEstimate>,
    /// The refined estimates, one per size.
    pub estimates: Vec<RefinedEstimate>,
    /// The expansions `value + c1/N + c2/N^2` of the observables behind the estimates (for any
    /// other `N`).
    pub expansion: RefinedExpansion,
    /// Why some estimates mean little, one sentence each: a degenerate fixed point
    /// ([`degeneracy_warning`]), a locally unstable or (order 2) nearly degenerate one
    /// ([`conditioning_warning`]), then the sizes whose estimate leaves the state space
    /// ([`state_space_warnings`](Self::state_space_warnings)), then the observables that were
    /// not expanded ([`RefinedExpansion::left_out`]). Empty when there is none.
    pub warnings: Vec<String>,
    /// Wall time of the refined terms alone (given the fixed point), seconds.
    pub terms_seconds: f64,
    /// Wall time of the whole job (fixed point, terms, estimates), seconds.
    pub wall_seconds: f64,
}

/// Checks that the state `x` (the model's layout, `model.dim()` entries) keeps every
/// conservation law of `model` ([`MeanFieldModel::conservation_laws`]) within
/// `mfq_model::LAW_TOL` relative: with an eliminated member, the kept members sum to at most
/// the law's value (and at least `value - 1`), so that the eliminated one is a fraction;
/// without one, they sum to the value. [`Model::check_start`] makes this check after the
/// layout's; the CLI's `mfq solve --x0` calls it for the same test.
///
/// # Errors
/// [`Error::BrokenLaw`] naming the first law broken, the sum found and what it must be.
pub fn check_laws(model: &dyn MeanFieldModel, x: &[f64]) -> Result<(), Error> {
    for law in model.conservation_laws() {
        if let Some(sum) = law.broken_by(x) {
            let sum =
                if sum.is_nan() { "an undefined number (a NaN entry)".to_string() } else { format!("{}", (sum * 1e12).round() / 1e12) };
            return Err(Error::BrokenLaw { law: law.label.clone(), members: law.kept_names.clone(), sum, allowed: law.allowed_words() });
        }
    }
    Ok(())
}

/// The warning owed with refined terms at a degenerate fixed point `fp` (a Jacobian eigenvalue
/// zero to the precision of `x*`, [`mfq_fixpoint::EquilibriumKind::Degenerate`], e.g. an
/// opinion model at its bifurcation): `V` solves `J V + V J^T + Q = 0`, whose solution grows like
/// 1/eigenvalue, so the refined terms are meaningless at every `N` (the expansion in `1/N` does
/// not exist there). `None` at any other fixed point.
pub fn degeneracy_warning(fp: &FixedPoint) -> Option<String> {
    (fp.local == Some(mfq_fixpoint::EquilibriumKind::Degenerate)).then(|| {
        "the fixed point is degenerate (an eigenvalue of the Jacobian is zero to the precision of x*): the refined \
         terms solve a singular Lyapunov equation and are meaningless at every N (the expansion in 1/N does not exist here)"
            .to_string()
    })
}

/// Below this ratio of the slowest decay rate `|alpha|` to the degeneracy scale of `x*`
/// ([`FixedPoint::degeneracy_scale`]), order-2 terms get [`conditioning_warning`].
pub const NEAR_DEGENERATE: f64 = 1e-2;

/// The warning owed with refined terms of `order` at a fixed point `fp` that is not degenerate
/// but where they mislead: a **locally unstable** `x*` (spectral abscissa `> 0`: the terms
/// describe fluctuations around an equilibrium the finite system leaves), or, at order 2, a
/// **nearly degenerate** stable `x*` (slowest decay rate `|alpha|` below [`NEAR_DEGENERATE`]
/// times the scale): `A` applies `J^-1` up to four times, so the error of the rates' difference
/// grids (docs/refined.md, "Method and cost") is amplified like `1/|alpha|^4`; on the
/// stubborn-agent model at `gamma = 0.2501` (`alpha = -2e-4`) sum A came out as 23.7 where
/// symmetry makes it 0. `None` otherwise.
pub fn conditioning_warning(fp: &FixedPoint, order: u8) -> Option<String> {
    let alpha = fp.spectral_abscissa?;
    match fp.local? {
        mfq_fixpoint::EquilibriumKind::Unstable => Some(format!(
            "the fixed point is locally unstable (spectral abscissa {alpha:.3e} > 0): the refined terms describe fluctuations \
             around an equilibrium the finite system leaves, not the finite system (`mfq check` shows the equilibria)"
        )),
        mfq_fixpoint::EquilibriumKind::Stable if order >= 2 && alpha.abs() < NEAR_DEGENERATE * fp.degeneracy_scale.unwrap_or(1.0) => {
            Some(format!(
                "the fixed point is nearly degenerate (slowest decay rate {:.3e}): the 1/N^2 term A is ill-conditioned here (its \
                 numerical error grows like 1/rate^4) and the expansion in 1/N needs N well above 1/rate = {:.0}",
                alpha.abs(),
                1.0 / alpha.abs()
            ))
        }
        _ => None,
    }
}

/// The warning owed with a refined state `state` (`x* + V/N (+ A/N^2)`) at size `servers` when
/// it breaks a constraint of `layout` by more than [`crate::OUTSIDE_TOLERANCE`]: one sentence
/// naming `N`, the largest broken constraint and its amount (the expansion in `1/N` is not
/// accurate at that `N`). `None` when it is a state, or when its length is not the layout's.
pub fn state_space_warning(layout: &mfq_model::StateLayout, servers: f64, state: &[f64]) -> Option<String> {
    if state.len() != layout.dim() {
        return None;
    }
    let v = crate::finite::broken_constraint(layout, state)?;
    Some(format!(
        "at N = {servers} the refined state breaks {} by {:.3e} (entry {}): the expansion in 1/N is not accurate at this N; \
         `mfq exact` gives the finite-N values",
        v.constraint,
        v.amount,
        v.index + 1
    ))
}

impl RefinedReport {
    /// Warnings about estimates outside the state space: for each size `N` whose refined state
    /// `x* + V/N (+ A/N^2)` breaks a constraint of `layout` (the layout of the model at the
    /// fixed point's truncation level: `0 <= x_k <= 1`, `x_{k+1} <= x_k`, ...) by more than
    /// [`crate::OUTSIDE_TOLERANCE`], one sentence naming `N`, the largest broken constraint and its amount. The
    /// expansion in `1/N` is then not accurate at that `N` (the terms are right; `N` is too
    /// small for them, e.g. JSQ(2) at lambda = 0.99 and N = 2): the exact chain gives the
    /// finite-N values. Empty when every estimate is a state.
    pub fn state_space_warnings(&self, layout: &mfq_model::StateLayout) -> Vec<String> {
        self.estimates.iter().filter_map(|e| state_space_warning(layout, e.servers, &e.state)).collect()
    }
}

/// Checks that the transient `traj` of `model` does not end on a face of the state space
/// that a transition pushes out of ([`mfq_model::outward_transitions`] at its last state): a
/// generic model with `X += 1` at the constant rate 5 integrated to `X = 1` and stayed there
/// (the integrator projects each step back onto the state space), a trajectory that looked
/// like a result. The fixed-point solve refuses the same model
/// (`mfq_fixpoint::solve_spec`, exit code 2 of `mfq fixed-point` and `mfq solve`); this is the
/// same error (field, allowed) for a transient: `Model::transient` and `mfq solve` at a fixed
/// truncation level call it. A valid model has no such transition at any state its dynamics
/// reach, so nothing changes for it.
///
/// # Errors
/// [`Error::Model`] with `ModelError::LeavesStateSpace` naming each such transition
/// (`model.transitions[0]`), its rate and jump, and what is allowed
/// ([`mfq_model::OUTWARD_ALLOWED`]), in separate sentences.
pub fn leaving_state_space(model: &dyn MeanFieldModel, traj: &Trajectory) -> Result<(), Error> {
    let Some(last) = traj.x.last() else { return Ok(()) };
    let found = mfq_model::outward_transitions(model, last, 4);
    if found.is_empty() {
        return Ok(());
    }
    Err(Error::Model(mfq_model::ModelError::LeavesStateSpace {
        transitions: found,
        found: "where the transient ends on that face, its state held there by the integrator's projection onto the state space".into(),
    }))
}

/// The names a start state may be given by instead of its entries (`mfq solve --x0 full`,
/// Python's `solve(x0="full")` and `fixed_point(x0="full")`): the model's empty and full states,
/// and `initial`, the state a model file declares in `[model.initial]` (generic models,
/// docs/models/generic.md).
pub const START_NAMES: [&str; 3] = ["empty", "full", "initial"];

/// The start named `name` of `model`: its extremal state of that name
/// (`MeanFieldModel::extremal_states`: the empty system, every server full up to the
/// truncation, the declared `[model.initial]` state), else all zeros (`empty`) or all ones
/// (`full`); `Ok(None)` when `name` is not one of [`START_NAMES`].
///
/// # Errors
/// [`Error::NoInitialState`] for `initial` when the model declares no `[model.initial]` state.
pub fn named_start(model: &dyn MeanFieldModel, name: &str) -> Result<Option<Vec<f64>>, Error> {
    if !START_NAMES.contains(&name) {
        return Ok(None);
    }
    if let Some(s) = model.extremal_states().into_iter().find(|s| s.name == name) {
        return Ok(Some(s.x));
    }
    match name {
        "full" => Ok(Some(vec![1.0; model.dim()])),
        "empty" => Ok(Some(vec![0.0; model.dim()])),
        _ => Err(Error::NoInitialState { model: model.name() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSQ2: &str = "[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n[truncation]\nlevels = 20\n";

    /// The refined term of JSQ(2) at lambda = 0.9, K = 20: sum V = 3.986427 (rmf_tool, and
    /// validation/jsq.py; docs/references.md).
    #[test]
    fn refined_term_of_jsq2_matches_rmf_tool() {
        let m = Model::from_toml(JSQ2, &[]).unwrap();
        let fp = m.fixed_point(&FixedPointOptions::default()).unwrap();
        let r = m.refined(&fp).unwrap();
        assert!((r.sum_v - 3.986427).abs() < 2e-6, "sum V = {}", r.sum_v);
    }

    /// A fixed point of another model (JSQ(3) at lambda = 0.95) is refused, not used.
    #[test]
    fn refined_refuses_a_fixed_point_of_another_model() {
        let m = Model::from_toml(JSQ2, &[]).unwrap();
        let other = m.with(&["d=3".into(), "lambda=0.95".into()]).unwrap();
        let fp = other.fixed_point(&FixedPointOptions::default()).unwrap();
        assert!(matches!(m.refined(&fp), Err(Error::NotAFixedPoint { .. })));
    }

    /// The named starts are the model's extremal states at the level asked for: JSQ(2) full is
    /// all ones, empty all zeros; a generic SIS model's (docs/models/generic.md) keep its law
    /// (S + I = 1), and its `initial` is its `[model.initial]`; another name is none.
    #[test]
    fn named_starts_are_the_extremal_states() {
        let m = Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.5\nd = 2\n", &[]).unwrap();
        assert_eq!(m.named_state("full", Some(4)).unwrap(), Some(vec![1.0; 4]));
        assert_eq!(m.named_state("empty", Some(3)).unwrap(), Some(vec![0.0; 3]));
        assert_eq!(m.named_state("fill", Some(3)).unwrap(), None);
        let sis = Model::from_file(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/generic/sis.toml"), &[]).unwrap();
        for name in START_NAMES {
            let x = sis.named_state(name, None).unwrap().unwrap();
            assert!(sis.check_state(&x, None).is_ok(), "{name}: {x:?}");
        }
        // `initial` is the file's [model.initial] state (sir.toml: S = 0.99, I = 0.01, R
        // eliminated), and an error naming what is missing for a model that declares none
        let sir = Model::from_file(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/generic/sir.toml"), &[]).unwrap();
        assert_eq!(sir.named_state("initial", None).unwrap(), Some(vec![0.99, 0.01]));
        let e = m.named_state("initial", Some(3)).unwrap_err();
        assert!(matches!(e, Error::NoInitialState { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "JSQ(2) declares no [model.initial] state, so there is no start named 'initial' (allowed: empty, full, or the \
             entries of a state; a generic model declares [model.initial], docs/models/generic.md)"
        );
    }

    /// An empty state named `truncation.levels = 0` (a key not given): now the state, its size
    /// and the size expected, for the drift, the Jacobian and the state check alike; an explicit
    /// `levels = 0` is still that key's error.
    #[test]
    fn an_empty_state_is_named_with_the_size_expected() {
        let m = Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.5\nd = 2\n", &[]).unwrap();
        let k = m.spec().initial_levels();
        let want = format!("x has 0 entries (an empty state); allowed: a state of the model, {k} entries at truncation level K = {k}");
        assert_eq!(m.drift(&[], None).unwrap_err().to_string(), want);
        assert_eq!(m.jacobian(&[], None).unwrap_err().to_string(), want);
        let e = m.check_state(&[], None).unwrap_err();
        assert!(matches!(e, Error::StateSize { entries: 0, dim, levels } if dim == k && levels == k), "{e:?}");
        let fixed = Model::from_toml(JSQ2, &[]).unwrap();
        let e = fixed.drift(&[], None).unwrap_err().to_string();
        assert_eq!(e, "x has 0 entries (an empty state); allowed: a state of the model, 20 entries at truncation level K = 20");
        assert!(m.drift(&[], Some(0)).unwrap_err().to_string().contains("truncation.levels = 0"));
    }

    /// A state of the wrong size for a model without a truncation level (the one-variable SIS
    /// of models/generic/sis.toml) is named with its state entry, not with a "truncation level
    /// K = 2" it does not have (the drift of `[0.1, 0.2]` said `the model has 1 states at
    /// truncation level K = 2 ... or the level K at which the model has 2 states`).
    #[test]
    fn a_state_of_a_model_without_levels_is_named_by_its_entries() {
        let sis = Model::from_file(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/generic/sis.toml"), &[]).unwrap();
        let want = "x has 2 entries; the model has 1 entry (X), whatever the truncation level (its size has no level K); allowed: a \
                    state of 1 entry";
        for e in [sis.drift(&[0.1, 0.2], None), sis.jacobian(&[0.1, 0.2], None).map(|_| Vec::new())] {
            let e = e.unwrap_err();
            assert!(matches!(e, Error::StateEntries { entries: 2, dim: 1, .. }), "{e:?}");
            assert_eq!(e.to_string(), want);
        }
        let e = sis.drift(&[], None).unwrap_err().to_string();
        assert_eq!(e, "x has 0 entries (an empty state); allowed: a state of the model, 1 entry (X)");
        let e = sis.check_fixed_point_start(&[0.1, 0.2]).unwrap_err().to_string();
        assert!(e.starts_with("x has 2 entries; the model has 1 entry (X)") && !e.contains("K ="), "{e}");
        // a model with levels still names its level
        let m = Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.5\nd = 2\n", &[]).unwrap();
        assert!(m.drift(&[0.5, 0.2], Some(3)).unwrap_err().to_string().contains("at truncation level K = 3"));
    }

    /// The drift and Jacobian of JSQ(2) (Mitzenmacher 2001, eq. (2): `dx_k/dt = lambda
    /// (x_{k-1}^2 - x_k^2) - (x_k - x_{k+1})`) at a state, computed by hand here; the closed-form
    /// tail `x_k = lambda^(2^k - 1)` is a root up to the truncation; wrong sizes are refused.
    #[test]
    fn drift_and_jacobian_of_jsq2() {
        let m = Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.5\nd = 2\n", &[]).unwrap();
        let x = [0.6, 0.3, 0.1];
        let f = m.drift(&x, None).unwrap();
        let lam = 0.5;
        let want = [lam * (1.0 - 0.36) - (0.6 - 0.3), lam * (0.36 - 0.09) - (0.3 - 0.1), lam * (0.09 - 0.01) - 0.1];
        for (a, b) in f.iter().zip(want) {
            assert!((a - b).abs() < 1e-15, "{f:?} vs {want:?}");
        }
        let j = m.jacobian(&x, None).unwrap();
        // row 1 (k = 2): d/dx_1 = 2 lambda x_1, d/dx_2 = -2 lambda x_2 - 1, d/dx_3 = 1
        assert!((j[3] - 2.0 * lam * 0.6).abs() < 1e-12 && (j[4] - (-2.0 * lam * 0.3 - 1.0)).abs() < 1e-12 && (j[5] - 1.0).abs() < 1e-12);
        assert_eq!(j[2], 0.0);
        let tail: Vec<f64> = (1..=30).map(|k| lam.powi(2_i32.pow(k) - 1)).collect();
        assert!(m.drift(&tail[..5], None).unwrap().iter().all(|v| v.abs() < 1e-9));
        assert!(matches!(m.drift(&x, Some(5)), Err(Error::StateSize { entries: 3, dim: 5, levels: 5 })));
    }

    /// `check_start` refuses start states outside the tail layout (naming the broken
    /// constraint and the entry) and accepts feasible ones, the fixed point among them.
    #[test]
    fn check_start_names_the_broken_constraint() {
        let m = Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n", &[]).unwrap();
        for (x0, entry) in [(vec![2.0, -1.0], 1), (vec![0.5, 0.9, 0.1], 2), (vec![1.5, 0.2], 1), (vec![0.4, f64::NAN], 2)] {
            match m.check_start(Some(x0.len()), &x0) {
                Err(e @ Error::InfeasibleStart { index, .. }) => {
                    assert_eq!(index, entry, "{x0:?}: {e}");
                    assert!(e.to_string().contains("x_{k+1} <= x_k"), "{e}");
                }
                other => panic!("{x0:?}: {other:?}"),
            }
        }
        let tail: Vec<f64> = (1..=12).map(|k| 0.9_f64.powi(2_i32.pow(k) - 1)).collect();
        assert!(m.check_start(Some(12), &tail).is_ok());
        assert!(m.check_start(Some(3), &[0.0; 3]).is_ok() && m.check_start(Some(3), &[1.0; 3]).is_ok());
        // the size is the transient's to report
        assert!(m.check_start(Some(5), &[0.5]).is_ok());
    }

    /// A solve stopped by its iteration budget (JSQ(2) at lambda = 0.99, one iteration) reports
    /// no observables: the last iterate gave T = 0.909 < 1, impossible for unit-mean jobs. With
    /// the default budget the same model converges and T is the closed form
    /// `sum_k lambda^(2^k - 2)` (Mitzenmacher 2001, `x_k = lambda^(2^k - 1)`, `T = L / lambda`).
    #[test]
    fn non_converged_fixed_point_reports_no_observables() {
        let m = Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.99\nd = 2\n", &[]).unwrap();
        let fp = m.fixed_point(&FixedPointOptions { max_iter: 1, ..Default::default() }).unwrap();
        assert!(!fp.converged(), "{:?}", fp.status);
        let o = &fp.observables;
        assert_eq!((o.mean_response_time, o.mean_queue_length, o.throughput, o.prob_wait), (None, None, None, None));
        assert!(o.tail.is_empty() && o.extras.is_empty() && !fp.x.is_empty());
        let fp = m.fixed_point(&FixedPointOptions::default()).unwrap();
        let closed: f64 = (1..30).map(|k| 0.99_f64.powi(2_i32.pow(k) - 2)).sum();
        let t = fp.observables.mean_response_time.unwrap();
        assert!(fp.converged() && (t - closed).abs() < 1e-8 * closed, "T = {t}, closed form {closed}");
    }

    /// A tiny limit (`--max-seconds 1e-300`) is said in exponent form, as docs/errors.md says
    /// numbers longer than 20 characters are (it printed `0.000...0001`, 302 characters): in the
    /// fixed point's status and in a sweep's reason for stopping.
    #[test]
    fn a_tiny_limit_is_said_in_exponent_form() {
        let m = Model::from_toml(JSQ2, &[]).unwrap();
        let fp = m.fixed_point(&FixedPointOptions { deadline: mfq_model::Deadline::after(1e-300), ..Default::default() }).unwrap();
        assert_eq!(fp.status.to_string(), "the wall-clock limit of 1e-300 s ran out");
        let opts = FixedPointOptions { deadline: mfq_model::Deadline::after(1e-300), ..Default::default() };
        let axis = crate::sweep::Axis::numbers("lambda", vec![0.5, 0.6]);
        // the limit may pass while the sweep still reads its model text (then an error) or at
        // its first point (then a partial result): said in exponent form either way
        match crate::sweep::sweep_models(&[(String::new(), JSQ2.to_string())], &[], &[axis], &opts, &|| {}) {
            Ok(r) => assert_eq!(r.partial.as_deref(), Some("stopped at the wall-clock limit --max-seconds 1e-300: 0 of 2 points finished")),
            Err(e) => assert!(e.to_string().contains("the wall-clock limit --max-seconds 1e-300"), "{e}"),
        }
    }

    /// `--set lambda=1e400` (beyond the largest double, so not a TOML number) said that the string
    /// "1e400" has the wrong type; it is a number that overflows.
    #[test]
    fn an_overflowing_override_is_said_to_overflow() {
        for v in ["1e400", "-1e400"] {
            let e = Model::from_toml(JSQ2, &[format!("lambda={v}")]).unwrap_err();
            assert_eq!(e.to_string(), format!("--set lambda: {v} is beyond the largest number (about 1.8e308); allowed: a finite number"));
        }
    }

    /// A model written as TOML reads back as the same model.
    #[test]
    fn to_toml_round_trips() {
        let m = Model::from_toml(JSQ2, &["lambda=0.95".into()]).unwrap();
        assert_eq!(Model::from_toml(&m.to_toml().unwrap(), &[]).unwrap(), m);
    }

    /// `to_toml` writes the text `toml::to_string` writes (by the document buffer's `Display`
    /// instead of its quadratic `into_string`), for a generic model of many transitions too,
    /// which reads back as the same model.
    #[test]
    fn to_toml_is_the_text_of_toml_to_string() {
        let mut generic = String::from("[model]\nkind = \"generic\"\nname = \"many\"\nvariables = [\"X\"]\n[model.parameters]\na = 0.5\n");
        for i in 0..500 {
            let (jump, rate) = if i % 2 == 0 { (1, "(1 - X) * a") } else { (-1, "X") };
            generic.push_str(&format!("[[model.transitions]]\nname = \"t{i}\"\njump = {{ X = {jump} }}\nrate = \"{rate}\"\n"));
        }
        for text in [JSQ2, &generic] {
            let m = Model::from_toml(text, &[]).unwrap();
            let written = m.to_toml().unwrap();
            assert_eq!(written, toml::to_string(m.file()).unwrap());
            assert_eq!(Model::from_toml(&written, &[]).unwrap(), m);
        }
    }

    /// The report of JSQ(2) at lambda = 0.9: T = 2.614057 (Mitzenmacher 2001, closed form), a
    /// transient that reaches x*, and a certified attraction verdict.
    #[test]
    fn report_of_jsq2() {
        let m = Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n", &[]).unwrap();
        let r = m.report(&ReportOptions::default()).unwrap();
        assert!((r.fixed_point.observables.mean_response_time.unwrap() - 2.614057).abs() < 1e-6);
        let crate::Dynamics::Done { distance, check, .. } = &r.dynamics else { panic!("no dynamics: {:?}", r.dynamics) };
        assert!(*distance.last().unwrap() < 1e-8);
        assert_eq!(check.verdict.name(), "certified");
        assert!(r.stopped().is_none());
    }
}
