//! `hullsweep data`: write a deterministic GBM series to `.npy`.

use anyhow::Context;
use hullsweep::kernel::{self, DEFAULT_BARS, DEFAULT_SEED, DEFAULT_SIGMA};
use std::path::PathBuf;

/// Generate a geometric Brownian motion close series (the default data unless told otherwise).
///
/// The generator is deterministic on every machine: the same bars, seed and sigma always give
/// the same bytes.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Number of bars.
    #[arg(long, default_value_t = DEFAULT_BARS)]
    bars: usize,
    /// Random seed.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Per-bar volatility, in [0, 1].
    #[arg(long, default_value_t = DEFAULT_SIGMA, allow_negative_numbers = true)]
    sigma: f64,
    /// Output file (1-D float64 .npy).
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let close = kernel::gbm(args.bars, args.seed, args.sigma)?;
    hullsweep::io::write_f64_npy(&args.out, &close).context("cannot write the series")?;
    eprintln!(
        "wrote {} bars (seed {}, sigma {}) to {}",
        close.len(),
        args.seed,
        args.sigma,
        args.out.display()
    );
    Ok(())
}
