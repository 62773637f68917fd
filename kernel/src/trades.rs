//! The trade log and its events: what the event loop did at each bar (a position opened, a
//! trade closed), defined once here, by the study's loop, for every implementation to match.

use crate::{Combo, KernelError, ValidClose, hma, hma3, validate_params_and_fee, window};

/// One closed trade of one combo (`docs/kernel.md`, "Trades and events").
///
/// `pnl` is the event loop's own `pos * (exit / entry - 1.0) * 100.0 - fee_pct`, so a combo's
/// trades, summed in order from `0.0`, give its sweep PnL bit for bit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trade {
    /// The combo's index in the params.
    pub combo: usize,
    /// The position the trade held: `1` long, `-1` short.
    pub side: i64,
    /// The bar (from 0, over the whole series or stream) at which the position opened.
    pub entry_bar: u64,
    /// The bar at which it closed (the same bar opens the reverse position).
    pub exit_bar: u64,
    /// `close[entry_bar]`.
    pub entry_price: f64,
    /// `close[exit_bar]`.
    pub exit_price: f64,
    /// The trade's PnL in percent, net of the fee.
    pub pnl: f64,
}

impl Trade {
    /// The same trade with every float compared by its bits (`==` would call two NaN PnLs
    /// different and `0.0` equal to `-0.0`); the gate's test of "not one trade differs".
    pub fn same(&self, other: &Trade) -> bool {
        self.combo == other.combo
            && self.side == other.side
            && self.entry_bar == other.entry_bar
            && self.exit_bar == other.exit_bar
            && self.entry_price.to_bits() == other.entry_price.to_bits()
            && self.exit_price.to_bits() == other.exit_price.to_bits()
            && self.pnl.to_bits() == other.pnl.to_bits()
    }
}

/// What the event loop did at one bar for one combo. A reversal is a [`Event::Close`] followed
/// by an [`Event::Open`] at the same bar; the first entry is an `Open` alone. Every signal is
/// `+1` or `-1`, so a position, once open, is never flat again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// A position opened at `bar`, at `price` (`close[bar]`).
    Open {
        /// The combo's index in the params.
        combo: usize,
        /// The bar, from 0.
        bar: u64,
        /// `1` long, `-1` short.
        side: i64,
        /// The entry price.
        price: f64,
    },
    /// A trade closed.
    Close(Trade),
}

impl Event {
    /// The combo the event belongs to.
    pub fn combo(&self) -> usize {
        match self {
            Event::Open { combo, .. } => *combo,
            Event::Close(t) => t.combo,
        }
    }

    /// The bar at which it happened.
    pub fn bar(&self) -> u64 {
        match self {
            Event::Open { bar, .. } => *bar,
            Event::Close(t) => t.exit_bar,
        }
    }

    /// The same event, floats compared by their bits (see [`Trade::same`]).
    pub fn same(&self, other: &Event) -> bool {
        match (self, other) {
            (Event::Close(a), Event::Close(b)) => a.same(b),
            (
                Event::Open {
                    combo,
                    bar,
                    side,
                    price,
                },
                Event::Open {
                    combo: c2,
                    bar: b2,
                    side: s2,
                    price: p2,
                },
            ) => combo == c2 && bar == b2 && side == s2 && price.to_bits() == p2.to_bits(),
            _ => false,
        }
    }
}

