//! `hullsweep stream`: the live filter. Prices in on stdin, one per line; each bar's events out
//! on stdout as JSON lines, flushed per bar, bit for bit the batch sweep's trades.

use super::args::{FEE_HELP, load_params, parse_grid};
use super::remote::RemoteFeed;
use anyhow::Context;
use hullsweep_data::for_each_chunk;
use hullsweep_data::live::{Feed, Tally, is_broken_pipe, pump, pump_bars};
use hullsweep_engine::Address;
use hullsweep_kernel::{self as kernel, DEFAULT_FEE_PCT, GridSpec};
use hullsweep_variants::Live;
use std::io::BufWriter;
use std::path::PathBuf;

/// Run the sweep's combos live: prices in on stdin, events out as JSON lines, flushed per bar.
///
/// Each input line is one bar's close: a number (`101.25`, `1e2`), finite and > 0. An empty line
/// (spaces ignored) or `nan` (any case) is a missing bar, as an empty CSV cell or a NaN is in a
/// sweep. A first line that starts with a letter is a column header (`close`, as
/// `hullsweep data --out -` writes) and is skipped, which the summary says. Each bar's events
/// are written, then flushed, before the next line is read, so the command works as a filter
/// on a live feed (see the examples below).
///
/// One JSON object per line and per event, bars in order and, within a bar, combos ascending,
/// a combo's close before its open (a reversal). Bars count from 0 over the accepted lines (a
/// skipped bad line is not a bar). The fields are those of docs/kernel.md ("Trades and events"):
/// the closes are `hullsweep_kernel::trades` over the same bars, bit for bit. Floats are written
/// in their shortest form that parses back to the same bits; JSON has no infinities or NaN, so a
/// pnl that is one (possible only at extreme prices) is the string "inf", "-inf" or "NaN". At
/// the end of input a one-line summary goes to stderr.
///
/// A bad line (not a number, or a price <= 0 or infinite) stops the stream with an error naming
/// its line number and text (exit code 1); every earlier bar's events are already written. With
/// --skip-bad it is skipped and counted instead.
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Grid of HMA lengths LO:HI:K, as `hullsweep sweep --grid` takes it.
    #[arg(
        long,
        value_name = "LO:HI:K",
        default_value = "6:200:80",
        value_parser = parse_grid,
        conflicts_with = "params"
    )]
    grid: GridSpec,
    /// HMA3 lengths swept independently (a two-axis grid), as `hullsweep sweep --grid3`.
    #[arg(long, value_name = "LO:HI:K", value_parser = parse_grid, conflicts_with = "params")]
    grid3: Option<GridSpec>,
    /// Explicit combos: an n x 6 int64 .npy, columns hma_n, hma_half, hma_sqrt, hma3_m,
    /// hma3_half, hma3_third (e.g. the rows a sweep picked).
    #[arg(long, value_name = "FILE.npy")]
    params: Option<PathBuf>,
    #[arg(long, value_name = "PCT", help = FEE_HELP, default_value_t = DEFAULT_FEE_PCT, allow_negative_numbers = true)]
    fee: f64,
    /// Report only these combos' events (indices into the grid or params, comma separated);
    /// every combo still runs, so the indices and results are those of the whole sweep.
    #[arg(long, value_name = "K,K,...", value_delimiter = ',')]
    combo: Vec<usize>,
    /// Skip bad lines (not a number, a price <= 0 or infinite) instead of stopping; their count
    /// and the first one are reported on stderr at the end.
    #[arg(long, conflicts_with = "data")]
    skip_bad: bool,
    /// Read the bars from this file instead of stdin: a .npy (1-D float64), .csv or .parquet,
    /// as `hullsweep sweep --data` reads it (an empty CSV cell is a missing bar; a bad price
    /// stops the stream, named by index and line). The same events as the file's lines piped in.
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
    /// The CSV or Parquet column holding the close, as `hullsweep sweep --column`.
    #[arg(long, value_name = "NAME", requires = "data")]
    column: Option<String>,
    /// Run the stream on an engine (`hullsweep serve`) at ADDR: shm:NAME, unix:PATH or
    /// tcp:HOST:PORT (TLS with --tls-ca or --tls-pin). Same output; each line is still pushed
    /// (one round trip) and its events written before the next line is read.
    #[arg(long, value_name = "ADDR")]
    connect: Option<Address>,
    #[command(flatten)]
    remote: super::connect::Remote,
}

const EXAMPLES: &str = "\
Examples:
  # follow a growing price file, report combo 0 of a 6-length grid
  tail -f prices.txt | hullsweep stream --grid 10:60:6 --combo 0

  # the combos a sweep picked, zero fee, bad lines skipped
  hullsweep stream --params picked.npy --fee 0 --skip-bad < prices.txt > events.jsonl

