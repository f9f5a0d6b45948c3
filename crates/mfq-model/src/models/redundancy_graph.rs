//! Redundancy on a compatibility graph (kind `redundancy-graph`): job types `c` with Poisson
//! arrival rates `lambda_c`, each replicated to its own fixed set `S_c` of servers (a bipartite
//! compatibility graph), servers of rates `mu_s`, FCFS at every server, cancel-on-completion,
//! i.i.d. exponential copies (docs/models/redundancy-graph.md).
//!
//! Sources: the system is the one of Cardinaels, Borst, van Leeuwaarden, "Heavy-traffic
//! universality of redundancy systems with assignment constraints", Operations Research 72(4)
//! (2024) 1539-1555, arXiv 2005.14566 (first posted as "Redundancy scheduling with locally
//! stable compatibility graphs"); its stationary distribution is the product form of Gardner,
//! Zbarsky, Doroudi, Harchol-Balter, Hyytiä, Scheller-Wolf, "Queueing with redundant requests:
//! exact analysis", Queueing Systems 83 (2016) 227-259 (the limiting distribution of the
//! class-based redundancy system, their main result; written here as re-derived and checked):
//!
//! ```text
//! pi(c_1, ..., c_n) = pi(empty) prod_{i=1..n} lambda_{c_i} / mu(S_{c_1} u ... u S_{c_i})
//! ```
//!
//! over the types of the jobs present in arrival order (oldest first), `mu(T)` the total rate of
//! the servers in `T`. The stationary means are computed here without truncation by a recursion
//! over the reachable unions of server sets ([`ProductForm`]; derivation in the docs page): the
//! jobs that arrive while the union stays `V` form a geometric run of ratio
//! `lambda(V) / mu(V)`, `lambda(V)` the total rate of the types with `S_c` inside `V`.
//!
//! Stability: for every non-empty set `A` of job types, `sum_{c in A} lambda_c < mu(union of
//! S_c, c in A)` ([`Graph::stability`]). It is exactly the condition under which every geometric
//! run above converges, i.e. under which the product form (an invariant measure whatever the
//! rates) has finite mass, so it is necessary and sufficient for positive recurrence
//! (docs/models/redundancy-graph.md).

use crate::finite::{FiniteSystem, Simulation};
use crate::registry::{read_spec, Kind, KindSpec, Param, ParamRange};
use crate::{out_of_range, AnalyticJacobian, Jacobian, MeanFieldModel, ModelError, Observables, Sparsity, Stability, StateLayout};
use std::collections::HashMap;

/// Largest number of servers (server sets are bit masks of a `u64`).
pub const MAX_SERVERS: usize = 64;
/// Largest number of job types.
pub const MAX_TYPES: usize = 4096;
/// The stability condition is checked on every subset of the job types, or of the servers,
/// whichever is smaller: at most `2^MAX_ENUMERATED` subsets.
pub const MAX_ENUMERATED: usize = 20;
/// Largest number of reachable server unions of the product-form recursion, and of
/// `unions * types` (its memory).
pub const MAX_UNIONS: usize = 1 << 18;
const MAX_UNION_WORK: usize = 20_000_000;
/// A set of types whose rate is within this relative distance of its servers' capacity is
/// reported unstable (the critical case is null recurrent at best).
const BOUNDARY_TOL: f64 = 1e-12;

/// One job type: its arrival rate and its servers (1-based indices into `model.mu`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobType {
    /// Poisson arrival rate `lambda_c` (jobs per unit time; with `model.rho` set, a relative
    /// weight).
    pub lambda: f64,
    /// The servers `S_c` that receive a copy of every job of this type, numbered from 1.
    pub servers: Vec<usize>,
}

/// A checked compatibility graph: rates `lambda_c`, server masks `S_c`, server rates `mu_s`.
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    /// Arrival rate of each type.
    pub lambda: Vec<f64>,
    /// Server set of each type, bit `s` for server `s + 1`.
    pub sets: Vec<u64>,
    /// Rate of each server.
    pub mu: Vec<f64>,
}

