//! `hullsweep_rs._native.ShmSocket`: a shared-memory connection to an engine. The Python client
//! makes each request with one `call` (the frame out, the whole reply frame back, under one GIL
//! release); `sendmsg`/`recv_into` drive it like a socket for anyone else. All waiting is done in
//! Rust with the GIL released.

use hullsweep_engine::protocol::{ERROR_BIT, OP_ECHO, push_head, request_head};
use hullsweep_engine::shm::{Closer, ShmReader, ShmWriter, WaitPolicy, connect};
use numpy::{
    PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{
    PyConnectionError, PyRuntimeError, PyTimeoutError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyMemoryView, PyString, PyTuple, PyType};
use std::io::{self, IoSlice, Read, Write};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::shm_calls::{EventDtypes, raise, records};

/// Reply bodies up to this size are read into the connection's scratch buffer within the
/// request's GIL release and copied into the returned `bytearray` (a memcpy of at most this
/// much); longer ones are read straight into the `bytearray`, under a second release.
const SCRATCH_MAX: usize = 64 * 1024;

/// One connection's ends and its reusable reply buffer.
struct Conn {
    reader: ShmReader,
    writer: ShmWriter,
    /// Small reply bodies land here: grown once, reused, so a call allocates nothing in Rust.
    scratch: Vec<u8>,
}

/// Where the connection is: idle (here to take), in use by a call, or closed.
enum Slot {
    Idle(Box<Conn>),
    Busy,
    Closed,
}

/// The slot, and how many threads wait for it (the condvar is signalled only when one does:
/// a futex wake is a system call, as costly as the rest of a small call).
struct State {
    slot: Slot,
    waiting: usize,
}

/// A connection to `hullsweep serve --shm NAME`: `call` for a whole request, and the socket
/// methods (`sendmsg`, `sendall`, `recv_into`, `settimeout`, `close`).
#[pyclass(name = "ShmSocket", module = "hullsweep_rs", frozen)]
pub struct PyShmSocket {
    // The lock is only ever held for a few instructions (never across a wait or a GIL
    // acquisition), so taking it with the GIL held cannot deadlock; a call takes the
    // connection out of the slot for its duration, and a second thread waits on `freed`
    // (GIL released) until it is back: calls from several threads run one after the other.
    state: Mutex<State>,
    freed: Condvar,
    /// Closes both rings from any thread, waking a call that waits on them.
    closer: Closer,
    /// What an error frame raises: `error(message)`.
    error: Py<PyType>,
    /// What a reply that does not match its request raises from `echo` and `push_bar`.
    protocol_error: Py<PyType>,
    /// The dtypes `push_bar` returns events in, when given.
    events: Option<EventDtypes>,
}

fn io_err(e: io::Error) -> PyErr {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            PyTimeoutError::new_err(e.to_string())
        }
        _ => PyConnectionError::new_err(e.to_string()),
    }
}

fn closed() -> PyErr {
    PyConnectionError::new_err("the shared-memory connection is closed")
}

/// The connection, taken out of its slot for one call; put back when dropped.
struct Taken<'a> {
    sock: &'a PyShmSocket,
    conn: Option<Box<Conn>>,
}

impl Taken<'_> {
    fn conn(&mut self) -> &mut Conn {
        self.conn.as_mut().expect("held until drop")
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let mut state = self.sock.lock();
        if matches!(state.slot, Slot::Busy)
            && let Some(conn) = self.conn.take()
        {
            state.slot = Slot::Idle(conn);
        }
        let waiting = state.waiting > 0;
        // Closed meanwhile: the connection drops after the lock is released.
        drop(state);
        if waiting {
            self.sock.freed.notify_one();
        }
    }
}

/// Takes the connection out of `slot` if it is there; `Ok(None)` while a call has it.
fn take_from(slot: &mut Slot) -> PyResult<Option<Box<Conn>>> {
    match std::mem::replace(slot, Slot::Busy) {
        Slot::Idle(conn) => Ok(Some(conn)),
        Slot::Busy => Ok(None),
        Slot::Closed => {
            *slot = Slot::Closed;
            Err(closed())
        }
    }
}

