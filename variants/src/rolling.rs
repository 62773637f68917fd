//! `rolling`: the exact O(1)-per-bar variant. Every WMA is a rolling recurrence, with a proven
//! bound on how far its `d = hma - hma3` can be from the reference's; bars the bound cannot
//! certify are recomputed with the reference's arithmetic, so every trade is the reference's.
//!
//! The derivation of the bound, with every constant, is in `rolling.md` beside this file (and
//! below, as this module's documentation).
//!
//! # Layout
//! The fast path runs 8 contiguous stretches of the series side by side, one per SIMD lane: the
//! close series is stored transposed once per sweep (`ct[loc * 8 + lane]`), so a window's oldest
//! and newest values are plain vector loads for all 8 stretches at once, and the recurrence's
//! loop-carried additions (one per WMA per bar) are spread over 8 independent lanes. Each lane
//! restarts its recurrences every few window lengths, which bounds the rounding they carry.
#![doc = include_str!("rolling.md")]

use crate::Threads;
use crate::prealloc::{self, Backtest};
use crate::simd::{Tier, WmaKernel};
use hullsweep_kernel::{
    Combo, KernelError, SweepResult, ValidClose, validate_params_and_fee, window,
};
use std::ops::Range;

/// Stretches of the series computed side by side (one per lane of an AVX-512 vector; AVX2,
/// SSE2 and NEON run the same code as 2 or 4 vectors).
pub const LANES: usize = 8;
type V = [f64; LANES];

/// Local positions per block of the per-lane maximum |close| used to scale the bound.
const MAX_BLOCK: usize = 64;

/// The largest bound coefficient (bound / max |close|) the fast path accepts: above it, the
/// first-order derivation's neglected terms would no longer be negligible (see `rolling.md`),
/// and the combo runs on the SIMD pipeline instead. Only windows of about a million bars reach it.
const BETA_MAX: f64 = 1.0 / (1u64 << 20) as f64;

/// Relative allowance for the second-order terms the derivation drops and for rounding in the
/// evaluation of the bound itself (see `rolling.md`, "Second-order terms").
const SLACK: f64 = 1.0 + 1.0 / 1024.0;

/// Marks a bar the bound could not certify (no fast `d` is infinite: every input is finite).
const UNCERTIFIED: f64 = f64::INFINITY;

/// Per-sweep inputs shared read-only by every combo and worker.
#[derive(Debug)]
pub struct Prepared<'a> {
    close: &'a [f64],
    /// Bars per lane.
    q: usize,
    /// Positions before each lane's first bar that hold its lookback.
    pad: usize,
    /// Transposed close, NaN (and anything outside the series) as 0:
    /// `ct[loc * LANES + l] = close[l * q + loc - pad]`.
    ct: Vec<f64>,
    /// Per lane, per block of [`MAX_BLOCK`] positions: the largest |value| in `ct`.
    block_max: Vec<V>,
    /// Bars since the last NaN at or before each bar, counting a virtual NaN at bar -1
    /// (so a bar is NaN in a result of effective window `W` iff `since_nan[i] < W`).
    since_nan: Vec<u32>,
    /// The NaN bars, in order.
    nans: Vec<usize>,
}

impl<'a> Prepared<'a> {
    /// Prepares `close` for every combo of `plans` (the padding is the longest lookback).
    fn new(close: &'a [f64], plans: &[Option<Plan>]) -> Self {
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
    fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&self.ct[..])
            + size_of_val(&self.block_max[..])
            + size_of_val(&self.since_nan[..])
            + size_of_val(&self.nans[..])
    }

    /// Largest |close| over positions `loc` of every lane (clamped to the buffer).
    fn max_abs(&self, loc: Range<usize>) -> V {
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

/// How one combo runs on the fast path: its windows, the restart period and the bound.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    h: usize,
    n: usize,
    s: usize,
    m: usize,
    h3: usize,
    t: usize,
    /// Longest first-level window (over close).
    w1: usize,
    /// Longest second-level window (`s`, `m`).
    w2: usize,
    /// Bars from the first bar a result can be defined to the first that is: a bar is NaN in
    /// the reference iff fewer than `weff` bars since the last NaN (or the start).
    weff: usize,
    /// Each recurrence restarts from a direct sum every `period` positions.
    period: usize,
    /// Bound on |d_fast - d_ref| divided by the largest |close| the bar's computation touched.
    beta: f64,
}

/// What a combo needs: nothing (all NaN), the fast path, or the SIMD pipeline.
enum Route {
    AllNan,
    Fast(Plan),
    Direct,
}

impl Plan {
    /// The route for `combo` on a series of `n_bars`.
    fn route(combo: &Combo, n_bars: usize) -> Route {
        let [n, h, s, m, h3, t] = combo.map(window);
        let w1 = n.max(h).max(t).max(h3).max(m);
        let w2 = s.max(m);
        let weff = (n.max(h).saturating_add(s) - 1).max(t.max(h3).max(m).saturating_add(m) - 1);
        if weff > n_bars {
            return Route::AllNan;
        }
        let period = (4 * w1).max(64);
        let beta = bound_coefficient(h, n, s, m, h3, t, period);
        if beta.is_finite() && beta <= BETA_MAX {
            Route::Fast(Plan {
                h,
                n,
                s,
                m,
                h3,
                t,
                w1,
                w2,
                weff,
                period,
                beta,
            })
        } else {
            Route::Direct
        }
    }

