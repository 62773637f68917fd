//! `hullsweep stream`: bars piped in one per line give the reference's events bit for bit (every
//! close the kernel's trade log), missing and bad lines are handled as documented, and each bar's
//! events are flushed before the next line is read.

use assert_cmd::Command;
use hullsweep_data::datasets;
use hullsweep_kernel::{self as kernel, Combo, Event, Trade, ValidClose, window};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

fn hullsweep() -> Command {
    Command::cargo_bin("hullsweep").unwrap()
}

/// The series as stdin text: one bar per line, a NaN as `missing` (an empty line or "nan").
fn lines(close: &[f64], missing: &str) -> String {
    let mut s = String::new();
    for v in close {
        if v.is_nan() {
            s += missing;
        } else {
            s += &v.to_string(); // Display is the shortest text that parses back to the bits
        }
        s += "\n";
    }
    s
}

/// The reference's events over `close`: every combo's `backtest_events`, ordered as the stream
/// promises (bars ascending, then combos ascending, a combo's close before its open).
fn reference_events(close: &[f64], params: &[Combo], fee: f64) -> Vec<Event> {
    let mut all = Vec::new();
    for (k, c) in params.iter().enumerate() {
        let [n, half, sqrt, m, half3, third] = c.map(window);
        let h = kernel::hma(close, n, half, sqrt);
        let h3 = kernel::hma3(close, m, half3, third);
        kernel::backtest_events(close, &h, &h3, fee, k, |e| all.push(e));
    }
    // Stable: a combo's close and open at one bar keep their order.
    all.sort_by_key(|e| (e.bar(), e.combo()));
    all
}

/// The float field `key` of a JSON line, parsed from its text by Rust's exact parser (serde_json's
/// default parser can be an ulp off; Python's json is exact): a number, or "inf" / "-inf" /
/// "NaN" where JSON has none.
fn float(line: &str, key: &str) -> f64 {
    let tag = format!("\"{key}\":");
    let at = line
        .find(&tag)
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        + tag.len();
    let text = line[at..].split([',', '}']).next().unwrap();
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(s) => {
            assert!(["inf", "-inf", "NaN"].contains(&s), "{line}");
            s.parse().unwrap()
        }
        None => text
            .parse()
            .unwrap_or_else(|e| panic!("{key} in {line}: {e}")),
    }
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an int: {v}"))
}

/// Parses the stream's stdout, checking every line is one event object with exactly its fields.
fn parse_events(stdout: &[u8]) -> Vec<Event> {
    let text = std::str::from_utf8(stdout).unwrap();
    text.lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            let o = v.as_object().unwrap();
            let keys: Vec<&str> = o.keys().map(String::as_str).collect();
            match o["event"].as_str().unwrap() {
                "open" => {
                    assert_eq!(keys, ["event", "combo", "bar", "side", "price"], "{line}");
                    Event::Open {
                        combo: int(&o["combo"]) as usize,
                        bar: int(&o["bar"]) as u64,
                        side: int(&o["side"]),
                        price: float(line, "price"),
                    }
                }
                "close" => {
                    assert_eq!(
                        keys,
                        [
                            "event",
                            "combo",
                            "side",
                            "entry_bar",
                            "exit_bar",
                            "entry_price",
                            "exit_price",
                            "pnl"
                        ],
                        "{line}"
                    );
                    Event::Close(Trade {
                        combo: int(&o["combo"]) as usize,
                        side: int(&o["side"]),
                        entry_bar: int(&o["entry_bar"]) as u64,
                        exit_bar: int(&o["exit_bar"]) as u64,
                        entry_price: float(line, "entry_price"),
                        exit_price: float(line, "exit_price"),
                        pnl: float(line, "pnl"),
                    })
                }
                other => panic!("unknown event {other:?} in {line}"),
            }
        })
        .collect()
}

fn assert_same_events(got: &[Event], want: &[Event], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: event count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.same(w),
            "{what}: event {i} differs: got {g:?}, want {w:?}"
        );
    }
}

