"""``mfq.Model``: a model (a kind with its parameters and truncation) and one call per job.

A thin layer over the compiled ``mfq._mfq.Core``, which calls the front door crate ``mfq``
(``mfq::Model``, the calls the ``mfq`` command makes). This file only turns keyword arguments
into model-file text and the compiled module's plain values into result objects.
"""

import json
import math
import os
import re
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _mfq
from ._errors import InvalidInput, NotConverged
from ._results import CheckResult, Estimate, Exact, FixedPoint, Refined, Simulation, Trajectory

__all__ = ["Model", "models", "toml_value"]

# Python names of parameters that are keywords or clash: `lam` is `lambda`
_ALIASES = {"lam": "lambda", "lambda_": "lambda"}
_TOP_LEVEL = ("title", "source", "truncation")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_value(value: Any, name: str = "value") -> str:
    """``value`` as a TOML value: numbers, booleans, strings, lists (arrays) and dicts (inline
    tables). numpy scalars and arrays are accepted.

    Raises:
        InvalidInput: for a value of another type (``field`` = ``name``).
    """
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: the same escapes
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, name) for v in value) + "]"
    if isinstance(value, Mapping):
        items = []
        for k, v in value.items():
            key = k if _BARE_KEY.match(str(k)) else json.dumps(str(k))
            items.append(f"{key} = {toml_value(v, f'{name}.{k}')}")
        return "{" + ", ".join(items) + "}"
    raise InvalidInput(
        f"{name} = {value!r} is not allowed: a number, boolean, string, list or dict", name, repr(value),
        "a number, boolean, string, list or dict",
    )  # fmt: skip


def _name(key: str) -> str:
    return _ALIASES.get(key, key)


def _renamed(params: Mapping[str, Any], prefix: str = "model.") -> Dict[str, Any]:
    """``params`` with the Python names of keys (``lam``, ``lambda_``) replaced by the file's
    (``lambda``). Two names of one key (``lam=0.5`` and ``lambda=0.6``) raise InvalidInput naming
    the key: the model file would hold it twice (a TOML duplicate key), an override would drop one."""
    out: Dict[str, Any] = {}
    given: Dict[str, str] = {}
    for k, v in params.items():
        name = _name(k)
        if name in out:
            allowed = f"one of {given[name]!r} and {k!r}, not both"
            raise InvalidInput(
                f"{prefix}{name} is given twice, as {given[name]!r} and {k!r}: allowed: {allowed}", prefix + name,
                f"{given[name]} = {toml_value(out[name], name)}, {k} = {toml_value(v, name)}", allowed,
            )  # fmt: skip
        out[name], given[name] = v, k
    return out


def _model_text(spec: Mapping[str, Any]) -> str:
    """Model-file text of a dict: either the file's structure (``{"model": {...}, "truncation":
    {...}}``) or the ``[model]`` table itself with optional ``title``, ``source``, ``truncation``."""
    if "model" in spec:
        top = {k: v for k, v in spec.items() if k != "model"}
        table = _renamed(spec["model"])
    else:
        top = {k: v for k, v in spec.items() if k in _TOP_LEVEL}
        table = _renamed({k: v for k, v in spec.items() if k not in _TOP_LEVEL})
    top, table = _dotted(top, table)
    if "kind" not in table:
        raise InvalidInput("model.kind is missing: name a kind (see mfq.models())", "model.kind", None, "a kind from mfq.models()")
    lines = [f"{k} = {toml_value(v, k)}" for k, v in top.items() if k in ("title", "source")]
    unknown = set(top) - set(_TOP_LEVEL)
    if unknown:
        key = sorted(unknown)[0]
        raise InvalidInput(f"{key} is not a key of a model file (allowed: title, source, model, truncation)", key, None, "title, source, model, truncation")
    lines.append("[model]")
    lines += [f"{k} = {toml_value(v, 'model.' + k)}" for k, v in table.items()]
    if top.get("truncation"):
        lines.append("[truncation]")
        lines += [f"{k} = {toml_value(v, 'truncation.' + k)}" for k, v in dict(top["truncation"]).items()]
    return "\n".join(lines) + "\n"


