//! Parameter sweeps of fixed points: one model file, one or two swept parameters.
//!
//! The first axis is the x axis of a curve, the optional second axis gives one curve per
//! value. Curves run in parallel (rayon); along a curve each point starts from the previous
//! point's fixed point (continuation), which keeps the Newton iterations few near `lambda -> 1`.
//! Points outside the model's stability region are marked [`PointStatus::Unstable`] and carry
//! no numbers; points whose parameters are invalid are marked [`PointStatus::Invalid`] (the
//! CLI then exits with code 2, after writing the other points).
//!
//! One [`Deadline`](mfq_model::Deadline) bounds the whole sweep (a time limit, or a cancel flag a Ctrl-C handler
//! sets): a curve stops at it, the point in flight is dropped, and the report keeps the
//! finished points with [`SweepReport::partial`] saying why the rest is missing.

use mfq_fixpoint::{solve_spec_with, Factors, FixedPointError, FixedPointOptions, FixedPointStatus};
use mfq_model::{ModelError, ModelFile};
use rayon::prelude::*;
use serde::Serialize;

/// One swept parameter: a dotted name (as in `--set`) and its values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    /// Parameter name, e.g. `lambda` or `model.d`.
    pub name: String,
    /// Values, in sweep order.
    pub values: Vec<f64>,
}

impl Axis {
    /// Parses `a:b:n` (n points from a to b, inclusive) or `v1,v2,...`.
    ///
    /// # Errors
    /// [`ModelError::BadOverride`] naming the parameter when the text is neither form, `n < 2`,
    /// or a value is not finite.
    pub fn parse(name: &str, text: &str) -> Result<Axis, ModelError> {
        let bad = |reason: String| ModelError::BadOverride { name: name.to_string(), reason };
        let num = |s: &str| -> Result<f64, ModelError> {
            s.trim().parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| bad(format!("'{s}' is not a finite number")))
        };
        let values = if let [a, b, n] = text.split(':').collect::<Vec<_>>()[..] {
            let (a, b) = (num(a)?, num(b)?);
            let n: usize = n
                .trim()
                .parse()
                .ok()
                .filter(|n| *n >= 2 && *n <= 100_000)
                .ok_or_else(|| bad(format!("'{n}' is not a number of points in [2, 100000] (range syntax: start:end:points)")))?;
            (0..n).map(|i| a + (b - a) * i as f64 / (n - 1) as f64).collect()
        } else if text.contains(',') {
            text.split(',').map(num).collect::<Result<Vec<_>, _>>()?
        } else {
            return Err(bad(format!("'{text}' is not a sweep (use start:end:points or v1,v2,...)")));
        };
        Ok(Axis { name: name.to_string(), values })
    }

    /// Whether `text` has the form of a sweep (`a:b:n` or a comma list).
    pub fn is_sweep(text: &str) -> bool {
        text.split(':').count() == 3 || text.contains(',')
    }
}

/// How one point of a sweep ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum PointStatus {
    /// A converged fixed point.
    Solved {
        /// Mean response time (Little), when the model has queues.
        mean_response_time: Option<f64>,
        /// Mean queue length per server, when the model has queues.
        mean_queue_length: Option<f64>,
        /// Probability of waiting, when defined.
        prob_wait: Option<f64>,
        /// Throughput per server (jobs completed per server per unit time), when defined.
        throughput: Option<f64>,
        /// Probability that an arrival is lost (blocked), 0 for models without losses.
        loss_probability: f64,
        /// `max |f(x*)|`.
        residual: f64,
        /// Truncation level used.
        levels: usize,
        /// Linear solves used.
        iterations: usize,
        /// `P(Q >= k)`, `k = 1..K`.
        tail: Vec<f64>,
    },
    /// Outside the stability region: no number.
    Unstable {
        /// Why.
        reason: String,
    },
    /// The parameters are invalid at this point (e.g. `d = 0` in a list): bad input.
    Invalid {
        /// The error, naming the field.
        reason: String,
    },
    /// The solver did not converge at this point.
    Failed {
        /// Why.
        reason: String,
    },
}

