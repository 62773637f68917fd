//! The reference HMA/HMA3 stop-and-reverse kernel: a line-by-line port of the numba kernel in
//! `docs/kernel.md`, readable and dependency-free. It is the oracle every variant is gated against.
//!
//! The arithmetic is deliberately naive and in the spec's order (one multiply, then one add, per
//! window element; a fresh array per pass), because bit-identity with numba is the point.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod data;
mod error;
mod metrics;
mod reference;
mod returns;
mod trades;
mod types;
mod validate;

pub use data::{
    DEFAULT_BARS, DEFAULT_GRID, DEFAULT_SEED, DEFAULT_SIGMA, GbmStream, Grid, GridSpec,
    default_close, default_params, derive_windows, derive_windows2, fnv1a64, gbm, grid, grid2,
};
pub use error::KernelError;
pub use metrics::{
    METRIC_NAMES, Metrics, Tally, Value, backtest_metrics, run_combo_metrics, sweep_metrics,
    sweep_metrics_valid,
};
pub use reference::{backtest, hma, hma3, run_combo, sweep, sweep_valid, wma};
pub use returns::{backtest_returns, run_combo_returns};
pub use trades::{Event, Trade, backtest_events, check_combos, trades};
pub use types::{Combo, DEFAULT_FEE_PCT, SweepResult, WINDOW_NAMES, combos_from_flat, window};
pub use validate::{
    ValidClose, ValidSeries, validate, validate_close, validate_fee, validate_params,
    validate_params_and_fee,
};
