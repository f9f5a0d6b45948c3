//! The `redundancy` kind as the registry declares it (models in the sibling modules;
//! docs/models/redundancy.md).

use super::{
    build, build_within, check_speeds, initial_levels, validate, Approximation, Copies, CopySize, CopySizeSpec, Discipline,
    LIMIT_DYNAMICS_NOTE,
};
use crate::finite::{FiniteSystem, Simulation};
use crate::out_of_range;
use crate::registry::{read_spec, Kind, KindSpec, Param, ParamRange};
use crate::{Deadline, MeanFieldModel, ModelError};
use serde::{Deserialize, Serialize};

/// `kind = "redundancy"`: redundancy-d (copies to `d` servers, cancel on first completion,
/// exponential sizes), see [`crate::models::redundancy`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedundancySpec {
    /// Arrival rate of jobs per server.
    pub lambda: f64,
    /// Copies per job (`>= 1`; `2` for the pair approximations).
    pub d: u32,
    /// Per-server discipline: `"ps"`, `"fcfs"`, `"lps"` (needs `lps_k`), `"lcfs"` (default `"ps"`).
    #[serde(default = "default_discipline")]
    pub discipline: Discipline,
    /// `"mean-field"` (default), `"pair"`, `"triplet"` or `"limit"`.
    #[serde(default = "default_approximation")]
    pub approximation: Approximation,
    /// `"iid"` (default) or `"identical"` copy sizes (identical: stability only).
    #[serde(default = "default_copies")]
    pub copies: Copies,
    /// LPS(k): number of oldest copies sharing a server (only with `discipline = "lps"`).
    #[serde(default)]
    pub lps_k: Option<u32>,
    /// Identical copies only: the job-size law `[model.job_size]` (default exponential, mean 1;
    /// any phase-type law or `law = "deterministic"`), see [`CopySizeSpec`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_size: Option<CopySizeSpec>,
    /// Identical copies under FCFS only: the speed of each of the `K = speeds.len()` servers
    /// (work per unit time; default: unit speeds, `N -> inf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speeds: Option<Vec<f64>>,
}

fn default_discipline() -> Discipline {
    Discipline::Ps
}
fn default_approximation() -> Approximation {
    Approximation::MeanField
}
fn default_copies() -> Copies {
    Copies::Iid
}

impl RedundancySpec {
    /// Redundancy-d with the defaults: PS, mean field, i.i.d. copies.
    pub fn new(lambda: f64, d: u32) -> Self {
        RedundancySpec {
            lambda,
            d,
            discipline: default_discipline(),
            approximation: default_approximation(),
            copies: default_copies(),
            lps_k: None,
            job_size: None,
            speeds: None,
        }
    }

    /// The size law of the copies (exponential with mean 1 unless `job_size` is given).
    ///
    /// # Errors
    /// As [`CopySizeSpec::to_law`].
    pub fn copy_size(&self) -> Result<CopySize, ModelError> {
        self.job_size.as_ref().map_or_else(|| Ok(CopySize::exponential()), CopySizeSpec::to_law)
    }

    /// Checks `job_size` and `speeds`: only with identical copies (`speeds` only under FCFS),
    /// a valid law, `d <= K` and positive speeds.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.job_size`, `model.speeds` or the field inside.
    pub fn check_identical(&self) -> Result<(), ModelError> {
        if self.copies != Copies::Identical {
            if self.job_size.is_some() {
                return Err(out_of_range(
                    "model.job_size",
                    "(given)",
                    "absent with i.i.d. copies (exponential sizes); a size law is for copies = \"identical\"",
                ));
            }
            if self.speeds.is_some() {
                return Err(out_of_range(
                    "model.speeds",
                    "(given)",
                    "absent with i.i.d. copies (unit speeds); speeds are for copies = \"identical\" with discipline = \"fcfs\"",
                ));
            }
            return Ok(());
        }
        self.copy_size()?;
        if let Some(speeds) = &self.speeds {
            if self.discipline != Discipline::Fcfs {
                return Err(out_of_range(
                    "model.speeds",
                    "(given)",
                    &format!(
                        "absent with discipline = \"{}\" (heterogeneous speeds are modelled for FCFS only)",
                        self.discipline.label(1).to_lowercase()
                    ),
                ));
            }
            check_speeds(speeds, self.d)?;
        }
        Ok(())
    }

