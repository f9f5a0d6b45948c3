//! The figure kind `copies-threshold` (models/figures/*.toml): the stability threshold of
//! identical copies under FCFS against `d` for a few speed profiles
//! ([`mfq::copies::threshold_against_d`], drawn by [`mfq_plot::xy::xy_svg`]).

use crate::output::write_atomic;
use crate::Failure;
use mfq_model::models::redundancy::CopySize;
use mfq_plot::xy::{xy_svg, Draw, XySeries, XyStyle};
use std::fmt::Write as _;
use std::path::Path;

/// Simulates the saturated system for `d = 1..K` per profile (exponential sizes, mean 1;
/// 2 replications of `time` after `warmup`, 20 batches) and writes `NAME.svg` and `NAME.csv`.
pub(crate) fn figure(out: &Path, name: &str, title: &str, profiles: &[(String, Vec<f64>)], time: f64, warmup: f64) -> Result<(), Failure> {
    let opts = mfq::SimOptions { time, warmup, replications: 2, batches: 20, seed: 1, ..Default::default() };
    let mut curves = Vec::with_capacity(profiles.len() + 1);
    let mut exact: Vec<(f64, f64)> = Vec::new();
    let mut csv = String::from("profile,speeds,d,saturated,half_width,local_bound,threshold,exact\n");
    for (label, speeds) in profiles {
        let points = mfq::copies::threshold_against_d(speeds, &CopySize::exponential(), &opts)
            .map_err(|e| Failure::input(format!("{name}: profile {label}: {e}")))?;
        let speeds_text = speeds.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" ");
        for p in &points {
            let exact = p.exact.map_or(String::new(), |e| e.to_string());
            let _ = writeln!(
                csv,
                "\"{label}\",{speeds_text},{},{},{},{},{},{exact}",
                p.d, p.saturated, p.half_width, p.local_bound, p.threshold
            );
        }
        let color = curves.len();
        let x = points.iter().map(|p| p.d as f64).collect();
        let y = points.iter().map(|p| p.threshold).collect();
        let half_width = points.iter().map(|p| p.half_width).collect();
        curves.push(XySeries { label: label.clone(), x, y, half_width, draw: Draw::Line, color });
        exact.extend(points.iter().filter_map(|p| p.exact.map(|e| (p.d as f64, e))));
    }
    let (x, y) = exact.into_iter().unzip();
    let label = "exact (d = 1: min nu; d = K: max nu / K)".to_string();
    curves.push(XySeries { label, x, y, half_width: vec![], draw: Draw::Markers, color: 7 });
    let style = XyStyle {
        title: title.to_string(),
        x_label: "d (copies per job)".into(),
        y_label: "lambda_max (arrivals per server per mean size)".into(),
        log_x: false,
        log_y: false,
        integer_x: true,
        legend_lower_left: false,
    };
    let svg = xy_svg(&curves, &style).map_err(|e| Failure::io(e.to_string()))?;
    write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
    write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
    Ok(())
}
