"""Batch processing in a closed network (system constructed in docs/models/batch.md from the
abstract of Kar, Rehrmann, Mukhopadhyay, Alt, Ciucu, Koeppl, Binnig, Rizk, Perf. Eval. 144
(2020), arXiv 2009.09433): the exact throughput of the finite network and its mean-field limit.

The exact values come from the two-dimensional chain (busy servers j, waiting jobs q), written
from the rules (a free server takes b jobs as soon as b wait), solved as a sparse linear system
by SciPy; the Rust code instead reduces the network to the chain of the number of jobs and uses
state reduction. Mean field: X(b) = min{alpha / (1/think_rate + h(b)), s(b)}. Used by the unit
tests of crates/mfq-model/src/models/batch.rs, tests/figures.rs and docs/models/batch.md.
"""

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from common import check, finish


def exact(n, m, b, think, h):
    """Throughput per server of the (j, q) chain."""
    states = [(j, q) for j in range(m + 1) for q in range(n + 1) if b * j + q <= n and (j == m or q < b)]
    index = {s: i for i, s in enumerate(states)}
    rows, cols, vals = [], [], []

    def jump(i, to, rate):
        if rate > 0:
            rows.extend([index[to], i])
            cols.extend([i, i])
            vals.extend([rate, -rate])

    for i, (j, q) in enumerate(states):
        thinking = n - b * j - q
        jump(i, (j + 1, 0) if (j < m and q + 1 == b) else (j, q + 1), think * thinking)
        jump(i, (j, q - b) if q >= b else (j - 1, q), j / h)
    ns = len(states)
    a = sp.csr_matrix((vals, (rows, cols)), shape=(ns, ns)).tolil()
    a[ns - 1, :] = np.ones(ns)
    rhs = np.zeros(ns)
    rhs[-1] = 1.0
    pi = spla.spsolve(a.tocsc(), rhs)
    return sum(p * j for p, (j, _) in zip(pi, states)) * b / h / m


def mean_field(alpha, think, s, h):
    return min(alpha / (1 / think + h), s)


sqrt_h = lambda b: b / np.sqrt(b)
over_h = lambda b: 1 + 0.2 * (b - 1)

# alpha = 10, think rate 0.5, s(b) = sqrt(b), b = 6 (docs/models/batch.md, limit table)
check("sqrt: mean field X(6)", mean_field(10, 0.5, np.sqrt(6), sqrt_h(6)), 2.247449, 1e-6)
for m, want in [(1, 1.647993), (2, 1.894226), (5, 2.076005), (10, 2.153463), (20, 2.199640), (50, 2.230726), (100, 2.240591)]:
    check(f"sqrt: exact X(6), m = {m}", exact(10 * m, m, 6, 0.5, sqrt_h(6)), want, 1e-6)
for m, want_b in [(1, 4), (2, 5), (5, 5), (10, 6), (20, 6)]:
    xs = [exact(10 * m, m, b, 0.5, sqrt_h(b)) for b in range(1, 11)]
    check(f"sqrt: exact optimal b, m = {m}", 1 + int(np.argmax(xs)), want_b, 0)
# alpha = 20, think rate 0.1, h(b) = 1 + 0.2 (b - 1), b = 3
check("overhead: mean field X(3)", mean_field(20, 0.1, 3 / over_h(3), over_h(3)), 1.754386, 1e-6)
for m, want in [(1, 1.529559), (2, 1.626938), (5, 1.701627), (10, 1.730778), (20, 1.745219), (50, 1.752094)]:
    check(f"overhead: exact X(3), m = {m}", exact(20 * m, m, 3, 0.1, over_h(3)), want, 1e-6)
# the two small settings of crates/mfq-sim/tests/batch.rs
check("sim setting 1: exact X, n = 20, m = 2, b = 5, sqrt", exact(20, 2, 5, 0.5, sqrt_h(5)), 1.92344, 1e-5)
check("sim setting 2: exact X, n = 20, m = 1, b = 3, overhead", exact(20, 1, 3, 0.1, over_h(3)), 1.52956, 1e-5)
finish()