    /// Whether this is redundancy-d with identical copies under FCFS: a model whose only output
    /// is its stability verdict (infinite `N`: [`super::identical_stability`]; finite `N`: the
    /// saturated system of `mfq_sim::saturated`).
    pub fn is_identical_fcfs(&self) -> bool {
        self.copies == Copies::Identical && self.discipline == Discipline::Fcfs
    }
}

impl KindSpec for RedundancySpec {
    fn kind(&self) -> &'static Kind {
        &REDUNDANCY
    }
    fn lambda(&self) -> Option<f64> {
        Some(self.lambda)
    }
    fn build(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        if let Some(region) = self.stability_only() {
            return super::identical_carrier(self.lambda, self.d, self.discipline, region, levels);
        }
        build(self.lambda, self.d, self.discipline, self.approximation, self.copies, self.lps_k, levels)
    }
    /// The LCFS limit checks the deadline as it solves its renewal equations.
    fn build_within(&self, levels: usize, deadline: &Deadline) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        self.check_identical()?;
        if let Some(region) = self.stability_only() {
            return super::identical_carrier(self.lambda, self.d, self.discipline, region, levels);
        }
        build_within(self.lambda, self.d, self.discipline, self.approximation, self.copies, self.lps_k, levels, deadline)
    }
    /// The LCFS limit is checked without solving its renewal equations (seconds).
    fn validate(&self, levels: usize) -> Result<(), ModelError> {
        self.check_identical()?;
        validate(self.lambda, self.d, self.discipline, self.approximation, self.copies, self.lps_k, levels)
    }
    /// The LCFS limit's probe is the redundancy mean field (same stability verdict).
    fn build_probe(&self, levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        if self.approximation == Approximation::Limit {
            KindSpec::validate(self, levels)?;
            return build(self.lambda, self.d, self.discipline, Approximation::MeanField, self.copies, self.lps_k, levels.min(64));
        }
        KindSpec::build(self, levels)
    }
    fn dynamics_note(&self) -> Option<String> {
        (self.approximation == Approximation::Limit).then(|| LIMIT_DYNAMICS_NOTE.to_string())
    }
    /// Pair approximations: `K^2` states, `K >= lps_k + 2`.
    fn initial_levels(&self) -> usize {
        initial_levels(self.approximation, self.lps_k)
    }
    /// The mean field ignores the discipline; under FCFS the headline numbers are the
    /// approximation's, not Gardner et al.'s exact limit (printed beside them).
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.copies == Copies::Identical {
            return notes;
        }
        let label = self.discipline.label(self.lps_k.unwrap_or(1));
        if self.approximation == Approximation::MeanField && self.discipline != Discipline::Ps {
            notes.push(format!(
                "approximation = \"mean-field\" does not depend on the discipline: these numbers are the same for PS, FCFS, \
                 LPS and LCFS; discipline = \"{}\" ({label}) is ignored here (approximation = \"pair\" (d = 2) or, for LCFS, \
                 \"limit\" model it)",
                match self.discipline {
                    Discipline::Fcfs => "fcfs",
                    Discipline::Lps => "lps",
                    Discipline::Lcfs => "lcfs",
                    Discipline::Ps => "ps",
                    Discipline::Ros => "ros",
                }
            ));
        }
        if self.discipline == Discipline::Fcfs && self.lambda < 1.0 {
            let what = match self.approximation {
                Approximation::MeanField => "the discipline-independent mean field",
                Approximation::Pair => "the FCFS pair approximation",
                _ => "this approximation",
            };
            notes.push(format!(
                "the headline numbers (mean queue length = mean copies per server, mean response time) describe {what}, not \
                 the exact large-N FCFS system; that system's values (Gardner et al., Oper. Res. 65(4), 2017) are \
                 gardner_fcfs_limit_mean_copies = {:.6} and gardner_fcfs_limit_mean_response_time = {:.6}",
                super::gardner_fcfs_mean_copies(self.lambda, self.d),
                super::gardner_fcfs_mean_response_time(self.lambda, self.d)
            ));
        }
        notes
    }
    /// `K` counts copies per server, and the finite system drops a whole job when one of its
    /// `d` servers is full: no job buffer of the mean field's kind.
    fn has_job_buffer(&self) -> bool {
        false
    }
    /// Identical copies: the stability region and `lambda_max` are the answer.
    fn stability_only(&self) -> Option<crate::StabilityRegion> {
        if self.copies != Copies::Identical {
            return None;
        }
        // the law was checked at parse time (validate); an invalid one falls back to the exponential verdict
        let size = self.copy_size().unwrap_or_else(|_| CopySize::exponential());
        Some(super::identical_region_general(self.lambda, self.d, self.discipline, &size, self.speeds.as_deref()))
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        if self.copies == Copies::Identical {
            return Ok(Simulation::Unsupported {
                reason: "identical copies (one size per job) are not run by the generic simulator; under FCFS `mfq simulate` \
                         runs their own finite system and saturated system (mfq_sim::saturated::general) and gives the \
                         stability verdict"
                    .into(),
            });
        }
        Ok(Simulation::System(FiniteSystem::Redundancy { lambda: self.lambda, d: self.d, discipline: self.discipline, lps_k: self.lps_k }))
    }
}

