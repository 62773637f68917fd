//! One WMA kernel per hypothesis, each `#[inline(never)]` so its loop is a named symbol in objdump.
//! Every kernel is bit-identical to `hullsweep_kernel::wma` (asserted by [`check_all`] and tests).

use hullsweep_kernel::{Combo, SweepResult, backtest, window};

/// A WMA kernel: writes `out[w-1..]` (the defined values) and leaves `out[..w-1]` alone.
/// Callers guarantee `1 <= w <= x.len() == out.len()`.
pub type WmaInto = fn(x: &[f64], w: usize, out: &mut [f64]);

/// The reference inner loop verbatim: `x[i + 1 - w + k] * (k + 1) as f64`, `usize` counter.
#[inline(never)]
pub fn wma_reference(x: &[f64], w: usize, out: &mut [f64]) {
    let n = x.len();
    // Tell LLVM `out` is exactly `n` long, as the reference's own `vec![NaN; n]` is: otherwise the
    // `out[i]` check stays in the outer loop and this copy's code differs from the reference's.
    let out = &mut out[..n];
    let denom = (w * (w + 1) / 2) as f64;
    for i in (w - 1)..n {
        let mut s = 0.0;
        for k in 0..w {
            s += x[i + 1 - w + k] * (k + 1) as f64;
        }
        out[i] = s / denom;
    }
}

/// Bounds checks removed with `get_unchecked` (the study's failed hypothesis).
#[inline(never)]
pub fn wma_unchecked(x: &[f64], w: usize, out: &mut [f64]) {
    let n = x.len();
    assert!(w >= 1 && w <= n && out.len() == n);
    let denom = (w * (w + 1) / 2) as f64;
    for i in (w - 1)..n {
        let mut s = 0.0;
        for k in 0..w {
            // SAFETY: i <= n - 1 and k <= w - 1, so i + 1 - w + k <= n - 1; i >= w - 1 keeps it >= 0.
            s += unsafe { *x.get_unchecked(i + 1 - w + k) } * (k + 1) as f64;
        }
        // SAFETY: i < n == out.len() by the loop range and the assert above.
        unsafe { *out.get_unchecked_mut(i) = s / denom };
    }
}

/// The weight converted from a signed integer (`i64 -> f64`, one `cvtsi2sd`), as numba does.
#[inline(never)]
pub fn wma_signed_weight(x: &[f64], w: usize, out: &mut [f64]) {
    let n = x.len();
    let out = &mut out[..n];
    let denom = (w * (w + 1) / 2) as f64;
    for i in (w - 1)..n {
        let mut s = 0.0;
        for k in 0..w {
            s += x[i + 1 - w + k] * (k as i64 + 1) as f64;
        }
        out[i] = s / denom;
    }
}

/// A float weight counter (`wt += 1.0`): exact for integers below 2^53, so the same values.
#[inline(never)]
pub fn wma_float_counter(x: &[f64], w: usize, out: &mut [f64]) {
    let n = x.len();
    let out = &mut out[..n];
    let denom = (w * (w + 1) / 2) as f64;
    for i in (w - 1)..n {
        let mut s = 0.0;
        let mut wt = 1.0;
        for k in 0..w {
            s += x[i + 1 - w + k] * wt;
            wt += 1.0;
        }
        out[i] = s / denom;
    }
}

/// Weights precomputed once per pass (`1.0..=w`), read from a table in the inner loop.
#[inline(never)]
pub fn wma_weight_table(x: &[f64], w: usize, out: &mut [f64]) {
    let n = x.len();
    let out = &mut out[..n];
    let weights: Vec<f64> = (1..=w).map(|k| k as f64).collect();
    let denom = (w * (w + 1) / 2) as f64;
    for i in (w - 1)..n {
        let mut s = 0.0;
        for k in 0..w {
            s += x[i + 1 - w + k] * weights[k];
        }
        out[i] = s / denom;
    }
}

/// Loop shape: the window as a sub-slice iterated with `enumerate`, no index arithmetic.
#[inline(never)]
pub fn wma_subslice(x: &[f64], w: usize, out: &mut [f64]) {
    let denom = (w * (w + 1) / 2) as f64;
    for (win, o) in x.windows(w).zip(&mut out[w - 1..]) {
        let mut s = 0.0;
        for (k, &v) in win.iter().enumerate() {
            s += v * (k + 1) as f64;
        }
        *o = s / denom;
    }
}

/// Sub-slice zipped with a weight table: the idiomatic scalar form, same order and values.
#[inline(never)]
pub fn wma_subslice_table(x: &[f64], w: usize, out: &mut [f64]) {
    let weights: Vec<f64> = (1..=w).map(|k| k as f64).collect();
    let denom = (w * (w + 1) / 2) as f64;
    for (win, o) in x.windows(w).zip(&mut out[w - 1..]) {
        let mut s = 0.0;
        for (&v, &wt) in win.iter().zip(&weights) {
            s += v * wt;
        }
        *o = s / denom;
    }
}

