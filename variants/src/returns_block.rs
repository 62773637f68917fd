//! The fast reading of a run's bar returns: a cache-sized block at a time, each bar's loop state
//! found without a branch per change, with the bits of [`ComboRun::for_each_return`].

use crate::returns::{ComboRun, RunState};

/// The working memory of [`ComboRun::for_each_block`], reused from combo to combo: the block of
/// returns and what locates each bar's loop state without a branch.
#[derive(Clone, Debug, Default)]
pub struct ReturnScratch {
    block: Vec<f64>,
    /// Per bar of the block: 1 where a change happens, else 0.
    marks: Vec<u8>,
    /// The formula's `(side, entry, realized)` at the start, then after each change.
    states: Vec<[f64; 3]>,
}

impl ReturnScratch {
    /// Scratch for blocks of `bars` bars (at least 1).
    pub fn new(bars: usize) -> ReturnScratch {
        let bars = bars.max(1);
        ReturnScratch {
            block: vec![0.0; bars],
            marks: vec![0; bars],
            states: Vec::new(),
        }
    }
}

impl ComboRun<'_> {
    /// Hands the bar returns of bars [`Self::from`].. to `f` a block at a time,
    /// `f(first_bar, returns)`, in bar order, each block as long as `scratch` was made for (so
    /// that it stays in cache while `f` reads it): the bits of [`Self::for_each_return`].
    /// Returns the run's state after its last bar, from which a run over the next piece of the
    /// series resumes.
    ///
    /// Written without a branch per change, because changes come every few bars (a short-window
    /// combo reverses about every four bars on the default series) and a branch taken at each
    /// would be mispredicted at each: per block the changes are marked, and each bar finds its
    /// state by a running count of them. The costly operation is the division `close / entry`
    /// (the kernel's own, so the bits are its), and a scalar division issues at half the rate
    /// of a packed one; so the bars go two at a time (`returns`): both states, both equities
    /// in one packed division, both returns as differences of neighbouring equities. That
    /// reading takes every close as present; a missing one (NaN) makes its block's returns NaN,
    /// and such a block is done again bar by bar (`gapped`), the missing bar returning 0.0 and
    /// keeping the equity before it.
    pub fn for_each_block(
        &self,
        scratch: &mut ReturnScratch,
        mut f: impl FnMut(usize, &[f64]),
    ) -> RunState {
        let (close, changes) = (self.close, self.changes);
        let ReturnScratch {
            block,
            marks,
            states,
        } = scratch;
        states.clear();
        // While flat (before the first entry) the equity is the start's, which is 0.0 (the
        // state before any bar), so every return is 0.0: the slot `(0, 1, equity)` gives
        // `equity + 0 * (c / 1 - 1) * 100`, which is `equity` for every finite close (+0.0 when
        // it is 0.0), with no select per bar.
        debug_assert!(
            self.start.formula().is_some() || self.start.equity.to_bits() == 0,
            "flat runs start at equity +0.0"
        );
        states.push(
            self.start
                .formula()
                .unwrap_or([0.0, 1.0, self.start.equity]),
        );
        states.extend(changes.iter().map(|c| [c.pos as f64, c.entry, c.realized]));
        // `base`: the index in `states` of the state at the block's first bar.
        let (mut base, mut next) = (0usize, 0usize);
        let mut equity_before = self.start.equity;
        for start in (self.from..close.len()).step_by(block.len()) {
            let end = (start + block.len()).min(close.len());
            let len = end - start;
            let (closes, marks) = (&close[start..end], &mut marks[..len]);
            marks.fill(0);
            while next < changes.len() && changes[next].bar < end {
                marks[changes[next].bar - start] = 1;
                next += 1;
            }
            // The states this block reads: `base` up to the last change in it (`next`); the
            // marks count at most `next - base` changes, so every count indexes `here`.
            let here = &states[base..=next];
            let out = &mut block[..len];
            let (after, nan) = returns(here, closes, marks, out, equity_before);
            equity_before = if nan {
                gapped(here, closes, marks, out, equity_before)
            } else {
                after
            };
            base = next;
            f(start, out);
        }
        RunState {
            bt: *self.end,
            equity: equity_before,
        }
    }
}

/// A block's returns, every close taken as present: bar `t`'s state is `here[n]`, `n` the marks
/// up to and including `t`, its equity `realized + side * (c / entry - 1.0) * 100.0` (the
/// kernel's operations), its return that equity less the one before (`before` for the first
/// bar). Returns the last equity and whether any return is NaN (then some close was missing,
/// or an equity was NaN by itself; [`gapped`] settles which).
#[inline(always)]
fn returns(
    here: &[[f64; 3]],
    closes: &[f64],
    marks: &[u8],
    out: &mut [f64],
    mut before: f64,
) -> (f64, bool) {
    let (mut count, mut nan) = (0usize, false);
    let done = pairs(here, closes, marks, out, &mut count, &mut before, &mut nan);
    let rest = out[done..]
        .iter_mut()
        .zip(&closes[done..])
        .zip(&marks[done..]);
    for ((r, &c), &m) in rest {
        count += usize::from(m);
        let [side, entry, realized] = state(here, count);
        let equity = realized + side * (c / entry - 1.0) * 100.0;
        *r = equity - before;
        nan |= r.is_nan();
        before = equity;
    }
    (before, nan)
}

