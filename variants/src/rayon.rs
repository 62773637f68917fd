//! Parallel over combos: the SIMD + preallocated single-thread pipeline on a local rayon pool,
//! one [`Scratch`] per worker thread, combos handed out dynamically in descending cost order.
//!
//! Cost grows along the grid (it is proportional to the sum of a combo's windows), so a static
//! split would leave one thread with the long windows; largest-first dynamic handout balances it.

use crate::Threads;
use crate::prealloc::{Backtest, Scratch, run_combo_from};
use crate::simd::WmaKernel;
use ::rayon::{ThreadPool, ThreadPoolBuilder};
use hullsweep_kernel::{Combo, KernelError, SweepResult, ValidClose, window};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Worker count for a [`Threads`] request: `Auto` is every core the OS reports, `Fixed(0)` is 1.
pub fn thread_count(threads: Threads) -> usize {
    match threads {
        Threads::Auto => cores(),
        Threads::Fixed(n) => n.max(1),
    }
}

/// The cores the OS lets this process use, asked once per process.
///
/// `std::thread::available_parallelism` reads the cgroup's CPU quota from files on every call
/// (about 20 system calls: 80 µs on the lab's VM, 1.4 ms under strace), which on a small sweep
/// is a third of the sweep: `rolling-rayon` (and `fastest`) on 10,000 bars × 8 combos paid it on
/// each call where `rolling` did not. A process whose affinity or quota changes while it runs
/// keeps the first answer; `Threads::Fixed` is always obeyed as given.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Relative cost of a combo: the WMA work is proportional to the sum of its windows (each capped
/// at the series length, past which a pass is all NaN and nearly free), plus a per-bar constant.
pub fn combo_cost(combo: &Combo, n_bars: usize) -> usize {
    combo
        .iter()
        .map(|&w| window(w).min(n_bars))
        .fold(4, usize::saturating_add)
        .saturating_add(window(combo[3]).min(n_bars))
}

/// The pool of `workers` threads, built on first use and kept: starting threads costs tens of
/// microseconds, which a service answering many small sweeps would otherwise pay on every call.
fn pool(workers: usize) -> Option<Arc<ThreadPool>> {
    static POOLS: Mutex<Vec<(usize, Arc<ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == workers) {
        return Some(Arc::clone(p));
    }
    let p = Arc::new(ThreadPoolBuilder::new().num_threads(workers).build().ok()?);
    pools.push((workers, Arc::clone(&p)));
    Some(p)
}

/// Runs `work` once per worker on a [`team`] of `threads` workers and returns what each
/// returned. A worker pulls combo
/// indices from `next` until it gives `None`: the most expensive combos first, each to whichever
/// worker is free (dynamic scheduling), so workers finish together.
pub(crate) fn for_each_combo<R, W>(
    params: &[Combo],
    n_bars: usize,
    threads: Threads,
    work: W,
) -> Vec<R>
where
    R: Send,
    W: Fn(&dyn Fn() -> Option<usize>) -> R + Sync,
{
    let mut order: Vec<usize> = (0..params.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(combo_cost(&params[k], n_bars)));
    let slot = AtomicUsize::new(0);
    let next = || order.get(slot.fetch_add(1, Ordering::Relaxed)).copied();
    // A single combo cannot be split.
    let workers = thread_count(threads).min(params.len().max(1));
    team(workers, |_| work(&next))
}

