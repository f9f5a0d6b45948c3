"""Result classes of mfq: plain Python objects holding numbers and float64 numpy arrays.

Every result compares equal field by field (arrays with ``numpy.array_equal``), pickles (its
fields), converts to a dict (:meth:`Result.to_dict`) and prints its fields. Units: time in mean
job sizes, queue lengths in jobs per server. Tail form: ``x[k-1] = x_k``, the fraction of
servers with at least ``k`` jobs (``x_0 = 1`` implicit), see docs/architecture.md.
"""

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

import numpy as np

__all__ = [
    "Result",
    "FixedPoint",
    "Trajectory",
    "Refined",
    "Estimate",
    "Simulation",
    "Exact",
    "CheckResult",
]


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype):
            return False
        # NaN equal to NaN where an array can hold one (isnan is not defined on str columns)
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True  # NaN == NaN for results
    return bool(a == b)


class Result:
    """Base of the result classes: fields in ``_fields``, set once by the constructor."""

    _fields: Tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._field_set = frozenset(cls._fields)

    def __init__(self, **fields: Any) -> None:
        if fields.keys() != self._field_set:
            missing = sorted(self._field_set - fields.keys())
            extra = sorted(fields.keys() - self._field_set)
            raise TypeError(f"{type(self).__name__}: missing fields {missing}, unknown fields {extra}")
        self.__dict__.update(fields)

    @classmethod
    def _trusted(cls, fields: Dict[str, Any]) -> Any:
        """The result of ``fields`` as the compiled module builds them (every field, checked by
        the tests): no key check, for the fast path of ``Model.fixed_point``."""
        obj = object.__new__(cls)
        obj.__dict__.update(fields)
        return obj

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(_equal(getattr(self, f), getattr(other, f)) for f in self._fields)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):  # type: ignore[override]
        return (_rebuild, (type(self), self.to_dict()))

    def to_dict(self) -> Dict[str, Any]:
        """The fields as a dict (arrays stay numpy arrays)."""
        return {f: getattr(self, f) for f in self._fields}

    def __repr__(self) -> str:
        def short(v: Any) -> str:
            if isinstance(v, np.ndarray):
                return f"array(shape={v.shape}, dtype={v.dtype})"
            text = repr(v)
            return text if len(text) < 80 else text[:77] + "..."

        body = ", ".join(f"{f}={short(getattr(self, f))}" for f in self._fields)
        return f"{type(self).__name__}({body})"


def _rebuild(cls: type, fields: Dict[str, Any]) -> Result:
    return cls(**fields)


class FixedPoint(Result):
    """A fixed point ``x*`` of the mean-field ODE (``f(x*) = 0``) and how it was found.

    Attributes:
        model: the model's name (``"JSQ(2)"``).
        status: ``"converged"``, ``"max-iterations"``, ``"time-limit"``, ``"singular"``,
            ``"non-finite"`` or ``"truncation-not-reached"``; ``status_message`` says it in words.
        x: float64, shape ``(n,)``: the state, in the model's layout (tail form for the queue
            models: ``n = truncation``, ``x[k-1] = x_k``).
        tail: float64, shape ``(K,)``: ``P(Q >= k)`` for ``k = 1..K`` (empty for models without queues).
        residual: ``max |f(x*)|``.
        truncation: the truncation level ``K`` used; ``mass_at_truncation`` is ``x_K``;
            ``levels_tried`` the levels of the automatic search.
        iterations, total_iterations: linear solves at the final level / over all levels.
        spectral_abscissa: largest real part of the Jacobian's eigenvalues at ``x*`` (negative:
            locally stable), or ``None`` when not computed (large models).
        jacobian: ``"analytic"`` or how it was approximated.
        mean_queue_length: ``L = sum_k x_k`` jobs per server; mean_response_time: ``T = L /
            throughput`` (Little); prob_wait: probability that an arrival waits; throughput,
            loss_probability (at the truncation); ``None`` where the model does not define them.
        extras: model-specific observables, name -> value.

    A solve that did not converge (``converged`` false, ``strict=False``) reports no
    observables: ``x`` is the last iterate, which is not a fixed point, so ``tail`` is empty,
    ``extras`` is ``{}`` and ``mean_queue_length``, ``mean_response_time``, ``prob_wait``,
    ``throughput`` and ``loss_probability`` are ``None`` (as ``mfq fixed-point`` prints
    "observables not reported").
    """

    _fields = (
        "model", "status", "status_message", "x", "tail", "residual", "truncation", "mass_at_truncation",
        "levels_tried", "iterations", "total_iterations", "spectral_abscissa", "jacobian", "mean_queue_length",
        "mean_response_time", "prob_wait", "throughput", "loss_probability", "extras",
    )  # fmt: skip
    model: str
    status: str
    status_message: str
    x: np.ndarray
    tail: np.ndarray
    residual: float
    truncation: int
    mass_at_truncation: float
    levels_tried: List[int]
    iterations: int
    total_iterations: int
    spectral_abscissa: Optional[float]
    jacobian: str
    mean_queue_length: Optional[float]
    mean_response_time: Optional[float]
    prob_wait: Optional[float]
    throughput: Optional[float]
    loss_probability: Optional[float]
    extras: Dict[str, float]

    @property
    def converged(self) -> bool:
        """Whether ``max |f(x*)|`` reached the tolerance."""
        return self.status == "converged"


