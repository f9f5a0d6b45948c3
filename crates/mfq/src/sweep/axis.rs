//! Swept parameters: numeric ranges and lists, and lists of names or TOML tables.

use mfq_model::ModelError;
use serde::Serialize;

/// The most values an axis may have (a range `start:end:points` and any axis handed to
/// [`sweep_models`](super::sweep_models): a larger grid is refused at once rather than run
/// until its time limit).
pub const MAX_AXIS_POINTS: usize = 100_000;

/// One swept parameter: a dotted name (as in `--set`) and its values.
///
/// A **numeric** axis (`lambda=0.5:0.99:50`, `d=1,2,5`) has its values in `values` and no
/// `labels`. A **categorical** axis (`discipline=ps,fcfs,lcfs`, `job_size.law=exponential,h2`,
/// `job_size={law="exponential"},{law="h2", scv=4}`) has the text of each value, as given, in
/// `labels`, and the positions `0, 1, 2, ...` in `values` (what a point's `x`, `curve` or facet
/// holds for it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    /// Parameter name, e.g. `lambda` or `model.d`.
    pub name: String,
    /// Values, in sweep order (positions `0..n` for a categorical axis).
    pub values: Vec<f64>,
    /// The values' text (a name or a TOML value) for a categorical axis; `None` for a numeric one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// Whether the values are a grid `start:end:points` (titles say `0.5 to 0.99 (50
    /// points)`), not a list (`d in {1, 2, 5}`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub range: bool,
}

/// `a:b:n` as `n` points `a + i (b - a)/(n - 1)`, each rounded to ten significant digits of the
/// step (so `0.1:0.3:3` is `0.1, 0.2, 0.3`, not `0.30000000000000004`), the last one `b`
/// exactly, none beyond `b`.
pub(crate) fn grid(a: f64, b: f64, n: usize) -> Vec<f64> {
    let step = (b - a) / (n - 1) as f64;
    // 10^-decimals <= |step| 1e-10: rounding moves a point by less than 1e-10 steps
    let decimals = if step == 0.0 { 0 } else { (10.0 - step.abs().log10().floor()).clamp(0.0, 330.0) as usize };
    let (lo, hi) = (a.min(b), a.max(b));
    (0..n)
        .map(|i| {
            if i == n - 1 {
                return b;
            }
            let v = a + step * i as f64;
            // the decimal text of the rounded value read back: the double nearest to it
            let rounded: f64 = format!("{v:.decimals$}").parse().unwrap_or(v);
            rounded.clamp(lo, hi)
        })
        .collect()
}

/// Splits `text` at the commas that are outside brackets, braces and quotes (so an inline TOML
/// table `{law = "h2", scv = 4}` is one item).
pub(crate) fn split_top_level(text: &str) -> Vec<&str> {
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0usize);
    let mut items = Vec::new();
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '{' | '[') => depth += 1,
            (None, '}' | ']') => depth -= 1,
            (None, ',') if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    items
}

impl Axis {
    /// A numeric axis.
    pub fn numbers(name: &str, values: Vec<f64>) -> Axis {
        Axis { name: name.to_string(), values, labels: None, range: false }
    }

    /// A categorical axis: each label is the text of one value (a name such as `fcfs`, or a TOML
    /// value such as `{law = "h2", scv = 4}`), set as `NAME=LABEL`.
    pub fn categories(name: &str, labels: Vec<String>) -> Axis {
        Axis { name: name.to_string(), values: (0..labels.len()).map(|i| i as f64).collect(), labels: Some(labels), range: false }
    }

