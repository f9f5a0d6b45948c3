//! The `generic` kind as the registry declares it (the model: the sibling modules;
//! docs/models/generic.md).

use super::GenericSpec;
use crate::finite::Simulation;
use crate::registry::{read_spec, Kind, KindSpec, Param};
use crate::{MeanFieldModel, ModelError};

impl KindSpec for GenericSpec {
    fn kind(&self) -> &'static Kind {
        &GENERIC
    }
    /// `observables.arrival_rate`, when declared.
    fn lambda(&self) -> Option<f64> {
        GenericSpec::lambda(self)
    }
    /// `levels` sets the parameter named by `model.levels`, if any; else the size is fixed.
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(GenericSpec::build(self, levels)?))
    }
    /// [`build`](Self::build) within the job's deadline (see [`super::GenericModel::within`]).
    fn build_within(&self, levels: usize, deadline: &crate::Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(super::GenericModel::within(self, Some(levels), Default::default(), deadline)?))
    }
    /// Builds the model to check the file, for at most a quarter of a second: a larger model (a
    /// million transitions) is checked when a job builds it within its own deadline (the same
    /// errors), so that reading a file never outlasts `--max-seconds`.
    fn validate(&self, levels: usize) -> Result<(), ModelError> {
        match super::GenericModel::within(self, Some(levels), Default::default(), &crate::Deadline::after(0.25)) {
            Ok(_) | Err(ModelError::Interrupted { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }
    /// The probe is the model itself (its stability is unknown, but the solvers read its
    /// layout), built within the deadline.
    fn build_probe_within(&self, levels: usize, deadline: &crate::Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        KindSpec::build_within(self, levels, deadline)
    }
    /// The `levels` parameter's value, or the (fixed) dimension.
    fn initial_levels(&self) -> usize {
        GenericSpec::initial_levels(self)
    }
    /// A generic model's rules are its transitions: its finite-N system is their population
    /// process.
    fn simulation(&self) -> Result<Simulation, ModelError> {
        Ok(Simulation::Population)
    }
    /// The conservation laws the solve used: the declared ones (with the eliminated
    /// variable), or none, in which case the model was checked to conserve no linear
    /// quantity (a model that does is refused when it is built).
    fn notes(&self) -> Vec<String> {
        if self.conservation.is_empty() {
            return vec!["conservation law: none declared; the jumps were checked to conserve no linear quantity (a left null \
                         vector of the jump matrix, by sparse elimination; skipped only when that would take more than 3e8 operations), so \
                         the fixed point is not one of a family"
                .into()];
        }
        self.conservation
            .iter()
            .enumerate()
            .map(|(i, law)| {
                let elim = law.eliminate.clone().or_else(|| law.sum.last().cloned()).unwrap_or_default();
                format!(
                    "conservation law used: {} = {} (model.conservation[{i}], declared; {elim} is computed from the others, so \
                     every reported state satisfies it exactly)",
                    law.sum.join(" + "),
                    law.value.source()
                )
            })
            .collect()
    }
}

/// The `generic` kind.
pub static GENERIC: Kind = Kind {
    name: "generic",
    title: "Any density-dependent population process given by its transitions (jump and rate expression) in the file",
    params: &[
        Param { name: "name", meaning: "name used in reports", unit: "", allowed: "text", default: Some("\"generic\""), range: None },
        Param {
            name: "parameters",
            meaning: "[model.parameters] table of named numbers (--set NAME=VALUE changes them)",
            unit: "",
            allowed: "finite numbers",
            default: Some("{}"),
            range: None,
        },
        Param {
            name: "levels",
            meaning: "the parameter that is the truncation level K of a tail-form state",
            unit: "",
            allowed: "a parameter name, when the state is one tail family",
            default: Some("absent (fixed size)"),
            range: None,
        },
        Param { name: "variables", meaning: "scalar state variables", unit: "", allowed: "names", default: Some("[]"), range: None },
        Param {
            name: "families",
            meaning: "[[model.families]]: indexed families x[k], k in a range, with boundary values",
            unit: "",
            allowed: "names; ranges a..b in the parameters",
            default: Some("[]"),
            range: None,
        },
        Param {
            name: "transitions",
            meaning: "[[model.transitions]]: jump (variable = change), rate (expression), optional for = \"k = 1..K\"",
            unit: "rate per object",
            allowed: "rates >= 0 at feasible states",
            default: Some("[]"),
            range: None,
        },
        Param {
            name: "conservation",
            meaning: "[[model.conservation]]: conservation laws of the state",
            unit: "",
            allowed: "see docs/models/generic.md",
            default: Some("[]"),
            range: None,
        },
        Param {
            name: "initial",
            meaning: "an initial state (unlisted variables are 0)",
            unit: "",
            allowed: "fractions",
            default: Some("{}"),
            range: None,
        },
        Param {
            name: "observables",
            meaning: "[model.observables]: tail, arrival rate, loss, extras",
            unit: "",
            allowed: "see docs/models/generic.md",
            default: Some("{}"),
            range: None,
        },
        Param {
            name: "order",
            meaning: "a claimed cooperative order (checked numerically, never trusted)",
            unit: "",
            allowed: "\"componentwise\"",
            default: Some("absent"),
            range: None,
        },
    ],
    sources:
        "Kurtz, J. Appl. Prob. 7(1), 1970 (density-dependent population processes); the DDPP form of rmf_tool (Gast, Allmeier, Van Houdt)",
    example: "models/generic/jsq2.toml",
    docs: "docs/models/generic.md",
    read: read_spec::<GenericSpec>,
};