impl PyShmSocket {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the connection; waits (GIL released) while another thread's call holds it.
    fn take(&self, py: Python<'_>) -> PyResult<Taken<'_>> {
        let got = take_from(&mut self.lock().slot)?;
        let conn = match got {
            Some(conn) => conn,
            None => py
                .detach(|| {
                    let mut state = self.lock();
                    state.waiting += 1;
                    let got = loop {
                        match take_from(&mut state.slot) {
                            Ok(None) => {
                                state = self.freed.wait(state).unwrap_or_else(|p| p.into_inner())
                            }
                            Ok(Some(conn)) => break Some(conn),
                            Err(_) => break None,
                        }
                    };
                    state.waiting -= 1;
                    got
                })
                .ok_or_else(closed)?,
        };
        Ok(Taken {
            sock: self,
            conn: Some(conn),
        })
    }

    /// The error an error frame of `len` bytes in the scratch buffer raises: `error(message)`,
    /// the message decoded as the client always has, `bytes.decode("utf-8", "replace")`.
    fn error_frame(&self, py: Python<'_>, conn: &mut Conn, len: usize) -> PyErr {
        let raw = PyBytes::new(py, &conn.scratch[..len]);
        if conn.scratch.len() > SCRATCH_MAX {
            // Only an error message gets here: do not keep its size for good.
            conn.scratch = Vec::new();
        }
        match PyString::from_encoded_object(raw.as_any(), Some(c"utf-8"), Some(c"replace")) {
            Ok(message) => match self.error.bind(py).call1((message,)) {
                Ok(e) => PyErr::from_value(e),
                Err(e) => e,
            },
            Err(e) => e,
        }
    }

    /// `request` out and its reply's body handed to `f`, the waiting with the GIL released; an
    /// error frame raises as `call`'s does.
    fn exchange_with<R>(
        &self,
        py: Python<'_>,
        request: &mut [IoSlice<'_>],
        f: impl FnOnce(&[u8]) -> PyResult<R>,
    ) -> PyResult<R> {
        let mut taken = self.take(py)?;
        let conn = taken.conn();
        match py.detach(|| exchange(conn, request)).map_err(io_err)? {
            Reply::Small { len, error: false } => f(&conn.scratch[..len]),
            Reply::Small { len, error: true } => Err(self.error_frame(py, conn, len)),
            Reply::Large(len) => {
                let mut body = vec![0u8; len];
                py.detach(|| read_full(&mut conn.reader, &mut body))
                    .map_err(io_err)?;
                f(&body)
            }
        }
    }
}

/// One part of a request, held for the length of a call so that its bytes can be read in place
/// with the GIL released.
enum Part<'py> {
    /// Immutable: its bytes cannot change while it is held.
    Bytes(Bound<'py, PyBytes>),
    /// C-contiguous numpy arrays, under numpy's shared-borrow flag (as `sweep` reads them).
    F64(PyReadonlyArrayDyn<'py, f64>),
    I64(PyReadonlyArrayDyn<'py, i64>),
    U8(PyReadonlyArrayDyn<'py, u8>),
    /// Any other buffer, copied with the GIL held.
    Copied(Vec<u8>),
}

impl Part<'_> {
    fn bytes(&self) -> &[u8] {
        // Arrays are only held when C-contiguous, so `as_slice` cannot fail.
        match self {
            Part::Bytes(b) => b.as_bytes(),
            Part::F64(a) => bytemuck::cast_slice(a.as_slice().unwrap_or_default()),
            Part::I64(a) => bytemuck::cast_slice(a.as_slice().unwrap_or_default()),
            Part::U8(a) => a.as_slice().unwrap_or_default(),
            Part::Copied(v) => v,
        }
    }
}

fn readonly<'py, T: numpy::Element>(obj: &Bound<'py, PyAny>) -> Option<PyReadonlyArrayDyn<'py, T>> {
    let a = obj.cast::<PyArrayDyn<T>>().ok()?;
    if !a.is_c_contiguous() {
        return None;
    }
    a.try_readonly().ok()
}

fn part<'py>(obj: Bound<'py, PyAny>) -> PyResult<Part<'py>> {
    let obj = match obj.cast_into::<PyBytes>() {
        Ok(b) => return Ok(Part::Bytes(b)),
        Err(e) => e.into_inner(),
    };
    if let Some(a) = readonly::<f64>(&obj) {
        return Ok(Part::F64(a));
    }
    if let Some(a) = readonly::<i64>(&obj) {
        return Ok(Part::I64(a));
    }
    if let Some(a) = readonly::<u8>(&obj) {
        return Ok(Part::U8(a));
    }
    let buffer = match PyBuffer::<u8>::get(&obj) {
        Ok(b) => b,
        // Not a byte format ('d', '<q', ...): its bytes, as socket.sendmsg would send them.
        Err(_) => PyBuffer::<u8>::get(
            &PyMemoryView::from(&obj)
                .map_err(|_| {
                    PyTypeError::new_err(format!(
                        "a request part must be bytes, a numpy array or another buffer, got {}",
                        obj.get_type().name().map_or("?".into(), |n| n.to_string())
                    ))
                })?
                .call_method1("cast", ("B",))?,
        )?,
    };
    Ok(Part::Copied(buffer.to_vec(obj.py())?))
}

