"""Regenerates reports/shm.md: the shared-memory transport's benchmarks, each table as its command
printed it, from one run of the three commands below, with the targets read off the tables.

    .venv/bin/python engine/python/shm_report.py [--quick] [--out DIR] [--no-build]

- `cargo run --release --manifest-path engine/shm-floor/Cargo.toml` (the floor, the ring pair, the
  engine's echo and iceoryx2, in one process pair);
- `cargo run --release -p hullsweep-engine --example shm_wait` (the wait policies bar after bar,
  three runs back to back, and once with both ends on one CPU when `taskset` is there);
- `engine/python/shm_client_latency.py` (the Python client).

The floor table also goes into reports/boundary.md (its "shm-floor" section), beside the
transports' rows there.

--quick runs every command with small sizes (a smoke test: the numbers are not evidence).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from report_header import Header  # noqa: E402
from shm_report_text import (  # noqa: E402
    INTRO, ACROSS, CLIENT, POLICIES, echo_target, floor_intro, targets)
from boundary_report import splice_section  # noqa: E402

FLOOR = ["cargo", "run", "-q", "--release", "--manifest-path", "engine/shm-floor/Cargo.toml", "--"]
WAIT = ["cargo", "run", "-q", "--release", "-p", "hullsweep-engine", "--example", "shm_wait", "--"]
FULL = {"floor": ["--rounds", "5", "--trips", "100000", "--payload", "64,1024"],
        "wait": ["--bars", "20000", "--idle-s", "2"], "wait_runs": 4,
        "one_cpu": ["--bars", "5000", "--idle-s", "0.5"],
        "client": ["--calls", "20000", "--warmup", "2000", "--rounds", "3"]}
QUICK = {"floor": ["--rounds", "2", "--trips", "2000", "--payload", "64,1024"],
         "wait": ["--bars", "500", "--warmup", "200", "--idle-s", "0.2"], "wait_runs": 1,
         "one_cpu": ["--bars", "200", "--warmup", "100", "--idle-s", "0.2"],
         "client": ["--calls", "300", "--warmup", "100", "--rounds", "1"]}
# Lines the header already states (machine, toolchain, load), dropped from the commands' notes.
DROP = re.compile(r"^(- )?(machine|rustc|python|load average)\b", re.I)


def run(cmd: list[str]) -> str:
    print("$", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout


def table(text: str) -> list[dict[str, str]]:
    """The first Markdown table in text, as one dict per row keyed by the header cells."""
    rows = [l for l in text.splitlines() if l.startswith("|")]
    if len(rows) < 2:
        raise SystemExit(f"no table in:\n{text}")
    cells = [[c.strip() for c in r.strip("|").split("|")] for r in rows]
    return [dict(zip(cells[0], r)) for r in cells[2:]]


def notes(text: str) -> str:
    """The command's lines other than its table and what the header states."""
    keep = [l.rstrip() for l in text.splitlines()
            if not l.startswith("|") and not l.startswith("#") and not DROP.match(l.strip())]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(keep)).strip()


def shown(cmd: list[str]) -> str:
    return "`" + " ".join(c for c in cmd if c != "-q") + "`"


