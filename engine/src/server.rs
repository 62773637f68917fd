//! The engine server: a thread per connection on a Unix socket or TCP, or one stdio session.
//! A bad frame, a panic or a dropped client only ever ends its own connection.

use crate::protocol::{self, BodyBuf, Frame, FrameError, Inflight, Request, Watch};
use hullsweep_kernel::{DEFAULT_FEE_PCT, ValidClose, ValidSeries};
use hullsweep_variants::{Threads, Variant};
use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io::{self, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A system call failed while binding, accepting or serving.
    #[error("{context}: {source}")]
    Io {
        /// What the server was doing, naming the path or address involved.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A setting, token or socket path was refused before anything was bound; the message
    /// names the bad value and the accepted range.
    #[error("bad configuration: {0}")]
    Config(String),
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> EngineError {
    let context = context.into();
    move |source| EngineError::Io { context, source }
}

/// The variant the server runs unless told otherwise: the fastest one available.
///
/// `fastest` is the variants crate's own choice for this machine once it has landed; until then
/// the names are tried fastest first. Names that do not exist are skipped; `reference` always does.
pub fn default_variant() -> Variant {
    const FASTEST_FIRST: &[&str] = &[
        "fastest",
        "rayon",
        "simd",
        "prealloc",
        "unchecked",
        "checked",
        "reference",
    ];
    FASTEST_FIRST
        .iter()
        .find_map(|n| Variant::from_name(n))
        .unwrap_or(Variant::Reference)
}

/// The default bound on receive buffers over all connections: 4 GiB, so that with the default
/// 1 GiB of loaded series and replies (at most a third of their requests) a 24 GB machine keeps
/// well over half its memory.
pub const DEFAULT_MAX_INFLIGHT: u64 = 4 << 30;

/// The default time a frame may go without a byte arriving: long enough for TCP to retransmit
/// a few times, short enough that stalled clients give their slots back within seconds.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The secret a client presents in a hello (opcode 7). Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(Vec<u8>);

impl Token {
    /// The shortest token accepted: anything shorter is guessable.
    pub const MIN_LEN: usize = 16;

    /// A token of these exact bytes. Fails with [`EngineError::Config`] unless its length is in
    /// [`MIN_LEN`](Token::MIN_LEN)`..=`[`MAX_TOKEN`](protocol::MAX_TOKEN) bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Result<Token, EngineError> {
        let bytes = bytes.into();
        Token::check(bytes.len()).map_err(EngineError::Config)?;
        Ok(Token(bytes))
    }

    /// The file's contents with surrounding whitespace (a trailing newline) removed.
    pub fn from_file(path: &Path) -> Result<Token, EngineError> {
        let raw = fs::read(path).map_err(io_err(format!("reading {}", path.display())))?;
        let bytes = raw.trim_ascii();
        Token::check(bytes.len())
            .map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))?;
        Ok(Token(bytes.to_vec()))
    }

    fn check(len: usize) -> Result<(), String> {
        if (Self::MIN_LEN..=protocol::MAX_TOKEN).contains(&len) {
            return Ok(());
        }
        Err(format!(
            "access token of {len} bytes: it must be {}..={} bytes \
             (e.g. `head -c 32 /dev/urandom | base64 > token`)",
            Self::MIN_LEN,
            protocol::MAX_TOKEN
        ))
    }

    /// Whether `given` is this token. The time taken depends on the lengths only, never on
    /// where the bytes first differ.
    pub fn matches(&self, given: &[u8]) -> bool {
        use subtle::ConstantTimeEq;
        let mut same = (given.len() as u64).ct_eq(&(self.0.len() as u64));
        for (i, want) in self.0.iter().enumerate() {
            same &= given.get(i).copied().unwrap_or(0).ct_eq(want);
        }
        same.into()
    }

    /// The token's bytes, for a client that presents it.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token(<{} bytes, redacted>)", self.0.len())
    }
}

