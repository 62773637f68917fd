//! The native half of `hullsweep_rs`: `sweep` runs any variant on numpy arrays without a copy and
//! without the GIL; the package's Python half (`python/hullsweep_rs`) re-exports it.

use hullsweep_kernel::{DEFAULT_FEE_PCT, Metrics};
use hullsweep_variants::Variant;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod arrays;
mod choices;
mod live;
mod research;
mod shm;
mod shm_calls;
mod trades;
mod validation;

use arrays::{close_slice, close_view, combos, numpy_view, params_view};
use choices::{names, parse_threads, parse_variant};

type Sweep<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<i64>>);

// The signatures below spell the default fee as a literal so that `help()` and
// `inspect.signature` show it (pyo3 renders a named constant as `...`); this keeps them honest.
const _: () = assert!(DEFAULT_FEE_PCT == 0.09);

/// Sweeps every combo over the series: returns (pnl float64[n], trades int64[n]).
///
/// close: 1-D float64, C-contiguous (finite and > 0, or NaN for a missing bar).
/// params: n x 6 int64, C-contiguous, one row of windows per combo (hma_n, hma_half, hma_sqrt,
///     hma3_m, hma3_half, hma3_third).
/// fee_pct: round-trip fee per closed trade, in percentage points (negative is a rebate).
/// variant: a name from variants(), or "fastest" (the best one for this machine); every variant
///     gives the same bits. threads: workers for the parallel variants (None = all cores; for
///     "fastest" and "rolling-rayon", as many as the sweep's size pays for: one on a small one).
///
/// The arrays are read in place (no copy) and the GIL is released while the sweep runs.
/// Raises TypeError for a non-array or a wrong dtype (nothing is converted), ValueError for a
/// wrong shape, a strided array or a bad value (price, window, fee, variant, threads); every
/// message names the value and says the fix.
#[pyfunction]
#[pyo3(signature = (close, params, fee_pct = 0.09, variant = "fastest", threads = None))]
fn sweep<'py>(
    py: Python<'py>,
    close: &Bound<'py, PyAny>,
    params: &Bound<'py, PyAny>,
    fee_pct: f64,
    variant: &str,
    threads: Option<usize>,
) -> PyResult<Sweep<'py>> {
    let close = numpy_view(close)?;
    let close = close_view(&close)?;
    let params = params_view(params)?;
    let variant = parse_variant(variant)?;
    let threads = parse_threads(threads)?;
    let close = close_slice(&close)?;
    let combos = combos(&params)?;
    let result = py
        .detach(|| variant.sweep(close, combos, fee_pct, threads))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((result.pnl.into_pyarray(py), result.trades.into_pyarray(py)))
}

/// Sweeps every combo with the metrics of docs/kernel.md ("Metrics"): returns a dict of 1-D
/// numpy arrays, one entry per combo each, ready for `pandas.DataFrame(d)` or
/// `polars.DataFrame(d)`: the six windows (hma_n .. hma3_third, int64), then pnl, trades, wins,
/// long_pnl, short_pnl, long_trades, short_trades, best_trade, worst_trade, max_drawdown,
/// bars_in_market (float64 or int64; best_trade and worst_trade are NaN without trades).
///
/// Same arguments, checks and errors as sweep(); pnl and trades are sweep()'s bits, and every
/// metric is the numba reference's bit for bit, whichever variant runs.
#[pyfunction]
#[pyo3(signature = (close, params, fee_pct = 0.09, variant = "fastest", threads = None))]
fn sweep_metrics<'py>(
    py: Python<'py>,
    close: &Bound<'py, PyAny>,
    params: &Bound<'py, PyAny>,
    fee_pct: f64,
    variant: &str,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let close = numpy_view(close)?;
    let close = close_view(&close)?;
    let params = params_view(params)?;
    let variant = parse_variant(variant)?;
    let threads = parse_threads(threads)?;
    let close = close_slice(&close)?;
    let combos = combos(&params)?;
    let rows = py
        .detach(|| variant.sweep_metrics(close, combos, fee_pct, threads))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let out = PyDict::new(py);
    for (w, name) in hullsweep_kernel::WINDOW_NAMES.iter().enumerate() {
        let col: Vec<i64> = combos.iter().map(|c| c[w]).collect();
        out.set_item(*name, col.into_pyarray(py))?;
    }
    let f = |get: fn(&Metrics) -> f64| rows.iter().map(get).collect::<Vec<f64>>().into_pyarray(py);
    let i = |get: fn(&Metrics) -> i64| rows.iter().map(get).collect::<Vec<i64>>().into_pyarray(py);
    // In METRIC_NAMES order (the Python tests hold the keys to it).
    out.set_item("pnl", f(|m| m.pnl))?;
    out.set_item("trades", i(|m| m.trades))?;
    out.set_item("wins", i(|m| m.wins))?;
    out.set_item("long_pnl", f(|m| m.long_pnl))?;
    out.set_item("short_pnl", f(|m| m.short_pnl))?;
    out.set_item("long_trades", i(|m| m.long_trades))?;
    out.set_item("short_trades", i(|m| m.short_trades))?;
    out.set_item("best_trade", f(|m| m.best_trade))?;
    out.set_item("worst_trade", f(|m| m.worst_trade))?;
    out.set_item("max_drawdown", f(|m| m.max_drawdown))?;
    out.set_item("bars_in_market", i(|m| m.bars_in_market))?;
    Ok(out)
}

