"""Robertson's chemical kinetics problem (Robertson 1966; Hairer and Wanner, "Solving ODEs II",
2nd ed., §IV.1, eq. (1.4)), the classic stiff test:

    y1' = -0.04 y1 + 1e4 y2 y3,   y2' = 0.04 y1 - 1e4 y2 y3 - 3e7 y2^2,   y3' = 3e7 y2^2,

from y = (1, 0, 0), integrated with SciPy's solve_ivp (Radau, rtol 1e-12, atol 1e-20, exact
Jacobian; LSODA and BDF agree to 1e-10). Used by the unit tests of crates/mfq-ode/src/bdf.rs (the BDF method at t = 40 and
t = 1e4, compared within 1e-7 relative there; here to 1e-9).
"""

import numpy as np
from scipy.integrate import solve_ivp

from common import check_rel, finish


def rhs(_t, y):
    return [-0.04 * y[0] + 1e4 * y[1] * y[2], 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2, 3e7 * y[1] ** 2]


def jac(_t, y):
    return np.array(
        [
            [-0.04, 1e4 * y[2], 1e4 * y[1]],
            [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
            [0.0, 6e7 * y[1], 0.0],
        ]
    )


# (t, written y1, y2, y3)
WRITTEN = [
    (40.0, 0.7158270687, 9.185534765e-6, 0.2841637457),
    (1e4, 0.1073004285, 4.800166973e-7, 0.8926990914),
]

for t_end, *want in WRITTEN:
    sol = solve_ivp(rhs, (0, t_end), [1.0, 0.0, 0.0], method="Radau", rtol=1e-12, atol=1e-20, jac=jac)
    assert sol.success, sol.message
    for i, w in enumerate(want):
        check_rel(f"y{i + 1}({t_end:g})", sol.y[i, -1], w, 1e-9)

finish()
