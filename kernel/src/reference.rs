//! The reference kernel itself: the WMA, HMA and HMA3 passes, the stop-and-reverse event loop,
//! and the sweep over every combo, in the spec's order of operations (bit-identical to numba).

use crate::error::KernelError;
use crate::types::{Combo, SweepResult, window};
use crate::validate::{ValidClose, validate_params_and_fee};

/// Weighted moving average with weights `1..=w`, oldest element weighted 1.
///
/// `out[i]` is NaN for `i < w - 1`, and for any window holding a NaN (it propagates through the
/// sum). The sum runs oldest first, one multiply then one add per step, then one division: the
/// exact order of the numba kernel, so results are bit-identical.
pub fn wma(x: &[f64], w: usize) -> Vec<f64> {
    assert!(w >= 1, "wma window must be >= 1");
    let n = x.len();
    let mut out = vec![f64::NAN; n];
    if w > n {
        return out;
    }
    let denom = (w * (w + 1) / 2) as f64;
    for i in (w - 1)..n {
        let mut s = 0.0;
        for k in 0..w {
            s += x[i + 1 - w + k] * (k + 1) as f64;
        }
        out[i] = s / denom;
    }
    out
}

/// `hma = wma(2 * wma(close, half) - wma(close, n), sqrt)`.
pub fn hma(close: &[f64], n: usize, half: usize, sqrt: usize) -> Vec<f64> {
    let a = wma(close, half);
    let b = wma(close, n);
    let mut diff = vec![0.0; close.len()];
    for i in 0..close.len() {
        diff[i] = 2.0 * a[i] - b[i];
    }
    wma(&diff, sqrt)
}

/// `hma3 = wma(3 * wma(close, third) - wma(close, half) - wma(close, m), m)`.
pub fn hma3(close: &[f64], m: usize, half: usize, third: usize) -> Vec<f64> {
    let c = wma(close, third);
    let d = wma(close, half);
    let e = wma(close, m);
    let mut diff = vec![0.0; close.len()];
    for i in 0..close.len() {
        diff[i] = 3.0 * c[i] - d[i] - e[i];
    }
    wma(&diff, m)
}

/// The stop-and-reverse event loop over one combo's two indicators: `(pnl, trades)`.
///
/// A cross of `hma - hma3` through zero sets the signal; a signal against the open position
/// closes it (booking its return in percent, less the fee) and opens the other way. NaN in
/// either indicator resets the cross detector.
pub fn backtest(close: &[f64], hma: &[f64], hma3: &[f64], fee_pct: f64) -> (f64, i64) {
    let mut pos: i64 = 0;
    let mut entry = 0.0;
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
                    pnl += pos as f64 * (close[i] / entry - 1.0) * 100.0 - fee_pct;
                    trades += 1;
                }
                pos = sig;
                entry = close[i];
            }
        }
        prev = d;
    }
    (pnl, trades)
}

/// One combo, unvalidated: seven WMA passes and the event loop.
pub fn run_combo(close: &[f64], combo: &Combo, fee_pct: f64) -> (f64, i64) {
    let [n, half, sqrt, m, half3, third] = combo.map(window);
    let h = hma(close, n, half, sqrt);
    let h3 = hma3(close, m, half3, third);
    backtest(close, &h, &h3, fee_pct)
}

/// Sweeps every combo over the series, after validating all inputs.
pub fn sweep(close: &[f64], params: &[Combo], fee_pct: f64) -> Result<SweepResult, KernelError> {
    sweep_valid(ValidClose::new(close)?, params, fee_pct)
}

/// [`sweep`] over a series validated earlier; the params and fee are still checked here.
pub fn sweep_valid(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
) -> Result<SweepResult, KernelError> {
    validate_params_and_fee(params, fee_pct)?;
    let close = close.bars();
    let mut result = SweepResult::zeroed(params.len());
    for (k, combo) in params.iter().enumerate() {
        let (pnl, trades) = run_combo(close, combo, fee_pct);
        result.pnl[k] = pnl;
        result.trades[k] = trades;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{combos_from_flat, default_close};

    #[test]
    fn wma_matches_definition() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let out = wma(&x, 3);
        assert!(out[0].is_nan() && out[1].is_nan());
        assert_eq!(out[2], (1.0 + 4.0 + 9.0) / 6.0);
        assert_eq!(out[3], (2.0 + 6.0 + 12.0) / 6.0);
    }

    #[test]
    fn wma_window_one_is_identity_and_long_window_is_nan() {
        let x = [1.5, f64::NAN, 2.5];
        let one = wma(&x, 1);
        assert_eq!(one[0], 1.5);
        assert!(one[1].is_nan());
        assert_eq!(one[2], 2.5);
        assert!(wma(&x, 4).iter().all(|v| v.is_nan()));
    }

    #[test]
    fn nan_spreads_over_its_windows_only() {
        let x = [1.0, 2.0, f64::NAN, 4.0, 5.0, 6.0];
        let out = wma(&x, 2);
        let nan: Vec<bool> = out.iter().map(|v| v.is_nan()).collect();
        assert_eq!(nan, [true, false, true, true, false, false]);
    }

    #[test]
    fn backtest_counts_closed_trades_only() {
        // d = +, -, +, - : opens long at 1, reverses at 2 and 3; the last short stays open.
        let close = [10.0, 11.0, 12.0, 13.0];
        let hma = [1.0, -1.0, 1.0, -1.0];
        let zero = [0.0; 4];
        let (pnl, trades) = backtest(&close, &hma, &zero, 0.0);
        assert_eq!(trades, 2);
        // Short 11 -> 12: -1 * (12/11 - 1) * 100; long 12 -> 13: (13/12 - 1) * 100.
        let (short, long) = (-1.0, 1.0);
        let want =
            0.0 + short * (12.0 / 11.0 - 1.0) * 100.0 - 0.0 + long * (13.0 / 12.0 - 1.0) * 100.0;
        assert_eq!(pnl, want);
    }

    #[test]
    fn errors_name_the_value_and_place() {
        assert_eq!(sweep(&[], &[], 0.09), Err(KernelError::EmptySeries));
        let e = sweep(&[1.0, -2.0], &[], 0.09).unwrap_err();
        assert!(e.to_string().contains("index 1") && e.to_string().contains("-2"));
        let e = sweep(&[1.0, f64::INFINITY], &[], 0.09).unwrap_err();
        assert!(e.to_string().contains("inf"));
        let e = sweep(&[1.0], &[[5, 2, 0, 5, 2, 1]], 0.09).unwrap_err();
        assert_eq!(
            e,
            KernelError::BadWindow {
                combo: 0,
                field: "hma_sqrt",
                value: 0
            }
        );
        assert!(sweep(&[1.0], &[], f64::NAN).is_err());
        assert!(combos_from_flat(&[1, 2, 3]).is_err());
    }

    #[test]
    fn huge_windows_give_no_trades() {
        let close = default_close();
        let r = sweep(&close[..500], &[[i64::MAX, 1, 1, 1, 1, 1]], 0.09).unwrap();
        assert_eq!(r.trades, [0]);
        assert_eq!(r.pnl, [0.0]);
    }
}