/// The stream's closes, combo by combo, as `kernel::trades` lists them.
fn closes_by_combo(events: &[Event]) -> Vec<Trade> {
    let mut t: Vec<Trade> = events
        .iter()
        .filter_map(|e| match e {
            Event::Close(t) => Some(*t),
            Event::Open { .. } => None,
        })
        .collect();
    t.sort_by_key(|t| t.combo); // stable: each combo's trades stay in bar order
    t
}

fn assert_same_trades(got: &[Trade], want: &[Trade], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: trade count");
    for (g, w) in got.iter().zip(want) {
        assert!(g.same(w), "{what}: got {g:?}, want {w:?}");
    }
}

/// The default grid over the default series' first 4,000 bars.
fn default_head() -> (Vec<f64>, Vec<Combo>) {
    let mut close = kernel::default_close();
    close.truncate(4_000);
    (close, kernel::default_params())
}

#[test]
fn the_closes_are_the_kernels_trades_and_every_event_the_references() {
    let (close, params) = default_head();
    let out = hullsweep()
        .arg("stream")
        .write_stdin(lines(&close, ""))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let got = parse_events(&out.stdout);
    let all: Vec<usize> = (0..params.len()).collect();
    let want = kernel::trades(ValidClose::new(&close).unwrap(), &params, 0.09, &all).unwrap();
    assert!(want.len() > 100, "the test needs trades: {}", want.len());
    assert_same_trades(&closes_by_combo(&got), &want, "default head");
    assert_same_events(
        &got,
        &reference_events(&close, &params, 0.09),
        "default head",
    );
    let opens = got
        .iter()
        .filter(|e| matches!(e, Event::Open { .. }))
        .count();
    assert!(
        stderr.contains(&format!(
            "stream: 4000 bars (0 missing), {} events reported for 80 combos ({} trades closed, {opens} positions opened)",
            got.len(),
            want.len()
        )),
        "{stderr}"
    );
}

#[test]
fn empty_and_nan_lines_are_missing_bars() {
    let (mut close, params) = default_head();
    for i in (700..760).chain([1_500, 2_222, 3_999]) {
        close[i] = f64::NAN;
    }
    let want = reference_events(&close, &params, 0.09);
    for missing in ["", "  ", "nan", "NaN"] {
        let out = hullsweep()
            .arg("stream")
            .write_stdin(lines(&close, missing))
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_same_events(
            &parse_events(&out.stdout),
            &want,
            &format!("missing as {missing:?}"),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("4000 bars (63 missing)"), "{stderr}");
    }
}

#[test]
fn every_gate_dataset_streamed_gives_the_references_events() {
    // The default dataset is covered above; these hold NaN runs, flat runs, ticks, window one,
    // windows longer than the series, and prices at both ends of f64 (infinite and NaN PnLs).
    let mut non_finite = 0;
    for d in datasets::suite()
        .into_iter()
        .filter(|d| d.name != "default")
    {
        let dir = tempfile::tempdir().unwrap();
        let npy = dir.path().join("params.npy");
        hullsweep_data::write_params_npy(&npy, &d.params).unwrap();
        let out = hullsweep()
            .args(["stream", "--params", npy.to_str().unwrap(), "--fee"])
            .arg(d.fee.to_string())
            .write_stdin(lines(&d.close, ""))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            d.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let got = parse_events(&out.stdout);
        assert_same_events(&got, &reference_events(&d.close, &d.params, d.fee), &d.name);
        non_finite += got
            .iter()
            .filter(|e| matches!(e, Event::Close(t) if !t.pnl.is_finite()))
            .count();
    }
    // The extreme-price datasets give infinite and NaN trade PnLs: the strings round-trip too.
    assert!(non_finite > 0, "no non-finite pnl was streamed");
}

#[test]
fn combo_reports_only_those_combos() {
    let (close, params) = default_head();
    let out = hullsweep()
        .args(["stream", "--combo", "3,40,79"])
        .write_stdin(lines(&close, ""))
        .output()
        .unwrap();
    assert!(out.status.success());
    let want: Vec<Event> = reference_events(&close, &params, 0.09)
        .into_iter()
        .filter(|e| [3, 40, 79].contains(&e.combo()))
        .collect();
    assert!(!want.is_empty());
    assert_same_events(&parse_events(&out.stdout), &want, "--combo 3,40,79");

    let out = hullsweep()
        .args(["stream", "--combo", "80"])
        .write_stdin("100\n")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--combo") && stderr.contains("bad combo 80"),
        "{stderr}"
    );
}

