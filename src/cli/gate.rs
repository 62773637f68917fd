//! `hullsweep gate`: run variants against the live numba reference on the dataset suite (or on
//! the user's data) and print the spec's verdict per dataset; `--write-golden` refreshes fixtures.

use super::sweep::{FEE_HELP, load_close, load_params, parse_grid, parse_variant, threads};
use anyhow::{Context, bail};
use hullsweep_data::datasets::{self, Dataset};
use hullsweep_gate::numba::{Mode, Worker};
use hullsweep_gate::{self as gate, GateReport, golden, trades};
use hullsweep_kernel::SweepResult;
use hullsweep_kernel::{self as kernel, DEFAULT_FEE_PCT, GridSpec, Trade};
use hullsweep_variants::Variant;
use std::path::PathBuf;
use std::time::Instant;

/// Check implementations against the live numba reference: every combo's trades must equal the
/// reference's and its PnL be within 1e-6 (the equivalence gate). Bit-identity is reported too.
///
/// Then the trade log: every closed trade of every combo, from each implementation of it, must
/// be numba's bit for bit (one line per dataset). Without --data, --params or --grid it runs the whole dataset suite (the default data and the
/// edge cases); with them, your series and combos. The first run creates .venv with numba
/// (about a minute). Exits non-zero if any dataset fails. The rule and the datasets are
/// described in the repository's docs/gate.md.
#[derive(clap::Args, Debug)]
#[command(group = clap::ArgGroup::new("user").args(["data", "params", "grid"]).multiple(true))]
pub struct Args {
    #[arg(
        long,
        value_name = "NAME|all",
        help = super::sweep::variant_help("Variant to check, or all"),
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
    /// Where --write-golden writes (default: tests/golden in the source tree).
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
        return write_golden(args.golden_dir.unwrap_or_else(golden::dir));
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
    let mut wanted: Vec<SweepResult> = Vec::with_capacity(suite.len());
    let mut wanted_trades: Vec<Vec<Trade>> = Vec::with_capacity(suite.len());
    for d in &suite {
        let start = Instant::now();
        let r = worker
            .sweep(&d.close, &d.params, d.fee, mode)
            .with_context(|| format!("numba on dataset {}", d.name))?;
        let log = worker
            .trades(None)
            .with_context(|| format!("numba's trade log on dataset {}", d.name))?;
        eprintln!(
            "numba {}: {} ({} bars x {} combos), loaded, swept and logged {} trades in {:.2} s",
            mode.name(),
            d.name,
            d.close.len(),
            d.params.len(),
            log.len(),
            start.elapsed().as_secs_f64()
        );
        wanted.push(r);
        wanted_trades.push(log);
    }

    let mut failed = Vec::new();
    for v in variants {
        let mut next = wanted.iter();
        let reports = gate::gate(
            &suite,
            |d| v.sweep(&d.close, &d.params, d.fee, threads),
            |_| Ok(next.next().expect("one result per dataset").clone()),
        )?;
        print!(
            "{}",
            gate::table(
                &format!("\n{} vs numba {}", v.name(), mode.name()),
                &reports
            )
        );
        failed.extend(
            reports
                .iter()
                .filter(|r| !r.passes())
                .map(|r| format!("{} on {}", v.name(), r.dataset)),
        );
    }
    failed.extend(gate_trades(&suite, &wanted_trades)?);
    if !failed.is_empty() {
        bail!("the gate failed: {}", failed.join(", "));
    }
    println!("\nall passed");
    Ok(())
}

/// Every implementation of the trade log against numba's `sweep_trades`, every trade of every
/// combo bit for bit: one line per dataset; returns what failed.
fn gate_trades(suite: &[Dataset], wanted: &[Vec<Trade>]) -> anyhow::Result<Vec<String>> {
    let mut failed = Vec::new();
    for &(name, trades) in trades::IMPLEMENTATIONS {
        println!("\ntrade log ({name}) vs numba sweep_trades, every trade bit for bit");
        for (d, want) in suite.iter().zip(wanted) {
            let got = trades(&d.close, &d.params, d.fee, &trades::all(&d.params))
                .with_context(|| format!("trade log ({name}) on dataset {}", d.name))?;
            let report = trades::compare(&d.name, d.params.len(), &got, want);
            println!("{report}");
            if !report.bit_identical() {
                failed.push(format!("the trade log ({name}) on {}", d.name));
            }
        }
    }
    Ok(failed)
}

