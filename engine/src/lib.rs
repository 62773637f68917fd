//! The hullsweep engine: the kernel served over protocol v1 (docs/protocol.md) and its stateful
//! extensions (engine/PROTOCOL-EXT.md) on a Unix socket, TCP or stdio, and a Rust client.
//!
//! Embedding a server and sweeping through it; the reply is bit-identical to the kernel's:
//!
//! ```
//! use hullsweep_engine::{Client, Config, Server};
//! use hullsweep_kernel::{DEFAULT_FEE_PCT, DEFAULT_SEED, DEFAULT_SIGMA, default_params, gbm};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Port 0: the system picks a free port, which `endpoint()` then reports.
//! let server = Server::bind_tcp("127.0.0.1:0".parse()?, Config::default())?;
//! let hullsweep_engine::Endpoint::Tcp(addr) = *server.endpoint() else { unreachable!() };
//! let stop = server.shutdown_handle();
//! let serving = std::thread::spawn(move || server.run());
//!
//! let close = gbm(2_000, DEFAULT_SEED, DEFAULT_SIGMA)?;
//! let params = &default_params()[..16];
//! let got = Client::connect_tcp(addr)?.sweep(&close, params)?;
//! let want = hullsweep_kernel::sweep(&close, params, DEFAULT_FEE_PCT)?;
//! assert_eq!(got.trades, want.trades);
//! assert!(got.pnl.iter().zip(&want.pnl).all(|(g, w)| g.to_bits() == w.to_bits()));
//!
//! stop.shutdown();
//! serving.join().expect("server thread")?;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
// `deny`, not `forbid`: `shm` alone allows `unsafe` (it maps memory shared with the peer).
#![deny(unsafe_code)]

// Under `--cfg loom` (tests/loom_shm.rs) only the rings are built: the models need nothing else,
// and the rest of the engine maps real memory segments, which loom's atomics cannot live in.
#[cfg(not(loom))]
pub mod address;
#[cfg(not(loom))]
pub mod client;
#[cfg(not(loom))]
pub mod client_connect;
#[cfg(not(loom))]
pub mod protocol;
#[cfg(not(loom))]
pub mod server;
pub mod shm;
#[cfg(not(loom))]
pub mod tls;

#[cfg(not(loom))]
pub use address::Address;
#[cfg(not(loom))]
pub use client::{Client, ClientError};
#[cfg(not(loom))]
pub use client_connect::ConnectOptions;
#[cfg(not(loom))]
pub use server::{
    Config, Endpoint, EngineError, Server, ShutdownHandle, Token, default_variant, serve_stdio,
};
#[cfg(not(loom))]
pub use tls::{TlsAcceptor, TlsConnector, TlsFileError};
