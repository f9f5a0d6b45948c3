#!/usr/bin/env python3
"""Times `mfq fixed-point` of the LL(d) model over a grid of its parameter range and of the
LCFS limit of redundancy-d over lambda, checks each answer, and prints every point and the
slowest (issue 20 point 2). Checks: exponential LL(d), E[R] = sum_n lambda^(dn)/(1 + n(d-1))
(Hellemans and Van Houdt, SIGMETRICS 2018); LL(1) = M/G/1, Pollaczek-Khinchine E[R] = E[S] +
lambda E[S^2]/(2(1 - rho)); otherwise Brumelle's H = lambda G between the two integrals
(mean workload = rho E[W] + lambda E[S^2]/2). The LCFS limit is checked against its exact
identity E[B] = 1/(d(1 - lambda)) (docs/models/redundancy.md).

Usage: python3 bench/lcfs_lld.py [path/to/mfq] [--lcfs-only]   (release build: cargo build --release -p mfq-cli)
"""
import json, math, os, subprocess, sys, time

MFQ = next((a for a in sys.argv[1:] if not a.startswith("--")), "target/release/mfq")


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
    if "--lcfs-only" not in sys.argv:
        lld()
    lcfs()


def lld():
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


def lcfs():
    # the old uniform-grid solver (before the adaptive grids), same machine, earlier run
    # (mean copies per server; levels = 60): the baseline figures of bench/rows-lcfs.md
    old = {(2, 0.5): 0.7918004130431877, (2, 0.8): 2.284523781153748, (2, 0.9): 3.940478592732380, (2, 0.94): 5.580997530905509,
           (3, 0.5): 0.7511109736590009, (3, 0.8): 1.994175456335947, (3, 0.9): 3.206600662423476, (1, 0.5): 1.0, (1, 0.8): 4.0}
    slow2 = (0.0, "")
    print("LCFS limit: case, wall s, CPU s, mean copies, error estimate, E[B] check, old solver")
    for d in [1, 2, 3]:
        for lam in [0.5, 0.8, 0.9, 0.94, 0.97, 0.99, 0.995]:
            t0 = time.perf_counter(); c0 = os.times()
            dt, out, err = run("models/redundancy-lcfs-limit.toml", [f"d={d}", f"lambda={lam}", "truncation.levels=400"], limit=120)
            c1 = os.times(); cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
            case = f"LCFS limit d={d} lambda={lam}"
            if out is None:
                print(f"{case}: REFUSED/FAILED {err} ({dt:.2f} s)")
                continue
            o, ex = extras(out)
            eb = 1 / (d * (1 - lam))
            m, est = ex.get("mean_copies_per_server"), ex.get("mean_copies_error_estimate")
            ref = old.get((d, lam))
            vs = f", old solver {ref:.10g} (diff {abs(m - ref):.1e}, within est: {abs(m - ref) <= max(est, 1e-9)})" if ref else ""
            print(f"{case}: {dt:.3f} s wall, {cpu:.3f} s CPU, copies {m:.10g} est {est:.1e}, E[B] rel {abs(ex['busy_period_mean'] - eb) / eb:.1e}{vs}")
            slow2 = max(slow2, (dt, case))
    print(f"LCFS slowest: {slow2[1]} {slow2[0]:.3f} s")


if __name__ == "__main__":
    main()