Output of the first (hullsweep data --bars 3000, one price a line; a reversal is a close,
then an open, at the same bar):
  {\"event\":\"close\",\"combo\":0,\"side\":-1,\"entry_bar\":22,\"exit_bar\":29,\"entry_price\":100.6379823635438,\"exit_price\":100.79004766417911,\"pnl\":-0.2411013009839468}
  {\"event\":\"open\",\"combo\":0,\"bar\":29,\"side\":1,\"price\":100.79004766417911}

Floats are exact when parsed with an exact parser (Python's json, serde_json with its
float_roundtrip feature); a fast approximate one can be an ulp off.";

pub fn run(args: Args) -> anyhow::Result<()> {
    let params = match (&args.params, args.grid3) {
        (None, Some(hma3)) => kernel::Grid {
            hma: args.grid,
            hma3: Some(hma3),
        }
        .combos()?,
        _ => load_params(args.params.as_deref(), args.grid)?,
    };
    kernel::check_combos(&args.combo, params.len()).context("--combo")?;
    let (mut local, mut remote) = match &args.connect {
        None => (Some(Live::new(&params, args.fee)?), None),
        Some(address) => {
            let client = args.remote.connect(address)?;
            let feed = RemoteFeed::open(client, &params, args.fee)
                .map_err(|e| args.remote.explain(address, e))?;
            (None, Some(feed))
        }
    };
    let feed: &mut dyn Feed = match (&mut local, &mut remote) {
        (Some(live), _) => live,
        (None, Some(remote)) => remote,
        (None, None) => unreachable!("one feed is made above"),
    };
    let mut report = vec![args.combo.is_empty(); params.len()];
    for &k in &args.combo {
        report[k] = true;
    }

    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut tally = Tally::following(&report);
    let mut outcome = match &args.data {
        None => pump(
            std::io::stdin().lock(),
            out,
            feed,
            &report,
            args.skip_bad,
            &mut tally,
        ),
        Some(path) => {
            let bar = super::progress::Bar::new("streaming");
            let read = for_each_chunk(path, args.column.as_deref(), &bar, |chunk| {
                let first = tally.bars;
                pump_bars(chunk, first, &mut out, feed, &report, &mut tally)
            });
            bar.finish();
            read.map(|_| ())
        }
    };
    if let Some(remote) = remote {
        outcome = outcome.and(remote.close());
    }
    let shown = if args.combo.is_empty() {
        format!("{} combos", params.len())
    } else {
        format!("{} of {} combos", args.combo.len(), params.len())
    };
    let mut summary = format!(
        "stream: {} bars ({} missing), {} events reported for {shown} ({} trades closed, {} positions opened)",
        tally.bars,
        tally.missing,
        tally.opens + tally.closes,
        tally.closes,
        tally.opens
    );
    if let Some(h) = &tally.header {
        summary += &format!("; line 1 ({h:?}) read as a column header and skipped");
    }
    if tally.bad > 0 {
        summary += &format!(
            "; {} bad lines skipped (the first: {})",
            tally.bad,
            tally.first_bad.as_deref().unwrap_or("")
        );
    }
    summary += &per_combo(&tally);
    match outcome {
        Ok(()) => {
            eprintln!("{summary}");
            Ok(())
        }
        // The reader went away (`| head`): a filter stops quietly, as `cat` does.
        Err(e) if is_broken_pipe(&e) => Ok(()),
        Err(e) => {
            eprintln!("{summary}; stopped by the error below");
            Err(e)
        }
    }
}

/// Combos summarised one per line at the end of a stream; more are left to `--combo`.
const SUMMARY_COMBOS: usize = 20;

/// The final per-combo lines: each reported combo's PnL, trades and open position, from its
/// events (the PnL summed in order, so it is the sweep's own bits).
fn per_combo(tally: &Tally) -> String {
    if tally.combos.len() > SUMMARY_COMBOS {
        return format!(
            "\n(per-combo summary for up to {SUMMARY_COMBOS} combos: choose them with --combo)"
        );
    }
    let mut s = String::new();
    for (k, c) in &tally.combos {
        let position = match c.open {
            None => "flat".to_string(),
            Some((side, bar, price)) => format!(
                "{} since bar {bar} at {price}",
                if side > 0 { "long" } else { "short" }
            ),
        };
        s += &format!(
            "\n  combo {k}: pnl {}, {} trades, {position}",
            c.pnl, c.trades
        );
    }
    s
}
