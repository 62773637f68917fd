//! The kernel with no allocation per combo or per pass: every WMA writes into a caller-owned
//! [`Scratch`], sized once by [`scratch_len`] (faer style), and results land in a caller-owned output.
//!
//! The per-combo pipeline here ([`run_combo_with`]) is shared with the SIMD and rayon variants,
//! which plug in their own WMA kernel.

use crate::Threads;
use hullsweep_kernel::{Combo, KernelError, SweepResult, validate, window};

/// Buffers of `n_bars` each that one combo needs.
pub const BUFFERS: usize = 5;

/// Number of `f64` a [`Scratch`] holds for a series of `n_bars`.
pub fn scratch_len(n_bars: usize) -> usize {
    BUFFERS * n_bars
}

/// Reusable working memory for one sweep worker: [`BUFFERS`] series of `n_bars`.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    buf: Vec<f64>,
}

impl Scratch {
    /// Scratch for series of up to `n_bars` bars (the one allocation).
    pub fn new(n_bars: usize) -> Self {
        Scratch {
            buf: vec![0.0; scratch_len(n_bars)],
        }
    }

    /// The longest series this scratch serves without growing.
    pub fn n_bars(&self) -> usize {
        self.buf.len() / BUFFERS
    }

    /// The whole buffer, for [`run_combo_with`].
    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        &mut self.buf
    }

    /// Grows the scratch to serve `n_bars`; allocates only when it is too small.
    pub fn reserve(&mut self, n_bars: usize) {
        if self.buf.len() < scratch_len(n_bars) {
            self.buf.resize(scratch_len(n_bars), 0.0);
        }
    }
}

/// WMA of `x` into `out` (same length), in the reference's summation order.
///
/// Every element of `out` is written (NaN before the first full window), so buffers can be
/// reused without clearing.
pub fn wma_into(x: &[f64], w: usize, out: &mut [f64]) {
    assert!(
        w >= 1 && out.len() == x.len(),
        "wma_into: w >= 1 and equal lengths"
    );
    let lead = (w - 1).min(x.len());
    out[..lead].fill(f64::NAN);
    if w > x.len() {
        return;
    }
    let denom = (w * (w + 1) / 2) as f64;
    for (o, win) in out[w - 1..].iter_mut().zip(x.windows(w)) {
        let s = win
            .iter()
            .zip(1..=w)
            .fold(0.0, |s, (&v, k)| s + v * k as f64);
        *o = s / denom;
    }
}

/// One combo through the spec's pipeline with a pluggable WMA, using only `buf`
/// (at least [`scratch_len`]`(close.len())` long).
///
/// A pass whose window equals one already computed for this combo (`hma3_half == hma_half`,
/// `hma3_m == hma_n`, as in the default grid) reuses that output: the same pass on the same
/// input gives the same bits, so this is pure savings.
pub fn run_combo_with<F>(
    close: &[f64],
    combo: &Combo,
    fee_pct: f64,
    buf: &mut [f64],
    wma: F,
) -> (f64, i64)
where
    F: Fn(&[f64], usize, &mut [f64]),
{
    let n_bars = close.len();
    let [n, half, sqrt, m, half3, third] = combo.map(window);
    let (a, rest) = buf[..scratch_len(n_bars)].split_at_mut(n_bars);
    let (b, rest) = rest.split_at_mut(n_bars);
    let (c, rest) = rest.split_at_mut(n_bars);
    let (d, e) = rest.split_at_mut(n_bars);

    wma(close, half, a);
    wma(close, n, b);
    wma(close, third, c);
    let d_src: &[f64] = if half3 == half {
        a
    } else {
        wma(close, half3, d);
        d
    };
    let e_src: &[f64] = if m == n {
        b
    } else {
        wma(close, m, e);
        e
    };
    for ((c, &d), &e) in c.iter_mut().zip(d_src).zip(e_src) {
        *c = 3.0 * *c - d - e;
    }
    for (a, &b) in a.iter_mut().zip(&*b) {
        *a = 2.0 * *a - b;
    }
    // d and e are free again (their contents, if any, were consumed above).
    wma(a, sqrt, d);
    wma(c, m, e);
    crate::checked::backtest(close, d, e, fee_pct)
}

/// Sweeps every combo into `out` using `scratch`, after validating the inputs.
///
/// With `scratch` sized for `close.len()` and `out` already holding `params.len()` combos, this
/// performs no allocation at all (a test with a counting allocator holds it to that).
pub fn sweep_into(
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
    scratch: &mut Scratch,
    out: &mut SweepResult,
) -> Result<(), KernelError> {
    sweep_into_with(close, params, fee_pct, scratch, out, wma_into)
}

/// [`sweep_into`] with a pluggable WMA kernel (the SIMD variant passes its own).
pub(crate) fn sweep_into_with<F>(
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
    scratch: &mut Scratch,
    out: &mut SweepResult,
    wma: F,
) -> Result<(), KernelError>
where
    F: Fn(&[f64], usize, &mut [f64]) + Copy,
{
    validate(close, params, fee_pct)?;
    scratch.reserve(close.len());
    out.pnl.resize(params.len(), 0.0);
    out.trades.resize(params.len(), 0);
    for ((combo, pnl), trades) in params.iter().zip(&mut out.pnl).zip(&mut out.trades) {
        (*pnl, *trades) = run_combo_with(close, combo, fee_pct, &mut scratch.buf, wma);
    }
    Ok(())
}

/// The [`SweepFn`](crate::SweepFn) entry: one scratch and one result for the whole sweep.
pub fn sweep(
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
) -> Result<SweepResult, KernelError> {
    validate(close, params, fee_pct)?;
    let mut scratch = Scratch::new(close.len());
    let mut out = SweepResult::zeroed(params.len());
    sweep_into(close, params, fee_pct, &mut scratch, &mut out)?;
    Ok(out)
}