    /// Parses `a:b:n` (`n` points from `a` to `b`, inclusive: see the module's grid rule) or a
    /// comma list `v1,v2,...`. A list whose items are all finite numbers is numeric; any other
    /// list is categorical (names, or TOML values such as inline tables; commas inside
    /// brackets, braces or quotes do not split).
    ///
    /// # Errors
    /// [`ModelError::BadOverride`] naming the parameter when the text is neither form, `n` is not
    /// an integer in `[2, 100000]` (the third part of a range is a number of points: `0:0.3:4`
    /// is `0, 0.1, 0.2, 0.3`), an end of a range is not finite, a list item is empty, or a
    /// list repeats a value.
    pub fn parse(name: &str, text: &str) -> Result<Axis, ModelError> {
        let bad = |reason: String| ModelError::BadOverride { name: name.to_string(), reason };
        let num = |s: &str| -> Option<f64> { s.trim().parse::<f64>().ok().filter(|v| v.is_finite()) };
        let parts = text.split(':').count();
        if parts != 3 && parts > 1 && !text.contains(['{', '[', '"', '\'']) && split_top_level(text).len() == 1 {
            return Err(bad(format!(
                "'{text}' has {parts} parts separated by ':'; allowed: a range start:end:points (e.g. 0.5:0.9:5) or a list v1,v2,..."
            )));
        }
        let axis = if let [a, b, n] = text.split(':').collect::<Vec<_>>()[..] {
            let end =
                |s: &str| num(s).ok_or_else(|| bad(format!("'{}' is not a finite number (range syntax: start:end:points)", s.trim())));
            let (a, b) = (end(a)?, end(b)?);
            let n: usize = n.trim().parse().ok().filter(|n| (2..=MAX_AXIS_POINTS).contains(n)).ok_or_else(|| {
                bad(format!(
                    "'{}' is not a number of points in [2, {MAX_AXIS_POINTS}] (range syntax: start:end:points, e.g. 0:0.3:4 for 0, 0.1, 0.2, 0.3)",
                    n.trim()
                ))
            })?;
            check_range(a, b, n).map_err(bad)?;
            let values = grid(a, b, n);
            if values.windows(2).any(|w| w[0] == w[1]) {
                return Err(bad(format!("{text}: the step (end - start)/(points - 1) is too small for double precision: points repeat")));
            }
            Axis { range: true, ..Axis::numbers(name, values) }
        } else if Axis::is_sweep(text) {
            let items: Vec<&str> = split_top_level(text).into_iter().map(str::trim).collect();
            if let Some(i) = items.iter().position(|s| s.is_empty()) {
                return Err(bad(format!("item {} of the list '{text}' is empty", i + 1)));
            }
            for (i, s) in items.iter().enumerate() {
                if items[..i].contains(s) {
                    return Err(bad(format!("the value '{s}' is listed twice")));
                }
            }
            match items.iter().map(|s| num(s)).collect::<Option<Vec<f64>>>() {
                Some(values) => Axis::numbers(name, values),
                None => Axis::categories(name, items.iter().map(|s| s.to_string()).collect()),
            }
        } else {
            return Err(bad(format!("'{text}' is not a sweep (use start:end:points or v1,v2,...)")));
        };
        Ok(axis)
    }

    /// Whether `text` has the form of a sweep: `a:b:n` (or another count of `:`-separated parts,
    /// which [`parse`](Self::parse) refuses by name), or a comma outside brackets, braces and
    /// quotes (a single inline table `{law = "h2", scv = 4}` is not a sweep).
    pub fn is_sweep(text: &str) -> bool {
        text.split(':').count() >= 2 && !text.contains(['{', '[', '"', '\'']) || split_top_level(text).len() > 1
    }

    /// Whether the values are names or TOML values rather than numbers.
    pub fn is_categorical(&self) -> bool {
        self.labels.is_some()
    }

    /// The text of the value at position/value `v` (of `values`): the number as written in a
    /// `--set`, or the label of a categorical axis.
    pub fn text_of(&self, v: f64) -> String {
        match &self.labels {
            Some(labels) => labels.get(v as usize).cloned().unwrap_or_default(),
            None => format_value(v),
        }
    }

    /// The values as a short text for titles: `0.5 to 0.99 (50 points)` for a grid
    /// `start:end:points`, else the list `{ps, fcfs, lcfs}` (`{1, 2, 3, 5, 10, 20, ..., 70}`
    /// beyond eight values).
    pub fn describe(&self) -> String {
        let n = self.values.len();
        match (self.range, self.values.first(), self.values.last()) {
            (true, Some(a), Some(b)) => format!("{} to {} ({n} points)", format_value(*a), format_value(*b)),
            _ => {
                if n > 8 {
                    let head: Vec<String> = self.values.iter().take(6).map(|v| self.text_of(*v)).collect();
                    return format!("{{{}, ..., {}}}", head.join(", "), self.text_of(self.values[n - 1]));
                }
                format!("{{{}}}", self.values.iter().map(|v| self.text_of(*v)).collect::<Vec<_>>().join(", "))
            }
        }
    }

