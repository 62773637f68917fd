//! What a fold sweep gives: per combo its whole-series figures and its sums over the folds (and
//! walk-forward segments), the per-fold report read from them, and the statistics CSCV reads.

use hullsweep_kernel::Metrics;
use hullsweep_research::{ColumnSums, FoldStats, Metric, Moments, ResearchError, WalkSpec};
use std::ops::Range;

/// What a fold sweep is asked for: the fold count and, for walk-forward, its windows.
#[derive(Clone, Copy, Debug)]
pub struct FoldSpec<'a> {
    /// S: the bars are cut into `numpy.array_split(range(T), S)` (even, at least 2); None for
    /// the whole series as one fold (the per-combo figures only).
    pub folds: Option<usize>,
    /// Also sums over the segments of these walk-forward windows.
    pub walk: Option<&'a WalkSpec>,
}

/// One combo's whole-series figures beside its metrics (docs/research.md, "Per-fold report").
#[derive(Clone, Debug)]
pub struct ComboSummary {
    /// The sweep's metrics, bit for bit those of
    /// [`Variant::sweep_metrics`](hullsweep_variants::Variant::sweep_metrics).
    pub metrics: Metrics,
    /// Per-bar Sharpe over the whole series: mean / std of the T bar returns (ddof 0), 0 where
    /// std is 0, evaluated from the folds' sums as CSCV evaluates a half.
    pub sharpe: f64,
    /// wins / trades; None without trades.
    pub win_rate: Option<f64>,
    /// Gross profit / gross loss of the closed trades; None without a losing trade.
    pub profit_factor: Option<f64>,
    /// Per fold: the PnL of the trades that exit in it, summed in exit order from 0.0.
    pub fold_pnl: Vec<f64>,
    /// Per fold: how many trades exit in it.
    pub fold_trades: Vec<u64>,
}

/// One row of the per-fold report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FoldRow {
    /// The combo's index in the params.
    pub combo: usize,
    /// The fold, from 0.
    pub fold: usize,
    /// Its first bar.
    pub first_bar: usize,
    /// Its last bar (inclusive).
    pub last_bar: usize,
    /// Its bar count.
    pub bars: usize,
    /// The PnL of the trades exiting in it, summed in exit order from 0.0.
    pub pnl: f64,
    /// How many trades exit in it.
    pub trades: u64,
    /// The mean of its bar returns.
    pub mean: f64,
    /// Their population standard deviation.
    pub std: f64,
    /// mean / std, 0 where std is 0.
    pub sharpe: f64,
}

/// Everything one pass gives: per combo its summary and its sums over the folds (and over
/// the walk-forward segments).
#[derive(Clone, Debug)]
pub struct FoldSweep {
    pub(crate) bars: usize,
    pub(crate) bounds: Vec<Range<usize>>,
    pub(crate) combos: Vec<ComboSummary>,
    pub(crate) columns: Vec<ColumnSums>,
    pub(crate) walk: Option<(Vec<Range<usize>>, Vec<ColumnSums>)>,
}

/// The sink of every combo's bar returns, called on the worker that ran it, a block of bars at a
/// time in bar order: `(combo, first_bar, returns)`.
pub type ColumnSink<'a> = &'a (dyn Fn(usize, usize, &[f64]) + Sync);

/// A metric over every bar, from the segments' sums added in ascending order.
pub(crate) fn whole_series(c: &ColumnSums, metric: Metric) -> f64 {
    let (sum, sumsq) = c.sums();
    let (s, q) = sum
        .iter()
        .zip(sumsq)
        .fold((0.0, 0.0), |(s, q), (a, b)| (s + a, q + b));
    let n = c.bars() as f64;
    metric.eval(n, n * c.shift(), s, q)
}

impl FoldSweep {
    /// T: the bars swept.
    pub fn bars(&self) -> usize {
        self.bars
    }

    /// The folds' bars.
    pub fn bounds(&self) -> &[Range<usize>] {
        &self.bounds
    }

    /// Per combo, in params order.
    pub fn combos(&self) -> &[ComboSummary] {
        &self.combos
    }

    /// The per-fold report, combo by combo and fold by fold.
    pub fn rows(&self) -> impl Iterator<Item = FoldRow> + '_ {
        self.combos.iter().enumerate().flat_map(move |(k, c)| {
            let (sum, sumsq) = self.columns[k].sums();
            let shift = self.columns[k].shift();
            self.bounds.iter().enumerate().map(move |(f, b)| {
                let m = Moments::from_shifted(b.len() as u64, shift, sum[f], sumsq[f]);
                FoldRow {
                    combo: k,
                    fold: f,
                    first_bar: b.start,
                    last_bar: b.end - 1,
                    bars: b.len(),
                    pnl: c.fold_pnl[f],
                    trades: c.fold_trades[f],
                    mean: m.mean,
                    std: m.std(),
                    sharpe: m.sharpe(),
                }
            })
        })
    }

    /// The fold statistics CSCV reads (at least 2 combos).
    pub fn fold_stats(&self) -> Result<FoldStats, ResearchError> {
        FoldStats::from_columns(self.bars, self.bounds.clone(), &self.columns)
    }

    /// The statistics over the walk-forward segments, when the sweep was asked for them.
    pub fn walk_stats(&self) -> Option<Result<FoldStats, ResearchError>> {
        self.walk
            .as_ref()
            .map(|(b, c)| FoldStats::from_columns(self.bars, b.clone(), c))
    }
}
