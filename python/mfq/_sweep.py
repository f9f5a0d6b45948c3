"""``mfq.sweep``: fixed points over one or two parameters, as numpy columns (the front door's
``mfq::sweep::sweep``: curves in parallel, continuation along each curve)."""

import json
from typing import Any, Dict, Sequence

import numpy as np

from . import _mfq
from ._errors import InvalidInput
from ._model import Model, _name

__all__ = ["sweep", "SweepResult"]


class SweepResult(dict):  # type: ignore[type-arg]
    """A sweep as a dict of equal-length numpy columns, one row per point (curve by curve, in x
    order): the swept parameters (float64), ``status`` (str: ``"solved"``, ``"unstable"``,
    ``"failed"``), ``reason`` (str, empty when solved), ``mean_response_time``,
    ``mean_queue_length``, ``prob_wait``, ``residual`` (float64, NaN where not solved),
    ``truncation``, ``iterations`` (int64, -1 where not solved); and ``tails``: a list of float64
    arrays ``P(Q >= k)`` (empty where not solved). Pickles as a dict."""

    def to_pandas(self) -> Any:
        """The columns as a ``pandas.DataFrame`` (``tails`` left out). Needs pandas."""
        import pandas as pd  # optional dependency

        return pd.DataFrame({k: v for k, v in self.items() if k != "tails"})


def sweep(model: Model, *, max_seconds: float = None, **axes: Sequence[float]) -> SweepResult:  # type: ignore[assignment]
    """Fixed points of ``model`` over one or two parameters: ``mfq.sweep(m, lam=np.linspace(0.5,
    0.95, 10), d=[2, 3])``. The first keyword is the x axis, the second gives one curve per
    value. Points outside the stability region have status ``"unstable"``.

    Raises:
        InvalidInput: no axis or more than two, an empty axis, a name that is not a key of the
            model, or a model invalid at its base values.
    """
    if not 1 <= len(axes) <= 2:
        raise InvalidInput(f"sweep takes one or two axes, got {len(axes)}", "axes", str(len(axes)), "one or two parameters")
    names = [_name(k) for k in axes]
    values = [np.asarray(v, dtype=np.float64).ravel().tolist() for v in axes.values()]
    for name, v in zip(names, values):
        if not v:
            raise InvalidInput(f"{name}: an empty axis", name, "[]", "at least one value")
    curve_name, curve_values = (names[1], values[1]) if len(axes) == 2 else (None, None)
    r = json.loads(_mfq.sweep(model.to_toml(), names[0], values[0], curve_name, curve_values, max_seconds))
    points = r["points"]
    cols: Dict[str, Any] = {names[0]: np.asarray([p["x"] for p in points], dtype=np.float64)}
    if curve_name is not None:
        cols[curve_name] = np.asarray([p["curve"] for p in points], dtype=np.float64)
    st = [p["status"] for p in points]
    cols["status"] = np.asarray([s["status"] for s in st], dtype=str)
    cols["reason"] = np.asarray([s.get("reason", "") for s in st], dtype=str)

    def col(key: str, dtype: Any, missing: Any) -> np.ndarray:
        vals = [s.get(key) for s in st]
        return np.asarray([missing if v is None else v for v in vals], dtype=dtype)

    cols["mean_response_time"] = col("mean_response_time", np.float64, np.nan)
    cols["mean_queue_length"] = col("mean_queue_length", np.float64, np.nan)
    cols["prob_wait"] = col("prob_wait", np.float64, np.nan)
    cols["residual"] = col("residual", np.float64, np.nan)
    cols["truncation"] = col("levels", np.int64, -1)
    cols["iterations"] = col("iterations", np.int64, -1)
    cols["tails"] = [np.asarray(s.get("tail", []), dtype=np.float64) for s in st]
    return SweepResult(cols)
