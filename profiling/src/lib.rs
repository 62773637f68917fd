//! The profiling lab: flamegraphs, assembly, instruction counts and interleaved A/B experiments
//! that attribute the Rust-vs-numba gap, and the `report` that writes `reports/gap.md` from them.
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
