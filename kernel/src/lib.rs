//! The reference HMA/HMA3 stop-and-reverse kernel: a line-by-line port of the numba kernel in
//! `docs/kernel.md`, readable and dependency-free. It is the oracle every variant is gated against.
//!
//! The arithmetic is deliberately naive and in the spec's order (one multiply, then one add, per
//! window element; a fresh array per pass), because bit-identity with numba is the point.
//!
//! # Example
//!
//! [`sweep`] runs every combo over a series; [`run_combo_returns`] gives one combo's bar
//! returns (the equity change of each bar), which the research statistics read:
//!
//! ```
//! use hullsweep_kernel::{DEFAULT_FEE_PCT, GridSpec, gbm, grid, run_combo_returns, sweep};
//!
//! // 2,000 bars of the built-in GBM generator (seed 1, sigma 0.01); NaN would mark a missing bar.
//! let close = gbm(2_000, 1, 0.01)?;
//! // 8 HMA lengths from 6 to 60, each expanded to the six windows of docs/kernel.md.
//! let params = grid("6:60:8".parse::<GridSpec>()?)?;
//! let result = sweep(&close, &params, DEFAULT_FEE_PCT)?;
//! assert_eq!(result.len(), params.len());
//! println!("combo 0 {:?}: pnl {:.3}% over {} trades", params[0], result.pnl[0], result.trades[0]);
//!
//! let returns = run_combo_returns(&close, &params[0], DEFAULT_FEE_PCT);
//! assert_eq!(returns.len(), close.len());
//! # Ok::<(), hullsweep_kernel::KernelError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod data;
mod detmath;
mod error;
mod gbm;
mod metrics;
mod reference;
mod returns;
mod trades;
mod types;
mod validate;

pub use data::{
    DEFAULT_BARS, DEFAULT_GRID, DEFAULT_SEED, DEFAULT_SIGMA, Grid, GridSpec, default_close,
    default_params, derive_windows, derive_windows2, fnv1a64, grid, grid2,
};
pub use error::KernelError;
pub use gbm::{GbmStream, Pairs, gbm};
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
