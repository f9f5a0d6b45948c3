//! Telescoping chains of transitions, for the population process of [`crate::population`].
//!
//! In the occupancy form of a queueing model the rate of a transition is often a difference of
//! consecutive occupancy fractions: the departures of the M/M/1 (and of JSQ(d)) from the servers
//! with exactly `k` jobs at rate `x_k - x_{k+1}`, its arrivals at rate `lambda (x_{k-1} - x_k)`.
//! Such a family is a chain of transitions `1..=m` with the rates `e (v_{t-1} - v_t)`, where `v_0,
//! ..., v_m` are state entries or constants. While `v_0 >= v_1 >= ... >= v_m`, the rates
//! telescope: the chain's total rate is `e (v_0 - v_m)`, whatever its interior, and the
//! cumulative rate of its first `t` members is `e (v_0 - v_t)`. So the population process can
//! hold the whole chain as one rate (changed only when `v_0` or `v_m` changes) and draw the
//! member of an event from the `v` themselves, the first `t` with `v_t < v_0 - u / e` for the
//! uniform `u` below the chain's rate: the member `t` with probability `(v_{t-1} - v_t) / (v_0 -
//! v_m)`, as the direct method draws it (Gillespie 1977) from the members' own rates. An event
//! then re-evaluates no member's rate. (The population process's leaf holds a bound of the
//! chain's rate, slightly above it, and a draw in between is a null draw: see `bound` in
//! `population.rs`.)
//!
//! The order `v_0 >= ... >= v_m` must hold at every state the process visits; [`chains`] keeps a
//! chain only when it can prove so from the model: the order holds at the start, every jump
//! moves the entries by whole objects, and every transition that narrows a gap `v_{t-1} - v_t`
//! narrows it by at most one object and has a rate that vanishes with the gap (its rate form is
//! `e' (v_{t-1} - v_t)` times anything: it happens only while the gap is at least one object).
//! Then no gap goes below zero (induction over the events). A chain that fails any test is not
//! formed; its transitions stay single leaves of the sum structure.

use mfq_model::{IndexedTransitions, RateForm};

/// One of the values `v_t` of a chain: a state entry (its index) or a constant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Value {
    /// The state entry `x_i`.
    Slot(usize),
    /// A constant.
    Const(f64),
}

/// A chain of transitions with the telescoping rates `e (v_{t-1} - v_t)`, `t = 1..=m`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chain {
    /// The transitions, in the chain's order (`members[t - 1]` has the rate `e (v_{t-1} - v_t)`).
    pub members: Vec<usize>,
    /// `v_0, ..., v_m` (`m + 1` values; the interior ones are state entries).
    pub values: Vec<Value>,
    /// The common factor `e > 0`.
    pub e: f64,
}

/// `a + b x_i` of a rate form as a [`Value`] (`b` 0, or `a` 0 and `b` 1, with no second
/// factor `x_i2`), or `None`.
fn head(f: &RateForm) -> Option<Value> {
    if f.b != 0.0 && f.i2.is_some() {
        return None;
    }
    match (f.a, f.b, f.i) {
        (a, 0.0, _) => Some(Value::Const(a)),
        (a, b, None) => Some(Value::Const(a + b)),
        (0.0, 1.0, Some(i)) => Some(Value::Slot(i)),
        _ => None,
    }
}

/// `d x_j` of a rate form as a [`Value`] (`d` 0 or 1, with no second factor `x_j2`), or
/// `None`.
fn tail(f: &RateForm) -> Option<Value> {
    if f.d != 0.0 && f.j2.is_some() {
        return None;
    }
    match (f.d, f.j) {
        (0.0, _) => Some(Value::Const(0.0)),
        (1.0, None) => Some(Value::Const(1.0)),
        (1.0, Some(j)) => Some(Value::Slot(j)),
        _ => None,
    }
}

/// `(v_{t-1}, v_t, e)` of a transition whose rate form is `e (v_{t-1} - v_t)`, `e > 0` finite,
/// without a multiplier (`x_k` the constant 1) and not between two constants.
fn link(f: &RateForm) -> Option<(Value, Value, f64)> {
    if f.k.is_some() || !(f.e > 0.0 && f.e.is_finite()) {
        return None;
    }
    let (h, g) = (head(f)?, tail(f)?);
    match (h, g) {
        (Value::Const(_), Value::Const(_)) => None,
        _ => Some((h, g, f.e)),
    }
}

