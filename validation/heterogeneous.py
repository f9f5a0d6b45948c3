"""Heterogeneous server classes: PULL, speed-aware JSQ/JIQ (SA), SQ(2)-type routing on
processor-sharing servers (uniform sampling, three cost rules) and the optimal static routing.
All formulas are derived in docs/models/heterogeneous.md ("Derivations"); this script evaluates
them independently of the Rust code (floating point plus exact fractions for cost ties).

* PULL: b_j = c/(mu_j + c), c the root of sum_j gamma_j c mu_j/(mu_j + c) = lambda,
  T = (1/lambda) sum_j gamma_j b_j (Stolyar, Queueing Syst. 80(4), 2015, for the policy).
* SA-JSQ / SA-JIQ fixed point: classes filled fastest-first, T = (1/lambda) sum_j gamma_j b_j;
  transient from empty b_1(t) = lambda (1 - e^{-mu_1 t})/(gamma_1 mu_1), saturating at
  t* = -ln(1 - gamma_1 mu_1/lambda)/mu_1.
* Static routing: rho_j = max(0, 1 - 1/sqrt(theta C_j)) with sum_j gamma_j C_j rho_j = lambda,
  T = (1/lambda) sum_j gamma_j rho_j/(1 - rho_j).
* SQ(2)-type on PS servers: the truncated mean field (K = 40, or 80 within 0.1 of the threshold)
  dx_{j,k}/dt = R_{j,k-1}(x_{j,k-1} - x_{j,k}) - C_j (x_{j,k} - x_{j,k+1}),
  R_{j,k} = lambda (p_j/gamma_j)[2 P(cost(other) > cost(j,k)) + P(cost(other) = cost(j,k))],
  solved by integrating from empty and polishing with Newton; T = L / throughput.
  Stability: lambda (sum_S p_j)^2 < sum_S gamma_j C_j for every set S of classes.

Used by tests/heterogeneous.rs, tests/figures.rs, crates/mfq-sim/tests/heterogeneous.rs and the
models/hetero-*.toml files.
"""

import itertools
import math
from fractions import Fraction

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq, root

from common import check, finish

CASE_A = [(0.5, "1.6"), (0.5, "0.4")]
CASE_B = [(0.2, "3.0"), (0.8, "0.5")]
CASE_C_SA = [(0.3, "2.0"), (0.3, "1.0"), (0.4, "0.25")]
CASE_C_PS = [(0.2, "2.5"), (0.3, "1.0"), (0.5, "0.4")]


def g_mu(case):
    return np.array([g for g, _ in case]), np.array([float(m) for _, m in case])


# ---------------------------------------------------------------- PULL and speed-aware
def pull(lam, case):
    g, mu = g_mu(case)
    c = brentq(lambda c: np.sum(g * c * mu / (mu + c)) - lam, 1e-12, 1e12, xtol=1e-15, rtol=1e-15)
    b = c / (mu + c)
    return c, b, np.sum(g * b) / lam


def speed_aware(lam, case):
    g, mu = g_mu(case)
    order = np.argsort(-mu, kind="stable")
    b, rest = np.zeros(len(g)), lam
    for j in order:
        b[j] = min(1.0, rest / (g[j] * mu[j]))
        rest -= b[j] * g[j] * mu[j]
    return b, np.sum(g * b) / lam


c, b, t = pull(0.5, CASE_B)
check("PULL case B, 0.5: c", c, 1.5, 1e-12)
check("PULL case B, 0.5: b_1", b[0], 1 / 3, 1e-12)
check("PULL case B, 0.5: b_2", b[1], 0.75, 1e-12)
check("PULL case B, 0.5: T", t, 4 / 3, 1e-12)

