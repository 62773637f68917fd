//! The CLI's promises to users: every bad input gets one clear line naming the value and a
//! non-zero exit, never a panic; good input gives the documented CSV.

use assert_cmd::Command;
use hullsweep_data as io;
use std::path::{Path, PathBuf};

fn hullsweep() -> Command {
    Command::cargo_bin("hullsweep").unwrap()
}

/// Runs `hullsweep args`, expects failure, and returns stderr after checking it is one clean line.
fn fails(args: &[&str]) -> String {
    let out = hullsweep().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success(),
        "{args:?} should fail; stderr: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(!stderr.contains("backtrace"), "{args:?}: {stderr}");
    stderr
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn no_subcommand_prints_help() {
    let out = hullsweep().output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Usage: hullsweep"), "{text}");
    assert!(text.contains("sweep"), "{text}");
}

#[test]
fn sweep_csv_has_the_documented_columns_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("c.npy");
    hullsweep()
        .args(["data", "--bars", "3000", "--seed", "7", "--out", s(&data)])
        .assert()
        .success();
    let out = hullsweep()
        .args(["sweep", "--data", s(&data), "--grid", "6:40:5"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "combo,hma_n,hma_half,hma_sqrt,hma3_m,hma3_half,hma3_third,pnl,trades"
    );
    let close = io::read_close_npy(&data).unwrap();
    let params = hullsweep_kernel::grid("6:40:5".parse().unwrap()).unwrap();
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 5);
    for (k, row) in rows.iter().enumerate() {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[0], k.to_string());
        let windows: Vec<i64> = cells[1..7].iter().map(|c| c.parse().unwrap()).collect();
        assert_eq!(windows, params[k]);
        // Shortest representation that parses back to the same bits.
        assert_eq!(
            cells[7].parse::<f64>().unwrap().to_bits(),
            want.pnl[k].to_bits()
        );
        assert_eq!(cells[8].parse::<i64>().unwrap(), want.trades[k]);
    }
}

