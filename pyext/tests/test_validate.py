"""hullsweep_rs.validate against the references, from the series up: the numba bar returns
(reference/returns_ref.py) make the matrix, and pbo_ref.py and research_ref.py judge it. PBO,
the split count, every n*, the DSR's combo and the walk-forward selections exactly; the numbers
to 1e-9 (numpy sums in another order). Bad input is refused with the value named."""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reference"))
import pbo_ref  # noqa: E402
import research_ref  # noqa: E402
import returns_ref  # noqa: E402

hs = pytest.importorskip("hullsweep_rs", reason="build it: maturin develop -m pyext/Cargo.toml")


def close_series(bars, seed):
    rng = np.random.default_rng(seed)
    return 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.01, bars)))


def close_enough(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


@pytest.mark.parametrize("metric", ["sharpe", "mean"])
@pytest.mark.parametrize("spec", ["600:300", "600:300:anchored"])
def test_validate_matches_the_references(metric, spec):
    close = close_series(3000, 3)
    close[700:720] = np.nan
    params = hs.grid("6:150:7", "10:90:3")
    got = hs.validate(close, params, folds=8, metric=metric, walk_forward=spec, threads=2)
    matrix = returns_ref.sweep_returns(close, params, 0.09)
    want = pbo_ref.pbo(matrix, 8, metric)
    for key in ("pbo", "prob_oos_loss", "splits", "folds", "combos", "bars", "metric"):
        assert got[key] == want[key], key
    assert got["selected"].tolist() == want["selected"]
    np.testing.assert_allclose(got["logits"], want["logits"], rtol=1e-9, atol=1e-9)
    # Nothing differs from pbo() on the same matrix.
    direct = hs.pbo(matrix, folds=8, metric=metric)
    assert got["pbo"] == direct["pbo"]
    np.testing.assert_array_equal(got["logits"], direct["logits"])

    dsr = research_ref.deflated_sharpe(matrix)
    assert got["deflated_sharpe"]["combo"] == dsr["combo"]
    for key in ("sharpe", "sr0", "skew", "kurt"):
        assert close_enough(got["deflated_sharpe"][key], dsr[key]), key
    assert close_enough(got["deflated_sharpe"]["dsr"], dsr["dsr"]) or abs(
        got["deflated_sharpe"]["dsr"] - dsr["dsr"]
    ) <= 2.0**-52

    wf = research_ref.walk_forward(matrix, spec, metric)
    assert got["walk_forward"]["selected"].tolist() == wf["selected"]
    assert got["walk_forward"]["oos_bars"] == wf["oos_bars"]
    assert close_enough(got["walk_forward"]["oos_pnl"], wf["oos_pnl"])
    assert close_enough(got["walk_forward"]["oos_sharpe"], wf["oos_sharpe"])
    # The OOS returns are the selected combos' own returns, bit for bit.
    oos = np.concatenate(
        [matrix[w[2] : w[3], k] for w, k in zip(wf["windows"], wf["selected"])]
    )
    np.testing.assert_array_equal(got["walk_forward"]["oos_returns"], oos)

    for k in range(params.shape[0]):
        assert got["pnl"][k] == hs.sweep(close, params)[0][k]


def test_without_walk_forward_it_is_none_and_defaults_are_sixteen_folds():
    close = close_series(2000, 1)
    got = hs.validate(close, hs.grid("6:100:4"))
    assert got["walk_forward"] is None
    assert (got["folds"], got["splits"], got["metric"]) == (16, 12870, "sharpe")
    assert got["win_rate"].shape == (4,)


@pytest.mark.parametrize(
    "kwargs,words",
    [
        ({"folds": 5}, "got 5"),
        ({"folds": -2}, "got -2"),
        ({"metric": "sortino"}, '"sortino"'),
        ({"walk_forward": "100:x"}, '"x"'),
        ({"walk_forward": "5000:100"}, "5000"),
        ({"variant": "nope"}, '"nope"'),
    ],
)
def test_bad_input_names_the_value(kwargs, words):
    close = close_series(1000, 2)
    with pytest.raises(ValueError, match=None) as e:
        hs.validate(close, hs.grid("6:60:3"), **kwargs)
    assert words in str(e.value), str(e.value)
