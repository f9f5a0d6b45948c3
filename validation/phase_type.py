"""Phase-type job sizes: SQ(d) and LL(d) closed forms for exponential sizes, and SQ(2) and LL(2)
with H2 sizes (mean 1, SCV 9, half of the load from the fast jobs).

* LL(d), exponential sizes (Hellemans and Van Houdt, "On the power-of-d-choices with least
  loaded server selection", POMACS 2(2) / SIGMETRICS 2018): E[R] = sum_n lambda^{dn}/(1 + n(d-1)).
* SQ(d), exponential: E[R] = sum_k lambda^((d^k - d)/(d - 1)) (Mitzenmacher 2001).
* H2 by (mean 1, SCV, f) as in T. Hellemans' PhD thesis (Univ. of Antwerp): for f = 1/2,
  mu_{1,2} = 1 +- sqrt((SCV - 1)/(SCV + 1)), p = f mu_1; written as a Coxian-2
  (alpha = (1, 0), A = [[-mu1, a mu1], [0, -mu2]], a = (1 - p)(mu1 - mu2)/mu1), see
  docs/models/phase-type.md.
* SQ(d) with phase-type sizes: the ODE for v_{k,j} (fraction of servers with >= k jobs whose job
  in service is in phase j) of docs/models/phase-type.md; fixed point by integration and
  Newton, E[R] = (1/lambda) sum_k v_k.
* LL(d) with phase-type sizes: Fbar' = -lambda((1 - Fbar^d) + alpha A xi),
  xi' = (1 - Fbar^d) 1 + A xi, Fbar(0) = rho, xi(0) = 0 (docs/models/lld.md);
  E[R] = E[S] + int_0^inf Fbar^d dw.

Used by tests/phase_type.rs, tests/figures.rs, crates/mfq-sim/tests/phase_type.rs and the unit
tests of crates/mfq-model/src/models/{lld,phase_type}.rs.
"""

import math

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import root

from common import check, finish


def ll_exp(lam, d):
    return sum(lam ** (d * n) / (1 + n * (d - 1)) for n in range(100000) if lam ** (d * n) > 1e-18)


def sq_exp(lam, d):
    s, x = 0.0, 1.0
    while True:
        x = lam * x**d
        if x < 1e-300:
            return s / lam
        s += x


TABLE = [  # lambda, LL(2), LL(3), SQ(2), SQ(3)
    (0.5, 1.150728, 1.045101, 1.265686, 1.125244),
    (0.7, 1.374173, 1.145776, 1.614454, 1.356842),
    (0.8, 1.596330, 1.255620, 1.947363, 1.580886),
    (0.9, 2.050285, 1.487517, 2.614057, 2.027856),
    (0.95, 2.579394, 1.759483, 3.383046, 2.535133),
    (0.99, 3.996567, 2.481048, 5.431997, 3.857847),
]
for lam, l2, l3, s2, s3 in TABLE:
    check(f"LL(2) exp {lam}", ll_exp(lam, 2), l2, 5e-7)
    check(f"LL(3) exp {lam}", ll_exp(lam, 3), l3, 5e-7)
    check(f"SQ(2) exp {lam}", sq_exp(lam, 2), s2, 5e-7)
    check(f"SQ(3) exp {lam}", sq_exp(lam, 3), s3, 5e-7)
    check(f"LL(2) exp {lam}: -ln(1 - lambda^2)/lambda^2", -math.log(1 - lam**2) / lam**2, l2, 5e-7)


def h2_coxian(scv, f=0.5):
    r = math.sqrt((scv - 1) / (scv + 1))
    mu1, mu2 = 1 + r, 1 - r
    p = f * mu1
    a = (1 - p) * (mu1 - mu2) / mu1
    alpha = np.array([1.0, 0.0])
    A = np.array([[-mu1, a * mu1], [0.0, -mu2]])
    return alpha, A


def sq_ph(lam, d, alpha, A, K=120):
    nu = -A.sum(axis=1)
    m = len(alpha)

    def rhs(_t, y):
        v = y.reshape(K, m)
        vk = np.concatenate([[1.0], v.sum(axis=1), [0.0]])  # v_0..v_{K+1}
        vnext = np.vstack([v[1:], np.zeros((1, m))])  # v_{k+1, j}
        out = v @ A + np.outer(vnext @ nu, alpha)
        # arrivals: level 1 from idle servers, start in alpha; level k >= 2 keeps the phase
        out[0] += alpha * lam * (1 - vk[1] ** d)
        poly = sum(vk[1:K] ** i * vk[2:K + 1] ** (d - 1 - i) for i in range(d))  # (v_{k-1}^d - v_k^d)/(v_{k-1} - v_k), k = 2..K
        out[1:] += lam * (v[:-1] - v[1:]) * poly[:, None]
        return out.ravel()

    y = solve_ivp(rhs, (0, 3000), np.zeros(K * m), method="LSODA", rtol=1e-9, atol=1e-13).y[:, -1]
    y = root(lambda z: rhs(0, z), y, method="hybr", tol=1e-15).x
    assert np.max(np.abs(rhs(0, y))) < 1e-12
    v = y.reshape(K, m).sum(axis=1)
    assert v[-1] < 1e-12, "mass at truncation"
    return v.sum() / lam


def ll_ph(lam, d, alpha, A, w_max=3000.0):
    es = alpha @ np.linalg.solve(-A, np.ones(len(alpha)))
    rho = lam * es

    def rhs(_w, y):
        F, xi, acc = y[0], y[1:-1], y[-1]
        g = 1 - max(F, 0.0) ** d
        return np.concatenate([[-lam * (g + alpha @ A @ xi)], g + A @ xi, [max(F, 0.0) ** d]])

    sol = solve_ivp(rhs, (0, w_max), np.concatenate([[rho], np.zeros(len(alpha)), [0.0]]), method="DOP853",
                    rtol=1e-12, atol=1e-15)
    assert sol.y[0, -1] < 1e-12
    return es + sol.y[-1, -1]


# sanity: one exponential phase gives the exponential values
one = (np.array([1.0]), np.array([[-1.0]]))
check("SQ(2) one phase, 0.9", sq_ph(0.9, 2, *one), 2.614057, 5e-7)
check("LL(2) one phase, 0.9", ll_ph(0.9, 2, *one), 2.050285, 5e-7)

alpha, A = h2_coxian(9.0)
check("H2 SCV 9: mean", alpha @ np.linalg.solve(-A, np.ones(2)), 1.0, 1e-14)
for lam, sq2, ll2 in [(0.5, 1.966067, 1.441314), (0.9, 6.334997, 3.795034)]:
    check(f"SQ(2) H2 SCV 9, lambda {lam}", sq_ph(lam, 2, alpha, A), sq2, 5e-7)
    check(f"LL(2) H2 SCV 9, lambda {lam}", ll_ph(lam, 2, alpha, A), ll2, 5e-7)

# H2 with SCV 20 (tests/figures.rs, coxian-scv-*.csv; tolerance there 2e-5 relative)
alpha, A = h2_coxian(20.0)
for lam, sq2, ll2 in [(0.5, 2.785054, 1.836749), (0.9, 10.80945, 6.002531)]:
    check(f"SQ(2) H2 SCV 20, lambda {lam}", sq_ph(lam, 2, alpha, A, K=200), sq2, 1e-6 * sq2)
    check(f"LL(2) H2 SCV 20, lambda {lam}", ll_ph(lam, 2, alpha, A, w_max=6000.0), ll2, 1e-6 * ll2)

finish()
