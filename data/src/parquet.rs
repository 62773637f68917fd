//! Parquet close series: a float64 column read row group by row group (a [`Source`]), and a
//! series written in row groups, with the `parquet` crate of Apache arrow-rs (no Arrow layer).

use crate::error::{DataError, io_err};
use crate::source::Source;
use parquet::basic::{Compression, Repetition, Type as PhysicalType};
use parquet::column::reader::ColumnReader;
use parquet::data_type::DoubleType;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One float64 column of a Parquet file; each chunk is one row group. A null is a missing bar
/// (NaN), as an empty CSV cell is.
pub struct ParquetSource {
    path: PathBuf,
    reader: SerializedFileReader<File>,
    index: usize,
    name: String,
    nullable: bool,
    next_group: usize,
    total: u64,
    values: Vec<f64>,
    def: Vec<i16>,
}

fn bad(path: &Path, detail: impl std::fmt::Display) -> DataError {
    DataError::Malformed {
        format: "Parquet",
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}

impl ParquetSource {
    /// Opens the file and finds the column: `column` by exact name or, when only one matches,
    /// in any case; without `column` the only column, or the one named `close`.
    pub fn open(path: &Path, column: Option<&str>) -> Result<Self, DataError> {
        let file = File::open(path).map_err(io_err(path))?;
        let reader = SerializedFileReader::new(file)
            .map_err(|e| bad(path, format!("not a readable Parquet file: {e}")))?;
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        let names: Vec<String> = schema.columns().iter().map(|c| c.path().string()).collect();
        let find = |want: &str| -> Result<Option<usize>, DataError> {
            if let Some(i) = names.iter().position(|n| n == want) {
                return Ok(Some(i));
            }
            let folded: Vec<usize> = (0..names.len())
                .filter(|&i| names[i].eq_ignore_ascii_case(want))
                .collect();
            match folded[..] {
                [] => Ok(None),
                [i] => Ok(Some(i)),
                _ => Err(bad(
                    path,
                    format!("several columns match {want:?} ignoring case: {names:?}"),
                )),
            }
        };
        let index = match column {
            Some(want) => find(want)?.ok_or_else(|| {
                bad(
                    path,
                    format!("no column named {want:?}; the columns are {names:?}"),
                )
            })?,
            None if names.len() == 1 => 0,
            None => find("close")?.ok_or_else(|| {
                bad(
                    path,
                    format!(
                        "several columns and none named \"close\"; choose one with --column (the \
                         columns are {names:?})"
                    ),
                )
            })?,
        };
        let desc = schema.column(index);
        let name = names[index].clone();
        if desc.physical_type() != PhysicalType::DOUBLE || desc.max_rep_level() > 0 {
            return Err(DataError::Dtype {
                path: path.to_path_buf(),
                found: format!(
                    "{:?}{} in column {name:?}",
                    desc.physical_type(),
                    if desc.max_rep_level() > 0 {
                        " (repeated)"
                    } else {
                        ""
                    }
                ),
                expected: "a float64 (DOUBLE) column",
            });
        }
        let total = reader.metadata().file_metadata().num_rows().max(0) as u64;
        Ok(ParquetSource {
            path: path.to_path_buf(),
            nullable: desc.max_def_level() > 0,
            reader,
            index,
            name,
            next_group: 0,
            total,
            values: Vec::new(),
            def: Vec::new(),
        })
    }
}

impl Source for ParquetSource {
    /// The next row group, whatever `max` (a row group is the unit Parquet compresses).
    fn next_chunk_after(
        &mut self,
        buf: &mut Vec<f64>,
        keep: usize,
        _max: usize,
    ) -> Result<bool, DataError> {
        buf.truncate(keep);
        while buf.len() == keep {
            if self.next_group >= self.reader.num_row_groups() {
                return Ok(false);
            }
            let g = self.next_group;
            self.next_group += 1;
            let path = self.path.clone();
            let at = |e: parquet::errors::ParquetError| {
                bad(&path, format!("row group {g}, column {:?}: {e}", self.name))
            };
            let group = self.reader.get_row_group(g).map_err(at)?;
            let rows = usize::try_from(group.metadata().num_rows().max(0)).unwrap_or(0);
            let ColumnReader::DoubleColumnReader(mut col) =
                group.get_column_reader(self.index).map_err(at)?
            else {
                return Err(bad(&self.path, "the column is not float64"));
            };
            self.values.clear();
            self.def.clear();
            let def = self.nullable.then_some(&mut self.def);
            let (records, _, _) = col
                .read_records(rows, def, None, &mut self.values)
                .map_err(at)?;
            if records != rows {
                return Err(bad(
                    &self.path,
                    format!(
                        "truncated: row group {g} says {rows} rows, column {:?} holds {records}",
                        self.name
                    ),
                ));
            }
            if self.nullable {
                // Values come packed (nulls have none): spread them, NaN at each null.
                let mut values = self.values.iter();
                buf.extend(self.def.iter().map(|&d| match d {
                    0 => f64::NAN,
                    _ => *values.next().unwrap_or(&f64::NAN),
                }));
            } else {
                buf.extend_from_slice(&self.values);
            }
        }
        Ok(true)
    }

    fn len_hint(&self) -> Option<u64> {
        Some(self.total)
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn column(&self) -> Option<&str> {
        Some(&self.name)
    }

    fn line_of(&self, _: u64) -> Option<u64> {
        None
    }
}

/// Writes a series as one required float64 column `close`, one row group per call of `put`.
pub struct ParquetWriter<'a> {
    writer: SerializedFileWriter<&'a mut File>,
}

impl<'a> ParquetWriter<'a> {
    /// A writer into `file` (snappy-compressed pages).
    pub fn new(file: &'a mut File) -> parquet::errors::Result<Self> {
        let close = Type::primitive_type_builder("close", PhysicalType::DOUBLE)
            .with_repetition(Repetition::REQUIRED)
            .build()?;
        let schema = Type::group_type_builder("schema")
            .with_fields(vec![Arc::new(close)])
            .build()?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        Ok(ParquetWriter {
            writer: SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props))?,
        })
    }

    /// Appends `values` as one row group.
    pub fn put(&mut self, values: &[f64]) -> parquet::errors::Result<()> {
        let mut group = self.writer.next_row_group()?;
        if let Some(mut col) = group.next_column()? {
            col.typed::<DoubleType>().write_batch(values, None, None)?;
            col.close()?;
        }
        group.close()?;
        Ok(())
    }

    /// Writes the footer.
    pub fn finish(self) -> parquet::errors::Result<()> {
        self.writer.close().map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::read_all;

    #[test]
    fn round_trip_in_row_groups_and_named_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.parquet");
        let close: Vec<f64> = (0..2500).map(|i| 100.0 + (i as f64 * 0.1).sin()).collect();
        {
            let mut f = File::create(&p).unwrap();
            let mut w = ParquetWriter::new(&mut f).unwrap();
            for piece in close.chunks(1000) {
                w.put(piece).unwrap();
            }
            w.finish().unwrap();
        }
        let mut src = ParquetSource::open(&p, None).unwrap();
        assert_eq!(src.len_hint(), Some(2500));
        let mut buf = Vec::new();
        assert!(src.next_chunk(&mut buf, 10).unwrap());
        assert_eq!(buf.len(), 1000, "one row group per chunk");
        let back = read_all(&mut ParquetSource::open(&p, Some("CLOSE")).unwrap()).unwrap();
        assert_eq!(back, close);
        let e = ParquetSource::open(&p, Some("open"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("no column named \"open\"") && e.contains("c.parquet"),
            "{e}"
        );
        // A truncated file is refused by name.
        let bytes = std::fs::read(&p).unwrap();
        let t = dir.path().join("t.parquet");
        std::fs::write(&t, &bytes[..bytes.len() / 2]).unwrap();
        let e = ParquetSource::open(&t, None).err().unwrap().to_string();
        assert!(e.contains("t.parquet") && e.contains("Parquet"), "{e}");
    }
}
