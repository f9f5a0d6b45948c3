//! Redundancy-d with identical copies (all copies of a job have one exponential size).

use super::Discipline;
use crate::Stability;

/// `Fbar(w)` of Red_id(d) under FCFS with exponential sizes, integrated from `Fbar(0) = f0`
/// over `w in [0, w_end]` (RK4, step `h`): returns the minimum of `Fbar` (negative when it
/// crossed zero: `f0` is below the load).
///
/// Phase-type ODE of Hellemans and Van Houdt (T. Hellemans' PhD thesis, Univ. Antwerp, chapter
/// on Red(d) with identical replicas; docs/models/redundancy.md), exponential sizes (`alpha = 1`, `A = -1`, `mu = 1`):
///
/// ```text
/// Fbar' = -lambda d [ e^{-w} (1 - Fbar) + xi1 - xi2 Fbar ],  xi1' = -xi1 + Fbar^d,  xi2' = -xi2 + Fbar^{d-1}
/// ```
fn red_id_min_fbar(lambda: f64, d: u32, f0: f64) -> f64 {
    let (h, w_end) = (0.01, 400.0);
    let di = d as i32;
    let ld = lambda * d as f64;
    let rhs = |w: f64, y: [f64; 3]| -> [f64; 3] {
        let f = y[0];
        [-ld * ((-w).exp() * (1.0 - f) + y[1] - y[2] * f), -y[1] + f.powi(di), -y[2] + f.powi(di - 1)]
    };
    let mut y = [f0, 0.0, 0.0];
    let mut w = 0.0;
    let mut min = f0;
    while w < w_end {
        let k1 = rhs(w, y);
        let k2 = rhs(w + h / 2.0, [0, 1, 2].map(|i| y[i] + h / 2.0 * k1[i]));
        let k3 = rhs(w + h / 2.0, [0, 1, 2].map(|i| y[i] + h / 2.0 * k2[i]));
        let k4 = rhs(w + h, [0, 1, 2].map(|i| y[i] + h * k3[i]));
        y = [0, 1, 2].map(|i| y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]));
        w += h;
        min = min.min(y[0]);
        if y[0] < 0.0 || y[0] > 1.0 + 1e-9 {
            break;
        }
    }
    min
}

