//! 2-D float64 `.npy` matrices (bars x combos, e.g. a returns matrix for `hullsweep pbo`): rows
//! read a chunk at a time (C order straight from the file; Fortran order whole, then transposed).

use crate::error::{DataError, io_err};
use npyz::{DType, Order, WriterBuilder};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::path::{Path, PathBuf};

/// A float64 `.npy` opened for reading by rows. Its shape is whatever the header says; reading
/// rows needs it to be 2-D (check [`NpyMatrix::shape`] first to name a wrong one your own way).
pub struct NpyMatrix {
    path: PathBuf,
    shape: Vec<u64>,
    reader: BufReader<File>,
    big_endian: bool,
    /// Fortran order: the whole matrix, already row-major, read on the first call.
    transposed: Option<Vec<f64>>,
    fortran: bool,
    rows_done: u64,
    bytes: Vec<u8>,
}

fn malformed(path: &Path, detail: String) -> DataError {
    DataError::Malformed {
        format: ".npy",
        path: path.to_path_buf(),
        detail,
    }
}

impl NpyMatrix {
    /// Opens the file and checks its header: float64 (`<f8` or `>f8`).
    pub fn open(path: &Path) -> Result<Self, DataError> {
        let npy = crate::npy::open_npy_file(path, 1 << 20)?;
        let descr = match npy.dtype() {
            DType::Plain(ts) => ts.to_string(),
            other => other.descr(),
        };
        if descr != "<f8" && descr != ">f8" {
            return Err(DataError::Dtype {
                path: path.to_path_buf(),
                found: descr,
                expected: "float64 (<f8)",
            });
        }
        Ok(NpyMatrix {
            path: path.to_path_buf(),
            shape: npy.shape().to_vec(),
            fortran: npy.order() == Order::Fortran,
            reader: npy.into_inner(),
            big_endian: descr.starts_with('>'),
            transposed: None,
            rows_done: 0,
            bytes: Vec::new(),
        })
    }

    /// The shape the header declares, one entry per dimension.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// Reads up to `max_rows` whole rows into `buf` (cleared first, row-major); returns how many
    /// rows it read, 0 at the end.
    pub fn next_rows(&mut self, buf: &mut Vec<f64>, max_rows: usize) -> Result<usize, DataError> {
        buf.clear();
        let &[rows, cols] = &self.shape[..] else {
            return Err(DataError::Shape {
                path: self.path.clone(),
                found: self.shape.clone(),
                expected: "a 2-D array",
            });
        };
        let want = (rows - self.rows_done).min(max_rows as u64) as usize;
        if want == 0 {
            return Ok(0);
        }
        let cols = cols as usize;
        if self.fortran {
            if self.transposed.is_none() {
                self.transposed = Some(self.read_transposed(rows as usize, cols)?);
            }
            let all = self.transposed.as_deref().unwrap_or(&[]);
            let at = self.rows_done as usize * cols;
            buf.extend_from_slice(&all[at..at + want * cols]);
        } else {
            self.read_values(buf, want * cols)?;
        }
        self.rows_done += want as u64;
        Ok(want)
    }

    /// Reads `count` values in file order after those already read.
    fn read_values(&mut self, buf: &mut Vec<f64>, count: usize) -> Result<(), DataError> {
        self.bytes.resize(count * 8, 0);
        let mut got = 0;
        while got < self.bytes.len() {
            match self.reader.read(&mut self.bytes[got..]) {
                Ok(0) => {
                    let total: u64 = self.shape.iter().product();
                    return Err(malformed(
                        &self.path,
                        format!("truncated: the header says {total} values, the file ends sooner"),
                    ));
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
        Ok(())
    }

    /// A Fortran-order matrix, read whole and returned row-major.
    fn read_transposed(&mut self, rows: usize, cols: usize) -> Result<Vec<f64>, DataError> {
        let mut columns = Vec::new();
        self.read_values(&mut columns, rows * cols)?;
        let mut out = vec![0.0; rows * cols];
        for (c, column) in columns.chunks_exact(rows.max(1)).enumerate() {
            for (r, &v) in column.iter().enumerate() {
                out[r * cols + c] = v;
            }
        }
        Ok(out)
    }
}

/// Writes a row-major `rows x cols` float64 `.npy` (C order).
pub fn write_f64_matrix_npy(
    path: &Path,
    rows: usize,
    cols: usize,
    values: &[f64],
) -> Result<(), DataError> {
    if values.len() != rows * cols {
        return Err(DataError::Shape {
            path: path.to_path_buf(),
            found: vec![values.len() as u64],
            expected: "rows x cols values",
        });
    }
    let file = File::create(path).map_err(io_err(path))?;
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&[rows as u64, cols as u64])
        .writer(BufWriter::new(file))
        .begin_nd()
        .map_err(io_err(path))?;
    writer
        .extend(values.iter().copied())
        .map_err(io_err(path))?;
    writer.finish().map_err(io_err(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_rows(m: &mut NpyMatrix, chunk: usize) -> Vec<f64> {
        let (mut out, mut buf) = (Vec::new(), Vec::new());
        while m.next_rows(&mut buf, chunk).unwrap() > 0 {
            out.extend_from_slice(&buf);
        }
        out
    }

    #[test]
    fn rows_come_back_in_any_chunking_and_either_order() {
        let dir = tempfile::tempdir().unwrap();
        let c = dir.path().join("c.npy");
        let values: Vec<f64> = (0..15).map(|i| i as f64 * 0.5 - 3.0).collect();
        write_f64_matrix_npy(&c, 5, 3, &values).unwrap();
        for chunk in [1, 2, 5, 100] {
            let mut m = NpyMatrix::open(&c).unwrap();
            assert_eq!(m.shape(), [5, 3]);
            assert_eq!(all_rows(&mut m, chunk), values, "chunk {chunk}");
        }
        // The same matrix in Fortran order (column by column), as numpy writes np.asfortranarray.
        let f = dir.path().join("f.npy");
        let file = File::create(&f).unwrap();
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&[5, 3])
            .order(Order::Fortran)
            .writer(BufWriter::new(file))
            .begin_nd()
            .unwrap();
        let v = &values;
        w.extend((0..3).flat_map(|c| (0..5).map(move |r| v[r * 3 + c])))
            .unwrap();
        w.finish().unwrap();
        let mut m = NpyMatrix::open(&f).unwrap();
        assert_eq!(all_rows(&mut m, 2), values);
    }

    #[test]
    fn other_shapes_and_dtypes_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("v.npy");
        crate::npy::write_f64_npy(&p, &[1.0, 2.0]).unwrap();
        let mut m = NpyMatrix::open(&p).unwrap();
        assert_eq!(m.shape(), [2]);
        let e = m.next_rows(&mut Vec::new(), 1).unwrap_err().to_string();
        assert!(e.contains("shape [2], expected a 2-D array"), "{e}");
        crate::npy::write_i64_npy(&p, &[1, 2]).unwrap();
        let e = NpyMatrix::open(&p).err().unwrap().to_string();
        assert!(e.contains("dtype <i8, expected float64"), "{e}");
    }
}
