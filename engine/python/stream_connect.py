"""`hullsweep stream` as a whole process, local against `--connect` to an engine: the live
filter's wall time over the default series, each path's output checked byte for byte against
the local one; writes the "stream --connect" section of reports/boundary.md.

    .venv/bin/python engine/python/stream_connect.py [--rounds 5] [--bars 150000] [--no-build]

Every path reads the same file of one close per line and writes its JSON-lines events to a file;
each line is still pushed (one round trip) and its events written and flushed before the next
line is read. Paths run in rotated order round after round (A B C, B C A, ...), so a shared
machine's noise falls on all of them alike; the table gives medians and each median's ratio to
the local median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from boundary_engine import ROOT, Header
from boundary_report import splice_section

PATHS = ["local", "shm busy", "shm spin (default)", "unix"]


def start(binary: Path, tmp: Path, transport: str, wait: str | None, procs: list) -> str:
    """Starts `hullsweep serve` and returns the address `--connect` takes."""
    args = [str(binary), "serve", "--threads", "1"]
    if transport == "shm":
        args += ["--shm", f"stream-connect-{os.getpid()}-{len(procs)}"]
        args += ["--wait", wait] if wait else []
    else:
        args += ["--unix", str(tmp / f"engine-{len(procs)}.sock")]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    procs.append(p)
    line = p.stdout.readline().strip()
    if not line.startswith("listening "):
        raise RuntimeError(f"engine did not start: {args}")
    return f"{transport}:{line.split(' ', 2)[2]}"


def run(binary: Path, address: str | None, bars: Path, out: Path) -> float:
    """Wall seconds of one `hullsweep stream` process, from spawn to exit."""
    args = [str(binary), "stream"] + (["--connect", address] if address else [])
    with bars.open("rb") as stdin, out.open("wb") as stdout:
        t0 = time.perf_counter()
        r = subprocess.run(args, stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited with {r.returncode}")
    return wall


def section(walls: dict[str, list[float]], n: int, rounds: int, stamp: str) -> str:
    local = statistics.median(walls["local"])
    rows = "\n".join(
        f"| {p} | {statistics.median(w):.3f} | {min(w):.3f} | {statistics.median(w) / local:.2f}× "
        f"| {(statistics.median(w) - local) / n * 1e6:+.2f} |"
        for p, w in walls.items())
    return (
        "<!-- stream-connect:begin -->\n"
        "## `hullsweep stream --connect`: the live filter as whole processes\n\n"
        f"{stamp}\n\n`hullsweep stream` over {n:,} bars of the default "
        "series (one close per line from a file, events to a file, each bar's events written and "
        "flushed before the next line is read), locally and with `--connect` to a `hullsweep "
        f"serve --threads 1`; {rounds} rounds, paths in rotated order; every path's output byte "
        "for byte the local one's. Wall time from spawn to exit, so the connect and the "
        "process start are in it.\n\n"
        "| path | median s | min s | median ÷ local | per bar vs local µs |\n"
        "|---|---:|---:|---:|---:|\n"
        f"{rows}\n"
        "<!-- stream-connect:end -->\n")


def measure(out: Path, rounds: int, n_bars: int) -> int:
    """Runs the paths and splices the section into `out` (boundary.md); 1 if an output differs."""
    binary = ROOT / "target" / "release" / "hullsweep"
    header = Header(".venv/bin/python engine/python/stream_connect.py",
                    python=("numpy",))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        npy = tmp / "close.npy"
        subprocess.run([str(binary), "data", "--out", str(npy)], check=True, capture_output=True)
        import numpy as np  # noqa: PLC0415 (only this script's data step needs it)

        close = np.load(npy)[: n_bars]
        bars = tmp / "bars.txt"
        bars.write_text("".join(f"{float(c)!r}\n" for c in close))
        procs: list = []
        try:
            addresses = {"local": None,
                         "shm busy": start(binary, tmp, "shm", "busy", procs),
                         "shm spin (default)": start(binary, tmp, "shm", None, procs),
                         "unix": start(binary, tmp, "unix", None, procs)}
            walls: dict[str, list[float]] = {p: [] for p in PATHS}
            want = None
            for r in range(rounds):
                for p in PATHS[r % len(PATHS):] + PATHS[: r % len(PATHS)]:
                    events = tmp / "out.jsonl"
                    walls[p].append(run(binary, addresses[p], bars, events))
                    got = events.read_bytes()
                    want = got if want is None and p == "local" else want
                    if want is not None and got != want:
                        print(f"{p}: output differs from the local stream's", file=sys.stderr)
                        return 1
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(timeout=30)
    text = section(walls, len(close), rounds, header.line())
    splice_section(out, text, "stream-connect")
    print(text)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bars", type=int, default=150_000)
    ap.add_argument("--no-build", action="store_true", help="use target/release/hullsweep as is")
    ap.add_argument("--out", type=Path, default=ROOT / "reports" / "boundary.md")
    a = ap.parse_args()
    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    return measure(a.out, a.rounds, a.bars)


if __name__ == "__main__":
    sys.exit(main())