/// The parts of a list or tuple (or any iterable).
fn parts<'py>(buffers: &Bound<'py, PyAny>) -> PyResult<Vec<Part<'py>>> {
    if let Ok(list) = buffers.cast::<PyList>() {
        return list.iter().map(part).collect();
    }
    if let Ok(tuple) = buffers.cast::<PyTuple>() {
        return tuple.iter().map(part).collect();
    }
    buffers.try_iter()?.map(|b| part(b?)).collect()
}

/// Writes every byte of `slices`, vectored: the frame is published as one piece where the ring
/// has room for it.
fn write_all(writer: &mut ShmWriter, mut slices: &mut [IoSlice<'_>]) -> io::Result<usize> {
    let mut total = 0;
    // Drops leading empty parts, so a request of nothing writes nothing.
    IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        let n = writer.write_vectored(slices)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "the shared-memory ring took no bytes",
            ));
        }
        total += n;
        IoSlice::advance_slices(&mut slices, n);
    }
    Ok(total)
}

/// Fills `buf`; the end of the stream first is an error saying how far it got.
fn read_full(reader: &mut ShmReader, buf: &mut [u8]) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "engine closed the stream after {got} of {} bytes",
                        buf.len()
                    ),
                ));
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A reply frame's body: in `scratch[..len]`, or (too long for it) still in the ring.
enum Reply {
    Small { len: usize, error: bool },
    Large(usize),
}

/// Reads a reply's length word, then a body that fits the scratch buffer (an error message
/// always does).
fn read_reply(conn: &mut Conn) -> io::Result<Reply> {
    let mut head = [0u8; 4];
    read_full(&mut conn.reader, &mut head)?;
    let word = u32::from_le_bytes(head);
    let len = (word & !ERROR_BIT) as usize;
    let error = word & ERROR_BIT != 0;
    if len > SCRATCH_MAX && !error {
        return Ok(Reply::Large(len));
    }
    if conn.scratch.len() < len {
        conn.scratch.resize(len, 0);
    }
    read_full(&mut conn.reader, &mut conn.scratch[..len])?;
    Ok(Reply::Small { len, error })
}

