//! The refined mean field's figures (docs/refined.md), computed through the front door and
//! drawn by `mfq_plot::xy`:
//!
//! - `refined-errors`: `|estimate - exact|` against `N` on log-log axes for the mean field `x*`,
//!   `x* + V/N` and `x* + V/N + A/N^2`, one panel of curves per model, with the slopes fitted
//!   over the largest sizes in the legend (expected: 1, 2, 3; Gast, Bortolussi, Tribastone,
//!   "Size expansions of mean field approximation", Perf. Eval. 2019);
//! - `refined-tail`: the tail `P(Q >= k)` of a finite-buffer model: mean field, refined mean
//!   field (order 2) at each `N`, the exact chain and a simulation as markers.

use crate::Failure;
use mfq::{ExactOptions, Model, SimOptions};
use mfq_plot::xy::{xy_svg, Draw, XySeries, XyStyle};
use std::fmt::Write as _;
use std::path::Path;

/// Least-squares slope of `log |e|` against `log n`.
fn slope(n: &[f64], e: &[f64]) -> f64 {
    let (x, y): (Vec<f64>, Vec<f64>) = n.iter().zip(e).map(|(n, e)| (n.ln(), e.abs().ln())).unzip();
    let m = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / m, y.iter().sum::<f64>() / m);
    let sxy: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

fn model(path: &str) -> Result<Model, Failure> {
    Model::from_file(Path::new(path), &[]).map_err(|e| Failure::input(format!("{path}: {e}")))
}

/// `(csv, svg)` of a `refined-errors` figure: for each `(label, model file, quantity)` (a state
/// entry name such as `x_1`, or `mean_queue_length`), the errors at each of `servers` against
/// the exact chain; slopes fitted over the last `fit` sizes.
///
/// # Errors
/// [`Failure`] for a model that cannot be read or solved, a quantity it does not have, or no
/// refined terms of order 2.
pub fn refined_errors(
    title: &str,
    models: &[(String, String, String)],
    servers: &[usize],
    fit: usize,
) -> Result<(String, String), Failure> {
    let mut csv = String::from("model,quantity,servers,exact,mean_field,order_1,order_2\n");
    let mut series = Vec::new();
    for (m, (label, path, quantity)) in models.iter().enumerate() {
        let cmp = model(path)?.exact_comparison(servers, &ExactOptions::default()).map_err(|e| Failure::input(format!("{path}: {e}")))?;
        let r = cmp.refined.as_ref().filter(|r| r.order == 2).ok_or_else(|| {
            Failure::input(format!(
                "{path}: no refined terms of order 2 ({})",
                cmp.refined_unavailable.as_deref().unwrap_or("rates too wide")
            ))
        })?;
        let index = cmp.names.iter().position(|n| n == quantity);
        let pick = |state: &[f64], l: Option<f64>| -> Option<f64> { index.map(|i| state[i]).or(l) };
        let mut rows: Vec<[f64; 4]> = Vec::new();
        for (e, est) in cmp.exact.iter().zip(&cmp.refined_estimates) {
            let n = e.servers as f64;
            let (x, v) = (&cmp.fixed_point.x, &r.v);
            let mf_state: Vec<f64> = x.to_vec();
            let first: Vec<f64> = x.iter().zip(v).map(|(x, v)| x + v / n).collect();
            let l = |state: &[f64]| if quantity == "mean_queue_length" { Some(state.iter().sum()) } else { None };
            let values = [
                pick(&e.mean, e.observables.mean_queue_length.filter(|_| quantity == "mean_queue_length")),
                pick(&mf_state, l(&mf_state)),
                pick(&first, l(&first)),
                pick(&est.state, est.mean_queue_length.filter(|_| quantity == "mean_queue_length")),
            ];
            let values: Option<Vec<f64>> = values.into_iter().collect();
            let v = values.ok_or_else(|| Failure::input(format!("{path}: no quantity {quantity} (entries: {})", cmp.names.join(", "))))?;
            let name = if label.contains([',', '"']) { format!("\"{}\"", label.replace('"', "'")) } else { label.clone() };
            let _ = writeln!(csv, "{name},{quantity},{},{:e},{:e},{:e},{:e}", e.servers, v[0], v[1], v[2], v[3]);
            rows.push([n, v[1] - v[0], v[2] - v[0], v[3] - v[0]]);
        }
        let n: Vec<f64> = rows.iter().map(|r| r[0]).collect();
        let tail = rows.len().saturating_sub(fit.max(2));
        for (j, what) in ["x*", "x* + V/N", "x* + V/N + A/N^2"].iter().enumerate() {
            let err: Vec<f64> = rows.iter().map(|r| r[j + 1].abs()).collect();
            let s = slope(&n[tail..], &err[tail..]);
            series.push(XySeries {
                label: format!("{label}: {what} (slope {s:.2})"),
                x: n.clone(),
                y: err,
                half_width: vec![],
                draw: if m == 0 { Draw::Line } else { Draw::Dashed },
                color: j,
            });
        }
    }
    let style = XyStyle {
        title: title.to_string(),
        x_label: "number of servers (objects) N".into(),
        y_label: "|estimate - exact chain|".into(),
        log_x: true,
        log_y: true,
        integer_x: false,
        legend_lower_left: true,
    };
    let svg = xy_svg(&series, &style).map_err(|e| Failure::io(e.to_string()))?;
    Ok((csv, svg))
}

