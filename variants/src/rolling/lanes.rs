//! `rolling`, the fast path: the rolling recurrences of both levels over 8 lanes at once, and
//! the certification test per bar (fast `d` or `UNCERTIFIED`), generic over the tier's sign
//! mask; `dispatch` compiles it per instruction-set tier.

use super::certify::{Plan, UNCERTIFIED};
use super::layout::{LANES, V};
use super::prepare::Prepared;
use super::scratch::Scratch;
use super::signs::{TierOps, mul_sub};
use std::ops::Range;

/// Loads the 8 lanes at position `loc` of a transposed buffer.
///
/// # Safety
/// `(loc + 1) * LANES <= x.len()`; every pass asserts it for its highest position on entry.
#[inline(always)]
pub(super) unsafe fn load(x: &[f64], loc: usize) -> V {
    debug_assert!((loc + 1) * LANES <= x.len());
    // SAFETY: in bounds by the caller's contract; `[f64; 8]` has no alignment beyond f64's.
    unsafe { x.as_ptr().add(loc * LANES).cast::<V>().read() }
}

/// Stores the 8 lanes at position `loc`.
///
/// # Safety
/// As [`load`].
#[inline(always)]
pub(super) unsafe fn store(x: &mut [f64], loc: usize, v: V) {
    debug_assert!((loc + 1) * LANES <= x.len());
    // SAFETY: in bounds by the caller's contract.
    unsafe { x.as_mut_ptr().add(loc * LANES).cast::<V>().write(v) }
}

/// One rolling WMA over 8 lanes: `s` is the window sum, `t` the weighted sum (weights 1..=w).
#[derive(Clone, Copy)]
pub(super) struct Roll {
    pub(super) s: V,
    pub(super) t: V,
}

impl Roll {
    /// The direct sums for the window ending at `loc`, oldest first (`rolling.md`, restart).
    ///
    /// # Safety
    /// `w <= loc + 1` and position `loc` inside `x` (see [`load`]).
    #[inline(always)]
    pub(super) unsafe fn restart(x: &[f64], w: usize, loc: usize) -> Roll {
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
    pub(super) fn step<T: TierOps>(&mut self, wf: f64, new: V, old: V) {
        for l in 0..LANES {
            // The weighted sum uses the window sum before it moves: T' = T + (w x_new - S).
            let q = mul_sub::<T>(wf, new[l], self.s[l]);
            self.t[l] += q;
            self.s[l] += new[l] - old[l];
        }
    }

    #[inline(always)]
    pub(super) fn value(&self, inv_d: f64) -> V {
        std::array::from_fn(|l| self.t[l] * inv_d)
    }
}

/// `1 / (w (w + 1) / 2)`, the WMA's normalisation as one multiply.
pub(super) fn inv_denom(w: usize) -> f64 {
    let w = w as f64;
    1.0 / (w * (w + 1.0) / 2.0)
}

/// Positions per tile of the fast path, before rounding up to a whole restart period: both
/// levels run over one tile before the next, so the first level's outputs (`d1`, `d3`: 128 bytes
/// a position) are read back by the second level from L2 instead of from a whole series'
/// worth of buffers (5 MB a combo on the default sweep, streamed through a 512 KB L2 to the
/// L3 both cores share: the suspected limit on 2-core scaling; see the scale section of
/// `reports/lab.md`).
pub(super) const TILE_POSITIONS: usize = 1024;

/// Positions per tile for a plan over `q` positions: a whole number of restart periods, so each
/// tile's second level starts at a restart and needs nothing from the tile before but the first
/// level's lookback. Windows so long that a period and its lookback overflow two tiles' worth
/// would not stay in cache anyway: they run as one tile, with no lookback to carry over.
#[inline]
pub(super) fn tile_positions(plan: &Plan, q: usize) -> usize {
    let tile = TILE_POSITIONS.div_ceil(plan.period) * plan.period;
    if tile + plan.w2 > 2 * TILE_POSITIONS {
        q.max(1)
    } else {
        tile
    }
}

/// First level over positions `range`: the five WMAs of close (three on grids where
/// `hma3_half == hma_half` and `hma3_m == hma_n`), combined into `d1 = 2a - b` and
/// `d3 = 3c - dd - e` at index `loc - base` of `d1`, `d3`. The recurrences restart at every
/// position `phase + j * period` and otherwise step on from `carry`, which carries them from
/// one call to the next: calls over consecutive ranges give the same bits as one call over their
/// union, so the restart schedule does not depend on the tiling.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn level1<T: TierOps, const NW: usize>(
    ct: &[f64],
    ws: [usize; NW],
    range: Range<usize>,
    phase: usize,
    period: usize,
    carry: &mut [Roll; NW],
    base: usize,
    d1: &mut [f64],
    d3: &mut [f64],
) {
    if range.is_empty() {
        return;
    }
    let len = (range.end - base) * LANES;
    assert!(
        ct.len() >= range.end * LANES && d1.len() >= len && d3.len() >= len && base <= range.start,
        "buffers cover the positions"
    );
    assert!(
        range.start >= phase && ws.iter().all(|&w| w >= 1 && w <= phase + 1),
        "windows start inside ct"
    );
    let wf: [f64; NW] = ws.map(|w| w as f64);
    let inv: [f64; NW] = ws.map(inv_denom);
    let mut loc = range.start;
    while loc < range.end {
        // The segment up to the next restart: a fresh local per segment, as the recurrences
        // are in registers that way, carried over in `carry` when a range ends mid-segment.
        let at_restart = (loc - phase).is_multiple_of(period);
        let end = (loc + period - (loc - phase) % period).min(range.end);
        // SAFETY (this block and the loop): every position read is in `loc + 1 - w ..= loc`
        // with `w <= phase + 1 <= loc + 1`, and `loc < range.end`; every position written is
        // `loc - base` with `base <= range.start <= loc < range.end`: the asserts above keep
        // them inside every buffer.
        let (mut r, first) = if at_restart {
            let r: [Roll; NW] = std::array::from_fn(|j| unsafe { Roll::restart(ct, ws[j], loc) });
            unsafe { emit1::<T, NW>(&r, &inv, loc - base, d1, d3) };
            (r, loc + 1)
        } else {
            (*carry, loc)
        };
        for at in first..end {
            let new = unsafe { load(ct, at) };
            for j in 0..NW {
                r[j].step::<T>(wf[j], new, unsafe { load(ct, at - ws[j]) });
            }
            unsafe { emit1::<T, NW>(&r, &inv, at - base, d1, d3) };
        }
        *carry = r;
        loc = end;
    }
}

