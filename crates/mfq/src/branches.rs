//! Equilibrium branches of a model along one parameter ([`Model::branches`]): the start
//! equilibria from the attraction checker at the first value, then pseudo-arclength
//! continuation (`mfq_fixpoint::branches`; docs/branches.md).

use crate::{Error, Model};
use mfq_fixpoint::branches::{branches, BranchReport, ContinuationOptions};
use mfq_fixpoint::{CheckOptions, FixedPointOptions};
use mfq_model::{Deadline, ModelError, ModelFile};

/// Options of [`Model::branches`].
#[derive(Debug, Clone, PartialEq)]
pub struct BranchOptions {
    /// The swept parameter: one name as in `--set` (`alpha`), or several set to the same value
    /// (`gamma0` and `gamma1`: the symmetric stubborn model). Each must be a real-valued
    /// parameter of the model (not a name, a table or an integer).
    pub parameters: Vec<String>,
    /// First value (the checker looks for every equilibrium there).
    pub start: f64,
    /// Last value (`!= start`).
    pub end: f64,
    /// At least this many points along a branch that spans the range (the longest step is
    /// `1 / (points - 1)` of the range in the scaled parameter); in `[2, 100000]`.
    pub points: usize,
    /// Random starts of the checker at the first value (default 32).
    pub starts: usize,
    /// Wall-clock limit and cancel flag of the whole job (checker and continuation).
    pub deadline: Deadline,
}

impl Default for BranchOptions {
    fn default() -> Self {
        BranchOptions { parameters: vec!["lambda".into()], start: 0.0, end: 1.0, points: 200, starts: 32, deadline: Deadline::none() }
    }
}

impl BranchOptions {
    /// Reads `NAME=start:end:points` (as `--set`), `NAME` one parameter or several separated by
    /// commas (`gamma0,gamma1=0:0.4:200`: both set to the swept value); the other fields default.
    ///
    /// # Errors
    /// [`ModelError::BadOverride`] naming the setting when it is not of that form, a number is
    /// not finite, `points` is not in `[2, 100000]`, or `start = end` (an empty range).
    pub fn from_set(setting: &str) -> Result<BranchOptions, ModelError> {
        let bad = |name: &str, reason: String| ModelError::BadOverride { name: name.to_string(), reason };
        let (names, range) = setting.split_once('=').ok_or_else(|| {
            bad(
                setting,
                "expected NAME=start:end:points, e.g. alpha=0:0.2:200 (or NAME1,NAME2=... for several parameters set alike)".into(),
            )
        })?;
        let parameters: Vec<String> = names.split(',').map(|n| n.trim().to_string()).collect();
        if parameters.iter().any(String::is_empty) {
            return Err(bad(names, "empty parameter name (allowed: NAME or NAME1,NAME2,...)".into()));
        }
        let num = |s: &str| s.trim().parse::<f64>().ok().filter(|v| v.is_finite());
        let [a, b, n] = range.split(':').collect::<Vec<_>>()[..] else {
            return Err(bad(names, format!("'{range}' is not a range (allowed: start:end:points, e.g. 0:0.2:200)")));
        };
        let (Some(start), Some(end)) = (num(a), num(b)) else {
            return Err(bad(names, format!("'{range}': start and end must be finite numbers")));
        };
        let points = n
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|p| (2..=100_000).contains(p))
            .ok_or_else(|| bad(names, format!("'{n}' is not a number of points in [2, 100000] (range syntax: start:end:points)")))?;
        if start == end {
            return Err(bad(names, format!("'{range}' is an empty range (start = end = {start}); allowed: start != end")));
        }
        Ok(BranchOptions { parameters, start, end, points, ..Default::default() })
    }

    /// The overrides that set every swept parameter to `v` (`{v:?}` keeps every digit and
    /// always reads back as a TOML float).
    fn sets(&self, v: f64) -> Vec<String> {
        self.parameters.iter().map(|p| format!("{p}={v:?}")).collect()
    }
}

