//! A blocking Rust client for the engine over shared memory, a Unix socket, TCP (plain or TLS)
//! or a spawned `--stdio` server.
//! Server error frames come back as [`ClientError::Server`] carrying the server's message.

use crate::address::Address;
use crate::protocol::{self, COMBO_BYTES};
use crate::shm::{self, ShmReader, ShmWriter, WaitPolicy};
use crate::tls::TlsConnector;
use hullsweep_kernel::{Combo, Event, SweepResult};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::{self, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with an error frame; this is its message.
    #[error("server error: {0}")]
    Server(String),
    /// Connecting, writing the request or reading the reply failed, including a timeout or
    /// the server closing the connection (as it does after a frame error).
    #[error("i/o error talking to the engine: {0}")]
    Io(#[from] io::Error),
    /// The request cannot be expressed in protocol v1, or the reply did not match it.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The TLS handshake failed: the server was not the one the CA or the pin vouches for, or
    /// it does not speak TLS. The message says which.
    #[error("TLS: {0}")]
    Tls(String),
}

/// The largest push reply buffer a client keeps between pushes.
const KEEP_REPLY: usize = 64 * 1024;

/// One connection to an engine. Requests are sent with vectored writes straight from the
/// caller's arrays; replies are read whole.
pub struct Client {
    reader: BufReader<Box<dyn Read + Send>>,
    writer: Box<dyn Write + Send>,
    child: Option<Child>,
    max_reply: u32,
    socket: Option<Socket>,
    /// The combo count of each stream this client opened, to check its replies (a B-tree:
    /// no hashing on every push, and a client holds a few streams).
    streams: BTreeMap<u64, usize>,
    /// The last push reply's body: reused, so pushing bar after bar allocates nothing.
    reply: Vec<u8>,
}

/// A handle on the socket under a socket client, kept to set timeouts.
enum Socket {
    Unix(UnixStream),
    Tcp(TcpStream),
    Shm(ShmHalves),
}

impl Client {
    fn new(reader: Box<dyn Read + Send>, writer: Box<dyn Write + Send>) -> Client {
        Client {
            reader: BufReader::with_capacity(64 * 1024, reader),
            writer,
            child: None,
            max_reply: protocol::MAX_FRAME_LIMIT,
            socket: None,
            streams: BTreeMap::new(),
            reply: Vec::new(),
        }
    }

    /// Connects to a server listening on the Unix socket at `path` (`hullsweep serve --unix PATH`).
    /// Fails with [`ClientError::Io`] when nothing listens there or the socket is not ours to open.
    pub fn connect_unix(path: impl AsRef<Path>) -> Result<Client, ClientError> {
        let s = UnixStream::connect(path)?;
        let mut c = Client::new(Box::new(s.try_clone()?), Box::new(s.try_clone()?));
        c.socket = Some(Socket::Unix(s));
        Ok(c)
    }

    /// Connects to `address` (`shm:NAME`, `unix:PATH` or `tcp:HOST:PORT`); a shared-memory
    /// connection waits by `policy`.
    pub fn connect(address: &Address, policy: WaitPolicy) -> Result<Client, ClientError> {
        match address {
            Address::Shm(name) => Client::connect_shm(name, policy),
            Address::Unix(path) => Client::connect_unix(path),
            Address::Tcp(addr) => Client::connect_tcp(addr.as_str()),
        }
    }

    /// Connects to a shared-memory server (`hullsweep serve --shm NAME`): its frames cross two
    /// rings in a segment of this connection's own, waiting by `policy`. Fails with
    /// [`ClientError::Io`] naming the problem: a bad NAME, no server of that name, a server
    /// that does not answer within a second, or one that refuses the connection (full).
    pub fn connect_shm(name: &str, policy: WaitPolicy) -> Result<Client, ClientError> {
        let (stream, _socket) = shm::connect(name, policy).map_err(io::Error::other)?;
        let (reader, writer) = stream.split();
        let halves = ShmHalves {
            reader: Arc::new(Mutex::new(reader)),
            writer: Arc::new(Mutex::new(writer)),
        };
        let mut c = Client::new(
            Box::new(SharedShm(Arc::clone(&halves.reader))),
            Box::new(SharedShm(Arc::clone(&halves.writer))),
        );
        c.socket = Some(Socket::Shm(halves));
        Ok(c)
    }

    /// Connects to a server over TCP, with Nagle's algorithm off so small requests are not
    /// delayed. Fails with [`ClientError::Io`] when no address of `addr` accepts the connection.
    pub fn connect_tcp(addr: impl ToSocketAddrs) -> Result<Client, ClientError> {
        let s = TcpStream::connect(addr)?;
        s.set_nodelay(true)?;
        let mut c = Client::new(Box::new(s.try_clone()?), Box::new(s.try_clone()?));
        c.socket = Some(Socket::Tcp(s));
        Ok(c)
    }

    /// Connects over TLS to `host:port` (`hullsweep serve --tcp ADDR --tls-cert C --tls-key K`)
    /// and verifies the server with `tls`: its certificate must chain to the CA and name `host`
    /// (a DNS name or an IP address), or be the pinned certificate. Then [`hello`](Client::hello)
    /// with the token as on plain TCP: it crosses encrypted.
    ///
    /// Fails with [`ClientError::Tls`] when the server is refused (saying why) and with
    /// [`ClientError::Io`] when nothing accepts the connection.
    pub fn connect_tls(host: &str, port: u16, tls: &TlsConnector) -> Result<Client, ClientError> {
        let s = TcpStream::connect((host, port))?;
        s.set_nodelay(true)?;
        let keep = s.try_clone()?;
        let stream = tls
            .connect(host, s)
            .map_err(|e| ClientError::Tls(format!("{host}:{port}: {e}")))?;
        let shared = SharedTls(Arc::new(Mutex::new(stream)));
        let mut c = Client::new(Box::new(shared.clone()), Box::new(shared));
        c.socket = Some(Socket::Tcp(keep));
        Ok(c)
    }

    /// Spawns `program args...` (e.g. `hullsweep serve --stdio`) and talks over its stdin/stdout.
    /// Dropping the client closes its stdin and waits for it to exit.
    pub fn spawn_stdio<I, S>(program: impl AsRef<OsStr>, args: I) -> Result<Client, ClientError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let missing = || ClientError::Protocol("child has no piped stdio".into());
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let mut c = Client::new(Box::new(stdout), Box::new(stdin));
        c.child = Some(child);
        Ok(c)
    }

    /// Caps the size of a reply this client will allocate (default: the protocol maximum).
    pub fn with_max_reply(mut self, max_reply: u32) -> Client {
        self.max_reply = max_reply;
        self
    }

    /// Bounds every read and write of a socket client (stdio clients have no timeouts).
    pub fn set_timeout(&self, timeout: Option<Duration>) -> Result<(), ClientError> {
        match &self.socket {
            Some(Socket::Unix(s)) => {
                s.set_read_timeout(timeout)?;
                s.set_write_timeout(timeout)?;
            }
            Some(Socket::Tcp(s)) => {
                s.set_read_timeout(timeout)?;
                s.set_write_timeout(timeout)?;
            }
            Some(Socket::Shm(h)) => {
                lock(&h.reader).set_read_timeout(timeout)?;
                lock(&h.writer).set_write_timeout(timeout)?;
            }
            None => {}
        }
        Ok(())
    }

    fn call(&mut self, parts: &[&[u8]]) -> Result<Vec<u8>, ClientError> {
        if let Err(sent) = protocol::write_all_vectored(&mut self.writer, parts) {
            // The server may have refused the frame early (over its size limit) and closed; its
            // error frame can still be waiting to be read, and says why.
            return match self.read_reply() {
                Err(server @ ClientError::Server(_)) => Err(server),
                _ => Err(sent.into()),
            };
        }
        self.read_reply()
    }

    /// [`call`](Client::call) with the reply's body left in `body`.
    fn call_into(&mut self, parts: &[&[u8]], body: &mut Vec<u8>) -> Result<(), ClientError> {
        if let Err(sent) = protocol::write_all_vectored(&mut self.writer, parts) {
            return match self.read_reply() {
                Err(server @ ClientError::Server(_)) => Err(server),
                _ => Err(sent.into()),
            };
        }
        protocol::read_reply_into(&mut self.reader, self.max_reply, body)?
            .map_err(ClientError::Server)
    }

    /// Reads one reply frame.
    pub fn read_reply(&mut self) -> Result<Vec<u8>, ClientError> {
        protocol::read_reply(&mut self.reader, self.max_reply)?.map_err(ClientError::Server)
    }

    /// Sends arbitrary bytes (tests use this for malformed frames) without reading a reply.
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ClientError> {
        protocol::write_all_vectored(&mut self.writer, &[bytes])?;
        Ok(())
    }

    fn counts(close: &[f64], params: &[Combo]) -> Result<(u32, u32), ClientError> {
        let n_bars = u32::try_from(close.len())
            .map_err(|_| ClientError::Protocol(format!("{} bars exceed u32", close.len())))?;
        let n_combos = u32::try_from(params.len())
            .map_err(|_| ClientError::Protocol(format!("{} combos exceed u32", params.len())))?;
        let body = 9 + 8 * close.len() as u64 + COMBO_BYTES as u64 * params.len() as u64;
        if body > u64::from(protocol::MAX_FRAME_LIMIT) {
            return Err(ClientError::Protocol(format!(
                "request of {body} bytes exceeds the protocol's frame limit"
            )));
        }
        Ok((n_bars, n_combos))
    }

    fn sweep_op(
        &mut self,
        op: u8,
        close: &[f64],
        params: &[Combo],
    ) -> Result<(SweepResult, Option<f64>), ClientError> {
        let (n_bars, n_combos) = Self::counts(close, params)?;
        let head = protocol::request_head(op, n_bars, n_combos, None);
        let (c, p) = (le(close), le(params.as_flattened()));
        let body = self.call(&[&head, &c, &p])?;
        protocol::decode_sweep_reply(&body, params.len(), op == protocol::OP_SWEEP_TIMED)
            .map_err(ClientError::Protocol)
    }

    /// Opcode 0: sweeps `params` over `close` with the server's variant and fee.
    pub fn sweep(&mut self, close: &[f64], params: &[Combo]) -> Result<SweepResult, ClientError> {
        Ok(self.sweep_op(protocol::OP_SWEEP, close, params)?.0)
    }

    /// Opcode 5: like [`sweep`](Client::sweep), plus the time the kernel took inside the server.
    pub fn sweep_timed(
        &mut self,
        close: &[f64],
        params: &[Combo],
    ) -> Result<(SweepResult, Duration), ClientError> {
        let (r, s) = self.sweep_op(protocol::OP_SWEEP_TIMED, close, params)?;
        let secs = s.unwrap_or(0.0);
        let d = Duration::try_from_secs_f64(secs)
            .map_err(|_| ClientError::Protocol(format!("bad kernel time {secs}")))?;
        Ok((r, d))
    }

    /// Opcode 1: the series back, verbatim.
    pub fn echo(&mut self, close: &[f64]) -> Result<Vec<f64>, ClientError> {
        let (n_bars, _) = Self::counts(close, &[])?;
        let head = protocol::request_head(protocol::OP_ECHO, n_bars, 0, None);
        let body = self.call(&[&head, &le(close)])?;
        if body.len() != 8 * close.len() {
            return Err(ClientError::Protocol(format!(
                "echo reply of {} bytes for {} floats",
                body.len(),
                close.len()
            )));
        }
        Ok(protocol::f64s_from_le(&body).into_owned())
    }

    /// Opcode 2: keeps the series on this connection; returns its id.
    pub fn load(&mut self, close: &[f64]) -> Result<u64, ClientError> {
        let (n_bars, _) = Self::counts(close, &[])?;
        let head = protocol::request_head(protocol::OP_LOAD, n_bars, 0, None);
        let body = self.call(&[&head, &le(close)])?;
        let id: [u8; 8] = body.try_into().map_err(|b: Vec<u8>| {
            ClientError::Protocol(format!("load reply of {} bytes", b.len()))
        })?;
        Ok(u64::from_le_bytes(id))
    }

    /// Opcode 3: sweeps `params` over the series loaded as `id`; only the params travel.
    pub fn sweep_loaded(&mut self, id: u64, params: &[Combo]) -> Result<SweepResult, ClientError> {
        let (_, n_combos) = Self::counts(&[], params)?;
        let head = protocol::request_head(protocol::OP_SWEEP_LOADED, 0, n_combos, Some(id));
        let body = self.call(&[&head, &le(params.as_flattened())])?;
        Ok(protocol::decode_sweep_reply(&body, params.len(), false)
            .map_err(ClientError::Protocol)?
            .0)
    }

    /// Opcode 6: like [`sweep_loaded`](Client::sweep_loaded), plus the kernel time in the server.
    pub fn sweep_loaded_timed(
        &mut self,
        id: u64,
        params: &[Combo],
    ) -> Result<(SweepResult, Duration), ClientError> {
        let (_, n_combos) = Self::counts(&[], params)?;
        let head = protocol::request_head(protocol::OP_SWEEP_LOADED_TIMED, 0, n_combos, Some(id));
        let body = self.call(&[&head, &le(params.as_flattened())])?;
        let (r, s) = protocol::decode_sweep_reply(&body, params.len(), true)
            .map_err(ClientError::Protocol)?;
        let secs = s.unwrap_or(0.0);
        let d = Duration::try_from_secs_f64(secs)
            .map_err(|_| ClientError::Protocol(format!("bad kernel time {secs}")))?;
        Ok((r, d))
    }

    /// Opcode 7: presents the server's access token. A server started with one (always the
    /// case beyond loopback) serves nothing else first; a wrong token is refused and the
    /// connection closed. A server without a token accepts any hello.
    pub fn hello(&mut self, token: &[u8]) -> Result<(), ClientError> {
        let frame = protocol::encode_hello(token).map_err(ClientError::Protocol)?;
        let body = self.call(&[&frame])?;
        if !body.is_empty() {
            return Err(ClientError::Protocol(format!(
                "hello reply of {} bytes, expected none",
                body.len()
            )));
        }
        Ok(())
    }

    /// Opcode 4: frees the series loaded as `id`.
    pub fn drop_series(&mut self, id: u64) -> Result<(), ClientError> {
        let head = protocol::request_head(protocol::OP_DROP, 0, 0, Some(id));
        self.call(&[&head])?;
        Ok(())
    }

    /// Opcode 8: opens a live stream of `params` at `fee_pct` on this connection; returns its
    /// id. The server checks the combos and the fee, and refuses a stream over its limits.
    pub fn open_stream(&mut self, params: &[Combo], fee_pct: f64) -> Result<u64, ClientError> {
        let (_, n_combos) = Self::counts(&[], params)?;
        let mut head = protocol::request_head(protocol::OP_STREAM_OPEN, 0, n_combos, Some(0));
        head[4 + protocol::HEADER_LEN..].copy_from_slice(&fee_pct.to_le_bytes());
        let body = self.call(&[&head, &le(params.as_flattened())])?;
        let id: [u8; 8] = body.try_into().map_err(|b: Vec<u8>| {
            ClientError::Protocol(format!("open reply of {} bytes", b.len()))
        })?;
        let id = u64::from_le_bytes(id);
        self.streams.insert(id, params.len());
        Ok(id)
    }

    /// Opcode 9: pushes `bars` (NaN = missing bar) to stream `stream` and appends the events
    /// they caused to `events`, in bar order (combos ascending, a close before its open), as
    /// `hullsweep_variants::Live::push_many` gives them; returns the stream's bar count after.
    /// A bad price is refused by the server, naming its bar in the whole stream, and nothing
    /// of the push is applied.
    pub fn push(
        &mut self,
        stream: u64,
        bars: &[f64],
        events: &mut Vec<Event>,
    ) -> Result<u64, ClientError> {
        let (n_bars, _) = Self::counts(bars, &[])?;
        let head = protocol::push_head(stream, n_bars);
        let mut body = std::mem::take(&mut self.reply);
        let called = self.call_into(&[&head, &le(bars)], &mut body);
        let n = self.stream_combos(stream);
        let decoded = called.and_then(|()| {
            protocol::decode_events_into(&body, n, events).map_err(ClientError::Protocol)
        });
        // Kept for the next push unless a long push made it large.
        if body.capacity() <= KEEP_REPLY {
            self.reply = body;
        }
        decoded
    }

    /// Opcode 10: closes stream `stream`; returns every combo's final `(pnl, trades)`, the
    /// batch sweep of the bars pushed.
    pub fn close_stream(&mut self, stream: u64) -> Result<SweepResult, ClientError> {
        let head = protocol::request_head(protocol::OP_STREAM_CLOSE, 0, 0, Some(stream));
        let body = self.call(&[&head]);
        let n = self.streams.remove(&stream);
        let body = body?;
        let n = n.unwrap_or(body.len() / 16);
        Ok(protocol::decode_sweep_reply(&body, n, false)
            .map_err(ClientError::Protocol)?
            .0)
    }

    /// Opcode 11: stream `stream`'s bar count, result so far and open positions.
    pub fn stream_state(&mut self, stream: u64) -> Result<protocol::StreamState, ClientError> {
        let head = protocol::request_head(protocol::OP_STREAM_STATE, 0, 0, Some(stream));
        let body = self.call(&[&head])?;
        let n = match self.streams.get(&stream) {
            Some(&n) => n,
            None => body.len().saturating_sub(8) / 40,
        };
        protocol::decode_state(&body, n).map_err(ClientError::Protocol)
    }

    /// The combos of a stream this client opened; any count for one it did not (raw frames).
    fn stream_combos(&self, stream: u64) -> usize {
        self.streams
            .get(&stream)
            .copied()
            .unwrap_or(u32::MAX as usize)
    }
}

