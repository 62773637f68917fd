//! The equivalence gate: any implementation's per-combo results, metrics and trade log against
//! the numba reference (live through `.venv`, or the golden fixtures in `gate/tests/golden/`).
//!
//! The rule (docs/gate.md): every combo's trade count equal and `|pnl - pnl_ref| <= 1e-6`;
//! bit-identity is reported beside it, because the reference-arithmetic variants must reach it.
//!
//! # Example
//!
//! [`gate`] a variant on every dataset of the suite against the checked-in golden fixtures
//! ([`golden::oracle`]; no Python needed), and print the [`table`]:
//!
//! ```
//! use hullsweep_data::suite;
//! use hullsweep_gate::{gate, golden, table};
//! use hullsweep_variants::{Threads, Variant};
//!
//! let v = Variant::fastest();
//! let sweep = |d: &hullsweep_data::Dataset| v.sweep(&d.close, &d.params, d.fee, Threads::Auto);
//! let reports = gate(&suite(), sweep, golden::oracle)?;
//! println!("{}", table(&format!("{} vs golden", v.name()), &reports));
//! assert!(reports.iter().all(|r| r.passes() && r.bit_identical()));
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! Against numba live, the oracle is a run of the reference in the project's `.venv`
//! ([`numba::run`]):
//!
//! ```no_run
//! // no_run: needs Python with numba (`.venv`, created on first use, about a minute).
//! use hullsweep_gate::numba::{self, Mode};
//! # use hullsweep_data::suite;
//! # use hullsweep_gate::gate;
//! # use hullsweep_variants::{Threads, Variant};
//! let reports = gate(
//!     &suite(),
//!     |d| Variant::fastest().sweep(&d.close, &d.params, d.fee, Threads::Auto),
//!     |d| numba::run(&d.close, &d.params, d.fee, Mode::Single),
//! )?;
//! # Ok::<(), anyhow::Error>(())
//! ```

#![deny(missing_docs)]

pub mod bless;
pub mod compare;
pub mod fixture;
pub mod golden;
pub mod home;
pub mod metrics;
pub mod numba;
pub mod suite;
pub mod trades;

pub use compare::{GateReport, PNL_TOLERANCE, compare, gate, table};
pub use fixture::fixture_path;
