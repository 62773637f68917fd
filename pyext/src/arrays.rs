//! The numpy side of every entry point: checking `close` and `params` arrays (errors that name
//! the mistake and its fix) and viewing them, or a pyarrow/polars column, in place as slices.

use hullsweep_kernel::Combo;
use numpy::{
    PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::IntoPyDict;

/// Describes what a non-conforming argument is, for an error that names it.
pub(crate) fn describe(obj: &Bound<'_, PyAny>) -> String {
    match obj.cast::<PyUntypedArray>() {
        Ok(a) => format!("a {}-D {} array", a.ndim(), a.dtype()),
        Err(_) => match obj.get_type().name() {
            Ok(name) => format!("a {name}"),
            Err(_) => "an object of unknown type".to_string(),
        },
    }
}

/// A numpy shape as Python prints it: `(4000,)`, `(2, 2000)`.
pub(crate) fn shape(a: &Bound<'_, PyUntypedArray>) -> String {
    match a.shape() {
        [n] => format!("({n},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The checks `close` and `params` share, in the order that gives one exception type per kind
/// of mistake: not an array or a wrong dtype is a `TypeError` (nothing is converted behind the
/// caller's back), a wrong shape or a strided layout a `ValueError`; each message carries the fix
/// that works for that mistake.
pub(crate) fn check_array<'py, T: numpy::Element>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    want: &str,
    np_dtype: &str,
    ndim_fix: impl Fn(&Bound<'py, PyUntypedArray>) -> Option<String>,
) -> PyResult<()> {
    let Ok(a) = obj.cast::<PyUntypedArray>() else {
        return Err(PyTypeError::new_err(format!(
            "{name} must be {want} numpy array, got {} (convert with np.asarray({name}, dtype=np.{np_dtype}))",
            describe(obj)
        )));
    };
    if !a.dtype().is_equiv_to(&numpy::dtype::<T>(obj.py())) {
        return Err(PyTypeError::new_err(format!(
            "{name} must be {want} numpy array, got {} (convert with {name}.astype(np.{np_dtype}); \
             nothing is converted implicitly, so no value is rounded behind your back)",
            describe(obj)
        )));
    }
    if let Some(message) = ndim_fix(a) {
        return Err(PyValueError::new_err(message));
    }
    if !a.is_c_contiguous() {
        return Err(PyValueError::new_err(format!(
            "{name} must be C-contiguous, got a strided {} array of shape {} (a slice with a step, \
             a column or a transpose); pass np.ascontiguousarray({name})",
            a.dtype(),
            shape(a)
        )));
    }
    Ok(())
}

/// `close` as a read-only view of a 1-D, C-contiguous float64 array.
pub(crate) fn close_view<'py>(close: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray1<'py, f64>> {
    check_array::<f64>(close, "close", "a 1-D float64", "float64", |a| {
        (a.ndim() != 1).then(|| {
            let fix = match a.shape() {
                dims if dims.iter().filter(|&&d| d != 1).count() <= 1 => {
                    "one series of bars: close.reshape(-1)".to_string()
                }
                [_, cols] => format!(
                    "one column per call, e.g. np.ascontiguousarray(close[:, 0]) (of {cols} columns)"
                ),
                _ => "one series per call, e.g. np.ascontiguousarray(close[0, ...])".to_string(),
            };
            format!(
                "close must be 1-D (one bar per element), got a {}-D array of shape {}; {fix}",
                a.ndim(),
                shape(a)
            )
        })
    })?;
    close
        .cast::<PyArray1<f64>>()?
        .try_readonly()
        .map_err(|e| PyValueError::new_err(format!("close cannot be read: {e}")))
}

/// `params` as a read-only view of an n x 6, C-contiguous int64 array.
pub(crate) fn params_view<'py>(params: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray2<'py, i64>> {
    check_array::<i64>(params, "params", "an n x 6 int64", "int64", |a| {
        let fix = match a.shape() {
            [6] => "one combo: params.reshape(1, 6)".to_string(),
            [n] if n % 6 == 0 => format!("{} combos of six windows: params.reshape(-1, 6)", n / 6),
            [_, 6] => return None,
            [_] => {
                "six windows per combo (hma_n, hma_half, hma_sqrt, hma3_m, hma3_half, hma3_third)"
                    .to_string()
            }
            [_, _] => "one row of six windows per combo (hma_n, hma_half, hma_sqrt, hma3_m, \
                       hma3_half, hma3_third); hullsweep_rs.grid(\"LO:HI:K\") builds them"
                .to_string(),
            _ => "one row of six windows per combo: params.reshape(-1, 6)".to_string(),
        };
        Some(format!(
            "params must be n x 6 (one row of windows per combo), got a {}-D array of shape {}; {fix}",
            a.ndim(),
            shape(a)
        ))
    })?;
    params
        .cast::<PyArray2<i64>>()?
        .try_readonly()
        .map_err(|e| PyValueError::new_err(format!("params cannot be read: {e}")))
}

pub(crate) fn close_slice<'a>(close: &'a PyReadonlyArray1<'_, f64>) -> PyResult<&'a [f64]> {
    close.as_slice().map_err(|_| {
        PyValueError::new_err("close must be C-contiguous; pass np.ascontiguousarray(close)")
    })
}

pub(crate) fn combos<'a>(params: &'a PyReadonlyArray2<'_, i64>) -> PyResult<&'a [Combo]> {
    let flat = params.as_slice().map_err(|_| {
        PyValueError::new_err("params must be C-contiguous; pass np.ascontiguousarray(params)")
    })?;
    // Same layout as the wire and .npy: rows of six i64, so this is a view, not a copy.
    Ok(bytemuck::cast_slice(flat))
}

/// A zero-copy numpy view of a pyarrow Array (or a one-chunk ChunkedArray) or a polars Series of
/// float64 without nulls; anything else is returned as it is, for `close_view` to accept or name.
pub(crate) fn numpy_view<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
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
