//! `hullsweep_rs.Live`: combos run bar by bar from Python, each push's events returned as numpy
//! columns (one table, a `kind` column), bit for bit the batch sweep's trades and results.

use crate::arrays::{close_slice, close_view, combos, numpy_view, params_view};
use hullsweep_kernel::{Combo, Event, GridSpec};
use hullsweep_variants::Live;
use numpy::{IntoPyArray, PyArray1, PyArrayMethods, PyUntypedArray};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The `kind` of an open event.
const OPEN: i8 = 1;
/// The `kind` of a close event (a closed trade).
const CLOSE: i8 = 2;

/// Combos run live: push() bars as they come (a float, or a float64 array of many), get each
/// push's events. Every event, trade and result() is the batch sweep's over the bars pushed so
/// far, bit for bit, whatever the chunking (docs/kernel.md, "Trades and events").
///
/// Combos: params (n x 6 int64, as sweep() takes them), or grid "LO:HI:K" (with grid3 for a
/// two-axis grid, as hullsweep_rs.grid builds them); neither = the default 80-combo grid.
///
/// For example (close a float64 numpy series):
///
///     live = hullsweep_rs.Live(grid="10:60:6")
///     ev = live.push(close[:5000])          # a dict of numpy columns, one row per event
///     df = pandas.DataFrame(ev)             # or polars.DataFrame(ev)
///     trades = df[df.kind == hullsweep_rs.Live.CLOSE]
///     ev = live.push(101.25)                # then bar by bar
///
/// The events of a push are one table, in stream order (bars ascending, then combos ascending,
/// a combo's close before its open at a reversal), with the columns:
///     kind int8: 1 (Live.OPEN) a position opened, 2 (Live.CLOSE) a trade closed;
///     combo int64: the combo's row in the params;
///     bar int64: the bar it happened at, from 0 over the whole stream;
///     side int64: 1 long, -1 short (an open: the new position; a close: the one it held);
///     price float64: the close at that bar (an open's entry, a close's exit);
///     entry_bar int64, entry_price float64: a close's entry (an open's own bar and price);
///     pnl float64: a close's trade PnL in percent net of the fee, NaN for an open (select on
///         kind, not on pnl: at extreme prices a trade's PnL can itself be NaN).
/// So the closes are hullsweep_kernel::trades' fields: exit_bar = bar, exit_price = price.
/// One table rather than two because a reversal is a close and an open at the same bar, and a
/// pandas user who wants both in order gets them in one frame.
#[pyclass(name = "Live", module = "hullsweep_rs")]
pub struct PyLive {
    inner: Live,
}

/// One push's events as a dict of numpy columns (see the class doc), each column made at its
/// final length and filled in place: no intermediate `Vec`s, one Python object per column.
fn events_dict<'py>(py: Python<'py>, events: &[Event]) -> PyResult<Bound<'py, PyDict>> {
    let n = events.len();
    // Zeroed, not uninitialised: a slice over uninitialised numbers would be undefined
    // behaviour, and the memset is small beside making the array.
    let kind = PyArray1::<i8>::zeros(py, n, false);
    let combo = PyArray1::<i64>::zeros(py, n, false);
    let bar = PyArray1::<i64>::zeros(py, n, false);
    let side = PyArray1::<i64>::zeros(py, n, false);
    let price = PyArray1::<f64>::zeros(py, n, false);
    let entry_bar = PyArray1::<i64>::zeros(py, n, false);
    let entry_price = PyArray1::<f64>::zeros(py, n, false);
    let pnl = PyArray1::<f64>::zeros(py, n, false);
    {
        // SAFETY: the eight arrays were created just above, C-contiguous, and no reference to
        // them has left this function, so these slices are the only views of their memory
        // while they live (numpy's borrow tracking is skipped for the same reason).
        let (
            kind_col,
            combo_col,
            bar_col,
            side_col,
            price_col,
            entry_bar_col,
            entry_price_col,
            pnl_col,
        ) = unsafe {
            (
                kind.as_slice_mut()?,
                combo.as_slice_mut()?,
                bar.as_slice_mut()?,
                side.as_slice_mut()?,
                price.as_slice_mut()?,
                entry_bar.as_slice_mut()?,
                entry_price.as_slice_mut()?,
                pnl.as_slice_mut()?,
            )
        };
        for (i, e) in events.iter().enumerate() {
            let (kind, combo, bar, side, price, entry_bar, entry_price, pnl) = match *e {
                Event::Open {
                    combo,
                    bar,
                    side,
                    price,
                } => (OPEN, combo, bar, side, price, bar, price, f64::NAN),
                Event::Close(t) => (
                    CLOSE,
                    t.combo,
                    t.exit_bar,
                    t.side,
                    t.exit_price,
                    t.entry_bar,
                    t.entry_price,
                    t.pnl,
                ),
            };
            kind_col[i] = kind;
            combo_col[i] = combo as i64;
            bar_col[i] = bar as i64;
            side_col[i] = side;
            price_col[i] = price;
            entry_bar_col[i] = entry_bar as i64;
            entry_price_col[i] = entry_price;
            pnl_col[i] = pnl;
        }
    }
    let d = PyDict::new(py);
    d.set_item(intern!(py, "kind"), kind)?;
    d.set_item(intern!(py, "combo"), combo)?;
    d.set_item(intern!(py, "bar"), bar)?;
    d.set_item(intern!(py, "side"), side)?;
    d.set_item(intern!(py, "price"), price)?;
    d.set_item(intern!(py, "entry_bar"), entry_bar)?;
    d.set_item(intern!(py, "entry_price"), entry_price)?;
    d.set_item(intern!(py, "pnl"), pnl)?;
    Ok(d)
}

