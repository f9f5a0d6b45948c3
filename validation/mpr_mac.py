"""Asynchronous MPR MAC (kind mpr-mac, docs/models/mpr-mac.md): the reduction M = K = 1 to
Bianchi's model of the 802.11 DCF (G. Bianchi, IEEE JSAC 18(3):535-547, 2000).

Bianchi's equations, written here from his paper and solved with SciPy's brentq: the attempt
probability tau(p) = 2(1-2p) / ((1-2p)(W+1) + pW(1-(2p)^m)) (eq. 7), the collision probability
p = 1 - (1-tau)^(n-1) (sec. III), and the saturation throughput (eq. 13)
S = P_s P_tr E[P] / ((1-P_tr) sigma + P_tr P_s T_s + P_tr (1-P_s) T_c) with sigma = 1 mini-slot
and T_s = T_c = E[P] = T, the timing of the mpr-mac model. The written values are the Rust fixed
point's (`mfq fixed-point models/mpr-mac-m1.toml --set nodes=.. --set window=.. --set stages=..
--set airtime=.. --json`: mpr = threshold = 1, no retry limit), which
solves a Markov chain of cohorts and Kumar et al.'s G(gamma) instead; the unit test
crates/mfq-model/src/models/mpr_mac.rs: one_packet_at_a_time_is_bianchi checks the same points.
"""

from scipy.optimize import brentq

from common import check, finish


def bianchi(n, w, m, t):
    def tau(p):
        if abs(1 - 2 * p) < 1e-12:  # removable singularity at p = 1/2
            p += 1e-9
        return 2 * (1 - 2 * p) / ((1 - 2 * p) * (w + 1) + p * w * (1 - (2 * p) ** m))

    p = brentq(lambda p: 1 - (1 - tau(p)) ** (n - 1) - p, 0.0, 0.999, xtol=1e-15, rtol=1e-15) if n > 1 else 0.0
    ta = tau(p)
    ptr = 1 - (1 - ta) ** n
    ps = n * ta * (1 - ta) ** (n - 1) / ptr
    s = ps * ptr * t / ((1 - ptr) + ptr * ps * t + ptr * (1 - ps) * t)
    return ta, p, s


# (n, W, m, T): beta, gamma, S written from the Rust fixed point
WRITTEN = {
    (5, 32, 3, 20.0): (0.048164011897304106, 0.1791789521075562, 0.7668252590070218),
    (10, 32, 3, 20.0): (0.03868539861786608, 0.29888404602380747, 0.7540297192309392),
    (20, 32, 3, 50.0): (0.029111982717491058, 0.42955512859167033, 0.7263944310929686),
    (50, 32, 3, 20.0): (0.019003632447678342, 0.6094266881855257, 0.5835090584593556),
    (10, 32, 5, 1.0): (0.03730507995456812, 0.2897714582226004, 0.26495132537022215),
    (50, 128, 3, 100.0): (0.008785915271748802, 0.35105817921860627, 0.7849217240465673),
    (10, 16, 4, 10.0): (0.05545941572473862, 0.40160823562065817, 0.6754616183475658),
}

for (n, w, m, t), (beta, gamma, s) in WRITTEN.items():
    ta, p, sb = bianchi(n, w, m, t)
    print(f"n={n} W={w} m={m} T={t}: tau={ta:.10f} p={p:.10f} S={sb:.10f}")
    check(f"tau n={n} W={w} m={m}", ta, beta, 1e-9)
    check(f"p n={n} W={w} m={m}", p, gamma, 1e-9)
    check(f"S n={n} W={w} m={m} T={t}", sb, s, 1e-6)

finish()
