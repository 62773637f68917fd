//! `rolling`, stage one: each block of bars prepared once for every combo and worker (the
//! transposed lanes with their lookback, the block maxima that scale the bound, the NaN bars).

use super::certify::Plan;
use super::layout::{LANES, V};
use super::rows::Rows;
use std::ops::Range;

/// Local positions per block of the per-lane maximum |close| used to scale the bound.
pub(super) const MAX_BLOCK: usize = 64;

/// Blocks of [`MAX_BLOCK`] positions per piece of the preparation a worker takes at a time
/// (128 KiB of `ct`): small enough that the workers finish it together, large enough that
/// claiming one is free.
const PIECE_BLOCKS: usize = 32;

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
    pub(super) ct: Rows,
    /// Per lane, per block of [`MAX_BLOCK`] positions: the largest |value| in `ct`.
    pub(super) block_max: Vec<V>,
    /// The NaN bars, in order.
    pub(super) nans: Vec<usize>,
}

/// The lookback the prepared series needs for `plans`: the longest of theirs.
pub(super) fn pad(plans: &[Option<Plan>]) -> usize {
    plans
        .iter()
        .flatten()
        .map(|p| p.w1 + p.w2)
        .max()
        .unwrap_or(0)
}

impl<'a> Prepared<'a> {
    /// Prepares `close` for every combo of `plans` on `workers` threads.
    ///
    /// The work is one pass over the series into fresh memory, whose page faults cost about
    /// as much as the pass on the lab's VM (a few µs a 4 KiB page); on one thread it would be
    /// serial work in front of every worker (#17's scaling target), so the workers share it, in
    /// pieces taken in turn.
    pub(super) fn new(close: &'a [f64], plans: &[Option<Plan>], workers: usize) -> Self {
        let n = close.len();
        let q = n.div_ceil(LANES).max(1);
        let pad = pad(plans);
        let len = pad + q;
        let mut ct = Rows::zeroed(len);
        let piece = PIECE_BLOCKS * MAX_BLOCK;
        let pieces: Vec<_> = ct.chunks_mut(piece * LANES).enumerate().collect();
        // The NaN scan in as many pieces, so each worker's share of it is as even.
        let bars_per_piece = n.div_ceil(pieces.len()).max(1);
        let done = crate::rayon::team_map(workers, pieces, |(p, rows)| {
            let bars = (p * bars_per_piece).min(n)..((p + 1) * bars_per_piece).min(n);
            let nans: Vec<usize> = bars.filter(|&i| close[i].is_nan()).collect();
            (fill(close, q, pad, p * piece, rows), nans)
        });
        let (mut block_max, mut nans) = (Vec::new(), Vec::new());
        for (m, z) in done {
            block_max.extend(m);
            nans.extend(z);
        }
        Prepared {
            close,
            q,
            pad,
            ct,
            block_max,
            nans,
        }
    }

    /// Whether bar `i` is defined in a result of effective window `weff`: at least `weff`
    /// bars since the last NaN at or before it, counting a virtual NaN at bar -1.
    pub(super) fn defined(&self, i: usize, weff: usize) -> bool {
        let since = match self.nans.partition_point(|&p| p <= i) {
            0 => i + 1,
            j => i - self.nans[j - 1],
        };
        since >= weff
    }

    /// Bytes this holds.
    pub(super) fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&self.ct[..]) + size_of_val(&self.block_max[..]) + size_of_val(&self.nans[..])
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

/// Writes the rows of `ct` from position `loc0` (`rows`, whole rows) and returns the block
/// maxima of them. A block of [`MAX_BLOCK`] positions at a time, lane by lane within it, so the
/// block's 4 KiB stay in L1 while all 8 lanes write them (lane by lane over the whole buffer
/// would stream it through L2 eight times). The maxima take a second pass over the block, row
/// by row, which vectorises: folded into the strided copy, they made it 4× slower.
fn fill(close: &[f64], q: usize, pad: usize, loc0: usize, rows: &mut [f64]) -> Vec<V> {
    let n = close.len() as isize;
    rows.chunks_mut(MAX_BLOCK * LANES)
        .enumerate()
        .map(|(b, block)| {
            for l in 0..LANES {
                // Position `loc` of lane `l` holds bar `l q + loc - pad`: the lane's own bars,
                // after `pad` positions of lookback from the end of the lane before it (zeros
                // before bar 0 and past the last bar).
                let first = (l * q + loc0 + b * MAX_BLOCK) as isize - pad as isize;
                let lo = first.clamp(0, n);
                let hi = (first + (block.len() / LANES) as isize).clamp(0, n);
                if hi <= lo {
                    continue;
                }
                let rows = block[(lo - first) as usize * LANES..].chunks_exact_mut(LANES);
                for (row, &v) in rows.zip(&close[lo as usize..hi as usize]) {
                    row[l] = if v.is_nan() { 0.0 } else { v };
                }
            }
            let mut m = [0.0f64; LANES];
            for row in block.chunks_exact(LANES) {
                for l in 0..LANES {
                    m[l] = m[l].max(row[l].abs());
                }
            }
            m
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rolling::certify::{Route, plans};
    use hullsweep_kernel::default_params;

    /// The preparation on 1, 2 and 3 workers is the definition written out directly, on a
    /// series long enough for many pieces, with NaN bars and runs across the pieces' seams.
    #[test]
    fn prepared_in_pieces_is_the_definition() {
        let n = 100_003;
        let mut close: Vec<f64> = (0..n).map(|i| 100.0 + (i as f64 * 0.37).sin()).collect();
        for i in (0..n)
            .step_by(4_999)
            .chain(12_500..12_900)
            .chain(n - 40..n - 20)
        {
            close[i] = f64::NAN;
        }
        let routes: Vec<Route> = default_params().iter().map(|c| Plan::route(c, n)).collect();
        let plans = plans(&routes);
        let (q, pad) = (n.div_ceil(LANES), pad(&plans));
        let at = |bar: isize| match usize::try_from(bar).ok().and_then(|b| close.get(b)) {
            Some(v) if !v.is_nan() => *v,
            _ => 0.0,
        };
        let ct: Vec<f64> = (0..(pad + q) * LANES)
            .map(|i| at((i % LANES * q + i / LANES) as isize - pad as isize))
            .collect();
        let block_max: Vec<V> = ct
            .chunks(MAX_BLOCK * LANES)
            .map(|b| {
                std::array::from_fn(|l| {
                    b.iter()
                        .skip(l)
                        .step_by(LANES)
                        .fold(0.0, |m: f64, v| m.max(v.abs()))
                })
            })
            .collect();
        let nans: Vec<usize> = (0..n).filter(|&i| close[i].is_nan()).collect();
        for workers in 1..=3 {
            let prep = Prepared::new(&close, &plans, workers);
            assert!(
                prep.ct.len() > 4 * PIECE_BLOCKS * MAX_BLOCK * LANES,
                "many pieces"
            );
            assert_eq!(prep.ct[..], ct[..], "{workers} workers");
            assert_eq!(prep.block_max, block_max, "{workers} workers");
            assert_eq!(prep.nans, nans, "{workers} workers");
            let mut since = 0;
            for (i, v) in close.iter().enumerate() {
                since = if v.is_nan() { 0 } else { since + 1 };
                for weff in [1, 2, 7, 400, 401, 5_000] {
                    assert_eq!(prep.defined(i, weff), since >= weff, "bar {i}, weff {weff}");
                }
            }
        }
    }
}