/// Checks a series as sweep() would, without sweeping: raises TypeError for a non-array or a
/// wrong dtype, ValueError for a wrong shape, a strided array, the first bad price (its index and
/// value) or an empty series.
#[pyfunction]
fn validate_close(py: Python<'_>, close: &Bound<'_, PyAny>) -> PyResult<()> {
    let close = close_view(close)?;
    let close = close_slice(&close)?;
    py.detach(|| hullsweep_kernel::validate_close(close))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Checks params and the fee as sweep() would, without sweeping: raises TypeError for a
/// non-array or a wrong dtype, ValueError for a wrong shape, a strided array, the first bad
/// window (combo, field, value) or a bad fee.
#[pyfunction]
#[pyo3(signature = (params, fee_pct = 0.09))]
fn validate_params(params: &Bound<'_, PyAny>, fee_pct: f64) -> PyResult<()> {
    let params = params_view(params)?;
    let combos = combos(&params)?;
    hullsweep_kernel::validate_params_and_fee(combos, fee_pct)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Expands a grid of HMA lengths "LO:HI:K" (K distinct lengths from LO to HI, exactly as
/// `hullsweep sweep --grid` does, with the same checks and messages) into an n x 6 int64 params
/// array. With spec3 "LO:HI:K", the HMA3 lengths are swept independently (`--grid3`): every
/// pair, HMA length outer, windows 0-2 from the HMA length and 3-5 from the HMA3 length.
/// ValueError naming every problem of a bad spec (K larger than HI-LO+1 would repeat lengths).
#[pyfunction]
#[pyo3(signature = (spec, spec3 = None))]
fn grid<'py>(
    py: Python<'py>,
    spec: &str,
    spec3: Option<&str>,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let parse = |name: &str, s: &str| {
        s.parse::<hullsweep_kernel::GridSpec>()
            .map_err(|e| PyValueError::new_err(format!("{name} {s:?}: {e}")))
    };
    let g = hullsweep_kernel::Grid {
        hma: parse("spec", spec)?,
        hma3: spec3.map(|s| parse("spec3", s)).transpose()?,
    };
    let combos = g
        .combos()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let flat: Vec<i64> = combos.iter().flatten().copied().collect();
    flat.into_pyarray(py).reshape([combos.len(), 6])
}

/// The names sweep() accepts for variant, besides "fastest".
#[pyfunction]
fn variants() -> Vec<&'static str> {
    names()
}

/// The variant "fastest" resolves to on this machine (with threads=None it then takes as many
/// cores as the sweep's size pays for).
#[pyfunction]
fn fastest() -> &'static str {
    Variant::fastest().name()
}

/// Bars per piece when a long array is pushed: between pieces the GIL is taken back to call the
/// progress callback and to let Ctrl-C (KeyboardInterrupt) through.
const PIECE: usize = 1 << 18;

