//! The look of every mfq plot: figure size, fonts, line width, markers and dash patterns per
//! curve, palette, axis ranges and scales, legend position, title and axis-label overrides with
//! `{param}` substitution.
//!
//! A [`Style`] has only optional fields; a field left out takes the plot's own choice (e.g. the
//! tail plot's log y axis) or the paper default below. The defaults are meant for one column of a
//! two-column paper: the SVG is [`DEFAULT_WIDTH_CM`] wide at [`PX_PER_CM`] pixels per cm, so
//! that fonts given in points are that size when the SVG is scaled to the column width.
//!
//! The plot functions of this crate read the style *in effect on the calling thread*
//! ([`Style::current`]); a caller installs one with [`Style::install`] (figure files' `[style]`
//! table, the CLI's `--style` options) and it applies until the returned guard is dropped. This
//! keeps the plot functions' signatures stable while every one of them honours the style.

use serde::Deserialize;
use std::cell::RefCell;

/// Pixels per typographic point (1/72 in) in the SVGs: fonts and widths in points are multiplied
/// by this.
pub const PX_PER_PT: f64 = 3.0;
/// Pixels per centimetre: `PX_PER_PT * 72 / 2.54` (about 85), so that an SVG `w` cm wide scaled
/// to `w` cm shows fonts at their size in points.
pub const PX_PER_CM: f64 = PX_PER_PT * 72.0 / 2.54;
/// Default figure width: one column of a two-column paper.
pub const DEFAULT_WIDTH_CM: f64 = 8.5;
/// Default figure height.
pub const DEFAULT_HEIGHT_CM: f64 = 6.8;

/// Colour palettes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Palette {
    /// Okabe & Ito, "Color Universal Design" (2008): colours told apart by the common forms
    /// of colour blindness (the default), with a mid grey in place of their yellow, which is
    /// too faint on white.
    #[default]
    OkabeIto,
    /// Tableau 10 (matplotlib's default cycle).
    Tableau,
    /// Black and greys, for grayscale print (curves then differ by marker and dash only).
    Gray,
}

impl Palette {
    /// The `i`-th colour, cycling.
    pub fn color(self, i: usize) -> (u8, u8, u8) {
        const OKABE_ITO: [(u8, u8, u8); 8] =
            [(0, 114, 178), (230, 159, 0), (0, 158, 115), (213, 94, 0), (204, 121, 167), (86, 180, 233), (0, 0, 0), (120, 120, 120)];
        const TABLEAU: [(u8, u8, u8); 10] = [
            (31, 119, 180),
            (255, 127, 14),
            (44, 160, 44),
            (214, 39, 40),
            (148, 103, 189),
            (140, 86, 75),
            (227, 119, 194),
            (127, 127, 127),
            (188, 189, 34),
            (23, 190, 207),
        ];
        const GRAY: [(u8, u8, u8); 4] = [(0, 0, 0), (90, 90, 90), (140, 140, 140), (50, 50, 50)];
        match self {
            Palette::OkabeIto => OKABE_ITO[i % OKABE_ITO.len()],
            Palette::Tableau => TABLEAU[i % TABLEAU.len()],
            Palette::Gray => GRAY[i % GRAY.len()],
        }
    }
}

/// Where the legend goes (inside the plotting area), or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LegendPosition {
    /// Upper right corner.
    UpperRight,
    /// Upper left corner.
    UpperLeft,
    /// Lower right corner.
    LowerRight,
    /// Lower left corner.
    LowerLeft,
    /// Top, centred.
    UpperMiddle,
    /// Bottom, centred.
    LowerMiddle,
    /// Right edge, centred vertically.
    MiddleRight,
    /// Left edge, centred vertically.
    MiddleLeft,
    /// No legend.
    None,
}

