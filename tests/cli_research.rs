//! `hullsweep sweep` as a researcher reads it: two-axis grids (`--grid3`), the metric columns
//! (`--metrics`, CSV and JSON) and the picture (`--plot`), each checked against the library.

use assert_cmd::Command;
use hullsweep_data::results::EXTRA_NAMES;
use hullsweep_kernel::{self as kernel, METRIC_NAMES, WINDOW_NAMES};
use hullsweep_variants::{Threads, Variant};
use std::path::Path;

fn hullsweep() -> Command {
    Command::cargo_bin("hullsweep").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A 3,000-bar series written by `hullsweep data`, and the same bars in memory.
fn data(dir: &Path) -> (std::path::PathBuf, Vec<f64>) {
    let path = dir.join("c.npy");
    hullsweep()
        .args(["data", "--bars", "3000", "--seed", "11", "--out", s(&path)])
        .assert()
        .success();
    let close = hullsweep_data::read_close_npy(&path).unwrap();
    (path, close)
}

fn sweep(args: &[&str]) -> String {
    let out = hullsweep().arg("sweep").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn grid3_sweeps_every_pair_with_the_spec_windows() {
    let dir = tempfile::tempdir().unwrap();
    let (path, close) = data(dir.path());
    let csv = sweep(&["--data", s(&path), "--grid", "6:60:4", "--grid3", "10:40:3"]);
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 12);
    let hma: kernel::GridSpec = "6:60:4".parse().unwrap();
    let hma3: kernel::GridSpec = "10:40:3".parse().unwrap();
    let params = kernel::grid2(hma, hma3).unwrap();
    let want = kernel::sweep(&close, &params, kernel::DEFAULT_FEE_PCT).unwrap();
    for (k, row) in rows.iter().enumerate() {
        let cells: Vec<&str> = row.split(',').collect();
        let windows: Vec<i64> = cells[1..7].iter().map(|c| c.parse().unwrap()).collect();
        assert_eq!(windows, params[k]);
        let pnl: f64 = cells[7].parse().unwrap();
        assert_eq!(pnl.to_bits(), want.pnl[k].to_bits(), "combo {k}");
        assert_eq!(cells[8].parse::<i64>().unwrap(), want.trades[k]);
    }
    // HMA length outer: the second row changes only the HMA3's windows.
    assert_eq!(&params[1][..3], &params[0][..3]);
    assert_eq!(params[1][3..], kernel::derive_windows(25)[3..]);
}

#[test]
fn metrics_columns_are_named_as_the_spec_and_carry_the_library_bits() {
    let dir = tempfile::tempdir().unwrap();
    let (path, close) = data(dir.path());
    // Long windows on few bars leave a combo without trades: its extremes are NaN.
    let csv = sweep(&[
        "--data",
        s(&path),
        "--grid",
        "4:1400:6",
        "--metrics",
        "--variant",
        "rolling",
    ]);
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    // The kernel's metrics, then the research extras computed from the bar returns.
    let want_header = format!(
        "combo,{},{},{}",
        WINDOW_NAMES.join(","),
        METRIC_NAMES.join(","),
        EXTRA_NAMES.join(",")
    );
    assert_eq!(header, want_header);
    let params = kernel::grid("4:1400:6".parse().unwrap()).unwrap();
    let want = Variant::Reference
        .sweep_metrics(&close, &params, kernel::DEFAULT_FEE_PCT, Threads::Fixed(1))
        .unwrap();
    assert!(want.iter().any(|m| m.trades == 0), "a combo without trades");
    for (k, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        for (i, v) in want[k].values().iter().enumerate() {
            let cell = cells[7 + i];
            let same = match v {
                kernel::Value::F64(x) => cell.parse::<f64>().unwrap().to_bits() == x.to_bits(),
                kernel::Value::I64(x) => cell.parse::<i64>().unwrap() == *x,
            };
            assert!(same, "combo {k} {}: {cell} vs {v:?}", METRIC_NAMES[i]);
        }
    }
    let json = sweep(&[
        "--data",
        s(&path),
        "--grid",
        "4:1400:6",
        "--metrics",
        "--format",
        "json",
    ]);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let k = want.iter().position(|m| m.trades == 0).unwrap();
    assert!(rows[k]["best_trade"].is_null(), "NaN is null in JSON");
    assert_eq!(rows[0]["bars_in_market"], want[0].bars_in_market);
    assert_eq!(
        rows[0]["max_drawdown"].as_f64().unwrap().to_bits(),
        want[0].max_drawdown.to_bits()
    );
}

#[test]
fn plot_draws_a_heatmap_or_a_line_with_the_best_marked() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = data(dir.path());
    let heat = dir.path().join("heat.svg");
    let out = hullsweep()
        .args([
            "sweep",
            "--data",
            s(&path),
            "--grid",
            "6:60:4",
            "--grid3",
            "6:60:5",
        ])
        .args([
            "--plot",
            s(&heat),
            "--metric",
            "max_drawdown",
            "--out",
            s(&dir.path().join("r.csv")),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("drew max_drawdown to") && stderr.contains("best: combo"),
        "{stderr}"
    );
    let svg = std::fs::read_to_string(&heat).unwrap();
    assert!(svg.starts_with("<svg"), "an SVG");
    assert!(
        svg.contains("max_drawdown: best (circled) at L = "),
        "the best is named"
    );
    assert!(
        svg.contains("HMA3 length L3"),
        "the second axis is labelled"
    );
    // 4 x 5 cells and the colour scale's 200 steps.
    assert!(
        svg.matches("<rect").count() >= 20 + 200,
        "cells and a colour scale"
    );
    let line = dir.path().join("line.svg");
    sweep(&["--data", s(&path), "--grid", "6:60:8", "--plot", s(&line)]);
    let svg = std::fs::read_to_string(&line).unwrap();
    assert!(svg.contains("pnl: best (circled) at L = ") && svg.contains("length L"));
}

#[test]
fn plot_and_metric_errors_name_the_fix() {
    let fail = |args: &[&str]| {
        let out = hullsweep().arg("sweep").args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = fail(&[
        "--grid",
        "6:60:4",
        "--plot",
        "/tmp/x.svg",
        "--metric",
        "sharpe",
    ]);
    assert!(
        e.contains("unknown metric \"sharpe\"") && e.contains("max_drawdown"),
        "{e}"
    );
    let e = fail(&["--metric", "pnl"]);
    assert!(e.contains("--plot"), "{e}");
    let e = fail(&["--grid3", "6:10:20"]);
    assert!(e.contains("K = 20") && e.contains("K <= 5"), "{e}");
    let e = fail(&["--params", "/tmp/p.npy", "--grid3", "6:10:2"]);
    assert!(e.contains("cannot be used with"), "{e}");
}

/// The gate takes a two-axis grid too (live numba on the pairs).
#[test]
fn gate_runs_on_a_two_axis_grid() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = data(dir.path());
    let out = hullsweep()
        .args(["gate", "--variant", "rolling", "--data", s(&path)])
        .args(["--grid", "6:60:3", "--grid3", "8:40:2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("c.npy") && stdout.contains(" 6 ") && stdout.contains("all passed"),
        "{stdout}"
    );
}
