//! The one error type of hullsweep-research: every public entry point returns [`ResearchError`],
//! whose message names the value at fault (the fold count, the shape, the row and column).

/// Why a research computation refused its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ResearchError {
    /// The fold count is odd or zero: CSCV splits the folds into two equal halves.
    #[error(
        "folds must be an even number of at least 2 (CSCV splits them into two equal halves), got {folds}"
    )]
    BadFolds {
        /// The fold count given.
        folds: usize,
    },
    /// More folds than the split count can afford (C(S, S/2) grows like 2^S / sqrt(S)).
    #[error(
        "{folds} folds give {count} splits (C({folds}, {half})); at most {max} folds are supported",
        half = folds / 2,
        count = splits.map_or("more than 10^38".to_string(), |c| c.to_string())
    )]
    TooManyFolds {
        /// The fold count given.
        folds: usize,
        /// C(folds, folds/2), None past `u128::MAX`.
        splits: Option<u128>,
        /// The largest fold count accepted.
        max: usize,
    },
    /// Fewer than 2 bars per fold: `folds` is larger than `bars / 2`.
    #[error(
        "{folds} folds need at least 2 bars each, so at least {need} bars, but the matrix has \
         {bars}{hint}",
        need = 2 * folds,
        hint = fold_hint(*bars)
    )]
    TooFewBars {
        /// The fold count given.
        folds: usize,
        /// The matrix's rows.
        bars: usize,
    },
    /// The returns matrix is not two-dimensional.
    #[error("the returns matrix must be 2-D (bars x combos), got shape {shape:?}")]
    NotTwoD {
        /// The shape found, one entry per dimension.
        shape: Vec<usize>,
    },
    /// Fewer than 2 columns: there is nothing to choose between.
    #[error(
        "the returns matrix needs at least 2 columns (combos) to choose between, got {columns} \
         (shape {bars} x {columns})"
    )]
    TooFewColumns {
        /// The matrix's rows.
        bars: usize,
        /// The matrix's columns.
        columns: usize,
    },
    /// A value is NaN or infinite.
    #[error("row {row}, column {column} holds {value}: returns must be finite")]
    NonFinite {
        /// Its row (bar), from 0.
        row: usize,
        /// Its column (combo), from 0.
        column: usize,
        /// The value.
        value: f64,
    },
    /// A value is so large that sums of squares could overflow.
    #[error(
        "row {row}, column {column} holds {value:e}: returns must lie within +-{limit:e} (their \
         squares are summed)"
    )]
    TooLarge {
        /// Its row (bar), from 0.
        row: usize,
        /// Its column (combo), from 0.
        column: usize,
        /// The value.
        value: f64,
        /// The largest magnitude accepted.
        limit: f64,
    },
    /// A flat buffer whose length is not `bars * combos`, or rows that are not whole.
    #[error("{len} values are not {what}")]
    Length {
        /// The buffer's length.
        len: usize,
        /// What it should have been, in words.
        what: String,
    },
    /// Rows pushed past the matrix's end, or pushed twice.
    #[error("rows {start}..{end}: {why}")]
    Rows {
        /// The first row pushed.
        start: usize,
        /// One past the last row pushed.
        end: usize,
        /// What is wrong with them.
        why: String,
    },
    /// Statistics finished or merged with bars never pushed.
    #[error("row {row} was never pushed ({bars} bars expected)")]
    MissingRow {
        /// The first row missing.
        row: usize,
        /// The rows expected.
        bars: usize,
    },
    /// Two sets of fold statistics that cannot be merged.
    #[error("cannot merge fold statistics: {detail}")]
    Mismatch {
        /// What differs.
        detail: String,
    },
    /// A metric name that is not `sharpe` or `mean`.
    #[error("unknown metric {name:?}; known: sharpe, mean")]
    UnknownMetric {
        /// The name given.
        name: String,
    },
    /// A value that must be finite is NaN or infinite (a Sharpe ratio, a bar return).
    #[error("{what} at index {index} is {value}: every {what} must be finite")]
    NotFinite {
        /// What the value is, in words.
        what: &'static str,
        /// Its index in its slice, from 0.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A value beyond the magnitude a computation can square without overflow.
    #[error("{what} at index {index} is {value:e}: every {what} must lie within +-{limit:e}")]
    OutOfRange {
        /// What the value is, in words.
        what: &'static str,
        /// Its index in its slice, from 0.
        index: usize,
        /// The value.
        value: f64,
        /// The largest magnitude accepted.
        limit: f64,
    },
    /// Fewer than 2 Sharpe ratios: the deflated Sharpe ratio needs a trial variance.
    #[error(
        "the deflated Sharpe ratio needs the Sharpe ratios of at least 2 combos (their variance \
         deflates the best), got {count}"
    )]
    TooFewSharpes {
        /// How many were given.
        count: usize,
    },
    /// Fewer than 2 bar returns of the selected combo.
    #[error(
        "the deflated Sharpe ratio needs at least 2 bar returns of the selected combo, got {bars}"
    )]
    TooFewReturns {
        /// How many were given.
        bars: usize,
    },
    /// A walk-forward specification that does not parse or is out of range.
    #[error("walk-forward {text:?}: {why}")]
    BadWalkSpec {
        /// The text given (or the specification, written back).
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// No walk-forward window fits in the bars.
    #[error(
        "walk-forward {spec} needs TRAIN + TEST = {need} bars for one window, but there are \
         {bars} bars"
    )]
    NoWindow {
        /// The specification, as `TRAIN:TEST[:anchored]`.
        spec: String,
        /// TRAIN + TEST (saturated at `usize::MAX`).
        need: usize,
        /// The bars there are.
        bars: usize,
    },
    /// Fold statistics whose segments are not the ones a walk-forward needs.
    #[error(
        "walk-forward {spec} over {bars} bars needs fold statistics over the segments {want}, \
         but they are over {got}"
    )]
    Segments {
        /// The specification, as `TRAIN:TEST[:anchored]`.
        spec: String,
        /// The statistics' bars.
        bars: usize,
        /// The segments needed, written out.
        want: String,
        /// The statistics' segments, written out.
        got: String,
    },
    /// A thread count of 0.
    #[error("threads must be at least 1, got 0")]
    NoThreads,
    /// The thread pool could not be started.
    #[error("cannot start the worker threads: {detail}")]
    Threads {
        /// The OS's reason.
        detail: String,
    },
}

/// What to do about too few bars: the most folds these bars allow, or that there are none.
fn fold_hint(bars: usize) -> String {
    match (bars / 2) & !1 {
        0 => " (CSCV needs at least 4 bars: 2 folds of 2)".to_string(),
        max => format!(" (use at most {max} folds)"),
    }
}
