"""A small grid on a 2-worker Dask LocalCluster of worker processes (examples/dask_grid.py):
every point equals the in-process result (same model, same seed: the same fixed point and the
same simulation), so models and results crossed the process boundary intact (pickled)."""

import os
import pickle
import sys

import pytest

from conftest import ROOT

pytest.importorskip("dask.distributed")

EXAMPLES = str(ROOT / "examples")


def test_grid_on_local_cluster_matches_in_process(monkeypatch):
    # the workers import the example's functions by name, as they would any module of a project
    monkeypatch.syspath_prepend(EXAMPLES)
    monkeypatch.setenv("PYTHONPATH", EXAMPLES + os.pathsep + os.environ.get("PYTHONPATH", ""))
    import dask_grid as ex

    points = ex.grid([0.6, 0.9], [2, 3])
    remote = ex.run_on_dask(points, servers=20, time=100.0, n_workers=2, processes=True)
    assert len(remote) == len(points)
    assert pickle.loads(pickle.dumps(remote)) == remote
    for (lam, d), r in zip(points, remote):
        local = ex.grid_point(lam, d, 20, 100.0)
        assert (r["lambda"], r["d"]) == (lam, d)
        assert r["fixed_point"] == local["fixed_point"]
        sim_r, sim_l = r["simulation"], local["simulation"]
        # same seed, same report (the wall-clock fields aside)
        for f in ("tail", "mean_queue_length", "mean_response_time", "throughput", "prob_wait", "events"):
            a, b = getattr(sim_r, f), getattr(sim_l, f)
            assert (a == b).all() if hasattr(a, "all") else a == b, f
    # and the mean field is the closed form (Mitzenmacher 2001)
    fp = remote[1]["fixed_point"]
    assert abs(fp.mean_response_time - sum(0.9 ** (2**k - 2) for k in range(1, 40))) < 1e-9
    sys.modules.pop("dask_grid", None)
