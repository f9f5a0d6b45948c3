//! The checker's options and the errors for misuse.

use crate::FixedPointError;
use mfq_model::Deadline;
use mfq_ode::OdeError;
use serde::Serialize;

/// A progress sink: `tick(done, total)` after each finished unit of work (a run of the
/// checker), called from worker threads. Serialised as whether it is set.
#[derive(Clone, Default)]
pub struct Progress(Option<std::sync::Arc<dyn Fn(u64, u64) + Send + Sync>>);

impl Progress {
    /// No progress reports.
    pub fn none() -> Self {
        Progress(None)
    }

    /// Reports to `tick(done, total)`.
    pub fn new(tick: impl Fn(u64, u64) + Send + Sync + 'static) -> Self {
        Progress(Some(std::sync::Arc::new(tick)))
    }

    /// Whether a sink is set.
    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }

    /// Reports `done` of `total`.
    pub fn tick(&self, done: u64, total: u64) {
        if let Some(f) = &self.0 {
            f(done, total);
        }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Progress({})", if self.is_set() { "set" } else { "none" })
    }
}

impl PartialEq for Progress {
    /// Two sinks are equal when both are unset or both are the same closure.
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Serialize for Progress {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(self.is_set())
    }
}

/// Default of [`CheckOptions::large_model_starts`]: random starts on models whose runs are
/// stiff BDF solves (6, against 32 on the others).
pub const LARGE_MODEL_STARTS: usize = 6;

/// Options of [`check`](super::check).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckOptions {
    /// Number of seeded random feasible initial states (default 32; see also
    /// [`large_model_starts`](Self::large_model_starts)).
    pub starts: usize,
    /// At most this many random starts on models whose runs are each one stiff BDF solve (a
    /// sparse Jacobian pattern and at least [`mfq_ode::AUTO_BDF_MIN_DIM`] states: the pair and
    /// triplet approximations, where one run costs a second or more of CPU time): the check
    /// runs `min(starts, large_model_starts)` of them and a note in the report says so; the
    /// verdict counts the starts that ran (default `Some(6)`
    /// ([`LARGE_MODEL_STARTS`]); `None`: always `starts`).
    pub large_model_starts: Option<usize>,
    /// Seed of the random starts, samples and pairs (default 1; same seed, same report).
    pub seed: u64,
    /// A run has settled once `max_i |f_i(x)| < tol` (default 1e-10); also the flat-segment
    /// test of the clustering.
    pub tol: f64,
    /// Longest integration of one run, in model time (mean job sizes; default 1e4).
    pub time_limit: f64,
    /// States at which the sign of the off-diagonal Jacobian entries is tested (default 256).
    pub cooperativity_samples: usize,
    /// Ordered pairs `x(0) <= y(0)` integrated to test order preservation (default 8).
    pub order_pairs: usize,
    /// Two equilibria closer than this (max norm) are one (default 1e-6).
    pub cluster_tol: f64,
    /// An equilibrium with `|spectral abscissa| <= degeneracy_tol * max(1, ||J||_inf)` is
    /// degenerate (default [`DEGENERACY_TOL`](crate::DEGENERACY_TOL) = 1e-5; the same rule as
    /// `fixed-point` and `report`, [`LocalStability::kind`](crate::LocalStability::kind)).
    pub degeneracy_tol: f64,
    /// Eigenvalues are computed for models up to this dimension (dense, `O(n^3)`; default 600).
    pub max_dim_for_eigenvalues: usize,
    /// Where the runs report their progress (default: nowhere). The library draws nothing:
    /// the caller (the CLI: a progress bar on stderr) does.
    pub progress: Progress,
    /// Wall-clock limit (and cancel flag) of the whole check (default [`Deadline::none`]: no
    /// limit). When it runs out, every integration stops at its next step and the verdict is
    /// [`Verdict::TimeLimit`](super::Verdict::TimeLimit), with the limit as given.
    pub deadline: Deadline,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            starts: 32,
            large_model_starts: Some(LARGE_MODEL_STARTS),
            seed: 1,
            tol: 1e-10,
            time_limit: 1e4,
            cooperativity_samples: 256,
            order_pairs: 8,
            cluster_tol: 1e-6,
            degeneracy_tol: crate::DEGENERACY_TOL,
            max_dim_for_eigenvalues: 600,
            progress: Progress::none(),
            deadline: Deadline::none(),
        }
    }
}

