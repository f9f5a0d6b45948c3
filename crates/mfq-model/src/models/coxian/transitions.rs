//! [`PhaseTypeQueue`] as a density-dependent population process: the `N` servers each in a
//! state idle or `(n, j)` (`n` jobs, the job in service in phase `j`), and the jumps of the
//! phase-tail state `x_{k,j}` (the fraction of servers with at least `k` jobs whose job in
//! service is in phase `j`) when one server changes state. What the refined mean field, the
//! noise matrix and the exact `N`-server chain (`mfq_sim::exact`) use.
//!
//! The rules are those of the model (T. Hellemans' thesis, eqs. SQd_PH_proof1/2, see
//! [`PhaseTypeQueue`]); per server, with `pi(n, j) = x_{n,j} - x_{n+1,j}` (`x_{K+1,j} = 0`):
//!
//! | event | rate per server | jump of `N x` |
//! |---|---|---|
//! | arrival to an idle server, new job in phase `j` | `lambda (1 - phi(x_1)) alpha_j` | `+1` at `(1, j)` |
//! | arrival to a server `(n - 1, j)`, `n = 2..K` | `lambda D(x_{n-1}, x_n) pi(n - 1, j)` | `+1` at `(n, j)` |
//! | phase change `i -> j` at a server `(n, i)` | `pi(n, i) A_ij` | `-1` at `(k, i)`, `+1` at `(k, j)`, `k = 1..n` |
//! | completion at `(1, i)` | `pi(1, i) nu_i` | `-1` at `(1, i)` |
//! | completion at `(n, i)`, `n >= 2`, next job in phase `j` | `pi(n, i) nu_i alpha_j` | `-1` at `(n, i)`; if `j != i` also `-1` at `(k, i)`, `+1` at `(k, j)`, `k = 1..n-1` |
//!
//! A server that changes phase at queue length `n` leaves the phase-`i` tails at every level
//! `k <= n` and enters the phase-`j` ones: its jump touches `2n` entries. Summing rate times
//! jump gives the drift of [`PhaseTypeQueue`] term by term (the test
//! `transitions_reproduce_the_drift`). JIQ: arrivals are split as its drift splits them
//! (`to_idle alpha_j` to idle servers; on the sliding boundary the excess to random servers),
//! so the sum is its drift there too; its refined terms are refused (not smooth).
//!
//! No allocation per visit: the multi-entry jumps are prefixes of one table per phase pair,
//! built with the model ([`PhaseMoves`]).

use super::{PhaseTypeQueue, Routing};
use crate::{TransitionVisitor, Transitions};

/// For every ordered pair of distinct phases `(i, j)` the list
/// `[(x_{1,i}, -1), (x_{1,j}, +1), (x_{2,i}, -1), (x_{2,j}, +1), ..., (x_{K,j}, +1)]`
/// (`2K` entries, state indices): its first `2n` entries are the jump of a phase change
/// `i -> j` at a server with `n` jobs, its first `2n - 1` the jump of a completion at `(n, i)`
/// whose next job starts in phase `j`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PhaseMoves {
    levels: usize,
    m: usize,
    table: Vec<(usize, f64)>,
}

impl PhaseMoves {
    /// The tables for `levels` = K and `m` phases (`2 K m (m - 1)` entries).
    pub(super) fn new(levels: usize, m: usize) -> Self {
        let mut table = Vec::with_capacity(2 * levels * m * m.saturating_sub(1));
        for i in 0..m {
            for j in (0..m).filter(|&j| j != i) {
                for k in 0..levels {
                    table.push((k * m + i, -1.0));
                    table.push((k * m + j, 1.0));
                }
            }
        }
        PhaseMoves { levels, m, table }
    }

    /// The first `len` entries of the move `i -> j` (`i != j`, `len <= 2K`).
    #[inline]
    fn prefix(&self, i: usize, j: usize, len: usize) -> &[(usize, f64)] {
        // pairs (i, j != i) in order: i (m - 1) + (j - [j > i])
        let pair = i * (self.m - 1) + if j > i { j - 1 } else { j };
        let start = pair * 2 * self.levels;
        &self.table[start..start + len]
    }
}

impl PhaseTypeQueue {
    /// Arrivals of the transitions (see the module docs).
    fn visit_arrivals(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        let alpha = self.size.alpha();
        let lam = self.lambda;
        let (m, kk) = (self.m, self.levels);
        if self.routing == Routing::Jiq {
            let (to_idle, excess) = if self.on_boundary(x) {
                let a = self.emptying_rate(x);
                (a, lam - a)
            } else {
                (lam, 0.0)
            };
            for (j, &aj) in alpha.iter().enumerate().filter(|(_, &a)| a > 0.0) {
                visit(&[(self.at(1, j), 1.0)], to_idle * aj);
            }
            for k in 2..=kk {
                for j in 0..m {
                    visit(&[(self.at(k, j), 1.0)], excess * (self.v(x, k - 1, j) - self.v(x, k, j)));
                }
            }
            return;
        }
        let u1 = self.tail(x, 1);
        let to_idle = lam * (1.0 - self.phi(u1));
        for (j, &aj) in alpha.iter().enumerate().filter(|(_, &a)| a > 0.0) {
            visit(&[(self.at(1, j), 1.0)], to_idle * aj);
        }
        let mut prev = u1;
        for k in 2..=kk {
            let uk = self.tail(x, k);
            let (dd, _, _) = self.divided(prev, uk);
            for j in 0..m {
                visit(&[(self.at(k, j), 1.0)], lam * dd * (self.v(x, k - 1, j) - self.v(x, k, j)));
            }
            prev = uk;
        }
    }
}

