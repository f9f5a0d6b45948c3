# Everyday tasks. Install `just` with `pip install rust-just` (or `cargo install just`).

# run every test (release build, as CI does)
test:
    cargo test --workspace --release --locked

# formatting and lints
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets --release -- -D warnings

# the main job on the bundled JSQ(2) model
report model="models/jsq-d2.toml":
    cargo run --release -- report {{model}}

# benchmarks: fixed point of JSQ(2) (and, where present, simulation throughput)
bench:
    cargo bench -p mfq-fixpoint --bench fixed_point
    cargo bench -p mfq-sim

# every named figure (models/figures/*.toml) into docs/figures/ (gallery: docs/figures.md)
figures:
    cargo run --release -- figure --all

# CI as it runs on a fresh machine
ci:
    bash .ci/run

# fuzz the expression parser and the model-file loader (cargo-fuzz, nightly toolchain), SECONDS each
fuzz seconds="600":
    cargo install cargo-fuzz --locked
    cd fuzz && cargo +nightly fuzz run expression corpus/expression seeds/expression -- -max_total_time={{seconds}}
    cd fuzz && cargo +nightly fuzz run model_file corpus/model_file seeds/model_file -- -max_total_time={{seconds}}

# mfq against SciPy root and LSODA on JSQ(2), K = 20, 50, 100, lambda = 0.7, 0.9, 0.95 (bench/README.md)
bench-compare:
    python3 -m pip install --quiet numpy scipy
    cargo build --release -p mfq-cli
    python3 bench/compare_scipy.py
