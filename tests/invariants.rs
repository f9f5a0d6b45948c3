//! Invariants of every built-in model over random valid parameters (proptest), and the
//! solver's behaviour near the stability boundary and at extreme truncations.
//!
//! For each model kind of `mfq models` (JSQ(d), Pod-LI, Pod-LD, JIQ, the opinion models, the
//! heterogeneous-server models, the phase-type queues and the redundancy mean field), random
//! parameters inside the documented ranges and stability region are written as a model file
//! and checked for:
//!
//! 1. **Feasibility at the boundary**: at random feasible states moved onto each face of the
//!    feasible set, the drift points inwards. Tail layouts (`x_k` = fraction with at least `k`
//!    jobs, per class for class tails): at `x_k = 0` (and beyond) `f_k >= 0`; at `x_k = 1` (and
//!    below) `f_k <= 0`; on `x_k = x_{k+1}` the tail stays monotone, `f_k >= f_{k+1}`. Phase
//!    tails (`x_{k,j}`): `f_{k,j} >= 0` at `x_{k,j} = 0`, `f_{k,j} >= f_{k+1,j}` at
//!    `x_{k,j} = x_{k+1,j}`, and `sum_j f_{1,j} <= 0` when no server is idle. Scalar fractions
//!    (opinion models): `f >= 0` at 0, `f <= 0` at 1.
//! 2. **The fixed point**: converged, with `max |f(x*)|` (evaluated here, not read from the
//!    report) below the solver's tolerance 1e-12, feasible, and equal to the closed form where
//!    the model has one.
//! 3. **Observables**: tails in `[0, 1]` and non-increasing in `k`; `E[Q]` and `E[T]` finite and
//!    positive, `E[T]` at least the mean service time; Little's law `E[T] = E[Q] / throughput`;
//!    flow balance: the throughput `lambda (1 - loss)` equals the departure rate read off the
//!    state (busy servers times their service rates).
//! 4. **The analytic Jacobian** equals central finite differences at random interior states.
//!
//! Case counts are kept small (the whole file runs in well under 30 s in release).

use mfq_fixpoint::{solve_spec, FixedPoint, FixedPointOptions, FixedPointStatus};
use mfq_model::finite::{FiniteSystem, Simulation};
use mfq_model::{Jacobian, MeanFieldModel, ModelFile, ModelSpec, StateLayout, Truncation};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::time::{Duration, Instant};

/// Drift-sign slack at the faces (round-off of rates of order 1-10).
const FACE_TOL: f64 = 1e-11;
/// The fixed-point solver's residual tolerance (`FixedPointOptions::default().tol`).
const RESIDUAL_TOL: f64 = 1e-12;

// ---------------------------------------------------------------------------------------------
// random states

/// Deterministic numbers in [0, 1) from a proptest seed vector.
struct Seed<'a> {
    s: &'a [f64],
    i: usize,
}

impl Seed<'_> {
    fn next(&mut self) -> f64 {
        let v = self.s[self.i % self.s.len()];
        // decorrelate repeated passes over a short seed
        let v = (v + 0.618_033_988_749_895 * (self.i / self.s.len()) as f64).fract();
        self.i += 1;
        v
    }
}

/// A feasible state of `layout`: general (entries may be 0 or 1) or strictly interior (every
/// constraint slack by a margin that central differences with step 1e-7 do not cross).
fn state(layout: &StateLayout, seed: &[f64], interior: bool) -> Option<Vec<f64>> {
    let mut s = Seed { s: seed, i: 0 };
    let tail = |n: usize, s: &mut Seed, top: f64| -> Vec<f64> {
        let mut v = top;
        (0..n)
            .map(|_| {
                let u = s.next();
                v *= if interior { 0.6 + 0.38 * u } else { u.sqrt() };
                v
            })
            .collect()
    };
    Some(match layout {
        StateLayout::Tail { levels } => {
            let top = if interior { 0.98 } else { 1.0 };
            tail(*levels, &mut s, top)
        }
        StateLayout::ClassTail { classes, levels } => {
            let mut x = Vec::new();
            for _ in 0..*classes {
                let top = if interior { 0.98 } else { 1.0 };
                x.extend(tail(*levels, &mut s, top));
            }
            x
        }
        StateLayout::PhaseTail { levels, phases } => {
            // x_{k,j} = busy w_j r_{2,j} ... r_{k,j}: per phase non-increasing in k, sum_j x_{1,j} = busy
            let busy = if interior { 0.3 + 0.6 * s.next() } else { s.next().sqrt() };
            let w: Vec<f64> = (0..*phases).map(|_| 0.2 + s.next()).collect();
            let total: f64 = w.iter().sum();
            let mut x = vec![0.0; levels * phases];
            for j in 0..*phases {
                let first = busy * w[j] / total;
                let t = tail(*levels, &mut s, 1.0);
                // t[0] is itself random; rescale so that x_{1,j} = first
                for k in 0..*levels {
                    x[k * phases + j] = first * t[k] / t[0].max(1e-300);
                }
            }
            x
        }
        StateLayout::Named { names } => names.iter().map(|_| if interior { 0.05 + 0.9 * s.next() } else { s.next() }).collect(),
        _ => return None,
    })
}

