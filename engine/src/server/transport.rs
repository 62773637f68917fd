//! Where a connection's bytes come from: the Unix and TCP listeners, the streams they accept,
//! and stdio. The one place a byte stream is made, so a new transport slots in here alone.

use crate::server::config::{Config, Shared};
use crate::server::error::{EngineError, io_err};
use crate::server::session::serve_connection;
use crate::server::shm_conn::{Farewell, ShmConn};
use crate::server::tls_stream::{self, ServerTls};
use std::fmt;
use std::fs;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Serves stdin/stdout as one connection until stdin ends (the spawn-per-call transport).
pub fn serve_stdio(config: Config) -> Result<(), EngineError> {
    config.refuse_tls("stdio")?;
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
    /// Shared memory under this NAME (its rendezvous socket is `shm::socket_path(NAME)`).
    Shm(String),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Unix(p) => write!(f, "unix {}", p.display()),
            Endpoint::Tcp(a) => write!(f, "tcp {a}"),
            Endpoint::Shm(name) => write!(f, "shm {name}"),
        }
    }
}

/// A bound listener of any kind. `Shm` listens on its rendezvous socket.
pub(super) enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
    Shm(UnixListener),
}

static NEXT_BIND: AtomicUsize = AtomicUsize::new(0);

impl Listener {
    /// Binds a Unix socket at `path`, mode 0600 from the moment it exists.
    ///
    /// The socket is bound inside a fresh 0700 directory, made 0600, then renamed into place
    /// without replacing anything, so there is no moment at which others could connect. A stale
    /// socket (nobody accepting) at `path` is replaced; anything else there is an error.
    pub(super) fn bind_unix(path: &Path) -> Result<(Listener, SocketFile), EngineError> {
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
        let file = SocketFile {
            path: path.to_path_buf(),
            dev: m.dev(),
            ino: m.ino(),
        };
        Ok((Listener::Unix(listener), file))
    }

    /// Binds TCP at `addr`; returns the bound address (the real port when port 0 was asked for).
    pub(super) fn bind_tcp(addr: SocketAddr) -> Result<(Listener, SocketAddr), EngineError> {
        let listener = TcpListener::bind(addr).map_err(io_err(format!("binding tcp {addr}")))?;
        let local = listener
            .local_addr()
            .map_err(io_err("reading the bound address"))?;
        Ok((Listener::Tcp(listener), local))
    }

    /// Makes accepts nonblocking (the accept loop polls) and returns the descriptor to poll.
    pub(super) fn nonblocking_fd(&self) -> Result<BorrowedFd<'_>, EngineError> {
        Ok(match self {
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
            Listener::Shm(l) => {
                l.set_nonblocking(true)
                    .map_err(io_err("setting the listener nonblocking"))?;
                l.as_fd()
            }
        })
    }

    /// Accepts one pending connection.
    pub(super) fn accept(&self) -> io::Result<Stream> {
        match self {
            Listener::Unix(l) => l.accept().map(|(s, _)| Stream::Unix(s)),
            Listener::Tcp(l) => l.accept().map(|(s, _)| Stream::Tcp(s)),
            Listener::Shm(l) => l
                .accept()
                .and_then(|(s, _)| s.set_nonblocking(false).map(|()| s))
                .map(|s| Stream::Shm(ShmConn::accepted(s))),
        }
    }
}

/// A connected stream, kept so shutdown can unblock its thread. `Tls` is a TCP stream once its
/// connection's thread serves it over TLS.
pub(super) enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
    Tls(Arc<ServerTls>),
    Shm(ShmConn),
}

impl Stream {
    /// Ends a connection the accept loop timed out, with `frame` (the error saying why) as
    /// its last bytes if that costs the accept loop no wait: sent without blocking on a socket
    /// (a full send buffer drops it), which is then shut down; handed to the connection's
    /// thread on shared memory, whose reply ring only that thread writes (see `Farewell`).
    pub(super) fn time_out(&self, frame: &[u8]) {
        use rustix::net::{SendFlags, send};
        let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
        let _ = match self {
            Stream::Unix(s) => send(s, frame, flags),
            Stream::Tcp(s) => send(s, frame, flags),
            Stream::Tls(s) => {
                s.send_best_effort(frame);
                Ok(0)
            }
            Stream::Shm(c) => {
                // The thread closes the rings after the frame, and the socket goes with it.
                c.time_out(frame);
                return;
            }
        };
        self.shutdown();
    }

    /// The frame a connection's thread must write as it ends, if the accept loop times it out:
    /// shared memory's (a socket's gets it from the accept loop).
    pub(super) fn farewell(&self) -> Option<Farewell> {
        match self {
            Stream::Shm(c) => Some(c.farewell()),
            _ => None,
        }
    }

    /// True once the peer is known gone: a shared-memory client whose socket hung up (a socket
    /// peer's going is seen by its own reads).
    pub(super) fn peer_gone(&self) -> bool {
        matches!(self, Stream::Shm(c) if c.peer_gone())
    }

    pub(super) fn shutdown(&self) {
        // Already-closed peers make this fail; there is nothing left to unblock then.
        let _ = match self {
            Stream::Unix(s) => s.shutdown(Shutdown::Both),
            Stream::Tcp(s) => s.shutdown(Shutdown::Both),
            Stream::Tls(s) => s.socket().shutdown(Shutdown::Both),
            Stream::Shm(c) => {
                c.shutdown();
                Ok(())
            }
        };
    }

    /// Writes a refusal (the server is full) and closes the stream by dropping it. Over TLS
    /// the stream is only closed: the frame would need a handshake, i.e. a thread, first.
    pub(super) fn refuse(self, frame: &[u8], tls: bool) {
        let _ = match self {
            Stream::Unix(mut s) => s.write_all(frame),
            Stream::Tcp(mut s) if !tls => s.write_all(frame),
            Stream::Tcp(_) | Stream::Tls(_) => Ok(()),
            Stream::Shm(c) => {
                c.refuse(frame);
                Ok(())
            }
        };
    }

    /// The blocking reader and writer a connection's thread serves (the plaintext of a TLS
    /// session when `tls` is given, for TCP), and the handle the accept loop keeps to time it
    /// out or shut it down.
    pub(super) fn into_halves(
        self,
        send_timeout: Option<Duration>,
        config: &Config,
    ) -> io::Result<Halves> {
        let tls = config.tls.as_ref();
        Ok(match self {
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
                match tls {
                    Some(acceptor) => {
                        let session = tls_stream::accept(acceptor, s)?;
                        let (reader, writer) = session.split();
                        (Box::new(reader), Box::new(writer), Stream::Tls(session))
                    }
                    None => (
                        Box::new(s.try_clone()?),
                        Box::new(s.try_clone()?),
                        Stream::Tcp(s),
                    ),
                }
            }
            // Made here only, from a TCP stream.
            Stream::Tls(s) => {
                let (reader, writer) = s.split();
                (Box::new(reader), Box::new(writer), Stream::Tls(s))
            }
            Stream::Shm(c) => {
                let (reader, writer, c) = c.into_halves(config, send_timeout)?;
                (Box::new(reader), Box::new(writer), Stream::Shm(c))
            }
        })
    }
}

/// A connection's reader, writer, and the stream kept to unblock them.
pub(super) type Halves = (Box<dyn Read + Send>, Box<dyn Write + Send>, Stream);

/// The socket file this server created; removed at shutdown only if it is still ours.
pub(super) struct SocketFile {
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
