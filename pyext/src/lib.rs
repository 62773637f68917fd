//! hullsweep in-process from Python: `hullsweep_rs.sweep(close, params, ...)` runs any variant on
//! numpy arrays without a copy and without the GIL, and raises `ValueError` naming a bad input.

use hullsweep_kernel::{Combo, DEFAULT_FEE_PCT};
use hullsweep_variants::{Threads, Variant};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

type Sweep<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<i64>>);

/// Sweeps every combo over the series: returns (pnl float64[n], trades int64[n]).
///
/// close: 1-D float64, C-contiguous (finite and > 0, or NaN for a missing bar).
/// params: n x 6 int64, C-contiguous, the spec's windows per combo.
/// variant: a name from variants(), or "fastest". threads: workers for "rayon" (None = all cores).
#[pyfunction]
#[pyo3(signature = (close, params, fee_pct = DEFAULT_FEE_PCT, variant = "fastest", threads = None))]
fn sweep<'py>(
    py: Python<'py>,
    close: PyReadonlyArray1<'py, f64>,
    params: PyReadonlyArray2<'py, i64>,
    fee_pct: f64,
    variant: &str,
    threads: Option<usize>,
) -> PyResult<Sweep<'py>> {
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
    let close = close
        .as_slice()
        .map_err(|_| PyValueError::new_err("close must be a C-contiguous float64 array"))?;
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
    let combos: &[Combo] = bytemuck::cast_slice(flat);
    let result = py
        .detach(|| variant.sweep(close, combos, fee_pct, threads))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((result.pnl.into_pyarray(py), result.trades.into_pyarray(py)))
}

fn names() -> Vec<&'static str> {
    Variant::ALL.iter().map(|v| v.name()).collect()
}

/// The names `sweep` accepts for `variant` ("fastest" too).
#[pyfunction]
fn variants() -> Vec<&'static str> {
    names()
}

#[pymodule]
fn hullsweep_rs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(variants, m)?)?;
    Ok(())
}
