//! [`Threads`]: how many workers a sweep may use, the knob every [`SweepFn`](crate::SweepFn)
//! takes; its own file, so every variant names it without depending on the crate root.

/// Worker threads for variants that parallelise over combos; single-thread variants ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// All available cores; `rolling-rayon` (and so `fastest`) takes only as many of them as the
    /// sweep's size pays for ([`rolling::MIN_POSITIONS_PER_WORKER`]).
    ///
    /// [`rolling::MIN_POSITIONS_PER_WORKER`]: crate::rolling::MIN_POSITIONS_PER_WORKER
    Auto,
    /// Exactly this many (at least 1).
    Fixed(usize),
}
