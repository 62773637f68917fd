//! [`Backtest`]: the spec's event loop as a state machine, one combo's whole state between bars;
//! every variant and the [`Sweeper`](crate::Sweeper) drive it, so it sits apart from them all.

use hullsweep_kernel::Tally;

/// The spec's event loop as a state machine fed bar by bar in order, so the pipeline can run it
/// tile by tile; the operations and their order are the reference's.
///
/// With `track` set it also keeps the metrics' accumulators (docs/kernel.md, "Metrics"); they
/// are touched only when the position changes, and a batch `(pnl, trades)` sweep leaves
/// `track` off, so its loop is the plain one.
///
/// It is also one combo's whole state between two pushes of a [`Sweeper`](crate::Sweeper):
/// callers outside this crate treat it as opaque and read only [`pnl`](Backtest::pnl) and
/// [`trades`](Backtest::trades).
#[derive(Clone, Copy, Debug)]
pub struct Backtest {
    pub(crate) pos: i64,
    pub(crate) entry: f64,
    pub(crate) pnl: f64,
    pub(crate) trades: i64,
    pub(crate) prev: f64,
    pub(crate) track: bool,
    pub(crate) tally: Tally,
}

impl Default for Backtest {
    fn default() -> Self {
        Backtest::new()
    }
}

impl Backtest {
    /// The state before the first bar: flat, nothing booked.
    pub fn new() -> Self {
        Backtest {
            pos: 0,
            entry: 0.0,
            pnl: 0.0,
            trades: 0,
            prev: f64::NAN,
            track: false,
            tally: Tally::new(),
        }
    }

    /// A loop that keeps the metrics when `track` is set.
    pub(crate) fn tracking(track: bool) -> Self {
        Backtest {
            track,
            ..Backtest::new()
        }
    }

    /// The metrics of a tracking loop that has seen all `n_bars` bars.
    pub(crate) fn metrics(&self, n_bars: usize) -> hullsweep_kernel::Metrics {
        self.tally.finish(self.pnl, self.trades, n_bars)
    }

    /// PnL of the closed trades so far, in percent.
    pub fn pnl(&self) -> f64 {
        self.pnl
    }

    /// Closed trades so far.
    pub fn trades(&self) -> i64 {
        self.trades
    }

    /// Feeds bars in order, `d = hma - hma3`; bar `j` of the slices is bar `at + j` of the series.
    #[inline]
    pub(crate) fn feed(
        &mut self,
        at: usize,
        close: &[f64],
        hma: &[f64],
        hma3: &[f64],
        fee_pct: f64,
    ) {
        assert!(
            hma.len() == close.len() && hma3.len() == close.len(),
            "one bar each"
        );
        if self.track {
            self.feed_tracked(at, close, |j| hma[j] - hma3[j], fee_pct);
        } else {
            self.feed_with(close, |j| hma[j] - hma3[j], fee_pct);
        }
    }

    /// [`Backtest::feed_with`] keeping the metrics: [`feed_stepped`] on a copy (so the state
    /// lives in registers).
    #[inline(never)]
    fn feed_tracked<D: Fn(usize) -> f64>(
        &mut self,
        at: usize,
        close: &[f64],
        d_at: D,
        fee_pct: f64,
    ) {
        let mut s = *self;
        feed_stepped(&mut s, at, close, d_at, fee_pct);
        *self = s;
    }

    /// [`Backtest::step`] at bar `i`, keeping the metrics when `track` is set; says what the bar
    /// did to the position. A closed trade's PnL is the value `step` adds to `pnl`, so the
    /// accumulators (and a caller recording trades) see exactly the bits the reference's `t` has.
    #[inline(always)]
    pub(crate) fn step_at(&mut self, i: usize, c: f64, d: f64, fee_pct: f64) -> Moved {
        if !self.track {
            return self.step_moved(c, d, fee_pct);
        }
        let pos = self.pos;
        let moved = self.step_moved(c, d, fee_pct);
        match moved {
            Moved::Held => {}
            Moved::Opened => self.tally.entered(i),
            Moved::Reversed(t) => self.tally.trade(pos, t, self.pnl),
        }
        moved
    }

    /// Chunks of bars in which an open position cannot change are skipped in one step: with
    /// `pos == 1` and every `d > 0` (NaN fails the test), each bar's signal is `+1` or `0`, so
    /// nothing trades and only `prev` moves on (`pos == -1` mirrors it).
    #[inline(always)]
    fn feed_with<D: Fn(usize) -> f64>(&mut self, close: &[f64], d_at: D, fee_pct: f64) {
        const C: usize = 8;
        let mut s = *self;
        let full = close.len() / C * C;
        let mut j0 = 0;
        while j0 < full {
            let d: [f64; C] = std::array::from_fn(|j| d_at(j0 + j));
            let quiet = match s.pos {
                1 => d.iter().all(|&x| x > 0.0),
                -1 => d.iter().all(|&x| x < 0.0),
                _ => false,
            };
            if quiet {
                s.prev = d[C - 1];
            } else {
                for (&c, &d) in close[j0..j0 + C].iter().zip(&d) {
                    s.step(c, d, fee_pct);
                }
            }
            j0 += C;
        }
        for (j, &c) in close.iter().enumerate().skip(full) {
            s.step(c, d_at(j), fee_pct);
        }
        *self = s;
    }

