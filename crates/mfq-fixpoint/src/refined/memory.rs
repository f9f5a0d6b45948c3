//! The memory the dense steps of the refined terms need, checked before any of it is allocated.
//!
//! The refined terms hold dense matrices over the `n` state entries (the noise matrix `Q`, the
//! Jacobian, the covariance `W`, the Schur form of the Lyapunov solve: `O(n^2)` numbers) and, at
//! order 2 and in the transient moment equations, tensors of `n^3` numbers. At `n = 27612`
//! (JSQ(1) at `lambda = 0.999`, K chosen automatically) one `n x n` matrix is 6.1 GB: the
//! allocation failed and aborted the process (Python's interpreter with it). [`check`] refuses
//! first, with [`RefinedError::TooLarge`].
//!
//! The limit ([`memory_limit`]) is the job's one memory limit, shared with the exact chain's
//! sparse LU ([`mfq_model::memory`]): the value of the environment variable
//! [`MEMORY_LIMIT_VAR`], else half the physical memory (on Linux, the smaller of the machine's RAM
//! and the memory cgroup's `memory.max`), else 8 GiB where it cannot be read.

use super::RefinedError;

pub use mfq_model::memory::{human, MEMORY_LIMIT_VAR};

/// Which dense computation the estimate is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// The terms at a fixed point ([`crate::refined_mean_field_order`]) of order 1 or 2.
    FixedPoint {
        /// 1 or 2.
        order: u8,
    },
    /// The transient moment equations ([`crate::refined_transient`]) of order 1 or 2, kept at
    /// `points + 1` output times.
    Transient {
        /// 1 or 2.
        order: u8,
        /// Output times less one.
        points: usize,
    },
}

/// The peak bytes of the dense steps of `job` over `n` state entries, counted from the
/// allocations the code makes (an estimate, within a small factor): at a fixed point of order 1
/// about 14 `n x n` matrices of `f64` live at once (`Q`, `J`, their blocks, the Lyapunov solve's
/// Schur factors, right-hand side and products, `W`); order 2 adds about 5 `n^3` tensors
/// (the third-moment source and its solve in the Schur basis, complex when the spectrum is);
/// the transient keeps its whole state (`2n + n^2`, or `3n + 2n^2 + n^3` at order 2) at every
/// output time and in about 20 integrator vectors, and each right-hand side forms `J`, `Q` and
/// (order 2) two `n^3` sources. Returned as `f64` (`n^3` overflows `u64` for `n` past 2.6e6).
pub fn dense_bytes(n: usize, job: Job) -> f64 {
    let nf = n as f64;
    let (n2, n3) = (nf * nf, nf * nf * nf);
    let words = match job {
        Job::FixedPoint { order: 1 } => 14.0 * n2,
        Job::FixedPoint { .. } => 5.0 * n3 + 14.0 * n2,
        Job::Transient { order, points } => {
            let (state, rhs) = if order == 2 { (3.0 * nf + 2.0 * n2 + n3, 2.0 * n3 + 6.0 * n2) } else { (2.0 * nf + n2, 3.0 * n2) };
            state * (points as f64 + 22.0) + rhs
        }
    };
    8.0 * words
}

/// The memory limit of the refined terms' dense steps: the job's one limit
/// ([`mfq_model::memory::memory_limit`], shared with the exact chain's sparse LU), bytes and
/// where it comes from (for messages).
///
/// # Errors
/// [`RefinedError::BadOption`] naming [`MEMORY_LIMIT_VAR`], its value and what is allowed when
/// it is set but not a size.
pub fn memory_limit() -> Result<(u64, String), RefinedError> {
    let limit = mfq_model::memory::memory_limit().map_err(|e| RefinedError::BadOption {
        field: MEMORY_LIMIT_VAR.into(),
        value: e.quoted(),
        allowed: mfq_model::memory::MEMORY_LIMIT_ALLOWED.into(),
    })?;
    Ok((limit.bytes, limit.source))
}

/// Refuses `job` over `n` state entries (of a model truncated at level `levels`, when it has
/// one) when its [`dense_bytes`] exceed the limit `limit` (bytes, from `source`, see
/// [`memory_limit`]).
///
/// # Errors
/// [`RefinedError::TooLarge`] with the numbers and what to do.
pub fn check_against(n: usize, levels: Option<usize>, job: Job, limit: (u64, &str)) -> Result<(), RefinedError> {
    let bytes = dense_bytes(n, job);
    if bytes <= limit.0 as f64 {
        return Ok(());
    }
    let what = match job {
        Job::FixedPoint { order: 1 } => "the refined terms of order 1 (dense n x n matrices)".to_string(),
        Job::FixedPoint { order } => format!("the refined terms of order {order} (dense n x n x n tensors)"),
        Job::Transient { order, points } => {
            format!("the transient refined mean field of order {order} (the moment equations, kept at {} times)", points + 1)
        }
    };
    Err(RefinedError::TooLarge { what, n, levels, bytes, limit: limit.0, limit_source: limit.1.to_string() })
}

/// [`check_against`] the [`memory_limit`].
///
/// # Errors
/// [`RefinedError::TooLarge`]; [`RefinedError::BadOption`] for a malformed [`MEMORY_LIMIT_VAR`].
pub fn check(n: usize, levels: Option<usize>, job: Job) -> Result<(), RefinedError> {
    let (limit, source) = memory_limit()?;
    check_against(n, levels, job, (limit, &source))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimate against the allocations counted by hand: one n x n matrix of f64 is 8 n^2
    /// bytes, order 1 holds 14 of them; n = 27612 needs 85 GB, refused under a 12 GB limit with
    /// the numbers in the message; n = 100 (1.1 MB) passes.
    #[test]
    fn refusal_names_n_the_bytes_and_the_limit() {
        assert_eq!(dense_bytes(100, Job::FixedPoint { order: 1 }), 8.0 * 14.0 * 1e4);
        assert_eq!(dense_bytes(10, Job::FixedPoint { order: 2 }), 8.0 * (5e3 + 14e2));
        assert_eq!(dense_bytes(10, Job::Transient { order: 1, points: 200 }), 8.0 * (120.0 * 222.0 + 300.0));
        assert!(check_against(100, Some(100), Job::FixedPoint { order: 1 }, (12 << 30, "test")).is_ok());
        let e = check_against(27612, Some(27612), Job::FixedPoint { order: 1 }, (12_000_000_000, "test")).unwrap_err().to_string();
        for part in ["n = 27612", "K = 27612", "85.4 GB", "12.0 GB", "truncation.levels", "lighter load", MEMORY_LIMIT_VAR] {
            assert!(e.contains(part), "{part} not in {e}");
        }
    }
}
