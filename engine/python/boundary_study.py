"""The boundary study: what calling the Rust engine from Python costs, by architecture, with the
equivalence gate across the boundary; regenerates reports/boundary.md and its SVG plots."""

# Run from the repository root:  .venv/bin/python engine/python/boundary_study.py
# (numpy and numba from reference/requirements.txt, matplotlib from reference/requirements-lab.txt).

from __future__ import annotations

import argparse
import json
import math
import pickle
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from hullsweep_rs import client as hc  # pip install ./pyext (scripts/test installs it in .venv)

from boundary_bare import bare_hold, start_bare_echo
from boundary_engine import FEE, ROOT, Header, Servers, default_grid, load_reference, sh, variant_exists
from boundary_measure import echo_reps, fit_floor_bandwidth, gate, median_of, timed
from boundary_report import write_report

PYO3_ROW = "Rust in-process from Python (`hullsweep_rs`, pyo3, `reference`)"


# -- the study -----------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bars", type=int, default=150_000)
    ap.add_argument("--combos", type=int, default=8, help="combos of the default grid, evenly spaced")
    ap.add_argument("--runs", type=int, default=10, help="interleaved runs per architecture (>= 10)")
    ap.add_argument("--echo-points", type=int, default=12)
    ap.add_argument("--ref-dir", type=Path, default=ROOT / "reference")
    ap.add_argument("--out", type=Path, default=ROOT / "reports")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--live-bars", type=int, default=3000,
                    help="timed bars per stream size in the live-streams section (0 skips it)")
    ap.add_argument("--granularity-bars", type=int, default=150_000,
                    help="bars of the granularity section's job, granularity.py (0 skips it)")
    ap.add_argument("--stream-bars", type=int, default=150_000,
                    help="bars of the `stream --connect` section, stream_connect.py (0 skips it)")
    ap.add_argument("--stream-rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true",
                    help="the granularity section's quick mode (and say so in the header)")
    ap.add_argument("--ref-note", default=None,
                    help="how to describe the numba reference in the report, when not reference/ here")
    args = ap.parse_args()

    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "--bin", "hullsweep"], cwd=ROOT, check=True)
        subprocess.run(["cargo", "build", "--release", "-p", "hullsweep-engine", "--example",
                        "stream_latency"], cwd=ROOT, check=True)
    binary = ROOT / "target" / "release" / "hullsweep"
    ref, ref_path = load_reference(args.ref_dir)
    in_repo_ref = ROOT in ref_path.resolve().parents
    rng = random.Random(12345)
    header = Header(".venv/bin/python engine/python/boundary_study.py" + (" --quick" if args.quick else ""))
    started = header.started

    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        sh(str(binary), "data", "--out", str(tmp / "full.npy"))
        close = np.load(tmp / "full.npy")[: args.bars].copy()
        np.save(tmp / "close.npy", close)
        grid = default_grid()
        pick = np.unique(np.linspace(0, len(grid) - 1, args.combos).round().astype(int))
        params = np.ascontiguousarray(grid[pick])
        np.save(tmp / "params.npy", params)

        unchecked = "unchecked" if variant_exists(binary, "unchecked") else "reference"
        servers = Servers(binary, tmp)
        bare_proc = None
        try:
            unix = servers.start("unix", "reference")
            unix_unchecked = servers.start("unix", unchecked)
            tcp = servers.start("tcp", "reference")
            tls = servers.start("tls", "reference")
            pre = servers.start("unix", "reference")
            pre_id = pre.load(close)
            bare_proc, bare = start_bare_echo(tmp)
            spawn_argv = [str(binary), "serve", "--stdio", "--variant", "reference", "--threads", "1"]

            truth = ref.sweep(close, params, FEE)  # also compiles the numba kernel
            truth = (np.asarray(truth[0]), np.asarray(truth[1]))
            kernel_secs = []

            def oneshot():
                out = tmp / "oneshot.csv"
                r = subprocess.run([str(binary), "sweep", "--data", str(tmp / "close.npy"),
                                    "--params", str(tmp / "params.npy"), "--variant", "reference",
                                    "--threads", "1", "--fee", str(FEE), "--out", str(out)],
                                   capture_output=True, text=True, check=True)
                secs = float(re.search(r" in ([0-9.]+) s", r.stderr).group(1))
                rows = np.genfromtxt(out, delimiter=",", names=True, dtype=None, encoding=None)
                return secs, (np.asarray(rows["pnl"], float), np.asarray(rows["trades"], np.int64))

            paired_echo = []
            batch_rt = []

            def batch_timed():
                t, (pnl, trades, secs) = timed(lambda: unix.sweep_timed(close, params))
                batch_rt.append(t)
                kernel_secs.append(secs)
                # A full-payload echo right after, outside the call's own timing (the row uses
                # batch_rt): the target compares the boundary with echoes under the same load.
                paired_echo.append(timed(lambda: unix.echo(close))[0])
                return pnl, trades

            def chatty(client):
                out = [client.sweep(close, params[k : k + 1]) for k in range(len(params))]
                return np.concatenate([o[0] for o in out]), np.concatenate([o[1] for o in out])

            def chatty_pre():
                out = [pre.sweep_loaded(pre_id, params[k : k + 1]) for k in range(len(params))]
                return np.concatenate([o[0] for o in out]), np.concatenate([o[1] for o in out])

            def spawn():
                with hc.Client.spawn_stdio(spawn_argv) as c:
                    return c.sweep(close, params)

            try:  # the variants in-process from Python (pyext/, built by scripts/test)
                import hullsweep_rs
            except ImportError:
                hullsweep_rs = None
                print("hullsweep_rs is not built (maturin develop -m pyext/Cargo.toml): "
                      "its row is left out", file=sys.stderr)
            archs = {
                "numba in-process": lambda: ref.sweep(close, params, FEE),
                PYO3_ROW: lambda: hullsweep_rs.sweep(close, params, FEE, variant="reference",
                                                     threads=1),
                "Rust in-process (one-shot CLI, kernel time)": None,  # timed inside the process
                "batch, Unix socket": lambda: unix.sweep(close, params),
                "batch, Unix socket, timed (opcode 5)": batch_timed,
                f"batch, Unix socket, `{unchecked}` variant": lambda: unix_unchecked.sweep(close, params),
                "chatty, one call per combo, series re-sent": lambda: chatty(unix),
                "spawn per sweep, stdin/stdout": spawn,
                "batch, TCP loopback": lambda: tcp.sweep(close, params),
                "batch, TLS 1.3 over TCP loopback": lambda: tls.sweep(close, params),
                "chatty, one call per combo, preloaded series": chatty_pre,
            }
            if hullsweep_rs is None:
                del archs[PYO3_ROW]
            for fn in archs.values():  # warm every path once
                if fn:
                    fn()
            oneshot()
            kernel_secs.clear()
            paired_echo.clear()
            batch_rt.clear()
            times = {k: [] for k in archs}
            gates = {}
            order = list(archs)
            for run in range(args.runs):
                rng.shuffle(order)
                for name in order:
                    if archs[name] is None:
                        secs, out = oneshot()
                    else:
                        secs, out = timed(archs[name])
                        if archs[name] is batch_timed:  # the sweep call alone, not its paired echo
                            secs = batch_rt[-1]
                    times[name].append(secs)
                    bad, worst = gate(truth, out)
                    prev = gates.get(name, (0, 0.0))
                    gates[name] = (max(prev[0], bad), max(prev[1], worst))
                print(f"run {run + 1}/{args.runs} done", file=sys.stderr)

            # Boundary of the batch call: round trip minus the kernel's own time, same call.
            batch_boundary = [t - k for t, k in zip(batch_rt, kernel_secs)]
            rust_inproc_server = statistics.median(kernel_secs)

            # Params-only calls on a preloaded series (opcode 6, round trip − in-server time),
            # each interleaved call by call with the 1-float echo it is compared with. With 0
            # combos the server only checks the (empty) params, as the loaded series was validated
            # at load; the same call on the full and on a 1-bar series shows that no O(n_bars)
            # work is left in it.
            tiny_id = pre.load(close[:1])
            po = {"one": [], "full": [], "tiny": [], "server": []}
            one_kernel = []
            floor_pairs = []
            for i in range(300):
                if i % 10 == 0:  # a real combo computes for milliseconds; fewer of those
                    t, (_, _, k) = timed(lambda: pre.sweep_loaded_timed(pre_id, params[:1]))
                    po["one"].append(t - k)
                    one_kernel.append(k)
                t, (_, _, k) = timed(lambda: pre.sweep_loaded_timed(pre_id, params[:0]))
                po["full"].append(t - k)
                po["server"].append(k)
                t, (_, _, k) = timed(lambda: pre.sweep_loaded_timed(tiny_id, params[:0]))
                po["tiny"].append(t - k)
                floor_pairs.append(timed(lambda: unix.echo(close[:1]))[0])
            params_only_call = {k: statistics.median(v) for k, v in po.items()}
            params_only_boundary = params_only_call.pop("one")
            floor_paired = statistics.median(floor_pairs)

            # Controls with no engine: the bare Python server receives the same bytes, keeps its
            # core busy as long as the engine's kernel took, and answers; round trip − hold is
            # what any call that blocks that long costs here (the client sleeps, then is woken).
            hold_one = statistics.median(one_kernel)
            control_one = []
            for _ in range(30):
                t, held = bare_hold(bare, hold_one, params[:1])
                control_one.append(t - held)
            hold_batch = statistics.median(kernel_secs)
            control_batch = []
            for _ in range(max(args.runs, 10)):
                t, held = bare_hold(bare, hold_batch, close)
                control_batch.append(t - held)
            controls = {"one": (hold_one, statistics.median(control_one)),
                        "batch": (hold_batch, statistics.median(control_batch))}

            # Diagnostics for the batch boundary: the same subtraction on a call that waits only
            # for validation (0 combos; the full series still travels), and the full-payload echo
            # after the server has idled 50 ms, as it does between calls in the interleaved loop.
            none = params[:0]
            short = []
            for _ in range(100):
                t, (_, _, k) = timed(lambda: unix.sweep_timed(close, none))
                short.append(t - k)
            short_boundary = statistics.median(short)
            idle_echo = []
            for _ in range(30):
                time.sleep(0.05)
                idle_echo.append(timed(lambda: unix.echo(close))[0])
            idle_echo = statistics.median(idle_echo)

            # Echo curve: Unix, TCP and TLS from the Python client; bare socket at the same sizes.
            top = args.bars
            sizes = sorted({int(round(v)) for v in np.logspace(0, math.log10(top), args.echo_points)})
            echo = {"unix": [], "tcp": [], "tls": [], "bare": []}
            for c in (unix, tcp, tls, bare):  # settle every path before the first, smallest point
                for _ in range(200):
                    c.echo(close[:1])
            payloads = {n: np.ascontiguousarray(close[:n]) for n in sizes}
            for n in sizes:
                x = payloads[n]
                tries = [("unix", unix), ("tcp", tcp), ("tls", tls), ("bare", bare)]
                for name, c in tries:
                    got = c.echo(x)
                    assert np.array_equal(got.view(np.int64), x.view(np.int64)), name
                # Interleaved call by call, so the four transports see the same load.
                samples = {name: [] for name, _ in tries}
                for _ in range(echo_reps(n)):
                    rng.shuffle(tries)
                    for name, c in tries:
                        samples[name].append(timed(lambda: c.echo(x))[0])
                for name in samples:
                    echo[name].append(statistics.median(samples[name]))
            echo_min = min(timed(lambda: unix.echo(close))[0] for _ in range(50))
            fits = {k: fit_floor_bandwidth([16 * n for n in sizes], v) for k, v in echo.items()}
            full_echo = {k: v[-1] for k, v in echo.items()}
            floor_echo = echo["unix"][0]

            # Serialization tax on the full series.
            big = close
            ser = {}
            raw_b = big.astype("<f8").tobytes()
            pk_b = pickle.dumps(big, protocol=5)
            js_b = json.dumps(big.tolist())
            reps = max(args.runs, 10)
            ser["raw bytes (`astype().tobytes()` / `frombuffer().copy()`)"] = (
                median_of(lambda: big.astype("<f8").tobytes(), reps * 5),
                median_of(lambda: np.frombuffer(raw_b, "<f8").copy(), reps * 5), len(raw_b))
            ser["pickle (protocol 5)"] = (
                median_of(lambda: pickle.dumps(big, protocol=5), reps * 5),
                median_of(lambda: pickle.loads(pk_b), reps * 5), len(pk_b))
            ser["JSON (`json.dumps(tolist())` / `np.array(json.loads())`)"] = (
                median_of(lambda: json.dumps(big.tolist()), reps),
                median_of(lambda: np.array(json.loads(js_b)), reps), len(js_b))
            # The engine client sends numpy memory as is: no encode step at all.
            zero_copy = median_of(lambda: memoryview(big).cast("B"), reps * 50)

            # Spawn cost per call: spawn, one 1-float echo, end of input, exit.
            def spawn_echo():
                with hc.Client.spawn_stdio(spawn_argv) as c:
                    c.echo(close[:1])

            spawn_echo()
            spawn_cost = [timed(spawn_echo)[0] for _ in range(max(20, args.runs))]

            # Connecting: TCP connect vs TCP connect + TLS handshake + verification by the CA,
            # interleaved, each followed by a 1-float echo so the session is really usable.
            ca = str(servers.tls_dir() / "ca.pem")
            tcp_port = tcp._sock.getpeername()[1]
            connect = {"tcp": [], "tls": []}
            for _ in range(max(30, args.runs)):
                for name, make in [("tcp", lambda: hc.Client.tcp("127.0.0.1", tcp_port)),
                                   ("tls", lambda: hc.Client.tls("127.0.0.1", servers.tls_port, cafile=ca))]:
                    def once():
                        with make() as c:
                            c.echo(close[:1])
                    connect[name].append(timed(once)[0])
            true_cost = [timed(lambda: subprocess.run(["true"]))[0] for _ in range(max(20, args.runs))]
        finally:
            servers.stop()
            if bare_proc is not None:
                bare.close()
                bare_proc.wait(timeout=30)

    write_report(args, header, started, ref_path, in_repo_ref, unchecked, params, times, gates,
                 rust_inproc_server, batch_boundary, params_only_boundary, sizes, echo, fits,
                 full_echo, floor_echo, ser, zero_copy, spawn_cost, true_cost, short_boundary,
                 idle_echo, params_only_call, echo_min, kernel_secs,
                 statistics.median(paired_echo), floor_paired, controls, connect)
    if args.live_bars:
        # The live-streams section: its own interleaved run, spliced into the report just written.
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import live_boundary

        with tempfile.TemporaryDirectory() as tmp_s:
            live_boundary.run(args.out, True, [80, 10_000], args.live_bars, 1000, Path(tmp_s))
    if args.granularity_bars:
        # The granularity section: one job at four granularities over every transport, gated.
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import granularity

        with tempfile.TemporaryDirectory() as tmp_s:
            status = granularity.run(args.out, True, args.quick, args.granularity_bars, "fastest",
                                     Path(tmp_s))
        if status:
            raise SystemExit(status)
    if args.stream_bars:
        # The `hullsweep stream --connect` section: whole processes, local against an engine.
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import stream_connect

        status = stream_connect.measure(args.out / "boundary.md", args.stream_rounds, args.stream_bars)
        if status:
            raise SystemExit(status)


if __name__ == "__main__":
    main()
