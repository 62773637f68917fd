//! A bound server: the checks a bind must pass before anything listens, and the run that
//! accepts connections until shut down.

use crate::server::accept::accept_loop;
use crate::server::config::{Config, Shared};
use crate::server::error::EngineError;
use crate::server::shutdown::ShutdownHandle;
use crate::server::transport::{Endpoint, Listener, SocketFile};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

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

    /// Serves shared memory under `name` (`hullsweep serve --shm NAME`): each client connects
    /// to the rendezvous socket [`shm::socket_path`](crate::shm::socket_path)`(name)` (mode
    /// 0600, created as [`bind_unix`](Server::bind_unix) creates its socket: a stale one from a
    /// killed run is replaced, anything else refused) and gets a segment of its own.
    pub fn bind_shm(name: &str, config: Config) -> Result<Server, EngineError> {
        config.refuse_tls("shared memory")?;
        let path = crate::shm::socket_path(name).map_err(|e| EngineError::Config(e.to_string()))?;
        // One segment made and dropped at once: a capacity the rings cannot have, or a system
        // without memfd, fails here at start rather than at the first client.
        crate::shm::Segment::create(config.shm_ring_capacity)
            .map_err(|e| EngineError::Config(format!("--shm {name}: {e}")))?;
        let shared = Shared::new(config)?;
        let (listener, socket_file) = Listener::bind_unix(&path)?;
        let Listener::Unix(listener) = listener else {
            unreachable!("bind_unix binds a Unix socket")
        };
        Ok(Server {
            listener: Listener::Shm(listener),
            endpoint: Endpoint::Shm(name.to_string()),
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
        self.stop.register_signals()
    }

    /// Accepts connections until shut down, then closes every connection, waits for their
    /// threads and removes the socket file.
    pub fn run(self) -> Result<(), EngineError> {
        accept_loop(&self.listener, &self.shared, &self.stop)?;
        drop(self.socket_file);
        Ok(())
    }
}
