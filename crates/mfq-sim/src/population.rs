//! Finite-N simulation of a model given by its transitions: the density-dependent population
//! process of `N` objects behind any [`MeanFieldModel`] whose
//! [`transitions`](MeanFieldModel::transitions) are known (every generic model of a file, and
//! the built-in tail-form models).
//!
//! The state `x` (fractions) jumps to `x + l/N` at rate `N beta_l(x)` for every transition `l`
//! (Kurtz 1970; Gast and Van Houdt 2017, eq. (1)); as `N -> infinity` its trajectories follow
//! the mean-field ODE `dx/dt = sum_l l beta_l(x)`, and its stationary mean is
//! `x* + V/N + O(1/N^2)` (the refined mean field). The simulation is Gillespie's direct method:
//! exponential holding times of rate `N sum_l beta_l(x)`, the next transition drawn with
//! probability `beta_l / sum beta`. When the model gives its transitions one at a time
//! ([`IndexedTransitions`], the generic models), an event re-evaluates only the rates that read
//! a state entry it changed (Gibson and Bruck's dependency graph, J. Phys. Chem. A 104(9),
//! 2000) and draws the transition from an 8-ary tree of partial sums (or from block sums in the
//! order of decreasing initial rates, where they are uneven), a telescoping chain of
//! transitions (`crates/mfq-sim/src/telescoping.rs`) held as one rate whose member is drawn from the state;
//! otherwise every rate is
//! re-evaluated at every event. It uses the model's own rate functions, so it checks the
//! ODE solvers and the `1/N` terms, not the rates themselves (the event-driven simulator of the
//! built-in queueing systems, [`crate::simulate`], is the independent check of those).
//!
//! Estimates: time averages of every state entry after a warm-up, over
//! [`PopulationOptions::batches`] batches per replication, replications in parallel with
//! independent xoshiro256++ streams (replication `r`: the stream seeded from
//! [`PopulationOptions::seed`] advanced by `r` jumps of `2^128` steps); 95% t intervals from the
//! pooled batch means, as in [`crate::simulate`].

use mfq_model::{Deadline, IndexedTransitions, MeanFieldModel, RateForm};
use rand::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use serde::Serialize;

use crate::stats::mean_estimate;
use crate::{Estimate, SimError};

/// Options of [`simulate_population`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PopulationOptions {
    /// Number of objects `N` (`>= 1`).
    pub objects: usize,
    /// Measured time after the warm-up (`> 0`).
    pub time: f64,
    /// Warm-up time, discarded (`>= 0`).
    pub warmup: f64,
    /// Batches per replication (`>= 2`: a confidence interval needs two batch means).
    pub batches: usize,
    /// Independent replications (`>= 1`).
    pub replications: usize,
    /// Seed of the random streams.
    pub seed: u64,
    /// Record the state of replication 0 at times `0, record, 2 record, ...` up to
    /// `warmup + time` (`None`: no trajectory).
    pub record: Option<f64>,
    /// Stop a replication after this many events (`>= 1`), a guard against runaway rates.
    pub max_events: u64,
    /// The job's shared wall-clock limit and cancel flag (default: none): past it every
    /// replication stops at its next check (every [`crate::DEADLINE_CHECK_EVENTS`] events)
    /// and [`PopulationReport::status`] says so.
    pub deadline: Deadline,
}

impl Default for PopulationOptions {
    fn default() -> Self {
        PopulationOptions {
            objects: 1000,
            time: 1000.0,
            warmup: 100.0,
            batches: 20,
            replications: 2,
            seed: 1,
            record: None,
            max_events: 1_000_000_000,
            deadline: Deadline::none(),
        }
    }
}

/// Result of [`simulate_population`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PopulationReport {
    /// Time average of every state entry after the warm-up (the model's layout).
    pub mean: Vec<Estimate>,
    /// Time average of the sum of all state entries (for a tail-form state: the mean number of
    /// jobs per server, `L = sum_k x_k`), from the batch sums.
    pub total: Estimate,
    /// Events simulated over all replications.
    pub events: u64,
    /// Whether a replication stopped at `max_events` (its averages then cover less time
    /// than asked). A state where every rate is zero is absorbing and held to the end.
    pub stopped_early: bool,
    /// Recorded times and states of replication 0 (empty without `record`).
    pub trajectory: (Vec<f64>, Vec<Vec<f64>>),
    /// Whether every replication ran to its end (or to `max_events`), or the wall-clock limit
    /// stopped it: then the averages cover less time than asked, batches not reached are 0.
    pub status: crate::SimStatus,
}

fn check(field: &str, ok: bool, value: impl std::fmt::Display, allowed: &str) -> Result<(), SimError> {
    if ok {
        Ok(())
    } else {
        Err(SimError::OutOfRange { field: field.into(), value: value.to_string(), allowed: allowed.into() })
    }
}

/// Simulates the population process of `opts.objects` objects behind `model`, from `x0`
/// (rounded to multiples of `1/N`).
///
/// # Errors
/// [`SimError::OutOfRange`] for an option outside its range or an `x0` of the wrong length or
/// with entries outside `[0, 1]`, or for a number of objects `N` that puts a conservation law's
/// `N value` off the whole numbers (field `servers`: the chain is off its lattice, as `mfq exact`
/// refuses it; [`mfq_model::off_lattice`]); [`SimError::Unsupported`] when the model does not
/// provide its transitions.
pub fn simulate_population(model: &dyn MeanFieldModel, x0: &[f64], opts: &PopulationOptions) -> Result<PopulationReport, SimError> {
    let deadline = &opts.deadline;
    check("objects", opts.objects >= 1, opts.objects, "an integer >= 1")?;
    check("time", opts.time.is_finite() && opts.time > 0.0, opts.time, "a finite time > 0")?;
    check("warmup", opts.warmup.is_finite() && opts.warmup >= 0.0, opts.warmup, "a finite time >= 0")?;
    check("batches", opts.batches >= 2, opts.batches, "an integer >= 2 (batch means need at least two batches)")?;
    check("replications", opts.replications >= 1, opts.replications, "an integer >= 1")?;
    check("max_events", opts.max_events >= 1, opts.max_events, "an integer >= 1")?;
    if let Some(r) = opts.record {
        check("record", r.is_finite() && r > 0.0, r, "a finite time step > 0")?;
    }
    check("x0", x0.len() == model.dim(), format!("{} entries", x0.len()), "one entry per state entry")?;
    if let Some(v) = x0.iter().find(|v| !(0.0..=1.0).contains(*v)) {
        return Err(SimError::OutOfRange { field: "x0".into(), value: v.to_string(), allowed: "fractions in [0, 1]".into() });
    }
    if model.transitions().is_none() {
        return Err(SimError::Unsupported { kind: model.name(), reason: "the model does not provide its transitions".into() });
    }
    // the lattice of the N-object chain, as the exact chain checks it (`exact::check_feasible`)
    if let Some(allowed) = mfq_model::off_lattice(&model.conservation_laws(), opts.objects) {
        return Err(SimError::OutOfRange { field: "servers".into(), value: opts.objects.to_string(), allowed });
    }
    let n = model.dim();
    let indexed = || model.transitions().and_then(|t| t.indexed()).filter(|t| t.count() > 0);
    let graph = indexed().and_then(|t| dependency_graph(t, n));
    let runs: Vec<Run> = (0..opts.replications)
        .into_par_iter()
        .map(|r| {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(opts.seed);
            for _ in 0..r {
                rng.jump();
            }
            match (indexed(), &graph) {
                (Some(t), Some((aff, ptr))) => run_indexed(t, (aff, ptr), n, x0, opts, r == 0, deadline, &mut rng, None),
                _ => run(model, x0, opts, r == 0, deadline, &mut rng),
            }
        })
        .collect();
    let mean = (0..n)
        .map(|i| {
            let values: Vec<f64> = runs.iter().flat_map(|run| run.batch_means.iter().map(move |b| b[i])).collect();
            mean_estimate(&values)
        })
        .collect();
    let totals: Vec<f64> = runs.iter().flat_map(|run| run.batch_means.iter().map(|b| b.iter().sum::<f64>())).collect();
    let total = mean_estimate(&totals);
    let events = runs.iter().map(|r| r.events).sum();
    let stopped_early = runs.iter().any(|r| r.stopped_early);
    let status = crate::SimStatus::of(deadline, runs.iter().any(|r| r.timed_out));
    let trajectory = runs.into_iter().next().map(|r| r.trajectory).unwrap_or_default();
    Ok(PopulationReport { mean, total, events, stopped_early, trajectory, status })
}

/// The population process of `model` (the finite-N system of a generic model: its rules are
/// its transitions) as a [`crate::SimReport`], with `opts` as for [`crate::simulate`], started
/// at `x0` (e.g. the fixed point). A finite buffer is the model's own truncation level `K`
/// (arrivals that would create level `K + 1` have no transition: they are lost), so
/// `opts.buffer` must be `None` or `K`. Reported: the tail (tail-form states: each entry's
/// time average) and the mean queue length (their sum), or every entry by name in `extras`
/// (other layouts); throughput, loss, waiting and response times and the diagnostics of the
/// intervals are not observed here and are `None` (absent from the JSON; see
/// `docs/simulation.md`), as is the mean queue length of a state that is not one tail family.
///
/// # Errors
/// As [`simulate_population`]; [`SimError::OutOfRange`] for `opts` ([`crate::SimOptions::validate`])
/// or a `buffer` other than the model's `K`.
pub fn simulate_as_report(
    spec: &mfq_model::ModelSpec,
    model: &dyn MeanFieldModel,
    x0: &[f64],
    opts: &crate::SimOptions,
) -> Result<crate::SimReport, SimError> {
    opts.validate()?;
    let tail_levels = match model.layout() {
        mfq_model::StateLayout::Tail { levels } => Some(levels),
        _ => None,
    };
    if let Some(b) = opts.buffer.filter(|&b| Some(b as usize) != tail_levels) {
        return Err(SimError::OutOfRange {
            field: "buffer".into(),
            value: b.to_string(),
            allowed: match tail_levels {
                Some(k) => format!("none, or the model's truncation level K = {k}: its population process has that buffer"),
                None => "none: the model's state is not one tail family, so its population process has no buffer".into(),
            },
        });
    }
    let started = std::time::Instant::now();
    let popts = PopulationOptions {
        objects: opts.servers,
        time: opts.time,
        warmup: opts.warmup,
        batches: opts.batches,
        replications: opts.replications,
        seed: opts.seed,
        deadline: opts.deadline.clone(),
        ..Default::default()
    };
    let rep = simulate_population(model, x0, &popts)?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let layout = model.layout();
    let (tail, mean_queue_length, extras) = match tail_levels {
        Some(_) => (rep.mean.clone(), Some(rep.total), Default::default()),
        None => (Vec::new(), None, rep.mean.iter().enumerate().map(|(i, e)| (layout.name(i), *e)).collect()),
    };
    Ok(crate::SimReport {
        model: spec.clone(),
        options: opts.clone(),
        status: rep.status,
        tail,
        mean_queue_length,
        mean_response_time: None,
        throughput: None,
        loss_probability: None,
        prob_wait: None,
        events: rep.events,
        wall_seconds,
        events_per_second: rep.events as f64 / wall_seconds.max(1e-12),
        diagnostics: crate::Diagnostics {
            batch_lag1_autocorrelation: None,
            replication_half_width: None,
            max_queue_length: tail_levels.unwrap_or(0),
            departure_rate: None,
        },
        extras,
        precision: None,
    })
}

struct Run {
    batch_means: Vec<Vec<f64>>,
    events: u64,
    stopped_early: bool,
    timed_out: bool,
    trajectory: (Vec<f64>, Vec<Vec<f64>>),
}

/// Largest total length of the per-transition lists of affected rates that
/// [`run_indexed`] precomputes (entries); a model with more re-evaluates every rate per event.
const MAX_DEPENDENCY_ENTRIES: usize = 1 << 24;