#[test]
fn sweep_reads_csv_and_params_npy() {
    let dir = tempfile::tempdir().unwrap();
    let close = hullsweep_kernel::gbm(800, 3, 0.01).unwrap();
    let mut csv = String::from("date,close\n");
    for (i, c) in close.iter().enumerate() {
        if i % 97 == 5 {
            csv += &format!("{i},\n"); // a missing bar
        } else {
            csv += &format!("{i},{c}\n");
        }
    }
    let data = write(dir.path(), "d.csv", &csv);
    let params = dir.path().join("p.npy");
    io::write_params_npy(
        &params,
        &[
            [10, 5, 3, 10, 5, 3],
            [1, 1, 1, 1, 1, 1],
            [900, 2, 2, 3, 3, 3],
        ],
    )
    .unwrap();
    let out = hullsweep()
        .args([
            "sweep",
            "--data",
            s(&data),
            "--params",
            s(&params),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 3);
    assert_eq!(
        rows[2]["trades"], 0,
        "a window longer than the series makes no trades"
    );
}

/// The issue-13 regression: a one-column CSV with an empty cell must keep that bar (as NaN),
/// giving the same sweep as the series written to .npy with NaN there.
#[test]
fn one_column_csv_keeps_an_empty_cell_as_a_missing_bar() {
    let dir = tempfile::tempdir().unwrap();
    let mut close = hullsweep_kernel::gbm(2000, 5, 0.01).unwrap();
    for i in [0, 700, 1999] {
        close[i] = f64::NAN;
    }
    let mut csv = String::from("close\n");
    for c in &close {
        if !c.is_nan() {
            csv += &c.to_string();
        }
        csv += "\n";
    }
    let csv = write(dir.path(), "one.csv", &csv);
    let npy = dir.path().join("same.npy");
    io::write_f64_npy(&npy, &close).unwrap();
    let run = |data: &Path| {
        let out = hullsweep()
            .args(["sweep", "--data", s(data), "--grid", "6:40:3"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        (String::from_utf8(out.stdout).unwrap(), stderr)
    };
    let (from_csv, note) = run(&csv);
    assert!(note.contains("over 2000 bars"), "{note}");
    assert_eq!(from_csv, run(&npy).0);
}

#[test]
fn bad_inputs_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = d.join("good.npy");
    io::write_f64_npy(&good, &[100.0, 101.0, 102.0]).unwrap();
    let ints = d.join("ints.npy");
    io::write_i64_npy(&ints, &[1, 2, 3]).unwrap();
    let empty = d.join("empty.npy");
    io::write_f64_npy(&empty, &[]).unwrap();
    let negative = d.join("neg.npy");
    io::write_f64_npy(&negative, &[100.0, -3.5, 1.0]).unwrap();
    let inf = d.join("inf.npy");
    io::write_f64_npy(&inf, &[100.0, 1.0, f64::INFINITY]).unwrap();
    let zero_window = d.join("zw.npy");
    io::write_params_npy(&zero_window, &[[5, 2, 2, 5, 2, 1], [5, 2, 2, 5, 0, 1]]).unwrap();
    let garbage = write(d, "garbage.npy", "not numpy at all");
    let garbage_parquet = write(d, "garbage.parquet", "not parquet at all");
    let bad_csv = write(d, "bad.csv", "close\n1.5\n2.5\nx1\n");
    let header_only = write(d, "header.csv", "close\n");
    let bad_price_csv = write(d, "prices.csv", "date,close\n1,100\n2,\n3,-3.5\n");
    let text = write(d, "data.txt", "1\n2\n");

    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["sweep", "--data", "/nonexistent/x.npy"],
            vec!["/nonexistent/x.npy: No such file or directory"],
        ),
        (
            vec!["sweep", "--data", s(&garbage)],
            vec!["garbage.npy", "not a valid .npy"],
        ),
        (
            vec!["sweep", "--data", s(&garbage_parquet)],
            vec!["garbage.parquet", "not a valid Parquet file"],
        ),
        (
            vec!["sweep", "--data", s(&ints)],
            vec!["ints.npy", "dtype <i8"],
        ),
        (
            vec!["sweep", "--data", s(&empty)],
            vec!["empty.npy", "empty"],
        ),
        (
            vec!["sweep", "--data", s(&header_only)],
            vec!["header.csv", "empty"],
        ),
        (
            vec!["sweep", "--data", s(&negative)],
            vec!["neg.npy", "-3.5", "index 1"],
        ),
        (
            vec!["sweep", "--data", s(&inf)],
            vec!["inf.npy", "inf", "index 2"],
        ),
        (
            vec!["sweep", "--data", s(&bad_csv)],
            vec!["bad.csv", "\"x1\" at index 2 (line 4, column \"close\")"],
        ),
        (
            vec!["sweep", "--data", s(&bad_price_csv)],
            vec!["prices.csv", "bad price -3.5 at index 2 (line 4)"],
        ),
        (
            vec!["sweep", "--data", s(&text)],
            vec!["data.txt", ".npy, .csv or .parquet"],
        ),
        (
            vec!["sweep", "--data", s(&good), "--params", s(&zero_window)],
            vec!["zw.npy", "hma3_half = 0", "combo 1"],
        ),
        (
            vec!["sweep", "--data", s(&good), "--params", s(&ints)],
            vec!["ints.npy", "shape [3]", "n x 6"],
        ),
        (
            vec!["sweep", "--data", s(&good), "--params", s(&good)],
            vec!["good.npy", "dtype <f8"],
        ),
        (vec!["sweep", "--grid", "6:200"], vec!["6:200", "LO:HI:K"]),
        (vec!["sweep", "--grid", "0:10:3"], vec!["LO = 0"]),
        (vec!["sweep", "--grid", "9:3:3"], vec!["HI = 3"]),
        // More lengths than integers in [LO, HI] would repeat combos.
        (vec!["sweep", "--grid", "3:6:9"], vec!["K = 9", "K <= 4"]),
        (vec!["lab", "--grid", "6:8:4"], vec!["K = 4", "K <= 3"]),
        (vec!["gate", "--grid", "6:6:2"], vec!["K = 2", "K <= 1"]),
        // Every problem of a bad grid, not just the first.
        (
            vec!["sweep", "--grid", "0:x:0"],
            vec!["LO = 0 must be >= 1", "HI = \"x\"", "K = 0 must be >= 1"],
        ),
        (
            vec!["sweep", "--grid", "0:3:9"],
            vec!["LO = 0 must be >= 1", "K = 9", "K <= 4"],
        ),
        (
            vec![
                "sweep",
                "--fee",
                "nan",
                "--grid",
                "6:6:1",
                "--data",
                s(&good),
            ],
            vec!["fee NaN"],
        ),
        (
            vec![
                "sweep",
                "--threads",
                "0",
                "--grid",
                "6:6:1",
                "--data",
                s(&good),
            ],
            vec!["--threads 0"],
        ),
        (
            vec!["data", "--bars", "0", "--out", "/tmp/x.npy"],
            vec!["bars = 0"],
        ),
        (
            vec!["data", "--sigma", "-1", "--out", "/tmp/x.npy"],
            vec!["sigma = -1"],
        ),
    ];
    for (args, needles) in cases {
        let stderr = fails(&args);
        for needle in needles {
            assert!(
                stderr.contains(needle),
                "{args:?}: expected {needle:?} in {stderr:?}"
            );
        }
    }
    // The OS error is said once, not once per level of the cause chain.
    let stderr = fails(&["sweep", "--data", "/nonexistent/x.npy"]);
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
    let stderr = fails(&["data", "--out", "/nonexistent/x.npy"]);
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
}

