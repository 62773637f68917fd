"""The boundary study's live row: per-bar round trip of a live stream (opcode 9) against the
in-process `Live::push` and the 1-float echo floor, side by side in one run; writes the
"Live streams" section of reports/boundary.md.

    .venv/bin/python engine/python/live_boundary.py            # this section only
    .venv/bin/python engine/python/boundary_study.py           # the whole study, this included

    .venv/bin/python engine/python/live_boundary.py --quick     # a smoke run, to a temporary file

Two interleaved runs: the Rust one (`engine/examples/stream_latency.rs`: in-process `Live::push`,
the Rust client's push over each transport, the echo floor) and the Python client's (push and
echo over each transport, to `hullsweep serve`: Unix socket, TCP, TLS, and shared memory under
each wait policy, `--wait busy`, `spin` and `event`, the client waiting the same way). Each
rotates its paths bar by bar, so a shared machine's noise falls on all of them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from hullsweep_rs import client as hc  # pip install ./pyext (scripts/test installs it in .venv)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from report_header import Header  # noqa: E402
# As stream_latency.rs's: shared memory under each wait policy, server and client alike.
TRANSPORTS = ["unix", "tcp", "tls", "shm busy", "shm spin", "shm event"]
BEGIN, END = "<!-- live-streams:begin -->", "<!-- live-streams:end -->"
FEE = 0.09


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout


def params_for(n: int) -> np.ndarray:
    """The grids of stream_latency.rs, by the kernel's own grid code: 80 = the default grid,
    otherwise two axes of lengths 6..=200 (10,000 = 100 x 100)."""
    import hullsweep_rs

    if n == 80:
        return np.ascontiguousarray(hullsweep_rs.grid("6:200:80"))
    k = round(n**0.5)
    return np.ascontiguousarray(hullsweep_rs.grid(f"6:200:{k}", f"6:200:{k}")[:n])


def start_server(binary: Path, transport: str, tmp: Path):
    args = [str(binary), "serve", "--variant", "reference", "--threads", "1"]
    wait = transport.split(" ")[1] if transport.startswith("shm ") else None
    if wait:  # a rendezvous socket in /dev/shm under a name of this run's own
        args += ["--shm", f"live-{os.getpid()}-{wait}", "--wait", wait]
    else:
        args += ["--unix", str(tmp / f"live-{transport}.sock")] if transport == "unix" else ["--tcp", "0"]
    tls = tmp / "live-tls"
    if transport == "tls":  # TLS 1.3 on loopback, a certificate made by `hullsweep tls-cert`
        subprocess.run([str(binary), "tls-cert", "--out", str(tls)], check=True, capture_output=True)
        args += ["--tls-cert", str(tls / "cert.pem"), "--tls-key", str(tls / "key.pem")]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    where = proc.stdout.readline().strip().split(" ", 2)[2]
    if transport == "unix":
        return proc, lambda: hc.Client.unix(where)
    if wait:
        return proc, lambda: hc.Client.shm(where, wait)
    host, port = where.rsplit(":", 1)
    if transport == "tls":
        return proc, lambda: hc.Client.tls(host, int(port), cafile=str(tls / "ca.pem"))
    return proc, lambda: hc.Client.tcp(host, int(port))


def quantiles(ns: list[int]) -> dict:
    s = sorted(ns)
    q = lambda p: s[round((len(s) - 1) * p)] / 1e3  # noqa: E731
    return {"p50_us": q(0.5), "p99_us": q(0.99), "mean_us": statistics.fmean(s) / 1e3, "pushes": len(s)}


def python_rows(binary: Path, close: np.ndarray, sizes: list[int], bars: int, warmup: int, tmp: Path):
    """The Python client's per-bar push and 1-float echo over every transport, interleaved."""
    servers = [start_server(binary, t, tmp) for t in TRANSPORTS]
    rows = []
    try:
        for n in sizes:
            params = params_for(n)
            paths = []
            for t, (_, connect) in zip(TRANSPORTS, servers):
                c = connect()
                paths.append((f"Python push, {t}", "push", c, c.open_stream(params, FEE)))
            for at, (t, (_, connect)) in enumerate(zip(TRANSPORTS, servers)):
                # A busy server end polls a core for as long as a connection is open: as in
                # stream_latency.rs, `shm busy` echoes on its push's connection.
                c = paths[at][2] if t == "shm busy" else connect()
                paths.append((f"Python echo 1 float, {t}", "echo", c, None))
            for at in range(0, warmup, 50):
                for _, kind, c, sid in paths:
                    c.push(sid, close[at:min(at + 50, warmup)]) if kind == "push" else c.echo(close[at:at + 1])
            samples = [[] for _ in paths]
            for i in range(bars):
                bar = close[warmup + i: warmup + i + 1]
                replies = []
                for j in range(len(paths)):
                    at = (i + j) % len(paths)
                    _, kind, c, sid = paths[at]
                    t0 = time.perf_counter_ns()
                    r = c.push(sid, bar) if kind == "push" else c.echo(bar)
                    samples[at].append(time.perf_counter_ns() - t0)
                    if kind == "push":
                        replies.append((r[0], r[1].tobytes(), r[2].tobytes()))
                if any(r != replies[0] for r in replies):
                    raise SystemExit(f"bar {warmup + i}: the transports' events differ")
            for (name, kind, c, sid), s in zip(paths, samples):
                rows.append({"combos": n, "path": name, **quantiles(s)})
                if kind == "push":
                    c.close_stream(sid)
                c.close()
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait(timeout=30)
    return rows