/// A set of job types whose total rate is not below the capacity of their servers.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The job types (1-based, as in the model file).
    pub types: Vec<usize>,
    /// The union of their servers (1-based).
    pub servers: Vec<usize>,
    /// Their total arrival rate.
    pub rate: f64,
    /// The total rate of their servers.
    pub capacity: f64,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "job types {:?} have total rate {} >= {}, the capacity of their servers {:?} (stable iff every set of types has \
             total rate below the capacity of the union of its servers)",
            self.types, self.rate, self.capacity, self.servers
        )
    }
}

/// 1-based indices of the bits of `mask`.
fn members(mask: u64) -> Vec<usize> {
    (0..64).filter(|s| mask >> s & 1 == 1).map(|s| s + 1).collect()
}

impl Graph {
    /// Checks and builds the graph from the model file's `mu` and `types` (rates used as given).
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.mu` (empty or more than 64 servers),
    /// `model.mu[s]` (not finite or `<= 0`), `model.types` (empty or more than 4096 types),
    /// `model.types[i].lambda` (not finite or `<= 0`), `model.types[i].servers` (empty: a type
    /// with no server), `model.types[i].servers[j]` (not in `1..=len(mu)`, or repeated).
    pub fn new(mu: &[f64], types: &[JobType]) -> Result<Self, ModelError> {
        if mu.is_empty() || mu.len() > MAX_SERVERS {
            return Err(out_of_range("model.mu", format!("a list of {} server rates", mu.len()), "1 to 64 server rates > 0"));
        }
        for (s, m) in mu.iter().enumerate() {
            if !(m.is_finite() && *m > 0.0) {
                return Err(out_of_range(&format!("model.mu[{s}]"), m, "a finite server rate > 0"));
            }
        }
        if types.is_empty() || types.len() > MAX_TYPES {
            return Err(out_of_range(
                "model.types",
                format!("{} job types", types.len()),
                "1 to 4096 [[model.types]] tables (lambda, servers): an empty graph has no jobs",
            ));
        }
        let mut sets = Vec::with_capacity(types.len());
        for (i, t) in types.iter().enumerate() {
            if !(t.lambda.is_finite() && t.lambda > 0.0) {
                return Err(out_of_range(&format!("model.types[{i}].lambda"), t.lambda, "a finite arrival rate > 0"));
            }
            if t.servers.is_empty() {
                return Err(out_of_range(
                    &format!("model.types[{i}].servers"),
                    "[]",
                    &format!("a non-empty list of server numbers in 1..={} (a type with no server is never served)", mu.len()),
                ));
            }
            let mut mask = 0u64;
            for (j, &s) in t.servers.iter().enumerate() {
                let field = format!("model.types[{i}].servers[{j}]");
                if s == 0 || s > mu.len() {
                    return Err(out_of_range(&field, s, &format!("a server number in 1..={} (the entries of model.mu)", mu.len())));
                }
                if mask >> (s - 1) & 1 == 1 {
                    return Err(out_of_range(&field, s, "a server not already listed for this type"));
                }
                mask |= 1 << (s - 1);
            }
            sets.push(mask);
        }
        Ok(Graph { lambda: types.iter().map(|t| t.lambda).collect(), sets, mu: mu.to_vec() })
    }

    /// Total rate `mu(T)` of the servers in `mask`.
    pub fn capacity(&self, mask: u64) -> f64 {
        let mut m = mask;
        let mut total = 0.0;
        while m != 0 {
            total += self.mu[m.trailing_zeros() as usize];
            m &= m - 1;
        }
        total
    }

    /// Union of the server sets of all types.
    pub fn all_servers(&self) -> u64 {
        self.sets.iter().fold(0, |a, s| a | s)
    }

    /// Total arrival rate `lambda`.
    pub fn total_rate(&self) -> f64 {
        self.lambda.iter().sum()
    }

    /// Load `rho = lambda / mu(all servers)` (servers of no type included in the capacity).
    pub fn load(&self) -> f64 {
        self.total_rate() / self.mu.iter().sum::<f64>()
    }

    /// Total rate `lambda(V)` of the types whose servers all lie in `mask`.
    pub fn rate_inside(&self, mask: u64) -> f64 {
        self.sets.iter().zip(&self.lambda).filter(|(s, _)| *s & !mask == 0).map(|(_, l)| l).sum()
    }

    /// The stability condition (the product form has finite mass; docs/models/redundancy-graph.md):
    /// `Ok(())` when every non-empty set `A` of types has
    /// `sum_{c in A} lambda_c < mu(union_{c in A} S_c)`, else the set with the largest ratio of
    /// rate to capacity. Checked by enumerating every subset of the types, or equivalently (the
    /// worst set of types on a server set `T` is all the types inside `T`) every subset of the
    /// servers, whichever is smaller.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.types` when both the types and the servers
    /// number more than 20.
    pub fn stability(&self) -> Result<Result<(), Violation>, ModelError> {
        let (n, k) = (self.lambda.len(), self.mu.len());
        if n.min(k) > MAX_ENUMERATED {
            return Err(out_of_range(
                "model.types",
                format!("{n} job types on {k} servers"),
                "at most 20 job types or at most 20 servers (the stability condition is checked on every subset of the smaller side)",
            ));
        }
        let worst = if n <= k { self.worst_type_set() } else { self.worst_server_set() };
        Ok(match worst {
            Some((types, servers, rate, capacity)) if rate >= capacity * (1.0 - BOUNDARY_TOL) => {
                Err(Violation { types: members(types), servers: members(servers), rate, capacity })
            }
            _ => Ok(()),
        })
    }

