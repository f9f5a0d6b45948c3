//! The model registry (`mfq_model::KINDS`) against everything that is declared from it: for every
//! built-in kind, the example file exists, parses as that kind and builds; its keys are declared
//! parameters; the docs page exists; `mfq models` lists it; the guide's table is the registry's;
//! the analytic Jacobian equals central differences at random feasible states; and `simulate`
//! runs it, or refuses with the reason the kind declares.

use mfq_fixpoint::{solve_spec, FixedPointOptions};
use mfq_model::{Jacobian, MeanFieldModel, ModelFile, Simulation, KINDS};
use mfq_sim::population::{simulate_population, PopulationOptions};
use mfq_sim::{simulate, SimError, SimOptions};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(kind: &mfq_model::Kind) -> (String, ModelFile) {
    let path = root().join(kind.example);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: example {}: {e}", kind.name, kind.example));
    let file = ModelFile::parse(&text, &[]).unwrap_or_else(|e| panic!("{}: {}: {e}", kind.name, kind.example));
    (text, file)
}

#[test]
fn kind_names_are_unique_and_every_bundled_file_is_of_a_registered_kind() {
    let mut names: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), KINDS.len(), "duplicate kind names");
    let mut files = Vec::new();
    for dir in ["models", "models/generic"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "toml") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 20);
    for p in files {
        let doc: toml::Table = std::fs::read_to_string(&p).unwrap().parse().unwrap();
        let kind = doc["model"]["kind"].as_str().unwrap().to_string();
        assert!(mfq_model::registry::kind(&kind).is_some(), "{}: kind {kind} is not registered", p.display());
    }
}

#[test]
fn every_kind_has_its_example_file_docs_page_and_declared_parameters() {
    for kind in KINDS {
        let (text, file) = example(kind);
        assert_eq!(file.model.kind(), kind.name, "{}", kind.example);
        assert!(root().join(kind.docs).is_file(), "{}: docs page {} is missing", kind.name, kind.docs);
        assert!(!kind.title.is_empty() && !kind.sources.is_empty() && !kind.params.is_empty(), "{}", kind.name);
        // every key of the example's [model] table is a declared parameter
        let doc: toml::Table = text.parse().unwrap();
        for key in doc["model"].as_table().unwrap().keys().filter(|k| *k != "kind") {
            assert!(kind.param(key).is_some(), "{}: key {key} of {} is not declared", kind.name, kind.example);
        }
        // a required parameter is in the example; every parameter says what is allowed
        for p in kind.params {
            assert!(!p.meaning.is_empty() && !p.allowed.is_empty(), "{}.{}", kind.name, p.name);
            if p.default.is_none() {
                assert!(doc["model"].get(p.name).is_some(), "{}: required {} missing from {}", kind.name, p.name, kind.example);
            }
        }
        // it builds at its first truncation level (or the file's)
        if file.model.has_model() {
            let levels = file.truncation.levels.unwrap_or_else(|| file.model.initial_levels());
            let m = file.model.build(levels).unwrap_or_else(|e| panic!("{}: {e}", kind.name));
            assert!(m.dim() > 0, "{}", kind.name);
        }
    }
}

#[test]
fn mfq_models_lists_every_kind() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_mfq")).arg("models").output().unwrap();
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    for kind in KINDS {
        assert!(stdout.lines().any(|l| l.starts_with(&format!("{:<16} ", kind.name))), "mfq models does not list {}", kind.name);
        assert!(stdout.contains(kind.example) && stdout.contains(kind.docs), "{}", kind.name);
        for p in kind.params {
            assert!(stdout.contains(p.name), "{}.{}", kind.name, p.name);
        }
    }
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_mfq")).args(["models", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), KINDS.len());
}

#[test]
fn the_guide_table_is_the_registry() {
    let guide = std::fs::read_to_string(root().join("docs/guide.md")).unwrap();
    let table = mfq::guide_table();
    assert!(guide.contains(&table), "docs/guide.md must hold the registry's table (mfq::guide_table()):\n{table}");
}

/// `max_ij |J_ij - D_ij| / max(1, |J_ij|)`, `D` the central differences of the drift (step 1e-6).
fn jacobian_error(m: &dyn MeanFieldModel, x: &[f64]) -> f64 {
    let n = m.dim();
    let mut jac = Jacobian::new(n, m.sparsity());
    m.jacobian(x, &mut jac);
    let dense = jac.to_dense();
    let h = 1e-6;
    let (mut xp, mut fp, mut fm) = (x.to_vec(), vec![0.0; n], vec![0.0; n]);
    let mut err: f64 = 0.0;
    for j in 0..n {
        xp[j] = x[j] + h;
        m.drift(&xp, &mut fp);
        xp[j] = x[j] - h;
        m.drift(&xp, &mut fm);
        xp[j] = x[j];
        for i in 0..n {
            let d = (fp[i] - fm[i]) / (2.0 * h);
            err = err.max((dense[i * n + j] - d).abs() / dense[i * n + j].abs().max(1.0));
        }
    }
    err
}

