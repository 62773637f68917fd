//! `rolling`'s sweep of a buffer a block of bars at a time on its workers, with no barrier
//! between blocks: a worker moves on to the next block while the others finish this one.
//!
//! # Why this finishes, and gives the blocked sweep's bits
//! The work is the items `(block b, combo k)`, handed out once each from one counter in block
//! order (`b`-major). An item waits for two things only, both about items handed out before it:
//! its combo's item in block `b - 1` (each combo's blocks run in order, on its one state), and
//! the slot its block's preparation goes into, which it takes over once block `b - SLOTS` has
//! finished. So the earliest unfinished item never waits, and every item finishes. A combo's
//! state passes from block to block through its own cell, released by one item and acquired by
//! the next (the `done` counter's Release/Acquire), so each combo runs exactly the sweep of
//! [`sweep_clocked`](super::sweep)'s blocks one after another: the same bits on any number of
//! workers.

use super::certify::{Plan, Route, plans};
use super::events::run_fast;
use super::prepare::{Prepared, pad};
use super::scratch::{Scratch, Stats};
use super::timing::{Clock, Stage};
use crate::prealloc::{self, Backtest};
use crate::simd::{Tier, WmaKernel};
use hullsweep_kernel::Combo;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Blocks prepared at once: the one the workers finish and the next, so a worker that is done
/// with a block finds the next one ready or prepares it while the other works.
const SLOTS: usize = 2;

/// What every combo of one block reads: its slice of the buffer prepared, and each combo's
/// route over that slice.
struct Block<'a> {
    prep: Prepared<'a>,
    routes: Vec<Route>,
    /// The first bar of the slice the event loop steps (the bars before it are lookback).
    from: usize,
}

/// A slot: the block it holds (its index), shared by the workers running combos over it.
type Slot<'a> = Mutex<Option<(usize, Arc<Block<'a>>)>>;

/// A sweep over `close` in `blocks`, each run from its first bar with `lookback` bars before it.
pub(super) struct Job<'a, 'p> {
    pub close: &'a [f64],
    pub params: &'p [Combo],
    pub fee_pct: f64,
    pub tier: Tier,
    pub kernel: WmaKernel,
    pub blocks: Vec<Range<usize>>,
    pub lookback: usize,
}

