//! Folds and their sufficient statistics: each fold's bars exactly as `numpy.array_split`, and per
//! (fold, combo) the shifted sum and sum of squares that CSCV needs, built from streamed rows.

use crate::error::ResearchError;
use crate::input::check_rows;
use crate::lanes::{LANES, combine};
use crate::moments::Moments;
use std::ops::Range;

/// The most folds accepted: C(26, 13) = 10,400,600 splits. Each fold added roughly doubles the
/// splits, and so the time and the memory of the per-split results.
pub const MAX_FOLDS: usize = 26;

/// C(n, k), or None past `u128::MAX`. Each step is exact: `C(n, i) * (n - i)` is
/// `C(n, i + 1) * (i + 1)`.
pub fn binomial(n: usize, k: usize) -> Option<u128> {
    if k > n {
        return Some(0);
    }
    let k = k.min(n - k);
    (0..k).try_fold(1u128, |acc, i| {
        Some(acc.checked_mul((n - i) as u128)? / (i as u128 + 1))
    })
}

/// Checks a fold count on its own: even, at least 2, at most [`MAX_FOLDS`].
pub fn check_fold_count(folds: usize) -> Result<(), ResearchError> {
    if folds == 0 || !folds.is_multiple_of(2) {
        return Err(ResearchError::BadFolds { folds });
    }
    if folds > MAX_FOLDS {
        return Err(ResearchError::TooManyFolds {
            folds,
            splits: binomial(folds, folds / 2),
            max: MAX_FOLDS,
        });
    }
    Ok(())
}

/// Checks a fold count against the bars: [`check_fold_count`], and at least 2 bars per fold.
pub fn check_folds(folds: usize, bars: usize) -> Result<(), ResearchError> {
    check_fold_count(folds)?;
    if bars / 2 < folds {
        return Err(ResearchError::TooFewBars { folds, bars });
    }
    Ok(())
}

/// The bars of each fold: `numpy.array_split(range(bars), folds)`, the first `bars % folds`
/// folds one bar longer than the rest. Checked as [`check_folds`].
pub fn fold_bounds(bars: usize, folds: usize) -> Result<Vec<Range<usize>>, ResearchError> {
    check_folds(folds, bars)?;
    let (base, extra) = (bars / folds, bars % folds);
    Ok((0..folds)
        .map(|f| {
            let start = f * base + f.min(extra);
            start..start + base + usize::from(f < extra)
        })
        .collect())
}

/// The shift a combo's sums are taken about: `x` with all but its 9 leading significant bits
/// cleared. Near the data (it is a data value, truncated), so sums of squares about it do not
/// cancel; short, so that integer-valued returns stay integers after the shift and a run of
/// zeros sums exactly to `-n * shift` (see [`FoldStats`]).
pub(crate) fn shift_of(x: f64) -> f64 {
    f64::from_bits(x.to_bits() & !((1u64 << 44) - 1))
}

/// Per (fold, combo): `sum(x - shift)` and `sum((x - shift)^2)` over the fold's bars, with one
/// shift per combo (the truncated first value pushed for it), and each fold's bar count.
///
/// These are the sufficient statistics of CSCV: the count, mean and M2 of any union of folds
/// follow from adding the folds' sums ([`Moments::from_shifted`]), and statistics of disjoint
/// bars with the same shifts merge by adding, which is Chan's parallel formula in this form.
/// Integer-valued returns (with `T * sum((x - shift)^2) < 2^53`) are summed exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct FoldStats {
    bars: usize,
    combos: usize,
    bounds: Vec<Range<usize>>,
    shift: Vec<f64>,
    /// Fold-major: fold `f`, combo `k` at `f * combos + k`.
    sum: Vec<f64>,
    sumsq: Vec<f64>,
}

impl FoldStats {
    /// Assembles checked parts (the sums fold-major).
    pub(crate) fn from_parts(
        bars: usize,
        combos: usize,
        bounds: Vec<Range<usize>>,
        shift: Vec<f64>,
        sum: Vec<f64>,
        sumsq: Vec<f64>,
    ) -> FoldStats {
        FoldStats {
            bars,
            combos,
            bounds,
            shift,
            sum,
            sumsq,
        }
    }

