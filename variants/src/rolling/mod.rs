//! `rolling`: the exact O(1)-per-bar variant. Every WMA is a rolling recurrence, with a proven
//! bound on how far its `d = hma - hma3` can be from the reference's; bars the bound cannot
//! certify are recomputed with the reference's arithmetic, so every trade is the reference's.
//!
//! The derivation of the bound, with every constant, is in `variants/src/rolling.md` (and
//! below, as this module's documentation).
//!
//! # Stages
//! One file each: `prepare` (the series transposed into lanes, once per block of bars),
//! `certify` (each combo's plan, bound and threshold), `lanes` (the fast path and the
//! certification test; `dispatch` compiles it per tier, `signs` makes its sign bytes per tier),
//! `fallback` (the reference's arithmetic on uncertified bars) and `events` (the event loop at
//! class changes); `layout` holds the lane constants, `scratch` the scratch and the stats,
//! `sweep` the entry points, `pipeline` the blocks on the workers (no barrier between blocks),
//! `probe` the views for tests and the lab and `timing` the optional clock of the lab's
//! breakdown; this file declares them and re-exports what callers use.
//!
//! # Layout
//! The fast path runs 8 contiguous stretches of the series side by side, one per SIMD lane: the
//! close series is stored transposed once per block (`ct[loc * 8 + lane]`), so a window's oldest
//! and newest values are plain vector loads for all 8 stretches at once, and the recurrence's
//! loop-carried additions (one per WMA per bar) are spread over 8 independent lanes. Each lane
//! restarts its recurrences every few window lengths, which bounds the rounding they carry.
//! Both levels run tile by tile (about 1,024 positions), so the intermediate buffers are
//! tile-sized and stay in cache; per bar only a class byte is kept. A long series is swept a
//! block of [`BLOCK_BARS`] at a time, every combo over one block before the next, so the block's
//! lanes stay in a core's cache across the combos.
#![doc = include_str!("../rolling.md")]

pub(crate) mod certify;
mod dispatch;
mod events;
mod fallback;
mod lanes;
mod layout;
mod metrics;
mod pipeline;
mod prepare;
mod probe;
mod rows;
mod scratch;
mod signs;
mod sweep;
mod timing;

pub use certify::{Plan, UNDERFLOW_TERM};
pub use layout::LANES;
pub(crate) use metrics::run_loops;
pub use metrics::sweep_metrics;
pub use probe::{FastD, bound_parts, fast_d_with_bound};
pub use scratch::{Scratch, Stats};
pub use sweep::{
    BLOCK_BARS, MIN_POSITIONS_PER_WORKER, planned_workers, sweep, sweep_from, sweep_from_in_blocks,
    sweep_from_timed, sweep_from_with_stats, sweep_par, sweep_par_from, sweep_with_stats,
};
pub use timing::Timings;