/// One client TLS session used by the client's reader and writer in turn (never at once: a
/// call writes its request, then reads its reply).
#[derive(Clone)]
struct SharedTls(Arc<Mutex<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>>);

impl SharedTls {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, rustls::StreamOwned<rustls::ClientConnection, TcpStream>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Read for SharedTls {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.lock().read(buf)
    }
}

impl Write for SharedTls {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.lock().write(buf)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.lock().write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.lock().flush()
    }
}

/// The two halves of a shared-memory connection, each behind a lock only so that
/// [`Client::set_timeout`] can reach them; one thread uses a client at a time, so the locks are
/// never contended.
struct ShmHalves {
    reader: Arc<Mutex<ShmReader>>,
    writer: Arc<Mutex<ShmWriter>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A shared half as the client's reader or writer.
struct SharedShm<T>(Arc<Mutex<T>>);

impl Read for SharedShm<ShmReader> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        lock(&self.0).read(buf)
    }
}

impl Write for SharedShm<ShmWriter> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        lock(&self.0).write(buf)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        lock(&self.0).write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        lock(&self.0).flush()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // Closing stdin is the stdio server's signal to exit.
            self.writer = Box::new(io::sink());
            let _ = child.wait();
        }
    }
}

/// Little-endian bytes of a numeric slice: a view on little-endian machines.
fn le<T: bytemuck::Pod + ToLe>(values: &[T]) -> std::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        std::borrow::Cow::Borrowed(bytemuck::cast_slice(values))
    } else {
        std::borrow::Cow::Owned(values.iter().flat_map(|v| v.to_le()).collect())
    }
}

trait ToLe {
    fn to_le(&self) -> [u8; 8];
}

impl ToLe for f64 {
    fn to_le(&self) -> [u8; 8] {
        self.to_le_bytes()
    }
}

impl ToLe for i64 {
    fn to_le(&self) -> [u8; 8] {
        self.to_le_bytes()
    }
}
