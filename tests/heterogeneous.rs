//! Heterogeneous server classes (issue 5): speed-aware JSQ/JIQ, PULL, SQ(2)-type routing on
//! processor-sharing servers, and the optimal static routing, against values the code did not
//! produce. The reference values come from the formulas derived in
//! docs/models/heterogeneous.md ("Derivations"), evaluated independently of this code by
//! validation/heterogeneous.py; docs/references.md lists them with their sources. The cases A,
//! B, C are defined below.

use mfq_fixpoint::{solve_spec, FixedPoint, FixedPointError, FixedPointOptions};
use mfq_model::models::{CostRule, Sampling, ServerClass, SpeedAware, StaticRouting};
use mfq_model::{MeanFieldModel, ModelFile, ModelSpec, Stability, Truncation};

fn classes(v: &[(f64, f64)]) -> Vec<ServerClass> {
    v.iter().map(|&(fraction, speed)| ServerClass { fraction, speed }).collect()
}

/// Case A: gamma = (0.5, 0.5), mu (or C) = (1.6, 0.4); capacity 1.
const CASE_A: [(f64, f64); 2] = [(0.5, 1.6), (0.5, 0.4)];
/// Case B: gamma = (0.2, 0.8), mu = (3.0, 0.5); capacity 1.
const CASE_B: [(f64, f64); 2] = [(0.2, 3.0), (0.8, 0.5)];
/// Case C of (d): gamma = (0.3, 0.3, 0.4), mu = (2.0, 1.0, 0.25); capacity 1.
const CASE_C_SA: [(f64, f64); 3] = [(0.3, 2.0), (0.3, 1.0), (0.4, 0.25)];
/// Case C of (e): gamma = (0.2, 0.3, 0.5), C = (2.5, 1.0, 0.4); capacity 1.
const CASE_C_PS: [(f64, f64); 3] = [(0.2, 2.5), (0.3, 1.0), (0.5, 0.4)];

fn solve(spec: &ModelSpec) -> FixedPoint {
    let fp = solve_spec(spec, &Truncation::default(), &FixedPointOptions::default()).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
    assert!(fp.converged(), "{spec:?}: {:?}", fp.status);
    assert!(fp.residual < 1e-11, "{spec:?}: residual {}", fp.residual);
    assert!(fp.truncation.mass_at_truncation < 1e-12, "{spec:?}: mass {}", fp.truncation.mass_at_truncation);
    fp
}

fn t_of(fp: &FixedPoint) -> f64 {
    fp.observables.mean_response_time.unwrap()
}

fn extra(fp: &FixedPoint, name: &str) -> f64 {
    fp.observables.extras.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no extra {name}")).1
}

/// `x_{j,k}` (class `j` from 0, level `k` from 1) of a fixed point with `m` classes.
fn x_jk(fp: &FixedPoint, m: usize, j: usize, k: usize) -> f64 {
    let levels = fp.x.len() / m;
    if k > levels {
        0.0
    } else {
        fp.x[j * levels + k - 1]
    }
}

fn sa(jsq: bool, lambda: f64, c: &[(f64, f64)]) -> ModelSpec {
    if jsq {
        ModelSpec::from(mfq_model::models::SaJsqSpec::new(lambda, classes(c)))
    } else {
        ModelSpec::from(mfq_model::models::SaJiqSpec::new(lambda, classes(c)))
    }
}

fn pull(lambda: f64, c: &[(f64, f64)]) -> ModelSpec {
    ModelSpec::from(mfq_model::models::PullSpec::new(lambda, classes(c)))
}

fn ps(lambda: f64, c: &[(f64, f64)], sampling: Sampling, rule: CostRule) -> ModelSpec {
    ModelSpec::from(mfq_model::models::PsSq2Spec { lambda, classes: classes(c), sampling, rule })
}

