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

# the reliability harness (tests/harness.rs): every bundled model file at boundary and extreme
# parameter values through fixed-point, report, check and simulate (about 25 minutes)
harness:
    cargo test --release --locked --test harness -- --ignored --nocapture

# benchmarks: fixed point of JSQ(2) (and, where present, simulation throughput)
bench:
    cargo bench -p mfq-fixpoint --bench fixed_point
    cargo bench -p mfq-sim

# the Python package into the active virtual environment (pip install maturin './python[test]'
# first), then its tests with the Dask grid and the notebook (docs/python.md)
python:
    maturin develop --release -m python/Cargo.toml
    python -m pytest -q python/tests

# every named figure (models/figures/*.toml) into the gallery, docs/figures/ (docs/figures.md);
# `mfq figure` without --gallery writes to out/figures/ and leaves tracked files alone
figures:
    cargo run --release -- figure --all --gallery

# CI as it runs on a fresh machine
ci:
    bash .ci/run

# cargo-fuzz on the nightly toolchain; crashes land in fuzz/artifacts/TARGET/. The cli target runs
# each input in a temporary directory; a run longer than 60 s counts as a finding (-timeout).
# fuzz TARGET (expression, model_file, cli, or all) for SECONDS each: `just fuzz cli 600`
fuzz target="all" seconds="600":
    #!/usr/bin/env bash
    set -euo pipefail
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
    cd fuzz
    targets="{{target}}"
    if [ "$targets" = all ]; then targets="expression model_file cli"; fi
    for t in $targets; do
        mkdir -p "corpus/$t"
        opts=(-max_total_time={{seconds}})
        if [ -f "$t.dict" ]; then opts+=(-dict="$t.dict"); fi
        # the cli target prints what mfq prints: keep it off the terminal
        if [ "$t" = cli ]; then opts+=(-close_fd_mask=3 -timeout=60 -max_len=512); fi
        # absolute corpus paths: the cli target changes its working directory
        cargo +nightly fuzz run "$t" "$PWD/corpus/$t" "$PWD/seeds/$t" -- "${opts[@]}"
    done

# mfq against SciPy root and LSODA on JSQ(2), K = 20, 50, 100, lambda = 0.7, 0.9, 0.95 (bench/README.md)
bench-compare:
    python3 -m pip install --quiet numpy scipy
    cargo build --release -p mfq-cli
    python3 bench/compare_scipy.py

# LQF(d) with d = sqrt(n) growing, n = 100 .. 6400: mean field against simulation (about a minute;
# crates/mfq-sim/tests/lqf.rs, docs/models/lqf.md)
lqf-dn:
    cargo test --release --locked -p mfq-sim --test lqf -- --ignored --nocapture growing_d_sqrt_n
# the MPR MAC fixed point against the simulated protocol at n = 10 .. 80, with both airtime laws
# (about a minute; the table of docs/models/mpr-mac.md)
mac:
    cargo test --release --locked -p mfq-sim --test mpr_mac -- --ignored --nocapture

# a sweep's large step (FCFS pair redundancy, K = 11, lambda = 0.3 after 0.1): the stalled warm
# start falls back to the cold start (about 8 s; crates/mfq/src/sweep.rs, docs/guide.md)
sweep-warm-start:
    cargo test --release --locked -p mfq --lib -- --ignored --nocapture a_large_step_costs_at_most
