//! `hullsweep trades`: its CSV parses back to exactly the reference's trade log, each combo's
//! trades sum to `hullsweep sweep`'s pnl bit for bit, JSON has the documented shape, and a bad
//! combo is named with the range.

use assert_cmd::Command;
use hullsweep_data::trade_log::{CSV_HEADER, parse_csv_row};
use hullsweep_kernel::{self as kernel, Trade, ValidClose};
use std::path::{Path, PathBuf};

fn hullsweep() -> Command {
    Command::cargo_bin("hullsweep").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A 4,000-bar random walk with missing bars (the first, a run, the last) as a .npy.
fn data(dir: &Path) -> (PathBuf, Vec<f64>) {
    let mut close = kernel::gbm(4_000, 11, 0.004).unwrap();
    for i in [0, 900, 901, 902, 3_999] {
        close[i] = f64::NAN;
    }
    let path = dir.join("c.npy");
    hullsweep_data::write_f64_npy(&path, &close).unwrap();
    (path, close)
}

const GRID: &str = "6:120:12";

fn stdout(args: &[&str]) -> String {
    let out = hullsweep().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn parse_csv(text: &str) -> Vec<Trade> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(CSV_HEADER));
    lines.map(|l| parse_csv_row(l).unwrap()).collect()
}

fn reference(close: &[f64], combos: &[usize]) -> Vec<Trade> {
    let params = kernel::grid(GRID.parse().unwrap()).unwrap();
    kernel::trades(ValidClose::new(close).unwrap(), &params, 0.09, combos).unwrap()
}

fn same(got: &[Trade], want: &[Trade]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(g.same(w), "{g:?} vs {w:?}");
    }
}

#[test]
fn csv_parses_back_to_exactly_the_reference_trade_log() {
    let dir = tempfile::tempdir().unwrap();
    let (path, close) = data(dir.path());
    let text = stdout(&[
        "trades",
        "--data",
        s(&path),
        "--grid",
        GRID,
        "--combo",
        "7,0",
    ]);
    let got = parse_csv(&text);
    assert!(got.len() > 50, "the data must trade: {}", got.len());
    // In the order asked for: combo 7 first.
    assert_eq!(got[0].combo, 7);
    same(&got, &reference(&close, &[7, 0]));
    // --combo repeated is the same as comma separated.
    let repeated = stdout(&[
        "trades",
        "--data",
        s(&path),
        "--grid",
        GRID,
        "--combo",
        "7",
        "--combo",
        "0",
    ]);
    assert_eq!(repeated, text);
}

#[test]
fn every_combo_sums_to_the_sweep_pnl_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let (path, close) = data(dir.path());
    let got = parse_csv(&stdout(&[
        "trades",
        "--data",
        s(&path),
        "--grid",
        GRID,
        "--combo",
        "all",
    ]));
    let combos: Vec<usize> = (0..12).collect();
    same(&got, &reference(&close, &combos));
    let sweep = stdout(&["sweep", "--data", s(&path), "--grid", GRID]);
    let rows: Vec<Vec<&str>> = sweep
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 12);
    for (k, row) in rows.iter().enumerate() {
        let mine: Vec<&Trade> = got.iter().filter(|t| t.combo == k).collect();
        let sum = mine.iter().fold(0.0, |s, t| s + t.pnl);
        let pnl: f64 = row[7].parse().unwrap();
        let trades: usize = row[8].parse().unwrap();
        assert_eq!(mine.len(), trades, "combo {k}");
        assert_eq!(sum.to_bits(), pnl.to_bits(), "combo {k}: {sum} vs {pnl}");
    }
}

#[test]
fn json_has_one_object_per_trade_with_the_csv_columns() {
    let dir = tempfile::tempdir().unwrap();
    let (path, close) = data(dir.path());
    let out = dir.path().join("t.json");
    hullsweep()
        .args(["trades", "--data", s(&path), "--grid", GRID, "--combo", "3"])
        .args(["--out", s(&out)])
        .assert()
        .success()
        .stdout("");
    let text = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    let want = reference(&close, &[3]);
    assert_eq!(rows.len(), want.len());
    for (row, w) in rows.iter().zip(&want) {
        let obj = row.as_object().unwrap();
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        assert_eq!(keys.join(","), CSV_HEADER);
        let f = |k: &str| obj[k].as_f64().unwrap();
        let i = |k: &str| obj[k].as_i64().unwrap();
        let got = Trade {
            combo: i("combo") as usize,
            side: i("side"),
            entry_bar: i("entry_bar") as u64,
            exit_bar: i("exit_bar") as u64,
            entry_price: f("entry_price"),
            exit_price: f("exit_price"),
            pnl: f("pnl"),
        };
        assert!(got.same(w), "{got:?} vs {w:?}");
    }
    // --format json on stdout is the same document; --format csv wins over the .json name.
    let on_stdout = stdout(&[
        "trades",
        "--data",
        s(&path),
        "--grid",
        GRID,
        "--combo",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(on_stdout, text);
    let csv_out = dir.path().join("t2.json");
    hullsweep()
        .args(["trades", "--data", s(&path), "--grid", GRID, "--combo", "3"])
        .args(["--format", "csv", "--out", s(&csv_out)])
        .assert()
        .success();
    same(
        &parse_csv(&std::fs::read_to_string(&csv_out).unwrap()),
        &want,
    );
}

#[test]
fn a_bad_combo_is_named_with_the_range_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("t.csv");
    let out = hullsweep()
        .args(["trades", "--combo", "3,80", "--out", s(&out_path)])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad combo 80: there are 80 combos, numbered 0 to 79"),
        "{err}"
    );
    assert!(!out_path.exists());
    for bad in ["-1", "x", "1.5", ""] {
        let out = hullsweep()
            .args(["trades", "--combo", bad])
            .output()
            .unwrap();
        assert!(!out.status.success(), "--combo {bad:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--combo"), "{bad:?}: {err}");
        assert!(!err.contains("panicked"), "{bad:?}: {err}");
    }
    // --combo is required: without it the help says what to give.
    let out = hullsweep().args(["trades"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--combo"));
}

#[test]
fn help_teaches_with_examples() {
    let help = stdout(&["trades", "--help"]);
    for needle in [
        "Examples:",
        "hullsweep trades --combo 0",
        "--combo all",
        "bit for bit",
    ] {
        assert!(help.contains(needle), "{needle:?} missing from:\n{help}");
    }
    // The inputs are sweep's own options, not a copy that could drift.
    let sweep = stdout(&["sweep", "--help"]);
    for option in [
        "--data", "--column", "--grid", "--grid3", "--params", "--fee",
    ] {
        assert!(help.contains(option) && sweep.contains(option), "{option}");
    }
}
