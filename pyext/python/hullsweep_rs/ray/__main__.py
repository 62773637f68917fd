"""`python -m hullsweep_rs.ray`: sweep many series on a Ray cluster, one CSV row per (series, combo).
The columns are those of `hullsweep sweep` with a `series` column first."""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

import numpy as np

import hullsweep_rs as hs
from hullsweep_rs.ray import SweepInputError, sweep_many

WINDOWS = ["hma_n", "hma_half", "hma_sqrt", "hma3_m", "hma3_half", "hma3_third"]
EXAMPLES = """\
examples:
  # every .npy/.csv in data/ (the series is named after the file), on a local Ray
  python -m hullsweep_rs.ray --data data/ --grid 6:200:80 --out results.csv
  # on a cluster started with `ray start --head` (see docs/guide.md, "Many series on Ray")
  python -m hullsweep_rs.ray --data a.npy b.csv --params p.npy --address HEAD:6379 --out r.csv
"""


def series_files(paths: list[str]) -> dict[str, Path]:
    """Name -> file: each FILE as given, each DIR's *.npy, *.parquet and *.csv sorted; a name is
    the stem."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(
                f for f in p.iterdir() if f.suffix.lower() in (".npy", ".parquet", ".csv")
            )
            if not found:
                raise SystemExit(
                    f"error: --data {p}: no .npy, .parquet or .csv file in this directory"
                )
            files += found
        else:
            files.append(p)  # a missing file is reported with the other bad inputs
    named: dict[str, Path] = {}
    for f in files:
        if f.stem in named:
            raise SystemExit(
                f"error: two series named {f.stem!r}: {named[f.stem]} and {f} (names are file stems)"
            )
        named[f.stem] = f
    return named


def fmt_pnl(x: float) -> str:
    # The shortest digits that parse back to the same bits, without an exponent, as Rust's
    # `{}` prints them in `hullsweep sweep`.
    return np.format_float_positional(x, unique=True, trim="-")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m hullsweep_rs.ray",
        description="Sweep every combo over many close series on a Ray cluster (bit-identical to "
        "hullsweep_rs.sweep / `hullsweep sweep`). Writes one CSV row per (series, combo).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--data", nargs="+", required=True, metavar="FILE_OR_DIR",
                    help="series: .npy (1-D float64) or .csv (a close column; an empty cell is a "
                    "missing bar) files, or directories of them")
    combos = ap.add_mutually_exclusive_group(required=True)
    combos.add_argument("--params", metavar="P.npy", help="combos: an n x 6 int64 .npy")
    combos.add_argument("--grid", metavar="LO:HI:K", help="combos: K HMA lengths from LO to HI, "
                        "each expanded to six windows as `hullsweep sweep --grid` does")
    ap.add_argument("--grid3", metavar="LO:HI:K", default=None,
                    help="with --grid: sweep the HMA3 lengths independently, every pair (a "
                    "two-axis grid, as `hullsweep sweep --grid3` does)")
    ap.add_argument("--fee", type=float, default=hs.DEFAULT_FEE_PCT, metavar="PCT",
                    help="round-trip fee per closed trade in percentage points; negative is a "
                    "rebate (default %(default)s)")
    ap.add_argument("--variant", default="fastest",
                    help=f"Rust variant each task runs: {', '.join(hs.variants())} or fastest "
                    f"(here: {hs.fastest()}; default fastest)")
    ap.add_argument("--address", metavar="ADDR", default=None,
                    help="Ray cluster to use, e.g. HEAD_IP:6379 (default: start or join a local Ray)")
    ap.add_argument("--chunk-combos", type=int, default=None, metavar="N",
                    help="combos per task (default: sized from a measured probe)")
    ap.add_argument("--out", metavar="FILE", default=None,
                    help="CSV to write (default: standard output)")
    ap.add_argument("--quiet", action="store_true", help="no progress (a bar on a terminal, a line every few seconds in a log)")
    args = ap.parse_args(argv)

    if args.grid3 is not None and args.grid is None:
        ap.error("--grid3 needs --grid (the HMA lengths of the two-axis grid)")
    files = series_files(args.data)
    if args.params is not None:
        try:
            params = np.load(args.params, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise SystemExit(f"error: --params {args.params}: {e}") from None
    else:
        try:
            params = hs.grid(args.grid, args.grid3)
        except ValueError as e:
            raise SystemExit(f"error: --grid/--grid3: {e}") from None
    try:
        results = sweep_many(files, params, args.fee, variant=args.variant,
                             address=args.address, chunk_combos=args.chunk_combos,
                             progress=not args.quiet)
    except SweepInputError as e:
        raise SystemExit(f"error: {e}") from None

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["series", "combo", *WINDOWS, "pnl", "trades"])
    rows = [list(map(int, r)) for r in params]
    for name, (pnl, trades) in results.items():
        for k, windows in enumerate(rows):
            w.writerow([name, k, *windows, fmt_pnl(pnl[k]), int(trades[k])])
    if args.out is None:
        sys.stdout.write(buf.getvalue())
    else:
        Path(args.out).write_text(buf.getvalue())
    print(f"swept {len(rows)} combos over {len(results)} series "
          f"({len(results) * len(rows)} rows)"
          + (f" into {args.out}" if args.out else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
