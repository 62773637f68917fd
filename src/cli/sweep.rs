//! `hullsweep sweep`: run one variant over a series and a grid or params file, print per-combo results.

use anyhow::{Context, bail};
use hullsweep_kernel::{self as kernel, DEFAULT_FEE_PCT, GridSpec, WINDOW_NAMES};
use hullsweep_kernel::{Combo, SweepResult};
use hullsweep_variants::rolling;
use hullsweep_variants::simd::{Tier, WmaKernel};
use hullsweep_variants::{Threads, Variant};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Sweep every combo of windows over a close series and print `pnl` and `trades` per combo.
///
/// The series comes from a 1-D float64 .npy or a CSV column (an empty cell is a missing bar);
/// without --data the built-in default series is used. Combos come from a grid of HMA lengths,
/// each expanded to six windows as docs/kernel.md derives them, or from an n x 6 int64 .npy file.
/// A --data file is read and swept in chunks (256 Ki bars, or one Parquet row group), so its
/// length is limited by the disk, not memory.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    input: Inputs,
    #[arg(long, value_name = "NAME", help = variant_help("Implementation to run"), default_value = "fastest", value_parser = parse_variant)]
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
    /// Also report, on stderr, how much of the sweep the rolling variant's error bound certified
    /// and how many bars fell back to the reference's arithmetic (a high count means adversarial
    /// data: flat runs or ticks where d sits a few ulps from zero). With another variant, a
    /// rolling pass is run for the counts.
    #[arg(long)]
    stats: bool,
    /// Add the metrics columns wins, long_pnl, short_pnl, long_trades, short_trades, best_trade,
    /// worst_trade, max_drawdown, bars_in_market (defined in the repository's docs/kernel.md,
    /// from the same event loop; every variant gives the numba reference's bits).
    #[arg(long, conflicts_with = "stats")]
    metrics: bool,
    /// Draw the sweep as an SVG: a heatmap over (HMA length, HMA3 length) for a two-axis grid
    /// (--grid3), a line over the length for a one-axis grid; the best combo is marked.
    #[arg(long, value_name = "FILE.svg", conflicts_with_all = ["params", "stats"])]
    plot: Option<PathBuf>,
    /// The metric --plot draws: pnl, trades or any --metrics column (lowest is best for
    /// max_drawdown, highest for the others).
    #[arg(long, value_name = "NAME", default_value = "pnl", requires = "plot", value_parser = super::plot::parse_metric)]
    metric: &'static str,
    /// Load the whole --data series into memory and sweep it in one batch (the path before
    /// streaming; `hullsweep lab --scale` compares the two). Same results, more memory.
    #[arg(long)]
    in_memory: bool,
}

/// The series, the combos and the fee: the inputs `sweep` and `trades` share, with one help.
#[derive(clap::Args, Debug)]
pub struct Inputs {
    /// Close series: a .npy (1-D float64), .csv or .parquet (a float64 column) file. Default:
    /// the built-in 150,000-bar series.
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// CSV or Parquet column holding the close (default: the only column, or the one named "close"); a
    /// name matches in any case when only one column does. Comma, semicolon or tab separated.
    #[arg(long, value_name = "NAME")]
    pub column: Option<String>,
    /// Grid of HMA lengths LO:HI:K: K distinct lengths spread evenly from LO to HI (so K is at
    /// most HI-LO+1), each expanded to six windows.
    #[arg(
        long,
        value_name = "LO:HI:K",
        default_value = "6:200:80",
        value_parser = parse_grid,
        conflicts_with = "params"
    )]
    pub grid: GridSpec,
    /// Sweep the HMA3 lengths independently (a two-axis grid): every pair of a --grid length
    /// (the HMA: windows hma_n, hma_half, hma_sqrt) and a --grid3 length (the HMA3: hma3_m,
    /// hma3_half, hma3_third), HMA length outer. Without it one length sets both indicators.
    #[arg(long, value_name = "LO:HI:K", value_parser = parse_grid, conflicts_with = "params")]
    pub grid3: Option<GridSpec>,
    /// Explicit combos: an n x 6 int64 .npy, columns hma_n, hma_half, hma_sqrt, hma3_m, hma3_half, hma3_third.
    #[arg(long, value_name = "FILE.npy")]
    pub params: Option<PathBuf>,
    #[arg(long, value_name = "PCT", help = FEE_HELP, default_value_t = DEFAULT_FEE_PCT, allow_negative_numbers = true)]
    pub fee: f64,
}

impl Inputs {
    /// The grid the combos come from (meaningful without --params).
    pub fn grid(&self) -> kernel::Grid {
        kernel::Grid {
            hma: self.grid,
            hma3: self.grid3,
        }
    }

    /// The combos: --params, or the grid (two-axis with --grid3).
    pub fn combos(&self) -> anyhow::Result<Vec<Combo>> {
        match (&self.params, self.grid3) {
            (None, Some(_)) => Ok(self.grid().combos()?),
            _ => load_params(self.params.as_deref(), self.grid),
        }
    }

