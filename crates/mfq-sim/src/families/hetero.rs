//! Heterogeneous server classes: speed-aware JSQ and JIQ, PULL, SQ(2)-type routing on
//! processor-sharing servers (SQ(2), least shadow cost, `(n + 1)/C`), and static routing.
//!
//! `N` servers split into classes: class `j` holds `n_j` servers (the fractions `gamma_j` times
//! `N`, rounded by largest remainders) with indices `start_j .. start_j + n_j` and speed
//! (capacity) `mu_j`. Job sizes are exponential(1); a busy class-`j` server completes a job at
//! rate `mu_j` whatever the number of jobs it holds, so FCFS and processor sharing give the same
//! queue-length process (a PS server of capacity `C_j` with `n` jobs serves each at `C_j / n`,
//! and one of them completes at total rate `C_j`). Events: Poisson arrivals at rate `N lambda`,
//! and completions at rate `sum_j mu_j B_j` (`B_j` busy class-`j` servers), the class drawn in
//! proportion to `mu_j B_j` and the server uniformly among its busy ones.

use super::{Family, Levels, Segments};
use crate::engine::{uniform, Batch, Rng};

/// Cost rule of `ps-sq2`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Rule {
    /// Number of jobs `n`.
    Sq2,
    /// `n / C_j` (two idle servers tie).
    Lsc,
    /// `(n + 1) / C_j`.
    LscPlusOne,
}

/// The routing policy.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Policy {
    /// Shortest queue over all servers; among the shortest, the highest-ranked class (by
    /// decreasing speed, equal speeds in file order); uniform within the class.
    SaJsq,
    /// An idle server of the highest-ranked class that has one; else a uniformly random server.
    SaJiq,
    /// A uniformly random idle server (over all classes); else a uniformly random server.
    Pull,
    /// Two samples, each of class `i` w.p. `p_i` (`None`: uniform over all servers) and uniform
    /// within the class; join the one of smaller cost, ties uniformly at random.
    PsSq2 { sampling: Option<Vec<f64>>, rule: Rule },
    /// Class `j` w.p. `q_j`, then a uniformly random server of the class.
    Static { q: Vec<f64> },
}

/// Per-class sizes from fractions: `N gamma_j` rounded by largest remainders (sum exactly `N`).
pub(crate) fn class_sizes(n: u32, fractions: &[f64]) -> Vec<u32> {
    let total: f64 = fractions.iter().sum();
    let exact: Vec<f64> = fractions.iter().map(|f| f / total * n as f64).collect();
    let mut sizes: Vec<u32> = exact.iter().map(|e| e.floor() as u32).collect();
    let mut left = n - sizes.iter().sum::<u32>();
    let mut order: Vec<usize> = (0..fractions.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())).then(a.cmp(&b)));
    for &j in order.iter().cycle() {
        if left == 0 {
            break;
        }
        sizes[j] += 1;
        left -= 1;
    }
    sizes
}

/// The capacities as exact decimal rationals on a common scale: `C_j = c_j / 10^s`, with each
/// capacity read from its shortest decimal representation (`0.4` is `4/10`), so that costs
/// `n / C_i` compare exactly by integer cross-multiplication. `None` if a value does not fit.
pub(crate) fn decimal_capacities(speeds: &[f64]) -> Option<Vec<u128>> {
    let parsed: Vec<(u128, u32)> = speeds
        .iter()
        .map(|x| {
            let text = format!("{x}");
            let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
            let digits = format!("{int}{frac}");
            digits.parse::<u128>().ok().map(|m| (m, frac.len() as u32))
        })
        .collect::<Option<_>>()?;
    let scale = parsed.iter().map(|p| p.1).max()?;
    parsed.iter().map(|&(m, f)| 10u128.checked_pow(scale - f).and_then(|p| m.checked_mul(p))).collect()
}

