//! Redundancy-d: each job sends copies to `d` distinct servers chosen uniformly at random and
//! leaves when its first copy completes (the other copies are cancelled at once).
//!
//! Exponential job sizes, arrival rate `lambda` per server (total `lambda N`), unit-rate
//! servers. The "queue length" of a server is the number of **copies** it holds; mean copies
//! per server `m = lambda d E[T]` (Little), so [`crate::Observables`] reports the copy
//! arrival rate `lambda d (1 - loss)` as throughput and `E[T] = m / (lambda d)`.
//!
//! | model | approximation | disciplines | state |
//! |---|---|---|---|
//! | [`RedundancyMeanField`] | mean field, any discipline (derived) | all | tail, `K` |
//! | [`RedundancyPair`] | pair approximation, `d = 2` (derived) | PS, FCFS, LPS(k), LCFS | `K^2` (PS, FCFS, LCFS), `(K + k(k-1)/2)^2` (LPS) |
//! | [`RedundancyTriplet`] | triplet approximation, `d = 2` (derived) | PS | `K^3` |
//! | [`gardner_fcfs_mean_response_time`] | exact `N -> inf` limit, FCFS (published) | FCFS | closed form |
//! | [`lcfs_limit`] | `N -> inf` limit on the job tree, LCFS (derived) | LCFS | renewal equations |
//! | [`identical_stability`], [`red_id_lambda_max`] | identical copies (Anton et al.; Hellemans and Van Houdt's ODE) | FCFS, PS | stability, `lambda_max` |
//!
//! The derivations, which equations are published and which are ours, and the validation
//! against simulation are in `docs/models/redundancy.md`.
//!
//! Sources: N. Gast and B. Van Houdt, "Approximations to study the impact of the service
//! discipline in systems with redundancy", POMACS 8(1), 2024 (arXiv 2401.07713); E. Anton,
//! U. Ayesta, M. Jonckheere, I. M. Verloop, "On the stability of redundancy models", Oper.
//! Res. 69(5), 2021; K. Gardner et al., "Redundancy-d: the power of d choices for
//! redundancy", Oper. Res. 65(4), 2017; T. Hellemans and B. Van Houdt, "On the power-of-d-choices
//! with least loaded server selection" (SIGMETRICS 2018) and T. Hellemans' PhD thesis
//! (Red(d) with identical replicas).

mod copy_size;
mod identical;
mod kind;
mod lcfs_grid;
mod lcfs_limit;
mod mean_field;
mod pair;
mod triplet;

pub use copy_size::{check_speeds, CopySize, CopySizeSpec, MAX_SPEEDS};
pub use identical::{identical_region, identical_region_general, identical_stability, local_capacity, red_id_lambda_max, red_id_load};
pub use kind::{RedundancySpec, REDUNDANCY};
pub use lcfs_limit::{lcfs_limit, LcfsLimit, LcfsLimitOptions, RedundancyLcfsLimit, LIMIT_DYNAMICS_NOTE, MAX_RELATIVE_ERROR};
pub use mean_field::{reg_lower_gamma, MeanFieldFixedPoint, RedundancyMeanField};
pub use pair::RedundancyPair;
pub use triplet::RedundancyTriplet;

use crate::{out_of_range, Deadline, ModelError, Stability};
use serde::{Deserialize, Serialize};

/// Per-server service discipline of the copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Discipline {
    /// Processor sharing: each of the `Q` copies is served at rate `1/Q`.
    Ps,
    /// First come first served: the oldest copy is served at rate 1.
    Fcfs,
    /// Limited processor sharing: the `k` oldest copies share the server (`1/min(Q, k)` each).
    Lps,
    /// Preemptive last come first served: the newest copy is served at rate 1.
    Lcfs,
    /// Random order of service: a server that frees picks one of its copies uniformly at
    /// random and serves it to completion (identical copies only: their stability region).
    Ros,
}

impl Discipline {
    /// Short name (`PS`, `FCFS`, `LPS(k)`, `LCFS`).
    pub fn label(self, lps_k: u32) -> String {
        match self {
            Discipline::Ps => "PS".into(),
            Discipline::Fcfs => "FCFS".into(),
            Discipline::Lps => format!("LPS({lps_k})"),
            Discipline::Lcfs => "LCFS".into(),
            Discipline::Ros => "ROS".into(),
        }
    }
}

