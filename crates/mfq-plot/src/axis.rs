//! One axis type for every plot: linear or logarithmic, with ticks chosen here rather than by
//! plotters, so that a log axis spanning less than a decade still gets at least two labelled
//! ticks (plotters labels only powers of ten there, i.e. none), integer axes (queue lengths,
//! `d`) get integer ticks only, and no two tick labels are the same text.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, KeyPointWeight, Ranged};
use std::ops::Range;

/// A linear or logarithmic axis over `lo..hi` with its ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
    minor: Vec<f64>,
    /// Every label in scientific notation (log axes reaching beyond `1e-3..1e5`).
    sci: bool,
}

/// The "nice" step (1, 2 or 5 times a power of ten) nearest to `raw`.
fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let f = if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    };
    f * p
}

/// Multiples of `step` in `lo..=hi` (with a little tolerance at the ends).
fn multiples(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let eps = step * 1e-9;
    let first = ((lo - eps) / step).ceil() as i64;
    let last = ((hi + eps) / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).map(|v| if v.abs() < eps { 0.0 } else { v }).collect()
}

/// Linear ticks: about `target` of them (at least two when the range allows), integers only
/// for `integer` axes.
fn linear_ticks(lo: f64, hi: f64, target: usize, integer: bool) -> (Vec<f64>, Vec<f64>) {
    let span = hi - lo;
    if span <= 0.0 || !span.is_finite() {
        return (vec![lo], vec![]);
    }
    let mut step = nice_step(span / target.max(2) as f64);
    if integer {
        step = step.max(1.0).round();
    }
    let mut ticks = multiples(lo, hi, step);
    // too few: halve the step (not below 1 on integer axes)
    while ticks.len() < 2 && !(integer && step <= 1.0) {
        step = nice_step(step / 2.5);
        if integer {
            step = step.max(1.0);
        }
        ticks = multiples(lo, hi, step);
    }
    let minor_step = if integer { step / 1.0 } else { step / if (step / nice_step(step * 0.99)).round() == 2.0 { 4.0 } else { 5.0 } };
    let minor = if integer && step <= 1.0 { vec![] } else { multiples(lo, hi, minor_step) };
    (ticks, minor)
}

/// Logarithmic ticks: powers of ten (every m-th when there are many); within about a decade
/// and a half 1-2-5 or 1..9 times powers of ten; within a factor of ~2 linear ticks.
fn log_ticks(lo: f64, hi: f64, target: usize) -> (Vec<f64>, Vec<f64>) {
    let (a, b) = (lo.log10(), hi.log10());
    let powers: Vec<i32> = ((a - 1e-9).ceil() as i32..=(b + 1e-9).floor() as i32).collect();
    // two powers of ten over less than about a decade and a half (0.1..0.99 padded): they alone
    // would be the only labels, with the data between them; 1-2-5 ticks instead
    if powers.len() >= 2 && b - a > 1.6 {
        let m = powers.len().div_ceil(target.max(2)).max(1) as i32;
        let ticks: Vec<f64> = powers.iter().filter(|p| p.rem_euclid(m) == 0).map(|p| 10f64.powi(*p)).collect();
        let ticks = if ticks.len() >= 2 { ticks } else { powers.iter().map(|p| 10f64.powi(*p)).collect() };
        let minor = if m == 1 && powers.len() <= 8 { mantissas(lo, hi, &[2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]) } else { vec![] };
        return (ticks, minor);
    }
    // within about a decade: the sparsest of 1-2-5, 1-2-3-5, 1..9 with three ticks (two for 1..9)
    for (set, need) in [(&[1.0, 2.0, 5.0][..], 3), (&[1.0, 2.0, 3.0, 5.0][..], 3), (&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0][..], 2)]
    {
        let t = mantissas(lo, hi, set);
        if t.len() >= need {
            return (t, vec![]);
        }
    }
    linear_ticks(lo, hi, 3, false)
}

/// `m * 10^p` for every mantissa `m` of `set` that falls in `lo..=hi`.
fn mantissas(lo: f64, hi: f64, set: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for p in (lo.log10().floor() as i32)..=(hi.log10().ceil() as i32) {
        for m in set {
            let v = m * 10f64.powi(p);
            if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                out.push(v);
            }
        }
    }
    out
}

