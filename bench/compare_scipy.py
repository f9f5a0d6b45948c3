#!/usr/bin/env python3
"""JSQ(2) fixed point: mfq against the SciPy baseline a user would write, in one run.

Cases: K = 20, 50, 100 levels and lambda = 0.7, 0.9, 0.95 (issue 10). The system is the
truncated JSQ(2) mean field (Mitzenmacher 2001, eq. (1)) in tail form, x_0 = 1, x_{K+1} = 0:

    dx_k/dt = lambda (x_{k-1}^2 - x_k^2) - (x_k - x_{k+1}),   k = 1..K,

with its tridiagonal Jacobian. Every solver starts from the empty state x = 0, as mfq does, and
every solution is checked against the closed form x_k = lambda^(2^k - 1) before it is timed:
SciPy's root and mfq to the same criteria (max |f(x)| <= 1e-12, mfq's tolerance, and
max |x - closed form| <= 1e-9; LSODA, stopped by an event at max |f| = 1e-10, to 1.1e-10 and 1e-6).

Both sides are timed in-process, with the same clock and statistic: CPU time of the process
(time.process_time here; CLOCK_PROCESS_CPUTIME_ID in the Rust bench), 10 warm-up calls, batches
doubled until one takes >= 40 ms, then 9 timed batches; the median per call is compared (the
minimum is printed too). CPU time, not wall time: the machine may be shared with other builds.

  * root:  scipy.optimize.root(f, 0, jac=J, method="hybr", xtol=1e-13) with the analytic Jacobian;
  * LSODA: scipy.integrate.solve_ivp(method="LSODA", jac=J) from 0 until max|f| < 1e-10
    (a terminal event), i.e. "integrate to steady state" (checked to that looser residual);
  * mfq:   solve_model (PTC + Newton at fixed K, no eigenvalues), timed by
    `cargo bench -p mfq-fixpoint --bench fixed_point`, which this script runs: every case is
    measured in this run (the script stops if the bench does not print one);
  * mfq CLI: wall time of one `target/release/mfq fixed-point models/jsq-d2.toml --json --set
    lambda=L --set truncation.levels=K` process (median of --cli-repeat runs): start-up, TOML,
    the solve, the spectral abscissa (dense eigenvalues) and JSON output. Not a solver time.

Ratios are SciPy time / mfq time (medians).

Usage: python3 bench/compare_scipy.py [--cli-repeat N]   (from the repository root;
`just bench-compare` installs numpy and scipy and runs it).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import root

LAMBDAS = [0.7, 0.9, 0.95]
LEVELS = [20, 50, 100]
ROOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MFQ = os.path.join(ROOT_DIR, "target", "release", "mfq")


def drift(lam, x):
    xp = np.concatenate(([1.0], x[:-1]))  # x_{k-1}
    xn = np.concatenate((x[1:], [0.0]))  # x_{k+1}
    return lam * (xp * xp - x * x) - (x - xn)


def jacobian(lam, x):
    k = len(x)
    j = np.zeros((k, k))
    i = np.arange(k)
    j[i, i] = -2.0 * lam * x - 1.0
    j[i[1:], i[:-1]] = 2.0 * lam * x[:-1]
    j[i[:-1], i[1:]] = 1.0
    return j


def closed_form(lam, k):
    return lam ** (2.0 ** np.arange(1, k + 1) - 1.0)


def scipy_root(lam, k):
    sol = root(lambda x: drift(lam, x), np.zeros(k), jac=lambda x: jacobian(lam, x), method="hybr", options={"xtol": 1e-13})
    return sol.x


def scipy_lsoda(lam, k):
    def steady(t, x):
        return np.max(np.abs(drift(lam, x))) - 1e-10

    steady.terminal = True
    sol = solve_ivp(
        lambda t, x: drift(lam, x),
        (0.0, 1e6),
        np.zeros(k),
        method="LSODA",
        jac=lambda t, x: jacobian(lam, x),
        rtol=1e-10,
        atol=1e-13,
        events=steady,
    )
    return sol.y[:, -1]


def per_call(f):
    """(median, min) CPU seconds per call: 10 warm-up calls, batches doubled until one takes
    >= 40 ms, then 9 timed batches (the procedure of the Rust bench)."""
    for _ in range(10):
        f()
    batch = 1
    while True:
        t = time.process_time()
        for _ in range(batch):
            f()
        if time.process_time() - t >= 0.04:
            break
        batch *= 2
    samples = []
    for _ in range(9):
        t = time.process_time()
        for _ in range(batch):
            f()
        samples.append((time.process_time() - t) / batch)
    return statistics.median(samples), min(samples)


def check(name, lam, k, x, max_residual, max_error):
    res = np.max(np.abs(drift(lam, x)))
    err = np.max(np.abs(x - closed_form(lam, k)))
    if not (res <= max_residual and err <= max_error):
        sys.exit(f"{name} at lambda = {lam}, K = {k}: residual {res:.2e}, error {err:.2e} against the closed form")
    return res


def bench_rows():
    """{(lambda, K): (median us, residual)} from `cargo bench -p mfq-fixpoint --bench fixed_point`."""
    print("running: cargo bench -p mfq-fixpoint --bench fixed_point", flush=True)
    out = subprocess.run(
        ["cargo", "bench", "-p", "mfq-fixpoint", "--bench", "fixed_point"], cwd=ROOT_DIR, capture_output=True, text=True
    )
    if out.returncode != 0:
        sys.exit(f"cargo bench failed:\n{out.stderr[-2000:]}")
    rows = {}
    # lambda K iters factorisations residual error median_us min_us, e.g.
    # "   0.9    50      8               8   1.11e-16   2.22e-16       11.10     10.78"
    num = r"([0-9.eE+-]+)"
    for line in out.stdout.splitlines():
        m = re.match(r"\s*([0-9.]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+" + r"\s+".join([num] * 4) + r"\s*$", line)
        if m:
            rows[(float(m.group(1)), int(m.group(2)))] = (float(m.group(7)), float(m.group(5)))
    missing = [(lam, k) for lam in LAMBDAS for k in LEVELS if (lam, k) not in rows]
    if missing:
        sys.exit(f"the bench printed no row for {missing}:\n{out.stdout}")
    return rows


def cli_time(lam, k, repeat):
    args = [MFQ, "fixed-point", "models/jsq-d2.toml", "--json", "--set", f"lambda={lam}", "--set", f"truncation.levels={k}"]
    out = subprocess.run(args, cwd=ROOT_DIR, capture_output=True, text=True)
    if out.returncode != 0 or '"converged"' not in out.stdout:
        sys.exit(f"mfq failed at lambda = {lam}, K = {k}: {out.stderr}")
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(args, cwd=ROOT_DIR, capture_output=True)
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli-repeat", type=int, default=30, help="invocations of the mfq binary per case (median)")
    a = ap.parse_args()

    print("running: cargo build --release -p mfq-cli", flush=True)
    subprocess.run(["cargo", "build", "--release", "-p", "mfq-cli"], cwd=ROOT_DIR, check=True, capture_output=True)
    rows = bench_rows()

    print(f"numpy {np.__version__}, scipy {__import__('scipy').__version__}, python {sys.version.split()[0]}")
    print("in-process times: CPU time per call, median of 9 batches (the same procedure on both sides); CLI: wall time of a process")
    head = (
        f"{'lambda':>6} {'K':>4} {'root ms':>9} {'root res':>9} {'LSODA ms':>9} {'mfq us':>8} {'mfq res':>9}"
        f" {'CLI ms':>7} {'root/mfq':>9} {'LSODA/mfq':>10} {'root/CLI':>9}"
    )
    print(head)
    ratios = []
    for lam in LAMBDAS:
        for k in LEVELS:
            res_root = check("SciPy root", lam, k, scipy_root(lam, k), 1e-12, 1e-9)
            check("SciPy LSODA", lam, k, scipy_lsoda(lam, k), 1.1e-10, 1e-6)
            t_root, _ = per_call(lambda: scipy_root(lam, k))
            t_lsoda, _ = per_call(lambda: scipy_lsoda(lam, k))
            t_cli = cli_time(lam, k, a.cli_repeat)
            us, res_mfq = rows[(lam, k)]
            ratios.append((t_root / (us * 1e-6), lam, k))
            print(
                f"{lam:>6} {k:>4} {t_root * 1e3:9.3f} {res_root:9.1e} {t_lsoda * 1e3:9.2f} {us:8.2f} {res_mfq:9.1e}"
                f" {t_cli * 1e3:7.2f} {t_root / (us * 1e-6):8.0f}x {t_lsoda / (us * 1e-6):9.0f}x {t_root / t_cli:8.2f}x",
                flush=True,
            )
    worst = min(ratios)
    print(
        f"\nmfq vs SciPy root (median CPU time per solve): at least {worst[0]:.0f}x (lambda = {worst[1]}, K = {worst[2]}); "
        f"{sum(r >= 30 for r, _, _ in ratios)} of {len(ratios)} cases >= 30x"
    )


if __name__ == "__main__":
    main()
