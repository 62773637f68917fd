//! `hullsweep sweep`: run one variant over a series and a grid or params file, print per-combo results.

use super::args::{Inputs, parse_variant, threads, variant_help};
use super::sweep_out::{Format, write_results};
use anyhow::Context;
use hullsweep_engine::Address;
use hullsweep_variants::rolling;
use hullsweep_variants::simd::{Tier, WmaKernel};
use hullsweep_variants::{Threads, Variant};
use std::path::PathBuf;
use std::time::Instant;

/// Sweep every combo of windows over a close series and print `pnl` and `trades` per combo.
///
/// The series comes from a 1-D float64 .npy or a CSV column (an empty cell is a missing bar);
/// without --data the built-in default series is used. Combos come from a grid of HMA lengths,
/// each expanded to six windows as docs/kernel.md derives them, or from an n x 6 int64 .npy file.
/// A --data file is read and swept in chunks (256 Ki bars, or one Parquet row group), so its
/// length is limited by the disk, not memory (with --connect it is read whole).
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub(super) input: Inputs,
    #[arg(long, value_name = "NAME", help = format!("{} [default: fastest]", variant_help("Implementation to run")), value_parser = parse_variant)]
    pub(super) variant: Option<Variant>,
    /// Worker threads for parallel variants (default: all cores).
    #[arg(long, value_name = "N")]
    pub(super) threads: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value = "csv")]
    pub(super) format: Format,
    /// Report only these combos' rows (indices into the grid or params, comma separated, as the
    /// `combo` column numbers them); every combo still runs, so indices and results are those
    /// of the whole sweep.
    #[arg(long, value_name = "K,K,...", value_delimiter = ',')]
    pub(super) combo: Vec<usize>,
    /// Write results here instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub(super) out: Option<PathBuf>,
    /// Also report, on stderr, how much of the sweep the rolling variant's error bound certified
    /// and how many bars fell back to the reference's arithmetic (a high count means adversarial
    /// data: flat runs or ticks where d sits a few ulps from zero). With another variant, a
    /// rolling pass is run for the counts.
    #[arg(long)]
    pub(super) stats: bool,
    /// Add the metrics columns wins, long_pnl, short_pnl, long_trades, short_trades, best_trade,
    /// worst_trade, max_drawdown, bars_in_market (defined in the repository's docs/kernel.md,
    /// from the same event loop; every variant gives the numba reference's bits), then sharpe
    /// (per-bar mean / std of the bar returns), win_rate (wins / trades) and profit_factor
    /// (gross profit / gross loss; empty without a losing trade), as docs/research.md defines.
    #[arg(long, conflicts_with = "stats")]
    pub(super) metrics: bool,
    /// Report each combo per fold instead: S folds of the bars (numpy.array_split; S even), one
    /// row per (combo, fold) with combo, fold, first_bar, last_bar, bars, pnl (the trades
    /// exiting in the fold), trades, and the mean, std and sharpe of the fold's bar returns
    /// (docs/research.md). One pass, every variant; a --data file is read in chunks, so memory
    /// does not grow with its length (a CSV is read once more first, to count its bars).
    #[arg(long, value_name = "S", conflicts_with_all = ["stats", "metrics", "plot"])]
    pub(super) folds: Option<usize>,
    /// Also write every combo's bar returns (marked-to-market PnL change per bar, docs/kernel.md)
    /// as a bars x combos float64 .npy in C order, filled as combos finish: the input of
    /// `hullsweep pbo --matrix`. Its size is 8 x bars x combos bytes.
    #[arg(long, value_name = "FILE.npy", conflicts_with = "stats")]
    pub(super) returns: Option<PathBuf>,
    /// Draw the sweep as an SVG: a heatmap over (HMA length, HMA3 length) for a two-axis grid
    /// (--grid3), a line over the length for a one-axis grid; the best combo is marked.
    #[arg(long, value_name = "FILE.svg", conflicts_with_all = ["params", "stats"], value_parser = svg_path)]
    pub(super) plot: Option<PathBuf>,
    /// The metric --plot draws: pnl, trades or any --metrics column (lowest is best for
    /// max_drawdown, highest for the others).
    #[arg(long, value_name = "NAME", default_value = "pnl", requires = "plot", value_parser = super::args::parse_metric)]
    pub(super) metric: &'static str,
    /// Have the engine (`hullsweep serve`) at ADDR sweep: shm:NAME, unix:PATH or tcp:HOST:PORT
    /// (TLS with --tls-ca or --tls-pin). The output is byte for byte the local command's; the
    /// series (--data read whole, or the built-in one) goes to the server, whose --variant and
    /// --threads apply, so this refuses them, --stats, --metrics and a --metric beyond pnl and
    /// trades. Ctrl-C stops between pushes (a fee other than the server's --fee goes as a live
    /// stream, in pieces) or once the server's reply is in, and writes nothing.
    #[arg(long, value_name = "ADDR")]
    pub(super) connect: Option<Address>,
    #[command(flatten)]
    pub(super) remote: super::connect::Remote,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let variant = args.variant.unwrap_or_else(Variant::fastest);
    let grid = args.input.grid();
    let params = args.input.combos()?;
    hullsweep_kernel::check_combos(&args.combo, params.len()).context("--combo")?;
    let bars = match args.input.data.as_deref() {
        Some(path) => hullsweep_data::open(path, args.input.column.as_deref())?.len_hint(),
        None => Some(hullsweep_kernel::DEFAULT_BARS as u64),
    };
    super::preflight::announce(&params, bars);
    if args.folds.is_some() || args.metrics || args.plot.is_some() || args.returns.is_some() {
        return research_columns(&args, variant, &params, &grid);
    }
    let threads = threads(args.threads)?;
    super::progress::catch_interrupt();
    let rolling = matches!(variant, Variant::Rolling | Variant::RollingRayon);
    // A file is swept in chunks (any length, bounded memory); --stats needs the whole series
    // in memory for its rolling pass.
    if let (Some(path), false) = (args.input.data.as_deref(), args.stats) {
        let start = Instant::now();
        let bar = super::progress::Bar::sweep();
        let swept = hullsweep_data::sweep_file(
            path,
            args.input.column.as_deref(),
            &params,
            args.input.fee,
            variant,
            threads,
            &bar,
        );
        bar.finish();
        let (result, bars, missing) = swept?;
        let secs = start.elapsed().as_secs_f64();
        write_results(
            args.format,
            args.out.as_deref(),
            &params,
            &result,
            &args.combo,
        )?;
        eprintln!(
            "swept {} combos over {bars} bars ({missing} missing) with {} in {secs:.3} s (read \
             in chunks){}",
            params.len(),
            variant.name(),
            super::progress::peak_rss_note()
        );
        return Ok(());
    }
    let close = args.input.close(threads)?;
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
        let threads = if variant == Variant::Rolling {
            Threads::Fixed(1)
        } else {
            threads
        };
        let (r, s) = run_rolling(threads)?;
        (r, Some(s))
    } else {
        let bar = super::progress::Bar::sweep();
        let swept =
            hullsweep_data::sweep_series(&close, &params, args.input.fee, variant, threads, &bar);
        bar.finish();
        (swept?, None)
    };
    let secs = start.elapsed().as_secs_f64();
    let stats = match stats {
        Some(s) => Some(s),
        None if args.stats => Some(run_rolling(threads)?.1),
        None => None,
    };
    write_results(
        args.format,
        args.out.as_deref(),
        &params,
        &result,
        &args.combo,
    )?;
    eprintln!(
        "swept {} combos over {} bars ({} missing) with {} in {secs:.3} s{}",
        params.len(),
        close.len(),
        close.iter().filter(|x| x.is_nan()).count(),
        variant.name(),
        super::progress::peak_rss_note()
    );
    if let Some(s) = stats {
        eprintln!("{}", stats_line(&s, !rolling));
    }
    Ok(())
}