    /// The bound coefficient: `|d_fast - d_ref| <= beta * M` at every bar whose computation
    /// touched no |close| above `M`.
    pub fn beta(&self) -> f64 {
        self.beta
    }
}

/// Unit roundoff of f64.
const U: f64 = f64::EPSILON / 2.0;

/// `gamma(k) = k u / (1 - k u)`, the standard bound for `k` roundings (Higham, 3.1).
fn gamma(k: usize) -> f64 {
    let ku = k as f64 * U;
    ku / (1.0 - ku)
}

/// Error of the reference's WMA of window `w`, per unit of max |input| (`rolling.md`, (1)).
fn ref_wma_err(w: usize) -> f64 {
    gamma(w + 1)
}

/// Error of the rolling WMA of window `w` at most `k` steps after a restart, per unit of max
/// |input| (`rolling.md`, (2)).
fn fast_wma_err(w: usize, k: usize) -> f64 {
    let (wf, kf) = (w as f64, k as f64);
    let d = wf * (wf + 1.0) / 2.0;
    gamma(w)
        + kf * gamma(w.saturating_sub(1)) * wf / d
        + U * (wf + 2.0) * kf * (kf - 1.0).max(0.0) / 2.0 / d
        + kf * U * (3.0 * wf + d) / d
        + gamma(2)
}

/// `|d_fast - d_ref| / M`: the fast path's distance from the exact `d` plus the reference's
/// (`rolling.md`, (3) and (4)), with the slack for second-order terms.
fn bound_coefficient(h: usize, n: usize, s: usize, m: usize, h3: usize, t: usize, k: usize) -> f64 {
    let (fast, reference) = bound_split(h, n, s, m, h3, t, k);
    (fast + reference) * SLACK
}

