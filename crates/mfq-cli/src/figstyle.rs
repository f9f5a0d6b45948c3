//! Plot style from the command line and from figure files (docs/figures.md, "Style").
//!
//! - [`StyleArgs`]: `--style FILE.toml` (the keys of [`Style`], at the top level or in a
//!   `[style]` table) and direct flags (`--title`, `--log-x`, `--width-cm`, `--legend`, ...),
//!   accepted by every command that draws; [`StyleArgs::install`] makes them the process-wide
//!   base style ([`Style::set_global`]), which wins over a figure file's `[style]`.
//! - [`split`]: a figure file's optional `[style]` table, read with its key paths (errors name
//!   the field), and the file's text without it for the figure's own parser.
//! - [`figure_params`] / [`model_params`]: the values substituted for `{name}` in titles and
//!   labels: the model's parameters, the `--set` / `set` values and the swept axes.

use crate::Failure;
use clap::Args;
use mfq_model::{Deadline, ModelError, ModelFile};
use mfq_plot::style::{LegendPosition, Palette, Style};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Style options of the commands that draw SVG plots (they apply to every plot the command
/// writes, and win over a figure file's `[style]` table).
#[derive(Args, Debug, Clone, Default)]
pub struct StyleArgs {
    /// Plot style file (TOML): the keys of a figure file's [style] table (docs/figures.md)
    #[arg(long = "style", value_name = "FILE.toml", global = true)]
    pub style: Option<PathBuf>,
    /// Plot title ({NAME} is replaced by the value of the parameter NAME)
    #[arg(long, value_name = "TEXT", global = true)]
    pub title: Option<String>,
    /// x axis label ({NAME} substituted)
    #[arg(long, value_name = "TEXT", global = true)]
    pub x_label: Option<String>,
    /// y axis label ({NAME} substituted)
    #[arg(long, value_name = "TEXT", global = true)]
    pub y_label: Option<String>,
    /// Logarithmic x axis (--log-x=false: linear)
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", global = true)]
    pub log_x: Option<bool>,
    /// Logarithmic y axis (--log-y=false: linear)
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", global = true)]
    pub log_y: Option<bool>,
    /// Width of one plot panel in cm (default 8.5: one column of a two-column paper)
    #[arg(long, value_name = "CM", global = true)]
    pub width_cm: Option<f64>,
    /// Height of one plot panel in cm (default 6.8)
    #[arg(long, value_name = "CM", global = true)]
    pub height_cm: Option<f64>,
    /// Font size of tick and axis labels in pt (default 8)
    #[arg(long, value_name = "PT", global = true)]
    pub font_pt: Option<f64>,
    /// Legend position: upper-right, upper-left, lower-right, lower-left, upper-middle,
    /// lower-middle, middle-right, middle-left or none
    #[arg(long, value_name = "POSITION", value_parser = LegendPosition::parse, global = true)]
    pub legend: Option<LegendPosition>,
    /// Palette: okabe-ito (default, colour-blind safe), tableau or gray
    #[arg(long, value_name = "NAME", value_parser = parse_palette, global = true)]
    pub palette: Option<Palette>,
}

fn parse_palette(s: &str) -> Result<Palette, String> {
    match s {
        "okabe-ito" => Ok(Palette::OkabeIto),
        "tableau" => Ok(Palette::Tableau),
        "gray" => Ok(Palette::Gray),
        _ => Err(format!("style.palette = {s:?}: allowed okabe-ito, tableau, gray")),
    }
}

/// Only the `[style]` table of a figure file (its other keys are the figure's).
#[derive(Deserialize)]
struct FigureStyle {
    #[serde(default)]
    style: Option<Style>,
}

impl StyleArgs {
    /// The style these options describe: the `--style` file, then the flags over it.
    ///
    /// # Errors
    /// Invalid input naming the file and the field (unreadable file, unknown key, value out
    /// of range).
    pub fn style(&self) -> Result<Style, Failure> {
        let mut base = Style::default();
        if let Some(path) = &self.style {
            let text =
                std::fs::read_to_string(path).map_err(|e| Failure::input(format!("cannot read style file {}: {e}", path.display())))?;
            // a `[style]` table (a style file or a figure file) or the keys at the top level;
            // errors name the key (serde's message, with the table when there is one)
            let is_table = toml::from_str::<toml::Table>(&text).is_ok_and(|t| matches!(t.get("style"), Some(toml::Value::Table(_))));
            base = if is_table {
                toml::from_str::<FigureStyle>(&text)
                    .map_err(|e| Failure::input(format!("style file {}: [style]: {}", path.display(), keyed(&text, true, &e))))?
                    .style
                    .unwrap_or_default()
            } else {
                toml::from_str::<Style>(&text)
                    .map_err(|e| Failure::input(format!("style file {}: {}", path.display(), keyed(&text, false, &e))))?
            };
        }
        let flags = Style {
            title: self.title.clone(),
            x_label: self.x_label.clone(),
            y_label: self.y_label.clone(),
            log_x: self.log_x,
            log_y: self.log_y,
            width_cm: self.width_cm,
            height_cm: self.height_cm,
            font_pt: self.font_pt,
            legend: self.legend,
            palette: self.palette,
            ..Style::default()
        };
        let style = base.merged(&flags);
        style.validate().map_err(|e| {
            let origin = self.style.as_ref().map_or(String::new(), |p| format!(" (options and style file {})", p.display()));
            Failure::input(format!("{e}{origin}"))
        })?;
        Ok(style)
    }

    /// Makes the style of these options the process-wide base of every plot.
    ///
    /// # Errors
    /// As [`StyleArgs::style`].
    pub fn install(&self) -> Result<(), Failure> {
        Style::set_global(self.style()?);
        Ok(())
    }
}

/// A style error naming the key: `style.KEY = VALUE: why` for the first key of the style table
/// (`text`'s `[style]` table when `table`, else its top level) that a [`Style`] does not take
/// alone; serde's message `e` when no single key is to blame (e.g. the TOML does not parse).
fn keyed(text: &str, table: bool, e: &toml::de::Error) -> String {
    let Ok(doc) = toml::from_str::<toml::Table>(text) else { return e.message().to_string() };
    let keys = if table { doc.get("style").and_then(|s| s.as_table()).cloned() } else { Some(doc) };
    for (k, v) in keys.iter().flatten() {
        let one: toml::Table = std::iter::once((k.clone(), v.clone())).collect();
        if let Err(e1) = one.try_into::<Style>() {
            return format!("style.{k} = {v}: {}", e1.message());
        }
    }
    e.message().to_string()
}

/// Splits a figure file's text into its `[style]` table (parsed, validated; `{}` when absent)
/// and the text without it (the removed lines left empty, so that the figure parser's line
/// numbers stay right).
///
/// # Errors
/// Invalid input naming the figure file and the style's field.
pub fn split(text: &str, path: &Path) -> Result<(Style, String), Failure> {
    let style = toml::from_str::<FigureStyle>(text)
        .map_err(|e| Failure::input(format!("{}: [style]: {}", path.display(), keyed(text, true, &e))))?
        .style
        .unwrap_or_default();
    style.validate().map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let mut inside = false;
    let rest: Vec<&str> = text
        .lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with('[') {
                inside = t.starts_with("[style]");
            }
            if inside || (t.starts_with("style") && t["style".len()..].trim_start().starts_with('=')) {
                ""
            } else {
                l
            }
        })
        .collect();
    Ok((style, rest.join("\n")))
}