impl LegendPosition {
    /// Parses the kebab-case name (`upper-right`, ..., `none`), as on the command line.
    ///
    /// # Errors
    /// A message naming the allowed values.
    pub fn parse(s: &str) -> Result<Self, String> {
        let all = [
            ("upper-right", LegendPosition::UpperRight),
            ("upper-left", LegendPosition::UpperLeft),
            ("lower-right", LegendPosition::LowerRight),
            ("lower-left", LegendPosition::LowerLeft),
            ("upper-middle", LegendPosition::UpperMiddle),
            ("lower-middle", LegendPosition::LowerMiddle),
            ("middle-right", LegendPosition::MiddleRight),
            ("middle-left", LegendPosition::MiddleLeft),
            ("none", LegendPosition::None),
        ];
        all.iter()
            .find(|(n, _)| *n == s)
            .map(|(_, p)| *p)
            .ok_or_else(|| format!("style.legend = {s:?}: allowed {}", all.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")))
    }
}

/// A bad style value: the field, the value and what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("style.{field} = {value}: {allowed}")]
pub struct StyleError {
    /// The key, e.g. `width_cm`.
    pub field: &'static str,
    /// The value given, as text.
    pub value: String,
    /// What is allowed.
    pub allowed: String,
}

/// The look of a plot; every field is optional (see the module docs for the defaults).
/// In figure files this is the `[style]` table; its keys are the field names.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Style {
    /// Width of one panel in cm (default 8.5, one column of a two-column paper; 2 to 60).
    pub width_cm: Option<f64>,
    /// Height of one panel in cm (default 6.8; 2 to 60).
    pub height_cm: Option<f64>,
    /// Font size of tick labels and axis labels in pt (default 8; 4 to 30).
    pub font_pt: Option<f64>,
    /// Font size of the title in pt (default 9; 4 to 40). Long titles wrap.
    pub title_pt: Option<f64>,
    /// Font size of the legend in pt (default 7; 4 to 30).
    pub legend_pt: Option<f64>,
    /// Line width of curves in pt (default 0.75; 0.1 to 5).
    pub line_width_pt: Option<f64>,
    /// Marker size (diameter) in pt (default 3.5; 0 to 15; 0 draws no markers).
    pub marker_pt: Option<f64>,
    /// Colour palette (default `okabe-ito`; `tableau`, `gray`).
    pub palette: Option<Palette>,
    /// Markers on curves, cycling per curve (default true).
    pub markers: Option<bool>,
    /// Dash patterns, cycling per curve (default true; false: every curve solid).
    pub dashes: Option<bool>,
    /// The x axis range `[lo, hi]` (default: the data's).
    pub x_range: Option<[f64; 2]>,
    /// The y axis range `[lo, hi]` (default: the data's).
    pub y_range: Option<[f64; 2]>,
    /// Logarithmic x axis (default: the plot's choice).
    pub log_x: Option<bool>,
    /// Logarithmic y axis (default: the plot's choice).
    pub log_y: Option<bool>,
    /// Legend position (default: the plot's choice).
    pub legend: Option<LegendPosition>,
    /// Title; `{name}` is replaced by the value of the parameter `name` (default: the plot's).
    pub title: Option<String>,
    /// x axis label, with `{name}` substitution (default: the plot's).
    pub x_label: Option<String>,
    /// y axis label, with `{name}` substitution (default: the plot's).
    pub y_label: Option<String>,
    /// Values substituted for `{name}` in titles and labels: the model's parameters and the
    /// swept axes (set by the caller, not read from files).
    #[serde(skip)]
    pub params: Vec<(String, String)>,
}

thread_local! {
    static CURRENT: RefCell<Style> = RefCell::new(Style::default());
}

/// The process-wide base style (a command line's options), under every thread's own.
static GLOBAL: std::sync::RwLock<Option<Style>> = std::sync::RwLock::new(None);

/// Restores the previously installed style when dropped ([`Style::install`]).
#[derive(Debug)]
#[must_use = "the style applies only while the guard lives"]
pub struct StyleGuard(Option<Style>);

impl Drop for StyleGuard {
    fn drop(&mut self) {
        if let Some(prev) = self.0.take() {
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
}

fn check(field: &'static str, v: Option<f64>, lo: f64, hi: f64, unit: &str) -> Result<(), StyleError> {
    match v {
        Some(x) if !(x.is_finite() && (lo..=hi).contains(&x)) => {
            Err(StyleError { field, value: format!("{x}"), allowed: format!("allowed {lo} to {hi} ({unit})") })
        }
        _ => Ok(()),
    }
}

fn check_range(field: &'static str, r: Option<[f64; 2]>) -> Result<(), StyleError> {
    match r {
        Some([a, b]) if !(a.is_finite() && b.is_finite() && a < b) => Err(StyleError {
            field,
            value: format!("[{a}, {b}]"),
            allowed: "allowed [lo, hi] with finite lo < hi (lo > 0 on a log axis)".into(),
        }),
        _ => Ok(()),
    }
}

impl Style {
    /// The style in effect on this thread: the one installed on it ([`Style::install`]) over
    /// the process-wide base ([`Style::set_global`]); the default style when neither is set.
    pub fn current() -> Style {
        Style::global().merged(&CURRENT.with(|c| c.borrow().clone()))
    }

    /// The process-wide base style.
    pub fn global() -> Style {
        GLOBAL.read().map(|g| g.clone().unwrap_or_default()).unwrap_or_default()
    }

    /// Sets the process-wide base style (e.g. from a command line), under every thread's own.
    pub fn set_global(style: Style) {
        if let Ok(mut g) = GLOBAL.write() {
            *g = Some(style);
        }
    }

    /// Changes the process-wide base style in place (e.g. to add the parameters of the model
    /// a command has read).
    pub fn update_global(f: impl FnOnce(&mut Style)) {
        if let Ok(mut g) = GLOBAL.write() {
            let mut s = g.take().unwrap_or_default();
            f(&mut s);
            *g = Some(s);
        }
    }

    /// Makes `self` the style of this thread's plots until the guard is dropped.
    pub fn install(self) -> StyleGuard {
        StyleGuard(Some(CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), self))))
    }