/// A sweep fed in chunks, for series of any length in bounded memory: push() the series in
/// order (numpy float64 of any length, an np.memmap, a pyarrow or polars float64 column), then
/// finish() returns (pnl, trades) exactly as sweep() over the whole series would.
///
/// Memory: the last few hundred bars of lookback and a few numbers per combo, whatever the
/// length. progress: an optional callable, called as progress(bars_pushed_so_far) after every
/// piece of 256 Ki bars of a push. Ctrl-C interrupts a long push between pieces (KeyboardInterrupt;
/// the bars of the pieces already done stay pushed, see bars).
#[pyclass(name = "Sweeper", module = "hullsweep_rs")]
struct PySweeper {
    inner: Option<hullsweep_variants::Sweeper>,
    progress: Option<Py<PyAny>>,
}

#[pymethods]
impl PySweeper {
    #[new]
    #[pyo3(signature = (params, fee_pct = 0.09, variant = "fastest", threads = None, progress = None))]
    fn new(
        params: &Bound<'_, PyAny>,
        fee_pct: f64,
        variant: &str,
        threads: Option<usize>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let params = params_view(params)?;
        let combos = combos(&params)?;
        let sweeper = hullsweep_variants::Sweeper::new(
            combos,
            fee_pct,
            parse_variant(variant)?,
            parse_threads(threads)?,
        )
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PySweeper {
            inner: Some(sweeper),
            progress,
        })
    }

    /// Pushes the next bars (read in place, GIL released). A bad price raises ValueError naming
    /// its index in the whole series; the bars before its piece stay pushed.
    fn push(&mut self, py: Python<'_>, close: &Bound<'_, PyAny>) -> PyResult<()> {
        let close = numpy_view(close)?;
        let close = close_view(&close)?;
        let close = close_slice(&close)?;
        let sweeper = self
            .inner
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("this Sweeper is finished"))?;
        for piece in close.chunks(PIECE) {
            py.detach(|| sweeper.push(piece))
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            if let Some(cb) = &self.progress {
                cb.call1(py, (sweeper.bars(),))?;
            }
            py.check_signals()?;
        }
        Ok(())
    }

    /// Bars pushed so far.
    #[getter]
    fn bars(&self) -> u64 {
        self.inner.as_ref().map_or(0, |s| s.bars())
    }

    /// Bars of lookback carried from one push to the next.
    #[getter]
    fn lookback(&self) -> usize {
        self.inner.as_ref().map_or(0, |s| s.lookback())
    }

    /// (pnl, trades) of the bars pushed so far, without finishing.
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Sweep<'py>> {
        let sweeper = self
            .inner
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("this Sweeper is finished"))?;
        let r = sweeper.result();
        Ok((r.pnl.into_pyarray(py), r.trades.into_pyarray(py)))
    }

    /// (pnl float64[n], trades int64[n]), as sweep() returns them; ValueError if no bar was
    /// pushed. The Sweeper cannot be pushed to afterwards.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Sweep<'py>> {
        let sweeper = self
            .inner
            .take()
            .ok_or_else(|| PyValueError::new_err("this Sweeper is already finished"))?;
        let r = sweeper
            .finish()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((r.pnl.into_pyarray(py), r.trades.into_pyarray(py)))
    }
}

/// hullsweep's Rust variants in-process: sweep() over numpy arrays, bit-identical to the numba
/// reference. Import it as `hullsweep_rs`; this native module is its compiled half.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DEFAULT_FEE_PCT", DEFAULT_FEE_PCT)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_metrics, m)?)?;
    m.add_function(wrap_pyfunction!(trades::trades, m)?)?;
    m.add_function(wrap_pyfunction!(research::pbo, m)?)?;
    m.add_function(wrap_pyfunction!(validation::validate, m)?)?;
    m.add_class::<PySweeper>()?;
    m.add_class::<live::PyLive>()?;
    m.add_class::<shm::PyShmSocket>()?;
    m.add_function(wrap_pyfunction!(validate_close, m)?)?;
    m.add_function(wrap_pyfunction!(validate_params, m)?)?;
    m.add_function(wrap_pyfunction!(grid, m)?)?;
    m.add_function(wrap_pyfunction!(variants, m)?)?;
    m.add_function(wrap_pyfunction!(fastest, m)?)?;
    Ok(())
}