impl<'a> Job<'a, '_> {
    /// Block `b`'s slice and its lookback, prepared (on the calling worker alone: the others
    /// are busy with the block before).
    fn prepare(&self, b: usize) -> Block<'a> {
        let block = &self.blocks[b];
        let first = block.start.saturating_sub(self.lookback);
        let close = &self.close[first..block.end];
        let routes: Vec<Route> = self
            .params
            .iter()
            .map(|c| Plan::route(c, close.len()))
            .collect();
        let prep = Prepared::new(close, &plans(&routes), 1);
        Block {
            prep,
            routes,
            from: block.start - first,
        }
    }

    /// Runs every combo over every block on `workers` workers, each combo from its state in
    /// `states` (left there), timed by `clock`; the workers' stats summed.
    pub(super) fn run<C: Clock + Send>(
        &self,
        workers: usize,
        states: &mut [Backtest],
        clock: &mut C,
    ) -> Stats {
        let combos = self.params.len();
        let total = self.blocks.len() * combos;
        let span =
            self.blocks.last().map_or(0, |b| b.end) - self.blocks.first().map_or(0, |b| b.start);
        // Most expensive first within each block, as `rayon::for_each_combo` orders them.
        let mut order: Vec<usize> = (0..combos).collect();
        order.sort_by_key(|&k| std::cmp::Reverse(crate::rayon::combo_cost(&self.params[k], span)));
        let next = AtomicUsize::new(0);
        // Per combo: its blocks done. Per block: its combos done.
        let done: Vec<AtomicUsize> = (0..combos).map(|_| AtomicUsize::new(0)).collect();
        let finished: Vec<AtomicUsize> = (0..self.blocks.len())
            .map(|_| AtomicUsize::new(0))
            .collect();
        let cells: Vec<Mutex<Backtest>> = states.iter().map(|s| Mutex::new(*s)).collect();
        let slots: Vec<Slot<'a>> = (0..SLOTS).map(|_| Mutex::new(None)).collect();
        let prep_bytes = AtomicUsize::new(0);
        // Set by a worker that panics, so the others stop waiting for what it will never finish
        // (the team then re-raises the panic) instead of waiting forever.
        let abandoned = AtomicBool::new(false);
        // Block `b`, prepared by the first worker to need it once its slot's last block is done.
        let block = |b: usize, clock: &mut C| -> Arc<Block<'a>> {
            loop {
                {
                    let mut slot = slots[b % SLOTS]
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    let ready = match &*slot {
                        Some((held, data)) if *held == b => return Arc::clone(data),
                        Some((held, _)) => {
                            *held + SLOTS == b && finished[*held].load(Ordering::Acquire) == combos
                        }
                        None => b < SLOTS,
                    };
                    if ready || abandoned.load(Ordering::Relaxed) {
                        let t = clock.mark();
                        let data = Arc::new(self.prepare(b));
                        clock.lap(Stage::Prepare, t);
                        prep_bytes.fetch_max(data.prep.bytes(), Ordering::Relaxed);
                        *slot = Some((b, Arc::clone(&data)));
                        return data;
                    }
                }
                backoff();
            }
        };
        let per_worker = crate::rayon::team(workers, |_| {
            let _guard = Abandon(&abandoned);
            let mut scratch = Scratch::default();
            let mut direct = prealloc::Scratch::new(0);
            let mut stats = Stats::default();
            let mut clock = C::default();
            let mut fitted = usize::MAX;
            'items: loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total || abandoned.load(Ordering::Relaxed) {
                    break;
                }
                let (b, k) = (i / combos, order[i % combos]);
                let data = block(b, &mut clock);
                if fitted != b {
                    scratch.fit(&data.prep);
                    fitted = b;
                }
                while done[k].load(Ordering::Acquire) != b {
                    if abandoned.load(Ordering::Relaxed) {
                        break 'items;
                    }
                    backoff();
                }
                let mut bt = cells[k].lock().unwrap_or_else(PoisonError::into_inner);
                run_combos(
                    &data.prep,
                    self.params,
                    &data.routes,
                    self.fee_pct,
                    self.tier,
                    self.kernel,
                    &mut scratch,
                    &mut direct,
                    &mut stats,
                    k,
                    data.from,
                    &mut bt,
                    &mut clock,
                );
                drop(bt);
                done[k].store(b + 1, Ordering::Release);
                finished[b].fetch_add(1, Ordering::Release);
            }
            stats.memory_bytes = (scratch.bytes() + direct.n_bars() * prealloc::BUFFERS * 8) as u64;
            (stats, clock)
        });
        let mut stats = Stats {
            memory_bytes: (SLOTS * prep_bytes.into_inner()) as u64,
            ..Stats::default()
        };
        for (s, c) in per_worker {
            stats.add(&s);
            clock.merge(&c);
        }
        for (state, cell) in states.iter_mut().zip(cells) {
            *state = cell.into_inner().unwrap_or_else(PoisonError::into_inner);
        }
        stats
    }
}

/// Runs combo `k` with one worker's scratch into its state `bt`, timed by `clock`.
#[allow(clippy::too_many_arguments)]
fn run_combos<C: Clock>(
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
    clock: &mut C,
) {
    match &routes[k] {
        // Every bar of the buffer is NaN: the event loop would only reset `prev`. (The combo
        // counts in `Stats` are taken once over the whole buffer, by the caller.)
        Route::AllNan => {
            if from < prep.close.len() {
                bt.step(prep.close[from], f64::NAN, fee_pct);
            }
        }
        Route::Fast(plan) => run_fast(
            prep, plan, fee_pct, tier, kernel, scratch, stats, from, bt, clock,
        ),
        Route::Direct => {
            let t = clock.mark();
            direct.reserve(prep.close.len());
            prealloc::run_combo_from(
                prep.close,
                &params[k],
                fee_pct,
                direct.as_mut_slice(),
                |x, w, o, r| kernel.wma_range(x, w, o, r),
                from,
                bt,
            );
            clock.lap(Stage::Direct, t);
        }
    }
}

/// Marks the sweep abandoned when its worker unwinds from a panic.
struct Abandon<'a>(&'a AtomicBool);

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// A short wait for another worker: spin a little, then give the core away (on a 2-core VM
/// the other worker may need this one's core to finish what is waited for).
fn backoff() {
    for _ in 0..64 {
        std::hint::spin_loop();
    }
    std::thread::yield_now();
}

/// Every combo's route over a buffer of `n_bars` bars, and the lookback positions the lanes
/// would reserve for them (the worker count's cost model takes both over the whole buffer).
pub(super) fn routes_and_pad(params: &[Combo], n_bars: usize) -> (Vec<Route>, usize) {
    let routes: Vec<Route> = params.iter().map(|c| Plan::route(c, n_bars)).collect();
    let pad = pad(&plans(&routes));
    (routes, pad)
}