/// The square-root rule of the optimal static routing (computed here by bisection, not taken
/// from the model): loads `rho_j = max(0, 1 - 1/sqrt(theta C_j))` with
/// `sum_j gamma_j C_j rho_j = lambda`; routing probabilities `q_j = gamma_j C_j rho_j / lambda`.
/// Beyond capacity the loads are proportional to capacity (as the model does).
pub(crate) fn static_routing(lambda: f64, gamma: &[f64], cap: &[f64]) -> Vec<f64> {
    let total: f64 = gamma.iter().zip(cap).map(|(g, c)| g * c).sum();
    if lambda >= total {
        return gamma.iter().zip(cap).map(|(g, c)| g * c / total).collect();
    }
    let carried = |theta: f64| -> f64 { gamma.iter().zip(cap).map(|(g, c)| g * c * (1.0 - 1.0 / (theta * c).sqrt()).max(0.0)).sum() };
    let (mut lo, mut hi) = (1e-300f64.ln(), 0.0f64);
    while carried(hi.exp()) < lambda {
        hi += 10.0;
    }
    for _ in 0..400 {
        let mid = 0.5 * (lo + hi);
        if carried(mid.exp()) < lambda {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let theta = (0.5 * (lo + hi)).exp();
    gamma.iter().zip(cap).map(|(g, c)| g * c * (1.0 - 1.0 / (theta * c).sqrt()).max(0.0) / lambda).collect()
}

/// One replication's state.
pub(crate) struct Hetero {
    n: u32,
    arrival_rate: f64,
    buffer: u32,
    policy: Policy,
    /// Class sizes, first indices and speeds.
    size: Vec<u32>,
    start: Vec<u32>,
    speed: Vec<f64>,
    /// Exact capacities for cost comparisons (`ps-sq2`).
    cap: Vec<u128>,
    /// Classes in priority order (decreasing speed, equal speeds in file order).
    by_rank: Vec<usize>,
    /// Cumulative class probabilities (`ps-sq2` with non-uniform sampling, static routing).
    cum: Vec<f64>,
    /// `1 / (cum_j - cum_{j-1})` (`0` for a class of zero probability).
    inv_width: Vec<f64>,
    q: Vec<u32>,
    class: Vec<u8>,
    /// Set `j L + k`: the class-`j` servers with `k` jobs, `k < L = per_class`; SA-JSQ keeps
    /// every level (`L` doubles when a queue reaches it), the other policies only idle (`0`) and
    /// busy (`1`). A job more or fewer is one swap; the busy servers of class `j` are the run
    /// of sets `j L + 1 .. (j + 1) L`.
    sets: Segments,
    per_class: usize,
    /// SA-JSQ: the sets follow every level, not only idle and busy.
    all_levels: bool,
    /// SA-JSQ: the shortest queue length.
    min_level: u32,
    /// SA-JSQ: the number of servers at the shortest queue length.
    at_min: u32,
    busy_count: Vec<u32>,
    /// `sum_j B_j`.
    busy_total: u32,
    /// `sum_j mu_j B_j`, recomputed (in class order) when a busy count changes.
    service_rate: f64,
    /// The running sums `sum_{i <= j} mu_i B_i` (last = `service_rate`), recomputed with it.
    cum_rate: Vec<f64>,
    /// `1 / mu_j`.
    inv_speed: Vec<f64>,
    /// `1 / (N lambda)`.
    inv_arrival: f64,
    scratch: Vec<f64>,
    class_scratch: Vec<f64>,
    /// Level counts per class (`[k]` servers of the class with at least `k` jobs): their sum
    /// over the classes is the system's, level 1 the class's busy servers, and the sum over
    /// the levels its jobs, so one lazily integrated count per event gives all three.
    class_levels: Vec<Levels>,
    accepted_by_class: Vec<u64>,
    accepted: u64,
    lost: u64,
    waited: u64,
    departures: u64,
}

impl Hetero {
    pub(crate) fn new(n: u32, lambda: f64, buffer: Option<u32>, size: Vec<u32>, speed: Vec<f64>, policy: Policy) -> Self {
        let m = size.len();
        let mut start = Vec::with_capacity(m);
        let mut acc = 0;
        for &s in &size {
            start.push(acc);
            acc += s;
        }
        let mut by_rank: Vec<usize> = (0..m).collect();
        by_rank.sort_by(|&a, &b| speed[b].total_cmp(&speed[a]).then(a.cmp(&b)));
        let class: Vec<u8> = (0..m).flat_map(|j| std::iter::repeat_n(j as u8, size[j] as usize)).collect();
        let weights: Option<&Vec<f64>> = match &policy {
            Policy::PsSq2 { sampling: Some(p), .. } => Some(p),
            Policy::Static { q } => Some(q),
            _ => None,
        };
        let cum: Vec<f64> = weights
            .map(|w| {
                let mut c = 0.0;
                w.iter()
                    .map(|v| {
                        c += v;
                        c
                    })
                    .collect()
            })
            .unwrap_or_default();
        let inv_width = (0..cum.len())
            .map(|j| {
                let w = cum[j] - if j == 0 { 0.0 } else { cum[j - 1] };
                if w > 0.0 {
                    1.0 / w
                } else {
                    0.0
                }
            })
            .collect();
        let cap = decimal_capacities(&speed).unwrap_or_else(|| vec![1; m]);
        let inv_speed = speed.iter().map(|mu| 1.0 / mu).collect();
        let all_levels = matches!(policy, Policy::SaJsq);
        let per_class = if all_levels { 8 } else { 2 };
        let sets = Segments::new(n, m * per_class, |s| (class[s as usize] as usize * per_class) as u32);
        Hetero {
            n,
            arrival_rate: n as f64 * lambda,
            buffer: buffer.unwrap_or(u32::MAX),
            policy,
            size,
            start,
            speed,
            cap,
            by_rank,
            cum,
            inv_width,
            q: vec![0; n as usize],
            class,
            sets,
            per_class,
            all_levels,
            min_level: 0,
            at_min: n,
            busy_count: vec![0; m],
            busy_total: 0,
            service_rate: 0.0,
            cum_rate: vec![0.0; m],
            inv_speed,
            inv_arrival: 1.0 / (n as f64 * lambda),
            scratch: Vec::new(),
            class_scratch: Vec::new(),
            class_levels: (0..m).map(|_| Levels::new()).collect(),
            accepted_by_class: vec![0; m],
            accepted: 0,
            lost: 0,
            waited: 0,
            departures: 0,
        }
    }

    fn classes(&self) -> usize {
        self.size.len()
    }

    /// Number of servers with exactly `k < L` jobs (SA-JSQ).
    fn at_level(&self, k: u32) -> u32 {
        (0..self.classes()).map(|j| self.sets.len(j * self.per_class + k as usize)).sum()
    }

    /// Exact comparison of the costs of servers `a` and `b`: `Less` when `a` is cheaper.
    #[inline(always)]
    fn compare(&self, rule: Rule, a: u32, b: u32) -> std::cmp::Ordering {
        let (qa, qb) = (self.q[a as usize] as u128, self.q[b as usize] as u128);
        let (ca, cb) = (self.cap[self.class[a as usize] as usize], self.cap[self.class[b as usize] as usize]);
        match rule {
            Rule::Sq2 => qa.cmp(&qb),
            Rule::Lsc => (qa * cb).cmp(&(qb * ca)),
            Rule::LscPlusOne => ((qa + 1) * cb).cmp(&((qb + 1) * ca)),
        }
    }

    /// The `floor(f len)`-th of `len >= 1` items, `f` uniform in `[0, 1)`, and `f len` minus it
    /// (uniform in `[0, 1)` and independent of the index: the rest of the uniform, for the next
    /// choice).
    #[inline(always)]
    fn split(f: f64, len: u32) -> (u32, f64) {
        let x = f * len as f64;
        let r = (x as u32).min(len - 1);
        (r, (x - r as f64).clamp(0.0, 1.0 - f64::EPSILON))
    }

    /// The server that an arriving job is routed to (every policy but SA-JSQ), from `f` uniform
    /// in `[0, 1)` (the event choice's uniform, rescaled), and its index in the permutation
    /// when the server is idle (`u32::MAX` otherwise or when unknown). SA-JIQ and PULL take
    /// the idle server, or the random one, as the `floor(f len)`-th of the candidates; PS SQ(2)
    /// takes both samples (and their classes) from successive splits of `f` and joins the first
    /// on a tie of costs: the two samples are i.i.d., hence exchangeable given a tie, so the
    /// joined server has the law of the tie coin's; static routing takes the class and then
    /// the server. No draw from `rng` is needed for any of them.
    #[inline(always)]
    fn route_with(&self, f: f64) -> (u32, u32) {
        match &self.policy {
            Policy::SaJsq => unreachable!("SA-JSQ routes by arrive_shortest"),
            Policy::SaJiq => {
                for &j in &self.by_rank {
                    let g = j * self.per_class;
                    let len = self.sets.len(g);
                    if len > 0 {
                        return self.sets.at_span(g, Self::split(f, len).0);
                    }
                }
                (Self::split(f, self.n).0, u32::MAX)
            }
            Policy::Pull => {
                let idle = self.n - self.busy_total;
                if idle == 0 {
                    return (Self::split(f, self.n).0, u32::MAX);
                }
                // the i-th idle server in class order
                let mut i = Self::split(f, idle).0;
                for j in 0..self.classes() {
                    let l = self.sets.len(j * self.per_class);
                    if i < l {
                        return self.sets.at_span(j * self.per_class, i);
                    }
                    i -= l;
                }
                unreachable!("idle count matches the idle sets")
            }
            Policy::PsSq2 { sampling, rule } => {
                let rule = *rule;
                let (a, b) = if sampling.is_none() {
                    let (a, f) = Self::split(f, self.n);
                    (a, Self::split(f, self.n).0)
                } else {
                    let (a, f) = self.in_class_with(f);
                    (a, self.in_class_with(f).0)
                };
                if self.compare(rule, a, b) == std::cmp::Ordering::Greater {
                    (b, u32::MAX)
                } else {
                    (a, u32::MAX)
                }
            }
            Policy::Static { .. } => (self.in_class_with(f).0, u32::MAX),
        }
    }

    /// A server drawn from `f` uniform in `[0, 1)`: its class `j` with probability
    /// `cum_j - cum_{j-1}` (over the total), then uniformly within the class; with the rest of
    /// the uniform.
    #[inline(always)]
    fn in_class_with(&self, f: f64) -> (u32, f64) {
        let m = self.cum.len();
        let target = f * self.cum[m - 1];
        let mut j = usize::MAX;
        for (i, &c) in self.cum.iter().enumerate() {
            if target < c && self.size[i] > 0 {
                j = i;
                break;
            }
        }
        if j == usize::MAX {
            // round-off at the very end of the scan: the last class that has servers
            j = (0..m).rev().find(|&i| self.size[i] > 0).expect("a class with servers");
        }
        let below = if j == 0 { 0.0 } else { self.cum[j - 1] };
        let g = ((target - below) * self.inv_width[j]).clamp(0.0, 1.0 - f64::EPSILON);
        let (r, rest) = Self::split(g, self.size[j]);
        (self.start[j] + r, rest)
    }

    /// `sum_j mu_j B_j` from the busy counts.
    #[inline(always)]
    fn recompute_service_rate(&mut self) {
        self.service_rate = super::running_rates(&self.busy_count, &self.speed, &mut self.cum_rate);
    }

    /// SA-JSQ arrival: the job joins a server of the shortest level `k`, of the highest-ranked
    /// class that has one (as [`route`](Self::route)); the server is the `floor(frac L)`-th of
    /// that set of `L` servers (`frac` uniform in `[0, 1)`: the event choice's uniform, rescaled),
    /// so that no draw is needed and the move to level `k + 1` is one swap without a look-up.
    #[inline(always)]
    fn arrive_shortest(&mut self, t: f64, frac: f64) {
        let k = self.min_level;
        let per = self.per_class;
        let mut j = usize::MAX;
        for &c in &self.by_rank {
            if self.sets.len(c * per + k as usize) > 0 {
                j = c;
                break;
            }
        }
        let g = j * per + k as usize;
        let len = self.sets.len(g);
        let (s, i) = self.sets.at_span(g, ((frac * len as f64) as u32).min(len - 1));
        if k >= self.buffer {
            self.lost += 1;
            return;
        }
        self.accept(s, j, k, t);
        if k as usize + 1 >= per {
            self.widen();
            let g = j * self.per_class + k as usize;
            self.sets.promote_at(i, g);
        } else {
            self.sets.promote_at(i, g);
        }
        self.at_min -= 1;
        if self.at_min == 0 {
            // every server at the shortest level got a job: the next level is the shortest
            self.min_level += 1;
            self.at_min = self.at_level(self.min_level);
        }
    }

    /// The bookkeeping of a job accepted at server `s` of class `j` holding `k` jobs at time
    /// `t` (counts, the level integrals, the busy count and the cached service rate); the set
    /// moves are the caller's.
    #[inline(always)]
    fn accept(&mut self, s: u32, j: usize, k: u32, t: f64) {
        self.accepted += 1;
        self.accepted_by_class[j] += 1;
        self.waited += (k > 0) as u64;
        self.q[s as usize] = k + 1;
        self.class_levels[j].up(k, t);
        if k == 0 {
            self.busy_count[j] += 1;
            self.busy_total += 1;
            self.recompute_service_rate();
        }
    }

    /// An arrival with its own uniform (unit tests).
    #[cfg(test)]
    fn arrive(&mut self, t: f64, rng: &mut Rng) {
        let u = uniform(rng) * self.arrival_rate;
        self.arrive_with(t, u);
    }

    /// An arrival; `u` is the event choice's uniform times the total rate (`u < N lambda`):
    /// `u / (N lambda)`, uniform in `[0, 1)`, routes the job.
    #[inline(always)]
    fn arrive_with(&mut self, t: f64, u: f64) {
        let f = (u * self.inv_arrival).min(1.0 - f64::EPSILON);
        if self.all_levels {
            return self.arrive_shortest(t, f);
        }
        let (s, i) = self.route_with(f);
        let before = self.q[s as usize];
        if before >= self.buffer {
            self.lost += 1;
            return;
        }
        let j = self.class[s as usize] as usize;
        self.accept(s, j, before, t);
        if before == 0 {
            if i != u32::MAX {
                self.sets.promote_at(i, j * 2);
            } else {
                self.sets.move_between(s, j * 2, j * 2 + 1);
            }
        }
    }

    /// A completion; `target` is uniform in `[0, sum_j mu_j B_j)`. The class is `j` when
    /// `target` falls in `[sum_{i < j} mu_i B_i, sum_{i <= j} mu_i B_i)`; the server is the
    /// `floor((target - sum_{i < j} mu_i B_i) / mu_j)`-th of the class's `B_j` busy servers
    /// (uniform given the class), so one uniform picks both.
    #[inline(always)]
    fn depart(&mut self, target: f64, t: f64) {
        let m = self.classes();
        let mut j = m - 1;
        for i in 0..m {
            if target < self.cum_rate[i] && self.busy_count[i] > 0 {
                j = i;
                break;
            }
        }
        if self.busy_count[j] == 0 {
            // round-off at the very end of the scan: the last class with a busy server
            j = (0..m).rev().find(|&i| self.busy_count[i] > 0).expect("a busy server");
        }
        let busy = self.busy_count[j];
        let below = if j == 0 { 0.0 } else { self.cum_rate[j - 1] };
        let r = (((target - below) * self.inv_speed[j]).max(0.0) as u32).min(busy - 1);
        let base = j * self.per_class;
        let (s, i) = self.sets.at_span(base + 1, r);
        let before = self.q[s as usize];
        self.q[s as usize] = before - 1;
        self.departures += 1;
        self.class_levels[j].down(before, t);
        if before == 1 {
            self.busy_count[j] -= 1;
            self.busy_total -= 1;
            self.recompute_service_rate();
        }
        if !self.all_levels {
            if before == 1 {
                self.sets.demote_at(i, base + 1);
            }
        } else {
            self.sets.demote_at(i, base + before as usize);
            // the server leaves level `before >= min_level` for `before - 1`
            if before == self.min_level {
                self.min_level = before - 1;
                self.at_min = 1;
            } else if before - 1 == self.min_level {
                self.at_min += 1;
            }
        }
    }

    /// SA-JSQ: doubles the levels `L` kept per class (a queue reached `L - 1` jobs).
    #[cold]
    fn widen(&mut self) {
        let new = 2 * self.per_class;
        self.sets.widen(self.classes(), self.per_class, new);
        self.per_class = new;
    }
}

impl Family for Hetero {
    #[inline(always)]
    fn rate(&self) -> f64 {
        self.arrival_rate + self.service_rate
    }

    #[inline(always)]
    fn event(&mut self, t: f64, rate: f64, rng: &mut Rng) {
        let u = uniform(rng) * rate;
        if u < self.arrival_rate {
            self.arrive_with(t, u);
        } else {
            self.depart(u - self.arrival_rate, t);
        }
    }

    /// Extras per class `j` (in this order, 3 per class): busy fraction, mean queue length and
    /// accepted arrivals per class-`j` server per unit time (their ratio is the class's mean
    /// response time by Little's law).
    fn close(&mut self, t: f64, duration: f64, out: &mut Batch) {
        out.accepted = std::mem::take(&mut self.accepted);
        out.lost = std::mem::take(&mut self.lost);
        out.waited = std::mem::take(&mut self.waited);
        out.departures = std::mem::take(&mut self.departures);
        out.extras.clear();
        self.scratch.clear();
        for j in 0..self.classes() {
            self.class_levels[j].take(t, &mut self.class_scratch);
            let v = &self.class_scratch;
            if self.scratch.len() < v.len() {
                self.scratch.resize(v.len(), 0.0);
            }
            for (total, x) in self.scratch.iter_mut().zip(v) {
                *total += x;
            }
            // `v[0] = 0`: the sum over the levels is the integral of the class's jobs
            let per = self.size[j] as f64 * duration;
            out.extras.push(v.get(1).copied().unwrap_or(0.0) / per);
            out.extras.push(v.iter().sum::<f64>() / per);
            out.extras.push(std::mem::take(&mut self.accepted_by_class[j]) as f64 / per);
        }
        out.level_integral.clone_from(&self.scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::coin;
    use rand::SeedableRng;

    #[test]
    fn class_sizes_sum_to_n() {
        assert_eq!(class_sizes(10, &[0.5, 0.5]), vec![5, 5]);
        assert_eq!(class_sizes(10, &[0.2, 0.3, 0.5]), vec![2, 3, 5]);
        assert_eq!(class_sizes(7, &[1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0]).iter().sum::<u32>(), 7);
    }

    #[test]
    fn decimal_capacities_are_exact() {
        assert_eq!(decimal_capacities(&[1.6, 0.4]).unwrap(), vec![16, 4]);
        assert_eq!(decimal_capacities(&[3.0, 0.5]).unwrap(), vec![30, 5]);
        assert_eq!(decimal_capacities(&[1e-6, 1e6]).unwrap(), vec![1, 1_000_000_000_000]);
    }

    #[test]
    fn static_routing_matches_the_square_root_rule() {
        // case A at lambda = 0.3: all traffic on the fast class
        let q = static_routing(0.3, &[0.5, 0.5], &[1.6, 0.4]);
        assert!((q[0] - 1.0).abs() < 1e-9 && q[1].abs() < 1e-9, "{q:?}");
        // lambda = 0.7: both classes active; sum q = 1
        let q = static_routing(0.7, &[0.5, 0.5], &[1.6, 0.4]);
        assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-9 && q[1] > 0.0);
    }

    /// LSC cost ties: n / 1.6 = m / 0.4 exactly when n = 4 m.
    #[test]
    fn lsc_ties_are_exact() {
        let mut h = Hetero::new(2, 0.5, None, vec![1, 1], vec![1.6, 0.4], Policy::PsSq2 { sampling: None, rule: Rule::Lsc });
        h.q[0] = 4;
        h.q[1] = 1;
        assert_eq!(h.compare(Rule::Lsc, 0, 1), std::cmp::Ordering::Equal);
        h.q[0] = 3;
        assert_eq!(h.compare(Rule::Lsc, 0, 1), std::cmp::Ordering::Less);
        assert_eq!(h.compare(Rule::LscPlusOne, 0, 1), std::cmp::Ordering::Less);
        // 4/1.6 < 2/0.4
    }

    /// SA-JSQ joins a shortest queue, the fastest class first; the bookkeeping of the shortest
    /// level follows arrivals and departures.
    #[test]
    fn sa_jsq_fills_fastest_shortest_first() {
        let mut rng = Rng::seed_from_u64(3);
        // class 0 slow (2 servers), class 1 fast (2 servers)
        let mut h = Hetero::new(4, 0.5, None, vec![2, 2], vec![0.5, 2.0], Policy::SaJsq);
        for _ in 0..2 {
            h.arrive(0.0, &mut rng);
        }
        assert_eq!((h.q[2], h.q[3]), (1, 1), "fast servers first");
        h.arrive(0.0, &mut rng);
        h.arrive(0.0, &mut rng);
        assert_eq!(h.q, vec![1, 1, 1, 1]);
        assert_eq!(h.min_level, 1);
        h.arrive(0.0, &mut rng);
        assert_eq!(h.q[2] + h.q[3], 3, "ties at level 1 go to the fast class");
        for step in 0..5000 {
            let u = uniform(&mut rng) * h.rate();
            let rate = h.rate();
            h.event(step as f64 * 1e-3 + u * 0.0, rate, &mut rng);
            let min = *h.q.iter().min().unwrap();
            assert_eq!(h.min_level, min);
        }
    }

    /// The shortest level's count, the cached service rate and the level sets stay consistent
    /// with the queues through arrivals, departures and a widening of the levels kept.
    #[test]
    fn sa_jsq_bookkeeping_follows_the_queues() {
        let mut rng = Rng::seed_from_u64(5);
        let mut h = Hetero::new(6, 0.5, None, vec![2, 4], vec![0.5, 2.0], Policy::SaJsq);
        for step in 0..20_000 {
            // drift upwards first (to widen the levels kept), then downwards
            let arrive = if step < 10_000 { coin(&mut rng, 0.7) } else { coin(&mut rng, 0.3) };
            if arrive || h.busy_count.iter().all(|&b| b == 0) {
                h.arrive(step as f64, &mut rng);
            } else {
                let target = uniform(&mut rng) * h.service_rate;
                h.depart(target, step as f64);
            }
            let min = *h.q.iter().min().unwrap();
            assert_eq!(h.min_level, min);
            assert_eq!(h.at_min, h.q.iter().filter(|&&x| x == min).count() as u32);
            let exact: f64 = (0..2).map(|j| h.busy_count[j] as f64 * h.speed[j]).sum();
            assert_eq!(h.service_rate, exact);
            for s in 0..6u32 {
                let (j, k) = (h.class[s as usize] as usize, h.q[s as usize] as usize);
                let g = j * h.per_class + k;
                let found = (0..h.sets.len(g)).any(|i| h.sets.at(g, i) == s);
                assert!(found, "server {s} of class {j} with {k} jobs is not in its set");
            }
        }
        assert!(h.per_class > 8, "the levels kept were widened");
    }

    /// Every routed policy (SA-JIQ, PULL, PS SQ(2) with uniform and class sampling, static):
    /// through events drawn as the simulator draws them (routing and the completing server
    /// from the event's uniform), the cached service rate equals its sum over the classes and
    /// every server sits in its class's idle or busy set.
    #[test]
    fn routed_policies_keep_sets_and_rates() {
        let policies = [
            Policy::SaJiq,
            Policy::Pull,
            Policy::PsSq2 { sampling: None, rule: Rule::Sq2 },
            Policy::PsSq2 { sampling: Some(vec![0.3, 0.7]), rule: Rule::Lsc },
            Policy::Static { q: vec![0.6, 0.4] },
        ];
        for policy in policies {
            let mut rng = Rng::seed_from_u64(8);
            let mut h = Hetero::new(7, 0.8, Some(5), vec![3, 4], vec![1.6, 0.4], policy.clone());
            for step in 0..20_000 {
                let rate = h.rate();
                h.event(step as f64 * 1e-3, rate, &mut rng);
                let exact: f64 = (0..2).map(|j| h.busy_count[j] as f64 * h.speed[j]).sum();
                assert_eq!(h.service_rate, exact, "{policy:?}");
                assert!(h.q.iter().all(|&x| x <= 5), "{policy:?}: buffer");
                for s in 0..7u32 {
                    let j = h.class[s as usize] as usize;
                    let g = j * 2 + (h.q[s as usize] > 0) as usize;
                    let found = (0..h.sets.len(g)).any(|i| h.sets.at(g, i) == s);
                    assert!(found, "{policy:?}: server {s} is not in set {g}");
                }
                let busy = h.q.iter().filter(|&&x| x > 0).count() as u32;
                assert_eq!(h.busy_total, busy, "{policy:?}");
            }
        }
    }
}
