"""The numba reference kernel of hullsweep, written the way the study wrote it (docs/kernel.md).

It is the oracle the Rust implementations are gated against, so the arithmetic is naive and in
the spec's order: each WMA sums oldest element first, one multiply then one add per step, from an
accumulator of 0.0, then one division; every pass allocates a fresh NaN-filled array. No fastmath.

Command line:
    python reference/hullsweep_ref.py run --close C.npy --params P.npy [--fee F] [--prange]
        --out-pnl PNL.npy --out-trades TRADES.npy
    python reference/hullsweep_ref.py worker
        JSON lines on stdin/stdout, so a caller can time many runs without paying the JIT each
        time: {"op":"load","close":PATH,"params":PATH,"fee":F}, {"op":"time","impl":"single"|
        "prange","out_pnl":PATH,"out_trades":PATH}, {"op":"metrics","out_floats":PATH,
        "out_ints":PATH} (docs/kernel.md's metrics, single thread), {"op":"trades","combos":[K,...]
        (omitted: all),"out_ints":PATH,"out_floats":PATH} (the trade log: n x 4 int64 combo, side,
        entry_bar, exit_bar and n x 3 float64 entry_price, exit_price, pnl),
        {"op":"threads","n":N}, {"op":"versions"}.
        Every reply is one line: {"ok":true,...} or {"ok":false,"error":"..."}.
"""

import argparse
import json
import math
import platform
import sys
import time

import llvmlite
import numba
import numpy as np
from numba import njit, prange

DEFAULT_FEE_PCT = 0.09
WINDOW_NAMES = ("hma_n", "hma_half", "hma_sqrt", "hma3_m", "hma3_half", "hma3_third")


@njit(cache=True)
def wma(x, w):
    n = x.shape[0]
    out = np.empty(n, dtype=np.float64)
    out[:] = np.nan
    # Checked before w*(w+1) so that a huge window cannot overflow: it is simply all NaN.
    if w > n:
        return out
    denom = (w * (w + 1)) // 2
    for i in range(w - 1, n):
        s = 0.0
        for k in range(w):
            s += x[i - w + 1 + k] * (k + 1)
        out[i] = s / denom
    return out


@njit(cache=True)
def hma(close, n, half, sqrt):
    a = wma(close, half)
    b = wma(close, n)
    m = close.shape[0]
    diff = np.empty(m, dtype=np.float64)
    diff[:] = np.nan
    for i in range(m):
        diff[i] = 2.0 * a[i] - b[i]
    return wma(diff, sqrt)


@njit(cache=True)
def hma3(close, m, half, third):
    c = wma(close, third)
    d = wma(close, half)
    e = wma(close, m)
    n = close.shape[0]
    diff = np.empty(n, dtype=np.float64)
    diff[:] = np.nan
    for i in range(n):
        diff[i] = 3.0 * c[i] - d[i] - e[i]
    return wma(diff, m)


@njit(cache=True)
def backtest(close, h, h3, fee_pct):
    pos = 0
    entry = 0.0
    pnl = 0.0
    trades = 0
    prev = np.nan
    for i in range(close.shape[0]):
        d = h[i] - h3[i]
        if np.isnan(d):
            prev = np.nan
            continue
        if not np.isnan(prev):
            sig = 0
            if prev <= 0.0 and d > 0.0:
                sig = 1
            elif prev >= 0.0 and d < 0.0:
                sig = -1
            if sig != 0 and sig != pos:
                if pos != 0:
                    pnl += pos * (close[i] / entry - 1.0) * 100.0 - fee_pct
                    trades += 1
                pos = sig
                entry = close[i]
        prev = d
    return pnl, trades


