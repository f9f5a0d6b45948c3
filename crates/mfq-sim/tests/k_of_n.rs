//! Redundant requests, k of n (`k-of-n`): the discrete-event simulation written from the
//! system's rules (central FCFS buffer or random dispatch, k-th completion, removal of the other
//! copies) against values it did not produce: the classical queues the system reduces to
//! (M/G/1 by Pollaczek-Khinchine, M/M/c by Erlang C; docs/models/k-of-n.md derives the
//! reductions), and the claims of Shah, Lee, Ramchandran, "When do redundant requests reduce
//! latency?" (IEEE Trans. Commun. 64(2), 2016, abstract).

use mfq_model::models::k_of_n::{closed_form_response_time, Dispatch, KOfNSpec, ServiceLaw};
use mfq_model::ModelSpec;
use mfq_sim::{simulate, Estimate, SimError, SimOptions};

const EXP: ServiceLaw = ServiceLaw::Exponential;
const H2: ServiceLaw = ServiceLaw::H2 { scv: 4.0 };
const LIGHT: ServiceLaw = ServiceLaw::ShiftedExponential { shift: 0.5 };

fn spec(lambda: f64, servers: u32, k: u32, n: u32, dispatch: Dispatch, service: ServiceLaw, removal: f64) -> KOfNSpec {
    KOfNSpec { lambda, servers, k, n, dispatch, service, removal }
}

fn run(s: &KOfNSpec, time: f64, seed: u64) -> Estimate {
    let opts = SimOptions { servers: s.servers as usize, time, warmup: 200.0, replications: 4, batches: 25, seed, ..Default::default() };
    let r = simulate(&ModelSpec::from(s.clone()), &opts).unwrap();
    // the response time measured request by request agrees with Little's law
    let little = r.extras["little_response_time"];
    assert!(
        (little.mean - r.mean_response_time.unwrap().mean).abs() <= 2.0 * (little.half_width + r.mean_response_time.unwrap().half_width),
        "{s:?}: Little {little:?} vs measured {:?}",
        r.mean_response_time
    );
    r.mean_response_time.unwrap()
}

/// The cases with a closed form, inside the simulation's confidence intervals at the
/// simultaneous level 95% (each at `1 - 0.05/9`, Bonferroni):
///
/// - random dispatch, `k = n = 1`: M/G/1 per server, `E[T] = 1 + lambda E[S^2] / (2 (1 - lambda))`
///   at `lambda = 0.6`: 2.5 (exponential, `E[S^2] = 2`), 4.75 (H2 scv 4, `E[S^2] = 5`),
///   1.9375 (0.5 + Exp, `E[S^2] = 1.25`);
/// - central buffer, `k = 1`, `n = N = 4`, instant removal: M/G/1 of the minimum of 4 copies,
///   `1 / (4 (1 - lambda)) = 0.625` at `lambda = 0.6` for exponential copies;
/// - central buffer, `k = n = 1`, exponential: M/M/4 at `lambda = 0.6` (Erlang C);
/// - `k = n = N = 2`, exponential, both dispatches: the two-server fork-join queue of Flatto and
///   Hahn (1984), `(12 - rho) / (8 (1 - rho)) = 3.5625` at `rho = 2 lambda = 0.6`.
#[test]
fn closed_forms_are_inside_the_confidence_intervals() {
    let cases = [
        (spec(0.6, 3, 1, 1, Dispatch::Random, EXP, 0.0), Some(2.5)),
        (spec(0.6, 3, 1, 1, Dispatch::Random, H2, 0.0), Some(4.75)),
        (spec(0.6, 3, 1, 1, Dispatch::Random, LIGHT, 0.0), Some(1.9375)),
        (spec(0.6, 4, 1, 4, Dispatch::Central, EXP, 0.0), Some(0.625)),
        (spec(0.25, 4, 1, 4, Dispatch::Central, H2, 0.0), None),
        (spec(0.3, 4, 1, 4, Dispatch::Central, LIGHT, 0.0), None),
        (spec(0.6, 4, 1, 1, Dispatch::Central, EXP, 0.0), None),
        (spec(0.3, 2, 2, 2, Dispatch::Central, EXP, 0.0), Some(3.5625)),
        (spec(0.3, 2, 2, 2, Dispatch::Random, EXP, 0.0), Some(3.5625)),
    ];
    for (i, (s, by_hand)) in cases.iter().enumerate() {
        let exact = closed_form_response_time(s).unwrap();
        if let Some(v) = by_hand {
            assert!((exact - v).abs() < 1e-12, "{s:?}: closed form {exact} vs {v} by hand");
        }
        let e = run(s, 100_000.0, 7 + i as u64);
        println!(
            "{:?} k={} n={} N={} {:?} lambda={}: {:.5} +- {:.5}, closed form {exact:.5}",
            s.dispatch, s.k, s.n, s.servers, s.service, s.lambda, e.mean, e.half_width
        );
        assert!(e.half_width < 0.03 * exact, "{s:?}: interval too wide to test {e:?}");
        // the nine intervals hold together with probability 95% (Bonferroni)
        assert!(e.covers(exact, 1.0 - 0.05 / cases.len() as f64, 0.0), "{s:?}: simulated {e:?}, closed form {exact}");
    }
}

