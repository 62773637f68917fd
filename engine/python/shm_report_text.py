"""reports/shm.md's text around the measured tables, and its targets read off them (used by
shm_report.py). The text describes the software and the machine; every number in it comes from
the tables of the same run."""

from __future__ import annotations

INTRO = """The shared-memory transport's benchmarks, each table as its command printed it, from one
run of `engine/python/shm_report.py`. Ratios within a table are measured side by side in one run;
absolute times from different tables are not comparable. Two properties of a small shared VM
shape every number below:

- **The floor moves.** A host may place the two vCPUs differently from one run to the next, and
  sometimes within one, so the same ping-pong can measure several times slower in one placement
  than in another. Compare a row with the floor of its own run; the per-round column shows
  whether the floor moved within the run. A vCPU that goes idle may come back on another
  physical core, which is the likeliest reason a `spin` server (asleep through the in-process
  blocks below) sometimes answers at a slower floor than the `busy` one measured just before it.
- **A polling end slows its neighbour.** Where two vCPUs share a physical core, a thread
  busy-polling on one slows the other's work. A client waiting for its reply, or a `--wait busy`
  server waiting for its next request, is such a neighbour.
"""


def floor_intro(cmd: str) -> str:
    return f"""## The floor, the engine's echo, and why not iceoryx2

{cmd} (two processes; methods interleaved, their order rotated every round): the bare two-process
ping-pong on one shared cache line (the floor), the engine's ring pair raw (no session), the whole
engine's one-float echo, and iceoryx2, in one run. The ring pair is the engine's transport without
its session; the engine echo is the whole of `serve --shm` and `Client::echo`: frames, session,
rings, decoding. The engine has its own ring pair because iceoryx2's request-response is several
times the floor (the issue's threshold is 3×).
"""


POLICIES = """## Wait policies, bar after bar

{cmd}, run {runs} time(s) back to back: 80 combos; single-bar pushes per policy after the warm-up bars,
in 20 rounds of shared-memory and in-process blocks; as many echoes; a connected client left idle;
every pushed bar's events bit-identical to `Live::push`. The client and the server are pinned
to different CPUs (`--pin CLIENT,SERVER`, the two placements taking turns from run to run), and
for each in-process block the two threads swap CPUs, so that a push is timed on the server's
CPU either way: two vCPUs of a shared host can differ in speed for seconds at a time, and
unpinned, the scheduler moves the threads between them.

Each policy's in-process blocks run with that policy's server waiting on the other vCPU: under
`busy` it polls through them, so the in-process column under `busy` includes the neighbour effect
above and the `spin` rows' in-process figure is the quiet one. `event` pays a futex wake per
message, which on a VM goes through the host. Idle, `spin` and `event` cost nothing and `busy`
holds a core.
"""


CLIENT = """## Python

{cmd} (`hullsweep_rs.client.Client.shm`; each cell the median over the rounds of that round's
percentile; servers with `--wait busy` and the default `spin`, clients waiting both ways):
"""


ACROSS = """An echo and a one-bar push are each one native method (`ShmSocket.echo`,
`ShmSocket.push_bar`): the frame is built, the reply waited for with the GIL released and its
events decoded into the numpy arrays in Rust, so from Python they cost what the Rust client's
calls cost plus building the result. Other requests go through `ShmSocket.call`, the raw round
trip of a frame built in Python (the prebuilt-frame row), and decode their reply in Python.

## Across the boundary

reports/boundary.md has the rest, measured by the boundary study's scripts: the live push of 80
and 10,000 combos over every transport bar by bar in rotation, the study's granularity table (one
job per sweep, fold, combo and bar over in-process, shm, unix, tcp, tls and spawn-per-call), and
`hullsweep stream` against `hullsweep stream --connect` as whole processes, with the target for
`hullsweep stream --connect shm:NAME` (≤ 1.3× the local `hullsweep stream`).
"""


def _f(x: str) -> float:
    return float(x.rstrip("×").replace(",", ""))


def _met(ok: bool) -> str:
    return "**Met.**" if ok else "**Not met** in this run."


def echo_target(floor) -> str | None:
    """The echo target's line, against the floor of each round of the same run."""
    echo = next((r for r in floor if r["method"].startswith("hullsweep engine echo")), None)
    base = next((r for r in floor if r["method"].startswith("ping-pong, one")), None)
    if not (echo and base):
        return None
    # Round by round: a round's methods run within a second of each other, the rounds may not
    # share a placement (the floor moves), so the echo is held to its own round's floor.
    ns = _f(echo["p50 ns"])
    per_round = sorted(_f(e) / _f(b) for e, b in zip(
        echo["p50 ns per round"].split(" / "), base["p50 ns per round"].split(" / ")))
    ratio = per_round[len(per_round) // 2]
    return (f"- shm echo p50 ≤ 3× the ping-pong floor and ≤ 1 µs: {ns:.0f} ns; round by round "
            f"{per_round[0]:.2f}–{per_round[-1]:.2f}× that round's floor, median {ratio:.2f}×. "
            f"{_met(ratio <= 3 and ns <= 1000)}")


def targets(floor, waits, client) -> str:
    """The issue's targets, each against the row of this run that measures it."""
    L = ["## Against the targets\n"]
    echo = echo_target(floor)
    if echo:
        L.append(echo)
    rows = [r for rs in waits for r in rs if r["policy"].startswith(("busy", "spin"))]
    # From the µs columns, not the printed one-decimal ratio, which would round 1.34 to 1.3.
    push = [_f(r["push p50 µs"]) / _f(r["in-process p50 µs"]) for r in rows]
    quiet = [_f(r["in-process p50 µs"]) for rs in waits for r in rs if r["policy"].startswith("spin")]
    shm = [_f(r["push p50 µs"]) for r in rows]
    if push and quiet:
        q = min(quiet)
        L.append(f"- 80-combo live push over shm p50 ≤ 1.3× in-process: {min(push):.2f}–{max(push):.2f}× "
                 f"against an in-process push with the same policy's server waiting beside it, "
                 f"{min(shm) / q:.2f}–{max(shm) / q:.2f}× against the quietest in-process push "
                 f"({q:.2f} µs). {_met(max(push) <= 1.3)} The first ratio is the transport and the "
                 "protocol; the gap to the second is a waiting neighbour's (see the wait policies "
                 "above).")
    py = next((r for r in client if r["transport"] == "shm" and r["call"] == "echo 1 float"), None)
    if py:
        us = _f(py["p50 µs"])
        L.append(f"- Python `Client.shm` echo p50 ≤ 3 µs: {us:.2f} µs (server {py['server wait']}, "
                 f"client {py['client wait']}). {_met(us <= 3)}")
    L.append("- `hullsweep stream --connect shm:NAME` over 150,000 bars ≤ 1.3× the local "
             "`hullsweep stream`: measured by the boundary study (reports/boundary.md).")
    return "\n".join(L) + "\n"
