"""The boundary study's measurement helpers: timing a call, the equivalence gate across the
boundary, medians and the floor + bandwidth fit of the echo curve (used by boundary_study.py)."""

from __future__ import annotations

import statistics
import time

import numpy as np

GATE_TOL = 1e-6


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def gate(ref, got):
    pnl_r, tr_r = ref
    pnl, tr = got
    bad = int(np.sum(np.asarray(tr) != np.asarray(tr_r)) + np.sum(np.abs(np.asarray(pnl) - pnl_r) > GATE_TOL))
    return bad, float(np.max(np.abs(np.asarray(pnl) - pnl_r))) if len(pnl_r) else 0.0


def median_of(fn, reps: int) -> float:
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def echo_reps(n_floats: int) -> int:
    return int(min(600, max(30, 3e6 / (n_floats * 8 + 2000))))


def fit_floor_bandwidth(sizes_bytes, secs):
    """T = floor + bytes_moved / bandwidth, least squares on relative error."""
    x = np.asarray(sizes_bytes, float)
    y = np.asarray(secs, float)
    w = 1.0 / y
    a = np.vstack([np.ones_like(x) * w, x * w]).T
    (floor, slope), *_ = np.linalg.lstsq(a, y * w, rcond=None)
    return floor, (1.0 / slope if slope > 0 else float("inf"))