/// Everything a server needs to know; shared read-only by all its connections.
#[derive(Clone, Debug)]
pub struct Config {
    /// The implementation every sweep runs; all give bit-identical results, so only speed differs.
    pub variant: Variant,
    /// Worker threads for the parallel variants (ignored by the serial ones).
    pub threads: Threads,
    /// Protocol v1 carries no fee, so every sweep uses this one.
    pub fee_pct: f64,
    /// Requests longer than this are refused before anything is allocated for them.
    pub max_frame: u32,
    /// Total bytes of series loaded by opcode 2, over all connections.
    pub max_loaded_bytes: u64,
    /// Connections served at once; more are answered with an error frame and closed.
    pub max_connections: usize,
    /// Bytes of receive buffers over all connections; a frame that would pass it is refused.
    pub max_inflight: u64,
    /// A frame that goes this long without a byte arriving is refused and its connection closed.
    pub read_timeout: Duration,
    /// A connection with no frame under way for this long is closed; `None` keeps it open.
    pub idle_timeout: Option<Duration>,
    /// When set, every connection must present it in a hello (opcode 7) before anything else.
    /// Required to bind TCP beyond loopback.
    pub token: Option<Token>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            variant: default_variant(),
            threads: Threads::Auto,
            fee_pct: DEFAULT_FEE_PCT,
            max_frame: protocol::DEFAULT_MAX_FRAME,
            max_loaded_bytes: 1 << 30,
            max_connections: 256,
            max_inflight: DEFAULT_MAX_INFLIGHT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            idle_timeout: None,
            token: None,
        }
    }
}

impl Config {
    /// Refuses settings the protocol cannot honour.
    pub fn validate(&self) -> Result<(), EngineError> {
        if !self.fee_pct.is_finite() {
            return Err(EngineError::Config(format!(
                "fee {} must be a finite number",
                self.fee_pct
            )));
        }
        if self.max_frame > protocol::MAX_FRAME_LIMIT || self.max_frame < 1 {
            return Err(EngineError::Config(format!(
                "max frame {} must be in 1..={} (the length's top bit flags errors)",
                self.max_frame,
                protocol::MAX_FRAME_LIMIT
            )));
        }
        if self.max_connections == 0 {
            return Err(EngineError::Config("max connections must be >= 1".into()));
        }
        if self.max_inflight == 0 {
            return Err(EngineError::Config(
                "max in-flight bytes must be >= 1".into(),
            ));
        }
        if self.read_timeout.is_zero() {
            return Err(EngineError::Config(
                "read timeout must be > 0: without it stalled clients keep their slots".into(),
            ));
        }
        if self.idle_timeout.is_some_and(|t| t.is_zero()) {
            return Err(EngineError::Config(
                "idle timeout must be > 0 (None keeps idle connections open)".into(),
            ));
        }
        Ok(())
    }
}

/// State shared by every connection of one server.
pub struct Shared {
    config: Config,
    loaded_bytes: AtomicU64,
    inflight: Inflight,
    connections: AtomicUsize,
    epoch: Instant,
}

impl Shared {
    /// Fresh state for a server running `config`: nothing loaded, no connections. Fails with
    /// [`EngineError::Config`] when [`Config::validate`] refuses the settings.
    pub fn new(config: Config) -> Result<Arc<Shared>, EngineError> {
        config.validate()?;
        Ok(Arc::new(Shared {
            inflight: Inflight::new(config.max_inflight),
            config,
            loaded_bytes: AtomicU64::new(0),
            connections: AtomicUsize::new(0),
            epoch: Instant::now(),
        }))
    }

    /// Bytes of loaded series currently held, over all connections.
    pub fn loaded_bytes(&self) -> u64 {
        self.loaded_bytes.load(Ordering::SeqCst)
    }

    /// Bytes of receive buffers currently held, over all connections (`max_inflight` bounds it).
    pub fn inflight_bytes(&self) -> u64 {
        self.inflight.used()
    }

