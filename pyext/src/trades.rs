//! `hullsweep_rs.trades`: the closed trades of chosen combos (docs/kernel.md, "Trades and
//! events") as a dict of numpy columns, the same bits as the numba reference's `sweep_trades`.

use crate::arrays::{
    close_slice, close_view, combos as combo_rows, describe, numpy_view, params_view,
};
use hullsweep_kernel::{Combo, DEFAULT_GRID, GridSpec, Trade};
use numpy::IntoPyArray;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// `combos`: None or "all" (every combo), an int, or a sequence of ints (a list, a tuple, a
/// 1-D integer numpy array); a negative index is named.
fn parse_combos(combos: Option<&Bound<'_, PyAny>>, n: usize) -> PyResult<Vec<usize>> {
    let Some(obj) = combos else {
        return Ok((0..n).collect());
    };
    if let Ok(s) = obj.cast::<PyString>() {
        return match s.to_str()? {
            "all" => Ok((0..n).collect()),
            other => Err(PyValueError::new_err(format!(
                "combos must be \"all\", an int or a sequence of ints, got the string {other:?}"
            ))),
        };
    }
    let wanted: Vec<i64> = match obj.extract::<i64>() {
        Ok(k) => vec![k],
        Err(_) => obj.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "combos must be \"all\", an int or a sequence of ints (indices into params), \
                 got {}",
                describe(obj)
            ))
        })?,
    };
    wanted
        .into_iter()
        .map(|k| {
            usize::try_from(k).map_err(|_| {
                PyValueError::new_err(format!(
                    "bad combo {k}: there are {n} combos, numbered 0 to {}",
                    n.saturating_sub(1)
                ))
            })
        })
        .collect()
}

/// The combos from `params`, or from the grid spec "LO:HI:K" (default "6:200:80"), not both.
fn rows(params: Option<&Bound<'_, PyAny>>, grid: Option<&str>) -> PyResult<Vec<Combo>> {
    match (params, grid) {
        (Some(_), Some(_)) => Err(PyValueError::new_err(
            "give params or grid, not both: they are two ways to say the same combos",
        )),
        (Some(p), None) => {
            let p = params_view(p)?;
            Ok(combo_rows(&p)?.to_vec())
        }
        (None, spec) => {
            let spec = match spec {
                Some(s) => s
                    .parse::<GridSpec>()
                    .map_err(|e| PyValueError::new_err(format!("grid {s:?}: {e}")))?,
                None => DEFAULT_GRID,
            };
            hullsweep_kernel::grid(spec).map_err(|e| PyValueError::new_err(e.to_string()))
        }
    }
}

/// The closed trades of chosen combos: a dict of 1-D numpy arrays, one entry per trade each,
/// ready for `pandas.DataFrame(d)` or `polars.DataFrame(d)`: combo, side (1 long, -1 short),
/// entry_bar, exit_bar (int64, bars from 0), entry_price, exit_price, pnl (float64). Combo by
/// combo in the order given, each combo's trades in bar order.
///
/// close: as sweep() takes it (1-D float64 numpy, an np.memmap, a pyarrow or polars float64
///     column; read in place). params: n x 6 int64 as for sweep(), or None for grid.
/// combos: None or "all" (every combo), an int, or a sequence of ints: indices into params.
/// fee_pct: round-trip fee per closed trade, in percentage points.
/// grid: "LO:HI:K", the combos as hullsweep_rs.grid(grid) builds them (default "6:200:80"
///     when params is None too).
///
/// Each trade's pnl is the kernel's own expression, so a combo's trades summed in order from
/// 0.0 give sweep()'s pnl bit for bit; every trade is the numba reference's (docs/kernel.md,
/// "Trades and events"). The GIL is released while the log is computed. Errors as sweep()'s,
/// and ValueError naming a combo past the params, with the range.
#[pyfunction]
#[pyo3(signature = (close, params = None, combos = None, fee_pct = 0.09, grid = None))]
pub fn trades<'py>(
    py: Python<'py>,
    close: &Bound<'py, PyAny>,
    params: Option<&Bound<'py, PyAny>>,
    combos: Option<&Bound<'py, PyAny>>,
    fee_pct: f64,
    grid: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let close = numpy_view(close)?;
    let close = close_view(&close)?;
    let close = close_slice(&close)?;
    let params = rows(params, grid)?;
    let combos = parse_combos(combos, params.len())?;
    // The fast batch log (O(1) per bar per combo), gated trade for trade against numba.
    let log = py
        .detach(|| hullsweep_variants::trades(close, &params, fee_pct, &combos))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    columns(py, &log)
}

/// The trade log as a dict of numpy columns, in docs/kernel.md's field order.
fn columns<'py>(py: Python<'py>, log: &[Trade]) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let i = |get: fn(&Trade) -> i64| log.iter().map(get).collect::<Vec<i64>>().into_pyarray(py);
    let f = |get: fn(&Trade) -> f64| log.iter().map(get).collect::<Vec<f64>>().into_pyarray(py);
    out.set_item("combo", i(|t| t.combo as i64))?;
    out.set_item("side", i(|t| t.side))?;
    out.set_item("entry_bar", i(|t| t.entry_bar as i64))?;
    out.set_item("exit_bar", i(|t| t.exit_bar as i64))?;
    out.set_item("entry_price", f(|t| t.entry_price))?;
    out.set_item("exit_price", f(|t| t.exit_price))?;
    out.set_item("pnl", f(|t| t.pnl))?;
    Ok(out)
}
