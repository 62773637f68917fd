//! Close series read in pieces (`.npy`, CSV, Parquet), so a sweep of any length holds one chunk
//! at a time; every error names the file, the column and the row or line of the bad value.

use crate::error::DataError;
use hullsweep_kernel::KernelError;
use std::path::Path;

/// Bars per chunk the CLI reads: 256 Ki bars (2 MiB), long enough that the lookback carried
/// from chunk to chunk (399 bars on the default grid, 0.15%) and the fixed cost of a push are
/// negligible, short enough that the working memory of a push (about 25 times the chunk on two
/// workers when rolling's fallback runs) stays small. Measured on 1e7 bars: 1 Mi bars peaked
/// at 161 MiB RSS, 512 Ki at 84, 256 Ki at 45, no slower.
pub const CHUNK_BARS: usize = 1 << 18;

/// A close series read chunk by chunk.
pub trait Source: Send {
    /// Clears `buf` and fills it with up to `max` next bars; `Ok(false)` at the end of the
    /// series (then `buf` is empty).
    fn next_chunk(&mut self, buf: &mut Vec<f64>, max: usize) -> Result<bool, DataError> {
        self.next_chunk_after(buf, 0, max)
    }
    /// As [`next_chunk`](Source::next_chunk), keeping the first `keep` values of `buf` (it
    /// must hold that many) and appending the bars after them; `Ok(false)` at the end of the
    /// series (then `buf` holds only those). A sweep reads each chunk behind room for the
    /// bars it carries over, so the chunk is swept where it was read.
    fn next_chunk_after(
        &mut self,
        buf: &mut Vec<f64>,
        keep: usize,
        max: usize,
    ) -> Result<bool, DataError>;
    /// The number of bars, when the file says so up front (for progress and ETA).
    fn len_hint(&self) -> Option<u64>;
    /// The file.
    fn path(&self) -> &Path;
    /// The column the bars come from (`None` for a 1-D `.npy`).
    fn column(&self) -> Option<&str>;
    /// The file line of bar `index`, for a bar of the chunk last returned (CSV only).
    fn line_of(&self, index: u64) -> Option<u64>;
}

/// Reads a whole series through a [`Source`] (small files, tests).
pub fn read_all(source: &mut dyn Source) -> Result<Vec<f64>, DataError> {
    let mut all = Vec::new();
    let mut buf = Vec::new();
    while source.next_chunk(&mut buf, CHUNK_BARS)? {
        all.extend_from_slice(&buf);
    }
    Ok(all)
}

/// Checks one chunk of `src` as the kernel will (every price finite and `> 0`, or NaN), naming a
/// bad price by file, column, bar index and line; `first` is the index of the chunk's first bar.
pub fn validate_chunk(src: &dyn Source, chunk: &[f64], first: u64) -> Result<(), DataError> {
    match hullsweep_kernel::validate_close(chunk) {
        Ok(()) => Ok(()),
        Err(KernelError::BadPrice { index, value }) => {
            let index = first + index as u64;
            Err(DataError::BadPrice {
                path: src.path().to_path_buf(),
                index: index as usize,
                line: src.line_of(index),
                column: src.column().map(str::to_string),
                value,
            })
        }
        Err(error) => Err(DataError::Invalid {
            path: src.path().to_path_buf(),
            error,
        }),
    }
}