/// One point: the swept values and the outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Value of the x axis.
    pub x: f64,
    /// Value of the curve axis, if any.
    pub curve: Option<f64>,
    /// Outcome.
    pub status: PointStatus,
}

/// A finished sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepReport {
    /// The x axis.
    pub x_axis: Axis,
    /// The curve axis, if any.
    pub curve_axis: Option<Axis>,
    /// Points, curve by curve, in x order: every point, or the finished ones of a sweep
    /// stopped early.
    pub points: Vec<SweepPoint>,
    /// `Some(why)` when the sweep stopped before every point was computed (its deadline or a
    /// cancellation): `points` holds the finished ones.
    pub partial: Option<String>,
}

impl SweepReport {
    /// The points of the curve with value `curve` (or all points without a curve axis).
    pub fn curve(&self, curve: Option<f64>) -> impl Iterator<Item = &SweepPoint> {
        self.points.iter().filter(move |p| p.curve == curve)
    }
}

pub(crate) fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Sweeps the fixed point of the model file `text` over `x_axis` (and `curve_axis`), after the
/// scalar `overrides`. `progress` is called once per finished point (from any thread). Each
/// point is solved within `opts.deadline`; past it (or after a cancellation) the sweep stops
/// and returns the finished points, marked [`partial`](SweepReport::partial).
///
/// # Errors
/// [`ModelError`] when the base file with the overrides is invalid, or a swept name is not a
/// key of the file. Invalid values at single points (e.g. `d = 0` in a list) are reported per point.
pub fn sweep(
    text: &str,
    overrides: &[String],
    x_axis: &Axis,
    curve_axis: Option<&Axis>,
    opts: &FixedPointOptions,
    progress: &(dyn Fn() + Sync),
) -> Result<SweepReport, ModelError> {
    check_names(text, overrides, x_axis, curve_axis)?;
    let curves: Vec<Option<f64>> = match curve_axis {
        Some(c) => c.values.iter().map(|v| Some(*v)).collect(),
        None => vec![None],
    };
    let per_curve: Vec<Vec<SweepPoint>> = curves
        .par_iter()
        .map(|curve| {
            // the last two converged points (value, state) and the factorisation of the last solve
            let mut warm: Option<(f64, Vec<f64>)> = None;
            let mut before: Option<(f64, Vec<f64>)> = None;
            let mut factors = Factors::default();
            let mut out = Vec::with_capacity(x_axis.values.len());
            for &x in &x_axis.values {
                if opts.deadline.expired() {
                    break;
                }
                let mut ov = overrides.to_vec();
                ov.push(format!("{}={}", x_axis.name, format_value(x)));
                if let (Some(c), Some(v)) = (curve_axis, curve) {
                    ov.push(format!("{}={}", c.name, format_value(*v)));
                }
                let status = match ModelFile::parse(text, &ov) {
                    Err(e) => PointStatus::Invalid { reason: e.to_string() },
                    Ok(file) => {
                        let o = FixedPointOptions { x0: predict(x, warm.as_ref(), before.as_ref()), ..opts.clone() };
                        match solve_spec_with(&file.model, &file.truncation, &o, &mut factors) {
                            Err(FixedPointError::Unstable { reason }) => PointStatus::Unstable { reason },
                            // stopped by the deadline while building the model: not finished
                            Err(FixedPointError::Model(ModelError::Interrupted { .. })) => break,
                            Err(e) => PointStatus::Invalid { reason: e.to_string() },
                            Ok(fp) if fp.status == FixedPointStatus::Converged => {
                                before = warm.replace((x, fp.x.clone()));
                                PointStatus::Solved {
                                    mean_response_time: fp.observables.mean_response_time,
                                    mean_queue_length: fp.observables.mean_queue_length,
                                    prob_wait: fp.observables.prob_wait,
                                    throughput: fp.observables.throughput,
                                    loss_probability: fp.observables.loss_probability,
                                    residual: fp.residual,
                                    levels: fp.truncation.levels,
                                    iterations: fp.total_iterations,
                                    tail: fp.observables.tail,
                                }
                            }
                            Ok(fp) if matches!(fp.status, FixedPointStatus::TimeLimit { .. }) => break,
                            Ok(fp) => {
                                (warm, before) = (None, None);
                                PointStatus::Failed { reason: format!("{} (residual {:.2e})", fp.status, fp.residual) }
                            }
                        }
                    }
                };
                progress();
                out.push(SweepPoint { x, curve: *curve, status });
            }
            out
        })
        .collect();
    let points: Vec<SweepPoint> = per_curve.into_iter().flatten().collect();
    let total = x_axis.values.len() * curve_axis.map_or(1, |c| c.values.len());
    let partial =
        (points.len() < total).then(|| format!("stopped at {}: {} of {total} points finished", opts.deadline.reason(), points.len()));
    Ok(SweepReport { x_axis: x_axis.clone(), curve_axis: curve_axis.cloned(), points, partial })
}