/// The first level's outputs at index `at`: `d1 = 2a - b`, `d3 = 3c - dd - e` with the roles
/// `[h, n, t]` and, with five windows, `[.., h3, m]` (with three, `h3 = h` and `m = n`).
///
/// # Safety
/// Index `at` inside `d1` and `d3` (see [`load`]).
#[inline(always)]
pub(super) unsafe fn emit1<T: TierOps, const NW: usize>(
    r: &[Roll; NW],
    inv: &[f64; NW],
    at: usize,
    d1: &mut [f64],
    d3: &mut [f64],
) {
    let (ih3, im) = if NW == 5 { (3, 4) } else { (0, 1) };
    let y: [V; NW] = std::array::from_fn(|j| r[j].value(inv[j]));
    // SAFETY: by the contract.
    unsafe {
        store(
            d1,
            at,
            std::array::from_fn(|l| mul_sub::<T>(2.0, y[0][l], y[1][l])),
        );
        store(
            d3,
            at,
            std::array::from_fn(|l| mul_sub::<T>(3.0, y[2][l], y[ih3][l]) - y[im][l]),
        );
    }
}

/// Second level over positions `range` (whole restart periods from `from`, the first position
/// of the series): `hma = wma(d1, s)`, `hma3 = wma(d3, m)` and `d = hma - hma3`, with the sign
/// bytes in `signs`, and `dt` where a period has a bar `|d|` does not clear the bound `beta * M`
/// (or at every position with `keep_all`): `d` where it clears, [`UNCERTIFIED`] elsewhere.
/// `d1`, `d3` hold position `loc` at `loc - base`, `dt` at `loc - range.start`, `signs` at
/// `loc - from`; each lane's uncertified bars (bar `l q + loc - from` of lane `l`), but for the
/// reference's NaN bars and those past the series, are appended to `unsettled`.
///
/// Every period starts at a restart, so it depends on nothing before it but `d1` and `d3`: a
/// period is first run without writing `dt` (almost every period is certified whole, and then
/// nothing reads it), and run again, to the same bits, with `dt` where it was not.
///
/// # Safety
/// The CPU has `M`'s instruction set ([`TierOps`]).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn level2<M: TierOps>(
    prep: &Prepared<'_>,
    plan: &Plan,
    d1: &[f64],
    d3: &[f64],
    base: usize,
    range: Range<usize>,
    from: usize,
    dt: &mut [f64],
    signs: &mut [u64],
    unsettled: &mut [Vec<usize>; LANES],
    keep_all: bool,
) {
    let (s, m, period) = (plan.s, plan.m, plan.period);
    let len = (range.end - base) * LANES;
    assert!(
        d1.len() >= len && d3.len() >= len,
        "buffers cover the positions"
    );
    assert!(
        from <= range.start && (range.start - from).is_multiple_of(period),
        "the range starts at a restart"
    );
    assert!(
        dt.len() >= (range.end - range.start) * LANES,
        "dt covers the bars"
    );
    assert!(signs.len() >= range.end - from, "a sign word per position");
    assert!(
        s.max(m) <= range.start - base,
        "windows start inside d1, d3"
    );
    // How far back a bar's computation reaches: its second-level window and steps since the
    // restart, then the first level's window and steps for the oldest of those inputs.
    let reach = 2 * period + plan.w1 + plan.w2;
    let mut start = range.start;
    while start < range.end {
        let end = (start + period).min(range.end);
        let big = prep.max_abs(start.saturating_sub(reach)..end);
        let thr: V = std::array::from_fn(|l| plan.threshold(big[l]));
        // Past the overflow guard (threshold `+inf`) no bar is certified, and `|d|` may be NaN
        // there, which the least `|d|` below skips: such a period is uncertain as a whole.
        let guarded = thr.contains(&f64::INFINITY);
        let (t, o) = (start - range.start, start - from);
        let run = Period {
            plan,
            d1,
            d3,
            b: start - base,
            len: end - start,
            thr: &thr,
        };
        // SAFETY (both runs): the asserts above keep every index `Period::run` reads and
        // writes inside the buffers (see there); the CPU is the caller's.
        let low = if keep_all {
            unsafe { run.run::<M, true>(dt, t, signs, o) }
        } else {
            unsafe { run.run::<M, false>(dt, t, signs, o) }
        };
        // `|d| <= thr` exactly where `|d| - thr <= 0`, the certification test of `rolling.md`.
        if guarded || low.iter().zip(&thr).any(|(&a, &b)| a <= b) {
            if !keep_all {
                // SAFETY: as for the first run.
                unsafe { run.run::<M, true>(dt, t, signs, o) };
            }
            collect_unsettled(
                prep,
                plan.weff,
                &dt[t * LANES..(t + end - start) * LANES],
                o,
                unsettled,
            );
        }
        start = end;
    }
}

