//! The choices every function takes by name (the variant, the thread count), parsed once with
//! one wording for every error.

use hullsweep_variants::{Threads, Variant};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Every variant's name, as variants() lists them.
pub(crate) fn names() -> Vec<&'static str> {
    Variant::ALL.iter().map(|v| v.name()).collect()
}

pub(crate) fn parse_variant(variant: &str) -> PyResult<Variant> {
    Variant::from_name(variant).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown variant {variant:?}; one of {} or \"fastest\"",
            names().join(", ")
        ))
    })
}

pub(crate) fn parse_threads(threads: Option<usize>) -> PyResult<Threads> {
    match threads {
        None => Ok(Threads::Auto),
        Some(0) => Err(PyValueError::new_err("threads must be at least 1, got 0")),
        Some(n) => Ok(Threads::Fixed(n)),
    }
}
