"""Redundancy-d with exponential job sizes: the discipline-independent mean field, Gardner's FCFS
limit, the PS pair approximation (d = 2), and Red_id(d) (identical copies, FCFS): lambda_max
and the load Fbar(0).

* Mean field (derived in docs/models/redundancy.md): the fixed point is a birth-death chain with
  birth rate lambda d and death rate 1 + c k, c = (d - 1) lambda / m; the mean number of copies
  per server m solves (1 - lambda) a e^x x^{-a} gamma(a, x) = 1, a = m / ((d - 1) lambda),
  x = d m / (d - 1), gamma the lower incomplete gamma function (mpmath), cross-checked by the
  direct birth-death sum.
* Gardner et al., "Redundancy-d: the power of d choices for redundancy", Oper. Res. 65(4), 2017
  (FCFS limit; asymptotic independence proved by Shneer and Stolyar 2020):
  E[T] = sum_{n>=0} lambda^n / (n (d - 1) + d); mean copies = lambda d E[T].
* PS pair approximation (d = 2, derived in docs/models/redundancy.md, "PS pair"): the ODE for
  P[a, b] integrated by RK4 (dt = 0.05) from the empty state, K = 60, until max |rhs| < 1e-11.
* Red_id(d), FCFS, identical copies (Hellemans and Van Houdt, workload ODE for exponential sizes,
  see docs/models/redundancy.md): Fbar' = -lambda d [e^{-w}(1 - Fbar) + xi1 - xi2 Fbar],
  xi1' = -xi1 + Fbar^d, xi2' = -xi2 + Fbar^{d-1}; the load Fbar(0) is the value for which
  inf_w Fbar = 0 (bisection), lambda_max the lambda at which Fbar(0) reaches 1.

Used by tests/redundancy.rs, tests/phase_type.rs, tests/figures.rs, the unit tests of
crates/mfq-model/src/models/redundancy/ and crates/mfq-sim/tests/{redundancy,saturated}.rs.
"""

import math

import mpmath as mp
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from common import check, finish

mp.mp.dps = 30


def mf_mean_copies(lam, d):
    def h(m):
        a = mp.mpf(m) / ((d - 1) * lam)
        x = d * mp.mpf(m) / (d - 1)
        return (1 - lam) * a * mp.e ** x * x ** (-a) * mp.gammainc(a, 0, x) - 1

    return float(mp.findroot(h, lam / (1 - lam)))


def mf_by_sum(lam, d, m):
    c = (d - 1) * lam / m
    q, s, s1 = 1.0, 1.0, 0.0
    for k in range(1, 5000):
        q *= lam * d / (1 + c * k)
        s += q
        s1 += k * q
        if q < 1e-18 * s:
            break
    return s1 / s  # mean of the birth-death law


def gardner_response(lam, d):
    return sum(lam**n / (n * (d - 1) + d) for n in range(20000))


MF = [(0.5, 2, 0.778908), (0.7, 2, 1.473043), (0.8, 2, 2.101891), (0.9, 2, 3.337652), (0.95, 2, 4.764966),
      (0.3, 2, 0.378687), (0.7, 3, 1.361196), (0.9, 3, 2.893462), (0.3, 3, 0.369780), (0.5, 3, 0.743828),
      (0.95, 3, 3.992603), (0.8, 3, 1.894653)]
for lam, d, want in MF:
    m = mf_mean_copies(lam, d)
    check(f"mean field lambda={lam} d={d}", m, want, 5e-7)
    check(f"mean field lambda={lam} d={d}: birth-death sum", mf_by_sum(lam, d, m), m, 1e-9)

GARDNER = [(0.5, 2, 0.772589), (0.7, 2, 1.439922), (0.8, 2, 2.023595), (0.9, 2, 3.116856), (0.95, 2, 4.306805),
           (0.7, 3, 1.338447), (0.9, 3, 2.750433), (0.3, 2, 0.377833), (0.3, 3, 0.369162), (0.5, 3, 0.739351),
           (0.8, 3, 1.842101), (0.95, 3, 3.704580)]
for lam, d, want in GARDNER:
    check(f"Gardner mean copies lambda={lam} d={d}", lam * d * gardner_response(lam, d), want, 5e-7)
for lam, r2, r3 in [(0.5, 0.772589, 0.492901), (0.7, 1.028516, 0.637356), (0.8, 1.264747, 0.767542),
                    (0.9, 1.731587, 1.018679), (0.95, 2.266739, 1.299853), (0.99, 3.688573, 2.028588)]:
    check(f"Gardner E[R] lambda={lam} d=2", gardner_response(lam, 2), r2, 5e-7)
    check(f"Gardner E[R] lambda={lam} d=3", gardner_response(lam, 3), r3, 5e-7)


