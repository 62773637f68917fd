"""hullsweep_rs.Live: the default series pushed bar by bar and in random chunks gives sweep()'s bits,
every close event is the numba reference's trade log, positions and errors are as documented."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reference"))
import hullsweep_ref as ref  # noqa: E402

hs = pytest.importorskip("hullsweep_rs", reason="build it: maturin develop -m pyext/Cargo.toml")

COLUMNS = ["kind", "combo", "bar", "side", "price", "entry_bar", "entry_price", "pnl"]


@pytest.fixture(scope="module")
def default_close(tmp_path_factory):
    """The built-in default series (150,000 bars, seed 42), written by `hullsweep data`:
    hullsweep_rs has no generator, and scripts/test builds the binary before the Python tests."""
    exe = ROOT / "target" / "release" / "hullsweep"
    if not exe.exists():
        pytest.skip("needs target/release/hullsweep (cargo build --release) for the default series")
    npy = tmp_path_factory.mktemp("live") / "default.npy"
    subprocess.run([str(exe), "data", "--out", str(npy)], check=True, capture_output=True)
    return np.load(npy)


def same_result(a, b):
    assert np.array_equal(a[1], b[1])
    assert np.array_equal(a[0].view(np.int64), b[0].view(np.int64))


def concat(parts):
    return {k: np.concatenate([p[k] for p in parts]) for k in COLUMNS}


def same_events(a, b):
    for k in COLUMNS:
        x, y = a[k], b[k]
        assert x.dtype == y.dtype, k
        if x.dtype == np.float64:
            assert np.array_equal(x.view(np.int64), y.view(np.int64)), k
        else:
            assert np.array_equal(x, y), k


def reference_trades(close, params, fee):
    """The numba reference's trade log of every combo (combo by combo, each in bar order)."""
    combos = np.arange(len(params), dtype=np.int64)
    combo, side, entry_bar, exit_bar, entry_price, exit_price, pnl = ref.sweep_trades(
        close, params, fee, combos
    )
    return dict(
        combo=combo, side=side, entry_bar=entry_bar, bar=exit_bar,
        entry_price=entry_price, price=exit_price, pnl=pnl,
    )


@pytest.fixture(scope="module")
def default_run(default_close):
    """The default series pushed one bar at a time through the default grid, with its events."""
    close = default_close
    live = hs.Live()
    parts = [live.push(float(x)) for x in close]
    return close, live, concat(parts)


def test_bar_by_bar_gives_the_sweep_bits(default_run):
    close, live, _ = default_run
    assert live.bars == len(close) == 150_000
    assert live.combos == 80
    same_result(live.result(), hs.sweep(close, hs.grid("6:200:80"), 0.09, variant="reference"))


def test_every_close_is_the_numba_reference_trade(default_run):
    close, live, ev = default_run
    closes = ev["kind"] == hs.Live.CLOSE
    # The reference lists combo by combo; the stream bar by bar: a stable sort by combo aligns them.
    order = np.argsort(ev["combo"][closes], kind="stable")
    want = reference_trades(close, live.params, live.fee_pct)
    assert closes.sum() == len(want["pnl"]) == live.result()[1].sum()
    for k, w in want.items():
        got = ev[k][closes][order]
        if got.dtype == np.float64:
            assert np.array_equal(got.view(np.int64), w.view(np.int64)), k
        else:
            assert np.array_equal(got, w), k
    # An open's row: its own bar and price as the entry, pnl NaN.
    opens = ev["kind"] == hs.Live.OPEN
    assert np.array_equal(ev["entry_bar"][opens], ev["bar"][opens])
    assert np.isnan(ev["pnl"][opens]).all()
    assert np.array_equal(ev["price"], close[ev["bar"]])


def test_random_chunks_give_the_same_events_and_bits(default_run):
    close, one_by_one, ev = default_run
    rng = np.random.default_rng(7)
    cuts = np.sort(rng.choice(np.arange(1, len(close)), size=60, replace=False))
    live = hs.Live(hs.grid("6:200:80"))
    parts = [live.push(piece) for piece in np.split(close, cuts)]
    same_events(concat(parts), ev)
    same_result(live.result(), one_by_one.result())
    for k in ("side", "entry_bar", "entry_price"):
        a, b = live.positions()[k], one_by_one.positions()[k]
        assert np.array_equal(a.view(np.int64), b.view(np.int64)), k


def test_positions_are_the_last_opens(default_close):
    close = default_close[:3000]
    live = hs.Live(grid="10:60:6", fee_pct=0.0)
    before = live.positions()
    assert (before["side"] == 0).all() and (before["entry_bar"] == -1).all()
    assert np.isnan(before["entry_price"]).all()
    ev = live.push(close)
    pos = live.positions()
    for k in range(live.combos):
        opens = np.flatnonzero((ev["kind"] == hs.Live.OPEN) & (ev["combo"] == k))
        if len(opens) == 0:
            assert pos["side"][k] == 0
            continue
        last = opens[-1]
        assert pos["side"][k] == ev["side"][last]
        assert pos["entry_bar"][k] == ev["bar"][last]
        assert pos["entry_price"][k] == ev["price"][last]


def test_grids_params_and_missing_bars(default_close):
    close = default_close[:5000].copy()
    close[1000:1030] = np.nan
    p = hs.grid("8:80:5", "10:90:4")
    a, b = hs.Live(p, fee_pct=0.05), hs.Live(grid="8:80:5", grid3="10:90:4", fee_pct=0.05)
    same_events(a.push(close), b.push(close))
    same_result(a.result(), hs.sweep(close, p, 0.05, variant="reference"))
    # One NaN pushed as a float is a missing bar too.
    c = hs.Live(p, fee_pct=0.05)
    for x in close:
        c.push(float(x))
    same_result(c.result(), a.result())


def test_bad_input_is_named_and_changes_nothing():
    live = hs.Live(grid="10:60:6")
    live.push(np.full(50, 100.0))
    with pytest.raises(ValueError, match=r"bad price -1(\.0)? at index 53"):
        live.push(np.array([100.0, 101.0, 102.0, -1.0, 103.0]))
    assert live.bars == 50  # the whole array was refused
    with pytest.raises(ValueError, match=r"bad price 0(\.0)? at index 50"):
        live.push(0.0)
    with pytest.raises(ValueError, match=r"bad price inf at index 50"):
        live.push(float("inf"))
    assert live.bars == 50
    live.push(100.5)
    assert live.bars == 51
    with pytest.raises(TypeError, match="float64"):
        live.push(np.arange(5))  # int64: nothing is converted behind the caller's back
    with pytest.raises(TypeError):
        live.push("100")
    with pytest.raises(ValueError, match="1-D"):
        live.push(np.ones((2, 2)))
    with pytest.raises(ValueError, match="not both"):
        hs.Live(hs.grid("10:60:6"), grid="10:60:6")
    with pytest.raises(ValueError, match="grid"):
        hs.Live(grid="60:10:6")
    with pytest.raises(ValueError, match="bad window"):
        hs.Live(np.array([[0, 1, 1, 1, 1, 1]], dtype=np.int64))
    with pytest.raises(ValueError, match="bad fee"):
        hs.Live(fee_pct=float("nan"))


def test_copy_is_independent(default_close):
    close = default_close[:4000]
    a = hs.Live(grid="10:60:6")
    a.push(close[:2000])
    b = a.copy()
    same_events(a.push(close[2000:]), b.push(close[2000:]))
    assert a.bars == b.bars == 4000
    b.push(100.0)
    assert a.bars == 4000
    assert "6 combos" in repr(a)
