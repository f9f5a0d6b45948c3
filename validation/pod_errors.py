"""Power-of-d with load-comparison errors (Bhambay, Mukhopadhyay, Vasantam: arXiv 2303.00869,
ACM MobiHoc 2023 for d = 2; Performance Evaluation 2024, art. 102408 for general d).

Mean field as derived in docs/models/pod-errors.md: with A_j = P(an arrival joins a server with
>= j jobs), the fixed point satisfies x_k = lambda A_{k-1}(x), x_0 = 1.
* load-independent errors (LI): A_j = phi(x_j) = (1 - eps) x_j^d + eps (1 - (1 - x_j)^d): an
  explicit recursion x_1 = lambda, x_k = lambda phi(x_{k-1});
* load-dependent errors (LD, threshold g): A_j = x_j^d + eps sum_{a=max(0,j-g)}^{j-1}
  P(m = a, j <= M <= a + g), m and M the min and max of the d sampled queue lengths, with
  P(m = a, j <= M <= a+g) = [(x_a - x_{a+g+1})^d - (x_{a+1} - x_{a+g+1})^d]
                           - [(x_a - x_j)^d - (x_{a+1} - x_j)^d];
  implicit: solved here on the truncated system (K = 80) by scipy.optimize.root
  (Levenberg-Marquardt) from the error-free JSQ(d) fixed point, then polished by Newton.
T = (1/lambda) sum_k x_k. Used by tests/reference_values.rs (pod_li_exact_recursion_vectors,
pod_error_tables, pod_ld_fixed_points), tests/attraction.rs, tests/figures.rs and
crates/mfq-sim/tests/validation.rs.
"""

import numpy as np
from scipy.optimize import root

from common import check, finish


def li_tail(lam, d, eps, n=20000):
    # 1 - (1 - x)^d as -expm1(d log1p(-x)): no cancellation for small x
    phi = lambda x: (1 - eps) * x**d - eps * np.expm1(d * np.log1p(-x))
    xs, x = [], lam
    for _ in range(n):
        xs.append(x)
        x = lam * phi(x)
        if x < 1e-300:
            break
    return xs


def ld_a(x, d, eps, g):
    """A_j for j = 0..K (x = x_1..x_K; levels above K are empty)."""
    K = len(x)
    X = np.concatenate([[1.0], x, np.zeros(g + 2)]).astype(x.dtype)  # X[i] = x_i
    A = np.empty(K + 1, dtype=X.dtype)
    for j in range(K + 1):
        a_j = X[j] ** d
        for a in range(max(0, j - g), j):
            c = a + g + 1
            a_j += eps * (((X[a] - X[c]) ** d - (X[a + 1] - X[c]) ** d) - ((X[a] - X[j]) ** d - (X[a + 1] - X[j]) ** d))
        A[j] = a_j
    return A


def ld_fixed_point(lam, d, eps, g, K=80):
    x0 = np.array([lam ** ((d ** (k + 1) - 1) / (d - 1)) for k in range(K)])
    f = lambda x: x - lam * ld_a(x, d, eps, g)[:-1]
    x = root(f, x0, method="lm", tol=1e-15).x
    for _ in range(30):  # Newton polish, Jacobian by complex steps (A_j is a polynomial)
        J = np.empty((K, K))
        for i in range(K):
            e = np.zeros(K, dtype=complex)
            e[i] = 1e-30j
            J[:, i] = f(x + e).imag / 1e-30
        step = np.linalg.solve(J, -f(x))
        x = x + step
        if np.max(np.abs(step)) < 1e-16:
            break
    assert np.max(np.abs(f(x))) < 1e-13, (lam, d, eps, g)
    return x


# exact-recursion vectors, LI, d = 2 (x_1..x_4 and T)
for lam, eps, xs, t in [
    (0.5, 0.3, [0.5, 0.2, 0.068, 0.0213248], 1.59721431),
    (0.9, 0.3, [0.9, 0.7776, 0.6375822336, 0.4906384038], 4.15038236),
    (0.5, 0.8, [0.5, 0.325, 0.2283125, 0.1670120207], 3.57647194),
]:
    tail = li_tail(lam, 2, eps)
    for k, v in enumerate(xs):
        check(f"LI lambda={lam} eps={eps} x_{k + 1}", tail[k], v, 5e-11)
    check(f"LI lambda={lam} eps={eps} T", sum(tail) / lam, t, 5e-9)