impl Transitions for PhaseTypeQueue {
    fn visit(&self, x: &[f64], visit: &mut TransitionVisitor<'_>) {
        self.visit_arrivals(x, visit);
        let (alpha, nu) = (self.size.alpha(), self.size.exit_rates());
        let m = self.m;
        for n in 1..=self.levels {
            for i in 0..m {
                let pi = self.v(x, n, i) - self.v(x, n + 1, i);
                for j in (0..m).filter(|&j| j != i) {
                    let a = self.size.rate(i, j);
                    if a > 0.0 {
                        visit(self.moves.prefix(i, j, 2 * n), pi * a);
                    }
                }
                if nu[i] <= 0.0 {
                    continue;
                }
                if n == 1 {
                    visit(&[(self.at(1, i), -1.0)], pi * nu[i]);
                    continue;
                }
                for (j, &aj) in alpha.iter().enumerate().filter(|(_, &a)| a > 0.0) {
                    let rate = pi * nu[i] * aj;
                    if j == i {
                        visit(&[(self.at(n, i), -1.0)], rate);
                    } else {
                        visit(self.moves.prefix(i, j, 2 * n - 1), rate);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::PhaseTypeQueue;
    use crate::models::phase_type::PhaseType;
    use crate::models::testutil::transitions_drift_error;
    use crate::MeanFieldModel;
    use proptest::prelude::*;

    /// A random feasible phase-tail state with positive mass everywhere (per-server
    /// distribution `pi(k, j) > 0`, idle `> 0`; `x_{k,j} = sum_{k' >= k} pi(k', j)`).
    fn state(seed: &[f64], levels: usize, m: usize) -> Vec<f64> {
        let mut pi: Vec<f64> = (0..levels * m).map(|i| 0.05 + seed[i % seed.len()]).collect();
        let total: f64 = pi.iter().sum::<f64>() + 0.3;
        pi.iter_mut().for_each(|p| *p /= total);
        let mut x = vec![0.0; levels * m];
        for k in (0..levels).rev() {
            for j in 0..m {
                x[k * m + j] = pi[k * m + j] + if k + 1 < levels { x[(k + 1) * m + j] } else { 0.0 };
            }
        }
        x
    }

    /// A general 3-phase law: every phase reachable from every other, two starting phases.
    fn ph3() -> PhaseType {
        PhaseType::new(vec![0.6, 0.0, 0.4], vec![vec![-3.0, 1.0, 0.5], vec![0.2, -0.8, 0.1], vec![0.0, 0.7, -2.0]]).unwrap()
    }

    proptest! {
        /// sum_l rate_l jump_l = drift, at random states, for SQ(d), Pod-LI and JIQ (interior
        /// and sliding boundary) with H2, Erlang-3 and a general 3-phase law.
        #[test]
        fn transitions_reproduce_the_drift(
            lambda in 0.05f64..1.5, d in 1u32..5, eps in 0.0f64..1.0, levels in 1usize..9,
            seed in proptest::collection::vec(0.0f64..1.0, 30)
        ) {
            let laws = [PhaseType::h2_from_moments(1.0, 9.0, 0.3).unwrap(), PhaseType::erlang(3, 1.0).unwrap(), ph3()];
            for law in laws {
                let m = law.phases();
                let x = state(&seed, levels, m);
                let models = [
                    PhaseTypeQueue::jsq(lambda, d, law.clone(), levels).unwrap(),
                    PhaseTypeQueue::pod_li(lambda, d, eps, law.clone(), levels).unwrap(),
                ];
                for model in &models {
                    prop_assert!(transitions_drift_error(model, &x) < 1e-13, "{}", model.name());
                }
                if levels >= 2 {
                    let jiq = PhaseTypeQueue::jiq(lambda, law.clone(), levels).unwrap();
                    prop_assert!(transitions_drift_error(&jiq, &x) < 1e-13);
                    // on the boundary x_1 = 1: scale level 1 up to a total of 1
                    let mut b = x.clone();
                    let u1: f64 = b[..m].iter().sum();
                    b[..m].iter_mut().for_each(|v| *v /= u1);
                    prop_assert!(transitions_drift_error(&jiq, &b) < 1e-13);
                }
            }
        }
    }

    /// The jumps are moves of one server: every multi-entry jump conserves the number of
    /// servers at each level (phase changes) or lowers one level by one (completions), and
    /// no jump at a positive rate takes the empty or a one-job state out of the feasible set.
    #[test]
    fn jumps_move_one_server() {
        let m = PhaseTypeQueue::jsq(0.9, 2, ph3(), 4).unwrap();
        let x = state(&[0.3, 0.7, 0.1, 0.5], 4, 3);
        let mut seen = 0;
        crate::Transitions::visit(&m, &x, &mut |jump, _| {
            seen += 1;
            let total: f64 = jump.iter().map(|j| j.1).sum();
            assert!(total == 1.0 || total == -1.0 || total == 0.0, "{jump:?}");
            let mut per_level = [0.0; 4];
            for &(i, c) in jump {
                per_level[i / 3] += c;
            }
            let nonzero = per_level.iter().filter(|v| **v != 0.0).count();
            assert!(nonzero <= 1, "{jump:?}");
        });
        // arrivals: 2 starting phases + 3 levels x 3 phases; phase changes: 4 levels x 6 pairs
        // with a rate; completions: level 1 x 3, levels 2..4 x 3 phases x 2 starting phases
        let changes = 4 * 5; // five non-zero off-diagonal rates
        assert_eq!(seen, 2 + 9 + changes + 3 + 3 * 3 * 2);
    }
}
