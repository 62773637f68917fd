"""hullsweep_rs in-process: every variant bit-identical to the numba reference, and every bad
input raising the documented exception (TypeError for a non-array or a wrong dtype, ValueError
for a wrong shape, a strided array or a bad value) with a fix that works. Built by `maturin develop` (scripts/test does it)."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "reference"))
import hullsweep_ref as ref  # noqa: E402

hs = pytest.importorskip("hullsweep_rs", reason="build it: maturin develop -m pyext/Cargo.toml")


def series(n=4000, seed=7):
    rng = np.random.default_rng(seed)
    x = 100.0 * np.cumprod(1.0 + 0.001 * rng.standard_normal(n))
    x[100] = np.nan  # a missing bar
    x[2000:2050] = x[1999]  # a flat run
    return x


def grid():
    rows = []
    for n in (1, 2, 6, 33, 89, 200, 5000):
        rows.append([n, max(n // 2, 1), max(int(n**0.5), 1), n, max(n // 2, 1), max(n // 3, 1)])
    rows.append([7, 3, 2, 11, 5, 4])
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("variant", hs.variants() + ["fastest"])
def test_every_variant_is_bit_identical_to_numba(variant):
    close, params = series(), grid()
    want_pnl, want_trades = ref.sweep(close, params, 0.09)
    for threads in (None, 1, 2):
        pnl, trades = hs.sweep(close, params, 0.09, variant=variant, threads=threads)
        assert pnl.dtype == np.float64 and trades.dtype == np.int64
        assert np.array_equal(trades, want_trades)
        assert np.array_equal(pnl.view(np.int64), np.asarray(want_pnl).view(np.int64))


def test_defaults_and_empty_params():
    pnl, trades = hs.sweep(series(), np.zeros((0, 6), dtype=np.int64))
    assert pnl.shape == (0,) and trades.shape == (0,)


@pytest.mark.parametrize(
    "close, params, kwargs, message",
    [
        (np.array([1.0, -2.0]), grid(), {}, "-2"),
        (np.array([1.0, np.inf]), grid(), {}, "inf"),
        (np.array([], dtype=np.float64), grid(), {}, "empty"),
        (series(), np.array([[3, 2, 1, 3, 0, 1]], dtype=np.int64), {}, "hma3_half"),
        (series(), np.ones((2, 5), dtype=np.int64), {}, "n x 6"),
        (series(), grid(), {"fee_pct": float("nan")}, "fee"),
        (series(), grid(), {"variant": "turbo"}, "turbo"),
        (series(), grid(), {"threads": 0}, "threads"),
    ],
)
def test_bad_inputs_raise_value_error_naming_them(close, params, kwargs, message):
    with pytest.raises(ValueError, match=message):
        hs.sweep(close, params, **kwargs)


def test_wrong_types_and_dtypes_raise_type_error_with_the_conversion():
    # A wrong dtype is refused, not converted (no price silently rounded), and the message says
    # the conversion that works: astype for an array, np.asarray for anything else.
    with pytest.raises(TypeError, match=r"close must be a 1-D float64 .* got a 1-D float32 array "
                                        r"\(convert with close\.astype\(np\.float64\)"):
        hs.sweep(series().astype(np.float32), grid())
    with pytest.raises(TypeError, match=r"params must be an n x 6 int64 .* got a 2-D int32 array "
                                        r"\(convert with params\.astype\(np\.int64\)"):
        hs.sweep(series(), grid().astype(np.int32))
    with pytest.raises(TypeError, match=r"got a list \(convert with np\.asarray\(close, "
                                        r"dtype=np\.float64\)\)"):
        hs.sweep([1.0, 2.0], grid())
    with pytest.raises(TypeError, match=r"params .* got a tuple \(convert with np\.asarray\(params"):
        hs.sweep(series(), (20, 10, 4, 20, 10, 6))
    # A wrong dtype and a wrong shape together: the dtype is said first, as a TypeError.
    with pytest.raises(TypeError, match="got a 2-D float32 array"):
        hs.validate_close(series().astype(np.float32).reshape(2, -1))


@pytest.mark.parametrize(
    "close, fix",
    [
        (series().reshape(-1, 1), r"close\.reshape\(-1\)"),
        (series().reshape(1, -1), r"close\.reshape\(-1\)"),
        (series().reshape(2, -1), r"np\.ascontiguousarray\(close\[:, 0\]\) \(of 2000 columns\)"),
        (np.array(101.5), r"close\.reshape\(-1\)"),  # a 0-D array
        (series().reshape(2, 2, -1), r"close\[0, \.\.\.\]"),
    ],
)
def test_a_wrong_close_shape_is_a_value_error_with_a_reshape_hint(close, fix):
    for call in (lambda: hs.sweep(close, grid()), lambda: hs.validate_close(close)):
        with pytest.raises(ValueError, match=r"close must be 1-D .* of shape \(") as e:
            call()
        # A shape problem is not a dtype problem: no conversion is suggested for it.
        assert "astype" not in str(e.value) and "dtype=" not in str(e.value)
        assert re.search(fix, str(e.value)), str(e.value)


def test_the_reshape_hints_are_fixes_that_work():
    close = series()
    want = hs.sweep(close, grid())
    got = hs.sweep(close.reshape(-1, 1).reshape(-1), grid())
    assert np.array_equal(got[1], want[1])
    one = grid()[3]
    with pytest.raises(ValueError, match=r"params must be n x 6 .* shape \(6,\); one combo: "
                                         r"params\.reshape\(1, 6\)"):
        hs.sweep(close, one)
    assert hs.sweep(close, one.reshape(1, 6))[1][0] == want[1][3]
    flat = grid().reshape(-1)
    with pytest.raises(ValueError, match=r"shape \(48,\); 8 combos of six windows: "
                                         r"params\.reshape\(-1, 6\)"):
        hs.validate_params(flat)
    assert np.array_equal(hs.sweep(close, flat.reshape(-1, 6))[1], want[1])
    with pytest.raises(ValueError, match=r"params must be n x 6 .* shape \(2, 5\); one row of "
                                         r"six windows per combo .*hullsweep_rs\.grid"):
        hs.sweep(close, np.ones((2, 5), dtype=np.int64))
    with pytest.raises(ValueError, match=r"shape \(5,\); six windows per combo"):
        hs.sweep(close, np.ones(5, dtype=np.int64))


@pytest.mark.parametrize(
    "close, params, name",
    [
        (series()[::2], grid(), "close"),
        (series()[::-1], grid(), "close"),
        (np.stack([series(), series()], axis=1)[:, 0], grid(), "close"),
        (series(), np.asfortranarray(grid()), "params"),
        (series(), np.ascontiguousarray(np.hstack([grid(), grid()]))[:, :6], "params"),
    ],
)
def test_a_strided_array_is_a_value_error_naming_ascontiguousarray(close, params, name):
    with pytest.raises(ValueError, match=rf"{name} must be C-contiguous, got a strided .*; pass "
                                         rf"np\.ascontiguousarray\({name}\)"):
        hs.sweep(close, params)
    # ... and the fix works, bit for bit.
    got = hs.sweep(np.ascontiguousarray(close), np.ascontiguousarray(params))
    want = hs.sweep(np.array(close, order="C"), np.array(params, order="C"), variant="reference")
    assert np.array_equal(got[1], want[1])
    assert np.array_equal(got[0].view(np.int64), want[0].view(np.int64))


def test_signature_docstrings_and_defaults_are_visible():
    import inspect
    import pydoc

    sig = inspect.signature(hs.sweep)
    assert str(sig) == "(close, params, fee_pct=0.09, variant='fastest', threads=None)"
    assert sig.parameters["fee_pct"].default == hs.DEFAULT_FEE_PCT == 0.09
    assert "stop-and-reverse" in hs.__doc__
    text = pydoc.render_doc(hs, renderer=pydoc.plaintext)
    for name in ("sweep", "validate_close", "validate_params", "grid", "variants", "fastest"):
        assert getattr(hs, name).__doc__, name
        assert name in text
    assert hs.fastest() in hs.variants()
    # The stubs ship with the package, and the default variant is the fastest one.
    pkg = Path(hs.__file__).parent
    assert (pkg / "py.typed").exists() and (pkg / "_native.pyi").exists()
    assert "variant: str = \"fastest\"" in (pkg / "_native.pyi").read_text()


def test_validators_and_grid_match_sweep():
    hs.validate_close(series())
    with pytest.raises(ValueError, match="index 1"):
        hs.validate_close(np.array([1.0, 0.0]))
    hs.validate_params(grid())
    with pytest.raises(ValueError, match="hma_sqrt = 0 in combo 0"):
        hs.validate_params(np.array([[3, 2, 0, 3, 2, 1]], dtype=np.int64))
    g = hs.grid("6:200:80")
    assert g.shape == (80, 6) and g.dtype == np.int64 and g[0].tolist() == [6, 3, 2, 6, 3, 2]
    with pytest.raises(ValueError, match="bad grid"):
        hs.grid("6:x:3")