/// The shortest text of `v` that reads back within `1e-9` relative: plain decimals for
/// `1e-3 <= |v| < 1e5`, else scientific (`2e-6`, `1.5e7`). Distinct ticks get distinct labels.
pub fn tick_label(v: f64) -> String {
    label(v, false)
}

fn label(v: f64, sci: bool) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    let close = |s: &str| s.parse::<f64>().is_ok_and(|r| (r - v).abs() <= 1e-9 * a);
    if !sci && (1e-3..1e5).contains(&a) {
        for p in 0..10 {
            let s = format!("{v:.p$}");
            if close(&s) {
                return s;
            }
        }
    }
    for p in 0..10 {
        let s = format!("{v:.p$e}");
        if close(&s) {
            return s;
        }
    }
    format!("{v:e}")
}

impl Axis {
    /// A linear axis over `lo..hi` (swapped if reversed; widened around a single value).
    pub fn linear(lo: f64, hi: f64, integer: bool) -> Axis {
        let (lo, hi) = ordered(lo, hi, false);
        let (ticks, minor) = linear_ticks(lo, hi, 5, integer);
        Axis { lo, hi, log: false, ticks, minor, sci: false }
    }

    /// A logarithmic axis over `lo..hi` (`lo > 0`; non-positive ends are replaced by a range of
    /// a decade around the other end).
    pub fn log(lo: f64, hi: f64) -> Axis {
        let (lo, hi) = ordered(lo, hi, true);
        let (ticks, minor) = log_ticks(lo, hi, 8);
        let sci = ticks.iter().any(|v| !(1e-3..1e5).contains(&v.abs()));
        Axis { lo, hi, log: true, ticks, minor, sci }
    }

    /// Linear or logarithmic.
    pub fn new(lo: f64, hi: f64, log: bool, integer: bool) -> Axis {
        if log {
            Axis::log(lo, hi)
        } else {
            Axis::linear(lo, hi, integer)
        }
    }

    /// The label of tick `v`: [`tick_label`], or scientific for every tick of a log axis that
    /// reaches beyond `1e-3..1e5` (so that `1e-4` and `0.01` are not mixed).
    pub fn label(&self, v: f64) -> String {
        label(v, self.sci)
    }

    /// Whether the axis is logarithmic.
    pub fn is_log(&self) -> bool {
        self.log
    }

    /// The labelled ticks.
    pub fn ticks(&self) -> &[f64] {
        &self.ticks
    }

