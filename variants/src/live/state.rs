//! `live`, the event loop of one combo, bar by bar: the spec's stop-and-reverse loop
//! (`prealloc::Backtest::step`'s operations in its order) reporting each open and close as it happens.

use hullsweep_kernel::{Event, Trade};

/// One combo's loop state: what `Backtest` carries, plus the entry bar a trade reports.
#[derive(Clone, Copy, Debug)]
pub(super) struct Loop {
    pub(super) pos: i64,
    pub(super) entry: f64,
    pub(super) entry_bar: u64,
    pub(super) pnl: f64,
    pub(super) trades: i64,
    pub(super) prev: f64,
}

impl Loop {
    pub(super) fn new() -> Self {
        Loop {
            pos: 0,
            entry: 0.0,
            entry_bar: 0,
            pnl: 0.0,
            trades: 0,
            prev: f64::NAN,
        }
    }

    /// One bar `bar` of combo `combo` at price `c` with `d = hma - hma3`; the events go to `out`
    /// (a close before its open, as `kernel::backtest_events` reports them).
    #[inline(always)]
    pub(super) fn step(
        &mut self,
        combo: usize,
        bar: u64,
        c: f64,
        d: f64,
        fee_pct: f64,
        out: &mut Vec<Event>,
    ) {
        if d.is_nan() {
            self.prev = f64::NAN;
            return;
        }
        if !self.prev.is_nan() {
            let sig = if self.prev <= 0.0 && d > 0.0 {
                1
            } else if self.prev >= 0.0 && d < 0.0 {
                -1
            } else {
                0
            };
            if sig != 0 && sig != self.pos {
                if self.pos != 0 {
                    let t = self.pos as f64 * (c / self.entry - 1.0) * 100.0 - fee_pct;
                    self.pnl += t;
                    self.trades += 1;
                    out.push(Event::Close(Trade {
                        combo,
                        side: self.pos,
                        entry_bar: self.entry_bar,
                        exit_bar: bar,
                        entry_price: self.entry,
                        exit_price: c,
                        pnl: t,
                    }));
                }
                self.pos = sig;
                self.entry = c;
                self.entry_bar = bar;
                out.push(Event::Open {
                    combo,
                    bar,
                    side: sig,
                    price: c,
                });
            }
        }
        self.prev = d;
    }
}
