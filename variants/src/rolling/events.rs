//! `rolling`, the event loop: NaN bars masked, fallback bars settled, and the stop-and-reverse
//! loop run only at the bars where the class of `d` may change.

use super::certify::Plan;
use super::dispatch::fast_d_on;
use super::fallback::reference_d;
use super::layout::LANES;
use super::prepare::Prepared;
use super::scratch::{Scratch, Stats};
use super::timing::{Clock, Stage};
use crate::backtest::EventLoop;
use crate::prealloc;
use crate::simd::{Tier, WmaKernel};
use std::ops::Range;

/// The class of a `d`, as the event loop sees it: `> 0`, `< 0`, `== 0` or NaN. The fast path
/// writes the first two (a certified `d` is nonzero) as `u8::from(d < 0.0)`.
#[inline]
pub(super) fn class(d: f64) -> u8 {
    if d > 0.0 {
        0
    } else if d < 0.0 {
        1
    } else if d == 0.0 {
        2
    } else {
        3
    }
}

/// A `d` of each class (`[> 0, < 0, == 0, NaN]`). The event loop (`Backtest::step`) reads `d`
/// only through comparisons with `0.0` and `is_nan`, and keeps it only as `prev` for the next
/// such comparison, so a bar's class alone fixes every trade: stepping with this stand-in gives
/// the bits of stepping with the bar's `d`.
const STAND_IN: [f64; 4] = [1.0, -1.0, 0.0, f64::NAN];

/// Calls `f(i, pos)` for each bar `i` of `bars`, with `pos` its position in a transposed per-bar
/// buffer (the bytes of `signs`) of `q` bars per lane, walking the lanes instead of dividing per
/// bar.
#[inline]
pub(super) fn for_bars(bars: Range<usize>, q: usize, mut f: impl FnMut(usize, usize)) {
    if bars.is_empty() {
        return;
    }
    let (mut l, mut k) = (bars.start / q, bars.start % q);
    for i in bars {
        f(i, k * LANES + l);
        k += 1;
        if k == q {
            (l, k) = (l + 1, 0);
        }
    }
}

/// Per lane `l`, the positions `k >= 1` whose class byte `l` in `signs` differs from position
/// `k - 1`'s, in order: `events[l][..counts[l]]`, the counts returned. About one word in five
/// changes on the default sweep, at random, so a branch per word or per changed byte would
/// mispredict often. Instead: the changed words' positions in `words`, from a mask of which of
/// 64 words changed, built without branches, read off by its set bits; then each of them
/// written to every lane, kept in those whose byte differs by advancing that lane's count.
/// Both only grow: `words` to the longest `signs` seen (a block's positions at most), each lane
/// of `events` to the most changed words a call has had, not to the bars. Compiled per
/// instruction-set tier ([`class_changes_on`]):
/// the mask's comparisons pack into vectors.
#[inline(always)]
fn class_changes(
    signs: &[u64],
    words: &mut Vec<usize>,
    events: &mut [Vec<usize>; LANES],
) -> [usize; LANES] {
    let q = signs.len();
    words.clear();
    // Exact sizes, not doubled ones: a worker's scratch should hold a block's worth and no more.
    words.reserve_exact(q);
    let mut k0 = 1;
    while k0 < q {
        let (now, before) = (&signs[k0..q.min(k0 + 64)], &signs[k0 - 1..]);
        let mut changed = 0u64;
        for (j, (a, b)) in now.iter().zip(before).enumerate() {
            changed |= u64::from(a != b) << j;
        }
        while changed != 0 {
            words.push(k0 + changed.trailing_zeros() as usize);
            changed &= changed - 1;
        }
        k0 += 64;
    }
    let n = words.len();
    for lane in events.iter_mut() {
        if lane.len() < n {
            lane.reserve_exact(n - lane.len());
            lane.resize(n, 0);
        }
    }
    // Slices of one length: no growth, and no lengths to reload after each store.
    let mut lanes = events.each_mut().map(|lane| &mut lane[..n]);
    let mut counts = [0; LANES];
    for &k in words.iter() {
        let diff = signs[k] ^ signs[k - 1];
        for (l, (lane, count)) in lanes.iter_mut().zip(&mut counts).enumerate() {
            lane[*count] = k;
            *count += usize::from((diff >> (8 * l)) & 0xff != 0);
        }
    }
    counts
}

