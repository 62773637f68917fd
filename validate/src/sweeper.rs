//! The fold sweep fed a series in pieces, in bounded memory: any variant run over each piece
//! (with the lookback carried, as a `Sweeper` carries it), each combo's bar returns folded as
//! they are produced into per-fold sums, per-fold trade PnL and the trade ratios.
//!
//! Nothing of size bars x combos is kept, nor anything of size bars: per combo, its run state,
//! two sums per fold (and per walk-forward segment) and each fold's PnL and trade count; the
//! bar returns exist a block at a time on the worker that ran the combo, and go to `column`
//! (for `--returns`) when asked. Pieces do not change a bit (`tests/pieces.rs`).

use crate::error::ValidateError;
use crate::fold_sweep::{ColumnSink, ComboSummary, FoldSpec, FoldSweep, whole_series};
use hullsweep_kernel::{Combo, KernelError, ValidClose, validate_close, validate_params_and_fee};
use hullsweep_research::{ColumnSums, MAX_ABS, Metric, ResearchError, fold_bounds};
use hullsweep_variants::{ReturnScratch, RunState, Threads, Variant, effective_window};
use std::ops::Range;

/// Bar returns computed and folded at a time: 32 KiB, so a block stays in the L1 or L2 cache
/// between being written and being summed.
const BLOCK_BARS: usize = 4096;

/// Bars of a series in memory swept at a time ([`FoldSweeper::push_in_pieces`]): 2 MiB, the
/// chunk a file is read in, so a series costs the same swept from memory as from a file.
pub const PIECE_BARS: usize = 1 << 18;

thread_local! {
    /// The worker's block of bar returns, reused for every combo it runs.
    static SCRATCH: std::cell::RefCell<ReturnScratch> =
        std::cell::RefCell::new(ReturnScratch::new(BLOCK_BARS));
}

/// One combo's fold sweep so far.
#[derive(Clone, Debug)]
struct Folding {
    state: RunState,
    columns: ColumnSums,
    walk: Option<ColumnSums>,
    fold_pnl: Vec<f64>,
    fold_trades: Vec<u64>,
    gross_profit: f64,
    gross_loss: f64,
    /// The bar (of the whole series) where the position first opened.
    first_entry: Option<usize>,
    /// The first bar return out of range, as (bar, value).
    bad: Option<(usize, f64)>,
}

/// A fold sweep fed in pieces: [`push`](FoldSweeper::push) the series in order, then
/// [`finish`](FoldSweeper::finish). Its length is declared up front, because the folds
/// (`numpy.array_split` of the bars) and the walk-forward windows are cut from it.
#[derive(Clone, Debug)]
pub struct FoldSweeper {
    variant: Variant,
    params: Vec<Combo>,
    fee_pct: f64,
    threads: Threads,
    bars: usize,
    bounds: Vec<Range<usize>>,
    walk_bounds: Option<Vec<Range<usize>>>,
    lookback: usize,
    tail: Vec<f64>,
    buf: Vec<f64>,
    pushed: usize,
    combos: Vec<Folding>,
}

impl FoldSweeper {
    /// A fold sweep of `params` over a series of `bars` bars, before its first bar. Every input
    /// is checked here (the folds against the bars, the walk-forward windows); errors name it.
    pub fn new(
        variant: Variant,
        params: &[Combo],
        fee_pct: f64,
        threads: Threads,
        bars: usize,
        spec: FoldSpec<'_>,
    ) -> Result<FoldSweeper, ValidateError> {
        validate_params_and_fee(params, fee_pct)?;
        if bars == 0 {
            return Err(KernelError::EmptySeries.into());
        }
        let bounds = match spec.folds {
            Some(s) => fold_bounds(bars, s)?,
            None => std::iter::once(0..bars).collect(),
        };
        let walk_bounds = spec.walk.map(|w| w.segments(bars)).transpose()?;
        let ends = |b: &[Range<usize>]| b.iter().map(|r| r.end).collect::<Vec<_>>();
        let folding = Folding {
            state: RunState::new(),
            columns: ColumnSums::new(&ends(&bounds)),
            walk: walk_bounds.as_deref().map(|b| ColumnSums::new(&ends(b))),
            fold_pnl: vec![0.0; bounds.len()],
            fold_trades: vec![0; bounds.len()],
            gross_profit: 0.0,
            gross_loss: 0.0,
            first_entry: None,
            bad: None,
        };
        Ok(FoldSweeper {
            variant,
            params: params.to_vec(),
            fee_pct,
            threads,
            bars,
            bounds,
            walk_bounds,
            lookback: params.iter().map(effective_window).max().unwrap_or(1) - 1,
            tail: Vec::new(),
            buf: Vec::new(),
            pushed: 0,
            combos: vec![folding; params.len()],
        })
    }

