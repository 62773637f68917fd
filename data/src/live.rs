//! The live filter behind `hullsweep stream`: one close per text line in, each bar's events out
//! as JSON lines (docs/kernel.md, "Trades and events"), flushed per bar, bit for bit the batch's.

use anyhow::{Context, bail};
use hullsweep_kernel::{Event, KernelError};
use hullsweep_variants::Live;
use serde::Serialize;
use std::io::{BufRead, ErrorKind, Write};

/// One event as a JSON line (`docs/kernel.md`, "Trades and events").
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
#[allow(missing_docs)] // the fields are Event's and Trade's, documented there
pub enum EventLine {
    /// A position opened: [`Event::Open`].
    Open {
        combo: usize,
        bar: u64,
        side: i64,
        price: f64,
    },
    /// A trade closed: [`Event::Close`].
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

impl From<&Event> for EventLine {
    fn from(e: &Event) -> EventLine {
        match *e {
            Event::Open {
                combo,
                bar,
                side,
                price,
            } => EventLine::Open {
                combo,
                bar,
                side,
                price,
            },
            Event::Close(t) => EventLine::Close {
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
pub enum Bar {
    /// A price, or NaN for a missing bar (its range is checked by [`Live::push`]).
    Price(f64),
    /// Not a number at all (the text is reported).
    NotANumber,
}

/// Parses one line: empty or `nan` is a missing bar (NaN); the range is left to `Live::push`,
/// which refuses a price <= 0 or infinite with the kernel's own check.
pub fn parse_line(text: &str) -> Bar {
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
#[derive(Debug, Default)]
pub struct Tally {
    /// Bars accepted (bad lines skipped are not bars).
    pub bars: u64,
    /// Of those, missing bars (an empty line or `nan`).
    pub missing: u64,
    /// Positions opened among the reported combos.
    pub opens: u64,
    /// Trades closed among the reported combos.
    pub closes: u64,
    /// Bad lines skipped (with `skip_bad`).
    pub bad: u64,
    /// The first bad line skipped, as its message.
    pub first_bad: Option<String>,
    /// A first line read as a column header (a name such as `close`, as a CSV has) and skipped.
    pub header: Option<String>,
    /// Per reported combo, from its events: `(combo, its state)`, in combo order.
    pub combos: Vec<(usize, ComboTally)>,
}

/// One combo's stream so far, read from its events: what the final summary says of it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ComboTally {
    /// The closed trades' PnL, summed in order from 0.0: the sweep's `pnl` bits.
    pub pnl: f64,
    /// Trades closed.
    pub trades: u64,
    /// The open position as `(side, entry bar, entry price)`, once one opened.
    pub open: Option<(i64, u64, f64)>,
}

impl Tally {
    /// A tally that also follows each combo marked in `report`.
    pub fn following(report: &[bool]) -> Tally {
        Tally {
            combos: (0..report.len())
                .filter(|&k| report[k])
                .map(|k| (k, ComboTally::default()))
                .collect(),
            ..Tally::default()
        }
    }

    /// Counts one reported event.
    fn event(&mut self, e: &Event) {
        let at = self.combos.binary_search_by_key(&e.combo(), |c| c.0);
        let c = at.ok().map(|i| &mut self.combos[i].1);
        match e {
            Event::Open {
                bar, side, price, ..
            } => {
                self.opens += 1;
                if let Some(c) = c {
                    c.open = Some((*side, *bar, *price));
                }
            }
            Event::Close(t) => {
                self.closes += 1;
                if let Some(c) = c {
                    c.pnl += t.pnl;
                    c.trades += 1;
                }
            }
        }
    }
}

/// Pushes bars already read and checked (a file's, as `hullsweep stream --data` reads it) into
/// `live` and writes the reported combos' events as [`pump`] does, flushing once at the end.
pub fn pump_bars(
    bars: &[f64],
    first_bar: u64,
    mut out: impl Write,
    live: &mut dyn Feed,
    report: &[bool],
    tally: &mut Tally,
) -> anyhow::Result<()> {
    let mut events = Vec::new();
    for (i, &close) in bars.iter().enumerate() {
        events.clear();
        let bar = first_bar + i as u64;
        match live.push_bar(close, &mut events) {
            Ok(()) => {}
            Err(FeedError::BadPrice(value)) => {
                bail!("bar {bar}: a bad price ({value}): prices must be finite and > 0")
            }
            Err(FeedError::Other(e)) => return Err(e).with_context(|| format!("bar {bar}")),
        }
        tally.bars += 1;
        tally.missing += u64::from(close.is_nan());
        write_events(&mut out, &events, report, tally)?;
    }
    Ok(out.flush()?)
}

/// Writes the reported combos' events as JSON lines and counts them.
fn write_events(
    out: &mut impl Write,
    events: &[Event],
    report: &[bool],
    tally: &mut Tally,
) -> anyhow::Result<()> {
    for e in events.iter().filter(|e| report[e.combo()]) {
        tally.event(e);
        serde_json::to_writer(&mut *out, &EventLine::from(e))?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// True when `e` is a write to a reader that went away (`| head`), which a filter treats as a
/// quiet end, as `cat` does.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == ErrorKind::BrokenPipe)
}

/// What [`pump`] pushes each bar into: the in-process [`Live`] state, or a stream on an engine
/// (`hullsweep stream --connect`). Both must give the same events for the same bars.
pub trait Feed {
    /// Pushes one bar's close (NaN: a missing bar) and appends the events it caused. A price
    /// <= 0 or infinite is [`FeedError::BadPrice`], and changes nothing.
    fn push_bar(&mut self, close: f64, events: &mut Vec<Event>) -> Result<(), FeedError>;
}

/// Why a bar was not pushed.
#[derive(Debug)]
pub enum FeedError {
    /// The price is <= 0 or infinite; the stream is as it was.
    BadPrice(f64),
    /// Anything else (the kernel's or the transport's error): the filter stops.
    Other(anyhow::Error),
}

impl Feed for Live {
    fn push_bar(&mut self, close: f64, events: &mut Vec<Event>) -> Result<(), FeedError> {
        self.push(close, events).map_err(|e| match e {
            KernelError::BadPrice { value, .. } => FeedError::BadPrice(value),
            other => FeedError::Other(other.into()),
        })
    }
}

/// The live filter: reads one bar's close per line from `input` until EOF, pushes it into `live`
/// (a [`Feed`]) and writes the events of the combos marked in `report` to `out` as JSON lines ([`EventLine`]),
/// flushed per bar before the next line is read, so it works on a live feed. A bad line stops
/// with an error naming its line number and text, or with `skip_bad` is counted in `tally`.
///
/// # Errors
///
/// A bad line without `skip_bad`, or an error reading `input` or writing `out` (a closed
/// reader is an [`std::io::Error`] of kind `BrokenPipe` in the chain: see [`is_broken_pipe`]).
pub fn pump(
    mut input: impl BufRead,
    mut out: impl Write,
    live: &mut dyn Feed,
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
            Bar::NotANumber if lineno == 1 && is_header(text) => {
                tally.header = Some(text.to_string());
                continue;
            }
            Bar::NotANumber => {
                let msg = bad(
                    "is not a price (a number, or an empty line or nan for a missing bar)".into(),
                );
                skip_or_fail(msg, skip_bad, tally)?;
                continue;
            }
        };
        events.clear();
        match live.push_bar(close, &mut events) {
            Ok(()) => {}
            Err(FeedError::BadPrice(value)) => {
                let msg = bad(format!(
                    "is a bad price ({value}): prices must be finite and > 0"
                ));
                skip_or_fail(msg, skip_bad, tally)?;
                continue;
            }
            Err(FeedError::Other(e)) => return Err(e).with_context(|| format!("line {lineno}")),
        }
        tally.bars += 1;
        tally.missing += u64::from(close.is_nan());
        write_events(&mut out, &events, report, tally)?;
        if !events.is_empty() {
            out.flush()?;
        }
    }
}

/// A column name on the first line (`close`, `Close`, `adj_close`, `price (USD)`): it starts
/// with a letter, so a number or a bad price (`-5`, `1.5.2`) never reads as one.
fn is_header(text: &str) -> bool {
    text.trim_start().starts_with(|c: char| c.is_alphabetic())
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
            serde_json::to_string(&EventLine::Close {
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