SA_TABLES = {
    "A": (CASE_A, [
        (0.10, 0.62500000, 1.47536856, [0.125, 0.0], [0.068309, 0.226765]),
        (0.30, 0.62500000, 1.31692086, [0.375, 0.0], [0.236616, 0.553537]),
        (0.50, 0.62500000, 1.19176799, [0.625, 0.0], [0.436077, 0.755691]),
        (0.70, 0.62500000, 1.09818047, [0.875, 0.0], [0.654182, 0.883270]),
        (0.90, 0.83333333, 1.02830869, [1.0, 0.5], [0.883015, 0.967941]),
        (0.95, 0.92105263, 1.01368112, [1.0, 0.75], [0.941335, 0.984659]),
        (0.99, 0.98484848, 1.00266447, [1.0, 0.95], [0.988241, 0.997034])]),
    "B": (CASE_B, [
        (0.10, 0.33333333, 1.61755198, [0.166667, 0.0], [0.038245, 0.192633]),
        (0.30, 0.33333333, 1.48962371, [0.5, 0.0], [0.153113, 0.520331]),
        (0.50, 0.33333333, 1.33333333, [0.833333, 0.0], [1 / 3, 0.75]),
        (0.70, 0.57142857, 1.18069328, [1.0, 0.25], [0.573515, 0.889728]),
        (0.90, 0.88888889, 1.05324475, [1.0, 0.75], [0.852080, 0.971880]),
        (0.99, 0.98989899, 1.00503137, [1.0, 0.975], [0.985019, 0.997472])]),
    "C": (CASE_C_SA, [
        (0.10, 0.50000000, 1.81191807, [0.166667, 0.0, 0.0], None),
        (0.50, 0.50000000, 1.26403517, [0.833333, 0.0, 0.0], None),
        (0.70, 0.57142857, 1.13037581, [1.0, 0.333333, 0.0], None),
        (0.90, 0.66666667, 1.03697608, [1.0, 1.0, 0.0], None),
        (0.95, 0.84210526, 1.01782717, [1.0, 1.0, 0.5], None),
        (0.99, 0.96969697, 1.00346649, [1.0, 1.0, 0.9], None)]),
}
for name, (case, rows) in SA_TABLES.items():
    for lam, t_sa, t_pull, b_sa, b_pull in rows:
        b, t = speed_aware(lam, case)
        check(f"SA case {name}, {lam}: T", t, t_sa, 5e-9)
        for j, v in enumerate(b_sa):
            check(f"SA case {name}, {lam}: b_{j + 1}", b[j], v, 5e-7)
        _, b, t = pull(lam, case)
        check(f"PULL case {name}, {lam}: T", t, t_pull, 5e-9)
        for j, v in enumerate(b_pull or []):
            check(f"PULL case {name}, {lam}: b_{j + 1}", b[j], v, 5e-7)

# SA-JIQ transient from empty, case A, lambda = 0.9
g, mu = g_mu(CASE_A)
check("SA case A, 0.9: b_1(0.5)", 0.9 * (1 - math.exp(-mu[0] * 0.5)) / (g[0] * mu[0]), 0.61950492, 5e-9)
check("SA case A, 0.9: t*", -math.log(1 - g[0] * mu[0] / 0.9) / mu[0], 1.37326536, 5e-9)


# ---------------------------------------------------------------- static routing
def static(lam, case):
    g, cap = g_mu(case)

    def rho(theta):
        return np.maximum(0.0, 1 - 1 / np.sqrt(theta * cap))

    theta = brentq(lambda th: np.sum(g * cap * rho(th)) - lam, 1 / cap.max(), 1e12, xtol=1e-300, rtol=1e-15)
    r = rho(theta)
    return np.sum(g * r / (1 - r)) / lam


for case, lam, t in [
    (CASE_A, 0.30, 1.000000), (CASE_A, 0.50, 1.600000), (CASE_A, 0.70, 2.857143), (CASE_A, 0.75, 3.466667),
    (CASE_A, 0.90, 8.888889), (CASE_A, 0.95, 17.894737), (CASE_B, 0.30, 0.666667), (CASE_B, 0.50, 1.327673),
    (CASE_B, 0.70, 2.532945), (CASE_C_PS, 0.30, 0.864911), (CASE_C_PS, 0.50, 1.477893),
    (CASE_C_PS, 0.70, 2.711778), (CASE_C_PS, 0.75, 3.303858),
]:
    check(f"static {case} {lam}: T", static(lam, case), t, 5e-7)


# ---------------------------------------------------------------- SQ(2)-type on PS servers
def threshold(case, p):
    g, cap = g_mu(case)
    best = (math.inf, None)
    for r in range(1, len(g) + 1):
        for s in itertools.combinations(range(len(g)), r):
            lc = sum(g[j] * cap[j] for j in s) / sum(p[j] for j in s) ** 2
            best = min(best, (lc, s))
    return best


