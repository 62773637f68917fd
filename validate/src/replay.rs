//! A series read from its first bar as often as asked: a validation reads it once for the fold
//! sweep and [`PASSES`](hullsweep_research::PASSES) more times for the few combos it selects, so
//! it never needs the series in memory.

use crate::error::ValidateError;
use crate::sweeper::PIECE_BARS;
use hullsweep_kernel::ValidClose;

/// A series that can be read again from its start, in pieces: the whole of it in memory
/// ([`InMemory`]), or a file read a chunk at a time.
pub trait Replay {
    /// Bars in the series; every replay gives exactly these.
    fn bars(&self) -> usize;

    /// Hands the series to `each` in order, from the first bar, in pieces of any length; the
    /// first error (of the reading or of `each`) ends it and is returned.
    fn replay(
        &mut self,
        each: &mut dyn FnMut(&[f64]) -> Result<(), ValidateError>,
    ) -> Result<(), ValidateError>;
}

/// A series in memory, replayed in pieces of [`PIECE_BARS`]: a long series costs what a file read
/// in chunks costs (see [`FoldSweeper::push_in_pieces`](crate::FoldSweeper::push_in_pieces)).
#[derive(Clone, Copy, Debug)]
pub struct InMemory<'a>(pub ValidClose<'a>);

impl Replay for InMemory<'_> {
    fn bars(&self) -> usize {
        self.0.bars().len()
    }

    fn replay(
        &mut self,
        each: &mut dyn FnMut(&[f64]) -> Result<(), ValidateError>,
    ) -> Result<(), ValidateError> {
        self.0.bars().chunks(PIECE_BARS).try_for_each(each)
    }
}
