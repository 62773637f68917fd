//! `hullsweep pbo`: its JSON carries the research crate's numbers bit for bit (whatever the file's
//! order), the text form leads with the verdict, and every bad input exits 1 naming the value.

use assert_cmd::Command;
use hullsweep_research::{Metric, pbo};
use std::path::Path;

fn hullsweep() -> Command {
    Command::cargo_bin("hullsweep").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A `bars x combos` matrix of noise with a drift per column (xorshift, no dependency).
fn noise(bars: usize, combos: usize, seed: u64) -> Vec<f64> {
    let mut x = seed;
    (0..bars * combos)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5 + 0.002 * (i % combos) as f64
        })
        .collect()
}

fn run_ok(args: &[&str]) -> String {
    let out = hullsweep().arg("pbo").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn run_err(args: &[&str]) -> String {
    let out = hullsweep().arg("pbo").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn json_is_the_library_result_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let (bars, combos) = (301, 17);
    let m = noise(bars, combos, 5);
    let path = dir.path().join("m.npy");
    hullsweep_data::write_f64_matrix_npy(&path, bars, combos, &m).unwrap();
    for (metric, folds) in [(Metric::Sharpe, 8), (Metric::Mean, 6)] {
        let want = pbo(&m, bars, combos, folds, metric, 1).unwrap();
        let text = run_ok(&[
            "--matrix",
            s(&path),
            "--folds",
            &folds.to_string(),
            "--metric",
            metric.name(),
            "--format",
            "json",
            "--threads",
            "2",
        ]);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "pbo",
                "logits",
                "degradation",
                "prob_oos_loss",
                "splits",
                "folds",
                "combos",
                "bars",
                "metric",
                "selected",
                "is_perf",
                "oos_perf"
            ]
        );
        assert_eq!(v["pbo"].as_f64(), Some(want.pbo));
        assert_eq!(v["prob_oos_loss"].as_f64(), Some(want.prob_oos_loss));
        let logits: Vec<f64> = serde_json::from_value(v["logits"].clone()).unwrap();
        assert_eq!(logits, want.logits());
        let d = &v["degradation"];
        assert_eq!(d["slope"].as_f64(), Some(want.degradation.slope));
        assert_eq!(d["intercept"].as_f64(), Some(want.degradation.intercept));
        assert_eq!(d["r2"].as_f64(), Some(want.degradation.r2));
        assert_eq!(v["splits"].as_u64(), Some(want.splits.len() as u64));
        assert_eq!(
            (v["bars"].as_u64(), v["combos"].as_u64()),
            (Some(301), Some(17))
        );
        assert_eq!(v["folds"].as_u64(), Some(folds as u64));
        assert_eq!(v["metric"].as_str(), Some(metric.name()));
    }
}

#[test]
fn a_fortran_order_file_gives_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (bars, combos) = (64, 5);
    let m = noise(bars, combos, 9);
    let c = dir.path().join("c.npy");
    hullsweep_data::write_f64_matrix_npy(&c, bars, combos, &m).unwrap();
    // The same matrix column by column, header saying so (numpy's np.asfortranarray).
    let f = dir.path().join("f.npy");
    let mut header =
        format!("{{'descr': '<f8', 'fortran_order': True, 'shape': ({bars}, {combos}), }}");
    while (11 + header.len()) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for k in 0..combos {
        for t in 0..bars {
            bytes.extend_from_slice(&m[t * combos + k].to_le_bytes());
        }
    }
    std::fs::write(&f, bytes).unwrap();
    let args = |p: &Path| run_ok(&["--matrix", s(p), "--folds", "4", "--format", "json"]);
    assert_eq!(args(&c), args(&f));
}

#[test]
fn text_leads_with_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let m = noise(400, 20, 3);
    let path = dir.path().join("m.npy");
    hullsweep_data::write_f64_matrix_npy(&path, 400, 20, &m).unwrap();
    let want = pbo(&m, 400, 20, 10, Metric::Sharpe, 1).unwrap();
    let text = run_ok(&["--matrix", s(&path), "--folds", "10"]);
    let below = want.splits.iter().filter(|s| s.logit <= 0.0).count();
    let first = format!(
        "PBO {:.2}: the best in-sample combo is at or below the OOS median in {:.0}% of splits \
         ({below} of 252)",
        want.pbo,
        100.0 * want.pbo
    );
    assert!(text.starts_with(&first), "{text}");
    assert!(
        text.contains("P(OOS loss)") && text.contains("Degradation: OOS = "),
        "{text}"
    );
    assert!(
        text.contains("20 combos, 400 bars in 10 folds, metric sharpe"),
        "{text}"
    );
}

#[test]
fn bad_input_exits_1_naming_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok.npy");
    hullsweep_data::write_f64_matrix_npy(&ok, 10, 3, &noise(10, 3, 1)).unwrap();
    let ok = s(&ok);
    let e = run_err(&["--matrix", ok, "--folds", "3"]);
    assert!(e.contains("--folds 3") && e.contains("got 3"), "{e}");
    let e = run_err(&["--matrix", ok, "--folds", "0"]);
    assert!(e.contains("got 0"), "{e}");
    let e = run_err(&["--matrix", ok, "--folds", "6"]);
    assert!(
        e.contains("at least 12 bars, but the matrix has 10 (use at most 4 folds)"),
        "{e}"
    );
    let e = run_err(&["--matrix", ok, "--folds", "4", "--metric", "sortino"]);
    assert!(
        e.contains("unknown metric \"sortino\"; known: sharpe, mean"),
        "{e}"
    );
    let e = run_err(&["--matrix", ok, "--folds", "4", "--threads", "0"]);
    assert!(e.contains("--threads 0"), "{e}");

    let one_d = dir.path().join("v.npy");
    hullsweep_data::write_f64_npy(&one_d, &[1.0, 2.0, 3.0]).unwrap();
    let e = run_err(&["--matrix", s(&one_d), "--folds", "2"]);
    assert!(
        e.contains("must be 2-D (bars x combos), got shape [3]"),
        "{e}"
    );
    let one_col = dir.path().join("c1.npy");
    hullsweep_data::write_f64_matrix_npy(&one_col, 8, 1, &[0.0; 8]).unwrap();
    let e = run_err(&["--matrix", s(&one_col), "--folds", "2"]);
    assert!(
        e.contains("at least 2 columns (combos) to choose between, got 1"),
        "{e}"
    );
    let mut m = noise(10, 3, 2);
    m[7 * 3 + 2] = f64::NAN;
    let nan = dir.path().join("nan.npy");
    hullsweep_data::write_f64_matrix_npy(&nan, 10, 3, &m).unwrap();
    let e = run_err(&["--matrix", s(&nan), "--folds", "2"]);
    assert!(
        e.contains("row 7, column 2 holds NaN: returns must be finite"),
        "{e}"
    );
    let ints = dir.path().join("i.npy");
    hullsweep_data::write_i64_npy(&ints, &[1, 2]).unwrap();
    let e = run_err(&["--matrix", s(&ints), "--folds", "2"]);
    assert!(e.contains("dtype <i8, expected float64"), "{e}");
}

#[test]
fn help_teaches_what_pbo_is() {
    let out = hullsweep().args(["pbo", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "Bailey, Borwein, Lopez de Prado and Zhu",
        "2017",
        "logit",
        "--folds",
        "median",
    ] {
        assert!(help.contains(needle), "{needle} missing from:\n{help}");
    }
}
