//! Catalogue, replication and placement of the caching system, and its throughput bounds.
//!
//! Source: the system of Mukhopadhyay, Hegde, Lelarge, "Optimal content replication and request
//! matching in large caching systems", arXiv 1801.02889 (2018): `m` servers, each
//! storing `C` contents (memory) and serving at most `U` requests at once (bandwidth). The
//! replication rules, the wrap-around placement and the bounds below are constructed here
//! (docs/models/cdn-cache.md says what is published and what is not).

use crate::{out_of_range, ModelError};

/// Largest catalogue (number of contents `N`).
pub const MAX_CONTENTS: usize = 1000;
/// Largest bandwidth `U` (concurrent requests per server).
pub const MAX_BANDWIDTH: usize = 1000;
/// How far the popularities may sum from 1.
pub const SUM_TOL: f64 = 1e-9;

/// Content popularities `p_1 >= ...` (not necessarily sorted), `sum p_i = 1`, each `> 0`.
///
/// Zipf(`gamma`) over `n` contents: `p_i = i^-gamma / sum_k k^-gamma`.
///
/// # Errors
/// [`ModelError::OutOfRange`] naming `model.contents` (0 or above 1000) or `model.zipf` (not
/// finite or negative).
pub fn zipf(n: usize, gamma: f64) -> Result<Vec<f64>, ModelError> {
    if n == 0 || n > MAX_CONTENTS {
        return Err(out_of_range("model.contents", n, "an integer in [1, 1000] (the number of contents N)"));
    }
    if !(gamma.is_finite() && gamma >= 0.0) {
        return Err(out_of_range("model.zipf", gamma, "a finite number >= 0 (the Zipf exponent; 0 = equal popularities)"));
    }
    let w: Vec<f64> = (1..=n).map(|i| (i as f64).powf(-gamma)).collect();
    let total: f64 = w.iter().sum();
    Ok(w.into_iter().map(|v| v / total).collect())
}

/// Checks an explicit popularity vector: `1..=1000` entries, each finite and `> 0`, summing to
/// 1 within `1e-9`.
///
/// # Errors
/// [`ModelError::OutOfRange`] naming `model.popularity` (length, or the sum) or
/// `model.popularity[i]` (an entry).
pub fn check_popularity(p: &[f64]) -> Result<(), ModelError> {
    if p.is_empty() || p.len() > MAX_CONTENTS {
        return Err(out_of_range("model.popularity", format!("a list of {} values", p.len()), "1 to 1000 popularities summing to 1"));
    }
    for (i, v) in p.iter().enumerate() {
        if !(v.is_finite() && *v > 0.0) {
            return Err(out_of_range(
                &format!("model.popularity[{i}]"),
                v,
                "a finite number > 0 (a content nobody requests does not belong in the catalogue)",
            ));
        }
    }
    let sum: f64 = p.iter().sum();
    if (sum - 1.0).abs() > SUM_TOL {
        return Err(out_of_range("model.popularity", format!("a list summing to {sum}"), "popularities summing to 1 (within 1e-9)"));
    }
    Ok(())
}

/// How replicas are spread over the servers: `a_i` = fraction of servers storing content `i`,
/// `0 <= a_i <= 1`, `sum a_i = C`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Replication {
    /// Every content on the same fraction `C / N` of servers.
    Uniform,
    /// The natural greedy rule (constructed here; the paper's own rule is not in its
    /// abstract): the `C m` memory slots are filled one at a time, each with the content that
    /// has the most requests per replica, `lambda p_i / (r_i + 1)`, among those on fewer than
    /// `m` servers. As `m -> infinity` its replica fractions are the water-filling
    /// `a_i = min(1, theta p_i)` with `theta` such that `sum a_i = C` ([`replica_fractions`]).
    Greedy,
}