    /// One bar of the spec's loop, `d = hma - hma3`.
    #[inline(always)]
    pub(crate) fn step(&mut self, c: f64, d: f64, fee_pct: f64) {
        self.step_moved(c, d, fee_pct);
    }

    /// [`Backtest::step`], saying what the bar did to the position.
    #[inline(always)]
    fn step_moved(&mut self, c: f64, d: f64, fee_pct: f64) -> Moved {
        if d.is_nan() {
            self.prev = f64::NAN;
            return Moved::Held;
        }
        let mut moved = Moved::Held;
        if !self.prev.is_nan() {
            let sig = if self.prev <= 0.0 && d > 0.0 {
                1
            } else if self.prev >= 0.0 && d < 0.0 {
                -1
            } else {
                0
            };
            if sig != 0 && sig != self.pos {
                moved = if self.pos != 0 {
                    let t = self.pos as f64 * (c / self.entry - 1.0) * 100.0 - fee_pct;
                    self.pnl += t;
                    self.trades += 1;
                    Moved::Reversed(t)
                } else {
                    Moved::Opened
                };
                self.pos = sig;
                self.entry = c;
            }
        }
        self.prev = d;
        moved
    }
}

/// What one bar of the loop did to the position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Moved {
    /// Nothing: the position (or flatness) holds.
    Held,
    /// The first entry.
    Opened,
    /// A reversal, closing a trade with this PnL (the loop's `t`, fee included).
    Reversed(f64),
}

/// An event loop a pipeline can drive: [`Backtest`] itself, or a wrapper that also watches its
/// state change ([`crate::returns`]). Pipelines generic over it compile to the same code for
/// `Backtest` as before.
pub(crate) trait EventLoop {
    /// The loop's state.
    fn state(&self) -> &Backtest;
    /// The loop's state, to move `prev` on over a quiet chunk.
    fn state_mut(&mut self) -> &mut Backtest;
    /// [`Backtest::step_at`].
    fn step_at(&mut self, i: usize, c: f64, d: f64, fee_pct: f64);
    /// [`Backtest::feed`]: bars in order, bar `j` of the slices bar `at + j` of the series.
    fn feed(&mut self, at: usize, close: &[f64], hma: &[f64], hma3: &[f64], fee_pct: f64) {
        assert!(
            hma.len() == close.len() && hma3.len() == close.len(),
            "one bar each"
        );
        feed_stepped(self, at, close, |j| hma[j] - hma3[j], fee_pct);
    }
}

impl EventLoop for Backtest {
    #[inline(always)]
    fn state(&self) -> &Backtest {
        self
    }
    #[inline(always)]
    fn state_mut(&mut self) -> &mut Backtest {
        self
    }
    #[inline(always)]
    fn step_at(&mut self, i: usize, c: f64, d: f64, fee_pct: f64) {
        let _ = Backtest::step_at(self, i, c, d, fee_pct);
    }
    #[inline(always)]
    fn feed(&mut self, at: usize, close: &[f64], hma: &[f64], hma3: &[f64], fee_pct: f64) {
        Backtest::feed(self, at, close, hma, hma3, fee_pct);
    }
}

/// Feeds bars through `l.step_at` with [`Backtest::feed_with`]'s quiet-chunk skip: a chunk of
/// bars that all keep the open position's sign neither opens nor closes a position, so only
/// `prev` moves on; every other bar is stepped with its index.
#[inline(always)]
fn feed_stepped<L: EventLoop + ?Sized, D: Fn(usize) -> f64>(
    l: &mut L,
    at: usize,
    close: &[f64],
    d_at: D,
    fee_pct: f64,
) {
    const C: usize = 8;
    let full = close.len() / C * C;
    let mut j0 = 0;
    while j0 < full {
        let d: [f64; C] = std::array::from_fn(|j| d_at(j0 + j));
        let quiet = match l.state().pos {
            1 => d.iter().all(|&x| x > 0.0),
            -1 => d.iter().all(|&x| x < 0.0),
            _ => false,
        };
        if quiet {
            l.state_mut().prev = d[C - 1];
        } else {
            for (j, (&c, &d)) in close[j0..j0 + C].iter().zip(&d).enumerate() {
                l.step_at(at + j0 + j, c, d, fee_pct);
            }
        }
        j0 += C;
    }
    for (j, &c) in close.iter().enumerate().skip(full) {
        l.step_at(at + j, c, d_at(j), fee_pct);
    }
}