@njit(cache=True)
def backtest_metrics(close, h, h3, fee_pct):
    """The study's loop (backtest above, unchanged) with the metrics of docs/kernel.md: the
    trade's PnL is named t so each accumulator sees exactly what pnl adds."""
    pos = 0
    entry = 0.0
    pnl = 0.0
    trades = 0
    prev = np.nan
    wins = 0
    long_pnl = 0.0
    short_pnl = 0.0
    long_trades = 0
    short_trades = 0
    best = np.nan
    worst = np.nan
    peak = 0.0
    max_dd = 0.0
    first_entry = -1
    n = close.shape[0]
    for i in range(n):
        d = h[i] - h3[i]
        if np.isnan(d):
            prev = np.nan
            continue
        if not np.isnan(prev):
            sig = 0
            if prev <= 0.0 and d > 0.0:
                sig = 1
            elif prev >= 0.0 and d < 0.0:
                sig = -1
            if sig != 0 and sig != pos:
                if pos != 0:
                    t = pos * (close[i] / entry - 1.0) * 100.0 - fee_pct
                    pnl += t
                    trades += 1
                    if t > 0.0:
                        wins += 1
                    if pos > 0:
                        long_pnl += t
                        long_trades += 1
                    else:
                        short_pnl += t
                        short_trades += 1
                    if np.isnan(best) or t > best:
                        best = t
                    if np.isnan(worst) or t < worst:
                        worst = t
                    if pnl > peak:
                        peak = pnl
                    if peak - pnl > max_dd:
                        max_dd = peak - pnl
                elif first_entry < 0:
                    first_entry = i
                pos = sig
                entry = close[i]
        prev = d
    in_market = 0 if first_entry < 0 else n - first_entry
    return (pnl, trades, wins, long_pnl, short_pnl, long_trades, short_trades, best, worst,
            max_dd, in_market)


@njit(cache=True)
def backtest_trades(close, h, h3, fee_pct):
    """The study's loop (backtest above, unchanged) logging each closed trade (docs/kernel.md,
    "Trades and events"): arrays (side, entry_bar, exit_bar, entry_price, exit_price, pnl), one
    entry per trade in bar order. The trade's PnL is the loop's own expression, named t, so the
    log sums in order to backtest's pnl bit for bit."""
    n = close.shape[0]
    # A trade closes at a bar where another opens, so there are fewer trades than bars.
    side = np.empty(n, dtype=np.int64)
    entry_bar = np.empty(n, dtype=np.int64)
    exit_bar = np.empty(n, dtype=np.int64)
    entry_price = np.empty(n, dtype=np.float64)
    exit_price = np.empty(n, dtype=np.float64)
    pnls = np.empty(n, dtype=np.float64)
    pos = 0
    entry = 0.0
    entry_at = 0
    pnl = 0.0
    trades = 0
    prev = np.nan
    for i in range(n):
        d = h[i] - h3[i]
        if np.isnan(d):
            prev = np.nan
            continue
        if not np.isnan(prev):
            sig = 0
            if prev <= 0.0 and d > 0.0:
                sig = 1
            elif prev >= 0.0 and d < 0.0:
                sig = -1
            if sig != 0 and sig != pos:
                if pos != 0:
                    t = pos * (close[i] / entry - 1.0) * 100.0 - fee_pct
                    pnl += t
                    side[trades] = pos
                    entry_bar[trades] = entry_at
                    exit_bar[trades] = i
                    entry_price[trades] = entry
                    exit_price[trades] = close[i]
                    pnls[trades] = t
                    trades += 1
                pos = sig
                entry = close[i]
                entry_at = i
        prev = d
    return (side[:trades].copy(), entry_bar[:trades].copy(), exit_bar[:trades].copy(),
            entry_price[:trades].copy(), exit_price[:trades].copy(), pnls[:trades].copy())


# The trade log's columns, in the order sweep_trades returns them.
TRADE_COLUMNS = ("combo", "side", "entry_bar", "exit_bar", "entry_price", "exit_price", "pnl")


@njit(cache=True)
def sweep_trades(close, params, fee_pct, combos):
    """The closed trades of the combos `combos` (indices into params), combo by combo in the
    order given, each combo's in bar order: (combo, side, entry_bar, exit_bar, int64 arrays;
    entry_price, exit_price, pnl, float64 arrays), all of one length."""
    parts = []
    total = 0
    for j in range(combos.shape[0]):
        combo = params[combos[j]]
        h = hma(close, combo[0], combo[1], combo[2])
        h3 = hma3(close, combo[3], combo[4], combo[5])
        part = backtest_trades(close, h, h3, fee_pct)
        parts.append(part)
        total += part[0].shape[0]
    combo_col = np.empty(total, dtype=np.int64)
    side = np.empty(total, dtype=np.int64)
    entry_bar = np.empty(total, dtype=np.int64)
    exit_bar = np.empty(total, dtype=np.int64)
    entry_price = np.empty(total, dtype=np.float64)
    exit_price = np.empty(total, dtype=np.float64)
    pnl = np.empty(total, dtype=np.float64)
    at = 0
    for j in range(len(parts)):
        s, eb, xb, ep, xp, t = parts[j]
        m = s.shape[0]
        combo_col[at:at + m] = combos[j]
        side[at:at + m] = s
        entry_bar[at:at + m] = eb
        exit_bar[at:at + m] = xb
        entry_price[at:at + m] = ep
        exit_price[at:at + m] = xp
        pnl[at:at + m] = t
        at += m
    return combo_col, side, entry_bar, exit_bar, entry_price, exit_price, pnl


