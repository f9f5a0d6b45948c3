//! mfq's front door: what the `mfq` command and the Python package call.
//!
//! The crates below it each have one concern (`mfq-model`: what a model is; `mfq-ode`:
//! transients; `mfq-fixpoint`: fixed points, checker, refined mean field; `mfq-sim`: finite-N
//! simulation). This crate puts them behind one door: the registry's catalogue
//! ([`catalog`]), and (see the modules) one call per job on a model value, each returning a
//! result struct with a status.

pub mod catalog;

pub use catalog::{catalog, catalog_text, guide_table, KindInfo};
pub use mfq_model::{Kind, KindSpec, ModelFile, ModelSpec, Param, KINDS};