/// Which approximation of the `N -> inf` system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Approximation {
    /// The discipline-independent mean field ([`RedundancyMeanField`]).
    MeanField,
    /// The pair approximation ([`RedundancyPair`], `d = 2`).
    Pair,
    /// The triplet approximation ([`RedundancyTriplet`], `d = 2`, PS).
    Triplet,
    /// The `N -> inf` limit on the job tree ([`RedundancyLcfsLimit`], LCFS, any `d`).
    Limit,
}

/// Whether the copies of a job have independent sizes or one common size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Copies {
    /// Independent exponential sizes.
    Iid,
    /// One exponential size shared by all copies.
    Identical,
}

/// The field and allowed values named when `discipline = "ros"` is used with i.i.d. copies.
pub(crate) const ROS_FIELD: &str = "model.discipline";
pub(crate) const ROS_ALLOWED: &str =
    "\"ps\", \"fcfs\", \"lps\" or \"lcfs\" with i.i.d. copies (\"ros\" is for copies = \"identical\", whose answer is a stability region)";

/// Smallest arrival rate of the redundancy models: below it the drift (about `lambda d`) is
/// under the fixed-point solver's absolute residual tolerance 1e-12, and the empty state would
/// pass for the fixed point (E[T] = 0 instead of 1/d).
const MIN_LAMBDA: f64 = 1e-10;

pub(crate) fn check_common(lambda: f64, d: u32) -> Result<(), ModelError> {
    crate::models::check_lambda(lambda)?;
    if lambda < MIN_LAMBDA {
        return Err(out_of_range(
            "model.lambda",
            crate::short_number(lambda),
            "a number >= 1e-10 for redundancy (below it the drift is under the solver's residual tolerance; E[T] -> 1/d there)",
        ));
    }
    crate::models::check_d(d)
}

/// Stability with i.i.d. exponential copies (FCFS, PS, ROS, and any discipline that keeps a
/// busy server working at rate 1): `lambda < 1` (Anton, Ayesta, Jonckheere, Verloop 2021,
/// abstract and Theorems for PS/ROS; FCFS already known).
pub fn iid_stability(lambda: f64, d: u32) -> Stability {
    if lambda < 1.0 {
        Stability::Stable { condition: format!("lambda < 1 (redundancy-{d}, i.i.d. copies: every busy server completes a copy at rate 1)") }
    } else {
        Stability::Unstable {
            reason: format!(
                "lambda = {} >= 1: with i.i.d. exponential copies redundancy-{d} is stable iff lambda < 1 \
                 (Anton, Ayesta, Jonckheere and Verloop 2021)",
                crate::short_number(lambda)
            ),
        }
    }
}

/// Gardner et al.'s exact `N -> inf` mean response time of redundancy-d under FCFS with
/// i.i.d. exponential copies:
///
/// ```text
/// E[T] = sum_{n >= 0} lambda^n / (n (d - 1) + d)
/// ```
///
/// (Gardner, Harchol-Balter, Scheller-Wolf, Velednitsky, Zbarsky, Oper. Res. 65(4), 2017;
/// restated in Hellemans' thesis; asymptotic independence proved by Shneer and Stolyar 2020).
/// Infinite for `lambda >= 1`.
pub fn gardner_fcfs_mean_response_time(lambda: f64, d: u32) -> f64 {
    if lambda.is_nan() || lambda >= 1.0 {
        return f64::INFINITY;
    }
    let (d, mut p, mut sum) = (d as f64, 1.0f64, 0.0f64);
    for n in 0..100_000u32 {
        let term = p / (n as f64 * (d - 1.0) + d);
        sum += term;
        if term < 1e-18 * sum {
            break;
        }
        p *= lambda;
    }
    sum
}

/// Mean copies per server in Gardner's FCFS limit, `lambda d E[T]` (Little).
pub fn gardner_fcfs_mean_copies(lambda: f64, d: u32) -> f64 {
    lambda * d as f64 * gardner_fcfs_mean_response_time(lambda, d)
}

