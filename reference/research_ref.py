"""The numpy reference of the deflated Sharpe ratio and walk-forward selection (docs/research.md).

The definitions of docs/research.md written literally: every Sharpe ratio and train metric is
numpy's mean and std over the rows themselves, walk-forward concatenates the selected combos' test
returns, and the normal distribution is the standard library's `statistics.NormalDist` (z is
Wichura's AS241, as in the crate; Phi is 0.5 * (1 + erf(x / sqrt 2)), accurate to about 1e-16
absolute, so a DSR far in the lower tail comes out as 0 or a multiple of 2^-54). It is the
oracle of the Rust crate (research/): windows, selections and the selected combo exactly, every
number to 1e-9 relative, the DSR to 1e-9 relative or 2^-52 absolute
(research/tests/research_ref.rs).

Command line:
    python reference/research_ref.py M.npy [--walk-forward TRAIN:TEST[:anchored]]
                                           [--metric sharpe|mean]
        prints one JSON object:
        deflated_sharpe {combo, sharpe, sr0, variance, bars, skew, kurt, dsr}, and
        walk_forward {spec, metric, windows: [[train start, train end, test start, test end]],
        selected, train_metric, oos_bars, oos_pnl, oos_sharpe}, null without --walk-forward.
"""

import argparse
import json
import math
import sys
from statistics import NormalDist

import numpy as np

from pbo_ref import METRICS, performance

EULER_GAMMA = 0.5772156649015329
NORMAL = NormalDist()


def check(matrix):
    """A 2-D matrix of at least 2 bars and 2 combos, every value finite (ValueError)."""
    if matrix.ndim != 2:
        raise ValueError(f"the returns matrix must be 2-D (bars x combos), got shape {list(matrix.shape)}")
    bars, combos = matrix.shape
    if combos < 2 or bars < 2:
        raise ValueError(f"the returns matrix needs at least 2 bars and 2 combos, got {bars} x {combos}")
    bad = np.argwhere(~np.isfinite(matrix))
    if len(bad):
        row, col = bad[0]
        raise ValueError(f"row {row}, column {col} holds {matrix[row, col]}: returns must be finite")


def deflated_sharpe(matrix):
    """The deflated Sharpe ratio of the combo with the best full-series Sharpe ratio."""
    sharpes = performance(matrix, "sharpe")
    n = len(sharpes)
    combo = int(np.argmax(sharpes))
    sr = float(sharpes[combo])
    variance = float(np.var(sharpes))
    sr0 = math.sqrt(variance) * (
        (1 - EULER_GAMMA) * NORMAL.inv_cdf(1 - 1 / n) + EULER_GAMMA * NORMAL.inv_cdf(1 - 1 / (n * math.e))
    )
    x = matrix[:, combo]
    bars = len(x)
    d = x - x.mean()
    m2, m3, m4 = float((d**2).mean()), float((d**3).mean()), float((d**4).mean())
    if m2 == 0:
        # A flat series: Sharpe ratio 0 by definition, skew and kurt reported as 0, denominator 1.
        skew, kurt, radicand = 0.0, 0.0, 1.0
    else:
        skew, kurt = m3 / m2**1.5, m4 / m2**2
        radicand = 1 - skew * sr + (kurt - 1) / 4 * sr**2
    if radicand <= 0:
        dsr = 1.0 if sr > sr0 else 0.0 if sr < sr0 else 0.5
    else:
        dsr = NORMAL.cdf((sr - sr0) * math.sqrt(bars - 1) / math.sqrt(radicand))
    return {
        "combo": combo,
        "sharpe": sr,
        "sr0": sr0,
        "variance": variance,
        "bars": bars,
        "skew": skew,
        "kurt": kurt,
        "dsr": dsr,
    }


def parse_spec(text):
    """TRAIN:TEST or TRAIN:TEST:anchored -> (train, test, anchored), TRAIN >= 2, TEST >= 1."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "anchored"):
        raise ValueError(f"walk-forward {text!r}: expected TRAIN:TEST or TRAIN:TEST:anchored")
    if not parts[0].isdigit() or int(parts[0]) < 2:
        raise ValueError(f"walk-forward {text!r}: TRAIN must be a whole number of at least 2 bars")
    if not parts[1].isdigit() or int(parts[1]) < 1:
        raise ValueError(f"walk-forward {text!r}: TEST must be a positive whole number of bars")
    return int(parts[0]), int(parts[1]), len(parts) == 3


def walk_forward(matrix, text, metric):
    """Per window the best train combo (first on ties), and its test returns concatenated."""
    train, test, anchored = parse_spec(text)
    bars = matrix.shape[0]
    if train + test > bars:
        raise ValueError(f"walk-forward {text} needs TRAIN + TEST = {train + test} bars, there are {bars}")
    windows, selected, train_metric, oos = [], [], [], []
    k = 0
    while k * test + train + test <= bars:
        start = 0 if anchored else k * test
        split = k * test + train
        end = split + test
        perf = performance(matrix[start:split], metric)
        best = int(np.argmax(perf))
        windows.append([start, split, split, end])
        selected.append(best)
        train_metric.append(float(perf[best]))
        oos.extend(float(v) for v in matrix[split:end, best])
        k += 1
    pnl = 0.0
    for v in oos:
        pnl += v
    oos_sharpe = float(performance(np.array(oos)[:, None], "sharpe")[0])
    return {
        "spec": text,
        "metric": metric,
        "windows": windows,
        "selected": selected,
        "train_metric": train_metric,
        "oos_bars": len(oos),
        "oos_pnl": pnl,
        "oos_sharpe": oos_sharpe,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description="The numpy reference of the DSR and walk-forward.")
    parser.add_argument("matrix", help="a 2-D float64 .npy, bars x combos")
    parser.add_argument("--walk-forward", metavar="TRAIN:TEST[:anchored]")
    parser.add_argument("--metric", default="sharpe", choices=METRICS)
    args = parser.parse_args(argv)
    try:
        matrix = np.asarray(np.load(args.matrix), dtype=np.float64)
        check(matrix)
        result = {
            "deflated_sharpe": deflated_sharpe(matrix),
            "walk_forward": walk_forward(matrix, args.walk_forward, args.metric) if args.walk_forward else None,
        }
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    json.dump(result, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