    /// Over all non-empty type sets: `(types, servers, rate, capacity)` of the largest ratio.
    fn worst_type_set(&self) -> Option<(u64, u64, f64, f64)> {
        let n = self.lambda.len();
        let mut union = vec![0u64; 1 << n];
        let mut rate = vec![0.0f64; 1 << n];
        let mut worst: Option<(u64, u64, f64, f64)> = None;
        for a in 1usize..1 << n {
            let low = a.trailing_zeros() as usize;
            let rest = a & (a - 1);
            union[a] = union[rest] | self.sets[low];
            rate[a] = rate[rest] + self.lambda[low];
            let cap = self.capacity(union[a]);
            if worst.is_none_or(|(_, _, r, c)| rate[a] * c > r * cap) {
                worst = Some((a as u64, union[a], rate[a], cap));
            }
        }
        worst
    }

    /// Over all server sets holding at least one type's servers: the types inside, the set,
    /// their rate and its capacity, of the largest ratio (subset sums by the zeta transform).
    fn worst_server_set(&self) -> Option<(u64, u64, f64, f64)> {
        let k = self.mu.len();
        let mut inside = vec![0.0f64; 1 << k];
        for (s, l) in self.sets.iter().zip(&self.lambda) {
            inside[*s as usize] += l;
        }
        for bit in 0..k {
            for t in 0..1usize << k {
                if t >> bit & 1 == 1 {
                    inside[t] += inside[t ^ (1 << bit)];
                }
            }
        }
        let mut worst: Option<(u64, f64, f64)> = None;
        for (t, &r) in inside.iter().enumerate().skip(1) {
            if r > 0.0 {
                let cap = self.capacity(t as u64);
                if worst.is_none_or(|(_, wr, wc)| r * wc > wr * cap) {
                    worst = Some((t as u64, r, cap));
                }
            }
        }
        worst.map(|(t, r, c)| {
            let types = self.sets.iter().enumerate().filter(|(_, s)| *s & !t == 0).fold(0u64, |a, (i, _)| a | 1 << i);
            (types, t, r, c)
        })
    }
}

/// Stationary values of the product form (infinite system, no truncation).
#[derive(Debug, Clone, PartialEq)]
pub struct ProductForm {
    /// `E[N_c]`, mean number of jobs of each type in the system.
    pub mean_jobs: Vec<f64>,
    /// `E[T_c] = E[N_c] / lambda_c` (Little's law), mean response time of each type.
    pub mean_response_time: Vec<f64>,
    /// `P(server s busy)`: the probability that a job compatible with `s` is present.
    pub busy: Vec<f64>,
    /// `P(N = 0)`, the probability of an empty system.
    pub prob_empty: f64,
    /// `sum_V mu(V) P(union = V)`: the rate of departures, equal to the total arrival rate in
    /// steady state (a check of the solution; their difference is round-off).
    pub departure_rate: f64,
    /// Number of reachable server unions the recursion visited.
    pub unions: usize,
}

