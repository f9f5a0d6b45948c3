"""A small grid on a 2-worker Dask LocalCluster (examples/dask_grid.py): every point equals the
in-process result (same model, same seed: the same fixed point and the same simulation).

The workers are threads (fast to start on the 2-core CI machine); what a process cluster adds is
pickling, which is checked here on the results themselves (and in test_api.py)."""

import importlib.util
import pickle
import sys

import pytest

from conftest import ROOT

pytest.importorskip("dask.distributed")


def load_example():
    spec = importlib.util.spec_from_file_location("dask_grid", ROOT / "examples" / "dask_grid.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["dask_grid"] = module  # pickled functions refer to their module by name
    spec.loader.exec_module(module)
    return module


def test_grid_on_local_cluster_matches_in_process():
    ex = load_example()
    points = ex.grid([0.6, 0.9], [2, 3])
    # worker processes import the example by path too: ship the function by value
    import cloudpickle

    cloudpickle.register_pickle_by_value(ex)
    remote = ex.run_on_dask(points, servers=20, time=100.0, n_workers=2, processes=False)
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