/// The fast path's and the reference's distance from the exact `d`, per unit of max |close|.
fn bound_split(
    h: usize,
    n: usize,
    s: usize,
    m: usize,
    h3: usize,
    t: usize,
    k: usize,
) -> (f64, f64) {
    // Both pipelines have the same shape; only the WMA error differs.
    let pipeline = |e: &dyn Fn(usize) -> f64| {
        let e1 = 2.0 * e(h) + e(n) + 3.0 * U;
        let e3 = 3.0 * e(t) + e(h3) + e(m) + 12.0 * U;
        (3.0 * e(s) + e1) + (5.0 * e(m) + e3)
    };
    (pipeline(&|w| fast_wma_err(w, k)), pipeline(&ref_wma_err))
}

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
    fn add(&mut self, o: &Stats) {
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

/// Working memory of one worker: O(bars), whatever the windows (faer-style scratch).
#[derive(Debug, Default)]
pub struct Scratch {
    /// First-level differences `2a - b` and `3c - dd - e`, transposed like `ct`.
    d1: Vec<f64>,
    d3: Vec<f64>,
    /// Fast `d` (or [`UNCERTIFIED`]), transposed, one per bar of each lane.
    dt: Vec<f64>,
    /// The reference's `d` of fallback stretches, in bar order, before it goes into `dt`.
    d: Vec<f64>,
    /// Per position of `dt`, byte `l`: the class of lane `l`'s `d` ([`class`]; the fast path
    /// writes 0 or 1, and NaN and fallback bars get theirs when their `d` is settled).
    signs: Vec<u64>,
    /// Per lane, the positions whose bar may differ in class (NaN, `< 0`, `0`, `> 0`) from the
    /// bar before it: the only bars the event loop needs to see.
    events: [Vec<usize>; LANES],
    /// Ranges of `dt` positions that hold an [`UNCERTIFIED`] bar.
    uncertain: Vec<Range<usize>>,
    /// Positions of the uncertified bars, in order.
    fallback: Vec<usize>,
    /// Buffers for the reference's arithmetic on fallback stretches.
    reference: prealloc::Scratch,
}

impl Scratch {
    /// Bytes this holds (capacity, so growth during the sweep counts).
    fn bytes(&self) -> usize {
        let f = std::mem::size_of::<f64>();
        let v = |c: usize| c * f;
        v(self.d1.capacity())
            + v(self.d3.capacity())
            + v(self.dt.capacity())
            + v(self.d.capacity())
            + v(self.signs.capacity())
            + self.events.iter().map(|e| v(e.capacity())).sum::<usize>()
            + self.uncertain.capacity() * std::mem::size_of::<Range<usize>>()
            + v(self.fallback.capacity())
            + v(self.reference.n_bars() * prealloc::BUFFERS)
    }

    fn fit(&mut self, prep: &Prepared<'_>) {
        let len = (prep.pad + prep.q) * LANES;
        self.d1.resize(len, 0.0);
        self.d3.resize(len, 0.0);
        self.dt.resize(prep.q * LANES, 0.0);
        self.signs.resize(prep.q, 0);
    }
}

/// Loads the 8 lanes at position `loc` of a transposed buffer.
///
/// # Safety
/// `(loc + 1) * LANES <= x.len()`; every pass asserts it for its highest position on entry.
#[inline(always)]
unsafe fn load(x: &[f64], loc: usize) -> V {
    debug_assert!((loc + 1) * LANES <= x.len());
    // SAFETY: in bounds by the caller's contract; `[f64; 8]` has no alignment beyond f64's.
    unsafe { x.as_ptr().add(loc * LANES).cast::<V>().read() }
}

/// Stores the 8 lanes at position `loc`.
///
/// # Safety
/// As [`load`].
#[inline(always)]
unsafe fn store(x: &mut [f64], loc: usize, v: V) {
    debug_assert!((loc + 1) * LANES <= x.len());
    // SAFETY: in bounds by the caller's contract.
    unsafe { x.as_mut_ptr().add(loc * LANES).cast::<V>().write(v) }
}

/// One rolling WMA over 8 lanes: `s` is the window sum, `t` the weighted sum (weights 1..=w).
#[derive(Clone, Copy)]
struct Roll {
    s: V,
    t: V,
}

impl Roll {
    /// The direct sums for the window ending at `loc`, oldest first (`rolling.md`, restart).
    ///
    /// # Safety
    /// `w <= loc + 1` and position `loc` inside `x` (see [`load`]).
    #[inline(always)]
    unsafe fn restart(x: &[f64], w: usize, loc: usize) -> Roll {
        let mut r = Roll {
            s: [0.0; LANES],
            t: [0.0; LANES],
        };
        let mut wk = 1.0;
        for k in loc + 1 - w..=loc {
            // SAFETY: k <= loc, inside x by the contract.
            let v = unsafe { load(x, k) };
            for ((s, t), &v) in r.s.iter_mut().zip(&mut r.t).zip(&v) {
                *s += v;
                *t += v * wk;
            }
            wk += 1.0;
        }
        r
    }

    /// Moves the window one position on: `new` enters, `old` (w positions back) leaves.
    #[inline(always)]
    fn step(&mut self, wf: f64, new: V, old: V) {
        for l in 0..LANES {
            // The weighted sum uses the window sum before it moves: T' = T + (w x_new - S).
            let q = wf * new[l] - self.s[l];
            self.t[l] += q;
            self.s[l] += new[l] - old[l];
        }
    }

    #[inline(always)]
    fn value(&self, inv_d: f64) -> V {
        std::array::from_fn(|l| self.t[l] * inv_d)
    }
}

/// `1 / (w (w + 1) / 2)`, the WMA's normalisation as one multiply.
fn inv_denom(w: usize) -> f64 {
    let w = w as f64;
    1.0 / (w * (w + 1.0) / 2.0)
}

/// First level over positions `from..to`: the five WMAs of close (three on grids where
/// `hma3_half == hma_half` and `hma3_m == hma_n`), combined into `d1 = 2a - b` and
/// `d3 = 3c - dd - e`, restarting every `period` positions.
#[inline(always)]
fn level1<const NW: usize>(
    ct: &[f64],
    ws: [usize; NW],
    range: Range<usize>,
    period: usize,
    d1: &mut [f64],
    d3: &mut [f64],
) {
    let len = range.end * LANES;
    assert!(
        ct.len() >= len && d1.len() >= len && d3.len() >= len,
        "buffers cover the positions"
    );
    assert!(
        ws.iter().all(|&w| w >= 1 && w <= range.start),
        "windows start inside ct"
    );
    let wf: [f64; NW] = ws.map(|w| w as f64);
    let inv: [f64; NW] = ws.map(inv_denom);
    let mut start = range.start;
    while start < range.end {
        let end = (start + period).min(range.end);
        // SAFETY (this block and the loop): every position read is in
        // `start + 1 - w ..= loc` with `w <= range.start <= start`, and `loc < range.end`, which
        // the asserts above keep inside every buffer.
        let mut r: [Roll; NW] = std::array::from_fn(|j| unsafe { Roll::restart(ct, ws[j], start) });
        unsafe { emit1(&r, &inv, start, d1, d3) };
        for loc in start + 1..end {
            let new = unsafe { load(ct, loc) };
            for j in 0..NW {
                r[j].step(wf[j], new, unsafe { load(ct, loc - ws[j]) });
            }
            unsafe { emit1(&r, &inv, loc, d1, d3) };
        }
        start = end;
    }
}

/// The first level's outputs at `loc`: `d1 = 2a - b`, `d3 = 3c - dd - e` with the roles
/// `[h, n, t]` and, with five windows, `[.., h3, m]` (with three, `h3 = h` and `m = n`).
///
/// # Safety
/// Position `loc` inside `d1` and `d3` (see [`load`]).
#[inline(always)]
unsafe fn emit1<const NW: usize>(
    r: &[Roll; NW],
    inv: &[f64; NW],
    loc: usize,
    d1: &mut [f64],
    d3: &mut [f64],
) {
    let (ih3, im) = if NW == 5 { (3, 4) } else { (0, 1) };
    let y: [V; NW] = std::array::from_fn(|j| r[j].value(inv[j]));
    // SAFETY: by the contract.
    unsafe {
        store(d1, loc, std::array::from_fn(|l| 2.0 * y[0][l] - y[1][l]));
        store(
            d3,
            loc,
            std::array::from_fn(|l| 3.0 * y[2][l] - y[ih3][l] - y[im][l]),
        );
    }
}

/// Second level over positions `range`: `hma = wma(d1, s)`, `hma3 = wma(d3, m)` and
/// `d = hma - hma3`, written to `dt` (position `loc` at `loc - range.start`) where `|d|` clears
/// the bound `beta * M`, [`UNCERTIFIED`] elsewhere.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn level2(
    prep: &Prepared<'_>,
    plan: &Plan,
    d1: &[f64],
    d3: &[f64],
    range: Range<usize>,
    dt: &mut [f64],
    signs: &mut [u64],
    uncertain: &mut Vec<Range<usize>>,
) {
    let (s, m, period) = (plan.s, plan.m, plan.period);
    let len = range.end * LANES;
    assert!(
        d1.len() >= len && d3.len() >= len,
        "buffers cover the positions"
    );
    assert!(
        dt.len() >= (range.end - range.start) * LANES,
        "dt covers the bars"
    );
    assert!(
        signs.len() >= range.end - range.start,
        "a sign word per position"
    );
    uncertain.clear();
    assert!(
        s <= range.start && m <= range.start,
        "windows start inside d1, d3"
    );
    let (sf, mf) = (s as f64, m as f64);
    let (inv_s, inv_m) = (inv_denom(s), inv_denom(m));
    // How far back a bar's computation reaches: its second-level window and steps since the
    // restart, then the first level's window and steps for the oldest of those inputs.
    let reach = 2 * period + plan.w1 + plan.w2;
    let from = range.start;
    let mut start = from;
    while start < range.end {
        let end = (start + period).min(range.end);
        let big = prep.max_abs(start.saturating_sub(reach)..end);
        let thr: V = std::array::from_fn(|l| plan.beta * big[l]);
        // SAFETY (this block and the loop): positions read are in `start + 1 - w ..= loc` with
        // `w <= range.start <= start` and `loc < range.end`; `loc - from < range.len()`: all
        // inside the buffers by the asserts above.
        let mut hs = unsafe { Roll::restart(d1, s, start) };
        let mut h3 = unsafe { Roll::restart(d3, m, start) };
        let mut margin = [f64::INFINITY; LANES];
        let mut out = Out {
            thr: &thr,
            dt,
            signs,
            margin: &mut margin,
        };
        unsafe { out.emit(&hs, &h3, inv_s, inv_m, start - from) };
        for loc in start + 1..end {
            unsafe {
                hs.step(sf, load(d1, loc), load(d1, loc - s));
                h3.step(mf, load(d3, loc), load(d3, loc - m));
                out.emit(&hs, &h3, inv_s, inv_m, loc - from);
            }
        }
        if margin.iter().any(|&m| m <= 0.0) {
            uncertain.push(start - from..end - from);
        }
        start = end;
    }
}