def _dotted(top: Dict[str, Any], table: Dict[str, Any]) -> "tuple[Dict[str, Any], Dict[str, Any]]":
    """The dotted keys of a model's dict or keywords in their tables, as ``with_`` reads them
    (``--set``): ``truncation.levels`` in ``[truncation]`` (it was a key ``"truncation.levels"``
    of ``[model]``, refused as an unknown parameter, and a misspelt ``truncation.levelz`` was
    not said to be an unknown truncation key), ``model.d`` in ``[model]``, ``job_size.law`` in
    the table ``job_size`` of ``[model]``; each given value replaces the one of the dict."""
    given = list(top.items())
    top = {k: v for k, v in given if "." not in k}
    out: Dict[str, Any] = {k: v for k, v in table.items() if "." not in k}
    for k, v in [(k, v) for k, v in table.items() if "." in k] + [(k, v) for k, v in given if "." in k]:
        head, rest = k.split(".", 1)
        if head == "truncation":
            top["truncation"] = {**dict(top.get("truncation") or {}), rest: v}
            continue
        if head == "model":
            head, _, rest = rest.partition(".")
            if not rest:
                out[_name(head)] = v
                continue
        # a copy of each table on the way (the caller's dicts are not changed)
        node = out[head] = dict(out[head]) if isinstance(out.get(head), Mapping) else {}
        *inner, last = rest.split(".")
        for p in inner:
            node[p] = dict(node[p]) if isinstance(node.get(p), Mapping) else {}
            node = node[p]
        node[last] = v
    return top, out


def _overrides(params: Mapping[str, Any]) -> List[str]:
    return [f"{k}={toml_value(v, k)}" for k, v in _renamed(params, "").items()]


def _number(v: Any) -> float:
    """A float of the JSON text (serde_json writes NaN, e.g. an estimate without data, as null)."""
    return math.nan if v is None else float(v)


def _text(v: Any) -> str:
    """A value given for an option, as text (``InvalidInput.value``): numbers as Python prints
    them (``-1``, ``10.5``), anything else as its repr (``'1'``)."""
    if isinstance(v, np.generic):
        v = v.item()
    return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else repr(v)


# the largest value of the compiled module's unsigned integer types (u64 and usize; u32)
_U64 = 2**64 - 1
_U32 = 2**32 - 1

# what the core allows for each integer option, in its own words (the Rust checks: SimOptions,
# FixedPointOptions, CheckOptions, ExactOptions, Truncation::validate); a value of the right
# type reaches the core, which gives the same text (python/tests/test_user_report.py compares them)
_ALLOWED = {
    "servers": "an integer in [1, 100000000]",
    "replications": "an integer in [1, 10000]",
    "batches": "an integer in [2, 100000] (batch means need at least two batches)",
    "seed": f"an integer in [0, {_U64}]",
    "buffer": "an integer >= 1, or none for an unlimited buffer",
    "max_iter": "an integer >= 1",
    "starts": "an integer in [1, 100000]",
    "levels": "an integer in [1, 10000000]",
    "max_states": "an integer >= 1",
    # exact(servers=...): mfq_sim::exact::ExactOptions::validate
    "exact_servers": "an integer in [1, 100000]",
}
_EXACT_SERVERS = 100_000


def _integer(name: str, v: Any, maximum: int = _U64, optional: bool = False, allowed: Optional[str] = None) -> Any:
    """``v`` as an ``int`` for the integer option ``name``: Python and numpy integers (not
    ``bool``, not floats, even integral ones: as ``range()``), from 0 up to ``maximum``, the
    largest value the compiled module's type holds. Raises InvalidInput naming the option, with
    the core's allowed range, for anything else (a negative count was an ``OverflowError``, a
    float a ``TypeError``); the core checks its narrower range itself. ``None`` passes when
    ``optional``; ``allowed`` replaces the core's words for ``name``."""
    if type(v) is int and 0 <= v <= maximum:  # the common case, first
        return v
    if v is None and optional:
        return None
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 0 <= int(v) <= maximum:
        return int(v)
    if allowed is None:
        allowed = _ALLOWED[name] + (", or None" if optional and name != "buffer" else "")
    raise InvalidInput(f"{name} = {v!r} is not allowed: {allowed}", name, _text(v), allowed)


def _flag(name: str, v: Any) -> bool:
    """``v`` as a ``bool`` for the boolean option ``name`` (``strict``): ``True`` or ``False``
    (numpy's too), nothing else. ``strict="no"`` was read as true (a non-empty string); raises
    InvalidInput naming the option instead."""
    if v is True or v is False:  # the common case, first
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    allowed = "True or False"
    raise InvalidInput(f"{name} = {v!r} is not allowed: {allowed}", name, _text(v), allowed)


