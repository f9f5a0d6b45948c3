"""Type stubs of the compiled module ``mfq._mfq`` (python/src/lib.rs): the binding of the front
door ``mfq::Model``. Users call the Python layer (``mfq.Model``); these are its building blocks."""

from typing import Dict, List, Optional, Tuple, Any

import numpy as np
import numpy.typing as npt

__version__: str
MAX_AXIS_POINTS: int
START_NAMES: List[str]

class Core:
    """A model: the front door's ``mfq::Model``."""

    @staticmethod
    def from_toml(
        text: str, overrides: List[str] = ..., max_seconds: Optional[float] = None, from_dict: bool = False, call: str = "Model.from_toml"
    ) -> "Core": ...
    @staticmethod
    def from_file(path: str, overrides: List[str] = ..., max_seconds: Optional[float] = None) -> "Core": ...
    def with_overrides(self, overrides: List[str]) -> "Core": ...
    def to_toml(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def title(self) -> Optional[str]: ...
    def fixed_point(
        self, tol: float = 1e-12, max_iter: int = 500, max_seconds: Optional[float] = None, x0: Optional[List[float]] = None
    ) -> Dict[str, Any]: ...
    def time_fixed_point(self, repeats: int, tol: float = 1e-12, max_seconds: Optional[float] = None) -> float: ...
    def drift(self, x: npt.NDArray[np.float64], levels: Optional[int] = None) -> npt.NDArray[np.float64]: ...
    def jacobian(self, x: npt.NDArray[np.float64], levels: Optional[int] = None) -> npt.NDArray[np.float64]: ...
    def dim(self, levels: Optional[int] = None) -> int: ...
    def named_state(self, name: str, levels: Optional[int] = None) -> Optional[npt.NDArray[np.float64]]: ...
    def transient(
        self,
        x0: List[float],
        t_eval: List[float],
        levels: Optional[int] = None,
        rtol: float = 1e-8,
        atol: float = 1e-12,
        method_name: str = "auto",
        max_seconds: Optional[float] = None,
    ) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], str, str]: ...
    def refined(self, order: int = 1, servers: List[float] = ..., max_seconds: Optional[float] = None) -> Tuple[Dict[str, Any], Optional[str]]: ...
    def check(self, starts: Optional[int] = None, seed: int = 1, max_seconds: Optional[float] = None) -> Tuple[Dict[str, Any], str, str]: ...
    def simulate(
        self,
        servers: int,
        time: float,
        warmup: float,
        replications: int,
        batches: int,
        seed: int,
        buffer: Optional[int] = None,
        max_seconds: Optional[float] = None,
    ) -> str: ...
    def exact(
        self,
        servers: List[int],
        buffer: Optional[int] = None,
        method: str = "auto",
        max_states: int = 4000000,
        max_seconds: Optional[float] = None,
    ) -> str: ...

def sweep(
    text: str,
    x_name: str,
    x_values: List[float],
    curve_name: Optional[str] = None,
    curve_values: Optional[List[float]] = None,
    max_seconds: Optional[float] = None,
) -> str: ...
def catalog() -> str: ...
