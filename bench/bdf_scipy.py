#!/usr/bin/env python3
"""Issue 20, target 5 baseline: JSQ(2) transient with SciPy's solve_ivp(method='BDF') against
mfq's BDF (Method::Bdf), in one run.

The system is the truncated JSQ(2) mean field (Mitzenmacher 2001, eq. (1)) in tail form,
x_0 = 1, x_{K+1} = 0, lambda = 0.9, K = 100, from the empty state to t = 1000, rtol 1e-8,
atol 1e-12 (mfq's defaults), SciPy with the exact tridiagonal Jacobian (dense, as a user
would pass it). Checked before timing: both final states are within 1e-6 of the closed-form
fixed point x_k = lambda^(2^k - 1) (the transient has died out by t = 1000) and within 1e-7 of
each other.

Both sides are CPU time of the process (time.process_time here; /proc/self/stat in the Rust
example, which this script runs: `cargo run --release -p mfq-ode --example bdf_bench -- 100
1000 1e-8 --jsq`), median of repeated solves. Ratio = SciPy / mfq.

Usage: python3 bench/bdf_scipy.py   (from the repository root, after
`cargo build --release -p mfq-ode --example bdf_bench`)
"""

import os
import statistics
import subprocess
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

LAM, K, T_END, RTOL, ATOL = 0.9, 100, 1000.0, 1e-8, 1e-12
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "target", "release", "examples", "bdf_bench")


def rhs(_t, x):
    xp = np.concatenate([[1.0], x, [0.0]])
    return LAM * (xp[:-2] ** 2 - xp[1:-1] ** 2) - (xp[1:-1] - xp[2:])


def jac(_t, x):
    a = np.diag(-2 * LAM * x - 1)
    a += np.diag(2 * LAM * x[:-1], -1)
    a += np.diag(np.ones(K - 1), 1)
    return a


def scipy_solve():
    sol = solve_ivp(rhs, (0, T_END), np.zeros(K), method="BDF", rtol=RTOL, atol=ATOL, jac=jac)
    assert sol.success, sol.message
    return sol


def main():
    star = np.array([LAM ** (2.0 ** (k + 1) - 1) for k in range(K)])
    sol = scipy_solve()
    times = []
    started = time.process_time()
    while len(times) < 5 or time.process_time() - started < 3.0:
        c0 = time.process_time()
        scipy_solve()
        times.append(time.process_time() - c0)
    scipy_t = statistics.median(times)
    out = subprocess.run([EXAMPLE, str(K), str(T_END), str(RTOL), "--jsq"], capture_output=True, text=True, check=True).stdout
    mfq_line = next(line for line in out.splitlines() if line.startswith("jsq bdf cpu"))
    mfq_t = float(mfq_line.split(":")[1].split()[0])
    x_mfq = np.array([float(v) for v in next(line for line in out.splitlines() if line.startswith("x_final:")).split(":")[1].split(",")])
    gap_scipy = np.max(np.abs(sol.y[:, -1] - star))
    gap_mfq = np.max(np.abs(x_mfq - star))
    diff = np.max(np.abs(sol.y[:, -1] - x_mfq))
    ok = gap_scipy < 1e-6 and gap_mfq < 1e-6 and diff < 1e-7
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"JSQ(2) lambda {LAM}, K = {K}, empty to t = {T_END}, rtol {RTOL:g}, atol {ATOL:g}; load average {load}")
    print(f"SciPy BDF: {scipy_t * 1e3:.2f} ms CPU per solve ({sol.t.size - 1} steps, {sol.nlu} LU)")
    print(f"mfq BDF:   {mfq_t * 1e3:.3f} ms CPU per solve ({mfq_line.split('(')[1].rstrip(')')})")
    print(f"check: |x_scipy - x*| = {gap_scipy:.2e}, |x_mfq - x*| = {gap_mfq:.2e}, |x_scipy - x_mfq| = {diff:.2e}: {'passed' if ok else 'FAILED'}")
    print(f"ratio SciPy / mfq: {scipy_t / mfq_t:.0f}")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