/// One restart period of the second level: its first position at index `b` of `d1` and `d3`,
/// `len` positions, each lane's threshold `thr`.
struct Period<'a> {
    plan: &'a Plan,
    d1: &'a [f64],
    d3: &'a [f64],
    b: usize,
    len: usize,
    thr: &'a V,
}

impl Period<'_> {
    /// Runs the period: the sign bytes of `d` at `signs[o..]`, with `STORE` `d` or
    /// [`UNCERTIFIED`] at positions `t..` of `dt`; returns each lane's least `|d|` (NaN skipped).
    ///
    /// A certified `d` is nonzero, so two certified bars of the same sign have the same class;
    /// every other bar gets its class written later, when its `d` is settled.
    ///
    /// # Safety
    /// `max(s, m) <= b`, positions `b + len - 1` of `d1` and `d3`, `t + len - 1` of `dt` (with
    /// `STORE`) and `o + len - 1` of `signs` inside them, and the CPU has `M`'s instruction set.
    #[inline(always)]
    unsafe fn run<M: TierOps, const STORE: bool>(
        &self,
        dt: &mut [f64],
        t: usize,
        signs: &mut [u64],
        o: usize,
    ) -> V {
        let (s, m) = (self.plan.s, self.plan.m);
        let (sf, mf) = (s as f64, m as f64);
        let (inv_s, inv_m) = (inv_denom(s), inv_denom(m));
        let mut low = [f64::INFINITY; LANES];
        // SAFETY (this block and the loop): indices read are in `b + 1 - w ..= b + len - 1`
        // with `w <= b`; indices written are `t + k` (`dt`) and `o + k` (`signs`), `k < len`:
        // inside the buffers by the contract.
        let (mut hs, mut h3) = unsafe {
            (
                Roll::restart(self.d1, s, self.b),
                Roll::restart(self.d3, m, self.b),
            )
        };
        let w = s.max(m);
        // Each buffer from the period's first position, so one index serves them all.
        let (d1p, d3p) = (
            &self.d1[(self.b - w) * LANES..],
            &self.d3[(self.b - w) * LANES..],
        );
        for k in 0..self.len {
            if k > 0 {
                unsafe {
                    hs.step::<M>(sf, load(d1p, w + k), load(d1p, w + k - s));
                    h3.step::<M>(mf, load(d3p, w + k), load(d3p, w + k - m));
                }
            }
            let hma3 = h3.value(inv_m);
            let d: V = std::array::from_fn(|l| mul_sub::<M>(hs.t[l], inv_s, hma3[l]));
            for (low, a) in low.iter_mut().zip(d.map(f64::abs)) {
                if a < *low {
                    *low = a;
                }
            }
            unsafe {
                if STORE {
                    let v = std::array::from_fn(|l| {
                        if d[l].abs() > self.thr[l] {
                            d[l]
                        } else {
                            UNCERTIFIED
                        }
                    });
                    store(dt, t + k, v);
                }
                *signs.get_unchecked_mut(o + k) = M::sign_bytes(&d);
            }
        }
        low
    }
}

