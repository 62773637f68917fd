//! hullsweep's data in and out: close series and params (`.npy`, CSV, Parquet, whole or chunk by
//! chunk through [`Source`]), results, plots, trade and event logs, and the gate's dataset suite.
//!
//! Formats depend on the [`Source`] trait ([`source`]) and on [`DataError`] ([`error`]), never
//! the reverse; [`read`] picks a format by extension.
//!
//! # Example
//!
//! Write a series as `.npy`, read it back whole with [`read_close`], then stream it chunk by
//! chunk through [`open`] into a [`Sweeper`](hullsweep_variants::Sweeper), which gives the
//! batch sweep's results in bounded memory:
//!
//! ```
//! use hullsweep_data::{open, read_close, write_f64_npy};
//! use hullsweep_kernel::{DEFAULT_FEE_PCT, GridSpec, gbm, grid};
//! use hullsweep_variants::{Sweeper, Threads, Variant};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("close.npy");
//! let close = gbm(2_000, 1, 0.01)?;
//! write_f64_npy(&path, &close)?;
//! assert_eq!(read_close(&path, None)?, close); // by extension; `None`: no column to pick
//!
//! let params = grid("6:60:8".parse::<GridSpec>()?)?;
//! let mut sweeper = Sweeper::new(&params, DEFAULT_FEE_PCT, Variant::fastest(), Threads::Auto)?;
//! let (mut source, mut chunk) = (open(&path, None)?, Vec::new());
//! while source.next_chunk(&mut chunk, 512)? {
//!     sweeper.push(&chunk)?;
//! }
//! let batch = Variant::Reference.sweep(&close, &params, DEFAULT_FEE_PCT, Threads::Auto)?;
//! assert_eq!(sweeper.finish()?, batch);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub mod csv;
pub mod datasets;
pub mod error;
pub mod live;
pub mod matrix;
pub mod npy;
pub mod parquet;
pub mod plot;
pub mod progress;
pub mod read;
pub mod research_plot;
pub mod results;
pub mod returns_npy;
pub mod source;
pub mod stream;
pub mod trade_log;
pub mod write;

pub use csv::{CsvLayout, CsvSource, read_close_csv};
pub use datasets::{Dataset, suite};
pub use error::DataError;
pub use matrix::{NpyMatrix, write_f64_matrix_npy};
pub use npy::{
    NpySource, read_close_npy, read_params_npy, write_f64_npy, write_i64_npy, write_params_npy,
};
pub use parquet::{ParquetSource, ParquetWriter};
pub use progress::Progress;
pub use read::{count_bars, open, read_close, read_valid_close};
pub use research_plot::{MAX_SCATTER_POINTS, is_oos_scatter, logit_histogram, walk_forward_equity};
pub use returns_npy::ReturnsWriter;
pub use source::{CHUNK_BARS, Source, read_all, validate_chunk};
pub use stream::{for_each_chunk, sweep_file, sweep_series};
pub use write::{write_atomic, write_gbm};