    /// Connections holding a slot now (`max_connections` bounds it).
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Where a connection stands, for the accept loop's timeouts.
const IDLE: u8 = 0;
const READING: u8 = 1;
const BUSY: u8 = 2;
const CLOSED: u8 = 3;

/// A connection's phase and the time of its last progress: written by its thread, read by the
/// accept loop, which closes connections stalled past a timeout (no thread per timer).
///
/// Whoever moves the phase out of `IDLE` or `READING` owns the socket's write side: the thread
/// to reply, or the accept loop to send the timeout's error frame. So they never interleave.
struct ConnWatch {
    phase: AtomicU8,
    /// Nanoseconds since the server's epoch.
    stamp: AtomicU64,
    epoch: Instant,
    /// Until its hello, a connection's bytes do not count as progress: a stranger has the read
    /// timeout from connecting, however slowly it sends.
    before_hello: AtomicBool,
}

impl ConnWatch {
    fn new(before_hello: bool, epoch: Instant) -> ConnWatch {
        let w = ConnWatch {
            phase: AtomicU8::new(if before_hello { READING } else { IDLE }),
            stamp: AtomicU64::new(0),
            epoch,
            before_hello: AtomicBool::new(before_hello),
        };
        w.stamp.store(w.now(), Ordering::SeqCst);
        w
    }

    fn hello_accepted(&self) {
        self.before_hello.store(false, Ordering::SeqCst);
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn stamp(&self) {
        if !self.before_hello.load(Ordering::Relaxed) {
            self.stamp.store(self.now(), Ordering::SeqCst);
        }
    }

    fn claim(&self, from: u8, to: u8) -> bool {
        self.stamp();
        self.phase
            .compare_exchange(from, to, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// How long since the last progress.
    fn quiet(&self) -> Duration {
        Duration::from_nanos(self.now().saturating_sub(self.stamp.load(Ordering::SeqCst)))
    }
}

impl Watch for ConnWatch {
    fn frame_started(&self) -> bool {
        self.stamp();
        match self
            .phase
            .compare_exchange(IDLE, READING, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) | Err(READING) => true,
            Err(_) => false,
        }
    }

    fn progress(&self) {
        self.stamp();
    }
}

/// The series of a sweep request: sent with it (validated per call) or loaded earlier (already valid).
enum Series<'a> {
    Sent(&'a [f64]),
    Loaded(ValidClose<'a>),
}

/// One connection's loaded series. They die with the connection, so a client that vanishes
/// without dropping its series leaks nothing; their bytes count against the shared limit.
struct Session<'a> {
    shared: &'a Shared,
    /// Validated once at load, so a sweep by id does not scan the bars again.
    series: HashMap<u64, ValidSeries>,
    next_id: u64,
    held: u64,
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        self.shared
            .loaded_bytes
            .fetch_sub(self.held, Ordering::SeqCst);
    }
}

impl Session<'_> {
    /// Runs a sweep; a panic in a kernel becomes an error frame instead of a dead thread.
    /// The time reported by the timed opcodes covers validation and kernel, as in-process.
    fn sweep(
        &self,
        close: Series<'_>,
        params: &[hullsweep_kernel::Combo],
        timed: bool,
    ) -> Result<Vec<u8>, String> {
        let c = &self.shared.config;
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| {
            let close = match close {
                Series::Sent(bars) => ValidClose::new(bars)?,
                Series::Loaded(valid) => valid,
            };
            c.variant.sweep_valid(close, params, c.fee_pct, c.threads)
        }))
        .map_err(|_| format!("internal error: variant {} panicked", c.variant.name()))?
        .map_err(|e| e.to_string())?;
        let seconds = timed.then(|| start.elapsed().as_secs_f64());
        Ok(protocol::encode_sweep_reply(&result, seconds))
    }

    fn load(&mut self, close: &[f64]) -> Result<Vec<u8>, String> {
        let close = ValidClose::new(close).map_err(|e| e.to_string())?;
        let bytes = 8 * close.bars().len() as u64;
        let max = self.shared.config.max_loaded_bytes;
        self.shared
            .loaded_bytes
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(bytes).filter(|&t| t <= max)
            })
            .map_err(|used| {
                format!(
                    "loading {bytes} bytes would exceed the loaded-series limit of {max} bytes \
                     ({used} in use); drop series with opcode 4"
                )
            })?;
        self.held += bytes;
        let id = self.next_id;
        self.next_id += 1;
        self.series.insert(id, close.to_series());
        Ok(protocol::encode_reply(&id.to_le_bytes()))
    }

    fn unknown(id: u64) -> String {
        format!("unknown series id {id} (ids are per connection; load with opcode 2)")
    }

    fn handle(&mut self, request: Request<'_>) -> Result<Vec<u8>, String> {
        match request {
            Request::Sweep {
                close,
                params,
                timed,
            } => self.sweep(Series::Sent(&close), &params, timed),
            Request::Echo { close } => {
                // Not reached from `serve_connection`, which writes echoes without a copy.
                let mut body = Vec::with_capacity(8 * close.len());
                protocol::put_f64s(&mut body, &close);
                Ok(protocol::encode_reply(&body))
            }
            Request::Load { close } => self.load(&close),
            Request::SweepLoaded { id, params, timed } => {
                let series = self.series.get(&id).ok_or_else(|| Self::unknown(id))?;
                self.sweep(Series::Loaded(series.view()), &params, timed)
            }
            Request::Drop { id } => {
                let close = self.series.remove(&id).ok_or_else(|| Self::unknown(id))?;
                let bytes = 8 * close.bars().len() as u64;
                self.held -= bytes;
                self.shared.loaded_bytes.fetch_sub(bytes, Ordering::SeqCst);
                Ok(protocol::encode_reply(&[]))
            }
            // Not reached from `serve_connection`, which checks hellos itself.
            Request::Hello { .. } => Ok(protocol::encode_reply(&[])),
        }
    }
}

