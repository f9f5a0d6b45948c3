#!/usr/bin/env python3
"""Times the refined mean field of JSQ(2) (lambda = 0.9, truncated at K levels, tail form;
Mitzenmacher 2001, eq. (1)) three ways in one run and prints the ratios:

- `mfq refined models/jsq-d2.toml --set truncation.levels=K --order O --json`: the wall time the
  command reports for its job (`wall_seconds`: fixed point, terms, estimates) against rmf_tool
  (whose call also solves the fixed point), and for the terms alone (`terms_seconds`) against
  SciPy (given x*), minimum of 5 runs;
- rmf_tool 0.5 (`pip install rmftool`; N. Gast, "rmf_tool", the DDPP class,
  `meanFieldExpansionSteadyState(order=O)`), in a subprocess with a time limit;
- SciPy by hand (order 1): the closed-form fixed point x_k = lambda^(2^k - 1), the analytic
  tridiagonal Jacobian, the diagonal noise matrix and Hessian, `scipy.linalg.solve_continuous_lyapunov`,
  then V = -J^{-1} (1/2 F : W); median of repeated calls, one BLAS thread.

Every method's sum of V is printed beside its time (they must agree: 3.986427 at K = 20).
Usage: python3 bench/refined.py [--rmf-timeout SECONDS]
"""
import json
import os
import subprocess
import sys
import time

# one BLAS thread, as mfq (on a shared machine a threaded BLAS mostly waits for cores)
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402

LAM = 0.9
MFQ = "target/release/mfq"


def mfq(k, order, reps=5, key="wall_seconds"):
    best, sv = float("inf"), None
    for _ in range(reps):
        out = subprocess.run([MFQ, "refined", "models/jsq-d2.toml", "--set", f"truncation.levels={k}", "--set", f"lambda={LAM}",
                              "--order", str(order), "--servers", "10", "--json"], capture_output=True, text=True, check=True)
        v = json.loads(out.stdout)
        best, sv = min(best, v[key]), v["sum_v"]
    return best, sv


def scipy_v(k):
    x = np.array([LAM ** (2 ** i - 1) for i in range(1, k + 1)])
    xm = np.concatenate(([1.0], x[:-1]))  # x_{k-1}
    xp = np.concatenate((x[1:], [0.0]))  # x_{k+1}
    J = np.diag(-2 * LAM * x - 1) + np.diag(np.ones(k - 1), 1) + np.diag(2 * LAM * x[:-1], -1)
    Q = np.diag(LAM * (xm ** 2 - x ** 2) + (x - xp))
    W = scipy.linalg.solve_continuous_lyapunov(J, -Q)
    # f_k = lambda (x_{k-1}^2 - x_k^2) - x_k + x_{k+1}: d2 f_k/dx_{k-1}^2 = 2 lambda, d2 f_k/dx_k^2 = -2 lambda
    d = np.diag(W)
    b = 0.5 * (-2 * LAM * d + np.concatenate(([0.0], 2 * LAM * d[:-1])))
    return scipy.linalg.solve(J, -b)


def time_scipy(k):
    v = scipy_v(k)
    times = []
    for _ in range(7):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 0.2:
            scipy_v(k)
            n += 1
        times.append((time.perf_counter() - t0) / n)
    return float(np.median(times)), float(v.sum())


RMF = """
import time, numpy as np, rmftool as r
K, LAM, ORDER = {k}, {lam}, {order}
d = r.DDPP()
for i in range(K):
    e = np.zeros(K); e[i] = 1
    d.add_transition(e, (lambda x, i=i: LAM * ((1.0 if i == 0 else x[i-1])**2 - x[i]**2)))
    d.add_transition(-e, (lambda x, i=i: x[i] - (x[i+1] if i + 1 < K else 0.0)))
d.set_initial_state(np.zeros(K))
t0 = time.perf_counter()
res = d.meanFieldExpansionSteadyState(order=ORDER)
print(time.perf_counter() - t0, float(np.sum(res[1])))
"""


def rmf(k, order, timeout):
    try:
        out = subprocess.run([sys.executable, "-c", RMF.format(k=k, lam=LAM, order=order)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr else "failed"
    t, s = out.stdout.split()
    return float(t), float(s)


def main():
    timeout = float(sys.argv[sys.argv.index("--rmf-timeout") + 1]) if "--rmf-timeout" in sys.argv else 120.0
    print(f"JSQ(2), lambda = {LAM}; mfq: wall_seconds reported by `mfq refined --json` (min of 5)")
    print(f"{'K':>4} {'order':>5} {'mfq ms':>9} {'mfq sum V':>11} {'rmf_tool s':>11} {'rmf sum V':>11} {'rmf/mfq':>9}")
    for k in (10, 20, 30, 50):
        for order in (1, 2):
            t, sv = mfq(k, order)
            rt, rs = rmf(k, order, timeout)
            if rt is None:
                why = f"> {timeout:.0f} s" if rs is None else rs[:40]
                print(f"{k:>4} {order:>5} {t*1e3:>9.3f} {sv:>11.6f} {why:>11} {'':>11} {'> ' + format(timeout / t, '.0f') + 'x' if rs is None else '':>9}")
            else:
                print(f"{k:>4} {order:>5} {t*1e3:>9.3f} {sv:>11.6f} {rt:>11.3f} {rs:>11.6f} {rt / t:>8.0f}x")
    print("\norder 1 given x* (SciPy: the closed form; mfq: `terms_seconds`, the terms after its fixed point)")
    print(f"{'K':>4} {'SciPy ms':>9} {'SciPy sum V':>12} {'mfq ms':>9} {'mfq sum V':>11} {'SciPy/mfq':>10}")
    for k in (20, 50, 100):
        st, ss = time_scipy(k)
        t, sv = mfq(k, 1, key="terms_seconds")
        print(f"{k:>4} {st*1e3:>9.3f} {ss:>12.6f} {t*1e3:>9.3f} {sv:>11.6f} {st / t:>9.1f}x")


if __name__ == "__main__":
    main()