def measure(binary: Path, example: Path, sizes: list[int], bars: int, warmup: int, tmp: Path) -> dict:
    header = Header(".venv/bin/python engine/python/live_boundary.py",
                    python=("numpy",))
    out = sh(str(example), "--json", "--combos", ",".join(map(str, sizes)),
             "--bars", str(bars), "--warmup", str(warmup))
    rust = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    sh(str(binary), "data", "--out", str(tmp / "full.npy"))
    close = np.load(tmp / "full.npy")
    py = python_rows(binary, close, sizes, bars, warmup, tmp)
    return {"rust": rust, "python": py, "bars": bars, "warmup": warmup, "stamp": header.line()}


def section(m: dict) -> str:
    L = [BEGIN, "## Live streams: per-bar round trip\n", m["stamp"] + " Release builds.\n",
         f"A stream of the default series, {m['warmup']:,} bars pushed first (untimed), then "
         f"{m['bars']:,} bars one push each, on every path in turn, the order rotating bar by "
         "bar (A B C D E, B C D E A, …). 80 combos is the default grid; 10,000 the two-axis grid "
         "of 100 × 100 lengths from 6 to 200. Servers run `--variant reference --threads 1` "
         "(a stream's cost does not depend on the variant). Every remote push's events were "
         "checked bit for bit against the in-process push of the same bar (Rust run) and "
         "across transports (Python run).\n",
         "| combos | path | p50 µs | p99 µs | mean µs | × in-process (p50) | − echo floor, same transport (p50) |",
         "|---:|---|---:|---:|---:|---:|---:|"]
    for run in ("rust", "python"):
        for r in m[run]:
            n = r["combos"]
            rows = m[run]
            inproc = next((x["p50_us"] for x in m["rust"] if x["combos"] == n and "in-process" in x["path"]), None)
            t = r["path"].rsplit(", ", 1)[-1]
            echo = next((x["p50_us"] for x in rows if x["combos"] == n and "echo" in x["path"]
                         and x["path"].endswith(t)), None)
            name = r["path"] if run == "python" else ("Rust " + r["path"] if "in-process" not in r["path"] else r["path"])
            ratio = f"{r['p50_us'] / inproc:.1f}" if inproc else ""
            over = f"{r['p50_us'] - echo:.1f}" if echo is not None and "push" in r["path"] else ""
            L.append(f"| {n:,} | {name} | {r['p50_us']:.1f} | {r['p99_us']:.1f} | {r['mean_us']:.1f} | {ratio} | {over} |")
    held = {r["combos"]: (r.get("held_bytes"), r.get("charged_bytes")) for r in m["rust"]}
    L.append("")
    L.append("Memory after the warm-up (Rust run): " + "; ".join(
        f"{n:,} combos: `Live` holds {h / 1e6:.2f} MB, the server charged {c / 1e6:.2f} MB to "
        "`--max-loaded`" for n, (h, c) in held.items()) + ".\n")
    L.append("Reading it: the push's cost over the echo floor is the stream's work (the in-process "
             "row) plus encoding its events; the rest of a round trip is the transport's, the same "
             "as an echo of one float. The Rust and the Python rows are two runs, minutes apart; "
             "compare rows within a run. p99 on this shared machine is dominated by other jobs' "
             "scheduling, and a negative difference means the push and the echo medians are "
             "within the noise of the load (the load average above, on 2 cores). TLS is TLS 1.3 "
             "over loopback TCP (rustls in the server; the Rust client rustls pinning the "
             "certificate, the Python client the standard library's `ssl` verifying it by its CA): "
             "its rows against TCP's are the per-bar price of encryption. Shared memory is "
             "`hullsweep serve --shm NAME --wait POLICY` with the client waiting the same way "
             "(`Client::connect_shm`, `Client.shm(NAME, wait=)`); a `busy` end keeps a core polling "
             "while its connection is open (its push and echo share one connection), so on 2 shared "
             "cores it also slows the paths measured beside it. The `spin` rows are not what a "
             "client pushing bar after bar gets: the rotation puts every other path's round trip "
             "(tens of µs over the sockets) between two requests on one connection, longer than "
             "the 50 µs a `spin` end polls, so each of its requests wakes a sleeping server "
             "through the host; back to back, `spin` answers about as `busy` does (reports/shm.md, "
             "wait policies).")
    L.append(END)
    return "\n".join(L) + "\n"


