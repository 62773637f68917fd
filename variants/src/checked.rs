//! Idiomatic safe Rust: slices, `windows` and `zip`, so the optimiser can see every access is in
//! bounds and drop the checks. Same arithmetic in the same order as the reference, so bit-identical.

use crate::Threads;
use crate::prealloc::Backtest;
use hullsweep_kernel::{
    Combo, KernelError, SweepResult, ValidClose, validate_params_and_fee, window,
};

/// WMA with the reference's summation order and the same exact weights `(k + 1) as f64`, taken
/// from a slice built once per pass: zipping two slices leaves the optimiser nothing to check or
/// convert per step, so the loop unrolls (zipping with `1..=w` kept an exhaustion flag per step).
pub fn wma(x: &[f64], w: usize) -> Vec<f64> {
    assert!(w >= 1, "wma window must be >= 1");
    let mut out = vec![f64::NAN; x.len()];
    if w > x.len() {
        return out;
    }
    let denom = (w * (w + 1) / 2) as f64;
    let weights: Vec<f64> = (1..=w).map(|k| k as f64).collect();
    for (o, win) in out[w - 1..].iter_mut().zip(x.windows(w)) {
        let s = win.iter().zip(&weights).fold(0.0, |s, (&v, &k)| s + v * k);
        *o = s / denom;
    }
    out
}

fn hma(close: &[f64], n: usize, half: usize, sqrt: usize) -> Vec<f64> {
    let a = wma(close, half);
    let b = wma(close, n);
    let diff: Vec<f64> = a.iter().zip(&b).map(|(&a, &b)| 2.0 * a - b).collect();
    wma(&diff, sqrt)
}

fn hma3(close: &[f64], m: usize, half: usize, third: usize) -> Vec<f64> {
    let c = wma(close, third);
    let d = wma(close, half);
    let e = wma(close, m);
    let diff: Vec<f64> = c
        .iter()
        .zip(&d)
        .zip(&e)
        .map(|((&c, &d), &e)| 3.0 * c - d - e)
        .collect();
    wma(&diff, m)
}

/// The stop-and-reverse loop of the spec, walking the three series in lockstep.
pub fn backtest(close: &[f64], hma: &[f64], hma3: &[f64], fee_pct: f64) -> (f64, i64) {
    let mut pos: i64 = 0;
    let mut entry = 0.0;
    let mut pnl = 0.0;
    let mut trades: i64 = 0;
    let mut prev = f64::NAN;
    for ((&c, &h), &h3) in close.iter().zip(hma).zip(hma3) {
        let d = h - h3;
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
    backtest(
        close,
        &hma(close, n, half, sqrt),
        &hma3(close, m, half3, third),
        fee_pct,
    )
}

/// Sweeps every combo, after validating the params and fee (the series comes validated).
pub fn sweep(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
) -> Result<SweepResult, KernelError> {
    validate_params_and_fee(params, fee_pct)?;
    let close = close.bars();
    let (pnl, trades) = params
        .iter()
        .map(|combo| run_combo(close, combo, fee_pct))
        .unzip();
    Ok(SweepResult { pnl, trades })
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