/// The reachable unions of the type sets, from the empty set, in order of increasing size.
fn reachable_unions(g: &Graph) -> Result<Vec<u64>, ModelError> {
    let mut seen: std::collections::HashSet<u64> = std::collections::HashSet::from([0]);
    let mut all = vec![0u64];
    let mut i = 0;
    while i < all.len() {
        let u = all[i];
        for &s in &g.sets {
            let v = u | s;
            if seen.insert(v) {
                all.push(v);
                if all.len() > MAX_UNIONS || all.len() * g.sets.len() > MAX_UNION_WORK {
                    return Err(out_of_range(
                        "model.types",
                        format!("{} job types on {} servers", g.sets.len(), g.mu.len()),
                        "a graph with at most 262144 reachable unions of server sets (and unions times types at most 2e7) for \
                         the exact product form; `mfq simulate` runs larger graphs",
                    ));
                }
            }
        }
        i += 1;
    }
    all.sort_by_key(|m| m.count_ones());
    Ok(all)
}

impl ProductForm {
    /// The stationary means of `graph` (which must satisfy [`Graph::stability`]).
    ///
    /// With `G(V)` the total product-form weight of the job sequences whose servers' union is
    /// `V`, and `H_c(V)` the same weight times the number of type-`c` jobs in the sequence:
    /// `G(empty) = 1`, and for `V` non-empty
    ///
    /// ```text
    /// (mu(V) - lambda(V)) G(V)   = sum_{U < V, c: U | S_c = V} lambda_c G(U)
    /// (mu(V) - lambda(V)) H_c(V) = sum_{U < V, c': U | S_c' = V} lambda_c' H_c(U)
    ///                              + lambda_c sum_{U < V: U | S_c = V} G(U) + lambda_c [S_c in V] G(V)
    /// ```
    ///
    /// (the geometric run of jobs whose servers lie in `V` summed in closed form); then
    /// `P(N = 0) = 1 / sum_V G(V)` and `E[N_c] = sum_V H_c(V) / sum_V G(V)`.
    ///
    /// # Errors
    /// [`ModelError::OutOfRange`] naming `model.types` when the graph has more than 262144
    /// reachable unions (or unions times types above 2e7), or when the graph is unstable.
    pub fn new(g: &Graph) -> Result<Self, ModelError> {
        let unions = reachable_unions(g)?;
        let index: HashMap<u64, usize> = unions.iter().enumerate().map(|(i, &u)| (u, i)).collect();
        let n = g.sets.len();
        let mut gw = vec![0.0f64; unions.len()];
        let mut hw = vec![0.0f64; unions.len() * n];
        gw[0] = 1.0;
        for (i, &v) in unions.iter().enumerate() {
            if i > 0 {
                let slack = g.capacity(v) - g.rate_inside(v);
                if slack <= 0.0 {
                    return Err(out_of_range("model.types", "an unstable graph", "a graph satisfying the stability condition"));
                }
                gw[i] /= slack;
                for (c, s) in g.sets.iter().enumerate() {
                    if s & !v == 0 {
                        hw[i * n + c] += g.lambda[c] * gw[i];
                    }
                }
                hw[i * n..(i + 1) * n].iter_mut().for_each(|h| *h /= slack);
            }
            // push to the strictly larger unions
            for (c, s) in g.sets.iter().enumerate() {
                let w = v | s;
                if w == v {
                    continue;
                }
                let j = index[&w];
                let l = g.lambda[c];
                gw[j] += l * gw[i];
                for k in 0..n {
                    hw[j * n + k] += l * hw[i * n + k];
                }
                hw[j * n + c] += l * gw[i];
            }
        }
        let z: f64 = gw.iter().sum();
        let mean_jobs: Vec<f64> = (0..n).map(|c| (0..unions.len()).map(|i| hw[i * n + c]).sum::<f64>() / z).collect();
        let busy =
            (0..g.mu.len()).map(|s| unions.iter().zip(&gw).filter(|(u, _)| *u >> s & 1 == 1).map(|(_, w)| w).sum::<f64>() / z).collect();
        let departure_rate = unions.iter().zip(&gw).map(|(u, w)| g.capacity(*u) * w).sum::<f64>() / z;
        Ok(ProductForm {
            mean_response_time: mean_jobs.iter().zip(&g.lambda).map(|(m, l)| m / l).collect(),
            mean_jobs,
            busy,
            prob_empty: 1.0 / z,
            departure_rate,
            unions: unions.len(),
        })
    }

