"""JSQ(2) transient gap: max_k |x_k(t) - x_k*| from the empty state, truncation K = 50
(x_{K+1} = 0), integrated with SciPy's solve_ivp (Radau and DOP853, rtol 1e-10). The slow
transient has not died out at these times, so a correct integrator must land this far from the
closed-form fixed point x_k* = lambda^(2^k - 1), not on it.

Used by tests/transients.rs (stiff_jsq_transients_match_scipy: 2.54e-7, 3.34e-7, tolerance 3%)
and the unit tests of crates/mfq-ode/src/lib.rs (8.08e-8 at t = 200, lambda = 0.9; 2.54e-7).
"""

import numpy as np
from scipy.integrate import solve_ivp

from common import check_rel, finish

K = 50


def rhs(_t, x, lam):
    xp = np.concatenate([[1.0], x, [0.0]])
    return lam * (xp[:-2] ** 2 - xp[1:-1] ** 2) - (xp[1:-1] - xp[2:])


def jac(_t, x, lam):
    A = np.diag(-2 * lam * x - 1)
    A += np.diag(2 * lam * x[:-1], -1)
    A += np.diag(np.ones(K - 1), 1)
    return A


def gap(lam, t_end, method):
    kw = {"jac": jac} if method in ("Radau", "BDF") else {}
    sol = solve_ivp(rhs, (0, t_end), np.zeros(K), method=method, rtol=1e-10, atol=1e-14, args=(lam,), **kw)
    assert sol.success, sol.message
    star = np.array([lam ** (2.0 ** (k + 1) - 1) for k in range(K)])
    return np.max(np.abs(sol.y[:, -1] - star))


# (lambda, t, written value, methods); relative tolerance 1% (the tests allow 3% or more)
for lam, t_end, want, methods in [
    (0.9, 200.0, 8.08e-8, ["DOP853", "Radau"]),
    (0.99, 2000.0, 2.54e-7, ["Radau"]),
    (0.999, 20000.0, 3.34e-7, ["Radau"]),
]:
    for m in methods:
        check_rel(f"gap lambda = {lam}, t = {t_end}, {m}", gap(lam, t_end, m), want, 0.01)

finish()
