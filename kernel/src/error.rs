//! Typed errors for every bad input the spec lists, each naming the offending value and place.

use std::fmt;

/// Why a sweep's inputs were refused.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelError {
    /// The series has no bars.
    EmptySeries,
    /// A bar is `<= 0` or infinite (NaN is allowed: it is a missing bar).
    BadPrice {
        /// Its index in the series.
        index: usize,
        /// The price.
        value: f64,
    },
    /// A window is `< 1`.
    BadWindow {
        /// The combo's index in the params.
        combo: usize,
        /// The window's name ([`WINDOW_NAMES`](crate::WINDOW_NAMES)).
        field: &'static str,
        /// The window.
        value: i64,
    },
    /// The fee is NaN or infinite.
    BadFee(f64),
    /// A params array that is not `n x 6`.
    ParamsShape {
        /// What is wrong with it.
        detail: String,
    },
    /// A grid spec that cannot expand (`lo > hi`, `lo < 1`, `k < 1`, ...).
    BadGrid {
        /// Every problem with it.
        detail: String,
    },
    /// A combo index past the params (a trade log or a live run asked for a combo that is not
    /// there).
    BadCombo {
        /// The index asked for.
        index: usize,
        /// How many combos there are.
        n_combos: usize,
    },
    /// A generator argument out of range (no bars, a negative or infinite sigma).
    BadGenerator {
        /// Which argument, and why.
        detail: String,
    },
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::EmptySeries => write!(f, "the close series is empty"),
            KernelError::BadPrice { index, value } => write!(
                f,
                "bad price {value} at index {index}: prices must be finite and > 0 (NaN marks a missing bar)"
            ),
            KernelError::BadWindow {
                combo,
                field,
                value,
            } => write!(
                f,
                "bad window {field} = {value} in combo {combo}: every window must be >= 1"
            ),
            KernelError::BadFee(fee) => write!(f, "bad fee {fee}: the fee must be a finite number"),
            KernelError::ParamsShape { detail } => {
                write!(f, "params must be an n x 6 array of int64: {detail}")
            }
            KernelError::BadGrid { detail } => write!(f, "bad grid: {detail}"),
            KernelError::BadCombo { index, n_combos } => write!(
                f,
                "bad combo {index}: there are {n_combos} combos, numbered 0 to {}",
                n_combos.saturating_sub(1)
            ),
            KernelError::BadGenerator { detail } => write!(f, "bad generator argument: {detail}"),
        }
    }
}

impl std::error::Error for KernelError {}
