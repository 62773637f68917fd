//! `hullsweep stream`: the live filter. Prices in on stdin, one per line; each bar's events out
//! on stdout as JSON lines, flushed per bar, bit for bit the batch sweep's trades.

use super::sweep::{FEE_HELP, load_params, parse_grid};
use anyhow::{Context, bail};
use hullsweep_kernel::{self as kernel, DEFAULT_FEE_PCT, Event, GridSpec, KernelError};
use hullsweep_variants::Live;
use serde::Serialize;
use std::io::{BufRead, BufWriter, ErrorKind, Write};
use std::path::PathBuf;

/// Run the sweep's combos live: prices in on stdin, events out as JSON lines, flushed per bar.
///
/// Each input line is one bar's close: a number (`101.25`, `1e2`), finite and > 0. An empty line
/// (spaces ignored) or `nan` (any case) is a missing bar, as an empty CSV cell or a NaN is in a
/// sweep. Each bar's events are written, then flushed, before the next line is read, so the
/// command works as a filter on a live feed (see the examples below).
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
    #[arg(long)]
    skip_bad: bool,
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

/// One event as a JSON line (`docs/kernel.md`, "Trades and events").
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
enum Line {
    Open {
        combo: usize,
        bar: u64,
        side: i64,
        price: f64,
    },
    Close {
        combo: usize,
        side: i64,
        entry_bar: u64,
        exit_bar: u64,
        entry_price: f64,
        exit_price: f64,
        #[serde(serialize_with = "finite_or_string")]
        pnl: f64,
    },
}

/// A finite float as a JSON number (shortest round-trip form), a non-finite one as the string
/// the gate's fixtures use ("inf", "-inf", "NaN"): JSON has no number for it.
fn finite_or_string<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else {
        s.serialize_str(&v.to_string())
    }
}

impl From<&Event> for Line {
    fn from(e: &Event) -> Line {
        match *e {
            Event::Open {
                combo,
                bar,
                side,
                price,
            } => Line::Open {
                combo,
                bar,
                side,
                price,
            },
            Event::Close(t) => Line::Close {
                combo: t.combo,
                side: t.side,
                entry_bar: t.entry_bar,
                exit_bar: t.exit_bar,
                entry_price: t.entry_price,
                exit_price: t.exit_price,
                pnl: t.pnl,
            },
        }
    }
}

/// What one input line holds.
#[derive(Debug, PartialEq)]
enum Bar {
    Price(f64),
    /// Not a number at all (the text is reported).
    NotANumber,
}

/// Parses one line: empty or `nan` is a missing bar (NaN); the range is left to `Live::push`,
/// which refuses a price <= 0 or infinite with the kernel's own check.
fn parse_line(text: &str) -> Bar {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("nan") {
        return Bar::Price(f64::NAN);
    }
    match t.parse::<f64>() {
        // Rust also reads "NaN" spelt other ways ("+nan"); one spelling is enough.
        Ok(v) if !v.is_nan() => Bar::Price(v),
        _ => Bar::NotANumber,
    }
}

/// Counts for the summary.
#[derive(Default)]
struct Tally {
    bars: u64,
    missing: u64,
    opens: u64,
    closes: u64,
    bad: u64,
    first_bad: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let params = match (&args.params, args.grid3) {
        (None, Some(hma3)) => kernel::Grid {
            hma: args.grid,
            hma3: Some(hma3),
        }
        .combos()?,
        _ => load_params(args.params.as_deref(), args.grid)?,
    };
    let mut live = Live::new(&params, args.fee)?;
    kernel::check_combos(&args.combo, params.len()).context("--combo")?;
    let mut report = vec![args.combo.is_empty(); params.len()];
    for &k in &args.combo {
        report[k] = true;
    }

    let stdin = std::io::stdin().lock();
    let out = BufWriter::new(std::io::stdout().lock());
    let mut tally = Tally::default();
    let outcome = pump(stdin, out, &mut live, &report, args.skip_bad, &mut tally);
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
    if tally.bad > 0 {
        summary += &format!(
            "; {} bad lines skipped (the first: {})",
            tally.bad,
            tally.first_bad.as_deref().unwrap_or("")
        );
    }
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

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == ErrorKind::BrokenPipe)
}

