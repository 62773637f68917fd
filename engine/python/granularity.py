"""The boundary study's granularity table: one job called per sweep, fold, combo and bar.

The job is the default series, the default 80 combos and the default fee; each granularity is run
over every transport, with the equivalence gate on every path. Writes the "Granularity" section of
reports/boundary.md (between its markers; the rest of the file is left as it is).

    .venv/bin/python engine/python/granularity.py                        # the full table
    .venv/bin/python engine/python/granularity.py --quick --out /tmp/g   # a smoke run

The seed study argued it from one number per transport: per bar, 150,000 × 14 µs (its Unix socket
floor) = 2.1 s of pure IPC, 150,000 × 39 ns (a shared-memory ring) = 5.9 ms. This measures the
four granularities end to end instead: in-process, shared memory (`--wait busy` and the default),
Unix socket, TCP, TLS, and a process spawned for every call. The transports are interleaved
within each repetition (A B C …, then B C … A), so a shared machine's noise falls on all alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import hullsweep_rs  # pip install ./pyext (scripts/test installs it in .venv)
from hullsweep_rs import client as hc

from boundary_engine import FEE, ROOT, Header, Servers, sh
from boundary_report import splice_section

NAME = "granularity"
FOLDS = 16
GRAINS = ["sweep", "fold", "combo", "bar"]
# name, (server transport, --wait) or None: in-process / spawned per call
PATHS = [("in-process", None), ("shm busy", ("shm", "busy")), ("shm spin", ("shm", None)),
         ("unix", ("unix", None)), ("tcp", ("tcp", None)), ("tls", ("tls", None)),
         ("spawn per call", None)]
STUDY_RING, STUDY_SOCKET = 39e-9, 14e-6  # the seed study's per-call floors
FULL = {"bars": 150_000, "reps": {"sweep": 15, "fold": 7, "combo": 7, "bar": 3}, "sample": 200}
QUICK = {"bars": 6_000, "reps": {"sweep": 3, "fold": 2, "combo": 2, "bar": 1}, "sample": 20}


def same(got, want) -> bool:
    """Bit for bit: pnl compared as its int64 bits (NaN included), trades exactly."""
    pnl, trades = (np.ascontiguousarray(x) for x in got)
    return (pnl.shape == want[0].shape and np.array_equal(pnl.view(np.int64), want[0].view(np.int64))
            and np.array_equal(trades.astype(np.int64), want[1]))


def cat(outs) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([o[0] for o in outs]), np.concatenate([o[1] for o in outs])


class Job:
    """The job and its references: every way of calling it below returns (seconds, results)."""

    def __init__(self, close: np.ndarray, variant: str, sample: int, stdio_argv: list[str]):
        self.close, self.variant, self.argv = close, variant, stdio_argv
        self.params = np.ascontiguousarray(hullsweep_rs.grid("6:200:80"))  # the default grid
        self.folds = [np.ascontiguousarray(f) for f in np.array_split(close, FOLDS)]
        self.bars = close.tolist()  # a live feed's floats, made before any timing
        self.truth = self.inproc_sweep(close, self.params)
        # A fresh stream over one fold (or one bar) is the sweep of those bars alone: what a
        # spawned process, which cannot carry a stream over, can be checked against.
        self.fold_refs = [self.live_result([f]) for f in self.folds]
        self.sample_at = np.linspace(0, len(close) - 1, sample).round().astype(int)
        self.bar_refs = {int(i): self.live_result([close[i:i + 1]]) for i in set(self.sample_at)}

    def inproc_sweep(self, close, params):
        pnl, trades = hullsweep_rs.sweep(close, params, FEE, variant=self.variant, threads=1)
        return np.asarray(pnl), np.asarray(trades, dtype=np.int64)

    def live_result(self, pieces):
        live = hullsweep_rs.Live(self.params, fee_pct=FEE)
        for p in pieces:
            live.push(p)
        pnl, trades = live.result()
        return np.asarray(pnl), np.asarray(trades, dtype=np.int64)

    # -- in-process: hullsweep_rs directly ---------------------------------------------------
    def inproc(self, grain: str):
        t0 = time.perf_counter()
        if grain == "sweep":
            out = self.inproc_sweep(self.close, self.params)
        elif grain == "combo":
            out = cat([self.inproc_sweep(self.close, self.params[k:k + 1]) for k in range(len(self.params))])
        else:
            live = hullsweep_rs.Live(self.params, fee_pct=FEE)
            for piece in (self.folds if grain == "fold" else self.bars):
                live.push(piece)
            out = live.result()
        return time.perf_counter() - t0, out

    # -- over an engine: one connection, made and closed outside the timing --------------------
    def engine(self, grain: str, c):
        t0 = time.perf_counter()
        if grain == "sweep":
            out = c.sweep(self.close, self.params)  # opcode 0
        elif grain == "combo":
            sid = c.load(self.close)  # opcode 2 once, then opcode 3 per combo
            out = cat([c.sweep_loaded(sid, self.params[k:k + 1]) for k in range(len(self.params))])
        else:
            sid = c.open_stream(self.params, FEE)
            for piece in (self.folds if grain == "fold" else self.bars):
                c.push(sid, piece)
            out = c.close_stream(sid)
        return time.perf_counter() - t0, out

    # -- a process spawned for every call ----------------------------------------------------
    def spawn_stateless(self, grain: str):
        """Per sweep and per combo nothing needs to survive a call: each spawn gets the whole
        series (opcode 0) and its combos. Measured in full and gated."""
        t0 = time.perf_counter()
        picks = [self.params] if grain == "sweep" else [self.params[k:k + 1] for k in range(len(self.params))]
        outs = []
        for p in picks:
            with hc.Client.spawn_stdio(self.argv) as c:
                outs.append(c.sweep(self.close, p))
        return time.perf_counter() - t0, cat(outs)

    def spawn_fresh(self, calls):
        """Calls of the stream's sizes, each in a process of its own: spawn, open a fresh stream,
        push the piece, close the stream, exit; the result is checked against ref, in-process
        `Live` over the same bars. Returns each call's time and the calls that differ."""
        times, bad = [], []
        for at, piece, ref in calls:
            t0 = time.perf_counter()
            with hc.Client.spawn_stdio(self.argv) as c:
                sid = c.open_stream(self.params, FEE)
                c.push(sid, piece)
                got = c.close_stream(sid)
            times.append(time.perf_counter() - t0)
            if not same(got, ref):
                bad.append(at)
        return times, bad