/// What numba emits for `x[i - w + 1 + k]` with `int64` loop variables: a negative-index
/// wraparound select, no bounds check, and a signed weight conversion.
#[inline(never)]
pub fn wma_numba_shape(x: &[f64], w: usize, out: &mut [f64]) {
    let n = x.len() as i64;
    assert!(w >= 1 && w as i64 <= n && out.len() == x.len());
    let w = w as i64;
    let denom = (w * (w + 1)) as f64 / 2.0;
    for i in (w - 1)..n {
        let mut s = 0.0;
        for k in 0..w {
            let mut idx = i - w + 1 + k;
            if idx < 0 {
                idx += n;
            }
            // SAFETY: 0 <= i - w + 1 + k <= n - 1 for i in w-1..n and k in 0..w (wrap never fires).
            s += unsafe { *x.get_unchecked(idx as usize) } * (k + 1) as f64;
        }
        // SAFETY: 0 <= i < n == out.len() by the loop range and the assert above.
        unsafe { *out.get_unchecked_mut(i as usize) = s / denom };
    }
}

/// Manual unroll by four with the same serial summation order (the add chain is unchanged).
#[inline(never)]
pub fn wma_unroll4(x: &[f64], w: usize, out: &mut [f64]) {
    let denom = (w * (w + 1) / 2) as f64;
    for (win, o) in x.windows(w).zip(&mut out[w - 1..]) {
        let mut s = 0.0;
        let mut wt = 1.0;
        let mut chunks = win.chunks_exact(4);
        for c in &mut chunks {
            s += c[0] * wt;
            s += c[1] * (wt + 1.0);
            s += c[2] * (wt + 2.0);
            s += c[3] * (wt + 3.0);
            wt += 4.0;
        }
        for &v in chunks.remainder() {
            s += v * wt;
            wt += 1.0;
        }
        *o = s / denom;
    }
}

/// Loop interchange: window offset outer, bar inner. Each `out[i]` still receives its terms
/// oldest first from 0.0, so it is bit-identical, but the inner loop is independent across bars
/// and the compiler vectorises it (no reassociation of any single sum).
#[inline(never)]
pub fn wma_interchange(x: &[f64], w: usize, out: &mut [f64]) {
    let n = x.len();
    let denom = (w * (w + 1) / 2) as f64;
    let acc = &mut out[w - 1..];
    acc.fill(0.0);
    for k in 0..w {
        let wt = (k + 1) as f64;
        for (a, &v) in acc.iter_mut().zip(&x[k..n + 1 - w + k]) {
            *a += v * wt;
        }
    }
    for a in acc {
        *a /= denom;
    }
}

/// How each WMA pass gets its output buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The reference: a fresh `vec![NaN; n]` per pass (allocation plus a full NaN fill).
    FreshNanFill,
    /// One buffer per pass slot reused across combos, refilled with NaN in full every pass.
    ReuseNanFill,
    /// Reused buffers, NaN written only to the `w - 1` undefined head.
    ReuseNanHead,
}

/// Buffers reused across combos by the `Reuse*` pass modes.
#[derive(Default)]
struct Scratch {
    bufs: [Vec<f64>; 7],
    diff: [Vec<f64>; 2],
}

fn pass_into(kernel: WmaInto, x: &[f64], w: usize, out: &mut [f64], head_only: bool) {
    let n = x.len();
    if w > n {
        out.fill(f64::NAN);
        return;
    }
    if head_only {
        out[..w - 1].fill(f64::NAN);
    } else {
        out.fill(f64::NAN);
    }
    kernel(x, w, out);
}

fn fresh(kernel: WmaInto, x: &[f64], w: usize) -> Vec<f64> {
    let mut out = vec![f64::NAN; x.len()];
    if w <= x.len() {
        kernel(x, w, &mut out);
    }
    out
}

fn combo_fresh(kernel: WmaInto, close: &[f64], c: &Combo, fee: f64) -> (f64, i64) {
    let [n, half, sqrt, m, half3, third] = c.map(window);
    let a = fresh(kernel, close, half);
    let b = fresh(kernel, close, n);
    let mut diff = vec![0.0; close.len()];
    for i in 0..close.len() {
        diff[i] = 2.0 * a[i] - b[i];
    }
    let h = fresh(kernel, &diff, sqrt);
    let c3 = fresh(kernel, close, third);
    let d3 = fresh(kernel, close, half3);
    let e3 = fresh(kernel, close, m);
    let mut diff3 = vec![0.0; close.len()];
    for i in 0..close.len() {
        diff3[i] = 3.0 * c3[i] - d3[i] - e3[i];
    }
    let h3 = fresh(kernel, &diff3, m);
    backtest(close, &h, &h3, fee)
}

