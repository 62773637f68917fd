//! Metrics beyond `(pnl, trades)` from the same event loop, defined in `docs/kernel.md` ("Metrics")
//! so any implementation can be checked bit for bit: the accumulators, and the reference's loop.

use crate::{Combo, KernelError, ValidClose, hma, hma3, validate_params_and_fee, window};

/// Names of the [`Metrics`] fields, in the order the CLI's columns and Python's dict list them.
pub const METRIC_NAMES: [&str; 11] = [
    "pnl",
    "trades",
    "wins",
    "long_pnl",
    "short_pnl",
    "long_trades",
    "short_trades",
    "best_trade",
    "worst_trade",
    "max_drawdown",
    "bars_in_market",
];

/// One combo's metrics (docs/kernel.md, "Metrics"); `pnl` and `trades` are the sweep's own.
#[derive(Clone, Copy, Debug)]
pub struct Metrics {
    /// Total PnL of the closed trades, in percent: the sweep's own `pnl`, bit for bit.
    pub pnl: f64,
    /// Closed trades: the sweep's own `trades`.
    pub trades: i64,
    /// Trades with `t > 0.0`.
    pub wins: i64,
    /// Sum of `t` over the trades that were long, in bar order from `0.0`.
    pub long_pnl: f64,
    /// Sum of `t` over the trades that were short, in bar order from `0.0`.
    pub short_pnl: f64,
    /// Closed trades that were long.
    pub long_trades: i64,
    /// Closed trades that were short.
    pub short_trades: i64,
    /// Largest `t`; NaN without trades.
    pub best_trade: f64,
    /// Smallest `t`; NaN without trades.
    pub worst_trade: f64,
    /// Largest fall of the running PnL from its peak (the peak starts at `0.0`), after trades.
    pub max_drawdown: f64,
    /// Bars at the end of which the position is not flat.
    pub bars_in_market: i64,
}

/// A metric's value, for tables and plots that pick one by name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A PnL-valued metric (percent).
    F64(f64),
    /// A count.
    I64(i64),
}

impl Value {
    /// As a float (counts are exact below 2^53).
    pub fn as_f64(self) -> f64 {
        match self {
            Value::F64(v) => v,
            Value::I64(v) => v as f64,
        }
    }

    /// Whether this is a count (else an f64).
    pub fn is_count(self) -> bool {
        matches!(self, Value::I64(_))
    }

    /// The same metric value to the bit (NaN equals NaN of the same bits; 0.0 and -0.0 differ).
    pub fn same(self, other: Value) -> bool {
        self.key() == other.key()
    }

    /// The exact bits of a float, the value of a count: equal exactly when the metric is equal.
    fn key(self) -> (bool, u64) {
        match self {
            Value::F64(v) => (true, v.to_bits()),
            Value::I64(v) => (false, v as u64),
        }
    }
}

impl Metrics {
    /// The values in [`METRIC_NAMES`] order.
    pub fn values(&self) -> [Value; 11] {
        use Value::{F64, I64};
        [
            F64(self.pnl),
            I64(self.trades),
            I64(self.wins),
            F64(self.long_pnl),
            F64(self.short_pnl),
            I64(self.long_trades),
            I64(self.short_trades),
            F64(self.best_trade),
            F64(self.worst_trade),
            F64(self.max_drawdown),
            I64(self.bars_in_market),
        ]
    }

    /// The inverse of [`Metrics::values`]; `None` if a value has the wrong type for its place.
    pub fn from_values(v: [Value; 11]) -> Option<Metrics> {
        use Value::{F64, I64};
        match v {
            [
                F64(pnl),
                I64(trades),
                I64(wins),
                F64(long_pnl),
                F64(short_pnl),
                I64(long_trades),
                I64(short_trades),
                F64(best_trade),
                F64(worst_trade),
                F64(max_drawdown),
                I64(bars_in_market),
            ] => Some(Metrics {
                pnl,
                trades,
                wins,
                long_pnl,
                short_pnl,
                long_trades,
                short_trades,
                best_trade,
                worst_trade,
                max_drawdown,
                bars_in_market,
            }),
            _ => None,
        }
    }

    /// A combo without trades: zero PnL and counts, NaN extremes.
    pub fn no_trades() -> Metrics {
        Tally::new().finish(0.0, 0, 0)
    }

    /// The metric called `name` (one of [`METRIC_NAMES`]).
    pub fn get(&self, name: &str) -> Option<Value> {
        let i = METRIC_NAMES.iter().position(|&n| n == name)?;
        Some(self.values()[i])
    }

