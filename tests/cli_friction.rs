//! First-use frictions, each as a new user met it: `data --out x.csv` and `--out -`, negative
//! numbers given to flags that take numbers, `--plot x.png`, and a `.npy` that is not one.

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn hullsweep() -> Command {
    Command::cargo_bin("hullsweep").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Runs `hullsweep args`, expects exit code `code`, and returns stderr (never a panic).
fn fails_with(code: i32, args: &[&str]) -> String {
    let out = hullsweep().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    stderr
}

/// Writes the same generated series as `.npy` and `.csv` into `dir`.
fn both(dir: &Path, bars: &str, seed: &str, sigma: &str) -> (PathBuf, PathBuf) {
    let (npy, csv) = (dir.join("c.npy"), dir.join("c.csv"));
    for out in [&npy, &csv] {
        let gen_args = ["data", "--bars", bars, "--seed", seed, "--sigma", sigma];
        hullsweep()
            .args(gen_args)
            .args(["--out", s(out)])
            .assert()
            .success();
    }
    (npy, csv)
}

#[test]
fn data_writes_a_csv_that_reads_back_to_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    // A large sigma, so the prices have every kind of digit string.
    let (npy, csv) = both(dir.path(), "20000", "11", "0.05");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("close"));
    let cells: Vec<&str> = lines.collect();
    assert_eq!(cells.len(), 20000);
    let want = hullsweep_data::read_close_npy(&npy).unwrap();
    // Each cell is Rust's shortest round-trip form of the bar.
    for (cell, v) in cells.iter().zip(&want) {
        assert_eq!(*cell, v.to_string());
    }
    let back = hullsweep_data::read_close(&csv, None).unwrap();
    assert_eq!(bits(&back), bits(&want));
    // `sweep --data x.csv` sweeps the same series as the .npy.
    let sweep = |data: &Path| {
        let out = hullsweep()
            .args(["sweep", "--data", s(data), "--grid", "6:60:6"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        out.stdout
    };
    assert_eq!(sweep(&csv), sweep(&npy));
}

#[test]
fn data_out_dash_writes_the_csv_to_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let (_, csv) = both(dir.path(), "3000", "7", "0.001");
    let out = hullsweep()
        .args(["data", "--bars", "3000", "--seed", "7", "--out", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, std::fs::read(&csv).unwrap());
    assert!(String::from_utf8_lossy(&out.stderr).contains("standard output"));
}

#[test]
fn data_refuses_an_unknown_extension_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("x.txt");
    let e = fails_with(1, &["data", "--bars", "10", "--out", s(&txt)]);
    assert!(e.contains("x.txt: the extension .txt is not"), "{e}");
    assert!(e.contains(".npy, .csv or .parquet"), "{e}");
    assert!(!txt.exists());
}

#[test]
fn a_negative_number_gets_the_flags_own_message() {
    let cases: [(&[&str], &str); 5] = [
        (&["sweep", "--grid", "-5:20:3"], "LO = -5 must be >= 1"),
        (
            &["sweep", "--grid", "6:20:3", "--grid3", "-5:20:3"],
            "LO = -5 must be >= 1",
        ),
        (&["data", "--bars", "-5", "--out", "x.npy"], "bars = -5"),
        (&["data", "--seed", "-1", "--out", "x.npy"], "seed = -1"),
        (&["trades", "--grid", "-5:20:3"], "LO = -5 must be >= 1"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in cases {
        let out = hullsweep()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(needle), "{args:?}: {e}");
        assert!(e.contains("invalid value"), "{args:?}: {e}");
        assert!(!e.contains("unexpected argument"), "{args:?}: {e}");
    }
    assert!(!dir.path().join("x.npy").exists());
    // A flag where the grid should be is named as one.
    let e = fails_with(2, &["sweep", "--grid", "--metrics"]);
    assert!(e.contains("got the flag --metrics"), "{e}");
}

#[test]
fn plot_refuses_a_name_other_than_svg() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("heat.png");
    // A usage error (exit 2), before any sweep runs.
    let e = fails_with(
        2,
        &[
            "sweep",
            "--grid",
            "6:12:3",
            "--grid3",
            "6:12:2",
            "--plot",
            s(&png),
        ],
    );
    assert!(
        e.contains("heat.png: the sweep plot writes SVG only"),
        "{e}"
    );
    assert!(e.contains("name the file .svg"), "{e}");
    assert!(!png.exists(), "no SVG bytes under a .png name");
    let svg = dir.path().join("heat.svg");
    hullsweep()
        .args(["sweep", "--grid", "6:12:3", "--plot", s(&svg)])
        .assert()
        .success();
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
}

#[test]
fn a_file_that_is_not_a_npy_is_said_so_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let (npy, csv) = both(dir.path(), "100", "1", "0.001");
    let d = dir.path();
    let empty = d.join("empty.npy");
    std::fs::write(&empty, b"").unwrap();
    let text = d.join("text.npy");
    std::fs::copy(&csv, &text).unwrap();
    let cut = d.join("cut.npy");
    std::fs::write(&cut, &std::fs::read(&npy).unwrap()[..40]).unwrap();
    let cases = [
        (
            &empty,
            "empty.npy: not a valid .npy file: the file is empty",
        ),
        (
            &text,
            "text.npy: not a valid .npy file: it does not start with",
        ),
        (
            &cut,
            "cut.npy: not a valid .npy file: the .npy header is cut short",
        ),
    ];
    for (path, needle) in cases {
        for args in [
            vec!["sweep", "--data", s(path), "--grid", "6:12:2"],
            vec!["sweep", "--data", s(path), "--grid", "6:12:2", "--metrics"],
            vec!["sweep", "--params", s(path)],
        ] {
            let e = fails_with(1, &args);
            assert!(e.contains(needle), "{args:?}: {e}");
            assert!(!e.contains("magic not found"), "{args:?}: {e}");
        }
    }
    let e = fails_with(1, &["sweep", "--data", s(&text)]);
    assert!(
        e.contains("\\x93NUMPY magic; is it a CSV or text file?"),
        "{e}"
    );
}

/// A reader that stops early (`| head`) ends the command quietly with success, as a Unix filter
/// does, whatever the output: here the read end is closed before the command writes, so its one
/// write fails with a broken pipe every time.
#[cfg(unix)]
#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    use std::process::Stdio;
    let bin = assert_cmd::cargo::cargo_bin("hullsweep");
    for args in [
        &["sweep"][..],
        &["sweep", "--metrics"],
        &["sweep", "--folds", "4"],
        &["sweep", "--combo", "3"],
    ] {
        let mut child = std::process::Command::new(&bin)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?}, {stderr}", out.status);
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
    }
}
