//! A model value: a model file (or a kind's parameters) with its truncation, and one call per
//! job on it.

use crate::report::{report, Report, ReportOptions};
use crate::Error;
use mfq_fixpoint::{
    check_with_fixed_point, refined_mean_field, solve_spec, AttractionReport, CheckOptions, FixedPoint, FixedPointOptions, RefinedMeanField,
};
use mfq_model::{MeanFieldModel, ModelFile, ModelSpec, Truncation};
use mfq_ode::{SolveOptions, Trajectory};
use mfq_sim::{SimOptions, SimReport};
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
        Ok(Model { file: ModelFile::parse(text, overrides)? })
    }

    /// The model of the model file at `path`, with `overrides` applied.
    ///
    /// # Errors
    /// [`Error::Read`] when the file cannot be read; as [`from_toml`](Self::from_toml).
    pub fn from_file(path: &Path, overrides: &[String]) -> Result<Model, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Read { path: path.display().to_string(), reason: e.to_string() })?;
        Model::from_toml(&text, overrides)
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
        let text = toml::to_string(&self.file).map_err(|e| Error::Read { path: "(model)".into(), reason: e.to_string() })?;
        Model::from_toml(&text, overrides)
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
    /// [`Error::Model`] when a parameter is outside its range at that truncation.
    pub fn build(&self, levels: Option<usize>) -> Result<Box<dyn MeanFieldModel>, Error> {
        let levels = levels.or(self.file.truncation.levels).unwrap_or_else(|| self.file.model.initial_levels());
        Ok(self.file.model.build(levels)?)
    }

    /// The fixed point, with the truncation level grown automatically (or fixed by the file),
    /// after checking the model's stability condition. A run that did not converge is a result
    /// with its status, not an error.
    ///
    /// # Errors
    /// [`Error::FixedPoint`]: bad options, or parameters outside the stability region
    /// (`FixedPointError::Unstable`, with the reason).
    pub fn fixed_point(&self, opts: &FixedPointOptions) -> Result<FixedPoint, Error> {
        Ok(solve_spec(&self.file.model, &self.file.truncation, opts)?)
    }

    /// The transient `x(t)` from `x0` (length: the model's dimension at `levels`).
    ///
    /// # Errors
    /// [`Error::Model`] for the model; [`Error::Transient`] for `x0` or the options.
    pub fn transient(&self, levels: Option<usize>, x0: &[f64], opts: &SolveOptions) -> Result<Trajectory, Error> {
        let model = self.build(levels)?;
        Ok(mfq_ode::solve(model.as_ref(), x0, opts)?)
    }

    /// The refined mean field's `1/N` term `V` at the fixed point `fp` (Gast and Van Houdt,
    /// SIGMETRICS 2017).
    ///
    /// # Errors
    /// [`Error::NotAFixedPoint`] when `fp` is not a fixed point of this model (another size, or
    /// `max |f(x)| > 1e-8`); [`Error::Model`] for the model; [`Error::Refined`] when the model has no transitions,
    /// is not smooth, or its Lyapunov equation is singular.
    pub fn refined(&self, fp: &FixedPoint) -> Result<RefinedMeanField, Error> {
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
        Ok(refined_mean_field(model.as_ref(), &fp.x)?)
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

    /// The finite-N simulation of the system the kind declares.
    ///
    /// # Errors
    /// [`Error::Simulation`]: options or parameters out of range, or a kind without a finite-N
    /// system (with the declared reason).
    pub fn simulate(&self, opts: &SimOptions) -> Result<SimReport, Error> {
        Ok(mfq_sim::simulate(&self.file.model, opts)?)
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
