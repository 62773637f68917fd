//! `hullsweep sweep`: run one variant over a series and a grid or params file, print per-combo results.

use super::args::{Inputs, parse_variant, threads, variant_help};
use hullsweep_data::{results, write_atomic};
use hullsweep_kernel::{Combo, SweepResult};
use hullsweep_variants::rolling;
use hullsweep_variants::simd::{Tier, WmaKernel};
use hullsweep_variants::{Threads, Variant};
use std::io::Write;
use std::path::PathBuf;
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
    #[arg(long, value_name = "NAME", default_value = "pnl", requires = "plot", value_parser = super::args::parse_metric)]
    metric: &'static str,
    /// Load the whole --data series into memory and sweep it in one batch (the path before
    /// streaming; `hullsweep lab --scale` compares the two). Same results, more memory.
    #[arg(long)]
    in_memory: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Format {
    Csv,
    Json,
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
    super::progress::catch_interrupt();
    let rolling = matches!(args.variant, Variant::Rolling | Variant::RollingRayon);
    // A file is swept in chunks (any length, bounded memory); --stats needs the whole series
    // in memory for its rolling pass.
    if let (Some(path), false) = (args.input.data.as_deref(), args.stats || args.in_memory) {
        let start = Instant::now();
        let bar = super::progress::Bar::new("sweeping");
        let swept = hullsweep_data::sweep_file(
            path,
            args.input.column.as_deref(),
            &params,
            args.input.fee,
            args.variant,
            threads,
            &bar,
        );
        bar.finish();
        let (result, bars) = swept?;
        let secs = start.elapsed().as_secs_f64();
        write_results(&args, &params, &result)?;
        eprintln!(
            "swept {} combos over {bars} bars with {} in {secs:.3} s (read in chunks){}",
            params.len(),
            args.variant.name(),
            super::progress::peak_rss_note()
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
        super::progress::peak_rss_note()
    );
    if let Some(s) = stats {
        eprintln!("{}", stats_line(&s, !rolling));
    }
    Ok(())
}

/// Prints the results, or writes them to `--out` all at once (never a partial file).
fn write_results(args: &Args, params: &[Combo], result: &SweepResult) -> anyhow::Result<()> {
    let text = match args.format {
        Format::Csv => results::sweep_csv(params, result),
        Format::Json => results::sweep_json(params, result),
    };
    match &args.out {
        Some(path) => write_atomic(path, &super::progress::Bar::new("writing"), |f| {
            Ok(f.write_all(text.as_bytes())?)
        }),
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
