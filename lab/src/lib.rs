//! The lab behind `hullsweep lab`: numba and every variant timed side by side and gated, plus its
//! sections (live pushes, scale to 1e9 bars, `fastest`'s choices and its 2-core scaling, rolling,
//! the metrics' cost, and where the default sweep's time goes with every variant's roofline).
//!
//! Every number it writes is measured in one run, under what [`machine::Provenance`] names
//! (date, commit, machine, toolchain, load).
//!
//! # Example
//!
//! The lab's table ([`table::run`]): numba and every variant on the default sweep, each gated
//! against numba single-thread and timed side by side, as `hullsweep lab` runs it:
//!
//! ```no_run
//! // no_run: the oracle is numba in a Python worker (the project's `.venv`, created with numba
//! // on first use), and every contender is timed for several rounds of the full sweep (minutes).
//! use hullsweep_gate::numba::Worker;
//! use hullsweep_kernel::{DEFAULT_FEE_PCT, default_close, default_params};
//! use hullsweep_lab::table::{self, LabConfig};
//! use hullsweep_variants::{Threads, Variant};
//!
//! let cfg = LabConfig {
//!     close: default_close(),
//!     params: default_params(),
//!     fee: DEFAULT_FEE_PCT,
//!     threads: Threads::Auto,
//!     rounds: 5,
//!     contenders: table::contenders(Variant::ALL, Threads::Auto),
//! };
//! let mut worker = Worker::start()?;
//! let report = table::run(&cfg, &mut worker, |p| eprintln!("{}/{} {}", p.done, p.total, p.now))?;
//! println!("{}", report.to_markdown());
//! assert!(report.all_pass());
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! Every report names its machine ([`machine::Machine::detect`]; no Python, nothing timed):
//!
//! ```
//! let machine = hullsweep_lab::machine::Machine::detect();
//! assert!(machine.cores >= 1);
//! println!("{}", machine.summary());
//! ```

#![deny(missing_docs)]

pub mod breakdown;
pub mod ceilings;
pub mod fastest;
pub mod live;
pub mod machine;
pub mod marked;
pub mod metrics;
pub mod report;
pub mod rolling;
pub mod roofline;
pub mod scale;
pub mod scaling;
pub mod table;
