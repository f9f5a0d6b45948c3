//! The figure kind `copies-threshold` (models/figures/*.toml): the stability threshold of
//! identical copies under FCFS against `d` for a few speed profiles
//! ([`mfq::copies::threshold_against_d`], drawn by [`mfq_plot::copies::threshold_svg`]).

use crate::output::write_atomic;
use crate::Failure;
use mfq_model::models::redundancy::CopySize;
use std::fmt::Write as _;
use std::path::Path;

/// Simulates the saturated system for `d = 1..K` per profile (exponential sizes, mean 1;
/// 2 replications of `time` after `warmup`, 20 batches) and writes `NAME.svg` and `NAME.csv`.
pub(crate) fn figure(out: &Path, name: &str, title: &str, profiles: &[(String, Vec<f64>)], time: f64, warmup: f64) -> Result<(), Failure> {
    let opts = mfq::SimOptions { time, warmup, replications: 2, batches: 20, seed: 1, ..Default::default() };
    let mut curves = Vec::with_capacity(profiles.len());
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
        curves.push((label.clone(), points));
    }
    let svg = mfq_plot::copies::threshold_svg(&curves, title).map_err(|e| Failure::io(e.to_string()))?;
    write_atomic(&out.join(format!("{name}.csv")), csv.as_bytes())?;
    write_atomic(&out.join(format!("{name}.svg")), svg.as_bytes())?;
    Ok(())
}