fn drift(m: &dyn MeanFieldModel, x: &[f64]) -> Vec<f64> {
    let mut f = vec![0.0; m.dim()];
    m.drift(x, &mut f);
    f
}

// ---------------------------------------------------------------------------------------------
// 1. feasibility at the boundary

/// Checks the faces of one tail block `x[o..o + n]` (fractions with at least k jobs).
fn tail_faces(m: &dyn MeanFieldModel, x: &[f64], o: usize, n: usize) -> Result<(), TestCaseError> {
    for k in 0..n {
        // x_k = 0 (and every higher level): f_k >= 0
        let mut y = x.to_vec();
        y[o + k..o + n].iter_mut().for_each(|v| *v = 0.0);
        let f = drift(m, &y);
        prop_assert!(f[o + k] >= -FACE_TOL, "{}: f = {} < 0 at x[{}] = 0, state {y:?}", m.name(), f[o + k], o + k);
        // x_k = 1 (and every lower level): f_k <= 0
        let mut y = x.to_vec();
        y[o..=o + k].iter_mut().for_each(|v| *v = 1.0);
        let f = drift(m, &y);
        prop_assert!(f[o + k] <= FACE_TOL, "{}: f = {} > 0 at x[{}] = 1, state {y:?}", m.name(), f[o + k], o + k);
        // x_k = x_{k+1}: the tail stays non-increasing
        if k + 1 < n {
            let mut y = x.to_vec();
            y[o + k + 1] = y[o + k];
            let f = drift(m, &y);
            let gap = f[o + k] - f[o + k + 1];
            prop_assert!(gap >= -FACE_TOL, "{}: f_k - f_k+1 = {gap} < 0 at x[{}] = x[{}], state {y:?}", m.name(), o + k, o + k + 1);
        }
    }
    Ok(())
}

