//! `hullsweep gate`: run variants against the live numba reference on the dataset suite (or on
//! the user's data) and print the spec's verdict per dataset; `--write-golden` refreshes fixtures.

use super::args::{FEE_HELP, load_close, load_params, parse_grid, parse_variant, threads};
use anyhow::bail;
use hullsweep_data::datasets::{self, Dataset};
use hullsweep_gate::numba::{Mode, Worker};
use hullsweep_gate::{self as gate, bless, golden, suite};
use hullsweep_kernel::{self as kernel, DEFAULT_FEE_PCT, GridSpec};
use hullsweep_variants::Variant;
use std::path::PathBuf;

/// Check implementations against the live numba reference: every combo's trades must equal the
/// reference's and its PnL be within 1e-6 (the equivalence gate). Bit-identity is reported too.
///
/// Then the trade log: every closed trade of every combo, from each implementation of it, must
/// be numba's bit for bit (one line per dataset). Without --data, --params or --grid it runs the whole dataset suite (the default data and the
/// edge cases); with them, your series and combos. The first run creates .venv with numba
/// (about a minute) where `hullsweep setup --help` says. Exits non-zero if any dataset fails. The rule and the datasets are
/// described in the repository's docs/gate.md.
#[derive(clap::Args, Debug)]
#[command(group = clap::ArgGroup::new("user").args(["data", "params", "grid"]).multiple(true))]
pub struct Args {
    #[arg(
        long,
        value_name = "NAME|all",
        help = super::args::variant_help("Variant to check, or all"),
        default_value = "all",
        value_parser = parse_choice
    )]
    variant: Choice,
    /// Your close series: a .npy (1-D float64) or .csv file (an empty cell is a missing bar).
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
    /// CSV column holding the close (default: the only column, or the one named "close").
    #[arg(long, value_name = "NAME", requires = "data")]
    column: Option<String>,
    /// Your combos: an n x 6 int64 .npy (default: the default grid, over --data or the default
    /// series).
    #[arg(long, value_name = "FILE.npy", conflicts_with = "grid")]
    params: Option<PathBuf>,
    /// Your combos as a grid of HMA lengths LO:HI:K (K distinct lengths from LO to HI).
    #[arg(long, value_name = "LO:HI:K", value_parser = parse_grid)]
    grid: Option<GridSpec>,
    /// With --grid: sweep the HMA3 lengths independently, every pair (a two-axis grid, as
    /// `hullsweep sweep --grid3` builds it).
    #[arg(long, value_name = "LO:HI:K", value_parser = parse_grid, requires = "grid")]
    grid3: Option<GridSpec>,
    #[arg(
        long,
        value_name = "PCT",
        help = format!("{FEE_HELP} (your data only: suite datasets carry their own)"),
        default_value_t = DEFAULT_FEE_PCT,
        allow_negative_numbers = true,
        requires = "user"
    )]
    fee: f64,
    /// Which numba sweep is the oracle.
    #[arg(long, value_enum, default_value = "single")]
    oracle: Oracle,
    /// Worker threads for parallel Rust variants (default: all cores).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Regenerate the golden fixtures from live numba (single and prange must agree bit for bit).
    #[arg(long, conflicts_with_all = ["data", "params", "grid", "variant"])]
    write_golden: bool,
    /// Where --write-golden writes (default: gate/tests/golden in the checkout holding the
    /// current directory; outside one, DIR is required).
    #[arg(long, value_name = "DIR", requires = "write_golden")]
    golden_dir: Option<PathBuf>,
}

/// `--variant`: one variant, or all of them.
#[derive(Clone, Copy, Debug)]
enum Choice {
    All,
    One(Variant),
}

fn parse_choice(name: &str) -> Result<Choice, String> {
    match name {
        "all" => Ok(Choice::All),
        _ => parse_variant(name).map(Choice::One),
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Oracle {
    Single,
    Prange,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.write_golden {
        let dir = match args.golden_dir {
            Some(dir) => dir,
            None => hullsweep_gate::home::checkout()
                .map(|c| golden::dir_in(&c))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "--write-golden writes into the checkout's gate/tests/golden, and the \
                         current directory is not inside a hullsweep checkout: run it from one, \
                         or name the folder with --golden-dir DIR"
                    )
                })?,
        };
        return bless::write_golden(&dir, |line| eprintln!("{line}"));
    }
    let variants: Vec<Variant> = match args.variant {
        Choice::All => Variant::ALL.to_vec(),
        Choice::One(v) => vec![v],
    };
    let threads = threads(args.threads)?;
    let suite = if args.data.is_some() || args.params.is_some() || args.grid.is_some() {
        vec![user_dataset(&args)?]
    } else {
        datasets::suite()
    };
    let mode = match args.oracle {
        Oracle::Single => Mode::Single,
        Oracle::Prange => Mode::Prange,
    };

    let mut worker = Worker::start()?;
    let wanted = suite::reference(&mut worker, &suite, mode, |line| eprintln!("{line}"))?;
    let mut failed = Vec::new();
    for v in variants {
        let reports = suite::variant(v, &suite, &wanted.results, threads)?;
        let title = format!("\n{} vs numba {}", v.name(), mode.name());
        print!("{}", gate::table(&title, &reports));
        failed.extend(suite::failures(v.name(), &reports));
    }
    failed.extend(suite::trade_logs(&suite, &wanted.trades, |line| {
        println!("{line}")
    })?);
    if !failed.is_empty() {
        bail!("the gate failed: {}", failed.join(", "));
    }
    println!("\nall passed");
    Ok(())
}

fn user_dataset(args: &Args) -> anyhow::Result<Dataset> {
    let threads = threads(args.threads)?;
    let close = load_close(args.data.as_deref(), args.column.as_deref(), threads)?;
    let params = match (args.grid, args.grid3) {
        (Some(hma), Some(hma3)) => kernel::grid2(hma, hma3)?,
        _ => load_params(
            args.params.as_deref(),
            args.grid.unwrap_or(kernel::DEFAULT_GRID),
        )?,
    };
    kernel::validate_fee(args.fee)?;
    let name = match &args.data {
        Some(path) => path
            .file_name()
            .map_or_else(|| "data".into(), |n| n.to_string_lossy().into_owned()),
        None => "default".into(),
    };
    Ok(Dataset {
        name,
        about: "your data",
        close,
        params,
        fee: args.fee,
    })
}
