//! `hullsweep sweep --folds/--returns/--metrics` and `hullsweep validate` as a researcher runs
//! them: the per-fold table carries the library's bits, the returns file is the kernel's matrix
//! and `pbo --matrix` on it gives validate's own `pbo` keys, the text leads with verdicts, the
//! plots are drawn, and every bad input exits 1 naming the value.

use assert_cmd::Command;
use hullsweep_kernel::{self as kernel, ValidClose};
use hullsweep_research::Metric;
use hullsweep_validate::{FoldSpec, Plan, fold_sweep, validate};
use hullsweep_variants::{Threads, Variant};
use serde_json::Value;
use std::path::Path;

fn hullsweep() -> Command {
    Command::cargo_bin("hullsweep").unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A 4,000-bar series written by `hullsweep data`, and the same bars in memory.
fn data(dir: &Path) -> (std::path::PathBuf, Vec<f64>) {
    let path = dir.join("c.npy");
    hullsweep()
        .args(["data", "--bars", "4000", "--seed", "5", "--out", s(&path)])
        .assert()
        .success();
    (path.clone(), hullsweep_data::read_close_npy(&path).unwrap())
}

fn run_ok(args: &[&str]) -> String {
    let out = hullsweep().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn run_err(args: &[&str]) -> String {
    let out = hullsweep().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

fn params(grid: &str) -> Vec<kernel::Combo> {
    kernel::grid(grid.parse().unwrap()).unwrap()
}

#[test]
fn folds_table_carries_the_fold_sweeps_bits() {
    let dir = tempfile::tempdir().unwrap();
    let (path, close) = data(dir.path());
    let params = params("6:120:5");
    let spec = FoldSpec {
        folds: Some(8),
        walk: None,
    };
    let valid = ValidClose::new(&close).unwrap();
    let fee = kernel::DEFAULT_FEE_PCT;
    let want = fold_sweep(
        Variant::Reference,
        valid,
        &params,
        fee,
        Threads::Fixed(1),
        spec,
        None,
    )
    .unwrap();
    let want: Vec<_> = want.rows().collect();
    for variant in ["fastest", "simd"] {
        let csv = run_ok(&[
            "sweep",
            "--data",
            s(&path),
            "--grid",
            "6:120:5",
            "--folds",
            "8",
            "--variant",
            variant,
        ]);
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("combo,fold,first_bar,last_bar,bars,pnl,trades,mean,std,sharpe")
        );
        let rows: Vec<&str> = lines.collect();
        assert_eq!(rows.len(), want.len());
        for (line, r) in rows.iter().zip(&want) {
            let c: Vec<&str> = line.split(',').collect();
            let f = |i: usize| c[i].parse::<f64>().unwrap().to_bits();
            assert_eq!(
                c[0..5],
                [r.combo, r.fold, r.first_bar, r.last_bar, r.bars].map(|v| v.to_string())
            );
            assert_eq!(f(5), r.pnl.to_bits(), "{line}");
            assert_eq!(c[6], r.trades.to_string());
            assert_eq!(
                [f(7), f(8), f(9)],
                [r.mean, r.std, r.sharpe].map(f64::to_bits),
                "{line}"
            );
        }
    }
    let json = run_ok(&[
        "sweep",
        "--data",
        s(&path),
        "--grid",
        "6:120:5",
        "--folds",
        "8",
        "--format",
        "json",
    ]);
    let rows: Vec<Value> = serde_json::from_str(&json).unwrap();
    assert_eq!(rows.len(), want.len());
    assert_eq!(
        rows[9]["pnl"].as_f64().unwrap().to_bits(),
        want[9].pnl.to_bits()
    );
    assert_eq!(rows[9]["fold"], 1);
}

#[test]
fn returns_matrix_is_the_kernels_and_pbo_on_it_is_validates() {
    let dir = tempfile::tempdir().unwrap();
    let (path, close) = data(dir.path());
    let r = dir.path().join("r.npy");
    let grid = "6:200:9";
    let out = run_ok(&[
        "validate",
        "--data",
        s(&path),
        "--grid",
        grid,
        "--folds",
        "8",
        "--format",
        "json",
        "--returns",
        s(&r),
        "--walk-forward",
        "1000:500",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let params = params(grid);
    let mut m = hullsweep_data::NpyMatrix::open(&r).unwrap();
    assert_eq!(m.shape(), [4000, 9]);
    let mut rows = Vec::new();
    m.next_rows(&mut rows, 4000).unwrap();
    for (k, combo) in params.iter().enumerate() {
        let want = kernel::run_combo_returns(&close, combo, kernel::DEFAULT_FEE_PCT);
        let got: Vec<u64> = (0..4000).map(|t| rows[t * 9 + k].to_bits()).collect();
        assert_eq!(
            got,
            want.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            "combo {k}"
        );
    }
    let pbo = run_ok(&["pbo", "--matrix", s(&r), "--folds", "8", "--format", "json"]);
    let pbo: Value = serde_json::from_str(&pbo).unwrap();
    for (key, value) in pbo.as_object().unwrap() {
        assert_eq!(&v[key], value, "{key}");
    }
    // The rest is the library's, number for number.
    let valid = ValidClose::new(&close).unwrap();
    let spec: hullsweep_research::WalkSpec = "1000:500".parse().unwrap();
    let plan = Plan {
        folds: 8,
        metric: Metric::Sharpe,
        walk: Some(&spec),
        oos_returns: true,
    };
    let fee = kernel::DEFAULT_FEE_PCT;
    let lib = validate(
        Variant::fastest(),
        valid,
        &params,
        fee,
        Threads::Fixed(1),
        plan,
        None,
    )
    .unwrap();
    let d = &v["deflated_sharpe"];
    assert_eq!(d["combo"], lib.deflated.combo);
    assert_eq!(
        d["dsr"].as_f64().unwrap().to_bits(),
        lib.deflated.dsr.to_bits()
    );
    let w = &v["walk_forward"];
    let wf = lib.walk_forward.unwrap();
    let selected: Vec<usize> = wf.selections.iter().map(|s| s.selected).collect();
    assert_eq!(w["selected"], serde_json::json!(selected));
    assert_eq!(
        selected.len(),
        6,
        "windows k = 0..=5: 5 * 500 + 1500 <= 4000"
    );
    assert_eq!(
        w["oos_pnl"].as_f64().unwrap().to_bits(),
        wf.summary.pnl.to_bits()
    );
    assert_eq!(
        w["oos_sharpe"].as_f64().unwrap().to_bits(),
        wf.summary.sharpe.to_bits()
    );
}

/// A `--data` file is read in chunks; the built-in series (no `--data`) is swept in memory. The
/// same bars give the same bytes in every research output, and a CSV's missing bar (an empty
/// cell) is the .npy's NaN.
#[test]
fn a_file_read_in_chunks_gives_the_bytes_of_the_series_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("default.npy");
    hullsweep()
        .args(["data", "--out", s(&path)])
        .assert()
        .success();
    // `hullsweep data`'s defaults write the built-in series, bit for bit.
    let close = hullsweep_data::read_close_npy(&path).unwrap();
    let built_in = kernel::default_close();
    assert!(
        close
            .iter()
            .map(|x| x.to_bits())
            .eq(built_in.iter().map(|x| x.to_bits()))
    );
    let grid = ["--grid", "6:120:4"];
    for flags in [
        &["--folds", "8"][..],
        &["--metrics"][..],
        &["--folds", "4", "--format", "json"][..],
    ] {
        let memory = run_ok(&[&["sweep"][..], &grid, flags].concat());
        let chunks = run_ok(&[&["sweep", "--data", s(&path)][..], &grid, flags].concat());
        assert_eq!(memory, chunks, "{flags:?}");
    }
    // The returns written from chunks are the in-memory ones.
    let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    run_ok(&[&["sweep", "--returns", s(&a)][..], &grid].concat());
    run_ok(
        &[
            &["sweep", "--data", s(&path), "--returns", s(&b)][..],
            &grid,
        ]
        .concat(),
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());

    // A missing bar: an empty CSV cell and a NaN in an .npy, each read in chunks.
    let (_, close) = data(dir.path());
    let mut gapped = close.clone();
    gapped[2500] = f64::NAN;
    let npy = dir.path().join("gapped.npy");
    hullsweep_data::write_f64_npy(&npy, &gapped).unwrap();
    let csv = dir.path().join("gapped.csv");
    let mut text = String::from("close\n");
    for (i, x) in close.iter().enumerate() {
        text += &if i == 2500 {
            String::new()
        } else {
            x.to_string()
        };
        text += "\n";
    }
    std::fs::write(&csv, text).unwrap();
    for flags in [&["--folds", "8"][..], &["--metrics"][..]] {
        let from_npy = run_ok(&[&["sweep", "--data", s(&npy)][..], flags].concat());
        let from_csv = run_ok(&[&["sweep", "--data", s(&csv)][..], flags].concat());
        assert_eq!(from_npy, from_csv, "{flags:?}");
    }
}

#[test]
fn metrics_gain_sharpe_win_rate_and_profit_factor() {
    let dir = tempfile::tempdir().unwrap();
    let (path, close) = data(dir.path());
    let csv = run_ok(&[
        "sweep",
        "--data",
        s(&path),
        "--grid",
        "6:120:4",
        "--metrics",
    ]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(
        header[header.len() - 3..],
        ["sharpe", "win_rate", "profit_factor"]
    );
    let params = params("6:120:4");
    let all: Vec<usize> = (0..4).collect();
    let fee = kernel::DEFAULT_FEE_PCT;
    let log = kernel::trades(ValidClose::new(&close).unwrap(), &params, fee, &all).unwrap();
    for (k, line) in csv.lines().skip(1).enumerate() {
        let c: Vec<&str> = line.split(',').collect();
        let n = c.len();
        let mine: Vec<f64> = log.iter().filter(|t| t.combo == k).map(|t| t.pnl).collect();
        let wins = mine.iter().filter(|&&p| p > 0.0).count();
        let want = wins as f64 / mine.len() as f64;
        assert_eq!(c[n - 2].parse::<f64>().unwrap().to_bits(), want.to_bits());
        let r = kernel::run_combo_returns(&close, &params[k], fee);
        let mean = r.iter().sum::<f64>() / r.len() as f64;
        let var = r.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / r.len() as f64;
        let sharpe: f64 = c[n - 3].parse().unwrap();
        assert!(
            (sharpe - mean / var.sqrt()).abs() < 1e-12 * sharpe.abs(),
            "{line}"
        );
    }
}

#[test]
fn validate_text_leads_with_verdicts_and_draws_the_plots() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = data(dir.path());
    let plots = dir.path().join("plots");
    let text = run_ok(&[
        "validate",
        "--data",
        s(&path),
        "--grid",
        "6:200:9",
        "--folds",
        "8",
        "--walk-forward",
        "1000:500:anchored",
        "--plot",
        s(&plots),
    ]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("PBO "), "{text}");
    assert!(
        lines.iter().any(|l| l.starts_with("Deflated Sharpe ")),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Walk-forward 1000:500:anchored: 6 windows")),
        "{text}"
    );
    for name in ["logits.svg", "is_oos.svg", "walk_forward.svg"] {
        let svg = std::fs::read_to_string(plots.join(name)).unwrap();
        assert!(svg.contains("<svg"), "{name}");
    }
}

#[test]
fn bad_inputs_exit_1_naming_the_value() {
    let e = run_err(&["validate", "--folds", "7"]);
    assert!(e.contains("got 7"), "{e}");
    let e = run_err(&["validate", "--walk-forward", "100:x"]);
    assert!(e.contains("\"x\""), "{e}");
    let e = run_err(&["validate", "--walk-forward", "200000:1000"]);
    assert!(e.contains("200000"), "{e}");
    let e = run_err(&["validate", "--metric", "sortino"]);
    assert!(e.contains("\"sortino\""), "{e}");
    let e = run_err(&["validate", "--grid", "20:20:1"]);
    assert!(e.contains("at least 2 columns"), "{e}");
    let e = run_err(&["sweep", "--folds", "0"]);
    assert!(e.contains("got 0"), "{e}");
    // A usage error is clap's: exit 2, naming both flags.
    let out = hullsweep()
        .args(["sweep", "--folds", "4", "--metrics"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(e.contains("--folds") && e.contains("--metrics"), "{e}");
    let e = run_err(&["sweep", "--returns", "/nonexistent/dir/r.npy"]);
    assert!(e.contains("/nonexistent/dir/r.npy"), "{e}");
}

#[test]
fn combo_reports_only_the_chosen_rows_with_their_sweep_numbers() {
    let all = run_ok(&["sweep", "--grid", "6:60:6"]);
    let two = run_ok(&["sweep", "--grid", "6:60:6", "--combo", "4,1"]);
    let want: Vec<&str> = all
        .lines()
        .enumerate()
        .filter(|(i, _)| [0, 2, 5].contains(i))
        .map(|(_, l)| l)
        .collect();
    assert_eq!(two.lines().collect::<Vec<_>>(), want);
    let json: Vec<Value> = serde_json::from_str(&run_ok(&[
        "sweep",
        "--grid",
        "6:60:6",
        "--metrics",
        "--format",
        "json",
        "--combo",
        "2",
    ]))
    .unwrap();
    assert_eq!(json.len(), 1);
    assert_eq!(json[0]["combo"], 2);
    let folds = run_ok(&["sweep", "--grid", "6:60:6", "--folds", "4", "--combo", "5"]);
    assert_eq!(folds.lines().count(), 5);
    assert!(folds.lines().skip(1).all(|l| l.starts_with("5,")));
    let e = run_err(&["sweep", "--grid", "6:60:6", "--combo", "6"]);
    assert!(e.contains("--combo") && e.contains("6"), "{e}");
}
