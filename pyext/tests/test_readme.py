"""The guide's heatmap block (docs/guide.md) runs as written (matplotlib, off-screen), and
sweep_metrics' dict is what DataFrame constructors take: the promise that a researcher can paste
it. The README's own Python block runs too."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reference"))
import hullsweep_ref as ref  # noqa: E402

hs = pytest.importorskip("hullsweep_rs", reason="build it: maturin develop -m pyext/Cargo.toml")

METRICS = ["pnl", "trades", "wins", "long_pnl", "short_pnl", "long_trades", "short_trades",
           "best_trade", "worst_trade", "max_drawdown", "bars_in_market"]
WINDOWS = ["hma_n", "hma_half", "hma_sqrt", "hma3_m", "hma3_half", "hma3_third"]


def readme_block(marker: str, doc: str = "docs/guide.md") -> str:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(), re.S)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"expected one python block with {marker!r} in {doc}"
    return found[0]


def test_readme_python_block_runs(tmp_path):
    code = readme_block("hullsweep_rs.validate", "README.md")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr


def test_readme_heatmap_block_runs_and_draws(tmp_path):
    pytest.importorskip("matplotlib", reason="hullsweep setup --ray installs it (requirements-lab.txt)")
    code = readme_block("sweep_metrics")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    png = tmp_path / "heatmap.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def series(n=6000, seed=3):
    x = 100.0 * np.cumprod(1.0 + 0.002 * np.random.default_rng(seed).standard_normal(n))
    x[50] = np.nan
    x[3000:3100] = x[2999]
    return x


@pytest.mark.parametrize("variant", hs.variants())
def test_sweep_metrics_is_numba_bit_for_bit(variant):
    close = series()
    params = np.vstack([hs.grid("3:300:7", "5:90:4"), [[4000, 2000, 63, 4000, 2000, 1333]]])
    floats, ints = ref.sweep_metrics(close, params, 0.09)
    m = hs.sweep_metrics(close, params, 0.09, variant=variant)
    assert list(m) == WINDOWS + METRICS
    for w, name in enumerate(WINDOWS):
        assert m[name].dtype == np.int64 and np.array_equal(m[name], params[:, w])
    for c, name in enumerate(ref.METRIC_FLOATS):
        assert m[name].dtype == np.float64
        assert np.array_equal(m[name].view(np.int64), floats[:, c].view(np.int64)), name
    for c, name in enumerate(ref.METRIC_INTS):
        assert m[name].dtype == np.int64 and np.array_equal(m[name], ints[:, c]), name
    pnl, trades = hs.sweep(close, params, 0.09, variant=variant)
    assert np.array_equal(pnl.view(np.int64), m["pnl"].view(np.int64))
    assert np.array_equal(trades, m["trades"])
    assert np.isnan(m["best_trade"][-1]), "no trades: NaN extremes"


def test_sweep_metrics_errors_are_sweeps():
    with pytest.raises(ValueError, match="index 1"):
        hs.sweep_metrics(np.array([1.0, -1.0]), hs.grid("2:3:2"))
    with pytest.raises(TypeError, match="float64"):
        hs.sweep_metrics(np.array([1, 2]), hs.grid("2:3:2"))


@pytest.mark.parametrize("lib", ["pandas", "polars"])
def test_dataframes_take_the_dict_as_it_is(lib):
    mod = pytest.importorskip(lib, reason=f"{lib} is optional")
    m = hs.sweep_metrics(series(), hs.grid("6:60:3", "6:60:2"))
    df = mod.DataFrame(m)
    assert list(df.columns) == WINDOWS + METRICS and len(df) == 6


def test_grid_refuses_repeated_lengths_and_pairs_two_axes():
    with pytest.raises(ValueError, match=r"K = 20 lengths do not fit in \[6, 10\].*K <= 5"):
        hs.grid("6:10:20")
    with pytest.raises(ValueError, match="spec3"):
        hs.grid("6:10:5", "1:2:3")
    g = hs.grid("10:30:3", "4:8:2")
    assert g.tolist() == [[10, 5, 3, 4, 2, 1], [10, 5, 3, 8, 4, 2], [20, 10, 4, 4, 2, 1],
                          [20, 10, 4, 8, 4, 2], [30, 15, 5, 4, 2, 1], [30, 15, 5, 8, 4, 2]]
    assert hs.grid("6:200:80").tolist() == hs.grid("6:200:80", None).tolist()


def test_peer_script_skips_with_one_line_without_vectorbt(tmp_path):
    try:
        import vectorbt  # noqa: F401
        pytest.skip("vectorbt is installed here: the script would run the comparison")
    except ImportError:
        pass
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "peers_vectorbt.py"), "--suite",
                          str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines() == [
        "vectorbt is not installed: skipping the peer comparison (see the setup in "
        "scripts/peers_vectorbt.py)"]
