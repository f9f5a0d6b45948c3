#!/usr/bin/env python3
"""Independent checks of `mfq refined` (docs/refined.md), with numpy and scipy only.

1. The SIS model of Gast, Bortolussi and Tribastone ("Size expansions of mean field
   approximation: transient and steady-state analysis", Performance Evaluation 2018),
   models/generic/sis.toml: the closed forms x* = (sqrt 5 - 1)/2, V = -(sqrt 5 - 1)/10,
   A = (sqrt 5 - 3)/50, and the exact birth-death means (product form) at N = 5, 10, 20, 50.
2. The SIRS model, models/generic/sir.toml, two-dimensional: its exact N-object chain (states
   (s, i), s + i <= N; generator from the per-object rates; stationary law by a sparse solve) at
   N = 20..320; the error of x* + V/N + A/N^2 must be O(1/N^3), i.e. N^3 times it must settle.
3. JSQ(2), lambda = 0.9, K = 20: sum of V by SciPy by hand (closed-form x*, analytic derivatives,
   solve_continuous_lyapunov) = 3.986427.

The mfq values come from `target/release/mfq refined ... --order 2 --json` (build it first).
Usage: python3 validation/refined.py
"""
import json
import subprocess

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spl

MFQ = "target/release/mfq"


def mfq(path, *extra):
    out = subprocess.run([MFQ, "refined", path, "--order", "2", "--json", *extra], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def sis():
    r = mfq("models/generic/sis.toml")
    s5 = np.sqrt(5.0)
    x, v, a = r["x"][0], r["v"][0], r["a"][0]
    print(f"SIS: x* {x:.12f} vs {(s5 - 1) / 2:.12f}; V {v:.12f} vs {-(s5 - 1) / 10:.12f}; A {a:.10f} vs {(s5 - 3) / 50:.10f}")
    assert abs(x - (s5 - 1) / 2) < 1e-12 and abs(v + (s5 - 1) / 10) < 1e-10 and abs(a - (s5 - 3) / 50) < 1e-8
    for n, published in ((5, 0.5929041), (10, 0.6055449), (20, 0.6118184), (50, 0.6155559)):
        k = np.arange(n + 1)
        up = n * (1 - k / n) * (1 + k / n)
        w = np.concatenate(([1.0], np.cumprod(up[:-1] / k[1:])))
        exact = (w @ (k / n)) / w.sum()
        e1, e2 = x + v / n - exact, x + v / n + a / n**2 - exact
        print(f"  N = {n:>3}: exact {exact:.7f} (published {published}), error order 1 {e1:+.2e}, order 2 {e2:+.2e}")
        assert abs(exact - published) < 6e-8 and abs(e2) < abs(e1)


def sirs_exact(n, a=0.1, b=2.0, g=1.0, xi=0.5):
    idx, st = {}, []
    for s in range(n + 1):
        for i in range(n + 1 - s):
            idx[(s, i)] = len(st)
            st.append((s, i))
    rows, cols, vals = [], [], []
    for k, (s, i) in enumerate(st):
        out = []
        if s > 0:
            out.append((idx[(s - 1, i + 1)], n * (a + b * i / n) * s / n))
        if i > 0:
            out.append((idx[(s, i - 1)], g * i))
        if s + i < n:
            out.append((idx[(s + 1, i)], xi * (n - s - i)))
        for to, r in out:
            rows += [to, k]
            cols += [k, k]
            vals += [r, -r]
    m = len(st)
    gt = sp.csr_matrix((vals, (rows, cols)), shape=(m, m)).tolil()  # G^T
    gt[m - 1, :] = np.ones(m)
    rhs = np.zeros(m)
    rhs[-1] = 1.0
    pi = spl.spsolve(gt.tocsc(), rhs)
    return pi @ (np.array(st, dtype=float) / n)


def sirs():
    r = mfq("models/generic/sir.toml")
    x, v, a = (np.array(r[k]) for k in ("x", "v", "a"))
    print(f"SIRS: x* {x}, V {v}, A {a}")
    scaled = []
    for n in (20, 40, 80, 160, 320):
        e = sirs_exact(n)
        e1, e2 = e - x - v / n, e - x - v / n - a / n**2
        scaled.append(n**3 * e2[0])
        print(f"  N = {n:>3}: exact {e}, |err| order 1 {np.abs(e1).max():.2e}, order 2 {np.abs(e2).max():.2e}, N^3 err2(S) {n**3 * e2[0]:+.3f}")
        assert np.abs(e2).max() < np.abs(e1).max()
    # N^3 times the order-2 error settles (a constant + O(1/N)): its last changes shrink
    assert abs(scaled[-1] - scaled[-2]) < abs(scaled[-2] - scaled[-3]) < abs(scaled[-3] - scaled[-4])


def jsq_scipy():
    lam, k = 0.9, 20
    x = np.array([lam ** (2**i - 1) for i in range(1, k + 1)])
    xm, xp = np.concatenate(([1.0], x[:-1])), np.concatenate((x[1:], [0.0]))
    jac = np.diag(-2 * lam * x - 1) + np.diag(np.ones(k - 1), 1) + np.diag(2 * lam * x[:-1], -1)
    q = np.diag(lam * (xm**2 - x**2) + (x - xp))
    w = scipy.linalg.solve_continuous_lyapunov(jac, -q)
    d = np.diag(w)
    b = 0.5 * (-2 * lam * d + np.concatenate(([0.0], 2 * lam * d[:-1])))
    v = scipy.linalg.solve(jac, -b)
    r = mfq("models/jsq-d2.toml", "--set", "truncation.levels=20")
    print(f"JSQ(2): sum V SciPy {v.sum():.7f}, mfq {r['sum_v']:.7f}; max |V - V_mfq| {np.abs(v - np.array(r['v'])).max():.1e}")
    assert abs(v.sum() - 3.986427) < 2e-6 and np.abs(v - np.array(r["v"])).max() < 1e-8


if __name__ == "__main__":
    sis()
    sirs()
    jsq_scipy()
    print("all refined checks passed")
