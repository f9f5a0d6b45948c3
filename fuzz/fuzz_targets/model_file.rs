//! Fuzz target: the model-file loader (TOML -> ModelFile -> generic model under small size
//! limits), then every method of the model at a few states. Must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mfq_model::models::generic::{GenericModel, GenericSpec, Limits};
use mfq_model::{Jacobian, MeanFieldModel, ModelFile};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(file) = toml::from_str::<ModelFile>(text) else { return };
    let Some(spec) = file.model.downcast_ref::<GenericSpec>() else { return };
    let _ = file.model.lambda();
    let _ = mfq_model::spec::has_key(text, "K");
    let limits = Limits { max_state: 1000, max_transitions: 10_000, max_nodes: 200_000 };
    for levels in [None, Some(2), Some(9)] {
        let Ok(m) = GenericModel::with_limits(spec, levels, limits) else { continue };
        let n = m.dim();
        let _ = (m.name(), m.layout(), m.stability(), m.order());
        let mut states = m.extremal_states();
        states.push(mfq_model::NamedState { name: "mid".into(), x: vec![0.4; n] });
        for s in states {
            let mut x = s.x;
            m.project(&mut x);
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
