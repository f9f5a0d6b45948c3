//! The generator of the `N`-object chain: states reachable from a start state, found by a
//! breadth-first search over the model's transitions, indexed by the combinatorial rank of
//! tail-form states or else by a hash map built once.

use mfq_model::{Deadline, MeanFieldModel, StateLayout};
use rustc_hash::FxHashMap;

use super::ExactError;

/// The generator `Q` of the chain, stored by rows (outgoing transitions of each state).
pub(crate) struct Chain {
    /// Number of objects `N`.
    pub n: usize,
    /// Entries per state.
    pub dim: usize,
    /// Bits per packed count.
    bits: u32,
    /// The states in the order they were found (state `i` = `keys[i]`, counts packed).
    pub keys: Vec<u128>,
    /// Outgoing transitions of state `i`: `out_ptr[i]..out_ptr[i + 1]` into `out_to`, `out_rate`.
    pub out_ptr: Vec<usize>,
    /// Target state of each transition.
    pub out_to: Vec<u32>,
    /// Rate `N beta_l(x)` of each transition (duplicates merged, self-loops dropped).
    pub out_rate: Vec<f64>,
    /// Total rate out of each state, `-q_ii`.
    pub diag: Vec<f64>,
}

/// Bits needed for counts `0..=n`.
pub(crate) fn bits_for(n: usize) -> u32 {
    usize::BITS - n.leading_zeros()
}

/// The counts packed in `key` into `out` (the inverse of [`pack`]).
fn unpack(key: u128, bits: u32, out: &mut [u32]) {
    let mask = (1u128 << bits) - 1;
    let mut key = key;
    for c in out.iter_mut().rev() {
        *c = (key & mask) as u32;
        key >>= bits;
    }
}

/// Counts packed `bits` bits each, the first one highest.
fn pack(counts: impl Iterator<Item = u64>, bits: u32) -> u128 {
    counts.fold(0u128, |key, c| (key << bits) | c as u128)
}

impl Chain {
    /// The counts of state `i` (`N x`) into `out`.
    pub fn counts(&self, i: usize, out: &mut [u32]) {
        unpack(self.keys[i], self.bits, out);
    }

    /// Number of states.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// The sum of the counts of state `i` (total jobs for tail-form states).
    pub fn level(&self, i: usize) -> usize {
        let mask = (1u128 << self.bits) - 1;
        let mut key = self.keys[i];
        let mut s = 0usize;
        for _ in 0..self.dim {
            s += (key & mask) as usize;
            key >>= self.bits;
        }
        s
    }
}

/// Where the search looks states up: a hash map of the packed counts, or, for tail-form states
/// (`N >= n_1 >= ... >= n_K >= 0`), an array indexed by their rank in the combinatorial number
/// system, `sum_i C(n_{K+1-i} + i - 1, i)` (Knuth, The Art of Computer Programming 4A,
/// Section 7.2.1.3): a bijection onto `0 .. C(N + K, K)`, no hashing.
enum StateIndex {
    Hash(FxHashMap<u128, u32>),
    Ranked {
        /// State index of each rank (`u32::MAX`: not found yet).
        slots: Vec<u32>,
        /// `C(m, i)` at `m * (levels + 1) + i`, saturating.
        binom: Vec<u64>,
        levels: usize,
    },
}

impl StateIndex {
    /// The ranked index when `levels` (a tail-form state) is given and `C(N + K, K)` fits
    /// `max_states`, else a hash map.
    fn new(levels: Option<usize>, n: usize, max_states: usize) -> Self {
        if let Some(k) = levels {
            let rows = n + k + 1;
            let mut binom = vec![0u64; rows * (k + 1)];
            for m in 0..rows {
                binom[m * (k + 1)] = 1;
                for i in 1..=k.min(m) {
                    binom[m * (k + 1) + i] = binom[(m - 1) * (k + 1) + i - 1].saturating_add(binom[(m - 1) * (k + 1) + i]);
                }
            }
            let total = binom[(n + k) * (k + 1) + k];
            if total <= max_states as u64 {
                return StateIndex::Ranked { slots: vec![u32::MAX; total as usize], binom, levels: k };
            }
        }
        StateIndex::Hash(FxHashMap::default())
    }

    /// The index of the state `counts` (packed: `key`), or `fresh` after recording it when it
    /// is new; `None` when ranked counts are not non-increasing (not a tail-form state).
    fn find_or_insert(&mut self, key: u128, counts: &[i64], fresh: u32) -> Option<u32> {
        match self {
            StateIndex::Hash(map) => Some(*map.entry(key).or_insert(fresh)),
            StateIndex::Ranked { slots, binom, levels } => {
                let k = *levels;
                let mut rank = 0u64;
                for i in 1..=k {
                    let c = counts[k - i] as usize + i - 1;
                    if i < k && counts[k - i] > counts[k - i - 1] {
                        return None;
                    }
                    rank += binom[c * (k + 1) + i];
                }
                let slot = slots.get_mut(rank as usize)?;
                if *slot == u32::MAX {
                    *slot = fresh;
                }
                Some(*slot)
            }
        }
    }
}

/// Why a jump leaves `[0, 1]`: an entry that moves in steps of `c / N` with `N` not a multiple
/// of `c` (a class of fraction `gamma_j = 1 / c` holds `N gamma_j` servers, not an integer)
/// cannot reach 1 exactly, so its chain is off the lattice; otherwise the model's rates are
/// positive where they should vanish.
fn off_range_reason(jump: &[(usize, f64)], n: usize) -> String {
    match jump.iter().map(|&(_, c)| c.abs().round() as usize).find(|&c| c > 1 && n % c != 0) {
        Some(c) => format!(
            "an entry moves in steps of {c}/N (a class of fraction 1/{c}), and N = {n} is not a multiple of {c}: the class would hold {} servers, so the chain of N = {n} objects is off the lattice (use N a multiple of {c})",
            n as f64 / c as f64
        ),
        None => "a jump at positive rate leaves [0, 1]".into(),
    }
}