    /// The axis as a title's assignment: `lambda = 0.5 to 0.99 (50 points)` for a grid,
    /// `d in {1, 2, 5, 10, 20}` for a list.
    pub fn assignment(&self) -> String {
        let op = if self.range { "=" } else { "in" };
        format!("{} {op} {}", self.name, self.describe())
    }
}

/// Refuses a grid `a:b:n` whose points would all be the same (`a == b`), or that reads more
/// naturally as `start:step:end` (`1:0.5:3`: from 1 down to 0.5 in 3 points, or 1 to 3 in
/// steps of 0.5?), naming the grid to write for the other reading.
fn check_range(a: f64, b: f64, n: usize) -> Result<(), String> {
    let end = n as f64;
    // the `start:step:end` reading: a positive step `b` reaching `end` from `a` in whole steps
    let steps = (end - a) / b;
    let as_step = b > 0.0 && end > a && (steps - steps.round()).abs() < 1e-9 * steps.max(1.0) && steps.round() >= 1.0;
    let hint = if as_step {
        format!(
            "; for {} to {} in steps of {} write {}:{}:{}",
            format_value(a),
            format_value(end),
            format_value(b),
            format_value(a),
            format_value(end),
            steps.round() as usize + 1
        )
    } else {
        String::new()
    };
    let syntax = "the range syntax is start:end:points, the third number a count of points (0:1:11 for steps of 0.1)";
    if a == b {
        return Err(format!(
            "{}:{}:{n} has start = end: its {n} points would all be {}; {syntax}{hint}",
            format_value(a),
            format_value(b),
            format_value(a)
        ));
    }
    if b < a && as_step {
        return Err(format!(
            "{}:{}:{n} is ambiguous: it reads as {n} points from {} down to {} ({syntax}){hint}; for the points going down, write them as a list",
            format_value(a),
            format_value(b),
            format_value(a),
            format_value(b)
        ));
    }
    Ok(())
}

