//! The order in which a segment's shifted sums are added: in [`LANES`] interleaved lanes, then
//! the lanes in a fixed tree (docs/research.md, "How it is computed"). Every producer of fold
//! sums ([`ColumnSums`](crate::ColumnSums) column by column, [`FoldStatsBuilder`] row by row)
//! adds in this order, so they give the same bits; one running sum per segment would be one
//! serial chain of additions per bar, a lane per bar modulo [`LANES`] is that many chains side
//! by side, which the processor overlaps and the compiler packs into SIMD registers.
//!
//! [`FoldStatsBuilder`]: crate::FoldStatsBuilder

/// Lanes per segment: the bar at position `p` of its segment (from 0) is added to lane
/// `p % LANES`. Eight, so that eight independent additions cover the latency of one, and two
/// vectors of four (or four of two) hold a segment's lanes.
pub const LANES: usize = 8;

/// The lanes' sums added into one, in the tree `((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 +
/// l7))`: neighbours first.
#[inline]
pub(crate) fn combine(l: [f64; LANES]) -> f64 {
    ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

/// One segment's shifted sums in progress: per lane, `sum(x - shift)` and `sum((x - shift)^2)`
/// of its bars, each from 0.0 in the order the bars came.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Lanes {
    sum: [f64; LANES],
    sumsq: [f64; LANES],
}

impl Lanes {
    /// Adds `xs`, the bars at positions `at..` of the segment, about `shift`. Always inlined, so
    /// that a caller compiled for a wider instruction set (the fold sweep's returns pass) adds
    /// the lanes with it.
    #[inline(always)]
    pub(crate) fn add(&mut self, at: usize, xs: &[f64], shift: f64) {
        // Up to the next multiple of LANES one at a time; then whole rows of lanes, the loop
        // the compiler vectorises; then the rest.
        let head = ((LANES - at % LANES) % LANES).min(xs.len());
        let (head_xs, rest) = xs.split_at(head);
        for (i, &x) in head_xs.iter().enumerate() {
            self.add_one((at + i) % LANES, x - shift);
        }
        let (mut s, mut q) = (self.sum, self.sumsq);
        let mut rows = rest.chunks_exact(LANES);
        for row in &mut rows {
            for j in 0..LANES {
                let y = row[j] - shift;
                s[j] += y;
                q[j] += y * y;
            }
        }
        (self.sum, self.sumsq) = (s, q);
        for (j, &x) in rows.remainder().iter().enumerate() {
            self.add_one(j, x - shift);
        }
    }

    #[inline(always)]
    fn add_one(&mut self, lane: usize, y: f64) {
        self.sum[lane] += y;
        self.sumsq[lane] += y * y;
    }

    /// The segment's `(sum, sumsq)` so far: each lane set [`combine`]d.
    #[inline]
    pub(crate) fn totals(&self) -> (f64, f64) {
        (combine(self.sum), combine(self.sumsq))
    }
}