/// PULL, exact rational case: gamma = (0.2, 0.8), mu = (3, 0.5), lambda = 0.5
/// => c = 1.5, b = (1/3, 3/4), T = 4/3 (b_j = c/(mu_j + c), T = (1/lambda) sum gamma_j b_j).
#[test]
fn pull_exact_rational_case() {
    let fp = solve(&pull(0.5, &CASE_B));
    assert!((x_jk(&fp, 2, 0, 1) - 1.0 / 3.0).abs() < 1e-12);
    assert!((x_jk(&fp, 2, 1, 1) - 0.75).abs() < 1e-12);
    assert!((extra(&fp, "class1.busy_fraction") - 1.0 / 3.0).abs() < 1e-12);
    assert!((t_of(&fp) - 4.0 / 3.0).abs() < 1e-12);
    assert!((extra(&fp, "c") - 1.5).abs() < 1e-12);
    // Little per class: T_j = 1/mu_j (no waiting), throughput per class-j server mu_j b_j
    assert!((extra(&fp, "class1.mean_response_time") - 1.0 / 3.0).abs() < 1e-12);
    assert!((extra(&fp, "class2.mean_response_time") - 2.0).abs() < 1e-12);
    assert!((extra(&fp, "class2.throughput") - 0.375).abs() < 1e-12);
    assert_eq!(fp.observables.prob_wait, Some(0.0));
}

/// Cases A, B, C: T_SA (= SA-JSQ = SA-JIQ), T_PULL, b_SA, b_PULL (validation/heterogeneous.py;
/// T to 8 decimals, b to 6).
#[test]
fn speed_aware_and_pull_tables() {
    // (lambda, T_SA, T_PULL, b_SA, b_PULL)
    type Row = (f64, f64, f64, [f64; 2], Option<[f64; 2]>);
    let case_a: [Row; 7] = [
        (0.10, 0.62500000, 1.47536856, [0.125, 0.0], Some([0.068309, 0.226765])),
        (0.30, 0.62500000, 1.31692086, [0.375, 0.0], Some([0.236616, 0.553537])),
        (0.50, 0.62500000, 1.19176799, [0.625, 0.0], Some([0.436077, 0.755691])),
        (0.70, 0.62500000, 1.09818047, [0.875, 0.0], Some([0.654182, 0.883270])),
        (0.90, 0.83333333, 1.02830869, [1.0, 0.5], Some([0.883015, 0.967941])),
        (0.95, 0.92105263, 1.01368112, [1.0, 0.75], Some([0.941335, 0.984659])),
        (0.99, 0.98484848, 1.00266447, [1.0, 0.95], Some([0.988241, 0.997034])),
    ];
    let case_b: [Row; 6] = [
        (0.10, 0.33333333, 1.61755198, [0.166667, 0.0], Some([0.038245, 0.192633])),
        (0.30, 0.33333333, 1.48962371, [0.5, 0.0], Some([0.153113, 0.520331])),
        (0.50, 0.33333333, 1.33333333, [0.833333, 0.0], Some([1.0 / 3.0, 0.75])),
        (0.70, 0.57142857, 1.18069328, [1.0, 0.25], Some([0.573515, 0.889728])),
        (0.90, 0.88888889, 1.05324475, [1.0, 0.75], Some([0.852080, 0.971880])),
        (0.99, 0.98989899, 1.00503137, [1.0, 0.975], Some([0.985019, 0.997472])),
    ];
    for (c, rows) in [(&CASE_A, &case_a[..]), (&CASE_B, &case_b[..])] {
        for &(lambda, t_sa, t_pull, b_sa, b_pull) in rows {
            for jsq in [true, false] {
                let fp = solve(&sa(jsq, lambda, c));
                assert!((t_of(&fp) - t_sa).abs() < 1e-8, "SA jsq={jsq} {c:?} {lambda}: {}", t_of(&fp));
                for (j, b) in b_sa.iter().enumerate() {
                    assert!((x_jk(&fp, 2, j, 1) - b).abs() < 1e-6, "SA {c:?} {lambda} class {j}");
                    assert!(x_jk(&fp, 2, j, 2).abs() < 1e-14, "no queues at the SA fixed point");
                }
            }
            let fp = solve(&pull(lambda, c));
            assert!((t_of(&fp) - t_pull).abs() < 1e-8, "PULL {c:?} {lambda}: {}", t_of(&fp));
            for j in 0..2 {
                assert!((x_jk(&fp, 2, j, 1) - b_pull.unwrap()[j]).abs() < 1e-6, "PULL {c:?} {lambda} class {j}");
            }
        }
    }
    // case C: (lambda, T_SA, T_PULL, b_SA)
    let case_c = [
        (0.10, 0.50000000, 1.81191807, [0.166667, 0.0, 0.0]),
        (0.50, 0.50000000, 1.26403517, [0.833333, 0.0, 0.0]),
        (0.70, 0.57142857, 1.13037581, [1.0, 0.333333, 0.0]),
        (0.90, 0.66666667, 1.03697608, [1.0, 1.0, 0.0]),
        (0.95, 0.84210526, 1.01782717, [1.0, 1.0, 0.5]),
        (0.99, 0.96969697, 1.00346649, [1.0, 1.0, 0.9]),
    ];
    for (lambda, t_sa, t_pull, b_sa) in case_c {
        for jsq in [true, false] {
            let fp = solve(&sa(jsq, lambda, &CASE_C_SA));
            assert!((t_of(&fp) - t_sa).abs() < 1e-8, "SA case C {lambda}: {}", t_of(&fp));
            for (j, b) in b_sa.iter().enumerate() {
                assert!((x_jk(&fp, 3, j, 1) - b).abs() < 1e-6, "SA case C {lambda} class {j}");
            }
        }
        let fp = solve(&pull(lambda, &CASE_C_SA));
        assert!((t_of(&fp) - t_pull).abs() < 1e-8, "PULL case C {lambda}: {}", t_of(&fp));
    }
}