/// `(csv, svg)` of a `refined-tail` figure: the model's tail (a finite buffer: its
/// `truncation.levels`), the refined mean field of order 2 at each of `servers`, the exact
/// chain at the sizes of `exact` and a simulation (`time`, `warmup`, 4 replications) at the
/// sizes of `simulate`.
///
/// # Errors
/// [`Failure`] for a model that cannot be read, solved, chained or simulated.
pub fn refined_tail(
    title: &str,
    path: &str,
    exact: &[usize],
    simulate: &[usize],
    time: f64,
    warmup: f64,
) -> Result<(String, String), Failure> {
    let m = model(path)?;
    let fail = |e: mfq::Error| Failure::input(format!("{path}: {e}"));
    // the fixed point of the finite-buffer system (mass at K and losses included)
    let fp = m.finite_mean_field(&Default::default()).map_err(fail)?.fixed_point;
    let mut sizes: Vec<usize> = exact.iter().chain(simulate).copied().collect();
    sizes.sort_unstable();
    sizes.dedup();
    let r = m.refined_at(fp.clone(), 2, &sizes.iter().map(|&n| n as f64).collect::<Vec<_>>()).map_err(fail)?;
    let k: Vec<f64> = (1..=fp.observables.tail.len()).map(|k| k as f64).collect();
    let mut csv = String::from("series,servers,k,p_q_ge_k,half_width\n");
    let mut row = |name: &str, n: usize, y: &[f64], h: &[f64]| {
        for (i, v) in y.iter().enumerate() {
            let _ = writeln!(csv, "{name},{n},{},{v:e},{:e}", i + 1, h.get(i).copied().unwrap_or(0.0));
        }
    };
    row("mean field", 0, &fp.observables.tail, &[]);
    let mut series = vec![XySeries {
        label: "mean field x*".into(),
        x: k.clone(),
        y: fp.observables.tail.clone(),
        half_width: vec![],
        draw: Draw::Line,
        color: 7,
    }];
    for (c, (n, est)) in sizes.iter().zip(&r.estimates).enumerate() {
        row("refined order 2", *n, &est.tail, &[]);
        series.push(XySeries {
            label: format!("x* + V/N + A/N^2, N = {n}"),
            x: k.clone(),
            y: est.tail.clone(),
            half_width: vec![],
            draw: Draw::Dashed,
            color: c,
        });
        if exact.contains(n) {
            let e = m.exact(&ExactOptions { servers: *n, ..Default::default() }).map_err(fail)?;
            let tail = e.observables.tail.clone();
            row("exact chain", *n, &tail, &[]);
            series.push(XySeries {
                label: format!("exact chain, N = {n}"),
                x: k.clone(),
                y: tail,
                half_width: vec![],
                draw: Draw::Markers,
                color: c,
            });
        }
        if simulate.contains(n) {
            let opts = SimOptions {
                servers: *n,
                time,
                warmup,
                replications: 4,
                batches: 25,
                seed: 1,
                buffer: Some(k.len() as u32),
                deadline: mfq::Deadline::none(),
                precision: None,
                progress: false,
            };
            let s = m.simulate(&opts).map_err(fail)?;
            let (y, h): (Vec<f64>, Vec<f64>) = s.tail.iter().take(k.len()).map(|e| (e.mean, e.half_width)).unzip();
            row("simulation", *n, &y, &h);
            series.push(XySeries {
                label: format!("simulation (95% CI), N = {n}"),
                x: k.clone(),
                y,
                half_width: h,
                draw: Draw::Markers,
                color: c,
            });
        }
    }
    let style = XyStyle {
        title: title.to_string(),
        x_label: "queue length k".into(),
        y_label: "P(Q >= k)".into(),
        log_x: false,
        log_y: true,
        integer_x: true,
        legend_lower_left: true,
    };
    let svg = xy_svg(&series, &style).map_err(|e| Failure::io(e.to_string()))?;
    Ok((csv, svg))
}