/// The rates to re-evaluate after each transition: `affected[ptr[l]..ptr[l + 1]]`, every
/// transition whose rate reads a state entry that `l` changes (sorted); `None` when the lists
/// would exceed [`MAX_DEPENDENCY_ENTRIES`].
fn dependency_graph(t: &dyn IndexedTransitions, dim: usize) -> Option<(Vec<usize>, Vec<usize>)> {
    let m = t.count();
    // readers[i]: the transitions whose rate reads entry i
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); dim];
    for l in 0..m {
        for &i in t.reads(l) {
            readers[i].push(l);
        }
    }
    let (mut affected, mut ptr) = (Vec::new(), vec![0usize]);
    let mut list = Vec::new();
    for l in 0..m {
        list.clear();
        for &(i, c) in t.jump(l) {
            if c != 0.0 {
                list.extend_from_slice(&readers[i]);
            }
        }
        list.sort_unstable();
        list.dedup();
        affected.extend_from_slice(&list);
        if affected.len() > MAX_DEPENDENCY_ENTRIES {
            return None;
        }
        ptr.push(affected.len());
    }
    Some((affected, ptr))
}

/// Children per inner node of a [`SumTree`] (a power of two).
const ARITY: usize = 8;

/// One rate re-evaluated by an event, with its place in the [`SumTree`]: the rate
/// `((a + b (x_i x_i2)) - d (x_j x_j2)) (e x_k)` of a [`RateForm`] (the slots index the state,
/// slot `dim` holds the constant 1), kept at `leaf` of the [`SumTree`]'s flat array; `last`:
/// the last of the consecutive updated leaves with the same parent (their summed change then
/// goes up).
#[derive(Debug, Clone, Copy)]
struct Update {
    a: f64,
    b: f64,
    d: f64,
    e: f64,
    i: u32,
    i2: u32,
    j: u32,
    j2: u32,
    k: u32,
    leaf: u32,
    last: bool,
}

impl Update {
    /// The rate at `x` (with the constant 1 in slot `dim`; `x.len() = mask + 1`, a power of
    /// two).
    #[inline(always)]
    fn rate(&self, x: &[f64], mask: usize) -> f64 {
        let v = |i: u32| x[i as usize & mask];
        ((self.a + self.b * (v(self.i) * v(self.i2))) - self.d * (v(self.j) * v(self.j2))) * (self.e * v(self.k))
    }

    /// Whether `x_k`, `x_i2` and `x_j2` are the constant 1 (slot `dim`), so that
    /// [`linear_rate`](Self::linear_rate) gives [`rate`](Self::rate)'s value.
    fn is_linear(&self, dim: usize) -> bool {
        [self.k, self.i2, self.j2].iter().all(|&s| s as usize == dim)
    }

    /// [`rate`](Self::rate) when `x_k`, `x_i2` and `x_j2` are the constant 1: `((a + b x_i) -
    /// d x_j) e`, the same value (`e 1 = e` and `x 1 = x` exactly).
    #[inline(always)]
    fn linear_rate(&self, x: &[f64], mask: usize) -> f64 {
        let v = |i: u32| x[i as usize & mask];
        ((self.a + self.b * v(self.i)) - self.d * v(self.j)) * self.e
    }
}

/// A complete `ARITY`-ary tree of partial sums over the rates, stored as an implicit heap:
/// the root (the total) is node 0, the children of node `k` are nodes `ARITY k + 1 ..= ARITY k
/// + ARITY`, the `ARITY^h` leaves (the rates, then zeros) follow the `inner` inner nodes. Node
/// `k` is kept at `ARITY - 1 + k` of a flat array of groups of `ARITY` (so the children of node
/// `k` are group `k + 1`, one aligned load each; the array's length a power of two, so that
/// masked indices need no bounds check). An update adds a leaf's change to its `h - 1` inner
/// ancestors (the changes of consecutive leaves with the same parent once) and the event's
/// total change to the root; a selection scans the children of one node per level; both
/// `O(ARITY log count / log ARITY)`, with `h = 3` levels for up to 512 rates (against 9 for a
/// binary tree). The owner rebuilds the inner nodes from the leaves every
/// [`SumTree::rebuild_every`] updates or more often, which bounds the rounding that the
/// differences accumulate (about `1e-16` relative per update).
struct SumTree {
    group: Vec<[f64; ARITY]>,
    /// Number of inner nodes (the first leaf's node number).
    inner: usize,
    /// Number of levels (the ancestors of a leaf, the root included).
    height: usize,
    /// The parent of the first leaves.
    first_parent: usize,
    rebuild_every: usize,
    /// The number of leaves that hold rates (the others zeros).
    used: usize,
}

/// Where node `k` of a [`SumTree`] is kept in its flat array.
const fn slot_of(k: usize) -> usize {
    k + ARITY - 1
}

/// A structure of partial sums over the rates (leaves) from which [`run_indexed`] draws the
/// next transition: [`SumTree`], or [`BlockSums`] where the rates are uneven enough.
trait Selector: Sized {
    /// The structure over `rates` (`>= 0`).
    fn new(rates: &[f64]) -> Self;
    /// The inner sums recomputed from the leaves.
    fn rebuild(&mut self);
    /// Updates between rebuilds (at most), which bounds the rounding of the differences.
    fn rebuild_every(&self) -> usize;
    /// The sum of the rates.
    fn total(&self) -> f64;
    /// The leaf whose own slot of the cumulative sum holds `target` (`0 <= target < total`),
    /// never a zero leaf (while a positive leaf remains): the scans stop at a child only when
    /// the remaining target falls below it, and a zero leaf reached past the total by rounding
    /// gives way to the nearest positive leaf before it (else after it). With the leaf, the
    /// target left within it (`target` less the sum of the leaves before it; 0 where a zero leaf
    /// gave way to another).
    fn locate(&self, target: f64) -> (usize, f64);
    /// The leaf of [`locate`](Selector::locate).
    #[cfg(test)]
    fn select(&self, target: f64) -> usize {
        self.locate(target).0
    }
    /// The updates of the leaves `leaves` (sorted) appended to `out`, their rates given by
    /// `form(leaf)` (`leaf` and `last` set here).
    fn push_updates(&self, leaves: &[usize], out: &mut Vec<Update>, form: impl Fn(usize) -> Update);
    /// The [`Update::leaf`] of leaf 0 (that of leaf `l` is `l` more).
    fn first_slot(&self) -> usize;
    /// The rate held by the leaf of `update`.
    fn leaf(&self, update: &Update) -> f64;
    /// Sets the leaves of `updates` to their rates `rate(update)`, each floored at 0, and adds
    /// their changes to their ancestors.
    fn apply(&mut self, updates: &[Update], rate: impl FnMut(&Update) -> f64);

    /// Sets the leaves of `leaves` (sorted) to `rates` (the same length), each floored at 0,
    /// and adds their changes to their ancestors (as [`apply`](Selector::apply) does).
    #[cfg(test)]
    fn update(&mut self, leaves: &[usize], rates: &[f64]) {
        let mut updates = Vec::new();
        let constant = |l: usize| {
            let a = rates[leaves.iter().position(|&s| s == l).unwrap()];
            Update { a, b: 0.0, d: 0.0, e: 1.0, i: 0, i2: 0, j: 0, j2: 0, k: 0, leaf: 0, last: false }
        };
        self.push_updates(leaves, &mut updates, constant);
        self.apply(&updates, |u| u.rate(&[1.0], 0));
    }
}

/// The leaf that follows a scan which left `l` (a zero leaf) in `leaves`: the nearest positive
/// leaf before it, else after it, else `l`.
fn nearest_positive(leaves: &[f64], l: usize) -> usize {
    let before = leaves[..l].iter().rposition(|&r| r > 0.0);
    before.or_else(|| leaves[l..].iter().position(|&r| r > 0.0).map(|i| l + i)).unwrap_or(l)
}

impl Selector for SumTree {
    fn new(rates: &[f64]) -> SumTree {
        let (mut width, mut inner, mut height) = (ARITY, 1, 1);
        while width < rates.len() {
            inner += width;
            width *= ARITY;
            height += 1;
        }
        let groups = (slot_of(inner + width) / ARITY).next_power_of_two();
        let mut tree = SumTree {
            group: vec![[0.0; ARITY]; groups],
            inner,
            height,
            first_parent: (inner - 1) / ARITY,
            rebuild_every: (2 * width).max(4096),
            used: rates.len(),
        };
        let first = slot_of(inner);
        tree.group.as_flattened_mut()[first..first + rates.len()].copy_from_slice(rates);
        tree.rebuild();
        tree
    }

    fn rebuild(&mut self) {
        for k in (0..self.inner).rev() {
            let s = self.group[k + 1].iter().sum();
            self.group.as_flattened_mut()[slot_of(k)] = s;
        }
    }

    fn rebuild_every(&self) -> usize {
        self.rebuild_every
    }

    fn total(&self) -> f64 {
        self.group[0][ARITY - 1]
    }

    fn first_slot(&self) -> usize {
        slot_of(self.inner)
    }

    #[inline(always)]
    fn leaf(&self, update: &Update) -> f64 {
        let flat = self.group.as_flattened();
        flat[update.leaf as usize & (flat.len() - 1)]
    }

    /// The updates of the leaves `leaves` (sorted) appended to `out`, their rates given by
    /// `form(leaf)` (`leaf` and `last` set here): consecutive leaves with the same parent form
    /// one group, whose summed change goes up once.
    fn push_updates(&self, leaves: &[usize], out: &mut Vec<Update>, form: impl Fn(usize) -> Update) {
        let parent = |l: usize| (self.inner + l - 1) / ARITY;
        for (q, &l) in leaves.iter().enumerate() {
            let last = leaves.get(q + 1).is_none_or(|&s| parent(s) != parent(l));
            out.push(Update { leaf: slot_of(self.inner + l) as u32, last, ..form(l) });
        }
    }

    /// Sets the leaves of `updates` to their rates `rate(update)`, each floored at 0, and adds
    /// their changes to their ancestors, a group's at once, the root's once.
    #[inline(always)]
    fn apply(&mut self, updates: &[Update], mut rate: impl FnMut(&Update) -> f64) {
        let mask = self.group.len() * ARITY - 1;
        let node = &mut self.group.as_flattened_mut()[..=mask];
        let (mut sum, mut all) = (0.0, 0.0);
        for u in updates {
            let new = rate(u).max(0.0);
            let leaf = &mut node[u.leaf as usize & mask];
            sum += new - *leaf;
            *leaf = new;
            if u.last {
                // the parent of the node kept at s is kept at s / ARITY + ARITY - 2
                let mut s = u.leaf as usize;
                for _ in 1..self.height {
                    s = s / ARITY + ARITY - 2;
                    node[s & mask] += sum;
                }
                all += sum;
                sum = 0.0;
            }
        }
        node[slot_of(0)] += all;
    }

    /// The leaf where the cumulative sum passes `target` (`0 <= target < total`), never a
    /// zero leaf: a node's children are scanned until the remaining target falls below one
    /// (which is then positive), the last child taken when the target passes the others; a
    /// zero leaf reached so (a target past the total by rounding) gives way to the nearest
    /// positive leaf before it (else after it).
    #[inline(always)]
    fn locate(&self, target: f64) -> (usize, f64) {
        if self.height == 1 {
            // one level (at most ARITY leaves): the scan below, its steps taken or not without
            // a branch (at a coin between two chains, as the generic M/M/1's arrivals and
            // departures, a branch mispredicted at one event in two); the same subtractions, so
            // the same leaf and remainder, the scan itself where the target is not within the
            // leaf reached (past the total by rounding)
            let kids = &self.group[1];
            let (mut rest, mut j, mut on) = (target, 0, true);
            for &r in &kids[..self.used.clamp(1, ARITY) - 1] {
                on &= rest >= r;
                rest -= r * f64::from(u8::from(on));
                j += usize::from(on);
            }
            if rest < kids[j & (ARITY - 1)] {
                return (j, rest);
            }
        }
        self.locate_by_scan(target)
    }
}

impl SumTree {
    /// [`Selector::locate`] by the scan of each level's children, one by one.
    fn locate_by_scan(&self, mut target: f64) -> (usize, f64) {
        let gmask = self.group.len() - 1;
        let group = &self.group[..=gmask];
        // a target below the first bottom node (the parent of the first leaves) goes down the
        // first children to it: straight to its leaves (the leaves sorted by rate, often so)
        let (mut k, levels) = if self.height > 1 && target < self.group.as_flattened()[slot_of(self.first_parent)] {
            (self.first_parent, 1)
        } else {
            (0, self.height)
        };
        for _ in 0..levels {
            let kids = &group[(k + 1) & gmask];
            let mut j = 0;
            while j < ARITY - 1 && target >= kids[j] {
                target -= kids[j];
                j += 1;
            }
            k = ARITY * k + 1 + j;
        }
        let flat = self.group.as_flattened();
        let l = k - self.inner;
        if flat[slot_of(k) & (flat.len() - 1)] > 0.0 {
            return (l, target);
        }
        (nearest_positive(&flat[slot_of(self.inner)..], l), 0.0)
    }
}