# ------------------------------------------------------------------ PS pair approximation, d = 2
def ps_pair(lam, K=60, dt=0.05, tol=1e-11, t_max=20000.0):
    idx = np.arange(K + 2, dtype=float)
    inv = np.zeros(K + 2)
    inv[1:] = 1.0 / idx[1:]
    P = np.zeros((K + 2, K + 2))  # P[a, b], a, b = 1..K; row/column 0 and K + 1 stay 0

    def rhs(P):
        P = np.clip(P, 0.0, None)
        row = P.sum(axis=1)  # = a x_a
        x = row * inv
        x0 = 1.0 - x[1:K + 1].sum()
        xs = np.concatenate([[x0], x[1:K + 1]])  # x_0..x_K
        out = np.zeros_like(P)
        # new job between an (a-1)-node and a (b-1)-node, a, b = 1..K
        out[1:K + 1, 1:K + 1] += 2 * lam * np.outer(xs[:K], xs[:K])
        # completion of the job itself
        out -= P * (inv[:, None] + inv[None, :])
        # copy-loss rate of a degree-i node: L_i = 1 + i sum_m P[i,m]/m / sum_m P[i,m]
        s = P @ inv
        L = np.ones(K + 2)
        nz = row > 1e-300
        L[nz] = 1.0 + idx[nz] * s[nz] / row[nz]
        up = 2 * lam * P
        up[K, :] = 0.0  # no copy beyond K
        down = (L * (idx - 1) * inv)[:, None] * P
        # row shifts (the a-endpoint changes degree)
        out[1:K + 1, :] += -up[1:K + 1, :] + up[0:K, :] - down[1:K + 1, :] + down[2:K + 2, :]
        # column shifts (the b-endpoint), by symmetry
        upc, downc = up.T, down.T
        out[:, 1:K + 1] += -upc[:, 1:K + 1] + upc[:, 0:K] - downc[:, 1:K + 1] + downc[:, 2:K + 2]
        out[0, :] = 0.0
        out[:, 0] = 0.0
        out[K + 1, :] = 0.0
        out[:, K + 1] = 0.0
        return out

    t = 0.0
    while t < t_max:
        k1 = rhs(P)
        if np.max(np.abs(k1)) < tol:
            break
        k2 = rhs(P + 0.5 * dt * k1)
        k3 = rhs(P + 0.5 * dt * k2)
        k4 = rhs(P + dt * k3)
        P = P + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
    return np.clip(P, 0, None).sum()


for lam, want in [(0.5, 0.78142), (0.7, 1.48412), (0.8, 2.12460), (0.9, 3.38752)]:
    check(f"PS pair lambda={lam}", ps_pair(lam), want, 5e-6)


# ------------------------------------------------------------------ Red_id(d), FCFS, identical copies
def red_id_min_fbar(lam, d, f0, w_max=200.0):
    def rhs(w, y):
        F, a, b = y
        return [-lam * d * (math.exp(-w) * (1 - F) + a - b * F), -a + max(F, 0.0) ** d, -b + max(F, 0.0) ** (d - 1)]

    hit = lambda w, y: y[0]
    hit.terminal = True
    sol = solve_ivp(rhs, (0, w_max), [f0, 0.0, 0.0], events=hit, rtol=1e-12, atol=1e-14, method="DOP853")
    return -1.0 if sol.t_events[0].size else sol.y[0].min()


def red_id_load(lam, d):
    lo, hi = lam, 1.0
    for _ in range(45):
        mid = 0.5 * (lo + hi)
        if red_id_min_fbar(lam, d, mid) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def red_id_lambda_max(d):
    lo, hi = 1.0 / d, 1.0
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        if red_id_min_fbar(mid, d, 1 - 1e-9) < 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


check("Red_id(2) lambda_max (published 0.81669...)", red_id_lambda_max(2), 0.81669, 1e-5)
check("Red_id(3) lambda_max", red_id_lambda_max(3), 0.66667, 1e-5)
check("Red_id(2) load Fbar(0) at lambda = 0.5", red_id_load(0.5, 2), 0.710228, 2e-6)
check("Red_id(2) load Fbar(0) at lambda = 0.8", red_id_load(0.8, 2), 0.986917, 2e-5)

finish()