/// The `redundancy` kind.
pub static REDUNDANCY: Kind = Kind {
    name: "redundancy",
    title: "Redundancy-d (i.i.d. exponential copies, or identical copies of a phase-type or deterministic size on servers of given speeds: stability region; cancel on first completion): mean field, pair approximation (d = 2) for PS, FCFS, LPS(k), LCFS (the LCFS pair is 6.4% below simulation at lambda = 0.9), triplet approximation (d = 2, PS), LCFS limit (renewal equations on the job tree, derived; within 0.3% of simulation)",
    params: &[
        Param {
            name: "lambda",
            meaning: "job arrival rate per server (each job sends d copies)",
            unit: "jobs per mean job size per server",
            allowed: "> 0; i.i.d. copies stable iff < 1",
            default: None, range: Some(ParamRange::above(0.0)),
        },
        Param {
            name: "d",
            meaning: "copies per job, to distinct servers",
            unit: "",
            allowed: "integer in [1, 10000]; 2 for the pair and triplet approximations; [1, 64] for the LCFS limit",
            default: None, range: Some(ParamRange::integers(1.0, Some(10000.0))),
        },
        Param {
            name: "discipline",
            meaning: "per-server discipline of the copies",
            unit: "",
            allowed: "\"ps\" (default), \"fcfs\", \"lps\", \"lcfs\", \"ros\" (identical copies only)",
            default: Some("\"ps\""), range: None,
        },
        Param {
            name: "approximation",
            meaning: "mean field (any discipline), pair or triplet (PS) approximation, or the N -> inf limit from renewal equations (LCFS)",
            unit: "",
            allowed: "\"mean-field\" (default), \"pair\", \"triplet\", \"limit\"",
            default: Some("\"mean-field\""), range: None,
        },
        Param {
            name: "copies",
            meaning: "i.i.d. or identical copy sizes (identical: stability verdict only)",
            unit: "",
            allowed: "\"iid\" (default), \"identical\"",
            default: Some("\"iid\""), range: None,
        },
        Param {
            name: "lps_k",
            meaning: "LPS(k): the k oldest copies share the server",
            unit: "copies",
            allowed: "integer >= 1, only with discipline = \"lps\"",
            default: Some("absent"), range: Some(ParamRange::integers(1.0, None)),
        },
        Param {
            name: "job_size",
            meaning: "identical copies: the job-size law, a [model.job_size] table",
            unit: "mean job size",
            allowed: "identical copies only: law = \"exponential\", \"h2\", \"erlang\", \"coxian\", \"phase-type\" or \"deterministic\" (default exponential, mean 1)",
            default: Some("exponential, mean 1"), range: None,
        },
        Param {
            name: "speeds",
            meaning: "identical copies under FCFS: the speed of each of the K servers (K = number of entries)",
            unit: "work per unit time",
            allowed: "identical copies with discipline = \"fcfs\" only: d to 10000 numbers > 0 (default: unit speeds, N -> inf)",
            default: Some("absent"), range: None,
        },
    ],
    sources: "Gast and Van Houdt, POMACS 8(1), 2024 (arXiv 2401.07713; equations reconstructed); Anton, Ayesta, Jonckheere, Verloop, Oper. Res. 69(5), 2021 (stability); Gardner et al., Oper. Res. 65(4), 2017 (FCFS limit); LCFS limit derived in docs/models/redundancy.md",
    example: "models/redundancy-ps-pair.toml",
    docs: "docs/models/redundancy.md",
    read: read_spec::<RedundancySpec>,
};