/// Where the second level writes, with what it tracks across positions.
struct Out<'a> {
    thr: &'a V,
    dt: &'a mut [f64],
    signs: &'a mut [u64],
    /// Each lane's smallest `|d| - thr` so far (`<= 0` once a bar was not certified; the
    /// difference of two floats has the sign of the exact difference, so the test is exact).
    margin: &'a mut V,
}

impl Out<'_> {
    /// `d = hma - hma3` at position `at` of `dt`, or [`UNCERTIFIED`] where `|d| <= thr`, and
    /// the lanes' signs of `d` in `signs[at]`.
    ///
    /// A certified `d` is nonzero, so two certified bars of the same sign have the same class;
    /// every other bar gets its class written later, when its `d` is settled.
    ///
    /// # Safety
    /// Position `at` inside `dt` (see [`load`]) and `at < signs.len()`.
    #[inline(always)]
    unsafe fn emit(&mut self, hs: &Roll, h3: &Roll, inv_s: f64, inv_m: f64, at: usize) {
        let hma = hs.value(inv_s);
        let hma3 = h3.value(inv_m);
        let d: V = std::array::from_fn(|l| hma[l] - hma3[l]);
        let margin: V = std::array::from_fn(|l| d[l].abs() - self.thr[l]);
        for (low, &m) in self.margin.iter_mut().zip(&margin) {
            if m < *low {
                *low = m;
            }
        }
        let v: V = std::array::from_fn(|l| if margin[l] > 0.0 { d[l] } else { UNCERTIFIED });
        let neg: [u8; LANES] = std::array::from_fn(|l| u8::from(d[l] < 0.0));
        // SAFETY: by the contract.
        unsafe {
            store(self.dt, at, v);
            *self.signs.get_unchecked_mut(at) = u64::from_ne_bytes(neg);
        }
    }
}

