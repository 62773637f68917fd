"""The numba reference of per-bar returns and the per-fold report (docs/kernel.md, "Bar returns").

`bar_returns` is the study's loop (reference/hullsweep_ref.py's `backtest`) marking its equity to
market after every bar, with exactly the operations, in the order, of the Rust oracle
`hullsweep_kernel::backtest_returns` (kernel/src/returns.rs), so the two agree bit for bit. The
indicators and the trade log are hullsweep_ref.py's own (`hma`, `hma3`, `backtest_trades`).
Everything after the returns is plain numpy and Python, written literally and slowly.

Definitions:
- Bar returns: at bar t with a price, after the bar's events, E_t = realized + pos * (close[t] /
  entry - 1.0) * 100.0 while a position is open, E_t = realized before the first entry (realized:
  the loop's own pnl, the closed trades' PnL with the fee, summed in order from 0.0); r_t = E_t -
  E_prev, E_prev the equity at the last bar with a price (0.0 before any). A missing bar (close
  NaN) has r_t = 0.0 and leaves E_prev as it was.
- Folds: S folds are numpy.array_split(range(T), S) (the first T % S folds one bar longer).
- Per fold and combo: pnl, the PnL of the trades whose exit bar (the bar the position reversed)
  lies in the fold, summed in exit order from 0.0; trades, their count; and over the fold's bar
  returns: bars, mean, std (numpy, population, ddof 0), sharpe = mean / std (0.0 where std is 0).
- Per combo over the whole series: sharpe as above over all T bar returns; win_rate = wins /
  trades (a win: trade pnl > 0.0; null without trades); profit_factor = gross profit / gross
  loss, gross profit the sum of the trades' pnl > 0.0 and gross loss the sum of -pnl over the
  trades with pnl < 0.0, each from 0.0 in exit order (null without a losing trade).

Command line:
    python reference/returns_ref.py CLOSE.npy PARAMS.npy [--fee F] [--folds S] --out DIR
        CLOSE.npy: 1-D float64; PARAMS.npy: n x 6 int64 (docs/kernel.md's windows, as the gate
        writes them). Writes DIR/returns.npy (T x n float64, C order), DIR/folds.json (a list of
        {combo, fold, first_bar, last_bar, bars, pnl, trades, mean, std, sharpe}, combo-major)
        and DIR/metrics.json (a list of {combo, sharpe, win_rate, profit_factor}). Floats are
        written with Python's repr, which reads back to the same bits; a non-finite float (the
        extreme-price datasets can make one) is written as the string "nan", "inf" or "-inf".
"""

import argparse
import json
import math
import os
import sys

import numpy as np
from numba import njit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hullsweep_ref import (  # noqa: E402 - the path above makes the sibling module importable
    DEFAULT_FEE_PCT,
    backtest_trades,
    hma,
    hma3,
    load_inputs,
)


@njit(cache=True)
def bar_returns(close, h, h3, fee_pct):
    """One combo's bar returns, in percentage points, one per bar: the study's loop, then the
    bar's equity less the equity at the last bar with a price."""
    n = close.shape[0]
    out = np.empty(n, dtype=np.float64)
    pos = 0
    entry = 0.0
    pnl = 0.0
    prev = np.nan
    equity_before = 0.0
    for i in range(n):
        d = h[i] - h3[i]
        if np.isnan(d):
            prev = np.nan
        else:
            if not np.isnan(prev):
                sig = 0
                if prev <= 0.0 and d > 0.0:
                    sig = 1
                elif prev >= 0.0 and d < 0.0:
                    sig = -1
                if sig != 0 and sig != pos:
                    if pos != 0:
                        pnl += pos * (close[i] / entry - 1.0) * 100.0 - fee_pct
                    pos = sig
                    entry = close[i]
            prev = d
        c = close[i]
        if np.isnan(c):
            out[i] = 0.0
            continue
        if pos != 0:
            equity = pnl + pos * (c / entry - 1.0) * 100.0
        else:
            equity = pnl
        out[i] = equity - equity_before
        equity_before = equity
    return out


@njit(cache=True)
def run_combo_returns(close, combo, fee_pct):
    h = hma(close, combo[0], combo[1], combo[2])
    h3 = hma3(close, combo[3], combo[4], combo[5])
    return bar_returns(close, h, h3, fee_pct)


