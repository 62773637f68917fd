//! `rolling`'s entry points: the batch and resumed sweeps on one thread or many, and the cost
//! model that picks the workers ([`MIN_POSITIONS_PER_WORKER`]).

use super::certify::{Plan, Route, plans};
use super::layout::LANES;
use super::pipeline::{Job, routes_and_pad};
use super::prepare::pad;
use super::scratch::Stats;
use super::timing::{Clock, NoClock, Stage, Timings};
use crate::Threads;
use crate::prealloc::Backtest;
use crate::simd::{Tier, WmaKernel};
use hullsweep_kernel::{Combo, KernelError, SweepResult, ValidClose};

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
    let (stats, NoClock) = sweep_clocked(
        close, params, fee_pct, threads, tier, kernel, from, states, BLOCK_BARS,
    )?;
    Ok(stats)
}

/// [`sweep_from_with_stats`] with the time of each stage ([`Timings`]): for the lab's
/// breakdown of where a sweep's time goes. The same work and the same bits; a few clock reads
/// per combo more.
#[allow(clippy::too_many_arguments)]
pub fn sweep_from_timed(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    tier: Tier,
    kernel: WmaKernel,
    from: usize,
    states: &mut [Backtest],
) -> Result<(Stats, Timings), KernelError> {
    sweep_clocked(
        close, params, fee_pct, threads, tier, kernel, from, states, BLOCK_BARS,
    )
}

/// [`sweep_from_with_stats`] in blocks of `block_bars` bars instead of [`BLOCK_BARS`], so tests
/// can put block boundaries anywhere (every blocking gives the same bits); `block_bars` of 0 is
/// refused.
#[allow(clippy::too_many_arguments)]
pub fn sweep_from_in_blocks(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    tier: Tier,
    from: usize,
    states: &mut [Backtest],
    block_bars: usize,
) -> Result<Stats, KernelError> {
    if block_bars == 0 {
        return Err(KernelError::ParamsShape {
            detail: "block_bars = 0: a block holds at least one bar".to_string(),
        });
    }
    let kernel = WmaKernel::best();
    let (stats, NoClock) = sweep_clocked(
        close, params, fee_pct, threads, tier, kernel, from, states, block_bars,
    )?;
    Ok(stats)
}

/// Bars a sweep takes at a time (with their lookback before them): a sweep of a longer series
/// runs every combo over one block before the next, as a [`Sweeper`](crate::Sweeper) runs its
/// pushes, so the block's prepared lanes (8 bytes a bar) and class bytes stay in a core's cache
/// across the combos instead of streaming from memory once per combo. Measured on 1.5M bars ×
/// 80 combos (`rolling::sweep_from_in_blocks`, interleaved, AMD EPYC Zen 4 VM, 2 MiB L2): blocks
/// of 32 Ki to 128 Ki bars sweep about 1.4× as fast as the whole series at once on one thread
/// and on two, within 2% of each other; on the default 150,000 bars no blocking differs beyond
/// noise. 64 Ki keeps a block's lanes (512 KiB) in a smaller L2 too. Shorter blocks repeat more
/// lookback (each lane restarts `w1 + w2` positions early) and meet the workers more often.
pub const BLOCK_BARS: usize = 1 << 16;

/// The blocks of bars `from..n`: as few as `block_bars` allows, of equal length (to a bar),
/// so no block is a sliver.
fn blocks(
    from: usize,
    n: usize,
    block_bars: usize,
) -> impl Iterator<Item = std::ops::Range<usize>> {
    let span = n - from;
    let count = span.div_ceil(block_bars).max(1);
    let len = span.div_ceil(count).max(1);
    (0..count).map(move |b| (from + b * len).min(n)..(from + (b + 1) * len).min(n))
}