/// Runs `work(w)` for each worker `w` of `workers` and returns what each returned, in order:
/// worker 0 is the calling thread and the others come from a pool of `workers - 1` (everything
/// runs on the caller when that is one, or when the OS refuses to start a pool).
///
/// The caller works rather than sleeping until a pool finishes: waking a sleeping thread costs
/// tens to hundreds of microseconds on a VM whose idle vCPU has halted, and a caller that works
/// has one fewer thread to wake. For the same reason it spins, briefly, for the last worker
/// before it blocks: the workers take their shares dynamically, so they finish within about
/// one share of each other. On the lab's VM a 2-thread default sweep returned about 220 µs
/// after its last worker finished when the caller slept in a pool of 2, and 30 µs this way.
///
/// Sweeps called from several threads at once share the pool: a caller whose pool worker is
/// still busy with another sweep takes every share itself, and then waits only for that worker
/// to find nothing left.
pub(crate) fn team<R, W>(workers: usize, work: W) -> Vec<R>
where
    R: Send,
    W: Fn(usize) -> R + Sync,
{
    let Some(pool) = (workers > 1).then(|| pool(workers - 1)).flatten() else {
        return vec![work(0)];
    };
    let done: Vec<Mutex<Option<R>>> = (0..workers).map(|_| Mutex::new(None)).collect();
    let left = AtomicUsize::new(workers - 1);
    pool.in_place_scope(|s| {
        for w in 1..workers {
            let (work, done, left) = (&work, &done, &left);
            s.spawn(move |_| {
                let r = work(w);
                *done[w].lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
                left.fetch_sub(1, Ordering::Release);
            });
        }
        let r = work(0);
        *done[0].lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
        // Bounded: a worker that panicked never counts down, and the scope re-raises its panic.
        let since = Instant::now();
        while left.load(Ordering::Acquire) > 0 && since.elapsed() < SPIN_FOR {
            std::hint::spin_loop();
        }
    });
    done.into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .expect("every worker ran")
        })
        .collect()
}

/// `f` of every item, in order, on a [`team`] of at most `workers`: each worker takes the next
/// item not yet taken until none is left, so they finish within about one item of each other.
pub(crate) fn team_map<T, R, F>(workers: usize, items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    let slots: Vec<Mutex<(Option<T>, Option<R>)>> = items
        .into_iter()
        .map(|t| Mutex::new((Some(t), None)))
        .collect();
    let next = AtomicUsize::new(0);
    team(workers.min(slots.len()).max(1), |_| {
        while let Some(slot) = slots.get(next.fetch_add(1, Ordering::Relaxed)) {
            let lock = || slot.lock().unwrap_or_else(PoisonError::into_inner);
            let item = lock().0.take().expect("each item is taken once");
            let r = f(item);
            lock().1 = Some(r);
        }
    });
    slots
        .into_iter()
        .map(|s| {
            let (_, r) = s.into_inner().unwrap_or_else(PoisonError::into_inner);
            r.expect("every item ran")
        })
        .collect()
}

/// How long the caller of [`team`] spins for the last worker before it sleeps.
const SPIN_FOR: Duration = Duration::from_millis(2);

/// Sweeps on `threads` workers, after validating the params and fee (the series comes validated).
///
/// If the OS refuses to start the pool, the sweep runs on the calling thread instead: same
/// results, only slower.
pub fn sweep(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
) -> Result<SweepResult, KernelError> {
    crate::batch(sweep_from, close, params, fee_pct, threads)
}

/// The [`SweepFn`](crate::SweepFn) entry: [`sweep`] resumed from `states` at bar `from`.
pub fn sweep_from(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    from: usize,
    states: &mut [Backtest],
) -> Result<(), KernelError> {
    crate::check_resume(close, params, fee_pct, from, states)?;
    let kernel = WmaKernel::best();
    let close = close.bars();
    let wma = move |x: &[f64], w: usize, o: &mut [f64], r: std::ops::Range<usize>| {
        kernel.wma_range(x, w, o, r)
    };
    let start: &[Backtest] = states;
    // Each worker owns one scratch for the whole sweep.
    let per_worker = for_each_combo(params, close.len(), threads, |next| {
        let mut scratch = Scratch::new(close.len());
        let mut done = Vec::new();
        while let Some(k) = next() {
            let mut bt = start[k];
            run_combo_from(
                close,
                &params[k],
                fee_pct,
                scratch.as_mut_slice(),
                wma,
                from,
                &mut bt,
            );
            done.push((k, bt));
        }
        done
    });
    for (k, bt) in per_worker.into_iter().flatten() {
        states[k] = bt;
    }
    Ok(())
}
