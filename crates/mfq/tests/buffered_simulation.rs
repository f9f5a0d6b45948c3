//! The event-driven simulators with a finite buffer (`truncation.buffer = true`: an arrival
//! whose chosen server holds `K` jobs is lost) against the exact stationary law of the same
//! small `N`-server system, for the families whose buffer had no such check: JSQ(3), Pod with
//! load-dependent errors, Pod-LI with H2 sizes, PS-LSC, PS-LSC+1 and SQ(2) with
//! capacity-proportional sampling on PS servers (exact chains of the models' transitions,
//! `Model::exact`), and JIQ, JIQ with H2 sizes, SA-JSQ, SA-JIQ and PULL, which have no
//! transitions: their chains are written here from the systems' rules (docs/models/jiq.md,
//! docs/models/heterogeneous.md), over the counts of servers of each (class, jobs, phase).
//!
//! At finite `N` nothing is approximated, so every comparison is
//! `|estimate - exact| <= half_width_at(1 - 0.01/m)` (Student-t interval, Bonferroni over the
//! `m` comparisons of one model, family-wise error 1%), with no allowance. Seed 1 throughout,
//! fixed before any run.

use std::collections::HashMap;
use std::path::PathBuf;

use mfq::{ExactOptions, Model, SimOptions, SimReport};
use nalgebra::{DMatrix, DVector};