/// The sweep, each stage timed by a clock of type `C` (one per worker, merged at the end),
/// `block_bars` bars at a time ([`BLOCK_BARS`] but in tests).
///
/// Exact for every blocking, by the argument of [`Sweeper`](crate::Sweeper): a bar's `d` reads
/// only the last `effective_window` bars, which its block's slice holds (the `lookback` before
/// the block's first bar), and the event loop carries only its state from one block to the next.
#[allow(clippy::too_many_arguments)]
fn sweep_clocked<C: Clock + Send>(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    tier: Tier,
    kernel: WmaKernel,
    from: usize,
    states: &mut [Backtest],
    block_bars: usize,
) -> Result<(Stats, C), KernelError> {
    let mut clock = C::default();
    let t = clock.mark();
    crate::check_resume(close, params, fee_pct, from, states)?;
    let lookback = params
        .iter()
        .map(crate::lookback::effective_window)
        .max()
        .unwrap_or(1)
        - 1;
    clock.lap(Stage::Checks, t);
    let t = clock.mark();
    let close = close.bars();
    // The workers and the combo counts go by the routes over the whole buffer; each block has
    // its own routes (a block alone may be too short for a combo's windows).
    let (routes, pad) = routes_and_pad(params, close.len());
    let workers = workers(&routes, params, close.len() - from, pad, threads);
    clock.lap(Stage::Plan, t);
    clock.workers(workers);
    let job = Job {
        close,
        params,
        fee_pct,
        tier,
        kernel,
        blocks: blocks(from, close.len(), block_bars).collect(),
        lookback,
    };
    let t = clock.mark();
    let mut stats = job.run(workers, states, &mut clock);
    clock.lap(Stage::Combos, t);
    // Counted once over the whole buffer: a block alone may be too short for a combo.
    for r in &routes {
        match r {
            Route::AllNan => stats.all_nan_combos += 1,
            Route::Direct => stats.direct_combos += 1,
            Route::Fast(_) => {}
        }
    }
    Ok((stats, clock))
}

/// The cost model behind [`Threads::Auto`] here, and so behind [`Variant::fastest`]: each worker
/// beyond the first needs at least this many positions of fast-path work, where a combo is
/// `bars + 8 × lookback` positions. Below that, waking a pool thread and giving it a scratch of
/// its own costs about what it saves. Measured on the lab's 2-core machine since the caller
/// became a worker (`rayon::team`; 1- and 2-thread sweeps paired, 15 rounds, grid 6:200:k): 2
/// threads lose at 34,000 to 86,000 positions (1,000 bars × 8 combos: 0.72×; 10,000 × 4: 0.84×;
/// 40,000 × 2: 0.99×), break even near 105,000 (10,000 × 8: 1.06×; 2,000 × 20: 1.04×) and win
/// from 186,000 (20,000 × 8: 1.17–1.26×; 3,000 × 40: 1.32×; 1,000 × 80: 1.19–1.22×; 150,000 × 2:
/// 1.25× in two runs of three). So a second worker starts at 131,072 positions; the threshold
/// was 16 times higher while the caller slept and a pool of two had to be woken. The model
/// counts work in positions, not seconds, so it holds on a faster or slower core alike: the
/// work and the per-worker overhead both scale with the core.
///
/// [`Variant::fastest`]: crate::Variant::fastest
pub const MIN_POSITIONS_PER_WORKER: usize = 1 << 16;

/// Workers the sweep of `params` over `n_bars` bars runs on: `Fixed(n)` is `n` (at most one per
/// combo); `Auto` is as many of the OS's cores as [`MIN_POSITIONS_PER_WORKER`] says pay, at
/// least one.
pub fn planned_workers(n_bars: usize, params: &[Combo], threads: Threads) -> usize {
    let routes: Vec<Route> = params.iter().map(|c| Plan::route(c, n_bars)).collect();
    workers(&routes, params, n_bars, pad(&plans(&routes)), threads)
}

/// [`planned_workers`] over routes already taken, with the prepared series' lookback `pad`.
fn workers(
    routes: &[Route],
    params: &[Combo],
    n_bars: usize,
    pad: usize,
    threads: Threads,
) -> usize {
    let combos = params.len().max(1);
    let Threads::Auto = threads else {
        return crate::rayon::thread_count(threads).min(combos);
    };
    let positions = n_bars.div_ceil(LANES).max(1) * LANES + pad * LANES;
    let work: usize = routes
        .iter()
        .zip(params)
        .map(|(r, c)| match r {
            Route::AllNan => 0,
            Route::Fast(_) => positions,
            // The SIMD pipeline: about one position's work per 8 window elements per bar.
            Route::Direct => n_bars.saturating_mul(crate::rayon::combo_cost(c, n_bars)) / LANES,
        })
        .fold(0, usize::saturating_add);
    let pays = (work / MIN_POSITIONS_PER_WORKER).max(1);
    crate::rayon::thread_count(Threads::Auto)
        .min(combos)
        .min(pays)
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
