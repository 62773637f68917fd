//! The hullsweep engine: the kernel served over protocol v1 (docs/protocol.md) and its stateful
//! extensions (engine/PROTOCOL-EXT.md) on a Unix socket, TCP or stdio, and a Rust client.
#![forbid(unsafe_code)]

pub mod client;
pub mod protocol;
pub mod server;

pub use client::{Client, ClientError};
pub use server::{
    Config, Endpoint, EngineError, Server, ShutdownHandle, Token, default_variant, serve_stdio,
};