    /// `self` with every field that `over` sets taken from `over` (parameters: `over`'s first,
    /// then `self`'s).
    pub fn merged(&self, over: &Style) -> Style {
        macro_rules! pick {
            ($($f:ident),*) => { Style { $($f: over.$f.clone().or_else(|| self.$f.clone()),)* params: {
                let mut p = over.params.clone();
                p.extend(self.params.iter().filter(|(k, _)| !over.params.iter().any(|(o, _)| o == k)).cloned());
                p
            } } };
        }
        pick!(
            width_cm,
            height_cm,
            font_pt,
            title_pt,
            legend_pt,
            line_width_pt,
            marker_pt,
            palette,
            markers,
            dashes,
            x_range,
            y_range,
            log_x,
            log_y,
            legend,
            title,
            x_label,
            y_label
        )
    }

    /// Checks every value.
    ///
    /// # Errors
    /// The first bad field, its value and what is allowed.
    pub fn validate(&self) -> Result<(), StyleError> {
        check("width_cm", self.width_cm, 2.0, 60.0, "cm")?;
        check("height_cm", self.height_cm, 2.0, 60.0, "cm")?;
        check("font_pt", self.font_pt, 4.0, 30.0, "pt")?;
        check("title_pt", self.title_pt, 4.0, 40.0, "pt")?;
        check("legend_pt", self.legend_pt, 4.0, 30.0, "pt")?;
        check("line_width_pt", self.line_width_pt, 0.1, 5.0, "pt")?;
        check("marker_pt", self.marker_pt, 0.0, 15.0, "pt")?;
        check_range("x_range", self.x_range)?;
        check_range("y_range", self.y_range)?;
        for (field, s) in [("title", &self.title), ("x_label", &self.x_label), ("y_label", &self.y_label)] {
            if let Some(s) = s {
                if s.chars().any(char::is_control) {
                    return Err(StyleError { field, value: format!("{s:?}"), allowed: "text without control characters".into() });
                }
            }
        }
        Ok(())
    }

    /// Checks that every placeholder `{name}` (a name of letters, digits, `_` and `.`) of the
    /// title and axis-label overrides is one of [`Style::params`].
    ///
    /// # Errors
    /// The field, its text, the unknown placeholder and the parameters there are.
    pub fn check_placeholders(&self) -> Result<(), StyleError> {
        for (field, s) in [("title", &self.title), ("x_label", &self.x_label), ("y_label", &self.y_label)] {
            let Some(s) = s else { continue };
            for name in placeholders(s) {
                if !self.params.iter().any(|(k, _)| k == name) {
                    let mut known: Vec<&str> = self.params.iter().map(|(k, _)| k.as_str()).collect();
                    known.sort_unstable();
                    let known = if known.is_empty() { "none (no model file read)".to_string() } else { known.join(", ") };
                    return Err(StyleError {
                        field,
                        value: format!("{s:?}"),
                        allowed: format!("{{{name}}} is not a parameter; allowed placeholders: {known}"),
                    });
                }
            }
        }
        Ok(())
    }

    /// `text` with every `{name}` of a known parameter replaced by its value; other braces
    /// (e.g. a curve label's `{}`) are left as they are.
    pub fn substitute(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (k, v) in &self.params {
            out = out.replace(&format!("{{{k}}}"), v);
        }
        out
    }

    /// The title: the override if any, else `default`, with parameters substituted.
    pub fn title_or(&self, default: &str) -> String {
        self.substitute(self.title.as_deref().unwrap_or(default))
    }

    /// The x axis label: the override if any, else `default`, with parameters substituted.
    pub fn x_label_or(&self, default: &str) -> String {
        self.substitute(self.x_label.as_deref().unwrap_or(default))
    }

    /// The y axis label: the override if any, else `default`, with parameters substituted.
    pub fn y_label_or(&self, default: &str) -> String {
        self.substitute(self.y_label.as_deref().unwrap_or(default))
    }

