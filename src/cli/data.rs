//! `hullsweep data`: write a deterministic GBM series to `.npy`, `.csv` or `.parquet` (or CSV to
//! standard output), or the gate's dataset suite (`--suite DIR`) for tools outside Rust, such as
//! the Python tests of `hullsweep_rs.ray`.

use anyhow::Context;
use hullsweep_kernel::{DEFAULT_BARS, DEFAULT_SEED, DEFAULT_SIGMA};
use std::path::{Path, PathBuf};

/// Generate a geometric Brownian motion close series (the default data unless told otherwise).
///
/// The generator is deterministic on every machine: the same bars, seed and sigma always give
/// the same bytes.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Number of bars (at least 1).
    #[arg(long, default_value_t = DEFAULT_BARS, value_parser = super::args::parse_bars, allow_negative_numbers = true)]
    bars: usize,
    /// Random seed, a whole number from 0 to 2^64-1.
    #[arg(long, default_value_t = DEFAULT_SEED, value_parser = super::args::parse_seed, allow_negative_numbers = true)]
    seed: u64,
    /// Per-bar volatility, in [0, 1].
    #[arg(long, default_value_t = DEFAULT_SIGMA, allow_negative_numbers = true)]
    sigma: f64,
    /// Output file: a 1-D float64 .npy, a .csv (header "close", one bar per line, each float in
    /// its shortest round-trip form) or a .parquet with one float64 column "close"; "-" writes
    /// the CSV to standard output. Written in pieces (any number of bars in bounded memory) to a
    /// temporary file renamed when complete.
    #[arg(long, value_name = "FILE", required_unless_present = "suite")]
    out: Option<PathBuf>,
    /// Write the equivalence gate's dataset suite into DIR instead: NAME.close.npy and
    /// NAME.params.npy per dataset, and suite.json with each one's name, fee and purpose.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["bars", "seed", "sigma", "out"])]
    suite: Option<PathBuf>,
    /// Threads that generate the series (default: all cores). The bytes do not depend on them.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(dir) = &args.suite {
        return write_suite(dir);
    }
    let out = args.out.expect("clap requires --out without --suite");
    let threads = super::args::threads(args.threads)?;
    super::progress::catch_interrupt();
    let bar = super::progress::Bar::new("writing");
    let to_stdout = out.as_os_str() == "-";
    let written = if to_stdout {
        let mut stdout = std::io::stdout().lock();
        hullsweep_data::write::write_gbm_csv(
            &mut stdout,
            args.bars,
            args.seed,
            args.sigma,
            threads,
            &bar,
        )
    } else {
        hullsweep_data::write_gbm(&out, args.bars, args.seed, args.sigma, threads, &bar)
    };
    bar.finish();
    match written {
        // `hullsweep data --out - | head`: the reader has what it wanted.
        Err(e) if to_stdout && broken_pipe(&e) => return Ok(()),
        other => other?,
    }
    let out = if to_stdout {
        "standard output (CSV)".into()
    } else {
        out.display().to_string()
    };
    eprintln!(
        "wrote {} bars (seed {}, sigma {}) to {}",
        args.bars, args.seed, args.sigma, out
    );
    Ok(())
}

/// Whether `e` is standard output closed by its reader (a pipe into `head`).
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn write_suite(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut index = Vec::new();
    for d in hullsweep_data::datasets::suite() {
        let close = format!("{}.close.npy", d.name);
        let params = format!("{}.params.npy", d.name);
        hullsweep_data::write_f64_npy(&dir.join(&close), &d.close)?;
        hullsweep_data::write_params_npy(&dir.join(&params), &d.params)?;
        index.push(serde_json::json!({
            "name": d.name, "about": d.about, "fee": d.fee, "close": close, "params": params,
        }));
    }
    let path = dir.join("suite.json");
    let text = serde_json::to_string_pretty(&index)? + "\n";
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("wrote {} datasets to {}", index.len(), dir.display());
    Ok(())
}
