//! Implementations of the hullsweep kernel, all behind one signature and one [`Variant`] enum,
//! and the one crate to depend on to embed them: it re-exports what a caller needs from
//! `hullsweep-kernel` (combos, the grid, the generator, the fee, the errors and the results).
//!
//! Every variant returns the reference's results bit for bit (not one trade differs); they
//! differ only in speed. Tests, benches and the lab iterate over [`Variant::ALL`], so a new
//! variant is one module and one line.
//!
//! # Sweep with `fastest`
//!
//! ```
//! use hullsweep_variants::{DEFAULT_FEE_PCT, GridSpec, Threads, Variant, gbm, grid};
//!
//! // Your closes as f64 (NaN marks a missing bar); here 20,000 bars of the built-in generator.
//! let close = gbm(20_000, 42, 0.001)?;
//! // 80 HMA lengths from 6 to 200, each expanded to six windows (docs/kernel.md derives them).
//! let params = grid("6:200:80".parse::<GridSpec>()?)?;
//! let result = Variant::fastest().sweep(&close, &params, DEFAULT_FEE_PCT, Threads::Auto)?;
//! assert_eq!(result.len(), params.len());
//! let best = (0..result.len()).max_by(|&a, &b| result.pnl[a].total_cmp(&result.pnl[b])).unwrap();
//! println!("best combo {:?}: pnl {} over {} trades", params[best], result.pnl[best], result.trades[best]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Variant::fastest`] is `rolling-rayon` on a machine with more than one core; with
//! [`Threads::Auto`] it runs on as many cores as the sweep's size pays for and on one thread
//! for a small sweep ([`rolling::MIN_POSITIONS_PER_WORKER`]). [`Threads::Fixed`] pins the count.
//!
//! # Validate once, sweep many times
//!
//! [`Variant::sweep`] scans the series on every call. A service that keeps a series and sweeps
//! it again and again validates it once into a [`ValidSeries`] (owned) or [`ValidClose`]
//! (borrowed) and calls [`Variant::sweep_valid`], which checks only the params and the fee:
//!
//! ```
//! use hullsweep_variants::{DEFAULT_FEE_PCT, Threads, ValidSeries, Variant, default_params, gbm};
//!
//! let series = ValidSeries::new(gbm(10_000, 7, 0.001)?)?; // scanned here, once
//! let params = default_params();
//! let fastest = Variant::fastest();
//! for chunk in params.chunks(20) {
//!     let r = fastest.sweep_valid(series.view(), chunk, DEFAULT_FEE_PCT, Threads::Auto)?;
//!     assert_eq!(r.len(), chunk.len());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Reuse scratch
//!
//! A sweep through [`Variant`] allocates its working memory per call (for `rolling`, about 25
//! bytes per bar per worker, plus the results). A caller making many small single-thread
//! sweeps of one length can own the scratch and the result instead: [`simd::sweep_into`]
//! allocates nothing once both are sized (a counting-allocator test holds it to that).
//!
//! ```
//! use hullsweep_variants::prealloc::Scratch;
//! use hullsweep_variants::simd::{self, WmaKernel};
//! use hullsweep_variants::{DEFAULT_FEE_PCT, SweepResult, default_params, gbm};
//!
//! let params = &default_params()[..8];
//! let mut scratch = Scratch::new(5_000);
//! let mut out = SweepResult::zeroed(params.len());
//! for seed in 0..3 {
//!     let close = gbm(5_000, seed, 0.001)?;
//!     simd::sweep_into(WmaKernel::best(), &close, params, DEFAULT_FEE_PCT, &mut scratch, &mut out)?;
//!     assert_eq!(out.len(), params.len());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Errors
//!
//! Every entry validates its inputs and returns a [`KernelError`] naming the bad value and where
//! it is; nothing panics on bad data. Its `Display` is one line fit for a user:
//!
//! ```
//! use hullsweep_variants::{KernelError, Threads, Variant};
//!
//! let close = [101.0, 102.5, -1.0, 103.0];
//! let params = [[20, 10, 4, 20, 10, 6]];
//! let err = Variant::fastest().sweep(&close, &params, 0.09, Threads::Auto).unwrap_err();
//! assert_eq!(err, KernelError::BadPrice { index: 2, value: -1.0 });
//! assert!(err.to_string().starts_with("bad price -1 at index 2"));
//!
//! let err = Variant::fastest().sweep(&[100.0; 50], &[[20, 10, 0, 20, 10, 6]], 0.09, Threads::Auto);
//! assert!(matches!(err, Err(KernelError::BadWindow { combo: 0, field: "hma_sqrt", value: 0 })));
//! assert!(matches!(Variant::Rolling.sweep(&[1.0], &[], f64::NAN, Threads::Auto), Err(KernelError::BadFee(_))));
//! ```
//!
//! # Resumable sweeps
//!
//! A series too long for memory, or arriving in pieces, goes through a [`Sweeper`]: push chunks
//! in order (any sizes), and its result is the batch sweep's of the whole series, bit for bit.
//! It keeps only the last `Wmax - 1` bars and each combo's loop state, so memory does not grow
//! with the series; a bad price is refused with its index in the whole series and changes nothing.
//!
//! ```
//! use hullsweep_variants::{DEFAULT_FEE_PCT, Sweeper, Threads, Variant, default_params, gbm};
//!
//! let close = gbm(30_000, 42, 0.001)?;
//! let params = default_params();
//! let mut sweeper = Sweeper::new(&params, DEFAULT_FEE_PCT, Variant::fastest(), Threads::Auto)?;
//! for chunk in close.chunks(8_192) {
//!     sweeper.push(chunk)?; // e.g. read from a file, piece by piece
//! }
//! let streamed = sweeper.finish()?;
//! let batch = Variant::Reference.sweep(&close, &params, DEFAULT_FEE_PCT, Threads::Auto)?;
//! assert_eq!(streamed, batch);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Live
//!
//! A combo (or 10,000) picked from a sweep runs on live bars through [`Live`]: each
//! [`push`](Live::push) of a bar returns that bar's [`Event`]s (a position opened; a trade
//! closed, with its PnL by the kernel's own expression), and the events, the open
//! [`Position`]s and [`Live::result`] are the batch sweep's of the bars so far, bit for bit. A
//! push costs O(1) per combo where `rolling`'s error bound certifies the fast `d`, and the
//! reference's arithmetic for that bar's windows only where it does not ([`LiveStats`] counts
//! both; the derivation is in [`live`]). [`trades`] is the batch trade log of chosen combos,
//! computed the same way.
//!
//! ```
//! use hullsweep_variants::{DEFAULT_FEE_PCT, Event, Live, Threads, Variant, default_params, gbm};
//!
//! let params = default_params();
//! let mut live = Live::new(&params, DEFAULT_FEE_PCT)?;
//! let close = gbm(5_000, 42, 0.001)?; // your bars as they come; NaN marks a missing bar
//! let mut events = Vec::new();
//! for &bar in &close {
//!     events.clear();
//!     live.push(bar, &mut events)?;
//!     for e in &events {
//!         match e {
//!             Event::Open { combo, bar, side, price } => {
//!                 if *combo == 0 { println!("bar {bar}: combo 0 opens {side} at {price}") }
//!             }
//!             Event::Close(t) => {
//!                 if t.combo == 0 { println!("bar {}: combo 0 closes, pnl {:.4}%", t.exit_bar, t.pnl) }
//!             }
//!         }
//!     }
//! }
//! if let Some(p) = live.position(0) {
//!     println!("combo 0 holds {} since bar {} at {}", p.side, p.entry_bar, p.entry_price);
//! }
//! // The live run is the backtest.
//! let batch = Variant::Reference.sweep(&close, &params, DEFAULT_FEE_PCT, Threads::Auto)?;
//! assert_eq!(live.result(), batch);
//! assert!(live.stats().certified > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Examples
//!
//! `variants/examples/embed.rs` is the smallest program embedding `fastest`
//! (`cargo run --release -p hullsweep-variants --example embed`), and `http_json.rs` serves it
//! as a small HTTP JSON endpoint (`--example http_json`; a test starts it and sends a request).
#![deny(missing_docs)]

