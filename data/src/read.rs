//! Choosing the reader by file extension: [`open`] streams any supported file, [`read_close`]
//! reads one whole, [`read_valid_close`] also checks every price as the kernel will.

use crate::csv::{CsvSource, read_close_csv, read_csv_series};
use crate::error::DataError;
use crate::npy::{NpySource, read_close_npy};
use crate::parquet::ParquetSource;
use crate::source::{Source, read_all};
use hullsweep_kernel::{KernelError, validate_close};
use std::path::Path;

/// The number of bars in `path`: from its header where the format has one (`.npy`, Parquet),
/// else by reading it through once (CSV; nothing is kept), for work that must know the length
/// before it starts, such as cutting folds.
pub fn count_bars(path: &Path, column: Option<&str>) -> Result<u64, DataError> {
    let mut src = open(path, column)?;
    if let Some(n) = src.len_hint() {
        return Ok(n);
    }
    let (mut buf, mut bars) = (Vec::new(), 0u64);
    while src.next_chunk(&mut buf, crate::source::CHUNK_BARS)? {
        bars += buf.len() as u64;
    }
    Ok(bars)
}

/// Opens `path` by extension: `.npy`, `.csv` or `.parquet`.
pub fn open(path: &Path, column: Option<&str>) -> Result<Box<dyn Source>, DataError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("npy") => Ok(Box::new(NpySource::open(path)?)),
        Some(e) if e.eq_ignore_ascii_case("csv") => Ok(Box::new(CsvSource::open(path, column)?)),
        Some(e) if e.eq_ignore_ascii_case("parquet") => {
            Ok(Box::new(ParquetSource::open(path, column)?))
        }
        _ => Err(DataError::UnknownType {
            path: path.to_path_buf(),
        }),
    }
}

/// Reads a close series like [`read_close`] and checks it as the kernel will: not empty, every
/// price finite and `> 0` or NaN. A bad price is named by its index and, in a CSV, its line.
pub fn read_valid_close(path: &Path, column: Option<&str>) -> Result<Vec<f64>, DataError> {
    let (close, lines) = match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("csv") => {
            let (close, lines) = read_csv_series(path, column)?;
            (close, Some(lines))
        }
        _ => (read_close(path, column)?, None),
    };
    match validate_close(&close) {
        Ok(()) => Ok(close),
        Err(KernelError::BadPrice { index, value }) => Err(DataError::BadPrice {
            path: path.to_path_buf(),
            index,
            line: lines.as_ref().map(|l| l[index]),
            column: lines.and(column.map(str::to_string)),
            value,
        }),
        Err(error) => Err(DataError::Invalid {
            path: path.to_path_buf(),
            error,
        }),
    }
}

/// Reads a close series from `.npy`, `.csv` or `.parquet`, chosen by extension.
pub fn read_close(path: &Path, column: Option<&str>) -> Result<Vec<f64>, DataError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("npy") => read_close_npy(path),
        Some(e) if e.eq_ignore_ascii_case("csv") => read_close_csv(path, column),
        Some(e) if e.eq_ignore_ascii_case("parquet") => read_all(open(path, column)?.as_mut()),
        _ => Err(DataError::UnknownType {
            path: path.to_path_buf(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::npy::write_f64_npy;

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn a_bad_price_is_named_by_index_and_csv_line() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("p.csv");
        std::fs::write(&csv, "close\r\n100\r\n\r\n0\r\n").unwrap();
        let e = read_valid_close(&csv, None).unwrap_err().to_string();
        assert!(e.contains("bad price 0 at index 2 (line 4)"), "{e}");
        let npy = dir.path().join("p.npy");
        write_f64_npy(&npy, &[100.0, f64::NAN, 0.0]).unwrap();
        let e = read_valid_close(&npy, None).unwrap_err().to_string();
        assert!(e.contains("bad price 0 at index 2:"), "{e}");
        std::fs::write(&csv, "close\n").unwrap();
        let e = read_valid_close(&csv, None).unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        std::fs::write(&csv, "close\n1\n\n2\n").unwrap();
        let c = read_valid_close(&csv, None).unwrap();
        assert_eq!(bits(&c), bits(&[1.0, f64::NAN, 2.0]));
    }
}