fn user_dataset(args: &Args) -> anyhow::Result<Dataset> {
    let close = load_close(args.data.as_deref(), args.column.as_deref())?;
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

/// Writes one fixture per suite dataset from numba's single-thread sweep, after checking the
/// prange sweep gives the same bits (if it does not, that is a finding, not a fixture).
fn write_golden(dir: PathBuf) -> anyhow::Result<()> {
    let mut worker = Worker::start()?;
    let versions = worker.versions()?;
    for d in datasets::suite() {
        worker
            .load(&d.close, &d.params, d.fee)
            .with_context(|| format!("numba on dataset {}", d.name))?;
        let (secs, single) = worker.time(Mode::Single)?;
        let (_, prange) = worker.time(Mode::Prange)?;
        let agree: GateReport = gate::compare(&d.name, &prange, &single);
        if !agree.bit_identical() {
            bail!(
                "numba's prange sweep differs from its single-thread sweep on {}; not writing \
                 fixtures:\n{}\n{agree}",
                d.name,
                GateReport::header()
            );
        }
        let path = golden::write(&dir, &golden::Fixture::new(&d, &single, versions.clone()))?;
        eprintln!(
            "wrote {} ({} combos, numba single {secs:.2} s)",
            path.display(),
            d.params.len()
        );
        write_metric_fixture(&mut worker, &d, &single, &dir, &versions)?;
        write_trade_fixture(&mut worker, &d, &single, &dir, &versions)?;
    }
    Ok(())
}

/// Writes the dataset's trade fixture from numba's `sweep_trades`, after checking that each
/// combo's trades count and sum, in order, to the study's loop's `trades` and `pnl` bits.
fn write_trade_fixture(
    worker: &mut Worker,
    d: &Dataset,
    single: &SweepResult,
    dir: &std::path::Path,
    versions: &serde_json::Map<String, serde_json::Value>,
) -> anyhow::Result<()> {
    let log = worker.trades(None)?;
    let per = trades::by_combo(&log, d.params.len())
        .map_err(|t| anyhow::anyhow!("numba logged a trade of combo {} on {}", t.combo, d.name))?;
    let summed = SweepResult {
        pnl: per
            .iter()
            .map(|t| t.iter().fold(0.0, |s, t| s + t.pnl))
            .collect(),
        trades: per.iter().map(|t| t.len() as i64).collect(),
    };
    let agree = gate::compare(&d.name, &summed, single);
    if !agree.bit_identical() {
        bail!(
            "numba's sweep_trades does not sum to its sweep on {}; not writing fixtures:\n{}\n{agree}",
            d.name,
            GateReport::header()
        );
    }
    let path = trades::write(
        &dir.join("trades"),
        &trades::Fixture::new(d, &log, versions.clone())?,
    )?;
    eprintln!("wrote {} ({} trades)", path.display(), log.len());
    Ok(())
}

/// Writes the dataset's metric fixture from numba's `sweep_metrics`, after checking that its
/// `pnl` and `trades` are the study's loop's bits (the metric loop must be the same loop).
fn write_metric_fixture(
    worker: &mut Worker,
    d: &Dataset,
    single: &SweepResult,
    dir: &std::path::Path,
    versions: &serde_json::Map<String, serde_json::Value>,
) -> anyhow::Result<()> {
    use hullsweep_gate::metrics;
    let rows = worker.metrics()?;
    let plain = SweepResult {
        pnl: rows.iter().map(|m| m.pnl).collect(),
        trades: rows.iter().map(|m| m.trades).collect(),
    };
    let agree = gate::compare(&d.name, &plain, single);
    if !agree.bit_identical() {
        bail!(
            "numba's sweep_metrics disagrees with its sweep on {}; not writing fixtures:\n{}\n{agree}",
            d.name,
            GateReport::header()
        );
    }
    let path = metrics::write(
        &dir.join("metrics"),
        &metrics::Fixture::new(d, &rows, versions.clone()),
    )?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
