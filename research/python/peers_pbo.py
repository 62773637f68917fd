#!/usr/bin/env python3
"""Peers side by side: hullsweep's PBO (docs/research.md) against RiskLabAI's
`probability_of_backtest_overfitting`, on the same seeded returns matrices.

RiskLabAI is not a dependency of hullsweep; it lives in its own environment, so .venv is untouched:

    python3.11 -m venv .venv-peers && .venv-peers/bin/pip install risklabai numpy
    .venv/bin/python research/python/peers_pbo.py > /tmp/peers_pbo.md

(On Python 3.11 pip installs RiskLabAI 2.0.1: its 3.x releases require Python >= 3.12.)

Each run is a child process of its own environment's Python: RiskLabAI under .venv-peers, hullsweep
(`hullsweep_rs.pbo`) under .venv. The child loads the matrix, warms up (a small call first, which
compiles RiskLabAI's numba `sharpe_ratio`), then times only the PBO call. RiskLabAI runs with its
default `n_jobs=1` and hullsweep with `threads=1`, so both use one core. The runs of a case are
interleaved RiskLabAI, hullsweep, RiskLabAI, hullsweep, ... and the times reported are medians. A
RiskLabAI run still going after --timeout seconds is stopped and reported as not finished (and
not repeated).

RiskLabAI 2.0.1's definition, read from its source (RiskLabAI/backtest/
probability_of_backtest_overfitting.py and backtest_statistics.py), against docs/research.md:

- folds: `np.array_split(performances, S)` over the rows; splits:
  `itertools.combinations(range(S), S // 2)` as the training (IS) folds, the rest OOS, both
  concatenated in fold order. Same as hullsweep.
- metric: the numba-jitted `sharpe_ratio(returns, risk_free_rate=0)` = mean / np.std (ddof 0), 0
  where the std is 0. Same definition as hullsweep's `sharpe` (per bar, not annualized); the sums are
  rounded differently (numba's loops vs hullsweep's shifted fold sums), a few ulps apart. Its
  `metric=` option takes any callable, so `mean` is compared by passing a numba mean.
- n*: `np.argmax` of the IS metric: the first index on ties. Same.
- OOS rank: `np.argsort(np.argsort(oos)) + 1`. Without ties it is hullsweep's rank. With ties it
  differs: numpy's default argsort (kind "quicksort") is not stable, so equal OOS values are ranked
  in whatever order the sort leaves them, where hullsweep ranks n* after the tied combos of lower
  index and before those of higher index. No option changes this, so the `ties` case (duplicated
  columns, as a sweep produces when two combos trade alike, and flat columns) shows whether PBO
  still agrees and how many splits' logits differ, and a second `ties` row runs RiskLabAI with
  that one argsort made stable (patched in the child process) to show that this is the only
  difference.
- logit = ln(w / (1 - w)), w = rank / (N + 1); PBO = the mean of (logit <= 0) over the splits. Same.
- RiskLabAI returns (pbo, logits) only; hullsweep also returns the degradation line, P(OOS loss)
  and per split n* and its IS/OOS metric. No input checks in RiskLabAI beyond an even S.

"identical?" is "yes" when PBO is equal exactly and every split's logit is equal to 1e-12 (both
come from the same rank through numpy's and Rust's `ln`).
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from report_header import Header  # noqa: E402
FOLDS = 16

# (name, bars, strategies, metric, repeats, stable); the repeats are for both sides, interleaved.
# stable: RiskLabAI's rank argsort made stable (patched here; it has no option for it), which is
# hullsweep's tie rule, to show that the rank's tie order is the only difference on `ties`.
CASES = [
    ("noise", 1000, 10, "sharpe", 3, False),
    ("noise", 2000, 100, "sharpe", 3, False),
    ("noise", 4000, 1000, "sharpe", 1, False),
    ("noise", 8000, 10000, "sharpe", 1, False),
    ("signal", 2000, 100, "sharpe", 3, False),
    ("ties", 2000, 100, "sharpe", 3, False),
    ("ties", 2000, 100, "sharpe", 1, True),
    ("noise", 2000, 100, "mean", 3, False),
]


def make_matrix(name, bars, strategies, seed):
    """Seeded returns, bars x strategies: N(0, 0.01) noise; `signal` adds a drift of 0.1 standard
    deviations per bar to column 0 (a real edge); `ties` makes the second 2/5 of the columns
    copies of the first 2/5 (combos that trade alike), keeps one more noise column and sets the
    rest to zero (flat combos: an odd number of them, so that a tied pair can straddle the OOS
    median), so every OOS value of a noise column is tied with its copy."""
    rng = np.random.default_rng(seed)
    m = rng.normal(0.0, 0.01, size=(bars, strategies))
    if name == "signal":
        m[:, 0] += 0.001
    elif name == "ties":
        k = 2 * strategies // 5
        m[:, k:2 * k] = m[:, :k]
        m[:, 2 * k + 1:] = 0.0
    return np.ascontiguousarray(m)


# ---------------------------------------------------------------------------------------------
# Child processes: one PBO call timed, the result written to a file.

def _mean_metric():
    from numba import njit

    @njit
    def mean_return(returns, risk_free_rate=0.0):
        return np.mean(returns - risk_free_rate)

    return mean_return


def hullsweep_native():
    """hullsweep_rs's compiled module. Normally `import hullsweep_rs`; where the package's
    __init__.py names something the built extension does not have yet (a work tree edited after
    the last `maturin develop`), the extension file itself is loaded: `pbo` is the same."""
    try:
        import hullsweep_rs

        return hullsweep_rs._native
    except ImportError:
        import glob
        import importlib.util

        spec = importlib.util.find_spec("hullsweep_rs")
        if spec is None or not spec.submodule_search_locations:
            raise
        pkg = spec.submodule_search_locations[0]
        so = sorted(glob.glob(os.path.join(pkg, "_native*.so"))
                    + glob.glob(os.path.join(pkg, "_native*.pyd")))
        if not so:
            raise
        ext = importlib.util.spec_from_file_location("hullsweep_rs._native", so[0])
        module = importlib.util.module_from_spec(ext)
        ext.loader.exec_module(module)
        return module


def worker(args):
    matrix = np.load(args.matrix)
    done = [0]  # RiskLabAI splits evaluated in the timed call
    small = np.random.default_rng(0).normal(size=(64, 3))
    if args.worker == "risklabai":
        from RiskLabAI.backtest import probability_of_backtest_overfitting as rl_pbo

        module = sys.modules[rl_pbo.__module__]
        if args.stable:
            # the module's `np` seen through a namespace whose argsort is stable
            import types

            shim = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np)
                                            if not k.startswith("__")})
            shim.argsort = lambda a, *rest, **kw: np.argsort(a, kind="stable")
            module.np = shim
        metric = _mean_metric() if args.metric == "mean" else None
        # count the splits evaluated (the function is looked up in the module at each call), so
        # that a run stopped at the timeout says how far it got
        evaluate = module.performance_evaluation

        def counted(*a, **kw):
            done[0] += 1
            return evaluate(*a, **kw)

        module.performance_evaluation = counted

        def run(m):
            pbo, logits = rl_pbo(m, n_partitions=args.folds, metric=metric, n_jobs=1)
            return float(pbo), np.asarray(logits, dtype=np.float64)
    else:
        native = hullsweep_native()

        def run(m):
            r = native.pbo(m, folds=args.folds, metric=args.metric, threads=1)
            return float(r["pbo"]), np.asarray(r["logits"], dtype=np.float64)

    run(small)  # warm-up: numba compiles here, not in the timed call
    done[0] = 0

    def alarm(signum, frame):
        raise TimeoutError

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(args.timeout)
    t0 = time.perf_counter()
    try:
        pbo, logits = run(matrix)
        seconds = time.perf_counter() - t0
    except Exception:
        # the alarm's TimeoutError, possibly re-raised by joblib as something else
        if time.perf_counter() - t0 < args.timeout:
            raise
        Path(args.out).write_text(json.dumps({"finished": False, "splits_done": done[0]}))
        return 0
    finally:
        signal.alarm(0)
    np.save(args.out + ".logits.npy", logits)
    Path(args.out).write_text(json.dumps({"finished": True, "pbo": pbo, "seconds": seconds}))
    return 0


def versions_worker(args):
    from importlib.metadata import version

    info = {"python": platform.python_version(), "numpy": np.__version__}
    for pkg in ("RiskLabAI", "numba", "joblib"):
        try:
            info[pkg] = version(pkg)
        except Exception:
            pass
    if args.versions == "hullsweep":
        so = hullsweep_native().__file__
        info["hullsweep_rs"] = os.path.relpath(so, ROOT)
        info["hullsweep_rs_built"] = datetime.datetime.fromtimestamp(
            os.path.getmtime(so), datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(json.dumps(info))
    return 0


# ---------------------------------------------------------------------------------------------
# The driver.

def child(python, side, matrix, metric, folds, timeout, out, stable=False):
    cmd = [python, __file__, "--worker", side, "--matrix", str(matrix), "--metric", metric,
           "--folds", str(folds), "--timeout", str(timeout), "--out", str(out)]
    if stable:
        cmd.append("--stable")
    try:
        # the child stops itself at `timeout`; the margin covers imports, loading and warm-up
        subprocess.run(cmd, check=True, timeout=timeout + 180)
    except subprocess.TimeoutExpired:
        return {"finished": False}
    result = json.loads(Path(out).read_text())
    if result["finished"]:
        result["logits"] = np.load(str(out) + ".logits.npy")
    return result


BEGIN, END = "<!-- risklabai:begin -->", "<!-- risklabai:end -->"


def splice(report: Path, text: str) -> None:
    """Puts text between the risklabai markers of report (under "## PBO: risklabai"), replacing
    what was there, or appends the section; the rest of the file stays as it is."""
    old = report.read_text() if report.exists() else ""
    block = f"{BEGIN}\n{text.rstrip()}\n{END}"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + block + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + ("\n\n" if old else "") + "## PBO: risklabai\n\n" + block + "\n"
    report.write_text(new)


def versions(python, side):
    out = subprocess.run([python, __file__, "--versions", side], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def fmt_s(seconds):
    if seconds < 1:
        return f"{seconds:.4f} s"
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--peers-python", default=str(ROOT / ".venv-peers/bin/python"),
                   help="a Python with RiskLabAI (default .venv-peers)")
    p.add_argument("--hullsweep-python", default=str(ROOT / ".venv/bin/python"),
                   help="a Python with hullsweep_rs (default .venv)")
    p.add_argument("--timeout", type=int, default=300, help="seconds per RiskLabAI run")
    p.add_argument("--folds", type=int, default=FOLDS)
    p.add_argument("--seed", type=int, default=20261205)
    p.add_argument("--max-strategies", type=int, default=None,
                   help="skip cases with more strategies (a quick run)")
    p.add_argument("--only", choices=sorted({c[0] for c in CASES}), default=None,
                   help="run only the cases of this matrix kind")
    p.add_argument("--workdir", default=None, help="where the .npy matrices go (default a temp dir)")
    p.add_argument("--report", type=Path, default=None,
                   help="also write the table into this report (reports/peers.md), between its "
                        "risklabai markers")
    # child modes
    p.add_argument("--worker", choices=("risklabai", "hullsweep"), help=argparse.SUPPRESS)
    p.add_argument("--versions", choices=("risklabai", "hullsweep"), help=argparse.SUPPRESS)
    p.add_argument("--matrix", help=argparse.SUPPRESS)
    p.add_argument("--metric", default="sharpe", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--stable", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.versions:
        return versions_worker(args)
    if args.worker:
        return worker(args)

    for py in (args.peers_python, args.hullsweep_python):
        if not Path(py).exists():
            print(f"error: {py} not found (see the setup in this script's docstring)", file=sys.stderr)
            return 1
    rl_v = versions(args.peers_python, "risklabai")
    hs_v = versions(args.hullsweep_python, "hullsweep")
    if "RiskLabAI" not in rl_v:
        print(f"error: RiskLabAI is not installed in {args.peers_python}", file=sys.stderr)
        return 1
    header = Header(".venv/bin/python research/python/peers_pbo.py"
                    + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:])),
                    python=("numpy",))

    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="peers_pbo_"))
    workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for i, (name, bars, n, metric, repeats, stable) in enumerate(CASES):
            if args.max_strategies and n > args.max_strategies:
                continue
            if args.only and name != args.only:
                continue
            label = f"{name} {bars:,} × {n:,} {metric}" + (" stable" if stable else "")
            print(f"[{label}] generating", file=sys.stderr, flush=True)
            path = workdir / f"m{i}.npy"
            # the seed depends on the matrix, not the case's position: the stable row re-runs
            # the `ties` matrix
            seed = args.seed + 1000 * ("noise", "signal", "ties").index(name) + n
            np.save(path, make_matrix(name, bars, n, seed))
            rl_runs, hs_runs = [], []
            rl_done = True
            for rep in range(repeats):
                if rl_done:
                    r = child(args.peers_python, "risklabai", path, metric, args.folds,
                              args.timeout, workdir / f"rl{i}_{rep}.json", stable)
                    print(f"[{label}] risklabai run {rep + 1}: "
                          + (f"{r['seconds']:.3f} s" if r["finished"] else "did not finish"),
                          file=sys.stderr, flush=True)
                    if r["finished"]:
                        rl_runs.append(r)
                    else:
                        rl_done = False
                h = child(args.hullsweep_python, "hullsweep", path, metric, args.folds,
                          args.timeout, workdir / f"hs{i}_{rep}.json")
                print(f"[{label}] hullsweep run {rep + 1}: {h['seconds']:.4f} s",
                      file=sys.stderr, flush=True)
                hs_runs.append(h)
            path.unlink()
            hs_pbo = hs_runs[0]["pbo"]
            hs_t = statistics.median(r["seconds"] for r in hs_runs)
            if rl_done and rl_runs:
                rl_pbo = rl_runs[0]["pbo"]
                rl_t = statistics.median(r["seconds"] for r in rl_runs)
                d = np.abs(rl_runs[0]["logits"] - hs_runs[0]["logits"])
                differ = int((d > 1e-12).sum())
                same = rl_pbo == hs_pbo
                if same and differ == 0:
                    ident = f"yes (logits max Δ {d.max():.0e})"
                else:
                    ident = (("PBO yes" if same else "PBO **no**")
                             + f"; logits differ in {differ:,} of {len(d):,} splits")
                rl_cells = [f"{rl_pbo:.6f}", None, fmt_s(rl_t)]
                ratio = f"{rl_t / hs_t:,.0f}×"
            else:
                ident = "—"
                splits = len(hs_runs[0]["logits"])
                done = r.get("splits_done")
                cell = f"did not finish in {args.timeout} s"
                ratio = f"> {args.timeout / hs_t:,.0f}×"
                if done:
                    projected = args.timeout * splits / done
                    cell += f" ({done:,} of {splits:,} splits: ~{projected:,.0f} s projected)"
                    ratio += f" (~{projected / hs_t:,.0f}× projected)"
                rl_cells = ["—", None, cell]
            runs = str(len(hs_runs)) if rl_done else f"1 / {len(hs_runs)}"
            metric_cell = metric + (" (RiskLabAI's argsort made stable)" if stable else "")
            rows.append(f"| {name} | {bars:,} × {n:,} | {metric_cell} | {rl_cells[0]} | {hs_pbo:.6f} "
                        f"| {ident} | {rl_cells[2]} | {fmt_s(hs_t)} | {ratio} | {runs} |")
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    lines = []

    def emit(line=""):  # the section: printed, and spliced into --report
        lines.append(line)

    emit(f"PBO: RiskLabAI {rl_v['RiskLabAI']} `probability_of_backtest_overfitting` against "
          f"`hullsweep_rs.pbo`, S = {args.folds}, one core each (RiskLabAI n_jobs=1, hullsweep "
          f"threads=1); times are medians of the runs, interleaved (runs: timed runs per side, "
          f"RiskLabAI / hullsweep where they differ). A RiskLabAI run stopped at the timeout "
          f"projects its time from the splits it had done.")
    emit()
    emit(header.line())
    emit(f"RiskLabAI side: Python {rl_v['python']}, numpy {rl_v['numpy']}, RiskLabAI "
          f"{rl_v['RiskLabAI']}, numba {rl_v.get('numba', '?')}, joblib {rl_v.get('joblib', '?')}. "
          f"hullsweep side: Python {hs_v['python']}, numpy {hs_v['numpy']}, "
          f"{hs_v['hullsweep_rs']} built {hs_v['hullsweep_rs_built']}.")
    emit()
    emit("| matrix | bars × strategies | metric | PBO risklabai | PBO hullsweep | identical? "
          "| time risklabai | time hullsweep | ratio | runs |")
    emit("|---|---|---|---:|---:|---|---:|---:|---:|---:|")
    for row in rows:
        emit(row)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.report:
        splice(args.report, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