    /// The statistics of a row-major `bars x combos` matrix (every row one bar, every column
    /// one combo) split into `folds` folds; every shape and value is checked first.
    pub fn from_matrix(
        returns: &[f64],
        bars: usize,
        combos: usize,
        folds: usize,
    ) -> Result<FoldStats, ResearchError> {
        if Some(returns.len()) != bars.checked_mul(combos) {
            return Err(ResearchError::Length {
                len: returns.len(),
                what: format!("a {bars} x {combos} matrix"),
            });
        }
        let mut builder = FoldStatsBuilder::new(bars, combos, folds)?;
        builder.push_rows(0, returns)?;
        builder.finish()
    }

    /// Bars (rows) of the matrix.
    pub fn bars(&self) -> usize {
        self.bars
    }

    /// Combos (columns) of the matrix.
    pub fn combos(&self) -> usize {
        self.combos
    }

    /// The fold count S.
    pub fn folds(&self) -> usize {
        self.bounds.len()
    }

    /// Each fold's bars: [`fold_bounds`], or the segments given to [`FoldStats::from_columns`].
    pub fn bounds(&self) -> &[Range<usize>] {
        &self.bounds
    }

    /// Each combo's shift.
    pub fn shifts(&self) -> &[f64] {
        &self.shift
    }

    /// Fold `fold`'s `sum(x - shift)` and `sum((x - shift)^2)`, one entry per combo.
    pub fn sums(&self, fold: usize) -> (&[f64], &[f64]) {
        let at = fold * self.combos..(fold + 1) * self.combos;
        (&self.sum[at.clone()], &self.sumsq[at])
    }

    /// Count, mean and M2 of combo `combo`'s returns in fold `fold`.
    pub fn moments(&self, fold: usize, combo: usize) -> Moments {
        let (s, q) = self.sums(fold);
        Moments::from_shifted(
            self.bounds[fold].len() as u64,
            self.shift[combo],
            s[combo],
            q[combo],
        )
    }
}

/// Builds [`FoldStats`] from rows pushed in chunks, in any order and from several builders that
/// are merged at the end. Each fold's sums are added in the lanes of [`LANES`] (row `r` of a
/// fold starting at row `s` into lane `(r - s) % LANES`, in the order the rows are pushed), the
/// lanes combined in a fixed tree once the fold has all its rows: the order of
/// [`ColumnSums`](crate::ColumnSums), so rows pushed in order give its bits. Memory: the
/// statistics (two numbers per fold and combo) and, for each fold that has some of its rows but
/// not all, `2 * LANES` numbers per combo (one or two such folds when rows come in order).
#[derive(Clone, Debug)]
pub struct FoldStatsBuilder {
    stats: FoldStats,
    shifted: bool,
    /// The rows pushed so far, as sorted disjoint ranges.
    covered: Vec<Range<usize>>,
    /// Per fold: how many of its rows have been pushed.
    filled: Vec<usize>,
    /// Per fold with some rows but not all: its lanes' sums.
    open: Vec<Option<OpenFold>>,
    /// The zeroed lanes of the last fold closed, for the next one opened.
    spare: Option<OpenFold>,
}

/// The lanes of a fold still being filled: lane `j`, combo `k` at `j * combos + k`.
#[derive(Clone, Debug)]
struct OpenFold {
    sum: Vec<f64>,
    sumsq: Vec<f64>,
}

/// Combines fold `fold`'s lanes (`open`) into `stats` once it has all its rows (`filled`); their
/// memory, zeroed, becomes the `spare` the next fold opened fills (a fresh allocation would be
/// faulted in page by page, fold after fold).
fn close_if_full(
    stats: &mut FoldStats,
    fold: usize,
    filled: usize,
    open: &mut Option<OpenFold>,
    spare: &mut Option<OpenFold>,
) {
    if filled < stats.bounds[fold].len() {
        return;
    }
    if let Some(mut lanes) = open.take() {
        let at = fold * stats.combos..(fold + 1) * stats.combos;
        lanes.close(&mut stats.sum[at.clone()], &mut stats.sumsq[at]);
        lanes.sum.fill(0.0);
        lanes.sumsq.fill(0.0);
        *spare = Some(lanes);
    }
}

impl OpenFold {
    fn new(combos: usize) -> OpenFold {
        OpenFold {
            sum: vec![0.0; LANES * combos],
            sumsq: vec![0.0; LANES * combos],
        }
    }

