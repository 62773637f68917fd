//! One combo's bar returns pushed in bar order into per-segment shifted sums, and the
//! [`FoldStats`] assembled from every combo's: how a sweep builds its folds without a matrix.

use crate::error::ResearchError;
use crate::folds::{FoldStats, shift_of};
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

/// One combo's returns, pushed one bar at a time in bar order, as the shifted sums of each
/// segment: the same operations in the same order as [`FoldStatsBuilder`](crate::FoldStatsBuilder)
/// does for that column of a matrix pushed row by row, so the two give the same bits.
#[derive(Clone, Debug)]
pub struct ColumnSums {
    shift: f64,
    bars: usize,
    /// The end of each segment.
    ends: Vec<usize>,
    segment: usize,
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
            sum: vec![0.0; ends.len()],
            sumsq: vec![0.0; ends.len()],
        }
    }

    /// Adds the next bar's return `x` (finite; the caller checks). The first bar's return sets
    /// the shift, as a matrix's first row does.
    #[inline]
    pub fn push(&mut self, x: f64) {
        if self.bars == 0 {
            self.shift = shift_of(x);
        }
        while self.ends[self.segment] <= self.bars {
            self.segment += 1;
        }
        let y = x - self.shift;
        self.sum[self.segment] += y;
        self.sumsq[self.segment] += y * y;
        self.bars += 1;
    }

    /// Adds the next bars' returns in order: the same operations as [`Self::push`] on each,
    /// with the segment found once per segment rather than once per bar.
    pub fn push_slice(&mut self, xs: &[f64]) {
        let Some(&first) = xs.first() else {
            return;
        };
        if self.bars == 0 {
            self.shift = shift_of(first);
        }
        let shift = self.shift;
        let mut rest = xs;
        while !rest.is_empty() {
            while self.ends[self.segment] <= self.bars {
                self.segment += 1;
            }
            let take = (self.ends[self.segment] - self.bars).min(rest.len());
            let (here, next) = rest.split_at(take);
            let (mut s, mut q) = (self.sum[self.segment], self.sumsq[self.segment]);
            for &x in here {
                let y = x - shift;
                s += y;
                q += y * y;
            }
            self.sum[self.segment] = s;
            self.sumsq[self.segment] = q;
            self.bars += take;
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

    /// Each segment's `sum(x - shift)` and `sum((x - shift)^2)`.
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
