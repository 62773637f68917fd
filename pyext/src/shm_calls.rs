//! The two calls a live Python client makes most, whole in Rust: a one-float echo and a one-bar
//! push, each from its arguments to its numpy results with no Python in between.
//!
//! Over shared memory the transport costs well under a microsecond, so the Python around a call
//! (packing the frame, `numpy.frombuffer` twice, checking lengths) was most of it; here the
//! frame is built on the stack and the reply's records are copied straight into new arrays.

use hullsweep_engine::protocol::stream::{CLOSE_RECORD, EVENTS_HEAD, OPEN_RECORD};
use numpy::npyffi::{NpyTypes, PY_ARRAY_API, PyArrayObject, npy_intp};
use numpy::{PyArrayDescr, PyArrayDescrMethods, PyUntypedArray};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;

/// `error(message)` as the exception to raise.
pub(crate) fn raise(py: Python<'_>, error: &Py<PyType>, message: String) -> PyErr {
    match error.bind(py).call1((message,)) {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// A push reply's parts: the stream's bar count, then its close and its open records' bytes.
fn split_events(body: &[u8]) -> Result<(u64, &[u8], &[u8]), String> {
    let Some((head, records)) = body.split_first_chunk::<EVENTS_HEAD>() else {
        return Err(format!("push reply of {} bytes", body.len()));
    };
    let word = |at: usize| u32::from_le_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    let count = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
    let closes = CLOSE_RECORD as u64 * u64::from(word(8));
    let opens = OPEN_RECORD as u64 * u64::from(word(12));
    if records.len() as u64 != closes + opens {
        return Err(format!(
            "push reply of {} bytes, expected {}",
            body.len(),
            EVENTS_HEAD as u64 + closes + opens
        ));
    }
    let (closes, opens) = records.split_at(closes as usize);
    Ok((count, closes, opens))
}

/// The dtypes the events are returned in, checked once against the records' sizes.
pub(crate) struct EventDtypes {
    close: Py<PyArrayDescr>,
    open: Py<PyArrayDescr>,
}

impl EventDtypes {
    /// `close` and `open` must be numpy dtypes of 45 and 21 bytes a record, the wire's own
    /// layout (the client's CLOSE_DTYPE and OPEN_DTYPE).
    pub(crate) fn new(close: &Bound<'_, PyAny>, open: &Bound<'_, PyAny>) -> PyResult<EventDtypes> {
        let check = |what: &str, d: &Bound<'_, PyAny>, size: usize| -> PyResult<Py<PyArrayDescr>> {
            let descr = d
                .cast::<PyArrayDescr>()
                .map_err(|_| PyTypeError::new_err(format!("{what} must be a numpy dtype")))?;
            if descr.itemsize() != size {
                return Err(PyValueError::new_err(format!(
                    "{what} has {}-byte records; the wire's are {size} bytes",
                    descr.itemsize()
                )));
            }
            Ok(descr.clone().unbind())
        };
        Ok(EventDtypes {
            close: check("close_dtype", close, CLOSE_RECORD)?,
            open: check("open_dtype", open, OPEN_RECORD)?,
        })
    }

    /// `(count, closes, opens)` from a push reply, the arrays new and filled from its records.
    pub(crate) fn events<'py>(
        &self,
        py: Python<'py>,
        body: &[u8],
        protocol_error: &Py<PyType>,
    ) -> PyResult<(u64, Bound<'py, PyUntypedArray>, Bound<'py, PyUntypedArray>)> {
        let (count, closes, opens) =
            split_events(body).map_err(|m| raise(py, protocol_error, m))?;
        Ok((
            count,
            records(py, self.close.bind(py), closes)?,
            records(py, self.open.bind(py), opens)?,
        ))
    }
}

/// A new 1-D array of `descr` holding `bytes` (whole records of its size), copied in.
pub(crate) fn records<'py>(
    py: Python<'py>,
    descr: &Bound<'py, PyArrayDescr>,
    bytes: &[u8],
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let size = descr.itemsize();
    debug_assert!(size > 0 && bytes.len().is_multiple_of(size));
    let mut dims = [(bytes.len() / size) as npy_intp];
    // SAFETY: `PyArray_NewFromDescr` with no data pointer allocates a new C-contiguous array of
    // `dims[0]` records of `descr` (one dimension, as `nd` says; `dims` outlives the call); it
    // steals a reference to `descr`, which `into_dtype_ptr` adds. A null return is a raised
    // Python error, taken below before the pointer is used.
    let array = unsafe {
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            PY_ARRAY_API.get_type_object(py, NpyTypes::PyArray_Type),
            descr.clone().into_dtype_ptr(),
            1,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, ptr)?
    };
    if !bytes.is_empty() {
        // SAFETY: the array was just allocated by numpy with room for exactly `bytes.len()`
        // bytes (its records times their size), contiguous, and no other code has seen it, so
        // nothing else reads or writes its data while it is filled.
        unsafe {
            let data = (*(array.as_ptr() as *mut PyArrayObject)).data as *mut u8;
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len());
        }
    }
    // SAFETY: `PyArray_NewFromDescr` returns an ndarray (the base ndarray type was asked for).
    Ok(unsafe { array.cast_into_unchecked() })
}
