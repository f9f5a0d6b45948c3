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
                Stability::Stable { condition: format!("lambda < lambda_max = {lmax:.5} (identical copies, FCFS, N -> inf)") }
            } else {
                Stability::Unstable {
                    reason: format!(
                        "lambda = {lambda_text} >= lambda_max = {lmax:.5}: identical copies under FCFS waste capacity; the stable \
                         region is set by the saturated system (Anton et al. 2021), whose N -> inf throughput is the \
                         Red_id(d) lambda_max (Hellemans and Van Houdt)"
                    ),
                }
            }
        }
        _ => Stability::Unknown { note: "identical copies: stability is known for PS, FCFS and ROS only".into() },
    }
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
            "lambda < lambda_max, the N -> inf throughput per server of the saturated system".to_string(),
            Some(red_id_lambda_max(d)),
            "computed from Hellemans and Van Houdt's ODE for Red_id(d) (RK4 step 0.01, bisection in lambda); published \
             0.81669 for d = 2 (T. Hellemans' PhD thesis)"
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
