//! `rolling`, the fast path: the rolling recurrences of both levels over 8 lanes at once, and
//! the certification test per bar (fast `d` or `UNCERTIFIED`), compiled per instruction-set tier.

use super::*;

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
    pub(super) fn step(&mut self, wf: f64, new: V, old: V) {
        for l in 0..LANES {
            // The weighted sum uses the window sum before it moves: T' = T + (w x_new - S).
            let q = wf * new[l] - self.s[l];
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

/// First level over positions `from..to`: the five WMAs of close (three on grids where
/// `hma3_half == hma_half` and `hma3_m == hma_n`), combined into `d1 = 2a - b` and
/// `d3 = 3c - dd - e`, restarting every `period` positions.
#[inline(always)]
pub(super) fn level1<const NW: usize>(
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
pub(super) unsafe fn emit1<const NW: usize>(
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
pub(super) fn level2(
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
        let thr: V = std::array::from_fn(|l| plan.threshold(big[l]));
        // Past the overflow guard (threshold `+inf`) no bar is certified, and the margins there
        // may be NaN, which the `<= 0` test below would miss: such a period is uncertain as a whole.
        let guarded = thr.contains(&f64::INFINITY);
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
        if guarded || margin.iter().any(|&m| m <= 0.0) {
            uncertain.push(start - from..end - from);
        }
        start = end;
    }
}

/// Where the second level writes, with what it tracks across positions.
pub(super) struct Out<'a> {
    pub(super) thr: &'a V,
    pub(super) dt: &'a mut [f64],
    pub(super) signs: &'a mut [u64],
    /// Each lane's smallest `|d| - thr` so far (`<= 0` once a bar was not certified; the
    /// difference of two floats has the sign of the exact difference, so the test is exact).
    /// A margin can be NaN only past the overflow guard (`|inf| - inf`), where the threshold is
    /// `+inf` and [`level2`] marks the whole period uncertain without looking at the margins.
    pub(super) margin: &'a mut V,
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
    pub(super) unsafe fn emit(&mut self, hs: &Roll, h3: &Roll, inv_s: f64, inv_m: f64, at: usize) {
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
pub(super) fn fast_d(prep: &Prepared<'_>, plan: &Plan, scratch: &mut Scratch) {
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
pub(super) fn fast_d_on(tier: Tier, prep: &Prepared<'_>, plan: &Plan, scratch: &mut Scratch) {
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
