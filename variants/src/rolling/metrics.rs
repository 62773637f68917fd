//! `rolling`'s metrics sweep and recorded runs: the batch sweep's routes and fast path, with the
//! event loop (which runs only at class changes) keeping the metrics; `bars_in_market` comes from
//! the bar index of the first entry, so no per-bar work is added.

use super::certify::{Plan, Route, plans};
use super::events::run_fast;
use super::prepare::Prepared;
use super::scratch::Scratch;
use super::timing::NoClock;
use crate::Threads;
use crate::backtest::EventLoop;
use crate::prealloc::{self, Backtest};
use crate::simd::{Tier, WmaKernel};
use crate::threads::in_combo_order;
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
    let n = close.bars().len();
    Ok(run_loops(
        close.bars(),
        params,
        fee_pct,
        threads,
        0,
        &|_| Backtest::tracking(true),
        &|_, bt: Backtest| bt.metrics(n),
    ))
}

/// Every combo run into the loop `new(k)` from bar `from` on and handed to `done` on its worker
/// (inputs validated by the caller); the results in combo order.
pub(crate) fn run_loops<L, R, N, D>(
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    from: usize,
    new: &N,
    done: &D,
) -> Vec<R>
where
    L: EventLoop,
    R: Send,
    N: Fn(usize) -> L + Sync,
    D: Fn(usize, L) -> R + Sync,
{
    let (tier, kernel) = (Tier::best(), WmaKernel::best());
    let n = close.len();
    let routes: Vec<Route> = params.iter().map(|c| Plan::route(c, n)).collect();
    let workers = crate::rayon::thread_count(threads).min(params.len().max(1));
    let prep = Prepared::new(close, &plans(&routes), workers);
    let per_worker = crate::rayon::for_each_combo(params, n, threads, |next| {
        let mut scratch = Scratch::default();
        scratch.fit(&prep);
        let mut direct = prealloc::Scratch::new(0);
        let mut stats = super::Stats::default();
        let mut out = Vec::new();
        while let Some(k) = next() {
            let mut bt = new(k);
            match &routes[k] {
                // No bar has a defined `d`: nothing opens, nothing trades.
                Route::AllNan => {}
                Route::Fast(plan) => run_fast(
                    &prep,
                    plan,
                    fee_pct,
                    tier,
                    kernel,
                    &mut scratch,
                    &mut stats,
                    from,
                    &mut bt,
                    &mut NoClock,
                ),
                Route::Direct => {
                    direct.reserve(n);
                    prealloc::run_combo_loop(
                        close,
                        &params[k],
                        fee_pct,
                        direct.as_mut_slice(),
                        |x, w, o, r| kernel.wma_range(x, w, o, r),
                        from,
                        &mut bt,
                    );
                }
            }
            out.push((k, done(k, bt)));
        }
        out
    });
    in_combo_order(params.len(), per_worker)
}