/// The fast path for one combo: `dt` gets every lane's fast `d` or [`UNCERTIFIED`].
#[inline(always)]
fn fast_d(prep: &Prepared<'_>, plan: &Plan, scratch: &mut Scratch) {
    let p = plan;
    // The first level starts where the second level's first window reaches back to.
    let (from1, from2, to) = (prep.pad - p.w2, prep.pad, prep.pad + prep.q);
    let (d1, d3) = (&mut scratch.d1, &mut scratch.d3);
    if p.h3 == p.h && p.m == p.n {
        level1::<3>(&prep.ct, [p.h, p.n, p.t], from1..to, p.period, d1, d3);
    } else {
        let ws = [p.h, p.n, p.t, p.h3, p.m];
        level1::<5>(&prep.ct, ws, from1..to, p.period, d1, d3);
    }
    level2(
        prep,
        p,
        &scratch.d1,
        &scratch.d3,
        from2..to,
        &mut scratch.dt,
        &mut scratch.signs,
        &mut scratch.uncertain,
    );
}

/// [`fast_d`] compiled for one instruction-set tier (the arithmetic is lane-wise, so every tier
/// gives the same bits; wider vectors only run more lanes per instruction).
fn fast_d_on(tier: Tier, prep: &Prepared<'_>, plan: &Plan, scratch: &mut Scratch) {
    match tier {
        #[cfg(target_arch = "x86_64")]
        Tier::Avx512 if std::is_x86_feature_detected!("avx512f") => {
            // SAFETY: the CPU has AVX-512F, checked on the line above.
            unsafe { x86::fast_d_avx512(prep, plan, scratch) }
        }
        #[cfg(target_arch = "x86_64")]
        Tier::Avx2 if std::is_x86_feature_detected!("avx2") => {
            // SAFETY: the CPU has AVX2, checked on the line above.
            unsafe { x86::fast_d_avx2(prep, plan, scratch) }
        }
        _ => fast_d(prep, plan, scratch),
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Plan, Prepared, Scratch, fast_d};

    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn fast_d_avx512(prep: &Prepared<'_>, plan: &Plan, scratch: &mut Scratch) {
        fast_d(prep, plan, scratch)
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx,avx2")]
    pub(super) unsafe fn fast_d_avx2(prep: &Prepared<'_>, plan: &Plan, scratch: &mut Scratch) {
        fast_d(prep, plan, scratch)
    }
}

/// The reference's `d` at bars `range`, with its own arithmetic (through the bit-identical SIMD
/// WMA `kernel`, and [`wma_flat_aware`] on flat runs), into `d[range]`.
///
/// Passes the combo repeats (`hma3_half == hma_half`, `hma3_m == hma_n`) run once, as in
/// `prealloc`: the same pass on the same input gives the same bits.
fn reference_d(
    close: &[f64],
    plan: &Plan,
    kernel: WmaKernel,
    buf: &mut prealloc::Scratch,
    range: Range<usize>,
    d: &mut [f64],
) {
    let n_bars = close.len();
    let [a, b, c, dd, e] = buf.split_bars(n_bars);
    let p = plan;
    // Both differences over the longer of their lookbacks, so shared passes serve both.
    let r = range.start.saturating_sub(p.s.max(p.m) - 1)..range.end;
    let wma = |x: &[f64], w: usize, out: &mut [f64], r: Range<usize>| {
        wma_flat_aware(kernel, x, w, out, r)
    };
    wma(close, p.h, a, r.clone());
    wma(close, p.n, b, r.clone());
    wma(close, p.t, c, r.clone());
    let dd: &[f64] = if p.h3 == p.h {
        a
    } else {
        wma(close, p.h3, dd, r.clone());
        dd
    };
    let e: &[f64] = if p.m == p.n {
        b
    } else {
        wma(close, p.m, e, r.clone());
        e
    };
    for ((c, &dd), &e) in c[r.clone()]
        .iter_mut()
        .zip(&dd[r.clone()])
        .zip(&e[r.clone()])
    {
        *c = 3.0 * *c - dd - e;
    }
    for (a, &b) in a[r.clone()].iter_mut().zip(&b[r]) {
        *a = 2.0 * *a - b;
    }
    // `b` is free once the differences are taken: it holds hma, and `d` holds hma3 first.
    wma(a, p.s, b, range.clone());
    wma(c, p.m, d, range.clone());
    for (d, &hma) in d[range.clone()].iter_mut().zip(&b[range]) {
        *d = hma - *d;
    }
}

/// `kernel.wma_range(x, w, out, range)`, bit for bit, with outputs whose whole window holds one
/// value computed once per run: the reference's sum over a constant window is a function of the
/// value and the window alone, so a flat run costs O(1) per bar instead of O(w). Flat runs are
/// where the bound certifies nothing (`d` is zero or a few ulps from it), so this is what keeps
/// the fallback cheap on them.
fn wma_flat_aware(kernel: WmaKernel, x: &[f64], w: usize, out: &mut [f64], range: Range<usize>) {
    /// Flat windows shorter than this go through the kernel: the scan would not pay.
    const MIN_RUN: usize = 16;
    assert!(range.end <= x.len() && out.len() == x.len() && w >= 1);
    if range.is_empty() {
        return;
    }
    // `run` is the length of the run of bit-identical values ending at `i`.
    let same = |i: usize| x[i].to_bits() == x[i - 1].to_bits();
    let from = range.start.saturating_sub(w - 1);
    let mut run = 0usize;
    for i in from..range.start {
        run = if i > from && same(i) { run + 1 } else { 1 };
    }
    let denom = (w * (w + 1) / 2) as f64;
    let mut cached: Option<(u64, f64)> = None;
    let mut pending = range.start; // first output not yet written
    let mut i = range.start;
    while i < range.end {
        run = if i > from && same(i) { run + 1 } else { 1 };
        if run >= w && w >= MIN_RUN {
            // Outputs `i..j` all have a constant window of `x[i]`.
            let v = x[i];
            let mut j = i + 1;
            while j < range.end && x[j].to_bits() == v.to_bits() {
                j += 1;
            }
            kernel.wma_range(x, w, out, pending..i);
            let value = match cached {
                Some((bits, value)) if bits == v.to_bits() => value,
                _ => {
                    // The reference's loop, once: one multiply then one add per element.
                    let mut s = 0.0;
                    let mut wk = 1.0;
                    for _ in 0..w {
                        s += v * wk;
                        wk += 1.0;
                    }
                    s / denom
                }
            };
            cached = Some((v.to_bits(), value));
            out[i..j].fill(value);
            run += j - 1 - i;
            pending = j;
            i = j;
        } else {
            i += 1;
        }
    }
    kernel.wma_range(x, w, out, pending..range.end);
}

/// The class of a `d`, as the event loop sees it: `> 0`, `< 0`, `== 0` or NaN. The fast path
/// writes the first two (a certified `d` is nonzero) as `u8::from(d < 0.0)`.
#[inline]
fn class(d: f64) -> u8 {
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

/// Calls `f(i, pos)` for each bar `i` of `bars`, with `pos` its position in a transposed per-bar
/// buffer (`dt`) of `q` bars per lane, walking the lanes instead of dividing per bar.
#[inline]
fn for_bars(bars: Range<usize>, q: usize, mut f: impl FnMut(usize, usize)) {
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

/// One combo on the fast path, bit-identical to the reference: the event loop `bt` runs from
/// bar `from` (the bars before it are lookback, see [`SweepFn`](crate::SweepFn)).
#[allow(clippy::too_many_arguments)]
fn run_fast(
    prep: &Prepared<'_>,
    plan: &Plan,
    fee_pct: f64,
    tier: Tier,
    kernel: WmaKernel,
    scratch: &mut Scratch,
    stats: &mut Stats,
    from: usize,
    bt: &mut Backtest,
) {
    fast_d_on(tier, prep, plan, scratch);
    let close = prep.close;
    let (n, q, weff) = (close.len(), prep.q, plan.weff);
    let (dt, signs) = (&mut scratch.dt, &mut scratch.signs);
    // Sets the class byte of the bar at `pos` of `dt`.
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
            dt[pos] = f64::NAN;
            set(signs, pos, class(f64::NAN));
        });
        // Lookback bars (before `from`) are counted by the push that fed them.
        masked += end.saturating_sub(p.max(done).max(from));
        done = done.max(end);
    }
    stats.bars += (n - from - masked) as u64;
    // The bars the bound left uncertified (NaN bars were just overwritten), in bar order.
    // Lane by lane, so the bars come out in order (lane `l` holds bars `l q .. (l + 1) q`).
    scratch.fallback.clear();
    for l in 0..LANES {
        for r in &scratch.uncertain {
            for k in r.clone() {
                let i = l * q + k;
                if dt[k * LANES + l] == UNCERTIFIED && i < n && i >= from {
                    scratch.fallback.push(i);
                }
            }
        }
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
                &mut scratch.d,
            );
            for_bars(t0..t1, q, |i, pos| {
                dt[pos] = scratch.d[i];
                set(signs, pos, class(scratch.d[i]));
            });
            t0 = t1;
        }
        stats.recomputed_bars += (end - start) as u64;
    }
    // Every bar now has a d of the reference's class, and a bar of the same class as the one
    // before it can neither open nor close a position (`sig` needs `prev <= 0 < d` or
    // `prev >= 0 > d`): the event loop runs only at the bars where the class may change.
    for e in &mut scratch.events {
        e.clear();
    }
    for k in 1..q {
        let mut diff = signs[k] ^ signs[k - 1];
        while diff != 0 {
            scratch.events[diff.trailing_zeros() as usize / 8].push(k);
            diff &= !(0xff << (diff.trailing_zeros() / 8 * 8));
        }
    }
    // The loop starts at bar `from`, always stepped (its class may differ from `bt`'s last).
    for (l, lane) in close.chunks(q).enumerate() {
        let Some(k0) = from
            .checked_sub(l * q)
            .map_or(Some(0), |k| (k < lane.len()).then_some(k))
        else {
            continue;
        };
        bt.step(lane[k0], dt[k0 * LANES + l], fee_pct);
        // The last lane may end before `q`; the positions past the series are not bars.
        let events = &scratch.events[l];
        let after = events.partition_point(|&k| k <= k0);
        for &k in events[after..].iter().take_while(|&&k| k < lane.len()) {
            bt.step(lane[k], dt[k * LANES + l], fee_pct);
        }
    }
}

