//! The shared vocabulary of the kernel: a combo's six windows and their names, the default fee,
//! a sweep's per-combo result, and the conversions from flat arrays and windows to indices.

use crate::error::KernelError;

/// Six WMA windows per combo, in the spec's order:
/// `[hma_n, hma_half, hma_sqrt, hma3_m, hma3_half, hma3_third]`.
pub type Combo = [i64; 6];

/// Names of the six fields of a [`Combo`], in order (used in error messages and CSV headers).
pub const WINDOW_NAMES: [&str; 6] = [
    "hma_n",
    "hma_half",
    "hma_sqrt",
    "hma3_m",
    "hma3_half",
    "hma3_third",
];

/// Round-trip fee in percentage points per closed trade.
pub const DEFAULT_FEE_PCT: f64 = 0.09;

/// Per-combo outputs of a sweep, in the order of the input combos.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepResult {
    /// Total return of each combo in percent, net of fees (`docs/kernel.md`).
    pub pnl: Vec<f64>,
    /// Closed trades of each combo.
    pub trades: Vec<i64>,
}

impl SweepResult {
    /// A result of `n` combos, all zero; variants that write by index start from this.
    pub fn zeroed(n: usize) -> Self {
        SweepResult {
            pnl: vec![0.0; n],
            trades: vec![0; n],
        }
    }

    /// Combos in the result.
    pub fn len(&self) -> usize {
        self.pnl.len()
    }

    /// No combos.
    pub fn is_empty(&self) -> bool {
        self.pnl.is_empty()
    }
}

/// Reshapes a flat row-major `n x 6` array (as read from `.npy` or the wire) into combos.
pub fn combos_from_flat(flat: &[i64]) -> Result<Vec<Combo>, KernelError> {
    if !flat.len().is_multiple_of(6) {
        return Err(KernelError::ParamsShape {
            detail: format!("{} values is not a multiple of 6", flat.len()),
        });
    }
    Ok(flat
        .chunks_exact(6)
        .map(|c| [c[0], c[1], c[2], c[3], c[4], c[5]])
        .collect())
}

/// Converts a window that [`validate_params`](crate::validate_params) accepted to `usize`. A
/// window too large for the address space is longer than any series, which gives the same
/// all-NaN output.
pub fn window(w: i64) -> usize {
    usize::try_from(w).unwrap_or(usize::MAX)
}
