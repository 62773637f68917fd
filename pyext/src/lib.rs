//! The native half of `hullsweep_rs`: `sweep` runs any variant on numpy arrays without a copy and
//! without the GIL; the package's Python half (`python/hullsweep_rs`) re-exports it.

use hullsweep_kernel::{Combo, DEFAULT_FEE_PCT};
use hullsweep_variants::{Threads, Variant};
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::IntoPyDict;

type Sweep<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<i64>>);

// The signatures below spell the default fee as a literal so that `help()` and
// `inspect.signature` show it (pyo3 renders a named constant as `...`); this keeps them honest.
const _: () = assert!(DEFAULT_FEE_PCT == 0.09);

/// Describes what a non-conforming argument is, for a `TypeError` that names it.
fn describe(obj: &Bound<'_, PyAny>) -> String {
    match obj.cast::<PyUntypedArray>() {
        Ok(a) => format!("a {}-D {} array", a.ndim(), a.dtype()),
        Err(_) => match obj.get_type().name() {
            Ok(name) => format!("a {name}"),
            Err(_) => "an object of unknown type".to_string(),
        },
    }
}

/// `close` as a read-only view of a 1-D float64 array; a `TypeError` naming what came instead.
fn close_view<'py>(close: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray1<'py, f64>> {
    match close.cast::<PyArray1<f64>>() {
        Ok(a) => a
            .try_readonly()
            .map_err(|e| PyValueError::new_err(e.to_string())),
        Err(_) => Err(PyTypeError::new_err(format!(
            "close must be a 1-D float64 numpy array, got {} (convert with np.asarray(close, dtype=np.float64))",
            describe(close)
        ))),
    }
}

/// `params` as a read-only view of an n x 6 int64 array.
fn params_view<'py>(params: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray2<'py, i64>> {
    match params.cast::<PyArray2<i64>>() {
        Ok(a) => a
            .try_readonly()
            .map_err(|e| PyValueError::new_err(e.to_string())),
        Err(_) => Err(PyTypeError::new_err(format!(
            "params must be an n x 6 int64 numpy array, got {} (convert with np.asarray(params, dtype=np.int64))",
            describe(params)
        ))),
    }
}

fn close_slice<'a>(close: &'a PyReadonlyArray1<'_, f64>) -> PyResult<&'a [f64]> {
    close
        .as_slice()
        .map_err(|_| PyValueError::new_err("close must be a C-contiguous float64 array"))
}

fn combos<'a>(params: &'a PyReadonlyArray2<'_, i64>) -> PyResult<&'a [Combo]> {
    let shape = params.as_array().dim();
    if shape.1 != 6 {
        return Err(PyValueError::new_err(format!(
            "params must be n x 6, got {} x {}",
            shape.0, shape.1
        )));
    }
    let flat = params
        .as_slice()
        .map_err(|_| PyValueError::new_err("params must be a C-contiguous int64 array"))?;
    // Same layout as the wire and .npy: rows of six i64, so this is a view, not a copy.
    Ok(bytemuck::cast_slice(flat))
}

/// Sweeps every combo over the series: returns (pnl float64[n], trades int64[n]).
///
/// close: 1-D float64, C-contiguous (finite and > 0, or NaN for a missing bar).
/// params: n x 6 int64, C-contiguous, one row of windows per combo (hma_n, hma_half, hma_sqrt,
///     hma3_m, hma3_half, hma3_third).
/// fee_pct: round-trip fee per closed trade, in percentage points (negative is a rebate).
/// variant: a name from variants(), or "fastest" (the best one for this machine); every variant
///     gives the same bits. threads: workers for the parallel variants (None = all cores).
///
/// The arrays are read in place (no copy) and the GIL is released while the sweep runs.
/// Raises TypeError for a wrong dtype or a non-array, ValueError naming any bad value.
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
    let variant = Variant::from_name(variant).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown variant {variant:?}; one of {} or \"fastest\"",
            names().join(", ")
        ))
    })?;
    let threads = match threads {
        None => Threads::Auto,
        Some(0) => return Err(PyValueError::new_err("threads must be at least 1, got 0")),
        Some(n) => Threads::Fixed(n),
    };
    let close = close_slice(&close)?;
    let combos = combos(&params)?;
    let result = py
        .detach(|| variant.sweep(close, combos, fee_pct, threads))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((result.pnl.into_pyarray(py), result.trades.into_pyarray(py)))
}

