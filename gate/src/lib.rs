//! The equivalence gate: any implementation's per-combo results, metrics and trade log against
//! the numba reference (live through `.venv`, or the golden fixtures in `gate/tests/golden/`).
//!
//! The rule (docs/gate.md): every combo's trade count equal and `|pnl - pnl_ref| <= 1e-6`;
//! bit-identity is reported beside it, because the reference-arithmetic variants must reach it.

#![deny(missing_docs)]

pub mod bless;
pub mod compare;
pub mod fixture;
pub mod golden;
pub mod metrics;
pub mod numba;
pub mod suite;
pub mod trades;

pub use compare::{GateReport, PNL_TOLERANCE, compare, gate, table};
pub use fixture::fixture_path;
