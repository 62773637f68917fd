//! `hullsweep trades`: the closed trades of chosen combos (docs/kernel.md, "Trades and events"),
//! as CSV or JSON, the same bits as the gated trade log.

use super::args::Inputs;
use anyhow::Context;
use hullsweep_data::trade_log;
use hullsweep_gate::trades;
use hullsweep_kernel::{self as kernel, Combo};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Print every closed trade of the chosen combos: side, entry and exit bar and price, and PnL.
///
/// The same series, combos and fee options as `hullsweep sweep`; --combo picks combos by their
/// index in the params (the `combo` column of `hullsweep sweep`'s output). Each trade's pnl is
/// the kernel's own expression, so a combo's trades, summed in order from 0.0, give its sweep
/// pnl bit for bit; floats are printed so that they parse back to the same bits. Bars are
/// numbered from 0 over the whole series. Defined in the repository's docs/kernel.md
/// ("Trades and events") and checked against numba by `hullsweep gate`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  hullsweep trades --combo 0                      # combo 0 of the default grid, CSV on stdout
  hullsweep trades --combo 3,17 --out t.json      # two combos, JSON (the .json name says so)
  hullsweep trades --data prices.csv --grid 10:60:6 --combo all --out trades.csv
  hullsweep sweep --grid 10:60:6 | sort -t, -k8 -g | tail -1   # find a combo, then its trades")]
pub struct Args {
    #[command(flatten)]
    input: Inputs,
    /// Which combos: indices into the params from 0, comma separated (3,17) or repeated, or
    /// `all`. Trades come combo by combo in the order given, each combo's in bar order.
    #[arg(long, value_name = "K[,K...]|all", required = true, value_delimiter = ',', value_parser = parse_combo)]
    combo: Vec<Pick>,
    /// Output format (default: json for an --out ending in .json, csv otherwise).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Write the trades here, all at once (a partial file is never left), instead of standard
    /// output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// One `--combo` item.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pick {
    All,
    One(usize),
}

fn parse_combo(s: &str) -> Result<Pick, String> {
    match s.trim() {
        "all" => Ok(Pick::All),
        t => t.parse().map(Pick::One).map_err(|_| {
            format!("{s:?} is not a combo: give an index from 0 (as in `hullsweep sweep`'s combo column) or `all`")
        }),
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum Format {
    Csv,
    Json,
}

/// The combos picked, checked against the params (a bad one is named with the range).
fn picked(picks: &[Pick], params: &[Combo]) -> anyhow::Result<Vec<usize>> {
    let combos: Vec<usize> = if picks.contains(&Pick::All) {
        (0..params.len()).collect()
    } else {
        picks
            .iter()
            .filter_map(|p| match p {
                Pick::One(k) => Some(*k),
                Pick::All => None,
            })
            .collect()
    };
    kernel::check_combos(&combos, params.len()).context("--combo")?;
    Ok(combos)
}

fn format(args: &Args) -> Format {
    let json_name = |p: &Path| {
        p.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    };
    match (args.format, &args.out) {
        (Some(f), _) => f,
        (None, Some(p)) if json_name(p) => Format::Json,
        _ => Format::Csv,
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let params = args.input.combos()?;
    // Checked before the series is read: a typo should not cost a long load.
    let combos = picked(&args.combo, &params)?;
    let close = args.input.close(hullsweep_variants::Threads::Auto)?;
    let (name, log) = trades::best();
    let start = Instant::now();
    let log = log(&close, &params, args.input.fee, &combos)?;
    let secs = start.elapsed().as_secs_f64();
    let text = match format(&args) {
        Format::Csv => trade_log::to_csv(&log),
        Format::Json => trade_log::to_json(&log),
    };
    match &args.out {
        Some(path) => {
            hullsweep_data::write_atomic(path, &super::progress::Bar::new("writing"), |f| {
                Ok(f.write_all(text.as_bytes())?)
            })?
        }
        None => match std::io::stdout().lock().write_all(text.as_bytes()) {
            // `hullsweep trades ... | head` closes the pipe early: the reader has what it wanted.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            other => other?,
        },
    }
    eprintln!(
        "{} trades of {} combos over {} bars ({name}) in {secs:.3} s",
        log.len(),
        combos.len(),
        close.len()
    );
    Ok(())
}
