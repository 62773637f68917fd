//! `rolling`, the certificate: each combo's route and plan, its bound coefficient, and the one
//! function that applies the theorem's range (`Plan::threshold`); the derivation is `rolling.md`.

use hullsweep_kernel::{Combo, window};

/// The largest bound coefficient (bound / max |close|) the fast path accepts: above it, the
/// first-order derivation's neglected terms would no longer be negligible (see `rolling.md`),
/// and the combo runs on the SIMD pipeline instead. Only windows of about a million bars reach it.
pub(super) const BETA_MAX: f64 = 1.0 / (1u64 << 20) as f64;

/// Relative allowance for the second-order terms the derivation drops and for rounding in the
/// evaluation of the bound itself (see `rolling.md`, "Second-order terms").
pub(super) const SLACK: f64 = 1.0 + 1.0 / 1024.0;

/// Marks a bar the bound could not certify. A certified `d` is never infinite: certification
/// needs the overflow guard ([`Plan::m_max`]) to hold, and under it every quantity is finite.
pub(super) const UNCERTIFIED: f64 = f64::INFINITY;

/// The bound's absolute term, which covers underflow (`rolling.md`, "The range the theorem
/// covers"): 16 units of the smallest subnormal `2^-1074`, against the `10.5` that the two
/// pipelines' underflowing quotients and products and the rounding of `beta * M` need.
pub const UNDERFLOW_TERM: f64 = 16.0 * f64::from_bits(1);

/// How many times the largest |close| the largest intermediate of either pipeline can be, per
/// unit of the longest window's `D(w) = w (w + 1) / 2` (`rolling.md`, the overflow guard).
pub(super) const OVERFLOW_FACTOR: f64 = 16.0;

/// How one combo runs on the fast path: its windows, the restart period and the bound.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub(super) h: usize,
    pub(super) n: usize,
    pub(super) s: usize,
    pub(super) m: usize,
    pub(super) h3: usize,
    pub(super) t: usize,
    /// Longest first-level window (over close).
    pub(crate) w1: usize,
    /// Longest second-level window (`s`, `m`).
    pub(crate) w2: usize,
    /// Bars from the first bar a result can be defined to the first that is: a bar is NaN in
    /// the reference iff fewer than `weff` bars since the last NaN (or the start).
    pub(crate) weff: usize,
    /// Each recurrence restarts from a direct sum every `period` positions.
    pub(crate) period: usize,
    /// Bound on |d_fast - d_ref| divided by the largest |close| the bar's computation touched.
    pub(super) beta: f64,
    /// The overflow guard: the largest `M` (max |close| a bar's computation touched) at which
    /// no intermediate of either pipeline can overflow. Bars above it are never certified.
    pub(super) m_max: f64,
}

/// What a combo needs: nothing (all NaN), the fast path, or the SIMD pipeline.
pub(crate) enum Route {
    AllNan,
    Fast(Plan),
    Direct,
}

impl Plan {
    /// The route for `combo` on a series of `n_bars`.
    pub(crate) fn route(combo: &Combo, n_bars: usize) -> Route {
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
            let longest = w1.max(w2) as f64;
            let m_max = f64::MAX / (OVERFLOW_FACTOR * (longest * (longest + 1.0) / 2.0));
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
                m_max,
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

    /// The certification threshold for a bar whose computation touched no |close| above `m`:
    /// `|d_fast - d_ref|` is at most this, so `|d_fast|` above it fixes the reference's class.
    /// This is the one place the theorem's range is applied (`rolling.md`, "The range the
    /// theorem covers"): the underflow term holds it down to the smallest subnormal, and above
    /// the overflow guard it is `+inf`, which certifies nothing (the exact path takes over).
    #[inline(always)]
    pub fn threshold(&self, m: f64) -> f64 {
        if m <= self.m_max {
            self.beta * m + UNDERFLOW_TERM
        } else {
            f64::INFINITY
        }
    }
}

/// The plan of each combo that takes the fast path.
pub(super) fn plans(routes: &[Route]) -> Vec<Option<Plan>> {
    routes
        .iter()
        .map(|r| match r {
            Route::Fast(p) => Some(*p),
            _ => None,
        })
        .collect()
}

/// Unit roundoff of f64.
pub(super) const U: f64 = f64::EPSILON / 2.0;

/// `gamma(k) = k u / (1 - k u)`, the standard bound for `k` roundings (Higham, 3.1).
pub(super) fn gamma(k: usize) -> f64 {
    let ku = k as f64 * U;
    ku / (1.0 - ku)
}

/// Error of the reference's WMA of window `w`, per unit of max |input| (`rolling.md`, (1)).
pub(super) fn ref_wma_err(w: usize) -> f64 {
    gamma(w + 1)
}

/// Error of the rolling WMA of window `w` at most `k` steps after a restart, per unit of max
/// |input| (`rolling.md`, (2)).
pub(super) fn fast_wma_err(w: usize, k: usize) -> f64 {
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
pub(super) fn bound_coefficient(
    h: usize,
    n: usize,
    s: usize,
    m: usize,
    h3: usize,
    t: usize,
    k: usize,
) -> f64 {
    let (fast, reference) = bound_split(h, n, s, m, h3, t, k);
    (fast + reference) * SLACK
}

/// The fast path's and the reference's distance from the exact `d`, per unit of max |close|.
pub(super) fn bound_split(
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
