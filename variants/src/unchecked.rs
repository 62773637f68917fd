//! The reference with the bounds checks of its hot loops removed by `get_unchecked`.
//! Inputs are validated once at the entry; the loops' index arithmetic is what keeps them in bounds.

use crate::Threads;
use crate::prealloc::Backtest;
use hullsweep_kernel::{
    Combo, KernelError, SweepResult, ValidClose, validate_params_and_fee, window,
};

/// WMA in the reference's order, without bounds checks.
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
            // SAFETY: i <= n - 1 and k <= w - 1, so i + 1 - w + k <= n - 1; i >= w - 1 keeps
            // i + 1 - w from underflowing.
            s += unsafe { *x.get_unchecked(i + 1 - w + k) } * (k + 1) as f64;
        }
        // SAFETY: i < n == out.len().
        unsafe { *out.get_unchecked_mut(i) = s / denom };
    }
    out
}

fn hma(close: &[f64], n: usize, half: usize, sqrt: usize) -> Vec<f64> {
    let a = wma(close, half);
    let b = wma(close, n);
    let mut diff = vec![0.0; close.len()];
    for i in 0..close.len() {
        // SAFETY: a, b and diff all have close.len() elements and i < close.len().
        unsafe { *diff.get_unchecked_mut(i) = 2.0 * a.get_unchecked(i) - b.get_unchecked(i) };
    }
    wma(&diff, sqrt)
}

fn hma3(close: &[f64], m: usize, half: usize, third: usize) -> Vec<f64> {
    let c = wma(close, third);
    let d = wma(close, half);
    let e = wma(close, m);
    let mut diff = vec![0.0; close.len()];
    for i in 0..close.len() {
        // SAFETY: c, d, e and diff all have close.len() elements and i < close.len().
        unsafe {
            *diff.get_unchecked_mut(i) =
                3.0 * c.get_unchecked(i) - d.get_unchecked(i) - e.get_unchecked(i)
        };
    }
    wma(&diff, m)
}

/// The spec's event loop without bounds checks.
///
/// # Safety
/// `hma` and `hma3` must each hold at least `close.len()` elements.
pub unsafe fn backtest(close: &[f64], hma: &[f64], hma3: &[f64], fee_pct: f64) -> (f64, i64) {
    debug_assert!(hma.len() >= close.len() && hma3.len() >= close.len());
    let mut pos: i64 = 0;
    let mut entry = 0.0;
    let mut pnl = 0.0;
    let mut trades: i64 = 0;
    let mut prev = f64::NAN;
    for i in 0..close.len() {
        // SAFETY: i < close.len() <= hma.len(), hma3.len() by this function's contract.
        let (c, d) = unsafe {
            (
                *close.get_unchecked(i),
                hma.get_unchecked(i) - hma3.get_unchecked(i),
            )
        };
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
                    pnl += pos as f64 * (c / entry - 1.0) * 100.0 - fee_pct;
                    trades += 1;
                }
                pos = sig;
                entry = c;
            }
        }
        prev = d;
    }
    (pnl, trades)
}

/// This variant's `(hma, hma3)` of one combo (its metrics sweep feeds them to the shared loop).
pub(crate) fn indicators(close: &[f64], combo: &Combo) -> (Vec<f64>, Vec<f64>) {
    let [n, half, sqrt, m, half3, third] = combo.map(window);
    (hma(close, n, half, sqrt), hma3(close, m, half3, third))
}

fn run_combo(close: &[f64], combo: &Combo, fee_pct: f64) -> (f64, i64) {
    let [n, half, sqrt, m, half3, third] = combo.map(window);
    let h = hma(close, n, half, sqrt);
    let h3 = hma3(close, m, half3, third);
    // SAFETY: wma returns a vector of its input's length, so h and h3 have close.len() elements.
    unsafe { backtest(close, &h, &h3, fee_pct) }
}

/// Sweeps every combo, after validating the params and fee (the series comes validated).
pub fn sweep(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
) -> Result<SweepResult, KernelError> {
    // The windows are what keep the unchecked loops in bounds, so they are checked here even
    // when the series was validated earlier.
    validate_params_and_fee(params, fee_pct)?;
    let close = close.bars();
    let mut result = SweepResult::zeroed(params.len());
    for ((combo, pnl), trades) in params.iter().zip(&mut result.pnl).zip(&mut result.trades) {
        (*pnl, *trades) = run_combo(close, combo, fee_pct);
    }
    Ok(result)
}

/// The [`SweepFn`](crate::SweepFn) entry: this module's indicators, resumed from `states` at bar
/// `from` through the shared event loop ([`Backtest`], so a combo's state is one definition).
pub fn sweep_from(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
    from: usize,
    states: &mut [Backtest],
) -> Result<(), KernelError> {
    crate::check_resume(close, params, fee_pct, from, states)?;
    let close = close.bars();
    for (combo, bt) in params.iter().zip(states) {
        let [n, half, sqrt, m, half3, third] = combo.map(window);
        let (h, h3) = (hma(close, n, half, sqrt), hma3(close, m, half3, third));
        bt.feed(from, &close[from..], &h[from..], &h3[from..], fee_pct);
    }
    Ok(())
}