/// The parameters of a parsed model file: each scalar of its model table as text.
fn params_of(file: &ModelFile) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(map) = serde_json::to_value(&file.model).ok().as_ref().and_then(|v| v.as_object()) {
        for (k, v) in map {
            let v = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => mfq_plot::axis::tick_label(n.as_f64().unwrap_or(f64::NAN)),
                other => other.to_string(),
            };
            out.push((k.clone(), v));
        }
    }
    out
}

/// The parameters of a model file under `set` (`NAME=VALUE`): the model's own values, and
/// for settings that are sweeps (`a:b:n`, lists) their range as text (`0.5 to 0.95`). The
/// text is read within `deadline` (a model file of many transitions takes seconds to parse).
///
/// # Errors
/// `ModelError::Interrupted` when the deadline passes while the text is read (a text that
/// does not parse gives no parameters, not an error: the command's own parse reports it).
pub fn model_params(text: &str, set: &[String], deadline: &Deadline) -> Result<Vec<(String, String)>, ModelError> {
    let (scalar, swept): (Vec<&String>, Vec<&String>) = set.iter().partition(|s| !s.contains(':') && !s.contains(','));
    let scalar: Vec<String> = scalar.into_iter().cloned().collect();
    // the parameters only: the model is not built again
    let mut out = match ModelFile::parse_declarations_within(text, &scalar, deadline) {
        Ok(f) => params_of(&f),
        Err(e @ ModelError::Interrupted { .. }) => return Err(e),
        Err(_) => vec![],
    };
    for s in swept {
        if let Some((names, values)) = s.split_once('=') {
            let text = match values.split(':').collect::<Vec<_>>().as_slice() {
                [a, b, _] | [a, b] => format!("{a} to {b}"),
                _ => values.replace(',', ", "),
            };
            for name in names.split(',') {
                out.retain(|(k, _)| k != name);
                out.push((name.to_string(), text.clone()));
            }
        }
    }
    Ok(out)
}