/// What the search needs besides the model.
pub(crate) struct Search<'a> {
    pub n: usize,
    pub start: &'a [u32],
    pub max_states: usize,
    pub deadline: &'a Deadline,
}

/// Explores the states reachable from `search.start` and records the generator.
///
/// # Errors
/// [`ExactError`] when a transition leaves the lattice or the feasible set, a rate is not
/// finite, the chain has more than `max_states` states, or the deadline passes.
pub(crate) fn build(model: &dyn MeanFieldModel, search: &Search<'_>) -> Result<Chain, ExactError> {
    let n = search.n;
    let dim = model.dim();
    let bits = bits_for(n);
    let transitions = model.transitions().ok_or_else(|| ExactError::NoTransitions { model: model.name() })?;
    let big_n = n as f64;
    let levels = match model.layout() {
        StateLayout::Tail { levels } => Some(levels),
        _ => None,
    };
    let mut index = StateIndex::new(levels, n, search.max_states);
    let start = pack(search.start.iter().map(|&c| c as u64), bits);
    let start_counts: Vec<i64> = search.start.iter().map(|&c| c as i64).collect();
    if index.find_or_insert(start, &start_counts, 0).is_none() {
        index = StateIndex::Hash(FxHashMap::default());
        index.find_or_insert(start, &start_counts, 0);
    }
    let mut keys = vec![start];
    let (mut out_ptr, mut out_to, mut out_rate, mut diag) = (vec![0usize], Vec::new(), Vec::new(), Vec::new());
    let (mut counts, mut x, mut target, mut xt) = (vec![0u32; dim], vec![0.0; dim], vec![0i64; dim], vec![0.0; dim]);
    let mut row: Vec<(u32, f64)> = Vec::new();
    let mut failure: Option<ExactError> = None;
    let mut i = 0usize;
    while i < keys.len() {
        if i % 4096 == 0 && search.deadline.expired() {
            return Err(ExactError::TimeLimit { reason: search.deadline.reason(), phase: "building the chain", states: keys.len() });
        }
        unpack(keys[i], bits, &mut counts);
        x.iter_mut().zip(&counts).for_each(|(v, &c)| *v = c as f64 / big_n);
        row.clear();
        transitions.visit(&x, &mut |jump, rate| {
            if failure.is_some() || rate == 0.0 {
                return;
            }
            if !(rate.is_finite() && rate > 0.0) {
                if !(rate.is_finite() && rate > -1e-12) {
                    failure = Some(ExactError::BadRate { state: x.clone(), rate });
                }
                return;
            }
            // a rate of rounding size (`1 - phi(x_1)` with the phase fractions of x_1 summing to
            // 1 - 1e-16) that would leave the state space is a zero rate, as a negative one is
            let rounding = rate < 1e-12;
            target.iter_mut().zip(&counts).for_each(|(t, &c)| *t = c as i64);
            for &(k, change) in jump {
                let step = change.round();
                if (change - step).abs() > 1e-9 {
                    failure = Some(ExactError::BadJump {
                        state: x.clone(),
                        reason: format!("a change of {change} (not an integer multiple of 1/N)"),
                    });
                    return;
                }
                target[k] += step as i64;
            }
            if target.iter().any(|&t| t < 0 || t > n as i64) {
                if rounding {
                    return;
                }
                failure = Some(ExactError::BadJump { state: x.clone(), reason: off_range_reason(jump, n) });
                return;
            }
            xt.iter_mut().zip(&target).for_each(|(v, &t)| *v = t as f64 / big_n);
            model.project(&mut xt);
            if xt.iter().zip(&target).any(|(v, &t)| (v - t as f64 / big_n).abs() > 1e-12) {
                if rounding {
                    return;
                }
                failure = Some(ExactError::BadJump { state: x.clone(), reason: "a jump at positive rate leaves the feasible set".into() });
                return;
            }
            let key = pack(target.iter().map(|&t| t as u64), bits);
            let fresh = keys.len() as u32;
            let Some(j) = index.find_or_insert(key, &target, fresh) else {
                failure = Some(ExactError::BadJump {
                    state: x.clone(),
                    reason: "a jump at positive rate leaves the tail form (counts not non-increasing)".into(),
                });
                return;
            };
            if j == fresh {
                if keys.len() >= search.max_states {
                    failure = Some(ExactError::TooManyStates { estimate: None, limit: search.max_states });
                    return;
                }
                keys.push(key);
            }
            if j as usize != i {
                row.push((j, big_n * rate));
            }
        });
        if let Some(e) = failure.take() {
            return Err(e);
        }
        // merge transitions to the same target
        row.sort_unstable_by_key(|e| e.0);
        let mut total = 0.0;
        for (m, &(j, r)) in row.iter().enumerate() {
            total += r;
            if m > 0 && row[m - 1].0 == j {
                if let Some(v) = out_rate.last_mut() {
                    *v += r;
                }
            } else {
                out_to.push(j);
                out_rate.push(r);
            }
        }
        diag.push(total);
        out_ptr.push(out_to.len());
        i += 1;
    }
    Ok(Chain { n, dim, bits, keys, out_ptr, out_to, out_rate, diag })
}