# mean response times (lambda, d, eps, g (None = LI), T), 5 decimals
ROWS = [
    (0.1, 2, 0.1, None, 1.02858), (0.5, 2, 0.3, None, 1.59721), (0.9, 2, 0.1, None, 2.93333),
    (0.95, 2, 0.3, None, 5.67391), (0.1, 2, 0.5, 1, 1.09265), (0.3, 2, 0.9, 2, 1.58388),
    (0.7, 2, 0.9, 1, 2.05496), (0.9, 2, 0.5, 1, 2.90133), (0.95, 2, 0.9, 2, 4.58000),
    (0.95, 2, 1.0, 1, 3.93474), (0.5, 3, 0.5, None, 2.46496), (0.9, 3, 0.3, None, 3.60177),
    (0.95, 3, 1 / 3, None, 5.77863), (0.1, 3, 0.9, 2, 1.27947), (0.5, 3, 0.5, 1, 1.37391),
    (0.9, 3, 0.5, 1, 2.21866), (0.95, 3, 0.9, 2, 3.33992), (0.95, 3, 1.0, 1, 2.84841),
    # Pod-LI d = 2, eps = 0.3 at lambda = 0.9 (models/pod-errors-li.toml): 4.15038
    (0.9, 2, 0.3, None, 4.15038),
]
for lam, d, eps, g, t in ROWS:
    x = li_tail(lam, d, eps) if g is None else ld_fixed_point(lam, d, eps, g)
    check(f"T lambda={lam} d={d} eps={eps:.4g} g={g}", sum(x) / lam, t, 5e-6)

# load-dependent fixed points
x = ld_fixed_point(0.9, 2, 0.5, 1)
for k, v in enumerate([0.9, 0.7431192661, 0.5274539754]):
    check(f"LD (0.9, 2, 0.5, 1) x_{k + 1}", x[k], v, 5e-11)
check("LD (0.9, 2, 0.5, 1) T", x.sum() / 0.9, 2.90132715, 5e-9)
x = ld_fixed_point(0.9, 3, 0.5, 1)
check("LD (0.9, 3, 0.5, 1) x_2", x[1], 0.6666047381, 5e-11)
check("LD (0.9, 3, 0.5, 1) x_3", x[2], 0.3277034627, 5e-11)
check("LD (0.9, 3, 0.5, 1) T", x.sum() / 0.9, 2.21866450, 5e-9)
x = ld_fixed_point(0.95, 2, 1.0, 3)
check("LD (0.95, 2, 1, 3) x_2", x[1], 0.8816804993, 5e-11)
check("LD (0.95, 2, 1, 3) x_3", x[2], 0.7955909921, 5e-11)
check("LD (0.95, 2, 1, 3) T", x.sum() / 0.95, 5.49394496, 5e-9)
# mean jobs per server of the LD fixed point (0.9, 2, 0.5, 1): L = lambda T = 2.6112 (4 decimals)
check("LD (0.9, 2, 0.5, 1) L", ld_fixed_point(0.9, 2, 0.5, 1).sum(), 2.6112, 5e-5)

# load-independent stability threshold lambda* = min(1, 1/(eps d)): below it the recursion
# reaches 0, at and above it the map x -> lambda phi(x) has a root in (0, lambda)
for d, eps in [(2, 0.8), (3, 0.5), (4, 0.3)]:
    lstar = min(1.0, 1 / (eps * d))
    below = li_tail(lstar * 0.98, d, eps, 200000)
    check(f"LI d={d} eps={eps}: recursion vanishes below 1/(eps d)", float(len(below) < 200000), 1.0, 0)
    if lstar < 1:
        above = li_tail(lstar * 1.02, d, eps, 200000)
        check(f"LI d={d} eps={eps}: recursion stalls above 1/(eps d)", float(above[-1] > 1e-3), 1.0, 0)

finish()