/// Identical copies have no queue-length model, only a stability region (with the speeds and
/// the size law of the file): unstable parameters build a model that only carries that verdict
/// (solvers check stability first and stop), stable ones are refused naming `model.copies`
/// with the region and `lambda_max` (`mfq fixed-point` reports the region as data).
pub(crate) fn identical_carrier(
    lambda: f64,
    d: u32,
    discipline: Discipline,
    region: crate::StabilityRegion,
    levels: usize,
) -> Result<Box<dyn crate::MeanFieldModel>, ModelError> {
    if let crate::Stability::Unstable { .. } = region.stability {
        let mut m = RedundancyMeanField::new(lambda, d, discipline, levels.max(2))?;
        m.set_stability(region.stability);
        return Ok(Box::new(m));
    }
    let lmax = match region.lambda_max {
        Some(l) => format!("; lambda_max = {l:.6}"),
        None if region.region.starts_with("unknown") => String::new(),
        None => "; lambda_max not known in closed form for these parameters".to_string(),
    };
    Err(out_of_range(
        "model.copies",
        "identical",
        &format!(
            "\"iid\" (this command needs a queue-length model; identical copies have only a stability region, \
             {}{lmax}: `mfq fixed-point`, `mfq report` and `mfq sweep` report it{})",
            region.region,
            if discipline == Discipline::Fcfs { "; `mfq simulate --servers N` simulates the finite system" } else { "" }
        ),
    ))
}

/// Builds the redundancy model of a model file (`kind = "redundancy"`), truncated at
/// `levels` copies per server.
///
/// # Errors
/// [`ModelError::OutOfRange`] naming the field: `model.lambda` (finite, `> 0`), `model.d`
/// (`>= 1`; `= 2` for pair and triplet), `model.lps_k` (`>= 1`, only with LPS),
/// `model.approximation` (triplet needs PS), `truncation.levels`.
pub fn build(
    lambda: f64,
    d: u32,
    discipline: Discipline,
    approximation: Approximation,
    copies: Copies,
    lps_k: Option<u32>,
    levels: usize,
) -> Result<Box<dyn crate::MeanFieldModel>, ModelError> {
    build_within(lambda, d, discipline, approximation, copies, lps_k, levels, &Deadline::none())
}

/// [`build`] within `deadline` (the LCFS limit's renewal equations check it).
///
/// # Errors
/// As [`build`], and [`ModelError::Interrupted`] past the deadline.
#[allow(clippy::too_many_arguments)]
pub fn build_within(
    lambda: f64,
    d: u32,
    discipline: Discipline,
    approximation: Approximation,
    copies: Copies,
    lps_k: Option<u32>,
    levels: usize,
    deadline: &Deadline,
) -> Result<Box<dyn crate::MeanFieldModel>, ModelError> {
    check_common(lambda, d)?;
    let k = match (discipline, lps_k) {
        (Discipline::Lps, Some(k)) if k >= 1 => k,
        (Discipline::Lps, Some(k)) => return Err(out_of_range("model.lps_k", k, "an integer >= 1")),
        (Discipline::Lps, None) => {
            return Err(out_of_range("model.lps_k", "(missing)", "an integer >= 1 (required with discipline = \"lps\")"))
        }
        (_, Some(k)) => {
            return Err(out_of_range("model.lps_k", k, "only with discipline = \"lps\""));
        }
        (_, None) => 1,
    };
    if discipline == Discipline::Ros && copies == Copies::Iid {
        return Err(out_of_range(ROS_FIELD, "ros", ROS_ALLOWED));
    }
    if copies == Copies::Identical {
        return identical_carrier(lambda, d, discipline, identical_region(lambda, d, discipline), levels);
    }
    Ok(match approximation {
        Approximation::MeanField => Box::new(RedundancyMeanField::new(lambda, d, discipline, levels.max(2))?),
        Approximation::Pair => Box::new(RedundancyPair::new(lambda, d, discipline, k, levels)?),
        Approximation::Triplet => {
            if discipline != Discipline::Ps {
                return Err(out_of_range(
                    "model.approximation",
                    "triplet",
                    "\"mean-field\" or \"pair\" (the triplet approximation is for discipline = \"ps\")",
                ));
            }
            Box::new(RedundancyTriplet::new(lambda, d, levels)?)
        }
        Approximation::Limit => {
            check_limit(d, discipline, levels)?;
            if let Stability::Unstable { .. } = iid_stability(lambda, d) {
                // nothing to compute: the model only carries the verdict (solvers check it first)
                return Ok(Box::new(RedundancyMeanField::new(lambda, d, discipline, levels.max(2))?));
            }
            Box::new(RedundancyLcfsLimit::new_within(lambda, d, levels, deadline)?)
        }
    })
}

