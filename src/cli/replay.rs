//! A `--data` file as a [`Replay`]: `hullsweep validate` reads it once for the fold sweep and a
//! few more times for the combos it selects, a chunk at a time, never all of it in memory.

use super::progress::Bar;
use hullsweep_data::{count_bars, for_each_chunk};
use hullsweep_validate::{Replay, ValidateError};
use std::path::Path;

/// A series file read from its start, a chunk at a time, on every replay.
pub struct FileSeries<'a> {
    path: &'a Path,
    column: Option<&'a str>,
    bars: usize,
    reads: usize,
}

impl<'a> FileSeries<'a> {
    /// Opens `path` and counts its bars (a CSV is read once for that).
    pub fn new(path: &'a Path, column: Option<&'a str>) -> anyhow::Result<FileSeries<'a>> {
        let bars = count_bars(path, column)? as usize;
        Ok(FileSeries {
            path,
            column,
            bars,
            reads: 0,
        })
    }
}

impl Replay for FileSeries<'_> {
    fn bars(&self) -> usize {
        self.bars
    }

    fn replay(
        &mut self,
        each: &mut dyn FnMut(&[f64]) -> Result<(), ValidateError>,
    ) -> Result<(), ValidateError> {
        self.reads += 1;
        let bar = Bar::new(if self.reads == 1 {
            "sweeping"
        } else {
            "rerunning the selected combos"
        });
        // `each`'s own error comes back as itself; only the reader's is wrapped.
        let mut refused = None;
        let read = for_each_chunk(self.path, self.column, &bar, |chunk| {
            each(chunk).map_err(|e| {
                let said = anyhow::anyhow!("{e}");
                refused = Some(e);
                said
            })
        });
        bar.finish();
        match (refused, read) {
            (Some(e), _) => Err(e),
            (None, Err(e)) => Err(ValidateError::Read(e.into())),
            (None, Ok(_)) => Ok(()),
        }
    }
}
