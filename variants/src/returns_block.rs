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
    /// The same states by field (sides, entries, realized), each padded with [`WIDE_PAD`]
    /// copies of the last: what the eight-bar path reads its windows of states from.
    fields: [Vec<f64>; 3],
    /// Whether to take eight bars at a time in AVX-512 (where the CPU has it).
    wide: bool,
}

/// States past the last that the eight-bar path's windows may read (and never select).
const WIDE_PAD: usize = 16;

impl ReturnScratch {
    /// Scratch for blocks of `bars` bars (at least 1), with the widest path the CPU runs.
    pub fn new(bars: usize) -> ReturnScratch {
        ReturnScratch::with_wide(bars, wide_available())
    }

    /// As [`Self::new`], with the portable path only (two bars at a time in SSE2 on x86-64, one
    /// elsewhere): tests compare it with the wide one.
    pub fn portable(bars: usize) -> ReturnScratch {
        ReturnScratch::with_wide(bars, false)
    }

    fn with_wide(bars: usize, wide: bool) -> ReturnScratch {
        let bars = bars.max(1);
        ReturnScratch {
            block: vec![0.0; bars],
            marks: vec![0; bars],
            states: Vec::new(),
            fields: Default::default(),
            wide,
        }
    }

    /// Whether this scratch takes the eight-bar AVX-512 path.
    pub fn is_wide(&self) -> bool {
        self.wide
    }
}

