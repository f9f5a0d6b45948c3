#!/usr/bin/env python3
"""Times `mfq fixed-point` of the LL(d) model over a grid of its parameter range and of the
LCFS limit of redundancy-d over lambda, checks each answer, and prints every point and the
slowest (issue 20 point 2). Checks: exponential LL(d), E[R] = sum_n lambda^(dn)/(1 + n(d-1))
(Hellemans and Van Houdt, SIGMETRICS 2018); LL(1) = M/G/1, Pollaczek-Khinchine E[R] = E[S] +
lambda E[S^2]/(2(1 - rho)); otherwise Brumelle's H = lambda G between the two integrals
(mean workload = rho E[W] + lambda E[S^2]/2). The LCFS limit is checked against its exact
identity E[B] = 1/(d(1 - lambda)) (docs/models/redundancy.md).

Usage: python3 bench/lcfs_lld.py [path/to/mfq]   (release build: cargo build --release -p mfq-cli)
"""
import json, math, subprocess, sys, time

MFQ = sys.argv[1] if len(sys.argv) > 1 else "target/release/mfq"


def run(model, sets, limit=60):
    cmd = [MFQ, "fixed-point", model, "--json", "--max-seconds", str(limit)] + sum((["--set", s] for s in sets), [])
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        return dt, None, p.stderr.strip().splitlines()[-1] if p.stderr else f"exit {p.returncode}"
    return dt, json.loads(p.stdout), None


def extras(out):
    o = out.get("observables", out)
    ex = o.get("extras", {})
    if isinstance(ex, list):
        ex = {k: v for k, v in ex}
    return o, ex


def h2_moments(scv, f):
    disc = max((scv - 1) * (scv - 1 + 8 * f * (1 - f)), 0.0)
    mu1 = (scv + 4 * f - 1 + math.sqrt(disc)) / (2 * f * (scv + 1))
    p = f * mu1
    mu2 = (1 - p) / (1 - f)
    return p / mu1 + (1 - p) / mu2, 2 * (p / mu1**2 + (1 - p) / mu2**2)


def lld_points():
    for d in [1, 2, 3, 10]:
        for lam in [0.1, 0.5, 0.9, 0.99, 0.999]:
            yield "models/lld2-exp.toml", d, lam, None
    for f in [1e-9, 1e-3, 0.01, 0.5, 0.99, 0.999]:
        for d in [1, 2]:
            for lam in [0.5, 0.9, 0.999]:
                yield "models/lld2-h2.toml", d, lam, f


def check_lld(model, d, lam, f, o, ex):
    er = o["mean_response_time"]
    if f is None:
        want = sum(lam ** (d * n) / (1 + n * (d - 1)) for n in range(200000) if lam ** (d * n) > 1e-18)
        return abs(er - want) / want, "closed form"
    es, es2 = h2_moments(9.0, f)
    if d == 1:
        want = es + lam * es2 / (2 * (1 - lam * es))
        return abs(er - want) / want, "P-K"
    want = lam * es * ex["mean_waiting_time"] + lam * es2 / 2
    return abs(ex["mean_workload"] - want) / want, "Brumelle"


def main():
    rows, slowest = [], (0.0, "")
    print("LL(d): case, seconds, E[R], error estimate, check")
    for model, d, lam, f in lld_points():
        sets = [f"d={d}", f"lambda={lam}"] + ([f"job_size.f={f}"] if f is not None else [])
        dt, out, err = run(model, sets)
        case = f"LL({d}) {'exp' if f is None else f'H2 f={f}'} lambda={lam}"
        if out is None:
            print(f"{case}: FAILED {err} ({dt:.2f} s)")
            slowest = max(slowest, (dt, case + " (failed)"))
            continue
        o, ex = extras(out)
        rel, how = check_lld(model, d, lam, f, o, ex)
        print(f"{case}: {dt:.3f} s, E[R] {o['mean_response_time']:.10g}, est {ex.get('mean_response_time_error_estimate')}, {how} rel {rel:.1e}")
        slowest = max(slowest, (dt, case))
    print(f"LL(d) slowest: {slowest[1]} {slowest[0]:.3f} s")
    slow2 = (0.0, "")
    print("LCFS limit (d = 2, 3): case, seconds, mean copies, E[B] check")
    for d in [2, 3]:
        for lam in [0.1, 0.5, 0.8, 0.9, 0.94]:
            dt, out, err = run("models/redundancy-lcfs-limit.toml", [f"d={d}", f"lambda={lam}"], limit=120)
            case = f"LCFS limit d={d} lambda={lam}"
            if out is None:
                print(f"{case}: FAILED {err} ({dt:.2f} s)")
                slow2 = max(slow2, (dt, case + " (failed)"))
                continue
            o, ex = extras(out)
            eb = 1 / (d * (1 - lam))
            print(f"{case}: {dt:.3f} s, copies {ex.get('mean_copies_per_server')}, E[B] rel {abs(ex['busy_period_mean'] - eb) / eb:.1e}, tail floor {ex.get('tail_floor')}, tail rel est {ex.get('tail_relative_error_estimate')}")
            slow2 = max(slow2, (dt, case))
    print(f"LCFS slowest: {slow2[1]} {slow2[0]:.3f} s")


if __name__ == "__main__":
    main()
