"""hullsweep_rs.trades: every closed trade the numba reference's sweep_trades logs, bit for bit,
on the default data and on gate datasets, each combo's trades summing in order to sweep()'s pnl;
and the arguments checked as sweep() checks them, a bad combo named with the range."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reference"))
import hullsweep_ref as ref  # noqa: E402

hs = pytest.importorskip("hullsweep_rs", reason="build it: maturin develop -m pyext/Cargo.toml")

COLUMNS = ["combo", "side", "entry_bar", "exit_bar", "entry_price", "exit_price", "pnl"]


def hullsweep_binary() -> Path:
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / "hullsweep"
        if p.exists():
            return p
    pytest.skip("no hullsweep binary: run cargo build first")


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """The gate's datasets as `hullsweep data --suite` writes them (Rust's own generator)."""
    d = tmp_path_factory.mktemp("suite")
    subprocess.run([str(hullsweep_binary()), "data", "--suite", str(d)], check=True,
                   capture_output=True)
    index = json.loads((d / "suite.json").read_text())
    return {e["name"]: (np.load(d / e["close"]), np.load(d / e["params"]), e) for e in index}


def bits(a):
    return np.ascontiguousarray(a).view(np.int64)


def assert_numbas_bits(close, params, fee, combos):
    got = hs.trades(close, params, combos=combos, fee_pct=fee)
    assert list(got) == COLUMNS
    want = ref.sweep_trades(close, params, fee, np.asarray(combos, dtype=np.int64))
    for name, w in zip(COLUMNS, want):
        g = got[name]
        assert g.dtype == w.dtype and g.shape == w.shape, name
        # A trade's fields are never NaN (an infinite PnL compares as its bits).
        assert np.array_equal(bits(g) if g.dtype == np.float64 else g,
                              bits(w) if w.dtype == np.float64 else w), name
    return got


def assert_sums_to_sweep(log, close, params, fee):
    pnl, trades = hs.sweep(close, params, fee, variant="reference")
    for k in range(params.shape[0]):
        mine = log["pnl"][log["combo"] == k]
        assert mine.size == trades[k], k
        total = 0.0
        for t in mine:  # in order, from 0.0, as the loop adds them
            total += float(t)
        assert np.float64(total).view(np.int64) == np.float64(pnl[k]).view(np.int64) or (
            np.isnan(total) and np.isnan(pnl[k])
        ), (k, total, pnl[k])


def test_default_data_every_combo_is_numbas_bits_and_sums_to_the_sweep(suite):
    close, params, entry = suite["default"]
    combos = list(range(params.shape[0]))
    log = assert_numbas_bits(close, params, entry["fee"], combos)
    assert log["pnl"].size > 100_000
    assert_sums_to_sweep(log, close, params, entry["fee"])
    # The defaults are the default grid and every combo.
    again = hs.trades(close)
    for name in COLUMNS:
        assert np.array_equal(bits(again[name]) if again[name].dtype == np.float64 else again[name],
                              bits(log[name]) if log[name].dtype == np.float64 else log[name])


@pytest.mark.parametrize("name", ["flat_in_noise", "extreme_spikes", "nan_runs"])
def test_gate_datasets_are_numbas_bits(suite, name):
    close, params, entry = suite[name]
    combos = list(range(params.shape[0]))[::-1]  # any order, kept
    log = assert_numbas_bits(close, params, entry["fee"], combos)
    assert log["combo"][0] == combos[0] or (log["combo"] == combos[0]).sum() == 0
    assert_sums_to_sweep(log, close, params, entry["fee"])
    if name == "extreme_spikes":
        assert np.isinf(log["pnl"]).any(), "the spikes must make infinite trade PnLs"


def test_combos_grid_and_inputs_are_taken_as_sweep_takes_them(tmp_path):
    rng = np.random.default_rng(3)
    close = 100.0 * np.cumprod(1.0 + 0.003 * rng.standard_normal(3000))
    close[10] = np.nan
    params = hs.grid("6:60:5")
    whole = hs.trades(close, params)
    one = hs.trades(close, params, combos=2)
    assert set(one["combo"].tolist()) == {2}
    mask = whole["combo"] == 2
    assert np.array_equal(bits(one["pnl"]), bits(whole["pnl"][mask]))
    for combos in ([2], (2,), np.array([2]), np.array([2], dtype=np.int32)):
        assert np.array_equal(hs.trades(close, params, combos=combos)["exit_bar"], one["exit_bar"])
    assert np.array_equal(hs.trades(close, combos="all", grid="6:60:5")["pnl"], whole["pnl"])
    empty = hs.trades(close, params, combos=[])
    assert all(empty[c].shape == (0,) for c in COLUMNS)
    # A memmap is read in place, as sweep() reads it.
    path = tmp_path / "c.npy"
    np.save(path, close)
    mm = np.load(path, mmap_mode="r")
    assert np.array_equal(hs.trades(mm, params, combos=[1])["pnl"], whole["pnl"][whole["combo"] == 1])


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"combos": [0, 5]}, ValueError, "bad combo 5: there are 5 combos, numbered 0 to 4"),
        ({"combos": -1}, ValueError, "bad combo -1"),
        ({"combos": "some"}, ValueError, "\"all\""),
        ({"combos": 1.5}, TypeError, "combos must be"),
        ({"grid": "6:60:5"}, ValueError, "not both"),
        ({"fee_pct": float("inf")}, ValueError, "fee"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    close = 100.0 + np.arange(50.0)
    with pytest.raises(error, match=message):
        hs.trades(close, hs.grid("6:60:5"), **kwargs)


def test_bad_close_and_grid_are_named():
    with pytest.raises(ValueError, match="-2"):
        hs.trades(np.array([1.0, -2.0]), combos=[0])
    with pytest.raises(TypeError, match="float64"):
        hs.trades(np.arange(5), combos=[0])
    with pytest.raises(ValueError, match="grid \"6:5:3\""):
        hs.trades(np.ones(10), grid="6:5:3")