/// A small deterministic generator (SplitMix64) for the random points.
fn uniform(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// The analytic Jacobian of every kind's example model equals central differences at random
/// feasible states: points `x* + t (c - x*)` between the fixed point and the centre `c` of the
/// model's extremal states (feasible sets are convex), `t` uniform in `(0.1, 0.9)`. Mixing in
/// the centre keeps every entry away from the bounds `[0, 1]`, where the drifts clamp and a
/// central difference would straddle a kink.
#[test]
fn analytic_jacobians_equal_finite_differences_at_random_feasible_states() {
    let mut seed = 2026;
    for kind in KINDS {
        let (_, file) = example(kind);
        if !file.model.has_model() || file.model.dynamics_note().is_some() {
            continue;
        }
        let fp = solve_spec(&file.model, &file.truncation, &FixedPointOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", kind.name));
        let m = file.model.build(fp.truncation.levels).unwrap();
        assert_eq!(m.dim(), fp.x.len(), "{}", kind.name);
        if !m.has_analytic_jacobian() {
            continue;
        }
        let extremal = m.extremal_states();
        let centre: Vec<f64> = (0..m.dim()).map(|i| extremal.iter().map(|e| e.x[i]).sum::<f64>() / extremal.len() as f64).collect();
        for _ in 0..3 {
            let t = 0.1 + 0.8 * uniform(&mut seed);
            let mut x: Vec<f64> = fp.x.iter().zip(&centre).map(|(a, b)| a + t * (b - a)).collect();
            m.project(&mut x);
            let err = jacobian_error(m.as_ref(), &x);
            assert!(err < 1e-6, "{}: analytic Jacobian differs from central differences by {err:.2e} at t = {t}", kind.name);
        }
    }
}

/// `simulate` runs every kind that declares a finite-N system and refuses, with the declared
/// reason, every kind that declares none.
#[test]
fn simulate_runs_or_refuses_with_the_declared_reason() {
    let opts = SimOptions { servers: 60, time: 20.0, warmup: 5.0, replications: 1, batches: 2, ..Default::default() };
    for kind in KINDS {
        let (_, file) = example(kind);
        match file.model.simulation().unwrap_or_else(|e| panic!("{}: {e}", kind.name)) {
            Simulation::System(_) => {
                // kinds that fix their own size (k-of-n) simulate it
                let opts = SimOptions { servers: mfq::simsweep::model_servers(&file.model).unwrap_or(opts.servers), ..opts.clone() };
                let r = simulate(&file.model, &opts).unwrap_or_else(|e| panic!("{}: {e}", kind.name));
                assert!(r.events > 0, "{}", kind.name);
            }
            Simulation::Population => {
                let fp = solve_spec(&file.model, &file.truncation, &FixedPointOptions::default()).unwrap();
                let m = file.model.build(fp.truncation.levels).unwrap();
                let po = PopulationOptions { objects: 50, time: 5.0, warmup: 1.0, batches: 2, replications: 1, ..Default::default() };
                simulate_population(m.as_ref(), &fp.x, &po).unwrap_or_else(|e| panic!("{}: {e}", kind.name));
                assert!(matches!(simulate(&file.model, &opts), Err(SimError::Unsupported { .. })), "{}", kind.name);
            }
            Simulation::Unsupported { reason } => match simulate(&file.model, &opts) {
                Err(SimError::Unsupported { kind: k, reason: r }) => assert_eq!((k.as_str(), r), (kind.name, reason)),
                other => panic!("{}: expected the declared refusal, got {other:?}", kind.name),
            },
            other => panic!("{}: unknown simulation {other:?}", kind.name),
        }
    }
    // a declared refusal: identical copies
    let text = "[model]\nkind = \"redundancy\"\nlambda = 0.4\nd = 2\ncopies = \"identical\"\ndiscipline = \"fcfs\"\n";
    let f = ModelFile::parse(text, &[]).unwrap();
    let Ok(Simulation::Unsupported { reason }) = f.model.simulation() else { panic!("identical copies declare no system") };
    assert!(matches!(simulate(&f.model, &opts), Err(SimError::Unsupported { reason: r, .. }) if r == reason));
}