/// Serves one byte stream until it ends, a frame cannot be read whole, or the peer goes away.
///
/// Bad requests get an error frame and the loop goes on; a frame that cannot be skipped whole
/// (truncated, oversize, over the in-flight budget) gets a best-effort error frame and ends this
/// connection only. On a server with a token, the first frame must be a hello carrying it.
pub fn serve_connection<R: Read, W: Write>(
    reader: R,
    writer: W,
    shared: &Shared,
) -> io::Result<()> {
    serve_watched(reader, writer, shared, None)
}

fn serve_watched<R: Read, W: Write>(
    reader: R,
    mut writer: W,
    shared: &Shared,
    watch: Option<&ConnWatch>,
) -> io::Result<()> {
    // Buffered so that a small request costs one read syscall; large bodies bypass the buffer.
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut buf = BodyBuf::with_budget(&shared.inflight);
    let mut session = Session {
        shared,
        series: HashMap::new(),
        next_id: 1,
        held: 0,
    };
    let config = &shared.config;
    let claim = |from, to| watch.is_none_or(|w| w.claim(from, to));
    let mut authed = config.token.is_none();
    loop {
        // Before the hello, nothing larger than a hello is read: strangers cost next to nothing.
        let max_frame = if authed {
            config.max_frame
        } else {
            config.max_frame.min(protocol::HELLO_MAX_FRAME)
        };
        let read = match watch {
            Some(w) => protocol::read_frame(&mut reader, max_frame, &mut buf, w),
            None => protocol::read_frame(&mut reader, max_frame, &mut buf, &()),
        };
        let len = match read {
            Ok(Frame::End) => return Ok(()),
            Ok(Frame::Body(len)) => len,
            Err(FrameError::Io(e)) => return Err(e),
            Err(e) => {
                // Unless the accept loop timed this connection out and wrote its own frame.
                if claim(READING, BUSY) {
                    let msg = match e {
                        FrameError::Oversize { len, .. } if !authed => hello_first(len),
                        e => e.to_string(),
                    };
                    // The peer may have half-closed; it can still read why. Ignore a failed write.
                    let _ = writer.write_all(&protocol::encode_error(&msg));
                    let _ = writer.flush();
                }
                return Ok(());
            }
        };
        if !claim(READING, BUSY) {
            return Ok(());
        }
        let request = protocol::parse_request(buf.body(len));
        if let Ok(Request::Hello { token }) = request {
            if let Some(want) = &config.token
                && !want.matches(token)
            {
                let msg = "wrong access token; closing the connection";
                let _ = writer.write_all(&protocol::encode_error(msg));
                let _ = writer.flush();
                return Ok(());
            }
            authed = true;
            if let Some(w) = watch {
                w.hello_accepted();
            }
            protocol::write_all_vectored(&mut writer, &[&protocol::encode_reply(&[])])?;
        } else if !authed {
            let got = match &request {
                Ok(_) => format!("opcode {}", buf.body(len)[0]),
                Err(e) => e.to_string(),
            };
            let _ = writer.write_all(&protocol::encode_error(&format!(
                "this server needs its access token first: send a hello (opcode 7) with it, \
                 got {got}; closing the connection"
            )));
            let _ = writer.flush();
            return Ok(());
        } else {
            let written = match request {
                Ok(Request::Echo { close }) => {
                    let head = ((8 * close.len()) as u32).to_le_bytes();
                    let bytes = le_bytes(&close);
                    protocol::write_all_vectored(&mut writer, &[&head, &bytes])
                }
                Ok(request) => {
                    let frame = session
                        .handle(request)
                        .unwrap_or_else(|msg| protocol::encode_error(&msg));
                    protocol::write_all_vectored(&mut writer, &[&frame])
                }
                Err(e) => protocol::write_all_vectored(
                    &mut writer,
                    &[&protocol::encode_error(&e.to_string())],
                ),
            };
            written?;
        }
        buf.trim();
        // Nothing else moves a connection out of BUSY; this restarts the idle clock.
        claim(BUSY, IDLE);
    }
}

