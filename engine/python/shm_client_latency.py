"""Round-trip latency of the Python client (hullsweep_rs.client) over shared memory, with a Unix
socket for reference: one-float echoes and one-bar pushes to an 80-combo live stream, each call
timed on its own. Standard library and numpy only (plus hullsweep_rs, the client measured).

    cargo build --release
    .venv/bin/python engine/python/shm_client_latency.py [--rounds 3] [--calls 20000]

Each measurement starts its own connection (and stream), makes --warmup calls, then times
--calls calls with perf_counter_ns; the rows are interleaved over --rounds rounds, and each cell
is the median over the rounds of that round's percentile. Servers run with --wait busy and with
the default (spin); clients with wait busy and spin. A connection to a busy server holds a core
while it is open, so every connection is closed before the next measurement starts. The table is
markdown, with the machine, Python and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hullsweep_rs.client import Client

ROOT = Path(__file__).resolve().parents[2]


def grid(k: int) -> np.ndarray:
    """k combos of HMA lengths from 6 to 200 (as `--grid 6:200:k`, near enough for timing)."""
    ns = np.unique(np.linspace(6, 200, k).round().astype(np.int64))
    return np.array([[n, max(n // 2, 1), max(int(n**0.5), 1), n, max(n // 2, 1), max(n // 3, 1)]
                     for n in ns], dtype=np.int64)


def percentiles(ns: list[int]) -> tuple[float, float, float]:
    a = np.asarray(ns, dtype=np.float64) / 1000.0
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return float(p50), float(p90), float(p99)


def time_echo(c: Client, calls: int, warmup: int) -> list[int]:
    x = np.array([100.0])
    echo = c.echo
    for _ in range(warmup):
        echo(x)
    pc = time.perf_counter_ns
    out = [0] * calls
    for i in range(calls):
        t = pc()
        echo(x)
        out[i] = pc() - t
    assert c.echo(x)[0] == 100.0
    return out


def time_push(c: Client, calls: int, warmup: int, combos: int) -> list[int]:
    rng = np.random.default_rng(3)
    bars = (100.0 * np.cumprod(1.0 + 0.001 * rng.standard_normal(calls + warmup))).tolist()
    sid = c.open_stream(grid(combos))
    push = c.push
    for b in bars[:warmup]:
        push(sid, b)
    pc = time.perf_counter_ns
    out = [0] * calls
    for i, b in enumerate(bars[warmup:]):
        t = pc()
        push(sid, b)
        out[i] = pc() - t
    return out


def time_raw_call(c: Client, calls: int, warmup: int) -> list[int]:
    """The native ShmSocket.call on a prebuilt one-float echo frame: the floor under the client."""
    frame = [bytes.fromhex("11000000" "01" "01000000" "00000000") + np.float64(100.0).tobytes()]
    call = c._sock.call
    for _ in range(warmup):
        call(frame)
    pc = time.perf_counter_ns
    out = [0] * calls
    for i in range(calls):
        t = pc()
        call(frame)
        out[i] = pc() - t
    return out


class Server:
    def __init__(self, binary: str, where: list[str]):
        self.proc = subprocess.Popen([binary, "serve", *where, "--threads", "1"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline().split(" ", 2)
        if len(line) < 3:
            self.proc.kill()
            raise SystemExit(f"{binary} serve {' '.join(where)} did not start")
        self.addr = line[2].strip()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "hullsweep"))
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--warmup", type=int, default=2_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--combos", type=int, default=80)
    ap.add_argument("--no-unix", action="store_true", help="skip the Unix socket rows")
    args = ap.parse_args()
    if not Path(args.binary).exists():
        raise SystemExit(f"no {args.binary}: run cargo build --release first")

    tmp = tempfile.mkdtemp(prefix="hullsweep-lat-")
    tag = f"lat-{os.getpid()}"
    servers = {
        "busy": Server(args.binary, ["--shm", f"{tag}-busy", "--wait", "busy"]),
        "spin": Server(args.binary, ["--shm", f"{tag}-spin"]),
    }
    if not args.no_unix:
        servers["unix"] = Server(args.binary, ["--unix", os.path.join(tmp, "e.sock")])

    # (label, server, client wait or None for unix, op)
    rows = []
    for server in ("busy", "spin"):
        for wait in ("busy", "spin"):
            rows += [("shm", server, wait, "echo"), ("shm", server, wait, "push")]
    rows.append(("shm", "busy", "busy", "raw call"))
    if not args.no_unix:
        rows += [("unix", "unix", None, "echo"), ("unix", "unix", None, "push")]

    load_before = load()
    results: dict[tuple, list[tuple[float, float, float]]] = {r: [] for r in rows}
    skipped = set()
    try:
        for _ in range(args.rounds):
            for row in rows:
                transport, server, wait, op = row
                addr = servers[server].addr
                c = Client.shm(addr, wait=wait) if transport == "shm" else Client.unix(addr)
                try:
                    if op == "echo":
                        ns = time_echo(c, args.calls, args.warmup)
                    elif op == "push":
                        ns = time_push(c, args.calls, args.warmup, args.combos)
                    elif hasattr(c._sock, "call"):
                        ns = time_raw_call(c, args.calls, args.warmup)
                    else:
                        skipped.add(row)
                        continue
                finally:
                    c.close()
                results[row].append(percentiles(ns))
    finally:
        for s in servers.values():
            s.stop()
    load_after = load()

    print(f"machine: {machine()}  ")
    print(f"python: {platform.python_implementation()} {platform.python_version()}, numpy {np.__version__}  ")
    print(f"load average (1/5/15 min): before {load_before}, after {load_after}  ")
    print(f"{args.calls:,} calls after {args.warmup:,} warm-up per cell, {args.rounds} rounds interleaved; "
          f"each cell the median over the rounds; push: one bar to a {args.combos}-combo stream")
    print()
    print("| transport | server wait | client wait | call | p50 µs | p90 µs | p99 µs | p50 each round µs |")
    print("|---|---|---|---|---:|---:|---:|---|")
    for row in rows:
        if row in skipped:
            continue
        transport, server, wait, op = row
        got = results[row]
        med = [statistics.median(x[k] for x in got) for k in range(3)]
        each = ", ".join(f"{x[0]:.2f}" for x in got)
        op_name = {"echo": "echo 1 float", "push": f"push 1 bar, {args.combos} combos",
                   "raw call": "ShmSocket.call, prebuilt echo frame"}[op]
        sw = "-" if transport == "unix" else server
        print(f"| {transport} | {sw} | {wait or '-'} | {op_name} | {med[0]:.2f} | {med[1]:.2f} | "
              f"{med[2]:.2f} | {each} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
