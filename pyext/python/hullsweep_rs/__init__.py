"""hullsweep_rs: hullsweep's HMA/HMA3 stop-and-reverse sweep in-process from Python, in Rust.

sweep(close, params) runs any variant over numpy arrays without a copy and without the GIL, bit for
bit the numba reference's results. Subpackages: hullsweep_rs.ray (sweeps over many series on a Ray
cluster; needs the [ray] extra) and hullsweep_rs.client (a client for the hullsweep engine server).

    >>> import numpy as np, hullsweep_rs
    >>> close = 100.0 * np.cumprod(1.0 + 0.001 * np.random.default_rng(1).standard_normal(5000))
    >>> params = np.array([[20, 10, 4, 20, 10, 6], [50, 25, 7, 50, 25, 16]], dtype=np.int64)
    >>> pnl, trades = hullsweep_rs.sweep(close, params)   # fee_pct=0.09, variant="fastest"
    >>> table = hullsweep_rs.sweep_metrics(close, hullsweep_rs.grid("10:60:6", "10:60:6"))
    >>> sorted(table)[:3]                                  # a dict of numpy columns
    ['bars_in_market', 'best_trade', 'hma3_half']
    >>> log = hullsweep_rs.trades(close, params, combos=[1])  # every closed trade of combo 1
    >>> bool(np.add.accumulate(np.r_[0.0, log["pnl"]])[-1] == pnl[1])  # summed in order
    True

A series too long for memory goes through a Sweeper in pieces (the same bits for any chunking):

    >>> s = hullsweep_rs.Sweeper(params)
    >>> for piece in np.array_split(close, 7):
    ...     s.push(piece)
    >>> pnl2, trades2 = s.finish()
    >>> bool((pnl2 == pnl).all() and (trades2 == trades).all())
    True

Live runs combos bar by bar, each push's events a dict of numpy columns (kind 1 open, 2 close),
every trade and result the batch sweep's bit for bit:

    >>> live = hullsweep_rs.Live(params)
    >>> ev = live.push(close[:4000])                     # many bars at once, then one by one
    >>> ev = live.push(float(close[4000]))
    >>> sorted(ev)
    ['bar', 'combo', 'entry_bar', 'entry_price', 'kind', 'pnl', 'price', 'side']
    >>> _ = live.push(close[4001:])
    >>> bool((live.result()[0] == pnl).all())
    True
"""

from ._native import (
    DEFAULT_FEE_PCT,
    Live,
    Sweeper,
    fastest,
    grid,
    pbo,
    sweep,
    sweep_metrics,
    trades,
    validate,
    validate_close,
    validate_params,
    variants,
)

__all__ = [
    "DEFAULT_FEE_PCT",
    "Live",
    "Sweeper",
    "fastest",
    "grid",
    "pbo",
    "sweep",
    "sweep_metrics",
    "trades",
    "validate",
    "validate_close",
    "validate_params",
    "variants",
]
