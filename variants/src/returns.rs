//! Runs that keep every position change, and the bar returns read from them (docs/kernel.md,
//! "Bar returns"): what the research statistics (per-fold reports, CSCV, deflated Sharpe) see.
//!
//! A variant runs each combo through its own pipeline with a `Recorder`, an event loop that
//! notes the state after each bar where the position changed. Between two changes the state is
//! constant, so the returns of every bar follow from the changes and the closes alone, with the
//! kernel's operations in the kernel's order: the same bits as
//! [`hullsweep_kernel::backtest_returns`], for every variant (`tests/returns.rs`).

use crate::backtest::{EventLoop, Moved};
use crate::{Backtest, Threads, Variant};
use hullsweep_kernel::{Combo, KernelError, Metrics, ValidClose};

/// The state of a combo's loop after the events of bar `bar`, where its position changed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    /// The bar, from 0.
    pub bar: usize,
    /// The position now held: `1` long, `-1` short (never flat again once open).
    pub pos: i64,
    /// Its entry price, `close[bar]`.
    pub entry: f64,
    /// The closed trades' PnL so far (the loop's `pnl`).
    pub realized: f64,
    /// The PnL of the trade closed at this bar (a reversal), by the loop's own expression;
    /// None at the first entry.
    pub trade: Option<f64>,
}

/// An event loop that records each position change ([`Change`]) beside a tracking
/// [`Backtest`] (so the metrics come with it).
pub(crate) struct Recorder {
    bt: Backtest,
    changes: Vec<Change>,
}

/// The most changes a worker keeps room for between runs (4 MiB of them): enough for a combo
/// that reverses every few bars over a million bars, without holding a long series' worth.
const SPARE_CHANGES: usize = (4 << 20) / std::mem::size_of::<Change>();

thread_local! {
    /// The worker's change list from its last run, emptied: the next combo it runs records into
    /// it, so a sweep grows (and faults in) a list per worker rather than one per combo.
    static SPARE: std::cell::Cell<Vec<Change>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Recorder {
    /// A recorder resuming a tracking loop.
    pub(crate) fn starting(bt: Backtest) -> Recorder {
        Recorder {
            bt,
            changes: SPARE.take(),
        }
    }

    /// Hands the change list back to the worker for its next run.
    fn recycle(mut self) {
        if self.changes.capacity() <= SPARE_CHANGES {
            self.changes.clear();
            SPARE.set(self.changes);
        }
    }
}

/// A combo's run state between two pieces of a series: its event loop (with the metric
/// accumulators) and its equity at the last bar with a price. [`RunState::new`] is the state
/// before the first bar; [`ComboRun::for_each_block`] returns the state after a run.
#[derive(Clone, Copy, Debug)]
pub struct RunState {
    pub(crate) bt: Backtest,
    pub(crate) equity: f64,
}

impl Default for RunState {
    fn default() -> Self {
        RunState::new()
    }
}

impl RunState {
    /// Before the first bar: flat, no trades, equity 0.0.
    pub fn new() -> RunState {
        RunState {
            bt: Backtest::tracking(true),
            equity: 0.0,
        }
    }

    /// The metrics after `n_bars` bars, the position having first opened at bar `first_entry`
    /// of them (None: never): the loop counts bars in the pieces it was given, so the caller of
    /// a run in pieces says where in the whole series the position opened.
    pub fn metrics(&self, n_bars: usize, first_entry: Option<usize>) -> Metrics {
        let mut m = self.bt.metrics(n_bars);
        m.bars_in_market = first_entry.map_or(0, |f| n_bars.saturating_sub(f) as i64);
        m
    }

    /// `(side, entry, realized)` of the bar-return formula; None while flat (before the first
    /// entry), where every bar returns `0.0`.
    pub(crate) fn formula(&self) -> Option<[f64; 3]> {
        (self.bt.pos != 0).then_some([self.bt.pos as f64, self.bt.entry, self.bt.pnl])
    }
}

impl EventLoop for Recorder {
    #[inline(always)]
    fn state(&self) -> &Backtest {
        &self.bt
    }

    #[inline(always)]
    fn state_mut(&mut self) -> &mut Backtest {
        &mut self.bt
    }

    #[inline(always)]
    fn step_at(&mut self, i: usize, c: f64, d: f64, fee_pct: f64) {
        let trade = match self.bt.step_at(i, c, d, fee_pct) {
            Moved::Held => return,
            Moved::Opened => None,
            // The value the loop added to `pnl`.
            Moved::Reversed(t) => Some(t),
        };
        self.changes.push(Change {
            bar: i,
            pos: self.bt.pos,
            entry: self.bt.entry,
            realized: self.bt.pnl,
            trade,
        });
    }
}

/// One combo's finished run over bars `from..` of a buffer: its metrics and position changes,
/// over the closes they index, and the state it started from.
#[derive(Clone, Copy, Debug)]
pub struct ComboRun<'a> {
    pub(crate) combo: usize,
    pub(crate) close: &'a [f64],
    pub(crate) from: usize,
    pub(crate) start: &'a RunState,
    pub(crate) end: &'a Backtest,
    pub(crate) metrics: &'a Metrics,
    pub(crate) changes: &'a [Change],
}