/// The SA fixed point solved numerically equals the closed form (fastest-first
/// filling, docs/models/heterogeneous.md), and classes listed slowest first give the same answer (the priority is by speed,
/// not by file order).
#[test]
fn speed_aware_fixed_point_is_independent_of_class_order() {
    let reversed = [CASE_C_SA[2], CASE_C_SA[0], CASE_C_SA[1]];
    for lambda in [0.3, 0.7, 0.95] {
        let a = solve(&sa(true, lambda, &CASE_C_SA));
        let b = solve(&sa(true, lambda, &reversed));
        assert!((t_of(&a) - t_of(&b)).abs() < 1e-12);
        assert!((x_jk(&a, 3, 2, 1) - x_jk(&b, 3, 0, 1)).abs() < 1e-12);
        let m = SpeedAware::jsq(lambda, &classes(&CASE_C_SA), a.x.len() / 3).unwrap();
        let exact = m.analytic_fixed_point().unwrap();
        assert!(a.x.iter().zip(&exact).all(|(u, v)| (u - v).abs() < 1e-12));
    }
}

/// Transient: case A, lambda = 0.9, SA-JIQ from empty: the fast class saturates
/// at t* = 1.37326536 and b_1(0.5) = 0.61950492 (closed form
/// b_1(t) = lambda (1 - e^{-mu_1 t}) / (gamma_1 mu_1); validation/heterogeneous.py).
#[test]
fn speed_aware_transient_from_empty() {
    use mfq_ode::{solve as integrate, SolveOptions};
    for jsq in [true, false] {
        let m = if jsq { SpeedAware::jsq(0.9, &classes(&CASE_A), 4) } else { SpeedAware::jiq(0.9, &classes(&CASE_A), 4) }.unwrap();
        let run = |t_end: f64| {
            let tr = integrate(&m, &[0.0; 8], &SolveOptions { t_end, rtol: 1e-10, atol: 1e-12, ..SolveOptions::default() }).unwrap();
            assert!(tr.status.is_success(), "{:?}", tr.status);
            tr.last().to_vec()
        };
        assert!((run(0.5)[0] - 0.61950492).abs() < 1e-7);
        let before = run(1.37326536 - 1e-3);
        assert!(before[0] < 1.0 && before[0] > 0.998 && before[4] < 1e-12);
        let after = run(3.0);
        assert_eq!(after[0], 1.0, "the fast class is pinned once saturated");
        // then the slow class fills: gamma_2 db_2/dt = lambda - gamma_1 mu_1 - gamma_2 mu_2 b_2 -> b_2 = 0.5
        let late = run(40.0);
        assert!((late[4] - 0.5).abs() < 1e-6, "{late:?}");
    }
}

/// A small independent finite-N simulation (exchangeable servers within a class: counts
/// n_{j,q} suffice), used to check the water-filling drift of SA-JSQ and SA-JIQ from a state
/// with queues, where no closed form is available: `reps` runs of `n` servers.
struct Simulation<'a> {
    /// SA-JSQ (true) or SA-JIQ.
    jsq: bool,
    lambda: f64,
    /// (gamma_j, mu_j)
    classes: &'a [(f64, f64)],
    /// x0[j] = queue lengths, each for an equal share of the class-j servers.
    x0: &'a [Vec<usize>],
    n: usize,
    t_end: f64,
    reps: u64,
    levels: usize,
}

