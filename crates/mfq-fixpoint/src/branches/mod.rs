//! Equilibrium branches: every equilibrium followed along one parameter by pseudo-arclength
//! continuation, with its stability and the fold, branch and Hopf points on the way
//! (docs/branches.md).
//!
//! # Method
//!
//! The family is `F(x, mu) = f(x; lambda(mu))`, `lambda(mu) = start + mu (end - start)`, so that
//! the parameter runs over `mu in [0, 1]` whatever its unit (the state entries are fractions).
//! From each start equilibrium at `mu = 0` the branch is followed towards increasing `mu`
//! (Keller's pseudo-arclength continuation; E. Allgower and K. Georg, "Introduction to Numerical
//! Continuation Methods", SIAM 2003, ch. 2 and 9; Yu. A. Kuznetsov, "Elements of Applied
//! Bifurcation Theory", 3rd ed., Springer 2004, ch. 10):
//!
//! - **Predictor** `v = u + h t` along the unit tangent `t`; **corrector** Newton on
//!   `F(v) = 0`, `t . (v - u) = h` with the bordered matrix `[F_x F_mu; t^T]`. `F_x` is the
//!   model's Jacobian (analytic when the model has one); `F_mu` is a central difference of the
//!   drift in `mu` (step `6e-6`, one-sided of second order at the edge of the model's parameter
//!   range). The located points below do not depend on the error of `F_mu`: a fold is where
//!   `det F_x = 0` on the branch, a branch point where `[F_x F_mu]` loses rank.
//! - **Step control**: `h <= h_max = 1 / (points - 1)`; a step is refused (and `h` halved)
//!   when the corrector does not converge in 12 iterations, the tangent turns by more than
//!   about 25 degrees, or the corrected point is farther than `h` from the predictor; `h` grows
//!   by 1.5 after an easy step. A branch stops when `h < 1e-6 h_max`.
//! - **Tangent** `t` solves `[F_x F_mu; t_prev^T] t = e_{n+1}`: it keeps the orientation of the
//!   previous one, so the parameter component `dmu/ds` of `t` changes sign exactly at a fold.
//! - **Test functions** between consecutive points: `dmu/ds` (fold), `det [F_x F_mu; t_prev^T]`
//!   (changes sign at a simple branch point only: pitchfork, transcritical), the spectral
//!   abscissa of `F_x` (an eigenvalue crossing: a Hopf point when the crossing pair is complex).
//!   A sign change is located by a bracketed solve in the arclength (regula falsi, Illinois,
//!   alternating with bisection) to `refine_tol` in the parameter.
//! - **Ends**: the branch is landed exactly on `mu = 1` (or `mu = 0` when it turned back, e.g.
//!   after a fold) by a corrector with `mu` fixed; it stops when it leaves the feasible set
//!   (the model's projection moves the state by more than `1e-9`), closes on itself, runs out
//!   of steps, or at the deadline.
//! - **Stability** along the branch: the one rule of [`classify`](crate::classify) on the
//!   spectral abscissa of the Jacobian at each point.
//!
//! A start equilibrium that an earlier branch reached (as the other end of the branch, at
//! `mu = 0`) is not followed again.
//!
//! - **Branch switching**: at each simple branch point located on a branch, the other branch
//!   through it is followed both ways (the null space of `[F_x F_mu]` there is two-dimensional:
//!   the tangent of the branch and that of the other one; Keller's method, Allgower and Georg
//!   ch. 8), unless it is infeasible there or already followed; [`Branch::switched_from`] names
//!   the branch point. So a branch that exists only beyond a transcritical point (the logistic
//!   SIS's `X = 1 - 1/beta`, which crosses `X = 0` at `beta = 1` and is outside `[0, 1]` for
//!   `beta < 1`, so no start at `beta < 1` finds it) is found. At most [`MAX_BRANCHES`].

mod family;

use crate::stability::EquilibriumKind;
use family::{Family, Node};
use mfq_model::{Deadline, MeanFieldModel, ModelError};
use serde::Serialize;
use std::time::Instant;

