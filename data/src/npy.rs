//! Reading and writing the arrays hullsweep exchanges: close series (`.npy` or CSV), params
//! (`n x 6` int64 `.npy`) and per-combo results. Every error names the file and the bad value.

use crate::{Combo, KernelError};
use npyz::{DType, NpyFile, Order, WriterBuilder};
use std::fs::File;
use std::io::{BufReader, BufWriter};
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

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> DataError + '_ {
    move |error| DataError::Io {
        path: path.to_path_buf(),
        error,
    }
}

fn open_npy(path: &Path) -> Result<NpyFile<BufReader<File>>, DataError> {
    let file = File::open(path).map_err(io_err(path))?;
    NpyFile::new(BufReader::new(file)).map_err(|e| DataError::Malformed {
        format: ".npy",
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
        format: ".npy",
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

/// Reads one column of a CSV file with a header row: one line after the header is one bar.
///
/// An empty cell is a missing bar (NaN); in a one-column file that is an empty line, so every
/// line there is a bar. In a file with several columns a blank line between rows is refused (it
/// holds no cell, so it is no bar, yet dropping it could shift the series) and blank lines after
/// the last row are ignored. Line endings are `\n` or `\r\n`. Without `column`, a file with one
/// column uses it, and otherwise a column named `close`.
pub fn read_close_csv(path: &Path, column: Option<&str>) -> Result<Vec<f64>, DataError> {
    Ok(read_csv_series(path, column)?.0)
}

/// The bars of a CSV column and the 1-based file line of each.
fn read_csv_series(path: &Path, column: Option<&str>) -> Result<(Vec<f64>, Vec<u64>), DataError> {
    use crate::source::Source;
    let mut source = crate::csv_io::CsvSource::open(path, column)?;
    let (mut close, mut lines) = (Vec::new(), Vec::new());
    let mut buf = Vec::new();
    while source.next_chunk(&mut buf, crate::source::CHUNK_BARS)? {
        let first = close.len() as u64;
        lines.extend((0..buf.len() as u64).map(|k| source.line_of(first + k).unwrap_or(0)));
        close.extend_from_slice(&buf);
    }
    Ok((close, lines))
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
    match crate::kernel::validate_close(&close) {
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
        Some(e) if e.eq_ignore_ascii_case("parquet") => {
            crate::source::read_all(crate::source::open(path, column)?.as_mut())
        }
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

    /// One bar of a test file: `None` is an empty cell.
    type Bar = Option<f64>;

    /// Writes `bars` as a CSV (the close in column `at` of `width` columns) and checks that
    /// reading it gives the same number of bars and every value, NaN for each empty cell.
    fn round_trip(bars: &[Bar], width: usize, at: usize, eol: &str, extra_tail: &str) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.csv");
        let header: Vec<String> = (0..width)
            .map(|c| {
                if c == at {
                    "close".into()
                } else {
                    format!("x{c}")
                }
            })
            .collect();
        let mut text = header.join(",") + eol;
        for (i, bar) in bars.iter().enumerate() {
            let cells: Vec<String> = (0..width)
                .map(|c| match (c == at, bar) {
                    (true, Some(v)) => v.to_string(),
                    (true, None) => String::new(),
                    (false, _) => i.to_string(),
                })
                .collect();
            text += &(cells.join(",") + eol);
        }
        text += extra_tail;
        std::fs::write(&p, &text).unwrap();
        let (got, lines) = read_csv_series(&p, None).unwrap();
        assert_eq!(got.len(), bars.len(), "bar count of {text:?}");
        for (i, (g, want)) in got.iter().zip(bars).enumerate() {
            match want {
                Some(v) => assert_eq!(g.to_bits(), v.to_bits(), "bar {i} of {text:?}"),
                None => assert!(g.is_nan(), "bar {i} of {text:?} should be NaN, got {g}"),
            }
        }
        let want_lines: Vec<u64> = (2..2 + bars.len() as u64).collect();
        assert_eq!(lines, want_lines, "lines of {text:?}");
        assert_eq!(read_close(&p, Some("close")).unwrap().len(), bars.len());
    }

    #[test]
    fn csv_shapes_keep_every_bar_in_place() {
        let values = [100.5, 0.000001, 1234567.891, 99.0, 101.25];
        let full: Vec<Bar> = values.iter().copied().map(Some).collect();
        let mut shapes: Vec<Vec<Bar>> = vec![full.clone(), vec![None], vec![None, None]];
        for i in [0, 2, values.len() - 1] {
            let mut bars = full.clone();
            bars[i] = None; // empty cell at the start, in the middle, at the end
            shapes.push(bars);
        }
        shapes.push(vec![None, Some(1.0), None, None, Some(2.0), None]);
        for bars in &shapes {
            for eol in ["\n", "\r\n"] {
                for (width, at) in [(1, 0), (2, 1), (3, 0), (3, 2)] {
                    round_trip(bars, width, at, eol, "");
                    // In a file with several columns blank lines after the last row hold no
                    // cell, so they are no bars.
                    if width > 1 {
                        round_trip(bars, width, at, eol, eol);
                        round_trip(bars, width, at, eol, &format!("{eol}{eol}"));
                    }
                }
            }
        }
        // Header only: no bars.
        for eol in ["\n", "\r\n", ""] {
            round_trip(&[], 1, 0, eol, "");
            round_trip(&[], 3, 1, eol, "");
        }
    }

    fn read_text(text: &str, column: Option<&str>) -> Result<(Vec<f64>, Vec<u64>), String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.csv");
        std::fs::write(&p, text).unwrap();
        read_csv_series(&p, column).map_err(|e| e.to_string())
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn csv_one_column_empty_lines_are_missing_bars() {
        // What pandas writes for [1, NaN, 2, NaN]: the last line is an empty cell.
        let (c, lines) = read_text("close\n1.0\n\n2.0\n\n", None).unwrap();
        assert_eq!(bits(&c), bits(&[1.0, f64::NAN, 2.0, f64::NAN]));
        assert_eq!(lines, [2, 3, 4, 5]);
        // The same with CRLF, without a final line ending, and with NaN written out.
        let (c, _) = read_text("close\r\n1.0\r\n\r\n2.0\r\n\r\n", None).unwrap();
        assert_eq!(bits(&c), bits(&[1.0, f64::NAN, 2.0, f64::NAN]));
        let (c, _) = read_text("close\n1.0\n\n2.0", None).unwrap();
        assert_eq!(bits(&c), bits(&[1.0, f64::NAN, 2.0]));
        let (c, _) = read_text("close\n1.0\nNaN\n2.0\n", None).unwrap();
        assert_eq!(bits(&c), bits(&[1.0, f64::NAN, 2.0]));
        // A cell of spaces is an empty cell too.
        let (c, _) = read_text("close\n1.0\n  \n2.0\n", None).unwrap();
        assert_eq!(bits(&c), bits(&[1.0, f64::NAN, 2.0]));
    }

    #[test]
    fn csv_columns_and_bad_files_are_named() {
        let text = "date,close,open\n1,100.5,1\n2,,1\n3,101,1\n";
        let (c, _) = read_text(text, None).unwrap();
        assert_eq!(bits(&c), bits(&[100.5, f64::NAN, 101.0]));
        assert_eq!(read_text(text, Some("open")).unwrap().0, vec![1.0; 3]);
        let e = read_text(text, Some("high")).unwrap_err();
        assert!(e.contains("\"high\"") && e.contains("\"open\""), "{e}");
        let e = read_text("date,open\n1,2\n", None).unwrap_err();
        assert!(e.contains("--column"), "{e}");
        // A bad cell is named by its bar index and its file line, CRLF or not.
        for eol in ["\n", "\r\n"] {
            let e = read_text(&format!("close{eol}1{eol}{eol}abc{eol}"), None).unwrap_err();
            assert!(
                e.contains("\"abc\" at index 2 (line 4, column \"close\")"),
                "{e}"
            );
        }
        // A blank line between rows of several columns could be a lost bar: refused by line.
        let e = read_text("date,close\n1,2\n\n3,4\n", None).unwrap_err();
        assert!(e.contains("line 3 is blank"), "{e}");
        let e = read_text("date,close\n1,2\n3\n", None).unwrap_err();
        assert!(e.contains("line 3 has 1 cells; the header has 2"), "{e}");
        let e = read_text("", None).unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = read_text("\nclose\n1\n", None).unwrap_err();
        assert!(e.contains("line 1 is blank"), "{e}");
        let e = read_text("close\r1\r2\r", None).unwrap_err();
        assert!(e.contains("carriage return"), "{e}");
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

    #[test]
    fn csv_column_case_and_delimiters() {
        // `--column close` finds `Close` when no other column matches ignoring case.
        let text = "Date,Close\n1,100\n2,101\n";
        assert_eq!(read_text(text, Some("close")).unwrap().0, [100.0, 101.0]);
        assert_eq!(read_text(text, None).unwrap().0, [100.0, 101.0]);
        let e = read_text("close,CLOSE\n1,2\n", Some("Close")).unwrap_err();
        assert!(
            e.contains("several columns match") && e.contains("CLOSE"),
            "{e}"
        );
        // An exact name wins over case-insensitive ones.
        assert_eq!(
            read_text("close,CLOSE\n1,2\n", Some("CLOSE")).unwrap().0,
            [2.0]
        );
        // Semicolon- and tab-separated files are detected from the header.
        for sep in [";", "\t"] {
            let text = format!("date{sep}close\n1{sep}100.5\n2{sep}\n");
            let (c, lines) = read_text(&text, None).unwrap();
            assert_eq!(bits(&c), bits(&[100.5, f64::NAN]));
            assert_eq!(lines, [2, 3]);
        }
        // A row in another delimiter than the header is named.
        let e = read_text("date,close\n1;100\n", None).unwrap_err();
        assert!(
            e.contains("line 2 has 1 cells")
                && e.contains("comma separated")
                && e.contains("semicolon"),
            "{e}"
        );
        let e = read_text("date;open\n1;2\n", Some("high")).unwrap_err();
        assert!(e.contains("semicolon separated"), "{e}");
        // Quoted cells still parse.
        let (c, _) = read_text("date,close\n\"1,2\",\"100\"\n", None).unwrap();
        assert_eq!(c, [100.0]);
    }
}