/// The bundled model file `name` with `overrides` (`key=value`).
fn bundled(name: &str, overrides: &[&str]) -> Model {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models").join(name);
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Model::from_file(&path, &o).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `servers` servers, buffer 3: 4 replications of 2e5 time units after a warm-up of 100, 20
/// batches each (batches of 1e4 time units, far longer than the chains' relaxation times).
fn sim(m: &Model, servers: usize) -> SimReport {
    let opts =
        SimOptions { servers, time: 2e5, warmup: 100.0, replications: 4, batches: 20, seed: 1, buffer: Some(3), ..Default::default() };
    m.simulate(&opts).unwrap_or_else(|e| panic!("{e}"))
}

/// The exact values of a system: `(name, value)`, names as in [`SimReport`] (`x_k` for the
/// tail `P(Q >= k)` over all servers, `L`, `loss`, `P(wait)`, `throughput`) and its extras.
type Exact = Vec<(String, f64)>;

/// Compares every exact value with the simulation's estimate of the same name, all at once
/// (Bonferroni, family-wise 99%), printing a table (`--nocapture`); panics listing the
/// failures. An exact value whose estimate the report lacks is an error too.
fn assert_agree(title: &str, r: &SimReport, exact: &Exact) {
    let est = |name: &str| match name {
        "L" => r.mean_queue_length,
        "loss" => r.loss_probability,
        "P(wait)" => r.prob_wait,
        "throughput" => r.throughput,
        _ => match name.strip_prefix("x_") {
            Some(k) => r.tail.get(k.parse::<usize>().unwrap() - 1).copied(),
            None => r.extras.get(name).copied(),
        },
    };
    let conf = 1.0 - 0.01 / exact.len() as f64;
    println!("== {title}: {} events", r.events);
    let mut failures = Vec::new();
    for (name, want) in exact {
        let Some(e) = est(name) else {
            failures.push(format!("{name}: not in the simulation's report"));
            continue;
        };
        let hw = e.half_width_at(conf);
        let ok = (e.mean - want).abs() <= hw;
        println!("  {name:<28} sim {:>11.7} +- {hw:>9.7}  exact {want:>11.7}  {}", e.mean, if ok { "ok" } else { "FAIL" });
        if !ok {
            failures.push(format!("{name}: sim {} +- {hw} vs exact {want}", e.mean));
        }
    }
    assert!(failures.is_empty(), "{title}: {failures:#?}");
}

/// The exact chain of `m`'s transitions at `servers` servers (the file's buffer), as [`Exact`]:
/// the tail, `L`, loss, `P(wait)`, throughput and the extras named in `extras`.
fn exact_of_transitions(m: &Model, servers: usize, extras: &[&str]) -> Exact {
    let e = m.exact(&ExactOptions { servers, ..Default::default() }).unwrap_or_else(|e| panic!("{e}"));
    assert!(e.residual < 1e-12, "residual {}", e.residual);
    let o = &e.observables;
    let mut v: Exact = o.tail.iter().enumerate().map(|(k, &x)| (format!("x_{}", k + 1), x)).collect();
    v.push(("L".into(), o.mean_queue_length.unwrap()));
    v.push(("loss".into(), o.loss_probability));
    v.push(("P(wait)".into(), o.prob_wait.unwrap()));
    v.push(("throughput".into(), o.throughput.unwrap()));
    let extra = |name: &str| o.extras.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no extra {name} in {:?}", o.extras)).1;
    for name in extras {
        v.push((name.to_string(), extra(name)));
    }
    if extras.contains(&"class1.busy_fraction") {
        // the class extras are the means of the class tails x_{j,k} = mean[j K + k - 1] (they
        // were matched by position, and a state omitting a class's response time shifted the
        // rest: class2.busy_fraction came out 0.8919 for E[x_{2,1}] = 0.8778), the response
        // time is Little's and the shares sum to 1
        let k = o.tail.len();
        let mut share = 0.0;
        for j in 0..2 {
            let c = |what: &str| extra(&format!("class{}.{what}", j + 1));
            let tails = &e.mean[j * k..(j + 1) * k];
            assert!((c("busy_fraction") - tails[0]).abs() < 1e-12, "class {j}: {} vs {}", c("busy_fraction"), tails[0]);
            assert!((c("mean_queue_length") - tails.iter().sum::<f64>()).abs() < 1e-12);
            assert!((c("mean_response_time") - c("mean_queue_length") / c("throughput")).abs() < 1e-12);
            share += c("share_of_jobs");
        }
        assert!((share - 1.0).abs() < 1e-12, "shares of jobs sum to {share}");
    }
    v
}

/// Extras of a two-class model that both the simulation and the exact chain report.
const CLASS_EXTRAS: [&str; 8] = [
    "class1.busy_fraction",
    "class1.mean_queue_length",
    "class1.throughput",
    "class1.mean_response_time",
    "class2.busy_fraction",
    "class2.mean_queue_length",
    "class2.throughput",
    "class2.mean_response_time",
];

/// JSQ(3), Pod-LD, Pod-LI H2 (4 servers) and PS-LSC, PS-LSC+1, capacity-proportional SQ(2)
/// (case A: two servers of capacity 1.6, two of 0.4), buffer 3, against the exact chains of
/// their transitions.
#[test]
fn buffered_simulators_match_the_exact_chains_of_the_transitions() {
    let buffer = ["truncation.levels=3", "truncation.buffer=true"];
    for (file, extras) in [
        ("jsq-d3.toml", &[][..]),
        ("pod-errors-ld.toml", &[][..]),
        ("pod-li-h2.toml", &[][..]),
        ("hetero-ps-lsc-caseA.toml", &CLASS_EXTRAS[..]),
        ("hetero-ps-lsc-plus-one-caseA.toml", &CLASS_EXTRAS[..]),
        ("hetero-ps-sq2-capacity-caseA.toml", &CLASS_EXTRAS[..]),
    ] {
        let m = bundled(file, &buffer);
        let exact = exact_of_transitions(&m, 4, extras);
        assert_agree(file, &sim(&m, 4), &exact);
    }
}

/// A dispatcher: from the counts of servers in each state, the probabilities of the state
/// of the server an arrival is sent to (`(probability, index into RulesSystem::states)`).
type Dispatch = fn(&RulesSystem, &[usize]) -> Vec<(f64, usize)>;

/// A server's state in a chain written from the rules: its class, its number of jobs `q` and
/// the phase of the job in service (0 when idle).
#[derive(Debug, Clone, Copy, PartialEq)]
struct ServerState {
    class: usize,
    q: usize,
    phase: usize,
}

/// A system of `N` FCFS servers with buffer `buffer`, Poisson arrivals at rate `N lambda`,
/// classes of `servers[c]` servers of speed `speed[c]`, job sizes of a hyperexponential law
/// (phase `i` taken with probability `phases[i].0`, size rate `phases[i].1`: a job in phase
/// `i` at a server of speed `mu` completes at rate `mu phases[i].1`), and a dispatcher
/// `dispatch(system, counts)`: the probabilities of the server state the arrival's chosen
/// server is in (`(probability, index into states)`; a chosen server with `buffer` jobs loses
/// the arrival).
struct RulesSystem {
    lambda: f64,
    buffer: usize,
    servers: Vec<usize>,
    speed: Vec<f64>,
    phases: Vec<(f64, f64)>,
    states: Vec<ServerState>,
    dispatch: Dispatch,
}

impl RulesSystem {
    fn new(lambda: f64, servers: Vec<usize>, speed: Vec<f64>, phases: Vec<(f64, f64)>, dispatch: Dispatch) -> Self {
        let buffer = 3;
        let mut states = Vec::new();
        for class in 0..servers.len() {
            states.push(ServerState { class, q: 0, phase: 0 });
            for q in 1..=buffer {
                for phase in 1..=phases.len() {
                    states.push(ServerState { class, q, phase });
                }
            }
        }
        RulesSystem { lambda, buffer, servers, speed, phases, states, dispatch }
    }

    fn index(&self, s: ServerState) -> usize {
        self.states.iter().position(|&t| t == s).unwrap()
    }

    /// Classes ranked by decreasing speed, equal speeds in file order.
    fn by_speed(&self) -> Vec<usize> {
        let mut c: Vec<usize> = (0..self.servers.len()).collect();
        c.sort_by(|&a, &b| self.speed[b].total_cmp(&self.speed[a]));
        c
    }

    /// Uniform over the servers whose states satisfy `pick`, `None` when there is none.
    fn uniform(&self, counts: &[usize], pick: impl Fn(&ServerState) -> bool) -> Option<Vec<(f64, usize)>> {
        let total: usize = (0..counts.len()).filter(|&i| pick(&self.states[i])).map(|i| counts[i]).sum();
        (total > 0).then(|| {
            (0..counts.len()).filter(|&i| pick(&self.states[i]) && counts[i] > 0).map(|i| (counts[i] as f64 / total as f64, i)).collect()
        })
    }

    /// The transitions out of `counts`: `(rate, next counts)`.
    fn transitions(&self, counts: &[usize]) -> Vec<(f64, Vec<usize>)> {
        let n: usize = self.servers.iter().sum();
        let mut out = Vec::new();
        let moved = |from: usize, to: usize| {
            let mut c = counts.to_vec();
            c[from] -= 1;
            c[to] += 1;
            c
        };
        for (p, i) in (self.dispatch)(self, counts) {
            let s = self.states[i];
            if s.q == self.buffer {
                continue; // lost
            }
            let rate = n as f64 * self.lambda * p;
            if s.q == 0 {
                for (ph, &(start, _)) in self.phases.iter().enumerate() {
                    out.push((rate * start, moved(i, self.index(ServerState { q: 1, phase: ph + 1, ..s }))));
                }
            } else {
                out.push((rate, moved(i, self.index(ServerState { q: s.q + 1, ..s }))));
            }
        }
        for (i, s) in self.states.iter().enumerate() {
            if s.q == 0 || counts[i] == 0 {
                continue;
            }
            let rate = counts[i] as f64 * self.speed[s.class] * self.phases[s.phase - 1].1;
            if s.q == 1 {
                out.push((rate, moved(i, self.index(ServerState { q: 0, phase: 0, ..*s }))));
            } else {
                for (ph, &(start, _)) in self.phases.iter().enumerate() {
                    out.push((rate * start, moved(i, self.index(ServerState { q: s.q - 1, phase: ph + 1, ..*s }))));
                }
            }
        }
        out
    }

    /// The stationary law (every state reachable from the empty one; a dense solve of
    /// `pi Q = 0`, `sum pi = 1`) and from it the [`Exact`] values: the tail, `L`, loss
    /// (PASTA: the dispatch probability of a full server), `P(wait)` (of a server with `1..K-1`
    /// jobs), throughput, and per class (two or more classes) the busy fraction, mean queue
    /// length and throughput per server of the class and its mean response time (Little).
    fn exact(&self) -> Exact {
        let mut empty = vec![0; self.states.len()];
        for (c, &n) in self.servers.iter().enumerate() {
            empty[self.index(ServerState { class: c, q: 0, phase: 0 })] = n;
        }
        let (mut all, mut index) = (vec![empty.clone()], HashMap::from([(empty, 0usize)]));
        let mut edges = Vec::new();
        let mut next = 0;
        while next < all.len() {
            for (rate, to) in self.transitions(&all[next].clone()) {
                let j = *index.entry(to.clone()).or_insert_with(|| {
                    all.push(to);
                    all.len() - 1
                });
                edges.push((next, j, rate));
            }
            next += 1;
        }
        let m = all.len();
        // rows: the balance equations (Q^T pi = 0), the last replaced by sum pi = 1
        let mut a = DMatrix::<f64>::zeros(m, m);
        for &(i, j, r) in &edges {
            a[(j, i)] += r;
            a[(i, i)] -= r;
        }
        a.row_mut(m - 1).fill(1.0);
        let mut b = DVector::<f64>::zeros(m);
        b[m - 1] = 1.0;
        let pi = a.lu().solve(&b).expect("a regular generator");
        let n: usize = self.servers.iter().sum();
        let (mut tail, mut loss, mut wait) = (vec![0.0; self.buffer], 0.0, 0.0);
        let classes = self.servers.len();
        let (mut busy, mut jobs) = (vec![0.0; classes], vec![0.0; classes]);
        for (c, &p) in all.iter().zip(pi.iter()) {
            for (i, s) in self.states.iter().enumerate() {
                for t in tail.iter_mut().take(s.q) {
                    *t += p * c[i] as f64 / n as f64;
                }
                busy[s.class] += p * if s.q > 0 { c[i] as f64 } else { 0.0 };
                jobs[s.class] += p * (s.q * c[i]) as f64;
            }
            for (d, i) in (self.dispatch)(self, c) {
                match self.states[i].q {
                    q if q == self.buffer => loss += p * d,
                    0 => {}
                    _ => wait += p * d,
                }
            }
        }
        let mut v: Exact = tail.iter().enumerate().map(|(k, &x)| (format!("x_{}", k + 1), x)).collect();
        v.push(("L".into(), tail.iter().sum()));
        v.push(("loss".into(), loss));
        v.push(("P(wait)".into(), wait));
        v.push(("throughput".into(), self.lambda * (1.0 - loss)));
        if classes > 1 {
            for c in 0..classes {
                let (b, l) = (busy[c] / self.servers[c] as f64, jobs[c] / self.servers[c] as f64);
                let theta = self.speed[c] * b;
                v.push((format!("class{}.busy_fraction", c + 1), b));
                v.push((format!("class{}.mean_queue_length", c + 1), l));
                v.push((format!("class{}.throughput", c + 1), theta));
                v.push((format!("class{}.mean_response_time", c + 1), l / theta));
            }
        }
        v
    }
}

/// JIQ (docs/models/jiq.md) and PULL (docs/models/heterogeneous.md): an idle server chosen
/// uniformly among all idle servers, else a server chosen uniformly among all.
fn idle_else_random(s: &RulesSystem, counts: &[usize]) -> Vec<(f64, usize)> {
    s.uniform(counts, |t| t.q == 0).or_else(|| s.uniform(counts, |_| true)).unwrap()
}

/// SA-JIQ: an idle server of the fastest class that has one (uniform within it), else a
/// server chosen uniformly among all.
fn sa_jiq(s: &RulesSystem, counts: &[usize]) -> Vec<(f64, usize)> {
    s.by_speed().into_iter().find_map(|c| s.uniform(counts, |t| t.q == 0 && t.class == c)).or_else(|| s.uniform(counts, |_| true)).unwrap()
}

/// SA-JSQ: a shortest queue; among the shortest, one in the fastest class (uniform within it).
fn sa_jsq(s: &RulesSystem, counts: &[usize]) -> Vec<(f64, usize)> {
    let shortest = (0..counts.len()).filter(|&i| counts[i] > 0).map(|i| s.states[i].q).min().unwrap();
    s.by_speed().into_iter().find_map(|c| s.uniform(counts, |t| t.q == shortest && t.class == c)).unwrap()
}

/// JIQ with exponential sizes (4 servers) and with H2 sizes (3 servers; mean 1, SCV 9, the
/// balanced-means H2 of models/jiq-h2.toml: p = (1 + sqrt(0.8))/2, rates 2p and 2(1 - p)),
/// buffer 3, against chains written from the JIQ rules.
#[test]
fn buffered_jiq_matches_the_chain_of_its_rules() {
    let m = bundled("jiq.toml", &["truncation.levels=3", "truncation.buffer=true"]);
    let exact = RulesSystem::new(0.9, vec![4], vec![1.0], vec![(1.0, 1.0)], idle_else_random).exact();
    assert_agree("JIQ, N = 4", &sim(&m, 4), &exact);

    let p = (1.0 + 0.8f64.sqrt()) / 2.0;
    let h2 = vec![(p, 2.0 * p), (1.0 - p, 2.0 * (1.0 - p))];
    let mean: f64 = h2.iter().map(|(q, r)| q / r).sum();
    let second: f64 = h2.iter().map(|(q, r)| 2.0 * q / (r * r)).sum();
    assert!((mean - 1.0).abs() < 1e-12 && (second - 1.0 - 9.0).abs() < 1e-9, "H2 mean {mean}, E[S^2] {second}");
    let m = bundled("jiq-h2.toml", &["truncation.levels=3", "truncation.buffer=true"]);
    let exact = RulesSystem::new(0.9, vec![3], vec![1.0], h2, idle_else_random).exact();
    assert_agree("JIQ H2, N = 3", &sim(&m, 3), &exact);
}

/// SA-JSQ, SA-JIQ and PULL on case A (two servers of speed 1.6, two of 0.4), lambda = 0.9,
/// buffer 3, against chains written from their rules.
#[test]
fn buffered_speed_aware_and_pull_match_the_chains_of_their_rules() {
    let buffer = ["truncation.levels=3", "truncation.buffer=true"];
    for (file, dispatch) in [
        ("hetero-sa-jsq-caseA.toml", sa_jsq as Dispatch),
        ("hetero-sa-jiq-caseA.toml", sa_jiq),
        ("hetero-pull-caseA.toml", idle_else_random),
    ] {
        let m = bundled(file, &buffer);
        let exact = RulesSystem::new(0.9, vec![2, 2], vec![1.6, 0.4], vec![(1.0, 1.0)], dispatch).exact();
        assert_agree(file, &sim(&m, 4), &exact);
    }
}

/// The front door refuses to simulate an unstable system (JSQ(2) at lambda = 1.2: no
/// stationary estimate), with the stability condition's reason; with a buffer the same
/// system is a loss system, stable at every load, and is simulated (its throughput below the
/// arrival rate, the loss `1 - throughput / lambda` above 0).
#[test]
fn unstable_systems_are_refused_unless_buffered() {
    let m = bundled("jsq-d2.toml", &["lambda=1.2"]);
    let opts = SimOptions { servers: 50, time: 200.0, warmup: 20.0, replications: 1, batches: 10, seed: 1, ..Default::default() };
    match m.simulate(&opts) {
        Err(mfq::Error::FixedPoint(mfq::errors::FixedPointError::Unstable { reason })) => assert!(reason.contains("1.2"), "{reason}"),
        other => panic!("expected unstable, got {other:?}"),
    }
    let r = m.simulate(&SimOptions { buffer: Some(4), ..opts }).unwrap_or_else(|e| panic!("{e}"));
    let (throughput, loss) = (r.throughput.expect("a built-in simulator observes throughput"), r.loss_probability.expect("and loss"));
    assert!(throughput.mean < 1.2 && loss.mean > 0.0, "{throughput:?} {loss:?}");
}
