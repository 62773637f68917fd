"""hullsweep_rs.pbo against the numpy reference (reference/pbo_ref.py): PBO, the split count,
P(OOS loss) and every n* exactly, logits and the degradation line to 1e-9; the GIL released; bad
input refused with the value named."""

import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reference"))
import pbo_ref as ref  # noqa: E402

hs = pytest.importorskip("hullsweep_rs", reason="build it: maturin develop -m pyext/Cargo.toml")


def matrices():
    rng = np.random.default_rng(7)
    floats = rng.normal(size=(203, 30)) + np.linspace(-0.05, 0.05, 30)
    ties = rng.normal(size=(120, 12))
    ties[:, 4] = ties[:, 1]
    ties[:, 9] = 0.0
    ties[1:, 10] = 0.0
    ties[0, 10] = 0.3
    integers = rng.integers(-2, 3, size=(128, 25)).astype(np.float64)
    integers[:, 20] = integers[:, 3]
    return [("floats", floats, 6), ("ties", ties, 4), ("integers", integers, 8)]


@pytest.mark.parametrize("metric", ["sharpe", "mean"])
@pytest.mark.parametrize("name,matrix,folds", matrices(), ids=lambda v: v if isinstance(v, str) else "")
def test_pbo_matches_the_reference(name, matrix, folds, metric):
    got = hs.pbo(matrix, folds=folds, metric=metric, threads=2)
    want = ref.pbo(matrix, folds, metric)
    assert list(got) == list(want)
    for key in ("pbo", "prob_oos_loss", "splits", "folds", "combos", "bars", "metric"):
        assert got[key] == want[key], key
    assert got["selected"].dtype == np.int64
    assert got["selected"].tolist() == want["selected"]
    for key in ("logits", "is_perf", "oos_perf"):
        assert got[key].dtype == np.float64
        np.testing.assert_allclose(got[key], want[key], rtol=1e-9, atol=1e-9)
    for key in ("slope", "intercept", "r2"):
        assert abs(got["degradation"][key] - want["degradation"][key]) <= 1e-9 * max(
            1.0, abs(want["degradation"][key])
        ), key


def test_defaults_are_sixteen_folds_and_sharpe():
    m = np.random.default_rng(1).normal(size=(64, 3))
    got = hs.pbo(m)
    assert (got["folds"], got["splits"], got["metric"]) == (16, 12870, "sharpe")
    np.testing.assert_array_equal(got["logits"], hs.pbo(m, threads=1)["logits"])


def test_the_gil_is_released():
    # pbo runs in a thread that notes when the call starts and ends, while this one notes the
    # time over and over: with the GIL held through the call, no note could fall inside it but
    # in the moment before the call takes it, leaving a gap as long as the call.
    m = np.random.default_rng(2).normal(size=(2000, 2000))
    span = []

    def work():
        span.append(time.perf_counter())
        hs.pbo(m, folds=16, threads=1)
        span.append(time.perf_counter())

    t = threading.Thread(target=work)
    notes = []
    t.start()
    while t.is_alive():
        notes.append(time.perf_counter())
    t.join()
    times = [span[0]] + [x for x in notes if span[0] < x < span[1]] + [span[1]]
    gap = max(b - a for a, b in zip(times, times[1:]))
    # 12,870 splits over 2,000 combos take a tenth of a second or more.
    assert gap < 0.5 * (span[1] - span[0]), (gap, span[1] - span[0])


@pytest.mark.parametrize(
    "matrix,kwargs,error,message",
    [
        (np.zeros(10), {}, ValueError, "must be 2-D (bars x combos), got shape [10]"),
        (np.zeros((10, 1)), {"folds": 2}, ValueError, "at least 2 columns (combos) to choose between, got 1"),
        (np.zeros((10, 2)), {"folds": 3}, ValueError, "got 3"),
        (np.zeros((10, 2)), {"folds": -2}, ValueError, "got -2"),
        (np.zeros((10, 2)), {"folds": 6}, ValueError, "at least 12 bars, but the matrix has 10"),
        (np.zeros((10, 2)), {"folds": 2, "metric": "sortino"}, ValueError, 'unknown metric "sortino"'),
        (np.zeros((10, 2)), {"folds": 2, "threads": 0}, ValueError, "threads must be at least 1"),
        (np.zeros((10, 4))[:, ::2], {"folds": 2}, ValueError, "np.ascontiguousarray(matrix)"),
        (np.zeros((10, 2), dtype=np.float32), {"folds": 2}, TypeError, "matrix.astype(np.float64)"),
        ([[0.0, 1.0]] * 4, {"folds": 2}, TypeError, "np.asarray(matrix, dtype=np.float64)"),
    ],
)
def test_bad_input_is_named(matrix, kwargs, error, message):
    with pytest.raises(error) as e:
        hs.pbo(matrix, **kwargs)
    assert message in str(e.value)


def test_a_non_finite_value_is_named_by_row_and_column():
    m = np.zeros((10, 3))
    m[6, 2] = np.inf
    with pytest.raises(ValueError, match=r"row 6, column 2 holds inf: returns must be finite"):
        hs.pbo(m, folds=2)
