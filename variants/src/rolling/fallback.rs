//! `rolling`, the exact path: the reference's `d` for the bars the bound left uncertified, with
//! the reference's arithmetic (the SIMD WMA), flat runs computed once per run.

use super::certify::Plan;
use crate::prealloc;
use crate::simd::WmaKernel;
use std::ops::Range;

/// The reference's `d` at bars `range`, with its own arithmetic (through the bit-identical SIMD
/// WMA `kernel`, and [`wma_flat_aware`] on flat runs), into `d[range]`.
///
/// Passes the combo repeats (`hma3_half == hma_half`, `hma3_m == hma_n`) run once, as in
/// `prealloc`: the same pass on the same input gives the same bits.
pub(super) fn reference_d(
    close: &[f64],
    plan: &Plan,
    kernel: WmaKernel,
    buf: &mut prealloc::Scratch,
    range: Range<usize>,
    d: &mut [f64],
) {
    let n_bars = close.len();
    let [a, b, c, dd, e] = buf.split_bars(n_bars);
    let p = plan;
    // Both differences over the longer of their lookbacks, so shared passes serve both.
    let r = range.start.saturating_sub(p.s.max(p.m) - 1)..range.end;
    let wma = |x: &[f64], w: usize, out: &mut [f64], r: Range<usize>| {
        wma_flat_aware(kernel, x, w, out, r)
    };
    wma(close, p.h, a, r.clone());
    wma(close, p.n, b, r.clone());
    wma(close, p.t, c, r.clone());
    let dd: &[f64] = if p.h3 == p.h {
        a
    } else {
        wma(close, p.h3, dd, r.clone());
        dd
    };
    let e: &[f64] = if p.m == p.n {
        b
    } else {
        wma(close, p.m, e, r.clone());
        e
    };
    for ((c, &dd), &e) in c[r.clone()]
        .iter_mut()
        .zip(&dd[r.clone()])
        .zip(&e[r.clone()])
    {
        *c = 3.0 * *c - dd - e;
    }
    for (a, &b) in a[r.clone()].iter_mut().zip(&b[r]) {
        *a = 2.0 * *a - b;
    }
    // `b` is free once the differences are taken: it holds hma, and `d` holds hma3 first.
    wma(a, p.s, b, range.clone());
    wma(c, p.m, d, range.clone());
    for (d, &hma) in d[range.clone()].iter_mut().zip(&b[range]) {
        *d = hma - *d;
    }
}

/// `kernel.wma_range(x, w, out, range)`, bit for bit, with outputs whose whole window holds one
/// value computed once per run: the reference's sum over a constant window is a function of the
/// value and the window alone, so a flat run costs O(1) per bar instead of O(w). Flat runs are
/// where the bound certifies nothing (`d` is zero or a few ulps from it), so this is what keeps
/// the fallback cheap on them.
pub(super) fn wma_flat_aware(
    kernel: WmaKernel,
    x: &[f64],
    w: usize,
    out: &mut [f64],
    range: Range<usize>,
) {
    /// Flat windows shorter than this go through the kernel: the scan would not pay.
    const MIN_RUN: usize = 16;
    assert!(range.end <= x.len() && out.len() == x.len() && w >= 1);
    if range.is_empty() {
        return;
    }
    // `run` is the length of the run of bit-identical values ending at `i`.
    let same = |i: usize| x[i].to_bits() == x[i - 1].to_bits();
    let from = range.start.saturating_sub(w - 1);
    let mut run = 0usize;
    for i in from..range.start {
        run = if i > from && same(i) { run + 1 } else { 1 };
    }
    let denom = (w * (w + 1) / 2) as f64;
    let mut cached: Option<(u64, f64)> = None;
    let mut pending = range.start; // first output not yet written
    let mut i = range.start;
    while i < range.end {
        run = if i > from && same(i) { run + 1 } else { 1 };
        if run >= w && w >= MIN_RUN {
            // Outputs `i..j` all have a constant window of `x[i]`.
            let v = x[i];
            let mut j = i + 1;
            while j < range.end && x[j].to_bits() == v.to_bits() {
                j += 1;
            }
            kernel.wma_range(x, w, out, pending..i);
            let value = match cached {
                Some((bits, value)) if bits == v.to_bits() => value,
                _ => {
                    // The reference's loop, once: one multiply then one add per element.
                    let mut s = 0.0;
                    let mut wk = 1.0;
                    for _ in 0..w {
                        s += v * wk;
                        wk += 1.0;
                    }
                    s / denom
                }
            };
            cached = Some((v.to_bits(), value));
            out[i..j].fill(value);
            run += j - 1 - i;
            pending = j;
            i = j;
        } else {
            i += 1;
        }
    }
    kernel.wma_range(x, w, out, pending..range.end);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flat-run shortcut gives the reference's bits for every window and range, with runs
    /// at the range's edges, NaN runs (bit-equal NaNs form a run too) and signed zeros.
    #[test]
    fn flat_aware_wma_is_the_reference_bit_for_bit() {
        let mut x = Vec::new();
        for (v, n) in [
            (1.1, 40),
            (0.3, 17),
            (2.5, 3),
            (f64::NAN, 25),
            (1.1, 64),
            (0.0, 20),
            (-0.0, 20),
            (1e6, 33),
        ] {
            x.extend(std::iter::repeat_n(v, n));
        }
        x.extend((0..50).map(|i| 1.0 + (i as f64 * 0.37).sin()));
        let kernel = WmaKernel::best();
        for w in [1, 2, 15, 16, 17, 33, 64, 65, 200] {
            let want = hullsweep_kernel::wma(&x, w);
            for (a, b) in [(0, x.len()), (10, 90), (40, 41), (57, 200), (150, x.len())] {
                let mut out = vec![7.0; x.len()];
                wma_flat_aware(kernel, &x, w, &mut out, a..b);
                for i in a..b {
                    assert!(
                        out[i].to_bits() == want[i].to_bits()
                            || (out[i].is_nan() && want[i].is_nan()),
                        "w {w}, range {a}..{b}, bar {i}: {} vs {}",
                        out[i],
                        want[i]
                    );
                }
                assert!(
                    out[..a].iter().chain(&out[b..]).all(|&v| v == 7.0),
                    "outside the range"
                );
            }
        }
    }
}