impl CheckOptions {
    /// Checks the option ranges.
    ///
    /// # Errors
    /// [`CheckError::OutOfRange`] naming the option, its value and the allowed range.
    pub fn validate(&self) -> Result<(), CheckError> {
        let bad = |field, value: String, allowed| Err(CheckError::OutOfRange { field, value, allowed });
        if !(1..=100_000).contains(&self.starts) {
            return bad("starts", self.starts.to_string(), "an integer in [1, 100000]");
        }
        if let Some(cap) = self.large_model_starts {
            if !(1..=100_000).contains(&cap) {
                return bad("large_model_starts", cap.to_string(), "an integer in [1, 100000], or none");
            }
        }
        if !(self.tol.is_finite() && self.tol > 0.0 && self.tol <= 1e-2) {
            return bad("tol", self.tol.to_string(), "a number in (0, 1e-2]");
        }
        if !(self.time_limit.is_finite() && self.time_limit > 0.0) {
            return bad("time_limit", self.time_limit.to_string(), "a finite model time > 0");
        }
        if self.cooperativity_samples > 1_000_000 {
            return bad("cooperativity_samples", self.cooperativity_samples.to_string(), "an integer in [0, 1000000]");
        }
        if self.order_pairs > 10_000 {
            return bad("order_pairs", self.order_pairs.to_string(), "an integer in [0, 10000]");
        }
        if !(self.cluster_tol.is_finite() && self.cluster_tol > 0.0 && self.cluster_tol < 1.0) {
            return bad("cluster_tol", self.cluster_tol.to_string(), "a number in (0, 1)");
        }
        if !(self.degeneracy_tol.is_finite() && self.degeneracy_tol >= 0.0) {
            return bad("degeneracy_tol", self.degeneracy_tol.to_string(), "a finite number >= 0");
        }
        Ok(())
    }
}

/// Misuse of the checker. Numerical outcomes (runs that do not settle, Newton failures) are
/// data in the report, not errors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// An option, or the given fixed point, is outside its range.
    #[error("{field} = {value} is not allowed: {allowed}")]
    OutOfRange {
        /// Option name (`starts`, `tol`, ..., or `fixed_point.x`).
        field: &'static str,
        /// Value given.
        value: String,
        /// Allowed range.
        allowed: &'static str,
    },
    /// The fixed-point solve rejected its input.
    #[error(transparent)]
    FixedPoint(#[from] FixedPointError),
    /// The integrator rejected a start (e.g. an extremal state of the wrong length: a model bug).
    #[error("start '{start}': {source}")]
    Integration {
        /// Label of the start.
        start: String,
        /// The integrator's error.
        source: OdeError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_name_the_field() {
        let bad = [
            (CheckOptions { starts: 0, ..Default::default() }, "starts"),
            (CheckOptions { large_model_starts: Some(0), ..Default::default() }, "large_model_starts"),
            (CheckOptions { tol: 0.5, ..Default::default() }, "tol"),
            (CheckOptions { time_limit: 0.0, ..Default::default() }, "time_limit"),
            (CheckOptions { cooperativity_samples: 2_000_000, ..Default::default() }, "cooperativity_samples"),
            (CheckOptions { order_pairs: 20_000, ..Default::default() }, "order_pairs"),
            (CheckOptions { cluster_tol: 0.0, ..Default::default() }, "cluster_tol"),
            (CheckOptions { degeneracy_tol: f64::NAN, ..Default::default() }, "degeneracy_tol"),
        ];
        for (o, field) in bad {
            match o.validate() {
                Err(CheckError::OutOfRange { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        assert!(CheckOptions::default().validate().is_ok());
    }
}