    /// Panel size in pixels.
    pub fn size_px(&self) -> (u32, u32) {
        let w = self.width_cm.unwrap_or(DEFAULT_WIDTH_CM) * PX_PER_CM;
        let h = self.height_cm.unwrap_or(DEFAULT_HEIGHT_CM) * PX_PER_CM;
        (w.round() as u32, h.round() as u32)
    }

    /// Tick and axis label font size in pixels.
    pub fn font_px(&self) -> f64 {
        self.font_pt.unwrap_or(8.0) * PX_PER_PT
    }

    /// Title font size in pixels.
    pub fn title_px(&self) -> f64 {
        self.title_pt.unwrap_or(9.0) * PX_PER_PT
    }

    /// Legend font size in pixels.
    pub fn legend_px(&self) -> f64 {
        self.legend_pt.unwrap_or(7.0) * PX_PER_PT
    }

    /// Curve line width in pixels (at least 1).
    pub fn line_px(&self) -> u32 {
        (self.line_width_pt.unwrap_or(0.75) * PX_PER_PT).round().max(1.0) as u32
    }

    /// Marker radius in pixels (0: no markers).
    pub fn marker_radius_px(&self) -> i32 {
        if self.markers == Some(false) {
            return 0;
        }
        (self.marker_pt.unwrap_or(3.5) * PX_PER_PT / 2.0).round() as i32
    }

    /// The palette.
    pub fn palette(&self) -> Palette {
        self.palette.unwrap_or_default()
    }
}

/// The names of the placeholders `{name}` in `text` (not `{}`, nor braces around other text
/// such as a TOML table).
fn placeholders(text: &str) -> Vec<&str> {
    text.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19 (a new user's try): `{mu}` in a title was left as it was; it is refused, naming
    /// the placeholder and the parameters there are. `{}` (a curve label's value) is not one.
    #[test]
    fn unknown_placeholders_are_refused() {
        let params = vec![("lambda".to_string(), "0.9".to_string()), ("d".to_string(), "2".to_string())];
        let s = Style { title: Some("JSQ({d}) at {mu}".into()), params: params.clone(), ..Style::default() };
        let e = s.check_placeholders().unwrap_err().to_string();
        assert_eq!(e, "style.title = \"JSQ({d}) at {mu}\": {mu} is not a parameter; allowed placeholders: d, lambda");
        let ok = Style {
            title: Some("{} and {d}, {law = \"h2\"}".into()),
            y_label: Some("E[T] at {lambda}".into()),
            params,
            ..Style::default()
        };
        assert_eq!(ok.check_placeholders(), Ok(()));
    }

    #[test]
    fn parses_validates_and_merges() {
        let s: Style = serde_json::from_str(r#"{"width_cm": 17, "legend": "lower-left", "log_x": true, "title": "JSQ(2), {lambda}"}"#)
            .expect("valid style");
        assert_eq!(s.legend, Some(LegendPosition::LowerLeft));
        assert_eq!(s.size_px().0, (17.0 * PX_PER_CM).round() as u32);
        // an unknown key is refused and named
        let e = serde_json::from_str::<Style>(r#"{"widht_cm": 17}"#).unwrap_err().to_string();
        assert!(e.contains("widht_cm"), "{e}");
        // values out of range name the field
        let bad = Style { font_pt: Some(0.5), ..Style::default() };
        assert_eq!(bad.validate().unwrap_err().field, "font_pt");
        let bad = Style { x_range: Some([1.0, 1.0]), ..Style::default() };
        assert_eq!(bad.validate().unwrap_err().field, "x_range");
        // merge: the override's fields win, the rest stays
        let over = Style { width_cm: Some(10.0), params: vec![("lambda".into(), "0.9".into())], ..Style::default() };
        let m = s.merged(&over);
        assert_eq!((m.width_cm, m.log_x), (Some(10.0), Some(true)));
        assert_eq!(m.title_or("x"), "JSQ(2), 0.9");
        assert_eq!(m.substitute("{} and {mu}"), "{} and {mu}");
    }

    #[test]
    fn installed_style_applies_until_the_guard_drops() {
        assert_eq!(Style::current(), Style::default());
        {
            let _g = Style { width_cm: Some(12.0), ..Style::default() }.install();
            assert_eq!(Style::current().width_cm, Some(12.0));
        }
        assert_eq!(Style::current(), Style::default());
    }

    #[test]
    fn legend_names_parse() {
        assert_eq!(LegendPosition::parse("none"), Ok(LegendPosition::None));
        assert!(LegendPosition::parse("outside").unwrap_err().contains("upper-right"));
    }
}