/// Whether this CPU runs the eight-bar path.
fn wide_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
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
    /// of a packed one; so the bars go eight at a time in AVX-512 where the CPU has it
    /// (`eights`), else two at a time in SSE2 (`pairs`): the states, the equities in one packed
    /// division, the returns as differences of neighbouring equities. That
    /// reading takes every close as present; a missing one (NaN) makes its block's returns NaN,
    /// and such a block is done again bar by bar (`gapped`), the missing bar returning 0.0 and
    /// keeping the equity before it.
    pub fn for_each_block(
        &self,
        scratch: &mut ReturnScratch,
        mut f: impl FnMut(usize, &[f64]),
    ) -> RunState {
        self.for_each_block_within(scratch, f64::INFINITY, |start, returns, _| {
            f(start, returns)
        })
    }

    /// As [`Self::for_each_block`], and says of each block whether every return in it is
    /// within `±limit` (NaN is not): `f(first_bar, returns, within)`. The check rides on the
    /// pass's own test for NaN, so a caller that must refuse returns out of range need not scan
    /// a block that is within.
    pub fn for_each_block_within(
        &self,
        scratch: &mut ReturnScratch,
        limit: f64,
        f: impl FnMut(usize, &[f64], bool),
    ) -> RunState {
        #[cfg(target_arch = "x86_64")]
        if scratch.wide {
            // SAFETY: a wide scratch is made only where the CPU has AVX-512F (`new`).
            return unsafe { x86::blocks_avx512(self, scratch, limit, f) };
        }
        self.blocks(scratch, limit, f)
    }

    /// [`Self::for_each_block_within`]'s loop, inlined into each tier's function so that `f`
    /// (folding a block's returns, as the fold sweep does) compiles at that tier too.
    #[inline(always)]
    fn blocks(
        &self,
        scratch: &mut ReturnScratch,
        limit: f64,
        mut f: impl FnMut(usize, &[f64], bool),
    ) -> RunState {
        let (close, changes) = (self.close, self.changes);
        let ReturnScratch {
            block,
            marks,
            states,
            fields,
            wide,
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
        if *wide {
            let last = *states.last().expect("the start's state");
            for (f, field) in fields.iter_mut().enumerate() {
                field.clear();
                field.extend(states.iter().map(|st| st[f]));
                field.extend(std::iter::repeat_n(last[f], WIDE_PAD));
            }
        }
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
            let wide = wide.then(|| fields.each_ref().map(|f| &f[base..]));
            let (after, beyond) = returns(here, wide, limit, closes, marks, out, equity_before);
            // `beyond`: some return is NaN (a missing close, which the bar-by-bar form
            // settles) or out of range (which it computes alike).
            let within = !beyond;
            equity_before = if beyond {
                gapped(here, closes, marks, out, equity_before)
            } else {
                after
            };
            let within = within || out.iter().all(|r| r.abs() <= limit);
            base = next;
            f(start, out, within);
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
    wide: Option<[&[f64]; 3]>,
    limit: f64,
    closes: &[f64],
    marks: &[u8],
    out: &mut [f64],
    mut before: f64,
) -> (f64, bool) {
    let (mut count, mut nan) = (0usize, false);
    let carry = Carry {
        count: &mut count,
        before: &mut before,
        beyond: &mut nan,
    };
    let done = match wide {
        Some(fields) => eights(fields, limit, closes, marks, out, carry),
        None => pairs(here, limit, closes, marks, out, carry),
    };
    let rest = out[done..]
        .iter_mut()
        .zip(&closes[done..])
        .zip(&marks[done..]);
    for ((r, &c), &m) in rest {
        count += usize::from(m);
        let [side, entry, realized] = state(here, count);
        let equity = realized + side * (c / entry - 1.0) * 100.0;
        *r = equity - before;
        nan |= r.is_nan() | (r.abs() > limit);
        before = equity;
    }
    (before, nan)
}

/// What a path hands on to the bars after it: the running count of marks, the last equity,
/// and whether any return so far was NaN or beyond the limit.
// Off x86-64 no packed path reads it: `returns` does every bar itself.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Carry<'a> {
    count: &'a mut usize,
    before: &'a mut f64,
    beyond: &'a mut bool,
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
/// bars it did; `carry` goes on to the rest.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn pairs(
    here: &[[f64; 3]],
    limit: f64,
    closes: &[f64],
    marks: &[u8],
    out: &mut [f64],
    carry: Carry<'_>,
) -> usize {
    use std::arch::x86_64::{
        _mm_add_pd, _mm_andnot_pd, _mm_cmpnle_pd, _mm_cvtsd_f64, _mm_div_pd, _mm_movemask_pd,
        _mm_mul_pd, _mm_or_pd, _mm_set_pd, _mm_set1_pd, _mm_setzero_pd, _mm_shuffle_pd, _mm_sub_pd,
        _mm_unpackhi_pd,
    };
    let Carry {
        count,
        before,
        beyond,
    } = carry;
    // SAFETY (every block below): SSE2 is in the x86-64 baseline, so these intrinsics, which
    // only compute on values, are available on every CPU this runs on.
    // `prev`: the last two equities, the one before the next pair in the high lane.
    let (mut prev, mut bad) = unsafe { (_mm_set1_pd(*before), _mm_setzero_pd()) };
    // |x| is x with the sign bit cleared; `!(|ret| <= limit)` is true for NaN too.
    let (sign, limit) = unsafe { (_mm_set1_pd(-0.0), _mm_set1_pd(limit)) };
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
            bad = _mm_or_pd(bad, _mm_cmpnle_pd(_mm_andnot_pd(sign, ret), limit));
            prev = equity;
            (_mm_cvtsd_f64(ret), _mm_cvtsd_f64(_mm_unpackhi_pd(ret, ret)))
        };
        r[0] = lo;
        r[1] = hi;
    }
    unsafe {
        *before = _mm_cvtsd_f64(_mm_unpackhi_pd(prev, prev));
        *beyond |= _mm_movemask_pd(bad) != 0;
    }
    out.len() - out.len() % 2
}

