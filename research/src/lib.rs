//! Research statistics over a `bars x combos` returns matrix: folds with their sufficient
//! statistics, and CSCV with the probability of backtest overfitting (docs/research.md).
//!
//! Everything starts from [`FoldStats`]: per fold and combo, the shifted sum and sum of squares
//! of the returns, built from rows pushed in any order ([`FoldStatsBuilder`]) or from a whole
//! matrix. [`cscv`] then ranks the combos in every split of the folds into two halves (Bailey,
//! Borwein, Lopez de Prado and Zhu, "The probability of backtest overfitting", Journal of
//! Computational Finance 20(4), 2017) without ever concatenating returns. `reference/pbo_ref.py`
//! is the same definitions in numpy, and the tests hold this crate to it.
//!
//! Beside CSCV: [`deflated_sharpe`] (the best of N Sharpe ratios deflated for the N trials and
//! non-normal returns) and [`walk_forward_select`] (the best train combo of each walk-forward
//! window, from the sums of [`WalkSpec::segments`]); `reference/research_ref.py` is their oracle.
//!
//! # Example
//!
//! [`pbo`] over a small row-major `bars x combos` matrix (any strategy's bar returns; here a
//! deterministic pseudo-random one), cut into 8 folds, ranking combos by Sharpe ratio:
//!
//! ```
//! use hullsweep_research::{Metric, pbo};
//!
//! let (bars, combos, folds) = (240, 6, 8);
//! // Row t, column j: bar t's return of combo j.
//! let returns: Vec<f64> = (0..bars * combos)
//!     .map(|i| ((i as f64 * 0.754_877_666).fract() - 0.5) * 0.01)
//!     .collect();
//! let result = pbo(&returns, bars, combos, folds, Metric::Sharpe, 1)?;
//! assert_eq!(result.splits.len(), 70); // C(8, 4) ways to split 8 folds into two halves
//! assert!((0.0..=1.0).contains(&result.pbo));
//! println!("PBO {:.2}, P(OOS loss) {:.2}", result.pbo, result.prob_oos_loss);
//! # Ok::<(), hullsweep_research::ResearchError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod columns;
mod cscv;
mod degradation;
mod dsr;
mod error;
mod folds;
mod input;
mod lanes;
mod metric;
mod moments;
mod normal;
mod passes;
mod splits;
mod walk_forward;

pub use columns::{ColumnSums, check_segments};
pub use cscv::{Cscv, Split, cscv, pbo};
pub use degradation::{Degradation, degradation};
pub use dsr::{DeflatedSharpe, deflated_sharpe, deflated_sharpe_of_shape, select_best};
pub use error::ResearchError;
pub use folds::{
    FoldStats, FoldStatsBuilder, MAX_FOLDS, binomial, check_fold_count, check_folds, fold_bounds,
};
pub use input::{MAX_ABS, check_shape, check_value};
pub use lanes::LANES;
pub use metric::Metric;
pub use moments::Moments;
pub use normal::{normal_cdf, normal_quantile};
pub use passes::{OosPasses, PASSES, Shape, ShapePasses};
pub use splits::{folds_of, splits};
pub use walk_forward::{OosSummary, Selection, WalkSpec, Window, oos_summary, walk_forward_select};