/// Replica fractions `a_i` of `rule` for popularities `p` and memory `c` (`1 <= c <= N`).
///
/// Greedy: `a_i = min(1, theta p_i)`, `sum a_i = c`; `theta` is found exactly by sorting (the
/// capped contents are the most popular ones).
pub fn replica_fractions(p: &[f64], c: usize, rule: Replication) -> Vec<f64> {
    let n = p.len();
    match rule {
        Replication::Uniform => vec![c as f64 / n as f64; n],
        Replication::Greedy => {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&i, &j| p[j].total_cmp(&p[i]));
            // the k most popular are capped at 1: theta = (c - k) / (sum of the others)
            let mut rest: f64 = p.iter().sum();
            for k in 0..n {
                let theta = (c - k) as f64 / rest;
                if theta * p[order[k]] <= 1.0 {
                    return p.iter().map(|v| (theta * v).min(1.0)).collect();
                }
                rest -= p[order[k]];
            }
            vec![1.0; n]
        }
    }
}

/// A set of contents stored together and the fraction of servers storing exactly it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerType {
    /// The `C` distinct contents (indices into the catalogue), increasing.
    pub contents: Vec<usize>,
    /// Fraction of servers of this type.
    pub fraction: f64,
}

/// The contents stored by the server at position `u` in `[0, 1)` of the wrap-around placement of
/// replica fractions `a` (each `<= 1`, summing to `c`): the intervals `[s_i, s_i + a_i)` are laid
/// end to end on `[0, c)` and the server at `u` stores the contents covering `u, u + 1, ..., u +
/// c - 1` (McNaughton's wrap-around rule, R. McNaughton, "Scheduling with deadlines and loss
/// functions", Management Science 6(1), 1959). Since `a_i <= 1` the `c` contents are distinct.
/// Writes them, increasing, into `out`.
pub fn contents_at(a: &[f64], c: usize, u: f64, out: &mut Vec<usize>) {
    out.clear();
    let mut start = 0.0;
    let mut row = 0usize;
    for (i, &ai) in a.iter().enumerate() {
        // the last interval reaches to c whatever the round-off of the sum
        let end = if i + 1 == a.len() { f64::INFINITY } else { start + ai };
        while row < c && (row as f64 + u) < end {
            out.push(i);
            row += 1;
        }
        start = end;
    }
    out.sort_unstable();
}

/// The server types of the wrap-around placement ([`contents_at`]) of `a`: one per stretch of
/// `u` between consecutive breakpoints `s_i mod 1`, with its length as fraction. Types with the
/// same contents are merged; at most `N + 1` of them.
pub fn wrap_around_types(a: &[f64], c: usize) -> Vec<ServerType> {
    let mut cuts = vec![0.0, 1.0];
    let mut s = 0.0;
    for ai in a {
        s += ai;
        let f = s - s.floor();
        if f > 1e-12 && f < 1.0 - 1e-12 {
            cuts.push(f);
        }
    }
    cuts.sort_by(f64::total_cmp);
    cuts.dedup_by(|x, y| (*x - *y).abs() < 1e-12);
    let mut types: Vec<ServerType> = Vec::new();
    let mut set = Vec::with_capacity(c);
    for w in cuts.windows(2) {
        let len = w[1] - w[0];
        if len <= 0.0 {
            continue;
        }
        contents_at(a, c, 0.5 * (w[0] + w[1]), &mut set);
        match types.iter_mut().find(|t| t.contents == set) {
            Some(t) => t.fraction += len,
            None => types.push(ServerType { contents: set.clone(), fraction: len }),
        }
    }
    types
}

/// The joint optimum over every replication and every matching, per server, as `m -> infinity`
/// with requests of mean duration 1: `min(lambda, U)` (the optimum of the LP of
/// [`placement_bound`] maximised over the placement too; derived in docs/models/cdn-cache.md).
pub fn optimal_throughput(lambda: f64, bandwidth: usize) -> f64 {
    lambda.min(bandwidth as f64)
}