fn hello_first(len: u64) -> String {
    format!(
        "this server needs its access token first: send a hello (opcode 7) with it; \
         a frame of {len} bytes cannot be one (at most {}); closing the connection",
        protocol::HELLO_MAX_FRAME
    )
}

/// The wire bytes of `f64`s: the same memory on little-endian machines.
fn le_bytes(values: &[f64]) -> std::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        std::borrow::Cow::Borrowed(bytemuck::cast_slice(values))
    } else {
        let mut out = Vec::with_capacity(8 * values.len());
        protocol::put_f64s(&mut out, values);
        std::borrow::Cow::Owned(out)
    }
}

/// Serves stdin/stdout as one connection until stdin ends (the spawn-per-call transport).
pub fn serve_stdio(config: Config) -> Result<(), EngineError> {
    let shared = Shared::new(config)?;
    serve_connection(io::stdin().lock(), io::stdout().lock(), &shared)
        .map_err(io_err("stdio session"))
}

/// Where a server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A Unix socket at this path.
    Unix(PathBuf),
    /// A TCP address; after binding, the real port even when port 0 was asked for.
    Tcp(SocketAddr),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Unix(p) => write!(f, "unix {}", p.display()),
            Endpoint::Tcp(a) => write!(f, "tcp {a}"),
        }
    }
}

enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

/// A connected stream of either kind, kept so shutdown can unblock its thread.
enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    /// Sends without blocking (a full send buffer drops the message): the accept loop must
    /// never wait on one client.
    fn send_best_effort(&self, bytes: &[u8]) {
        use rustix::net::{SendFlags, send};
        let _ = match self {
            Stream::Unix(s) => send(s, bytes, SendFlags::DONTWAIT | SendFlags::NOSIGNAL),
            Stream::Tcp(s) => send(s, bytes, SendFlags::DONTWAIT | SendFlags::NOSIGNAL),
        };
    }

    fn shutdown(&self) {
        // Already-closed peers make this fail; there is nothing left to unblock then.
        let _ = match self {
            Stream::Unix(s) => s.shutdown(Shutdown::Both),
            Stream::Tcp(s) => s.shutdown(Shutdown::Both),
        };
    }
}