/// [`class_changes`] compiled for one instruction-set tier (the same lists on every tier).
fn class_changes_on(
    tier: Tier,
    signs: &[u64],
    words: &mut Vec<usize>,
    events: &mut [Vec<usize>; LANES],
) -> [usize; LANES] {
    match tier {
        #[cfg(target_arch = "x86_64")]
        Tier::Avx512 if std::is_x86_feature_detected!("avx512f") => {
            // SAFETY: the CPU has AVX-512F, checked on the line above.
            unsafe { x86::class_changes_avx512(signs, words, events) }
        }
        #[cfg(target_arch = "x86_64")]
        Tier::Avx2 if std::is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU has AVX2, checked on the line above.
            unsafe { x86::class_changes_avx2(signs, words, events) }
        }
        _ => class_changes(signs, words, events),
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{LANES, class_changes};

    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn class_changes_avx512(
        signs: &[u64],
        words: &mut Vec<usize>,
        events: &mut [Vec<usize>; LANES],
    ) -> [usize; LANES] {
        class_changes(signs, words, events)
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx,avx2")]
    pub(super) unsafe fn class_changes_avx2(
        signs: &[u64],
        words: &mut Vec<usize>,
        events: &mut [Vec<usize>; LANES],
    ) -> [usize; LANES] {
        class_changes(signs, words, events)
    }
}

/// One combo on the fast path, bit-identical to the reference: the event loop `bt` runs from
/// bar `from` (the bars before it are lookback, see [`SweepFn`](crate::SweepFn)); a tracking
/// `bt` keeps the metrics. `clock` times the fast path, the fallback and the event loop (the
/// lab's breakdown; every other caller passes the clock that does nothing).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_fast<L: EventLoop, C: Clock>(
    prep: &Prepared<'_>,
    plan: &Plan,
    fee_pct: f64,
    tier: Tier,
    kernel: WmaKernel,
    scratch: &mut Scratch,
    stats: &mut Stats,
    from: usize,
    bt: &mut L,
    clock: &mut C,
) {
    let t = clock.mark();
    fast_d_on(tier, prep, plan, scratch, None);
    clock.lap(Stage::Fast, t);
    let t = clock.mark();
    let close = prep.close;
    let (n, q, weff) = (close.len(), prep.q, plan.weff);
    let signs = &mut scratch.signs;
    let byte = |signs: &[u64], pos: usize| (signs[pos / LANES] >> (8 * (pos % LANES))) as u8;
    // Sets the class byte of the bar at `pos` (`k * LANES + lane`).
    let set = |signs: &mut [u64], pos: usize, c: u8| {
        let (word, byte) = (pos / LANES, 8 * (pos % LANES));
        signs[word] = signs[word] & !(0xff << byte) | u64::from(c) << byte;
    };
    // The reference's NaN bars: fewer than `weff` bars since a NaN (or the start).
    let mut masked = 0;
    let mut done = 0;
    let lead = std::iter::once((0, weff - 1));
    for (p, end) in lead.chain(prep.nans.iter().map(|&p| (p, p + weff))) {
        let end = end.min(n);
        for_bars(p.max(done)..end, q, |_, pos| {
            set(signs, pos, class(f64::NAN))
        });
        // Lookback bars (before `from`) are counted by the push that fed them.
        masked += end.saturating_sub(p.max(done).max(from));
        done = done.max(end);
    }
    stats.bars += (n - from - masked) as u64;
    clock.lap(Stage::Events, t);
    let t = clock.mark();
    // The bars the bound left uncertified, in bar order: lane `l` holds bars `l q .. (l + 1) q`,
    // each lane's in order. Lookback bars (before `from`) were settled by the push that fed them.
    scratch.fallback.clear();
    for lane in &scratch.unsettled {
        let at = lane.partition_point(|&i| i < from);
        scratch.fallback.extend_from_slice(&lane[at..]);
    }
    stats.fallback_bars += scratch.fallback.len() as u64;
    // Nearby fallback bars share one stretch: a stretch's lookback costs about as much as a gap
    // of one long window, so closer ones are cheaper together.
    let gap = plan.w1.max(plan.w2);
    // The fallback's buffers are sized on a worker's first fallback: certified data never
    // pays for them (six series' worth of memory to fault in and zero).
    if !scratch.fallback.is_empty() && scratch.d.len() < n {
        scratch.d.resize(n, 0.0);
        scratch.reference.reserve(n);
    }
    let mut k = 0;
    while k < scratch.fallback.len() {
        let start = scratch.fallback[k];
        let mut end = start + 1;
        k += 1;
        while k < scratch.fallback.len() && scratch.fallback[k] - end < gap {
            end = scratch.fallback[k] + 1;
            k += 1;
        }
        // Long stretches in tiles, so the buffers stay in cache.
        let mut t0 = start;
        while t0 < end {
            let t1 = (t0 + prealloc::TILE).min(end);
            reference_d(
                close,
                plan,
                kernel,
                &mut scratch.reference,
                t0..t1,
                // A worker's scratch outlives a block: it may be longer than this one.
                &mut scratch.d[..n],
            );
            for_bars(t0..t1, q, |i, pos| set(signs, pos, class(scratch.d[i])));
            t0 = t1;
        }
        stats.recomputed_bars += (end - start) as u64;
    }
    clock.lap(Stage::Fallback, t);
    let t = clock.mark();
    // Every bar now has a d of the reference's class, and a bar of the same class as the one
    // before it can neither open nor close a position (`sig` needs `prev <= 0 < d` or
    // `prev >= 0 > d`): the event loop runs only at the bars where the class may change.
    let counts = class_changes_on(tier, signs, &mut scratch.changed, &mut scratch.events);
    // The events' closes from the transposed series rather than from `close`: the fast path
    // has just read it, so more of it is in cache (events are a cache line or more apart). It
    // holds every close exactly but NaN, as 0.0; a NaN close is a NaN bar, whose close the
    // loop never reads, but the loop is still given the series' own value there.
    let rows = &prep.ct[prep.pad * LANES..];
    // The loop starts at bar `from`, always stepped (its class may differ from `bt`'s last).
    for (l, lane) in close.chunks(q).enumerate() {
        let Some(k0) = from
            .checked_sub(l * q)
            .map_or(Some(0), |k| (k < lane.len()).then_some(k))
        else {
            continue;
        };
        let d = |k: usize| STAND_IN[usize::from(byte(signs, k * LANES + l))];
        bt.step_at(l * q + k0, lane[k0], d(k0), fee_pct);
        // The last lane may end before `q`; the positions past the series are not bars.
        let events = &scratch.events[l][..counts[l]];
        let after = events.partition_point(|&k| k <= k0);
        for &k in events[after..].iter().take_while(|&&k| k < lane.len()) {
            let c = rows[k * LANES + l];
            let c = if c != 0.0 { c } else { lane[k] };
            bt.step_at(l * q + k, c, d(k), fee_pct);
        }
    }
    clock.lap(Stage::Events, t);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Each lane's changed positions, one byte at a time.
    fn naive(signs: &[u64]) -> [Vec<usize>; LANES] {
        let mut events: [Vec<usize>; LANES] = Default::default();
        for k in 1..signs.len() {
            for (l, lane) in events.iter_mut().enumerate() {
                if (signs[k] ^ signs[k - 1]) >> (8 * l) & 0xff != 0 {
                    lane.push(k);
                }
            }
        }
        events
    }

    proptest! {
        /// Sparse and dense changes, lengths on and off a multiple of 64, and lanes reused
        /// from a longer run before (stale entries past the counts), on every tier.
        #[test]
        fn class_changes_finds_every_change_in_order(
            runs in prop::collection::vec((0u8..4, 1usize..40, any::<u64>()), 0..60),
            stale in prop::collection::vec(any::<u64>(), 0..300),
        ) {
            // Words held for a run, then changed in the bytes the mask picks.
            let mut signs = Vec::new();
            let mut word = 0u64;
            for (class, len, mask) in runs {
                word ^= mask & (0x0101_0101_0101_0101 * u64::from(class));
                signs.extend(std::iter::repeat_n(word, len));
            }
            let want = naive(&signs);
            for tier in Tier::available() {
                let mut events: [Vec<usize>; LANES] = Default::default();
                let mut words = Vec::new();
                class_changes_on(tier, &stale, &mut words, &mut events);
                let counts = class_changes_on(tier, &signs, &mut words, &mut events);
                for l in 0..LANES {
                    let got = &events[l][..counts[l]];
                    prop_assert_eq!(got, &want[l][..], "{} lane {}", tier.name(), l);
                }
            }
        }
    }
}
