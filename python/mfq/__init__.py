"""mfq: mean-field models of large-scale load balancing, with the Rust core of the mfq workspace.

JSQ(d), Pod with comparison errors, JIQ, heterogeneous servers, phase-type job sizes, LL(d),
redundancy-d, opinion dynamics and user-defined models (``mfq.models()``): fixed points with
their tails, Jacobians, transients, the refined mean field, the uniqueness / global-attraction
check, finite-N simulation and parameter sweeps. Every call goes to the same front door
(the Rust crate ``mfq``) as the ``mfq`` command. See docs/python.md.

    >>> import mfq
    >>> fp = mfq.Model(kind="jsq", lam=0.9, d=2).fixed_point()
    >>> round(fp.mean_response_time, 6)   # Mitzenmacher 2001: sum_k 0.9^(2^k - 2)
    2.614057
"""

from . import _mfq
from ._errors import Error, InvalidInput, NotConverged, Unstable
from ._model import Model, exact, models
from ._results import CheckResult, Estimate, Exact, FixedPoint, Refined, Result, Simulation, Trajectory
from ._sweep import SweepResult, sweep

__version__: str = _mfq.__version__

__all__ = [
    "Model", "models", "exact", "Exact", "sweep", "SweepResult", "Result", "FixedPoint", "Trajectory", "Refined", "Estimate",
    "Simulation", "CheckResult", "Error", "InvalidInput", "Unstable", "NotConverged", "__version__",
]  # fmt: skip
