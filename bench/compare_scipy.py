#!/usr/bin/env python3
"""JSQ(2) fixed point: mfq against the SciPy baseline a user would write, in one run.

Cases: K = 20, 50, 100 levels and lambda = 0.7, 0.9, 0.95 (issue 10). The system is the
truncated JSQ(2) mean field (Mitzenmacher 2001, eq. (1)) in tail form, x_0 = 1, x_{K+1} = 0:

    dx_k/dt = lambda (x_{k-1}^2 - x_k^2) - (x_k - x_{k+1}),   k = 1..K,

with its tridiagonal Jacobian. Every solver starts from the empty state x = 0, as mfq does.

SciPy baselines (CPU time of the solve only: no interpreter start-up or imports):
  * root:  scipy.optimize.root(f, 0, jac=J, method="hybr") with the analytic Jacobian;
  * LSODA: scipy.integrate.solve_ivp(method="LSODA", jac=J) from 0 until max|f| < 1e-10
    (a terminal event), i.e. "integrate to steady state".

mfq, two ways (the CLI has no repeat option, so neither is a stopwatch inside `mfq fixed-point`):
  * solve: the in-process time of the same solve (PTC + Newton at fixed K, no eigenvalues)
    printed by `cargo bench -p mfq-fixpoint --bench fixed_point` (median of 7 batches).
    That bench prints the lambdas it was written for; a case whose lambda it does not print
    shows "-" (the script matches whatever rows the bench prints).
  * CLI: wall time of one `target/release/mfq fixed-point models/jsq-d2.toml --json --set
    lambda=L --set truncation.levels=K` invocation (median of --cli-repeat runs): process
    start, TOML parsing, the solve, the spectral abscissa (dense eigenvalues) and JSON output.

Ratios are SciPy time / mfq time. Every solution is checked against the closed form
x_k = lambda^(2^k - 1) before it is timed.

Usage: python3 bench/compare_scipy.py [--no-bench] [--cli-repeat N]   (from the repository root;
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
    """Median CPU seconds per call: batches grown to >= 40 ms, then 7 batches (as the Rust bench)."""
    for _ in range(3):
        f()
    batch = 1
    while True:
        t = time.process_time()
        for _ in range(batch):
            f()
        if time.process_time() - t > 0.04:
            break
        batch *= 2
    samples = []
    for _ in range(7):
        t = time.process_time()
        for _ in range(batch):
            f()
        samples.append((time.process_time() - t) / batch)
    return statistics.median(samples)


def check(name, lam, k, x):
    res = np.max(np.abs(drift(lam, x)))
    err = np.max(np.abs(x - closed_form(lam, k)))
    if not (res < 1e-8 and err < 1e-6):
        sys.exit(f"{name} at lambda = {lam}, K = {k}: residual {res:.2e}, error {err:.2e} against the closed form")
    return res


def bench_rows():
    """{(lambda, K): microseconds} from `cargo bench -p mfq-fixpoint --bench fixed_point`."""
    print("running: cargo bench -p mfq-fixpoint --bench fixed_point", flush=True)
    out = subprocess.run(
        ["cargo", "bench", "-p", "mfq-fixpoint", "--bench", "fixed_point"], cwd=ROOT_DIR, capture_output=True, text=True
    )
    if out.returncode != 0:
        sys.exit(f"cargo bench failed:\n{out.stderr[-2000:]}")
    rows = {}
    # "   0.9     20      11     5.55e-17          10.52                   39x"
    for line in out.stdout.splitlines():
        m = re.match(r"\s*([0-9.]+)\s+(\d+)\s+(\d+)\s+([0-9.eE+-]+)\s+([0-9.]+)\s+\d+x\s*$", line)
        if m:
            rows[(float(m.group(1)), int(m.group(2)))] = float(m.group(5))
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
    ap.add_argument("--no-bench", action="store_true", help="skip `cargo bench` (no in-process mfq times)")
    ap.add_argument("--cli-repeat", type=int, default=30, help="invocations of the mfq binary per case (median)")
    a = ap.parse_args()

    if not os.path.exists(MFQ):
        print("building target/release/mfq", flush=True)
        subprocess.run(["cargo", "build", "--release", "-p", "mfq-cli"], cwd=ROOT_DIR, check=True)
    rows = {} if a.no_bench else bench_rows()

    print(f"numpy {np.__version__}, scipy {__import__('scipy').__version__}, python {sys.version.split()[0]}")
    print("times: SciPy and mfq solve = CPU time of the solve in-process; mfq CLI = wall time of one invocation")
    head = (
        f"{'lambda':>6} {'K':>4} {'root ms':>9} {'LSODA ms':>9} {'mfq solve us':>13} {'mfq CLI ms':>11}"
        f" {'root/solve':>11} {'LSODA/solve':>12} {'root/CLI':>9}"
    )
    print(head)
    ratios = []
    for lam in LAMBDAS:
        for k in LEVELS:
            check("SciPy root", lam, k, scipy_root(lam, k))
            check("SciPy LSODA", lam, k, scipy_lsoda(lam, k))
            t_root = per_call(lambda: scipy_root(lam, k))
            t_lsoda = per_call(lambda: scipy_lsoda(lam, k))
            t_cli = cli_time(lam, k, a.cli_repeat)
            us = rows.get((lam, k))
            solve = f"{us:13.2f}" if us is not None else f"{'-':>13}"
            r_solve = f"{t_root / (us * 1e-6):10.0f}x" if us is not None else f"{'-':>11}"
            l_solve = f"{t_lsoda / (us * 1e-6):11.0f}x" if us is not None else f"{'-':>12}"
            if us is not None:
                ratios.append((t_root / (us * 1e-6), lam, k))
            print(
                f"{lam:>6} {k:>4} {t_root * 1e3:9.3f} {t_lsoda * 1e3:9.2f} {solve} {t_cli * 1e3:11.2f}"
                f" {r_solve} {l_solve} {t_root / t_cli:8.2f}x",
                flush=True,
            )
    if ratios:
        worst = min(ratios)
        missing = len(LAMBDAS) * len(LEVELS) - len(ratios)
        print(
            f"\nmfq solve vs SciPy root: at least {worst[0]:.0f}x (lambda = {worst[1]}, K = {worst[2]}) over the {len(ratios)} "
            f"cases the bench prints; {sum(r >= 30 for r, _, _ in ratios)} of them >= 30x"
            + (f"; {missing} case(s) not printed by the bench" if missing else "")
        )


if __name__ == "__main__":
    main()
