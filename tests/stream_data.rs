//! `hullsweep stream --data FILE`: the same events as the file's bars piped in line by line,
//! from .npy and from a CSV column, and a final per-combo summary whose PnL is the sweep's.

use assert_cmd::Command;
use std::path::Path;

fn hullsweep() -> Command {
    Command::cargo_bin("hullsweep").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_file_streams_as_its_lines_do_and_ends_with_each_combos_summary() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("c.npy");
    hullsweep()
        .args(["data", "--bars", "2500", "--seed", "4", "--out", s(&npy)])
        .assert()
        .success();
    let close = hullsweep_data::read_close_npy(&npy).unwrap();
    let mut lines = String::new();
    let mut csv = String::from("time,close\n");
    for (i, x) in close.iter().enumerate() {
        lines += &format!("{x}\n");
        csv += &format!("{i},{x}\n");
    }
    let csv_path = dir.path().join("c.csv");
    std::fs::write(&csv_path, csv).unwrap();
    let grid = ["--grid", "10:60:6", "--combo", "1,4"];
    let piped = hullsweep()
        .arg("stream")
        .args(grid)
        .write_stdin(lines)
        .output()
        .unwrap();
    let from_npy = hullsweep()
        .arg("stream")
        .args(grid)
        .args(["--data", s(&npy)])
        .output()
        .unwrap();
    let from_csv = hullsweep()
        .arg("stream")
        .args(grid)
        .args(["--data", s(&csv_path), "--column", "close"])
        .output()
        .unwrap();
    for out in [&piped, &from_npy, &from_csv] {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(!piped.stdout.is_empty());
    assert_eq!(piped.stdout, from_npy.stdout);
    assert_eq!(piped.stdout, from_csv.stdout);
    let err = String::from_utf8(from_npy.stderr).unwrap();
    let sweep = hullsweep()
        .args(["sweep", "--data", s(&npy), "--grid", "10:60:6"])
        .output()
        .unwrap();
    let sweep = String::from_utf8(sweep.stdout).unwrap();
    for k in [1, 4] {
        let row: Vec<&str> = sweep.lines().nth(k + 1).unwrap().split(',').collect();
        let want = format!("combo {k}: pnl {}, {} trades, ", row[7], row[8]);
        assert!(err.contains(&want), "{want} in {err}");
    }
    // --skip-bad is for lines; a file's bad price stops the stream, named.
    let out = hullsweep()
        .args(["stream", "--data", s(&npy), "--skip-bad"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
