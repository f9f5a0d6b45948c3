//! The exact finite-N chain through the front door and `mfq exact`: the errors of the mean
//! field `x*` and of the refined mean field `x* + V/N` (Gast and Van Houdt, SIGMETRICS 2017)
//! against the exact JSQ(2) chain fall like `1/N` and `1/N^2`; the SIS model of Gast,
//! Bortolussi and Tribastone (Performance 2018) gives its published exact means.

mod common;
use common::mfq;

/// Least-squares slope of `log |e|` against `log n`.
fn slope(n: &[f64], e: &[f64]) -> f64 {
    let (x, y): (Vec<f64>, Vec<f64>) = n.iter().zip(e).map(|(n, e)| (n.ln(), e.abs().ln())).unzip();
    let (mx, my) = (x.iter().sum::<f64>() / x.len() as f64, y.iter().sum::<f64>() / y.len() as f64);
    let sxy: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

/// JSQ(2), lambda = 0.9, buffer K = 3 (the truncated mean field is the finite-buffer system's),
/// N = 5..40: fitted slopes of the errors of x* and x* + V/N per level and for the mean queue
/// length, over all N and locally between N = 20 and 40.
#[test]
fn jsq2_errors_of_the_mean_field_and_its_refinement_fall_like_1_over_n_and_1_over_n2() {
    let m = mfq::Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n[truncation]\nlevels = 3\n", &[]).unwrap();
    let sizes = [5usize, 10, 15, 20, 30, 40];
    let cmp = m.exact_comparison(&sizes, &mfq::ExactOptions::default()).unwrap();
    assert_eq!(cmp.buffer, Some(3));
    let r = cmp.refined.as_ref().unwrap();
    let n: Vec<f64> = sizes.iter().map(|&n| n as f64).collect();
    let mut quantities: Vec<(String, Vec<f64>, Vec<f64>)> = Vec::new();
    for k in 0..3 {
        let mf: Vec<f64> = cmp.exact.iter().map(|e| cmp.fixed_point.x[k] - e.mean[k]).collect();
        let rmf: Vec<f64> = cmp.exact.iter().map(|e| cmp.fixed_point.x[k] + r.v[k] / e.servers as f64 - e.mean[k]).collect();
        quantities.push((format!("x_{}", k + 1), mf, rmf));
    }
    let l = cmp.fixed_point.observables.mean_queue_length.unwrap();
    let c = r.mean_queue_length_correction.unwrap();
    let mf: Vec<f64> = cmp.exact.iter().map(|e| l - e.observables.mean_queue_length.unwrap()).collect();
    let rmf: Vec<f64> = cmp.exact.iter().map(|e| l + c / e.servers as f64 - e.observables.mean_queue_length.unwrap()).collect();
    quantities.push(("mean queue length".into(), mf, rmf));
    let v_of = [r.v[0], r.v[1], r.v[2], c];
    for ((name, mf, rmf), v) in quantities.iter().zip(v_of) {
        let (s1, s2) = (slope(&n, mf), slope(&n, rmf));
        let (l1, l2) = (slope(&n[3..], &mf[3..]), slope(&n[3..], &rmf[3..]));
        // N (exact - x*) = V + O(1/N): Richardson's extrapolation from N = 20 and 40 is V
        let richardson = -(2.0 * 40.0 * mf[5] - 20.0 * mf[3]);
        println!(
            "{name}: slope of |x* - exact| {s1:.3} (N = 20..40: {l1:.3}), of |x* + V/N - exact| {s2:.3} (N = 20..40: {l2:.3}); \
             1/N coefficient of the exact error {richardson:.4}, V = {v:.4}"
        );
        // the 1/N^2 terms are still visible at N = 5 (x_3 most): wider bands over 5..40
        assert!((s1 + 1.0).abs() < 0.35 && (l1 + 1.0).abs() < 0.2, "{name}: {mf:?}");
        assert!((s2 + 2.0).abs() < 0.25 && (l2 + 2.0).abs() < 0.15, "{name}: {rmf:?}");
        assert!((richardson - v).abs() < 0.03 * v.abs(), "{name}: {richardson} vs V = {v}");
        // the refinement helps from N = 10 on (at N = 5, x_3's 1/N^2 term is as large as its 1/N term)
        assert!(mf.iter().zip(rmf).skip(1).all(|(a, b)| b.abs() < a.abs()), "{name}");
    }
    for e in &cmp.exact {
        assert!(e.residual < 1e-12, "N = {}: {}", e.servers, e.residual);
    }
}

/// The same chain to order 2 (Gast, Bortolussi, Tribastone, Perf. Eval. 2019): the errors of
/// `x* + V/N + A/N^2` fall faster than `1/N^2.5` between N = 40 and 80 (towards `1/N^3`: the
/// `1/N^4` terms are large here, slopes 2.5 at N = 20..40, 2.6-3.4 at 40..80), per level and for
/// the mean queue length and the mean response time; and `A` itself is the limit of
/// `N^2 (E[x^N] - x* - V/N)`, extrapolated from N = 20, 40, 80 (Richardson, eliminating the
/// `1/N` and `1/N^2` terms), to 1%. The response time is `E[Q] / E[throughput]` with both
/// expanded: arrivals lost at the buffer make the throughput depend on N, and dividing by the
/// mean-field throughput left an error of 1.3e-2 that did not fall with N.
#[test]
fn jsq2_second_order_errors_fall_like_1_over_n3_and_the_response_time_follows() {
    let m = mfq::Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n[truncation]\nlevels = 3\n", &[]).unwrap();
    let sizes = [20usize, 40, 80];
    let cmp = m.exact_comparison(&sizes, &mfq::ExactOptions::default()).unwrap();
    let r = cmp.refined.as_ref().unwrap();
    assert_eq!(r.order, 2);
    let n: Vec<f64> = sizes.iter().map(|&n| n as f64).collect();
    let t = cmp.fixed_point.observables.mean_response_time.unwrap();
    let c = r.mean_response_time_correction.unwrap();
    let first: Vec<f64> = cmp.exact.iter().map(|e| t + c / e.servers as f64 - e.observables.mean_response_time.unwrap()).collect();
    let (s1, l1) = (slope(&n, &first), slope(&n[1..], &first[1..]));
    println!("mean response time, order 1: errors {first:.3?}, slope {s1:.3} (N = 40..80: {l1:.3})");
    assert!((l1 + 2.0).abs() < 0.2, "{first:?}");
    for k in 0..3 {
        let e2: Vec<f64> = cmp.exact.iter().zip(&cmp.refined_estimates).map(|(e, est)| est.state[k] - e.mean[k]).collect();
        let l2 = slope(&n[1..], &e2[1..]);
        println!("x_{}, order 2: errors {e2:?}, slope over N = 40..80 {l2:.3}", k + 1);
        assert!(l2 < -2.5 && e2[2].abs() < 1e-5, "x_{}: {e2:?}", k + 1);
    }
    // sums of levels whose errors have different signs (the sum changes sign between N = 20
    // and 40): no clean slope, so their size against order 1 at N = 80
    let l = cmp.fixed_point.observables.mean_queue_length.unwrap();
    let cl = r.mean_queue_length_correction.unwrap();
    let (exact, est) = (&cmp.exact[2].observables, &cmp.refined_estimates[2]);
    let pairs = [
        ("mean queue length", l + cl / 80.0, est.mean_queue_length.unwrap(), exact.mean_queue_length.unwrap()),
        ("mean response time", t + c / 80.0, est.mean_response_time.unwrap(), exact.mean_response_time.unwrap()),
    ];
    for (name, one, two, exact) in pairs {
        println!("{name} at N = 80: order-1 error {:.3e}, order-2 error {:.3e}", one - exact, two - exact);
        assert!((two - exact).abs() < 0.03 * (one - exact).abs() && (two - exact).abs() < 1e-5, "{name}");
    }
    let a = r.a.as_ref().unwrap();
    for (k, a) in a.iter().enumerate() {
        let f: Vec<f64> = cmp
            .exact
            .iter()
            .map(|e| {
                let n = e.servers as f64;
                n * n * (e.mean[k] - cmp.fixed_point.x[k] - r.v[k] / n)
            })
            .collect();
        let extrapolated = (8.0 * f[2] - 6.0 * f[1] + f[0]) / 3.0;
        println!("x_{}: A = {a:.5}, extrapolated from the exact chain {extrapolated:.5}", k + 1);
        assert!((extrapolated - a).abs() < 0.01 * a.abs(), "x_{}: {extrapolated} vs A = {a}", k + 1);
    }
}

#[test]
fn mfq_exact_prints_the_published_sis_means() {
    let o = mfq(&["exact", "models/generic/sis.toml", "--servers", "5,10,20,50", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for (row, want) in v["exact"].as_array().unwrap().iter().zip([0.5929041, 0.6055449, 0.6118184, 0.6155559]) {
        let got = row["mean"][0].as_f64().unwrap();
        assert!((got - want).abs() < 5e-8, "{got} vs {want}");
    }
    // V = -(sqrt(5) - 1)/10 (Gast, Bortolussi and Tribastone 2018)
    let v0 = v["refined"]["v"][0].as_f64().unwrap();
    assert!((v0 + (5f64.sqrt() - 1.0) / 10.0).abs() < 1e-6, "{v0}");
    let o = mfq(&["exact", "models/generic/sis.toml", "--servers", "10"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("E[X]") && text.contains("0.6055449"), "{text}");
}

/// `--buffer 0` named the key it sets (`truncation.levels = 0 is not allowed`), not the option
/// given: the error names `--buffer`, its value and the range (`mfq::check_buffer`, which
/// Python's `exact(buffer=...)` shares).
#[test]
fn mfq_exact_names_the_buffer_option() {
    for k in ["0", "10000001"] {
        let o = mfq(&["exact", "models/jsq-d2.toml", "--servers", "5", "--buffer", k]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "mfq: error: models/jsq-d2.toml: --buffer = {k} is not allowed: an integer in [1, 10000000] (the buffer K of every server; it sets truncation.levels)"
            )
        );
    }
}

#[test]
fn mfq_exact_refuses_what_it_cannot_do_with_the_reason() {
    // no fixed buffer
    let o = mfq(&["exact", "models/jsq-d2.toml", "--servers", "10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("truncation.levels = automatic is not allowed"));
    // over the state limit, from the state count before building
    let o = mfq(&["exact", "models/jsq-d2.toml", "--servers", "10", "--buffer", "5", "--max-states", "1000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("3.003e3 states, more than the limit of 1000"));
    // SIS at N = 500 from the empty state: pi / pi_0 passes 1e308, so the LU pinned there
    // gave NaN (and 0.36 for 0.62 at N = 5,000) as if solved; the iterative solver then took
    // 1.9 s at N = 500 and stalled at N = 5,000 (residual 9e-5 after 70 s). The LU is now pinned
    // at the state nearest the fixed point, and a one-entry chain is factored at every size:
    // the product form of the birth-death chain (from k infected, up at N (1 - k/N)(1 + k/N),
    // down at k; in logarithms, the weights pass 1e308), by auto and by --method lu
    for (n, method) in [(500usize, "auto"), (5000, "auto"), (5000, "lu")] {
        let nf = n as f64;
        let mut log_w = vec![0.0f64; n + 1];
        for k in 1..=n {
            let up = nf * (1.0 - (k - 1) as f64 / nf) * (1.0 + (k - 1) as f64 / nf);
            log_w[k] = log_w[k - 1] + (up / k as f64).ln();
        }
        let top = log_w.iter().fold(f64::NEG_INFINITY, |m, v| m.max(*v));
        let z: f64 = log_w.iter().map(|v| (v - top).exp()).sum();
        let product_form = log_w.iter().enumerate().map(|(k, v)| (v - top).exp() * k as f64 / nf).sum::<f64>() / z;
        let servers = n.to_string();
        let o = mfq(&["exact", "models/generic/sis.toml", "--servers", &servers, "--method", method, "--max-seconds", "20"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
        // a one-entry skip-free chain: the direct solver is the cut recursion (its product form)
        assert!(out.contains("cut recursion") && !out.contains("NaN"), "{out}");
        let exact: f64 =
            out.lines().find(|l| l.trim_start().starts_with("E[X]")).and_then(|l| l.split_whitespace().nth(4)).unwrap().parse().unwrap();
        // the table prints seven decimals
        assert!((exact - product_form).abs() < 1e-7, "N = {n}: {exact} against the product form {product_form}\n{out}");
    }
    // a state whose key does not fit (300 entries of one bit): refused at once, before the
    // fixed point and refined terms of the 300-level model are computed, naming the entries
    let started = std::time::Instant::now();
    let o = mfq(&["exact", "models/jsq-d1.toml", "--servers", "1", "--buffer", "300", "--max-seconds", "2"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("state entries = 300 is not allowed: at most 128 entries at N = 1"), "{err}");
    assert!(started.elapsed().as_secs_f64() < 1.5, "{:?}", started.elapsed());
    // a wall-clock limit far below the solve time (230,230 states): exit code 4, quickly, with
    // the size finished before (N = 4: 210 states) printed and the reason
    let started = std::time::Instant::now();
    let o = mfq(&["exact", "models/jsq-d2.toml", "--servers", "4,20", "--buffer", "6", "--max-seconds", "0.3"]);
    assert_eq!(o.status.code(), Some(4), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(started.elapsed().as_secs_f64() < 5.0);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("N = 4: 210 states") && out.contains("mean queue length"), "{out}");
    assert!(err.contains("at N = 20") && err.contains("the sizes finished are printed"), "{err}");
}

/// `mfq compare` runs generic models (the population process of their transitions) and, with a
/// fixed truncation level, simulates the same finite buffer as the mean field: JSQ(2) with
/// buffer 3 at N = 10 against the exact chain (1.6 jobs per server, far from the
/// infinite-buffer value 2.39).
#[test]
fn compare_runs_generic_models_and_keeps_the_finite_buffer() {
    let dir = std::env::temp_dir().join(format!("mfq-exact-compare-{}", std::process::id()));
    let out = dir.to_string_lossy().to_string();
    let m = mfq::Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n[truncation]\nlevels = 3\n", &[]).unwrap();
    let exact = m.exact(&mfq::ExactOptions { servers: 10, ..Default::default() }).unwrap().observables.mean_queue_length.unwrap();
    for file in ["models/jsq-d2.toml", "models/generic/jsq2.toml"] {
        let o = mfq(&[
            "compare",
            file,
            "--set",
            "truncation.levels=3",
            "--servers",
            "10",
            "--time",
            "2000",
            "--warmup",
            "50",
            "--json",
            "--out",
            &out,
        ]);
        assert!(o.status.success(), "{file}: {}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let row = &v["rows"][0];
        assert_eq!(row["buffer"], 3, "{file}");
        let (mean, hw) = (row["simulated"]["mean"].as_f64().unwrap(), row["simulated"]["half_width"].as_f64().unwrap());
        assert!((mean - exact).abs() < 2.0 * hw + 0.01, "{file}: simulated {mean} +- {hw}, exact {exact}");
    }
    // a generic model without queues: its state entry, against the exact SIS mean
    let o = mfq(&["compare", "models/generic/sis.toml", "--servers", "10", "--time", "2000", "--json", "--out", &out]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["quantity"], "E[X]");
    let (mean, hw) = (v["rows"][0]["simulated"]["mean"].as_f64().unwrap(), v["rows"][0]["simulated"]["half_width"].as_f64().unwrap());
    assert!((mean - 0.6055449).abs() < 2.0 * hw + 0.002, "{mean} +- {hw}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The refined estimates are named where they are no state (carried-over gap of issue 16: the
/// `+A/N^2` column left [0, 1] without a word). JSQ(2) at lambda = 0.99 with buffer K = 3: at
/// N = 1, `x* + V/N` has `x_3 < 0`, which is recomputed here from `x*` and `V`; at N = 40 both
/// estimates are states (0 <= x_3 <= x_2 <= x_1 <= 1), and nothing is named.
#[test]
fn refined_estimates_that_are_no_state_are_named() {
    let m = mfq::Model::from_toml("[model]\nkind = \"jsq\"\nlambda = 0.99\nd = 2\n[truncation]\nlevels = 3\n", &[]).unwrap();
    let cmp = m.exact_comparison(&[1, 40], &mfq::ExactOptions::default()).unwrap();
    let r = cmp.refined.as_ref().unwrap();
    let x3 = cmp.fixed_point.x[2] + r.v[2];
    assert!(x3 < -1e-3, "x_3 + V_3 = {x3}");
    assert!(cmp.outside.iter().any(|l| l.starts_with("N = 1: x* + V/N: 0 <= x_3")), "{:?}", cmp.outside);
    assert!(cmp.outside.iter().all(|l| l.starts_with("N = 1:")), "{:?}", cmp.outside);
    for e in &cmp.refined_estimates {
        let y = &e.state;
        let is_state = (0.0..=1.0).contains(&y[0]) && y.windows(2).all(|w| w[1] <= w[0]) && y[2] >= 0.0;
        assert_eq!(is_state, e.servers > 1.0, "N = {}: {y:?} against {:?}", e.servers, cmp.outside);
    }
}

/// The bistable one-entry model: up at `(1 - X)(a + b X^2)`, down at `X` (jumps of one
/// object), with `b` given.
fn bistable(b: f64) -> String {
    format!(
        "[model]\nkind = \"generic\"\nname = \"bistable\"\nvariables = [\"X\"]\n[model.parameters]\na = 0.05\nb = {b}\n\
         [[model.transitions]]\njump = {{ X = 1 }}\nrate = \"(1 - X) * (a + b * X^2)\"\n\
         [[model.transitions]]\njump = {{ X = -1 }}\nrate = \"X\"\n"
    )
}

/// `E[X]` of the birth-death chain of `N` objects with up rate `N up(k/N)` and down rate `N
/// down(k/N)` from `k` objects, by its product form `pi_{k+1} / pi_k = up(k) / down(k + 1)` in
/// logarithms (the weights span far more than double precision).
fn product_form_mean(n: usize, up: impl Fn(f64) -> f64, down: impl Fn(f64) -> f64) -> f64 {
    let nf = n as f64;
    let mut log_w = vec![0.0f64; n + 1];
    for k in 1..=n {
        log_w[k] = log_w[k - 1] + (up((k - 1) as f64 / nf) / down(k as f64 / nf)).ln();
    }
    let top = log_w.iter().fold(f64::NEG_INFINITY, |m, v| m.max(*v));
    let z: f64 = log_w.iter().map(|v| (v - top).exp()).sum();
    log_w.iter().enumerate().map(|(k, v)| (v - top).exp() * k as f64 / nf).sum::<f64>() / z
}

/// A bistable one-entry chain (two modes separated by a barrier `exp(-N c)`): at N = 2000 the
/// sparse LU pinned at the state nearest the mean field's fixed point (the lower mode) gave
/// E[X] = 0.0670670 for 0.7132621 with residual 1e-16, and the iteration 0.6323 with residual
/// 1e-13, both as if solved. `auto` and `lu` now solve such chains by the cut recursion, here
/// against the product form computed above (b = 4.8: the upper mode holds the mass; b = 4.3
/// at N = 2000: the upper mode, with 1% in the lower one behind a barrier of e^-54, which the
/// LU pinned at either mode lost), and `--method iterative` is refused with the distance.
#[test]
fn a_bistable_one_entry_chain_keeps_both_modes() {
    for b in [4.8, 4.3] {
        let m = mfq::Model::from_toml(&bistable(b), &[]).unwrap();
        for n in [50usize, 2000] {
            let want = product_form_mean(n, |x| (1.0 - x) * (0.05 + b * x * x), |x| x);
            for method in [mfq::ExactMethod::Auto, mfq::ExactMethod::SparseLu] {
                let r = m.exact(&mfq::ExactOptions { servers: n, method, ..Default::default() }).unwrap();
                assert_eq!(r.method, mfq::ExactMethod::CutRecursion, "b = {b}, N = {n}");
                assert!((r.mean[0] - want).abs() < 1e-10, "b = {b}, N = {n}, {method:?}: {} against the product form {want}", r.mean[0]);
            }
        }
    }
    // the values the issue quotes
    assert!((product_form_mean(2000, |x| (1.0 - x) * (0.05 + 4.8 * x * x), |x| x) - 0.7132621).abs() < 1e-7);
    let dir = std::env::temp_dir().join(format!("mfq-exact-bistable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bistable.toml");
    std::fs::write(&file, bistable(4.8)).unwrap();
    let out = dir.join("out");
    let (file, out_s) = (file.to_string_lossy().to_string(), out.to_string_lossy().to_string());
    let o = mfq(&["exact", &file, "--servers", "2000", "--method", "iterative", "--out", &out_s, "--max-seconds", "120"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("from the chain's exact law by the cut recursion"), "{err}");
    assert!(!out.join("exact.json").exists());
    let o = mfq(&["exact", &file, "--servers", "2000", "--method", "lu", "--out", &out_s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("cut recursion") && text.contains("0.7132621"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A one-entry chain whose largest jump is 17 was sent to the iterative solver by `auto`
/// above 2,000 states (the band was capped at 16). Batch arrivals of 17 and single departures
/// (skip-free downwards): the cut recursion, against the flow balance across each cut written
/// here from the rates, `pi_{k+1} (k + 1) = sum_{j = k-16..k} pi_j N 0.05 max(1 - j/N - 0.017, 0)`.
/// With jumps of 17 both ways (not skip-free), a chain reversible for Binomial(N, p) (moves of
/// 1 and of 17 in detailed balance), so `E[X] = p`: factored by the sparse LU at N = 3000
/// (3,001 states, band 17: `band x states` = 51,017, below the limit 10^7).
#[test]
fn one_entry_chains_with_jumps_of_17_are_solved_directly() {
    let text = "[model]\nkind = \"generic\"\nvariables = [\"X\"]\n[[model.transitions]]\njump = { X = 17 }\n\
                rate = \"max(1 - X - 0.017, 0) * 0.05\"\n[[model.transitions]]\njump = { X = -1 }\nrate = \"X\"\n";
    let m = mfq::Model::from_toml(text, &[]).unwrap();
    let n = 5000usize;
    let r = m.exact(&mfq::ExactOptions { servers: n, ..Default::default() }).unwrap();
    assert_eq!(r.method, mfq::ExactMethod::CutRecursion);
    let nf = n as f64;
    let up = |j: usize| nf * 0.05 * ((nf - j as f64) / nf - 0.017).max(0.0);
    // weights, rescaled so that the largest stays near 1 (they span ~1e-700..1)
    let mut w = vec![1.0f64];
    let mut log_scale = vec![0.0f64];
    for k in 0..n {
        let flux: f64 = (k.saturating_sub(16)..=k).map(|j| w[j] * up(j)).sum();
        if flux == 0.0 {
            break;
        }
        w.push(flux / (k + 1) as f64);
        log_scale.push(log_scale[k]);
        if w[k + 1] > 1e100 {
            for j in k.saturating_sub(17)..=k + 1 {
                w[j] /= 1e100;
                log_scale[j] += 1e100f64.ln();
            }
        }
    }
    let log_w: Vec<f64> = w.iter().zip(&log_scale).map(|(w, s)| w.ln() + s).collect();
    let top = log_w.iter().fold(f64::NEG_INFINITY, |m, v| m.max(*v));
    let z: f64 = log_w.iter().map(|v| (v - top).exp()).sum();
    let want = log_w.iter().enumerate().map(|(k, v)| (v - top).exp() * k as f64 / nf).sum::<f64>() / z;
    assert_eq!(r.states, log_w.len());
    assert!((r.mean[0] - want).abs() < 1e-10, "{} against the flow balance {want}", r.mean[0]);
    // jumps of 17 both ways, reversible for Binomial(N, p)
    let (n, p) = (3000usize, 0.3f64);
    let q = 1.0 - p;
    let up17: Vec<String> = (0..17).map(|m| format!("max(1 - X - {m} / n, 0)")).collect();
    let down17: Vec<String> = (0..17).map(|m| format!("max(X - {m} / n, 0)")).collect();
    let text = format!(
        "[model]\nkind = \"generic\"\nvariables = [\"X\"]\n[model.parameters]\nn = {n}\np = {p}\nq = {q}\n\
         [[model.transitions]]\njump = {{ X = 1 }}\nrate = \"(1 - X) * p\"\n\
         [[model.transitions]]\njump = {{ X = -1 }}\nrate = \"X * q\"\n\
         [[model.transitions]]\njump = {{ X = 17 }}\nrate = \"100 * {} * (p / q)^8.5\"\n\
         [[model.transitions]]\njump = {{ X = -17 }}\nrate = \"100 * {} * (q / p)^8.5\"\n",
        up17.join(" * "),
        down17.join(" * ")
    );
    let m = mfq::Model::from_toml(&text, &[]).unwrap();
    let r = m.exact(&mfq::ExactOptions { servers: n, ..Default::default() }).unwrap();
    assert_eq!(r.method, mfq::ExactMethod::SparseLu);
    assert_eq!(r.states, n + 1);
    assert!((r.mean[0] - p).abs() < 1e-10, "{} against the binomial mean {p}", r.mean[0]);
}

/// `--method lu` ignored `--max-seconds` and memory: JSQ(2), N = 14, buffer 6 (38,760 states)
/// ran 39.8 s under `--max-seconds 5`, took 3.3 GB, exited 0 and wrote exact.json. Now the
/// factorisation's size is estimated before it (the symbolic fill bound) and refused above the
/// memory limit (here 1.2 GB by MFQ_MEMORY_LIMIT, the bound `max_states x 300` bytes gave
/// before; exit 2, naming the states and the limit), and a factorisation that fits runs where
/// the deadline can stop it (N = 10, buffer 7: 19,448 states, ~11 s of LU): exit 4 within
/// seconds; neither writes a file.
#[test]
fn exact_lu_keeps_to_the_memory_limit_and_the_deadline() {
    let dir = std::env::temp_dir().join(format!("mfq-exact-lu-limits-{}", std::process::id()));
    let out = dir.to_string_lossy().to_string();
    let started = std::time::Instant::now();
    let o = common::mfq_with_env(
        &["exact", "models/jsq-d2.toml", "--servers", "14", "--buffer", "6", "--method", "lu", "--max-seconds", "5", "--out", &out],
        "MFQ_MEMORY_LIMIT",
        "1200000000",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the sparse LU of the chain's 38760 states would need about 3.5 GB")
            && err.contains("more than the limit of 1.2 GB (set by MFQ_MEMORY_LIMIT)"),
        "{err}"
    );
    assert!(started.elapsed().as_secs_f64() < 4.0, "{:?}", started.elapsed());
    assert!(!dir.join("exact.json").exists());
    let started = std::time::Instant::now();
    let o =
        mfq(&["exact", "models/jsq-d2.toml", "--servers", "10", "--buffer", "7", "--method", "lu", "--max-seconds", "1", "--out", &out]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("stopped the job while factorising the chain (sparse LU) (19448 states)"), "{err}");
    assert!(started.elapsed().as_secs_f64() < 4.0, "{:?}", started.elapsed());
    assert!(!dir.join("exact.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// One memory limit for the refined terms and the exact chain's sparse LU: the LU was held to
/// `max_states x 300` bytes (30 MB at `--max-states 100000`) whatever MFQ_MEMORY_LIMIT said.
/// JSQ(2), N = 10, buffer 5 has C(15, 5) = 3003 states (more than the 2,000 the LU takes without
/// an estimate) and an LU of about 21.2 MB: refused under MFQ_MEMORY_LIMIT = 16M, with the
/// limit, where it comes from and how to raise it; solved under 64M, where its mean queue
/// length agrees with the iterative solver's; a malformed value names the variable and value.
#[test]
fn exact_lu_keeps_to_mfq_memory_limit() {
    let args = ["exact", "models/jsq-d2.toml", "--servers", "10", "--buffer", "5", "--method", "lu", "--max-states", "100000", "--json"];
    let o = common::mfq_with_env(&args, "MFQ_MEMORY_LIMIT", "16M");
    let (_, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for part in [
        "the sparse LU of the chain's 3003 states would need about 21.2 MB",
        "more than the limit of 16.8 MB (set by MFQ_MEMORY_LIMIT)",
        "or raise the limit with MFQ_MEMORY_LIMIT",
    ] {
        assert!(err.contains(part), "{part:?} not in {err}");
    }
    let mean = |o: &std::process::Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["exact"][0]["method"].as_str().unwrap_or_default().to_string(), v["exact"][0]["mean"][0].as_f64().unwrap())
    };
    let (method, lu) = mean(&common::mfq_with_env(&args, "MFQ_MEMORY_LIMIT", "64M"));
    assert_eq!(method, "sparse-lu");
    let mut iterative = args.to_vec();
    iterative[7] = "iterative";
    let (_, it) = mean(&common::mfq_with_env(&iterative, "MFQ_MEMORY_LIMIT", "16M"));
    assert!((lu - it).abs() < 1e-9, "LU {lu} against the iterative solver's {it}");
    let o = common::mfq_with_env(&args, "MFQ_MEMORY_LIMIT", "16 X");
    let (_, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("MFQ_MEMORY_LIMIT = \"16 X\" is not allowed: a number of bytes"), "{err}");
}
