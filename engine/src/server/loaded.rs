//! A connection's loaded series (opcodes 2 and 4): validated once at load, known by id, their
//! bytes charged to the shared `max_loaded_bytes` until dropped or the connection ends.

use crate::protocol;
use crate::server::config::Shared;
use hullsweep_kernel::{ValidClose, ValidSeries};
use std::collections::HashMap;
use std::sync::atomic::Ordering;

/// One connection's loaded series. They die with the connection, so a client that vanishes
/// without dropping them leaks nothing; their bytes count against the shared limit.
pub(super) struct Loaded<'a> {
    shared: &'a Shared,
    /// Validated once at load, so a sweep by id does not scan the bars again.
    series: HashMap<u64, ValidSeries>,
    next_id: u64,
    held: u64,
}

impl Drop for Loaded<'_> {
    fn drop(&mut self) {
        self.shared
            .loaded_bytes
            .fetch_sub(self.held, Ordering::SeqCst);
    }
}

impl<'a> Loaded<'a> {
    pub(super) fn new(shared: &'a Shared) -> Self {
        Loaded {
            shared,
            series: HashMap::new(),
            next_id: 1,
            held: 0,
        }
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

    /// The series loaded as `id`, already valid.
    pub(super) fn get(&self, id: u64) -> Result<ValidClose<'_>, String> {
        let series = self.series.get(&id).ok_or_else(|| unknown(id))?;
        Ok(series.view())
    }

    pub(super) fn drop_series(&mut self, id: u64) -> Result<Vec<u8>, String> {
        let close = self.series.remove(&id).ok_or_else(|| unknown(id))?;
        let bytes = 8 * close.bars().len() as u64;
        self.held -= bytes;
        self.shared.loaded_bytes.fetch_sub(bytes, Ordering::SeqCst);
        Ok(protocol::encode_reply(&[]))
    }
}

fn unknown(id: u64) -> String {
    format!("unknown series id {id} (ids are per connection; load with opcode 2)")
}