/// The model at a value of the swept parameter (the truncation level fixed by the caller):
/// `Err` when the value is outside the model's range.
pub type ModelAt<'a> = dyn Fn(f64) -> Result<Box<dyn MeanFieldModel>, ModelError> + Sync + 'a;

/// Options of [`branches`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContinuationOptions {
    /// Name of the swept parameter, for reports (`alpha`, or `gamma0,gamma1` for several keys set
    /// to the same value).
    pub parameter: String,
    /// First value of the parameter (where the start equilibria are).
    pub start: f64,
    /// Last value.
    pub end: f64,
    /// The longest step is `1 / (points - 1)` of the range in the scaled parameter (at least
    /// `points` points along a branch that spans the range); in `[2, 100000]`.
    pub points: usize,
    /// Steps per branch before it stops (default 0: `50 points`).
    pub max_steps: usize,
    /// Corrector tolerance: `max |f(x)| <= tol` at every point (default 1e-12).
    pub tol: f64,
    /// Fold, branch and Hopf points are located to this tolerance in the parameter (default 1e-10).
    pub refine_tol: f64,
    /// Degeneracy tolerance of the stability rule ([`DEGENERACY_TOL`](crate::DEGENERACY_TOL)).
    pub degeneracy_tol: f64,
    /// Eigenvalues (stability, Hopf points) only up to this dimension (default 600).
    pub max_dim_for_eigenvalues: usize,
    /// Wall-clock limit and cancel flag: the branch in progress stops at it, the report is partial.
    pub deadline: Deadline,
}

impl Default for ContinuationOptions {
    fn default() -> Self {
        ContinuationOptions {
            parameter: "lambda".into(),
            start: 0.0,
            end: 1.0,
            points: 200,
            max_steps: 0,
            tol: 1e-12,
            refine_tol: 1e-10,
            degeneracy_tol: crate::DEGENERACY_TOL,
            max_dim_for_eigenvalues: 600,
            deadline: Deadline::none(),
        }
    }
}

/// Misuse of [`branches`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ContinuationError {
    /// An option or a start equilibrium is outside its range.
    #[error("{field} = {value} is not allowed: {allowed}")]
    OutOfRange {
        /// The option (`start`, `end`, `points`, `tol`, `refine_tol`, `starts[i]`).
        field: String,
        /// Value given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
    /// The model at the start of the range.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// One computed point of a branch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BranchPoint {
    /// The parameter value.
    pub parameter: f64,
    /// The state (the model's layout).
    pub x: Vec<f64>,
    /// The summary coordinate of the layout at `x` (the plotted one).
    pub summary: f64,
    /// Stable, unstable, degenerate or unknown (the shared rule).
    pub kind: EquilibriumKind,
    /// Spectral abscissa of the Jacobian (NaN, written `null`, when not computed).
    pub spectral_abscissa: f64,
    /// `max |f(x)|`.
    pub residual: f64,
}

/// What a located special point is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpecialKind {
    /// A fold (saddle-node, limit point): the branch turns back in the parameter; two
    /// equilibria meet and vanish.
    Fold,
    /// A simple branch point (pitchfork, transcritical): another branch crosses this one.
    BranchPoint,
    /// A complex pair of eigenvalues crosses the imaginary axis.
    Hopf,
    /// A real eigenvalue crosses zero without a fold or branch point being detected.
    EigenvalueCrossing,
}

/// A fold, branch or Hopf point on a branch, located by a bracketed solve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpecialPoint {
    /// What it is.
    pub kind: SpecialKind,
    /// The parameter value.
    pub parameter: f64,
    /// The state.
    pub x: Vec<f64>,
    /// Summary coordinate at `x`.
    pub summary: f64,
    /// Whether the stability (sign of the spectral abscissa) differs on the two sides.
    pub stability_change: bool,
    /// Spectral abscissa there (near 0).
    pub spectral_abscissa: f64,
    /// The parameter component of the unit tangent there (scaled parameter; near 0 at a fold).
    pub dparameter_ds: f64,
    /// `max |f(x)|` there.
    pub residual: f64,
    /// Index of the branch point just before it.
    pub after: usize,
}