/// `--folds`, `--metrics`, `--returns` and `--plot`: the fold sweep over a file read in chunks,
/// or the built-in series in memory.
fn research_columns(
    args: &Args,
    variant: Variant,
    params: &[hullsweep_kernel::Combo],
    grid: &hullsweep_kernel::Grid,
) -> anyhow::Result<()> {
    let threads = threads(args.threads)?;
    let built_in;
    let series = match args.input.data.as_deref() {
        Some(path) => super::folds::Series::File {
            path,
            column: args.input.column.as_deref(),
        },
        None => {
            built_in = args.input.close(threads)?;
            super::folds::Series::Memory(&built_in)
        }
    };
    if let Some(folds) = args.folds {
        let swept = super::folds::sweep(
            &series,
            params,
            args.input.fee,
            variant,
            threads,
            Some(folds),
            args.returns.as_deref(),
        )?;
        return super::folds::write_folds(args.format, args.out.as_deref(), &swept, &args.combo);
    }
    super::columns::run_metrics(
        &series,
        params,
        grid,
        super::columns::Request {
            fee: args.input.fee,
            returns: args.returns.as_deref(),
            variant,
            threads,
            table: table(args),
        },
    )
}

/// `--plot`: refused before any work unless it names an .svg.
fn svg_path(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    hullsweep_data::plot::check_svg_path(&path).map_err(|e| e.to_string())?;
    Ok(path)
}

/// What `--format`, `--metrics`, `--out` and `--plot` ask to be written and drawn.
pub(super) fn table(args: &Args) -> super::columns::Table<'_> {
    super::columns::Table {
        json: matches!(args.format, Format::Json),
        metrics: args.metrics,
        out: args.out.as_deref(),
        plot: args.plot.as_deref().map(|p| (p, args.metric)),
        combos: &args.combo,
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
