//! The one error type of hullsweep-data: every reader and writer returns [`DataError`], whose
//! message names the file and, where there is one, the bad value, its index, line and column.

use hullsweep_kernel::KernelError;
use std::path::{Path, PathBuf};

/// Why a data or params file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    // The OS error is part of the message and deliberately not a `source`, so a cause chain
    // printed in full (`{:#}`) says it once.
    /// The OS refused to open, read or write the file (missing, permission, disk full).
    #[error("{path}: {error}")]
    Io {
        /// The file that was being read or written.
        path: PathBuf,
        /// The OS error, printed in the message rather than chained as a source.
        error: std::io::Error,
    },
    /// The file's structure cannot be decoded: a bad `.npy` header, a `.npy` body shorter than
    /// its header says, or a Parquet file that cannot be read.
    #[error("{path}: not a valid {format} file: {detail}")]
    Malformed {
        /// The file that failed to decode.
        path: PathBuf,
        /// The format it was read as (`.npy` or Parquet), so the message names the right one.
        format: &'static str,
        /// What is wrong, from the decoder (npyz, parquet) or naming the truncation point.
        detail: String,
    },
    /// The array's element type is not the one the file's role needs (`<f8` for closes,
    /// `<i8` for params, a float64 column in Parquet).
    #[error("{path}: dtype {found}, expected {expected}")]
    Dtype {
        /// The file with the wrong element type.
        path: PathBuf,
        /// The dtype the file declares, as its descriptor string (e.g. `<f4`).
        found: String,
        /// The dtype this role requires.
        expected: &'static str,
    },
    /// The array has the wrong number of dimensions or columns (closes are 1-D, params
    /// are `n x 6`).
    #[error("{path}: shape {found:?}, expected {expected}")]
    Shape {
        /// The file with the wrong shape.
        path: PathBuf,
        /// The shape the file declares, one entry per dimension.
        found: Vec<u64>,
        /// The shape this role requires, in words (e.g. `n x 6`).
        expected: &'static str,
    },
    /// The extension is none of `.npy`, `.csv` or `.parquet`, so no reader applies.
    #[error("{path}: unknown file type; expected a .npy, .csv or .parquet file")]
    UnknownType {
        /// The file whose extension was not recognised.
        path: PathBuf,
    },
    /// A CSV file could not be read as a close series: no usable close column, a cell that is
    /// not a number, a ragged row.
    #[error("{path}: {detail}")]
    Csv {
        /// The CSV file at fault.
        path: PathBuf,
        /// What is wrong, naming the line, column and cell where there is one.
        detail: String,
    },
    /// A bar's price is zero, negative or infinite; only finite prices `> 0` (or NaN for a
    /// missing bar) are accepted.
    #[error(
        "{path}: bad price {value} at index {index}{}{}: prices must be finite and > 0 (NaN \
         marks a missing bar)",
        line.map_or(String::new(), |l| format!(" (line {l})")),
        column.as_ref().map_or(String::new(), |c| format!(" in column {c:?}"))
    )]
    BadPrice {
        /// The file holding the bad price.
        path: PathBuf,
        /// The 0-based bar index of the bad price in the close series.
        index: usize,
        /// The file line of a CSV bar.
        line: Option<u64>,
        /// The column of a CSV or Parquet bar.
        column: Option<String>,
        /// The offending price, as read.
        value: f64,
    },
    /// A trade-log row (`docs/kernel.md`, "Trades and events") that does not parse back: the
    /// wrong number of cells, or a cell that is not a number of its column's kind.
    #[error("{row:?}: {detail}")]
    TradeRow {
        /// The row as read.
        row: String,
        /// What is wrong, naming the column and the cell.
        detail: String,
    },
    /// The series was read but the kernel rejects it as a whole (an empty series: no bars to
    /// sweep); a single bad price is [`DataError::BadPrice`] instead.
    #[error("{path}: {error}")]
    Invalid {
        /// The file whose contents were rejected.
        path: PathBuf,
        /// The kernel's validation error, naming the bad value.
        error: KernelError,
    },
}

/// Maps an OS error on `path` to [`DataError::Io`].
pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DataError + '_ {
    move |error| DataError::Io {
        path: path.to_path_buf(),
        error,
    }
}