impl Model {
    /// Every equilibrium followed along one parameter: the attraction checker finds the
    /// equilibria at `opts.start` (its `opts.starts` random starts, with the basin boundaries
    /// between them), then each is continued by pseudo-arclength continuation to `opts.end`,
    /// with its stability and the located fold, branch and Hopf points
    /// (`mfq_fixpoint::branches`). The truncation level is fixed along the branches: the
    /// file's, or the larger of those the fixed-point solver chooses at the two ends.
    ///
    /// # Errors
    /// [`Error::Model`] when a name is not a parameter of the model, is not real-valued (a
    /// name, table or integer), or the model is invalid at `start` or `end`;
    /// [`Error::Branches`] for bad options; as [`check`](Self::check) at the first value.
    /// Branches stopped by the deadline are data (`partial`).
    pub fn branches(&self, opts: &BranchOptions) -> Result<BranchReport, Error> {
        let text = self.to_toml()?;
        let doc = toml::Table::try_from(self.file()).map_err(|e| Error::Read { path: "(model)".into(), reason: e.to_string() })?;
        for name in &opts.parameters {
            self.check_real_parameter(&doc, &text, name, &opts.deadline)?;
        }
        let copts = ContinuationOptions {
            parameter: opts.parameters.join(","),
            start: opts.start,
            end: opts.end,
            points: opts.points,
            deadline: opts.deadline.clone(),
            ..Default::default()
        };
        copts.validate()?;
        // every parse of the text within the deadline (a model file of many transitions takes
        // seconds to parse, and the continuation reads it again at every parameter value)
        let deadline = &opts.deadline;
        let mut first = Model::from_toml_within(&text, &opts.sets(opts.start), deadline)?;
        // the end of the range must be a valid model as well (a clear error now, not a branch
        // that stops on the way)
        let last = Model::from_toml_within(&text, &opts.sets(opts.end), deadline)?;
        // one truncation level along the branches: the file's, or the larger of those the
        // fixed-point solver chooses at the two ends (a queue's tail grows with the load)
        if self.file().truncation.levels.is_none() {
            let fp_opts = FixedPointOptions { deadline: opts.deadline.clone(), ..Default::default() };
            let levels = [&first, &last]
                .iter()
                .filter_map(|m| m.fixed_point(&fp_opts).ok())
                .filter(|fp| fp.converged())
                .map(|fp| fp.truncation.levels)
                .max();
            if let Some(k) = levels {
                first = first.with(&[format!("truncation.levels={k}")])?;
            }
        }
        let check = first.check(&CheckOptions { starts: opts.starts, deadline: opts.deadline.clone(), ..Default::default() })?;
        let levels = check.fixed_point.truncation.levels;
        let starts: Vec<Vec<f64>> = check.equilibria.iter().map(|e| e.x.clone()).collect();
        let model_at = |v: f64| ModelFile::parse_within(&text, &opts.sets(v), deadline).and_then(|f| f.model.build(levels));
        Ok(branches(&model_at, &starts, &copts)?)
    }

