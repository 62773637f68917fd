//! `rolling`, stage one: the series prepared once per sweep for every combo and worker (the
//! transposed lanes with their lookback, the block maxima that scale the bound, the NaN bars).

use super::*;

/// Local positions per block of the per-lane maximum |close| used to scale the bound.
pub(super) const MAX_BLOCK: usize = 64;

/// Per-sweep inputs shared read-only by every combo and worker.
#[derive(Debug)]
pub struct Prepared<'a> {
    pub(super) close: &'a [f64],
    /// Bars per lane.
    pub(super) q: usize,
    /// Positions before each lane's first bar that hold its lookback.
    pub(super) pad: usize,
    /// Transposed close, NaN (and anything outside the series) as 0:
    /// `ct[loc * LANES + l] = close[l * q + loc - pad]`.
    pub(super) ct: Vec<f64>,
    /// Per lane, per block of [`MAX_BLOCK`] positions: the largest |value| in `ct`.
    pub(super) block_max: Vec<V>,
    /// Bars since the last NaN at or before each bar, counting a virtual NaN at bar -1
    /// (so a bar is NaN in a result of effective window `W` iff `since_nan[i] < W`).
    pub(super) since_nan: Vec<u32>,
    /// The NaN bars, in order.
    pub(super) nans: Vec<usize>,
}

impl<'a> Prepared<'a> {
    /// Prepares `close` for every combo of `plans` (the padding is the longest lookback).
    pub(super) fn new(close: &'a [f64], plans: &[Option<Plan>]) -> Self {
        let n = close.len();
        let q = n.div_ceil(LANES).max(1);
        let pad = plans
            .iter()
            .flatten()
            .map(|p| p.w1 + p.w2)
            .max()
            .unwrap_or(0);
        let len = pad + q;
        let mut ct = vec![0.0; len * LANES];
        for (l, lane) in close.chunks(q).enumerate() {
            for (k, &v) in lane.iter().enumerate() {
                ct[(pad + k) * LANES + l] = if v.is_nan() { 0.0 } else { v };
            }
        }
        // Each lane's lookback: the end of the previous lane's bars.
        for l in 1..LANES {
            let first = l * q;
            for loc in 0..pad {
                let bar = (first + loc).checked_sub(pad);
                if let Some(&v) = bar.and_then(|b| close.get(b)) {
                    ct[loc * LANES + l] = if v.is_nan() { 0.0 } else { v };
                }
            }
        }
        let block_max = ct
            .chunks(MAX_BLOCK * LANES)
            .map(|blk| {
                let mut m = [0.0f64; LANES];
                for row in blk.chunks_exact(LANES) {
                    for l in 0..LANES {
                        m[l] = m[l].max(row[l].abs());
                    }
                }
                m
            })
            .collect();
        // Starting at 0 is the virtual NaN at -1: bar i with no NaN before it counts i + 1.
        let mut since: u32 = 0;
        let since_nan = close
            .iter()
            .map(|v| {
                since = if v.is_nan() {
                    0
                } else {
                    since.saturating_add(1)
                };
                since
            })
            .collect();
        let nans = (0..n).filter(|&i| close[i].is_nan()).collect();
        Prepared {
            close,
            q,
            pad,
            ct,
            block_max,
            since_nan,
            nans,
        }
    }

    /// Bytes this holds.
    pub(super) fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&self.ct[..])
            + size_of_val(&self.block_max[..])
            + size_of_val(&self.since_nan[..])
            + size_of_val(&self.nans[..])
    }

    /// Largest |close| over positions `loc` of every lane (clamped to the buffer).
    pub(super) fn max_abs(&self, loc: Range<usize>) -> V {
        let first = loc.start / MAX_BLOCK;
        let last = loc.end.div_ceil(MAX_BLOCK).min(self.block_max.len());
        let mut m = [0.0f64; LANES];
        for b in &self.block_max[first.min(last)..last] {
            for l in 0..LANES {
                m[l] = m[l].max(b[l]);
            }
        }
        m
    }
}
