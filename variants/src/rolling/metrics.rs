//! `rolling`'s metrics sweep: the batch sweep's routes and fast path, with the event loop (which
//! runs only at class changes) keeping the metrics; `bars_in_market` comes from the bar index of
//! the first entry, so no per-bar work is added.

use super::certify::{Plan, Route, plans};
use super::events::run_fast;
use super::prepare::Prepared;
use super::scratch::Scratch;
use crate::Threads;
use crate::prealloc::{self, Backtest};
use crate::simd::{Tier, WmaKernel};
use hullsweep_kernel::{Combo, KernelError, Metrics, ValidClose, validate_params_and_fee};

/// Every combo's [`Metrics`] on `threads` workers (the [`SweepFn`](crate::SweepFn)-shaped
/// entry of `rolling` and `rolling-rayon`).
pub fn sweep_metrics(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
) -> Result<Vec<Metrics>, KernelError> {
    validate_params_and_fee(params, fee_pct)?;
    let (tier, kernel) = (Tier::best(), WmaKernel::best());
    let close = close.bars();
    let n = close.len();
    let routes: Vec<Route> = params.iter().map(|c| Plan::route(c, n)).collect();
    let workers = crate::rayon::thread_count(threads).min(params.len().max(1));
    let prep = Prepared::new(close, &plans(&routes), workers);
    let done = crate::rayon::for_each_combo(params, n, threads, |next| {
        let mut scratch = Scratch::default();
        scratch.fit(&prep);
        let mut direct = prealloc::Scratch::new(0);
        let mut stats = super::Stats::default();
        let mut done = Vec::new();
        while let Some(k) = next() {
            let bt = match &routes[k] {
                // No bar has a defined `d`: nothing opens, nothing trades.
                Route::AllNan => Backtest::tracking(true),
                Route::Fast(plan) => {
                    let mut bt = Backtest::tracking(true);
                    run_fast(
                        &prep,
                        plan,
                        fee_pct,
                        tier,
                        kernel,
                        &mut scratch,
                        &mut stats,
                        0,
                        &mut bt,
                    );
                    bt
                }
                Route::Direct => {
                    direct.reserve(n);
                    let mut bt = Backtest::tracking(true);
                    prealloc::run_combo_bt(
                        close,
                        &params[k],
                        fee_pct,
                        direct.as_mut_slice(),
                        |x, w, o, r| kernel.wma_range(x, w, o, r),
                        &mut bt,
                    );
                    bt
                }
            };
            done.push((k, bt.metrics(n)));
        }
        done
    });
    let mut out = vec![Backtest::new().metrics(0); params.len()];
    for (k, m) in done.into_iter().flatten() {
        out[k] = m;
    }
    Ok(out)
}
