"""The numpy reference of CSCV and the probability of backtest overfitting (docs/research.md).

The definitions of docs/research.md written literally and slowly: for every split the in-sample
and out-of-sample rows are gathered (the folds' returns concatenated, in bar order) and the metric
taken over them with numpy's own mean and std, with no sufficient statistics and no shortcut. It is
the oracle the Rust crate (research/) and `hullsweep_rs.pbo` are tested against: PBO, the split
count and P(OOS loss) exactly, the logits and the degradation line to 1e-9.

Command line:
    python reference/pbo_ref.py M.npy --folds S [--metric sharpe|mean]
        prints one JSON object: pbo, logits, degradation {slope, intercept, r2}, prob_oos_loss,
        splits, folds, combos, bars, metric, and per split selected, is_perf, oos_perf.
"""

import argparse
import itertools
import json
import math
import sys

import numpy as np

METRICS = ("sharpe", "mean")
MAX_FOLDS = 26


def check(matrix, folds, metric):
    """The checks of docs/research.md, with the Rust crate's messages (ValueError)."""
    if matrix.ndim != 2:
        raise ValueError(f"the returns matrix must be 2-D (bars x combos), got shape {list(matrix.shape)}")
    bars, combos = matrix.shape
    if combos < 2:
        raise ValueError(f"the returns matrix needs at least 2 columns (combos) to choose between, got {combos}")
    if folds <= 0 or folds % 2:
        raise ValueError(f"folds must be an even number of at least 2, got {folds}")
    if folds > MAX_FOLDS:
        raise ValueError(f"{folds} folds: at most {MAX_FOLDS} folds are supported")
    if bars // 2 < folds:
        raise ValueError(f"{folds} folds need at least 2 bars each, but the matrix has {bars}")
    bad = np.argwhere(~np.isfinite(matrix))
    if len(bad):
        row, col = bad[0]
        raise ValueError(f"row {row}, column {col} holds {matrix[row, col]}: returns must be finite")
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: sharpe, mean")


def performance(returns, metric):
    """The metric of each column of `returns` (rows = bars): the mean, or mean / std (population,
    ddof 0) with 0 where std is 0."""
    mean = returns.mean(axis=0)
    if metric == "mean":
        return mean
    std = returns.std(axis=0)
    out = np.zeros_like(mean)
    nonzero = std != 0
    out[nonzero] = mean[nonzero] / std[nonzero]
    return out


def degradation(is_perf, oos_perf):
    """Least squares oos = slope * is + intercept, with R^2 (0 where either side does not vary)."""
    x = np.asarray(is_perf, dtype=np.float64)
    y = np.asarray(oos_perf, dtype=np.float64)
    dx = x - x.mean()
    dy = y - y.mean()
    sxx, sxy, syy = float((dx * dx).sum()), float((dx * dy).sum()), float((dy * dy).sum())
    slope = sxy / sxx if sxx != 0 else 0.0
    r2 = sxy * sxy / (sxx * syy) if sxx != 0 and syy != 0 else 0.0
    return {"slope": slope, "intercept": float(y.mean()) - slope * float(x.mean()), "r2": r2}


def pbo(matrix, folds=16, metric="sharpe"):
    """CSCV over a bars x combos returns matrix, as docs/research.md defines it."""
    matrix = np.asarray(matrix, dtype=np.float64)
    check(matrix, folds, metric)
    bars, combos = matrix.shape
    parts = np.array_split(np.arange(bars), folds)
    logits, selected, is_perf, oos_perf = [], [], [], []
    for in_sample in itertools.combinations(range(folds), folds // 2):
        out_sample = [f for f in range(folds) if f not in in_sample]
        is_rows = np.concatenate([parts[f] for f in in_sample])
        oos_rows = np.concatenate([parts[f] for f in out_sample])
        is_m = performance(matrix[is_rows], metric)
        oos_m = performance(matrix[oos_rows], metric)
        best = int(np.argmax(is_m))
        t = oos_m[best]
        rank = 1 + int(np.sum(oos_m < t)) + int(np.sum(oos_m[:best] == t))
        omega = rank / (combos + 1)
        logits.append(math.log(omega / (1 - omega)))
        selected.append(best)
        is_perf.append(float(is_m[best]))
        oos_perf.append(float(t))
    splits = len(logits)
    return {
        "pbo": sum(1 for v in logits if v <= 0) / splits,
        "logits": logits,
        "degradation": degradation(is_perf, oos_perf),
        "prob_oos_loss": sum(1 for v in oos_perf if v < 0) / splits,
        "splits": splits,
        "folds": folds,
        "combos": combos,
        "bars": bars,
        "metric": metric,
        "selected": selected,
        "is_perf": is_perf,
        "oos_perf": oos_perf,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description="The numpy reference of CSCV / PBO.")
    parser.add_argument("matrix", help="a 2-D float64 .npy, bars x combos")
    parser.add_argument("--folds", type=int, required=True)
    parser.add_argument("--metric", default="sharpe", choices=METRICS)
    args = parser.parse_args(argv)
    try:
        result = pbo(np.load(args.matrix), args.folds, args.metric)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    json.dump(result, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