/// A request out and the head of its reply back, as the Python client's `_call` does: when the
/// write fails (a server refusing an oversize frame closes early), an error frame still waiting
/// to be read is the answer; anything else, the write's own error.
fn exchange(conn: &mut Conn, request: &mut [IoSlice<'_>]) -> io::Result<Reply> {
    if let Err(sent) = write_all(&mut conn.writer, request) {
        return match read_reply(conn) {
            Ok(reply @ Reply::Small { error: true, .. }) => Ok(reply),
            _ => Err(sent),
        };
    }
    read_reply(conn)
}

#[pymethods]
impl PyShmSocket {
    /// Connects to server `name`; `wait` is "busy", "spin" (the default: poll 50 µs, then
    /// sleep) or "event" (sleep at once). `error` is the exception class an error frame raises,
    /// with the server's message (the client passes its EngineError); `protocol_error` what a
    /// reply that does not fit its request raises from `echo` and `push_bar`; `close_dtype` and
    /// `open_dtype` the dtypes `push_bar` returns events in (the client's CLOSE_DTYPE and
    /// OPEN_DTYPE; without them `push_bar` is refused).
    #[new]
    #[pyo3(signature = (
        name, wait = "spin", error = None, protocol_error = None, close_dtype = None,
        open_dtype = None
    ))]
    fn new(
        py: Python<'_>,
        name: &str,
        wait: &str,
        error: Option<Bound<'_, PyType>>,
        protocol_error: Option<Bound<'_, PyType>>,
        close_dtype: Option<Bound<'_, PyAny>>,
        open_dtype: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
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
        let runtime = || py.get_type::<PyRuntimeError>().unbind();
        let error = error.map_or_else(runtime, Bound::unbind);
        let protocol_error = protocol_error.map_or_else(runtime, Bound::unbind);
        let events = match (close_dtype, open_dtype) {
            (Some(close), Some(open)) => Some(EventDtypes::new(&close, &open)?),
            (None, None) => None,
            _ => {
                return Err(PyValueError::new_err(
                    "close_dtype and open_dtype go together: give both or neither",
                ));
            }
        };
        let name = name.to_string();
        let (stream, _socket) = py
            .detach(|| connect(&name, policy))
            .map_err(|e| PyConnectionError::new_err(e.to_string()))?;
        let closer = stream.closer();
        let (reader, writer) = stream.split();
        Ok(PyShmSocket {
            state: Mutex::new(State {
                slot: Slot::Idle(Box::new(Conn {
                    reader,
                    writer,
                    scratch: Vec::new(),
                })),
                waiting: 0,
            }),
            freed: Condvar::new(),
            closer,
            error,
            protocol_error,
            events,
        })
    }

    /// Opcode 1 whole: `close` (a 1-D C-contiguous float64 array) out, the reply back as a new
    /// float64 array of the same length, the waiting with the GIL released.
    fn echo<'py>(
        &self,
        py: Python<'py>,
        close: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyUntypedArray>> {
        let close = crate::arrays::close_view(close)?;
        let bars = close.as_slice()?;
        let head = u32::try_from(bars.len())
            .ok()
            .filter(|&n| {
                9 + 8 * u64::from(n) <= u64::from(hullsweep_engine::protocol::MAX_FRAME_LIMIT)
            })
            .map(|n| request_head(OP_ECHO, n, 0, None))
            .ok_or_else(|| {
                PyValueError::new_err(format!("{} floats exceed a frame", bars.len()))
            })?;
        let mut request = [
            IoSlice::new(&head),
            IoSlice::new(bytemuck::cast_slice(bars)),
        ];
        self.exchange_with(py, &mut request, |body| {
            if body.len() != 8 * bars.len() {
                let m = format!(
                    "echo reply of {} bytes for {} floats",
                    body.len(),
                    bars.len()
                );
                return Err(raise(py, &self.protocol_error, m));
            }
            records(py, &numpy::dtype::<f64>(py), body)
        })
    }

    /// Opcode 9 with one bar (NaN: a missing one), whole: returns `(bars, closes, opens)` as
    /// the client's `push` does, the events in new arrays of `close_dtype` and `open_dtype`.
    fn push_bar<'py>(
        &self,
        py: Python<'py>,
        stream: u64,
        bar: f64,
    ) -> PyResult<(u64, Bound<'py, PyUntypedArray>, Bound<'py, PyUntypedArray>)> {
        let Some(events) = &self.events else {
            return Err(PyValueError::new_err(
                "push_bar needs the event dtypes: ShmSocket(..., close_dtype=, open_dtype=)",
            ));
        };
        let (head, bar) = (push_head(stream, 1), bar.to_le_bytes());
        let mut request = [IoSlice::new(&head), IoSlice::new(&bar)];
        self.exchange_with(py, &mut request, |body| {
            events.events(py, body, &self.protocol_error)
        })
    }

    /// One request: writes every byte of `buffers` (a list or tuple of bytes, numpy arrays or
    /// other buffers, read in place) as the frame, then reads the whole reply frame and returns
    /// its body as a bytearray; an error frame raises `error(message)`. The waiting happens
    /// with the GIL released, once per call (twice for a body over 64 KiB, which is read
    /// straight into the bytearray). TimeoutError past `settimeout`, ConnectionError when the
    /// server is gone.
    fn call<'py>(
        &self,
        py: Python<'py>,
        buffers: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let held = parts(buffers)?;
        let mut request: Vec<IoSlice<'_>> = held.iter().map(|p| IoSlice::new(p.bytes())).collect();
        let mut taken = self.take(py)?;
        let conn = taken.conn();
        let reply = py.detach(|| exchange(conn, &mut request)).map_err(io_err)?;
        match reply {
            Reply::Small { len, error: false } => Ok(PyByteArray::new(py, &conn.scratch[..len])),
            Reply::Small { len, error: true } => Err(self.error_frame(py, conn, len)),
            Reply::Large(len) => PyByteArray::new_with(py, len, |body| {
                // The bytearray is new and not yet visible to any Python code, so filling it
                // with the GIL released races with nothing.
                py.detach(|| read_full(&mut conn.reader, body))
                    .map_err(io_err)
            }),
        }
    }

    /// Writes every byte of `buffers` (any objects with the buffer protocol, read in place
    /// where they are bytes or numpy arrays) and returns the count, as `socket.sendmsg` does
    /// for a blocking socket.
    fn sendmsg(&self, py: Python<'_>, buffers: &Bound<'_, PyAny>) -> PyResult<usize> {
        let held = parts(buffers)?;
        let mut request: Vec<IoSlice<'_>> = held.iter().map(|p| IoSlice::new(p.bytes())).collect();
        let mut taken = self.take(py)?;
        let conn = taken.conn();
        py.detach(|| write_all(&mut conn.writer, &mut request))
            .map_err(io_err)
    }

    /// `sendmsg` of one buffer.
    fn sendall(&self, py: Python<'_>, data: Bound<'_, PyAny>) -> PyResult<()> {
        let held = part(data)?;
        let mut request = [IoSlice::new(held.bytes())];
        let mut taken = self.take(py)?;
        let conn = taken.conn();
        py.detach(|| write_all(&mut conn.writer, &mut request))
            .map(|_| ())
            .map_err(io_err)
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
        let mut taken = self.take(py)?;
        let conn = taken.conn();
        let want = cells.len().min(SCRATCH_MAX.max(conn.scratch.len()));
        if conn.scratch.len() < want {
            conn.scratch.resize(want, 0);
        }
        let Conn {
            reader, scratch, ..
        } = conn;
        let n = py
            .detach(|| reader.read(&mut scratch[..want]))
            .map_err(io_err)?;
        for (cell, byte) in cells.iter().zip(&scratch[..n]) {
            cell.set(*byte);
        }
        Ok(n)
    }

    /// Bounds every later read and write (`None`: wait for ever), as `socket.settimeout`.
    fn settimeout(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<()> {
        let t = match timeout {
            None => None,
            Some(s) if s > 0.0 && s.is_finite() => Some(Duration::from_secs_f64(s)),
            Some(s) => {
                return Err(PyValueError::new_err(format!(
                    "timeout {s}: expected a number of seconds > 0, or None"
                )));
            }
        };
        let mut taken = self.take(py)?;
        let conn = taken.conn();
        conn.reader.set_read_timeout(t).map_err(io_err)?;
        conn.writer.set_write_timeout(t).map_err(io_err)?;
        Ok(())
    }

    /// Closes the connection: the server sees the end and frees its slot. A call waiting in
    /// another thread wakes and fails with ConnectionError. (The segment stays mapped until
    /// this object is freed.)
    fn close(&self) {
        self.closer.close();
        let mut state = self.lock();
        let old = std::mem::replace(&mut state.slot, Slot::Closed);
        let waiting = state.waiting > 0;
        drop(state);
        drop(old);
        if waiting {
            self.freed.notify_all();
        }
    }
}
