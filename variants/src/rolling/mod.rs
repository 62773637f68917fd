//! `rolling`: the exact O(1)-per-bar variant. Every WMA is a rolling recurrence, with a proven
//! bound on how far its `d = hma - hma3` can be from the reference's; bars the bound cannot
//! certify are recomputed with the reference's arithmetic, so every trade is the reference's.
//!
//! The derivation of the bound, with every constant, is in `variants/src/rolling.md` (and
//! below, as this module's documentation).
//!
//! # Stages
//! One file each: `prepare` (the series transposed into lanes, once per sweep), `certify` (each
//! combo's plan, bound and threshold), `lanes` (the fast path and the certification test),
//! `fallback` (the reference's arithmetic on uncertified bars) and `events` (the event loop at
//! class changes); this file holds the scratch, the stats and the entry points.
//!
//! # Layout
//! The fast path runs 8 contiguous stretches of the series side by side, one per SIMD lane: the
//! close series is stored transposed once per sweep (`ct[loc * 8 + lane]`), so a window's oldest
//! and newest values are plain vector loads for all 8 stretches at once, and the recurrence's
//! loop-carried additions (one per WMA per bar) are spread over 8 independent lanes. Each lane
//! restarts its recurrences every few window lengths, which bounds the rounding they carry.
//! Both levels run tile by tile (about 1,024 positions), so the intermediate buffers are
//! tile-sized and stay in cache; per bar only a class byte is kept.
#![doc = include_str!("../rolling.md")]

pub(crate) mod certify;
mod events;
mod fallback;
mod lanes;
mod metrics;
mod prepare;
mod rows;

pub use certify::{Plan, UNDERFLOW_TERM};
pub use metrics::sweep_metrics;

use certify::*;
use events::*;
use fallback::*;
use lanes::*;
use prepare::*;
use rows::Rows;

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

/// Working memory of one worker: O(bars), whatever the windows (faer-style scratch); the fast
/// path's own buffers are one tile long, so they stay in cache.
#[derive(Debug, Default)]
pub struct Scratch {
    /// First-level differences `2a - b` and `3c - dd - e` of one tile and its lookback,
    /// transposed like `ct`.
    pub(super) d1: Rows,
    pub(super) d3: Rows,
    /// The reference's `d` of fallback stretches, in bar order, before its class goes into
    /// `signs`.
    pub(super) d: Vec<f64>,
    /// Fast `d` (or [`UNCERTIFIED`]) of one tile, transposed like `ct`.
    pub(super) dt: Rows,
    /// Per position (bar `k` of each lane), byte `l`: the class of lane `l`'s `d` ([`class`];
    /// the fast path writes 0 or 1, and NaN and fallback bars get theirs when their `d` is
    /// settled).
    pub(super) signs: Vec<u64>,
    /// Per lane, the positions whose bar may differ in class (NaN, `< 0`, `0`, `> 0`) from the
    /// bar before it: the only bars the event loop needs to see.
    pub(super) events: [Vec<usize>; LANES],
    /// Per lane, the bars the bound left uncertified, in order, but for the reference's NaN
    /// bars (collected tile by tile from `dt`).
    pub(super) unsettled: [Vec<usize>; LANES],
    /// Positions of the uncertified bars, in order.
    pub(super) fallback: Vec<usize>,
    /// Buffers for the reference's arithmetic on fallback stretches.
    pub(super) reference: prealloc::Scratch,
}

impl Scratch {
    /// Bytes this holds (capacity, so growth during the sweep counts).
    pub(super) fn bytes(&self) -> usize {
        let f = std::mem::size_of::<f64>();
        let v = |c: usize| c * f;
        v(self.d1.capacity())
            + v(self.d3.capacity())
            + v(self.d.capacity())
            + v(self.dt.capacity())
            + v(self.signs.capacity())
            + self.events.iter().map(|e| v(e.capacity())).sum::<usize>()
            + self
                .unsettled
                .iter()
                .map(|e| v(e.capacity()))
                .sum::<usize>()
            + v(self.fallback.capacity())
            + v(self.reference.n_bars() * prealloc::BUFFERS)
    }

    /// Sizes the per-bar buffers for `prep` (the fast path sizes its tiles per combo).
    pub(super) fn fit(&mut self, prep: &Prepared<'_>) {
        self.signs.resize(prep.q, 0);
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
    let plans = plans(&routes);
    let workers = workers(&routes, params, close.len(), pad(&plans), threads);
    let prep = Prepared::new(close, &plans, workers);
    let threads = Threads::Fixed(workers);
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

/// The plan of each combo that takes the fast path.
fn plans(routes: &[Route]) -> Vec<Option<Plan>> {
    routes
        .iter()
        .map(|r| match r {
            Route::Fast(p) => Some(*p),
            _ => None,
        })
        .collect()
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
/// The bound is `+inf` where the overflow guard fails: there the fast `d` may be anything (even
/// NaN or infinite) and the sweep takes the exact path. `None` when the combo does not take the
/// fast path (all NaN, or windows too long).
pub fn fast_d_with_bound(
    close: ValidClose<'_>,
    combo: &Combo,
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
    fast_d_on(Tier::best(), &prep, &plan, &mut scratch, Some(&mut dt));
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