def splice(report: Path, text: str) -> None:
    old = report.read_text() if report.exists() else "# The boundary study: Python → Rust engine\n"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + text.rstrip("\n") + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    report.write_text(new)


def run(out: Path, no_build: bool, sizes: list[int], bars: int, warmup: int, tmp: Path) -> None:
    if not no_build:
        subprocess.run(["cargo", "build", "--release", "--bin", "hullsweep"], cwd=ROOT, check=True)
        subprocess.run(["cargo", "build", "--release", "-p", "hullsweep-engine", "--example",
                        "stream_latency"], cwd=ROOT, check=True)
    binary = ROOT / "target" / "release" / "hullsweep"
    example = ROOT / "target" / "release" / "examples" / "stream_latency"
    m = measure(binary, example, sizes, bars, warmup, tmp)
    out.mkdir(parents=True, exist_ok=True)
    splice(out / "boundary.md", section(m))
    print(f"wrote the live section of {out / 'boundary.md'}", file=sys.stderr)


def main() -> None:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--combos", default="80,10000", help="stream sizes, comma-separated")
    ap.add_argument("--bars", type=int, default=3000, help="timed bars per stream size")
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=None, help="folder of boundary.md (default: reports/)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 80 combos, 300 bars after 200 of warm-up; writes to a "
                         "temporary folder unless --out is given")
    args = ap.parse_args()
    if args.quick:
        args.combos, args.bars, args.warmup = "80", 300, 200
    if args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="live-boundary-")) if args.quick else ROOT / "reports"
    sizes = [int(x) for x in re.split(r"[,\s]+", args.combos.strip()) if x]
    with tempfile.TemporaryDirectory() as tmp:
        run(args.out, args.no_build, sizes, args.bars, args.warmup, Path(tmp))


if __name__ == "__main__":
    main()
