# Type stubs for the compiled half of hullsweep_rs (pyext/src/lib.rs).
from collections.abc import Callable, Sequence
from typing import Any, Final

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
    """Sweeps every combo over the series: returns (pnl float64[n], trades int64[n]).

    close: 1-D float64, C-contiguous; params: n x 6 int64, C-contiguous.
    Raises TypeError for a non-array or a wrong dtype (the message says the conversion:
    np.asarray(x, dtype=...) or x.astype(...); nothing is converted implicitly); ValueError for
    a wrong shape (with the reshape that fixes it), a strided array (np.ascontiguousarray(x)),
    or a bad price, window, fee, variant or thread count (named, with where it is).
    """

def sweep_metrics(
    close: npt.NDArray[np.float64],
    params: npt.NDArray[np.int64],
    fee_pct: float = 0.09,
    variant: str = "fastest",
    threads: int | None = None,
) -> dict[str, npt.NDArray[np.float64] | npt.NDArray[np.int64]]:
    """Sweeps with docs/kernel.md's metrics: a dict of 1-D arrays (the six windows, then pnl,
    trades, wins, long_pnl, short_pnl, long_trades, short_trades, best_trade, worst_trade,
    max_drawdown, bars_in_market) that pandas.DataFrame / polars.DataFrame take as is."""

def trades(
    close: object,
    params: npt.NDArray[np.int64] | None = None,
    combos: int | Sequence[int] | npt.NDArray[np.integer] | str | None = None,
    fee_pct: float = 0.09,
    grid: str | None = None,
) -> dict[str, npt.NDArray[np.float64] | npt.NDArray[np.int64]]:
    """The closed trades of chosen combos (None or "all": every combo), as a dict of 1-D
    arrays: combo, side, entry_bar, exit_bar (int64), entry_price, exit_price, pnl (float64).
    params as for sweep(), or grid "LO:HI:K" (default "6:200:80"); each combo's trades sum in
    order to sweep()'s pnl bit for bit. ValueError names a combo past the params."""

def pbo(
    matrix: npt.NDArray[np.float64],
    folds: int = 16,
    metric: str = "sharpe",
    threads: int | None = None,
) -> dict[str, Any]:
    """The probability of backtest overfitting by CSCV (docs/research.md) of a bars x combos
    float64 matrix, C-contiguous and finite: a dict with pbo, logits (float64[splits]),
    degradation {slope, intercept, r2}, prob_oos_loss, splits, folds, combos, bars, metric, and
    per split selected (int64), is_perf and oos_perf (float64). The GIL is released while it
    runs. TypeError for a non-array or a wrong dtype; ValueError for a wrong shape, a strided
    array, a bad fold count, metric or thread count, or a non-finite value (row and column)."""

def validate(
    close: npt.NDArray[np.float64],
    params: npt.NDArray[np.int64],
    fee_pct: float = 0.09,
    folds: int = 16,
    metric: str = "sharpe",
    walk_forward: str | None = None,
    variant: str = "fastest",
    threads: int | None = None,
) -> dict[str, Any]:
    """One sweep, then whether its winner is real (docs/research.md): the keys of pbo() from
    the sweep's own bar returns, deflated_sharpe {combo, sharpe, dsr, sr0, variance, skew, kurt,
    bars, trials}, walk_forward (None unless walk_forward="TRAIN:TEST[:anchored]"; else
    {spec, selected, train_metric, test_start, oos_returns, oos_pnl, oos_sharpe, oos_bars}),
    and per combo sharpe, win_rate, profit_factor (NaN where undefined), pnl, trades. The GIL
    is released while it runs; ValueError names a bad value."""

def validate_close(close: npt.NDArray[np.float64]) -> None:
    """Checks a series as sweep() would: TypeError for a non-array or a wrong dtype, ValueError
    for a wrong shape, a strided array or the first bad price (named, with its index)."""

def validate_params(params: npt.NDArray[np.int64], fee_pct: float = 0.09) -> None:
    """Checks params and the fee as sweep() would: TypeError for a non-array or a wrong dtype,
    ValueError for a wrong shape, a strided array, the first bad window or a bad fee."""

