//! The reference HMA/HMA3 stop-and-reverse kernel: a line-by-line port of the numba kernel in
//! `docs/kernel.md`, readable and dependency-free. It is the oracle every variant is gated against.
//!
//! The arithmetic is deliberately naive and in the spec's order (one multiply, then one add, per
//! window element; a fresh array per pass), because bit-identity with numba is the point.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod data;
mod error;
mod metrics;
mod trades;

pub use data::{
    DEFAULT_BARS, DEFAULT_GRID, DEFAULT_SEED, DEFAULT_SIGMA, GbmStream, Grid, GridSpec,
    default_close, default_params, derive_windows, derive_windows2, fnv1a64, gbm, grid, grid2,
};
pub use error::KernelError;
pub use metrics::{
    METRIC_NAMES, Metrics, Tally, Value, backtest_metrics, run_combo_metrics, sweep_metrics,
    sweep_metrics_valid,
};
pub use trades::{Event, Trade, backtest_events, check_combos, trades};

/// Six WMA windows per combo, in the spec's order:
/// `[hma_n, hma_half, hma_sqrt, hma3_m, hma3_half, hma3_third]`.
pub type Combo = [i64; 6];

/// Names of the six fields of a [`Combo`], in order (used in error messages and CSV headers).
pub const WINDOW_NAMES: [&str; 6] = [
    "hma_n",
    "hma_half",
    "hma_sqrt",
    "hma3_m",
    "hma3_half",
    "hma3_third",
];

/// Round-trip fee in percentage points per closed trade.
pub const DEFAULT_FEE_PCT: f64 = 0.09;

/// Per-combo outputs of a sweep, in the order of the input combos.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepResult {
    /// Total return of each combo in percent, net of fees (`docs/kernel.md`).
    pub pnl: Vec<f64>,
    /// Closed trades of each combo.
    pub trades: Vec<i64>,
}

impl SweepResult {
    /// A result of `n` combos, all zero; variants that write by index start from this.
    pub fn zeroed(n: usize) -> Self {
        SweepResult {
            pnl: vec![0.0; n],
            trades: vec![0; n],
        }
    }

    /// Combos in the result.
    pub fn len(&self) -> usize {
        self.pnl.len()
    }

    /// No combos.
    pub fn is_empty(&self) -> bool {
        self.pnl.is_empty()
    }
}

/// Checks a series: non-empty, every bar finite and `> 0` or NaN (a missing bar).
pub fn validate_close(close: &[f64]) -> Result<(), KernelError> {
    if close.is_empty() {
        return Err(KernelError::EmptySeries);
    }
    // NaN compares false, so it is never bad; -inf is caught by `<= 0.0`. A service revalidates
    // every request, so the common all-good case is one pass of lane-wise min/max, which
    // vectorises (a fold of `is_bad` did not: 1.7 ns/bar against 0.26 here); the position comes after.
    let is_bad = |v: f64| v <= 0.0 || v == f64::INFINITY;
    const LANES: usize = 8;
    // Both start at a good price, so a lane that saw only NaN stays good.
    let (mut lo, mut hi) = ([1.0_f64; LANES], [1.0_f64; LANES]);
    let chunks = close.chunks_exact(LANES);
    let tail_bad = chunks.remainder().iter().any(|&v| is_bad(v));
    for chunk in chunks {
        for lane in 0..LANES {
            // Written as selects, not `f64::min`, so a NaN (false comparisons) keeps the lane.
            let v = chunk[lane];
            lo[lane] = if v < lo[lane] { v } else { lo[lane] };
            hi[lane] = if v > hi[lane] { v } else { hi[lane] };
        }
    }
    if !tail_bad && lo.iter().chain(&hi).all(|&v| !is_bad(v)) {
        return Ok(());
    }
    match close.iter().position(|&v| is_bad(v)) {
        Some(index) => Err(KernelError::BadPrice {
            index,
            value: close[index],
        }),
        None => Ok(()),
    }
}

/// Checks every window of every combo is `>= 1`.
pub fn validate_params(params: &[Combo]) -> Result<(), KernelError> {
    for (combo, row) in params.iter().enumerate() {
        for (field, &value) in row.iter().enumerate() {
            if value < 1 {
                return Err(KernelError::BadWindow {
                    combo,
                    field: WINDOW_NAMES[field],
                    value,
                });
            }
        }
    }
    Ok(())
}

/// Checks the fee is a finite number (it may be zero or negative, a rebate).
pub fn validate_fee(fee_pct: f64) -> Result<(), KernelError> {
    if fee_pct.is_finite() {
        Ok(())
    } else {
        Err(KernelError::BadFee(fee_pct))
    }
}

