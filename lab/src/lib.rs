//! The lab behind `hullsweep lab`: numba and every variant timed side by side and gated, plus its
//! sections (live pushes, scale to 1e9 bars, `fastest`'s choices, rolling, the metrics' cost).
//!
//! Every number it writes is measured in one run, on the machine [`machine::Machine`] names.

#![deny(missing_docs)]

pub mod fastest;
pub mod live;
pub mod machine;
pub mod marked;
pub mod metrics;
pub mod report;
pub mod rolling;
pub mod scale;
pub mod table;