@njit(cache=True)
def combo_trades(close, combo, fee_pct):
    """The combo's closed trades in bar order: (exit_bar int64, pnl float64) arrays."""
    h = hma(close, combo[0], combo[1], combo[2])
    h3 = hma3(close, combo[3], combo[4], combo[5])
    log = backtest_trades(close, h, h3, fee_pct)
    # backtest_trades' columns: side, entry_bar, exit_bar, entry_price, exit_price, pnl.
    return log[2], log[5]


def sweep_returns(close, params, fee_pct):
    """The T x n returns matrix, column k combo k's bar returns."""
    out = np.empty((close.shape[0], params.shape[0]), dtype=np.float64)
    for k in range(params.shape[0]):
        out[:, k] = run_combo_returns(close, params[k], fee_pct)
    return out


def folds_of(bars, folds):
    """Each fold's (first_bar, last_bar): numpy.array_split(range(bars), folds)."""
    if folds < 1 or folds > bars:
        raise ValueError(f"{folds} folds of {bars} bars: folds must be between 1 and the bar count")
    return [(int(p[0]), int(p[-1])) for p in np.array_split(np.arange(bars), folds)]


def stats(r):
    """(mean, std, sharpe) of a 1-D array of returns: numpy's mean and population std, and
    mean / std with 0.0 where std is 0."""
    mean = float(np.mean(r))
    std = float(np.std(r))
    sharpe = mean / std if std != 0 else 0.0
    return mean, std, sharpe


def fold_rows(k, returns, exit_bar, pnl, bounds):
    """Combo k's rows of folds.json, one per fold in order."""
    rows = []
    for f, (first, last) in enumerate(bounds):
        inside = pnl[(exit_bar >= first) & (exit_bar <= last)]
        total = 0.0
        for t in inside:
            total += float(t)
        count = int(inside.shape[0])
        r = returns[first:last + 1, k]
        mean, std, sharpe = stats(r)
        rows.append({
            "combo": k, "fold": f, "first_bar": first, "last_bar": last,
            "bars": int(r.shape[0]), "pnl": total, "trades": count,
            "mean": mean, "std": std, "sharpe": sharpe,
        })
    return rows


def metric_row(k, returns, pnl):
    """Combo k's row of metrics.json."""
    sharpe = stats(returns[:, k])[2]
    wins = 0
    gross_profit = 0.0
    gross_loss = 0.0
    losses = 0
    for j in range(pnl.shape[0]):
        t = float(pnl[j])
        if t > 0.0:
            wins += 1
            gross_profit += t
        elif t < 0.0:
            losses += 1
            gross_loss += -t
    trades = pnl.shape[0]
    win_rate = wins / trades if trades > 0 else None
    profit_factor = gross_profit / gross_loss if losses > 0 else None
    return {"combo": k, "sharpe": sharpe, "win_rate": win_rate, "profit_factor": profit_factor}


def report(close, params, fee_pct, folds):
    """(returns T x n, folds.json rows, metrics.json rows)."""
    bounds = folds_of(close.shape[0], folds)
    returns = sweep_returns(close, params, fee_pct)
    fold_table = []
    metrics = []
    for k in range(params.shape[0]):
        exit_bar, pnl = combo_trades(close, params[k], fee_pct)
        fold_table.extend(fold_rows(k, returns, exit_bar, pnl, bounds))
        metrics.append(metric_row(k, returns, pnl))
    return returns, fold_table, metrics


def jsonable(v):
    """A float as itself (written by repr, so its bits read back), or as "nan"/"inf"/"-inf"."""
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    return v


def write_json(path, rows):
    rows = [{key: jsonable(v) for key, v in row.items()} for row in rows]
    with open(path, "w") as f:
        json.dump(rows, f, allow_nan=False)
        f.write("\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description="Per-bar returns and the per-fold report.")
    parser.add_argument("close", help="1-D float64 .npy")
    parser.add_argument("params", help="n x 6 int64 .npy")
    parser.add_argument("--fee", type=float, default=DEFAULT_FEE_PCT)
    parser.add_argument("--folds", type=int, default=16)
    parser.add_argument("--out", required=True, help="the directory to write into")
    args = parser.parse_args(argv)
    try:
        close, params = load_inputs(args.close, args.params, args.fee)
        returns, fold_table, metrics = report(close, params, args.fee, args.folds)
        os.makedirs(args.out, exist_ok=True)
        np.save(os.path.join(args.out, "returns.npy"), np.ascontiguousarray(returns))
        write_json(os.path.join(args.out, "folds.json"), fold_table)
        write_json(os.path.join(args.out, "metrics.json"), metrics)
    except (OSError, ValueError) as e:
        print(f"returns_ref: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