/// The start of the point at `x` of a sweep: the secant (linear) extrapolation from the last
/// two converged points when they have the same dimension and the new step is at most twice
/// the last (the error of the start drops from
/// `O(h)` to `O(h^2)` in the step `h`, so the chord steps on the held factorisation converge
/// from it; Allgower and Georg, "Introduction to Numerical Continuation Methods", SIAM 2003,
/// §2.2, predictor-corrector), else the last converged state (the solver projects the start
/// onto the feasible set).
fn predict(x: f64, warm: Option<&(f64, Vec<f64>)>, before: Option<&(f64, Vec<f64>)>) -> Option<Vec<f64>> {
    let (x1, w1) = warm?;
    match before {
        Some((x0, w0)) if w0.len() == w1.len() && x1 != x0 && ((x - x1) / (x1 - x0)).abs() <= 2.0 => {
            let s = (x - x1) / (x1 - x0);
            Some(w1.iter().zip(w0).map(|(a, b)| a + s * (a - b)).collect())
        }
        _ => Some(w1.clone()),
    }
}

/// Checks that the file parses with the overrides and that the swept names are keys of it
/// (a swept name that does not exist would otherwise fail at every point).
fn check_names(text: &str, overrides: &[String], x_axis: &Axis, curve_axis: Option<&Axis>) -> Result<(), ModelError> {
    ModelFile::parse(text, overrides)?;
    for axis in std::iter::once(x_axis).chain(curve_axis) {
        if !mfq_model::spec::has_key(text, &axis.name) {
            return Err(ModelError::BadOverride {
                name: axis.name.clone(),
                reason: "not a key of the model file (sweep a parameter the file sets)".into(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start of a point is exact for a state linear in the parameter (uneven steps too),
    /// and the last state when there is no earlier point, the dimensions differ, or the step
    /// is more than twice the last.
    #[test]
    fn the_secant_start_extrapolates_linearly() {
        let state = |x: f64| vec![1.0 + 2.0 * x, 3.0 - x];
        let (a, b) = ((0.5, state(0.5)), (0.6, state(0.6)));
        let got = predict(0.75, Some(&b), Some(&a)).unwrap();
        assert!(got.iter().zip(state(0.75)).all(|(g, w)| (g - w).abs() < 1e-12), "{got:?}");
        assert_eq!(predict(0.75, Some(&b), None), Some(state(0.6)));
        assert_eq!(predict(0.75, None, Some(&a)), None);
        assert_eq!(predict(0.9, Some(&b), Some(&a)), Some(state(0.6)));
        assert_eq!(predict(0.75, Some(&b), Some(&(0.5, vec![1.0]))), Some(state(0.6)));
    }

    #[test]
    fn axes_parse() {
        assert_eq!(Axis::parse("lambda", "0.5:0.9:5").unwrap().values, vec![0.5, 0.6, 0.7, 0.8, 0.9]);
        assert_eq!(Axis::parse("d", "1,2,5").unwrap().values, vec![1.0, 2.0, 5.0]);
        assert!(Axis::parse("d", "1:2:1").is_err());
        assert!(Axis::parse("d", "x,2").is_err());
        assert!(Axis::is_sweep("0.1:0.2:3") && !Axis::is_sweep("0.3"));
    }
}
