"""The exceptions of mfq: every one carries the fields of the Rust error it comes from.

Raised by the compiled module (``mfq._mfq``, see python/src/errors.rs) and by the result
checks of :mod:`mfq._model`. All derive from :class:`Error`; they pickle with their fields (so
that they cross Dask workers intact).
"""

from typing import Any, Optional

__all__ = ["Error", "InvalidInput", "Unstable", "NotConverged"]


class Error(Exception):
    """Base class of mfq's exceptions. ``str(e)`` is the Rust message (the CLI's text)."""

    def __reduce__(self):  # type: ignore[override]
        return (self.__class__, self.args)


class InvalidInput(Error, ValueError):
    """Bad input: a parameter, an option, a model file or a state outside what is allowed.

    Attributes:
        field: the dotted name of what is wrong (``"model.lambda"``, ``"servers"``,
            ``"truncation.levels"``, ``"x0"``, ``"path"``, ``"kind"``...), or ``None`` when the
            message names no single field (a malformed file).
        value: the value given, as text (``"1.5"``), or ``None`` when not known.
        allowed: what is allowed, in words (``"a number in (0, 1)"``).
    """

    def __init__(self, message: str, field: Optional[str] = None, value: Optional[str] = None, allowed: str = ""):
        super().__init__(message, field, value, allowed)
        self.field = field
        self.value = value
        self.allowed = allowed

    def __str__(self) -> str:
        return str(self.args[0])


class Unstable(Error, ValueError):
    """The parameters are outside the model's stability region (e.g. ``lambda >= 1`` for JSQ(d)):
    there is no steady state to report.

    Attributes:
        reason: why, with the numbers (``"lambda = 1.2 >= 1 ..."``).
    """

    def __init__(self, message: str, reason: str = ""):
        super().__init__(message, reason)
        self.reason = reason

    def __str__(self) -> str:
        return str(self.args[0])


class NotConverged(Error, RuntimeError):
    """A solver stopped before its goal (iteration budget, wall-clock limit ``max_seconds``,
    a singular Jacobian...). Raised only with ``strict=True`` (the default).

    Attributes:
        status: the status tag (``"max-iterations"``, ``"time-limit"``, ...).
        result: the partial result (a :class:`mfq.FixedPoint`, :class:`mfq.Trajectory`,
            :class:`mfq.Simulation` or :class:`mfq.CheckResult`) with its own status.
    """

    def __init__(self, message: str, status: str = "", result: Any = None):
        super().__init__(message, status, result)
        self.status = status
        self.result = result

    def __str__(self) -> str:
        return str(self.args[0])