/// `here[n]`, unchecked: the indexed loads stay out of the way of the packed arithmetic.
#[inline(always)]
fn state(here: &[[f64; 3]], n: usize) -> [f64; 3] {
    debug_assert!(n < here.len());
    // SAFETY: `n` is a running count of a block's marks, at most its changes, and `here` holds
    // one state more than those (see `for_each_block`).
    *unsafe { here.get_unchecked(n) }
}

/// [`returns`] of the leading pairs of bars, in SSE2 (part of every x86-64): the two bars'
/// divisions in one instruction, each lane the scalar expression in its order. Returns how many
/// bars it did; `count`, `before` and `nan` carry on to the rest.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn pairs(
    here: &[[f64; 3]],
    closes: &[f64],
    marks: &[u8],
    out: &mut [f64],
    count: &mut usize,
    before: &mut f64,
    nan: &mut bool,
) -> usize {
    use std::arch::x86_64::{
        _mm_add_pd, _mm_cmpunord_pd, _mm_cvtsd_f64, _mm_div_pd, _mm_movemask_pd, _mm_mul_pd,
        _mm_or_pd, _mm_set_pd, _mm_set1_pd, _mm_setzero_pd, _mm_shuffle_pd, _mm_sub_pd,
        _mm_unpackhi_pd,
    };
    // SAFETY (every block below): SSE2 is in the x86-64 baseline, so these intrinsics, which
    // only compute on values, are available on every CPU this runs on.
    // `prev`: the last two equities, the one before the next pair in the high lane.
    let (mut prev, mut bad) = unsafe { (_mm_set1_pd(*before), _mm_setzero_pd()) };
    let bars = out
        .chunks_exact_mut(2)
        .zip(closes.chunks_exact(2))
        .zip(marks.chunks_exact(2));
    for ((r, c), m) in bars {
        *count += usize::from(m[0]);
        let [s0, n0, r0] = state(here, *count);
        *count += usize::from(m[1]);
        let [s1, n1, r1] = state(here, *count);
        let (lo, hi) = unsafe {
            let ratio = _mm_div_pd(_mm_set_pd(c[1], c[0]), _mm_set_pd(n1, n0));
            let moved = _mm_mul_pd(_mm_set_pd(s1, s0), _mm_sub_pd(ratio, _mm_set1_pd(1.0)));
            let equity = _mm_add_pd(_mm_set_pd(r1, r0), _mm_mul_pd(moved, _mm_set1_pd(100.0)));
            // (equity0 - prev.high, equity1 - equity0).
            let ret = _mm_sub_pd(equity, _mm_shuffle_pd::<0b01>(prev, equity));
            bad = _mm_or_pd(bad, _mm_cmpunord_pd(ret, ret));
            prev = equity;
            (_mm_cvtsd_f64(ret), _mm_cvtsd_f64(_mm_unpackhi_pd(ret, ret)))
        };
        r[0] = lo;
        r[1] = hi;
    }
    unsafe {
        *before = _mm_cvtsd_f64(_mm_unpackhi_pd(prev, prev));
        *nan |= _mm_movemask_pd(bad) != 0;
    }
    out.len() - out.len() % 2
}

/// [`returns`] elsewhere: no pairs; [`returns`] does every bar.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn pairs(
    _: &[[f64; 3]],
    _: &[f64],
    _: &[u8],
    _: &mut [f64],
    _: &mut usize,
    _: &mut f64,
    _: &mut bool,
) -> usize {
    0
}

/// A block's returns bar by bar, as [`ComboRun::for_each_return`] reads them: a missing close
/// returns 0.0 and keeps the equity before it. Returns the equity after the block.
#[cold]
fn gapped(
    here: &[[f64; 3]],
    closes: &[f64],
    marks: &[u8],
    out: &mut [f64],
    mut before: f64,
) -> f64 {
    let mut count = 0usize;
    for ((r, &c), &m) in out.iter_mut().zip(closes).zip(marks) {
        count += usize::from(m);
        let [side, entry, realized] = here[count];
        let equity = realized + side * (c / entry - 1.0) * 100.0;
        *r = if c.is_nan() { 0.0 } else { equity - before };
        before = if c.is_nan() { before } else { equity };
    }
    before
}