/// The LP bound of a placement: the most requests per server per unit time that any matching
/// (re-packing included) can carry,
///
/// ```text
/// max sum_{i,t} y_{i,t}   s.t.  sum_t y_{i,t} <= lambda p_i,   sum_{i in t} y_{i,t} <= U f_t,   y >= 0
/// ```
///
/// (`y_{i,t}`: mean number of content-`i` requests in service on type-`t` servers, per server;
/// mean duration 1, so also their throughput). It is a maximum flow from a source through the
/// contents (capacities `lambda p_i`) and the server types (capacities `U f_t`) to a sink;
/// solved exactly by augmenting paths ([`max_flow`]). The bound holds at every `m` for the
/// stationary throughput of the finite system (Little's law per content and type).
pub fn placement_bound(lambda: f64, p: &[f64], bandwidth: usize, types: &[ServerType]) -> f64 {
    let n = p.len();
    let nt = types.len();
    // nodes: 0 source, 1..=n contents, n+1..=n+nt types, n+nt+1 sink
    let nodes = n + nt + 2;
    let sink = nodes - 1;
    let mut cap = vec![0.0; nodes * nodes];
    for (i, pi) in p.iter().enumerate() {
        cap[1 + i] = lambda * pi;
    }
    let inf = lambda + bandwidth as f64 + 1.0;
    for (t, ty) in types.iter().enumerate() {
        for &i in &ty.contents {
            cap[(1 + i) * nodes + 1 + n + t] = inf;
        }
        cap[(1 + n + t) * nodes + sink] = bandwidth as f64 * ty.fraction;
    }
    max_flow(&mut cap, nodes, 0, sink)
}