/// Reads bars until EOF, writing and flushing each bar's events before reading the next line.
fn pump(
    mut input: impl BufRead,
    mut out: impl Write,
    live: &mut Live,
    report: &[bool],
    skip_bad: bool,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    let mut raw = Vec::new();
    let mut events = Vec::new();
    let mut lineno: u64 = 0;
    loop {
        raw.clear();
        if input
            .read_until(b'\n', &mut raw)
            .context("cannot read stdin")?
            == 0
        {
            return Ok(());
        }
        lineno += 1;
        let text = String::from_utf8_lossy(&raw);
        let text = text.trim_end_matches(['\n', '\r']);
        let bad = |why: String| format!("line {lineno}: {text:?} {why}");
        let close = match parse_line(text) {
            Bar::Price(v) => v,
            Bar::NotANumber => {
                let msg = bad(
                    "is not a price (a number, or an empty line or nan for a missing bar)".into(),
                );
                skip_or_fail(msg, skip_bad, tally)?;
                continue;
            }
        };
        events.clear();
        match live.push(close, &mut events) {
            Ok(()) => {}
            Err(KernelError::BadPrice { value, .. }) => {
                let msg = bad(format!(
                    "is a bad price ({value}): prices must be finite and > 0"
                ));
                skip_or_fail(msg, skip_bad, tally)?;
                continue;
            }
            Err(e) => return Err(e).with_context(|| format!("line {lineno}")),
        }
        tally.bars += 1;
        tally.missing += u64::from(close.is_nan());
        for e in events.iter().filter(|e| report[e.combo()]) {
            match e {
                Event::Open { .. } => tally.opens += 1,
                Event::Close(_) => tally.closes += 1,
            }
            serde_json::to_writer(&mut out, &Line::from(e))?;
            out.write_all(b"\n")?;
        }
        if !events.is_empty() {
            out.flush()?;
        }
    }
}

fn skip_or_fail(msg: String, skip_bad: bool, tally: &mut Tally) -> anyhow::Result<()> {
    if !skip_bad {
        bail!("{msg} (--skip-bad skips such lines)");
    }
    tally.bad += 1;
    tally.first_bad.get_or_insert(msg);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_a_price_a_missing_bar_or_not_a_number() {
        assert_eq!(parse_line(" 101.5 \r"), Bar::Price(101.5));
        assert_eq!(parse_line("1e2"), Bar::Price(100.0));
        assert!(matches!(parse_line(""), Bar::Price(v) if v.is_nan()));
        assert!(matches!(parse_line("  "), Bar::Price(v) if v.is_nan()));
        assert!(matches!(parse_line("NaN"), Bar::Price(v) if v.is_nan()));
        assert_eq!(parse_line("abc"), Bar::NotANumber);
        assert_eq!(parse_line("1,5"), Bar::NotANumber);
        assert_eq!(parse_line("+nan"), Bar::NotANumber);
        // Range checks are Live's: these parse and are refused there.
        assert_eq!(parse_line("-3"), Bar::Price(-3.0));
        assert_eq!(parse_line("inf"), Bar::Price(f64::INFINITY));
    }

    #[test]
    fn a_non_finite_pnl_is_a_string_and_a_float_its_shortest_form() {
        let close = |pnl| {
            serde_json::to_string(&Line::Close {
                combo: 0,
                side: 1,
                entry_bar: 0,
                exit_bar: 1,
                entry_price: 0.1,
                exit_price: 1e300,
                pnl,
            })
            .unwrap()
        };
        assert_eq!(
            close(f64::INFINITY),
            r#"{"event":"close","combo":0,"side":1,"entry_bar":0,"exit_bar":1,"entry_price":0.1,"exit_price":1e+300,"pnl":"inf"}"#
        );
        assert!(close(f64::NEG_INFINITY).ends_with(r#""pnl":"-inf"}"#));
        assert!(close(f64::NAN).ends_with(r#""pnl":"NaN"}"#));
        assert!(close(-0.25).ends_with(r#""pnl":-0.25}"#));
    }
}