    /// Bars pushed so far.
    pub fn bars_pushed(&self) -> usize {
        self.pushed
    }

    /// The next bars of the series, in order; every combo's bar returns of them go to `column`
    /// as `(combo, bar, returns)` when given. A bad price is refused with its index in the whole
    /// series, as are bars past the declared length; the sweeper is then left as it was.
    pub fn push(
        &mut self,
        chunk: &[f64],
        column: Option<ColumnSink<'_>>,
    ) -> Result<(), ValidateError> {
        if chunk.is_empty() {
            return Ok(());
        }
        self.check(chunk)?;
        let keep = self.tail.len();
        // The first piece is swept in place; later ones after the lookback they need.
        let mut buf = std::mem::take(&mut self.buf);
        let swept = if keep == 0 {
            self.sweep(chunk, 0, column)
        } else {
            buf.clear();
            buf.extend_from_slice(&self.tail);
            buf.extend_from_slice(chunk);
            self.sweep(&buf, keep, column)
        };
        if swept.is_ok() {
            let held = if keep == 0 { chunk } else { &buf[..] };
            self.keep_tail(held);
        }
        self.buf = buf;
        swept
    }

    /// Bars held in memory, pushed a piece of [`PIECE_BARS`] at a time: the same as [`push`] on
    /// each piece (so the same bits as one push of them all), but each piece after the first is
    /// swept where it lies, the bars before it being its lookback. One push of a long series
    /// would keep every position change of a combo over the whole of it and read the series
    /// from memory once per combo; a piece's changes stay small and its bars stay in cache
    /// from one combo to the next. Checked as [`push`] checks, before any bar is swept.
    ///
    /// [`push`]: FoldSweeper::push
    pub fn push_in_pieces(
        &mut self,
        bars: &[f64],
        column: Option<ColumnSink<'_>>,
    ) -> Result<(), ValidateError> {
        self.check(bars)?;
        let mut at = 0;
        while at < bars.len() {
            let end = (at + PIECE_BARS).min(bars.len());
            if at < self.lookback {
                // Not yet a whole lookback in `bars` before the piece: the tail carries it.
                self.push(&bars[at..end], column)?;
            } else {
                let keep = self.lookback;
                self.sweep(&bars[at - keep..end], keep, column)?;
                self.keep_tail(&bars[..end]);
            }
            at = end;
        }
        Ok(())
    }

    /// Refuses a bad price (by its index in the whole series) and bars past the declared length.
    fn check(&self, chunk: &[f64]) -> Result<(), ValidateError> {
        validate_close(chunk).map_err(|e| match e {
            KernelError::BadPrice { index, value } => KernelError::BadPrice {
                index: index + self.pushed,
                value,
            },
            e => e,
        })?;
        if self.pushed + chunk.len() > self.bars {
            return Err(ResearchError::Rows {
                start: self.pushed,
                end: self.pushed + chunk.len(),
                why: format!("the series was declared {} bars long", self.bars),
            }
            .into());
        }
        Ok(())
    }

    /// The lookback the next piece needs: the last bars of `held`, which ends at the last bar
    /// pushed.
    fn keep_tail(&mut self, held: &[f64]) {
        let keep = self.lookback.min(held.len());
        self.tail.clear();
        self.tail.extend_from_slice(&held[held.len() - keep..]);
    }

