"""Prices at both ends of the f64 range (docs/kernel.md, "Extreme prices") are accepted from
Python and every variant gives numba's bits, infinite and NaN PnLs included."""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reference"))
import hullsweep_ref as ref  # noqa: E402

hs = pytest.importorskip("hullsweep_rs", reason="build it: maturin develop -m pyext/Cargo.toml")

TINY = np.nextafter(0.0, 1.0)  # 2**-1074


def walk(n=3000, seed=11):
    rng = np.random.default_rng(seed)
    return 100.0 * np.cumprod(1.0 + 0.01 * rng.standard_normal(n))


def spiked():
    x = walk()
    x[300], x[700], x[1100], x[1500] = np.finfo(np.float64).max, TINY, 1e307, np.finfo(np.float64).tiny
    return x


PARAMS = np.array(
    [[n, max(n // 2, 1), max(int(n**0.5), 1), n, max(n // 2, 1), max(n // 3, 1)] for n in (1, 3, 6, 20, 60, 150)],
    dtype=np.int64,
)


@pytest.mark.parametrize(
    "name, close",
    [("subnormal", walk() * 1e-322), ("overflowing", walk() * 1e304), ("spiked", spiked())],
)
@pytest.mark.parametrize("variant", hs.variants() + ["fastest"])
def test_extreme_prices_are_numbas_bits(name, close, variant):
    hs.validate_close(close)
    want_pnl, want_trades = ref.sweep(close, PARAMS, 0.09)
    pnl, trades = hs.sweep(close, PARAMS, 0.09, variant=variant)
    assert np.array_equal(trades, want_trades), name
    same = (pnl.view(np.int64) == np.asarray(want_pnl).view(np.int64)) | (np.isnan(pnl) & np.isnan(want_pnl))
    assert same.all(), (name, pnl, want_pnl)