fn combo_reuse(
    kernel: WmaInto,
    s: &mut Scratch,
    close: &[f64],
    c: &Combo,
    fee: f64,
    head: bool,
) -> (f64, i64) {
    let [n, half, sqrt, m, half3, third] = c.map(window);
    let len = close.len();
    for b in s.bufs.iter_mut().chain(s.diff.iter_mut()) {
        b.resize(len, 0.0);
    }
    let [a, b, h, c3, d3, e3, h3] = &mut s.bufs;
    let [diff, diff3] = &mut s.diff;
    pass_into(kernel, close, half, a, head);
    pass_into(kernel, close, n, b, head);
    for i in 0..len {
        diff[i] = 2.0 * a[i] - b[i];
    }
    pass_into(kernel, diff, sqrt, h, head);
    pass_into(kernel, close, third, c3, head);
    pass_into(kernel, close, half3, d3, head);
    pass_into(kernel, close, m, e3, head);
    for i in 0..len {
        diff3[i] = 3.0 * c3[i] - d3[i] - e3[i];
    }
    pass_into(kernel, diff3, m, h3, head);
    backtest(close, h, h3, fee)
}

/// The reference sweep with the WMA kernel and the pass mode swapped in (inputs unvalidated).
pub fn sweep_with(
    kernel: WmaInto,
    pass: Pass,
    close: &[f64],
    params: &[Combo],
    fee: f64,
) -> SweepResult {
    let mut r = SweepResult::zeroed(params.len());
    let mut scratch = Scratch::default();
    for (j, c) in params.iter().enumerate() {
        let (pnl, trades) = match pass {
            Pass::FreshNanFill => combo_fresh(kernel, close, c, fee),
            Pass::ReuseNanFill => combo_reuse(kernel, &mut scratch, close, c, fee, false),
            Pass::ReuseNanHead => combo_reuse(kernel, &mut scratch, close, c, fee, true),
        };
        r.pnl[j] = pnl;
        r.trades[j] = trades;
    }
    r
}

/// Every WMA kernel, by name, reference first.
pub const KERNELS: &[(&str, WmaInto)] = &[
    ("reference", wma_reference),
    ("unchecked", wma_unchecked),
    ("signed_weight", wma_signed_weight),
    ("float_counter", wma_float_counter),
    ("weight_table", wma_weight_table),
    ("subslice", wma_subslice),
    ("subslice_table", wma_subslice_table),
    ("numba_shape", wma_numba_shape),
    ("unroll4", wma_unroll4),
    ("interchange", wma_interchange),
];

/// Looks a kernel up by name.
pub fn kernel(name: &str) -> Option<WmaInto> {
    KERNELS.iter().find(|(n, _)| *n == name).map(|&(_, k)| k)
}

/// Asserts every kernel reproduces `hullsweep_kernel::wma` bit for bit on `x` for each window.
pub fn check_all(x: &[f64], windows: &[usize]) -> Result<(), String> {
    for &w in windows {
        let want = hullsweep_kernel::wma(x, w);
        for (name, k) in KERNELS {
            let got = fresh(*k, x, w);
            if let Some(i) = (0..x.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
                return Err(format!(
                    "kernel {name} differs from the reference at w={w}, i={i}: {} vs {}",
                    got[i], want[i]
                ));
            }
        }
    }
    Ok(())
}

/// True when two sweep results are identical bit for bit.
pub fn identical(a: &SweepResult, b: &SweepResult) -> bool {
    a.trades == b.trades
        && a.pnl.len() == b.pnl.len()
        && a.pnl
            .iter()
            .zip(&b.pnl)
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hullsweep_kernel::{GridSpec, gbm, grid};

    #[test]
    fn every_kernel_is_bit_identical() {
        let mut x = gbm(3000, 7, 0.01).unwrap();
        x[1500] = f64::NAN;
        check_all(&x, &[1, 2, 3, 4, 5, 7, 16, 33, 200, 2999, 3000]).unwrap();
    }

    #[test]
    fn every_sweep_mode_is_bit_identical() {
        let close = gbm(4000, 3, 0.002).unwrap();
        let params = grid(GridSpec {
            lo: 2,
            hi: 300,
            k: 7,
        })
        .unwrap();
        let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
        for (name, k) in KERNELS {
            for pass in [Pass::FreshNanFill, Pass::ReuseNanFill, Pass::ReuseNanHead] {
                let got = sweep_with(*k, pass, &close, &params, 0.09);
                assert!(identical(&got, &want), "{name} {pass:?}");
            }
        }
    }
}