    /// Sweeps the bars of `buf` after its first `keep` (the lookback, swept already), every
    /// combo resumed from its state and its returns folded; the state moves on only when all
    /// of it succeeds.
    fn sweep(
        &mut self,
        buf: &[f64],
        keep: usize,
        column: Option<ColumnSink<'_>>,
    ) -> Result<(), ValidateError> {
        let base = self.pushed - keep;
        let starts: Vec<RunState> = self.combos.iter().map(|c| c.state).collect();
        let (combos, bounds) = (&self.combos, &self.bounds[..]);
        let folded = self.variant.sweep_runs_from(
            ValidClose::new(buf)?,
            &self.params,
            self.fee_pct,
            self.threads,
            keep,
            &starts,
            |run| {
                let mut c = combos[run.combo()].clone();
                c.state = SCRATCH.with_borrow_mut(|scratch| {
                    run.for_each_block_within(scratch, MAX_ABS, |at, returns, within| {
                        let bar = base + at;
                        c.columns.push_slice(returns);
                        if let Some(w) = c.walk.as_mut() {
                            w.push_slice(returns);
                        }
                        if let Some(sink) = column {
                            sink(run.combo(), bar, returns);
                        }
                        // Where the first out of range (NaN included) is, only in a block
                        // that has one.
                        if c.bad.is_none() && !within {
                            let out = |r: &f64| r.is_nan() || r.abs() > MAX_ABS;
                            c.bad = returns.iter().position(out).map(|i| (bar + i, returns[i]));
                        }
                    })
                });
                c.first_entry = c
                    .first_entry
                    .or(run.changes().first().map(|ch| base + ch.bar));
                let mut f = 0;
                for (at, pnl) in run.trades() {
                    while bounds[f].end <= base + at {
                        f += 1;
                    }
                    c.fold_pnl[f] += pnl;
                    c.fold_trades[f] += 1;
                    if pnl > 0.0 {
                        c.gross_profit += pnl;
                    } else if pnl < 0.0 {
                        c.gross_loss -= pnl;
                    }
                }
                c
            },
        )?;
        self.combos = folded;
        self.pushed += buf.len() - keep;
        Ok(())
    }

    /// The fold sweep, once every declared bar has been pushed. A bar return beyond +-1e100
    /// (which only absurd prices give) is refused by bar and combo.
    pub fn finish(self) -> Result<FoldSweep, ValidateError> {
        if self.pushed != self.bars {
            return Err(ResearchError::MissingRow {
                row: self.pushed,
                bars: self.bars,
            }
            .into());
        }
        let mut combos = Vec::with_capacity(self.combos.len());
        let mut columns = Vec::with_capacity(self.combos.len());
        let mut walk = Vec::new();
        for (k, c) in self.combos.into_iter().enumerate() {
            if let Some((row, value)) = c.bad {
                return Err(hullsweep_research::check_value(row, k, value)
                    .expect_err("recorded as out of range")
                    .into());
            }
            let metrics = c.state.metrics(self.bars, c.first_entry);
            combos.push(ComboSummary {
                metrics,
                sharpe: whole_series(&c.columns, Metric::Sharpe),
                win_rate: (metrics.trades > 0).then(|| metrics.wins as f64 / metrics.trades as f64),
                profit_factor: (c.gross_loss > 0.0).then(|| c.gross_profit / c.gross_loss),
                fold_pnl: c.fold_pnl,
                fold_trades: c.fold_trades,
            });
            columns.push(c.columns);
            walk.extend(c.walk);
        }
        Ok(FoldSweep {
            bars: self.bars,
            bounds: self.bounds,
            combos,
            columns,
            walk: self.walk_bounds.map(|b| (b, walk)),
        })
    }
}

/// Runs `variant` over every combo once, folding each one's bar returns into `spec`'s folds
/// (and walk-forward segments) and, when given, handing them to `column`: a
/// [`FoldSweeper`] fed the whole series ([`FoldSweeper::push_in_pieces`]). Inputs are checked
/// first; errors name the value.
pub fn fold_sweep(
    variant: Variant,
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    spec: FoldSpec<'_>,
    column: Option<ColumnSink<'_>>,
) -> Result<FoldSweep, ValidateError> {
    let bars = close.bars();
    let mut sweeper = FoldSweeper::new(variant, params, fee_pct, threads, bars.len(), spec)?;
    sweeper.push_in_pieces(bars, column)?;
    sweeper.finish()
}
