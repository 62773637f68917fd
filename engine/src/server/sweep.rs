//! The sweep family's kernel call (opcodes 0, 3, 5 and 6): a sent or loaded series swept with
//! the server's variant, a panic turned into an error, the reply optionally timed.

use crate::protocol;
use crate::server::config::Config;
use hullsweep_kernel::ValidClose;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

/// The series of a sweep request: sent with it (validated per call) or loaded earlier (already valid).
pub(super) enum Series<'a> {
    Sent(&'a [f64]),
    Loaded(ValidClose<'a>),
}

/// Runs a sweep; a panic in a kernel becomes an error frame instead of a dead thread.
/// The time reported by the timed opcodes covers validation and kernel, as in-process.
pub(super) fn sweep(
    c: &Config,
    close: Series<'_>,
    params: &[hullsweep_kernel::Combo],
    timed: bool,
) -> Result<Vec<u8>, String> {
    let start = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| {
        let close = match close {
            Series::Sent(bars) => ValidClose::new(bars)?,
            Series::Loaded(valid) => valid,
        };
        c.variant.sweep_valid(close, params, c.fee_pct, c.threads)
    }))
    .map_err(|_| format!("internal error: variant {} panicked", c.variant.name()))?
    .map_err(|e| e.to_string())?;
    let seconds = timed.then(|| start.elapsed().as_secs_f64());
    Ok(protocol::encode_sweep_reply(&result, seconds))
}