def ps_sq2(lam, case, rule, K, sampling="uniform"):
    g, cap = g_mu(case)
    m = len(g)
    caps = [Fraction(c) for _, c in case]
    if sampling == "uniform":
        p = g
    else:
        p = g * cap / np.sum(g * cap)
    cost = {
        "sq2": lambda j, n: Fraction(n),
        "lsc": lambda j, n: Fraction(n) / caps[j],
        "lsc-plus-one": lambda j, n: Fraction(n + 1) / caps[j],
    }[rule]
    # thresholds t[i][j][k]: smallest n >= 0 with cost(i, n) > cost(j, k); tie[i][j][k]: cost(i, t-1) == cost(j, k)
    thr = np.zeros((m, m, K), dtype=int)
    tie = np.zeros((m, m, K), dtype=bool)
    for i in range(m):
        for j in range(m):
            for k in range(K):
                c = cost(j, k)
                n = 0
                while n <= K + 1 and cost(i, n) <= c:
                    n += 1
                thr[i, j, k] = n
                tie[i, j, k] = n >= 1 and cost(i, n - 1) == c

    ii = np.arange(m)[:, None, None]
    prev = np.maximum(thr - 1, 0)
    factor = lam * p / g

    def rates(x):
        X = np.concatenate([np.ones((m, 1)), x.reshape(m, K), np.zeros((m, K + 3))], axis=1)
        above = X[ii, thr]  # [i, j, k]
        at = np.where(tie, X[ii, prev] - above, 0.0)
        R = factor[:, None] * np.einsum("i,ijk->jk", p, 2 * above + at)
        return X, R

    def rhs(_t, x):
        X, R = rates(x)
        d = R * (X[:, :K] - X[:, 1:K + 1]) - cap[:, None] * (X[:, 1:K + 1] - X[:, 2:K + 2])
        return d.ravel()

    sol = solve_ivp(rhs, (0, 100), np.zeros(m * K), method="LSODA", rtol=1e-6, atol=1e-10)
    fp = root(lambda x: rhs(0, x), sol.y[:, -1], method="hybr", tol=1e-14)
    x = fp.x
    assert np.max(np.abs(rhs(0, x))) < 1e-11, (lam, case, rule)
    X = x.reshape(m, K)
    assert X[:, -1].max() < 1e-10, "mass at truncation"
    L = np.sum(g * X.sum(axis=1))
    thru = np.sum(g * cap * X[:, 0])
    return L / thru, X


PS_ROWS = [
    (CASE_A, 0.30, [1.721031, 1.611032, 1.307341]),
    (CASE_A, 0.50, [2.258747, 1.922054, 1.652379]),
    (CASE_A, 0.70, [3.887209, 2.842534, 2.563596]),
    (CASE_A, 0.75, [4.988407, 3.482624, 3.181164]),
    (CASE_B, 0.30, [1.990129, 1.950292, 1.734003]),
    (CASE_B, 0.50, [3.058783, 2.887637, 2.658301]),
    (CASE_C_PS, 0.30, [1.850300, 1.735126, 1.446487]),
    (CASE_C_PS, 0.50, [2.564217, 2.198578, 1.934847]),
    (CASE_C_PS, 0.70, [5.835446, 4.081146, 3.737549]),
    (CASE_C_PS, 0.75, [10.2553, 6.381400, 5.947756]),
]
for case, lam, ts in PS_ROWS:
    near = threshold(case, g_mu(case)[0])[0] - lam < 0.1
    for rule, t in zip(["sq2", "lsc", "lsc-plus-one"], ts):
        got, _ = ps_sq2(lam, case, rule, 80 if near else 40)
        check(f"PS {rule} {case} {lam}: T", got, t, 5e-5 if t == 10.2553 else 5e-7)

# tail, case A, SQ(2), lambda = 0.7 (4 significant digits)
_, X = ps_sq2(0.7, CASE_A, "sq2", 40)
fast = [6.274e-1, 3.325e-1, 1.448e-1, 4.957e-2, 1.203e-2, 1.656e-3, 8.331e-5, 6.750e-7, 1.690e-10]
slow = [9.904e-1, 9.599e-1, 8.824e-1, 7.249e-1, 4.767e-1, 2.024e-1, 3.611e-2, 1.143e-3, 1.144e-6, 1.146e-12]
for k, v in enumerate(fast):
    check(f"tail fast x_{k + 1} (relative)", X[0, k] / v, 1.0, 6e-4)
for k, v in enumerate(slow):
    check(f"tail slow x_{k + 1} (relative)", X[1, k] / v, 1.0, 6e-4)

# capacity-proportional sampling, SQ(2): the homogeneous JSQ(2) value
got, _ = ps_sq2(0.9, CASE_A, "sq2", 40, sampling="capacity")
check("PS sq2 capacity-proportional case A 0.9: T", got, 2.614057, 5e-7)

# stability thresholds with uniform sampling
for case, want, s in [(CASE_A, 0.8, (1,)), (CASE_B, 0.625, (1,)), (CASE_C_PS, 0.78125, (1, 2))]:
    lc, arg = threshold(case, g_mu(case)[0])
    check(f"lambda_c {case}", lc, want, 1e-12)
    check(f"lambda_c {case}: set {s}", float(arg == s), 1.0, 0)

finish()