/// Rates per block of [`BlockSums`]. Longer blocks than the [`SumTree`]'s `ARITY`: on the
/// generic M/M/1 at lambda = 0.9 (506 rates), blocks of 32 leave 1.51 mispredicted branches
/// per event against 2.38 with blocks of 8, for 11 % more instructions, and run about 15 %
/// faster (bench/rows-sim.md, "Blocks of 32 rates").
const BLOCK: usize = 32;

/// Two levels of partial sums: the rates in blocks of `BLOCK` (then zeros), the sum of each
/// block and the total. A selection scans the block sums from the first, then the block's
/// rates; an update adds a block's change to its sum and the event's to the total. With the
/// rates in order of decreasing size and uneven (most of the total in the first blocks), the
/// scan stops after a few blocks and an update touches one sum per block instead of a
/// [`SumTree`]'s path (the optimized direct method of Cao, Li and Petzold, J. Chem. Phys.
/// 121(9), 2004, by blocks). The arrays' lengths are powers of two (masked indices).
struct BlockSums {
    leaf: Vec<[f64; BLOCK]>,
    block: Vec<f64>,
    /// Number of blocks in use.
    blocks: usize,
    total: f64,
}

impl Selector for BlockSums {
    fn new(rates: &[f64]) -> BlockSums {
        let blocks = rates.len().div_ceil(BLOCK).max(1);
        let size = blocks.next_power_of_two();
        let mut sums = BlockSums { leaf: vec![[0.0; BLOCK]; size], block: vec![0.0; size], blocks, total: 0.0 };
        sums.leaf.as_flattened_mut()[..rates.len()].copy_from_slice(rates);
        sums.rebuild();
        sums
    }

    fn rebuild(&mut self) {
        for (b, l) in self.block.iter_mut().zip(&self.leaf) {
            *b = l.iter().sum();
        }
        self.total = self.block[..self.blocks].iter().sum();
    }

    fn rebuild_every(&self) -> usize {
        4096
    }

    fn total(&self) -> f64 {
        self.total
    }

    #[inline(always)]
    fn locate(&self, mut target: f64) -> (usize, f64) {
        let mask = self.leaf.len() - 1;
        let leaf = &self.leaf[..=mask];
        let mut b = self.blocks - 1;
        for (c, &w) in self.block[..self.blocks - 1].iter().enumerate() {
            if target < w {
                b = c;
                break;
            }
            target -= w;
        }
        let kids = &leaf[b & mask];
        for (j, &r) in kids[..BLOCK - 1].iter().enumerate() {
            // `r > target >= 0`: a positive leaf
            if target < r {
                return (BLOCK * b + j, target);
            }
            target -= r;
        }
        // the last leaf of the block: zero only when the target passed the total by rounding
        let l = BLOCK * b + BLOCK - 1;
        if kids[BLOCK - 1] > 0.0 {
            return (l, target);
        }
        (nearest_positive(self.leaf.as_flattened(), l), 0.0)
    }

    fn push_updates(&self, leaves: &[usize], out: &mut Vec<Update>, form: impl Fn(usize) -> Update) {
        for (q, &l) in leaves.iter().enumerate() {
            let last = leaves.get(q + 1).is_none_or(|&s| s / BLOCK != l / BLOCK);
            out.push(Update { leaf: l as u32, last, ..form(l) });
        }
    }

    fn first_slot(&self) -> usize {
        0
    }

    #[inline(always)]
    fn leaf(&self, update: &Update) -> f64 {
        let flat = self.leaf.as_flattened();
        flat[update.leaf as usize & (flat.len() - 1)]
    }

    #[inline(always)]
    fn apply(&mut self, updates: &[Update], mut rate: impl FnMut(&Update) -> f64) {
        let mask = self.block.len() - 1;
        let lmask = self.block.len() * BLOCK - 1;
        let block = &mut self.block[..=mask];
        let leaf = &mut self.leaf.as_flattened_mut()[..=lmask];
        // each leaf's change to its block at once (no branch on the last of a block's leaves)
        let mut all = 0.0;
        for u in updates {
            let new = rate(u).max(0.0);
            let slot = &mut leaf[u.leaf as usize & lmask];
            let d = new - *slot;
            *slot = new;
            block[(u.leaf as usize / BLOCK) & mask] += d;
            all += d;
        }
        self.total += all;
    }
}

/// The holding time of a state of `big_n` objects whose transitions have total rate `total`
/// (per object): `Exp(big_n total)`, an Exp(1) variate by the ziggurat (Marsaglia and Tsang,
/// J. Stat. Softw. 5(8), 2000) over `big_n total`; infinite when no transition can happen (an
/// absorbing state, or a total that is not finite).
#[inline(always)]
fn holding_time(rng: &mut Xoshiro256PlusPlus, big_n: f64, total: f64) -> f64 {
    // `total < infinity` (not `is_finite`, the same for a positive total): two comparisons
    if total > 0.0 && total < f64::INFINITY {
        exp1(rng) / (big_n * total)
    } else {
        f64::INFINITY
    }
}

/// An Exp(1) variate by the ziggurat (Marsaglia and Tsang, J. Stat. Softw. 5(8), 2000), inlined.
#[inline(always)]
fn exp1(rng: &mut Xoshiro256PlusPlus) -> f64 {
    <rand_distr::Exp1 as rand_distr::Distribution<f64>>::sample(&rand_distr::Exp1, rng)
}

/// Records the state `x` (held until `until`) at every recording time `<= until` from
/// `next`, stepping by `step`.
fn record_until(traj: &mut (Vec<f64>, Vec<Vec<f64>>), next: &mut Option<f64>, step: Option<f64>, until: f64, x: &[f64]) {
    while let Some(tr) = *next {
        if tr > until {
            break;
        }
        traj.0.push(tr);
        traj.1.push(x.to_vec());
        *next = step.map(|s| tr + s);
    }
}

/// A transition's event in [`run_indexed`]: its jump and the rates it changes, by their forms,
/// or by the model's `rate` when one of them has no [`RateForm`] (`program`); `linear`: every
/// form's `x_k`, `x_i2` and `x_j2` are the constant 1 (so [`Update::linear_rate`] gives its value).
/// The leaf of a telescoping chain has the step `chain` (the chain's index; [`NO_CHAIN`] for
/// the leaf of one transition), whose member's own step is drawn by [`ChainPick::member`].
#[derive(Debug, Clone, Copy)]
struct Step<'a> {
    jump: &'a [(usize, f64)],
    updates: &'a [Update],
    /// The leaves of the chains whose totals the jump may move, each with its own `last`: their
    /// bounds ([`bound`]) are updated only where they change.
    chain_updates: &'a [Update],
    /// The jump's moves of the counts that [`ChainPositions`] index: `(slot, array, change)`,
    /// after the jump (the change in whole objects).
    moves: &'a [(u32, u32, i32)],
    program: bool,
    linear: bool,
    chain: u32,
}

/// [`Step::chain`] of a leaf that holds one transition.
const NO_CHAIN: u32 = u32::MAX;

/// [`ChainPick::member`] of a null draw: the target fell in the slack of the chain's bound,
/// above its total.
const NULL_DRAW: usize = usize::MAX;

/// Significant bits of the mantissa that [`bound`] keeps.
const BOUND_BITS: u32 = 5;

/// The bound that the leaf of a chain of total rate `r` (`>= 0`) holds: `r` rounded up to
/// [`BOUND_BITS`] bits of mantissa, so `r <= bound(r) < r (1 + 2^-5)` (`bound(0) = 0`, an
/// infinite `r` stays infinite). A draw that falls between the total and the bound is a null
/// draw: no transition, the clock advanced by its holding time. This is thinning (Lewis and
/// Shedler, Naval Res. Logist. Q. 26(3), 1979) against a bound that depends on the state only
/// through the chain's total, so the law of the process is that of the direct method. The bound
/// moves at a few per cent of the total's moves (when the total crosses a multiple of
/// `2^(exponent - 5)`), so the next event's target, read from the root of the sum structure,
/// rarely waits for the last jump: at lambda = 0.5 the departures' total `x_1` moves at one
/// event in two, and the chain of operations from one event's jump to the next event's member
/// bounded the generic M/M/1 there (bench/rows-sim.md).
#[inline(always)]
fn bound(r: f64) -> f64 {
    const LOW: u64 = (1 << (52 - BOUND_BITS)) - 1;
    f64::from_bits((r.to_bits() + LOW) & !LOW)
}

/// Members of a chain scanned from its head before a binary search of the rest (the largest
/// window of [`ChainPick::window`]): at lambda = 0.9 the generic M/M/1's member is geometric,
/// 10 on average, beyond 16 at one event in five and beyond 32 at one in thirty. A chain whose
/// interior values are consecutive state entries counts the values at or above the threshold
/// in its window at once (no branch: the exit of a scan one by one, at a geometric member,
/// mispredicted at almost every event).
const CHAIN_SCAN: usize = 32;

/// The most chains' bounds a step re-evaluates for the padding of [`run_indexed_in`]: a model
/// whose steps move the ends of more chains keeps each step's own (no padding).
const PAD_CHAIN_UPDATES: usize = 2;

/// A telescoping chain (module [`crate::telescoping`]) as [`run_indexed`] draws its members:
/// the values `v_0 = a + b x_head` and `v_1, ..., v_{m-1}` (the state slots
/// `slots[start..end]`), `v_m = d x_tail` (slots as in [`Update`]: the constant 1 at `dim`),
/// `1 / e`, and the first of its members' steps (`base`, in the chain's order).
#[derive(Debug, Clone, Copy)]
struct ChainPick {
    a: f64,
    b: f64,
    head: u32,
    d: f64,
    tail: u32,
    inv_e: f64,
    start: u32,
    end: u32,
    base: u32,
    /// 0 (a scan one by one), or the window (16 or [`CHAIN_SCAN`]) whose values
    /// [`ChainPick::member`] counts at once: the interior values are then the consecutive state
    /// slots `slots[start], slots[start] + 1, ...`, at least `window` of them within the
    /// state's slots, and the window the smallest that held the member at least 19 times in 20
    /// by the initial rates (none where 8 members did: the scan then stops early).
    window: u8,
    /// The chain's [`ChainPositions`] (an index into the run's arrays), or [`NO_POSITIONS`]
    /// (its member then drawn by [`ChainPick::member`]).
    positions: u32,
    /// The number of the positions' entries before the chain's interior values (1 where `v_0`
    /// is an entry, else 0).
    offset: u32,
    /// `v_0` and `v_m` in whole objects: the count of the entry `top` (the slot of the constant,
    /// whose count is 0, for a constant) plus `top_count`; the same for `bottom`.
    top: u32,
    top_count: f64,
    bottom: u32,
    bottom_count: f64,
    /// `N / e`: a target within the chain's rate in whole objects.
    n_inv_e: f64,
    /// Where every member's jump is one change `jump_change` of the entry `jump_first + t`
    /// (member `t`), as the arrivals and departures of a queue's levels: that first entry, the
    /// members' steps then holding no jump (the jump made from the member alone, with no read of
    /// its step before the store: the next event's member reads the value stored). `u32::MAX`
    /// for the other chains.
    jump_first: u32,
    jump_change: f64,
}

/// [`ChainPick::positions`] of a chain whose members are drawn by [`ChainPick::member`].
const NO_POSITIONS: u32 = u32::MAX;

/// The largest count (objects) that a chain's [`ChainPositions`] are formed for at the start:
/// `2^16` positions of two bytes, 128 KiB, within the second-level cache; a chain of a larger
/// population draws its members by [`ChainPick::member`] from the state itself (a few dozen
/// entries), whose reads stay in the first-level cache.
const POSITIONS_MAX: f64 = 65_536.0;

