//! `hullsweep_rs.validate`: one sweep, then CSCV/PBO, the deflated Sharpe ratio and
//! walk-forward over it (docs/research.md), computed with the GIL released.

use crate::arrays::{close_slice, close_view, combos, numpy_view, params_view};
use crate::research::{cscv_dict, value_error};
use hullsweep_kernel::ValidClose;
use hullsweep_research::{Metric, WalkSpec};
use hullsweep_validate::{Plan, validate as run};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Sweeps every combo once and judges the winner (docs/research.md): the keys of pbo() computed
/// from the sweep's own bar returns (the same as pbo() on that matrix), plus
///
/// - deflated_sharpe: {combo, sharpe, dsr, sr0, variance, skew, kurt, bars, trials}, of the combo
///   with the best whole-series per-bar Sharpe;
/// - walk_forward (None without walk_forward="TRAIN:TEST[:anchored]"): {spec, selected (int64,
///   per window), train_metric, test_start (int64), oos_returns (float64, the selected combos'
///   test-bar returns concatenated), oos_pnl, oos_sharpe, oos_bars};
/// - sharpe, win_rate, profit_factor (float64[n]; NaN where undefined: no trades, no losing
///   trade), pnl and trades per combo.
///
/// close, params, fee_pct, variant and threads as sweep(); folds and metric as pbo().
/// ValueError names a bad value (fold count, metric, walk-forward spec, price, window).
#[pyfunction]
#[pyo3(signature = (close, params, fee_pct = 0.09, folds = 16, metric = "sharpe", walk_forward = None, variant = "fastest", threads = None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn validate<'py>(
    py: Python<'py>,
    close: &Bound<'py, PyAny>,
    params: &Bound<'py, PyAny>,
    fee_pct: f64,
    folds: i64,
    metric: &str,
    walk_forward: Option<&str>,
    variant: &str,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let close = numpy_view(close)?;
    let close = close_view(&close)?;
    let params = params_view(params)?;
    let variant = crate::choices::parse_variant(variant)?;
    let threads = crate::choices::parse_threads(threads)?;
    let close = close_slice(&close)?;
    let combos = combos(&params)?;
    let folds = usize::try_from(folds).map_err(|_| {
        value_error(format!(
            "folds must be an even number of at least 2 (CSCV splits them into two equal halves), got {folds}"
        ))
    })?;
    let metric = Metric::from_name(metric).map_err(value_error)?;
    let walk: Option<WalkSpec> = walk_forward
        .map(str::parse)
        .transpose()
        .map_err(|e| value_error(format!("walk_forward: {e}")))?;
    let plan = Plan {
        folds,
        metric,
        walk: walk.as_ref(),
        oos_returns: true,
    };
    let v = py
        .detach(|| {
            let valid = ValidClose::new(close)?;
            run(variant, valid, combos, fee_pct, threads, plan, None)
        })
        .map_err(value_error)?;
    let out = cscv_dict(py, &v.cscv)?;
    let d = &v.deflated;
    let dsr = PyDict::new(py);
    dsr.set_item("combo", d.combo)?;
    dsr.set_item("sharpe", d.sharpe)?;
    dsr.set_item("dsr", d.dsr)?;
    dsr.set_item("sr0", d.sr0)?;
    dsr.set_item("variance", d.variance)?;
    dsr.set_item("skew", d.skew)?;
    dsr.set_item("kurt", d.kurt)?;
    dsr.set_item("bars", d.bars)?;
    dsr.set_item("trials", v.cscv.combos)?;
    out.set_item("deflated_sharpe", dsr)?;
    match &v.walk_forward {
        None => out.set_item("walk_forward", py.None())?,
        Some(w) => {
            let wf = PyDict::new(py);
            let per = |f: fn(&hullsweep_research::Selection) -> i64| {
                w.selections.iter().map(f).collect::<Vec<i64>>()
            };
            wf.set_item("spec", w.spec.to_string())?;
            wf.set_item("selected", per(|s| s.selected as i64).into_pyarray(py))?;
            let train: Vec<f64> = w.selections.iter().map(|s| s.train_metric).collect();
            wf.set_item("train_metric", train.into_pyarray(py))?;
            wf.set_item(
                "test_start",
                per(|s| s.window.test.start as i64).into_pyarray(py),
            )?;
            wf.set_item("oos_returns", w.oos_returns.clone().into_pyarray(py))?;
            wf.set_item("oos_pnl", w.summary.pnl)?;
            wf.set_item("oos_sharpe", w.summary.sharpe)?;
            wf.set_item("oos_bars", w.summary.bars)?;
            out.set_item("walk_forward", wf)?;
        }
    }
    let c = v.sweep.combos();
    let col = |f: fn(&hullsweep_validate::ComboSummary) -> f64| {
        c.iter().map(f).collect::<Vec<f64>>().into_pyarray(py)
    };
    out.set_item("sharpe", col(|c| c.sharpe))?;
    out.set_item("win_rate", col(|c| c.win_rate.unwrap_or(f64::NAN)))?;
    out.set_item(
        "profit_factor",
        col(|c| c.profit_factor.unwrap_or(f64::NAN)),
    )?;
    out.set_item("pnl", col(|c| c.metrics.pnl))?;
    let trades: Vec<i64> = c.iter().map(|c| c.metrics.trades).collect();
    out.set_item("trades", trades.into_pyarray(py))?;
    Ok(out)
}