def measure(job: Job, connects: dict, reps: dict, log) -> tuple[dict, dict, list]:
    """times[grain][path] = [seconds per repetition]; est[grain][path] = how it was estimated;
    failures = the gate's mismatches, one line each."""
    times = {g: {p: [] for p, _ in PATHS} for g in GRAINS}
    est: dict = {g: {} for g in GRAINS}
    failures: list[str] = []
    n = len(job.close)
    names = [p for p, _ in PATHS]
    for grain in GRAINS:
        for rep in range(reps[grain]):
            for name in names[rep % len(names):] + names[:rep % len(names)]:
                if name == "in-process":
                    secs, out = job.inproc(grain)
                elif name in connects:
                    c = connects[name]()
                    c.echo(job.close[:1])  # the connection is up and warm before the clock starts
                    try:
                        secs, out = job.engine(grain, c)
                    finally:
                        c.close()  # a `--wait busy` server end polls a core while it is open
                elif grain in ("sweep", "combo"):
                    secs, out = job.spawn_stateless(grain)
                elif grain == "fold":
                    ts, bad = job.spawn_fresh([(k, f, job.fold_refs[k]) for k, f in enumerate(job.folds)])
                    secs, out = sum(ts), None
                    est[grain][name] = (f"{FOLDS} spawned calls of one fold each, measured, but each on "
                                        "a fresh stream: the sum of their times")
                    failures += [f"fold: spawn per call, fold {a}: differs from Live over that fold" for a in bad]
                else:
                    ts, bad = job.spawn_fresh([(int(i), job.close[i:i + 1], job.bar_refs[int(i)])
                                               for i in job.sample_at])
                    secs, out = n * statistics.median(ts), None
                    est[grain][name] = (f"{n:,} × the median of {len(ts)} spawned single-bar calls "
                                        "(spawn, open a fresh stream, push one bar, close, exit)")
                    failures += [f"bar: spawn per call, bar {a}: differs from Live over that bar" for a in bad]
                times[grain][name].append(secs)
                if out is not None and not same(out, job.truth):
                    pnl, trades = (np.asarray(x) for x in out)
                    k = int(np.sum((pnl.view(np.int64) != job.truth[0].view(np.int64))
                                   | (trades != job.truth[1]))) if pnl.shape == job.truth[0].shape else -1
                    failures.append(f"{grain}: {name}, repetition {rep + 1}: {k} of {len(job.truth[0])} "
                                    "combos differ from the in-process sweep")
            log(f"per {grain}: repetition {rep + 1}/{reps[grain]} done")
    return times, est, failures


