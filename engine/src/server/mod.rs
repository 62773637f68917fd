//! The engine server: a thread per connection on a Unix socket or TCP, or one stdio session.
//! A bad frame, a panic or a dropped client only ever ends its own connection.
//!
//! `transport` makes the byte streams (Unix, TCP, TLS over TCP with `tls_stream`, stdio),
//! `accept` hands them to threads and times them out, `session` reads frames, checks the hello
//! and dispatches each request to its opcode family's handlers (`sweep`, `stream`), `config` holds the
//! settings and the state all connections share, `token` and `watch` serve the hello and timeouts.

mod accept;
mod config;
mod session;
mod stream;
mod sweep;
mod tls_stream;
mod token;
mod transport;
mod watch;

pub use config::{
    Config, DEFAULT_MAX_INFLIGHT, DEFAULT_MAX_STREAM_COMBOS, DEFAULT_MAX_STREAMS,
    DEFAULT_MAX_STREAMS_PER_CONNECTION, DEFAULT_READ_TIMEOUT, EngineError, Shared, default_variant,
};
pub use session::serve_connection;
pub use token::Token;
pub use transport::{Endpoint, serve_stdio};

use config::io_err;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use transport::{Listener, SocketFile};

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

impl Server {
    /// Binds a Unix socket at `path`, mode 0600 from the moment it exists.
    ///
    /// The socket is bound inside a fresh 0700 directory, made 0600, then renamed into place
    /// without replacing anything, so there is no moment at which others could connect. A stale
    /// socket (nobody accepting) at `path` is replaced; anything else there is an error.
    pub fn bind_unix(path: &Path, config: Config) -> Result<Server, EngineError> {
        config.refuse_tls("a Unix socket")?;
        let shared = Shared::new(config)?;
        let (listener, socket_file) = Listener::bind_unix(path)?;
        Ok(Server {
            listener,
            endpoint: Endpoint::Unix(path.to_path_buf()),
            shared,
            stop: ShutdownHandle::default(),
            socket_file: Some(socket_file),
        })
    }

    /// Binds TCP at `addr` (port 0 picks a free port; see [`endpoint`](Server::endpoint)).
    ///
    /// With [`Config::tls`] every connection is TLS. Beyond loopback anyone who can reach the
    /// port could use the server, so such a bind needs [`Config::token`], and TLS (so the token
    /// does not cross the network in clear) unless [`Config::insecure_plaintext`] says otherwise.
    pub fn bind_tcp(addr: SocketAddr, config: Config) -> Result<Server, EngineError> {
        if !addr.ip().is_loopback() && config.token.is_none() {
            return Err(EngineError::Config(format!(
                "tcp {addr} reaches beyond loopback, so it needs an access token \
                 (--token-file PATH) and TLS (--tls-cert and --tls-key); bind 127.0.0.1 or ::1 \
                 to serve this machine only"
            )));
        }
        if !addr.ip().is_loopback() && config.tls.is_none() && !config.insecure_plaintext {
            return Err(EngineError::Config(format!(
                "tcp {addr} reaches beyond loopback without TLS, so the access token would cross \
                 the network in clear: give --tls-cert and --tls-key (`hullsweep tls-cert` makes \
                 them), or --insecure-plaintext on a network you trust"
            )));
        }
        let shared = Shared::new(config)?;
        let (listener, local) = Listener::bind_tcp(addr)?;
        Ok(Server {
            listener,
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
        accept::accept_loop(&self.listener, &self.shared, &self.stop)?;
        drop(self.socket_file);
        Ok(())
    }
}