class Trajectory(Result):
    """A transient ``x(t)`` of the mean-field ODE.

    Attributes:
        t: float64, shape ``(m,)``: the times asked for (``t_eval``), increasing; shorter when
            the run stopped early (then the last entry is where it stopped).
        x: float64, shape ``(m, n)``: ``x[i]`` is the state at ``t[i]``.
        status: ``"success"`` or why the run stopped (``"max-steps"``, ``"time-limit"``, ...);
            ``status_message`` in words.
    """

    _fields = ("t", "x", "status", "status_message")
    t: np.ndarray
    x: np.ndarray
    status: str
    status_message: str


class Refined(Result):
    """The refined mean field at the fixed point (Gast and Van Houdt, "A refined mean field
    approximation", SIGMETRICS 2017, Theorem 3.1; the ``1/N^2`` term: Gast, Bortolussi,
    Tribastone, "Size expansions of mean field approximation", Perf. Eval. 2019):
    ``E[X^N] = x* + V / N (+ A / N^2) + ...``.

    Attributes:
        fixed_point: the :class:`FixedPoint` ``x*``.
        order: 1 (``x* + V/N``) or 2 (``x* + V/N + A/N^2``).
        x: float64 ``(n,)``: ``x*``. V: float64 ``(n,)``: the ``1/N`` term. A: float64 ``(n,)``,
            the ``1/N^2`` term (``None`` at order 1). W: float64 ``(n, n)``: the limit of
            ``N Cov(X^N)`` (Lyapunov equation). sum_v, sum_a: ``sum_i V_i``, ``sum_i A_i``
            (``None`` at order 1).
        lyapunov_residual: ``max |J W + W J^T + Q|``.
        mean_queue_length_correction, mean_response_time_correction: ``c`` in
            ``L_N ~ L + c / N`` and ``T_N ~ T + c / N`` (tail layouts), else ``None``.
        estimates: one dict per size asked for (see :meth:`estimate`).
        expansion: the expansions ``value + c1/N + c2/N^2`` of the observables (``tail``: a list,
            ``prob_wait``, ``extras``: name/expansion pairs, ``has_queue_length``,
            ``throughput``), from which :meth:`estimate` evaluates any ``N``.
        warnings: why some estimates mean little, one sentence each: a degenerate fixed point
            (the terms are meaningless at every ``N``), then the sizes whose estimate leaves the
            state space (the exact chain gives those ``N``); empty when there is none.
    """

    _fields = (
        "fixed_point", "order", "x", "V", "A", "W", "sum_v", "sum_a", "lyapunov_residual",
        "mean_queue_length_correction", "mean_response_time_correction", "estimates", "expansion", "warnings",
    )  # fmt: skip
    fixed_point: FixedPoint
    order: int
    x: np.ndarray
    V: np.ndarray
    A: Optional[np.ndarray]
    W: np.ndarray
    sum_v: float
    sum_a: Optional[float]
    lyapunov_residual: float
    mean_queue_length_correction: Optional[float]
    mean_response_time_correction: Optional[float]
    estimates: List[Dict[str, Any]]
    expansion: Dict[str, Any]
    warnings: List[str]

    def estimate(self, servers: float) -> Dict[str, Any]:
        """The refined estimates for ``N = servers`` to the order of the terms, as the core
        computes them (docs/refined.md): ``x`` (``x* + V/N (+ A/N^2)``, float64 ``(n,)``),
        ``tail`` (float64), ``mean_queue_length`` (the sum of the tail), ``mean_response_time``
        (that over the expanded throughput, Little's law), ``prob_wait`` and ``extras``
        (nonlinear observables expanded with the moments, not evaluated at the refined state);
        ``None`` where the model has no such quantity.

        Raises:
            InvalidInput: ``servers`` not an integer >= 1 (``field == "servers"``), as the sizes
                of :meth:`mfq.Model.refined`.
        """
        from ._model import _sizes  # the check of Model.refined's sizes (_model imports this module)

        (n,) = _sizes("servers", [servers])
        e = self.expansion

        def at(t: Dict[str, float]) -> float:
            return t["value"] + t["c1"] / n + t["c2"] / (n * n)

        x = self.x + self.V / n
        if self.A is not None:
            x = x + self.A / (n * n)
        tail = np.asarray([at(t) for t in e["tail"]], dtype=np.float64)
        mql = float(tail.sum()) if e["has_queue_length"] else None
        thr = None if e["throughput"] is None else at(e["throughput"])
        return {
            "servers": n, "x": x, "tail": tail, "mean_queue_length": mql,
            "mean_response_time": mql / thr if mql is not None and thr is not None and thr > 0 else None,
            "prob_wait": None if e["prob_wait"] is None else at(e["prob_wait"]),
            "extras": {name: at(t) for name, t in e["extras"]},
        }  # fmt: skip


