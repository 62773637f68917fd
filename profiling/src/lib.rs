//! The profiling lab: flamegraphs, assembly, instruction counts and interleaved A/B experiments
//! that attribute the Rust-vs-numba gap, and the `report` that writes `reports/gap.md` from them.
//!
//! # Example
//!
//! The WMA kernels the hypotheses swap in ([`kernels::KERNELS`]) each reproduce the reference's
//! bits, checked by [`kernels::check_all`]; [`kernels::sweep_with`] is the reference sweep with
//! one of them and a [`kernels::Pass`] mode swapped in:
//!
//! ```
//! use hullsweep_kernel::{DEFAULT_FEE_PCT, GridSpec, gbm, grid, sweep};
//! use hullsweep_profiling::kernels::{self, Pass};
//!
//! let close = gbm(2_000, 1, 0.01)?;
//! kernels::check_all(&close, &[1, 2, 7, 64])?;
//! let params = grid("6:60:8".parse::<GridSpec>()?)?;
//! let unroll4 = kernels::kernel("unroll4").expect("a kernel of KERNELS");
//! let got = kernels::sweep_with(unroll4, Pass::ReuseNanHead, &close, &params, DEFAULT_FEE_PCT);
//! assert!(kernels::identical(&got, &sweep(&close, &params, DEFAULT_FEE_PCT)?));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! One A/B experiment ([`hypotheses::HYPOTHESES`] lists the keys), as `profiling ab bounds`
//! runs it:
//!
//! ```no_run
//! // no_run: it times a sweep for many interleaved rounds (seconds); other keys also start
//! // numba (Python, `.venv`) or a separate cargo build of this crate (`builds`).
//! use hullsweep_profiling::hypotheses::Lab;
//!
//! // The series' bars, the grid, timed rounds per arm, and where workers' input files go.
//! let mut lab = Lab::new(150_000, "6:200:8", 10, &std::env::temp_dir().join("hullsweep-ab"))?;
//! let outcome = lab.run("bounds")?; // arm 0, the baseline, is the checked reference

//! for (i, label) in outcome.labels.iter().enumerate() {
//!     println!("{label}: median {:.3} s", outcome.median(i));
//! }
//! # Ok::<(), String>(())
//! ```
#![deny(missing_docs)]

pub mod asm;
pub mod builds;
pub mod callgrind;
pub mod clock;
#[cfg(feature = "flamegraph")]
pub mod flame;
pub mod hypotheses;
pub mod kernels;
pub mod report;
pub mod sysinfo;
pub mod timing;

use std::path::PathBuf;

/// pprof samples per second: high enough for a few-second sweep to give thousands of samples,
/// and not a multiple of common timer periods.
pub const FLAME_HZ: i32 = 999;

/// The workspace root (the profiling crate's parent directory).
pub fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(PathBuf::from).unwrap_or(here)
}

/// The Python of the project venv (`HULLSWEEP_PYTHON` overrides), if it exists.
pub fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HULLSWEEP_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let p = workspace_root().join(".venv/bin/python");
    p.exists().then_some(p)
}

/// The numba worker script shipped with this crate.
pub fn numba_worker_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("py/numba_worker.py")
}