/// The mean member (0-based, by the members' initial rates) beyond which a chain reads its
/// members from its [`ChainPositions`]: the generic M/M/1, whose mean member is `lambda / (1 -
/// lambda)`, took 0.81 s by position against 0.87 s by the scan at lambda = 0.6 (1.5), 0.67 s
/// against 0.65 s at lambda = 0.5 (1) and 0.42 s against 0.34 s at lambda = 0.3 (0.43); the
/// window's count ([`CHAIN_SCAN`]) at lambda = 0.9 1.23 s against 1.06 s by position. With the
/// direct jumps ([`ChainPick::jump_first`]) and the padded chain updates, lambda = 0.5 reads
/// by position as fast or faster (0.93 s against 0.96 s) and lambda = 0.3 is still quicker by
/// the scan (0.57 s against 0.63 s): the threshold between them (bench/rows-sim.md, "Direct
/// jumps, padded chain updates and a branch-free one-level selection").
const POSITIONS_MEAN_MEMBER: f64 = 0.75;

/// The members of a telescoping chain by position: `above[p]` is the number of the entries
/// among the chain's values `v_0, ..., v_m` whose count (in whole objects) exceeds `p`, for
/// every position `p` from 0 (0 past the array's end). Its values being in order `C_0 >= ... >=
/// C_m`, the member whose slot of the cumulative rate holds a target is the number of interior
/// values above the position `p = C_0 - 1 - floor(target N / e)`, `above[p]` less the chain's
/// [`ChainPick::offset`] (and at most the last member): the count of objects is the quantity
/// the chain's rates telescope over, so a uniform target is a uniform position among the
/// objects between `v_m` and `v_0` (`C_0 - C_m` of them), and `above` reads that object's
/// member at once (as the JSQ(2) engine reads a drawn server's queue), where
/// [`ChainPick::member`] compares the target with the values one by one or by a window. A jump
/// that moves a count by one object changes one position. Chains over the same entries in the
/// same order (the M/M/1's arrivals, the entries `x_1` to `x_K` below the constant 1, and its
/// departures, the same entries above the constant 0) share one array.
#[derive(Debug, Clone, Default)]
struct ChainPositions {
    above: Vec<u16>,
}

impl ChainPositions {
    /// The positions of the counts `counts` (whole objects, in order: the entries among a
    /// chain's values), the array at least `top + 1` long.
    fn new(counts: &[f64], top: f64) -> ChainPositions {
        let len = (top.max(counts.first().copied().unwrap_or(0.0)).max(0.0) as usize) + 1;
        let mut above = vec![0u16; len];
        for &c in counts {
            for a in above.iter_mut().take(c.max(0.0) as usize) {
                *a += 1;
            }
        }
        ChainPositions { above }
    }

    /// The member at position `p` (`>= 0`).
    #[inline(always)]
    fn at(&self, p: usize) -> usize {
        self.above.get(p).map_or(0, |&a| a as usize)
    }

    /// A count moved by `change` objects to `new`: the positions between the old
    /// and the new count gain (or lose) one value above them. Negative positions are not held
    /// (no target reads them: [`ChainPick::member_at`] falls back where `p < 0`).
    #[inline(always)]
    fn moved(&mut self, new: i64, change: i32) {
        // one object: the position new - 1 gains, or new loses, a value above it (no branch
        // on the sign, which is a coin at every event of a queue near saturation)
        let p = new - ((change as i64 + 1) >> 1);
        match self.above.get_mut(p as usize) {
            Some(a) if change.unsigned_abs() == 1 => *a = a.wrapping_add(change as u16),
            _ => self.moved_by(new, change),
        }
    }

    /// [`ChainPositions::moved`] by more than one object, below zero or past the array's end.
    #[cold]
    #[inline(never)]
    fn moved_by(&mut self, new: i64, change: i32) {
        if change > 0 {
            for p in (new - change as i64).max(0)..new {
                let p = p as usize;
                if p >= self.above.len() {
                    self.above.resize(2 * (p + 1), 0);
                }
                self.above[p] += 1;
            }
        } else {
            for p in new.max(0)..new - change as i64 {
                self.above[p as usize] -= 1;
            }
        }
    }
}

/// The number of the values `x[first..first + W]` at or above `threshold` (no branch; `x` holds
/// them): in a chain's window of consecutive values in order, the index of the first below.
#[inline(always)]
fn count_above<const W: usize>(x: &[f64], first: usize, threshold: f64) -> usize {
    let w: &[f64; W] = x[first..first + W].try_into().expect("a window of W values");
    w.iter().map(|&v| (v >= threshold) as usize).sum()
}

impl ChainPick {
    /// The member that [`ChainPick::member`] draws for `rest`, read from the chain's
    /// [`ChainPositions`] `positions` (the counts `ent`): [`NULL_DRAW`] when the target is at or
    /// above the chain's total in whole objects, `None` where the position is negative (a count
    /// below zero; the caller then scans).
    #[inline(always)]
    fn member_at(&self, rest: f64, ent: &[Entry], mask: usize, positions: &ChainPositions) -> Option<usize> {
        let c0 = self.top_count + ent[self.top as usize & mask].count;
        let cm = self.bottom_count + ent[self.bottom as usize & mask].count;
        let r = rest * self.n_inv_e;
        if r >= c0 - cm {
            return Some(NULL_DRAW);
        }
        // floor(r) by truncation (r >= 0), in integers: no rounding call
        let p = c0 as i64 - 1 - r as i64;
        (p >= 0).then(|| positions.at(p as usize).saturating_sub(self.offset as usize).min((self.end - self.start) as usize))
    }

    /// The member (0-based, in the chain's order) whose slot of the chain's cumulative rate
    /// holds `rest` (`0 <= rest <` the chain's [`bound`]): the first `t` with `v_t < v_0 - rest
    /// / e`, never a member of rate 0 (its `v_{t-1} >= v_0 - rest / e > v_t`); [`NULL_DRAW`]
    /// when `v_m` is not below, that is when `rest` is at or above the chain's total `e (v_0 -
    /// v_m)` (in the slack of the bound, or past the total by rounding).
    #[inline(always)]
    fn member(&self, rest: f64, x: &[f64], mask: usize, slots: &[u32]) -> usize {
        let v = |i: u32| x[i as usize & mask];
        let v0 = self.a + self.b * v(self.head);
        let threshold = v0 - rest * self.inv_e;
        if self.d * v(self.tail) >= threshold {
            return NULL_DRAW;
        }
        let inner = &slots[self.start as usize..self.end as usize];
        let first = inner.first().map_or(0, |&s| s as usize);
        let len = inner.len();
        if self.window > 0 {
            // the window's count, then the binary search of the rest
            let counted = match self.window {
                16 => count_above::<16>(x, first, threshold),
                _ => count_above::<CHAIN_SCAN>(x, first, threshold),
            };
            let w = self.window as usize;
            if counted < w {
                return counted;
            }
            // the first below in the rest, else (`p = len - w`) the last member: `v_m` is below
            return w + x[first + w..first + len].partition_point(|&v| v >= threshold);
        }
        let scanned = inner.len().min(CHAIN_SCAN);
        for (t, &s) in inner[..scanned].iter().enumerate() {
            if v(s) < threshold {
                return t;
            }
        }
        // the last member when no interior value is below (`v_m` is)
        scanned + inner[scanned..].partition_point(|&s| v(s) >= threshold)
    }
}

/// The time integral of one state entry, kept lazily: its count of objects, the start of its
/// current value within the phase and the integral of its value up to then.
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    count: f64,
    since: f64,
    acc: f64,
}

impl Entry {
    /// The entry's count moved by `change` objects at time `now`, its value `v` (`count / N`,
    /// as `count (1 / N)`) held until then added to its integral.
    #[inline(always)]
    fn jump(&mut self, v: &mut f64, change: f64, now: f64, inv_n: f64) {
        self.acc += *v * (now - self.since);
        self.since = now;
        self.count += change;
        *v = self.count * inv_n;
    }
}

/// [`run`] for a model with [`IndexedTransitions`]: after each event only the rates that read
/// a changed entry are re-evaluated (the dependency graph), each by its [`RateForm`] where it
/// has one, the next transition is drawn from a [`SumTree`] or from [`BlockSums`] over the
/// leaves of [`leaf_order`], and the time averages are integrated lazily (an entry's `value x
/// duration` is added when it changes and at the batch boundaries), so an event costs
/// `O(affected rates x log transitions)` instead of `O(transitions + dim)`. The telescoping
/// chains of [`crate::telescoping::chains`] are one leaf each, holding the [`bound`] of their
/// rate `e (v_0 - v_m)`, their members drawn by [`ChainPick::member`] (a draw in the bound's
/// slack a null draw: no jump, not counted as an event). The same random numbers as [`run`]: one Exp(1)
/// variate for the holding time, one uniform for the transition; with up to `ARITY`
/// transitions and no chain also the same transition for the same uniform (the same order),
/// else another transition of the same law. The members of a chain are read from its
/// [`ChainPositions`] where [`run_indexed_in`]'s rule chooses them (`by_position` `None`), in
/// every chain that can hold them (`Some(true)`) or in none (`Some(false)`); the path is the
/// same, away from rounding.
#[allow(clippy::too_many_arguments)]
fn run_indexed(
    t: &dyn IndexedTransitions,
    graph: (&[usize], &[usize]),
    n: usize,
    x0: &[f64],
    opts: &PopulationOptions,
    record: bool,
    deadline: &Deadline,
    rng: &mut Xoshiro256PlusPlus,
    by_position: Option<bool>,
) -> Run {
    let big_n = opts.objects as f64;
    let chains = crate::telescoping::chains(t, n, big_n, x0);
    let (order, rates, blocks) = leaf_order(t, &chains, x0, big_n);
    let (order, rates, chains) = (&order[..], &rates[..], &chains[..]);
    // the state's length as a constant where it is small (no bounds checks on its entries)
    macro_rules! go {
        ($p:literal) => {
            if blocks {
                run_indexed_in::<$p, BlockSums>(t, graph, n, x0, opts, record, deadline, rng, chains, order, rates, by_position)
            } else {
                run_indexed_in::<$p, SumTree>(t, graph, n, x0, opts, record, deadline, rng, chains, order, rates, by_position)
            }
        };
    }
    match (n + 1).next_power_of_two() {
        0..=16 => go!(16),
        17..=256 => go!(256),
        257..=4096 => go!(4096),
        _ => go!(0),
    }
}

/// The leaves (`order[p]`: the item at leaf `p`; items `0..count` the transitions outside the
/// `chains`, in order, then `count + c` chain `c`), the items' rates at `x0` (rounded to
/// multiples of `1 / big_n`, by item: a chain's is `e (v_0 - v_m)`) and whether [`BlockSums`]
/// should hold them (else a [`SumTree`]): the leaves in the order of decreasing initial rate
/// (ties in the items' order) when there are more than `ARITY`, so that the scans stop early
/// where the rates are uneven (the optimized direct method of Cao, Li and Petzold, J. Chem.
/// Phys. 121(9), 2004); up to `ARITY` keep the items' order (that of [`run`] without chains).
/// The block sums when their expected scan (groups of `ARITY` leaves visited, weighted by the
/// initial rates; the measure this rule was set on before [`BlockSums`] took blocks of
/// [`BLOCK`]) is at most twice the tree's levels.
fn leaf_order(t: &dyn IndexedTransitions, chains: &[crate::telescoping::Chain], x0: &[f64], big_n: f64) -> (Vec<usize>, Vec<f64>, bool) {
    let x: Vec<f64> = x0.iter().map(|v| (v * big_n).round() * (1.0 / big_n)).collect();
    let count = t.count();
    let mut in_chain = vec![false; count];
    for c in chains {
        for &l in &c.members {
            in_chain[l] = true;
        }
    }
    let mut rates: Vec<f64> = (0..count).map(|l| if in_chain[l] { 0.0 } else { t.rate(l, &x).max(0.0) }).collect();
    rates.extend(chains.iter().map(|c| c.form().eval(&x).max(0.0)));
    let mut order: Vec<usize> = (0..rates.len()).filter(|&l| l >= count || !in_chain[l]).collect();
    let m = order.len();
    let mut blocks = false;
    if m > ARITY {
        order.sort_by(|&a, &b| rates[b].total_cmp(&rates[a]));
        let (mut total, mut weighted) = (0.0, 0.0);
        for (b, chunk) in order.chunks(ARITY).enumerate() {
            let w: f64 = chunk.iter().map(|&l| rates[l]).sum();
            total += w;
            weighted += (b + 1) as f64 * w;
        }
        let (mut width, mut levels) = (ARITY, 1);
        while width < m {
            width *= ARITY;
            levels += 1;
        }
        blocks = total > 0.0 && weighted <= 2.0 * levels as f64 * total;
    }
    (order, rates, blocks)
}

