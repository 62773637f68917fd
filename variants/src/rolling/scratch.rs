//! `rolling`'s per-worker working memory ([`Scratch`]) and the counts a sweep reports
//! ([`Stats`]): what every stage reads and writes, apart from the entry points that own them.

use super::layout::LANES;
use super::prepare::Prepared;
use super::rows::Rows;
use crate::prealloc;

/// Counts of one sweep: how much of it the bound certified.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bar-combos with a defined `d` (the reference's non-NaN bars).
    pub bars: u64,
    /// Of those, the ones the bound could not certify; each got the reference's own `d`.
    pub fallback_bars: u64,
    /// Bars recomputed with the reference's arithmetic (fallback bars, the gaps between nearby
    /// ones and the windows' lookback): the fallback's cost in bars.
    pub recomputed_bars: u64,
    /// Combos run whole on the SIMD pipeline (windows too long for the bound).
    pub direct_combos: u64,
    /// Combos whose every bar is NaN (a window longer than the series): no work at all.
    pub all_nan_combos: u64,
    /// Working memory the sweep held at its peak, in bytes: the prepared series shared by the
    /// workers plus each worker's scratch (the results themselves not included).
    pub memory_bytes: u64,
}

impl Stats {
    pub(super) fn add(&mut self, o: &Stats) {
        self.bars += o.bars;
        self.fallback_bars += o.fallback_bars;
        self.recomputed_bars += o.recomputed_bars;
        self.direct_combos += o.direct_combos;
        self.all_nan_combos += o.all_nan_combos;
        self.memory_bytes += o.memory_bytes;
    }

    /// Fraction of defined bars the bound certified (1 when there are none).
    pub fn certified_fraction(&self) -> f64 {
        if self.bars == 0 {
            1.0
        } else {
            1.0 - self.fallback_bars as f64 / self.bars as f64
        }
    }
}

/// Working memory of one worker: O(bars) up to a block ([`BLOCK_BARS`](super::BLOCK_BARS)),
/// whatever the windows (faer-style scratch); the fast path's own buffers are one tile long, so
/// they stay in cache.
#[derive(Debug, Default)]
pub struct Scratch {
    /// First-level differences `2a - b` and `3c - dd - e` of one tile and its lookback,
    /// transposed like `ct`.
    pub(super) d1: Rows,
    pub(super) d3: Rows,
    /// The reference's `d` of fallback stretches, in bar order, before its class goes into
    /// `signs`.
    pub(super) d: Vec<f64>,
    /// Fast `d` (or [`UNCERTIFIED`]) of one tile, transposed like `ct`.
    pub(super) dt: Rows,
    /// Per position (bar `k` of each lane), byte `l`: the class of lane `l`'s `d` ([`class`];
    /// the fast path writes 0 or 1, and NaN and fallback bars get theirs when their `d` is
    /// settled).
    pub(super) signs: Vec<u64>,
    /// Per lane, the positions whose bar may differ in class (NaN, `< 0`, `0`, `> 0`) from the
    /// bar before it: the only bars the event loop needs to see. `class_changes` returns how
    /// many of each lane's are this combo's; the rest are stale.
    pub(super) events: [Vec<usize>; LANES],
    /// The positions whose word of `signs` differs from the one before (`class_changes`).
    pub(super) changed: Vec<usize>,
    /// Per lane, the bars the bound left uncertified, in order, but for the reference's NaN
    /// bars (collected tile by tile from `dt`).
    pub(super) unsettled: [Vec<usize>; LANES],
    /// Positions of the uncertified bars, in order.
    pub(super) fallback: Vec<usize>,
    /// Buffers for the reference's arithmetic on fallback stretches.
    pub(super) reference: prealloc::Scratch,
}

impl Scratch {
    /// Bytes this holds (capacity, so growth during the sweep counts).
    pub(super) fn bytes(&self) -> usize {
        let f = std::mem::size_of::<f64>();
        let v = |c: usize| c * f;
        v(self.d1.capacity())
            + v(self.d3.capacity())
            + v(self.d.capacity())
            + v(self.dt.capacity())
            + v(self.signs.capacity())
            + self.events.iter().map(|e| v(e.capacity())).sum::<usize>()
            + v(self.changed.capacity())
            + self
                .unsettled
                .iter()
                .map(|e| v(e.capacity()))
                .sum::<usize>()
            + v(self.fallback.capacity())
            + v(self.reference.n_bars() * prealloc::BUFFERS)
    }

    /// Sizes the per-bar buffers for `prep` (the fast path sizes its tiles per combo).
    pub(super) fn fit(&mut self, prep: &Prepared<'_>) {
        self.signs.resize(prep.q, 0);
    }
}
