//! The kernel with no allocation per combo or per pass: every WMA writes into a caller-owned
//! [`Scratch`], sized once by [`scratch_len`] (faer style), and results land in a caller-owned output.
//!
//! The per-combo pipeline here ([`run_combo_with`]) is shared with the SIMD and rayon variants,
//! which plug in their own WMA kernel.

pub use crate::backtest::Backtest;
use crate::backtest::EventLoop;

use crate::Threads;
use hullsweep_kernel::{
    Combo, KernelError, SweepResult, ValidClose, validate_params_and_fee, window,
};
use std::ops::Range;

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

    /// The [`BUFFERS`] buffers of `n_bars` each (the scratch must serve `n_bars`).
    pub fn split_bars(&mut self, n_bars: usize) -> [&mut [f64]; BUFFERS] {
        let mut rest = &mut self.buf[..scratch_len(n_bars)];
        std::array::from_fn(|_| {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(n_bars);
            rest = tail;
            head
        })
    }

    /// Grows the scratch to serve `n_bars`; allocates only when it is too small.
    pub fn reserve(&mut self, n_bars: usize) {
        if self.buf.len() < scratch_len(n_bars) {
            self.buf.resize(scratch_len(n_bars), 0.0);
        }
    }
}

/// Bars per tile of the pipeline: small enough that a tile of every buffer stays in L2, large
/// enough that the per-pass overhead of a tile is negligible.
pub const TILE: usize = 4096;

/// WMA of `x` into `out` (same length), in the reference's summation order.
///
/// Every element of `out` is written (NaN before the first full window), so buffers can be
/// reused without clearing.
pub fn wma_into(x: &[f64], w: usize, out: &mut [f64]) {
    wma_range_into(x, w, out, 0..x.len());
}

/// Only the outputs `range` of [`wma_into`]; the rest of `out` is untouched.
pub fn wma_range_into(x: &[f64], w: usize, out: &mut [f64], range: Range<usize>) {
    assert!(
        w >= 1 && out.len() == x.len() && range.start <= range.end && range.end <= x.len(),
        "wma: w >= 1, equal lengths, range inside"
    );
    let start = range.start.max(w - 1);
    out[range.start..range.end.min(start)].fill(f64::NAN);
    if start >= range.end {
        return;
    }
    let denom = (w * (w + 1) / 2) as f64;
    for (o, win) in out[start..range.end]
        .iter_mut()
        .zip(x[start + 1 - w..range.end].windows(w))
    {
        // The weight as a float counter: the same exact integers as `(k + 1) as f64`.
        let mut s = 0.0;
        let mut wk = 1.0;
        for &v in win {
            s += v * wk;
            wk += 1.0;
        }
        *o = s / denom;
    }
}

/// One combo through the spec's pipeline with a pluggable range WMA (`wma(x, w, out, range)`
/// writes `out[range]` only), using only `buf` (at least [`scratch_len`]`(close.len())` long).
///
/// The bars are processed in tiles of [`TILE`]: every pass of a tile, then the event loop over
/// it, so the buffers are touched while they are in cache. Each output still comes from exactly
/// the reference's operations; the second-level WMAs read the earlier tiles' differences, which
/// are complete by then.
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
    F: Fn(&[f64], usize, &mut [f64], Range<usize>),
{
    let mut bt = Backtest::new();
    run_combo_from(close, combo, fee_pct, buf, wma, 0, &mut bt);
    (bt.pnl, bt.trades)
}

/// [`run_combo_with`] resumed: bars before `from` are lookback only (their WMAs are computed,
/// the event loop does not see them) and the event loop continues from `bt`. A sweep resumed
/// this way over the last lookback bars and a new chunk equals the sweep of the whole series.
pub fn run_combo_from<F>(
    close: &[f64],
    combo: &Combo,
    fee_pct: f64,
    buf: &mut [f64],
    wma: F,
    from: usize,
    bt: &mut Backtest,
) where
    F: Fn(&[f64], usize, &mut [f64], Range<usize>),
{
    run_combo_loop(close, combo, fee_pct, buf, wma, from, bt);
}

