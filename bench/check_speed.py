#!/usr/bin/env python3
"""Speed of `mfq check` and how closely it (and `mfq report`) keeps `--max-seconds`.

Issue 20, target 3 (the checker: JSQ(2) at lambda = 0.99 under 1 s, the PS pair approximation
of redundancy at K = 60 under 10 s, with the same verdict) and issue 16, class 1 (every phase
honours `--max-seconds` within about a second). Standard library only.

Each case runs the release binary as a user would (`mfq check FILE --json`), checks the answer
before it reports a time (the verdict word; the fixed point's residual; for JSQ(2) x* against
the closed form x_k = lambda^(2^k - 1), Mitzenmacher, IEEE TPDS 12(10) 2001, Theorem 3) and
prints the wall time and the CPU time of the process (user + system, all threads). With
`--baseline OTHER_MFQ` (e.g. a binary built from main) the same cases run with it in the same
run and the ratio is printed.

    python3 bench/check_speed.py                       # target/release/mfq
    python3 bench/check_speed.py --baseline OTHER_MFQ   # e.g. a build of main
    python3 bench/check_speed.py --pair-limit 600      # let the pair case run up to 10 minutes

Overrun cases: models whose check or report used to outlast `--max-seconds` (an uninterruptible
dense Schur decomposition of a 246-state Jacobian, 0.8 s each); the figure is wall time minus
the limit.
"""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(binary, args):
    """Runs `binary args` from the repository root: (exit code, stdout, wall s, cpu s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([binary] + args, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.returncode, p.stdout, wall, cpu


def check_case(binary, model, sets, limit, out):
    args = ["check", model, "--json", "--out", out, "--max-seconds", str(limit)]
    for s in sets:
        args += ["--set", s]
    code, stdout, wall, cpu = run(binary, args)
    line = stdout.strip().splitlines()[-1] if stdout.strip() else "{}"
    report = json.loads(line)
    verdict = report.get("verdict", {}).get("verdict", "none (exit %d)" % code)
    fp = report.get("fixed_point", {})
    return verdict, fp, wall, cpu


def jsq_closed_form_error(fp, lam):
    x = fp.get("x", [])
    return max((abs(v - lam ** (2 ** (k + 1) - 1)) for k, v in enumerate(x)), default=math.inf)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mfq", default=os.path.join(ROOT, "target", "release", "mfq"))
    ap.add_argument("--baseline", help="another mfq binary timed on the same cases in the same run")
    ap.add_argument("--pair-limit", type=float, default=120.0, help="--max-seconds of the pair case")
    a = ap.parse_args()
    binaries = [("mfq", a.mfq)] + ([("baseline", a.baseline)] if a.baseline else [])
    out = tempfile.mkdtemp(prefix="mfq-check-bench-")
    print("load average:", " ".join("%.2f" % v for v in os.getloadavg()))
    print("| case | target | mfq wall s (cpu s) | baseline wall s | ratio | correctness check |")
    print("|---|---|---|---|---|---|")
    cases = [
        ("check JSQ(2), lambda = 0.99", "models/jsq-d2.toml", ["lambda=0.99"], 60.0, "< 1 s", "certified"),
        ("check Red(2) PS pair, K = 60", "models/redundancy-ps-pair.toml", [], a.pair_limit, "< 10 s", None),
    ]
    for name, model, sets, limit, target, want in cases:
        res = {}
        for tag, b in binaries:
            res[tag] = check_case(b, model, sets, limit, out)
        verdict, fp, wall, cpu = res["mfq"]
        ok = "verdict %s, x* residual %.1e" % (verdict, fp.get("residual", math.nan))
        if "jsq" in model:
            ok += ", max |x* - closed form| %.1e" % jsq_closed_form_error(fp, 0.99)
        if want is not None and verdict != want:
            ok += " (EXPECTED %s)" % want
        base = res.get("baseline")
        bcol = "%.2f (%.2f cpu, %s)" % (base[2], base[3], base[0]) if base else "-"
        ratio = "%.1fx" % (base[2] / wall) if base else "-"
        print("| %s | %s | %.2f (%.2f) | %s | %s | %s |" % (name, target, wall, cpu, bcol, ratio, ok))
    overruns = [
        ("check", "models/sq2-h2.toml", ["job_size.scv=100"]),
        ("report", "models/sq2-h2.toml", ["job_size.scv=100"]),
        ("check", "models/pod-li-h2.toml", ["job_size.scv=1000"]),
        ("check", "models/jiq-h2.toml", ["job_size.scv=1000"]),
        ("check", "models/pod-errors-li.toml", ["d=10", "eps=0.09", "lambda=0.9999"]),
        ("check", "models/pod-errors-ld.toml", ["g=10", "d=10"]),
    ]
    for cmd, model, sets in overruns:
        for limit in (1, 2, 5):
            cols = []
            for tag, b in binaries:
                args = [cmd, model, "--out", out, "--max-seconds", str(limit)]
                for s in sets:
                    args += ["--set", s]
                code, _, wall, cpu = run(b, args)
                cols.append((code, wall))
            code, wall = cols[0]
            bcol = "%.2f over" % (cols[1][1] - limit) if len(cols) > 1 else "-"
            print(
                "| %s %s %s --max-seconds %d | overrun < 1 s | %.2f over (exit %d) | %s | - | exit code 0 (finished) or 4 (time limit) |"
                % (cmd, os.path.basename(model), " ".join(sets), limit, wall - limit, code, bcol)
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