    /// A clear error unless `name` is a real-valued parameter of this model (`doc`: the model
    /// as a TOML table, `text` as TOML text, parsed again within `deadline` only to name the
    /// parameters there are).
    fn check_real_parameter(&self, doc: &toml::Table, text: &str, name: &str, deadline: &Deadline) -> Result<(), Error> {
        let bad = |reason: String| Error::Model(ModelError::BadOverride { name: name.to_string(), reason });
        let key = name.trim().trim_start_matches("model.");
        if let Some(param) = self.spec().kind_info().param(key) {
            match param.range {
                None => {
                    return Err(bad(format!(
                        "not a numeric parameter (allowed: {}); branches follow a real-valued parameter",
                        param.allowed
                    )))
                }
                Some(r) if r.integer => {
                    return Err(bad(format!("takes integers only ({}); branches follow a real-valued parameter", param.allowed)))
                }
                Some(_) => return Ok(()),
            }
        }
        match mfq_model::spec::value_in(doc, name) {
            Some(toml::Value::Float(_)) => Ok(()),
            Some(toml::Value::Integer(_)) if name.starts_with("truncation.") => {
                Err(bad("a truncation setting, not a model parameter (branches follow a real-valued model parameter)".into()))
            }
            Some(toml::Value::Integer(_)) => Ok(()),
            Some(other) => Err(bad(format!("not a numeric parameter (value {other}); branches follow a real-valued parameter"))),
            // not a key of the file: the parser names the parameters there are
            None => Model::from_toml_within(text, &[format!("{name}=0.5")], deadline).map(|_| ()).and(Err(bad(
                "not a parameter the model file sets (allowed: a real-valued parameter of the model, see `mfq models`)".into(),
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_bad_ones_name_the_parameter() {
        let o = BranchOptions::from_set("gamma0,gamma1=0:0.4:200").unwrap();
        assert_eq!((o.parameters, o.start, o.end, o.points), (vec!["gamma0".to_string(), "gamma1".to_string()], 0.0, 0.4, 200));
        for (s, want) in [
            ("alpha", "expected NAME=start:end:points"),
            ("alpha=0.1", "is not a range"),
            ("alpha=0:x:10", "finite numbers"),
            ("alpha=0:1:1", "number of points"),
            ("alpha=0.1:0.1:10", "empty range"),
            (",alpha=0:1:10", "empty parameter name"),
        ] {
            let e = BranchOptions::from_set(s).unwrap_err().to_string();
            assert!(e.contains(want), "{s}: {e}");
        }
    }

    /// Unknown, non-numeric and integer parameters are refused with the reason; so is a range
    /// whose end is not a valid model.
    #[test]
    fn parameters_must_be_real_and_valid() {
        let biased = Model::from_toml("[model]\nkind = \"opinion-biased\"\nalpha = 0.05\n", &[]).unwrap();
        let run = |m: &Model, s: &str| m.branches(&BranchOptions::from_set(s).unwrap()).unwrap_err().to_string();
        assert!(run(&biased, "beta=0:0.2:20").contains("no parameter 'beta'"), "{}", run(&biased, "beta=0:0.2:20"));
        assert!(run(&biased, "alpha=0:1.5:20").contains("model.alpha = 1.5"), "{}", run(&biased, "alpha=0:1.5:20"));
        let jsq = Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.5\nd = 2\n", &[]).unwrap();
        assert!(run(&jsq, "d=1:3:20").contains("integers only"), "{}", run(&jsq, "d=1:3:20"));
        let red = Model::from_toml(&std::fs::read_to_string("../../models/redundancy-ps-pair.toml").unwrap(), &[]).unwrap();
        let e = run(&red, "discipline=0:1:20");
        assert!(e.contains("not a numeric parameter"), "{e}");
    }

    /// Through the front door: the fold of the biased model at alpha = 1/9 and the pitchfork of
    /// the symmetric stubborn model at gamma = 1/4 (closed forms: docs/branches.md).
    #[test]
    fn opinion_branches_from_the_model_files() {
        let read = |p: &str| Model::from_file(std::path::Path::new(&format!("../../{p}")), &[]).unwrap();
        let r = read("models/opinion-biased.toml").branches(&BranchOptions::from_set("alpha=0:0.2:200").unwrap()).unwrap();
        assert_eq!(r.starts.len(), 3);
        let folds: Vec<f64> = r.branches.iter().flat_map(|b| &b.special).map(|s| s.parameter).collect();
        assert!(folds.len() == 1 && (folds[0] - 1.0 / 9.0).abs() < 1e-8, "{folds:?}");
        let r = read("models/opinion-stubborn.toml").branches(&BranchOptions::from_set("gamma0,gamma1=0:0.4:200").unwrap()).unwrap();
        assert_eq!((r.starts.len(), r.branches.len()), (3, 2));
        let bp = r.branches.iter().flat_map(|b| &b.special).find(|s| s.stability_change).unwrap();
        assert!((bp.parameter - 0.25).abs() < 1e-8, "{bp:?}");
    }
}
