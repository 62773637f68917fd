//! `live`, the exact path: the reference's `d` at one bar, with the kernel's arithmetic (one
//! multiply then one add per window element, oldest first, then one division) over the ring.

use super::history::History;

/// The reference's `wma(x, w)` at bar `j` (`docs/kernel.md`), `x(j')` giving input bar `j'`:
/// NaN before the window fills (`j + 1 < w`), otherwise the kernel's sum in its order.
#[inline]
pub(super) fn wma_at(x: impl Fn(u64) -> f64, w: usize, j: u64) -> f64 {
    if j + 1 < w as u64 {
        return f64::NAN;
    }
    let first = j + 1 - w as u64;
    let mut s = 0.0;
    for k in 0..w {
        s += x(first + k as u64) * (k + 1) as f64;
    }
    s / (w * (w + 1) / 2) as f64
}

/// The reference's `d = hma - hma3` at bar `i` for windows `[n, h, s, m, h3, t]`, every bar it
/// reads held by `hist`. The caller knows `d` is not NaN by the bars-since-NaN count (rolling.md,
/// "NaN bars"); this is only asked for bars where it may be defined.
pub(super) fn reference_d(hist: &History, w: &[usize; 6], i: u64) -> f64 {
    let [n, h, s, m, h3, t] = *w;
    let close = |j: u64| hist.at(j);
    let d1 = |j: u64| 2.0 * wma_at(close, h, j) - wma_at(close, n, j);
    let d3 = |j: u64| 3.0 * wma_at(close, t, j) - wma_at(close, h3, j) - wma_at(close, m, j);
    wma_at(d1, s, i) - wma_at(d3, m, i)
}
