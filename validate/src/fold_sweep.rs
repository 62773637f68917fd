//! The fold sweep: any variant run once over a series, each combo's bar returns folded as they
//! are produced into per-fold sums, per-fold trade PnL, whole-series Sharpe and trade ratios.
//!
//! Nothing of size bars x combos is kept: per combo, two sums per fold (and per walk-forward
//! segment) and the fold's PnL and trade count; the bar returns themselves exist one combo at a
//! time on the worker that ran it, and go to `column` (for `--returns`) when asked.

use crate::error::ValidateError;
use hullsweep_kernel::{Combo, Metrics, ValidClose};
use hullsweep_research::{
    ColumnSums, FoldStats, MAX_ABS, Metric, Moments, ResearchError, WalkSpec, fold_bounds,
};
use hullsweep_variants::{ComboRun, ReturnScratch, Threads, Variant};
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
    /// The sweep's metrics, bit for bit those of [`Variant::sweep_metrics`].
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
    bars: usize,
    bounds: Vec<Range<usize>>,
    combos: Vec<ComboSummary>,
    columns: Vec<ColumnSums>,
    walk: Option<(Vec<Range<usize>>, Vec<ColumnSums>)>,
}

/// The sink of every combo's bar returns, called on the worker that ran it, a block of bars at a
/// time in bar order: `(combo, first_bar, returns)`.
pub type ColumnSink<'a> = &'a (dyn Fn(usize, usize, &[f64]) + Sync);

/// Runs `variant` over every combo once, folding each one's bar returns into `spec`'s folds
/// (and walk-forward segments) and, when given, handing them to `column`. Inputs are checked
/// first; a bar return beyond +-1e100 (which only absurd prices give) is refused by bar and
/// combo.
pub fn fold_sweep(
    variant: Variant,
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    spec: FoldSpec<'_>,
    column: Option<ColumnSink<'_>>,
) -> Result<FoldSweep, ValidateError> {
    let bars = close.bars().len();
    let bounds = match spec.folds {
        Some(s) => fold_bounds(bars, s)?,
        None => std::iter::once(0..bars).collect(),
    };
    let walk_bounds = spec.walk.map(|w| w.segments(bars)).transpose()?;
    let ends = |b: &[Range<usize>]| b.iter().map(|r| r.end).collect::<Vec<_>>();
    let (fold_ends, walk_ends) = (ends(&bounds), walk_bounds.as_deref().map(ends));
    let outcomes = variant.sweep_runs(close, params, fee_pct, threads, |run| {
        fold_combo(run, &bounds, &fold_ends, walk_ends.as_deref(), column)
    })?;
    let mut combos = Vec::with_capacity(params.len());
    let mut columns = Vec::with_capacity(params.len());
    let mut walk_columns = Vec::new();
    for (k, o) in outcomes.into_iter().enumerate() {
        if let Some((row, value)) = o.bad {
            return Err(hullsweep_research::check_value(row, k, value)
                .expect_err("recorded as out of range")
                .into());
        }
        combos.push(o.summary);
        columns.push(o.columns);
        walk_columns.extend(o.walk);
    }
    Ok(FoldSweep {
        bars,
        bounds,
        combos,
        columns,
        walk: walk_bounds.map(|b| (b, walk_columns)),
    })
}

/// Bar returns computed and folded at a time: 32 KiB, so a block stays in the L1 or L2 cache
/// between being written and being summed.
const BLOCK_BARS: usize = 4096;

thread_local! {
    /// The worker's block of bar returns, reused for every combo it runs.
    static SCRATCH: std::cell::RefCell<ReturnScratch> =
        std::cell::RefCell::new(ReturnScratch::new(BLOCK_BARS));
}

/// What a worker keeps of one combo.
struct Outcome {
    summary: ComboSummary,
    columns: ColumnSums,
    walk: Option<ColumnSums>,
    /// The first bar return out of range, as (bar, value).
    bad: Option<(usize, f64)>,
}

fn fold_combo(
    run: &ComboRun<'_>,
    bounds: &[Range<usize>],
    fold_ends: &[usize],
    walk_ends: Option<&[usize]>,
    column: Option<ColumnSink<'_>>,
) -> Outcome {
    let mut columns = ColumnSums::new(fold_ends);
    let mut walk = walk_ends.map(ColumnSums::new);
    let mut bad = None;
    SCRATCH.with_borrow_mut(|scratch| {
        run.for_each_block(scratch, |start, returns| {
            columns.push_slice(returns);
            if let Some(w) = walk.as_mut() {
                w.push_slice(returns);
            }
            if let Some(sink) = column {
                sink(run.combo(), start, returns);
            }
            if bad.is_none() {
                bad = returns
                    .iter()
                    .position(|r| r.is_nan() || r.abs() > MAX_ABS)
                    .map(|i| (start + i, returns[i]));
            }
        });
    });
    let folds = bounds.len();
    let (mut fold_pnl, mut fold_trades) = (vec![0.0; folds], vec![0u64; folds]);
    let (mut gross_profit, mut gross_loss, mut f) = (0.0, 0.0, 0);
    for (bar, pnl) in run.trades() {
        while bounds[f].end <= bar {
            f += 1;
        }
        fold_pnl[f] += pnl;
        fold_trades[f] += 1;
        if pnl > 0.0 {
            gross_profit += pnl;
        } else if pnl < 0.0 {
            gross_loss -= pnl;
        }
    }
    let m = *run.metrics();
    let summary = ComboSummary {
        metrics: m,
        sharpe: whole_series(&columns, Metric::Sharpe),
        win_rate: (m.trades > 0).then(|| m.wins as f64 / m.trades as f64),
        profit_factor: (gross_loss > 0.0).then(|| gross_profit / gross_loss),
        fold_pnl,
        fold_trades,
    };
    Outcome {
        summary,
        columns,
        walk,
        bad,
    }
}

/// A metric over every bar, from the segments' sums added in ascending order.
fn whole_series(c: &ColumnSums, metric: Metric) -> f64 {
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