/// [`run_indexed`] with the state kept in `P` slots (a power of two, `> dim`), or in as many
/// as needed (`P = 0`): entries indexed by `i & (P - 1)`, which needs no bounds check; the
/// transitions drawn from an `S` over the leaves `order` of [`leaf_order`] (their initial
/// `rates`), the members of the `chains` by [`ChainPick::member`] or from their
/// [`ChainPositions`] (`by_position` as in [`run_indexed`]; by the rule, the chains whose
/// mean member at the start is beyond [`POSITIONS_MEAN_MEMBER`]).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn run_indexed_in<const P: usize, S: Selector>(
    t: &dyn IndexedTransitions,
    (affected, aff_ptr): (&[usize], &[usize]),
    n: usize,
    x0: &[f64],
    opts: &PopulationOptions,
    record: bool,
    deadline: &Deadline,
    rng_out: &mut Xoshiro256PlusPlus,
    chains: &[crate::telescoping::Chain],
    order: &[usize],
    rates: &[f64],
    by_position: Option<bool>,
) -> Run {
    // the generator in a local (its state in registers, not stored back at every draw)
    let mut rng_state = rng_out.clone();
    let rng = &mut rng_state;
    let big_n = opts.objects as f64;
    // the entries, then the constant 1 of the rate forms (slot n), then zeros: a power of two
    // long, so that masked indices need no bounds check
    let len = if P > 0 { P } else { (n + 1).next_power_of_two() };
    let mask = len - 1;
    let mut ent: Vec<Entry> = x0.iter().map(|v| Entry { count: (v * big_n).round(), ..Default::default() }).collect();
    ent.resize(len, Entry::default());
    // x = count / N as count (1 / N) (a multiplication, not a division, after each jump), as in
    // `run`
    let inv_n = 1.0 / big_n;
    let mut x: Vec<f64> = ent[..n].iter().map(|e| e.count * inv_n).chain([1.0]).collect();
    x.resize(len, 0.0);
    let m = t.count();
    // leaf_of[item]: the leaf of a transition outside the chains (items 0..m) or of chain c
    // (item m + c); chain_of[l]: the chain of transition l
    let mut leaf_of = vec![usize::MAX; m + chains.len()];
    for (p, &item) in order.iter().enumerate() {
        leaf_of[item] = p;
    }
    let x0r: Vec<f64> = x0.iter().map(|v| (v * big_n).round() * inv_n).collect();
    let mut chain_of = vec![NO_CHAIN; m];
    for (c, chain) in chains.iter().enumerate() {
        for &l in &chain.members {
            chain_of[l] = c as u32;
        }
    }
    // ends[i]: the chains whose total reads entry i (at v_0 or v_m)
    let mut ends: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (c, chain) in chains.iter().enumerate() {
        for v in [chain.values[0], chain.values[chain.values.len() - 1]] {
            if let crate::telescoping::Value::Slot(i) = v {
                if !ends[i].contains(&c) {
                    ends[i].push(c);
                }
            }
        }
    }
    // a chain's leaf holds the bound of its total
    let leaf_rates: Vec<f64> = order.iter().map(|&item| if item >= m { bound(rates[item]) } else { rates[item] }).collect();
    let mut tree = S::new(&leaf_rates);
    // every leaf's jump and updates, copied out of the model (no call per event)
    let slot = |i: Option<usize>| i.unwrap_or(n) as u32;
    let item_form = |item: usize| if item < m { t.form(item) } else { Some(chains[item - m].form()) };
    let form = |p: usize| {
        let f = item_form(order[p]).unwrap_or(RateForm { a: 0.0, b: 0.0, i: None, i2: None, d: 0.0, j: None, j2: None, e: 0.0, k: None });
        Update {
            a: f.a,
            b: f.b,
            d: f.d,
            e: f.e,
            i: slot(f.i),
            i2: slot(f.i2),
            j: slot(f.j),
            j2: slot(f.j2),
            k: slot(f.k),
            leaf: 0,
            last: false,
        }
    };
    // the transition of each leaf whose rate has no form (usize::MAX for the others)
    let program_of: Vec<usize> = order.iter().map(|&item| if item_form(item).is_none() { item } else { usize::MAX }).collect();
    // the chains whose members are read by position (ChainPositions): every chain of whole
    // non-negative counts up to POSITIONS_MAX objects, with fewer than 2^16 - 2 values, whose
    // mean member at the start is beyond POSITIONS_MEAN_MEMBER (where it is not, the scan one
    // by one is as quick or quicker); arrays_of[i]: the positions' arrays that hold entry i;
    // shared[entries]: the array of the chains over those entries
    let count_of = |v: crate::telescoping::Value| match v {
        crate::telescoping::Value::Slot(i) => (x0[i] * big_n).round(),
        crate::telescoping::Value::Const(c) => c * big_n,
    };
    let (mut positions, mut position_of) = (Vec::new(), vec![NO_POSITIONS; chains.len()]);
    let mut arrays_of: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut shared: std::collections::HashMap<Vec<usize>, u32> = std::collections::HashMap::new();
    for (c, chain) in chains.iter().enumerate() {
        let counts: Vec<f64> = chain.values.iter().map(|&v| count_of(v)).collect();
        let interior = &chain.values[1..chain.values.len() - 1];
        let member_rates: Vec<f64> = chain.members.iter().map(|&l| t.rate(l, &x0r).max(0.0)).collect();
        let mean_member = member_rates.iter().enumerate().map(|(t, r)| t as f64 * r).sum::<f64>() / member_rates.iter().sum::<f64>();
        let short = by_position.is_none() && mean_member.partial_cmp(&POSITIONS_MEAN_MEMBER) != Some(std::cmp::Ordering::Greater);
        if !short
            && by_position != Some(false)
            && counts.iter().all(|&k| (0.0..=POSITIONS_MAX).contains(&k))
            && interior.len() < u16::MAX as usize - 2
        {
            let entries: Vec<usize> =
                chain.values.iter().filter_map(|v| if let crate::telescoping::Value::Slot(i) = *v { Some(i) } else { None }).collect();
            position_of[c] = *shared.entry(entries.clone()).or_insert_with(|| {
                let a = positions.len() as u32;
                for &i in &entries {
                    arrays_of[i].push(a);
                }
                let counts: Vec<f64> = entries.iter().map(|&i| (x0[i] * big_n).round()).collect();
                positions.push(ChainPositions::new(&counts, counts.first().copied().unwrap_or(0.0)));
                a
            });
        }
    }
    // the leaves of the chains whose ends the jump of transition l moves (sorted, once each)
    let chain_leaves_of = |l: usize, out: &mut Vec<usize>| {
        out.clear();
        for &(i, c) in t.jump(l) {
            if c != 0.0 && i < n {
                out.extend(ends[i].iter().map(|&c| leaf_of[m + c]));
            }
        }
        out.sort_unstable();
        out.dedup();
    };
    // every step re-evaluates as many chains' bounds as the step that moves most chains' ends
    // (at most PAD_CHAIN_UPDATES), the others padded with the first chain's: the loop over them
    // is then as long at every event, where a loop of none or one (as the jump moves a chain's
    // end or not) exited at random, at one event in two in the generic M/M/1 at lambda = 0.5,
    // whose departures' chain starts at x_1 (bench/rows-sim.md). A bound re-evaluated from
    // ends that have not moved is the one the leaf holds, so no rate or path changes.
    let (mut jumps, mut updates, mut leaves, mut chain_leaves, mut moves) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let most_chain_updates = order
        .iter()
        .filter(|&&item| item < m)
        .chain(chains.iter().flat_map(|c| c.members.iter()))
        .map(|&l| {
            chain_leaves_of(l, &mut chain_leaves);
            chain_leaves.len()
        })
        .max()
        .unwrap_or(0);
    let pad_chain_updates = if chains.is_empty() || most_chain_updates > PAD_CHAIN_UPDATES { 0 } else { most_chain_updates };
    let pad_leaf = if chains.is_empty() { 0 } else { leaf_of[m] };
    // the step of transition l: its jump, the leaves whose rates it changes (those of the
    // affected transitions outside the chains) and the leaves of the chains whose ends it moves
    // (their updates after the others', one group each)
    let mut step_of = |l: usize, jumps: &mut Vec<(usize, f64)>, updates: &mut Vec<Update>, moves: &mut Vec<(u32, u32, i32)>| {
        let (j0, u0, m0) = (jumps.len(), updates.len(), moves.len());
        jumps.extend_from_slice(t.jump(l));
        // a chain's jumps are whole objects (crate::telescoping::chains)
        for &(i, c) in t.jump(l) {
            if c != 0.0 && i < n {
                moves.extend(arrays_of[i].iter().map(|&a| (i as u32, a, c as i32)));
            }
        }
        leaves.clear();
        leaves.extend(affected[aff_ptr[l]..aff_ptr[l + 1]].iter().filter(|&&r| chain_of[r] == NO_CHAIN).map(|&r| leaf_of[r]));
        leaves.sort_unstable();
        leaves.dedup();
        tree.push_updates(&leaves, updates, form);
        let program = leaves.iter().any(|&p| program_of[p] != usize::MAX);
        let linear = updates[u0..].iter().all(|u: &Update| u.is_linear(n));
        let u1 = updates.len();
        chain_leaves_of(l, &mut chain_leaves);
        while chain_leaves.len() < pad_chain_updates {
            chain_leaves.push(pad_leaf);
        }
        for &p in &chain_leaves {
            tree.push_updates(&[p], updates, form);
        }
        (j0..jumps.len(), u0..u1, u1..updates.len(), m0..moves.len(), program, linear, NO_CHAIN)
    };
    let mut ranges = Vec::with_capacity(order.len());
    for &item in order {
        if item < m {
            ranges.push(step_of(item, &mut jumps, &mut updates, &mut moves));
        } else {
            ranges.push((0..0, 0..0, 0..0, 0..0, false, true, (item - m) as u32));
        }
    }
    // the chains' members' steps, chain after chain, and the chains' interior values
    type Ranges = (std::ops::Range<usize>, std::ops::Range<usize>, std::ops::Range<usize>, std::ops::Range<usize>, bool, bool, u32);
    let (mut member_ranges, mut slots, mut picks): (Vec<Ranges>, _, _) = (Vec::new(), Vec::new(), Vec::with_capacity(chains.len()));
    for (c, chain) in chains.iter().enumerate() {
        let (f, start) = (chain.form(), slots.len() as u32);
        let values = &chain.values;
        slots.extend(values[1..values.len() - 1].iter().map(|v| match *v {
            crate::telescoping::Value::Slot(i) => i as u32,
            crate::telescoping::Value::Const(_) => unreachable!("a chain's interior values are state entries"),
        }));
        let base = member_ranges.len() as u32;
        for &l in &chain.members {
            member_ranges.push(step_of(l, &mut jumps, &mut updates, &mut moves));
        }
        // members whose jumps are one change, the same, of consecutive entries: the jump made
        // from the member (ChainPick::jump_first), their steps with none
        let own = &member_ranges[base as usize..];
        let one = |r: &Ranges| (r.0.len() == 1).then(|| jumps[r.0.start]);
        let (jump_first, jump_change) = match own.first().and_then(one) {
            Some((i0, c0)) if c0 != 0.0 && own.iter().enumerate().all(|(t, r)| one(r) == Some((i0 + t, c0))) && i0 + own.len() <= n => {
                for r in &mut member_ranges[base as usize..] {
                    r.0 = r.0.start..r.0.start;
                }
                (i0 as u32, c0)
            }
            _ => (u32::MAX, 0.0),
        };
        let (a, b, head, d, tail, inv_e) = (f.a, f.b, slot(f.i), f.d, slot(f.j), 1.0 / f.e);
        let inner = &slots[start as usize..];
        let consecutive = inner.windows(2).all(|w| w[1] == w[0] + 1);
        // the smallest window that holds the member 19 times in 20 at the initial rates, none
        // (one by one) where 8 do: at lambda = 0.5 the M/M/1's scan one by one, mostly of one
        // or two members, took 0.81 CPU s where a window of 8 took 0.90 (bench/rows-sim.md)
        let member_rates: Vec<f64> = chain.members.iter().map(|&l| t.rate(l, &x0r).max(0.0)).collect();
        let total: f64 = member_rates.iter().sum();
        let held = |w: usize| member_rates[..w.min(member_rates.len())].iter().sum::<f64>() >= 0.95 * total;
        let window = [8, 16, CHAIN_SCAN]
            .into_iter()
            .find(|&w| held(w))
            .unwrap_or(CHAIN_SCAN)
            .min(if consecutive && inner.first().is_some_and(|&s| s as usize + inner.len() <= len) { inner.len() } else { 0 });
        let window = if [16, CHAIN_SCAN].contains(&window) { window as u8 } else { 0 };
        // v_0 and v_m in whole objects: an entry's count (the constant's slot n, count 0) plus a
        // constant
        let end_of = |v: crate::telescoping::Value| match v {
            crate::telescoping::Value::Slot(i) => (i as u32, 0.0),
            crate::telescoping::Value::Const(k) => (n as u32, k * big_n),
        };
        let ((top, top_count), (bottom, bottom_count)) = (end_of(values[0]), end_of(values[values.len() - 1]));
        picks.push(ChainPick {
            a,
            b,
            head,
            d,
            tail,
            inv_e,
            start,
            end: slots.len() as u32,
            base,
            window,
            positions: position_of[c],
            offset: matches!(values[0], crate::telescoping::Value::Slot(_)) as u32,
            top,
            top_count,
            bottom,
            bottom_count,
            n_inv_e: big_n / f.e,
            jump_first,
            jump_change,
        });
    }
    let to_step = |(j, u, cu, mv, program, linear, chain): Ranges| Step {
        jump: &jumps[j],
        updates: &updates[u],
        chain_updates: &updates[cu],
        moves: &moves[mv],
        program,
        linear,
        chain,
    };
    let steps: Vec<Step> = ranges.into_iter().map(to_step).collect();
    let member_steps: Vec<Step> = member_ranges.into_iter().map(to_step).collect();
    // a null draw's step: nothing moves
    let null_step = Step { jump: &[], updates: &[], chain_updates: &[], moves: &[], program: false, linear: true, chain: NO_CHAIN };
    let first_slot = tree.first_slot();
    let batch_len = opts.time / opts.batches as f64;
    let end = opts.warmup + opts.time;
    // phase 0 is the warm-up, phase p >= 1 batch p - 1; `batch[p - 1][i]`: the integral of
    // entry i over batch p - 1, taken from `ent[i].acc` at the phase's close
    let mut batch = vec![vec![0.0; n]; opts.batches];
    let mut phase = 0usize;
    let phase_end = |p: usize| if p >= opts.batches { end } else { opts.warmup + p as f64 * batch_len };
    let mut boundary = phase_end(0);
    let mut traj = (Vec::new(), Vec::new());
    let mut next_record = if record { opts.record } else { None }.map(|_| 0.0);
    // the next time at which something besides an event happens (a record, a phase's close,
    // the end), and the next event count at which to stop or look at the deadline
    let mut stop = boundary.min(next_record.unwrap_or(f64::INFINITY));
    let check = crate::DEADLINE_CHECK_EVENTS;
    // the tree rebuilt at a multiple of the deadline's checks
    let rebuild = (tree.rebuild_every() as u64).div_ceil(check) * check;
    let mut limit = opts.max_events.min(check);
    let (mut now, mut events, mut stopped_early) = (0.0f64, 0u64, false);
    let mut timed_out = deadline.expired();
    let (ent, x) = if P > 0 { (&mut ent[..P], &mut x[..P]) } else { (&mut ent[..], &mut x[..]) };
    while !timed_out {
        let total = tree.total();
        // the holding time as `holding_time` gives it, its tests on the rare path: a total
        // that is not positive and finite gives a `dt` that is not positive, or NaN
        let dt = exp1(rng) / (big_n * total);
        let mut t_next = now + dt;
        if !(t_next < stop && dt > 0.0) {
            if !(total > 0.0 && total < f64::INFINITY) {
                t_next = f64::INFINITY;
            }
            let t_next = t_next.min(end);
            if next_record.is_some() {
                record_until(&mut traj, &mut next_record, opts.record, t_next, &x[..n]);
            }
            // close the phases that end by t_next (each entry's value held to the boundary)
            while boundary <= t_next && phase <= opts.batches {
                for (e, v) in ent.iter_mut().zip(x.iter()) {
                    e.acc += v * (boundary - e.since);
                    e.since = boundary;
                }
                if phase >= 1 {
                    for (s, e) in batch[phase - 1].iter_mut().zip(ent.iter()) {
                        *s = e.acc;
                    }
                }
                ent.iter_mut().for_each(|e| e.acc = 0.0);
                phase += 1;
                boundary = phase_end(phase);
            }
            if t_next >= end {
                break;
            }
            stop = boundary.min(next_record.unwrap_or(f64::INFINITY));
        }
        now = t_next;
        let (p, rest) = tree.locate(rng.random::<f64>() * total);
        let mut step = steps[p];
        let mut real = true;
        if step.chain != NO_CHAIN {
            let c = &picks[step.chain as usize];
            let member = match c.positions {
                NO_POSITIONS => None,
                a => c.member_at(rest, ent, mask, &positions[a as usize]),
            };
            step = match member.unwrap_or_else(|| c.member(rest, x, mask, &slots)) {
                NULL_DRAW => {
                    real = false;
                    null_step
                }
                t => {
                    if c.jump_first != u32::MAX {
                        let i = (c.jump_first as usize + t) & mask;
                        ent[i].jump(&mut x[i], c.jump_change, now, inv_n);
                    }
                    member_steps[c.base as usize + t]
                }
            };
        }
        for &(i, c) in step.jump {
            ent[i & mask].jump(&mut x[i & mask], c, now, inv_n);
        }
        for &(i, a, c) in step.moves {
            positions[a as usize].moved(ent[i as usize & mask].count as i64, c);
        }
        let us = step.updates;
        if step.linear && !step.program {
            tree.apply(us, |u| u.linear_rate(x, mask));
        } else if step.program {
            tree.apply(us, |u| match program_of[u.leaf as usize - first_slot] {
                usize::MAX => u.rate(x, mask),
                l => t.rate(l, &x[..n]),
            });
        } else {
            tree.apply(us, |u| u.rate(x, mask));
        }
        // the chains' bounds, only where they move (a branch that is almost never taken, so the
        // next target need not wait for the total: see `bound`)
        for u in step.chain_updates {
            let b = bound(u.linear_rate(x, mask).max(0.0));
            if b != tree.leaf(u) {
                tree.apply(std::slice::from_ref(u), |_| b);
            }
        }
        events += real as u64;
        if events >= limit {
            if events >= opts.max_events {
                stopped_early = true;
                break;
            }
            if events % check == 0 && deadline.expired() {
                timed_out = true;
                break;
            }
            if events % rebuild == 0 {
                tree.rebuild();
            }
            limit = opts.max_events.min((events / check + 1) * check);
        }
    }
    // a run stopped early: the open batch up to the stopping time
    if phase >= 1 && phase <= opts.batches {
        for ((s, e), v) in batch[phase - 1].iter_mut().zip(ent.iter()).zip(x.iter()) {
            *s = e.acc + v * (now - e.since);
        }
    }
    *rng_out = rng_state;
    let batch_means = batch.into_iter().map(|s| s.into_iter().map(|v| v / batch_len).collect()).collect();
    Run { batch_means, events, stopped_early, timed_out, trajectory: traj }
}

