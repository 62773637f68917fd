"""Sweeps over many series on a Ray cluster: sweep_many() and `python -m hullsweep_rs.ray`.
Each series goes into Ray's object store once; a task sweeps one chunk of combos over one series.

Results are bit-identical to hullsweep_rs.sweep on the same inputs (the same Rust code runs in
every task). Inputs are checked on the driver before anything is submitted, failed tasks are
retried (a worker or a whole node lost mid-sweep), and a task that still fails raises.

Chunk size: unless chunk_combos is given, the driver times hullsweep_rs.sweep on a sample of the
combos over (a prefix of) the longest series, which gives seconds per combo per bar. A task then
gets enough combos for about TARGET_TASK_S seconds of work on its series, so Ray's fixed cost per
task (a few ms: reports/distributed.md) stays a few percent, but never so many that the sweep has
fewer than about four tasks per CPU, nor less than MIN_TASK_S of work per task.
"""

from __future__ import annotations

import csv
import math
import numbers
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Union

import numpy as np

import hullsweep_rs as _hs

_NEEDS = ("hullsweep_rs.ray needs Ray and tqdm: pip install 'hullsweep-rs[ray]' "
          "(from a checkout: pip install './pyext[ray]')")
try:
    import ray
    from tqdm.auto import tqdm
except ImportError as e:
    raise ImportError(_NEEDS) from e
if not hasattr(ray, "remote"):  # e.g. Ray's own /tmp/ray directory, imported as a namespace
    raise ImportError(f"{_NEEDS}; 'import ray' found {list(ray.__path__)}, not Ray")

__all__ = [
    "SweepInputError",
    "load_series",
    "plan_chunks",
    "sweep_many",
    "MIN_TASK_S",
    "TARGET_TASK_S",
]

#: What one series may be given as: a 1-D float64 array, or the path of an .npy, .parquet or .csv.
Source = Union[np.ndarray, str, os.PathLike]

#: Bars per piece when a task reads an .npy path (a Parquet file goes by row groups).
_PIECE = 1 << 20


class _FileSeries:
    """A series that stays in its file: tasks read it themselves (an .npy memory-mapped piece by
    piece, a Parquet float64 column row group by row group) and sweep it with a Sweeper, so it
    never passes through the driver or the object store. The driver reads it once, in pieces,
    to check every price before anything is submitted."""

    def __init__(self, path: Path, column: str = "close"):
        self.path = str(path)
        self.kind = path.suffix.lower()
        self.column = column
        self.bars = sum(len(p) for p in _pieces(self.path, self.kind, column, lengths_only=True))

    def __len__(self):
        return self.bars

    def __getitem__(self, index):
        # Only the cost probe slices a series: the first bars, as an array.
        if not isinstance(index, slice) or index.start not in (None, 0) or index.step not in (
            None,
            1,
        ):
            raise TypeError("a file series only gives its first bars")
        stop = self.bars if index.stop is None else min(index.stop, self.bars)
        out, have = [], 0
        for piece in _pieces(self.path, self.kind, self.column):
            out.append(np.asarray(piece[: stop - have], dtype=np.float64))
            have += len(out[-1])
            if have >= stop:
                break
        return np.ascontiguousarray(np.concatenate(out) if out else np.empty(0))


def _pieces(path: str, kind: str, column: str = "close", lengths_only: bool = False):
    """The series of an .npy or a Parquet file in pieces (1-D float64; a Parquet null is NaN)."""
    if kind == ".npy":
        close = np.load(path, mmap_mode="r", allow_pickle=False)
        if close.dtype != np.float64 or close.ndim != 1:
            raise TypeError(
                f"close must be a 1-D float64 array, got a {close.ndim}-D {close.dtype} array"
            )
        for start in range(0, len(close), _PIECE):
            yield close[start : start + _PIECE]
        return
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        raise ValueError(f"reading {path!r} needs pyarrow: pip install pyarrow") from e
    f = pq.ParquetFile(path)
    names = f.schema_arrow.names
    if column not in names:
        folded = [n for n in names if n.lower() == column.lower()]
        if len(folded) != 1:
            raise ValueError(f"no column named {column!r}; the columns are {names}")
        column = folded[0]
    kind_of = f.schema_arrow.field(column).type
    if kind_of != pa.float64():
        raise TypeError(f"column {column!r} is {kind_of}, expected float64 (double)")
    for g in range(f.num_row_groups):
        if lengths_only:
            yield range(f.metadata.row_group(g).num_rows)
            continue
        col = f.read_row_group(g, columns=[column]).column(0)
        yield col.to_numpy()  # nulls become NaN (a missing bar)


