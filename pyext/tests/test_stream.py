"""hullsweep_rs.Sweeper: a series pushed in any chunks gives sweep()'s bits; memmaps, pyarrow and
polars columns are read without a copy (or refused with what is needed); progress is reported."""

import numpy as np
import pytest

hs = pytest.importorskip("hullsweep_rs", reason="build it: maturin develop -m pyext/Cargo.toml")


def series(n=6000, seed=11):
    rng = np.random.default_rng(seed)
    x = 100.0 * np.cumprod(1.0 + 0.002 * rng.standard_normal(n))
    x[1000:1040] = np.nan  # a NaN run
    x[3000:3400] = 1.1  # a flat run, where rolling falls back to the reference's arithmetic
    return x


def params():
    return hs.grid("4:150:9")


def same(a, b):
    assert np.array_equal(a[1], b[1])
    assert np.array_equal(a[0].view(np.int64), b[0].view(np.int64))


@pytest.mark.parametrize("variant", hs.variants() + ["fastest"])
def test_any_chunking_gives_the_sweep_bits(variant):
    close, p = series(), params()
    want = hs.sweep(close, p, 0.09, variant=variant)
    rng = np.random.default_rng(3)
    for _ in range(3):
        cuts = np.sort(rng.choice(np.arange(1, len(close)), size=25, replace=False))
        # Single bars too: a run of cuts one apart.
        cuts = np.unique(np.concatenate([cuts, np.arange(2990, 3010)]))
        s = hs.Sweeper(p, 0.09, variant=variant, threads=2)
        for piece in np.split(close, cuts):
            s.push(piece)
        assert s.bars == len(close)
        same(s.finish(), want)


def test_memmap_is_pushed_and_swept_in_place(tmp_path):
    close, p = series(), params()
    path = tmp_path / "c.npy"
    np.save(path, close)
    mm = np.load(path, mmap_mode="r")
    assert isinstance(mm, np.memmap)
    want = hs.sweep(close, p)
    same(hs.sweep(mm, p), want)
    s = hs.Sweeper(p)
    s.push(mm[:2500])
    s.push(mm[2500:])
    same(s.finish(), want)


def test_progress_is_called_per_piece_and_bad_prices_name_the_series_index():
    p = hs.grid("6:40:3")
    close = 100.0 * np.cumprod(1.0 + 0.001 * np.random.default_rng(1).standard_normal(600_000))
    seen = []
    s = hs.Sweeper(p, progress=seen.append)
    s.push(close[:10])
    s.push(close[10:])
    assert seen == [10, 10 + (1 << 18), 10 + 2 * (1 << 18), len(close)]
    same(s.result(), hs.sweep(close, p))
    bad = np.array([100.0, 101.0, -1.0])
    with pytest.raises(ValueError, match=f"bad price -1 at index {len(close) + 2}:"):
        s.push(bad)
    assert s.bars == len(close)
    s.finish()
    with pytest.raises(ValueError, match="finished"):
        s.push(close[:5])
    with pytest.raises(ValueError, match="empty"):
        hs.Sweeper(p).finish()
    with pytest.raises(TypeError, match="float64"):
        hs.Sweeper(p).push(close.astype(np.float32))
    with pytest.raises(ValueError, match="unknown variant"):
        hs.Sweeper(p, variant="nope")


def test_pyarrow_columns_are_viewed_without_a_copy():
    pa = pytest.importorskip("pyarrow")
    close, p = series(), params()
    want = hs.sweep(close, p)
    same(hs.sweep(pa.array(close), p), want)
    same(hs.sweep(pa.chunked_array([close]), p), want)
    s = hs.Sweeper(p)
    for chunk in pa.chunked_array([close[:100], close[100:]]).chunks:
        s.push(chunk)
    same(s.finish(), want)
    with pytest.raises(ValueError, match="2 chunks"):
        hs.sweep(pa.chunked_array([close[:100], close[100:]]), p)
    with pytest.raises(ValueError, match="without nulls"):
        hs.sweep(pa.array([100.0, None, 101.0]), p)


def test_polars_series_are_viewed_without_a_copy():
    pl = pytest.importorskip("polars")
    close, p = series(), params()
    want = hs.sweep(close, p)
    same(hs.sweep(pl.Series("close", close), p), want)
    s = hs.Sweeper(p)
    s.push(pl.Series("close", close))
    same(s.finish(), want)
    with pytest.raises(ValueError, match="without nulls"):
        hs.sweep(pl.Series("close", [100.0, None, 101.0]), p)
