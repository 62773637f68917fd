//! `hullsweep_rs._native.ShmSocket`: a shared-memory connection to an engine that the Python
//! client drives like a socket (`sendmsg`, `recv_into`), waiting in Rust with the GIL released.

use hullsweep_engine::shm::{ShmReader, ShmWriter, WaitPolicy, connect};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyConnectionError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;
use std::io::{self, Read, Write};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// A connection to `hullsweep serve --shm NAME`, with the socket methods the client uses.
#[pyclass(name = "ShmSocket", module = "hullsweep_rs")]
pub struct PyShmSocket {
    // Behind a lock because a Python object may be shared between threads; one thread at a
    // time uses a connection, so it is never contended.
    halves: Mutex<Option<(ShmReader, ShmWriter)>>,
}

fn io_err(e: io::Error) -> PyErr {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            PyTimeoutError::new_err(e.to_string())
        }
        _ => PyConnectionError::new_err(e.to_string()),
    }
}

type Halves = Option<(ShmReader, ShmWriter)>;

impl PyShmSocket {
    fn halves(&self) -> MutexGuard<'_, Halves> {
        self.halves.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn open(halves: &mut Halves) -> PyResult<&mut (ShmReader, ShmWriter)> {
    halves
        .as_mut()
        .ok_or_else(|| PyConnectionError::new_err("the shared-memory connection is closed"))
}

#[pymethods]
impl PyShmSocket {
    /// Connects to server `name`; `wait` is "busy", "spin" (the default: poll 50 µs, then
    /// sleep) or "event" (sleep at once).
    #[new]
    #[pyo3(signature = (name, wait = "spin"))]
    fn new(py: Python<'_>, name: &str, wait: &str) -> PyResult<Self> {
        let policy = match wait {
            "busy" => WaitPolicy::Busy,
            "spin" => WaitPolicy::default(),
            "event" => WaitPolicy::Event,
            other => {
                return Err(PyValueError::new_err(format!(
                    "wait={other:?}: expected \"busy\", \"spin\" or \"event\""
                )));
            }
        };
        let name = name.to_string();
        let (stream, _socket) = py
            .detach(|| connect(&name, policy))
            .map_err(|e| PyConnectionError::new_err(e.to_string()))?;
        Ok(PyShmSocket {
            halves: Mutex::new(Some(stream.split())),
        })
    }

    /// Writes every byte of `buffers` (any objects with the buffer protocol) and returns the
    /// count, as `socket.sendmsg` does for a blocking socket.
    fn sendmsg(&self, py: Python<'_>, buffers: Vec<PyBuffer<u8>>) -> PyResult<usize> {
        let mut bytes = Vec::with_capacity(buffers.iter().map(|b| b.len_bytes()).sum());
        for b in &buffers {
            bytes.extend_from_slice(&b.to_vec(py)?);
        }
        let mut halves = self.halves();
        let (_, writer) = open(&mut halves)?;
        py.detach(|| writer.write_all(&bytes)).map_err(io_err)?;
        Ok(bytes.len())
    }

    /// `sendmsg` of one buffer.
    fn sendall(&self, py: Python<'_>, data: PyBuffer<u8>) -> PyResult<()> {
        self.sendmsg(py, vec![data]).map(|_| ())
    }

    /// Reads at least one byte (blocking) into `buffer`, at most its length; 0 at the end.
    fn recv_into(&self, py: Python<'_>, buffer: PyBuffer<u8>) -> PyResult<usize> {
        if buffer.readonly() {
            return Err(PyValueError::new_err("recv_into needs a writable buffer"));
        }
        let Some(cells) = buffer.as_mut_slice(py) else {
            return Err(PyValueError::new_err(
                "recv_into needs a writable C-contiguous buffer",
            ));
        };
        // Read with the GIL released into memory of our own, then copy in with it held: the
        // Python buffer is only touched while no other Python thread can.
        let mut got = vec![0u8; cells.len()];
        let mut halves = self.halves();
        let (reader, _) = open(&mut halves)?;
        let n = py.detach(|| reader.read(&mut got)).map_err(io_err)?;
        for (cell, byte) in cells.iter().zip(&got[..n]) {
            cell.set(*byte);
        }
        Ok(n)
    }

    /// Bounds every later read and write (`None`: wait for ever), as `socket.settimeout`.
    fn settimeout(&self, timeout: Option<f64>) -> PyResult<()> {
        let t = match timeout {
            None => None,
            Some(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
            Some(s) => {
                return Err(PyValueError::new_err(format!(
                    "timeout {s}: expected a number of seconds > 0, or None"
                )));
            }
        };
        let mut halves = self.halves();
        let (reader, writer) = open(&mut halves)?;
        reader.set_read_timeout(t).map_err(io_err)?;
        writer.set_write_timeout(t).map_err(io_err)?;
        Ok(())
    }

    /// Closes the connection: the server sees the end and frees its slot.
    fn close(&self) {
        *self.halves() = None;
    }
}
