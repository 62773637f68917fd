//! `live`, the exact path: the reference's `d` at one bar, with the kernel's arithmetic (one
//! multiply then one add per window element, oldest first, then one division), node by node,
//! each node's value at a bar computed once and kept, a window over a flat stretch reusing its
//! neighbour's (the same inputs give the same bits).

use super::graph::{Diff, Graph, Level2};
use super::ring::{Cache, Series};

/// The reference's `wma(x, w)` at bar `j` (`docs/kernel.md`, `hullsweep_kernel::wma`), `x(j')`
/// giving input bar `j'`: NaN before the window fills (`j + 1 < w`), otherwise the kernel's sum
/// in its order.
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

/// The close series as the exact path reads it: raw (NaN is NaN), and the run of bit-identical
/// closes ending at each bar.
pub(super) struct Closes<'a> {
    pub(super) close: &'a Series<f64>,
    pub(super) run: &'a Series<u32>,
}

impl Graph {
    /// The reference's `hma - hma3` at bar `i` for the combo whose indicators are nodes `h` and
    /// `h3`. Only asked where `d` is defined (the bars-since-NaN count decides NaN bars), so
    /// every bar read is held.
    pub(super) fn exact_d(&mut self, h: u32, h3: u32, i: u64, c: &Closes<'_>) -> f64 {
        let hma = exact_level2(&mut self.h[h as usize], &mut self.d1, &mut self.l1, i, c);
        let hma3 = exact_level2(&mut self.h3[h3 as usize], &mut self.d3, &mut self.l1, i, c);
        hma - hma3
    }
}

/// A WMA of a difference at bar `i`.
fn exact_level2(
    node: &mut Level2,
    diffs: &mut [Diff],
    l1: &mut [super::graph::Level1],
    i: u64,
    c: &Closes<'_>,
) -> f64 {
    if let Some(v) = node.exact.get(i) {
        return v;
    }
    let w = node.w;
    let diff = &mut diffs[node.src as usize];
    let v = if i + 1 < w as u64 {
        f64::NAN
    } else {
        exact_diff(diff, l1, i, c);
        // The window at `i` holds the same bits as the one at `i - 1` (the run covers both):
        // the same sum.
        match i.checked_sub(1).and_then(|p| node.exact.get(p)) {
            Some(prev) if diff.exact.run(i) as usize > w => prev,
            _ => {
                let first = i + 1 - w as u64;
                for j in first..i {
                    exact_diff(diff, l1, j, c);
                }
                let ex = &diff.exact;
                wma_at(|j| ex.get(j).expect("just computed"), w, i)
            }
        }
    };
    node.exact.put(i, v);
    v
}

/// `2a - b` or `3c - dd - e` at bar `j`.
fn exact_diff(diff: &mut Diff, l1: &mut [super::graph::Level1], j: u64, c: &Closes<'_>) -> f64 {
    if let Some(v) = diff.exact.get(j) {
        return v;
    }
    let mut vals = [0.0; 3];
    let n = if diff.three { 3 } else { 2 };
    for (v, &k) in vals.iter_mut().zip(&diff.ins).take(n) {
        let node = &mut l1[k as usize];
        *v = exact_l1(&mut node.exact, node.w, j, c);
    }
    let v = diff.combine(vals);
    diff.exact.put(j, v);
    v
}

/// A WMA of close at bar `j`.
fn exact_l1(cache: &mut Cache, w: usize, j: u64, c: &Closes<'_>) -> f64 {
    if let Some(v) = cache.get(j) {
        return v;
    }
    let v = match j.checked_sub(1).and_then(|p| cache.get(p)) {
        // Closes `j - w ..= j` bit-identical: the window at `j` is the one at `j - 1`.
        Some(prev) if c.run.at(j) as usize > w => prev,
        _ => wma_at(|b| c.close.at(b), w, j),
    };
    cache.put(j, v);
    v
}