    /// The means of the system with room for at most `limit` jobs (an arrival finding `limit`
    /// jobs is lost), from the same product form restricted to `n <= limit` (it satisfies the
    /// partial balance of arrivals and departures, so the truncation keeps it): the weights
    /// `W_i(V)` of the sequences of length `i` with union `V` and their type counts, summed over
    /// `i <= limit`. Returns `E[N_c]` per type. `O(limit * unions * types^2)`: for tests and
    /// small graphs.
    ///
    /// # Errors
    /// As [`ProductForm::new`].
    pub fn truncated_mean_jobs(g: &Graph, limit: usize) -> Result<Vec<f64>, ModelError> {
        let unions = reachable_unions(g)?;
        let index: HashMap<u64, usize> = unions.iter().enumerate().map(|(i, &u)| (u, i)).collect();
        let (n, m) = (g.sets.len(), unions.len());
        let caps: Vec<f64> = unions.iter().map(|&u| g.capacity(u)).collect();
        let mut w = vec![0.0f64; m];
        let mut h = vec![0.0f64; m * n];
        w[0] = 1.0;
        let (mut z, mut sums) = (1.0, vec![0.0f64; n]);
        for _ in 0..limit {
            let (mut w2, mut h2) = (vec![0.0f64; m], vec![0.0f64; m * n]);
            for i in 0..m {
                if w[i] == 0.0 {
                    continue;
                }
                for (c, s) in g.sets.iter().enumerate() {
                    let j = index[&(unions[i] | s)];
                    let f = g.lambda[c] / caps[j];
                    w2[j] += w[i] * f;
                    for k in 0..n {
                        h2[j * n + k] += h[i * n + k] * f;
                    }
                    h2[j * n + c] += w[i] * f;
                }
            }
            (w, h) = (w2, h2);
            z += w.iter().sum::<f64>();
            for (k, s) in sums.iter_mut().enumerate() {
                *s += (0..m).map(|i| h[i * n + k]).sum::<f64>();
            }
        }
        Ok(sums.into_iter().map(|s| s / z).collect())
    }
}

/// The exact stationary solution of a redundancy system on a compatibility graph, as a model:
/// its state is the vector of server busy probabilities `P(server s busy)` (fractions in
/// `[0, 1]`) and its drift the relaxation `x* - x` towards the product form's values (there is
/// no mean-field ODE; `dynamics_note` says so). The answers are data: [`ProductForm`] and the
/// observables' extras (`type{c}.mean_jobs`, `type{c}.mean_response_time`, `mean_jobs`,
/// `scaled_jobs` = `(1 - rho) E[N]`, ...).
///
/// Source: Gardner et al., Queueing Systems 83 (2016) 227-259 (product form); the recursion
/// is derived in docs/models/redundancy-graph.md.
///
/// ```
/// use mfq_model::models::redundancy_graph::{Graph, JobType, RedundancyGraph};
/// use mfq_model::MeanFieldModel;
/// // one type on two unit-rate servers: an M/M/1 queue of rate 2, E[N] = rho / (1 - rho)
/// let g = Graph::new(&[1.0, 1.0], &[JobType { lambda: 1.5, servers: vec![1, 2] }]).unwrap();
/// let m = RedundancyGraph::new(g).unwrap();
/// let pf = m.product_form().unwrap();
/// assert!((pf.mean_jobs[0] - 3.0).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RedundancyGraph {
    graph: Graph,
    verdict: Result<(), Violation>,
    solution: Option<ProductForm>,
}

impl RedundancyGraph {
    /// Checks the stability condition, then (when it holds) computes the product form.
    ///
    /// # Errors
    /// As [`Graph::stability`] and [`ProductForm::new`]. An unstable graph is not an error: its
    /// [`MeanFieldModel::stability`] is `Unstable` naming the violating set.
    pub fn new(graph: Graph) -> Result<Self, ModelError> {
        let verdict = graph.stability()?;
        let solution = match verdict {
            Ok(()) => Some(ProductForm::new(&graph)?),
            Err(_) => None,
        };
        Ok(RedundancyGraph { graph, verdict, solution })
    }