/// The parameters of a figure file (its text without `[style]`): those of its `model` (or of
/// the first of its `models`) under its `set`, read within `deadline`.
///
/// # Errors
/// No convergence (exit code 4) naming the model file when the deadline passes while it is read.
pub fn figure_params(text: &str, deadline: &Deadline) -> Result<Vec<(String, String)>, Failure> {
    let Ok(table) = toml::from_str::<toml::Table>(text) else { return Ok(vec![]) };
    let model =
        table.get("model").and_then(|v| v.as_str()).or_else(|| table.get("models")?.as_array()?.first()?.as_array()?.get(1)?.as_str());
    let set: Vec<String> = table
        .get("set")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
        .unwrap_or_default();
    match model.and_then(|m| Some((m, std::fs::read_to_string(m).ok()?))) {
        Some((m, t)) => model_params(&t, &set, deadline).map_err(|e| stopped_reading(m, &e)),
        None => Ok(vec![]),
    }
}

/// Installs, for the plots drawn on this thread until the guard drops, a figure file's style
/// under the command line's (the command line wins), with the figure's parameters.
///
/// # Errors
/// Bad input when the figure's `[style]` title or labels hold a placeholder `{name}` that is
/// not one of the figure's parameters; no convergence (exit code 4) when `deadline` passes
/// while the figure's model file is read for them.
pub fn install_figure_style(file_style: Style, text: &str, deadline: &Deadline) -> Result<mfq_plot::style::StyleGuard, Failure> {
    let style = Style { params: figure_params(text, deadline)?, ..file_style };
    style.check_placeholders().map_err(|e| Failure::input(e.to_string()))?;
    Ok(style.merged(&Style::global()).install())
}

/// Adds the parameters of the model file a command has read (its text and `--set` values) to
/// the process-wide style, for `{name}` in `--title` and the labels.
///
/// # Errors
/// Bad input naming the option when `--title`, `--x-label` or `--y-label` (or the `--style`
/// file's) holds a placeholder `{name}` that is not a parameter of the model (the message
/// lists those there are); no convergence (exit code 4) naming `path` when `deadline` passes
/// while the text is read.
pub fn note_model(path: &Path, text: &str, set: &[String], deadline: &Deadline) -> Result<(), Failure> {
    note_params(model_params(text, set, deadline).map_err(|e| stopped_reading(&path.display().to_string(), &e))?)
}

/// The failure (exit code 4) of a model file `path` whose reading the deadline stopped (`e`),
/// as `mfq fixed-point` reports it.
pub fn stopped_reading(path: &str, e: &ModelError) -> Failure {
    Failure::no_convergence(format!("{path}: {e}; no files written"))
}

/// [`note_model`] of a model file already parsed (with every override applied).
///
/// # Errors
/// As [`note_model`].
pub fn note_model_file(file: &ModelFile) -> Result<(), Failure> {
    note_params(params_of(file))
}

fn note_params(params: Vec<(String, String)>) -> Result<(), Failure> {
    Style::update_global(|s| s.params = params);
    Style::global().check_placeholders().map_err(|e| Failure::input(format!("{e} (--{})", e.field.replace('_', "-"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_style_is_split_off_and_errors_name_the_field() {
        let text = "kind = \"tail\"\ntitle = \"t\"\n\n[style]\nwidth_cm = 12\nlegend = \"lower-left\"\n\n[[panels]]\ntitle = \"p\"\n";
        let (style, rest) = split(text, Path::new("f.toml")).unwrap();
        assert_eq!((style.width_cm, style.legend), (Some(12.0), Some(LegendPosition::LowerLeft)));
        assert_eq!(rest.lines().count(), text.lines().count());
        assert!(!rest.contains("width_cm") && rest.contains("[[panels]]") && rest.contains("title = \"p\""));
        let e = split("kind = \"tail\"\n[style]\nwidht_cm = 12\n", Path::new("f.toml")).unwrap_err();
        assert!(e.message.contains("widht_cm") && e.code == 2, "{}", e.message);
        let e = split("kind = \"tail\"\n[style]\nfont_pt = 100\n", Path::new("f.toml")).unwrap_err();
        assert!(e.message.contains("style.font_pt = 100"), "{}", e.message);
    }

    #[test]
    fn sweeps_become_ranges_in_params() {
        let text = "[model]\nkind = \"jsq\"\nlambda = 0.9\nd = 2\n";
        let p = model_params(text, &["lambda=0.5:0.95:20".into(), "d=3".into()], &Deadline::none()).unwrap();
        let get = |k: &str| p.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("lambda").as_deref(), Some("0.5 to 0.95"));
        assert_eq!(get("d").as_deref(), Some("3"));
    }
}