/// The paper's claims (abstract), central buffer, `N = 4`, `k = 1`:
/// with exponential or heavier (H2) copies and instant removal, more redundancy lowers the mean
/// latency at every load (`n = 1, 2, 4` at `lambda = 0.1` and `0.7`); with lighter copies
/// (0.5 + Exp), or exponential copies and a removal time 0.2, no redundancy (`n = 1`) is best at
/// a high load (`n = 1` against `n = 2` at `lambda = 0.6`, resp. `0.7`), while redundancy still
/// helps at a low load (`n = 4` against `n = 1` at `lambda = 0.05`). Each comparison asks for
/// disjoint 95% intervals.
#[test]
fn the_papers_claims_hold() {
    let t = |lambda: f64, n: u32, law: ServiceLaw, removal: f64| {
        let e = run(&spec(lambda, 4, 1, n, Dispatch::Central, law, removal), 10_000.0, 3);
        println!("lambda {lambda} n {n} {law:?} removal {removal}: {:.4} +- {:.4}", e.mean, e.half_width);
        e
    };
    let below = |a: Estimate, b: Estimate| a.mean + a.half_width < b.mean - b.half_width;
    for law in [EXP, H2] {
        for lambda in [0.1, 0.7] {
            let (t1, t2, t4) = (t(lambda, 1, law, 0.0), t(lambda, 2, law, 0.0), t(lambda, 4, law, 0.0));
            assert!(below(t4, t2) && below(t2, t1), "{law:?} lambda {lambda}: n = 1, 2, 4 give {t1:?} {t2:?} {t4:?}");
        }
    }
    for (law, removal, high) in [(LIGHT, 0.0, 0.6), (EXP, 0.2, 0.7)] {
        // low load: redundancy helps
        let (t1, t4) = (t(0.05, 1, law, removal), t(0.05, 4, law, removal));
        assert!(below(t4, t1), "{law:?} removal {removal} at low load: {t1:?} {t4:?}");
        // high load: none is best (n = 4 is unstable there)
        let (t1, t2) = (t(high, 1, law, removal), t(high, 2, law, removal));
        assert!(below(t1, t2), "{law:?} removal {removal} at high load: {t1:?} {t2:?}");
    }
}

/// The system size is the model's: another `servers` option is refused, naming both.
#[test]
fn the_simulators_size_must_be_the_models() {
    let s = spec(0.3, 4, 1, 2, Dispatch::Central, EXP, 0.0);
    let opts = SimOptions { servers: 1000, time: 10.0, ..Default::default() };
    let e = simulate(&ModelSpec::from(s), &opts).unwrap_err();
    assert!(matches!(&e, SimError::OutOfRange { field, .. } if field == "servers") && e.to_string().contains("model.servers = 4"), "{e}");
}