class Estimate(NamedTuple):
    """A simulation estimate: the point estimate and the half width of its 95% confidence
    interval (batch means over replications; ``n`` batch means)."""

    mean: float
    half_width: float
    n: int


class Simulation(Result):
    """A finite-N simulation (event-driven, from the system's rules; docs/simulation.md).

    Attributes:
        servers: N. status: ``"completed"`` or ``"time-limit"``.
        tail: float64 ``(m,)``: estimates of ``x_k = P(Q >= k)``, ``k = 1..m`` (``m``: the largest
            queue length seen); tail_half_width: float64 ``(m,)``: their 95% half widths.
        mean_queue_length, mean_response_time, throughput, loss_probability, prob_wait:
            :class:`Estimate` (mean, half_width, n), or ``None`` where the system simulated does
            not observe the quantity (the population process of a generic model observes its
            state entries only: the tail and ``mean_queue_length`` of a tail-form state, else
            every entry in ``extras``; docs/simulation.md), or that a run stopped by
            ``max_seconds`` (``strict=False``) could not estimate: fewer than two batch means
            finished (then ``tail`` is empty and such ``extras`` are left out; never ``NaN``).
        extras: family-specific estimates, name -> :class:`Estimate`.
        events: events simulated; wall_seconds: wall-clock time of the call.
    """

    _fields = (
        "servers", "status", "tail", "tail_half_width", "mean_queue_length", "mean_response_time", "throughput",
        "loss_probability", "prob_wait", "extras", "events", "wall_seconds",
    )  # fmt: skip
    servers: int
    status: str
    tail: np.ndarray
    tail_half_width: np.ndarray
    mean_queue_length: Optional[Estimate]
    mean_response_time: Optional[Estimate]
    throughput: Optional[Estimate]
    loss_probability: Optional[Estimate]
    prob_wait: Optional[Estimate]
    extras: Dict[str, Estimate]
    events: int
    wall_seconds: float


class CheckResult(Result):
    """The uniqueness / global-attraction check (docs/checker.md).

    Attributes:
        verdict: ``"certified"``, ``"evidence"``, ``"not-unique"``, ``"unsettled"`` or ``"time-limit"``.
        equilibria: how many distinct equilibria the runs found.
        unsettled: runs that did not settle.
        summary: the checker's text summary (as ``mfq check`` prints it).
        fixed_point: the :class:`FixedPoint` the check started from.
        report: the whole report as plain data (the JSON of ``mfq check --json``).
    """

    _fields = ("verdict", "equilibria", "unsettled", "summary", "fixed_point", "report")
    verdict: str
    equilibria: int
    unsettled: int
    summary: str
    fixed_point: FixedPoint
    report: Dict[str, Any]


class Exact(Result):
    """Exact stationary expectations of the ``N``-object chain beside the mean field and the
    refined mean field (docs/exact.md; the chain of the finite-buffer system, solved by sparse LU,
    the cut recursion of one-entry skip-free chains, or Gauss-Seidel with aggregation, no expansion and no simulation).

    Attributes:
        servers: the sizes ``N`` asked (``(s,)`` ints). names: the state entries (``x_1``, ...).
        x: float64 ``(n,)``: the fixed point ``x*`` of the finite-buffer mean field.
        order: 2 when ``A`` is available, 1 with ``V`` alone, 0 without refined terms (then
            ``refined_unavailable`` says why). V, A: float64 ``(n,)`` or ``None``.
        first: float64 ``(s, n)``: ``x* + V/N`` per size (``None`` without ``V``).
        second: float64 ``(s, n)``: ``x* + V/N + A/N^2`` (``None`` without ``A``).
        exact: float64 ``(f, n)``: ``E[X^N]`` for the first ``f`` sizes (``f < s`` when stopped).
        mean_queue_length: float64 ``(f,)``: the exact mean number of jobs per server (NaN
            for models without queues).
        states: states of each chain solved. status: ``"converged"``, ``"cancelled"``, ...
        stopped: why the sizes stop short (``max_seconds``), else ``None``.
        refined_unavailable: why there are no refined terms, else ``None``.
        outside: where a refined estimate is no state at a size asked (a broken constraint such
            as ``0 <= x_3``, one line per size and estimate; the expansion overshoots at small N).
        report: the whole answer as plain data (the JSON of ``mfq exact --json``).
    """

    _fields = (
        "servers", "names", "x", "order", "V", "A", "first", "second", "exact", "mean_queue_length", "states",
        "status", "stopped", "refined_unavailable", "outside", "report",
    )  # fmt: skip
    servers: np.ndarray
    names: List[str]
    x: np.ndarray
    order: int
    V: Optional[np.ndarray]
    A: Optional[np.ndarray]
    first: Optional[np.ndarray]
    second: Optional[np.ndarray]
    exact: np.ndarray
    mean_queue_length: np.ndarray
    states: List[int]
    status: List[str]
    stopped: Optional[str]
    refined_unavailable: Optional[str]
    outside: List[str]
    report: Dict[str, Any]