fn value_error(e: hullsweep_kernel::KernelError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The combos from `params`, or `grid`/`grid3`, or the default grid.
fn live_combos(
    params: Option<&Bound<'_, PyAny>>,
    grid: Option<&str>,
    grid3: Option<&str>,
) -> PyResult<Vec<Combo>> {
    let parse = |name: &str, s: &str| {
        s.parse::<GridSpec>()
            .map_err(|e| PyValueError::new_err(format!("{name} {s:?}: {e}")))
    };
    match (params, grid, grid3) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(PyValueError::new_err(
            "give params or grid (with grid3), not both: params are explicit combos, a grid \
             expands to them",
        )),
        (Some(p), None, None) => {
            let p = params_view(p)?;
            Ok(combos(&p)?.to_vec())
        }
        (None, grid, grid3) => {
            let g = hullsweep_kernel::Grid {
                hma: match grid {
                    Some(s) => parse("grid", s)?,
                    None => hullsweep_kernel::DEFAULT_GRID,
                },
                hma3: grid3.map(|s| parse("grid3", s)).transpose()?,
            };
            g.combos().map_err(value_error)
        }
    }
}

#[pymethods]
impl PyLive {
    /// `kind` of an open event.
    #[classattr]
    const OPEN: i8 = OPEN;
    /// `kind` of a close event (a closed trade).
    #[classattr]
    const CLOSE: i8 = CLOSE;

    #[new]
    #[pyo3(signature = (params = None, grid = None, grid3 = None, fee_pct = 0.09))]
    fn new(
        params: Option<&Bound<'_, PyAny>>,
        grid: Option<&str>,
        grid3: Option<&str>,
        fee_pct: f64,
    ) -> PyResult<Self> {
        let combos = live_combos(params, grid, grid3)?;
        let inner = Live::new(&combos, fee_pct).map_err(value_error)?;
        Ok(PyLive { inner })
    }

    /// Pushes one bar (a float; NaN = a missing bar) or many (a 1-D float64 array, a memmap, a
    /// pyarrow or polars float64 column, read in place), the GIL released; returns their events
    /// as a dict of numpy columns (see the class doc). A bad price raises ValueError naming its
    /// bar index over the whole stream, and nothing of that push is taken (the whole array is
    /// checked first), so the caller can fix the bar and push again.
    fn push<'py>(
        &mut self,
        py: Python<'py>,
        close: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut events = Vec::new();
        let live = &mut self.inner;
        if close.cast::<PyUntypedArray>().is_err()
            && let Ok(v) = close.extract::<f64>()
        {
            live.push(v, &mut events).map_err(value_error)?;
        } else {
            let view = numpy_view(close)?;
            let view = close_view(&view).map_err(|e| {
                if e.is_instance_of::<PyTypeError>(py) {
                    PyTypeError::new_err(format!("{} (or push one bar as a float)", e.value(py)))
                } else {
                    e
                }
            })?;
            let bars = close_slice(&view)?;
            py.detach(|| live.push_many(bars, &mut events))
                .map_err(value_error)?;
        }
        events_dict(py, &events)
    }

    /// Bars pushed so far.
    #[getter]
    fn bars(&self) -> u64 {
        self.inner.bars()
    }

    /// Combos run (the n of the n x 6 params).
    #[getter]
    fn combos(&self) -> usize {
        self.inner.params().len()
    }

    /// The combos, an n x 6 int64 array (a copy).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, numpy::PyArray2<i64>>> {
        let p = self.inner.params();
        let flat: Vec<i64> = p.iter().flatten().copied().collect();
        flat.into_pyarray(py).reshape([p.len(), 6])
    }

    /// The round-trip fee per closed trade, in percentage points.
    #[getter]
    fn fee_pct(&self) -> f64 {
        self.inner.fee_pct()
    }

    /// Each combo's open position, a dict of numpy columns, one row per combo: side int64
    /// (1 long, -1 short, 0 flat: before the first entry), entry_bar int64 (-1 when flat),
    /// entry_price float64 (NaN when flat).
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let n = self.inner.params().len();
        let (mut side, mut bar, mut price) = (vec![0i64; n], vec![-1i64; n], vec![f64::NAN; n]);
        for k in 0..n {
            if let Some(p) = self.inner.position(k) {
                side[k] = p.side;
                bar[k] = p.entry_bar as i64;
                price[k] = p.entry_price;
            }
        }
        let d = PyDict::new(py);
        d.set_item("side", side.into_pyarray(py))?;
        d.set_item("entry_bar", bar.into_pyarray(py))?;
        d.set_item("entry_price", price.into_pyarray(py))?;
        Ok(d)
    }

    /// (pnl float64[n], trades int64[n]) so far: sweep() over the bars pushed, bit for bit.
    fn result<'py>(
        &self,
        py: Python<'py>,
    ) -> (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<i64>>) {
        let r = self.inner.result();
        (r.pnl.into_pyarray(py), r.trades.into_pyarray(py))
    }

    /// How the (combo, bar) pairs so far were computed: a dict of bars, certified (O(1) by the
    /// error bound) and recomputed (the reference's arithmetic over that bar's windows).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        d.set_item("bars", s.bars)?;
        d.set_item("certified", s.certified)?;
        d.set_item("recomputed", s.recomputed)?;
        Ok(d)
    }

    /// An independent copy of the state (say, to try bars without committing to them).
    fn copy(&self) -> PyLive {
        PyLive {
            inner: self.inner.clone(),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "hullsweep_rs.Live({} combos, fee_pct={}, {} bars pushed)",
            self.inner.params().len(),
            self.inner.fee_pct(),
            self.inner.bars()
        )
    }
}
