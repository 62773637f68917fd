//! `.npy` files: 1-D float64 close series (whole or streamed by [`NpySource`]), `n x 6` int64
//! params, and the per-combo result arrays hullsweep writes.

use crate::error::{DataError, io_err};
use crate::source::Source;
use hullsweep_kernel::Combo;
use npyz::{DType, NpyFile, Order, WriterBuilder};
use std::fs::File;
use std::io::{BufReader, BufWriter, ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The six bytes every `.npy` file starts with.
const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// A file that does not start with [`MAGIC`], in words (the usual one is a CSV named `.npy`).
const NO_MAGIC: &str = "it does not start with the \\x93NUMPY magic; is it a CSV or text file? \
                        (a CSV is read from a .csv name)";

fn malformed(path: &Path, detail: String) -> DataError {
    DataError::Malformed {
        format: ".npy",
        path: path.to_path_buf(),
        detail,
    }
}

/// A file that ends inside its header (after `len` bytes, where that is known), in words.
fn cut_short(len: Option<u64>) -> String {
    match len {
        Some(len) => format!("the .npy header is cut short (the file ends after {len} bytes)"),
        None => "the .npy header is cut short".into(),
    }
}

/// What is wrong with a file that starts with `start` (its first bytes, up to 8) of `len` bytes
/// in all, in words, before the decoder says it its own way; `None` when it starts as a `.npy`.
fn bad_start(start: &[u8], len: u64) -> Option<String> {
    let n = start.len().min(MAGIC.len());
    if len == 0 {
        Some("the file is empty (0 bytes), not a .npy array".into())
    } else if start[..n] != MAGIC[..n] {
        Some(NO_MAGIC.into())
    } else if start.len() < 8 {
        Some(cut_short(Some(len)))
    } else {
        None
    }
}

/// Opens `path` as a `.npy` and reads its header, with a buffer of `capacity` bytes, saying in
/// words what is wrong with a file that is not one: empty, without the `\x93NUMPY` magic (a CSV
/// or text file under a `.npy` name), or with its header cut short. Every `.npy` reader of this
/// crate opens its file here, so each names the same problems the same way.
pub fn open_npy_file(path: &Path, capacity: usize) -> Result<NpyFile<BufReader<File>>, DataError> {
    let mut file = File::open(path).map_err(io_err(path))?;
    let meta = file.metadata().map_err(io_err(path))?;
    // A pipe or device cannot be read twice; the decoder's own words are mapped below instead.
    if meta.is_file() {
        let mut start = Vec::with_capacity(8);
        (&mut file)
            .take(8)
            .read_to_end(&mut start)
            .map_err(io_err(path))?;
        if let Some(detail) = bad_start(&start, meta.len()) {
            return Err(malformed(path, detail));
        }
        file.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
    }
    NpyFile::new(BufReader::with_capacity(capacity, file)).map_err(|e| {
        let detail = if e.kind() == ErrorKind::UnexpectedEof {
            cut_short(meta.is_file().then_some(meta.len()))
        } else if e.to_string().contains("magic not found") {
            NO_MAGIC.into()
        } else {
            format!("its header cannot be read: {e}")
        };
        malformed(path, detail)
    })
}

fn open_npy(path: &Path) -> Result<NpyFile<BufReader<File>>, DataError> {
    open_npy_file(path, 8 * 1024)
}

fn check_dtype(
    path: &Path,
    npy: &NpyFile<BufReader<File>>,
    kind: char,
    expected: &'static str,
) -> Result<(), DataError> {
    let ok = match npy.dtype() {
        DType::Plain(ts) => {
            let descr = ts.to_string();
            descr.len() == 3 && descr.ends_with(&format!("{kind}8")) && !descr.starts_with('|')
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(DataError::Dtype {
            path: path.to_path_buf(),
            found: match npy.dtype() {
                DType::Plain(ts) => ts.to_string(),
                other => other.descr(),
            },
            expected,
        })
    }
}

fn read_err(path: &Path) -> impl FnOnce(std::io::Error) -> DataError + '_ {
    move |e| malformed(path, e.to_string())
}

/// Reads a 1-D float64 `.npy` series: the header checked as [`NpySource::open`] checks it, then
/// the body read in one piece straight into the bars.
pub fn read_close_npy(path: &Path) -> Result<Vec<f64>, DataError> {
    NpySource::open(path)?.read_rest()
}

/// Reads an `n x 6` int64 `.npy` params array (C or Fortran order).
pub fn read_params_npy(path: &Path) -> Result<Vec<Combo>, DataError> {
    let npy = open_npy(path)?;
    check_dtype(path, &npy, 'i', "int64 (<i8)")?;
    let shape = npy.shape().to_vec();
    if shape.len() != 2 || shape[1] != 6 {
        return Err(DataError::Shape {
            path: path.to_path_buf(),
            found: shape,
            expected: "n x 6 (one row of six windows per combo)",
        });
    }
    let order = npy.order();
    let flat = npy.into_vec::<i64>().map_err(read_err(path))?;
    let n = shape[0] as usize;
    Ok((0..n)
        .map(|r| {
            std::array::from_fn(|c| match order {
                Order::C => flat[r * 6 + c],
                Order::Fortran => flat[c * n + r],
            })
        })
        .collect())
}

fn write_npy<T: npyz::AutoSerialize + Copy>(
    path: &Path,
    shape: &[u64],
    values: impl IntoIterator<Item = T>,
) -> Result<(), DataError> {
    let file = File::create(path).map_err(io_err(path))?;
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(BufWriter::new(file))
        .begin_nd()
        .map_err(io_err(path))?;
    writer.extend(values).map_err(io_err(path))?;
    writer.finish().map_err(io_err(path))
}

/// Writes a 1-D float64 `.npy`.
pub fn write_f64_npy(path: &Path, values: &[f64]) -> Result<(), DataError> {
    write_npy(path, &[values.len() as u64], values.iter().copied())
}

/// Writes a 1-D int64 `.npy`.
pub fn write_i64_npy(path: &Path, values: &[i64]) -> Result<(), DataError> {
    write_npy(path, &[values.len() as u64], values.iter().copied())
}

/// Writes an `n x 6` int64 `.npy` params array.
pub fn write_params_npy(path: &Path, params: &[Combo]) -> Result<(), DataError> {
    write_npy(
        path,
        &[params.len() as u64, 6],
        params.iter().flat_map(|c| c.iter().copied()),
    )
}

/// A 1-D float64 `.npy`, read straight from the file after the header (little- or big-endian).
pub struct NpySource {
    path: PathBuf,
    reader: BufReader<File>,
    big_endian: bool,
    total: u64,
    done: u64,
}

impl NpySource {
    /// Opens the file and checks its header: float64, one dimension.
    pub fn open(path: &Path) -> Result<Self, DataError> {
        let npy = open_npy_file(path, 1 << 20)?;
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
        let mut src = NpySource {
            path: path.to_path_buf(),
            reader: npy.into_inner(),
            big_endian: descr.starts_with('>'),
            total,
            done: 0,
        };
        // A file shorter than its header says is refused here, before a sweep announces or
        // starts on the header's length (or a whole read allocates whatever it claims); a pipe
        // is found short when it ends.
        if let Ok(meta) = src.reader.get_ref().metadata()
            && meta.is_file()
        {
            let at = src.reader.stream_position().map_err(io_err(path))?;
            let held = meta.len().saturating_sub(at) / 8;
            if held < total {
                return Err(src.truncated(held));
            }
        }
        Ok(src)
    }

    /// The bars not read yet, all of them, in one vector.
    pub fn read_rest(mut self) -> Result<Vec<f64>, DataError> {
        let rest = usize::try_from(self.total - self.done).map_err(|_| {
            malformed(
                &self.path,
                format!("{} bars do not fit in this machine's memory", self.total),
            )
        })?;
        // Zeroed by the allocator, not written: fresh pages are zero, so the read below is the
        // first write to them (a `resize` would fault them all in once more for its zeros).
        let mut close = vec![0.0; rest];
        self.fill(&mut close)?;
        Ok(close)
    }

    /// The error of a body that ends `read` bars after the bars already read.
    fn truncated(&self, read: u64) -> DataError {
        malformed(
            &self.path,
            format!(
                "truncated: the header says {} bars, the file ends after {}",
                self.total,
                self.done + read
            ),
        )
    }

    /// Reads the next `bars.len()` bars into `bars`: their memory is the file's bytes, swapped
    /// in place when the file's byte order is not this machine's.
    fn fill(&mut self, bars: &mut [f64]) -> Result<(), DataError> {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(bars);
        let mut got = 0;
        while got < bytes.len() {
            match self.reader.read(&mut bytes[got..]) {
                Ok(0) => return Err(self.truncated(got as u64 / 8)),
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_err(&self.path)(e)),
            }
        }
        if self.big_endian != cfg!(target_endian = "big") {
            for x in bars.iter_mut() {
                *x = f64::from_bits(x.to_bits().swap_bytes());
            }
        }
        self.done += bars.len() as u64;
        Ok(())
    }
}