def variants() -> list[str]:
    """The names sweep() accepts for variant, besides "fastest"."""

def fastest() -> str:
    """The variant "fastest" resolves to on this machine."""

def grid(spec: str, spec3: str | None = None) -> npt.NDArray[np.int64]:
    """Expands a grid of HMA lengths "LO:HI:K" (and, with spec3, of HMA3 lengths: every pair)
    into an n x 6 int64 params array; ValueError on a bad spec or repeated lengths."""

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

class Live:
    """Combos run bar by bar: push() gives each push's events, bit for bit the batch sweep's."""

    OPEN: Final[int]
    CLOSE: Final[int]

    def __init__(
        self,
        params: npt.NDArray[np.int64] | None = None,
        grid: str | None = None,
        grid3: str | None = None,
        fee_pct: float = 0.09,
    ) -> None: ...
    def push(self, close: float | object) -> dict[str, npt.NDArray[np.generic]]:
        """One bar (a float) or many (1-D float64 numpy, memmap, pyarrow or polars); returns
        their events as columns kind, combo, bar, side, price, entry_bar, entry_price, pnl."""
    @property
    def bars(self) -> int:
        """Bars pushed so far."""
    @property
    def combos(self) -> int:
        """Combos run."""
    @property
    def params(self) -> npt.NDArray[np.int64]:
        """The combos, n x 6 int64 (a copy)."""
    @property
    def fee_pct(self) -> float:
        """The round-trip fee per closed trade, in percentage points."""
    def positions(self) -> dict[str, npt.NDArray[np.generic]]:
        """Columns side (0 flat), entry_bar (-1 flat), entry_price (NaN flat), one row per combo."""
    def result(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """(pnl, trades) of the bars pushed so far, sweep()'s bits."""
    def stats(self) -> dict[str, int]:
        """bars, certified and recomputed (combo, bar) pairs."""
    def copy(self) -> Live:
        """An independent copy of the state."""

# What ShmSocket writes: bytes, numpy arrays (read in place), or any other buffer (copied).
_Buffer = bytes | bytearray | memoryview | npt.NDArray[Any]

class ShmSocket:
    """A shared-memory connection to `hullsweep serve --shm NAME` (what Client.shm uses)."""

    def __init__(
        self,
        name: str,
        wait: str = "spin",
        error: type[BaseException] | None = None,
        protocol_error: type[BaseException] | None = None,
        close_dtype: np.dtype[Any] | None = None,
        open_dtype: np.dtype[Any] | None = None,
    ) -> None:
        """wait: "busy", "spin" (poll 50 µs, then sleep) or "event"; error: what an error frame
        raises (default RuntimeError), with the server's message; protocol_error: what a reply
        that does not fit its request raises from echo() and push_bar(); close_dtype and
        open_dtype: the dtypes push_bar() returns events in (45- and 21-byte records)."""
    def echo(self, close: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Opcode 1 whole: a 1-D C-contiguous float64 array out, a new one back."""
    def push_bar(
        self, stream: int, bar: float
    ) -> tuple[int, npt.NDArray[np.void], npt.NDArray[np.void]]:
        """Opcode 9 with one bar: (bars after the push, closes, opens) in the event dtypes."""
    def call(self, buffers: Sequence[_Buffer]) -> bytearray:
        """Writes the frame (bytes, numpy arrays or other buffers, read in place), reads the whole
        reply frame and returns its body; the waiting is done with the GIL released."""
    def sendmsg(self, buffers: Sequence[_Buffer]) -> int:
        """Writes every byte of buffers; returns the count."""
    def sendall(self, data: _Buffer) -> None:
        """sendmsg of one buffer."""
    def recv_into(self, buffer: bytearray | memoryview | npt.NDArray[Any]) -> int:
        """Reads at least one byte (blocking) into a writable buffer; 0 at the end."""
    def settimeout(self, timeout: float | None) -> None:
        """Bounds every later read and write (None: wait for ever)."""
    def close(self) -> None:
        """Closes the connection; a call waiting in another thread fails with ConnectionError."""
