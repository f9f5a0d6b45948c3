"""Benchmark (a script, not a test): a JSQ(2) fixed point called from Python, against

1. the same solve timed in Rust in the same process (``Core.time_fixed_point``: the front
   door's ``Model::fixed_point`` in a loop, no Python in between): the binding's overhead;
2. SciPy's ``root`` (MINPACK hybrj) with the analytic Jacobian of the same truncated ODE
   (Mitzenmacher 2001, eq. (2): ``dx_k/dt = lambda (x_{k-1}^2 - x_k^2) - (x_k - x_{k+1})``,
   ``x_0 = 1``, ``x_{K+1} = 0``), from the same start (the empty state) at the truncation level
   mfq chose, to the same tolerance.

Prints the times and the ratios (issue 18: overhead at most 20 us, at least 20x faster than
SciPy). Run: python python/bench/bench_fixed_point.py  (needs scipy)
"""

import time

import numpy as np
from scipy.optimize import root

import mfq


def best_of(f, repeats: int, rounds: int = 5) -> float:
    """The best over ``rounds`` of the mean time of ``repeats`` calls, in seconds."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeats):
            f()
        best = min(best, (time.perf_counter() - t0) / repeats)
    return best


def jsq2(lam: float, k: int):
    """Drift and analytic Jacobian of JSQ(2) truncated at K = k (numpy)."""
    def fun(x):
        prev = np.concatenate(([1.0], x[:-1]))
        nxt = np.concatenate((x[1:], [0.0]))
        f = lam * (prev**2 - x**2) - (x - nxt)
        j = np.zeros((k, k))
        i = np.arange(k)
        j[i, i] = -2.0 * lam * x - 1.0
        j[i[1:], i[1:] - 1] = 2.0 * lam * x[:-1]
        j[i[:-1], i[:-1] + 1] = 1.0
        return f, j
    return fun


def main() -> None:
    print("JSQ(2) fixed point, best of interleaved rounds (times per call)")
    print(f"{'lambda':>7} {'K':>3} {'python us':>10} {'rust us':>9} {'overhead us':>11} {'scipy us':>9} {'scipy/python':>12}  check")
    for lam in (0.5, 0.9, 0.99):
        m = mfq.Model(kind="jsq", lam=lam, d=2)
        fp = m.fixed_point()
        k = fp.truncation
        repeats = 1000 if lam < 0.95 else 300
        # Python and Rust rounds interleaved, best of each (the machine's load varies)
        t_py, t_rust = float("inf"), float("inf")
        for _ in range(7):
            t_py = min(t_py, best_of(lambda: m.fixed_point(), repeats, rounds=1))
            t_rust = min(t_rust, m._core.time_fixed_point(repeats))
        fun = jsq2(lam, k)
        sol = root(fun, np.zeros(k), jac=True, method="hybr", tol=1e-12)
        t_scipy = best_of(lambda: root(fun, np.zeros(k), jac=True, method="hybr", tol=1e-12), max(repeats // 10, 20))
        err = float(np.max(np.abs(sol.x - fp.x)))
        ok = "ok" if sol.success and err < 1e-9 else f"scipy: success={sol.success}, max|x - x*| = {err:.1e}"
        print(f"{lam:>7} {k:>3} {t_py * 1e6:>10.1f} {t_rust * 1e6:>9.1f} {(t_py - t_rust) * 1e6:>11.1f} {t_scipy * 1e6:>9.1f} {t_scipy / t_py:>12.1f}  {ok}")


if __name__ == "__main__":
    main()