/// Everything a sweep's inputs must satisfy, checked once at the entry.
pub fn validate(close: &[f64], params: &[Combo], fee_pct: f64) -> Result<(), KernelError> {
    validate_close(close)?;
    validate_params_and_fee(params, fee_pct)
}

/// What a sweep over a [`ValidClose`] still has to check: the windows and the fee.
pub fn validate_params_and_fee(params: &[Combo], fee_pct: f64) -> Result<(), KernelError> {
    validate_params(params)?;
    validate_fee(fee_pct)
}

/// A series that has passed [`validate_close`]; only [`ValidClose::new`] and [`ValidSeries`]
/// make one, so a sweep handed one need not scan the bars again (a service keeps a loaded series).
#[derive(Clone, Copy, Debug)]
pub struct ValidClose<'a>(&'a [f64]);

impl<'a> ValidClose<'a> {
    /// Validates `close` once.
    pub fn new(close: &'a [f64]) -> Result<Self, KernelError> {
        validate_close(close)?;
        Ok(ValidClose(close))
    }

    /// The bars.
    pub fn bars(self) -> &'a [f64] {
        self.0
    }

    /// An owned copy, still known valid (no second scan).
    pub fn to_series(self) -> ValidSeries {
        ValidSeries(self.0.to_vec())
    }
}

/// An owned [`ValidClose`]: validated when made, borrowed as valid for as long as it lives.
#[derive(Clone, Debug)]
pub struct ValidSeries(Vec<f64>);

impl ValidSeries {
    /// Validates `close` once and keeps it.
    pub fn new(close: Vec<f64>) -> Result<Self, KernelError> {
        validate_close(&close)?;
        Ok(ValidSeries(close))
    }

    /// The series as a [`ValidClose`], without another scan.
    pub fn view(&self) -> ValidClose<'_> {
        ValidClose(&self.0)
    }

    /// The bars.
    pub fn bars(&self) -> &[f64] {
        &self.0
    }
}

/// Reshapes a flat row-major `n x 6` array (as read from `.npy` or the wire) into combos.
pub fn combos_from_flat(flat: &[i64]) -> Result<Vec<Combo>, KernelError> {
    if !flat.len().is_multiple_of(6) {
        return Err(KernelError::ParamsShape {
            detail: format!("{} values is not a multiple of 6", flat.len()),
        });
    }
    Ok(flat
        .chunks_exact(6)
        .map(|c| [c[0], c[1], c[2], c[3], c[4], c[5]])
        .collect())
}

/// Converts a window that [`validate_params`] accepted to `usize`. A window too large for the
/// address space is longer than any series, which gives the same all-NaN output.
pub fn window(w: i64) -> usize {
    usize::try_from(w).unwrap_or(usize::MAX)
}

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
    fn validation_reports_the_first_bad_price() {
        assert_eq!(validate_close(&[1.0, f64::NAN, 2.0]), Ok(()));
        for bad in [0.0, -0.0, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
            let e = validate_close(&[1.0, f64::NAN, bad, -5.0]).unwrap_err();
            assert_eq!(
                e,
                KernelError::BadPrice {
                    index: 2,
                    value: bad
                }
            );
        }
    }

    #[test]
    fn fast_validation_agrees_with_the_definition_at_every_position() {
        // The lane-wise pass must see a bad price in any lane, chunk or tail, and must not
        // flag lanes that hold only NaN.
        for len in 1..40 {
            let mut x = vec![f64::NAN; len];
            assert_eq!(validate_close(&x), Ok(()), "all NaN, len {len}");
            x.iter_mut().step_by(3).for_each(|v| *v = 0.5);
            assert_eq!(validate_close(&x), Ok(()), "NaN and good, len {len}");
            for index in 0..len {
                for bad in [0.0, -0.0, -2.0, f64::INFINITY, f64::NEG_INFINITY] {
                    let mut y = x.clone();
                    y[index] = bad;
                    let want = KernelError::BadPrice { index, value: bad };
                    assert_eq!(validate_close(&y), Err(want), "len {len} index {index}");
                }
            }
        }
    }

    #[test]
    fn huge_windows_give_no_trades() {
        let close = default_close();
        let r = sweep(&close[..500], &[[i64::MAX, 1, 1, 1, 1, 1]], 0.09).unwrap();
        assert_eq!(r.trades, [0]);
        assert_eq!(r.pnl, [0.0]);
    }
}
