//! What the `hullsweep` package's benches share: criterion's `--quick`, a measurement time that
//! fits ten samples of any speed, the bit-identity check every bench makes before it times, and
//! a whole `hullsweep` process. Each bench uses some of these.
#![allow(dead_code)]

use hullsweep_kernel::SweepResult;
use std::ffi::OsStr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Criterion's `--quick` is on the command line.
pub fn quick() -> bool {
    std::env::args().any(|a| a == "--quick")
}

/// Ten samples of at least one iteration each, whatever the speed: `once` is one iteration's
/// time (criterion's default 5 s would not hold ten slow iterations; `--quick` stops a
/// benchmark at this bound if its estimate is not yet within 5%).
pub fn measurement_time(once: Duration) -> Duration {
    if quick() {
        (once * 3).max(Duration::from_millis(500))
    } else {
        (once * 12).max(Duration::from_secs(2))
    }
}

/// Panics unless `got` is `want` bit for bit (the gate's comparison): a bench times only work
/// that gives the same results.
pub fn assert_same_bits(what: &str, got: &SweepResult, want: &SweepResult) {
    let report = hullsweep_gate::compare(what, got, want);
    assert!(report.bit_identical(), "{what} differs: {report}");
}

/// `hullsweep ARGS` run to its exit, every stream to /dev/null; its wall time.
pub fn hullsweep<S: AsRef<OsStr>>(args: &[S]) -> Duration {
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_hullsweep"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("cannot run hullsweep");
    let line: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy()).collect();
    assert!(status.success(), "hullsweep {} failed", line.join(" "));
    start.elapsed()
}