    /// Every metric equal to the bit (NaN equals NaN of the same bits; 0.0 and -0.0 differ).
    pub fn same_bits(&self, other: &Metrics) -> bool {
        self.values()
            .iter()
            .zip(other.values())
            .all(|(a, b)| a.same(b))
    }
}

/// The metric accumulators an event loop carries beside `pnl` and `trades`. An implementation
/// calls [`Tally::entered`] when the position first opens and [`Tally::trade`] for each closed
/// trade; the rules (and their order, which fixes every bit) are docs/kernel.md's.
#[derive(Clone, Copy, Debug)]
pub struct Tally {
    wins: i64,
    long_pnl: f64,
    short_pnl: f64,
    long_trades: i64,
    short_trades: i64,
    best_trade: f64,
    worst_trade: f64,
    max_drawdown: f64,
    peak: f64,
    /// The bar at which the position first opened (it is never flat again: every signal is
    /// +1 or -1), or `usize::MAX`.
    first_entry: usize,
}

impl Default for Tally {
    fn default() -> Self {
        Tally::new()
    }
}

impl Tally {
    /// The accumulators before any trade.
    pub const fn new() -> Tally {
        Tally {
            wins: 0,
            long_pnl: 0.0,
            short_pnl: 0.0,
            long_trades: 0,
            short_trades: 0,
            best_trade: f64::NAN,
            worst_trade: f64::NAN,
            max_drawdown: 0.0,
            peak: 0.0,
            first_entry: usize::MAX,
        }
    }

    /// The position opened at bar `i` (only the first call counts).
    #[inline]
    pub fn entered(&mut self, i: usize) {
        self.first_entry = self.first_entry.min(i);
    }

    /// A trade of position `pos` (`1` long, `-1` short) closed with PnL `t`, leaving the running
    /// PnL at `pnl` (the loop's own `pnl += t`).
    #[inline]
    pub fn trade(&mut self, pos: i64, t: f64, pnl: f64) {
        if t > 0.0 {
            self.wins += 1;
        }
        if pos > 0 {
            self.long_pnl += t;
            self.long_trades += 1;
        } else {
            self.short_pnl += t;
            self.short_trades += 1;
        }
        // The first trade sets both; later ones only when strictly beyond (ties keep the first).
        if self.best_trade.is_nan() || t > self.best_trade {
            self.best_trade = t;
        }
        if self.worst_trade.is_nan() || t < self.worst_trade {
            self.worst_trade = t;
        }
        if pnl > self.peak {
            self.peak = pnl;
        }
        let drawdown = self.peak - pnl;
        if drawdown > self.max_drawdown {
            self.max_drawdown = drawdown;
        }
    }

    /// The finished metrics of a loop that ended with `pnl` and `trades` over `n_bars` bars.
    pub fn finish(&self, pnl: f64, trades: i64, n_bars: usize) -> Metrics {
        Metrics {
            pnl,
            trades,
            wins: self.wins,
            long_pnl: self.long_pnl,
            short_pnl: self.short_pnl,
            long_trades: self.long_trades,
            short_trades: self.short_trades,
            best_trade: self.best_trade,
            worst_trade: self.worst_trade,
            max_drawdown: self.max_drawdown,
            bars_in_market: n_bars.saturating_sub(self.first_entry) as i64,
        }
    }
}

/// [`backtest`](crate::backtest) with the metrics: the same loop, the spec's operations in the
/// spec's order, with the trade's PnL `t` named so the accumulators see exactly what `pnl` adds.
pub fn backtest_metrics(close: &[f64], hma: &[f64], hma3: &[f64], fee_pct: f64) -> Metrics {
    let mut pos: i64 = 0;
    let mut entry = 0.0;
    let mut pnl = 0.0;
    let mut trades: i64 = 0;
    let mut prev = f64::NAN;
    let mut tally = Tally::new();
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
                    tally.trade(pos, t, pnl);
                } else {
                    tally.entered(i);
                }
                pos = sig;
                entry = close[i];
            }
        }
        prev = d;
    }
    tally.finish(pnl, trades, close.len())
}

/// One combo's metrics, unvalidated: seven WMA passes and [`backtest_metrics`].
pub fn run_combo_metrics(close: &[f64], combo: &Combo, fee_pct: f64) -> Metrics {
    let [n, half, sqrt, m, half3, third] = combo.map(window);
    let h = hma(close, n, half, sqrt);
    let h3 = hma3(close, m, half3, third);
    backtest_metrics(close, &h, &h3, fee_pct)
}

