#!/usr/bin/env python3
"""LL(d) with exponential job sizes (mean 1) and large d: the mean waiting time
E[W] = int_0^inf Fbar(w)^d dw with the closed-form workload ccdf of Hellemans and Van Houdt
("On the power-of-d-choices with least loaded server selection", POMACS 2(2), 2018),

    Fbar(w) = (lambda + (lambda^(1-d) - lambda) e^((d-1) w))^(1/(1-d)),

integrated with mpmath at 40 digits, the breakpoints placed on every decade so that the
boundary layer of Fbar^d at w = 0 (width ~ 1/d) is resolved. Checked in tests/cli.rs
(lld_with_large_d_resolves_its_waiting_time). Needs mpmath (pip install mpmath).
"""
from mpmath import mp, mpf, exp, quad

mp.dps = 40


def mean_wait(lam, d):
    lam = mpf(lam)
    fbar = lambda w: (lam + (lam ** (1 - d) - lam) * exp((d - 1) * w)) ** (mpf(1) / (1 - d))
    points = [0] + [mpf(10) ** k for k in range(-8, 3)]
    return quad(lambda w: fbar(w) ** d, points)


# the values as tests/cli.rs writes them (compared there to 1e-6 relative)
TESTS = {1000: 4.584339654421914e-4, 10000: 4.517436637439083e-9}

if __name__ == "__main__":
    bad = 0
    for d, want in TESTS.items():
        got = float(mean_wait("0.999", d))
        ok = abs(got - want) <= 1e-12 * want
        bad += not ok
        print(f"d = {d:5d}, lambda = 0.999: E[W] = {got:.16e} (test {want:.16e}) {'ok' if ok else 'DIFFERS'}")
    raise SystemExit(bad)
