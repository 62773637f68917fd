//! `live`, the event loop of one combo, bar by bar: the spec's stop-and-reverse loop
//! (`prealloc::Backtest::step`'s operations in its order) reporting each open and close as it
//! happens. Split hot (read every bar) and cold (written at an event), so a push over 10,000
//! combos streams only the hot half through the cache.

use hullsweep_kernel::{Event, Trade};

/// What the loop reads at every bar.
#[derive(Clone, Copy, Debug)]
pub(super) struct Hot {
    pub(super) pos: i64,
    pub(super) prev: f64,
}

/// What it writes only when a position opens or closes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cold {
    pub(super) entry: f64,
    pub(super) entry_bar: u64,
    pub(super) pnl: f64,
    pub(super) trades: i64,
}

impl Hot {
    pub(super) fn new() -> Self {
        Hot {
            pos: 0,
            prev: f64::NAN,
        }
    }
}

impl Cold {
    pub(super) fn new() -> Self {
        Cold {
            entry: 0.0,
            entry_bar: 0,
            pnl: 0.0,
            trades: 0,
        }
    }
}

/// One bar `bar` of combo `combo` at price `c` with `d = hma - hma3`; the events go to `out`
/// (a close before its open, as `kernel::backtest_events` reports them).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn step(
    hot: &mut Hot,
    cold: &mut Cold,
    combo: usize,
    bar: u64,
    c: f64,
    d: f64,
    fee_pct: f64,
    out: &mut Vec<Event>,
) {
    if d.is_nan() {
        hot.prev = f64::NAN;
        return;
    }
    if !hot.prev.is_nan() {
        let sig = if hot.prev <= 0.0 && d > 0.0 {
            1
        } else if hot.prev >= 0.0 && d < 0.0 {
            -1
        } else {
            0
        };
        if sig != 0 && sig != hot.pos {
            trade(hot, cold, sig, combo, bar, c, fee_pct, out);
        }
    }
    hot.prev = d;
}

/// The signal `sig` against the position: close it (if open), open the other way.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn trade(
    hot: &mut Hot,
    cold: &mut Cold,
    sig: i64,
    combo: usize,
    bar: u64,
    c: f64,
    fee_pct: f64,
    out: &mut Vec<Event>,
) {
    if hot.pos != 0 {
        let t = hot.pos as f64 * (c / cold.entry - 1.0) * 100.0 - fee_pct;
        cold.pnl += t;
        cold.trades += 1;
        out.push(Event::Close(Trade {
            combo,
            side: hot.pos,
            entry_bar: cold.entry_bar,
            exit_bar: bar,
            entry_price: cold.entry,
            exit_price: c,
            pnl: t,
        }));
    }
    hot.pos = sig;
    cold.entry = c;
    cold.entry_bar = bar;
    out.push(Event::Open {
        combo,
        bar,
        side: sig,
        price: c,
    });
}
