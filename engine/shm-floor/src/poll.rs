//! What both sides of every measurement share: the error type, and the busy-poll that waits for
//! the peer and gives up when it has gone silent (died or hung).

use std::time::{Duration, Instant};

/// Any error, boxed: the benchmark only reports it and exits.
pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A side that waits this long for its peer gives up (the peer died or hangs).
pub const STALL: Duration = Duration::from_secs(10);

/// Busy-polls `poll` until it yields a value, failing after `STALL` without one.
#[inline(always)]
pub fn spin<T>(mut poll: impl FnMut() -> Result<Option<T>>) -> Result<T> {
    let mut since = None;
    loop {
        for _ in 0..1024 {
            if let Some(v) = poll()? {
                return Ok(v);
            }
            std::hint::spin_loop();
        }
        let t0 = *since.get_or_insert_with(Instant::now);
        if t0.elapsed() > STALL {
            return Err(format!("peer silent for {STALL:?}").into());
        }
    }
}