/// [`run_combo_from`] into any [`EventLoop`].
pub(crate) fn run_combo_loop<F, L: EventLoop>(
    close: &[f64],
    combo: &Combo,
    fee_pct: f64,
    buf: &mut [f64],
    wma: F,
    from: usize,
    bt: &mut L,
) where
    F: Fn(&[f64], usize, &mut [f64], Range<usize>),
{
    let n_bars = close.len();
    let [n, half, sqrt, m, half3, third] = combo.map(window);
    let (a, rest) = buf[..scratch_len(n_bars)].split_at_mut(n_bars);
    let (b, rest) = rest.split_at_mut(n_bars);
    let (c, rest) = rest.split_at_mut(n_bars);
    let (d, e) = rest.split_at_mut(n_bars);

    let mut t0 = 0;
    while t0 < n_bars {
        let r = t0..(t0 + TILE).min(n_bars);
        wma(close, half, a, r.clone());
        wma(close, n, b, r.clone());
        wma(close, third, c, r.clone());
        let d_src: &[f64] = if half3 == half {
            a
        } else {
            wma(close, half3, d, r.clone());
            d
        };
        let e_src: &[f64] = if m == n {
            b
        } else {
            wma(close, m, e, r.clone());
            e
        };
        for ((c, &d), &e) in c[r.clone()]
            .iter_mut()
            .zip(&d_src[r.clone()])
            .zip(&e_src[r.clone()])
        {
            *c = 3.0 * *c - d - e;
        }
        for (a, &b) in a[r.clone()].iter_mut().zip(&b[r.clone()]) {
            *a = 2.0 * *a - b;
        }
        // d and e of this tile are consumed: they take hma and hma3 (their earlier tiles are
        // never read again; a and c keep the differences the next tiles' windows reach back to).
        wma(a, sqrt, d, r.clone());
        wma(c, m, e, r.clone());
        let fed = r.start.max(from)..r.end;
        if !fed.is_empty() {
            bt.feed(
                fed.start,
                &close[fed.clone()],
                &d[fed.clone()],
                &e[fed],
                fee_pct,
            );
        }
        t0 = r.end;
    }
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
    sweep_into_with(
        ValidClose::new(close)?,
        params,
        fee_pct,
        scratch,
        out,
        wma_range_into,
    )
}

/// [`sweep_into`] with a pluggable WMA kernel (the SIMD variant passes its own).
pub(crate) fn sweep_into_with<F>(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    scratch: &mut Scratch,
    out: &mut SweepResult,
    wma: F,
) -> Result<(), KernelError>
where
    F: Fn(&[f64], usize, &mut [f64], Range<usize>) + Copy,
{
    validate_params_and_fee(params, fee_pct)?;
    let close = close.bars();
    scratch.reserve(close.len());
    out.pnl.resize(params.len(), 0.0);
    out.trades.resize(params.len(), 0);
    for ((combo, pnl), trades) in params.iter().zip(&mut out.pnl).zip(&mut out.trades) {
        (*pnl, *trades) = run_combo_with(close, combo, fee_pct, &mut scratch.buf, wma);
    }
    Ok(())
}

/// The batch sweep: one scratch and one result for the whole sweep.
pub fn sweep(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
) -> Result<SweepResult, KernelError> {
    sweep_fresh_with(close, params, fee_pct, wma_range_into)
}

/// The [`SweepFn`](crate::SweepFn) entry: resumed from `states` at bar `from`.
pub fn sweep_from(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
    from: usize,
    states: &mut [Backtest],
) -> Result<(), KernelError> {
    sweep_from_with(close, params, fee_pct, from, states, wma_range_into)
}

/// A resumed sweep with a pluggable WMA kernel, one scratch for every combo.
pub(crate) fn sweep_from_with<F>(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    from: usize,
    states: &mut [Backtest],
    wma: F,
) -> Result<(), KernelError>
where
    F: Fn(&[f64], usize, &mut [f64], Range<usize>) + Copy,
{
    crate::check_resume(close, params, fee_pct, from, states)?;
    let close = close.bars();
    let mut scratch = Scratch::new(close.len());
    for (combo, bt) in params.iter().zip(states) {
        run_combo_from(close, combo, fee_pct, &mut scratch.buf, wma, from, bt);
    }
    Ok(())
}

/// One sweep with a scratch and result of its own (the SIMD variant passes its WMA kernel).
pub(crate) fn sweep_fresh_with<F>(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    wma: F,
) -> Result<SweepResult, KernelError>
where
    F: Fn(&[f64], usize, &mut [f64], Range<usize>) + Copy,
{
    // Both start empty: `sweep_into_with` validates first, then sizes them, so bad params
    // cost no allocation and are checked once.
    let mut scratch = Scratch::new(0);
    let mut out = SweepResult::default();
    sweep_into_with(close, params, fee_pct, &mut scratch, &mut out, wma)?;
    Ok(out)
}
