//! The one error type of hullsweep-validate: the kernel's or the research crate's refusal,
//! each naming the value at fault, or the series' reader's.

use hullsweep_kernel::KernelError;
use hullsweep_research::ResearchError;

/// Why a fold sweep or a validation refused its input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ValidateError {
    /// The series, combos, fee or thread count (the kernel's checks).
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// The folds, the walk-forward spec or the statistics (the research crate's checks).
    #[error(transparent)]
    Research(#[from] ResearchError),
    /// Reading the series (a [`Replay`](crate::Replay) of a file), its message naming the file.
    #[error(transparent)]
    Read(Box<dyn std::error::Error + Send + Sync + 'static>),
}
