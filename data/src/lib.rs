//! hullsweep's data: close series and params in (`.npy`, CSV, Parquet, whole or chunk by chunk
//! through [`Source`]), results and trade logs out, and the equivalence gate's dataset suite.
//!
//! Formats depend on the [`Source`] trait ([`source`]) and on [`DataError`] ([`error`]), never
//! the reverse; [`read`] picks a format by extension.

#![deny(missing_docs)]

pub mod csv;
pub mod datasets;
pub mod error;
pub mod npy;
pub mod parquet;
pub mod read;
pub mod source;
pub mod trade_log;

pub use csv::{CsvLayout, CsvSource, read_close_csv};
pub use datasets::{Dataset, suite};
pub use error::DataError;
pub use npy::{
    NpySource, read_close_npy, read_params_npy, write_f64_npy, write_i64_npy, write_params_npy,
};
pub use parquet::{ParquetSource, ParquetWriter};
pub use read::{open, read_close, read_valid_close};
pub use source::{CHUNK_BARS, Source, read_all};