    /// Each combo's lanes combined, into `sum` and `sumsq` (one entry per combo).
    fn close(&self, sum: &mut [f64], sumsq: &mut [f64]) {
        let combos = sum.len();
        let lanes = |v: &[f64], k: usize| std::array::from_fn(|j| v[j * combos + k]);
        for k in 0..combos {
            sum[k] = combine(lanes(&self.sum, k));
            sumsq[k] = combine(lanes(&self.sumsq, k));
        }
    }
}

impl FoldStatsBuilder {
    /// An empty builder for a `bars x combos` matrix in `folds` folds; each combo's shift is
    /// taken from the first row pushed.
    pub fn new(bars: usize, combos: usize, folds: usize) -> Result<Self, ResearchError> {
        crate::input::check_shape(&[bars, combos])?;
        let bounds = fold_bounds(bars, folds)?;
        let zeros = vec![0.0; folds * combos];
        Ok(FoldStatsBuilder {
            stats: FoldStats {
                bars,
                combos,
                bounds,
                shift: vec![0.0; combos],
                sum: zeros.clone(),
                sumsq: zeros,
            },
            shifted: false,
            covered: Vec::new(),
            filled: vec![0; folds],
            open: vec![None; folds],
            spare: None,
        })
    }

    /// An empty builder with given shifts (one per combo), so that builders fed different rows
    /// (threads, chunks of a file) can be merged: give each the first builder's [`Self::shifts`].
    pub fn with_shifts(
        bars: usize,
        combos: usize,
        folds: usize,
        shifts: &[f64],
    ) -> Result<Self, ResearchError> {
        let mut builder = Self::new(bars, combos, folds)?;
        if shifts.len() != combos {
            return Err(ResearchError::Length {
                len: shifts.len(),
                what: format!("one shift per combo ({combos})"),
            });
        }
        check_rows(0, combos, shifts)?;
        builder.stats.shift = shifts.iter().map(|&x| shift_of(x)).collect();
        builder.shifted = true;
        Ok(builder)
    }

    /// The shifts, once a row has been pushed (or given).
    pub fn shifts(&self) -> Option<&[f64]> {
        self.shifted.then_some(&self.stats.shift[..])
    }

    /// Rows pushed so far.
    pub fn rows_pushed(&self) -> usize {
        self.covered.iter().map(|r| r.len()).sum()
    }

    /// Adds whole rows (row-major, `combos` values each) starting at row `first_row`. Nothing
    /// is added when any value is bad (NaN, infinite, too large: named with its row and column)
    /// or the rows overlap ones already pushed or run past the last bar.
    pub fn push_rows(&mut self, first_row: usize, rows: &[f64]) -> Result<(), ResearchError> {
        let combos = self.stats.combos;
        if !rows.len().is_multiple_of(combos) {
            return Err(ResearchError::Length {
                len: rows.len(),
                what: format!("whole rows of {combos} combos"),
            });
        }
        let span = first_row..first_row + rows.len() / combos;
        if span.is_empty() {
            return Ok(());
        }
        if span.end > self.stats.bars {
            return Err(ResearchError::Rows {
                start: span.start,
                end: span.end,
                why: format!("past the matrix's {} bars", self.stats.bars),
            });
        }
        check_rows(first_row, combos, rows)?;
        cover(&mut self.covered, span.clone())?;
        if !self.shifted {
            self.stats.shift = rows[..combos].iter().map(|&x| shift_of(x)).collect();
            self.shifted = true;
        }
        let stats = &mut self.stats;
        let mut fold = stats.bounds.partition_point(|b| b.end <= span.start);
        let mut row = span.start;
        while row < span.end {
            while stats.bounds[fold].end <= row {
                fold += 1;
            }
            let bounds = stats.bounds[fold].clone();
            let end = bounds.end.min(span.end);
            let values = &rows[(row - span.start) * combos..(end - span.start) * combos];
            let spare = &mut self.spare;
            let lanes = self.open[fold]
                .get_or_insert_with(|| spare.take().unwrap_or_else(|| OpenFold::new(combos)));
            for (i, values) in values.chunks_exact(combos).enumerate() {
                let lane = (row + i - bounds.start) % LANES;
                let at = lane * combos..(lane + 1) * combos;
                let (sum, sumsq) = (&mut lanes.sum[at.clone()], &mut lanes.sumsq[at]);
                for (((s, q), &x), &c) in sum.iter_mut().zip(sumsq).zip(values).zip(&stats.shift) {
                    let y = x - c;
                    *s += y;
                    *q += y * y;
                }
            }
            self.filled[fold] += end - row;
            let filled = self.filled[fold];
            close_if_full(stats, fold, filled, &mut self.open[fold], &mut self.spare);
            row = end;
        }
        Ok(())
    }

