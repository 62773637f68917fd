//! One pass of any hullsweep variant that gives everything a researcher needs to judge a sweep:
//! the per-fold report, CSCV and the probability of backtest overfitting, the deflated Sharpe
//! ratio and walk-forward selection (docs/research.md).
//!
//! [`fold_sweep`] runs the variant once, folding each combo's bar returns into per-fold sums as
//! they are produced ([`FoldSweeper`] the same fed in pieces, in bounded memory); [`validate`] adds the statistics of hullsweep-research over those sums,
//! re-running only the few combos it selects (with the kernel, the oracle) for their returns.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
mod fold_sweep;
mod sweeper;
mod validation;

pub use error::ValidateError;
pub use fold_sweep::{ColumnSink, ComboSummary, FoldRow, FoldSpec, FoldSweep};
pub use sweeper::{FoldSweeper, fold_sweep};
pub use validation::{Plan, Validation, WalkForward, validate};