/// Runs the combos `order` (indices into `params`) with one scratch, into `(k, pnl, trades)`.
#[allow(clippy::too_many_arguments)]
fn run_combos(
    prep: &Prepared<'_>,
    params: &[Combo],
    routes: &[Route],
    fee_pct: f64,
    tier: Tier,
    kernel: WmaKernel,
    scratch: &mut Scratch,
    direct: &mut prealloc::Scratch,
    stats: &mut Stats,
    k: usize,
    from: usize,
    bt: &mut Backtest,
) {
    match &routes[k] {
        // Every bar of the buffer is NaN: the event loop would only reset `prev`.
        Route::AllNan => {
            stats.all_nan_combos += 1;
            if from < prep.close.len() {
                bt.step(prep.close[from], f64::NAN, fee_pct);
            }
        }
        Route::Fast(plan) => run_fast(prep, plan, fee_pct, tier, kernel, scratch, stats, from, bt),
        Route::Direct => {
            stats.direct_combos += 1;
            direct.reserve(prep.close.len());
            prealloc::run_combo_from(
                prep.close,
                &params[k],
                fee_pct,
                direct.as_mut_slice(),
                |x, w, o, r| kernel.wma_range(x, w, o, r),
                from,
                bt,
            )
        }
    }
}

/// The sweep with its [`Stats`], on `threads` workers (combos handed out dynamically, most
/// expensive first, as in [`rayon`](crate::rayon)), with the fast path compiled for `tier`
/// and the fallback on the SIMD WMA `kernel`. Tests force every tier through this.
pub fn sweep_with_stats(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    tier: Tier,
    kernel: WmaKernel,
) -> Result<(SweepResult, Stats), KernelError> {
    let mut states = vec![Backtest::new(); params.len()];
    let stats = sweep_from_with_stats(
        close,
        params,
        fee_pct,
        threads,
        tier,
        kernel,
        0,
        &mut states,
    )?;
    let result = SweepResult {
        pnl: states.iter().map(Backtest::pnl).collect(),
        trades: states.iter().map(Backtest::trades).collect(),
    };
    Ok((result, stats))
}