def _start(core: Any, name: str, x0: Any, levels: Optional[int] = None) -> np.ndarray:
    """A start ``x0`` given by name (``"empty"``, ``"full"``, ``"initial"``: ``mfq::START_NAMES``,
    as ``mfq solve --x0 full``) as the front door builds it (``mfq::Model::named_state``) at
    truncation level ``levels``; any other ``x0`` as :func:`_state`. Another name raises
    InvalidInput naming the argument and the names allowed; ``"initial"`` for a model that
    declares no ``[model.initial]`` state raises InvalidInput saying so."""
    if isinstance(x0, str):
        x = core.named_state(x0, levels)
        if x is None:
            names = ", ".join(repr(n) for n in _mfq.START_NAMES)
            allowed = (
                f"{names} (named starts, as mfq solve --x0; 'initial' is the model file's [model.initial]), "
                "or a 1-D sequence of numbers (a state of the model, in its layout)"
            )
            raise InvalidInput(f"{name} = {x0!r} is not allowed: {allowed}", name, repr(x0), allowed)
        return x
    return _state(name, x0)


def _real(name: str, v: Any, allowed: str) -> float:
    """``v`` as a ``float`` for the real option ``name`` (Python and numpy numbers, not ``bool`` or
    text: ``"1e-9"`` is refused as it is by every option of the CLI's number type). Raises
    InvalidInput naming the option; its range is the core's to check."""
    if type(v) is float:
        return v
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return float(v)
    raise InvalidInput(f"{name} = {v!r} is not allowed: {allowed}", name, _text(v), allowed)


def _state(name: str, x: Any) -> np.ndarray:
    """``x`` as a 1-D contiguous float64 array, for a state argument (``x``, ``x0``): a sequence
    or array of numbers of shape ``(n,)``. Raises InvalidInput naming the argument for another
    shape (a 2-D array was a bare ``TypeError``), a scalar, or entries that are not numbers (text,
    booleans). Whether it is a state of the model (size, finite entries, constraints) is the
    compiled module's check."""
    allowed = "a 1-D sequence of numbers (a state of the model, in its layout)"
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:  # ragged nested lists
        raise InvalidInput(f"{name} is not allowed: {allowed} ({e})", name, _short(x), allowed) from None
    if a.ndim != 1:
        raise InvalidInput(f"{name} has shape {a.shape}: allowed: {allowed}", name, f"an array of shape {a.shape}", allowed)
    if a.size and a.dtype.kind not in "iuf":
        raise InvalidInput(f"{name} holds {a.dtype} entries: allowed: {allowed}", name, _short(x), allowed)
    return np.ascontiguousarray(a, dtype=np.float64)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def _sizes(name: str, values: Any) -> List[float]:
    """System sizes ``N`` (``refined(servers=...)``, ``exact(servers=...)``, ``Refined.estimate``):
    each an integer >= 1, given as an integer or as an integral float (``np.array([10.0, 20.0])``).
    Raises InvalidInput naming the option for any other (``10.5`` was accepted and the expansion
    evaluated there; ``exact`` truncated it to 10)."""
    allowed = "integers N >= 1 (numbers of servers or objects)"
    out = []
    for v in values:
        ok = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
        n = float(v) if ok else math.nan
        if not (ok and math.isfinite(n) and n >= 1 and n.is_integer()):
            raise InvalidInput(f"{name} = {v!r} is not allowed: {allowed}", name, _text(v), allowed)
        out.append(n)
    return out


def _status(s: Any) -> str:
    """An exact chain's status tag (``"converged"``, ``"cancelled"``, ``"time-limit"``, ...)."""
    return str(s["status"]) if isinstance(s, dict) else str(s)


def exact(model: "Model", servers: Union[int, Sequence[int]] = 10, **options: Any) -> Exact:
    """``model.exact(servers, **options)``: see :meth:`Model.exact`."""
    return model.exact(servers, **options)


def _estimate(e: Mapping[str, Any]) -> Estimate:
    return Estimate(_number(e["mean"]), _number(e["half_width"]), int(e["n"]))


def _observed(r: Mapping[str, Any], name: str) -> Optional[Estimate]:
    """The estimate ``name`` of a simulation report, or None where the report omits it (a
    quantity the system simulated does not observe: ``mfq_sim::SimReport``)."""
    e = r.get(name)
    return None if e is None else _estimate(e)


def _estimate_dict(e: Dict[str, Any]) -> Dict[str, Any]:
    """A refined estimate of the core (JSON) with float64 arrays."""
    return {
        "servers": float(e["servers"]), "x": np.asarray(e["state"], dtype=np.float64),
        "tail": np.asarray(e["tail"], dtype=np.float64), "mean_queue_length": e["mean_queue_length"],
        "mean_response_time": e["mean_response_time"], "prob_wait": e["prob_wait"], "extras": dict(e["extras"]),
    }  # fmt: skip