/// Checks a series as sweep() would, without sweeping: raises TypeError for a wrong dtype and
/// ValueError naming the first bad price (its index and value) or an empty series.
#[pyfunction]
fn validate_close(py: Python<'_>, close: &Bound<'_, PyAny>) -> PyResult<()> {
    let close = close_view(close)?;
    let close = close_slice(&close)?;
    py.detach(|| hullsweep_kernel::validate_close(close))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Checks params and the fee as sweep() would, without sweeping: raises TypeError for a wrong
/// dtype and ValueError naming the first bad window (combo, field, value) or a bad fee.
#[pyfunction]
#[pyo3(signature = (params, fee_pct = 0.09))]
fn validate_params(params: &Bound<'_, PyAny>, fee_pct: f64) -> PyResult<()> {
    let params = params_view(params)?;
    let combos = combos(&params)?;
    hullsweep_kernel::validate_params_and_fee(combos, fee_pct)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Expands a grid of HMA lengths "LO:HI:K" (K lengths from LO to HI, as `hullsweep sweep --grid`
/// does) into an n x 6 int64 params array; ValueError naming a bad spec.
#[pyfunction]
fn grid<'py>(py: Python<'py>, spec: &str) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let bad = |e: hullsweep_kernel::KernelError| PyValueError::new_err(e.to_string());
    let combos = hullsweep_kernel::grid(spec.parse().map_err(bad)?).map_err(bad)?;
    let flat: Vec<i64> = combos.iter().flatten().copied().collect();
    flat.into_pyarray(py).reshape([combos.len(), 6])
}

fn names() -> Vec<&'static str> {
    Variant::ALL.iter().map(|v| v.name()).collect()
}

/// The names sweep() accepts for variant, besides "fastest".
#[pyfunction]
fn variants() -> Vec<&'static str> {
    names()
}

/// The variant "fastest" resolves to on this machine.
#[pyfunction]
fn fastest() -> &'static str {
    Variant::fastest().name()
}

/// Bars per piece when a long array is pushed: between pieces the GIL is taken back to call the
/// progress callback and to let Ctrl-C (KeyboardInterrupt) through.
const PIECE: usize = 1 << 18;

/// A zero-copy numpy view of a pyarrow Array (or a one-chunk ChunkedArray) or a polars Series of
/// float64 without nulls; anything else is returned as it is, for `close_view` to accept or name.
fn numpy_view<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if obj.cast::<PyUntypedArray>().is_ok() {
        return Ok(obj.clone());
    }
    let ty = obj.get_type();
    let module: String = ty.getattr("__module__")?.extract().unwrap_or_default();
    let name: String = ty.name()?.extract().unwrap_or_default();
    let no_copy = |e: PyErr| {
        PyValueError::new_err(format!(
            "close is a {module}.{name} that cannot be viewed as float64 without a copy ({e}); \
             hullsweep_rs needs float64 values without nulls (fill or drop them, and cast to \
             float64, first)"
        ))
    };
    let py = obj.py();
    if module.starts_with("pyarrow") {
        let array = if name == "ChunkedArray" {
            let chunks: usize = obj.getattr("num_chunks")?.extract()?;
            if chunks != 1 {
                return Err(PyValueError::new_err(format!(
                    "close is a pyarrow ChunkedArray of {chunks} chunks, which is not one block \
                     of memory: push each chunk to hullsweep_rs.Sweeper (for c in arr.chunks), \
                     or pass arr.combine_chunks() (a copy)"
                )));
            }
            obj.call_method1("chunk", (0,))?
        } else {
            obj.clone()
        };
        let kwargs = [("zero_copy_only", true)].into_py_dict(py)?;
        return array
            .call_method("to_numpy", (), Some(&kwargs))
            .map_err(no_copy);
    }
    if module.starts_with("polars") {
        let kwargs = [("allow_copy", false)].into_py_dict(py)?;
        return obj
            .call_method("to_numpy", (), Some(&kwargs))
            .map_err(no_copy);
    }
    Ok(obj.clone())
}

fn parse_variant(variant: &str) -> PyResult<Variant> {
    Variant::from_name(variant).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown variant {variant:?}; one of {} or \"fastest\"",
            names().join(", ")
        ))
    })
}

fn parse_threads(threads: Option<usize>) -> PyResult<Threads> {
    match threads {
        None => Ok(Threads::Auto),
        Some(0) => Err(PyValueError::new_err("threads must be at least 1, got 0")),
        Some(n) => Ok(Threads::Fixed(n)),
    }
}

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
    m.add_class::<PySweeper>()?;
    m.add_function(wrap_pyfunction!(validate_close, m)?)?;
    m.add_function(wrap_pyfunction!(validate_params, m)?)?;
    m.add_function(wrap_pyfunction!(grid, m)?)?;
    m.add_function(wrap_pyfunction!(variants, m)?)?;
    m.add_function(wrap_pyfunction!(fastest, m)?)?;
    Ok(())
}
