//! The monotone sandwich: cooperativity of the drift in the model's order (tested at random
//! states), order preservation along random ordered pairs, and the runs from the extremal
//! states.

use super::report::{ExtremalRun, Sandwich, StartRun};
use super::{inf_dist, Ctx};
use mfq_model::models::coxian::OrderTables;
use mfq_model::{Jacobian, PartialOrder};
use mfq_ode::{Method, SolveOptions};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

/// Largest `max_i (x_i(t) - y_i(t))` tolerated for an ordered pair `x(0) <= y(0)`
/// (integration error at `rtol = 1e-10`).
pub const ORDER_TOL: f64 = 1e-8;
/// Checkpoints (model time) at which ordered pairs are compared (those `<= time_limit`).
pub const ORDER_CHECKPOINTS: [f64; 7] = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0];

/// Cooperativity at the sampled states.
struct Coop {
    samples: usize,
    violations: usize,
    max_violation: f64,
    worst: Option<(usize, usize)>,
    relative_threshold: f64,
}

/// Order preservation over the ordered pairs.
struct OrderCheck {
    violations: usize,
    max_excess: f64,
    failed: usize,
    checkpoints: Vec<f64>,
}

impl Ctx<'_> {
    /// The sandwich test, when the model claims an order (`None` otherwise): cooperativity at
    /// `cooperativity_samples` random states plus `x_star`, order preservation along
    /// `order_pairs` ordered pairs (both drawn from the seed's second stream), and the
    /// extremal runs among `runs` (end states `ends`) against the reference equilibrium.
    /// Notes on violations.
    pub(super) fn sandwich(
        &self,
        x_star: &[f64],
        runs: &[StartRun],
        ends: &[Vec<f64>],
        reference: Option<usize>,
        notes: &mut Vec<String>,
    ) -> Option<Sandwich> {
        let (model, opts) = (self.model, self.opts);
        let order = model.order()?;
        let mut srng = Xoshiro256PlusPlus::seed_from_u64(opts.seed ^ 0x9E37_79B9_7F4A_7C15);
        let mut samples: Vec<Vec<f64>> = (0..opts.cooperativity_samples)
            .map(|_| {
                let mut x = self.random_state(&mut srng);
                model.project(&mut x);
                x
            })
            .collect();
        if opts.cooperativity_samples > 0 {
            samples.push(x_star.to_vec());
        }
        // the up-sets and moves of a phase order, built once (not per sample, pair or checkpoint)
        let tables = (order != PartialOrder::Componentwise).then(|| order.tables(model.dim()));
        let coop = self.cooperativity(order, tables.as_ref(), &samples);
        // (past the deadline no more pairs are drawn: the verdict is TimeLimit anyway)
        let pairs: Vec<(Vec<f64>, Vec<f64>)> = (0..opts.order_pairs)
            .map_while(|_| (!self.deadline.expired()).then(|| self.ordered_pair(order, tables.as_ref(), &mut srng)))
            .collect();
        let ord = self.order_preservation(order, tables.as_ref(), &pairs);
        let extremal: Vec<ExtremalRun> = runs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.extremal)
            .map(|(i, r)| ExtremalRun {
                name: r.label.clone(),
                run: i,
                settled: r.settled,
                t_reached: r.t_reached,
                end_distance: inf_dist(&ends[i], x_star),
                equilibrium: r.equilibrium,
            })
            .collect();
        let bounds_meet_at_reference =
            !extremal.is_empty() && reference.is_some() && extremal.iter().all(|e| e.settled && e.equilibrium == reference);
        let cooperative = coop.samples > 0 && coop.violations == 0 && ord.violations == 0;
        if coop.violations > 0 {
            notes.push(format!(
                "cooperativity fails: {} of {} sampled states have a negative off-diagonal Jacobian entry (worst {:.3e} at {:?})",
                coop.violations, coop.samples, -coop.max_violation, coop.worst
            ));
        }
        if ord.violations > 0 {
            notes.push(format!(
                "order preservation fails for {} of {} pairs (max excess {:.3e})",
                ord.violations, opts.order_pairs, ord.max_excess
            ));
        }
        Some(Sandwich {
            order,
            jacobian_samples: coop.samples,
            jacobian_violations: coop.violations,
            max_violation: coop.max_violation,
            worst_entry: coop.worst,
            relative_threshold: coop.relative_threshold,
            order_pairs: opts.order_pairs,
            order_violations: ord.violations,
            max_order_excess: ord.max_excess,
            order_pairs_failed: ord.failed,
            checkpoints: ord.checkpoints,
            cooperative,
            extremal,
            bounds_meet_at_reference,
        })
    }

    /// Cooperativity in `order` at every sample (in parallel): for `Componentwise` the sign of
    /// the off-diagonal Jacobian entries (Kamke's condition, a scan of the band); for the other
    /// orders the cross-positivity of the Jacobian on the order's cone
    /// ([`PartialOrder::cooperativity`]).
    fn cooperativity(&self, order: PartialOrder, tables: Option<&OrderTables>, samples: &[Vec<f64>]) -> Coop {
        let model = self.model;
        let n = model.dim();
        let relative_threshold = if model.has_analytic_jacobian() { 1e-12 } else { 1e-6 };
        // per sample: (violated, largest violation, where)
        type Sample = (bool, f64, Option<(usize, usize)>);
        let per: Vec<Sample> = samples
            .par_iter()
            .map(|x| {
                // past the deadline the verdict is TimeLimit whatever the samples say
                if self.deadline.expired() {
                    return (false, 0.0, None);
                }
                let mut jac = Jacobian::new(n, model.sparsity());
                model.jacobian(x, &mut jac);
                let (mut scale, mut worst, mut at) = (1.0f64, 0.0f64, None);
                match order {
                    PartialOrder::Componentwise => {
                        for i in 0..n {
                            let (lo, hi) = jac.row_range(i);
                            for j in lo..hi {
                                let v = jac.get(i, j);
                                scale = scale.max(v.abs());
                                if i != j && -v > worst {
                                    worst = -v;
                                    at = Some((i, j));
                                }
                            }
                        }
                    }
                    other => {
                        let built;
                        let tables = match tables {
                            Some(t) => t,
                            None => {
                                built = other.tables(n);
                                &built
                            }
                        };
                        // checked before each generator: a large staircase order takes seconds per sample
                        let Some(c) = other.cooperativity_with(tables, &jac, &|| self.deadline.expired()) else {
                            return (false, 0.0, None);
                        };
                        scale = scale.max(c.scale);
                        if c.min.is_finite() && -c.min > 0.0 {
                            worst = -c.min;
                            at = Some((c.upset, c.generator));
                        }
                    }
                }
                (worst > relative_threshold * scale, worst, at)
            })
            .collect();
        let violations = per.iter().filter(|p| p.0).count();
        let (max_violation, worst) = per.iter().fold((0.0, None), |acc, p| if p.1 > acc.0 { (p.1, p.2) } else { acc });
        Coop { samples: samples.len(), violations, max_violation, worst, relative_threshold }
    }

    /// A random ordered pair `x <= y` in `order`: for `Componentwise` the entrywise min and
    /// max of two random feasible states; otherwise a random feasible `x` and `y` obtained from
    /// it by moving random fractions of servers up along random generators of the order's cone
    /// ([`PartialOrder::push_up`]).
    fn ordered_pair(&self, order: PartialOrder, tables: Option<&OrderTables>, rng: &mut Xoshiro256PlusPlus) -> (Vec<f64>, Vec<f64>) {
        let mut a = self.random_state(rng);
        self.model.project(&mut a);
        match order {
            PartialOrder::Componentwise => {
                let mut b = self.random_state(rng);
                self.model.project(&mut b);
                let lo: Vec<f64> = a.iter().zip(&b).map(|(u, v)| u.min(*v)).collect();
                let hi: Vec<f64> = a.iter().zip(&b).map(|(u, v)| u.max(*v)).collect();
                (lo, hi)
            }
            other => {
                let built;
                let tables = match tables {
                    Some(t) => t,
                    None => {
                        built = other.tables(a.len());
                        &built
                    }
                };
                let generators = tables.generators();
                let mut hi = a.clone();
                if generators > 0 {
                    for _ in 0..(4 + generators / 4).min(64) {
                        let g = rng.random_range(0..generators);
                        other.push_up_with(tables, &mut hi, g, rng.random());
                    }
                }
                (a, hi)
            }
        }
    }

    /// Integrates each ordered pair over the checkpoints and measures how far the order breaks:
    /// `max_i (x_i - y_i)` for `Componentwise`, `-min_U Phi_U(y - x)` ([`PartialOrder::order_gap`])
    /// otherwise (`<= 0` while `x <= y`).
    fn order_preservation(&self, order: PartialOrder, tables: Option<&OrderTables>, pairs: &[(Vec<f64>, Vec<f64>)]) -> OrderCheck {
        let tl = self.opts.time_limit;
        let mut checkpoints: Vec<f64> = ORDER_CHECKPOINTS.iter().copied().filter(|t| *t <= tl).collect();
        if checkpoints.is_empty() {
            checkpoints.push(tl);
        }
        let excess = |lo: &[f64], hi: &[f64]| match order {
            PartialOrder::Componentwise => lo.iter().zip(hi).map(|(a, b)| a - b).fold(f64::NEG_INFINITY, f64::max),
            other => -tables.map_or_else(|| other.order_gap(lo, hi), |t| PartialOrder::order_gap_with(t, lo, hi)),
        };
        let per: Vec<(f64, bool)> = pairs
            .par_iter()
            .map(|(lo0, hi0)| {
                let (mut lo, mut hi) = (lo0.clone(), hi0.clone());
                let mut worst = excess(&lo, &hi);
                let mut t = 0.0;
                for &c in &checkpoints {
                    let so = SolveOptions {
                        t_end: c - t,
                        rtol: 1e-10,
                        atol: 1e-14,
                        method: Method::Auto,
                        max_steps: 200_000,
                        steady_tol: None,
                        record_steps: false,
                        // the job's deadline is passed to solve_within
                        deadline: None,
                    };
                    match (
                        mfq_ode::solve_within(self.model, &lo, &so, &self.deadline),
                        mfq_ode::solve_within(self.model, &hi, &so, &self.deadline),
                    ) {
                        (Ok(a), Ok(b)) if a.status.is_success() && b.status.is_success() => {
                            lo.copy_from_slice(a.last());
                            hi.copy_from_slice(b.last());
                        }
                        _ => return (worst, true),
                    }
                    worst = worst.max(excess(&lo, &hi));
                    t = c;
                }
                (worst, false)
            })
            .collect();
        OrderCheck {
            violations: per.iter().filter(|p| !p.1 && p.0 > ORDER_TOL).count(),
            max_excess: per.iter().filter(|p| !p.1).map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
            failed: per.iter().filter(|p| p.1).count(),
            checkpoints,
        }
    }
}