def check_combos(combos, n_combos):
    """`combos` as a contiguous int64 array of indices into n_combos params, refusing one past
    the end by name (as the Rust KernelError::BadCombo does)."""
    combos = np.ascontiguousarray(np.asarray(combos, dtype=np.int64).reshape(-1))
    bad = np.flatnonzero((combos < 0) | (combos >= n_combos))
    if bad.size:
        k = int(combos[bad[0]])
        raise ValueError(
            f"bad combo {k}: there are {n_combos} combos, numbered 0 to {max(n_combos - 1, 0)}"
        )
    return combos


# The metrics' names and which are floats: the columns of sweep_metrics' two arrays.
METRIC_FLOATS = ("pnl", "long_pnl", "short_pnl", "best_trade", "worst_trade", "max_drawdown")
METRIC_INTS = ("trades", "wins", "long_trades", "short_trades", "bars_in_market")


@njit(cache=True)
def sweep_metrics(close, params, fee_pct):
    """Every combo's metrics: (floats n x 6 in METRIC_FLOATS order, ints n x 5 in METRIC_INTS)."""
    n = params.shape[0]
    floats = np.empty((n, 6), dtype=np.float64)
    ints = np.empty((n, 5), dtype=np.int64)
    for k in range(n):
        combo = params[k]
        h = hma(close, combo[0], combo[1], combo[2])
        h3 = hma3(close, combo[3], combo[4], combo[5])
        (pnl, trades, wins, long_pnl, short_pnl, long_trades, short_trades, best, worst,
         max_dd, in_market) = backtest_metrics(close, h, h3, fee_pct)
        floats[k, 0] = pnl
        floats[k, 1] = long_pnl
        floats[k, 2] = short_pnl
        floats[k, 3] = best
        floats[k, 4] = worst
        floats[k, 5] = max_dd
        ints[k, 0] = trades
        ints[k, 1] = wins
        ints[k, 2] = long_trades
        ints[k, 3] = short_trades
        ints[k, 4] = in_market
    return floats, ints


@njit(cache=True)
def run_combo(close, combo, fee_pct):
    h = hma(close, combo[0], combo[1], combo[2])
    h3 = hma3(close, combo[3], combo[4], combo[5])
    return backtest(close, h, h3, fee_pct)


@njit(cache=True)
def sweep(close, params, fee_pct):
    n = params.shape[0]
    pnl = np.empty(n, dtype=np.float64)
    trades = np.empty(n, dtype=np.int64)
    for k in range(n):
        p, t = run_combo(close, params[k], fee_pct)
        pnl[k] = p
        trades[k] = t
    return pnl, trades


@njit(parallel=True, cache=True)
def sweep_prange(close, params, fee_pct):
    n = params.shape[0]
    pnl = np.empty(n, dtype=np.float64)
    trades = np.empty(n, dtype=np.int64)
    for k in prange(n):
        p, t = run_combo(close, params[k], fee_pct)
        pnl[k] = p
        trades[k] = t
    return pnl, trades


IMPLS = {"single": sweep, "prange": sweep_prange}