/// The parameter checks of the LCFS limit beyond those of every redundancy model.
fn check_limit(d: u32, discipline: Discipline, levels: usize) -> Result<(), ModelError> {
    if discipline != Discipline::Lcfs {
        return Err(out_of_range(
            "model.approximation",
            "limit",
            "\"mean-field\", \"pair\" or \"triplet\" (the limit is computed for discipline = \"lcfs\" only)",
        ));
    }
    if !(1..=64).contains(&d) {
        return Err(out_of_range("model.d", d, "an integer in [1, 64] for the LCFS limit"));
    }
    if !(2..=400).contains(&levels) {
        return Err(out_of_range("truncation.levels", levels, "an integer in [2, 400] for the LCFS limit"));
    }
    Ok(())
}

/// Checks the parameters as [`build`] does, but without computing the LCFS limit (which
/// [`build`] does: seconds): for the limit, its own checks and those of the mean field.
///
/// # Errors
/// As [`build`], except the limit solver's own horizon error.
pub fn validate(
    lambda: f64,
    d: u32,
    discipline: Discipline,
    approximation: Approximation,
    copies: Copies,
    lps_k: Option<u32>,
    levels: usize,
) -> Result<(), ModelError> {
    if copies == Copies::Identical {
        // no model to build: the parameters are checked, the answer is the stability region
        check_common(lambda, d)?;
        return match (discipline, lps_k) {
            (Discipline::Lps, Some(k)) if k >= 1 => Ok(()),
            (Discipline::Lps, Some(k)) => Err(out_of_range("model.lps_k", k, "an integer >= 1")),
            (Discipline::Lps, None) => {
                Err(out_of_range("model.lps_k", "(missing)", "an integer >= 1 (required with discipline = \"lps\")"))
            }
            (_, Some(k)) => Err(out_of_range("model.lps_k", k, "only with discipline = \"lps\"")),
            (_, None) => Ok(()),
        };
    }
    if approximation == Approximation::Limit && copies == Copies::Iid {
        check_limit(d, discipline, levels)?;
        return build(lambda, d, discipline, Approximation::MeanField, copies, lps_k, levels.min(64)).map(|_| ());
    }
    build(lambda, d, discipline, approximation, copies, lps_k, levels).map(|_| ())
}

