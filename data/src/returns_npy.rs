//! `--returns R.npy`: the bars x combos bar-return matrix (float64, C order) written column by
//! column as a sweep's workers finish combos, through a memory map, all or nothing.
//!
//! Combos finish in any order (the sweep runs the costliest first), so each column is
//! scattered into its place in the row-major file; memory stays one column per worker, and the
//! operating system's page cache holds what is not yet on disk.

use crate::error::DataError;
use memmap2::MmapMut;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A `.npy` of `bars x combos` float64 being filled one column at a time, from any thread.
pub struct ReturnsWriter {
    path: PathBuf,
    file: tempfile::NamedTempFile,
    map: Mutex<MmapMut>,
    header: usize,
    bars: usize,
    combos: usize,
}

/// The `.npy` 1.0 header of a little-endian float64 C-order `bars x combos` array, padded so
/// the data starts on a 64-byte boundary.
fn header(bars: usize, combos: usize) -> Vec<u8> {
    let mut dict =
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({bars}, {combos}), }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes
}

impl ReturnsWriter {
    /// Creates the matrix beside `path` (a temporary file renamed onto `path` by
    /// [`Self::finish`]), sized for `bars x combos` values, all zero until written.
    pub fn create(path: &Path, bars: usize, combos: usize) -> Result<ReturnsWriter, DataError> {
        let io = |error| DataError::Io {
            path: path.to_path_buf(),
            error,
        };
        let too_big = || {
            io(std::io::Error::other(format!(
                "{bars} bars x {combos} combos of float64 is too large a file"
            )))
        };
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let mut file = tempfile::Builder::new()
            .prefix(".returns-")
            .suffix(".npy.partial")
            .tempfile_in(dir)
            .map_err(io)?;
        let head = header(bars, combos);
        let size = bars
            .checked_mul(combos)
            .and_then(|v| v.checked_mul(8))
            .and_then(|v| v.checked_add(head.len()))
            .ok_or_else(too_big)?;
        file.write_all(&head).map_err(io)?;
        file.as_file().set_len(size as u64).map_err(io)?;
        // SAFETY: the file was just created by this process under a fresh random name with
        // mode 0600 (tempfile) and is mapped once, here; nothing else truncates or maps it
        // while the map lives, which is the whole of memmap2's contract for `map_mut`.
        let map = unsafe { MmapMut::map_mut(file.as_file()) }.map_err(io)?;
        Ok(ReturnsWriter {
            path: path.to_path_buf(),
            file,
            map: Mutex::new(map),
            header: head.len(),
            bars,
            combos,
        })
    }

    /// Writes combo `k`'s bar returns for the bars from `first_bar` on into its column.
    ///
    /// # Panics
    /// When `k` is not a combo of the matrix or the bars run past its end: the sweep that calls
    /// this hands it exactly its own combos and bars.
    pub fn write_column(&self, k: usize, first_bar: usize, returns: &[f64]) {
        assert!(k < self.combos && first_bar + returns.len() <= self.bars);
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let body = &mut map[self.header..];
        for (i, r) in returns.iter().enumerate() {
            let at = ((first_bar + i) * self.combos + k) * 8;
            body[at..at + 8].copy_from_slice(&r.to_le_bytes());
        }
    }

    /// Flushes the map and moves the file onto its path.
    pub fn finish(self) -> Result<(), DataError> {
        let io = |error| DataError::Io {
            path: self.path.clone(),
            error,
        };
        let map = self.map.into_inner().unwrap_or_else(|e| e.into_inner());
        map.flush().map_err(io)?;
        drop(map);
        self.file.persist(&self.path).map_err(|e| io(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_written_in_any_order_read_back_as_a_c_order_matrix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.npy");
        let w = ReturnsWriter::create(&path, 3, 2).unwrap();
        w.write_column(1, 0, &[10.0, 11.0, 12.0]);
        w.write_column(0, 1, &[-1.0, f64::MIN_POSITIVE]);
        w.write_column(0, 0, &[0.0]);
        // Nothing is at the path until finished.
        assert!(!path.exists());
        w.finish().unwrap();
        let mut m = crate::NpyMatrix::open(&path).unwrap();
        assert_eq!(m.shape(), [3, 2]);
        let mut buf = Vec::new();
        m.next_rows(&mut buf, 3).unwrap();
        assert_eq!(buf, [0.0, 10.0, -1.0, 11.0, f64::MIN_POSITIVE, 12.0]);
    }

    #[test]
    fn an_unwritable_directory_is_named() {
        let e = ReturnsWriter::create(Path::new("/nonexistent/dir/r.npy"), 3, 2)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("/nonexistent/dir/r.npy"), "{e}");
    }
}