def validate(close, params, fee):
    """The spec's bad-input rules, each error naming the value and its place."""
    if close.ndim != 1:
        raise ValueError(f"close must be a 1-D array, got shape {close.shape}")
    if close.shape[0] == 0:
        raise ValueError("the close series is empty")
    bad = np.flatnonzero(~np.isnan(close) & ~(np.isfinite(close) & (close > 0)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"bad price {close[i]} at index {i}: prices must be finite and > 0")
    if params.ndim != 2 or params.shape[1] != 6:
        raise ValueError(f"params must be an n x 6 int64 array, got shape {params.shape}")
    low = np.argwhere(params < 1)
    if low.size:
        k, f = (int(v) for v in low[0])
        raise ValueError(
            f"bad window {WINDOW_NAMES[f]} = {params[k, f]} in combo {k}: every window must be >= 1"
        )
    if not math.isfinite(fee):
        raise ValueError(f"bad fee {fee}: the fee must be a finite number")


def load_inputs(close_path, params_path, fee):
    close = np.load(close_path, allow_pickle=False)
    params = np.load(params_path, allow_pickle=False)
    if close.dtype != np.float64:
        raise ValueError(f"{close_path}: dtype {close.dtype}, expected float64")
    if params.dtype != np.int64:
        raise ValueError(f"{params_path}: dtype {params.dtype}, expected int64")
    # One memory layout, so the jitted functions compile one specialisation (the warm-up's).
    close = np.ascontiguousarray(close)
    params = np.ascontiguousarray(params)
    validate(close, params, fee)
    return close, params


def warm_up():
    """Compiles (or loads from cache) both sweeps for the types real inputs have."""
    close = np.array([1.0, 1.1, np.nan, 1.2, 1.3])
    params = np.array([[2, 1, 1, 2, 1, 1], [9, 4, 3, 9, 4, 3]], dtype=np.int64)
    for f in IMPLS.values():
        f(close, params, DEFAULT_FEE_PCT)


def versions():
    return {
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def cmd_run(args):
    close, params = load_inputs(args.close, args.params, args.fee)
    f = IMPLS["prange" if args.prange else "single"]
    pnl, trades = f(close, params, args.fee)
    np.save(args.out_pnl, pnl)
    np.save(args.out_trades, trades)


def cmd_worker():
    state = {}

    def handle(req):
        op = req.get("op")
        if op == "load":
            fee = float(req.get("fee", DEFAULT_FEE_PCT))
            state["close"], state["params"] = load_inputs(req["close"], req["params"], fee)
            state["fee"] = fee
            warm_up()
            return {}
        if op == "time":
            impl = req.get("impl")
            if impl not in IMPLS:
                raise ValueError(f"unknown impl {impl!r}; expected 'single' or 'prange'")
            if "close" not in state:
                raise ValueError("no data loaded: send a 'load' request first")
            f = IMPLS[impl]
            t0 = time.perf_counter()
            pnl, trades = f(state["close"], state["params"], state["fee"])
            seconds = time.perf_counter() - t0
            np.save(req["out_pnl"], pnl)
            np.save(req["out_trades"], trades)
            return {"seconds": seconds}
        if op == "metrics":
            if "close" not in state:
                raise ValueError("no data loaded: send a 'load' request first")
            floats, ints = sweep_metrics(state["close"], state["params"], state["fee"])
            np.save(req["out_floats"], floats)
            np.save(req["out_ints"], ints)
            return {"floats": list(METRIC_FLOATS), "ints": list(METRIC_INTS)}
        if op == "trades":
            if "close" not in state:
                raise ValueError("no data loaded: send a 'load' request first")
            n = state["params"].shape[0]
            combos = req.get("combos")
            combos = np.arange(n, dtype=np.int64) if combos is None else check_combos(combos, n)
            cols = sweep_trades(state["close"], state["params"], state["fee"], combos)
            np.save(req["out_ints"], np.ascontiguousarray(np.stack(cols[:4], axis=1)))
            np.save(req["out_floats"], np.ascontiguousarray(np.stack(cols[4:], axis=1)))
            return {"ints": list(TRADE_COLUMNS[:4]), "floats": list(TRADE_COLUMNS[4:])}
        if op == "threads":
            numba.set_num_threads(int(req["n"]))
            return {"threads": numba.get_num_threads()}
        if op == "versions":
            return versions()
        raise ValueError(
            f"unknown op {op!r}; expected load, time, metrics, trades, threads or versions"
        )

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            reply = {"ok": True, **handle(json.loads(line))}
        except Exception as e:  # noqa: BLE001 - every failure becomes an error reply, not a crash
            reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def main(argv=None):
    parser = argparse.ArgumentParser(description="The numba reference of the hullsweep kernel.")
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="sweep once and write pnl and trades as .npy")
    run.add_argument("--close", required=True, help="1-D float64 .npy")
    run.add_argument("--params", required=True, help="n x 6 int64 .npy")
    run.add_argument("--fee", type=float, default=DEFAULT_FEE_PCT)
    run.add_argument("--prange", action="store_true", help="the parallel=True sweep")
    run.add_argument("--out-pnl", required=True)
    run.add_argument("--out-trades", required=True)
    sub.add_parser("worker", help="JSON-lines server on stdin/stdout")
    args = parser.parse_args(argv)
    if args.cmd == "run":
        try:
            cmd_run(args)
        except (OSError, ValueError) as e:
            print(f"hullsweep_ref: error: {e}", file=sys.stderr)
            return 1
    else:
        cmd_worker()
    return 0


if __name__ == "__main__":
    sys.exit(main())