/// A number as written in a `--set`: integers without a decimal point, and values from 1e15 up
/// in exponent form.
pub(crate) fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.abs() < 1e15 && v.abs() >= 1e-15 {
        format!("{v}")
    } else {
        // exponent form: a TOML float (`1e20`, not a 21-digit integer that overflows; `1e-300`,
        // not 300 digits; down to 1e-15 the decimals, as tolerances are written)
        format!("{v:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_parse() {
        assert_eq!(Axis::parse("lambda", "0.5:0.9:5").unwrap().values, vec![0.5, 0.6, 0.7, 0.8, 0.9]);
        assert_eq!(Axis::parse("d", "1,2,5").unwrap().values, vec![1.0, 2.0, 5.0]);
        assert!(Axis::parse("d", "1:2:1").is_err());
        assert!(Axis::parse("d", "0:0.1:0.3").is_err());
        assert!(Axis::parse("d", "1,,2").is_err());
        assert!(Axis::parse("d", "1,2,1").is_err());
        assert!(Axis::parse("lambda", "0.5:0.9:5").unwrap().range && !Axis::parse("d", "1,2").unwrap().range);
        assert!(Axis::is_sweep("0.1:0.2:3") && !Axis::is_sweep("0.3"));
        let texts: Vec<String> = [1e-300, 5e-324, 1e-16, 1e-12, 0.25, 3.0, 1e20].into_iter().map(format_value).collect();
        assert_eq!(texts, ["1e-300", "5e-324", "1e-16", "0.000000000001", "0.25", "3", "1e20"]);
        // a range of two or four parts is a malformed range, named as such
        for text in ["0.5:0.9", "0.5:0.9:5:1"] {
            assert!(Axis::is_sweep(text));
            let e = Axis::parse("lambda", text).unwrap_err().to_string();
            assert!(e.contains(text) && e.contains("start:end:points"), "{e}");
        }
        let a = Axis::parse("discipline", "ps, fcfs,lcfs").unwrap();
        assert_eq!(a.labels.as_deref(), Some(&["ps".to_string(), "fcfs".into(), "lcfs".into()][..]));
        assert_eq!((a.values.clone(), a.text_of(1.0)), (vec![0.0, 1.0, 2.0], "fcfs".to_string()));
        let t = Axis::parse("job_size", "{law = \"exponential\"}, {law = \"h2\", scv = 4}").unwrap();
        assert_eq!(t.labels.unwrap(), vec!["{law = \"exponential\"}".to_string(), "{law = \"h2\", scv = 4}".into()]);
        assert!(!Axis::is_sweep("{law = \"h2\", scv = 4}") && !Axis::is_sweep("\"a:b:c\""));
    }

    /// Grids whose naive sums accumulate error: every point is the nearest double to the decimal
    /// `start + i step`, and none is beyond the end.
    #[test]
    fn grids_are_rounded_and_stop_at_the_end() {
        // 0.1 + 2 * 0.1 = 0.30000000000000004 and 3 * 0.1 = 0.30000000000000004
        assert_eq!(grid(0.1, 0.3, 3), vec![0.1, 0.2, 0.3]);
        assert_eq!(grid(0.0, 0.3, 4), vec![0.0, 0.1, 0.2, 0.3]);
        // 0.7 / 7 * 3 = 0.30000000000000004, 0.7 / 7 * 6 = 0.6000000000000001
        assert_eq!(grid(0.0, 0.7, 8), vec![0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]);
        // decreasing, and every point of a long grid equals its decimal value
        assert_eq!(grid(1.0, 0.9, 3), vec![1.0, 0.95, 0.9]);
        let g = grid(0.5, 0.99, 50);
        for (i, v) in g.iter().enumerate() {
            let decimal: f64 = format!("{:.2}", 0.5 + 0.01 * i as f64).parse().unwrap();
            assert_eq!(*v, decimal, "point {i}");
            assert!(*v <= 0.99);
        }
        let g = grid(1e-9, 3e-9, 201);
        assert!(g.iter().all(|v| (1e-9..=3e-9).contains(v)) && g[200] == 3e-9 && g[100] == 2e-9);
        assert_eq!(grid(2.0, 2.0, 3), vec![2.0, 2.0, 2.0]);
    }

    /// Issue 19 (a new user's try): `0.5:0.5:3` (meant as start 0.5, step 0.5, end 3) ran three
    /// identical points. A grid never repeats a point, and the step reading is named.
    #[test]
    fn degenerate_and_ambiguous_grids_are_refused() {
        let e = Axis::parse("lambda", "0.5:0.5:3").unwrap_err().to_string();
        assert!(e.contains("start = end") && e.contains("write 0.5:3:6"), "{e}");
        // 0.5:3:6 is what the hint says: 0.5, 1, ..., 3
        assert_eq!(Axis::parse("lambda", "0.5:3:6").unwrap().values, vec![0.5, 1.0, 1.5, 2.0, 2.5, 3.0]);
        let e = Axis::parse("lambda", "1:0.5:3").unwrap_err().to_string();
        assert!(e.contains("ambiguous") && e.contains("write 1:3:5"), "{e}");
        let e = Axis::parse("x", "0:0:4").unwrap_err().to_string();
        assert!(e.contains("start = end") && !e.contains("write"), "{e}");
        // a decreasing grid that has no step reading is kept
        assert_eq!(Axis::parse("lambda", "0.99:0.9:4").unwrap().values, vec![0.99, 0.96, 0.93, 0.9]);
        // points that collapse in double precision
        let e = Axis::parse("x", "1:1.0000000000000002:3").unwrap_err().to_string();
        assert!(e.contains("points repeat"), "{e}");
        for text in ["0:1:11", "0.1:0.99:50", "1e-9:3e-9:201", "0.99:0.9:4"] {
            let v = Axis::parse("x", text).unwrap().values;
            assert!(v.windows(2).all(|w| w[0] != w[1]), "{text}");
        }
    }

    /// Titles: range wording for grids only, `in {...}` for lists.
    #[test]
    fn lists_and_ranges_describe_themselves() {
        assert_eq!(Axis::parse("d", "1,2,5,10,20").unwrap().assignment(), "d in {1, 2, 5, 10, 20}");
        assert_eq!(Axis::parse("lambda", "0.5:0.99:50").unwrap().assignment(), "lambda = 0.5 to 0.99 (50 points)");
        assert_eq!(Axis::parse("lambda", "0.5:0.6:2").unwrap().assignment(), "lambda = 0.5 to 0.6 (2 points)");
        assert_eq!(Axis::parse("discipline", "ps,fcfs").unwrap().assignment(), "discipline in {ps, fcfs}");
    }
}