/// The first truncation level of the automatic growth for this approximation.
pub fn initial_levels(approximation: Approximation, lps_k: Option<u32>) -> usize {
    match approximation {
        Approximation::MeanField => 16,
        Approximation::Pair => 16.max(lps_k.unwrap_or(1) as usize + 2),
        Approximation::Triplet => 16,
        Approximation::Limit => 40,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Jacobian, MeanFieldModel};

    /// max |J_analytic - J_central| / max(1, |J|) at `x`, the analytic Jacobian through
    /// `A + B D^{-1} C` made dense.
    fn jacobian_error(m: &dyn MeanFieldModel, x: &[f64]) -> f64 {
        let n = m.dim();
        let mut a = Jacobian::new(n, m.sparsity());
        m.jacobian(x, &mut a);
        assert!(a.out_of_band().is_none(), "analytic Jacobian writes outside its pattern: {:?}", a.out_of_band());
        let dense = a.to_dense();
        let h = 1e-7;
        let mut xp = x.to_vec();
        let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
        let mut err: f64 = 0.0;
        for j in 0..n {
            xp[j] = x[j] + h;
            m.drift(&xp, &mut fp);
            xp[j] = x[j] - h;
            m.drift(&xp, &mut fm);
            xp[j] = x[j];
            for i in 0..n {
                let fd = (fp[i] - fm[i]) / (2.0 * h);
                let an = dense[i * n + j];
                err = err.max((an - fd).abs() / an.abs().max(1.0));
            }
        }
        err
    }

    /// A positive state with entries well above the finite-difference step.
    fn interior(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                0.01 + 0.09 * ((s >> 11) as f64 / (1u64 << 53) as f64)
            })
            .collect()
    }

    #[test]
    fn mean_field_jacobian_matches_central_differences() {
        for d in [2, 3] {
            let m = RedundancyMeanField::new(0.7, d, Discipline::Ps, 9).unwrap();
            let mut x: Vec<f64> = interior(9, d as u64);
            x.sort_by(|a, b| b.total_cmp(a));
            let e = jacobian_error(&m, &x);
            assert!(e < 1e-6, "d = {d}: {e}");
        }
    }

    #[test]
    fn pair_jacobians_match_central_differences() {
        for (disc, k, levels) in
            [(Discipline::Ps, 1, 6), (Discipline::Fcfs, 1, 6), (Discipline::Lps, 2, 6), (Discipline::Lps, 3, 7), (Discipline::Lcfs, 1, 6)]
        {
            let m = RedundancyPair::new(0.8, 2, disc, k, levels).unwrap();
            let x = interior(m.dim(), levels as u64 + k as u64);
            let e = jacobian_error(&m, &x);
            assert!(e < 1e-5, "{}: {e}", m.name());
        }
    }

    /// The PS pair projection maps the default `full` state (every entry 1, `sum_a p_a = K H_K`
    /// servers) to a feasible state with every server busy, and leaves feasible states alone.
    #[test]
    fn ps_pair_projection_scales_down_to_the_feasible_set() {
        let k = 6;
        let m = RedundancyPair::new(0.9, 2, Discipline::Ps, 1, k).unwrap();
        let mut full = vec![1.0; m.dim()];
        m.project(&mut full);
        let h: f64 = (1..=k).map(|a| 1.0 / a as f64).sum();
        assert!(full.iter().all(|v| (v - 1.0 / (k as f64 * h)).abs() < 1e-15));
        // P(Q >= 1) = sum_a p_a = 1
        assert!((m.tail(&full)[0] - 1.0).abs() < 1e-14, "{:?}", m.tail(&full));
        let start = m.mean_field_start().unwrap();
        let mut x = start.clone();
        m.project(&mut x);
        assert_eq!(x, start);
    }

    #[test]
    fn triplet_jacobian_matches_central_differences() {
        for levels in [3, 5] {
            let m = RedundancyTriplet::new(0.8, 2, levels).unwrap();
            let x = interior(m.dim(), 7 + levels as u64);
            let e = jacobian_error(&m, &x);
            assert!(e < 1e-5, "K = {levels}: {e}");
        }
    }

    /// The pair closure of a PS pair state keeps `sum_c T(a,b,c) = (b-1) P(a,b)`, and the
    /// triplet drift keeps it too (the one-sided closure of the middle server is consistent).
    #[test]
    fn triplet_drift_preserves_the_path_count() {
        let k = 6;
        let m = RedundancyTriplet::new(0.7, 2, k).unwrap();
        let x = m.mean_field_start().unwrap();
        let mut dx = vec![0.0; m.dim()];
        m.drift(&x, &mut dx);
        let kt = (k - 1) * k * k;
        let t = |v: &[f64], a: usize, b: usize, c: usize| v[((b - 2) * k + (a - 1)) * k + (c - 1)];
        let p = |v: &[f64], a: usize, b: usize| v[kt + (a - 1) * k + (b - 1)];
        for a in 1..=k {
            for b in 2..=k {
                let (s, ds): (f64, f64) =
                    (1..=k).map(|c| (t(&x, a, b, c), t(&dx, a, b, c))).fold((0.0, 0.0), |(u, v), (p, q)| (u + p, v + q));
                assert!((s - (b - 1) as f64 * p(&x, a, b)).abs() < 1e-15, "state ({a},{b})");
                // exact up to the 1e-13 guard in S / (M + EPS) at the smallest fibres
                assert!((ds - (b - 1) as f64 * p(&dx, a, b)).abs() < 1e-11, "drift ({a},{b}): {ds} vs {}", (b - 1) as f64 * p(&dx, a, b));
            }
        }
    }
}
