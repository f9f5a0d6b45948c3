"""Majority-rule opinion dynamics (Mukhopadhyay, Mazumdar, Roy, J. Stat. Phys. 181, 2020,
arXiv 2003.02885): equilibria of the mean-field ODEs derived in docs/models/opinion.md.

* stubborn agents: dx/dt = (1 - x) p^2 - x (1 - p)^2, p = gamma1 + (1 - gamma0 - gamma1) x;
* biased agents, 2-choices rule: dx/dt = (1 - x)[alpha + (1 - alpha) x (2x - 1)].
Roots of the cubics in [0, 1] by numpy.roots, polished by Newton; stability from the sign of
f'; basins by integrating the ODE. Used by the unit tests of
crates/mfq-model/src/models/opinion.rs, tests/attraction.rs, tests/figures.rs and
crates/mfq-sim/tests/opinion.rs.
"""

import numpy as np
from scipy.integrate import solve_ivp

from common import check, finish


def stubborn(g0, g1):
    s, a = 1 - g0 - g1, g1
    f = lambda x: (1 - x) * (a + s * x) ** 2 - x * (1 - a - s * x) ** 2
    # expand f as a cubic through 4 samples (exact for a cubic)
    xs = np.array([0.0, 1 / 3, 2 / 3, 1.0])
    coeffs = np.polyfit(xs, [f(x) for x in xs], 3)
    return f, coeffs


def biased(alpha):
    f = lambda x: (1 - x) * (alpha + (1 - alpha) * x * (2 * x - 1))
    xs = np.array([0.0, 1 / 3, 2 / 3, 1.0])
    return f, np.polyfit(xs, [f(x) for x in xs], 3)


def equilibria(f, coeffs):
    out = []
    for r in np.roots(coeffs):
        if abs(r.imag) < 1e-7 and -1e-9 <= r.real <= 1 + 1e-9:
            x = min(1.0, max(0.0, r.real))
            for _ in range(50):  # Newton polish
                dfx = (f(x + 1e-7) - f(x - 1e-7)) / 2e-7
                if dfx == 0 or f(x) == 0:
                    break
                x -= f(x) / dfx
            out.append(x)
    out = sorted(set(round(x, 12) for x in out))
    return out


def dfdx(f, x):
    return (f(x + 1e-6) - f(x - 1e-6)) / 2e-6


STUBBORN = [
    ((0.1, 0.1), [0.0158770817, 0.5, 0.9841229183], [-0.6, 0.3, -0.6]),
    ((0.2, 0.2), [0.1273220038, 0.5, 0.8726779962], [-0.2, 0.1, -0.2]),
    ((0.24, 0.24), [4 / 13, 0.5, 9 / 13], [-0.04, 0.02, -0.04]),
    ((0.3, 0.3), [0.5], [-0.1]),
    ((0.05, 0.1), [0.0162177987, 0.4280333702, 0.9969253017], None),
    ((0.1, 0.2), [0.9847484959], None),
    ((0.02, 0.2), [0.9995692872], None),
]
for (g0, g1), want, slopes in STUBBORN:
    f, c = stubborn(g0, g1)
    got = equilibria(f, c)
    check(f"stubborn {g0, g1}: number of equilibria", len(got), len(want), 0)
    for i, (a, b) in enumerate(zip(got, want)):
        check(f"stubborn {g0, g1}: equilibrium {i + 1}", a, b, 1e-10)
        if slopes:
            check(f"stubborn {g0, g1}: f' at equilibrium {i + 1}", dfdx(f, a), slopes[i], 1e-6)

BIASED = [(0.0, [0.0, 0.5, 1.0]), (0.05, [0.0597785224, 0.4402214776, 1.0]), (0.1, [1 / 6, 1 / 3, 1.0]),
          (0.12, [1.0]), (0.2, [1.0])]
for alpha, want in BIASED:
    f, c = biased(alpha)
    got = equilibria(f, c)
    check(f"biased {alpha}: number of equilibria", len(got), len(want), 0)
    for i, (a, b) in enumerate(zip(got, want)):
        check(f"biased {alpha}: equilibrium {i + 1}", a, b, 1e-10)
# alpha = 1/9: the interior roots merge at 1/4 (discriminant (1 - a)^2 - 8 a (1 - a) = 0)
a = 1 / 9
check("biased 1/9: discriminant", (1 - a) ** 2 - 8 * a * (1 - a), 0.0, 1e-15)
check("biased 1/9: double root", (1 - a) / (4 * (1 - a)), 0.25, 1e-15)

# basins, gamma = (0.1, 0.1)
f, _ = stubborn(0.1, 0.1)
for x0, want in [(0.3, 0.0158770817), (0.49, 0.0158770817), (0.51, 0.9841229183), (0.9, 0.9841229183)]:
    sol = solve_ivp(lambda t, x: [f(x[0])], (0, 200), [x0], rtol=1e-11, atol=1e-13)
    check(f"stubborn (0.1, 0.1) from {x0}", sol.y[0, -1], want, 1e-9)

finish()