/// Runs the simulation; returns the mean of x_{j,k}(t_end) over the runs (layout of the models).
fn simulate(sim: &Simulation) -> Vec<f64> {
    let Simulation { jsq, lambda, classes: c, x0, n, t_end, reps, levels } = *sim;
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            // splitmix64
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
    }
    let m = c.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| c[b].1.total_cmp(&c[a].1));
    let qmax = 64;
    let mut out = vec![0.0; m * levels];
    for rep in 0..reps {
        let mut rng = Rng(12345 + rep);
        let sizes: Vec<usize> = c.iter().map(|(g, _)| (g * n as f64).round() as usize).collect();
        // counts[j][q] = class-j servers with exactly q jobs; x0[j][i] = jobs of the i-th fraction bucket
        let mut counts = vec![vec![0usize; qmax]; m];
        for j in 0..m {
            let per = sizes[j] / x0[j].len();
            for &q in &x0[j] {
                counts[j][q] += per;
            }
        }
        let mut t = 0.0;
        loop {
            let dep: Vec<f64> = (0..m).map(|j| c[j].1 * (sizes[j] - counts[j][0]) as f64).collect();
            let total = lambda * n as f64 + dep.iter().sum::<f64>();
            t += -(1.0 - rng.next()).ln() / total;
            if t > t_end {
                break;
            }
            let mut u = rng.next() * total;
            if u < lambda * n as f64 {
                // arrival
                let (j, q) = if jsq {
                    let qmin = (0..qmax).find(|&q| (0..m).any(|j| counts[j][q] > 0)).unwrap();
                    (*order.iter().find(|&&j| counts[j][qmin] > 0).unwrap(), qmin)
                } else if let Some(&j) = order.iter().find(|&&j| counts[j][0] > 0) {
                    (j, 0)
                } else {
                    // uniformly random server: walk the (class, queue length) counts
                    let mut v = (rng.next() * n as f64) as usize;
                    let cells = counts.iter().enumerate().flat_map(|(j, row)| row.iter().enumerate().map(move |(q, &c)| (j, q, c)));
                    let mut pick = (0, 0);
                    for (j, q, count) in cells {
                        if v < count {
                            pick = (j, q);
                            break;
                        }
                        v -= count;
                    }
                    pick
                };
                counts[j][q] -= 1;
                counts[j][q + 1] += 1;
            } else {
                u -= lambda * n as f64;
                let mut j = 0;
                while j + 1 < m && u >= dep[j] {
                    u -= dep[j];
                    j += 1;
                }
                let mut v = (rng.next() * (sizes[j] - counts[j][0]) as f64) as usize;
                let mut q = 1;
                while v >= counts[j][q] {
                    v -= counts[j][q];
                    q += 1;
                }
                counts[j][q] -= 1;
                counts[j][q - 1] += 1;
            }
        }
        for j in 0..m {
            for k in 1..=levels {
                let at_least: usize = counts[j][k..].iter().sum();
                out[j * levels + k - 1] += at_least as f64 / sizes[j] as f64 / reps as f64;
            }
        }
    }
    out
}

/// SA-JSQ and SA-JIQ from a state with queues (case A, lambda = 0.9; every fast server with 2
/// jobs, half the slow servers with 1 job and half with 3): the ODE of the model (water-filling
/// over (queue length, speed) buckets) against the finite-N simulation above, N = 200000, two
/// runs, tolerance 0.006. For SA-JSQ the fast class starts exactly on a switching surface (its
/// one-job servers are created as fast as the arrivals left over can refill them), which gives an
/// O(1/sqrt(N)) boundary effect: measured ODE - simulation gaps in x_{1,2} and x_{2,2} of
/// 0.011, 0.0045, 0.0017, 0.0009 at t = 2 for N = 2e4, 8e4, 3.2e5, 1.28e6 (shrinking like
/// 1/sqrt(N)); SA-JIQ agrees to ~1e-3 at every N. A naive indicator ODE (all arrivals to the
/// lowest occupied (level, speed) bucket) would send every arrival to the slow one-job servers
/// at t = 0 (dx_{2,2}/dt = 1.8), while the simulation has x_{2,2} falling.
#[test]
fn speed_aware_dynamics_with_queues_match_a_finite_n_simulation() {
    use mfq_ode::{solve as integrate, SolveOptions};
    let levels = 6;
    let x0_counts = vec![vec![2usize], vec![1usize, 3]];
    let mut x0 = vec![0.0; 2 * levels];
    x0[0] = 1.0;
    x0[1] = 1.0;
    x0[levels] = 1.0;
    x0[levels + 1] = 0.5;
    x0[levels + 2] = 0.5;
    for jsq in [true, false] {
        let m =
            if jsq { SpeedAware::jsq(0.9, &classes(&CASE_A), levels) } else { SpeedAware::jiq(0.9, &classes(&CASE_A), levels) }.unwrap();
        for t_end in [0.5, 2.0] {
            let tr = integrate(&m, &x0, &SolveOptions { t_end, rtol: 1e-9, atol: 1e-12, ..SolveOptions::default() }).unwrap();
            assert!(tr.status.is_success(), "{:?}", tr.status);
            let sim = simulate(&Simulation { jsq, lambda: 0.9, classes: &CASE_A, x0: &x0_counts, n: 200_000, t_end, reps: 2, levels });
            for (i, (a, b)) in tr.last().iter().zip(&sim).enumerate() {
                assert!((a - b).abs() < 0.006, "jsq={jsq} t={t_end} entry {i}: ODE {a} vs simulation {b}\n{:?}\n{sim:?}", tr.last());
            }
        }
    }
}