def fmt(s: float) -> str:
    if s >= 1:
        return f"{s:,.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:,.1f} ms"
    if s >= 1e-6:
        return f"{s * 1e6:,.1f} µs"
    return f"{s * 1e9:,.0f} ns"


def round_trips(grain: str, name: str, n: int) -> int:
    """Calls across the boundary a path makes for the job (the engine adds a load, or a stream's
    open and close; a spawned process is one call)."""
    calls = {"sweep": 1, "fold": FOLDS, "combo": 80, "bar": n}[grain]
    if name in ("in-process", "spawn per call") or grain == "sweep":
        return calls
    return calls + (1 if grain == "combo" else 2)


def section(m: dict) -> str:
    n, reps, med = m["bars"], m["reps"], m["median"]
    nominal = {"sweep": 1, "fold": FOLDS, "combo": 80, "bar": n}
    est = m["est"]
    lo, hi = min(m["fold_sizes"]), max(m["fold_sizes"])
    fold_bars = f"{lo:,}" if lo == hi else f"{lo:,} to {hi:,}"
    cell = lambda g, p: ("est. " if p in est[g] else "") + fmt(med[g][p])  # noqa: E731
    L = [f"<!-- {NAME}:begin -->", "## Granularity: one job, four ways to call it\n",
         m["stamp"] + " Release builds.\n",
         f"The job: the default series ({n:,} bars of `hullsweep data`, seed 42 GBM), the default "
         f"grid of 80 combos, fee {FEE} %, variant `{m['variant']}` on one thread (`threads=1` "
         "in-process, `--threads 1` on every server). It is called four ways:\n",
         "- **per sweep**, 1 call: `hullsweep_rs.sweep` in-process; opcode 0 (the series and the "
         "80 combos in, 80 results back) over the engine.",
         f"- **per fold**, {FOLDS} calls: the series cut into {FOLDS} consecutive folds of "
         f"{fold_bars} bars, one call each, a live stream "
         f"carrying the state from fold to fold: `Live` and {FOLDS} `push(fold)` in-process; "
         f"`open_stream`, {FOLDS} `push`, `close_stream` over the engine.",
         "- **per combo**, 80 calls: each one combo over the whole series: 80 × `hullsweep_rs.sweep` "
         "in-process; the series loaded once (opcode 2), then 80 × `sweep_loaded` (opcode 3).",
         f"- **per bar**, {n:,} calls: a live stream pushed one bar per call (`Live.push(float)` "
         "in-process; `open_stream`, a `push` per bar, `close_stream` over the engine).\n",
         "Why streams for the folds: the kernel is path-dependent. A combo's position at a bar "
         "(long, short or flat, its entry bar and price) and its Hull moving averages' windows come "
         "from every bar before it, so a fold is not an independent unit of work. Sweeping each fold "
         "on its own restarts every combo flat with empty windows at the fold's first bar, drops the "
         "trade open across each cut and the signals of the fold's first bars: measured here, the "
         f"{FOLDS} independent per-fold sweeps, summed, differ from the whole-series sweep in "
         f"{m['naive']['differ']} of 80 combos ({m['naive']['trades']:,} trades instead of "
         f"{m['naive']['truth_trades']:,}; largest |Δpnl| {m['naive']['dpnl']:.3g} percentage points). "
         "A stream carries the state across calls: its pushes, however cut, give the batch sweep's "
         "answer bit for bit, which the gate below checks.\n",
         "Paths: in-process (`hullsweep_rs` in this Python process: no boundary); shm busy "
         "(`hullsweep serve --shm NAME --wait busy`, `Client.shm(NAME, wait=\"busy\")`); shm spin "
         "(both ends' default, `--wait spin`); unix; tcp (loopback); tls (TLS 1.3 over loopback, a "
         "throwaway certificate from `hullsweep tls-cert`, verified by its CA); spawn per call "
         "(`hullsweep serve --stdio` spawned for each call and ended after it). A client connects "
         "before each timed job, sends one untimed 1-float echo, and closes after it, outside the "
         "time (a `--wait busy` server end keeps a core polling while a connection is open).\n",
         f"Each cell is the median of N repetitions (per sweep {reps['sweep']}, per fold "
         f"{reps['fold']}, per combo {reps['combo']}, per bar {reps['bar']}), the paths interleaved "
         "within each (A B C …, then B C … A). Gate: the final (pnl, trades) of every timed job, "
         f"{m['checked']:,} in all, equals the in-process `hullsweep_rs.sweep` bit for bit; "
         f"{len(m['failures'])} mismatches.\n",
         f"| path | per sweep (1 call) | per fold ({FOLDS}) | per combo (80) | per bar ({n:,}) |",
         "|---|---:|---:|---:|---:|"]
    for p, _ in PATHS:
        L.append(f"| {p} | " + " | ".join(cell(g, p) for g in GRAINS) + " |")
    L.append("| *study: 39 ns shared-memory ring × calls* | "
             + " | ".join(fmt(STUDY_RING * nominal[g]) for g in GRAINS) + " |")
    L.append("| *study: 14 µs Unix socket floor × calls* | "
             + " | ".join(fmt(STUDY_SOCKET * nominal[g]) for g in GRAINS) + " |")
    L.append("")
    notes = sorted({f"{g}: {e}" for g in GRAINS for e in est[g].values()})
    if notes:
        L.append("est.: a stream cannot survive a respawn, so those cells are not the job's answer "
                 "and are estimated from calls of the same size (each checked against in-process "
                 "`Live` over the same bars): " + "; ".join(notes) + ".\n")
    L.append("Per-call overhead, the study's way: (path − in-process) ÷ the calls it made across "
             "the boundary (per fold 18 and per bar n + 2 over the engine: the stream's open and "
             "close; per combo 81: the load), against the study's two floors.\n")
    L.append("| path | per sweep | per fold | per combo | per bar |")
    L.append("|---|---:|---:|---:|---:|")
    for p, _ in PATHS[1:]:
        row = []
        for g in GRAINS:
            over = (med[g][p] - med[g]["in-process"]) / round_trips(g, p, n)
            row.append(("est. " if p in est[g] else "") + (fmt(over) if over > 0 else f"−{fmt(-over)}"))
        L.append(f"| {p} | " + " | ".join(row) + " |")
    L.append("| *study: shared-memory ring* | " + " | ".join(["39 ns"] * 4) + " |")
    L.append("| *study: Unix socket floor* | " + " | ".join(["14 µs"] * 4) + " |")
    L.append("")
    L.append("Per bar ÷ per sweep, the price of the finest granularity on each path (the study: "
             f"{n:,} × 14 µs = {fmt(n * STUDY_SOCKET)} of pure IPC on a socket, {n:,} × 39 ns = "
             f"{fmt(n * STUDY_RING)} on a ring):\n")
    for p, _ in PATHS:
        ratio = med["bar"][p] / med["sweep"][p]
        L.append(f"- {p}: {cell('bar', p)} ÷ {fmt(med['sweep'][p])} = {ratio:,.0f}×"
                 + (" (per bar estimated)" if p in est["bar"] else ""))
    L.append("")
    L.append("Reading it: the boundary charges per call, so the columns to the left amortize it and "
             "the per-bar column exposes it. A stream's per-bar work in-process is the floor every "
             "remote path adds its per-call cost to; compare the overhead table's per-bar column "
             "with the study's 14 µs and 39 ns. The study's figures are a native Zig ring (39 ns) and "
             "a Python client on a Unix socket elsewhere (14 µs); here every remote path has a Python "
             "client, so its per-call cost includes building and parsing each request and reply in "
             "Python. The in-process path's pushes are `hullsweep_rs.Live.push`, which returns a "
             "push's events as a dict of eight numpy columns (one table, for pandas); a client's "
             "push returns them as two structured arrays, closes and opens (over shared memory "
             "made whole in Rust), so the per-fold and per-bar overheads also hold the difference "
             "between the two ways the events reach Python, which can make a small overhead come "
             "out negative. Other jobs shared the machine (load average above), so compare rows within "
             "a column, measured in the same repetitions. A busy-polling end needs a core of its own: where "
             "the client, the server and other jobs share fewer cores than there are polling ends, "
             "`--wait busy` pays for it in scheduling delays (docs/transports.md).")
    L.append(f"<!-- {NAME}:end -->")
    return "\n".join(L) + "\n"