    /// The product form's values (`None` when the graph is unstable).
    pub fn product_form(&self) -> Option<&ProductForm> {
        self.solution.as_ref()
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
}

const DYNAMICS_NOTE: &str = "redundancy-graph is the exact stationary solution (product form) of the finite system, not a \
mean field: its drift is a relaxation towards the servers' busy probabilities, not their dynamics";

impl MeanFieldModel for RedundancyGraph {
    fn name(&self) -> String {
        format!("redundancy on a compatibility graph ({} types, {} servers)", self.graph.sets.len(), self.graph.mu.len())
    }
    fn dim(&self) -> usize {
        self.graph.mu.len()
    }
    fn drift(&self, x: &[f64], dx: &mut [f64]) {
        match &self.solution {
            Some(pf) => dx.iter_mut().zip(x).zip(&pf.busy).for_each(|((d, v), b)| *d = b - v),
            None => dx.iter_mut().for_each(|d| *d = 0.0),
        }
    }
    fn layout(&self) -> StateLayout {
        StateLayout::Named { names: (1..=self.graph.mu.len()).map(|s| format!("busy_{s}")).collect() }
    }
    fn observables(&self, _x: &[f64]) -> Observables {
        let g = &self.graph;
        let servers = g.mu.len() as f64;
        let Some(pf) = &self.solution else {
            return Observables::extras_only(vec![("rho".into(), g.load())]);
        };
        let total: f64 = pf.mean_jobs.iter().sum();
        let lambda = g.total_rate();
        let rho = g.load();
        let mut extras = vec![
            ("mean_jobs".into(), total),
            ("rho".into(), rho),
            ("scaled_jobs".into(), (1.0 - rho) * total),
            ("prob_empty".into(), pf.prob_empty),
            ("departure_rate".into(), pf.departure_rate),
        ];
        for (c, (m, t)) in pf.mean_jobs.iter().zip(&pf.mean_response_time).enumerate() {
            extras.push((format!("type{}.mean_jobs", c + 1), *m));
            extras.push((format!("type{}.mean_response_time", c + 1), *t));
        }
        for (s, b) in pf.busy.iter().enumerate() {
            extras.push((format!("server{}.busy_fraction", s + 1), *b));
        }
        Observables {
            tail: Vec::new(),
            mean_queue_length: Some(total / servers),
            throughput: Some(lambda / servers),
            mean_response_time: Some(total / lambda),
            prob_wait: None,
            loss_probability: 0.0,
            mass_at_truncation: 0.0,
            extras,
        }
    }
    fn stability(&self) -> Stability {
        match &self.verdict {
            Ok(()) => Stability::Stable {
                condition: "every set of job types has total rate below the capacity of the union of its servers".into(),
            },
            Err(v) => Stability::Unstable { reason: v.to_string() },
        }
    }
    fn dynamics_note(&self) -> Option<String> {
        Some(DYNAMICS_NOTE.into())
    }
    fn analytic_fixed_point(&self) -> Option<Vec<f64>> {
        self.solution.as_ref().map(|pf| pf.busy.clone())
    }
    fn analytic_jacobian(&self) -> Option<&dyn AnalyticJacobian> {
        Some(self)
    }
}

impl AnalyticJacobian for RedundancyGraph {
    fn sparsity(&self) -> Sparsity {
        Sparsity::Dense
    }
    fn jacobian(&self, _x: &[f64], jac: &mut Jacobian) {
        for s in 0..self.graph.mu.len() {
            jac.set(s, s, -1.0);
        }
    }
}

/// `kind = "redundancy-graph"` in a model file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedundancyGraphSpec {
    /// Server rates `mu_s`, server `s` at index `s - 1`.
    pub mu: Vec<f64>,
    /// The job types.
    pub types: Vec<JobType>,
    /// When set, the types' `lambda` are relative weights, scaled so that the load
    /// `sum lambda_c / sum mu_s` equals `rho`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho: Option<f64>,
}

impl RedundancyGraphSpec {
    /// The checked graph, with the rates scaled to `rho` when it is set.
    ///
    /// # Errors
    /// As [`Graph::new`], and `model.rho` when it is not in `(0, 1e6]`.
    pub fn graph(&self) -> Result<Graph, ModelError> {
        let mut g = Graph::new(&self.mu, &self.types)?;
        if let Some(rho) = self.rho {
            if !(rho.is_finite() && rho > 0.0 && rho <= 1e6) {
                return Err(out_of_range("model.rho", rho, "a load in (0, 1e6] (the types' lambda are then relative weights)"));
            }
            let scale = rho * g.mu.iter().sum::<f64>() / g.total_rate();
            g.lambda.iter_mut().for_each(|l| *l *= scale);
        }
        Ok(g)
    }
}