fn run(
    model: &dyn MeanFieldModel,
    x0: &[f64],
    opts: &PopulationOptions,
    record: bool,
    deadline: &Deadline,
    rng: &mut Xoshiro256PlusPlus,
) -> Run {
    let n = model.dim();
    let big_n = opts.objects as f64;
    let mut counts: Vec<f64> = x0.iter().map(|v| (v * big_n).round()).collect();
    let inv_n = 1.0 / big_n;
    let mut x: Vec<f64> = counts.iter().map(|c| c * inv_n).collect();
    let batch_len = opts.time / opts.batches as f64;
    let end = opts.warmup + opts.time;
    let mut acc = vec![vec![0.0; n]; opts.batches];
    // rates and jumps of the current state (buffers reused from event to event)
    let mut rates: Vec<f64> = Vec::new();
    let mut jump_ptr: Vec<usize> = Vec::new();
    let mut jumps: Vec<(usize, f64)> = Vec::new();
    let mut traj = (Vec::new(), Vec::new());
    let mut next_record = if record { opts.record } else { None }.map(|_| 0.0);
    let (mut t, mut events, mut stopped_early, mut timed_out) = (0.0f64, 0u64, false, false);
    while t < end {
        if events % crate::DEADLINE_CHECK_EVENTS == 0 && deadline.expired() {
            timed_out = true;
            break;
        }
        rates.clear();
        jumps.clear();
        jump_ptr.clear();
        jump_ptr.push(0);
        let Some(transitions) = model.transitions() else { break };
        transitions.visit(&x, &mut |jump, rate| {
            rates.push(rate.max(0.0));
            jumps.extend_from_slice(jump);
            jump_ptr.push(jumps.len());
        });
        let total: f64 = rates.iter().sum();
        let dt = holding_time(rng, big_n, total);
        let t_next = (t + dt).min(end);
        // record the state held over [t, t_next)
        record_until(&mut traj, &mut next_record, opts.record, t_next.min(end), &x);
        // time averages over the batches that [t, t_next) overlaps
        let mut a = t.max(opts.warmup);
        while a < t_next {
            let mut b = ((a - opts.warmup) / batch_len).floor() as usize;
            // `a` at a batch boundary whose quotient rounded down: the next batch (else the
            // rest of [a, t_next) would be lost)
            if opts.warmup + (b + 1) as f64 * batch_len <= a {
                b += 1;
            }
            let b = b.min(opts.batches - 1);
            let batch_end = opts.warmup + (b + 1) as f64 * batch_len;
            let seg_end = t_next.min(batch_end);
            let w = seg_end - a;
            if w > 0.0 {
                acc[b].iter_mut().zip(&x).for_each(|(s, v)| *s += w * v);
            }
            if seg_end <= a {
                break;
            }
            a = seg_end;
        }
        if t_next >= end {
            break;
        }
        t = t_next;
        // the transition: l with probability rate_l / total
        let mut target = rng.random::<f64>() * total;
        let mut l = rates.len() - 1;
        for (i, r) in rates.iter().enumerate() {
            if target < *r {
                l = i;
                break;
            }
            target -= r;
        }
        for &(i, c) in &jumps[jump_ptr[l]..jump_ptr[l + 1]] {
            counts[i] += c;
            x[i] = counts[i] * inv_n;
        }
        events += 1;
        if events >= opts.max_events {
            stopped_early = true;
            break;
        }
    }
    let batch_means = acc.into_iter().map(|s| s.into_iter().map(|v| v / batch_len).collect()).collect();
    Run { batch_means, events, stopped_early, timed_out, trajectory: traj }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mfq_model::models::Jsq;

    #[test]
    fn mm1_queues_have_geometric_tails() {
        // random routing: N independent M/M/1 queues; E[x_k] = lambda^k exactly (V = 0)
        let m = Jsq::new(0.5, 1, 12).unwrap();
        let opts = PopulationOptions { objects: 200, time: 400.0, warmup: 20.0, replications: 2, ..Default::default() };
        let r = simulate_population(&m, &[0.0; 12], &opts).unwrap();
        assert!(!r.stopped_early && r.events > 10_000);
        for k in 0..4 {
            let want = 0.5f64.powi(k as i32 + 1);
            assert!(r.mean[k].covers(want, 0.999, 0.01), "k = {}: {:?} vs {want}", k + 1, r.mean[k]);
        }
    }

    /// A tiny wall-clock limit on a long population run stops it at once, and says so.
    #[test]
    fn a_wall_clock_limit_stops_the_run() {
        let m = Jsq::new(0.9, 2, 20).unwrap();
        let opts = PopulationOptions { objects: 100_000, time: 1e7, deadline: Deadline::after(0.05), ..Default::default() };
        let started = std::time::Instant::now();
        let r = simulate_population(&m, &[0.0; 20], &opts).unwrap();
        assert_eq!(r.status, crate::SimStatus::TimeLimit { seconds: 0.05 });
        assert!(started.elapsed().as_secs_f64() < 1.0, "{:?}", started.elapsed());
    }

    /// The cancel flag of the shared deadline (the Python package's Ctrl-C) stops the
    /// population process run as a `SimReport` from another thread.
    #[test]
    fn the_cancel_flag_stops_the_run() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let m = Jsq::new(0.9, 2, 20).unwrap();
        let spec = mfq_model::ModelSpec::from(mfq_model::models::JsqSpec { lambda: 0.9, d: 2 });
        let flag = std::sync::Arc::new(AtomicBool::new(false));
        let setter = flag.clone();
        let opts = crate::SimOptions {
            servers: 100_000,
            time: 1e7,
            replications: 2,
            deadline: Deadline::none().with_cancel(flag),
            ..Default::default()
        };
        let started = std::time::Instant::now();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            setter.store(true, Ordering::Relaxed);
        });
        let r = simulate_as_report(&spec, &m, &[0.0; 20], &opts).unwrap();
        t.join().unwrap();
        assert_eq!(r.status, crate::SimStatus::Cancelled);
        assert!(started.elapsed().as_secs_f64() < 1.5, "{:?}", started.elapsed());
    }

    /// The generic SIRS model: three transitions of three shapes, so `visit` gives them in
    /// their declared order, the order of [`IndexedTransitions`].
    const SIRS: &str = r#"
