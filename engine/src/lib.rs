//! The hullsweep engine: the kernel served over protocol v1 (Unix socket, TCP or stdio) with
//! stateful extensions, and a Rust client. Wire format: `spec/PROTOCOL.md`, `PROTOCOL-EXT.md`.
#![forbid(unsafe_code)]

pub mod client;
pub mod protocol;
pub mod server;

pub use client::{Client, ClientError};
pub use server::{
    Config, Endpoint, EngineError, Server, ShutdownHandle, Token, default_variant, serve_stdio,
};