impl Source for NpySource {
    fn next_chunk_after(
        &mut self,
        buf: &mut Vec<f64>,
        keep: usize,
        max: usize,
    ) -> Result<bool, DataError> {
        buf.truncate(keep);
        let want = (self.total - self.done).min(max as u64) as usize;
        if want == 0 {
            return Ok(false);
        }
        buf.resize(keep + want, 0.0);
        self.fill(&mut buf[keep..])?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_endian_files_read_in_pieces_to_the_same_bits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("be.npy");
        let close: Vec<f64> = (0..1000).map(|i| 100.0 + (i as f64 * 0.37).sin()).collect();
        let mut dict = "{'descr': '>f8', 'fortran_order': False, 'shape': (1000,), }".to_string();
        // Version 1.0: magic, version, u16 header length, header padded to 64 with '\n' last.
        while !(10 + dict.len() + 1).is_multiple_of(64) {
            dict.push(' ');
        }
        dict.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        bytes.extend_from_slice(dict.as_bytes());
        for x in &close {
            bytes.extend_from_slice(&x.to_be_bytes());
        }
        std::fs::write(&p, bytes).unwrap();
        assert_eq!(read_close_npy(&p).unwrap(), close);
        let mut src = NpySource::open(&p).unwrap();
        let mut buf = vec![-1.0; 3];
        let mut back = Vec::new();
        while src.next_chunk_after(&mut buf, 3, 333).unwrap() {
            assert_eq!(buf[..3], [-1.0; 3]);
            back.extend_from_slice(&buf[3..]);
        }
        assert_eq!(back, close);
    }

    #[test]
    fn npy_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.npy");
        let close = [1.0, f64::NAN, 1.1, 0.3];
        write_f64_npy(&p, &close).unwrap();
        let back = read_close_npy(&p).unwrap();
        assert_eq!(
            back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            close.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        let q = dir.path().join("p.npy");
        let params = vec![[6, 3, 2, 6, 3, 2], [8, 4, 2, 8, 4, 2]];
        write_params_npy(&q, &params).unwrap();
        assert_eq!(read_params_npy(&q).unwrap(), params);
        // Wrong dtype and shape are refused by name.
        let e = read_close_npy(&q).unwrap_err().to_string();
        assert!(e.contains("dtype <i8"), "{e}");
        let e = read_params_npy(&p).unwrap_err().to_string();
        assert!(e.contains("dtype <f8"), "{e}");
        let r = dir.path().join("r.npy");
        write_i64_npy(&r, &[1, 2, 3]).unwrap();
        let e = read_params_npy(&r).unwrap_err().to_string();
        assert!(e.contains("shape [3]"), "{e}");
    }
}
