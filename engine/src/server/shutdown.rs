//! The stop flag a running server polls: set in-process through a handle, or by SIGINT and
//! SIGTERM once registered.

use crate::server::error::{EngineError, io_err};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Asks a running server to stop; cheap to clone, usable from any thread.
#[derive(Clone, Debug, Default)]
pub struct ShutdownHandle(Arc<AtomicBool>);

impl ShutdownHandle {
    /// Asks the server to stop. Returns at once; the accept loop sees it within 50 ms, then
    /// closes every connection and the server's `run` returns once their threads have ended.
    pub fn shutdown(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether a stop was asked for, by [`shutdown`](ShutdownHandle::shutdown) or a signal.
    pub fn is_shutdown(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Makes SIGINT and SIGTERM set this flag; a second SIGINT exits at once.
    pub(super) fn register_signals(&self) -> Result<(), EngineError> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let flag = &self.0;
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
}