fn boundary_invariance(m: &dyn MeanFieldModel, x: &[f64]) -> Result<(), TestCaseError> {
    match m.layout() {
        StateLayout::Tail { levels } => tail_faces(m, x, 0, levels)?,
        StateLayout::ClassTail { classes, levels } => {
            for c in 0..classes {
                tail_faces(m, x, c * levels, levels)?;
            }
        }
        StateLayout::PhaseTail { levels, phases } => {
            let at = |k: usize, j: usize| k * phases + j;
            for j in 0..phases {
                for k in 0..levels {
                    let mut y = x.to_vec();
                    (k..levels).for_each(|kk| y[at(kk, j)] = 0.0);
                    let f = drift(m, &y);
                    prop_assert!(f[at(k, j)] >= -FACE_TOL, "{}: f = {} < 0 at x_{{{},{}}} = 0", m.name(), f[at(k, j)], k + 1, j + 1);
                    if k + 1 < levels {
                        let mut y = x.to_vec();
                        y[at(k + 1, j)] = y[at(k, j)];
                        let f = drift(m, &y);
                        let gap = f[at(k, j)] - f[at(k + 1, j)];
                        prop_assert!(gap >= -FACE_TOL, "{}: phase {} tail not monotone: gap {gap} at k = {}", m.name(), j + 1, k + 1);
                    }
                }
            }
            // no idle server: sum_j x_{1,j} = 1 (scale the first level up; the tails stay monotone)
            let mut y = x.to_vec();
            let busy: f64 = (0..phases).map(|j| y[at(0, j)]).sum();
            if busy > 0.0 {
                (0..phases).for_each(|j| y[at(0, j)] /= busy);
            } else {
                y[at(0, 0)] = 1.0;
            }
            // exactly on the face (the sum in the model's order is >= 1, not 1 - 1 ulp): a model
            // with a sliding mode there (JIQ) switches to it only on the face itself
            for _ in 0..4 {
                let sum: f64 = (0..phases).map(|j| y[at(0, j)]).sum();
                if sum >= 1.0 {
                    break;
                }
                y[at(0, phases - 1)] += (1.0 - sum).max(f64::EPSILON);
            }
            let f = drift(m, &y);
            let d_busy: f64 = (0..phases).map(|j| f[at(0, j)]).sum();
            prop_assert!(d_busy <= FACE_TOL, "{}: busy fraction grows above 1: {d_busy}", m.name());
        }
        StateLayout::Named { names } => {
            for i in 0..names.len() {
                let mut y = x.to_vec();
                y[i] = 0.0;
                prop_assert!(drift(m, &y)[i] >= -FACE_TOL, "{}: {} leaves [0, 1] at 0", m.name(), names[i]);
                y[i] = 1.0;
                prop_assert!(drift(m, &y)[i] <= FACE_TOL, "{}: {} leaves [0, 1] at 1", m.name(), names[i]);
            }
        }
        _ => {}
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 4. analytic Jacobian against central differences

fn jacobian_error(m: &dyn MeanFieldModel, x: &[f64]) -> f64 {
    let n = m.dim();
    let mut jac = Jacobian::new(n, m.sparsity());
    m.jacobian(x, &mut jac);
    let a = jac.to_dense();
    let h = 1e-7;
    let mut xp = x.to_vec();
    let mut err: f64 = 0.0;
    for j in 0..n {
        xp[j] = x[j] + h;
        let fp = drift(m, &xp);
        xp[j] = x[j] - h;
        let fm = drift(m, &xp);
        xp[j] = x[j];
        for i in 0..n {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            err = err.max((a[i * n + j] - fd).abs() / a[i * n + j].abs().max(1.0));
        }
    }
    err
}

// ---------------------------------------------------------------------------------------------
// 2-3. fixed point and observables

/// The departure rate at state `x` (jobs, or copies for redundancy, per server and unit time),
/// from the finite-N system the kind declares.
fn departure_rate(spec: &ModelSpec, m: &dyn MeanFieldModel, x: &[f64]) -> Option<f64> {
    let busy = |x: &[f64]| x[0];
    Some(match (spec.simulation().ok()?, m.layout()) {
        (Simulation::System(FiniteSystem::Queues { .. }), _) => busy(x),
        // completions x_1 plus the (d - 1) x_1 sibling copies they cancel
        (Simulation::System(FiniteSystem::Redundancy { d, .. }), _) => d as f64 * busy(x),
        (Simulation::System(FiniteSystem::Classes { classes, .. }), StateLayout::ClassTail { levels, .. }) => {
            classes.iter().enumerate().map(|(j, c)| c.fraction * c.speed * x[j * levels]).sum()
        }
        (Simulation::System(FiniteSystem::PhaseQueues { job_size, .. }), StateLayout::PhaseTail { phases, .. }) => {
            (0..phases).map(|j| job_size.exit_rates()[j] * x[j]).sum()
        }
        _ => return None,
    })
}

/// The shortest possible mean response time: the mean job size at the fastest server.
fn min_response_time(spec: &ModelSpec) -> f64 {
    match spec.simulation() {
        Ok(Simulation::System(FiniteSystem::Classes { classes, .. })) => 1.0 / classes.iter().map(|c| c.speed).fold(0.0, f64::max),
        Ok(Simulation::System(FiniteSystem::PhaseQueues { job_size, .. })) => job_size.mean(),
        // T here is per copy; a copy may be cancelled early
        _ if spec.kind() == "redundancy" => 0.0,
        _ => 1.0,
    }
}

fn fixed_point_invariants(file: &ModelFile, fp: &FixedPoint) -> Result<(), TestCaseError> {
    let spec = &file.model;
    prop_assert!(fp.converged(), "{spec:?}: {:?} after {} iterations, residual {:e}", fp.status, fp.iterations, fp.residual);
    let m = spec.build(fp.truncation.levels).unwrap();
    prop_assert_eq!(m.dim(), fp.x.len());
    // the residual, evaluated here
    let r = drift(m.as_ref(), &fp.x).iter().fold(0.0f64, |a, v| a.max(v.abs()));
    prop_assert!(r <= RESIDUAL_TOL, "{spec:?}: max|f(x*)| = {r:e}");
    prop_assert!(fp.residual <= RESIDUAL_TOL && fp.residual.is_finite());
    // feasibility of x*: every entry of these layouts is a fraction
    let fractions = matches!(
        m.layout(),
        StateLayout::Tail { .. } | StateLayout::ClassTail { .. } | StateLayout::PhaseTail { .. } | StateLayout::Named { .. }
    );
    if fractions {
        prop_assert!(fp.x.iter().all(|v| (-1e-14..=1.0 + 1e-14).contains(v)), "{spec:?}: x* outside [0, 1]: {:?}", fp.x);
    }
    if let Some(exact) = m.analytic_fixed_point() {
        let diff = exact.iter().zip(&fp.x).fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
        prop_assert!(diff <= 1e-9, "{spec:?}: x* differs from the closed form by {diff:e}");
    }
    // observables
    let o = &fp.observables;
    for w in o.tail.windows(2) {
        prop_assert!(w[1] <= w[0] + 1e-12, "{spec:?}: tail increases: {:?}", o.tail);
    }
    prop_assert!(o.tail.iter().all(|v| (0.0..=1.0).contains(v)), "{spec:?}: tail outside [0, 1]");
    let Some(l) = o.mean_queue_length else {
        return Ok(()); // no queues (opinion dynamics)
    };
    let t = o.mean_response_time.expect("E[T] with a positive throughput");
    let thr = o.throughput.expect("throughput");
    prop_assert!(l.is_finite() && l > 0.0, "{spec:?}: E[Q] = {l}");
    prop_assert!(t.is_finite() && t > 0.0, "{spec:?}: E[T] = {t}");
    prop_assert!(t >= min_response_time(spec) * (1.0 - 1e-9), "{spec:?}: E[T] = {t} below the mean service time");
    // Little's law
    prop_assert!((t - l / thr).abs() <= 1e-12 * t, "{spec:?}: E[T] = {t}, E[Q]/throughput = {}", l / thr);
    // flow balance at x*: accepted arrivals = departures
    if let Some(dep) = departure_rate(spec, m.as_ref(), &fp.x) {
        prop_assert!((thr - dep).abs() <= 1e-9 * thr.max(1.0), "{spec:?}: throughput {thr} but departures {dep}");
    }
    let lambda = spec.lambda().unwrap();
    let copies = spec.downcast_ref::<mfq_model::models::RedundancySpec>().map_or(1.0, |r| r.d as f64);
    prop_assert!((thr - lambda * copies * (1.0 - o.loss_probability)).abs() <= 1e-12 * thr, "{spec:?}: throughput {thr}");
    Ok(())
}

/// Every invariant of the model file `text`: boundary and Jacobian at truncation `k_small`,
/// fixed point and observables at the automatic truncation.
fn check(text: &str, k_small: usize, seed: &[f64]) -> Result<(), TestCaseError> {
    let file = ModelFile::parse(text, &[]).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
    let small = file.model.build(k_small).unwrap();
    if let Some(x) = state(&small.layout(), seed, false) {
        boundary_invariance(small.as_ref(), &x)?;
    }
    if small.has_analytic_jacobian() {
        if let Some(x) = state(&small.layout(), seed, true) {
            let e = jacobian_error(small.as_ref(), &x);
            prop_assert!(e <= 1e-6, "{}: analytic Jacobian off by {e:e} at {x:?}\n{text}", small.name());
        }
    }
    let fp = solve_spec(&file.model, &file.truncation, &FixedPointOptions::default())
        .map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
    fixed_point_invariants(&file, &fp)
}

// ---------------------------------------------------------------------------------------------
// random model files, one strategy per kind

fn seed() -> impl Strategy<Value = Vec<f64>> {
    proptest::collection::vec(0.0f64..1.0, 24)
}

/// `[[model.classes]]` tables: 1-3 classes, fractions summing to 1, speeds in [0.2, 4].
fn classes() -> impl Strategy<Value = (String, f64)> {
    proptest::collection::vec((0.1f64..1.0, 0.2f64..4.0), 1..=3).prop_map(|c| {
        let total: f64 = c.iter().map(|(w, _)| w).sum();
        let mut text = String::new();
        let mut left = 1.0;
        let mut cap = 0.0;
        for (i, (w, speed)) in c.iter().enumerate() {
            let fraction = if i + 1 == c.len() { left } else { w / total };
            left -= fraction;
            cap += fraction * speed;
            text += &format!("\n[[model.classes]]\nfraction = {fraction:?}\nspeed = {speed:?}\n");
        }
        (text, cap)
    })
}

/// `[model.job_size]` tables: exponential, H2 (scv, f) or Erlang, with their mean.
fn job_size() -> impl Strategy<Value = (String, f64)> {
    let mean = 0.5f64..2.0;
    prop_oneof![
        mean.clone().prop_map(|m| (format!("\n[model.job_size]\nlaw = \"exponential\"\nmean = {m:?}\n"), m)),
        (mean.clone(), 1.0f64..10.0, 0.1f64..0.9)
            .prop_map(|(m, scv, f)| (format!("\n[model.job_size]\nlaw = \"h2\"\nmean = {m:?}\nscv = {scv:?}\nf = {f:?}\n"), m)),
        (mean, 1usize..=4).prop_map(|(m, k)| (format!("\n[model.job_size]\nlaw = \"erlang\"\nk = {k}\nmean = {m:?}\n"), m)),
    ]
}

/// The stability bound of Pod-LI: `min(1, 1/(eps d))`.
fn pod_li_max(d: u32, eps: f64) -> f64 {
    if eps * d as f64 > 1.0 {
        1.0 / (eps * d as f64)
    } else {
        1.0
    }
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(cases) }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn jsq(lambda in 0.05f64..0.97, d in 1u32..=5, k in 2usize..12, s in seed()) {
        check(&format!("[model]\nkind = \"jsq\"\nlambda = {lambda:?}\nd = {d}\n"), k, &s)?;
    }

    #[test]
    fn pod_li(u in 0.05f64..0.95, d in 1u32..=5, eps in 0.0f64..=1.0, k in 2usize..12, s in seed()) {
        let lambda = u * pod_li_max(d, eps);
        check(&format!("[model]\nkind = \"pod-li\"\nlambda = {lambda:?}\nd = {d}\neps = {eps:?}\n"), k, &s)?;
    }

    #[test]
    fn pod_ld(lambda in 0.05f64..0.95, d in 1u32..=4, eps in 0.0f64..=1.0, g in 0u32..=3, k in 2usize..12, s in seed()) {
        check(&format!("[model]\nkind = \"pod-ld\"\nlambda = {lambda:?}\nd = {d}\neps = {eps:?}\ng = {g}\n"), k, &s)?;
    }

    #[test]
    fn jiq(lambda in 0.05f64..0.97, k in 2usize..12, s in seed()) {
        check(&format!("[model]\nkind = \"jiq\"\nlambda = {lambda:?}\n"), k, &s)?;
    }

    #[test]
    fn opinion_stubborn(g0 in 0.0f64..0.45, g1 in 0.0f64..0.45, s in seed()) {
        check(&format!("[model]\nkind = \"opinion-stubborn\"\ngamma0 = {g0:?}\ngamma1 = {g1:?}\n"), 2, &s)?;
    }

    #[test]
    fn opinion_biased(alpha in 0.0f64..=1.0, s in seed()) {
        check(&format!("[model]\nkind = \"opinion-biased\"\nalpha = {alpha:?}\n"), 2, &s)?;
    }

    #[test]
    fn redundancy_mean_field(lambda in 0.05f64..0.95, d in 1u32..=4, disc in prop_oneof![Just("ps"), Just("fcfs"), Just("lcfs")], k in 2usize..12, s in seed()) {
        check(&format!("[model]\nkind = \"redundancy\"\nlambda = {lambda:?}\nd = {d}\ndiscipline = \"{disc}\"\n"), k, &s)?;
    }
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn sa_jsq(u in 0.05f64..0.95, (c, cap) in classes(), k in 2usize..8, s in seed()) {
        check(&format!("[model]\nkind = \"sa-jsq\"\nlambda = {:?}\n{c}", u * cap), k, &s)?;
    }

    #[test]
    fn sa_jiq(u in 0.05f64..0.95, (c, cap) in classes(), k in 2usize..8, s in seed()) {
        check(&format!("[model]\nkind = \"sa-jiq\"\nlambda = {:?}\n{c}", u * cap), k, &s)?;
    }

    #[test]
    fn pull(u in 0.05f64..0.95, (c, cap) in classes(), k in 2usize..8, s in seed()) {
        check(&format!("[model]\nkind = \"pull\"\nlambda = {:?}\n{c}", u * cap), k, &s)?;
    }

    #[test]
    fn static_routing(u in 0.05f64..0.9, (c, cap) in classes(), k in 2usize..8, s in seed()) {
        check(&format!("[model]\nkind = \"static-routing\"\nlambda = {:?}\n{c}", u * cap), k, &s)?;
    }

    #[test]
    fn ps_sq2(
        u in 0.05f64..0.9, (c, cap) in classes(), k in 2usize..8, s in seed(),
        sampling in prop_oneof![Just("uniform"), Just("capacity")], rule in prop_oneof![Just("sq2"), Just("lsc"), Just("lsc-plus-one")],
    ) {
        // below the subset threshold lambda_c <= capacity: halve until the model says stable
        let mut lambda = u * cap;
        let text = |lambda: f64| format!("[model]\nkind = \"ps-sq2\"\nlambda = {lambda:?}\nsampling = \"{sampling}\"\nrule = \"{rule}\"\n{c}");
        while matches!(
            ModelFile::parse(&text(lambda), &[]).unwrap().model.build(4).unwrap().stability(),
            mfq_model::Stability::Unstable { .. }
        ) {
            lambda *= 0.5;
        }
        check(&text(lambda), k, &s)?;
    }

    #[test]
    fn jsq_phase_type(u in 0.05f64..0.9, d in 1u32..=3, (js, mean) in job_size(), k in 2usize..8, s in seed()) {
        check(&format!("[model]\nkind = \"jsq-ph\"\nlambda = {:?}\nd = {d}\n{js}", u / mean), k, &s)?;
    }

    #[test]
    fn pod_li_phase_type(u in 0.05f64..0.9, d in 1u32..=3, eps in 0.0f64..=1.0, (js, mean) in job_size(), k in 2usize..8, s in seed()) {
        let lambda = u * pod_li_max(d, eps) / mean;
        check(&format!("[model]\nkind = \"pod-li-ph\"\nlambda = {lambda:?}\nd = {d}\neps = {eps:?}\n{js}"), k, &s)?;
    }

    #[test]
    fn jiq_phase_type(u in 0.05f64..0.9, (js, mean) in job_size(), k in 2usize..8, s in seed()) {
        check(&format!("[model]\nkind = \"jiq-ph\"\nlambda = {:?}\n{js}", u / mean), k, &s)?;
    }
}

// ---------------------------------------------------------------------------------------------
// near the stability boundary, huge and tiny truncations: an answer or an honest "no", in time

/// Solves JSQ(d) with the given truncation and checks that the outcome is honest: converged
/// with a residual below the tolerance and `x_K` below `tol`, or a status that says why not
/// (with a finite residual or mass); within `limit`. Returns the fixed point.
fn solve_jsq(lambda: f64, d: u32, trunc: Truncation, limit: Duration) -> FixedPoint {
    let spec = ModelSpec::from(mfq_model::models::JsqSpec { lambda, d });
    let start = Instant::now();
    let fp = solve_spec(&spec, &trunc, &FixedPointOptions::default()).expect("valid input");
    let took = start.elapsed();
    assert!(took <= limit, "JSQ({d}) at lambda = {lambda}, {trunc:?}: {took:?} > {limit:?}");
    assert!(!fp.residual.is_nan(), "NaN residual");
    match &fp.status {
        FixedPointStatus::Converged => {
            assert!(fp.residual <= RESIDUAL_TOL, "converged with residual {:e}", fp.residual);
            assert!(fp.truncation.mass_at_truncation < trunc.tol, "x_K = {:e}", fp.truncation.mass_at_truncation);
            // against the closed form x_k = lambda^((d^k - 1)/(d - 1)) (lambda^k for d = 1)
            let t = fp.observables.mean_response_time.unwrap();
            let exact = if d == 1 { 1.0 / (1.0 - lambda) } else { jsq_t(lambda, d) };
            assert!((t - exact).abs() <= 1e-6 * exact, "T = {t}, closed form {exact}");
        }
        FixedPointStatus::TruncationNotReached { mass } => assert!(mass.is_finite() && *mass >= trunc.tol),
        FixedPointStatus::MaxIterations | FixedPointStatus::Singular { .. } => assert!(fp.residual > RESIDUAL_TOL),
        FixedPointStatus::NonFinite => panic!("non-finite drift for a valid JSQ({d})"),
        FixedPointStatus::TimeLimit { .. } => panic!("no time limit was set, yet the solve reports one"),
        other => panic!("an outcome this test does not know: {other}"),
    }
    fp
}

/// Mean response time of JSQ(d), `d >= 2`: `sum_{k>=1} lambda^((d^k - d)/(d - 1))`
/// (Mitzenmacher 2001, `T = sum_k x_k / lambda`).
fn jsq_t(lambda: f64, d: u32) -> f64 {
    let d = d as f64;
    let mut t = 0.0;
    let mut e = 1.0; // (d^k - 1)/(d - 1)
    for _ in 0..200 {
        let term = lambda.powf(e - 1.0);
        t += term;
        if term < 1e-18 {
            break;
        }
        e = d * e + 1.0;
    }
    t
}

fn auto(tol: f64, max_levels: usize) -> Truncation {
    Truncation { levels: None, tol, max_levels, buffer: false }
}

#[test]
fn near_instability_jsq_converges_or_says_so() {
    let limit = Duration::from_secs(20);
    for (lambda, d) in [(0.999, 1), (0.999, 2), (0.9999, 2), (0.9999, 1), (0.99999, 2)] {
        let fp = solve_jsq(lambda, d, Truncation::default(), limit);
        eprintln!(
            "JSQ({d}) lambda = {lambda}: {:?}, residual {:.2e}, K = {}, {} iterations",
            fp.status, fp.residual, fp.truncation.levels, fp.total_iterations
        );
    }
    // the cases that must converge: d = 2 up to 0.99999 (K ~ 22), d = 1 at 0.999 (K ~ 27600)
    for (lambda, d) in [(0.999, 1), (0.999, 2), (0.9999, 2), (0.99999, 2)] {
        assert!(solve_jsq(lambda, d, Truncation::default(), limit).converged(), "JSQ({d}) at {lambda}");
    }
    // random routing at 0.9999 needs K ~ 260000 > the default max_levels: an honest "not reached",
    // and the answer (T = 1/(1 - lambda) = 10^4) once max_levels allows it
    let fp = solve_jsq(0.9999, 1, Truncation::default(), limit);
    assert!(matches!(fp.status, FixedPointStatus::TruncationNotReached { .. }), "{:?}", fp.status);
    assert!(solve_jsq(0.9999, 1, auto(1e-12, 1_000_000), limit).converged());
}

#[test]
fn small_max_levels_stop_with_the_mass_reached() {
    for max_levels in [2, 3, 5] {
        let fp = solve_jsq(0.9, 2, auto(1e-12, max_levels), Duration::from_secs(5));
        assert!(matches!(fp.status, FixedPointStatus::TruncationNotReached { .. }), "{:?}", fp.status);
        assert!(fp.truncation.levels <= max_levels);
    }
}

#[test]
fn tiny_tolerances_terminate() {
    // the smallest tolerance double precision honours
    let fp = solve_jsq(0.9, 2, auto(1e-14, 100_000), Duration::from_secs(5));
    assert!(fp.converged());
    let fp = solve_jsq(0.99, 1, auto(1e-14, 10_000_000), Duration::from_secs(20));
    assert!(fp.converged());
    // below it (x_K < 1e-300 used to be met by a JSQ(2) tail that underflows to 0): refused
    let e = solve_spec(
        &ModelSpec::from(mfq_model::models::JsqSpec { lambda: 0.9, d: 2 }),
        &auto(1e-300, 100_000),
        &FixedPointOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("truncation.tol = 1e-300 is not allowed"), "{e}");
}

#[test]
fn huge_fixed_truncation_solves() {
    // K = 10^6 levels, tridiagonal Jacobian: O(K) per Newton step
    let fp = solve_jsq(0.9, 2, Truncation { levels: Some(1_000_000), ..Truncation::default() }, Duration::from_secs(30));
    assert!(fp.converged());
    assert_eq!(fp.x.len(), 1_000_000);
}

#[test]
#[ignore = "K = 10^7 levels needs ~1.2 GB and ~15 s (d = 2) to over a minute (d = 1) in release; run by hand"]
fn largest_fixed_truncation_solves() {
    for d in [1, 2] {
        solve_jsq(0.9, d, Truncation { levels: Some(10_000_000), ..Truncation::default() }, Duration::from_secs(300));
    }
}

#[test]
fn dense_models_refuse_truncations_they_cannot_hold() {
    // JIQ's Jacobian is dense: K = 10^6 would be 8 TB; refused by name instead of aborting
    let spec = ModelSpec::from(mfq_model::models::JiqSpec { lambda: 0.9 });
    let e = solve_spec(&spec, &Truncation { levels: Some(1_000_000), ..Truncation::default() }, &FixedPointOptions::default()).unwrap_err();
    assert!(e.to_string().contains("truncation.levels = 1000000 is not allowed"), "{e}");
}

/// Found by `opinion_biased`, `opinion_stubborn`, `sa_jsq` and `sa_jiq` above and by
/// `near_instability_jsq_converges_or_says_so` (report of issue 10); each used to end without
/// converging. What went wrong (iteration histories), fixed in crates/mfq-fixpoint (crate docs,
/// "Method"):
///
/// - Opinion models: from the empty start, pseudo-transient continuation grew its step past
///   `1/f'(x)` while `f' > 0` (the drift increases on the way from 0 to the equilibrium), the
///   step then jumped backwards, was projected to 0 and accepted (residual below twice the
///   old one): a 3-cycle 0 -> 0.2 -> 0.54 -> 0 until MaxIterations. Now such a step has a large
///   implicit-Euler defect and is refused.
/// - SA-JSQ/SA-JIQ at high load: the drift jumps where the fast class saturates
///   (`x_{1,1} = 1`, water-filling): the residual there is higher than just below, every step
///   onto the face was refused down to `dt = 1e-8`, reported as NonFinite. Now so short a step is
///   taken (it follows the ODE through the switching surface).
/// - JSQ(2) at lambda = 0.99999: warm-started at K = 32 from the K = 16 solution, pseudo-transient
///   steps crawl along the slow mode (residual 1e-5 -> 9e-7 in 500 steps); undamped Newton
///   converges from there in 7 steps although its residual first climbs to 0.09. Now a Newton
///   probe (kept only when it reaches the tolerance) runs when the residual stalls.
#[test]
fn known_solver_stalls_converge() {
    use mfq_model::models::{OpinionBiased, OpinionStubborn, ServerClass};
    let opts = FixedPointOptions::default();
    let solve = |spec: &ModelSpec| {
        let fp = solve_spec(spec, &Truncation::default(), &opts).unwrap();
        assert!(fp.converged() && fp.residual <= RESIDUAL_TOL, "{spec:?}: {:?}, residual {:e}", fp.status, fp.residual);
        fp
    };
    // the opinion models: the equilibrium that the flow from x = 0 reaches, i.e. the smallest
    // root of the cubic f above 0 (f(0) > 0 here), from the models' closed-form root finders
    let first_root = |eq: Vec<f64>| eq.into_iter().find(|&e| e > 0.0).unwrap();
    let mut alphas: Vec<f64> = (200..=250).map(|i| i as f64 / 1000.0).collect();
    alphas.extend([0.22, 0.23]);
    for alpha in alphas {
        let fp = solve(&ModelSpec::from(mfq_model::models::OpinionBiasedSpec { alpha }));
        let want = first_root(OpinionBiased::new(alpha).unwrap().equilibria());
        assert!((fp.x[0] - want).abs() <= 1e-9, "alpha = {alpha}: x* = {} != {want}", fp.x[0]);
    }
    for (gamma0, gamma1) in [(0.0, 0.25), (0.048724361039091106, 0.31178992757291113), (0.0, 0.2), (0.02, 0.3), (0.06, 0.1831)] {
        let fp = solve(&ModelSpec::from(mfq_model::models::OpinionStubbornSpec { gamma0, gamma1 }));
        let want = first_root(OpinionStubborn::new(gamma0, gamma1).unwrap().equilibria());
        assert!((fp.x[0] - want).abs() <= 1e-9, "gamma = ({gamma0}, {gamma1}): x* = {} != {want}", fp.x[0]);
    }
    // speed-aware models at high load: the fast class saturated, the closed-form fixed point
    let two = |f: f64, s1: f64, s2: f64| vec![ServerClass { fraction: f, speed: s1 }, ServerClass { fraction: 1.0 - f, speed: s2 }];
    for spec in [
        ModelSpec::from(mfq_model::models::SaJiqSpec::new(2.1, two(0.7630462224539997, 2.6822866695977434, 1.2249118793094762))),
        ModelSpec::from(mfq_model::models::SaJsqSpec::new(
            3.486882398457377,
            two(0.8590369566017556, 3.997872295424201, 1.7071682568974835),
        )),
    ] {
        let fp = solve(&spec);
        let exact = spec.build(fp.truncation.levels).unwrap().analytic_fixed_point().unwrap();
        let diff = exact.iter().zip(&fp.x).fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
        assert!(diff <= 1e-12, "{spec:?}: x* differs from the closed form by {diff:e}");
        assert_eq!(fp.x[0], 1.0, "{spec:?}: the fast class is saturated");
    }
    // JSQ(2) close to 1: x_k = lambda^(2^k - 1) (Mitzenmacher 2001), K ~ 22 at lambda = 0.99999
    for lambda in [0.999, 0.9999, 0.99999] {
        let fp = solve(&ModelSpec::from(mfq_model::models::JsqSpec { lambda, d: 2 }));
        let diff = fp.x.iter().enumerate().fold(0.0f64, |a, (i, v)| a.max((v - lambda.powf(2f64.powi(i as i32 + 1) - 1.0)).abs()));
        assert!(diff <= 1e-9, "lambda = {lambda}: x* differs from the closed form by {diff:e}");
        assert!(fp.truncation.mass_at_truncation < 1e-12 && fp.truncation.levels <= 24, "{:?}", fp.truncation);
    }
}

/// JSQ(d), Pod (load-independent and load-dependent errors) and JIQ converge at lambda = 0.999
/// and 0.9999 within the iteration budget, with a wall-clock limit as the guard against a
/// solver that would loop.
#[test]
fn heavy_load_converges() {
    let opts = FixedPointOptions { deadline: mfq_model::Deadline::after(10.0), ..FixedPointOptions::default() };
    for lambda in [0.999, 0.9999] {
        let specs = [
            ModelSpec::from(mfq_model::models::JsqSpec { lambda, d: 2 }),
            ModelSpec::from(mfq_model::models::JsqSpec { lambda, d: 3 }),
            ModelSpec::from(mfq_model::models::JsqSpec { lambda, d: 5 }),
            ModelSpec::from(mfq_model::models::PodLiSpec { lambda, d: 2, eps: 0.1 }),
            ModelSpec::from(mfq_model::models::PodLiSpec { lambda, d: 3, eps: 0.3 }),
            ModelSpec::from(mfq_model::models::PodLdSpec { lambda, d: 2, eps: 0.1, g: 1 }),
            ModelSpec::from(mfq_model::models::PodLdSpec { lambda, d: 3, eps: 0.2, g: 2 }),
            ModelSpec::from(mfq_model::models::JiqSpec { lambda }),
        ];
        for spec in specs {
            let fp = solve_spec(&spec, &Truncation::default(), &opts).unwrap();
            assert!(fp.converged() && fp.residual <= RESIDUAL_TOL, "{spec:?}: {:?}, residual {:e}", fp.status, fp.residual);
            assert!(fp.truncation.mass_at_truncation < 1e-12);
            let m = spec.build(fp.truncation.levels).unwrap();
            if let Some(exact) = m.analytic_fixed_point() {
                let diff = exact.iter().zip(&fp.x).fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
                assert!(diff <= 1e-9, "{spec:?}: x* differs from the closed form by {diff:e}");
            }
        }
    }
}
