//! `hullsweep sweep`: run one variant over a series and a grid or params file, print per-combo results.

use anyhow::{Context, bail};
use hullsweep::kernel::{self, DEFAULT_FEE_PCT, GridSpec, WINDOW_NAMES};
use hullsweep::{Combo, SweepResult, Threads, Variant};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Sweep every combo of windows over a close series and print `pnl` and `trades` per combo.
///
/// The series comes from a 1-D float64 .npy or a CSV column (an empty cell is a missing bar);
/// without --data the built-in default series is used. Combos come from a grid of HMA lengths,
/// each expanded to six windows as the spec derives them, or from an n x 6 int64 .npy file.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Close series: a .npy (1-D float64) or .csv file. Default: the built-in 150,000-bar series.
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
    /// CSV column holding the close (default: the only column, or the one named "close").
    #[arg(long, value_name = "NAME")]
    column: Option<String>,
    /// Grid of HMA lengths LO:HI:K (K lengths from LO to HI).
    #[arg(
        long,
        value_name = "LO:HI:K",
        default_value = "6:200:80",
        conflicts_with = "params"
    )]
    grid: GridSpec,
    /// Explicit combos: an n x 6 int64 .npy, columns hma_n, hma_half, hma_sqrt, hma3_m, hma3_half, hma3_third.
    #[arg(long, value_name = "FILE.npy")]
    params: Option<PathBuf>,
    /// Round-trip fee per closed trade, in percentage points.
    #[arg(long, value_name = "PCT", default_value_t = DEFAULT_FEE_PCT, allow_negative_numbers = true)]
    fee: f64,
    /// Implementation to run (see `hullsweep lab` for how they compare).
    #[arg(long, value_name = "NAME", default_value = "reference", value_parser = parse_variant)]
    variant: Variant,
    /// Worker threads for parallel variants (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value = "csv")]
    format: Format,
    /// Write results here instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Format {
    Csv,
    Json,
}

pub fn parse_variant(name: &str) -> Result<Variant, String> {
    Variant::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        format!("unknown variant {name:?}; known: {}", names.join(", "))
    })
}

pub fn threads(n: Option<usize>) -> anyhow::Result<Threads> {
    match n {
        None => Ok(Threads::Auto),
        Some(0) => bail!("--threads 0: need at least one thread"),
        Some(n) => Ok(Threads::Fixed(n)),
    }
}

/// Loads the series from `--data` (with `--column`), or the built-in default.
pub fn load_close(data: Option<&Path>, column: Option<&str>) -> anyhow::Result<Vec<f64>> {
    match data {
        None => Ok(kernel::default_close()),
        Some(path) => {
            let close = hullsweep::io::read_close(path, column)?;
            kernel::validate_close(&close).with_context(|| path.display().to_string())?;
            Ok(close)
        }
    }
}

/// Loads combos from `--params`, or expands the grid.
pub fn load_params(params: Option<&Path>, grid: GridSpec) -> anyhow::Result<Vec<Combo>> {
    let combos = match params {
        Some(path) => {
            let combos = hullsweep::io::read_params_npy(path)?;
            kernel::validate_params(&combos).with_context(|| path.display().to_string())?;
            combos
        }
        None => kernel::grid(grid)?,
    };
    Ok(combos)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let close = load_close(args.data.as_deref(), args.column.as_deref())?;
    let params = load_params(args.params.as_deref(), args.grid)?;
    let threads = threads(args.threads)?;
    let start = Instant::now();
    let result = args.variant.sweep(&close, &params, args.fee, threads)?;
    let secs = start.elapsed().as_secs_f64();
    let text = match args.format {
        Format::Csv => to_csv(&params, &result),
        Format::Json => to_json(&params, &result),
    };
    match &args.out {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    eprintln!(
        "swept {} combos over {} bars with {} in {secs:.3} s",
        params.len(),
        close.len(),
        args.variant.name()
    );
    Ok(())
}

/// One row per combo; `pnl` in Rust's shortest representation that parses back to the same bits.
fn to_csv(params: &[Combo], r: &SweepResult) -> String {
    let mut s = format!("combo,{},pnl,trades\n", WINDOW_NAMES.join(","));
    for (k, c) in params.iter().enumerate() {
        let windows: Vec<String> = c.iter().map(i64::to_string).collect();
        s += &format!("{k},{},{},{}\n", windows.join(","), r.pnl[k], r.trades[k]);
    }
    s
}

fn to_json(params: &[Combo], r: &SweepResult) -> String {
    let rows: Vec<serde_json::Value> = params
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let mut row = serde_json::Map::new();
            row.insert("combo".into(), k.into());
            for (name, w) in WINDOW_NAMES.iter().zip(c) {
                row.insert((*name).into(), (*w).into());
            }
            row.insert("pnl".into(), r.pnl[k].into());
            row.insert("trades".into(), r.trades[k].into());
            row.into()
        })
        .collect();
    serde_json::to_string_pretty(&rows).expect("plain values serialise") + "\n"
}
