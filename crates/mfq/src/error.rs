//! The front door's error: the error of whichever job failed, unchanged.

/// An error of a job: misuse (bad parameters or options) reported by the library below.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The model file or a parameter.
    #[error(transparent)]
    Model(#[from] mfq_model::ModelError),
    /// The fixed-point solver's options, or a model outside its stability region
    /// (`FixedPointError::Unstable`).
    #[error(transparent)]
    FixedPoint(#[from] mfq_fixpoint::FixedPointError),
    /// The integrator's input.
    #[error(transparent)]
    Transient(#[from] mfq_ode::OdeError),
    /// The attraction checker's options.
    #[error(transparent)]
    Check(#[from] mfq_fixpoint::CheckError),
    /// The options of equilibrium branches (`Model::branches`).
    #[error(transparent)]
    Branches(#[from] mfq_fixpoint::ContinuationError),
    /// The refined mean field (no transitions, a non-smooth model, a singular equation).
    #[error(transparent)]
    Refined(#[from] mfq_fixpoint::RefinedError),
    /// The refined terms failed at a degenerate fixed point (a Jacobian eigenvalue zero to the
    /// precision of `x*`): they do not exist there ([`crate::degeneracy_warning`]); the message
    /// says so and names the solver's own failure.
    #[error("{warning}; the refined terms cannot be computed here ({cause}); `mfq exact` and `mfq simulate` give finite-N values")]
    DegenerateFixedPoint {
        /// The degeneracy warning.
        warning: String,
        /// The refined solver's error.
        cause: mfq_fixpoint::RefinedError,
    },
    /// The simulator's options or parameters, or a kind without a finite-N system.
    #[error(transparent)]
    Simulation(#[from] mfq_sim::SimError),
    /// The exact finite-N chain: options, a chain over the state limit, no transitions, no
    /// fixed buffer, the time limit.
    #[error(transparent)]
    Exact(#[from] mfq_sim::exact::ExactError),
    /// The state given as a fixed point is not one of this model.
    #[error("not a fixed point of this model: {entries} entries for {dim} states, max |f(x)| = {residual:.2e} (allowed: 1e-8)")]
    NotAFixedPoint {
        /// Entries of the state given.
        entries: usize,
        /// The model's dimension at that truncation.
        dim: usize,
        /// `max |f(x)|` at the state (infinite when the sizes differ).
        residual: f64,
    },
    /// A state (`x` of [`Model::drift`](crate::Model::drift) or
    /// [`Model::jacobian`](crate::Model::jacobian)) of the wrong size for the truncation level.
    #[error("{}", state_size_message(*entries, *dim, *levels))]
    StateSize {
        /// Entries of the state given.
        entries: usize,
        /// The model's dimension at that level.
        dim: usize,
        /// The truncation level.
        levels: usize,
    },
    /// A state of the wrong size for a model whose size has no truncation level (a generic
    /// model of named variables such as `X`, or of fixed families): its size is `dim` at every
    /// level, so the message names its state entries, not a level `K` it does not have.
    #[error("{}", state_entries_message(*entries, *dim, names))]
    StateEntries {
        /// Entries of the state given.
        entries: usize,
        /// The model's number of state entries (the same at every level).
        dim: usize,
        /// The names of its state entries (the first six, then `...`), e.g. `X`.
        names: String,
    },
    /// A start state (`x0` of a transient) outside the model's state space: the largest broken
    /// constraint of its layout (`mfq_model::StateLayout::largest_violation`), e.g. `x_2 <= x_1`
    /// or `0 <= x_1`, with the entry and the amount (a NaN entry breaks it by infinity).
    #[error("x0 breaks the constraint {constraint} of the model's state space by {amount:.3e} at entry {index} (1-based); allowed: a feasible state ({rules})")]
    InfeasibleStart {
        /// The broken constraint, with the entries' names.
        constraint: String,
        /// The 1-based entry that breaks it.
        index: usize,
        /// By how much (`> mfq_ode::INVARIANT_TOL`).
        amount: f64,
        /// Every constraint of the layout, in words.
        rules: &'static str,
    },
    /// A start state (`x0` of a transient or a fixed-point solve, `x` of a drift) that breaks a
    /// conservation law of the model (`mfq_model::ConservationLaw::broken_by`): the law as
    /// declared, the members the state holds with their sum at the state, and what the sum must
    /// be (within `mfq_model::LAW_TOL` relative). The solvers would otherwise project the start
    /// onto the law and answer for another state.
    #[error("x0 breaks the conservation law {law}: {members} sum to {sum}; allowed: {allowed}")]
    BrokenLaw {
        /// The law with where it is declared (`S + I + R = 1 (model.conservation[0])`).
        law: String,
        /// The members the state holds (`S + I`).
        members: String,
        /// Their sum at the state, as text (12 significant digits).
        sum: String,
        /// What the sum must be, in words.
        allowed: String,
    },
    /// A job that starts at the fixed point (the population process of a generic model) when
    /// the solve did not converge (`status`, in words: e.g. the mass at the truncation level
    /// stays, as it does for an unstable load).
    #[error("the fixed point did not converge ({status}), and the finite-N system starts there: no simulation")]
    NotConverged {
        /// The fixed point's status, in words.
        status: String,
    },
    /// The start named `initial` (`mfq::START_NAMES`) of a model that declares no
    /// `[model.initial]` state.
    #[error(
        "{model} declares no [model.initial] state, so there is no start named 'initial' (allowed: empty, full, or the entries \
         of a state; a generic model declares [model.initial], docs/models/generic.md)"
    )]
    NoInitialState {
        /// The model's name (`JSQ(2)`).
        model: String,
    },
    /// A model file that cannot be read.
    #[error("cannot read model file {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

impl Error {
    /// Whether the job was stopped by its deadline (its wall-clock limit or cancel flag) while
    /// a model was read or built (`ModelError::Interrupted`), directly or through the fixed-point
    /// solve, the attraction checker or the continuation that read it: a time limit (exit code
    /// 4 in the CLI), not bad input.
    pub fn interrupted(&self) -> bool {
        use mfq_fixpoint::{CheckError, ContinuationError, FixedPointError};
        use mfq_model::ModelError::Interrupted;
        matches!(
            self,
            Error::Model(Interrupted { .. })
                | Error::FixedPoint(FixedPointError::Model(Interrupted { .. }))
                | Error::Check(CheckError::FixedPoint(FixedPointError::Model(Interrupted { .. })))
                | Error::Branches(ContinuationError::Model(Interrupted { .. }))
        )
    }
}

/// The message of [`Error::StateSize`]; an empty state has no level at which it fits, so it is
/// told the size at the level named (the model's first, when none was given).
fn state_size_message(entries: usize, dim: usize, levels: usize) -> String {
    if entries == 0 {
        return format!("x has 0 entries (an empty state); allowed: a state of the model, {dim} entries at truncation level K = {levels}");
    }
    format!(
        "x has {entries} entries; the model has {dim} states at truncation level K = {levels} (allowed: a state of {dim} entries, or the level K at which the model has {entries} states)"
    )
}

/// `n entry` or `n entries`.
fn entry_count(n: usize) -> String {
    if n == 1 {
        "1 entry".to_string()
    } else {
        format!("{n} entries")
    }
}

/// The message of [`Error::StateEntries`]: the size given, the model's size and the names of
/// its state entries (its size has no truncation level).
fn state_entries_message(entries: usize, dim: usize, names: &str) -> String {
    let want = entry_count(dim);
    if entries == 0 {
        return format!("x has 0 entries (an empty state); allowed: a state of the model, {want} ({names})");
    }
    format!(
        "x has {}; the model has {want} ({names}), whatever the truncation level (its size has no level K); allowed: a state of {want}",
        entry_count(entries)
    )
}
