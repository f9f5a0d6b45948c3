"""``mfq.sweep``: fixed points over any number of parameters (numbers, names, tables), as numpy
columns (the front door's ``mfq::sweep::sweep_models``: lines in parallel, continuation along
each line)."""

import json
import re
import warnings
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from . import _mfq
from ._errors import InvalidInput, NotConverged
from ._model import Model, _flag, _name, _seconds, toml_value
from ._results import _equal

__all__ = ["sweep", "SweepResult"]


class SweepResult(dict):  # type: ignore[type-arg]
    """A sweep as a dict of equal-length numpy columns, one row per point (curve by curve, in x
    order): the swept parameters (float64; str for names and tables), ``status`` (str: ``"solved"``, ``"unstable"``,
    ``"failed"``, ``"invalid"``; and for a model with a stability region but no queue-length model,
    such as redundancy with identical copies or k-of-n, ``"stable"`` or ``"stability-unknown"``), ``reason`` (str, empty when solved), ``mean_response_time``,
    ``mean_queue_length``, ``prob_wait``, ``residual`` (float64, NaN where not solved),
    ``truncation``, ``iterations`` (int64, -1 where not solved); and ``tails``: a list of float64
    arrays ``P(Q >= k)`` (empty where not solved). Pickles as a dict."""

    def __eq__(self, other: object) -> bool:
        """Equal column by column as the other results compare (NaN equal to NaN, numpy arrays
        by value and dtype)."""
        return isinstance(other, SweepResult) and _equal(dict(self), dict(other))

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> Dict[str, Any]:
        """The columns as a plain dict (arrays stay numpy arrays), as every result has."""
        return dict(self)

    def to_pandas(self) -> Any:
        """The columns as a ``pandas.DataFrame`` (``tails`` left out). Needs pandas."""
        import pandas as pd  # optional dependency

        return pd.DataFrame({k: v for k, v in self.items() if k != "tails"})


_BARE_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def _axis(name: str, given: Any) -> Tuple[List[float], Optional[List[str]], List[Any]]:
    """(values, labels, column values) of one axis: numbers, or names / tables (categorical)."""
    scalar = isinstance(given, (str, bytes, Mapping, bool, int, float, np.generic)) or (isinstance(given, np.ndarray) and given.ndim == 0)
    if scalar or not hasattr(given, "__iter__"):
        raise InvalidInput(f"{name}: a sweep takes a list of values, got {given!r}", name, repr(given), "a list of numbers, names or dicts")
    if isinstance(given, np.ndarray) and given.ndim != 1:
        # it was flattened into one axis of all its entries
        allowed = "a 1-D sequence of numbers, names or dicts, one per point"
        raise InvalidInput(f"{name}: an array of shape {given.shape}; allowed: {allowed}", name, f"an array of shape {given.shape}", allowed)
    size = given.size if isinstance(given, np.ndarray) else len(given) if hasattr(given, "__len__") else None
    cap = _mfq.MAX_AXIS_POINTS
    # the front door's cap (`mfq::sweep::MAX_AXIS_POINTS`, as a range start:end:points of `mfq
    # sweep`), said before a large grid is copied
    if size is not None and size > cap:
        raise InvalidInput(f"{name}: {size} values; allowed: at most {cap} values per axis", name, f"{size} values", f"at most {cap} values per axis")
    items = np.asarray(given).ravel().tolist() if isinstance(given, np.ndarray) else list(given)
    if not items:
        raise InvalidInput(f"{name}: an empty axis", name, "[]", "at least one value")
    items = [v.item() if isinstance(v, np.generic) else v for v in items]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
        values = [float(v) for v in items]
        return values, None, values
    labels = [v if isinstance(v, str) and _BARE_NAME.match(v) else toml_value(v, name) for v in items]
    return [float(i) for i in range(len(items))], labels, labels


