//! mfq's front door: what the `mfq` command and the Python package call.
//!
//! The crates below it each have one concern (`mfq-model`: what a model is, and the registry of
//! kinds; `mfq-ode`: transients; `mfq-fixpoint`: fixed points, checker, refined mean field,
//! sweeps; `mfq-sim`: finite-N simulation). This crate puts them behind one door, in the
//! problem -> solve -> solution shape of SciML and argmin: a [`Model`] value and one call per job
//! (fixed point, transient, refined terms, check, simulate, exact finite-N chain, report), each returning a result
//! struct with a status; a run that did not converge is a result, misuse is an [`Error`].
//! The report that `mfq report` prints is assembled by [`report::report`]; the catalogue that
//! `mfq models` prints by [`catalog`].

pub mod branches;
mod catalog;
pub mod copies;
mod error;
mod finite;
mod model;
pub mod report;
pub mod simsweep;
pub mod sweep;

pub use branches::BranchOptions;
pub use catalog::{catalog, catalog_text, guide_table, KindInfo};
pub use error::Error;
pub use finite::{
    check_buffer, population_absorption, population_equilibrium, report_absorption, AbsorbedWhen, Absorption, ExactComparison,
    FiniteMeanField, PopulationEquilibrium, BUFFER_ALLOWED, OUTSIDE_TOLERANCE,
};
pub use model::{
    check_laws, conditioning_warning, degeneracy_warning, leaving_state_space, named_start, state_space_warning, Model, RefinedOptions,
    RefinedReport, NEAR_DEGENERATE, START_NAMES,
};
pub use report::{Dynamics, Report, ReportOptions};

pub use mfq_fixpoint::{
    AttractionReport, BranchReport, CheckOptions, Expansion, FixedPoint, FixedPointOptions, RefinedEstimate, RefinedExpansion,
    RefinedMeanField, RefinedTrajectory,
};
pub use mfq_model::{Deadline, Kind, KindSpec, ModelFile, ModelSpec, Param, KINDS};
pub use mfq_ode::{Method, SolveOptions, Trajectory};
pub use mfq_sim::exact::{ExactMethod, ExactOptions, ExactReport, ExactStatus};
pub use mfq_sim::{SimError, SimOptions, SimReport};

/// The errors of the crates below the front door, which [`Error`] wraps: for callers that tell
/// them apart (the Python package maps each to an exception with its fields).
pub mod errors {
    pub use mfq_fixpoint::{CheckError, ContinuationError, FixedPointError, RefinedError};
    pub use mfq_model::{ModelError, OUTWARD_ALLOWED};
    pub use mfq_ode::OdeError;
    pub use mfq_sim::exact::ExactError;
    pub use mfq_sim::SimError;
}
