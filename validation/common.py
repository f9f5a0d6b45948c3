"""Shared helper of the validation scripts: compare a recomputed value with the value written
in the script (the same number the Rust tests use) and remember failures."""

import sys

_failures = []


def check(name, got, want, tol):
    """Print one line; record a failure when |got - want| > tol."""
    ok = abs(got - want) <= tol
    print(f"{'ok  ' if ok else 'FAIL'} {name}: computed {got:.10g}, written {want:.10g} (tol {tol:g})")
    if not ok:
        _failures.append(name)


def check_rel(name, got, want, rtol):
    """Relative version of `check`."""
    check(name, got, want, rtol * abs(want))


def finish():
    """Exit non-zero if any check failed."""
    if _failures:
        print(f"{len(_failures)} check(s) failed: {', '.join(_failures)}")
        sys.exit(1)
    print("all checks passed")