impl<'a> ComboRun<'a> {
    /// The combo's index in the params.
    pub fn combo(&self) -> usize {
        self.combo
    }

    /// Its metrics over the buffer, as [`Variant::sweep_metrics`] gives them for a run from the
    /// first bar (a run in pieces takes [`RunState::metrics`] of its last state instead).
    pub fn metrics(&self) -> &'a Metrics {
        self.metrics
    }

    /// The first bar the loop saw (the bars before it were lookback only).
    pub fn from(&self) -> usize {
        self.from
    }

    /// Every change of its position, in bar order (bars index the buffer).
    pub fn changes(&self) -> &'a [Change] {
        self.changes
    }

    /// The closed trades as `(exit_bar, pnl)`, in exit order; summed in order from `0.0` they
    /// give the sweep's PnL bit for bit.
    pub fn trades(&self) -> impl Iterator<Item = (usize, f64)> + 'a {
        self.changes
            .iter()
            .filter_map(|c| c.trade.map(|t| (c.bar, t)))
    }

    /// Calls `f(t, r_t)` for every bar `t` from [`Self::from`] on, in order, with its bar
    /// return: the bits of [`hullsweep_kernel::backtest_returns`]. The plain definition, one
    /// stretch between changes at a time; [`Self::for_each_block`] is the fast one.
    #[inline]
    pub fn for_each_return(&self, mut f: impl FnMut(usize, f64)) {
        let close = self.close;
        let mut equity_before = self.start.equity;
        let first = self.changes.first().map_or(close.len(), |c| c.bar);
        let stretches = std::iter::once((self.from, first, self.start.formula())).chain(
            self.changes.iter().enumerate().map(|(j, ch)| {
                let end = self.changes.get(j + 1).map_or(close.len(), |n| n.bar);
                (ch.bar, end, Some([ch.pos as f64, ch.entry, ch.realized]))
            }),
        );
        for (from, end, formula) in stretches {
            let bars = close.iter().enumerate().take(end).skip(from);
            let Some([side, entry, realized]) = formula else {
                // Flat: the equity is the kernel's 0.0, so is every return.
                bars.for_each(|(t, _)| f(t, 0.0));
                continue;
            };
            for (t, &c) in bars {
                if c.is_nan() {
                    f(t, 0.0);
                } else {
                    let equity = realized + side * (c / entry - 1.0) * 100.0;
                    f(t, equity - equity_before);
                    equity_before = equity;
                }
            }
        }
    }
}

impl Variant {
    /// Runs every combo with this variant's pipeline, keeping each one's position changes, and
    /// hands each finished [`ComboRun`] to `visit` on the worker thread that ran it (so work
    /// per combo, such as folding its bar returns, runs in parallel with the sweep); the
    /// results come back in combo order. Inputs are validated; errors name the bad value.
    pub fn sweep_runs<R, V>(
        self,
        close: ValidClose<'_>,
        params: &[Combo],
        fee_pct: f64,
        threads: Threads,
        visit: V,
    ) -> Result<Vec<R>, KernelError>
    where
        R: Send,
        V: Fn(&ComboRun<'_>) -> R + Sync,
    {
        let fresh = vec![RunState::new(); params.len()];
        self.sweep_runs_from(close, params, fee_pct, threads, 0, &fresh, visit)
    }

    /// [`Self::sweep_runs`] resumed: combo `k` starts at bar `from` of `close` in the state
    /// `starts[k]` (what [`ComboRun::for_each_block`] returned for the previous piece), the
    /// bars before `from` being lookback only, as a [`Sweeper`](crate::Sweeper) pushes a
    /// series in pieces. One state per combo; errors name the bad value.
    #[allow(clippy::too_many_arguments)]
    pub fn sweep_runs_from<R, V>(
        self,
        close: ValidClose<'_>,
        params: &[Combo],
        fee_pct: f64,
        threads: Threads,
        from: usize,
        starts: &[RunState],
        visit: V,
    ) -> Result<Vec<R>, KernelError>
    where
        R: Send,
        V: Fn(&ComboRun<'_>) -> R + Sync,
    {
        if starts.len() != params.len() {
            return Err(KernelError::ParamsShape {
                detail: format!("{} run states for {} combos", starts.len(), params.len()),
            });
        }
        let bars = close.bars();
        let new = |k: usize| Recorder::starting(starts[k].bt);
        self.run_loops(close, params, fee_pct, threads, from, new, |k, r| {
            let metrics = r.bt.metrics(bars.len());
            let seen = visit(&ComboRun {
                combo: k,
                close: bars,
                from,
                start: &starts[k],
                end: &r.bt,
                metrics: &metrics,
                changes: &r.changes,
            });
            r.recycle();
            seen
        })
    }
}
