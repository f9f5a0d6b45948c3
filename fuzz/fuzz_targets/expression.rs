//! Fuzz target: the expression parser, and the expression as the rate of a small generic
//! model (resolution, symbolic derivatives, compilation, evaluation). Must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mfq_model::models::generic::{parse_bindings, parse_expr, parse_range, GenericModel, GenericSpec, Limits};
use mfq_model::{Jacobian, MeanFieldModel};

const MODEL: &str = r#"
variables = ["S"]
[parameters]
lambda = 0.9
K = 6
[[families]]
name = "x"
range = "1..K"
tail = true
boundary = { "x[0]" = 1, "x[K+1]" = 0 }
[[transitions]]
for = "k = 1..K"
jump = { "x[k]" = -1 }
rate = "x[k]"
"#;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    let _ = parse_expr(src);
    let _ = parse_bindings(src);
    let _ = parse_range(src);
    let Ok(mut spec) = toml::from_str::<GenericSpec>(MODEL) else { return };
    spec.transitions[0].rate = mfq_model::models::generic::Value::Expr(src.to_string());
    let limits = Limits { max_state: 1000, max_transitions: 10_000, max_nodes: 200_000 };
    if let Ok(m) = GenericModel::with_limits(&spec, None, limits) {
        let n = m.dim();
        for v in [0.0, 0.3, 1.0] {
            let x = vec![v; n];
            let mut dx = vec![0.0; n];
            m.drift(&x, &mut dx);
            if let Some(aj) = m.analytic_jacobian() {
                let mut j = Jacobian::new(n, aj.sparsity());
                aj.jacobian(&x, &mut j);
            }
            let _ = m.observables(&x);
            if let Some(t) = m.transitions() {
                t.visit(&x, &mut |_, _| {});
            }
        }
    }
});