def naive_folds(job: Job) -> dict:
    """The independent per-fold sweeps, summed per combo, against the whole-series sweep."""
    outs = [job.inproc_sweep(f, job.params) for f in job.folds]
    pnl = np.sum([o[0] for o in outs], axis=0)
    trades = np.sum([o[1] for o in outs], axis=0)
    differ = int(np.sum((pnl.view(np.int64) != job.truth[0].view(np.int64)) | (trades != job.truth[1])))
    return {"differ": differ, "trades": int(trades.sum()), "truth_trades": int(job.truth[1].sum()),
            "dpnl": float(np.nanmax(np.abs(pnl - job.truth[0])))}


def run(out: Path, no_build: bool, quick: bool, bars: int | None, variant: str, tmp: Path,
        reps: list[int] | None = None) -> int:
    """Measures and writes the section into out (a report file, or a folder: out/boundary.md);
    returns the exit status (1 if the gate failed, and then nothing is written)."""
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    cfg = dict(QUICK if quick else FULL)
    if reps:
        cfg["reps"] = dict(zip(GRAINS, reps))
    if not no_build:
        subprocess.run(["cargo", "build", "--release", "--bin", "hullsweep"], cwd=ROOT, check=True)
    # A copy of its own, so a concurrent build cannot swap the binary between spawns.
    binary = tmp / "hullsweep"
    shutil.copy2(ROOT / "target" / "release" / "hullsweep", binary)
    sh(str(binary), "data", "--out", str(tmp / "full.npy"))
    close = np.ascontiguousarray(np.load(tmp / "full.npy")[: bars or cfg["bars"]])
    argv = [str(binary), "serve", "--stdio", "--variant", variant, "--threads", "1"]
    job = Job(close, variant, cfg["sample"], argv)
    naive = naive_folds(job)
    header = Header(".venv/bin/python engine/python/granularity.py",
                    python=("numpy",))
    servers = Servers(binary, tmp)
    try:
        connects = {}
        for name, spec in PATHS:
            if spec:
                connects[name] = servers.launch(spec[0], variant, spec[1])
        for name, connect in connects.items():  # each path once, untimed: every server warm
            with connect() as c:
                c.sweep(close, job.params)
                sid = c.open_stream(job.params, FEE)
                c.push(sid, close[:1000])
        log(f"{len(close):,} bars × {len(job.params)} combos, variant {variant}: measuring")
        times, est, failures = measure(job, connects, cfg["reps"], log)
    finally:
        servers.stop()
    for f in failures:
        print(f"gate: {f}", file=sys.stderr)
    if failures:
        print(f"gate FAILED: {len(failures)} mismatches; nothing written", file=sys.stderr)
        return 1
    m = {"stamp": header.line(), "bars": len(close),
         "reps": cfg["reps"], "variant": variant, "est": est, "failures": failures, "naive": naive,
         "median": {g: {p: statistics.median(v) for p, v in times[g].items()} for g in GRAINS},
         "checked": sum(len(v) for g in GRAINS for p, v in times[g].items() if p not in est[g]),
         "fold_sizes": [len(f) for f in job.folds]}
    text = section(m)
    report = out if out.suffix == ".md" else out / "boundary.md"
    splice_section(report, text, NAME)
    print(text)
    log(f"wrote the granularity section of {report}")
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"a smoke run: {QUICK['bars']:,} bars, 1 to 3 repetitions, {QUICK['sample']} "
                         "spawn samples; writes to a temporary file unless --out is given")
    ap.add_argument("--bars", type=int, default=None, help="bars of the default series to use")
    ap.add_argument("--reps", default=None,
                    help="repetitions per sweep, fold, combo, bar, comma-separated (default "
                         + ",".join(str(FULL["reps"][g]) for g in GRAINS) + "; --quick "
                         + ",".join(str(QUICK["reps"][g]) for g in GRAINS) + ")")
    ap.add_argument("--variant", default="fastest", help="kernel variant, in-process and on the servers")
    ap.add_argument("--out", type=Path, default=None,
                    help="a report file (.md), or a folder for boundary.md (default: reports/)")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()
    reps = [int(x) for x in args.reps.split(",")] if args.reps else None
    if reps is not None and (len(reps) != len(GRAINS) or min(reps) < 1):
        ap.error("--reps takes four counts >= 1: sweep,fold,combo,bar")
    out = args.out
    if out is None:
        out = (Path(tempfile.mkdtemp(prefix="granularity-")) / "boundary.md") if args.quick else ROOT / "reports"
    with tempfile.TemporaryDirectory() as tmp:
        sys.exit(run(out, args.no_build, args.quick, args.bars, args.variant, Path(tmp), reps))


if __name__ == "__main__":
    main()