/// [`sweep_with_stats`] resumed at bar `from` from `states` (see [`SweepFn`](crate::SweepFn)).
#[allow(clippy::too_many_arguments)]
pub fn sweep_from_with_stats(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    tier: Tier,
    kernel: WmaKernel,
    from: usize,
    states: &mut [Backtest],
) -> Result<Stats, KernelError> {
    crate::check_resume(close, params, fee_pct, from, states)?;
    let close = close.bars();
    let routes: Vec<Route> = params.iter().map(|c| Plan::route(c, close.len())).collect();
    let plans: Vec<Option<Plan>> = routes
        .iter()
        .map(|r| match r {
            Route::Fast(p) => Some(*p),
            _ => None,
        })
        .collect();
    let prep = Prepared::new(close, &plans);
    let mut stats = Stats::default();
    let start: &[Backtest] = states;
    let run = |scratch: &mut Scratch, direct: &mut prealloc::Scratch, stats: &mut Stats, k| {
        let mut bt = start[k];
        run_combos(
            &prep, params, &routes, fee_pct, tier, kernel, scratch, direct, stats, k, from, &mut bt,
        );
        bt
    };
    let done = crate::rayon::for_each_combo(params, close.len(), threads, |next| {
        let mut scratch = Scratch::default();
        scratch.fit(&prep);
        let mut direct = prealloc::Scratch::new(0);
        let mut stats = Stats::default();
        let mut done = Vec::new();
        while let Some(k) = next() {
            done.push((k, run(&mut scratch, &mut direct, &mut stats, k)));
        }
        stats.memory_bytes = (scratch.bytes() + direct.n_bars() * prealloc::BUFFERS * 8) as u64;
        (done, stats)
    });
    stats.memory_bytes = prep.bytes() as u64;
    for (worker, s) in done {
        stats.add(&s);
        for (k, bt) in worker {
            states[k] = bt;
        }
    }
    Ok(stats)
}

/// The batch sweep, single thread: the best tier for this CPU.
pub fn sweep(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
) -> Result<SweepResult, KernelError> {
    sweep_par(close, params, fee_pct, Threads::Fixed(1))
}

/// The batch sweep over `threads` workers.
pub fn sweep_par(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
) -> Result<SweepResult, KernelError> {
    crate::batch(sweep_par_from, close, params, fee_pct, threads)
}