/// Cases A, B, C (validation/heterogeneous.py: K = 40, or 80 near the threshold; 6 decimals): mean response time of SQ(2), LSC n/C and (n+1)/C with uniform
/// sampling, ties at random. Case C lambda = 0.75 SQ(2) is given as 10.2553 +- 1e-4.
#[test]
fn ps_sq2_tables() {
    // (classes, lambda, [sq2, lsc, lsc-plus-one], tolerance)
    type Row<'a> = (&'a [(f64, f64)], f64, [f64; 3], f64);
    let rows: &[Row] = &[
        (&CASE_A, 0.30, [1.721031, 1.611032, 1.307341], 1e-6),
        (&CASE_A, 0.50, [2.258747, 1.922054, 1.652379], 1e-6),
        (&CASE_A, 0.70, [3.887209, 2.842534, 2.563596], 1e-6),
        (&CASE_A, 0.75, [4.988407, 3.482624, 3.181164], 1e-6),
        (&CASE_B, 0.30, [1.990129, 1.950292, 1.734003], 1e-6),
        (&CASE_B, 0.50, [3.058783, 2.887637, 2.658301], 1e-6),
        (&CASE_C_PS, 0.30, [1.850300, 1.735126, 1.446487], 1e-6),
        (&CASE_C_PS, 0.50, [2.564217, 2.198578, 1.934847], 1e-6),
        (&CASE_C_PS, 0.70, [5.835446, 4.081146, 3.737549], 1e-6),
    ];
    for &(c, lambda, ts, tol) in rows {
        for (rule, t) in [CostRule::Sq2, CostRule::Lsc, CostRule::LscPlusOne].into_iter().zip(ts) {
            let fp = solve(&ps(lambda, c, Sampling::Uniform, rule));
            assert!((t_of(&fp) - t).abs() < tol, "{c:?} {lambda} {rule:?}: {} vs {t}", t_of(&fp));
        }
    }
    let fp = solve(&ps(0.75, &CASE_C_PS, Sampling::Uniform, CostRule::Sq2));
    assert!((t_of(&fp) - 10.2553).abs() < 1e-4, "{}", t_of(&fp));
    for (rule, t) in [(CostRule::Lsc, 6.381400), (CostRule::LscPlusOne, 5.947756)] {
        let fp = solve(&ps(0.75, &CASE_C_PS, Sampling::Uniform, rule));
        assert!((t_of(&fp) - t).abs() < 1e-6, "{rule:?}: {}", t_of(&fp));
    }
}

/// Tail (validation/heterogeneous.py): case A, SQ(2), lambda = 0.7, x_{j,1..9} (4 significant digits).
#[test]
fn ps_sq2_super_exponential_tail() {
    let fast = [6.274e-1, 3.325e-1, 1.448e-1, 4.957e-2, 1.203e-2, 1.656e-3, 8.331e-5, 6.750e-7, 1.690e-10];
    let slow = [9.904e-1, 9.599e-1, 8.824e-1, 7.249e-1, 4.767e-1, 2.024e-1, 3.611e-2, 1.143e-3, 1.144e-6, 1.146e-12];
    let fp = solve(&ps(0.7, &CASE_A, Sampling::Uniform, CostRule::Sq2));
    for (k, v) in fast.iter().enumerate() {
        assert!((x_jk(&fp, 2, 0, k + 1) / v - 1.0).abs() < 1e-3, "fast k={}: {}", k + 1, x_jk(&fp, 2, 0, k + 1));
    }
    for (k, v) in slow.iter().enumerate() {
        assert!((x_jk(&fp, 2, 1, k + 1) / v - 1.0).abs() < 1e-3, "slow k={}: {}", k + 1, x_jk(&fp, 2, 1, k + 1));
    }
    // overall tail = gamma-weighted class tails
    assert!((fp.observables.tail[0] - 0.5 * (x_jk(&fp, 2, 0, 1) + x_jk(&fp, 2, 1, 1))).abs() < 1e-15);
}

