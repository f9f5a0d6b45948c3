//! The catalogue of built-in model kinds, from the registry ([`mfq_model::KINDS`]): what
//! `mfq models` prints and the guide's table (docs/guide.md) holds.

use mfq_model::{Param, KINDS};
use serde::Serialize;

/// One kind as the catalogue shows it (`mfq models --json`).
#[derive(Debug, Clone, Serialize)]
pub struct KindInfo {
    /// The `kind` key.
    pub kind: &'static str,
    /// The model in the field's terms.
    pub name: &'static str,
    /// Its parameters (name, meaning, unit, allowed values, default).
    pub parameters: &'static [Param],
    /// Paper(s) the model comes from.
    pub source: &'static str,
    /// Example model file.
    pub example: &'static str,
    /// Docs page.
    pub docs: &'static str,
}

/// Every built-in kind, in registry order.
pub fn catalog() -> Vec<KindInfo> {
    KINDS
        .iter()
        .map(|k| KindInfo { kind: k.name, name: k.title, parameters: k.params, source: k.sources, example: k.example, docs: k.docs })
        .collect()
}

/// The catalogue as text, one block per kind: parameters with meaning, unit, allowed values and
/// default, then sources, example file and docs page.
pub fn catalog_text() -> String {
    let mut out = String::new();
    for k in KINDS {
        out.push_str(&format!("{:<16} {}\n", k.name, k.title));
        for p in k.params {
            let unit = if p.unit.is_empty() { String::new() } else { format!(" [{}]", p.unit) };
            // the allowed text may already name the default
            let default = p.default.filter(|_| !p.allowed.contains("default")).map_or(String::new(), |d| format!("; default {d}"));
            out.push_str(&format!("    {:<10} {}{unit} ({}{default})\n", p.name, p.meaning, p.allowed));
        }
        out.push_str(&format!("    source: {}\n    example: {}\n    docs: {}\n", k.sources, k.example, k.docs));
    }
    out
}

/// The guide's table of kinds (docs/guide.md, "Model files"), one row per kind, as Markdown.
/// `tests/registry.rs` checks that the guide holds exactly this table.
pub fn guide_table() -> String {
    let mut out = String::from("| kind | parameters | model | example | docs |\n|---|---|---|---|---|\n");
    for k in KINDS {
        let params: Vec<String> = k.params.iter().map(|p| format!("`{}`", p.name)).collect();
        let docs = k.docs.strip_prefix("docs/").unwrap_or(k.docs);
        out.push_str(&format!("| `{}` | {} | {} | {} | {} |\n", k.name, params.join(", "), k.title, k.example, docs));
    }
    out
}
