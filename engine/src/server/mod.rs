//! The engine server: a thread per connection on a Unix socket or TCP, or one stdio session.
//! A bad frame, a panic or a dropped client only ever ends its own connection.
//!
//! `bind` makes a [`Server`] and runs it, `transport` makes the byte streams (Unix, TCP, TLS
//! over TCP with `tls_stream`, stdio), `accept` hands them to threads and times them out,
//! `session` reads frames, checks the hello and dispatches each request to its opcode family's
//! handlers (`sweep` with the connection's `loaded` series, `stream`), `config` holds the
//! settings and the state all connections share, `token` and `watch` serve the hello and
//! timeouts, `shutdown` the stop flag and `error` the error type. This file only declares them
//! and re-exports the public items.

mod accept;
mod bind;
mod config;
mod error;
mod loaded;
mod session;
mod shm_conn;
mod shutdown;
mod stream;
mod sweep;
mod tls_stream;
mod token;
mod transport;
mod watch;

pub use bind::Server;
pub use config::{
    Config, DEFAULT_MAX_INFLIGHT, DEFAULT_MAX_STREAM_COMBOS, DEFAULT_MAX_STREAMS,
    DEFAULT_MAX_STREAMS_PER_CONNECTION, DEFAULT_READ_TIMEOUT, Shared, default_variant,
};
pub use error::EngineError;
pub use session::serve_connection;
pub use shutdown::ShutdownHandle;
pub use token::Token;
pub use transport::{Endpoint, serve_stdio};
