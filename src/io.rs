//! Reading and writing the arrays hullsweep exchanges: close series (`.npy` or CSV), params
//! (`n x 6` int64 `.npy`) and per-combo results. Every error names the file and the bad value.

use crate::Combo;
use npyz::{DType, NpyFile, Order, WriterBuilder};
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

/// Why a data or params file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a valid .npy file: {detail}")]
    Malformed { path: PathBuf, detail: String },
    #[error("{path}: dtype {found}, expected {expected}")]
    Dtype {
        path: PathBuf,
        found: String,
        expected: &'static str,
    },
    #[error("{path}: shape {found:?}, expected {expected}")]
    Shape {
        path: PathBuf,
        found: Vec<u64>,
        expected: &'static str,
    },
    #[error("{path}: unknown file type; expected a .npy or .csv file")]
    UnknownType { path: PathBuf },
    #[error("{path}: {detail}")]
    Csv { path: PathBuf, detail: String },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DataError + '_ {
    move |source| DataError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn open_npy(path: &Path) -> Result<NpyFile<BufReader<File>>, DataError> {
    let file = File::open(path).map_err(io_err(path))?;
    NpyFile::new(BufReader::new(file)).map_err(|e| DataError::Malformed {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })
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
    move |e| DataError::Malformed {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Reads a 1-D float64 `.npy` series.
pub fn read_close_npy(path: &Path) -> Result<Vec<f64>, DataError> {
    let npy = open_npy(path)?;
    check_dtype(path, &npy, 'f', "float64 (<f8)")?;
    if npy.shape().len() != 1 {
        return Err(DataError::Shape {
            path: path.to_path_buf(),
            found: npy.shape().to_vec(),
            expected: "a 1-D array",
        });
    }
    npy.into_vec::<f64>().map_err(read_err(path))
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

/// Reads one column of a CSV file with a header row. An empty cell is a missing bar (NaN).
///
/// Without `column`, a file with one column uses it, and otherwise a column named `close`.
pub fn read_close_csv(path: &Path, column: Option<&str>) -> Result<Vec<f64>, DataError> {
    let csv_err = |detail: String| DataError::Csv {
        path: path.to_path_buf(),
        detail,
    };
    let file = File::open(path).map_err(io_err(path))?;
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(BufReader::new(file));
    let headers = reader
        .headers()
        .map_err(|e| csv_err(format!("cannot read the header row: {e}")))?
        .clone();
    let index = match column {
        Some(name) => headers.iter().position(|h| h == name).ok_or_else(|| {
            csv_err(format!(
                "no column named {name:?}; the columns are {:?}",
                headers.iter().collect::<Vec<_>>()
            ))
        })?,
        None if headers.len() == 1 => 0,
        None => headers.iter().position(|h| h == "close").ok_or_else(|| {
            csv_err(format!(
                "several columns and none named \"close\"; choose one with --column (the columns are {:?})",
                headers.iter().collect::<Vec<_>>()
            ))
        })?,
    };
    let name = headers.get(index).unwrap_or("").to_string();
    let mut close = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| csv_err(format!("malformed CSV: {e}")))?;
        let line = record.position().map_or(0, |p| p.line());
        let cell = record
            .get(index)
            .ok_or_else(|| csv_err(format!("line {line} has no cell in column {name:?}")))?;
        if cell.is_empty() {
            close.push(f64::NAN);
            continue;
        }
        let value = cell.parse::<f64>().map_err(|_| {
            csv_err(format!(
                "line {line}, column {name:?}: {cell:?} is not a number"
            ))
        })?;
        close.push(value);
    }
    Ok(close)
}

/// Reads a close series from `.npy` or `.csv`, chosen by extension.
pub fn read_close(path: &Path, column: Option<&str>) -> Result<Vec<f64>, DataError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("npy") => read_close_npy(path),
        Some(e) if e.eq_ignore_ascii_case("csv") => read_close_csv(path, column),
        _ => Err(DataError::UnknownType {
            path: path.to_path_buf(),
        }),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn csv_columns_and_empty_cells() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.csv");
        std::fs::write(&p, "date,close,open\n1,100.5,1\n2,,1\n3,101,1\n").unwrap();
        let c = read_close(&p, None).unwrap();
        assert_eq!(c[0], 100.5);
        assert!(c[1].is_nan());
        assert_eq!(read_close(&p, Some("open")).unwrap(), vec![1.0; 3]);
        let e = read_close(&p, Some("high")).unwrap_err().to_string();
        assert!(e.contains("\"high\""), "{e}");
        std::fs::write(&p, "close\n1\nabc\n").unwrap();
        let e = read_close(&p, None).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("\"abc\""), "{e}");
    }
}
