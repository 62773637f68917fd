//! Bar returns: the change of each bar in a combo's marked-to-market equity, defined once here
//! by the study's loop (docs/kernel.md, "Bar returns") for the research statistics to read.

use crate::{Combo, hma, hma3, window};

/// The bar returns of one combo's event loop, in percentage points, one per bar.
///
/// After bar `t`'s events, the equity is `realized + pos * (close[t] / entry - 1.0) * 100.0`
/// (`realized` alone while flat), `realized` the closed trades' PnL summed in order from `0.0`
/// (the loop's own `pnl`). The bar's return is that equity less the equity at the last bar with
/// a price (`0.0` before any); a missing bar (`close` NaN) returns `0.0` and moves nothing.
pub fn backtest_returns(close: &[f64], hma: &[f64], hma3: &[f64], fee_pct: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(close.len());
    let mut pos: i64 = 0;
    let mut entry = 0.0;
    let mut pnl = 0.0;
    let mut prev = f64::NAN;
    let mut equity_before = 0.0;
    for i in 0..close.len() {
        let d = hma[i] - hma3[i];
        if d.is_nan() {
            prev = f64::NAN;
        } else {
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
                        pnl += pos as f64 * (close[i] / entry - 1.0) * 100.0 - fee_pct;
                    }
                    pos = sig;
                    entry = close[i];
                }
            }
            prev = d;
        }
        let c = close[i];
        if c.is_nan() {
            out.push(0.0);
            continue;
        }
        let equity = if pos != 0 {
            pnl + pos as f64 * (c / entry - 1.0) * 100.0
        } else {
            pnl
        };
        out.push(equity - equity_before);
        equity_before = equity;
    }
    out
}

/// One combo's bar returns, unvalidated: its indicators and [`backtest_returns`].
pub fn run_combo_returns(close: &[f64], combo: &Combo, fee_pct: f64) -> Vec<f64> {
    let [n, half, sqrt, m, half3, third] = combo.map(window);
    let h = hma(close, n, half, sqrt);
    let h3 = hma3(close, m, half3, third);
    backtest_returns(close, &h, &h3, fee_pct)
}