/// [`returns`] of the leading groups of eight bars, in AVX-512: each lane the scalar
/// expression in its order, so the bits are the same. `fields` are the block's states by field
/// from its first (`here` of [`returns`]), padded past the last. Returns how many bars it did;
/// `carry` goes on to the rest. Only for a scratch made wide, which [`ReturnScratch::new`]
/// does only where the CPU has AVX-512F.
#[inline(always)]
fn eights(
    fields: [&[f64]; 3],
    limit: f64,
    closes: &[f64],
    marks: &[u8],
    out: &mut [f64],
    carry: Carry<'_>,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: a wide scratch is made only where `is_x86_feature_detected!("avx512f")` said
        // so (`ReturnScratch::new`), and only a wide scratch passes `fields`.
        unsafe { x86::eights_avx512(fields, limit, closes, marks, out, carry) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (fields, limit, closes, marks, out, carry);
        unreachable!("no wide path off x86-64")
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Carry, ReturnScratch};
    use crate::returns::{ComboRun, RunState};

    /// [`ComboRun::for_each_block_within`] compiled for AVX-512F, `f` with it.
    #[target_feature(enable = "avx512f")]
    pub(super) fn blocks_avx512(
        run: &ComboRun<'_>,
        scratch: &mut ReturnScratch,
        limit: f64,
        f: impl FnMut(usize, &[f64], bool),
    ) -> RunState {
        run.blocks(scratch, limit, f)
    }
    use std::arch::x86_64::{
        __m512d, __m512i, _CMP_NLE_UQ, _mm_cvtsi64_si128, _mm512_abs_pd, _mm512_add_pd,
        _mm512_alignr_epi64, _mm512_castpd_si512, _mm512_castsi512_pd, _mm512_cmp_pd_mask,
        _mm512_cvtepu8_epi64, _mm512_div_pd, _mm512_loadu_pd, _mm512_mul_pd,
        _mm512_permutex2var_pd, _mm512_set1_pd, _mm512_storeu_pd, _mm512_sub_pd,
    };

    /// Eight bars a step. Each bar's state is `fields[.][count + n]`, `n` the marks up to and
    /// including it: the marks' eight bytes times `0x0101...01` hold those running counts (at
    /// most 8, so no byte carries into the next), and one two-register permute per field picks
    /// each lane's state from the sixteen from `count` on, where a gather would take a load per
    /// lane. The returns are the equities less the same equities moved up a lane, the lowest
    /// taking the last equity of the step before.
    #[target_feature(enable = "avx512f")]
    pub(super) fn eights_avx512(
        fields: [&[f64]; 3],
        limit: f64,
        closes: &[f64],
        marks: &[u8],
        out: &mut [f64],
        carry: Carry<'_>,
    ) -> usize {
        let Carry {
            count,
            before,
            beyond,
        } = carry;
        let n = out.len() - out.len() % 8;
        assert!(closes.len() >= n && marks.len() >= n);
        let (one, hundred) = (_mm512_set1_pd(1.0), _mm512_set1_pd(100.0));
        let limit = _mm512_set1_pd(limit);
        let mut prev = _mm512_set1_pd(*before);
        let mut bad = 0u8;
        let mut at = *count;
        for i in (0..n).step_by(8) {
            let m = u64::from_le_bytes(marks[i..i + 8].try_into().expect("eight bytes"));
            let running = m.wrapping_mul(0x0101_0101_0101_0101);
            let lane: __m512i = _mm512_cvtepu8_epi64(_mm_cvtsi64_si128(running as i64));
            // The sixteen states from `at` on: `at` grows by a block's marks at most, and the
            // padding past the last state covers the window (`for_each_block`).
            let pick = |f: &[f64]| -> __m512d {
                let w = &f[at..at + 16];
                // SAFETY: `w` holds sixteen f64.
                let (lo, hi) = unsafe {
                    (
                        _mm512_loadu_pd(w.as_ptr()),
                        _mm512_loadu_pd(w.as_ptr().add(8)),
                    )
                };
                _mm512_permutex2var_pd(lo, lane, hi)
            };
            let (side, entry, realized) = (pick(fields[0]), pick(fields[1]), pick(fields[2]));
            // SAFETY: `i + 8 <= n <= closes.len()`.
            let c = unsafe { _mm512_loadu_pd(closes.as_ptr().add(i)) };
            let moved = _mm512_mul_pd(side, _mm512_sub_pd(_mm512_div_pd(c, entry), one));
            let equity = _mm512_add_pd(realized, _mm512_mul_pd(moved, hundred));
            // (prev[7], equity[0], ..., equity[6]).
            let shifted = _mm512_castsi512_pd(_mm512_alignr_epi64::<7>(
                _mm512_castpd_si512(equity),
                _mm512_castpd_si512(prev),
            ));
            let ret = _mm512_sub_pd(equity, shifted);
            // `!(|ret| <= limit)`: true for NaN too.
            bad |= _mm512_cmp_pd_mask::<_CMP_NLE_UQ>(_mm512_abs_pd(ret), limit);
            // SAFETY: `i + 8 <= n <= out.len()`.
            unsafe { _mm512_storeu_pd(out.as_mut_ptr().add(i), ret) };
            prev = equity;
            at += (running >> 56) as usize;
        }
        if n > 0 {
            let mut last = [0.0; 8];
            // SAFETY: `last` holds eight f64.
            unsafe { _mm512_storeu_pd(last.as_mut_ptr(), prev) };
            *before = last[7];
        }
        *count = at;
        *beyond |= bad != 0;
        n
    }
}

/// [`returns`] elsewhere: no pairs; [`returns`] does every bar.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn pairs(_: &[[f64; 3]], _: f64, _: &[f64], _: &[u8], _: &mut [f64], _: Carry<'_>) -> usize {
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