def sweep(model: Model, *, max_seconds: float = None, strict: bool = True, **axes: Any) -> SweepResult:  # type: ignore[assignment]
    """Fixed points of ``model`` over any number of parameters: ``mfq.sweep(m,
    lam=np.linspace(0.5, 0.95, 10), d=[2, 3])``. An axis is a list of numbers, of names
    (``discipline=["ps", "fcfs"]``) or of dicts (table parameters: ``job_size=[{"law":
    "exponential"}, {"law": "h2", "scv": 4.0}]``). The first numeric axis is the x axis, the next
    axis gives one curve per value, further axes are facets (rows for every combination). A
    name or dict column holds the names (dicts as their TOML text). Points outside the stability
    region have status ``"unstable"``; a point whose parameters are invalid (``d=[0, 2]``, a NaN
    ``lambda``) has status ``"invalid"`` with the error, naming the field, in its ``reason``: the
    other points are still solved, and a ``RuntimeWarning`` says how many points are invalid and
    why the first is (``mfq sweep`` writes the other points and exits with code 2).

    ``max_seconds`` bounds the whole grid: when it runs out (or Ctrl-C stops the grid) before every
    point is solved, the finished points are kept, as ``mfq sweep`` keeps them in
    ``sweep-partial.csv`` (exit code 4): with ``strict=True`` (default) in the
    :class:`NotConverged` raised (``.result``, ``.status == "stopped"``), with ``strict=False``
    returned with a ``RuntimeWarning``.

    Warns:
        RuntimeWarning: points with invalid parameters (``warnings.filterwarnings("error")`` turns
            it into an exception); a grid stopped early, with ``strict=False``.

    Raises:
        InvalidInput: no axis, an empty axis, an axis of more than ``MAX_AXIS_POINTS`` (100000)
            values (refused at once, naming the axis and its size), a name that is not a key of the model, a name or
            table the key does not take (with the allowed values), or a model invalid at its
            base values. NotConverged (``strict``): ``max_seconds`` ran out before every point was
            solved (the finished points in ``.result``).
    """
    strict = _flag("strict", strict)
    if not axes:
        raise InvalidInput("sweep takes at least one axis, got 0", "axes", "0", "one or more parameters")
    parsed = [(_name(k), *_axis(_name(k), v)) for k, v in axes.items()]
    first_numeric = next((i for i, a in enumerate(parsed) if a[2] is None), 0)
    parsed.insert(0, parsed.pop(first_numeric))
    arg = [(name, values, labels) for name, values, labels, _ in parsed]
    r = json.loads(_mfq.sweep_axes(model.to_toml(), arg, _seconds(max_seconds)))
    points = r["points"]

    def column(i: int, positions: List[float]) -> np.ndarray:
        _, _, labels, shown = parsed[i]
        if labels is None:
            return np.asarray(positions, dtype=np.float64)
        return np.asarray([shown[int(p)] for p in positions], dtype=str)

    cols: Dict[str, Any] = {parsed[0][0]: column(0, [p["x"] for p in points])}
    if len(parsed) > 1:
        cols[parsed[1][0]] = column(1, [p["curve"] for p in points])
    for j in range(2, len(parsed)):
        cols[parsed[j][0]] = column(j, [p["facets"][j - 2] for p in points])
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
    # as `mfq sweep`, which writes every point and then exits with code 2: a grid keeps going,
    # but invalid parameters are said, not only marked (warnings.filterwarnings("error") raises)
    invalid = [i for i, s in enumerate(st) if s["status"] == "invalid"]
    if invalid:
        i = invalid[0]
        at = ", ".join(f"{a[0]} = {cols[a[0]][i]}" for a in parsed)
        warnings.warn(
            f"{len(invalid)} of {len(points)} sweep points have invalid parameters (status 'invalid'; the reason column says why), "
            f"the first at {at}: {st[i].get('reason', '')}", RuntimeWarning, stacklevel=2,
        )  # fmt: skip
    result = SweepResult(cols)
    if r.get("partial"):
        # the front door's reason already says where it stopped and how many points finished
        message = f"sweep {r['partial']}"
        if strict:
            raise NotConverged(message, "stopped", result)
        warnings.warn(message, RuntimeWarning, stacklevel=2)
    return result
