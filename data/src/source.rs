//! Close series read in pieces (`.npy`, CSV, Parquet), so a sweep of any length holds one chunk
//! at a time; every error names the file, the column and the row or line of the bad value.

use crate::csv_io::CsvSource;
use crate::io::{DataError, io_err};
use npyz::{DType, NpyFile};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

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
    fn next_chunk(&mut self, buf: &mut Vec<f64>, max: usize) -> Result<bool, DataError>;
    /// The number of bars, when the file says so up front (for progress and ETA).
    fn len_hint(&self) -> Option<u64>;
    /// The file.
    fn path(&self) -> &Path;
    /// The column the bars come from (`None` for a 1-D `.npy`).
    fn column(&self) -> Option<&str>;
    /// The file line of bar `index`, for a bar of the chunk last returned (CSV only).
    fn line_of(&self, index: u64) -> Option<u64>;
}

/// Opens `path` by extension: `.npy`, `.csv` or `.parquet`.
pub fn open(path: &Path, column: Option<&str>) -> Result<Box<dyn Source>, DataError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("npy") => Ok(Box::new(NpySource::open(path)?)),
        Some(e) if e.eq_ignore_ascii_case("csv") => Ok(Box::new(CsvSource::open(path, column)?)),
        Some(e) if e.eq_ignore_ascii_case("parquet") => Ok(Box::new(
            crate::parquet_io::ParquetSource::open(path, column)?,
        )),
        _ => Err(DataError::UnknownType {
            path: path.to_path_buf(),
        }),
    }
}

/// A 1-D float64 `.npy`, read straight from the file after the header (little- or big-endian).
pub struct NpySource {
    path: PathBuf,
    reader: BufReader<File>,
    big_endian: bool,
    total: u64,
    done: u64,
    bytes: Vec<u8>,
}

impl NpySource {
    /// Opens the file and checks its header: float64, one dimension.
    pub fn open(path: &Path) -> Result<Self, DataError> {
        let file = File::open(path).map_err(io_err(path))?;
        let npy = NpyFile::new(BufReader::with_capacity(1 << 20, file)).map_err(|e| {
            DataError::Malformed {
                format: ".npy",
                path: path.to_path_buf(),
                detail: e.to_string(),
            }
        })?;
        let descr = match npy.dtype() {
            DType::Plain(ts) => ts.to_string(),
            other => format!("{other:?}"),
        };
        if descr != "<f8" && descr != ">f8" {
            return Err(DataError::Dtype {
                path: path.to_path_buf(),
                found: descr,
                expected: "float64 (<f8)",
            });
        }
        if npy.shape().len() != 1 {
            return Err(DataError::Shape {
                path: path.to_path_buf(),
                found: npy.shape().to_vec(),
                expected: "a 1-D array",
            });
        }
        let total = npy.shape()[0];
        Ok(NpySource {
            path: path.to_path_buf(),
            reader: npy.into_inner(),
            big_endian: descr.starts_with('>'),
            total,
            done: 0,
            bytes: Vec::new(),
        })
    }
}

impl Source for NpySource {
    fn next_chunk(&mut self, buf: &mut Vec<f64>, max: usize) -> Result<bool, DataError> {
        buf.clear();
        let want = (self.total - self.done).min(max as u64) as usize;
        if want == 0 {
            return Ok(false);
        }
        self.bytes.resize(want * 8, 0);
        let mut got = 0;
        while got < self.bytes.len() {
            match self.reader.read(&mut self.bytes[got..]) {
                Ok(0) => {
                    return Err(DataError::Malformed {
                        format: ".npy",
                        path: self.path.clone(),
                        detail: format!(
                            "truncated: the header says {} bars, the file ends after {}",
                            self.total,
                            self.done + got as u64 / 8
                        ),
                    });
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(&self.path)(e)),
            }
        }
        let big = self.big_endian;
        buf.extend(self.bytes.chunks_exact(8).map(|b| {
            let b: [u8; 8] = b.try_into().expect("chunks of 8");
            if big {
                f64::from_be_bytes(b)
            } else {
                f64::from_le_bytes(b)
            }
        }));
        self.done += want as u64;
        Ok(true)
    }

    fn len_hint(&self) -> Option<u64> {
        Some(self.total)
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn column(&self) -> Option<&str> {
        None
    }

    fn line_of(&self, _: u64) -> Option<u64> {
        None
    }
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