    /// Adds another builder's rows (disjoint from this one's, same shape and shifts) to this
    /// one: the sums add. The result depends on the order of merges by rounding only.
    pub fn merge(&mut self, other: &FoldStatsBuilder) -> Result<(), ResearchError> {
        let (a, b) = (&self.stats, &other.stats);
        if (a.bars, a.combos, a.bounds.len()) != (b.bars, b.combos, b.bounds.len()) {
            return Err(ResearchError::Mismatch {
                detail: format!(
                    "{} x {} in {} folds and {} x {} in {} folds",
                    a.bars,
                    a.combos,
                    a.bounds.len(),
                    b.bars,
                    b.combos,
                    b.bounds.len()
                ),
            });
        }
        if other.covered.is_empty() {
            return Ok(());
        }
        if self.shifted {
            let differ = a.shift.iter().zip(&b.shift).position(|(x, y)| x != y);
            if let Some(k) = differ {
                return Err(ResearchError::Mismatch {
                    detail: format!(
                        "combo {k} is shifted by {} here and by {} there (build both with_shifts)",
                        a.shift[k], b.shift[k]
                    ),
                });
            }
        }
        let mut covered = self.covered.clone();
        for r in &other.covered {
            cover(&mut covered, r.clone())?;
        }
        self.covered = covered;
        if !self.shifted {
            // Nothing pushed here yet (a push sets the shifts): take the other's.
            self.stats.shift.clone_from(&other.stats.shift);
            self.shifted = true;
        }
        let stats = &mut self.stats;
        for (x, y) in stats.sum.iter_mut().zip(&other.stats.sum) {
            *x += y;
        }
        for (x, y) in stats.sumsq.iter_mut().zip(&other.stats.sumsq) {
            *x += y;
        }
        for (mine, theirs) in self.filled.iter_mut().zip(&other.filled) {
            *mine += theirs;
        }
        // Folds that both have some rows of add lane by lane (the result depends on the order
        // of merges by rounding only, as for any sums).
        for fold in 0..self.open.len() {
            let Some(theirs) = &other.open[fold] else {
                continue;
            };
            match &mut self.open[fold] {
                Some(mine) => {
                    mine.sum
                        .iter_mut()
                        .zip(&theirs.sum)
                        .for_each(|(x, y)| *x += y);
                    mine.sumsq
                        .iter_mut()
                        .zip(&theirs.sumsq)
                        .for_each(|(x, y)| *x += y);
                }
                none => *none = Some(theirs.clone()),
            }
            let filled = self.filled[fold];
            close_if_full(stats, fold, filled, &mut self.open[fold], &mut self.spare);
        }
        Ok(())
    }

    /// The statistics, once every row has been pushed (the first missing row is named).
    pub fn finish(self) -> Result<FoldStats, ResearchError> {
        let bars = self.stats.bars;
        let missing = match self.covered.first() {
            Some(r) if r.start > 0 => Some(0),
            Some(r) if r.end < bars => Some(r.end),
            None => Some(0),
            Some(_) => None,
        };
        match missing {
            Some(row) => Err(ResearchError::MissingRow { row, bars }),
            None => Ok(self.stats),
        }
    }
}

/// Records `span` in `covered` (sorted disjoint ranges); refuses an overlap with rows already
/// there, leaving `covered` as it was.
fn cover(covered: &mut Vec<Range<usize>>, span: Range<usize>) -> Result<(), ResearchError> {
    let at = covered.partition_point(|r| r.end <= span.start);
    if covered.get(at).is_some_and(|r| r.start < span.end) {
        return Err(ResearchError::Rows {
            start: span.start,
            end: span.end,
            why: "some of them were already pushed".to_string(),
        });
    }
    covered.insert(at, span);
    // Join neighbours that touch, so the list stays short.
    let mut joined: Vec<Range<usize>> = Vec::with_capacity(covered.len());
    for r in covered.drain(..) {
        match joined.last_mut() {
            Some(last) if last.end == r.start => last.end = r.end,
            _ => joined.push(r),
        }
    }
    *covered = joined;
    Ok(())
}
