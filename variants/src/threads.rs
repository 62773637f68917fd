//! [`Threads`]: how many workers a sweep may use, the knob every [`SweepFn`](crate::SweepFn)
//! takes, and how workers' results come back in combo order; its own file, so every variant
//! names them without depending on the crate root.

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

/// Workers' `(combo, result)` lists as one list in combo order.
pub(crate) fn in_combo_order<R>(combos: usize, per_worker: Vec<Vec<(usize, R)>>) -> Vec<R> {
    let mut slots: Vec<Option<R>> = (0..combos).map(|_| None).collect();
    for (k, r) in per_worker.into_iter().flatten() {
        slots[k] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.expect("every combo is run by one worker"))
        .collect()
}
