"""The boundary study's report: reports/boundary.md and its two SVG plots, written from what
boundary_study.py measured (matplotlib from reference/requirements-lab.txt)."""

from __future__ import annotations

import platform
import re
import statistics
import sys
from pathlib import Path

import numpy as np

from boundary_engine import FEE, ROOT


# Sections written by their own scripts (live_boundary.py, granularity.py) sit between markers
# `<!-- NAME:begin -->` and `<!-- NAME:end -->`; each script rewrites only its own.
MARKED = re.compile(r"<!-- ([a-z-]+):begin -->.*?<!-- \1:end -->\n?", re.S)


def splice_section(report: Path, text: str, name: str) -> None:
    """Replaces the section between NAME's markers in the report (text includes them), or
    appends it; the rest of the file is left as it is."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    old = report.read_text() if report.exists() else "# The boundary study: Python → Rust engine\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + text.rstrip("\n") + rest.split(end, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(new)


def marked_sections(report: Path) -> list[str]:
    """The marked sections of an existing report, in order (kept when the study rewrites it)."""
    return [m.group(0) for m in MARKED.finditer(report.read_text())] if report.exists() else []


def us(s: float) -> str:
    return f"{s * 1e6:,.1f}"


def ms(s: float) -> str:
    return f"{s * 1e3:,.2f}"


def write_report(args, header, started, ref_path, in_repo_ref, unchecked, params, times, gates,
                 rust_inproc_server, batch_boundary, params_only_boundary, sizes, echo, fits,
                 full_echo, floor_echo, ser, zero_copy, spawn_cost, true_cost, short_boundary,
                 idle_echo, params_only_call, echo_min, kernel_min,
                 paired_echo, floor_paired, controls, connect):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    med = {k: statistics.median(t) for k, t in times.items()}
    base = med["numba in-process"]
    n_bytes = 8 * args.bars
    bb = statistics.median(batch_boundary)
    naive = med["batch, Unix socket"] - rust_inproc_server

    L = []
    L.append("# The boundary study: Python → Rust engine\n")
    L.append(header.markdown().rstrip("\n"))
    L.append(f"- Release builds; Linux {platform.release()}")
    ref_note = ("`reference/hullsweep_ref.py` (the project's numba reference)" if in_repo_ref else
                args.ref_note if args.ref_note else
                f"**a local stand-in** at `{ref_path}` with the interface of `reference/hullsweep_ref.py` "
                "(the project's reference had not landed in this branch; rerun once it has)")
    L.append(f"- numba baseline: {ref_note}, single thread")
    L.append(f"- Sweep: {args.bars:,} bars (seed 42 GBM, `hullsweep data`) × {len(params)} combos "
             f"evenly spaced over the default 80-length grid (lengths {', '.join(str(int(p[0])) for p in params)}), "
             f"fee {FEE}. A smaller sweep than the default 80 combos keeps the run short on 2 cores; "
             "the boundary cost does not depend on the combo count, only the compute does.")
    L.append(f"- Every architecture row: median of {args.runs} interleaved runs (order shuffled each run); "
             "engine servers run `--threads 1`.\n")
    if unchecked == "reference":
        L.append("> The `unchecked` variant has not landed in this branch, so that row runs `reference` "
                 "(it measures the same thing as the batch row, a second time).\n")

    L.append("## Architectures\n")
    base_min = min(times["numba in-process"])
    L.append("| architecture | median | min | max | × numba (medians) | × numba (minima) | gate: mismatches / max abs Δpnl |")
    L.append("|---|---:|---:|---:|---:|---:|---|")
    for k, t in times.items():
        bad, worst = gates[k]
        L.append(f"| {k} | {ms(med[k])} ms | {ms(min(t))} ms | {ms(max(t))} ms | {med[k] / base:.3f} | "
                 f"{min(t) / base_min:.3f} | {'pass' if bad == 0 else 'FAIL'}: {bad} / {worst:.1e} |")
    L.append(f"| Rust in-process (kernel time inside the engine, opcode 5) | {ms(rust_inproc_server)} ms | "
             f"{ms(min(kernel_min))} ms | | {rust_inproc_server / base:.3f} | {min(kernel_min) / base_min:.3f} | "
             "same call as the timed batch row |")
    L.append("")
    L.append("Other jobs shared the two cores during the run (load average above), so single runs "
             "vary by up to 2×; the minima column is the less contended view of the same runs.")
    L.append("")
    L.append("Rust in-process is measured three ways, all without a process boundary: the pyo3 row "
             "calls the `reference` variant from this Python process through `hullsweep_rs` "
             "(`pyext/`: numpy arrays in without a copy, the GIL released while it runs), timed like "
             "the numba row; the one-shot CLI row is "
             "`hullsweep sweep`'s own timer around the variant call (a fresh process each run); and the "
             "opcode-5 row is the server's timer around the sweep (validation + kernel) in the "
             "long-lived engine process, on the very calls of the timed batch row. The gate compares "
             "each row's per-combo (pnl, trades) to numba: trades exact, |Δpnl| ≤ 1e-6.\n")

    L.append("## Boundary cost and targets\n")
    full_ratio = full_echo["unix"] / full_echo["bare"]
    t1 = bb / paired_echo
    t3 = params_only_boundary / floor_paired
    t3_full = params_only_call["full"] / floor_paired
    t3_call = params_only_call["tiny"] / floor_paired
    L.append("| quantity | value |")
    L.append("|---|---:|")
    L.append(f"| batch boundary per call (round trip − in-server kernel time, same call; median) | {us(bb)} µs |")
    L.append(f"| batch boundary, naive (median batch − median in-server kernel) | {us(naive)} µs |")
    L.append(f"| full-payload echo, engine, Unix ({sizes[-1]:,} floats = {8 * sizes[-1]:,} B each way) | {us(full_echo['unix'])} µs |")
    L.append(f"| full-payload echo, engine, TCP loopback | {us(full_echo['tcp'])} µs |")
    L.append(f"| full-payload echo, engine, TLS 1.3 over TCP loopback | {us(full_echo['tls'])} µs |")
    L.append(f"| full-payload echo, bare Python socket echo server, same bytes, Unix | {us(full_echo['bare'])} µs |")
    L.append(f"| full-payload echo, engine, Unix, paired: right after each timed batch call | {us(paired_echo)} µs |")
    L.append(f"| echo floor, engine, Unix (1 float), echo curve | {us(floor_echo)} µs |")
    L.append(f"| echo floor, engine, Unix (1 float), paired: interleaved with the params-only calls | {us(floor_paired)} µs |")
    L.append(f"| diagnostic: boundary of a 0-combo batch call (full series sent, validation-only wait) | {us(short_boundary)} µs |")
    L.append(f"| diagnostic: full-payload echo, engine, Unix, after the server idled 50 ms | {us(idle_echo)} µs |")
    L.append(f"| minima, for scale: batch boundary {us(min(batch_boundary))} µs; full-payload echo, engine, Unix {us(echo_min)} µs | |")
    L.append(f"| params-only call on a preloaded series, boundary (opcode 6, 1 combo, round trip − kernel) | {us(params_only_boundary)} µs |")
    L.append(f"| params-only call, 0 combos, preloaded {args.bars:,}-bar series (opcode 6: 17 B out, 8 B back; round trip − in-server time) | {us(params_only_call['full'])} µs |")
    L.append(f"| … the server's own time in that call (subtracted; a loaded series is validated once at load, so only the params are checked) | {us(params_only_call['server'])} µs |")
    L.append(f"| params-only call, 0 combos, preloaded 1-bar series (the call mechanics alone) | {us(params_only_call['tiny'])} µs |")
    L.append(f"| control, no engine: bare Python server, full series in, busy {ms(controls['batch'][0])} ms (the batch's kernel time), 8 B back; round trip − hold | {us(controls['batch'][1])} µs |")
    L.append(f"| control, no engine: bare Python server, 48 B in (one combo's params), busy {ms(controls['one'][0])} ms (that call's kernel time), 8 B back; round trip − hold | {us(controls['one'][1])} µs |")
    L.append("")
    verdict = lambda ok: "**met**" if ok else "**not met**"
    L.append("Each target compares measurements taken under the same load: the batch boundary with "
             "the echo made right after each batch call, the params-only calls with 1-float echoes "
             "interleaved call by call, and the engine's echo with the bare socket's, interleaved "
             "call by call in the echo curve.\n")
    c1 = controls["batch"][1] / paired_echo
    c3 = controls["one"][1] / floor_paired
    L.append(f"1. Batch boundary within 1.5× the full-payload echo: {us(bb)} / {us(paired_echo)} µs = "
             f"{t1:.2f}× → {verdict(t1 <= 1.5)}. (The no-engine control, same bytes and same wait: "
             f"{c1:.2f}×. Against the back-to-back echo of the echo curve instead, taken minutes "
             f"apart and never after a long wait: {bb / full_echo['unix']:.2f}× for the engine, "
             f"{controls['batch'][1] / full_echo['unix']:.2f}× for the control.)")
    L.append(f"2. Full-payload echo within 2× a bare socket echo of the same bytes: {us(full_echo['unix'])} / "
             f"{us(full_echo['bare'])} µs = {full_ratio:.2f}× → {verdict(full_ratio <= 2)}.")
    L.append(f"3. Params-only call on a preloaded series within 2× the 8-byte echo floor: the call "
             f"mechanics (0 combos, 1-bar series) {us(params_only_call['tiny'])} / {us(floor_paired)} µs = "
             f"{t3_call:.2f}× → {verdict(t3_call <= 2)}; 0 combos on the full series "
             f"{us(params_only_call['full'])} / {us(floor_paired)} µs = {t3_full:.2f}× → {verdict(t3_full <= 2)}; "
             f"with one real combo (the server computes for milliseconds, so the client sleeps and is "
             f"woken) {us(params_only_boundary)} / {us(floor_paired)} µs = {t3:.2f}× → {verdict(t3 <= 2)}, "
             f"where the no-engine control of the same wait is {c3:.2f}×.")
    L.append("")
    L.append("Reading the diagnostics: the batch call sends the series once and gets a tiny reply, "
             "so its pure transfer is about half the echo's. What the same-call subtraction sees "
             "beyond that grows with how long the call blocks: the 0-combo row (the series travels, "
             "the server only validates) stays below the echo, while the echo itself, sent after the "
             "server idled 50 ms, costs more than its back-to-back value. On this shared 2-core "
             "virtual machine a thread that sleeps for milliseconds is woken much more slowly than "
             "one that sleeps for microseconds, which is all the back-to-back echo loop ever sees. "
             "The controls measure exactly that with no engine at all: a plain Python server that "
             "receives the same bytes and stays busy for the same time. Where a target is missed "
             "only with a real combo, compare the engine's row with its control: the difference, not "
             "the whole, is the engine's. (A client busy-polling for the reply was tried and was "
             "worse here: it takes a core from the server.)\n")
    L.append("The naive difference of two medians is the study's original method; on a shared 2-core "
             "machine its run-to-run noise (see min/max above) is larger than the boundary itself, so "
             "the targets use the same-call subtraction. A loaded series is validated once, at load "
             "(`ValidSeries`), so a params-only call does no O(n_bars) work before its combos.\n")

    L.append("## Echo curve\n")
    L.append("Round trip of n float64 through the engine's opcode 1 from the Python client (median of "
             "30–600 calls per point, the four transports interleaved call by call), and through a "
             "plain Python socket echo server with the same framing. TLS is TLS 1.3 (rustls in the "
             "server, the standard library's `ssl` in the client) over loopback TCP; TLS × TCP is "
             "the per-call price of encryption.\n")
    L.append("| floats | bytes each way | Unix µs | TCP µs | TLS µs | TLS × TCP | bare Unix µs |")
    L.append("|---:|---:|---:|---:|---:|---:|---:|")
    for i, n in enumerate(sizes):
        L.append(f"| {n:,} | {8 * n:,} | {us(echo['unix'][i])} | {us(echo['tcp'][i])} | "
                 f"{us(echo['tls'][i])} | {echo['tls'][i] / echo['tcp'][i]:.2f} | {us(echo['bare'][i])} |")
    L.append("")
    L.append("Fit `T = floor + bytes moved (both directions) / bandwidth` (least squares on relative error):\n")
    for k, (fl, bw) in fits.items():
        L.append(f"- {k}: floor {us(fl)} µs, bandwidth {bw / 1e9:.2f} GB/s")
    L.append("\n![echo curve](boundary-echo.svg)\n")
    ct, cs = statistics.median(connect["tcp"]), statistics.median(connect["tls"])
    L.append(f"Connecting, then one 1-float echo, then closing (median of {len(connect['tcp'])}, "
             f"interleaved): TCP {us(ct)} µs; TLS (handshake, the server verified by its CA) "
             f"{us(cs)} µs, {cs / ct:.1f}× — paid once per connection, which both clients hold.\n")

    L.append("## Serialization tax (full series)\n")
    L.append(f"{args.bars:,} float64 ({n_bytes:,} bytes). Median of repeated calls.\n")
    L.append("| format | encode µs | decode µs | size bytes | encode × raw |")
    L.append("|---|---:|---:|---:|---:|")
    raw_enc = next(iter(ser.values()))[0]
    for k, (e, d, n) in ser.items():
        L.append(f"| {k} | {us(e)} | {us(d)} | {n:,} | {e / raw_enc:,.1f} |")
    L.append(f"| engine client (`memoryview` of the numpy array, sent as is) | {us(zero_copy)} | "
             "— (`np.frombuffer` view) | {:,} | {:.3f} |".format(n_bytes, zero_copy / raw_enc))
    L.append("")

    L.append("## Spawn cost\n")
    sp = statistics.median(spawn_cost)
    tr = statistics.median(true_cost)
    L.append(f"- spawn `hullsweep serve --stdio`, one 1-float echo, close, wait: median {ms(sp)} ms "
             f"(min {ms(min(spawn_cost))}, max {ms(max(spawn_cost))}, {len(spawn_cost)} calls)")
    L.append(f"- for scale, `subprocess.run(['true'])`: median {ms(tr)} ms")
    L.append(f"- per {len(params)}-combo sweep that is {sp / med['batch, Unix socket'] * 100:.1f} % of the batch call; "
             f"paid per combo it would be {len(params)} × {ms(sp)} ms.\n")

    L.append("## Fuzzing\n")
    L.append("The frame parser and the whole request loop are fuzzed by `engine/tests/fuzz.rs` (a "
             "mutation fuzzer on the stable toolchain; the test suite runs it for 2 s, "
             "`HULLSWEEP_FUZZ_SECS=N` for longer). The runs made, as recorded in `engine/README.md`:\n")
    readme = (ROOT / "engine" / "README.md").read_text().splitlines()
    start = next((i for i, l in enumerate(readme) if l.startswith("| date | commit |")), None)
    if start is None:
        L.append("(no fuzzing record found in engine/README.md)\n")
    else:
        for line in readme[start:]:
            if not line.startswith("|"):
                break
            L.append(line)
        L.append("")

    L.append("![architectures](boundary-architectures.svg)\n")
    # The sections other scripts own stay, to be rewritten in place when the study reruns them.
    kept = marked_sections(out / "boundary.md")
    (out / "boundary.md").write_text("\n".join(L) + "\n" + "".join("\n" + k for k in kept))

    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = np.array([8 * n for n in sizes])
    for k, style in [("unix", "o-"), ("tcp", "s-"), ("tls", "d-"), ("bare", "^--")]:
        ax.loglog(x, np.array(echo[k]) * 1e6, style, label=f"{k} (floor {us(fits[k][0])} µs, {fits[k][1] / 1e9:.2f} GB/s)")
    ax.set_xlabel("payload bytes each way")
    ax.set_ylabel("round trip µs (median)")
    ax.set_title("Echo through the engine from Python")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "boundary-echo.svg")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    names = list(times)
    ax.barh(range(len(names)), [med[k] / base for k in names])
    ax.set_yticks(range(len(names)), [n.replace("`", "") for n in names], fontsize=7)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_xlabel("median time / numba in-process")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(out / "boundary-architectures.svg")
    plt.close(fig)
    print(f"wrote {out / 'boundary.md'}", file=sys.stderr)