[model]
kind = "generic"
variables = ["S", "I", "R"]
[model.parameters]
a = 0.1
b = 2.0
[[model.transitions]]
jump = { S = -1, I = 1 }
rate = "(a + b * I) * S"
[[model.transitions]]
jump = { I = -1, R = 1 }
rate = "I"
[[model.transitions]]
jump = { R = -1, S = 1 }
rate = "0.5 * R"
[[model.conservation]]
sum = ["S", "I", "R"]
value = 1
eliminate = "R"
"#;

    /// With the transitions in the same order, the incremental run (dependency graph, sum
    /// tree, lazy time averages) follows the same path as re-evaluating every rate at every
    /// event: the same events, the same recorded states, the same averages up to rounding;
    /// also when the warm-up is zero, for a run cut by `max_events`.
    #[test]
    fn incremental_and_full_evaluation_follow_the_same_path() {
        let file = mfq_model::ModelFile::parse(SIRS, &[]).unwrap();
        let m = file.model.build(1).unwrap();
        let t = m.transitions().unwrap().indexed().unwrap();
        assert_eq!(t.count(), 3);
        let graph = dependency_graph(t, m.dim()).unwrap();
        for (warmup, max_events) in [(10.0, 1_000_000_000), (0.0, 20_000)] {
            let opts =
                PopulationOptions { objects: 300, time: 200.0, warmup, batches: 7, record: Some(3.0), max_events, ..Default::default() };
            let x0 = [0.7, 0.1];
            let d = Deadline::none();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
            let a = run_indexed(t, (&graph.0, &graph.1), 2, &x0, &opts, true, &d, &mut rng, None);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
            let b = run(m.as_ref(), &x0, &opts, true, &d, &mut rng);
            assert!(a.events > 10_000);
            assert_eq!((a.events, a.stopped_early), (b.events, b.stopped_early));
            assert_eq!(a.trajectory, b.trajectory);
            for (ba, bb) in a.batch_means.iter().zip(&b.batch_means) {
                for (u, v) in ba.iter().zip(bb) {
                    assert!((u - v).abs() < 1e-9, "warmup {warmup}: {u} vs {v} in {:?} vs {:?}", a.batch_means, b.batch_means);
                }
            }
        }
    }

    /// The generic M/M/1 (hundreds of transitions in two telescoping chains): the
    /// incremental run has the geometric tail `x_k = lambda^k` and `L = lambda / (1 - lambda)`.
    #[test]
    fn generic_mm1_by_the_dependency_graph_has_geometric_tails() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/generic/mm1.toml")).unwrap();
        let file = mfq_model::ModelFile::parse(&text, &["lambda=0.5".into(), "K=60".into()]).unwrap();
        let m = file.model.build(60).unwrap();
        let t = m.transitions().unwrap().indexed().unwrap();
        assert!(t.count() >= 100);
        // (its arrivals and its departures are telescoping chains, each one leaf)
        assert_eq!(crate::telescoping::chains(t, m.dim(), 200.0, &vec![0.0; m.dim()]).len(), 2);
        let opts = PopulationOptions { objects: 200, time: 400.0, warmup: 20.0, replications: 2, ..Default::default() };
        let r = simulate_population(m.as_ref(), &vec![0.0; m.dim()], &opts).unwrap();
        assert!(!r.stopped_early && r.events > 10_000);
        for k in 0..4 {
            let want = 0.5f64.powi(k as i32 + 1);
            assert!(r.mean[k].covers(want, 0.999, 0.01), "k = {}: {:?} vs {want}", k + 1, r.mean[k]);
        }
        assert!(r.total.covers(1.0, 0.999, 0.02), "{:?}", r.total);
    }

    /// The sum tree: totals, updates and selection by the cumulative rate, zero leaves never
    /// selected.
    #[test]
    fn the_sum_tree_selects_by_cumulative_rate() {
        let mut tree = SumTree::new(&[1.0, 0.0, 2.0, 0.5, 0.0]);
        assert_eq!(tree.total(), 3.5);
        assert_eq!([tree.select(0.0), tree.select(0.99), tree.select(1.0), tree.select(2.99), tree.select(3.0)], [0, 0, 2, 2, 3]);
        // rounding past the total still lands on a positive leaf
        assert_eq!(tree.select(3.6), 3);
        tree.update(&[1, 3], &[4.0, 0.0]);
        assert_eq!(tree.total(), 7.0);
        assert_eq!([tree.select(0.5), tree.select(1.5), tree.select(6.5), tree.select(7.5)], [0, 1, 2, 2]);
    }

    /// A selector `S` over 600 rates (some zero) under 2,000 random sorted updates agrees with
    /// the linear scan of [`run`]: the same total up to rounding, the same transition for
    /// random targets away from the rounding of a boundary, never a zero rate.
    fn agrees_with_the_linear_scan<S: Selector>(seed: u64) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let draw = |rng: &mut Xoshiro256PlusPlus| if rng.random::<f64>() < 0.2 { 0.0 } else { rng.random::<f64>() };
        let mut rates: Vec<f64> = (0..600).map(|_| draw(&mut rng)).collect();
        let mut sel = S::new(&rates);
        for _ in 0..2000 {
            let mut leaves: Vec<usize> = (0..5).map(|_| rng.random_range(0..600)).collect();
            leaves.sort_unstable();
            leaves.dedup();
            let new: Vec<f64> = leaves.iter().map(|_| draw(&mut rng)).collect();
            for (&l, &r) in leaves.iter().zip(&new) {
                rates[l] = r;
            }
            sel.update(&leaves, &new);
            let sum: f64 = rates.iter().sum();
            assert!((sel.total() - sum).abs() < 1e-12 * sum, "{} vs {sum}", sel.total());
            let target = rng.random::<f64>() * sum;
            let (mut rest, mut want) = (target, rates.len() - 1);
            for (i, r) in rates.iter().enumerate() {
                if rest < *r {
                    want = i;
                    break;
                }
                rest -= r;
            }
            if rest > 1e-9 && rates[want] - rest > 1e-9 {
                assert_eq!(sel.select(target), want, "target {target}");
            }
            assert!(rates[sel.select(target)] > 0.0);
        }
    }

    /// The 8-ary tree over 600 rates (4 levels) agrees with the linear scan.
    #[test]
    fn the_sum_tree_agrees_with_the_linear_scan() {
        agrees_with_the_linear_scan::<SumTree>(11);
    }

    /// A tree of one level (at most ARITY leaves, some of them zero) locates without branches
    /// the same leaf and the same remainder, to the bit, as the scan one by one, targets past
    /// the total by rounding included.
    #[test]
    fn a_one_level_tree_locates_as_its_scan() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(21);
        let (mut scanned, mut past) = (0, 0);
        for used in 1..=ARITY {
            for _ in 0..200 {
                let rates: Vec<f64> = (0..used).map(|_| if rng.random::<f64>() < 0.25 { 0.0 } else { rng.random::<f64>() }).collect();
                let tree = SumTree::new(&rates);
                assert_eq!(tree.height, 1);
                for _ in 0..50 {
                    let target = rng.random::<f64>() * 1.02 * tree.total();
                    let (a, b) = (tree.locate(target), tree.locate_by_scan(target));
                    assert_eq!((a.0, a.1.to_bits()), (b.0, b.1.to_bits()), "rates {rates:?}, target {target}");
                    scanned += 1;
                    past += usize::from(target >= tree.total());
                }
            }
        }
        // targets past the total (the fall-back to the scan) were among them
        assert!(past > 100 && scanned == ARITY * 200 * 50, "{past} of {scanned}");
    }

    /// The block sums: totals, updates and selection by the cumulative rate, zero leaves
    /// never selected, within a block and across blocks.
    #[test]
    fn the_block_sums_select_by_cumulative_rate() {
        let mut sums = BlockSums::new(&[1.0, 0.0, 2.0, 0.5, 0.0]);
        assert_eq!(sums.total(), 3.5);
        assert_eq!([sums.select(0.0), sums.select(0.99), sums.select(1.0), sums.select(2.99), sums.select(3.0)], [0, 0, 2, 2, 3]);
        // rounding past the total still lands on a positive leaf
        assert_eq!(sums.select(3.6), 3);
        sums.update(&[1, 3], &[4.0, 0.0]);
        assert_eq!(sums.total(), 7.0);
        assert_eq!([sums.select(0.5), sums.select(1.5), sums.select(6.5), sums.select(7.5)], [0, 1, 2, 2]);
        // three blocks: 1 at leaf 0, 2 at leaf BLOCK + 1 (block 1), 0.5 at leaf 2 BLOCK + 1
        // (block 2)
        let (l1, l2) = (BLOCK + 1, 2 * BLOCK + 1);
        let mut rates = vec![0.0; 2 * BLOCK + 4];
        (rates[0], rates[l1], rates[l2]) = (1.0, 2.0, 0.5);
        let mut sums = BlockSums::new(&rates);
        assert_eq!([sums.select(0.5), sums.select(1.0), sums.select(2.99), sums.select(3.2), sums.select(3.6)], [0, l1, l1, l2, l2]);
        sums.update(&[l1, l2], &[0.0, 0.0]);
        assert_eq!([sums.select(0.5), sums.select(1.5)], [0, 0]);
        // two updated leaves in one block and one in the next: each block's sum and the total
        let mut sums = BlockSums::new(&rates);
        sums.update(&[1, 2, l1], &[0.25, 0.5, 1.0]);
        assert_eq!((sums.block[0], sums.block[1], sums.block[2], sums.total()), (1.75, 1.0, 0.5, 3.25));
        assert_eq!([sums.select(1.1), sums.select(1.5), sums.select(2.0), sums.select(3.0)], [1, 2, l1, l2]);
    }

    /// The block sums over 600 rates (19 blocks, some zero) under random sorted updates agree
    /// with the linear scan of [`run`], as the tree does; and both select each leaf with the
    /// frequency of its rate.
    #[test]
    fn the_block_sums_agree_with_the_linear_scan() {
        agrees_with_the_linear_scan::<BlockSums>(12);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
        // frequencies: 20 uneven rates (three zero), 200,000 uniform targets, each leaf's count
        // within 5 standard deviations of its expectation, never a zero leaf
        let rates: Vec<f64> = (0..20).map(|l| if l % 7 == 3 { 0.0 } else { 0.9f64.powi(l) }).collect();
        let total: f64 = rates.iter().sum();
        let tree = SumTree::new(&rates);
        let sums = BlockSums::new(&rates);
        let draws = 200_000;
        let (mut by_tree, mut by_sums) = (vec![0u32; 20], vec![0u32; 20]);
        for _ in 0..draws {
            let target = rng.random::<f64>() * total;
            by_tree[tree.select(target)] += 1;
            by_sums[sums.select(target)] += 1;
        }
        for (l, r) in rates.iter().enumerate() {
            let p = r / total;
            let (mean, sd) = (draws as f64 * p, (draws as f64 * p * (1.0 - p)).sqrt());
            for count in [by_tree[l], by_sums[l]] {
                assert!((count as f64 - mean).abs() <= 5.0 * sd, "leaf {l}: {count} vs {mean}");
                if *r == 0.0 {
                    assert_eq!(count, 0, "leaf {l}");
                }
            }
        }
    }

    /// A telescoping chain's member as [`ChainPick::member`] draws it (by a window's count and
    /// the binary search where its interior values are consecutive slots, for each window, one
    /// by one where not, and in chains shorter than the largest window), and as
    /// [`ChainPick::member_at`] reads it from the chain's [`ChainPositions`], is the member a
    /// linear scan of the members' own rates `e (v_{t-1} - v_t)` gives for the same target,
    /// away from rounding, and never a member of rate 0; on random states in order with many
    /// equal values (zero rates).
    #[test]
    fn a_chain_member_is_the_one_of_the_linear_scan() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mask = 127;
        for (len, consecutive, window, head_const, tail_const) in [
            (60, true, 32, true, false),
            (60, false, 0, false, true),
            (40, true, 16, false, false),
            (40, true, 32, true, false),
            (17, true, 16, true, true),
            (9, true, 0, true, true),
            (2, true, 0, true, false),
        ] {
            // interior slots: 10, 11, ... or every other slot downwards; head at 120, tail at 121
            let slots: Vec<u32> = (0..len as u32 - 1).map(|t| if consecutive { 10 + t } else { 118 - 2 * t }).collect();
            let e = 0.7;
            let pick = ChainPick {
                a: if head_const { 1.0 } else { 0.0 },
                b: if head_const { 0.0 } else { 1.0 },
                head: 120,
                d: if tail_const { 0.0 } else { 1.0 },
                tail: 121,
                inv_e: 1.0 / e,
                start: 0,
                end: slots.len() as u32,
                base: 0,
                window,
                positions: 0,
                offset: (!head_const) as u32,
                top: if head_const { 127 } else { 120 },
                top_count: if head_const { 50.0 } else { 0.0 },
                bottom: if tail_const { 127 } else { 121 },
                bottom_count: 0.0,
                n_inv_e: 50.0 / e,
                jump_first: u32::MAX,
                jump_change: 0.0,
            };
            for _ in 0..300 {
                let big_n = 50.0;
                // v_0 >= v_1 >= ... >= v_m, multiples of 1 / N, often equal
                let mut counts: Vec<f64> = (0..=len).map(|_| (rng.random::<f64>() * 8.0).floor()).collect();
                counts.sort_by(|a, b| b.total_cmp(a));
                if head_const {
                    counts[0] = big_n;
                }
                if tail_const {
                    counts[len] = 0.0;
                }
                let mut x = vec![0.0; mask + 1];
                x[120] = counts[0] / big_n;
                for (t, &s) in slots.iter().enumerate() {
                    x[s as usize] = counts[t + 1] / big_n;
                }
                x[121] = counts[len] / big_n;
                // the same state as counts, and the chain's positions
                let mut ent = vec![Entry::default(); mask + 1];
                ent[120].count = counts[0];
                for (t, &s) in slots.iter().enumerate() {
                    ent[s as usize].count = counts[t + 1];
                }
                ent[121].count = counts[len];
                // over the entries among the values: the head and the tail where they are entries
                let entries: Vec<f64> =
                    (0..=len).filter(|&t| (t > 0 || !head_const) && (t < len || !tail_const)).map(|t| counts[t]).collect();
                let positions = ChainPositions::new(&entries, counts[0]);
                let values: Vec<f64> = std::iter::once(pick.a + pick.b * x[120])
                    .chain(slots.iter().map(|&s| x[s as usize]))
                    .chain([pick.d * x[121]])
                    .collect();
                let rates: Vec<f64> = values.windows(2).map(|w| e * (w[0] - w[1])).collect();
                let total: f64 = rates.iter().sum();
                if total <= 0.0 {
                    continue;
                }
                // the slack of the bound: null draws
                let b = bound(total);
                for q in [0.01, 0.5, 0.999] {
                    // clear of the total's rounding (the members' rates summed against e (v_0 - v_m))
                    let rest = total + q * (b - total);
                    if rest < b && rest - total > 1e-12 {
                        assert_eq!(pick.member(rest, &x, mask, &slots), NULL_DRAW, "rest {rest} in [{total}, {b})");
                        assert_eq!(
                            pick.member_at(rest, &ent, mask, &positions),
                            Some(NULL_DRAW),
                            "by position: rest {rest} in [{total}, {b})"
                        );
                    }
                }
                for draw in 0..40 {
                    let rest = rng.random::<f64>() * total;
                    let got = if draw % 2 == 0 {
                        pick.member(rest, &x, mask, &slots)
                    } else {
                        pick.member_at(rest, &ent, mask, &positions).expect("no negative position")
                    };
                    if got == NULL_DRAW {
                        // only at the total, by rounding
                        assert!(total - rest < 1e-12, "a null draw at {rest} of {total}");
                        continue;
                    }
                    assert!(rates[got] > 0.0, "a member of rate 0: {got} of {rates:?}");
                    let (mut cum, mut want, mut near) = (0.0, rates.len() - 1, false);
                    for (t, r) in rates.iter().enumerate() {
                        near |= (cum - rest).abs() < 1e-12;
                        if rest < cum + r {
                            want = t;
                            break;
                        }
                        cum += r;
                    }
                    if !near && (cum + rates[want] - rest).abs() > 1e-12 {
                        assert_eq!(
                            got, want,
                            "len {len}, consecutive {consecutive}, window {window}: rest {rest} of {total}, rates {rates:?}"
                        );
                    }
                }
            }
        }
    }

    /// A chain's positions follow its counts: after random moves of one or two objects that keep
    /// the counts in order (and carry the first past the array's end, which then grows), they
    /// are the number of counts above each position, as counted afresh.
    #[test]
    fn chain_positions_follow_their_counts() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut counts: Vec<i64> = vec![30, 22, 22, 9, 4, 0, 0];
        let as_f64 = |c: &[i64]| c.iter().map(|&k| k as f64).collect::<Vec<f64>>();
        let mut positions = ChainPositions::new(&as_f64(&counts), 40.0);
        let mut grew = false;
        for _ in 0..5000 {
            let t = rng.random_range(0..counts.len());
            let change = [-2, -1, 1, 2][rng.random_range(0..4)];
            let new = counts[t] + change;
            let (hi, lo) = (if t == 0 { 200 } else { counts[t - 1] }, counts.get(t + 1).copied().unwrap_or(0));
            if new > hi || new < lo {
                continue;
            }
            counts[t] = new;
            positions.moved(new, change as i32);
            grew |= new > 41;
            for p in 0..210 {
                let want = counts.iter().filter(|&&k| k > p as i64).count();
                assert_eq!(positions.at(p), want, "position {p} of counts {counts:?}");
            }
        }
        assert!(grew, "the first count never passed the array's end");
    }

    /// A chain's bound: its total rounded up to 5 bits of mantissa (`r <= bound(r) < r (1 +
    /// 2^-5)`), monotone, 0 at 0 and infinite at infinity.
    #[test]
    fn a_chains_bound_exceeds_its_total_by_less_than_a_thirty_second() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        assert_eq!(bound(0.0), 0.0);
        assert_eq!(bound(f64::INFINITY), f64::INFINITY);
        assert_eq!(bound(1.0), 1.0);
        assert_eq!(bound(0.75), 0.75);
        assert_eq!(bound(1.0 + f64::EPSILON), 1.0 + 1.0 / 32.0);
        let mut last = (0.0, 0.0);
        let mut rs: Vec<f64> = (0..10_000).map(|_| (rng.random::<f64>() * 80.0 - 40.0).exp2()).collect();
        rs.push(f64::MIN_POSITIVE / 3.0);
        rs.sort_by(f64::total_cmp);
        for r in rs {
            let b = bound(r);
            // a subnormal total keeps fewer bits (its bound is still above it)
            assert!(r <= b && (r < f64::MIN_POSITIVE || (b - r) < r / 32.0), "bound({r}) = {b}");
            assert!(b >= last.1, "not monotone: bound({}) = {} > bound({r}) = {b}", last.0, last.1);
            last = (r, b);
        }
    }

    /// The generic M/M/1 from its geometric state (leaves sorted by rate) by either selector:
    /// the block sums (chosen there) and the tree give the geometric tail.
    #[test]
    fn generic_mm1_by_either_selector_has_geometric_tails() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/generic/mm1.toml")).unwrap();
        let file = mfq_model::ModelFile::parse(&text, &["lambda=0.5".into(), "K=40".into()]).unwrap();
        let m = file.model.build(40).unwrap();
        let t = m.transitions().unwrap().indexed().unwrap();
        let graph = dependency_graph(t, m.dim()).unwrap();
        let x0: Vec<f64> = (1..=m.dim()).map(|k| 0.5f64.powi(k as i32)).collect();
        let opts = PopulationOptions { objects: 200, time: 2000.0, warmup: 20.0, batches: 20, ..Default::default() };
        // (no chains here: the selectors over every transition)
        let (order, rates, blocks) = leaf_order(t, &[], &x0, 200.0);
        assert!(blocks && order[..2] == [0, 40], "{:?}", &order[..4]);
        let d = Deadline::none();
        for tree in [false, true] {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
            let args = (t, (&graph.0[..], &graph.1[..]), m.dim(), &x0[..], &opts, false, &d);
            let r = if tree {
                run_indexed_in::<0, SumTree>(args.0, args.1, args.2, args.3, args.4, args.5, args.6, &mut rng, &[], &order, &rates, None)
            } else {
                run_indexed_in::<64, BlockSums>(args.0, args.1, args.2, args.3, args.4, args.5, args.6, &mut rng, &[], &order, &rates, None)
            };
            for k in 0..3 {
                let values: Vec<f64> = r.batch_means.iter().map(|b| b[k]).collect();
                let e = mean_estimate(&values);
                assert!(e.covers(0.5f64.powi(k as i32 + 1), 0.999, 0.01), "tree {tree}, k = {}: {e:?}", k + 1);
            }
        }
    }

    /// The generic M/M/1 near saturation (lambda = 0.99, its members beyond the window at most
    /// events): its chains' members read from their positions, by the rule and in every chain,
    /// follow the path of the scan (the same events, the same time averages), and the tail of
    /// that path is geometric, `x_k = lambda^k`.
    #[test]
    fn chain_members_by_position_follow_the_path_of_the_scan() {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/generic/mm1.toml")).unwrap();
        let file = mfq_model::ModelFile::parse(&text, &["lambda=0.99".into(), "K=400".into()]).unwrap();
        let m = file.model.build(400).unwrap();
        let t = m.transitions().unwrap().indexed().unwrap();
        let graph = dependency_graph(t, m.dim()).unwrap();
        let x0: Vec<f64> = (1..=m.dim()).map(|k| 0.99f64.powi(k as i32)).collect();
        let opts = PopulationOptions { objects: 500, time: 400.0, warmup: 10.0, batches: 10, ..Default::default() };
        let d = Deadline::none();
        let runs: Vec<Run> = [Some(false), None, Some(true)]
            .into_iter()
            .map(|by_position| {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
                run_indexed(t, (&graph.0, &graph.1), m.dim(), &x0, &opts, false, &d, &mut rng, by_position)
            })
            .collect();
        assert!(runs[0].events > 300_000, "{} events", runs[0].events);
        for r in &runs[1..] {
            assert_eq!(r.events, runs[0].events);
            for (a, b) in r.batch_means.iter().flatten().zip(runs[0].batch_means.iter().flatten()) {
                assert!((a - b).abs() < 1e-12, "{a} by position, {b} by the scan");
            }
        }
        // x_1 = 0.99 and x_20 = 0.99^20 = 0.818 (from the geometric start: the path stays near it)
        for k in [1, 20] {
            let values: Vec<f64> = runs[1].batch_means.iter().map(|b| b[k - 1]).collect();
            let e = mean_estimate(&values);
            assert!(e.covers(0.99f64.powi(k as i32), 0.999, 0.01), "x_{k}: {e:?}");
        }
    }

    #[test]
    fn bad_options_name_the_field() {
        let m = Jsq::new(0.5, 1, 4).unwrap();
        let e = simulate_population(&m, &[0.0; 4], &PopulationOptions { objects: 0, ..Default::default() }).unwrap_err();
        assert!(e.to_string().contains("objects = 0"), "{e}");
        let e = simulate_population(&m, &[0.0; 3], &PopulationOptions::default()).unwrap_err();
        assert!(e.to_string().contains("x0"), "{e}");
    }
}