#[test]
fn a_bad_line_stops_the_stream_naming_its_line_after_every_earlier_event() {
    let (close, params) = default_head();
    for (bad, why) in [
        ("abc", "is not a price"),
        ("-5", "is a bad price (-5)"),
        ("0", "is a bad price (0)"),
        ("inf", "is a bad price (inf)"),
        ("1.5.2", "is not a price"),
    ] {
        // 3,000 good bars, the bad line (line 3001), then more bars that must not be read.
        let mut text = lines(&close[..3_000], "");
        text += bad;
        text += "\n";
        text += &lines(&close[3_000..], "");
        let out = hullsweep()
            .arg("stream")
            .write_stdin(text)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            stderr.contains(&format!("line 3001: {bad:?} {why}")),
            "{bad}: {stderr}"
        );
        assert!(stderr.contains("stream: 3000 bars"), "{stderr}");
        // Every event of the 3,000 bars before it was written, and none after.
        assert_same_events(
            &parse_events(&out.stdout),
            &reference_events(&close[..3_000], &params, 0.09),
            bad,
        );
    }
}

#[test]
fn skip_bad_skips_and_counts_bad_lines() {
    let (close, params) = default_head();
    let mut text = String::new();
    let bad = ["x", "-1", "0", "inf", "1e400", "12 13"];
    for (i, v) in close.iter().enumerate() {
        if i % 500 == 7 {
            text += bad[(i / 500) % bad.len()];
            text += "\n";
        }
        text += &format!("{v}\n");
    }
    let out = hullsweep()
        .args(["stream", "--skip-bad"])
        .write_stdin(text)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The skipped lines are not bars: the events are those of the good bars alone.
    assert_same_events(
        &parse_events(&out.stdout),
        &reference_events(&close, &params, 0.09),
        "--skip-bad",
    );
    assert!(stderr.contains("stream: 4000 bars"), "{stderr}");
    assert!(
        stderr.contains("8 bad lines skipped (the first: line 8: \"x\" is not a price"),
        "{stderr}"
    );
}

#[test]
fn each_bars_events_arrive_before_stdin_closes() {
    let (close, params) = default_head();
    let want = reference_events(&close, &params, 0.09);
    let first = want[0];
    let upto = first.bar() as usize + 1;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hullsweep"))
        .arg("stream")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(lines(&close[..upto], "").as_bytes())
        .unwrap();
    stdin.flush().unwrap();
    // Read the first line while stdin stays open; a stream that buffered its output until EOF
    // would leave this waiting.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        tx.send(line).unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut r, &mut rest).unwrap();
        rest
    });
    let line = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("no event line while stdin was open: events are not flushed per bar");
    let got = parse_events(line.as_bytes());
    assert!(got[0].same(&first), "got {:?}, want {first:?}", got[0]);
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    // The rest of that bar's events followed, and no more.
    let mut all = got;
    all.extend(parse_events(reader.join().unwrap().as_bytes()));
    assert_same_events(
        &all,
        &reference_events(&close[..upto], &params, 0.09),
        "first bars",
    );
}

#[test]
fn a_csv_header_on_the_first_line_is_skipped_and_said() {
    let (close, _) = default_head();
    let run = |text: String| {
        let out = hullsweep()
            .args(["stream", "--combo", "3"])
            .write_stdin(text)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            out.stdout,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (plain, plain_err) = run(lines(&close, ""));
    let (headed, headed_err) = run(format!("close\n{}", lines(&close, "")));
    assert!(!plain.is_empty());
    assert_eq!(
        headed, plain,
        "the same events, bars counted from the first price"
    );
    assert!(!plain_err.contains("header"), "{plain_err}");
    assert!(
        headed_err.contains("line 1 (\"close\") read as a column header and skipped"),
        "{headed_err}"
    );
    // Only the first line: a name further down is a bad line, as before.
    let out = hullsweep()
        .arg("stream")
        .write_stdin(format!("{}close\n", lines(&close[..10], "")))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 11: \"close\" is not a price"));
}
