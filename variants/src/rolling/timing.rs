//! `rolling`'s optional clock: where a sweep's time goes, stage by stage, for the lab's breakdown
//! (`hullsweep lab --breakdown`). The sweep is generic over [`Clock`]; every plain entry point
//! runs it with [`NoClock`], whose marks are `()` and whose laps are empty, so they compile to
//! the untimed code. Only [`sweep_from_timed`](super::sweep_from_timed) reads the time.

use std::time::{Duration, Instant};

/// A stage of a rolling sweep that [`Timings`] times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The entry's checks of the params, the fee, `from` and the states.
    Checks,
    /// Each combo's route and plan (its bound coefficient), and the worker count.
    Plan,
    /// The prepared series: transposed lanes, block maxima, NaN list.
    Prepare,
    /// The combos, from handing out the first to the last worker's return (wall time).
    Combos,
    /// The fast path of a combo: both levels' recurrences and the certification test.
    Fast,
    /// The uncertified bars collected and recomputed with the reference's arithmetic.
    Fallback,
    /// NaN masking, the class changes and the event loop at them.
    Events,
    /// A combo run whole on the SIMD pipeline (windows too long for the bound).
    Direct,
}

/// What a sweep does with the time: nothing ([`NoClock`]) or add it up ([`Timings`]).
pub(crate) trait Clock: Default {
    /// A point in time, or nothing.
    type Mark: Copy;
    /// Now.
    fn mark(&self) -> Self::Mark;
    /// Adds the time since `since` to `stage`.
    fn lap(&mut self, stage: Stage, since: Self::Mark);
    /// Adds a worker's stage times to these.
    fn merge(&mut self, worker: &Self);
    /// Notes how many workers the combos run on.
    fn workers(&mut self, n: usize);
}

/// The clock of every untimed sweep: no field, no call to the OS.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NoClock;

impl Clock for NoClock {
    type Mark = ();

    #[inline(always)]
    fn mark(&self) {}

    #[inline(always)]
    fn lap(&mut self, _: Stage, _: ()) {}

    #[inline(always)]
    fn merge(&mut self, _: &Self) {}

    #[inline(always)]
    fn workers(&mut self, _: usize) {}
}

/// Where one timed rolling sweep's time went. `checks`, `plan` and `combos` are the calling
/// thread's wall time; `prepare`, `fast`, `fallback`, `events` and `direct` are the workers'
/// busy time in each stage, summed over the workers (each block is prepared by the first worker
/// to need it, inside `combos`; on `workers` workers they add up to at most `workers × combos`,
/// and what is left is each worker's scratch, the pool's start and the waits for each other).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// The entry's checks of the params, the fee, `from` and the states.
    pub checks: Duration,
    /// Routes and plans over the whole buffer (each combo's bound coefficient and restart
    /// period) and the worker count; each block's own routes are part of its `prepare`.
    pub plan: Duration,
    /// Busy time preparing the blocks the workers share (transposed lanes, block maxima, NaN
    /// bars), all workers.
    pub prepare: Duration,
    /// The combos on the workers, wall time.
    pub combos: Duration,
    /// Busy time in the fast path (both levels and the certification test), all workers.
    pub fast: Duration,
    /// Busy time collecting and recomputing uncertified bars (the fallback), all workers.
    pub fallback: Duration,
    /// Busy time in NaN masking, class changes and the event loop, all workers.
    pub events: Duration,
    /// Busy time in combos run whole on the SIMD pipeline, all workers.
    pub direct: Duration,
    /// Workers the combos ran on.
    pub workers: usize,
}

impl Timings {
    fn slot(&mut self, stage: Stage) -> &mut Duration {
        match stage {
            Stage::Checks => &mut self.checks,
            Stage::Plan => &mut self.plan,
            Stage::Prepare => &mut self.prepare,
            Stage::Combos => &mut self.combos,
            Stage::Fast => &mut self.fast,
            Stage::Fallback => &mut self.fallback,
            Stage::Events => &mut self.events,
            Stage::Direct => &mut self.direct,
        }
    }
}

impl Clock for Timings {
    type Mark = Instant;

    fn mark(&self) -> Instant {
        Instant::now()
    }

    fn lap(&mut self, stage: Stage, since: Instant) {
        *self.slot(stage) += since.elapsed();
    }

    fn merge(&mut self, w: &Self) {
        self.prepare += w.prepare;
        self.fast += w.fast;
        self.fallback += w.fallback;
        self.events += w.events;
        self.direct += w.direct;
    }

    fn workers(&mut self, n: usize) {
        self.workers = n;
    }
}
