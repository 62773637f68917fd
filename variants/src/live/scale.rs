//! `live`, the scale `M` of the bound: the largest |close| (NaN as 0) over a combo's reach, from
//! maxima per block of 64 bars, so a bar costs O(1) and a block's end O(blocks of the longest reach).

use std::collections::VecDeque;

/// Bars per block.
pub(super) const BLOCK: u64 = 64;

/// Block maxima of |close| over the last `n_older` completed blocks and the current one.
#[derive(Clone, Debug)]
pub(super) struct Scale {
    /// The current (partial) block's maximum.
    cur: f64,
    /// Completed blocks, newest first, at most `n_older`.
    blocks: VecDeque<f64>,
    /// `older[j]`: the maximum over the `j + 1` newest completed blocks (0 before the stream).
    older: Vec<f64>,
}

impl Scale {
    /// Keeps enough blocks for `n_older` completed blocks back (at least 1).
    pub(super) fn new(n_older: usize) -> Self {
        let n = n_older.max(1);
        Scale {
            cur: 0.0,
            blocks: VecDeque::with_capacity(n),
            older: vec![0.0; n],
        }
    }

    /// Blocks back a combo of reach `reach` bars needs: its reach, rounded up to whole blocks,
    /// plus the one the current bar's block may leave uncovered.
    pub(super) fn blocks_for(reach: usize) -> usize {
        reach.div_ceil(BLOCK as usize) + 1
    }

    /// Bar `i` with close `c` (NaN as 0).
    #[inline]
    pub(super) fn push(&mut self, i: u64, c: f64) {
        let a = if c.is_nan() { 0.0 } else { c.abs() };
        if i.is_multiple_of(BLOCK) {
            if i > 0 {
                self.complete();
            }
            self.cur = a;
        } else if a > self.cur {
            self.cur = a;
        }
    }

    #[cold]
    fn complete(&mut self) {
        if self.blocks.len() == self.older.len() {
            self.blocks.pop_back();
        }
        self.blocks.push_front(self.cur);
        let mut m = 0.0f64;
        for (j, o) in self.older.iter_mut().enumerate() {
            if let Some(&b) = self.blocks.get(j) {
                m = m.max(b);
            }
            *o = m;
        }
    }

    /// The largest |close| over the current block and the `n` (>= 1) completed ones before it:
    /// at least the largest over the last `(n - 1) * 64 + 1` bars.
    #[inline(always)]
    pub(super) fn max(&self, n: usize) -> f64 {
        let o = self.older[n.min(self.older.len()) - 1];
        if o > self.cur { o } else { self.cur }
    }
}