/// The [`SweepFn`](crate::SweepFn) entry, single thread, resumed at `from`.
pub fn sweep_from(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
    from: usize,
    states: &mut [Backtest],
) -> Result<(), KernelError> {
    sweep_par_from(close, params, fee_pct, Threads::Fixed(1), from, states)
}

/// The [`SweepFn`](crate::SweepFn) entry over `threads` workers, resumed at `from`.
pub fn sweep_par_from(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    from: usize,
    states: &mut [Backtest],
) -> Result<(), KernelError> {
    let (tier, kernel) = (Tier::best(), WmaKernel::best());
    sweep_from_with_stats(close, params, fee_pct, threads, tier, kernel, from, states).map(|_| ())
}

/// The two parts of a combo's bound coefficient, `(fast, reference)`: the fast path's distance
/// from the exact `d` and the reference's, per unit of max |close| (their sum, with the slack,
/// is [`Plan::beta`]). `None` when the combo does not take the fast path. Tests use the parts
/// to show the bound test bites: the reference's part alone does not cover the fast path.
pub fn bound_parts(combo: &Combo, n_bars: usize) -> Option<(f64, f64)> {
    let Route::Fast(p) = Plan::route(combo, n_bars) else {
        return None;
    };
    let (fast, reference) = bound_split(p.h, p.n, p.s, p.m, p.h3, p.t, p.period);
    Some((fast * SLACK, reference * SLACK))
}

/// The fast `d` of every bar and the bound at that bar (see [`fast_d_with_bound`]).
pub type FastD = (Vec<f64>, Vec<f64>);

/// For tests and the lab: the fast `d` at every bar of one combo before certification (NaN at
/// the reference's NaN bars) and the bound on `|d_fast - d_ref|` at that bar, in bar order.
/// `None` when the combo does not take the fast path (all NaN, or windows too long).
pub fn fast_d_with_bound(
    close: ValidClose<'_>,
    combo: &Combo,
) -> Result<Option<FastD>, KernelError> {
    validate_params_and_fee(std::slice::from_ref(combo), 0.0)?;
    let close = close.bars();
    let Route::Fast(mut plan) = Plan::route(combo, close.len()) else {
        return Ok(None);
    };
    let prep = Prepared::new(close, &[Some(plan)]);
    let mut scratch = Scratch::default();
    scratch.fit(&prep);
    // A zero bound certifies every bar, so `dt` holds every fast d (an exactly zero d reads as
    // uncertified, which is 0 here too).
    let beta = plan.beta;
    plan.beta = 0.0;
    fast_d_on(Tier::best(), &prep, &plan, &mut scratch);
    let q = prep.q;
    let reach = 2 * plan.period + plan.w1 + plan.w2;
    let mut d = vec![f64::NAN; close.len()];
    let mut bound = vec![f64::NAN; close.len()];
    for i in 0..close.len() {
        let (l, k) = (i / q, i % q);
        if (prep.since_nan[i] as usize) >= plan.weff {
            let v = scratch.dt[k * LANES + l];
            d[i] = if v == UNCERTIFIED { 0.0 } else { v };
            // The same M the sweep uses: the block maxima over the period's reach.
            let start = prep.pad + k - k % plan.period;
            let end = (start + plan.period).min(prep.pad + q);
            bound[i] = beta * prep.max_abs(start.saturating_sub(reach)..end)[l];
        }
    }
    Ok(Some((d, bound)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flat-run shortcut gives the reference's bits for every window and range, with runs
    /// at the range's edges, NaN runs (bit-equal NaNs form a run too) and signed zeros.
    #[test]
    fn flat_aware_wma_is_the_reference_bit_for_bit() {
        let mut x = Vec::new();
        for (v, n) in [
            (1.1, 40),
            (0.3, 17),
            (2.5, 3),
            (f64::NAN, 25),
            (1.1, 64),
            (0.0, 20),
            (-0.0, 20),
            (1e6, 33),
        ] {
            x.extend(std::iter::repeat_n(v, n));
        }
        x.extend((0..50).map(|i| 1.0 + (i as f64 * 0.37).sin()));
        let kernel = WmaKernel::best();
        for w in [1, 2, 15, 16, 17, 33, 64, 65, 200] {
            let want = hullsweep_kernel::wma(&x, w);
            for (a, b) in [(0, x.len()), (10, 90), (40, 41), (57, 200), (150, x.len())] {
                let mut out = vec![7.0; x.len()];
                wma_flat_aware(kernel, &x, w, &mut out, a..b);
                for i in a..b {
                    assert!(
                        out[i].to_bits() == want[i].to_bits()
                            || (out[i].is_nan() && want[i].is_nan()),
                        "w {w}, range {a}..{b}, bar {i}: {} vs {}",
                        out[i],
                        want[i]
                    );
                }
                assert!(
                    out[..a].iter().chain(&out[b..]).all(|&v| v == 7.0),
                    "outside the range"
                );
            }
        }
    }
}