/// What `fastest` is on this machine, as help and errors show it.
fn fastest_on_this_machine() -> String {
    format!(
        "fastest (= {} on this machine)",
        hullsweep_variants::Variant::fastest().name()
    )
}

#[test]
fn an_unknown_variant_gets_the_same_error_everywhere() {
    for args in [
        vec!["sweep", "--variant", "warp"],
        vec!["gate", "--variant", "warp"],
        vec!["lab", "--variant", "warp"],
        vec!["serve", "--stdio", "--variant", "warp"],
    ] {
        let out = hullsweep().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: invalid value 'warp' for '--variant"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(&fastest_on_this_machine()), "{stderr}");
        for v in hullsweep_variants::Variant::ALL {
            assert!(stderr.contains(v.name()), "{args:?}: {stderr}");
        }
    }
}

#[test]
fn help_teaches_variants_defaults_and_fees() {
    for sub in ["sweep", "serve", "gate", "lab"] {
        let out = hullsweep().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success());
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(help.contains(&fastest_on_this_machine()), "{sub}: {help}");
        for v in hullsweep_variants::Variant::ALL {
            assert!(help.contains(v.name()), "{sub} --help lacks {}", v.name());
        }
        assert!(help.contains("a negative fee is a rebate"), "{sub}: {help}");
    }
    for sub in ["sweep", "serve"] {
        let help = hullsweep().args([sub, "--help"]).output().unwrap().stdout;
        let help = String::from_utf8(help).unwrap();
        assert!(help.contains("[default: fastest]"), "{sub}: {help}");
    }
    let help = hullsweep()
        .args(["serve", "--help"])
        .output()
        .unwrap()
        .stdout;
    let help = String::from_utf8(help).unwrap();
    assert!(help.contains("docs/protocol.md"), "{help}");
    assert!(!help.contains("spec/PROTOCOL.md"), "{help}");
}

#[test]
fn sweep_runs_fastest_by_default_and_reference_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("c.npy");
    io::write_f64_npy(&data, &hullsweep_kernel::gbm(3000, 2, 0.01).unwrap()).unwrap();
    let run = |extra: &[&str]| {
        let out = hullsweep()
            .args(["sweep", "--data", s(&data), "--grid", "6:40:4"])
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        (out.stdout, stderr)
    };
    let (fast, note) = run(&[]);
    let with = format!("with {} in", hullsweep_variants::Variant::fastest().name());
    assert!(note.contains(&with), "{note}");
    let (slow, note) = run(&["--variant", "reference"]);
    assert!(note.contains("with reference in"), "{note}");
    assert_eq!(fast, slow, "fastest and reference must print the same bits");
}

#[test]
fn lab_runs_end_to_end_on_small_data() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("c.npy");
    io::write_f64_npy(&data, &hullsweep_kernel::gbm(4000, 11, 0.002).unwrap()).unwrap();
    let table = dir.path().join("lab.md");
    let out = hullsweep()
        .args([
            "lab",
            "--rounds",
            "2",
            "--grid",
            "6:30:3",
            "--data",
            s(&data),
            "--out",
            s(&table),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Progress, in plain lines since stderr is not a terminal: what runs now, every step counted.
    for v in hullsweep_variants::Variant::ALL {
        let line = format!("lab: gate: {} against numba (", v.name());
        assert!(stderr.contains(&line), "no {line:?} in {stderr}");
    }
    for round in ["round 1/2", "round 2/2"] {
        assert!(
            stderr.contains(&format!("lab: {round} of the timed runs")),
            "{stderr}"
        );
    }
    let md = std::fs::read_to_string(&table).unwrap();
    for v in hullsweep_variants::Variant::ALL {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", v.name())));
        let row = row.unwrap_or_else(|| panic!("no row for {}: {md}", v.name()));
        assert!(row.contains("pass (bit-identical)"), "{row}");
    }
    assert!(
        md.contains("| numba prange |") && md.contains("numba 0.68.1"),
        "{md}"
    );
}
