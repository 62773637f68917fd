//! Runs that keep every position change, and the bar returns read from them (docs/kernel.md,
//! "Bar returns"): what the research statistics (per-fold reports, CSCV, deflated Sharpe) see.
//!
//! A variant runs each combo through its own pipeline with a [`Recorder`], an event loop that
//! notes the state after each bar where the position changed. Between two changes the state is
//! constant, so the returns of every bar follow from the changes and the closes alone, with the
//! kernel's operations in the kernel's order: the same bits as
//! [`hullsweep_kernel::backtest_returns`], for every variant (`tests/returns.rs`).

use crate::backtest::EventLoop;
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

impl Recorder {
    pub(crate) fn new() -> Recorder {
        Recorder {
            bt: Backtest::tracking(true),
            changes: Vec::new(),
        }
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
        let (pos, entry) = (self.bt.pos, self.bt.entry);
        self.bt.step_at(i, c, d, fee_pct);
        if self.bt.pos != pos {
            // The loop's own expression on the same operands: the bits it added to `pnl`.
            let trade = (pos != 0).then(|| pos as f64 * (c / entry - 1.0) * 100.0 - fee_pct);
            self.changes.push(Change {
                bar: i,
                pos: self.bt.pos,
                entry: self.bt.entry,
                realized: self.bt.pnl,
                trade,
            });
        }
    }
}

/// One combo's finished run: its metrics and position changes, over the closes they index.
#[derive(Clone, Copy, Debug)]
pub struct ComboRun<'a> {
    combo: usize,
    close: &'a [f64],
    metrics: &'a Metrics,
    changes: &'a [Change],
}

impl<'a> ComboRun<'a> {
    /// The combo's index in the params.
    pub fn combo(&self) -> usize {
        self.combo
    }

    /// Its metrics, as [`Variant::sweep_metrics`] gives them.
    pub fn metrics(&self) -> &'a Metrics {
        self.metrics
    }

    /// Every change of its position, in bar order.
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

    /// Calls `f(t, r_t)` for every bar `t` in order with its bar return: the bits of
    /// [`hullsweep_kernel::backtest_returns`].
    #[inline]
    pub fn for_each_return(&self, mut f: impl FnMut(usize, f64)) {
        let close = self.close;
        let mut equity_before = 0.0;
        // Flat before the first change: the equity is 0.0 at every bar with a price.
        let first = self.changes.first().map_or(close.len(), |c| c.bar);
        // (The kernel's `0.0 - 0.0` is `+0.0`, as a missing bar's is.)
        (0..first).for_each(|t| f(t, 0.0));
        for (j, ch) in self.changes.iter().enumerate() {
            let end = self.changes.get(j + 1).map_or(close.len(), |n| n.bar);
            let (side, entry, realized) = (ch.pos as f64, ch.entry, ch.realized);
            for (t, &c) in close.iter().enumerate().take(end).skip(ch.bar) {
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

/// The working memory of [`ComboRun::for_each_block`], reused from combo to combo: the block of
/// returns and what locates each bar's loop state without a branch.
#[derive(Clone, Debug, Default)]
pub struct ReturnScratch {
    block: Vec<f64>,
    /// Per bar of the block: 1 where a change happens, else 0.
    step: Vec<u32>,
    /// The loop state `(side, entry, realized)` after each change, after a flat first entry.
    states: Vec<[f64; 3]>,
}

impl ReturnScratch {
    /// Scratch for blocks of `bars` bars (at least 1).
    pub fn new(bars: usize) -> ReturnScratch {
        let bars = bars.max(1);
        ReturnScratch {
            block: vec![0.0; bars],
            step: vec![0; bars],
            states: Vec::new(),
        }
    }
}

impl ComboRun<'_> {
    /// Hands every bar's return to `f` a block at a time, `f(first_bar, returns)`, in bar order,
    /// each block as long as `scratch` was made for (so that it stays in cache while `f` reads
    /// it): the bits of [`Self::for_each_return`].
    ///
    /// Written without a branch per change, because changes come every few bars (a short-window
    /// combo reverses about every four bars on the default series) and a branch taken at each
    /// would be mispredicted at each: per block the changes are marked in `step`, and each bar
    /// finds its state by a running count of them.
    pub fn for_each_block(&self, scratch: &mut ReturnScratch, mut f: impl FnMut(usize, &[f64])) {
        let (close, changes) = (self.close, self.changes);
        let ReturnScratch {
            block,
            step,
            states,
        } = scratch;
        states.clear();
        // Before the first change: flat, so the equity is `0.0 + 0.0 * x` = `+0.0` at every
        // bar with a price (any positive entry keeps `x` finite), as the kernel's `0.0`.
        states.push([0.0, 1.0, 0.0]);
        states.extend(changes.iter().map(|c| [c.pos as f64, c.entry, c.realized]));
        let (mut state, mut next) = (0usize, 0usize);
        let mut equity_before = 0.0;
        for start in (0..close.len()).step_by(block.len()) {
            let end = (start + block.len()).min(close.len());
            let len = end - start;
            step[..len].fill(0);
            while next < changes.len() && changes[next].bar < end {
                step[changes[next].bar - start] = 1;
                next += 1;
            }
            let bars = close[start..end].iter().zip(&step[..len]);
            for (r, (&c, &s)) in block[..len].iter_mut().zip(bars) {
                state += s as usize;
                let [side, entry, realized] = states[state];
                let equity = realized + side * (c / entry - 1.0) * 100.0;
                let missing = c.is_nan();
                *r = if missing { 0.0 } else { equity - equity_before };
                equity_before = if missing { equity_before } else { equity };
            }
            f(start, &block[..len]);
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
        let bars = close.bars();
        self.run_loops(close, params, fee_pct, threads, Recorder::new, |k, r| {
            let metrics = r.bt.metrics(bars.len());
            visit(&ComboRun {
                combo: k,
                close: bars,
                metrics: &metrics,
                changes: &r.changes,
            })
        })
    }
}
