//! One pass of any hullsweep variant that gives everything a researcher needs to judge a sweep:
//! the per-fold report, CSCV and the probability of backtest overfitting, the deflated Sharpe
//! ratio and walk-forward selection (docs/research.md).
//!
//! [`fold_sweep`] runs the variant once, folding each combo's bar returns into per-fold sums as
//! they are produced ([`FoldSweeper`] the same fed in pieces, in bounded memory); [`validate`]
//! adds the statistics of hullsweep-research over those sums, running only the few combos it
//! selects again for their returns.
//!
//! # Example
//!
//! [`validate`] a small sweep: 8 CSCV folds ranked by Sharpe ratio, no walk-forward, no
//! returns written out:
//!
//! ```
//! use hullsweep_kernel::{DEFAULT_FEE_PCT, GridSpec, ValidClose, gbm, grid};
//! use hullsweep_research::Metric;
//! use hullsweep_validate::{Plan, validate};
//! use hullsweep_variants::{Threads, Variant};
//!
//! let close = gbm(2_000, 1, 0.01)?;
//! let params = grid("6:60:8".parse::<GridSpec>()?)?;
//! let plan = Plan { folds: 8, metric: Metric::Sharpe, walk: None, oos_returns: false };
//! let v = validate(
//!     Variant::fastest(),
//!     ValidClose::new(&close)?,
//!     &params,
//!     DEFAULT_FEE_PCT,
//!     Threads::Auto,
//!     plan,
//!     None,
//! )?;
//! assert_eq!(v.sweep.combos().len(), params.len());
//! assert_eq!(v.cscv.splits.len(), 70); // C(8, 4)
//! let (pbo, dsr) = (v.cscv.pbo, v.deflated.dsr);
//! println!("PBO {pbo:.2}, deflated Sharpe ratio {dsr:.3} of combo {}", v.deflated.combo);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
mod fold_sweep;
mod replay;
mod rerun;
mod sweeper;
mod validation;

pub use error::ValidateError;
pub use fold_sweep::{ColumnSink, ComboSummary, FoldRow, FoldSpec, FoldSweep};
pub use replay::{InMemory, Replay};
pub use sweeper::{FoldSweeper, PIECE_BARS, fold_sweep};
pub use validation::{Plan, Validation, WalkForward, validate, validate_replay};