def wait_runs(cfg) -> tuple[str, list[list[dict[str, str]]]]:
    """shm_wait run back to back cfg["wait_runs"] times, as one table with a run column (and the
    in-process p50 from each run's notes)."""
    out, runs, placements = [], [], []
    for k in range(cfg["wait_runs"]):
        # Client and server pinned to different CPUs, the two placements taking turns.
        pin = [] if (os.cpu_count() or 1) < 2 else ["--pin", "0,1" if k % 2 == 0 else "1,0"]
        text = run(WAIT + cfg["wait"] + pin)
        placements.append(pin[1] if pin else "-")
        rows = table(text)
        inproc = dict(re.findall(r"^- (.+?): push mean [\d.]+ µs; in-process p50 ([\d.]+)", text, re.M))
        for r in rows:
            r["in-process p50 µs"] = f"{float(inproc.get(r['policy'], 'nan')):.2f}"
        runs.append(rows)
        out.append(text)
    cols = ["policy", "push p50 µs", "push p99 µs", "push p50 ÷ in-process", "in-process p50 µs",
            "echo p50 µs", "echo p99 µs", "idle CPU %"]
    lines = ["| run | client,server CPU | " + " | ".join(cols) + " |",
             "|---:|---|---|" + "---:|" * (len(cols) - 1)]
    for k, (rows, at) in enumerate(zip(runs, placements), 1):
        lines += [f"| {k} | {at} | " + " | ".join(r[c] for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n\n" + notes(out[0]), runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    ap.add_argument("--out", type=Path, default=ROOT / "reports", help="folder of shm.md")
    ap.add_argument("--no-build", action="store_true", help="use the builds as they are")
    args = ap.parse_args()
    cfg = QUICK if args.quick else FULL
    command = ".venv/bin/python engine/python/shm_report.py" + (" --quick" if args.quick else "")
    if not args.no_build:
        run(["cargo", "build", "--release", "--bin", "hullsweep"])
        run(["cargo", "build", "--release", "-p", "hullsweep-engine", "--example", "shm_wait"])
        run(["cargo", "build", "--release", "--manifest-path", "engine/shm-floor/Cargo.toml"])
    header = Header(command, python=("numpy",))

    floor_text = run(FLOOR + cfg["floor"])
    floor = table(floor_text)
    wait_md, waits = wait_runs(cfg)
    one_cpu = None
    if shutil.which("taskset"):
        text = run(["taskset", "-c", "0"] + WAIT + cfg["one_cpu"])
        one_cpu = table(text)
    client_text = run([sys.executable, "engine/python/shm_client_latency.py"] + cfg["client"])
    client = table(client_text)

    L = ["# Shared memory: measured\n", header.markdown(), INTRO]
    L.append(floor_intro(shown(FLOOR + cfg["floor"])))
    L.append("\n".join(l for l in floor_text.splitlines() if l.startswith("|")) + "\n")
    L.append(notes(floor_text) + "\n")
    L.append(POLICIES.format(cmd=shown(WAIT + cfg["wait"]), runs=cfg["wait_runs"]))
    L.append(wait_md + "\n")
    if one_cpu:
        cells = "; ".join(f"{r['policy']}: push {r['push p50 µs']} µs, echo {r['echo p50 µs']} µs"
                          for r in one_cpu)
        L.append(f"Both ends on one CPU ({shown(['taskset', '-c', '0'] + WAIT + cfg['one_cpu'])}), "
                 f"p50: {cells}. A waiting end gives its core away after 5 µs of polling (without "
                 "that, a whole spin budget or a scheduler tick), so under `busy` and `spin` each "
                 "message waits for the other end to be scheduled.\n")
    L.append(CLIENT.format(cmd=shown([".venv/bin/python", "engine/python/shm_client_latency.py"]
                                     + cfg["client"])))
    L.append("\n".join(l for l in client_text.splitlines() if l.startswith("|")) + "\n")
    L.append(notes(client_text) + "\n")
    L.append(ACROSS)
    L.append(targets(floor, waits, client))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "shm.md").write_text("\n".join(L).rstrip("\n") + "\n")
    print(f"wrote {args.out / 'shm.md'}", file=sys.stderr)
    rounds = cfg["floor"][cfg["floor"].index("--rounds") + 1]
    splice_section(args.out / "boundary.md", floor_section(header, floor_text, floor, rounds),
                   "shm-floor")
    print(f"wrote the shm-floor section of {args.out / 'boundary.md'}", file=sys.stderr)
    return 0


def floor_section(header: Header, floor_text: str, floor, rounds: str) -> str:
    """boundary.md's copy of the floor table: the transports' rows there stand beside it."""
    rows = "\n".join(l for l in floor_text.splitlines() if l.startswith("|"))
    echo = echo_target(floor) or ""
    return ("<!-- shm-floor:begin -->\n## Shared memory: the floor and the chosen layer\n\n"
            f"{header.line()}\n\n"
            f"Two processes, {rounds} rounds, the methods interleaved and their order rotated every round "
            "(`engine/shm-floor`, the first table of [shm.md](shm.md), which has the wait policies "
            "and the Python client beside it): the bare atomic ping-pong on one shared cache line "
            "is the floor of any shared-memory transport on this machine; the engine's ring pair "
            "raw and its whole one-float echo are what `serve --shm` adds to it; iceoryx2 is the "
            "layer the engine would otherwise use.\n\n"
            f"{rows}\n\n{echo}\n<!-- shm-floor:end -->\n")


if __name__ == "__main__":
    sys.exit(main())