/// The `redundancy-graph` kind.
pub static REDUNDANCY_GRAPH: Kind = Kind {
    name: "redundancy-graph",
    title: "Redundancy on a compatibility graph (job types replicated to fixed server sets, FCFS, cancel on completion, exponential copies): stability condition and exact product-form means",
    params: &[
        Param {
            name: "mu",
            meaning: "server rates mu_s (server s is entry s, numbered from 1)",
            unit: "copies completed per unit time",
            allowed: "1 to 64 finite rates > 0",
            default: None,
            range: None,
        },
        Param {
            name: "types",
            meaning: "[[model.types]] tables: lambda (Poisson arrival rate of the type) and servers (the server numbers S_c receiving its copies)",
            unit: "lambda in jobs per unit time",
            allowed: "1 to 4096 types; lambda finite > 0; servers a non-empty list of distinct numbers in 1..=len(mu); the stability check needs at most 20 types or 20 servers",
            default: None,
            range: None,
        },
        Param {
            name: "rho",
            meaning: "load sum lambda_c / sum mu_s; when set, the types' lambda are relative weights scaled to it",
            unit: "",
            allowed: "(0, 1e6]",
            default: Some("none (the lambda as given)"),
            range: Some(ParamRange { min: 0.0, min_inclusive: false, max: Some(1e6), max_inclusive: true, integer: false }),
        },
    ],
    sources: "Cardinaels, Borst, van Leeuwaarden, Heavy-traffic universality of redundancy systems with assignment constraints, Oper. Res. 72(4) (2024), arXiv 2005.14566 (system, heavy traffic); Gardner, Zbarsky, Doroudi, Harchol-Balter, Hyytiä, Scheller-Wolf, Queueing with redundant requests: exact analysis, Queueing Systems 83 (2016) 227-259 (product form, the limiting distribution); recursion over server unions derived here",
    example: "models/redundancy-graph.toml",
    docs: "docs/models/redundancy-graph.md",
    read: read_spec::<RedundancyGraphSpec>,
};

impl KindSpec for RedundancyGraphSpec {
    fn kind(&self) -> &'static Kind {
        &REDUNDANCY_GRAPH
    }
    /// Arrival rate per server, `sum lambda_c / (number of servers)`.
    fn lambda(&self) -> Option<f64> {
        self.graph().ok().map(|g| g.total_rate() / g.mu.len() as f64)
    }
    fn build(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        Ok(Box::new(RedundancyGraph::new(self.graph()?)?))
    }
    /// Checks the graph and that its stability condition can be checked (not the product
    /// form's size: larger graphs are simulated).
    fn validate(&self, _levels: usize) -> Result<(), ModelError> {
        self.graph()?.stability().map(|_| ())
    }
    fn build_probe(&self, _levels: usize) -> Result<Box<dyn MeanFieldModel>, ModelError> {
        let graph = self.graph()?;
        let verdict = graph.stability()?;
        Ok(Box::new(RedundancyGraph { graph, verdict, solution: None }))
    }
    fn dynamics_note(&self) -> Option<String> {
        Some(DYNAMICS_NOTE.into())
    }
    fn initial_levels(&self) -> usize {
        2
    }
    /// The headline numbers are exact values of this finite graph, and its simulation runs the
    /// graph's own servers.
    fn notes(&self) -> Vec<String> {
        vec![format!(
            "exact stationary values of this graph's {} servers (product form, no mean-field limit); `mfq simulate` and \
             `mfq compare` run these {} servers whatever --servers says",
            self.mu.len(),
            self.mu.len()
        )]
    }
    fn simulation(&self) -> Result<Simulation, ModelError> {
        let g = self.graph()?;
        Ok(Simulation::System(FiniteSystem::RedundancyGraph { lambda: g.lambda, sets: g.sets, mu: g.mu }))
    }
}

#[cfg(test)]
mod tests;