def _seconds(max_seconds: Optional[float]) -> Optional[float]:
    """``max_seconds`` checked as the CLI's ``--max-seconds``: None (no limit) or a finite number of
    seconds > 0; anything else raises InvalidInput naming the field (a NaN limit was ignored and a
    negative one reported as a time-out before)."""
    if max_seconds is None:
        return None
    allowed = "a finite number of seconds > 0, or None (no limit)"
    number = isinstance(max_seconds, (int, float, np.integer, np.floating)) and not isinstance(max_seconds, bool)
    v = float(max_seconds) if number else math.nan
    if not (math.isfinite(v) and v > 0.0):
        # text ("1") is refused, as the docs say, not read as a number
        raise InvalidInput(f"max_seconds = {max_seconds!r} is not allowed: {allowed}", "max_seconds", _text(max_seconds), allowed)
    return v


class Model:
    """A mean-field model: a kind (``mfq.models()``) with its parameters and truncation.

    Build it from keyword arguments (``lam`` stands for ``lambda``), a dict (the ``[model]``
    table, or a whole model file's structure), a model file or its text::

        m = mfq.Model(kind="jsq", lam=0.9, d=2)
        m = mfq.Model({"kind": "pod-li", "lambda": 0.9, "d": 2, "delta": 0.1})
        m = mfq.Model.from_file("models/jsq-d2.toml")
        m2 = m.with_(lam=0.95)
        m = mfq.Model(kind="jsq", lam=0.9, d=2, **{"truncation.levels": 40})

    Dotted names reach other tables, as in :meth:`with_`: ``truncation.levels`` is the key
    ``levels`` of ``[truncation]``. Models are immutable, compare equal when their files are equal, and pickle (as their
    model-file text).

    Raises:
        InvalidInput: an unknown kind or key (``truncation.levelz`` too), a value outside its
            range (``.field``, ``.value``, ``.allowed``; the message names the dict's key as
            ``mfq.Model key model.d: ...``); a ``spec`` that is not a dict (``field == "spec"``).
    """

    __slots__ = ("_core",)

    def __init__(self, spec: Optional[Mapping[str, Any]] = None, /, **params: Any) -> None:
        # the file's names first (`lam` is `lambda`), so that a keyword replaces the dict's key
        # whichever name either uses; two names of one key in one place raise InvalidInput
        if spec is not None and not isinstance(spec, Mapping):
            allowed = "a dict of the model file's keys, e.g. {'kind': 'jsq', 'lambda': 0.9, 'd': 2}, or keywords"
            raise InvalidInput(f"spec: {spec!r} is not allowed: {allowed}", "spec", repr(spec), allowed)
        merged: Dict[str, Any] = dict(spec or {})
        extra = _renamed(params)
        if "model" in merged and extra:
            merged["model"] = {**_renamed(merged["model"]), **{k: v for k, v in extra.items() if k not in _TOP_LEVEL}}
            merged.update({k: v for k, v in extra.items() if k in _TOP_LEVEL})
        else:
            merged = {**_renamed(merged), **extra}
        # the text is the dict's: its errors name the dict's keys, not lines of the text
        self._core = _mfq.Core.from_toml(_model_text(merged), from_dict=True)

    @classmethod
    def _wrap(cls, core: "_mfq.Core") -> "Model":
        m = cls.__new__(cls)
        m._core = core
        return m

    @classmethod
    def from_toml(cls, text: str, *, max_seconds: Optional[float] = None, **overrides: Any) -> "Model":
        """The model of a model file's text (docs/guide.md), with ``overrides`` as ``--set``.
        ``max_seconds``: wall-clock limit of the parse (a generic model of 200,000 transitions
        takes about 2 s); NotConverged when it passes first."""
        return cls._wrap(_mfq.Core.from_toml(text, _overrides(overrides), _seconds(max_seconds)))

    @classmethod
    def from_file(
        cls, path: Union[str, "os.PathLike[str]"], *, max_seconds: Optional[float] = None, **overrides: Any
    ) -> "Model":
        """The model of the model file at ``path`` (e.g. ``models/jsq-d2.toml``); ``max_seconds``
        as for :meth:`from_toml`."""
        return cls._wrap(_mfq.Core.from_file(os.fspath(path), _overrides(overrides), _seconds(max_seconds)))

    def with_(self, **overrides: Any) -> "Model":
        """The same model with parameters replaced: ``m.with_(lam=0.95, d=3)``; dotted names
        reach other tables: ``m.with_(**{"truncation.levels": 40})``.

        Raises:
            InvalidInput: an unknown key or a value the key does not take; the message names the
                call and its arguments (``with_(d="two"): model.d: invalid type ...``)."""
        return Model._wrap(self._core.with_overrides(_overrides(overrides)))

    def to_toml(self) -> str:
        """The model as model-file text (``Model.from_toml(m.to_toml()) == m``)."""
        return self._core.to_toml()

    @property
    def kind(self) -> str:
        """The ``kind`` key (``"jsq"``)."""
        return self._core.kind

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Model) and self.to_toml() == other.to_toml()

    def __hash__(self) -> int:
        return hash(self.to_toml())

    def __reduce__(self):  # type: ignore[override]
        return (Model.from_toml, (self.to_toml(),))

    def __repr__(self) -> str:
        return f"mfq.Model.from_toml({self.to_toml()!r})"

    # ---- jobs -------------------------------------------------------------------------------

    def fixed_point(
        self, *, tol: float = 1e-12, max_iter: int = 500, max_seconds: Optional[float] = None,
        x0: Union[None, str, Sequence[float]] = None, strict: bool = True,
    ) -> FixedPoint:  # fmt: skip
        """The fixed point ``x*`` (``f(x*) = 0``) with its tail and observables; the truncation
        level ``K`` grows until ``x_K < truncation.tol`` unless the model fixes it.

        Args:
            tol: residual tolerance on ``max |f(x)|``. max_iter: linear solves per level.
            max_seconds: wall-clock limit. x0: a start (default: the empty state): ``"empty"``
                or ``"full"`` (the model's extremal states at its first truncation level, as
                ``mfq solve --x0 full``), ``"initial"`` (the model file's ``[model.initial]``
                state; InvalidInput when it declares none), a tail of any length ``K`` (the first truncation
                level), else a state of the model at its first truncation level; it must lie in
                the state space, as a start of :meth:`solve`.
            strict: ``True`` or ``False`` (anything else raises InvalidInput): raise
                :class:`NotConverged` when the solve did not converge (else return
                the result with its status: the last iterate ``x``, and no observables, which
                are ``None``, with ``tail`` empty).

        Raises:
            Unstable: parameters outside the stability region (``.reason``).
            InvalidInput: bad options; ``x0`` not finite, of a size the solver cannot read, or
                outside the state space (``field == "x0"``). NotConverged: see ``strict``
                (``.result`` holds the last iterate).
        """
        strict = _flag("strict", strict)
        start = None if x0 is None else _start(self._core, "x0", x0).tolist()
        tol = _real("tol", tol, "a number > 0")
        max_iter = _integer("max_iter", max_iter)
        fp = FixedPoint._trusted(self._core.fixed_point(tol, max_iter, _seconds(max_seconds), start))
        if strict and fp.status != "converged":
            raise NotConverged(f"fixed point of {fp.model}: {fp.status_message} (residual {fp.residual:.2e})", fp.status, fp)
        return fp

    def drift(self, x: Sequence[float], *, levels: Optional[int] = None) -> np.ndarray:
        """The drift ``f(x)`` (``dx/dt = f(x)``), float64 of ``x``'s shape ``(n,)``, at truncation
        level ``levels`` (default ``K = len(x)``, the tail form; other layouts pass ``levels``).

        ``x`` must be a state of the model, as a start of :meth:`solve` (``Model::check_start``):
        finite, and within ``1e-12`` of every constraint of its layout (tail form: ``0 <= x_k <= 1``
        and ``x_{k+1} <= x_k``). The rates clamp entries to ``[0, 1]``, so outside the state space
        the drift would be that of another state; it is refused, not clamped.

        Raises:
            InvalidInput: ``x`` not 1-D, of the wrong size, with a non-finite entry (named) or
                outside the state space (the broken constraint named; ``field == "x"``).
        """
        return self._core.drift(_state("x", x), _integer("levels", levels, optional=True))

    def jacobian(self, x: Sequence[float], *, levels: Optional[int] = None) -> np.ndarray:
        """The Jacobian ``J[i, j] = d f_i / d x_j`` at ``x``: float64, shape ``(n, n)``, dense
        (the model's analytic Jacobian, or forward differences). ``x`` and ``levels`` as
        :meth:`drift` (the same states are refused): on the state space it is the derivative of
        :meth:`drift` (central differences agree wherever both steps stay in it)."""
        return self._core.jacobian(_state("x", x), _integer("levels", levels, optional=True))

    def solve(
        self, t_end: float, *, x0: Union[None, str, Sequence[float]] = None, t_eval: Optional[Sequence[float]] = None,
        levels: Optional[int] = None, rtol: float = 1e-8, atol: float = 1e-12, method: str = "auto",
        max_seconds: Optional[float] = None, strict: bool = True,
    ) -> Trajectory:  # fmt: skip
        """The transient ``x(t)`` of the mean-field ODE from ``x0`` (default ``"empty"``): a named
        start, ``"empty"`` or ``"full"`` (the model's extremal states, as ``mfq solve --x0
        full``) or ``"initial"`` (the model file's ``[model.initial]`` state), at truncation
        level ``levels``, default the file's or the kind's first level; or a state, whose level
        defaults to ``len(x0)``.

        Args:
            t_end: final time (mean job sizes). t_eval: output times in ``[0, t_end]``,
                increasing (default: 101 equally spaced). method: ``"auto"`` (BDF for sparse
                models of 2000 states or more, otherwise Dopri5, switching to Rosenbrock 2(3)
                when stiff), ``"dopri5"``, ``"dop853"``, ``"rosenbrock23"``, ``"bdf"``.

        Returns:
            :class:`Trajectory` with ``t`` ``(m,)`` and ``x`` ``(m, n)``.

        Raises:
            InvalidInput: bad ``x0`` (``"initial"`` for a model without ``[model.initial]``),
                ``t_eval`` or options; a generic model with a transition that pushes the state
                out of the state space where the run ends (``field`` names the transition,
                ``model.transitions[0]``; the fixed point refuses the same model, as ``mfq solve``
                does: ``mfq::leaving_state_space``). NotConverged (``strict``): the run
                stopped early (``.result`` holds the part computed).
        """
        strict = _flag("strict", strict)
        levels = _integer("levels", levels, optional=True)
        start = _start(self._core, "x0", "empty" if x0 is None else x0, levels)
        if not (isinstance(t_end, (int, float, np.integer, np.floating)) and not isinstance(t_end, bool) and math.isfinite(t_end) and t_end > 0):
            raise InvalidInput(f"t_end = {t_end} is not allowed: a finite number > 0", "t_end", str(t_end), "a finite number > 0")
        times = np.linspace(0.0, float(t_end), 101) if t_eval is None else np.asarray(t_eval, dtype=np.float64)
        if times.ndim != 1 or times.size == 0 or not np.all(np.isfinite(times)) or times[0] < 0 or np.any(np.diff(times) <= 0) or times[-1] > t_end:
            raise InvalidInput(
                f"t_eval is not allowed: increasing finite times in [0, t_end = {t_end}]", "t_eval", None,
                f"increasing finite times in [0, {t_end}]",
            )  # fmt: skip
        rtol, atol = _real("rtol", rtol, "a number > 0"), _real("atol", atol, "a number > 0")
        if not isinstance(method, str):
            raise InvalidInput(f"method = {method!r} is not allowed: one of auto, dopri5, dop853, rosenbrock23, bdf", "method", _text(method),
                               "one of auto, dopri5, dop853, rosenbrock23, bdf")  # fmt: skip
        t, x, status, message = self._core.transient(start.tolist(), times.tolist(), levels, rtol, atol, method, _seconds(max_seconds))
        traj = Trajectory(t=t, x=x, status=status, status_message=message)
        if strict and status != "success":
            raise NotConverged(f"transient stopped at t = {t[-1]}: {message}", status, traj)
        return traj

    def refined(self, order: int = 1, *, servers: Sequence[float] = (), max_seconds: Optional[float] = None) -> Refined:
        """The refined mean field at the fixed point (Gast and Van Houdt, "A refined mean field
        approximation", SIGMETRICS 2017, Theorem 3.1; order 2: Gast, Bortolussi, Tribastone,
        "Size expansions of mean field approximation", Perf. Eval. 2019): ``E[X^N] = x* + V/N``
        (``order=1``) or ``x* + V/N + A/N^2`` (``order=2``), with the estimates of the
        observables at each size in ``servers`` (:meth:`Refined.estimate` gives any other size).
        docs/refined.md has the equations.

        Warns:
            RuntimeWarning: each sentence of ``Refined.warnings`` (a degenerate fixed point, where
                the terms mean nothing; a size whose estimate leaves the state space).

        Raises:
            InvalidInput: ``order`` not 1 or 2, a size that is not an integer >= 1; a kind
                without transitions or with a non-smooth drift (``field == "kind"``); order 2 when
                the rates depend on too many state entries for their derivative grids; dense
                terms over the memory limit (``field == "truncation.levels"``, the message gives
                the bytes and the limit: docs/refined.md, "Memory"). Unstable, NotConverged: as
                :meth:`fixed_point`; NotConverged (``status == "stopped"``) also when
                ``max_seconds`` passes during the terms (their dense steps).
        """
        if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order not in (1, 2):
            raise InvalidInput(f"order = {order} is not allowed: 1 (the 1/N term) or 2 (also the 1/N^2 term)", "order", _text(order),
                               "1 (the 1/N term) or 2 (also the 1/N^2 term)")  # fmt: skip
        order = int(order)
        sizes = _sizes("servers", [servers] if isinstance(servers, (int, float, np.number)) else servers)
        fp_dict, text = self._core.refined(order, sizes, _seconds(max_seconds))
        fp = FixedPoint(**fp_dict)
        if text is None:
            raise NotConverged(f"fixed point of {fp.model}: {fp.status_message}", fp.status, fp)
        r = json.loads(text)
        t = r["terms"]
        n = len(t["x"])
        opt = lambda v: None if v is None else np.asarray(v, dtype=np.float64)  # noqa: E731
        for w in r["warnings"]:  # also kept in Refined.warnings
            warnings.warn(w, RuntimeWarning, stacklevel=2)
        return Refined(
            fixed_point=fp, order=int(t["order"]), x=np.asarray(t["x"], dtype=np.float64), V=np.asarray(t["v"], dtype=np.float64),
            A=opt(t["a"]), W=np.asarray(t["covariance"], dtype=np.float64).reshape(n, n), sum_v=float(t["sum_v"]),
            sum_a=t["sum_a"], lyapunov_residual=float(t["lyapunov_residual"]),
            mean_queue_length_correction=t["mean_queue_length_correction"],
            mean_response_time_correction=t["mean_response_time_correction"],
            estimates=[_estimate_dict(e) for e in r["estimates"]], expansion=r["expansion"],
            warnings=list(r["warnings"]),
        )  # fmt: skip

    def simulate(
        self, servers: int = 1000, *, time: float = 5000.0, warmup: float = 500.0, replications: int = 4,
        batches: int = 25, seed: int = 1, buffer: Optional[int] = None, max_seconds: Optional[float] = None,
        strict: bool = True,
    ) -> Simulation:  # fmt: skip
        """A finite-N simulation of the system the kind declares (docs/simulation.md): ``servers``
        servers, ``replications`` independent runs of ``warmup + time`` mean job sizes from empty.
        ``buffer``: an arrival that finds its server holding ``buffer`` jobs is lost (a loss
        system, stationary at every load).

        Raises:
            Unstable: the model is outside its stability region and has no buffer (``buffer`` or
                ``truncation.buffer``), as ``mfq simulate`` refuses it (exit code 3; the
                front door's ``mfq::simsweep::unstable_reason``). InvalidInput: options out of
                range or not integers, or a kind without a finite-N system
                (``field == "kind"``). NotConverged (``strict``): ``max_seconds`` ran out.
        """
        strict = _flag("strict", strict)
        servers, replications, batches = _integer("servers", servers), _integer("replications", replications), _integer("batches", batches)
        seed, buffer = _integer("seed", seed), _integer("buffer", buffer, _U32, optional=True)
        time = _real("time", time, "a finite number > 0 (mean job sizes)")
        warmup = _real("warmup", warmup, "a finite number >= 0 (mean job sizes)")
        r = json.loads(self._core.simulate(servers, time, warmup, replications, batches, seed, buffer, _seconds(max_seconds)))
        status = r["status"]["status"]
        sim = Simulation(
            servers=int(servers), status=status,
            tail=np.asarray([e["mean"] for e in r["tail"]], dtype=np.float64),
            tail_half_width=np.asarray([e["half_width"] for e in r["tail"]], dtype=np.float64),
            mean_queue_length=_observed(r, "mean_queue_length"), mean_response_time=_observed(r, "mean_response_time"),
            throughput=_observed(r, "throughput"), loss_probability=_observed(r, "loss_probability"),
            prob_wait=_observed(r, "prob_wait"), extras={k: _estimate(v) for k, v in r["extras"].items()},
            events=int(r["events"]), wall_seconds=float(r["wall_seconds"]),
        )  # fmt: skip
        if strict and status != "completed":
            raise NotConverged(f"simulation stopped by the wall-clock limit of {max_seconds} s", status, sim)
        return sim

    def exact(
        self, servers: Union[int, Sequence[int]] = 10, *, buffer: Optional[int] = None, method: str = "auto",
        max_states: int = 4_000_000, max_seconds: Optional[float] = None, strict: bool = True,
    ) -> Exact:  # fmt: skip
        """Exact stationary expectations of the ``N``-object chain of the finite-buffer system for
        each ``N`` in ``servers``, beside ``x*``, ``x* + V/N`` and ``x* + V/N + A/N^2``
        (docs/exact.md). Queueing models need a buffer: ``buffer`` (or ``truncation.levels`` in
        the model). ``method``: ``"auto"`` (the cut recursion for one-entry
        skip-free chains, sparse LU up to 2,000 states, iterative above), ``"lu"`` (direct: sparse
        LU, or the cut recursion where it applies) or ``"iterative"``. Ctrl-C stops the chain within a second (``KeyboardInterrupt``).

        Raises:
            InvalidInput: options out of range, no buffer for a queueing model, a chain over
                ``max_states``, a kind without transitions (``field == "kind"``).
            NotConverged (``strict``): ``max_seconds`` ran out (the partial :class:`Exact` is
                its ``result``) or an iterative solve did not converge.
        """
        strict = _flag("strict", strict)
        given = [servers] if isinstance(servers, (int, float, np.number)) else list(servers)
        _sizes("servers", given)
        # the integers themselves (a float would round 2**53 + 1), each within the core's range:
        # one beyond the compiled module's integer was a bare OverflowError
        sizes = [int(v) for v in given]
        for v, n in zip(given, sizes):
            if n > _EXACT_SERVERS:
                allowed = _ALLOWED["exact_servers"]
                raise InvalidInput(f"servers = {_text(v)} is not allowed: {allowed}", "servers", _text(v), allowed)
        buffer = _integer("buffer", buffer, optional=True, allowed="an integer in [1, 10000000] (the buffer K: truncation.levels), or None")
        max_states = _integer("max_states", max_states)
        if not isinstance(method, str):
            raise InvalidInput(f"method = {method!r} is not allowed: \"auto\", \"lu\" or \"iterative\"", "method", _text(method),
                               '"auto", "lu" or "iterative"')  # fmt: skip
        r = json.loads(self._core.exact(sizes, buffer, method, max_states, _seconds(max_seconds)))
        fp, terms = r["fixed_point"], r["refined"]
        x = np.asarray(fp["x"], dtype=np.float64)
        arr = lambda v: None if v is None else np.asarray(v, dtype=np.float64)  # noqa: E731
        V, A = (arr(terms["v"]), arr(terms["a"])) if terms else (None, None)
        ns = np.asarray(sizes, dtype=np.float64)[:, None]
        first = None if V is None else x + V / ns
        second = None if A is None else x + V / ns + A / ns**2
        rows = r["exact"]
        nan = float("nan")
        qlen = [e["observables"]["mean_queue_length"] for e in rows]
        res = Exact(
            servers=np.asarray(sizes, dtype=np.int64), names=list(r["names"]), x=x, order=int(terms["order"]) if terms else 0,
            V=V, A=A, first=first, second=second,
            exact=np.asarray([e["mean"] for e in rows], dtype=np.float64).reshape(len(rows), len(x)),
            mean_queue_length=np.asarray([nan if q is None else q for q in qlen], dtype=np.float64),
            states=[int(e["states"]) for e in rows], status=[_status(e["status"]) for e in rows], stopped=r["stopped"],
            refined_unavailable=r["refined_unavailable"], outside=list(r["outside"]), report=r,
        )  # fmt: skip
        if strict and (res.stopped is not None or any(s != "converged" for s in res.status)):
            why = res.stopped or f"an iterative solve did not converge ({res.status})"
            raise NotConverged(f"exact chain of {self.kind}: {why}", "time-limit" if res.stopped else "max-iterations", res)
        return res

    def check(
        self, *, starts: Optional[int] = None, seed: int = 1, max_seconds: Optional[float] = None, strict: bool = True
    ) -> CheckResult:
        """Is the fixed point unique and globally attracting? The checker's verdict with the
        numbers behind it (docs/checker.md): ``"certified"``, ``"evidence"``, ``"not-unique"``
        or ``"unsettled"``. ``starts``: seeded random feasible initial states; by default 32,
        and 6 on sparse models of 2000 states or more (pair and triplet approximations, where
        each run is a stiff BDF solve; ``CheckOptions::large_model_starts``, a note in the report
        says so). A number given is run on every model, as ``mfq check --starts N``.

        Raises:
            Unstable, InvalidInput: as :meth:`fixed_point`. NotConverged (``strict``): the
                wall-clock limit stopped the check (``.result`` holds what it found).
        """
        strict = _flag("strict", strict)
        starts, seed = _integer("starts", starts, optional=True), _integer("seed", seed)
        fp_dict, text, summary = self._core.check(starts, seed, _seconds(max_seconds))
        r = json.loads(text)
        result = CheckResult(
            verdict=r["verdict"]["verdict"], equilibria=len(r["equilibria"]), unsettled=int(r["unsettled"]),
            summary=summary, fixed_point=FixedPoint(**fp_dict), report=r,
        )  # fmt: skip
        if strict and result.verdict == "time-limit":
            raise NotConverged(f"attraction check stopped by the wall-clock limit of {max_seconds} s", result.verdict, result)
        return result


def models() -> List[Dict[str, Any]]:
    """The built-in model kinds (as ``mfq models --json``): dicts with ``kind``, ``name``,
    ``parameters`` (name, meaning, unit, allowed, default), ``source``, ``example``, ``docs``."""
    return json.loads(_mfq.catalog())
