# Type stubs for the compiled half of hullsweep_rs (pyext/src/lib.rs).
from collections.abc import Callable
from typing import Final

import numpy as np
import numpy.typing as npt

DEFAULT_FEE_PCT: Final[float]

def sweep(
    close: npt.NDArray[np.float64],
    params: npt.NDArray[np.int64],
    fee_pct: float = 0.09,
    variant: str = "fastest",
    threads: int | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Sweeps every combo over the series: returns (pnl float64[n], trades int64[n])."""

def validate_close(close: npt.NDArray[np.float64]) -> None:
    """Checks a series as sweep() would; raises ValueError naming the first bad price."""

def validate_params(params: npt.NDArray[np.int64], fee_pct: float = 0.09) -> None:
    """Checks params and the fee as sweep() would; raises ValueError naming the first bad window."""

def variants() -> list[str]:
    """The names sweep() accepts for variant, besides "fastest"."""

def fastest() -> str:
    """The variant "fastest" resolves to on this machine."""

def grid(spec: str) -> npt.NDArray[np.int64]:
    """Expands a grid of HMA lengths "LO:HI:K" into an n x 6 int64 params array."""

class Sweeper:
    """A sweep fed in chunks: push() the series in order, finish() gives sweep()'s result."""

    def __init__(
        self,
        params: npt.NDArray[np.int64],
        fee_pct: float = 0.09,
        variant: str = "fastest",
        threads: int | None = None,
        progress: Callable[[int], object] | None = None,
    ) -> None: ...
    def push(self, close: object) -> None:
        """Pushes the next bars (1-D float64 numpy, memmap, pyarrow or polars; no copy)."""
    @property
    def bars(self) -> int:
        """Bars pushed so far."""
    @property
    def lookback(self) -> int:
        """Bars of lookback carried from one push to the next."""
    def result(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """(pnl, trades) of the bars pushed so far."""
    def finish(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """(pnl, trades) as sweep() returns them; the Sweeper is done."""