/// Why a branch stopped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "end", rename_all = "kebab-case")]
pub enum BranchEnd {
    /// At the last parameter value.
    RangeEnd,
    /// Back at the first parameter value (after a fold).
    RangeStart,
    /// The next point is outside the feasible set (the model's projection moved it).
    LeftFeasibleSet,
    /// The branch came back to its first point.
    ClosedLoop,
    /// `max_steps` steps.
    MaxSteps,
    /// The corrector failed down to the smallest step.
    StepTooSmall,
    /// The model refused a parameter value on the way.
    Model {
        /// The model's error.
        reason: String,
    },
    /// The deadline (time limit or cancellation).
    TimeLimit {
        /// The limit as given.
        reason: String,
    },
}

/// Where a branch found by branch switching leaves the branch it crosses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwitchedFrom {
    /// Index of the branch (in [`BranchReport::branches`]) on which the branch point lies.
    pub branch: usize,
    /// The parameter value of the branch point.
    pub parameter: f64,
    /// The state there.
    pub x: Vec<f64>,
}

/// One branch, from a start equilibrium at the first parameter value, or from a simple branch
/// point of another branch (`switched_from`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Branch {
    /// Index of its start equilibrium in [`BranchReport::starts`] (of the branch it was
    /// switched from, for a branch with `switched_from`).
    pub start: usize,
    /// The branch point it was switched from (`None`: it starts at `start`): a branch that
    /// crosses another at a transcritical or pitchfork point (the logistic SIS's endemic
    /// branch `X = 1 - 1/beta` leaving `X = 0` at `beta = 1`).
    pub switched_from: Option<SwitchedFrom>,
    /// Other start equilibria this branch reached (at the first parameter value); not followed again.
    pub also_starts: Vec<usize>,
    /// The points, in continuation order.
    pub points: Vec<BranchPoint>,
    /// Fold, branch and Hopf points, in continuation order.
    pub special: Vec<SpecialPoint>,
    /// Why it stopped.
    pub end: BranchEnd,
}

/// Every branch through the start equilibria.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BranchReport {
    /// The swept parameter.
    pub parameter: String,
    /// First value.
    pub start: f64,
    /// Last value.
    pub end: f64,
    /// Name of the summary coordinate (`x`, `mean queue length L = sum_k x_k`).
    pub summary_name: String,
    /// The start equilibria (at `start`).
    pub starts: Vec<Vec<f64>>,
    /// The branches, one per start not reached by an earlier branch.
    pub branches: Vec<Branch>,
    /// `Some(why)` when the deadline stopped the work (the branches so far are kept).
    pub partial: Option<String>,
    /// Wall time, seconds.
    pub wall_seconds: f64,
}

impl ContinuationOptions {
    /// Checks the option ranges.
    ///
    /// # Errors
    /// [`ContinuationError::OutOfRange`] naming the option.
    pub fn validate(&self) -> Result<(), ContinuationError> {
        let bad = |field: &str, value: String, allowed: &str| {
            Err(ContinuationError::OutOfRange { field: field.into(), value, allowed: allowed.into() })
        };
        if !self.start.is_finite() {
            return bad("start", self.start.to_string(), "a finite number");
        }
        if !self.end.is_finite() || self.end == self.start {
            return bad("end", self.end.to_string(), &format!("a finite number other than start = {} (an empty range)", self.start));
        }
        if !(2..=100_000).contains(&self.points) {
            return bad("points", self.points.to_string(), "an integer in [2, 100000]");
        }
        if !(self.tol.is_finite() && self.tol > 0.0 && self.tol <= 1e-6) {
            return bad("tol", self.tol.to_string(), "a number in (0, 1e-6]");
        }
        if !(self.refine_tol.is_finite() && self.refine_tol > 0.0 && self.refine_tol <= 1e-3) {
            return bad("refine_tol", self.refine_tol.to_string(), "a number in (0, 1e-3]");
        }
        if !(self.degeneracy_tol.is_finite() && self.degeneracy_tol >= 0.0) {
            return bad("degeneracy_tol", self.degeneracy_tol.to_string(), "a finite number >= 0");
        }
        Ok(())
    }
}