/// The socket file this server created; removed at shutdown only if it is still ours.
struct SocketFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Ok(m) = fs::symlink_metadata(&self.path)
            && m.dev() == self.dev
            && m.ino() == self.ino
        {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Asks a running server to stop; cheap to clone, usable from any thread.
#[derive(Clone, Debug, Default)]
pub struct ShutdownHandle(Arc<AtomicBool>);

impl ShutdownHandle {
    /// Asks the server to stop. Returns at once; the accept loop sees it within 50 ms, then
    /// closes every connection and [`Server::run`] returns once their threads have ended.
    pub fn shutdown(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether a stop was asked for, by [`shutdown`](ShutdownHandle::shutdown) or a signal.
    pub fn is_shutdown(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// A bound server, ready to [`run`](Server::run).
pub struct Server {
    listener: Listener,
    endpoint: Endpoint,
    shared: Arc<Shared>,
    stop: ShutdownHandle,
    socket_file: Option<SocketFile>,
}

/// How long the accept loop waits before looking at the stop flag again. Signals interrupt
/// the wait at once; an in-process [`ShutdownHandle`] is seen within this delay.
const STOP_POLL: Duration = Duration::from_millis(50);

impl Server {
    /// Binds a Unix socket at `path`, mode 0600 from the moment it exists.
    ///
    /// The socket is bound inside a fresh 0700 directory, made 0600, then renamed into place
    /// without replacing anything, so there is no moment at which others could connect. A stale
    /// socket (nobody accepting) at `path` is replaced; anything else there is an error.
    pub fn bind_unix(path: &Path, config: Config) -> Result<Server, EngineError> {
        let shared = Shared::new(config)?;
        let shown = path.display().to_string();
        if let Ok(m) = fs::symlink_metadata(path) {
            let stale = m.file_type().is_socket()
                && UnixStream::connect(path)
                    .is_err_and(|e| e.kind() == io::ErrorKind::ConnectionRefused);
            if !stale {
                return Err(EngineError::Config(format!(
                    "{shown} already exists and is not a stale socket; refusing to replace it"
                )));
            }
            fs::remove_file(path).map_err(io_err(format!("removing stale socket {shown}")))?;
        }
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if path.file_name().is_none() {
            return Err(EngineError::Config(format!("{shown} has no file name")));
        }
        // Short, so the temporary path fits the 108-byte socket path limit whenever `path` does.
        let private = parent.join(format!(
            ".hs{}-{}",
            std::process::id(),
            NEXT_BIND.fetch_add(1, Ordering::SeqCst)
        ));
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&private)
            .map_err(io_err(format!("creating {}", private.display())))?;
        let inner = private.join("s");
        let bound = (|| {
            let listener =
                UnixListener::bind(&inner).map_err(io_err(format!("binding {shown}")))?;
            fs::set_permissions(&inner, fs::Permissions::from_mode(0o600))
                .map_err(io_err(format!("chmod 0600 {shown}")))?;
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &inner,
                rustix::fs::CWD,
                path,
                rustix::fs::RenameFlags::NOREPLACE,
            )
            .map_err(|e| io_err(format!("moving the socket to {shown}"))(e.into()))?;
            Ok(listener)
        })();
        let _ = fs::remove_file(&inner);
        let _ = fs::remove_dir(&private);
        let listener = bound?;
        let m = fs::symlink_metadata(path).map_err(io_err(format!("stat {shown}")))?;
        Ok(Server {
            listener: Listener::Unix(listener),
            endpoint: Endpoint::Unix(path.to_path_buf()),
            shared,
            stop: ShutdownHandle::default(),
            socket_file: Some(SocketFile {
                path: path.to_path_buf(),
                dev: m.dev(),
                ino: m.ino(),
            }),
        })
    }

    /// Binds TCP at `addr` (port 0 picks a free port; see [`endpoint`](Server::endpoint)).
    ///
    /// Beyond loopback anyone who can reach the port could use the server, so such a bind
    /// needs [`Config::token`].
    pub fn bind_tcp(addr: SocketAddr, config: Config) -> Result<Server, EngineError> {
        if !addr.ip().is_loopback() && config.token.is_none() {
            return Err(EngineError::Config(format!(
                "tcp {addr} reaches beyond loopback, so it needs an access token \
                 (--token-file PATH); bind 127.0.0.1 or ::1 to serve this machine only"
            )));
        }
        let shared = Shared::new(config)?;
        let listener = TcpListener::bind(addr).map_err(io_err(format!("binding tcp {addr}")))?;
        let local = listener
            .local_addr()
            .map_err(io_err("reading the bound address"))?;
        Ok(Server {
            listener: Listener::Tcp(listener),
            endpoint: Endpoint::Tcp(local),
            shared,
            stop: ShutdownHandle::default(),
            socket_file: None,
        })
    }

    /// The bound address (the real port when port 0 was asked for).
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The state all connections share (loaded-series accounting).
    pub fn shared(&self) -> Arc<Shared> {
        Arc::clone(&self.shared)
    }

    /// A handle that stops this server from another thread once [`run`](Server::run) has it.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.stop.clone()
    }

    /// Makes SIGINT and SIGTERM stop the server cleanly; a second SIGINT exits at once.
    pub fn register_signals(&self) -> Result<(), EngineError> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let flag = &self.stop.0;
        let reg = |r: Result<_, io::Error>| r.map(|_| ()).map_err(io_err("installing signals"));
        // Registered before the flag setter, so it sees the flag as the previous signal left it.
        reg(signal_hook::flag::register_conditional_shutdown(
            SIGINT,
            130,
            Arc::clone(flag),
        ))?;
        reg(signal_hook::flag::register(SIGINT, Arc::clone(flag)))?;
        reg(signal_hook::flag::register(SIGTERM, Arc::clone(flag)))
    }

    /// Accepts connections until shut down, then closes every connection, waits for their
    /// threads and removes the socket file.
    pub fn run(self) -> Result<(), EngineError> {
        let fd = match &self.listener {
            Listener::Unix(l) => {
                l.set_nonblocking(true)
                    .map_err(io_err("setting the listener nonblocking"))?;
                l.as_fd()
            }
            Listener::Tcp(l) => {
                l.set_nonblocking(true)
                    .map_err(io_err("setting the listener nonblocking"))?;
                l.as_fd()
            }
        };
        let live: Arc<Mutex<HashMap<u64, Live>>> = Arc::default();
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        let mut next = 0u64;
        let timeout = rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: STOP_POLL.as_nanos() as _,
        };
        let mut reaped = Instant::now();
        while !self.stop.is_shutdown() {
            // Timeouts are checked here, between accepts, at least every REAP_EVERY.
            if reaped.elapsed() >= REAP_EVERY {
                reap(&live, &self.shared.config);
                reaped = Instant::now();
            }
            let mut fds = [rustix::event::PollFd::new(
                &fd,
                rustix::event::PollFlags::IN,
            )];
            match rustix::event::poll(&mut fds, Some(&timeout)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => {
                    threads.retain(|t| !t.is_finished());
                    continue;
                }
                Ok(_) => {}
                Err(e) => return Err(io_err("waiting for connections")(e.into())),
            }
            let accepted = match &self.listener {
                Listener::Unix(l) => l.accept().map(|(s, _)| Stream::Unix(s)),
                Listener::Tcp(l) => l.accept().map(|(s, _)| Stream::Tcp(s)),
            };
            let stream = match accepted {
                Ok(s) => s,
                Err(e) if is_transient(&e) => continue,
                Err(e) => {
                    // Out of descriptors or memory: back off and keep the server up.
                    eprintln!("hullsweep engine: accept failed: {e}");
                    thread::sleep(STOP_POLL);
                    continue;
                }
            };
            next += 1;
            match spawn_connection(stream, next, &self.shared, &live) {
                Ok(Some(t)) => threads.push(t),
                Ok(None) => {}
                Err(e) => eprintln!("hullsweep engine: connection {next}: {e}"),
            }
        }
        for l in live.lock().unwrap_or_else(|p| p.into_inner()).values() {
            l.stream.shutdown();
        }
        for t in threads {
            let _ = t.join();
        }
        drop(self.socket_file);
        Ok(())
    }
}