/// Appends each lane's uncertified bars of one period to `unsettled`, in order: `dt` holds the
/// period's positions, the first of them position `o` of every lane (bar `l q + o` of lane
/// `l`). A bar the reference has as NaN (fewer than `weff` bars since a NaN) or past the series
/// needs no `d`. Out of line: it runs only for periods with an uncertified bar, and the second
/// level's loop compiles better without it.
#[cold]
#[inline(never)]
fn collect_unsettled(
    prep: &Prepared<'_>,
    weff: usize,
    dt: &[f64],
    o: usize,
    unsettled: &mut [Vec<usize>; LANES],
) {
    let (q, n) = (prep.q, prep.close.len());
    let len = dt.len() / LANES;
    for (l, lane) in unsettled.iter_mut().enumerate() {
        let bars = (l * q + o).min(n)..(l * q + o + len).min(n);
        for (k, i) in bars.enumerate() {
            if dt[k * LANES + l] == UNCERTIFIED && prep.defined(i, weff) {
                lane.push(i);
            }
        }
    }
}

/// The fast path for one combo, tile by tile: `scratch.signs` gets every lane's sign bytes,
/// `scratch.unsettled` the bars the bound did not certify, and `keep`, when given (a
/// whole series' worth, in the layout of `signs`), every lane's fast `d` or [`UNCERTIFIED`].
///
/// # Safety
/// The CPU has `M`'s instruction set ([`TierOps`]).
#[inline(always)]
pub(super) unsafe fn fast_d<M: TierOps>(
    prep: &Prepared<'_>,
    plan: &Plan,
    scratch: &mut Scratch,
    keep: Option<&mut [f64]>,
) {
    // SAFETY: the caller's contract.
    unsafe { fast_d_in_tiles::<M>(prep, plan, scratch, keep, tile_positions(plan, prep.q)) }
}

