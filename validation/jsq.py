"""JSQ(d) (power-of-d, supermarket model): closed-form fixed point and mean response time, and
the refined mean-field term sum(V) for JSQ(2) at truncation K = 20.

Formulas: x_k = lambda^((d^k - 1)/(d - 1)) (lambda^k for d = 1) (Mitzenmacher, IEEE TPDS 12(10),
2001; Vvedenskaya, Dobrushin, Karpelevich, Probl. Inf. Transm. 32(1), 1996), so
T_d(lambda) = (1/lambda) sum_k x_k = sum_k lambda^((d^k - d)/(d - 1)). The refined term follows
Gast and Van Houdt, "A refined mean field approximation", POMACS 1(2), 2017 (Theorem 1):
A W + W A^T + Q = 0 and V = -A^{-1} (1/2) sum_jk f''_jk W_jk. Used by tests/reference_values.rs,
tests/refined.rs, tests/heterogeneous.rs, tests/phase_type.rs, crates/mfq-sim/tests/validation.rs.
"""

import numpy as np
from scipy.linalg import solve_continuous_lyapunov

from common import check, finish


def tail(lam, d, tol=1e-300):
    xs, x = [], 1.0
    while True:
        x = lam * x**d
        if x < tol:
            return xs
        xs.append(x)


def mean_response(lam, d):
    return sum(tail(lam, d)) / lam


# T_d(lambda), d = 1, 2, 3, 5 (tests/reference_values.rs, jsq_mean_response_time_table)
TABLE = {
    0.5: [2.000000, 1.265686, 1.125244, 1.031250],
    0.7: [3.333333, 1.614454, 1.356842, 1.168093],
    0.9: [10.000000, 2.614057, 2.027856, 1.632881],
    0.99: [100.000000, 5.431997, 3.857847, 2.901683],
}
for lam, row in TABLE.items():
    for d, t in zip([1, 2, 3, 5], row):
        check(f"T_{d}({lam})", mean_response(lam, d), t, 5e-7)

# further values of the same formula used by the tests (SQ(2)/SQ(3) columns, capacity-
# proportional SQ(2) on PS servers = homogeneous JSQ(2), JSQ(3) in the simulation tests)
for lam, d, t in [(0.8, 2, 1.947363), (0.95, 2, 3.383046), (0.3, 2, 1.090729), (0.75, 2, 1.758475),
                  (0.8, 3, 1.580886), (0.95, 3, 2.535133), (0.5, 3, 1.125244)]:
    check(f"T_{d}({lam})", mean_response(lam, d), t, 5e-7)

# mean queue length sum_k x_k of JSQ(2) at lambda = 0.9 (tests/figures.rs, compare-jsq2.csv)
check("sum x_k, JSQ(2), 0.9", sum(tail(0.9, 2)), 2.352652, 5e-7)

# tail at lambda = 0.9, d = 2
for k, v in enumerate([0.9, 0.729, 0.4782969, 0.2058911, 3.815204e-2, 1.310021e-3, 1.544538e-6]):
    check(f"x_{k + 1}(0.9, d=2)", tail(0.9, 2)[k], v, 5e-7 * v)


def sum_v_jsq2(lam, K=20):
    """Refined mean field sum(V) for JSQ(2) truncated at K (arrivals that would create level
    K + 1 are lost): transitions +e_k at rate lam (x_{k-1}^2 - x_k^2), -e_k at rate x_k - x_{k+1}."""
    x = np.array([lam ** (2 ** (k + 1) - 1) for k in range(K)])
    # polish the truncated fixed point by Newton (x_{K+1} = 0 shifts it by ~x_K^2)
    for _ in range(50):
        xp = np.concatenate([[1.0], x, [0.0]])
        f = lam * (xp[:-2] ** 2 - xp[1:-1] ** 2) - (xp[1:-1] - xp[2:])
        A = jac(x, lam)
        dx = np.linalg.solve(A, -f)
        x = x + dx
        if np.max(np.abs(dx)) < 1e-16:
            break
    xp = np.concatenate([[1.0], x, [0.0]])
    up = lam * (xp[:-2] ** 2 - xp[1:-1] ** 2)
    down = xp[1:-1] - xp[2:]
    Q = np.diag(up + down)
    A = jac(x, lam)
    W = solve_continuous_lyapunov(A, -Q)
    # (1/2) sum_jk d2 f_k / dx_j dx_k W_jk = lam (W_{k-1,k-1} - W_kk), W_00 = 0
    diag = np.concatenate([[0.0], np.diag(W)])
    h = lam * (diag[:-1] - diag[1:])
    V = -np.linalg.solve(A, h)
    return V.sum()


def jac(x, lam):
    K = len(x)
    A = np.zeros((K, K))
    for k in range(K):
        A[k, k] = -2 * lam * x[k] - 1
        if k > 0:
            A[k, k - 1] = 2 * lam * x[k - 1]
        if k + 1 < K:
            A[k, k + 1] = 1
    return A


# tests/refined.rs, jsq2_sum_of_v_matches_rmf_tool_and_scipy (tolerance there 2e-6)
for lam, want in [(0.7, 0.849066), (0.9, 3.986427), (0.95, 8.878356)]:
    check(f"sum V, JSQ(2), K = 20, lambda = {lam}", sum_v_jsq2(lam), want, 1e-6)

finish()
