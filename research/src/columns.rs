//! One combo's bar returns pushed in bar order into per-segment shifted sums, and the
//! [`FoldStats`] assembled from every combo's: how a sweep builds its folds without a matrix.

use crate::error::ResearchError;
use crate::folds::{FoldStats, shift_of};
use crate::lanes::Lanes;
use std::ops::Range;

/// Checks that `bounds` are contiguous, non-empty, and cover `0..bars` in order.
pub fn check_segments(bars: usize, bounds: &[Range<usize>]) -> Result<(), ResearchError> {
    let mut at = 0;
    for (i, b) in bounds.iter().enumerate() {
        if b.start != at || b.end <= b.start {
            return Err(ResearchError::Mismatch {
                detail: format!(
                    "segment {i} is bars {}..{}, expected a non-empty range from bar {at}",
                    b.start, b.end
                ),
            });
        }
        at = b.end;
    }
    if at != bars {
        return Err(ResearchError::Mismatch {
            detail: format!("the segments end at bar {at}, not at the {bars} bars"),
        });
    }
    Ok(())
}

/// One combo's returns, pushed in bar order (one bar or a slice at a time), as the shifted sums
/// of each segment, added in the lanes of [`LANES`](crate::LANES) (the bar at position `p` of
/// its segment into lane `p % LANES`, the lanes combined in a fixed tree): the same operations
/// in the same order as [`FoldStatsBuilder`](crate::FoldStatsBuilder) does for that column of
/// a matrix, so the two give the same bits however either is fed in pieces.
#[derive(Clone, Debug)]
pub struct ColumnSums {
    shift: f64,
    bars: usize,
    /// The end of each segment.
    ends: Vec<usize>,
    segment: usize,
    /// The lanes of segment `segment`; `sum` and `sumsq` hold their totals after every push.
    lanes: Lanes,
    sum: Vec<f64>,
    sumsq: Vec<f64>,
}

impl ColumnSums {
    /// Sums for segments ending at `ends` (each above the last; the last is the bar count).
    /// Valid segments come from [`check_segments`]; here they are only debug-checked.
    pub fn new(ends: &[usize]) -> ColumnSums {
        debug_assert!(ends.windows(2).all(|w| w[0] < w[1]));
        ColumnSums {
            shift: 0.0,
            bars: 0,
            ends: ends.to_vec(),
            segment: 0,
            lanes: Lanes::default(),
            sum: vec![0.0; ends.len()],
            sumsq: vec![0.0; ends.len()],
        }
    }

    /// Moves to the segment of the next bar (fresh lanes for a new one) and returns the next
    /// bar's position in it and how many bars the segment has left.
    #[inline]
    fn next_segment(&mut self) -> (usize, usize) {
        while self.ends[self.segment] <= self.bars {
            self.segment += 1;
            self.lanes = Lanes::default();
        }
        let start = self.segment.checked_sub(1).map_or(0, |s| self.ends[s]);
        (self.bars - start, self.ends[self.segment] - self.bars)
    }

    /// Adds the next bar's return `x` (finite; the caller checks). The first bar's return sets
    /// the shift, as a matrix's first row does.
    #[inline]
    pub fn push(&mut self, x: f64) {
        self.push_slice(std::slice::from_ref(&x));
    }

    /// Adds the next bars' returns in order: the same as [`Self::push`] on each.
    #[inline(always)]
    pub fn push_slice(&mut self, xs: &[f64]) {
        let Some(&first) = xs.first() else {
            return;
        };
        if self.bars == 0 {
            self.shift = shift_of(first);
        }
        let mut rest = xs;
        while !rest.is_empty() {
            let (at, left) = self.next_segment();
            let (here, next) = rest.split_at(left.min(rest.len()));
            self.lanes.add(at, here, self.shift);
            (self.sum[self.segment], self.sumsq[self.segment]) = self.lanes.totals();
            self.bars += here.len();
            rest = next;
        }
    }

    /// Bars pushed so far.
    pub fn bars(&self) -> usize {
        self.bars
    }

    /// The shift the sums are taken about.
    pub fn shift(&self) -> f64 {
        self.shift
    }

    /// Each segment's `sum(x - shift)` and `sum((x - shift)^2)` over the bars pushed so far
    /// (0.0 for a segment not yet reached).
    pub fn sums(&self) -> (&[f64], &[f64]) {
        (&self.sum, &self.sumsq)
    }
}

impl FoldStats {
    /// The statistics of `columns.len()` combos over the segments `bounds` (folds, or any
    /// contiguous cover of the bars, such as walk-forward windows), each column built by a
    /// [`ColumnSums`] over those segments and pushed every bar.
    pub fn from_columns(
        bars: usize,
        bounds: Vec<Range<usize>>,
        columns: &[ColumnSums],
    ) -> Result<FoldStats, ResearchError> {
        crate::input::check_shape(&[bars, columns.len()])?;
        check_segments(bars, &bounds)?;
        let combos = columns.len();
        let mut sum = vec![0.0; bounds.len() * combos];
        let mut sumsq = vec![0.0; bounds.len() * combos];
        for (k, c) in columns.iter().enumerate() {
            if c.bars != bars || c.ends.len() != bounds.len() {
                return Err(ResearchError::Mismatch {
                    detail: format!(
                        "combo {k} has {} bars in {} segments, expected {bars} in {}",
                        c.bars,
                        c.ends.len(),
                        bounds.len()
                    ),
                });
            }
            for f in 0..bounds.len() {
                sum[f * combos + k] = c.sum[f];
                sumsq[f * combos + k] = c.sumsq[f];
            }
        }
        let shift = columns.iter().map(|c| c.shift).collect();
        Ok(FoldStats::from_parts(
            bars, combos, bounds, shift, sum, sumsq,
        ))
    }
}