/// [`backtest`](crate::backtest) reporting every event of combo `combo` to `on_event`, in bar
/// order: the same loop, the same operations in the same order.
pub fn backtest_events(
    close: &[f64],
    hma: &[f64],
    hma3: &[f64],
    fee_pct: f64,
    combo: usize,
    mut on_event: impl FnMut(Event),
) -> (f64, i64) {
    let mut pos: i64 = 0;
    let mut entry = 0.0;
    let mut entry_bar = 0;
    let mut pnl = 0.0;
    let mut trades: i64 = 0;
    let mut prev = f64::NAN;
    for i in 0..close.len() {
        let d = hma[i] - hma3[i];
        if d.is_nan() {
            prev = f64::NAN;
            continue;
        }
        if !prev.is_nan() {
            let sig = if prev <= 0.0 && d > 0.0 {
                1
            } else if prev >= 0.0 && d < 0.0 {
                -1
            } else {
                0
            };
            if sig != 0 && sig != pos {
                if pos != 0 {
                    let t = pos as f64 * (close[i] / entry - 1.0) * 100.0 - fee_pct;
                    pnl += t;
                    trades += 1;
                    on_event(Event::Close(Trade {
                        combo,
                        side: pos,
                        entry_bar,
                        exit_bar: i as u64,
                        entry_price: entry,
                        exit_price: close[i],
                        pnl: t,
                    }));
                }
                pos = sig;
                entry = close[i];
                entry_bar = i as u64;
                on_event(Event::Open {
                    combo,
                    bar: i as u64,
                    side: pos,
                    price: entry,
                });
            }
        }
        prev = d;
    }
    (pnl, trades)
}

/// The closed trades of the combos `combos` (indices into `params`), combo by combo in the
/// order given, each combo's in bar order: the reference's trade log, after validating every
/// input. An index past the params is refused by name.
pub fn trades(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    combos: &[usize],
) -> Result<Vec<Trade>, KernelError> {
    validate_params_and_fee(params, fee_pct)?;
    check_combos(combos, params.len())?;
    let close = close.bars();
    let mut out = Vec::new();
    for &k in combos {
        let [n, half, sqrt, m, half3, third] = params[k].map(window);
        let h = hma(close, n, half, sqrt);
        let h3 = hma3(close, m, half3, third);
        backtest_events(close, &h, &h3, fee_pct, k, |e| {
            if let Event::Close(t) = e {
                out.push(t);
            }
        });
    }
    Ok(out)
}

/// Refuses a combo index past `n_combos` ([`KernelError::BadCombo`]).
pub fn check_combos(combos: &[usize], n_combos: usize) -> Result<(), KernelError> {
    match combos.iter().find(|&&k| k >= n_combos) {
        Some(&index) => Err(KernelError::BadCombo { index, n_combos }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{default_close, default_params, run_combo};

    #[test]
    fn trades_sum_to_the_sweep_pnl_bit_for_bit() {
        let close = default_close();
        let close = &close[..30_000];
        let params = default_params();
        let combos: Vec<usize> = (0..params.len()).step_by(7).collect();
        let log = trades(ValidClose::new(close).unwrap(), &params, 0.09, &combos).unwrap();
        for &k in &combos {
            let mine: Vec<&Trade> = log.iter().filter(|t| t.combo == k).collect();
            let (pnl, n) = run_combo(close, &params[k], 0.09);
            assert_eq!(mine.len() as i64, n, "combo {k}");
            let sum = mine.iter().fold(0.0, |s, t| s + t.pnl);
            assert_eq!(sum.to_bits(), pnl.to_bits(), "combo {k}");
            for w in mine.windows(2) {
                // Stop-and-reverse: each trade opens where the last one closed, the other way.
                assert_eq!(w[1].entry_bar, w[0].exit_bar);
                assert_eq!(w[1].side, -w[0].side);
            }
            for t in mine {
                assert_eq!(t.entry_price, close[t.entry_bar as usize]);
                assert_eq!(t.exit_price, close[t.exit_bar as usize]);
                assert!(t.entry_bar < t.exit_bar);
            }
        }
    }

    #[test]
    fn a_combo_past_the_params_is_named() {
        let close = [100.0; 10];
        let err = trades(
            ValidClose::new(&close).unwrap(),
            &default_params(),
            0.09,
            &[80],
        );
        assert_eq!(
            err,
            Err(KernelError::BadCombo {
                index: 80,
                n_combos: 80
            })
        );
    }
}