/// Every combo's metrics, in input order, after validating all inputs.
pub fn sweep_metrics(
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
) -> Result<Vec<Metrics>, KernelError> {
    sweep_metrics_valid(ValidClose::new(close)?, params, fee_pct)
}

/// [`sweep_metrics`] over a series validated earlier; the params and fee are still checked.
pub fn sweep_metrics_valid(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
) -> Result<Vec<Metrics>, KernelError> {
    validate_params_and_fee(params, fee_pct)?;
    let close = close.bars();
    Ok(params
        .iter()
        .map(|c| run_combo_metrics(close, c, fee_pct))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_follow_the_definition_on_a_hand_made_loop() {
        // d = +, -, +, -, +: bar 0 only sets prev; bar 1 crosses down and opens a short at 11,
        // then each bar reverses. The position still open after bar 4 is not a trade.
        let close = [10.0, 11.0, 12.0, 13.0, 12.5];
        let hma = [1.0, -1.0, 1.0, -1.0, 1.0];
        let zero = [0.0; 5];
        let m = backtest_metrics(&close, &hma, &zero, 0.0);
        assert_eq!(m.trades, 3);
        let (short, long) = (-1.0, 1.0);
        let t1 = short * (12.0 / 11.0 - 1.0) * 100.0 - 0.0; // short 11 -> 12, a loss
        let t2 = long * (13.0 / 12.0 - 1.0) * 100.0 - 0.0; // long 12 -> 13, a win
        let t3 = short * (12.5 / 13.0 - 1.0) * 100.0 - 0.0; // short 13 -> 12.5, a win
        assert_eq!(m.pnl, 0.0 + t1 + t2 + t3);
        assert_eq!((m.wins, m.long_trades, m.short_trades), (2, 1, 2));
        assert_eq!(m.long_pnl, 0.0 + t2);
        assert_eq!(m.short_pnl, 0.0 + t1 + t3);
        assert_eq!((m.best_trade, m.worst_trade), (t2.max(t3), t1));
        // The peak is the starting 0.0 until the running PnL rises above it.
        let run = [t1, t1 + t2, t1 + t2 + t3];
        let mut peak: f64 = 0.0;
        let mut dd: f64 = 0.0;
        for p in run {
            peak = peak.max(p);
            dd = dd.max(peak - p);
        }
        assert_eq!(m.max_drawdown, dd);
        // In the market from bar 1 (the first entry) to the end.
        assert_eq!(m.bars_in_market, 4);
        let (pnl, trades) = crate::backtest(&close, &hma, &zero, 0.0);
        assert_eq!((m.pnl.to_bits(), m.trades), (pnl.to_bits(), trades));
    }

    #[test]
    fn no_trades_gives_nan_extremes_and_zero_drawdown() {
        let m = backtest_metrics(&[1.0, 2.0], &[f64::NAN; 2], &[0.0; 2], 0.09);
        assert!(m.best_trade.is_nan() && m.worst_trade.is_nan());
        assert_eq!((m.max_drawdown, m.bars_in_market, m.trades), (0.0, 0, 0));
        assert!(m.same_bits(&m) && m.same_bits(&Metrics::no_trades()));
        assert_eq!(
            Metrics::from_values(m.values()).map(|b| b.same_bits(&m)),
            Some(true)
        );
        let mut wrong = m.values();
        wrong[0] = Value::I64(0);
        assert!(Metrics::from_values(wrong).is_none());
        assert_eq!(m.get("bars_in_market"), Some(Value::I64(0)));
        assert!(m.get("sharpe").is_none());
    }

    #[test]
    fn sweep_metrics_agree_with_sweep() {
        let close = crate::gbm(5_000, 3, 0.002).unwrap();
        let params = crate::grid("3:120:9".parse().unwrap()).unwrap();
        let r = crate::sweep(&close, &params, 0.05).unwrap();
        let m = sweep_metrics(&close, &params, 0.05).unwrap();
        for (k, m) in m.iter().enumerate() {
            assert_eq!(
                (m.pnl.to_bits(), m.trades),
                (r.pnl[k].to_bits(), r.trades[k])
            );
            assert_eq!(m.long_trades + m.short_trades, m.trades);
            assert!(m.wins <= m.trades && m.max_drawdown >= 0.0);
            assert!(m.trades == 0 || m.worst_trade <= m.best_trade);
        }
        assert!(sweep_metrics(&close, &[[0, 1, 1, 1, 1, 1]], 0.05).is_err());
    }
}