    /// The axis range.
    pub fn bounds(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    /// Whether `v` can be placed on the axis (finite; positive on a log axis).
    pub fn accepts(&self, v: f64) -> bool {
        v.is_finite() && (!self.log || v > 0.0)
    }
}

/// `lo < hi`, finite, positive for log axes.
fn ordered(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    if !lo.is_finite() || !hi.is_finite() {
        (lo, hi) = if log { (0.1, 1.0) } else { (0.0, 1.0) };
    }
    if log {
        if hi <= 0.0 {
            hi = 1.0;
        }
        if lo <= 0.0 {
            lo = hi / 10.0;
        }
        if hi <= lo * (1.0 + 1e-12) {
            (lo, hi) = (lo / 1.5, hi * 1.5);
        }
    } else if hi <= lo {
        let d = if lo == 0.0 { 0.5 } else { lo.abs() * 0.05 };
        (lo, hi) = (lo - d, hi + d);
    }
    (lo, hi)
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let r = if self.log {
            if *value <= 0.0 {
                -10.0
            } else {
                (value.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
            }
        } else {
            (value - self.lo) / (self.hi - self.lo)
        };
        let r = if r.is_finite() { r.clamp(-10.0, 11.0) } else { -10.0 };
        limit.0 + (r * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        match hint.weight() {
            KeyPointWeight::Bold => self.ticks.clone(),
            KeyPointWeight::Any => self.minor.clone(),
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(a: &Axis) -> Vec<String> {
        a.ticks().iter().map(|v| a.label(*v)).collect()
    }

    fn distinct(l: &[String]) -> bool {
        let mut s = l.to_vec();
        s.sort();
        s.dedup();
        s.len() == l.len()
    }

    /// Issue 16, class 8: a log axis spanning less than a decade gets at least two labelled
    /// ticks, all inside the range, with distinct labels.
    #[test]
    fn log_axes_below_a_decade_get_two_ticks() {
        for (lo, hi) in [(0.3, 0.9), (2.0, 3.0), (0.11, 0.19), (1.02, 1.08), (4e-7, 9e-7), (0.5, 1.5), (1e-12, 1.0), (1e-300, 1e300)] {
            let a = Axis::log(lo, hi);
            let t = a.ticks();
            assert!(t.len() >= 2, "{lo}..{hi}: {t:?}");
            assert!(t.len() <= 12, "{lo}..{hi}: {t:?}");
            assert!(t.iter().all(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9)), "{lo}..{hi}: {t:?}");
            assert!(distinct(&labels(&a)), "{lo}..{hi}: {:?}", labels(&a));
        }
        assert_eq!(labels(&Axis::log(0.3, 0.9)), ["0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"]);
        assert_eq!(labels(&Axis::log(0.23, 1.14)), ["0.3", "0.5", "1"]);
        assert_eq!(labels(&Axis::log(2.0, 3.0)), ["2", "3"]);
        assert_eq!(labels(&Axis::log(1e-6, 1.0)), ["1e-6", "1e-5", "1e-4", "1e-3", "1e-2", "1e-1", "1e0"]);
    }

    /// Issue 19 (a new user's try): log-x over lambda = 0.1..0.99 (padded by the sweep plot's
    /// factor 1.3) labelled only 0.1 and 1; at least three labelled ticks lie in the data range
    /// on a log axis under about a decade and a half.
    #[test]
    fn log_axes_under_a_decade_and_a_half_label_three_ticks_in_the_data() {
        for (lo, hi) in [(0.1, 0.99), (0.1, 1.0), (0.05, 0.9), (1.0, 20.0), (0.02, 0.6)] {
            let a = Axis::log(lo / 1.3, hi * 1.3);
            let inside = a.ticks().iter().filter(|v| **v >= lo * (1.0 - 1e-9) && **v <= hi * (1.0 + 1e-9)).count();
            assert!(inside >= 3, "{lo}..{hi}: {:?}", labels(&a));
            assert!(distinct(&labels(&a)));
        }
        assert_eq!(labels(&Axis::log(0.1 / 1.3, 0.99 * 1.3)), ["0.1", "0.2", "0.5", "1"]);
        // two decades or more: powers of ten as before
        assert_eq!(labels(&Axis::log(0.01, 1.0)), ["0.01", "0.1", "1"]);
    }

    /// Issue 16, class 8: integer axes at small K (the tail plot's 0.5..3.5) label 1, 2, 3 once
    /// each, never 2, 2, 2.
    #[test]
    fn integer_axes_have_integer_distinct_ticks() {
        for k in 1..40 {
            let a = Axis::linear(0.5, k as f64 + 0.5, true);
            let l = labels(&a);
            assert!(a.ticks().iter().all(|v| v.fract() == 0.0), "{k}: {:?}", a.ticks());
            assert!(distinct(&l) && !l.is_empty(), "{k}: {l:?}");
            if k >= 2 {
                assert!(l.len() >= 2, "{k}: {l:?}");
            }
        }
        assert_eq!(labels(&Axis::linear(0.5, 3.5, true)), ["1", "2", "3"]);
    }

    /// Linear axes over awkward ranges: 2 to ~11 ticks with distinct labels.
    #[test]
    fn linear_ticks_are_nice_and_distinct() {
        for (lo, hi) in [(0.0, 1.0), (0.5, 0.95), (0.999, 1.001), (-3.0, 7.0), (1e5, 1e5 + 3.0), (1e-9, 3e-9), (0.0, 1e7), (2.0, 2.0)] {
            let a = Axis::linear(lo, hi, false);
            let l = labels(&a);
            assert!((2..=11).contains(&l.len()), "{lo}..{hi}: {l:?}");
            assert!(distinct(&l), "{lo}..{hi}: {l:?}");
        }
        assert_eq!(labels(&Axis::linear(0.0, 1.0, false)), ["0", "0.2", "0.4", "0.6", "0.8", "1"]);
    }

    #[test]
    fn labels_read_back() {
        assert_eq!(tick_label(0.30000000000000004), "0.3");
        assert_eq!(tick_label(2e-6), "2e-6");
        assert_eq!(tick_label(1.5e7), "1.5e7");
        assert_eq!(tick_label(-12.0), "-12");
    }
}