/// The largest stable arrival rate `lambda_max` of Red_id(d) under FCFS with exponential
/// sizes in the large-system limit: bisection on `lambda` with `Fbar(0) = 1 - 1e-9` (a load
/// of one), `Fbar` crossing zero meaning `lambda > lambda_max` (Hellemans and Van Houdt, as
/// above). `d = 1` gives 1. Published: 0.81669... for `d = 2` (Hellemans' thesis); 2/3 for
/// `d = 3` is our computation (validation/redundancy.py, docs/references.md).
pub fn red_id_lambda_max(d: u32) -> f64 {
    if d <= 1 {
        return 1.0;
    }
    let f0 = 1.0 - 1e-9;
    let (mut lo, mut hi) = (1.0 / d as f64, 1.0);
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if red_id_min_fbar(mid, d, f0) < 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The load `Fbar(0)` (fraction of busy servers) of Red_id(d), FCFS, exponential sizes, at
/// `lambda < lambda_max`: the unknown boundary value, found by bisection so that `Fbar`
/// stays nonnegative and tends to 0 (`0.710228` at `lambda = 0.5`, `d = 2`: validation/redundancy.py).
pub fn red_id_load(lambda: f64, d: u32) -> f64 {
    let (mut lo, mut hi) = (lambda.min(1.0), 1.0);
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if red_id_min_fbar(lambda, d, mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Stability of redundancy-d with identical exponential copies (Anton, Ayesta, Jonckheere,
/// Verloop 2021): PS iff `lambda < 1/d`; FCFS iff `lambda` is below the saturated-system
/// throughput per server, whose large-system limit is [`red_id_lambda_max`]; LPS and LCFS are
/// not covered by the paper (reported as unknown).
///
/// The FCFS verdict is the `N -> inf` one. With `K` servers the threshold is lower (0.71937 at
/// `d = 2`, `K = 4`; 0.80193 at `K = 20`; 0.81669 only in the limit): that verdict is
/// `mfq_sim::saturated::identical_fcfs_stability` (a simulation or an exact chain, so it
/// lives in `mfq-sim`; see docs/models/redundancy.md, "Stability").
pub fn identical_stability(lambda: f64, d: u32, discipline: Discipline) -> Stability {
    let inv_d = 1.0 / d as f64;
    let lambda_text = crate::short_number(lambda);
    match discipline {
        Discipline::Ps if lambda < inv_d => Stability::Stable { condition: format!("lambda < 1/d = {inv_d:.6} (identical copies, PS)") },
        Discipline::Ps => Stability::Unstable {
            reason: format!(
                "lambda = {lambda_text} >= 1/d = {inv_d:.6}: with identical copies under PS every copy is served in full \
                 (Anton, Ayesta, Jonckheere and Verloop 2021)"
            ),
        },
        Discipline::Fcfs => {
            let lmax = red_id_lambda_max(d);
            if lambda < lmax {
                Stability::Stable { condition: format!("lambda < lambda_max = {lmax:.5} (identical copies, FCFS, large-N limit)") }
            } else {
                Stability::Unstable {
                    reason: format!(
                        "lambda = {lambda_text} >= lambda_max = {lmax:.5}: identical copies under FCFS waste capacity; the stable \
                         region is set by the saturated system (Anton et al. 2021), whose large-N throughput is the \
                         Red_id(d) lambda_max (Hellemans and Van Houdt)"
                    ),
                }
            }
        }
        Discipline::Ros if lambda < 1.0 => Stability::Stable {
            condition: "lambda < 1 (identical copies, ROS: no loss of stability region, Anton, Ayesta, Jonckheere and Verloop 2021)".into(),
        },
        Discipline::Ros => Stability::Unstable {
            reason: format!(
                "lambda = {lambda_text} >= 1: identical copies under ROS are stable iff lambda < 1, the region without \
                 redundancy (Anton, Ayesta, Jonckheere and Verloop 2021)"
            ),
        },
        _ if lambda >= 1.0 => Stability::Unstable { reason: work_bound_reason(&lambda_text, "1") },
        _ => Stability::Unknown {
            note: "identical copies: stability is known for PS, FCFS and ROS only (lambda E[X] < 1 holds, a necessary condition)".into(),
        },
    }
}

/// The largest `lambda` the `m` slowest of `K` servers of speeds `nu` can carry, minimised over
/// `m = d..=K`, and that `m`: a job picks `d` distinct servers uniformly (probability
/// `C(m,d) / C(K,d)` that all lie among those `m`), and such a job is served in full, work
/// `X`, by one of them, so `lambda K E[X] C(m,d)/C(K,d) < sum of their speeds` is necessary.
/// `m = K` is the total-speed bound `sum(nu) / (K E[X])`; `d = 1` gives `min(nu) / E[X]`.
/// Any discipline. Derived in docs/models/redundancy.md ("A bound that holds for every `d`").
/// `nu` non-empty, `1 <= d <= K`, `mean > 0`.
pub fn local_capacity(nu: &[f64], d: u32, mean: f64) -> (f64, usize) {
    let k = nu.len();
    let mut sorted = nu.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (mut best, mut at, mut speed) = (f64::INFINITY, k, 0.0);
    for m in 1..=k {
        speed += sorted[m - 1];
        if m < d as usize {
            continue;
        }
        let share: f64 = (0..d as usize).map(|i| (m - i) as f64 / (k - i) as f64).product();
        let c = speed / (k as f64 * mean * share);
        if c < best {
            (best, at) = (c, m);
        }
    }
    (best, at)
}

/// Why `lambda E[X] >= 1` is unstable under any discipline (unit speeds): every job's size is
/// served in full by at least one server, so the work brought, `lambda E[X]` per server per unit
/// time, exceeds what the servers give. `lambda_e` is `lambda E[X]`, `bound` the capacity's text.
fn work_bound_reason(lambda_e: &str, bound: &str) -> String {
    format!(
        "lambda E[X] = {lambda_e} >= {bound}: every job is served in full by at least one of its copies' servers, so the \
         servers cannot carry the work even without redundancy (a necessary condition, any discipline)"
    )
}

/// The stability region of redundancy-d with identical exponential copies at `lambda`: what
/// `mfq fixed-point` reports for these parameters (there is no queue-length model of identical
/// copies here). PS: `lambda < 1/d` with `lambda_max = 1/d` (Anton, Ayesta, Jonckheere, Verloop
/// 2021); FCFS: `lambda < lambda_max` of [`red_id_lambda_max`] (`N -> inf`); LPS and LCFS:
/// unknown, no `lambda_max`.
pub fn identical_region(lambda: f64, d: u32, discipline: Discipline) -> crate::StabilityRegion {
    let stability = identical_stability(lambda, d, discipline);
    let (region, lambda_max, source) = match discipline {
        Discipline::Ps => (
            "lambda < 1/d (every copy is served in full)".to_string(),
            Some(1.0 / d as f64),
            "closed form 1/d (Anton, Ayesta, Jonckheere and Verloop, Oper. Res. 69(5), 2021)".to_string(),
        ),
        Discipline::Fcfs => (
            "lambda < lambda_max, the large-N throughput per server of the saturated system".to_string(),
            Some(red_id_lambda_max(d)),
            "computed from Hellemans and Van Houdt's ODE for Red_id(d) (RK4 step 0.01, bisection in lambda); published \
             0.81669 for d = 2 (T. Hellemans' PhD thesis)"
                .to_string(),
        ),
        Discipline::Ros => (
            "lambda < 1 (no loss of stability region)".to_string(),
            Some(1.0),
            "Anton, Ayesta, Jonckheere and Verloop, Oper. Res. 69(5), 2021 (identical exponential copies under ROS keep the \
             region lambda < 1 of no redundancy)"
                .to_string(),
        ),
        _ => ("unknown (the stability of identical copies is known for PS, FCFS and ROS only)".to_string(), None, String::new()),
    };
    let note = match discipline {
        Discipline::Fcfs => {
            "identical copies have no queue-length model here, only this region; `mfq simulate --servers N` gives \
                             the verdict for N servers (the threshold is lower for finite N)"
        }
        _ => "identical copies have no queue-length model here, only this region",
    };
    crate::StabilityRegion { stability, region, lambda_max, lambda_max_source: source, note: note.to_string() }
}

/// The stability region of redundancy-d with identical copies of a general size law `size`
/// (mean `E[X]`), on unit-speed servers (`speeds = None`, the `N -> inf` verdict) or on `K`
/// servers of the given speeds (FCFS only). `lambda` is the arrival rate per server.
///
/// What the verdict rests on (docs/models/redundancy.md, "Identical copies with general sizes
/// and speeds"):
/// - PS: `lambda E[X] < 1/d`, every copy served in full (Anton, Ayesta, Jonckheere and Verloop,
///   Oper. Res. 69(5), 2021, for exponential sizes; insensitive to the law: Raaijmakers, Borst
///   and Boxma, "Stability of redundancy systems with processor sharing", 2020).
/// - ROS, exponential sizes: `lambda E[X] < 1` (Anton et al. 2021); other laws: unknown.
/// - FCFS, exponential sizes, unit speeds: [`red_id_lambda_max`]`(d) / E[X]`.
/// - FCFS on `K` servers with speeds `nu`: `d = 1` (no redundancy, uniform routing):
///   `lambda E[X] < min nu`; `d = K` (every server works on the head job, which leaves after
///   `X / max nu`: an M/G/1 queue): `lambda K E[X] < max nu`. Closed forms derived in
///   docs/models/redundancy.md.
/// - FCFS otherwise: for equal speeds the throughput per server of the saturated system; for
///   unequal speeds an estimate from the finite system (the saturated system only bounds it
///   from above). Only a simulation gives them (`mfq simulate`, `mfq::copies`):
///   `lambda_max` is `None` here and the verdict `Unknown`, except that
///   `lambda E[X] >= sum(nu) / K` is unstable (the servers' total speed cannot carry the work).
///
/// `size` exponential with mean 1 and no speeds gives exactly [`identical_region`].
pub fn identical_region_general(
    lambda: f64,
    d: u32,
    discipline: Discipline,
    size: &super::CopySize,
    speeds: Option<&[f64]>,
) -> crate::StabilityRegion {
    let mean = size.mean();
    let law = size.label();
    let verdict = |lmax: Option<f64>, what: &str| -> Stability {
        match lmax {
            Some(l) if lambda < l => Stability::Stable { condition: format!("lambda < lambda_max = {l:.6} ({what})") },
            Some(l) => Stability::Unstable { reason: format!("lambda = {} >= lambda_max = {l:.6} ({what})", crate::short_number(lambda)) },
            None => Stability::Unknown { note: format!("lambda_max is not known in closed form here ({what})") },
        }
    };
    if let Some(nu) = speeds {
        // FCFS on K servers of the given speeds (kind.rs rejects speeds with other disciplines)
        let k = nu.len();
        let (nu_min, nu_max) = nu.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let (lmax, source) = if d == 1 {
            (Some(nu_min / mean), format!("closed form min(nu) / E[X] = {nu_min} / {mean} (d = 1: each server its own M/G/1 queue)"))
        } else if d as usize == k {
            (
                Some(nu_max / (k as f64 * mean)),
                format!(
                    "closed form max(nu) / (K E[X]) = {nu_max} / ({k} x {mean}) (d = K: every server works on the head job, \
                     which leaves at the fastest server's pace; docs/models/redundancy.md)"
                ),
            )
        } else {
            (None, String::new())
        };
        // long speed lists are shortened in messages (a file may list thousands of servers)
        let speeds_text = if k <= 8 { format!("{nu:?}") } else { format!("{:?} ... ({k} in all)", &nu[..6]) };
        let what = format!("identical copies, FCFS, {law}, K = {k} {} of speeds {speeds_text}", if k == 1 { "server" } else { "servers" });
        let (capacity, slowest) = local_capacity(nu, d, mean);
        let stability = match verdict(lmax, &what) {
            Stability::Unknown { .. } if lambda >= capacity => Stability::Unstable {
                reason: if slowest == k {
                    format!(
                        "lambda = {} >= sum(nu) / (K E[X]) = {capacity:.6}: the servers' total speed cannot carry the work even \
                         without redundancy ({what})",
                        crate::short_number(lambda)
                    )
                } else {
                    format!(
                        "lambda = {} >= {capacity:.6}: the jobs whose d = {d} copies all go to the {slowest} slowest servers bring \
                         more work than those servers' speeds carry (a necessary condition; {what})",
                        crate::short_number(lambda)
                    )
                },
            },
            v => v,
        };
        return crate::StabilityRegion {
            stability,
            region: "lambda < lambda_max (equal speeds: the throughput per server of the saturated system, Anton et al. 2021; \
                     unequal speeds: the saturated system only bounds it from above)"
                .into(),
            lambda_max: lmax,
            lambda_max_source: source,
            note: "`mfq simulate --servers K` gives lambda_max with its 95% interval (exact chain, saturated system or, for \
                   unequal speeds, the finite system itself; docs/models/redundancy.md) and simulates the finite system"
                .into(),
        };
    }
    if size.is_exponential() {
        let r = identical_region(lambda * mean, d, discipline);
        let lmax = r.lambda_max.map(|l| l / mean);
        let stability = match lmax {
            Some(_) => verdict(lmax, &format!("identical copies, {}, {law}", discipline.label(1))),
            None => r.stability.clone(),
        };
        return crate::StabilityRegion { stability, lambda_max: lmax, ..r };
    }
    let label = discipline.label(1);
    let what = format!("identical copies, {label}, {law}");
    let (region, lmax, source, note) = match discipline {
        Discipline::Ps => (
            "lambda E[X] < 1/d (every copy is served in full)".to_string(),
            Some(1.0 / (d as f64 * mean)),
            "closed form 1/(d E[X]) (Anton, Ayesta, Jonckheere and Verloop 2021; insensitive to the size law: Raaijmakers, \
             Borst and Boxma 2020)"
                .to_string(),
            "identical copies have no queue-length model here, only this region".to_string(),
        ),
        Discipline::Fcfs => (
            "lambda < lambda_max, the throughput per server of the saturated system (Anton et al. 2021)".to_string(),
            (d == 1).then(|| 1.0 / mean),
            if d == 1 { "closed form 1/E[X] (d = 1: no redundancy)".to_string() } else { String::new() },
            "the large-N lambda_max of non-exponential identical copies is not computed here; `mfq simulate --servers K` \
             gives lambda_max of K servers from the saturated system with a 95% confidence interval (exactly for small K)"
                .to_string(),
        ),
        _ => (
            format!(
                "unknown (identical copies of a non-exponential law: known for PS, and for FCFS through the saturated system; not {label})"
            ),
            None,
            String::new(),
            "identical copies have no queue-length model here".to_string(),
        ),
    };
    let stability = match verdict(lmax, &what) {
        Stability::Unknown { .. } if lambda * mean >= 1.0 => {
            Stability::Unstable { reason: format!("{} ({what})", work_bound_reason(&crate::short_number(lambda * mean), "1")) }
        }
        v => v,
    };
    crate::StabilityRegion { stability, region, lambda_max: lmax, lambda_max_source: source, note }
}

#[cfg(test)]
mod capacity_tests {
    use super::*;

    /// Unequal speeds, FCFS, 2 < d < K: no closed form, but the jobs whose two copies both go
    /// to the five slow servers (probability C(5,2)/C(6,2) = 2/3) bring work 6 lambda 2/3 that
    /// their speeds 5 x 0.5 must carry: `lambda >= 0.625` is unstable (the total-speed bound
    /// alone gave 1), and below it the verdict stays unknown.
    #[test]
    fn unequal_speeds_above_the_slow_servers_capacity_are_unstable() {
        let nu = [3.5, 0.5, 0.5, 0.5, 0.5, 0.5];
        let size = super::super::CopySize::exponential();
        assert_eq!(local_capacity(&nu, 2, 1.0), (0.625, 5));
        for lambda in [0.625, 0.7, 1.0, 2.0, 1e300] {
            let r = identical_region_general(lambda, 2, Discipline::Fcfs, &size, Some(&nu));
            assert!(matches!(&r.stability, Stability::Unstable { reason } if reason.contains("5 slowest")), "{lambda}: {:?}", r.stability);
        }
        let r = identical_region_general(0.6, 2, Discipline::Fcfs, &size, Some(&nu));
        assert!(matches!(r.stability, Stability::Unknown { .. }), "{:?}", r.stability);
        // equal speeds: the bound is the total speed (every m gives C(m,2)/C(K,2) <= m/K)
        assert_eq!(local_capacity(&[1.0; 4], 2, 1.0).1, 4);
        let r = identical_region_general(1.0, 2, Discipline::Fcfs, &size, Some(&[1.0; 4]));
        assert!(matches!(&r.stability, Stability::Unstable { reason } if reason.contains("sum(nu)")), "{:?}", r.stability);
    }

    /// Disciplines without a known region (LCFS, LPS): `lambda E[X] >= 1` is unstable under any
    /// discipline (each job is served in full once), below it unknown.
    #[test]
    fn the_work_bound_holds_for_every_discipline() {
        for (law, mean) in [(super::super::CopySize::exponential(), 1.0), (super::super::CopySize::Deterministic(2.0), 2.0)] {
            let r = identical_region_general(1.0 / mean, 2, Discipline::Lcfs, &law, None);
            assert!(matches!(&r.stability, Stability::Unstable { reason } if reason.contains("lambda E[X] = 1")), "{:?}", r.stability);
            let r = identical_region_general(0.9 / mean, 2, Discipline::Lcfs, &law, None);
            assert!(matches!(r.stability, Stability::Unknown { .. }), "{:?}", r.stability);
        }
    }
}
