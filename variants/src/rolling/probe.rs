//! For tests and the lab: a combo's bound split into its fast and reference parts, and the fast
//! `d` of every bar with the bound at that bar, to show the certificate holds and bites.

use super::certify::{Plan, Route, SLACK, bound_split};
use super::dispatch::fast_d_on;
use super::layout::LANES;
use super::prepare::Prepared;
use super::scratch::Scratch;
use crate::simd::Tier;
use hullsweep_kernel::{Combo, KernelError, ValidClose, validate_params_and_fee};

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
/// the reference's NaN bars) and the bound on `|d_fast - d_ref|` at that bar, in bar order,
/// with the fast path at `tier` (at the baseline where this CPU lacks it).
/// The bound is `+inf` where the overflow guard fails: there the fast `d` may be anything (even
/// NaN or infinite) and the sweep takes the exact path. `None` when the combo does not take the
/// fast path (all NaN, or windows too long).
pub fn fast_d_with_bound(
    close: ValidClose<'_>,
    combo: &Combo,
    tier: Tier,
) -> Result<Option<FastD>, KernelError> {
    validate_params_and_fee(std::slice::from_ref(combo), 0.0)?;
    let close = close.bars();
    let Route::Fast(mut plan) = Plan::route(combo, close.len()) else {
        return Ok(None);
    };
    let prep = Prepared::new(close, &[Some(plan)], 1);
    let mut scratch = Scratch::default();
    scratch.fit(&prep);
    let bound_plan = plan;
    // A coefficient of -inf makes every threshold -inf (M > 0; M = 0 only where every bar of the
    // reach is NaN, all masked below) and lifts the overflow guard, so `dt` keeps every fast d.
    plan.beta = f64::NEG_INFINITY;
    plan.m_max = f64::INFINITY;
    let q = prep.q;
    let mut dt = vec![0.0; q * LANES];
    fast_d_on(tier, &prep, &plan, &mut scratch, Some(&mut dt));
    let reach = 2 * plan.period + plan.w1 + plan.w2;
    let mut d = vec![f64::NAN; close.len()];
    let mut bound = vec![f64::NAN; close.len()];
    for i in 0..close.len() {
        let (l, k) = (i / q, i % q);
        if prep.defined(i, plan.weff) {
            d[i] = dt[k * LANES + l];
            // The same M the sweep uses: the block maxima over the period's reach.
            let start = prep.pad + k - k % plan.period;
            let end = (start + plan.period).min(prep.pad + q);
            bound[i] = bound_plan.threshold(prep.max_abs(start.saturating_sub(reach)..end)[l]);
        }
    }
    Ok(Some((d, bound)))
}
