//! `hullsweep_rs.pbo`: CSCV and the probability of backtest overfitting of a bars x combos float64
//! matrix (docs/research.md), read in place and computed with the GIL released.

use crate::arrays::check_array;
use hullsweep_research::{Cscv, Metric, check_shape};
use numpy::{IntoPyArray, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

pub(crate) fn value_error(e: impl ToString) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The probability of backtest overfitting of choosing the best of N combos (Bailey, Borwein,
/// Lopez de Prado and Zhu, "The probability of backtest overfitting", J. Computational Finance
/// 20(4), 2017), by CSCV: the T bars are cut into `folds` folds as numpy.array_split does; for
/// each of the C(S, S/2) ways to call half of them in-sample, the combo best in sample (n*, the
/// first on ties) is ranked among all combos out of sample.
///
/// matrix: bars x combos float64, C-contiguous (one row per bar, one column per combo; finite).
/// folds: S, even, at least 2 bars per fold, at most 26. metric: "sharpe" (mean / population
///     std, 0 where std is 0) or "mean". threads: None = all cores (the result does not depend
///     on it).
///
/// Returns a dict: pbo (the fraction of splits whose logit ln(w / (1 - w)), w = rank / (N + 1),
/// is <= 0), logits (float64[splits], in itertools.combinations order), degradation {slope,
/// intercept, r2} (least squares OOS = slope * IS + intercept of n*), prob_oos_loss (the fraction
/// of splits where n* loses out of sample), splits, folds, combos, bars, metric, and per split
/// selected (int64, n*), is_perf and oos_perf (float64, n*'s metric in and out of sample).
/// Raises TypeError for a non-array or a wrong dtype, ValueError for a wrong shape, a strided
/// array, a bad fold count, metric or thread count, or a non-finite value (named by row and
/// column).
#[pyfunction]
#[pyo3(signature = (matrix, folds = 16, metric = "sharpe", threads = None))]
pub(crate) fn pbo<'py>(
    py: Python<'py>,
    matrix: &Bound<'py, PyAny>,
    folds: i64,
    metric: &str,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    check_array::<f64>(
        matrix,
        "matrix",
        "a bars x combos float64",
        "float64",
        |a| check_shape(a.shape()).err().map(|e| e.to_string()),
    )?;
    let view = matrix
        .cast::<PyArray2<f64>>()?
        .try_readonly()
        .map_err(|e| value_error(format!("matrix cannot be read: {e}")))?;
    let (bars, combos) = check_shape(view.shape()).map_err(value_error)?;
    let values = view.as_slice().map_err(|_| {
        value_error("matrix must be C-contiguous; pass np.ascontiguousarray(matrix)")
    })?;
    let folds = usize::try_from(folds).map_err(|_| {
        value_error(format!(
            "folds must be an even number of at least 2 (CSCV splits them into two equal halves), got {folds}"
        ))
    })?;
    let metric = Metric::from_name(metric).map_err(value_error)?;
    let threads = match threads {
        Some(0) => return Err(value_error("threads must be at least 1, got 0")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let r = py
        .detach(|| hullsweep_research::pbo(values, bars, combos, folds, metric, threads))
        .map_err(value_error)?;
    cscv_dict(py, &r)
}

/// The keys of `pbo()`: what `validate()` returns too.
pub(crate) fn cscv_dict<'py>(py: Python<'py>, r: &Cscv) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("pbo", r.pbo)?;
    out.set_item("logits", r.logits().into_pyarray(py))?;
    let d = PyDict::new(py);
    d.set_item("slope", r.degradation.slope)?;
    d.set_item("intercept", r.degradation.intercept)?;
    d.set_item("r2", r.degradation.r2)?;
    out.set_item("degradation", d)?;
    out.set_item("prob_oos_loss", r.prob_oos_loss)?;
    out.set_item("splits", r.splits.len())?;
    out.set_item("folds", r.folds)?;
    out.set_item("combos", r.combos)?;
    out.set_item("bars", r.bars)?;
    out.set_item("metric", r.metric.name())?;
    let per = |f: fn(&hullsweep_research::Split) -> f64| {
        r.splits
            .iter()
            .map(f)
            .collect::<Vec<f64>>()
            .into_pyarray(py)
    };
    let selected: Vec<i64> = r.splits.iter().map(|s| s.selected as i64).collect();
    out.set_item("selected", selected.into_pyarray(py))?;
    out.set_item("is_perf", per(|s| s.is_perf))?;
    out.set_item("oos_perf", per(|s| s.oos_perf))?;
    Ok(out)
}