/// Edmonds-Karp maximum flow on a dense capacity matrix `cap[u * nodes + v]` (overwritten by the
/// residual capacities). Augmenting paths of fewest arcs; residual capacities below `1e-14`
/// times the largest capacity count as zero. The breadth-first searches walk adjacency lists
/// of the arcs with a capacity in either direction (`O(arcs)` each, not `O(nodes^2)`: the
/// caching system at 1000 contents, about 2000 nodes, took 20 s with dense scans).
pub fn max_flow(cap: &mut [f64], nodes: usize, source: usize, sink: usize) -> f64 {
    let eps = 1e-14 * cap.iter().fold(0.0f64, |m, v| m.max(*v)).max(1.0);
    // neighbours of u: the v with an arc u -> v or v -> u (residual arcs run both ways)
    let mut adjacent: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    for u in 0..nodes {
        for v in (u + 1)..nodes {
            if cap[u * nodes + v] > 0.0 || cap[v * nodes + u] > 0.0 {
                adjacent[u].push(v);
                adjacent[v].push(u);
            }
        }
    }
    let mut total = 0.0;
    let mut prev = vec![usize::MAX; nodes];
    let mut queue = Vec::with_capacity(nodes);
    loop {
        prev.fill(usize::MAX);
        prev[source] = source;
        queue.clear();
        queue.push(source);
        let mut head = 0;
        while head < queue.len() && prev[sink] == usize::MAX {
            let u = queue[head];
            head += 1;
            for &v in &adjacent[u] {
                if prev[v] == usize::MAX && cap[u * nodes + v] > eps {
                    prev[v] = u;
                    queue.push(v);
                }
            }
        }
        if prev[sink] == usize::MAX {
            return total;
        }
        let mut push = f64::INFINITY;
        let mut v = sink;
        while v != source {
            let u = prev[v];
            push = push.min(cap[u * nodes + v]);
            v = u;
        }
        let mut v = sink;
        while v != source {
            let u = prev[v];
            cap[u * nodes + v] -= push;
            cap[v * nodes + u] += push;
            v = u;
        }
        total += push;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The LP bound by brute force: max-flow = min-cut, and a cut is a set `T` of contents on the
    /// sink side: `sum_{i not in T} lambda p_i + U f(types meeting T)`.
    fn min_cut(lambda: f64, p: &[f64], u: usize, types: &[ServerType]) -> f64 {
        let n = p.len();
        let mut best = f64::INFINITY;
        for mask in 0u32..(1 << n) {
            let outside: f64 = (0..n).filter(|i| mask & (1 << i) == 0).map(|i| lambda * p[i]).sum();
            let served: f64 = types.iter().filter(|t| t.contents.iter().any(|i| mask & (1 << i) != 0)).map(|t| u as f64 * t.fraction).sum();
            best = best.min(outside + served);
        }
        best
    }

    #[test]
    fn placement_bound_is_the_min_cut() {
        for (n, gamma, c, u, lambda) in [(6, 0.8, 2, 4, 3.0), (8, 1.2, 3, 2, 1.7), (5, 0.0, 1, 3, 3.5), (7, 1.0, 2, 5, 6.0)] {
            let p = zipf(n, gamma).unwrap();
            for rule in [Replication::Greedy, Replication::Uniform] {
                let types = wrap_around_types(&replica_fractions(&p, c, rule), c);
                let lp = placement_bound(lambda, &p, u, &types);
                let cut = min_cut(lambda, &p, u, &types);
                assert!((lp - cut).abs() < 1e-12 * cut.max(1.0), "{n} {gamma} {c} {u} {lambda} {rule:?}: flow {lp} cut {cut}");
                assert!(lp <= optimal_throughput(lambda, u) + 1e-12);
            }
        }
    }

    /// The placement realises the replica fractions: each type stores `C` distinct contents,
    /// the fractions sum to 1 and content `i` is on `a_i` of the servers.
    #[test]
    fn wrap_around_realises_the_replica_fractions() {
        for (n, gamma, c) in [(6, 0.8, 2), (10, 1.5, 3), (4, 0.0, 4), (9, 2.0, 1), (12, 0.5, 5)] {
            let p = zipf(n, gamma).unwrap();
            for rule in [Replication::Greedy, Replication::Uniform] {
                let a = replica_fractions(&p, c, rule);
                assert!((a.iter().sum::<f64>() - c as f64).abs() < 1e-12 && a.iter().all(|v| *v <= 1.0 + 1e-15));
                let types = wrap_around_types(&a, c);
                assert!((types.iter().map(|t| t.fraction).sum::<f64>() - 1.0).abs() < 1e-12);
                let mut got = vec![0.0; n];
                for t in &types {
                    assert_eq!(t.contents.len(), c, "{:?}", t.contents);
                    assert!(t.contents.windows(2).all(|w| w[0] < w[1]));
                    for &i in &t.contents {
                        got[i] += t.fraction;
                    }
                }
                for i in 0..n {
                    assert!((got[i] - a[i]).abs() < 1e-12, "{rule:?} content {i}: {} vs {}", got[i], a[i]);
                }
            }
        }
    }

    /// Greedy replica counts at finite `m` (the rule as stated: each slot to the largest
    /// requests per replica) approach the water-filling fractions.
    #[test]
    fn greedy_slots_approach_the_water_filling() {
        let (p, c, m) = (zipf(8, 1.4).unwrap(), 3, 4000usize);
        let mut r = vec![0usize; p.len()];
        for _ in 0..c * m {
            let best =
                (0..p.len()).filter(|&i| r[i] < m).max_by(|&i, &j| (p[i] / (r[i] + 1) as f64).total_cmp(&(p[j] / (r[j] + 1) as f64)));
            r[best.unwrap()] += 1;
        }
        let a = replica_fractions(&p, c, Replication::Greedy);
        assert!(a[0] == 1.0, "the most popular content is capped: {a:?}");
        for i in 0..p.len() {
            assert!((r[i] as f64 / m as f64 - a[i]).abs() < 2.0 / m as f64, "{i}: {} vs {}", r[i], a[i]);
        }
    }

    #[test]
    fn bad_catalogues_are_refused_with_the_field() {
        let e = check_popularity(&[0.5, 0.4]).unwrap_err().to_string();
        assert!(e.contains("model.popularity") && e.contains("0.9") && e.contains("summing to 1"), "{e}");
        let e = check_popularity(&[0.5, 0.5, 0.0]).unwrap_err().to_string();
        assert!(e.contains("model.popularity[2] = 0"), "{e}");
        assert!(zipf(0, 1.0).unwrap_err().to_string().contains("model.contents = 0"));
        assert!(zipf(3, -1.0).unwrap_err().to_string().contains("model.zipf = -1"));
    }
}
