//! CSV close series read line by line: the header's delimiter and column ([`CsvLayout`]), one
//! cell per row, and [`CsvSource`], the streaming reader `--data` and `read_close_csv` share.

use crate::error::{DataError, io_err};
use crate::source::{CHUNK_BARS, Source};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// What the header row of a CSV says: its delimiter, its width and where the close is.
#[derive(Clone, Debug)]
pub struct CsvLayout {
    /// `,`, or `;` or a tab when the header has no comma but one of those.
    pub delimiter: u8,
    /// Cells per row.
    pub width: usize,
    /// The close's cell.
    pub index: usize,
    /// The close's column name, as the header spells it.
    pub name: String,
}

fn delimiter_name(d: u8) -> &'static str {
    match d {
        b';' => "semicolon",
        b'\t' => "tab",
        _ => "comma",
    }
}

/// Reads the header row (`header`, without its line ending) and finds the column: `column` by
/// exact name, else by a case-insensitive match when only one column matches; without
/// `column`, the only column or the one named `close` (in any case).
pub(crate) fn csv_layout(
    path: &Path,
    header: &[u8],
    file_empty: bool,
    column: Option<&str>,
) -> Result<CsvLayout, DataError> {
    let csv_err = |detail: String| DataError::Csv {
        path: path.to_path_buf(),
        detail,
    };
    if file_empty {
        return Err(csv_err(
            "the file is empty; expected a header row, then one row per bar".into(),
        ));
    }
    if header.is_empty() {
        return Err(csv_err("line 1 is blank; expected the header row".into()));
    }
    if header.contains(&b'\r') {
        return Err(csv_err(
            "line 1: a carriage return inside the line; expected \\n or \\r\\n line endings".into(),
        ));
    }
    // A header without a comma but with semicolons (or tabs) is that delimiter's file, as
    // spreadsheets in decimal-comma locales write it.
    let delimiter = if header.contains(&b',') {
        b','
    } else if header.contains(&b';') {
        b';'
    } else if header.contains(&b'\t') {
        b'\t'
    } else {
        b','
    };
    let headers = ::csv::ReaderBuilder::new()
        .trim(::csv::Trim::All)
        .delimiter(delimiter)
        .from_reader(header)
        .headers()
        .map_err(|e| csv_err(format!("cannot read the header row: {e}")))?
        .clone();
    let names: Vec<&str> = headers.iter().collect();
    let by_name = |name: &str| -> Result<Option<usize>, DataError> {
        if let Some(i) = names.iter().position(|h| *h == name) {
            return Ok(Some(i));
        }
        let folded: Vec<usize> = (0..names.len())
            .filter(|&i| names[i].eq_ignore_ascii_case(name))
            .collect();
        match folded[..] {
            [] => Ok(None),
            [i] => Ok(Some(i)),
            _ => Err(csv_err(format!(
                "several columns match {name:?} ignoring case: {:?}; give the exact name with --column",
                folded.iter().map(|&i| names[i]).collect::<Vec<_>>()
            ))),
        }
    };
    let index = match column {
        Some(name) => by_name(name)?.ok_or_else(|| {
            csv_err(format!(
                "no column named {name:?}; the columns are {names:?} ({} separated)",
                delimiter_name(delimiter)
            ))
        })?,
        None if names.len() == 1 => 0,
        None => by_name("close")?.ok_or_else(|| {
            csv_err(format!(
                "several columns and none named \"close\"; choose one with --column (the columns are {names:?})"
            ))
        })?,
    };
    Ok(CsvLayout {
        delimiter,
        width: names.len(),
        index,
        name: names[index].to_string(),
    })
}

/// The close of one data row (`line`, without its line ending, not blank): an empty cell is a
/// missing bar (NaN). `line_no` and `bar` name the row in errors.
pub(crate) fn parse_csv_cell(
    path: &Path,
    layout: &CsvLayout,
    line: &[u8],
    line_no: u64,
    bar: u64,
) -> Result<f64, DataError> {
    let csv_err = |detail: String| DataError::Csv {
        path: path.to_path_buf(),
        detail,
    };
    let name = &layout.name;
    let not_utf8 = || csv_err(format!("line {line_no} is not UTF-8 text"));
    let width_err = |len: usize| {
        let mut detail = format!(
            "line {line_no} has {len} cells; the header has {}",
            layout.width
        );
        for other in [b',', b';', b'\t'] {
            if other != layout.delimiter && line.contains(&other) && len == 1 {
                detail += &format!(
                    " (the header is {} separated; this line has {}s)",
                    delimiter_name(layout.delimiter),
                    delimiter_name(other)
                );
            }
        }
        csv_err(detail)
    };
    let cell: std::borrow::Cow<'_, str> = if line.contains(&b'"') {
        // Quoted cells: the csv crate's parser, for this line alone.
        let mut reader = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .trim(::csv::Trim::All)
            .delimiter(layout.delimiter)
            .from_reader(line);
        let mut record = ::csv::StringRecord::new();
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => return Err(width_err(0)),
            Err(e) => return Err(csv_err(format!("line {line_no}: malformed CSV: {e}"))),
        }
        if record.len() != layout.width {
            return Err(width_err(record.len()));
        }
        record.get(layout.index).unwrap_or("").to_string().into()
    } else {
        let len = line.iter().filter(|&&b| b == layout.delimiter).count() + 1;
        if len != layout.width {
            return Err(width_err(len));
        }
        let raw = line
            .split(|&b| b == layout.delimiter)
            .nth(layout.index)
            .unwrap_or(b"");
        std::str::from_utf8(raw)
            .map_err(|_| not_utf8())?
            .trim()
            .into()
    };
    if cell.is_empty() {
        return Ok(f64::NAN);
    }
    cell.parse::<f64>().map_err(|_| {
        csv_err(format!(
            "{cell:?} at index {bar} (line {line_no}, column {name:?}) is not a number"
        ))
    })
}