static NEXT_BIND: AtomicUsize = AtomicUsize::new(0);

/// How often the accept loop looks for stalled connections: the timeouts' resolution.
const REAP_EVERY: Duration = Duration::from_millis(25);

/// A served connection as the accept loop sees it.
struct Live {
    stream: Stream,
    watch: Arc<ConnWatch>,
}

/// Closes every connection stalled mid-frame past the read timeout, or idle past the idle
/// timeout, with a best-effort error frame saying which. Its thread then sees the stream end
/// and gives its slot and buffers back.
fn reap(live: &Mutex<HashMap<u64, Live>>, config: &Config) {
    let secs = |d: Duration| d.as_secs_f64();
    for l in live.lock().unwrap_or_else(|p| p.into_inner()).values() {
        let quiet = l.watch.quiet();
        let (phase, msg) = match l.watch.phase.load(Ordering::SeqCst) {
            READING if quiet > config.read_timeout => (
                READING,
                format!(
                    "read timeout: no byte of this frame arrived for {} s (--read-timeout); \
                     closing the connection",
                    secs(config.read_timeout)
                ),
            ),
            IDLE if config.idle_timeout.is_some_and(|t| quiet > t) => (
                IDLE,
                format!(
                    "idle timeout: no request for {} s (--idle-timeout); closing the connection",
                    secs(config.idle_timeout.unwrap_or_default())
                ),
            ),
            _ => continue,
        };
        if l.watch.claim(phase, CLOSED) {
            l.stream.send_best_effort(&protocol::encode_error(&msg));
            l.stream.shutdown();
        }
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
    )
}