/// Stability (derived in docs/models/heterogeneous.md): lambda (sum_S p_j)^2 < sum_S gamma_j C_j for every class set S.
/// Uniform sampling: case A lambda_c = 0.8 (S = {slow}); case B 0.625; case C 0.78125 attained
/// by the two-class set {2, 3} (0.5 / 0.8^2), not by a single class. Beyond the threshold the
/// solver refuses with the failing set and prints no number.
#[test]
fn ps_sq2_stability_thresholds_cover_every_subset() {
    let threshold = |c: &[(f64, f64)]| {
        let m = mfq_model::models::PsSq2::new(0.1, &classes(c), Sampling::Uniform, CostRule::Sq2, 4).unwrap();
        m.stability_threshold()
    };
    assert_eq!(threshold(&CASE_A), (0.8, 0b10));
    assert!((threshold(&CASE_B).0 - 0.625).abs() < 1e-15);
    let (lc, set) = threshold(&CASE_C_PS);
    assert!((lc - 0.78125).abs() < 1e-15);
    assert_eq!(set, 0b110, "the two-class set {{2, 3}}");
    // single classes alone would give min(2.5/0.2, 1/0.3, 0.4/0.5) = 0.8 > 0.78125
    for rule in [CostRule::Sq2, CostRule::Lsc, CostRule::LscPlusOne] {
        let e =
            solve_spec(&ps(0.79, &CASE_C_PS, Sampling::Uniform, rule), &Truncation::default(), &FixedPointOptions::default()).unwrap_err();
        assert!(matches!(e, FixedPointError::Unstable { .. }), "{e}");
        assert!(e.to_string().contains("S = {2, 3}"), "{e}");
        for lambda in [0.8, 0.84, 0.9] {
            let e = solve_spec(&ps(lambda, &CASE_A, Sampling::Uniform, rule), &Truncation::default(), &FixedPointOptions::default())
                .unwrap_err();
            assert!(e.to_string().contains("S = {2}"), "{e}");
        }
        let e = solve_spec(&ps(0.7, &CASE_B, Sampling::Uniform, rule), &Truncation::default(), &FixedPointOptions::default()).unwrap_err();
        assert!(matches!(e, FixedPointError::Unstable { .. }), "{e}");
    }
    // capacity-proportional sampling restores lambda_c = sum gamma_j C_j = 1
    let m = mfq_model::models::PsSq2::new(0.95, &classes(&CASE_A), Sampling::Capacity, CostRule::Sq2, 4).unwrap();
    assert!((m.stability_threshold().0 - 1.0).abs() < 1e-12);
    assert!(matches!(m.stability(), Stability::Stable { .. }));
}

/// Closed form (docs/models/heterogeneous.md): with capacity-proportional sampling and SQ(2) the fixed point is
/// x_{j,k} = rho^(2^k - 1), rho = lambda / sum gamma_j C_j, and T is the homogeneous JSQ(2)
/// value over sum gamma_j C_j: column "SQ2 cap-prop" of case A (= Mitzenmacher's d = 2 values
/// 1.265686, 1.614454, 2.614057; validation/jsq.py). Also checked against the homogeneous JSQ model
/// solved independently.
#[test]
fn capacity_sampling_reproduces_homogeneous_jsq2() {
    for (lambda, t) in [(0.30, 1.090729), (0.50, 1.265686), (0.70, 1.614454), (0.75, 1.758475), (0.90, 2.614057), (0.95, 3.383046)] {
        let fp = solve(&ps(lambda, &CASE_A, Sampling::Capacity, CostRule::Sq2));
        assert!((t_of(&fp) - t).abs() < 1e-6, "{lambda}: {}", t_of(&fp));
        let levels = fp.x.len() / 2;
        for j in 0..2 {
            for k in 1..levels {
                let exact = lambda.powf(2f64.powi(k as i32) - 1.0);
                assert!((x_jk(&fp, 2, j, k) - exact).abs() < 1e-12, "{lambda} class {j} k={k}");
            }
        }
        let homogeneous = solve(&ModelSpec::from(mfq_model::models::JsqSpec { lambda, d: 2 }));
        assert!((t_of(&fp) - t_of(&homogeneous)).abs() < 1e-10);
    }
    // capacity 2 (rho = lambda / 2): T halves
    let c2 = [(0.5, 3.2), (0.5, 0.8)];
    let fp = solve(&ps(1.4, &c2, Sampling::Capacity, CostRule::Sq2));
    assert!((t_of(&fp) - 1.614454 / 2.0).abs() < 1e-6);
}