def _check_file(series: _FileSeries):
    """Every price of a file series, piece by piece, with its index in the whole series."""
    checker = _hs.Sweeper(np.zeros((0, 6), dtype=np.int64))
    for piece in _pieces(series.path, series.kind, series.column):
        checker.push(np.ascontiguousarray(piece))
    if checker.bars == 0:
        raise ValueError("the close series is empty")

#: Work per task the chunking aims at (seconds on one core): Ray's overhead is then a few %.
TARGET_TASK_S = 0.25
#: The least work per task when chunks shrink to spread a small sweep over the CPUs.
MIN_TASK_S = 0.05
#: Retries of a task whose worker process or node dies (system failures, not bad input).
MAX_RETRIES = 5
#: Without a terminal (a log file, CI), progress is one line this often instead of a bar.
LOG_EVERY_S = 5.0
# The cost probe: at most this many bars of the longest series and this many combos.
_PROBE_BARS = 50_000
_PROBE_COMBOS = 16


class SweepInputError(ValueError):
    """Bad input to sweep_many, found before any task was submitted.

    str(e) lists every problem, each naming the series (or params) and the bad value; the same
    lines are in e.problems.
    """

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        head = "bad input, nothing was submitted to Ray"
        super().__init__(head + ":\n  " + "\n  ".join(self.problems))


def _read_csv(path: Path) -> np.ndarray:
    """The `close` column of a CSV (or its only column); an empty cell is a missing bar (NaN)."""
    with open(path, newline="") as f:
        text = f.read()
    lines = text.splitlines()
    if not lines:
        raise ValueError("the file is empty (expected a header line with a close column)")
    header = next(csv.reader([lines[0]]))
    names = [h.strip() for h in header]
    if "close" in names:
        col = names.index("close")
    elif len(names) == 1:
        col = 0
    else:
        raise ValueError(f"no 'close' column among {names}")
    values = []
    # Every line after the header is a bar, an empty line included: in a one-column file that is
    # how an empty cell (a missing bar) looks, so it must not be skipped.
    for lineno, line in enumerate(lines[1:], start=2):
        cells = next(csv.reader([line])) if line else [""]
        cell = cells[col].strip() if col < len(cells) else ""
        if cell == "":
            values.append(math.nan)
            continue
        try:
            values.append(float(cell))
        except ValueError:
            raise ValueError(
                f"line {lineno} (bar {lineno - 2}): {cell!r} in column {names[col]!r} is not a number"
            ) from None
    return np.array(values, dtype=np.float64)


def load_series(source: Source) -> np.ndarray:
    """One series as a C-contiguous 1-D float64 array, from an array or an .npy/.csv path.

    Arrays are not converted: another dtype or shape raises TypeError (as hullsweep_rs.sweep
    does), so nothing is silently rounded. Prices are not checked here (see validate_close).
    """
    if isinstance(source, np.ndarray):
        close = source
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        suffix = path.suffix.lower()
        if suffix == ".npy":
            close = np.load(path, allow_pickle=False)
        elif suffix == ".csv":
            close = _read_csv(path)
        else:
            raise ValueError(f"{str(path)!r}: expected a .npy or .csv file")
    else:
        raise TypeError(
            f"expected a 1-D float64 numpy array or the path of a .npy/.csv file, "
            f"got a {type(source).__name__}"
        )
    if close.dtype != np.float64 or close.ndim != 1:
        raise TypeError(
            f"close must be a 1-D float64 array, got a {close.ndim}-D {close.dtype} array"
        )
    return np.ascontiguousarray(close)