/// Starts the thread for one accepted stream, or refuses it when the server is full.
fn spawn_connection(
    stream: Stream,
    id: u64,
    shared: &Arc<Shared>,
    live: &Arc<Mutex<HashMap<u64, Live>>>,
) -> io::Result<Option<JoinHandle<()>>> {
    let max = shared.config.max_connections;
    let active = &shared.connections;
    if active.fetch_add(1, Ordering::SeqCst) >= max {
        active.fetch_sub(1, Ordering::SeqCst);
        let msg = protocol::encode_error(&format!(
            "server busy: {max} connections open, the limit; retry later"
        ));
        let _ = match stream {
            Stream::Unix(mut s) => s.write_all(&msg),
            Stream::Tcp(mut s) => s.write_all(&msg),
        };
        return Ok(None);
    }
    // A reply the client does not read fails after the read timeout without progress (the
    // kernel's send timeout), so a client that stops reading gives its slot back too.
    let send_timeout = Some(shared.config.read_timeout);
    let (reader, writer, keep): (Box<dyn Read + Send>, Box<dyn Write + Send>, Stream) = match stream
    {
        Stream::Unix(s) => {
            s.set_nonblocking(false)?;
            s.set_write_timeout(send_timeout)?;
            (
                Box::new(s.try_clone()?),
                Box::new(s.try_clone()?),
                Stream::Unix(s),
            )
        }
        Stream::Tcp(s) => {
            s.set_nonblocking(false)?;
            s.set_write_timeout(send_timeout)?;
            // Replies are single writes; Nagle would only delay them.
            s.set_nodelay(true)?;
            (
                Box::new(s.try_clone()?),
                Box::new(s.try_clone()?),
                Stream::Tcp(s),
            )
        }
    };
    // Until its hello, a connection on a server with a token is mid-frame: the read timeout,
    // counted from the connect, bounds how long a stranger may hold the slot.
    let watch = Arc::new(ConnWatch::new(shared.config.token.is_some(), shared.epoch));
    live.lock().unwrap_or_else(|p| p.into_inner()).insert(
        id,
        Live {
            stream: keep,
            watch: Arc::clone(&watch),
        },
    );
    let (conn_shared, conn_live) = (Arc::clone(shared), Arc::clone(live));
    let spawned = thread::Builder::new()
        .name(format!("hullsweep-conn-{id}"))
        .spawn(move || {
            // A client that vanished mid-reply is that client's problem, not the server's.
            let _ = serve_watched(reader, writer, &conn_shared, Some(&watch));
            conn_live
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            conn_shared.connections.fetch_sub(1, Ordering::SeqCst);
        });
    spawned.map(Some).inspect_err(|_| {
        live.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
        active.fetch_sub(1, Ordering::SeqCst);
    })
}
