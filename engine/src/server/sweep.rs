//! The sweep family's handlers (opcodes 0 and 2..=6): sweeps of a sent or loaded series, and
//! the per-connection loaded series charged to the shared `max_loaded_bytes`.

use crate::protocol;
use crate::server::session::Session;
use hullsweep_kernel::ValidClose;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The series of a sweep request: sent with it (validated per call) or loaded earlier (already valid).
pub(super) enum Series<'a> {
    Sent(&'a [f64]),
    Loaded(ValidClose<'a>),
}

impl Session<'_> {
    /// Runs a sweep; a panic in a kernel becomes an error frame instead of a dead thread.
    /// The time reported by the timed opcodes covers validation and kernel, as in-process.
    pub(super) fn sweep(
        &self,
        close: Series<'_>,
        params: &[hullsweep_kernel::Combo],
        timed: bool,
    ) -> Result<Vec<u8>, String> {
        let c = &self.shared.config;
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

    pub(super) fn load(&mut self, close: &[f64]) -> Result<Vec<u8>, String> {
        let close = ValidClose::new(close).map_err(|e| e.to_string())?;
        let bytes = 8 * close.bars().len() as u64;
        let max = self.shared.config.max_loaded_bytes;
        self.shared
            .loaded_bytes
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(bytes).filter(|&t| t <= max)
            })
            .map_err(|used| {
                format!(
                    "loading {bytes} bytes would exceed the loaded-series limit of {max} bytes \
                     ({used} in use); drop series with opcode 4"
                )
            })?;
        self.held += bytes;
        let id = self.next_id;
        self.next_id += 1;
        self.series.insert(id, close.to_series());
        Ok(protocol::encode_reply(&id.to_le_bytes()))
    }

    pub(super) fn unknown(id: u64) -> String {
        format!("unknown series id {id} (ids are per connection; load with opcode 2)")
    }

    pub(super) fn drop_series(&mut self, id: u64) -> Result<Vec<u8>, String> {
        let close = self.series.remove(&id).ok_or_else(|| Self::unknown(id))?;
        let bytes = 8 * close.bars().len() as u64;
        self.held -= bytes;
        self.shared.loaded_bytes.fetch_sub(bytes, Ordering::SeqCst);
        Ok(protocol::encode_reply(&[]))
    }
}
