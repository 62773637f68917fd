//! hullsweep: the HMA/HMA3 stop-and-reverse sweep as a library, with its reference kernel,
//! fast variants, the numba equivalence gate and the lab behind the `hullsweep` CLI.

#![deny(missing_docs)]

pub use hullsweep_kernel as kernel;
pub use hullsweep_kernel::{Combo, KernelError, SweepResult};
pub use hullsweep_variants as variants;
pub use hullsweep_variants::{Threads, Variant};

pub mod csv_io;
pub mod datasets;
pub mod fastest_lab;
pub mod gate;
pub mod io;
pub mod lab;
pub mod live_lab;
pub mod machine;
pub mod marked;
pub mod metrics_lab;
pub mod numba;
pub mod parquet_io;
pub mod rolling_lab;
pub mod scale_lab;
pub mod source;
pub mod trade_log;