/// Optimal static routing (square-root rule, docs/models/heterogeneous.md): T_static,opt of
/// cases A, B, C (6 decimals; validation/heterogeneous.py),
/// and an independent closed form of the square-root rule: with the active classes the m
/// fastest, 1/sqrt(theta) = (sum_A gamma C - lambda) / sum_A gamma sqrt(C).
#[test]
fn static_routing_values() {
    type Row<'a> = (&'a [(f64, f64)], f64, f64);
    let rows: &[Row] = &[
        (&CASE_A, 0.30, 1.000000),
        (&CASE_A, 0.50, 1.600000),
        (&CASE_A, 0.70, 2.857143),
        (&CASE_A, 0.75, 3.466667),
        (&CASE_A, 0.90, 8.888889),
        (&CASE_A, 0.95, 17.894737),
        (&CASE_B, 0.30, 0.666667),
        (&CASE_B, 0.50, 1.327673),
        (&CASE_B, 0.70, 2.532945),
        (&CASE_C_PS, 0.30, 0.864911),
        (&CASE_C_PS, 0.50, 1.477893),
        (&CASE_C_PS, 0.70, 2.711778),
        (&CASE_C_PS, 0.75, 3.303858),
    ];
    for &(c, lambda, t) in rows {
        let spec = ModelSpec::from(mfq_model::models::StaticRoutingSpec::new(lambda, classes(c)));
        let fp = solve(&spec);
        assert!((t_of(&fp) - t).abs() < 1e-6, "{c:?} {lambda}: {}", t_of(&fp));
        assert!((extra(&fp, "mean_response_time_untruncated") - t).abs() < 1e-6);
        // independent closed form: try active sets of the m fastest classes
        let mut sorted: Vec<(f64, f64)> = c.to_vec();
        sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut found = None;
        for m in 1..=sorted.len() {
            let act = &sorted[..m];
            let s = (act.iter().map(|(g, cc)| g * cc).sum::<f64>() - lambda) / act.iter().map(|(g, cc)| g * cc.sqrt()).sum::<f64>();
            let rho: Vec<f64> = act.iter().map(|(_, cc)| 1.0 - s / cc.sqrt()).collect();
            let next_idle = m == sorted.len() || s >= sorted[m].1.sqrt();
            if s > 0.0 && rho.iter().all(|r| *r > 0.0) && next_idle {
                found = Some(act.iter().zip(&rho).map(|((g, _), r)| g * r / (1.0 - r)).sum::<f64>() / lambda);
                break;
            }
        }
        let closed = found.expect("an active set");
        assert!((closed - t).abs() < 1e-6, "closed form {closed} vs notes {t}");
        let m = StaticRouting::new(lambda, &classes(c), 4).unwrap();
        assert!((m.mean_response_time().unwrap() - closed).abs() < 1e-12);
    }
    // at lambda = 0.3 in case A all traffic goes to the fast class (rho_slow = 0)
    let m = StaticRouting::new(0.3, &classes(&CASE_A), 4).unwrap();
    assert_eq!(m.loads()[1], 0.0);
}

/// Ordering of the schemes at case A, lambda = 0.7 (values above): SA 0.625 <
/// PULL 1.098 < LSC 2.842534 < static 2.857143 < SQ(2) 3.887209: uniform SQ(2) loses to the best
/// static routing, as the TCNS abstract says dynamic schemes with uniform sampling can.
#[test]
fn uniform_sq2_can_lose_to_static_routing() {
    let t = |spec: ModelSpec| t_of(&solve(&spec));
    let sq2 = t(ps(0.7, &CASE_A, Sampling::Uniform, CostRule::Sq2));
    let lsc = t(ps(0.7, &CASE_A, Sampling::Uniform, CostRule::Lsc));
    let st = t(ModelSpec::from(mfq_model::models::StaticRoutingSpec::new(0.7, classes(&CASE_A))));
    let pl = t(pull(0.7, &CASE_A));
    let s = t(sa(true, 0.7, &CASE_A));
    assert!(s < pl && pl < lsc && lsc < st && st < sq2, "{s} {pl} {lsc} {st} {sq2}");
}