/// One column of a CSV file, read line by line with the rules of [`read_close_csv`].
pub struct CsvSource {
    path: PathBuf,
    reader: BufReader<File>,
    layout: CsvLayout,
    /// 1-based number of the last line read.
    line: u64,
    /// Bars returned before the current chunk.
    bars_before: u64,
    /// File line of each bar of the current chunk.
    lines: Vec<u64>,
    /// Blank lines seen after the last row (several columns): fine at the end of the file,
    /// an error if a row follows.
    pending_blank: Option<u64>,
    text: Vec<u8>,
    done: bool,
    size: u64,
}

impl CsvSource {
    /// Opens the file and reads its header (delimiter and column resolved here).
    pub fn open(path: &Path, column: Option<&str>) -> Result<Self, DataError> {
        let file = File::open(path).map_err(io_err(path))?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut text = Vec::new();
        reader.read_until(b'\n', &mut text).map_err(io_err(path))?;
        let header = trim_eol(&text).to_vec();
        let layout = csv_layout(path, &header, text.is_empty(), column)?;
        Ok(CsvSource {
            path: path.to_path_buf(),
            reader,
            layout,
            line: 1,
            bars_before: 0,
            lines: Vec::new(),
            pending_blank: None,
            text,
            done: false,
            size,
        })
    }

    fn csv_err(&self, detail: String) -> DataError {
        DataError::Csv {
            path: self.path.clone(),
            detail,
        }
    }

    /// The file's size in bytes (progress by bytes when the bar count is unknown).
    pub fn size(&self) -> u64 {
        self.size
    }
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl Source for CsvSource {
    fn next_chunk_after(
        &mut self,
        buf: &mut Vec<f64>,
        keep: usize,
        max: usize,
    ) -> Result<bool, DataError> {
        buf.truncate(keep);
        self.bars_before += self.lines.len() as u64;
        self.lines.clear();
        while !self.done && buf.len() - keep < max {
            self.text.clear();
            let n = self
                .reader
                .read_until(b'\n', &mut self.text)
                .map_err(io_err(&self.path))?;
            if n == 0 {
                self.done = true;
                break;
            }
            self.line += 1;
            let line = trim_eol(&self.text);
            if line.contains(&b'\r') {
                return Err(self.csv_err(format!(
                    "line {}: a carriage return inside the line; expected \\n or \\r\\n line endings",
                    self.line
                )));
            }
            let bar = self.bars_before + (buf.len() - keep) as u64;
            let value = if line.is_empty() {
                if self.layout.width > 1 {
                    // No cell, so no bar; refused below if a row follows.
                    self.pending_blank.get_or_insert(self.line);
                    continue;
                }
                f64::NAN
            } else {
                if let Some(blank) = self.pending_blank {
                    return Err(self.csv_err(format!(
                        "line {blank} is blank; with several columns a missing bar is a row with \
                         an empty cell in column {:?}: remove the line or give it its cells",
                        self.layout.name
                    )));
                }
                parse_csv_cell(&self.path, &self.layout, line, self.line, bar)?
            };
            buf.push(value);
            self.lines.push(self.line);
        }
        Ok(buf.len() > keep)
    }

    fn len_hint(&self) -> Option<u64> {
        None
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn column(&self) -> Option<&str> {
        Some(&self.layout.name)
    }

    fn line_of(&self, index: u64) -> Option<u64> {
        let k = index.checked_sub(self.bars_before)?;
        self.lines.get(usize::try_from(k).ok()?).copied()
    }
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
pub(crate) fn read_csv_series(
    path: &Path,
    column: Option<&str>,
) -> Result<(Vec<f64>, Vec<u64>), DataError> {
    let mut source = CsvSource::open(path, column)?;
    let (mut close, mut lines) = (Vec::new(), Vec::new());
    let mut buf = Vec::new();
    while source.next_chunk(&mut buf, CHUNK_BARS)? {
        let first = close.len() as u64;
        lines.extend((0..buf.len() as u64).map(|k| source.line_of(first + k).unwrap_or(0)));
        close.extend_from_slice(&buf);
    }
    Ok((close, lines))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(read_close_csv(&p, Some("close")).unwrap().len(), bars.len());
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