    /// The whole series in memory (--data, or the built-in one).
    pub fn close(&self) -> anyhow::Result<Vec<f64>> {
        load_close(self.data.as_deref(), self.column.as_deref())
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Format {
    Csv,
    Json,
}

/// Every name `--variant` accepts, `fastest` first, from [`Variant::ALL`] (so a new variant is
/// listed without touching the CLI), with what `fastest` is on this machine.
pub fn variant_names() -> String {
    let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
    format!(
        "fastest (= {} on this machine), {}",
        Variant::fastest().name(),
        names.join(", ")
    )
}

/// The `--variant` help every subcommand shows.
pub fn variant_help(what: &str) -> String {
    format!(
        "{what}: {}. All pass the equivalence gate against numba (`hullsweep gate`); `hullsweep lab` times them",
        variant_names()
    )
}

/// Parses `--variant` (clap reports the error, with the same prefix and exit code everywhere).
pub fn parse_variant(name: &str) -> Result<Variant, String> {
    Variant::from_name(name)
        .ok_or_else(|| format!("unknown variant {name:?}; known: {}", variant_names()))
}

/// The `--fee` help: what the number means and what a negative one does.
pub const FEE_HELP: &str = "Round-trip fee per closed trade, in percentage points (0.09 = 0.09%, subtracted from each trade's PnL in %); a negative fee is a rebate";

/// Parses `--grid`/`--grid3 LO:HI:K` with the kernel's parser (the one Python and the Ray CLI
/// use), which reports every problem at once and refuses `K` larger than the integers in
/// `[LO, HI]`: more would repeat lengths, and with them whole combos.
pub fn parse_grid(s: &str) -> Result<GridSpec, String> {
    s.parse::<GridSpec>().map_err(|e| match e {
        kernel::KernelError::BadGrid { detail } => detail,
        other => other.to_string(),
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
        Some(path) => Ok(hullsweep_data::read_valid_close(path, column)?),
    }
}

/// Loads combos from `--params`, or expands the grid.
pub fn load_params(params: Option<&Path>, grid: GridSpec) -> anyhow::Result<Vec<Combo>> {
    let combos = match params {
        Some(path) => {
            let combos = hullsweep_data::read_params_npy(path)?;
            kernel::validate_params(&combos).with_context(|| path.display().to_string())?;
            combos
        }
        None => kernel::grid(grid)?,
    };
    Ok(combos)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let grid = args.input.grid();
    let params = args.input.combos()?;
    if args.metrics || args.plot.is_some() {
        // The metrics and the plot take the series in memory (they are not resumable yet).
        let close = args.input.close()?;
        return super::columns::run_metrics(
            &close,
            &params,
            &grid,
            super::columns::Request {
                fee: args.input.fee,
                variant: args.variant,
                threads: threads(args.threads)?,
                json: matches!(args.format, Format::Json),
                metrics: args.metrics,
                out: args.out.as_deref(),
                plot: args.plot.as_deref().map(|p| (p, args.metric)),
            },
        );
    }
    let threads = threads(args.threads)?;
    super::stream::catch_interrupt();
    let rolling = matches!(args.variant, Variant::Rolling | Variant::RollingRayon);
    // A file is swept in chunks (any length, bounded memory); --stats needs the whole series
    // in memory for its rolling pass.
    if let (Some(path), false) = (args.input.data.as_deref(), args.stats || args.in_memory) {
        let start = Instant::now();
        let (result, bars) = super::stream::sweep_file(
            path,
            args.input.column.as_deref(),
            &params,
            args.input.fee,
            args.variant,
            threads,
        )?;
        let secs = start.elapsed().as_secs_f64();
        write_results(&args, &params, &result)?;
        eprintln!(
            "swept {} combos over {bars} bars with {} in {secs:.3} s (read in chunks){}",
            params.len(),
            args.variant.name(),
            super::stream::peak_rss_note()
        );
        return Ok(());
    }
    let close = args.input.close()?;
    let run_rolling = |threads| {
        let close = hullsweep_kernel::ValidClose::new(&close)?;
        rolling::sweep_with_stats(
            close,
            &params,
            args.input.fee,
            threads,
            Tier::best(),
            WmaKernel::best(),
        )
    };
    let start = Instant::now();
    let (result, stats) = if rolling && args.stats {
        let threads = if args.variant == Variant::Rolling {
            Threads::Fixed(1)
        } else {
            threads
        };
        let (r, s) = run_rolling(threads)?;
        (r, Some(s))
    } else {
        (
            args.variant
                .sweep(&close, &params, args.input.fee, threads)?,
            None,
        )
    };
    let secs = start.elapsed().as_secs_f64();
    let stats = match stats {
        Some(s) => Some(s),
        None if args.stats => Some(run_rolling(threads)?.1),
        None => None,
    };
    write_results(&args, &params, &result)?;
    eprintln!(
        "swept {} combos over {} bars with {} in {secs:.3} s{}",
        params.len(),
        close.len(),
        args.variant.name(),
        super::stream::peak_rss_note()
    );
    if let Some(s) = stats {
        eprintln!("{}", stats_line(&s, !rolling));
    }
    Ok(())
}

/// Prints the results, or writes them to `--out` all at once (never a partial file).
fn write_results(args: &Args, params: &[Combo], result: &SweepResult) -> anyhow::Result<()> {
    let text = match args.format {
        Format::Csv => to_csv(params, result),
        Format::Json => to_json(params, result),
    };
    match &args.out {
        Some(path) => super::stream::write_atomic(path, |f| Ok(f.write_all(text.as_bytes())?)),
        None => Ok(std::io::stdout().write_all(text.as_bytes())?),
    }
}

/// The `--stats` summary: certified share, fallback bars and what the fallback recomputed.
fn stats_line(s: &rolling::Stats, separate_pass: bool) -> String {
    format!(
        "rolling stats{}: {} of {} defined bar-combos certified ({:.4}%), {} fell back to the \
         reference's arithmetic ({} bars recomputed); {} combos ran whole on simd (windows too \
         long for the bound), {} are all NaN; peak working memory {:.1} MiB",
        if separate_pass {
            " (from a rolling pass)"
        } else {
            ""
        },
        s.bars - s.fallback_bars,
        s.bars,
        100.0 * s.certified_fraction(),
        s.fallback_bars,
        s.recomputed_bars,
        s.direct_combos,
        s.all_nan_combos,
        s.memory_bytes as f64 / (1 << 20) as f64,
    )
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
