//! The server's error type and the helper that names what a failed system call was doing.
//! Apart from the rest, so that the settings, the token and the transports can all return it.

use std::io;

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

pub(crate) fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> EngineError {
    let context = context.into();
    move |source| EngineError::Io { context, source }
}