def _check(series: Mapping[str, Source], params, fee_pct, variant, chunk_combos,
           files_in_tasks=False):
    """Loads and checks every input; returns them ready to use, or raises SweepInputError."""
    problems = []
    if not isinstance(series, Mapping):
        raise SweepInputError(
            [f"series must map names to arrays or paths, got a {type(series).__name__}"]
        )
    closes = {}
    for name, source in series.items():
        if not isinstance(name, str) or not name:
            problems.append(f"series name {name!r}: names must be non-empty strings")
            continue
        try:
            suffix = Path(source).suffix.lower() if isinstance(source, (str, os.PathLike)) else ""
            if suffix in (".npy", ".parquet") and files_in_tasks:
                close = _FileSeries(Path(source))
                _check_file(close)
            elif suffix == ".parquet":
                parts = list(_pieces(os.fspath(source), suffix))
                close = np.ascontiguousarray(np.concatenate(parts) if parts else np.empty(0))
                _hs.validate_close(close)
            else:
                close = load_series(source)
                _hs.validate_close(close)
            closes[name] = close
        except (OSError, TypeError, ValueError) as e:
            where = f" ({os.fspath(source)})" if isinstance(source, (str, os.PathLike)) else ""
            problems.append(f"series {name!r}{where}: {e}")
    if variant not in _hs.variants() and variant != "fastest":
        problems.append(
            f"unknown variant {variant!r}; one of {', '.join(_hs.variants())} or 'fastest'"
        )
    if not isinstance(params, np.ndarray):
        problems.append(f"params must be an n x 6 int64 numpy array, got a {type(params).__name__}")
    else:
        try:
            if params.ndim == 2 and params.shape[0] == 0 and params.dtype == np.int64:
                params = np.zeros((0, 6), dtype=np.int64)
            _hs.validate_params(np.ascontiguousarray(params))
        except (TypeError, ValueError) as e:
            problems.append(f"params: {e}")
    if isinstance(fee_pct, bool) or not isinstance(fee_pct, numbers.Real) or not math.isfinite(
        fee_pct
    ):
        problems.append(f"bad fee {fee_pct!r}: fee_pct must be a finite number")
    if chunk_combos is not None and (
        isinstance(chunk_combos, bool)
        or not isinstance(chunk_combos, numbers.Integral)
        or chunk_combos < 1
    ):
        problems.append(f"chunk_combos must be a positive integer or None, got {chunk_combos!r}")
    if problems:
        raise SweepInputError(problems)
    return closes, np.ascontiguousarray(params), float(fee_pct), (
        None if chunk_combos is None else int(chunk_combos)
    )


def _seconds_per_combo_bar(closes, params, fee_pct, variant) -> float:
    """Times the sweep on a sample of combos over a prefix of the longest series."""
    longest = max(closes.values(), key=len)[:_PROBE_BARS]
    pick = np.unique(np.linspace(0, len(params) - 1, min(len(params), _PROBE_COMBOS)).astype(int))
    sample = np.ascontiguousarray(params[pick])
    _hs.sweep(longest, sample[:1], fee_pct, variant=variant, threads=1)  # warm up
    runs, start = 0, time.perf_counter()
    while True:
        _hs.sweep(longest, sample, fee_pct, variant=variant, threads=1)
        runs += 1
        elapsed = time.perf_counter() - start
        if elapsed > 0.02 or runs >= 20:
            break
    return max(elapsed / (runs * len(sample) * len(longest)), 1e-12)


def plan_chunks(bars: Mapping[str, int], n_combos: int, sec_per_combo_bar: float, cpus: int,
                chunk_combos: int | None = None) -> dict[str, int]:
    """Combos per task for each series (see the module doc for the rule)."""
    if chunk_combos is not None:
        return {name: min(chunk_combos, max(n_combos, 1)) for name in bars}
    per_combo = {name: sec_per_combo_bar * n for name, n in bars.items()}
    total = sum(per_combo.values()) * n_combos
    task_s = min(TARGET_TASK_S, max(MIN_TASK_S, total / (4 * max(cpus, 1))))
    return {
        name: max(1, min(n_combos, math.ceil(task_s / max(s, 1e-12))))
        for name, s in per_combo.items()
    }


@ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)
def _sweep_file_chunk(path, kind, column, params, start, stop, fee_pct, variant):
    # The task reads its series from the file, piece by piece, into a Sweeper: memory is one
    # piece, whatever the length (the file must be reachable from every node).
    s = _hs.Sweeper(params[start:stop], fee_pct, variant=variant, threads=1)
    for piece in _pieces(path, kind, column):
        s.push(np.ascontiguousarray(piece))
    return s.finish()


@ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)
def _sweep_chunk(close, params, start, stop, fee_pct, variant):
    # close and params arrive as read-only views of the object store (no copy); one task uses
    # the one CPU Ray gave it.
    return _hs.sweep(close, params[start:stop], fee_pct, variant=variant, threads=1)


def _say(line: str, stream=None) -> None:
    print(line, file=stream or sys.stderr, flush=True)


class _Progress:
    """Progress over tasks: a tqdm bar on a terminal or in a notebook (tqdm.auto's widget);
    otherwise (a log file, CI) one plain line every LOG_EVERY_S seconds and one at the end, so a
    log gets a readable trail instead of thousands of bar redraws."""

    def __init__(self, total: int, enabled: bool, stream=None):
        self.stream = stream or sys.stderr
        self.total, self.done, self.enabled = total, 0, enabled
        isatty = getattr(self.stream, "isatty", None)
        self.bar = None
        notebook = tqdm.__module__.endswith("notebook")
        if enabled and (notebook or (callable(isatty) and isatty())):
            self.bar = tqdm(total=total, unit="task", desc="sweep_many", dynamic_ncols=True,
                            file=self.stream)
        self.start = self.last = time.monotonic()
        if enabled and self.bar is None:
            _say(f"sweep_many: {total} tasks submitted", self.stream)

    def update(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
            return
        now = time.monotonic()
        if self.enabled and n and (now - self.last >= LOG_EVERY_S or self.done == self.total):
            self.last = now
            _say(f"sweep_many: {self.done}/{self.total} tasks done "
                 f"({100 * self.done / max(self.total, 1):.0f}%, {now - self.start:.1f} s)",
                 self.stream)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        if self.bar is not None:
            self.bar.close()
        return False


def _start_ray(address: str | None, announce: bool) -> None:
    """ray.init, said aloud: a local Ray takes seconds to start (about 8 s the first time in a
    process on a 2-core machine), which would otherwise look like a hang."""
    if ray.is_initialized():
        return
    if announce:
        if address is None:
            _say("sweep_many: starting a local Ray (about 8 s the first time; pass address= or "
                 "call ray.init() yourself to reuse a running one)")
        else:
            _say(f"sweep_many: connecting to the Ray cluster at {address}")
    start = time.perf_counter()
    ray.init(address=address)
    if announce:
        _say(f"sweep_many: Ray ready after {time.perf_counter() - start:.1f} s")


class _cancel_on_error:
    """Cancels the tasks still pending when the gathering loop raises (or is interrupted), so a
    failed sweep does not leave the cluster busy with work nobody will read."""

    def __init__(self, pending: dict):
        self.pending = pending

    def __enter__(self):
        return self

    def __exit__(self, kind, *_):
        if kind is not None:
            for ref in list(self.pending):
                ray.cancel(ref, force=False)
        return False


def sweep_many(
    series: Mapping[str, Source],
    params: np.ndarray,
    fee_pct: float = 0.09,
    *,
    variant: str = "fastest",
    address: str | None = None,
    chunk_combos: int | None = None,
    progress: bool = True,
    files_in_tasks: bool = False,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Sweeps every combo over every series on Ray: {name: (pnl float64[n], trades int64[n])}.

    series: maps a name to a 1-D float64 array, or to the path of an .npy (1-D float64), of a
        Parquet file (a float64 column `close`, any case; a null is a missing bar) or of a CSV
        with a `close` column (or a single column; an empty cell is a missing bar).
    params: n x 6 int64, one row of windows per combo, the same for every series.
    fee_pct: round-trip fee per closed trade, in percentage points (negative is a rebate).
    variant: the Rust variant each task runs (hullsweep_rs.variants(), or "fastest").
    address: None starts or joins a local Ray (ray.init()); otherwise the cluster to connect to
        ("HOST:6379" of a `ray start --head`, "ray://HOST:10001", "auto"). If this process is
        already connected to Ray (ray.init() was called), that connection is used as it is.
    chunk_combos: combos per task; None sizes chunks from a measured probe (module doc).
    progress: progress on stderr: a tqdm bar over tasks on a terminal, otherwise one line every
        LOG_EVERY_S seconds; and a line before and after starting Ray (seconds on first call).
    files_in_tasks: an .npy or Parquet path is read by the tasks themselves, piece by piece
        into a Sweeper (the driver only checks it, piece by piece), so a series of any length
        never passes through the driver or the object store; every node must be able to read
        the path (a local cluster, a shared file system). False (the default): the driver
        loads each file and puts it in the object store.

    Results come back in the input combo order, bit-identical to hullsweep_rs.sweep(close,
    params, fee_pct) for each series. Every input is checked before any task is submitted: a bad
    one raises SweepInputError naming the series (or params) and the value. A task whose worker
    or node dies is retried (MAX_RETRIES); one that still fails raises, nothing is dropped.
    """
    closes, params, fee_pct, chunk_combos = _check(series, params, fee_pct, variant, chunk_combos,
                                                   files_in_tasks)
    n = len(params)
    if not closes or n == 0:
        return {
            name: (np.zeros(n, dtype=np.float64), np.zeros(n, dtype=np.int64)) for name in closes
        }
    sec = 0.0 if chunk_combos is not None else _seconds_per_combo_bar(closes, params, fee_pct,
                                                                        variant)
    _start_ray(address, progress)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    chunks = plan_chunks({k: len(v) for k, v in closes.items()}, n, sec, cpus, chunk_combos)

    params_ref = ray.put(params)
    # Arrays go into the object store once per series; file series stay in their files.
    series_refs = {
        name: close if isinstance(close, _FileSeries) else ray.put(close)
        for name, close in closes.items()
    }
    out = {name: (np.empty(n, dtype=np.float64), np.empty(n, dtype=np.int64)) for name in closes}
    filled = {name: np.zeros(n, dtype=bool) for name in closes}
    pending = {}
    for name, ref in series_refs.items():
        for start in range(0, n, chunks[name]):
            stop = min(start + chunks[name], n)
            if isinstance(ref, _FileSeries):
                task = _sweep_file_chunk.remote(ref.path, ref.kind, ref.column, params_ref, start,
                                                stop, fee_pct, variant)
            else:
                task = _sweep_chunk.remote(ref, params_ref, start, stop, fee_pct, variant)
            pending[task] = (name, start, stop)

    with _Progress(len(pending), progress) as bar, _cancel_on_error(pending):
        while pending:
            done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.2)
            for ref in done:
                name, start, stop = pending.pop(ref)
                where = f"series {name!r}, combos {start}..{stop - 1}"
                try:
                    pnl, trades = ray.get(ref)
                except ray.exceptions.RayTaskError as e:  # raised inside the task: not retried
                    raise RuntimeError(f"{where}: the task raised: {e}") from e
                except ray.exceptions.RayError as e:  # lost workers or nodes, retries used up
                    raise RuntimeError(
                        f"{where}: the task failed after {MAX_RETRIES} retries: {e}"
                    ) from e
                if len(pnl) != stop - start or len(trades) != stop - start:
                    raise RuntimeError(
                        f"series {name!r}, combos {start}..{stop - 1}: a task returned "
                        f"{len(pnl)} results for {stop - start} combos"
                    )
                out[name][0][start:stop] = pnl
                out[name][1][start:stop] = trades
                filled[name][start:stop] = True
            bar.update(len(done))
    missing = [name for name, f in filled.items() if not f.all()]
    if missing:  # cannot happen unless the bookkeeping above is wrong; never return holes
        raise RuntimeError(f"results missing for series {missing}")
    return out
