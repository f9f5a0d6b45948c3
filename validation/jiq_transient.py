"""JIQ fluid transient with its sliding boundary (exponential service, one dispatcher).

Fluid model (derived in docs/models/jiq.md): in the interior x_1 < 1 every arrival finds an
idle server, dx_1/dt = lambda - (x_1 - x_2), dx_k/dt = -(x_k - x_{k+1}) (k >= 2). On the boundary
x_1 = 1 idle servers appear at rate x_1 - x_2 = 1 - x_2 and are refilled at once; the rest of the
arrivals, lambda - (1 - x_2), go to uniformly random servers:
dx_1/dt = 0, dx_k/dt = (lambda - 1 + x_2)(x_{k-1} - x_k) - (x_k - x_{k+1}) (k >= 2), as long as
lambda >= 1 - x_2. Solved in two phases with event location (solve_ivp, DOP853, rtol 1e-11),
from x_1 = x_2 = x_3 = 1, x_k = 0 (k >= 4), truncation K = 30.

Used by tests/transients.rs (jiq_boundary_transient_table, tolerance 1.5e-6;
jiq_boundary_leaving_times, tolerance 1e-6).
"""

import numpy as np
from scipy.integrate import solve_ivp

from common import check, finish

K = 30
OPTS = dict(method="DOP853", rtol=1e-11, atol=1e-14)


def boundary(_t, y, lam):
    # y = x_2..x_K (x_1 = 1)
    x = np.concatenate([[1.0], y, [0.0]])
    excess = lam - (1.0 - x[1])
    return excess * (x[:-2] - x[1:-1]) - (x[1:-1] - x[2:])


def leave(_t, y, lam):
    return (1.0 - y[0]) - lam


leave.terminal = True
leave.direction = 1


def interior(_t, x, lam):
    xp = np.concatenate([x, [0.0]])
    dx = -(xp[:-1] - xp[1:])
    dx[0] += lam
    return dx


def run(lam, times):
    y0 = np.zeros(K - 1)
    y0[:2] = 1.0
    horizon = max(times) + 1.0
    b = solve_ivp(boundary, (0, horizon), y0, events=leave, dense_output=True, args=(lam,), **OPTS)
    t_leave = b.t_events[0][0] if b.t_events[0].size else np.inf
    out = {}
    later = [t for t in times if t > t_leave]
    for t in times:
        if t <= t_leave:
            out[t] = np.concatenate([[1.0], b.sol(t)])
    if later:
        x0 = np.concatenate([[1.0], b.y_events[0][0]])
        i = solve_ivp(interior, (t_leave, max(later)), x0, dense_output=True, args=(lam,), **OPTS)
        for t in later:
            out[t] = i.sol(t)
            assert out[t][0] < 1.0
    return t_leave, out


TABLE = {
    0.5: {1.0: [1.0, 0.807887, 0.507298, 0.152572], 2.0: [1.0, 0.569489, 0.298372, 0.102723],
          5.0: [0.705711, 0.103477, 0.037396, 0.010145], 10.0: [0.509880, 0.003173, 0.000826, 0.000175]},
    0.9: {1.0: [1.0, 0.861059, 0.618665, 0.294406], 2.0: [1.0, 0.758738, 0.524109, 0.301237],
          5.0: [1.0, 0.619112, 0.388503, 0.235171], 10.0: [1.0, 0.470501, 0.243869, 0.132924]},
}
LEAVE = {0.5: 2.28335783, 0.9: 18.42926103}

for lam, rows in TABLE.items():
    t_leave, out = run(lam, list(rows) + [LEAVE[lam] + 40.0])
    check(f"lambda = {lam}: leaves x_1 = 1 at", t_leave, LEAVE[lam], 5e-9)
    for t, want in rows.items():
        for k in range(4):
            check(f"lambda = {lam}, t = {t}: x_{k + 1}", out[t][k], want[k], 5e-7)
    late = out[LEAVE[lam] + 40.0]
    check(f"lambda = {lam}: x_1 forty time units after leaving -> lambda", late[0], lam, 1e-5)

finish()