impl Chain {
    /// The chain's total rate `e (v_0 - v_m)` as a [`RateForm`] (the same operations as the
    /// forms of its members: `((a + b x_i) - d x_j) e`).
    pub fn form(&self) -> RateForm {
        let (mut f, last) = (
            RateForm { a: 0.0, b: 0.0, i: None, i2: None, d: 0.0, j: None, j2: None, e: self.e, k: None },
            self.values[self.values.len() - 1],
        );
        match self.values[0] {
            Value::Slot(i) => (f.b, f.i) = (1.0, Some(i)),
            Value::Const(a) => f.a = a,
        }
        match last {
            Value::Slot(j) => (f.d, f.j) = (1.0, Some(j)),
            Value::Const(c) => (f.d, f.j) = (c, None),
        }
        f
    }
}

/// The telescoping chains of the transitions `t` (of a state of `dim` entries) that the
/// population process of `objects` objects from the state `x0` (fractions, rounded to whole
/// objects as the process rounds them) may hold as one rate each, by the rules of the module's
/// documentation: each of at least two members, members linked where exactly one transition
/// ends at a state entry and exactly one starts there with the same factor `e`, no entry twice
/// in a chain, and the order `v_0 >= ... >= v_m` proved to hold at every state the process
/// visits. A transition is in at most one chain. Cost: linear in the transitions and their jumps.
pub(crate) fn chains(t: &dyn IndexedTransitions, dim: usize, objects: f64, x0: &[f64]) -> Vec<Chain> {
    let m = t.count();
    let links: Vec<Option<(Value, Value, f64)>> = (0..m).map(|l| t.form(l).as_ref().and_then(link)).collect();
    // starts[(i, e)] and ends[(i, e)]: the transitions whose v_{t-1}, v_t is x_i, with factor e
    let mut starts: std::collections::HashMap<(usize, u64), Vec<usize>> = std::collections::HashMap::new();
    let mut ends: std::collections::HashMap<(usize, u64), Vec<usize>> = std::collections::HashMap::new();
    for (l, k) in links.iter().enumerate() {
        if let Some((h, g, e)) = *k {
            if let Value::Slot(i) = h {
                starts.entry((i, e.to_bits())).or_default().push(l);
            }
            if let Value::Slot(j) = g {
                ends.entry((j, e.to_bits())).or_default().push(l);
            }
        }
    }
    let mut next = vec![usize::MAX; m];
    let mut has_previous = vec![false; m];
    for (key, from) in &ends {
        if let (1, Some(to)) = (from.len(), starts.get(key).filter(|s| s.len() == 1)) {
            if from[0] != to[0] {
                next[from[0]] = to[0];
                has_previous[to[0]] = true;
            }
        }
    }
    // counts of the starting state, as the process rounds them
    let count = |v: Value| match v {
        Value::Slot(i) => (x0[i] * objects).round(),
        Value::Const(c) => c * objects,
    };
    let mut found = Vec::new();
    for first in 0..m {
        if has_previous[first] || next[first] == usize::MAX || links[first].is_none() {
            continue;
        }
        let (mut members, mut l) = (vec![first], first);
        while next[l] != usize::MAX && members.len() <= m {
            l = next[l];
            members.push(l);
        }
        let link_of = |l: usize| links[l].expect("a member has a link");
        let mut values = vec![link_of(first).0];
        values.extend(members.iter().map(|&l| link_of(l).1));
        found.push(Chain { e: link_of(first).2, members, values });
    }
    // where each state entry is among the chains' values: (chain, t)
    let mut at: Vec<Vec<(usize, usize)>> = vec![Vec::new(); dim];
    let mut ok = vec![true; found.len()];
    for (c, chain) in found.iter().enumerate() {
        let mut seen = std::collections::HashSet::new();
        for (s, v) in chain.values.iter().enumerate() {
            if let Value::Slot(i) = *v {
                ok[c] &= i < dim && seen.insert(i);
                if i < dim {
                    at[i].push((c, s));
                }
            }
        }
        // whole objects, in order at the start
        let counts: Vec<f64> = chain.values.iter().map(|&v| count(v)).collect();
        ok[c] &= counts.iter().all(|n| n.fract() == 0.0 && n.is_finite()) && counts.windows(2).all(|w| w[0] >= w[1]);
    }
    // every transition that narrows a gap: by at most one object, at a rate that vanishes with it
    for l in 0..m {
        let jump = t.jump(l);
        for &(i, c) in jump {
            if c == 0.0 || i >= dim {
                continue;
            }
            for &(ch, s) in &at[i] {
                if !ok[ch] {
                    continue;
                }
                if c.fract() != 0.0 {
                    ok[ch] = false;
                    continue;
                }
                let values = &found[ch].values;
                let moved = |v: Value| match v {
                    Value::Slot(i) => jump.iter().filter(|&&(k, _)| k == i).map(|&(_, c)| c).sum(),
                    Value::Const(_) => 0.0,
                };
                // the gaps v_{s-1} - v_s and v_s - v_{s+1}
                for g in [s.wrapping_sub(1), s] {
                    let (Some(&hi), Some(&lo)) = (values.get(g), values.get(g.wrapping_add(1))) else { continue };
                    let narrowed = moved(lo) - moved(hi);
                    if narrowed <= 0.0 {
                        continue;
                    }
                    let vanishes = t.form(l).is_some_and(|f| f.e > 0.0 && head(&f) == Some(hi) && tail(&f) == Some(lo));
                    ok[ch] &= narrowed <= 1.0 && vanishes;
                }
            }
        }
    }
    found.into_iter().zip(ok).filter(|(_, ok)| *ok).map(|(c, _)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(text: &str, overrides: &[&str], levels: usize) -> Box<dyn mfq_model::MeanFieldModel> {
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        mfq_model::ModelFile::parse(text, &overrides).unwrap().model.build(levels).unwrap()
    }

    fn mm1() -> String {
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/generic/mm1.toml")).unwrap()
    }

    /// The generic M/M/1 of K levels: the arrivals `lambda (x_{k-1} - x_k)` (x_0 = 1) and the
    /// departures `x_k - x_{k+1}` (x_{K+1} = 0) are two chains of K members, with the totals
    /// `lambda (1 - x_K)` and `x_1`.
    #[test]
    fn the_generic_mm1_is_two_chains() {
        let m = model(&mm1(), &["lambda=0.9", "K=12"], 12);
        let t = m.transitions().unwrap().indexed().unwrap();
        let x0: Vec<f64> = (1..=12).map(|k| 0.9f64.powi(k)).collect();
        let c = chains(t, m.dim(), 100.0, &x0);
        assert_eq!(c.len(), 2, "{c:?}");
        let arrivals = c.iter().find(|c| c.e == 0.9).unwrap();
        let departures = c.iter().find(|c| c.e == 1.0).unwrap();
        assert_eq!(arrivals.members.len(), 12);
        assert_eq!(departures.members.len(), 12);
        assert_eq!(arrivals.values[0], Value::Const(1.0));
        assert_eq!(arrivals.values[12], Value::Slot(11));
        assert_eq!(departures.values[0], Value::Slot(0));
        assert_eq!(departures.values[12], Value::Const(0.0));
        let f = arrivals.form();
        assert!((f.eval(&x0) - 0.9 * (1.0 - x0[11])).abs() < 1e-15);
        assert!((departures.form().eval(&x0) - x0[0]).abs() < 1e-15);
        // the totals are the sums of the members' rates
        for ch in &c {
            let sum: f64 = ch.members.iter().map(|&l| t.rate(l, &x0)).sum();
            assert!((sum - ch.form().eval(&x0)).abs() < 1e-12, "{sum} vs {}", ch.form().eval(&x0));
        }
    }

    /// No chain whose order is not proved: a start out of order, an arrival of two jobs at once
    /// (it narrows a gap by two objects), or a transition narrowing a gap at a rate that does
    /// not vanish with it.
    #[test]
    fn a_chain_whose_order_may_break_is_not_formed() {
        let m = model(&mm1(), &["lambda=0.5", "K=6"], 6);
        let t = m.transitions().unwrap().indexed().unwrap();
        let ordered = [0.5, 0.25, 0.125, 0.06, 0.03, 0.01];
        assert_eq!(chains(t, 6, 100.0, &ordered).len(), 2);
        // x_2 > x_1 at the start: both chains read the gap x_1 - x_2
        assert!(chains(t, 6, 100.0, &[0.2, 0.3, 0.1, 0.0, 0.0, 0.0]).is_empty());
        // batches of two: x_k += 2 at rate lambda (x_{k-1} - x_k) narrows x_{k-1} - x_k by two
        let batch = mm1().replace("jump = { \"x[k]\" = 1 }", "jump = { \"x[k]\" = 2 }");
        let m = model(&batch, &["lambda=0.5", "K=6"], 6);
        let t = m.transitions().unwrap().indexed().unwrap();
        assert!(chains(t, 6, 100.0, &ordered).is_empty());
        // an extra transition x_3 += 1 at rate 0.1 x_1, which does not vanish when x_3 = x_2
        let extra = format!("{}\n[[model.transitions]]\njump = {{ \"x[3]\" = 1 }}\nrate = \"0.1 * x[1]\"\n", mm1());
        let m = model(&extra, &["lambda=0.5", "K=6"], 6);
        let t = m.transitions().unwrap().indexed().unwrap();
        assert!(chains(t, 6, 100.0, &ordered).is_empty());
    }
}