/// [`fast_d`] over tiles of `tile` positions: a whole number of restart periods, or at least
/// the whole series (tests compare tilings: every one gives the same bits).
///
/// # Safety
/// The CPU has `M`'s instruction set ([`TierOps`]).
#[inline(always)]
pub(super) unsafe fn fast_d_in_tiles<M: TierOps>(
    prep: &Prepared<'_>,
    plan: &Plan,
    scratch: &mut Scratch,
    mut keep: Option<&mut [f64]>,
    tile: usize,
) {
    let p = plan;
    assert!(
        tile >= prep.q || (tile > 0 && tile.is_multiple_of(p.period)),
        "a tile is whole restart periods, or the whole series"
    );
    // The first level starts where the second level's first window reaches back to.
    let (from1, from2, to) = (prep.pad - p.w2, prep.pad, prep.pad + prep.q);
    // Each tile's buffers: its positions and the second level's lookback before them.
    let len = (tile + p.w2) * LANES;
    if scratch.d1.len() < len {
        scratch.d1.resize(len);
        scratch.d3.resize(len);
    }
    if scratch.dt.len() < tile * LANES {
        scratch.dt.resize(tile * LANES);
    }
    for lane in &mut scratch.unsettled {
        lane.clear();
    }
    let (d1, d3) = (&mut scratch.d1[..], &mut scratch.d3[..]);
    // Replaced at the first position, a restart, before anything reads them.
    let empty = Roll {
        s: [0.0; LANES],
        t: [0.0; LANES],
    };
    let five = !(p.h3 == p.h && p.m == p.n);
    let (mut r3, mut r5) = ([empty; 3], [empty; 5]);
    // `d1[0]` is position `base`: the tile's first minus its lookback.
    let mut start = from2;
    while start < to {
        let end = (start + tile).min(to);
        let base = start - p.w2;
        // The lookback was computed with the tile before, a whole tile after its own `base`:
        // move it to the front (the first tile's is computed with it, from a restart).
        let done1 = if start > from2 {
            d1.copy_within(tile * LANES..(tile + p.w2) * LANES, 0);
            d3.copy_within(tile * LANES..(tile + p.w2) * LANES, 0);
            start
        } else {
            from1
        };
        if five {
            let ws = [p.h, p.n, p.t, p.h3, p.m];
            level1::<M, 5>(
                &prep.ct,
                ws,
                done1..end,
                from1,
                p.period,
                &mut r5,
                base,
                d1,
                d3,
            );
        } else {
            let ws = [p.h, p.n, p.t];
            level1::<M, 3>(
                &prep.ct,
                ws,
                done1..end,
                from1,
                p.period,
                &mut r3,
                base,
                d1,
                d3,
            );
        }
        let dt = &mut scratch.dt[..];
        let signs = &mut scratch.signs[..];
        // SAFETY: the caller's contract.
        unsafe {
            level2::<M>(
                prep,
                p,
                d1,
                d3,
                base,
                start..end,
                from2,
                dt,
                signs,
                &mut scratch.unsettled,
                keep.is_some(),
            )
        };
        if let Some(keep) = keep.as_deref_mut() {
            let at = (start - from2) * LANES;
            keep[at..(end - from2) * LANES].copy_from_slice(&dt[..(end - start) * LANES]);
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::super::signs::Baseline;
    use super::*;
    use crate::rolling::certify::Route;
    use hullsweep_kernel::{derive_windows, derive_windows2, gbm};

    /// Tiling changes no bit: every tile size (one period, a few, the default, the whole
    /// series) gives the same fast `d` at every bar, the same sign bytes and the same list of
    /// uncertified bars, on a series with NaN runs and flat runs (uncertified stretches) that
    /// cross tile boundaries, for short and long windows, three- and five-window combos.
    #[test]
    fn every_tiling_gives_the_same_bits() {
        let mut close = gbm(60_000, 7, 0.002).unwrap();
        for (at, len) in [(1_000, 3), (9_500, 40), (23_007, 700), (41_000, 1)] {
            close[at..at + len].fill(f64::NAN);
        }
        for (at, len) in [(5_000, 900), (17_000, 2_500), (52_001, 300)] {
            let v = close[at];
            close[at..at + len].fill(v);
        }
        let combos = [
            derive_windows(6),
            derive_windows(20),
            derive_windows(64),
            derive_windows(200),
            derive_windows(450),
            derive_windows2(30, 90),
        ];
        let mut uncertified = 0;
        for c in &combos {
            let Route::Fast(plan) = Plan::route(c, close.len()) else {
                panic!("{c:?} takes the fast path");
            };
            let prep = Prepared::new(&close, &[Some(plan)], 1);
            let run = |tile: usize| {
                let mut scratch = Scratch::default();
                scratch.fit(&prep);
                let mut dt = vec![0.0; prep.q * LANES];
                // SAFETY: the baseline needs nothing beyond the target's.
                unsafe {
                    fast_d_in_tiles::<Baseline>(&prep, &plan, &mut scratch, Some(&mut dt), tile)
                };
                (dt, scratch.signs, scratch.unsettled)
            };
            let (dt, signs, unsettled) = run(prep.q);
            uncertified += unsettled.iter().map(Vec::len).sum::<usize>();
            let default = tile_positions(&plan, prep.q);
            for tile in [plan.period, 3 * plan.period, default] {
                let (t_dt, t_signs, t_unsettled) = run(tile);
                let same = dt
                    .iter()
                    .zip(&t_dt)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "{c:?}: fast d differs with tiles of {tile}");
                assert_eq!(signs, t_signs, "{c:?}: signs differ with tiles of {tile}");
                assert_eq!(unsettled, t_unsettled, "{c:?}: tiles of {tile}");
            }
        }
        assert!(uncertified > 1_000, "the flat runs leave bars uncertified");
    }
}
