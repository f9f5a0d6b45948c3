"""A grid of JSQ(d) fixed points and finite-N simulations on Dask distributed (docs/python.md).

Each point is a plain call on picklable values (a model in, results out), so Dask ships it to
its workers as it is. Here a 2-worker LocalCluster; on a cluster, a dask-jobqueue cluster
(e.g. SLURMCluster) in its place. Run: python examples/dask_grid.py
"""

from typing import Dict, List, Sequence, Tuple

import mfq


def grid_point(lam: float, d: int, servers: int, time: float = 1000.0, seed: int = 1) -> Dict[str, object]:
    """The mean field, its refined correction and a simulation of JSQ(d) at one point."""
    m = mfq.Model(kind="jsq", lam=lam, d=d)
    fp = m.fixed_point()
    sim = m.simulate(servers, time=time, warmup=time / 10, replications=2, seed=seed)
    return {"lambda": lam, "d": d, "servers": servers, "fixed_point": fp, "simulation": sim}


def grid(lams: Sequence[float], ds: Sequence[int]) -> List[Tuple[float, int]]:
    """The points of the grid, in order."""
    return [(lam, d) for d in ds for lam in lams]


def run_on_dask(points: List[Tuple[float, int]], servers: int, time: float, n_workers: int = 2, processes: bool = True) -> List[Dict[str, object]]:
    """Every point on a LocalCluster of ``n_workers`` single-threaded workers (processes, or
    threads of this process with ``processes=False``)."""
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            futures = [client.submit(grid_point, lam, d, servers, time, pure=False) for lam, d in points]
            return client.gather(futures)


if __name__ == "__main__":
    points = grid([0.5, 0.7, 0.9, 0.95], [2, 3])
    for r in run_on_dask(points, servers=100, time=2000.0):
        fp, sim = r["fixed_point"], r["simulation"]
        t = sim.mean_response_time
        print(f"lambda = {r['lambda']:.2f}  d = {r['d']}  T mean field {fp.mean_response_time:.4f}  "
              f"T(N = {r['servers']}) simulated {t.mean:.4f} +- {t.half_width:.4f}")  # fmt: skip