/// Every models/hetero-*.toml parses, solves, and matches its value in the tables above.
#[test]
fn model_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    // (file, T from the tables above)
    let files = [
        ("hetero-sa-jsq-caseA.toml", 0.83333333),
        ("hetero-sa-jiq-caseA.toml", 0.83333333),
        ("hetero-sa-jsq-caseC.toml", 0.57142857),
        ("hetero-pull-caseB.toml", 4.0 / 3.0),
        ("hetero-pull-caseA.toml", 1.02830869),
        ("hetero-ps-sq2-caseA.toml", 3.887209),
        ("hetero-ps-lsc-caseA.toml", 2.842534),
        ("hetero-ps-lsc-plus-one-caseA.toml", 2.563596),
        ("hetero-ps-sq2-capacity-caseA.toml", 2.614057),
        ("hetero-ps-sq2-caseC.toml", 5.835446),
        ("hetero-static-caseA.toml", 2.857143),
    ];
    for (name, t) in files {
        let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let f = ModelFile::parse(&text, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let fp = solve_spec(&f.model, &f.truncation, &FixedPointOptions::default()).unwrap();
        assert!(fp.converged());
        assert!((t_of(&fp) - t).abs() < 1e-6, "{name}: {}", t_of(&fp));
    }
    // a file with a bad fraction sum names model.classes
    let bad = "[model]\nkind = \"pull\"\nlambda = 0.5\n[[model.classes]]\nfraction = 0.5\nspeed = 1\n[[model.classes]]\nfraction = 0.6\nspeed = 2\n";
    let e = ModelFile::parse(bad, &[]).unwrap_err();
    assert!(e.to_string().contains("model.classes = fractions summing to 1.1"), "{e}");
    let bad = "[model]\nkind = \"ps-sq2\"\nlambda = 0.5\nsampling = \"speed\"\n[[model.classes]]\nfraction = 1\nspeed = 1\n";
    let e = ModelFile::parse(bad, &[]).unwrap_err();
    assert!(e.to_string().contains("capacity"), "{e}");
    let bad = "[model]\nkind = \"ps-sq2\"\nlambda = 0.5\nrule = \"sed\"\n[[model.classes]]\nfraction = 1\nspeed = 1\n";
    assert!(ModelFile::parse(bad, &[]).is_err());
    // --set works for lambda
    let text = std::fs::read_to_string(dir.join("hetero-pull-caseB.toml")).unwrap();
    let f = ModelFile::parse(&text, &["lambda=0.3".into()]).unwrap();
    assert_eq!(f.model.lambda(), Some(0.3));
}

/// Beyond capacity the SA, PULL and static models are reported unstable (lambda >= sum gamma mu).
#[test]
fn capacity_condition() {
    for spec in [
        sa(true, 1.0, &CASE_A),
        sa(false, 1.2, &CASE_B),
        pull(1.0, &CASE_C_SA),
        ModelSpec::from(mfq_model::models::StaticRoutingSpec::new(1.0, classes(&CASE_A))),
    ] {
        let e = solve_spec(&spec, &Truncation::default(), &FixedPointOptions::default()).unwrap_err();
        assert!(e.to_string().contains("sum_j gamma_j mu_j"), "{e}");
    }
}

/// Issue 5: the global-attraction checker runs on these models with verdict at least
/// `evidence` (measured: `certified` for each of these, the drifts being cooperative).
#[test]
fn attraction_checker_runs_on_the_heterogeneous_models() {
    use mfq_fixpoint::{check_with_fixed_point, CheckOptions, Verdict};
    let specs = [
        sa(true, 0.9, &CASE_A),
        sa(false, 0.9, &CASE_A),
        pull(0.9, &CASE_A),
        ps(0.7, &CASE_A, Sampling::Uniform, CostRule::Lsc),
        ModelSpec::from(mfq_model::models::StaticRoutingSpec::new(0.7, classes(&CASE_A))),
    ];
    for spec in specs {
        let fp = solve(&spec);
        let model = spec.build(fp.x.len() / 2).unwrap();
        let report = check_with_fixed_point(model.as_ref(), fp, &CheckOptions { starts: 4, ..CheckOptions::default() }).unwrap();
        assert!(matches!(report.verdict, Verdict::Certified { .. } | Verdict::Evidence { .. }), "{}: {:?}", spec.kind(), report.verdict);
    }
}