pub use hullsweep_kernel as kernel;
pub use hullsweep_kernel::{
    Combo, DEFAULT_BARS, DEFAULT_FEE_PCT, DEFAULT_GRID, DEFAULT_SEED, DEFAULT_SIGMA, Event,
    GbmStream, Grid, GridSpec, KernelError, Metrics, SweepResult, Trade, ValidClose, ValidSeries,
    WINDOW_NAMES, default_close, default_params, derive_windows, derive_windows2, gbm, grid, grid2,
    validate_close, validate_fee, validate_params, validate_params_and_fee, window,
};

mod backtest;
pub mod checked;
pub mod gbm;
pub mod live;
mod lookback;
pub mod metrics;
pub mod prealloc;
pub mod rayon;
mod resume;
pub mod returns;
mod returns_block;
pub mod rolling;
pub mod simd;
pub mod stream;
mod threads;
pub mod unchecked;
mod variant;

pub use live::{Live, LiveStats, Position, trades};
pub use lookback::effective_window;
pub use prealloc::Backtest;
pub use resume::SweepFn;
pub(crate) use resume::{batch, check_resume};
pub use returns::{Change, ComboRun, RunState};
pub use returns_block::ReturnScratch;
pub use stream::Sweeper;
pub use threads::Threads;
pub use variant::Variant;