/// Follows every equilibrium in `starts` (equilibria of `model_at(opts.start)`, e.g. those the
/// attraction checker found) from `opts.start` to `opts.end` (see the module docs).
///
/// # Errors
/// [`ContinuationError::OutOfRange`] for bad options, an empty `starts`, or a start of the
/// wrong length or not an equilibrium (`max |f| > 1e-6`); [`ContinuationError::Model`] when the
/// model at `opts.start` cannot be built. What happens along a branch (the model refusing a
/// value, a corrector failure, the deadline) is data in the report.
pub fn branches(model_at: &ModelAt<'_>, starts: &[Vec<f64>], opts: &ContinuationOptions) -> Result<BranchReport, ContinuationError> {
    let started = Instant::now();
    opts.validate()?;
    let model = model_at(opts.start)?;
    let n = model.dim();
    let layout = model.layout();
    if starts.is_empty() {
        return Err(ContinuationError::OutOfRange {
            field: "starts".into(),
            value: "none".into(),
            allowed: "at least one equilibrium at the first parameter value".into(),
        });
    }
    for (i, s) in starts.iter().enumerate() {
        let mut f = vec![0.0; n];
        let r = if s.len() == n {
            model.drift(s, &mut f);
            f.iter().fold(0.0f64, |m, v| m.max(v.abs()))
        } else {
            f64::INFINITY
        };
        if r.is_nan() || r > 1e-6 {
            return Err(ContinuationError::OutOfRange {
                field: format!("starts[{i}]"),
                value: format!("{} entries, max |f| = {r:.2e}", s.len()),
                allowed: format!("an equilibrium of the model at {} = {} ({n} entries, max |f| <= 1e-6)", opts.parameter, opts.start),
            });
        }
    }
    let family = Family {
        model_at,
        start: opts.start,
        span: opts.end - opts.start,
        n,
        tol: opts.tol,
        degeneracy_tol: opts.degeneracy_tol,
        max_dim_for_eigenvalues: opts.max_dim_for_eigenvalues,
    };
    let mut out: Vec<Branch> = Vec::new();
    let mut covered = vec![false; starts.len()];
    let mut partial = None;
    for (i, s) in starts.iter().enumerate() {
        if covered[i] {
            continue;
        }
        if opts.deadline.expired() {
            partial = Some(format!("stopped at {} before the branch from start {i}", opts.deadline.reason()));
            break;
        }
        let mut branch = follow(&family, s, opts, &|x| layout.summary(x))?;
        branch.start = i;
        // the other end of the branch back at the first value: a start that needs no branch of its own
        if branch.end == BranchEnd::RangeStart {
            let last = &branch.points.last().expect("a branch has points").x;
            for (j, other) in starts.iter().enumerate().skip(i + 1) {
                if !covered[j] && last.iter().zip(other).all(|(a, b)| (a - b).abs() <= 1e-6) {
                    covered[j] = true;
                    branch.also_starts.push(j);
                }
            }
        }
        if let BranchEnd::TimeLimit { reason } = &branch.end {
            partial = Some(format!("stopped at {reason} during the branch from start {i}"));
        }
        let stop = partial.is_some();
        out.push(branch);
        if stop {
            break;
        }
    }
    // branch switching: the other branch through each simple branch point, both ways, followed
    // in turn (its own branch points too), up to MAX_BRANCHES branches in all
    let mut k = 0;
    while k < out.len() && partial.is_none() {
        let points: Vec<SpecialPoint> = out[k].special.iter().filter(|p| p.kind == SpecialKind::BranchPoint).cloned().collect();
        for sp in points {
            for sign in [1.0, -1.0] {
                if out.len() >= MAX_BRANCHES || partial.is_some() {
                    break;
                }
                if opts.deadline.expired() {
                    partial = Some(format!("stopped at {} before the branches switched at the branch points", opts.deadline.reason()));
                    break;
                }
                let node = match switch(&family, &out[k], &sp, sign, opts) {
                    Ok(Some(node)) if !on_a_branch(&family, &out, &node.u, opts) => node,
                    Ok(_) => continue,
                    Err(ModelError::Interrupted { .. }) if opts.deadline.expired() => continue,
                    Err(e) => return Err(e.into()),
                };
                let empty = Branch {
                    start: out[k].start,
                    switched_from: Some(SwitchedFrom { branch: k, parameter: sp.parameter, x: sp.x.clone() }),
                    also_starts: Vec::new(),
                    points: Vec::new(),
                    special: Vec::new(),
                    end: BranchEnd::StepTooSmall,
                };
                let mut branch = follow_from(&family, node, opts, &|x| layout.summary(x), empty)?;
                // the branch point it starts at is the one it was switched from, not a new one;
                // it is the branch's first point
                branch.special.retain(|p| !(p.kind == SpecialKind::BranchPoint && p.after == 0));
                branch.special.iter_mut().for_each(|p| p.after += 1);
                let kind = crate::classify(sp.spectral_abscissa, 0.0, opts.degeneracy_tol);
                let at = BranchPoint {
                    parameter: sp.parameter,
                    x: sp.x.clone(),
                    summary: sp.summary,
                    kind,
                    spectral_abscissa: sp.spectral_abscissa,
                    residual: sp.residual,
                };
                branch.points.insert(0, at);
                if let BranchEnd::TimeLimit { reason } = &branch.end {
                    partial = Some(format!("stopped at {reason} during a branch switched at a branch point of branch {k}"));
                }
                out.push(branch);
            }
        }
        k += 1;
    }
    Ok(BranchReport {
        parameter: opts.parameter.clone(),
        start: opts.start,
        end: opts.end,
        summary_name: layout.summary_name(),
        starts: starts.to_vec(),
        branches: out,
        partial,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}

/// The first point of a branch: the start equilibrium (polished by a corrector with `mu = 0`
/// fixed) with the tangent towards increasing `mu`.
fn first_node(family: &Family<'_>, x0: &[f64]) -> Result<Option<Node>, ModelError> {
    let n = family.n;
    let mut u = x0.to_vec();
    u.push(0.0);
    let mut e_mu = vec![0.0; n + 1];
    e_mu[n] = 1.0;
    let Some(u) = family.correct(u.clone(), &e_mu, &u, 0.0)? else { return Ok(None) };
    // [F_x F_mu; e_mu^T] t = e: the tangent with dmu/ds > 0 (t_mu = 1 before normalising)
    family.node(u, &e_mu)
}

/// Follows one branch from the equilibrium `x0` at `mu = 0`.
fn follow(family: &Family<'_>, x0: &[f64], opts: &ContinuationOptions, summary: &dyn Fn(&[f64]) -> f64) -> Result<Branch, ModelError> {
    let mut branch = Branch {
        start: 0,
        switched_from: None,
        also_starts: Vec::new(),
        points: Vec::new(),
        special: Vec::new(),
        end: BranchEnd::StepTooSmall,
    };
    let a = match first_node(family, x0) {
        Ok(Some(a)) => a,
        Ok(None) => return Ok(branch),
        Err(e) => {
            branch.end = match e {
                ModelError::Interrupted { .. } if opts.deadline.expired() => BranchEnd::TimeLimit { reason: opts.deadline.reason() },
                e => BranchEnd::Model { reason: e.to_string() },
            };
            return Ok(branch);
        }
    };
    follow_from(family, a, opts, summary, branch)
}

/// Follows a branch from its first node `a` (oriented by its tangent) into `branch` (empty).
fn follow_from(
    family: &Family<'_>,
    mut a: Node,
    opts: &ContinuationOptions,
    summary: &dyn Fn(&[f64]) -> f64,
    mut branch: Branch,
) -> Result<Branch, ModelError> {
    let n = family.n;
    let h_max = 1.0 / (opts.points - 1) as f64;
    let max_steps = if opts.max_steps == 0 { 50 * opts.points } else { opts.max_steps };
    let s_tol = (opts.refine_tol / family.span.abs()).max(1e-14);
    let point = |node: &Node| BranchPoint {
        parameter: family.lambda(node.mu()),
        x: node.u[..n].to_vec(),
        summary: summary(&node.u[..n]),
        kind: node.kind(family.degeneracy_tol),
        spectral_abscissa: node.alpha,
        residual: node.residual,
    };
    let first = a.u.clone();
    branch.points.push(point(&a));
    let mut h = h_max;
    let mut steps = 0;
    let mut last_error: Option<String> = None;
    branch.end = loop {
        if opts.deadline.expired() {
            break BranchEnd::TimeLimit { reason: opts.deadline.reason() };
        }
        if steps >= max_steps {
            break BranchEnd::MaxSteps;
        }
        if h < 1e-6 * h_max {
            break match last_error.take() {
                Some(reason) => BranchEnd::Model { reason },
                None => BranchEnd::StepTooSmall,
            };
        }
        steps += 1;
        // a step whose predictor leaves [0, 1] in mu lands exactly on the end of the range
        let pred_mu = a.mu() + h * a.t_mu();
        let landing = (!(0.0..=1.0).contains(&pred_mu)).then_some(if pred_mu > 1.0 { 1.0 } else { 0.0 });
        let tried = match landing {
            Some(target) => land(family, &a, target),
            None => step(family, &a, h),
        };
        let b = match tried {
            Ok(Some(b)) if (0.0..=1.0).contains(&b.mu()) => b,
            // refused, or the model refused a value on the way (e.g. a trial value outside its range)
            Ok(_) => {
                h *= 0.5;
                continue;
            }
            Err(e) => {
                h *= 0.5;
                last_error = Some(e.to_string());
                continue;
            }
        };
        let landed = landing;
        // a model that could not be read again because the deadline passed (its parse is
        // abandoned there) ends the branch at the time limit, not as a failure of the model
        let stopped = |e: ModelError| match e {
            ModelError::Interrupted { .. } if opts.deadline.expired() => BranchEnd::TimeLimit { reason: opts.deadline.reason() },
            e => BranchEnd::Model { reason: e.to_string() },
        };
        match feasible(family, &b) {
            Ok(true) => {}
            Ok(false) => break BranchEnd::LeftFeasibleSet,
            Err(e @ ModelError::Interrupted { .. }) => break stopped(e),
            Err(e) => return Err(e),
        }
        if let Err(e) = events(family, &a, &b, s_tol, branch.points.len() - 1, &mut branch.special, summary) {
            break stopped(e);
        }
        branch.points.push(point(&b));
        let moved = b.u.iter().zip(&first).fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
        a = b;
        match landed {
            Some(1.0) => break BranchEnd::RangeEnd,
            Some(_) => break BranchEnd::RangeStart,
            None => {}
        }
        if branch.points.len() > 3 && moved < 0.5 * h && a.t_mu() > 0.0 {
            break BranchEnd::ClosedLoop;
        }
        last_error = None;
        h = (1.5 * h).min(h_max);
    };
    Ok(branch)
}

/// The most branches of one report (those from the starts and those switched at branch points).
pub const MAX_BRANCHES: usize = 64;

/// The first point of the other branch through the simple branch point `sp` of `branch`, in
/// the direction `sign` (`+1` or `-1`), one longest step `1 / (points - 1)` away: at a simple
/// branch point `[F_x F_mu]` has a two-dimensional null space, spanned by the tangent `t1` of
/// `branch` (its chord there) and the tangent `t2` of the other branch (Keller's branch
/// switching; Allgower and Georg 2003, ch. 8; Kuznetsov 2004, sec. 10.2): `t2` is the unit
/// vector of the null space (the right singular vectors of the two smallest singular values)
/// orthogonal to `t1`; the predictor `u_b + h sign t2` is corrected on the hyperplane normal
/// to `t2`. `None` when the null space is not two-dimensional (the second smallest singular
/// value above `1e-6` of the largest, or of 1 when that is smaller), the corrector fails or slides back onto `branch`, or the
/// point is outside the range or the feasible set.
fn switch(
    family: &Family<'_>,
    branch: &Branch,
    sp: &SpecialPoint,
    sign: f64,
    opts: &ContinuationOptions,
) -> Result<Option<Node>, ModelError> {
    let n = family.n;
    let mu_of = |parameter: f64| (parameter - family.start) / family.span;
    let mut u_b = sp.x.clone();
    u_b.push(mu_of(sp.parameter));
    // t1: the chord of the branch across the branch point
    let (Some(p), Some(q)) = (branch.points.get(sp.after), branch.points.get(sp.after + 1)) else { return Ok(None) };
    let mut t1: Vec<f64> = q.x.iter().zip(&p.x).map(|(a, b)| a - b).collect();
    t1.push(mu_of(q.parameter) - mu_of(p.parameter));
    let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
    let l1 = norm(&t1);
    if !(l1.is_finite() && l1 > 0.0) {
        return Ok(None);
    }
    t1.iter_mut().for_each(|v| *v /= l1);
    let mut f = vec![0.0; n];
    let mut a = nalgebra::DMatrix::zeros(n + 1, n + 1);
    family.eval(&u_b, &mut f, &mut a)?;
    // the last row is zero: [F_x F_mu] padded to a square matrix
    let svd = a.svd(false, true);
    let Some(v_t) = svd.v_t else { return Ok(None) };
    let mut order: Vec<usize> = (0..n + 1).collect();
    order.sort_by(|&i, &j| svd.singular_values[i].total_cmp(&svd.singular_values[j]));
    let largest = svd.singular_values[order[n]];
    // (relative to 1 as well: at the logistic SIS's branch point the whole of [F_x F_mu] vanishes)
    let second = svd.singular_values[order[1]];
    if n == 0 || second.is_nan() || second > 1e-6 * largest.max(1.0) {
        return Ok(None);
    }
    let v1: Vec<f64> = v_t.row(order[0]).iter().copied().collect();
    let v2: Vec<f64> = v_t.row(order[1]).iter().copied().collect();
    let dot = |p: &[f64], q: &[f64]| p.iter().zip(q).map(|(a, b)| a * b).sum::<f64>();
    let (c1, c2) = (dot(&v1, &t1), dot(&v2, &t1));
    let mut t2: Vec<f64> = v1.iter().zip(&v2).map(|(a, b)| -c2 * a + c1 * b).collect();
    let l2 = norm(&t2);
    if !(l2.is_finite() && l2 > 1e-3) {
        return Ok(None);
    }
    t2.iter_mut().for_each(|v| *v *= sign / l2);
    let h = 1.0 / (opts.points - 1) as f64;
    let pred: Vec<f64> = u_b.iter().zip(&t2).map(|(u, t)| u + h * t).collect();
    let Some(v) = family.correct(pred, &t2, &u_b, h)? else { return Ok(None) };
    // slid back onto the branch it crosses: the step from u_b points along t1
    let d: Vec<f64> = v.iter().zip(&u_b).map(|(p, q)| p - q).collect();
    let ld = norm(&d);
    if ld.is_nan() || ld <= 0.0 || dot(&d, &t1).abs() > 0.9 * ld || !(0.0..=1.0).contains(&v[n]) {
        return Ok(None);
    }
    let Some(node) = family.node(v, &t2)? else { return Ok(None) };
    Ok(feasible(family, &node)?.then_some(node))
}

/// Whether `u` (a state and scaled parameter) lies within a tenth of the longest step of a
/// segment of one of `branches`: a branch switched onto one already followed.
fn on_a_branch(family: &Family<'_>, branches: &[Branch], u: &[f64], opts: &ContinuationOptions) -> bool {
    let n = family.n;
    let tol = 0.1 / (opts.points - 1) as f64;
    let mu_of = |parameter: f64| (parameter - family.start) / family.span;
    let at = |p: &BranchPoint| p.x.iter().copied().chain(std::iter::once(mu_of(p.parameter))).collect::<Vec<f64>>();
    branches.iter().any(|b| {
        b.points.windows(2).any(|w| {
            let (p, q) = (at(&w[0]), at(&w[1]));
            let d: Vec<f64> = q.iter().zip(&p).map(|(a, b)| a - b).collect();
            let dd: f64 = d.iter().map(|a| a * a).sum();
            let s =
                if dd > 0.0 { (u.iter().zip(&p).zip(&d).map(|((u, p), d)| (u - p) * d).sum::<f64>() / dd).clamp(0.0, 1.0) } else { 0.0 };
            (0..=n).all(|i| (u[i] - (p[i] + s * d[i])).abs() <= tol)
        })
    })
}

/// One predictor-corrector step of length `h` from `a`; `None` when it is refused (no
/// convergence, a turn of more than about 25 degrees, a corrected point farther than `h` from
/// the predictor).
fn step(family: &Family<'_>, a: &Node, h: f64) -> Result<Option<Node>, ModelError> {
    let pred: Vec<f64> = a.u.iter().zip(&a.t).map(|(u, t)| u + h * t).collect();
    let Some(b) = family.at_arclength(a, h)? else { return Ok(None) };
    let cos: f64 = a.t.iter().zip(&b.t).map(|(p, q)| p * q).sum();
    let jump = b.u.iter().zip(&pred).fold(0.0f64, |m, (p, q)| m.max((p - q).abs()));
    Ok((cos > 0.9 && jump <= h).then_some(b))
}

/// The point of the branch through `a` at `mu = target` (a corrector with `mu` fixed, from the
/// linear predictor along `a.t`), with its tangent oriented as `a.t`.
fn land(family: &Family<'_>, a: &Node, target: f64) -> Result<Option<Node>, ModelError> {
    let n = family.n;
    let ds = (target - a.mu()) / a.t_mu();
    let pred: Vec<f64> = a.u.iter().zip(&a.t).map(|(u, t)| u + ds * t).collect();
    let mut e_mu = vec![0.0; n + 1];
    e_mu[n] = 1.0;
    match family.correct(pred, &e_mu, &a.u, target - a.mu())? {
        Some(mut v) => {
            v[n] = target;
            family.node(v, &a.t)
        }
        None => Ok(None),
    }
}

/// Whether the model's projection leaves the state of `b` where it is (to `1e-9`).
fn feasible(family: &Family<'_>, b: &Node) -> Result<bool, ModelError> {
    let n = family.n;
    let model = family.model(b.mu())?;
    let mut p = b.u[..n].to_vec();
    model.project(&mut p);
    Ok(p.iter().zip(&b.u[..n]).all(|(p, x)| (p - x).abs() <= 1e-9))
}

/// The special points between the consecutive points `a` and `b` (`after` = index of `a`):
/// a branch point where the determinant changes sign, else a fold where `dmu/ds` does, else an
/// eigenvalue crossing (Hopf when complex) where the spectral abscissa does; each located by
/// [`Family::refine`] and pushed to `out`.
fn events(
    family: &Family<'_>,
    a: &Node,
    b: &Node,
    s_tol: f64,
    after: usize,
    out: &mut Vec<SpecialPoint>,
    summary: &dyn Fn(&[f64]) -> f64,
) -> Result<(), ModelError> {
    let changes = |p: f64, q: f64| p.is_finite() && q.is_finite() && (p > 0.0) != (q > 0.0);
    let stability_change = changes(a.alpha, b.alpha);
    let (kind, test): (SpecialKind, fn(&Node) -> f64) = if changes(a.det, b.det) {
        (SpecialKind::BranchPoint, |n| n.det)
    } else if changes(a.t_mu(), b.t_mu()) {
        (SpecialKind::Fold, |n| n.t_mu())
    } else if stability_change {
        let complex = a.alpha_im.abs() > 1e-9 || b.alpha_im.abs() > 1e-9;
        (if complex { SpecialKind::Hopf } else { SpecialKind::EigenvalueCrossing }, |n| n.alpha)
    } else {
        return Ok(());
    };
    let p = family.refine(a, b, test, s_tol)?;
    let n = family.n;
    out.push(SpecialPoint {
        kind,
        parameter: family.lambda(p.mu()),
        x: p.u[..n].to_vec(),
        summary: summary(&p.u[..n]),
        stability_change,
        spectral_abscissa: p.alpha,
        dparameter_ds: p.t_mu(),
        residual: p.residual,
        after,
    });
    Ok(())
}

#[cfg(test)]
mod tests;
