//! Bar returns (docs/kernel.md, "Bar returns") against the numba reference
//! `reference/returns_ref.py`, on every dataset of the gate's suite:
//!
//! - `hullsweep_kernel::run_combo_returns` (so `backtest_returns`) equals numba's `bar_returns`
//!   (`returns.npy`) bit for bit, every bar of every combo checked (a NaN equals a NaN whatever
//!   its payload, as everywhere in the gate);
//! - each fold's `pnl` and `trades` in `folds.json` equal the kernel's trade log
//!   (`hullsweep_kernel::trades`) split by exit bar into the folds of `numpy.array_split` and
//!   summed in exit order from `0.0`, bit for bit, and the folds' bounds are array_split's;
//! - `win_rate` and `profit_factor` in `metrics.json` equal the same trade log's, bit for bit.
//!
//! The folds' and the series' mean, std and sharpe are numpy's (pairwise sums) and are not
//! checked here. Every combo of every dataset is checked except on `default` (150,000 bars),
//! where every [`DEFAULT_STEP`]th combo of its 80 is, to keep the test to seconds.
//!
//! Runs the project's `.venv` Python (or `HULLSWEEP_PYTHON`); without Python, numpy and numba it
//! says so and passes, and `scripts/test` always installs them.

use hullsweep_data::{self as io, Dataset, suite};
use hullsweep_kernel::{self as kernel, Combo, Trade, ValidClose};
use serde_json::Value;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The folds asked for (fewer on a shorter series): 7, so most datasets' folds differ in length.
const FOLDS: usize = 7;

/// On the default dataset, the combos checked are `0, DEFAULT_STEP, 2 * DEFAULT_STEP, ...`.
const DEFAULT_STEP: usize = 4;

fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// The Python with numpy and numba: `HULLSWEEP_PYTHON`, else the project's `.venv`; why not
/// when there is none.
fn python() -> Result<PathBuf, String> {
    let python = match std::env::var_os("HULLSWEEP_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => root().join(".venv").join("bin").join("python"),
    };
    let ok = Command::new(&python)
        .args(["-c", "import numpy, numba"])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if ok.status.success() {
        Ok(python)
    } else {
        Err(format!("{} has no numpy or no numba", python.display()))
    }
}

/// What returns_ref.py wrote for one dataset.
struct Reference {
    /// `T x n`, row-major.
    returns: Vec<f64>,
    folds: Vec<Value>,
    metrics: Vec<Value>,
}

fn run_reference(python: &Path, d: &Dataset, params: &[Combo], folds: usize) -> Reference {
    let dir = tempfile::tempdir().unwrap();
    let (close_path, params_path, out) = (
        dir.path().join("close.npy"),
        dir.path().join("params.npy"),
        dir.path().join("out"),
    );
    io::write_f64_npy(&close_path, &d.close).unwrap();
    io::write_params_npy(&params_path, params).unwrap();
    let run = Command::new(python)
        .arg(root().join("reference").join("returns_ref.py"))
        .arg(&close_path)
        .arg(&params_path)
        // `=` keeps a negative fee from looking like an option to argparse.
        .arg(format!("--fee={:?}", d.fee))
        .arg(format!("--folds={folds}"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "returns_ref.py on {}: {}",
        d.name,
        String::from_utf8_lossy(&run.stderr)
    );
    let npy =
        npyz::NpyFile::new(BufReader::new(File::open(out.join("returns.npy")).unwrap())).unwrap();
    assert_eq!(
        npy.shape(),
        [d.close.len() as u64, params.len() as u64],
        "{}: returns.npy's shape",
        d.name
    );
    assert_eq!(
        npy.order(),
        npyz::Order::C,
        "{}: returns.npy's order",
        d.name
    );
    let returns = npy.into_vec::<f64>().unwrap();
    let json = |name: &str| -> Vec<Value> {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    Reference {
        returns,
        folds: json("folds.json"),
        metrics: json("metrics.json"),
    }
}

/// A float field as returns_ref.py writes it (a number, or "nan"/"inf"/"-inf"); None for null.
fn float(row: &Value, key: &str) -> Option<f64> {
    match &row[key] {
        Value::Null => None,
        Value::String(s) => Some(match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("{key}: {other:?} is not a float"),
        }),
        v => Some(
            v.as_f64()
                .unwrap_or_else(|| panic!("{key}: {v} is not a float")),
        ),
    }
}

fn int(row: &Value, key: &str) -> u64 {
    row[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key}: {} is not a count", row[key]))
}

/// The same bits, or both NaN (whose payload hardware sets differently).
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn show(x: f64) -> String {
    format!("{x:?} ({:#018x})", x.to_bits())
}

/// The fold bounds of `numpy.array_split(range(bars), folds)`, inclusive.
fn array_split(bars: usize, folds: usize) -> Vec<(usize, usize)> {
    let (base, extra) = (bars / folds, bars % folds);
    (0..folds)
        .map(|f| {
            let first = f * base + f.min(extra);
            (first, first + base + usize::from(f < extra) - 1)
        })
        .collect()
}

/// Win rate and profit factor of one combo's trades, as returns_ref.py defines them.
fn trade_metrics(trades: &[&Trade]) -> (Option<f64>, Option<f64>) {
    let (mut wins, mut losses, mut profit, mut loss) = (0usize, 0usize, 0.0, 0.0);
    for t in trades {
        if t.pnl > 0.0 {
            wins += 1;
            profit += t.pnl;
        } else if t.pnl < 0.0 {
            losses += 1;
            loss += -t.pnl;
        }
    }
    let win_rate = (!trades.is_empty()).then(|| wins as f64 / trades.len() as f64);
    (win_rate, (losses > 0).then(|| profit / loss))
}

/// Checks one dataset; returns every mismatch found, one line each, and counts what it checked.
fn check(python: &Path, d: &Dataset, tally: &mut [usize; 3]) -> Vec<String> {
    let picked: Vec<usize> = if d.name == "default" {
        (0..d.params.len()).step_by(DEFAULT_STEP).collect()
    } else {
        (0..d.params.len()).collect()
    };
    let params: Vec<Combo> = picked.iter().map(|&k| d.params[k]).collect();
    let (bars, n) = (d.close.len(), params.len());
    let folds = FOLDS.min(bars);
    let start = Instant::now();
    let want = run_reference(python, d, &params, folds);
    let numba = start.elapsed().as_secs_f64();
    let log = kernel::trades(
        ValidClose::new(&d.close).unwrap(),
        &params,
        d.fee,
        &(0..n).collect::<Vec<_>>(),
    )
    .unwrap();
    let bounds = array_split(bars, folds);
    let mut bad = Vec::new();
    let name = &d.name;
    assert_eq!(want.folds.len(), n * folds, "{name}: rows of folds.json");
    assert_eq!(want.metrics.len(), n, "{name}: rows of metrics.json");
    for (j, combo) in params.iter().enumerate() {
        let k = picked[j];
        let got = kernel::run_combo_returns(&d.close, combo, d.fee);
        let diff = (0..bars).find(|&t| !same(got[t], want.returns[t * n + j]));
        if let Some(t) = diff {
            let count = (0..bars)
                .filter(|&t| !same(got[t], want.returns[t * n + j]))
                .count();
            bad.push(format!(
                "{name} combo {k}: bar returns differ at {count} bars, first bar {t}: kernel {} \
                 vs numba {}",
                show(got[t]),
                show(want.returns[t * n + j])
            ));
        }
        tally[0] += usize::from(got.iter().any(|&r| r != 0.0));
        let trades: Vec<&Trade> = log.iter().filter(|t| t.combo == j).collect();
        tally[1] += trades.len();
        for (f, &(first, last)) in bounds.iter().enumerate() {
            let row = &want.folds[j * folds + f];
            let head = [
                ("combo", j as u64),
                ("fold", f as u64),
                ("first_bar", first as u64),
                ("last_bar", last as u64),
                ("bars", (last + 1 - first) as u64),
            ];
            for (key, value) in head {
                assert_eq!(int(row, key), value, "{name} combo {k} fold {f}: {key}");
            }
            let inside = trades
                .iter()
                .filter(|t| (first as u64..=last as u64).contains(&t.exit_bar));
            let (pnl, count) = inside.fold((0.0, 0u64), |(s, c), t| (s + t.pnl, c + 1));
            let (want_pnl, want_count) = (float(row, "pnl").unwrap(), int(row, "trades"));
            if count != want_count || !same(pnl, want_pnl) {
                bad.push(format!(
                    "{name} combo {k} fold {f} (bars {first}..={last}): trade log {count} \
                     trades, pnl {} vs folds.json {want_count} trades, pnl {}",
                    show(pnl),
                    show(want_pnl)
                ));
            }
            tally[2] += 1;
        }
        let row = &want.metrics[j];
        assert_eq!(int(row, "combo"), j as u64, "{name}: metrics.json row {j}");
        let (win_rate, profit_factor) = trade_metrics(&trades);
        for (key, got) in [("win_rate", win_rate), ("profit_factor", profit_factor)] {
            let want = float(row, key);
            let equal = match (got, want) {
                (Some(a), Some(b)) => same(a, b),
                (a, b) => a.is_none() && b.is_none(),
            };
            if !equal {
                bad.push(format!(
                    "{name} combo {k}: {key} from the trade log {got:?} vs metrics.json {want:?}"
                ));
            }
        }
    }
    eprintln!(
        "{name}: {bars} bars x {n} combos, {folds} folds: numba {numba:.1} s, kernel {:.1} s",
        start.elapsed().as_secs_f64() - numba
    );
    bad
}

#[test]
fn kernel_bar_returns_and_fold_pnl_match_numba_bit_for_bit_on_the_suite() {
    let python = match python() {
        Ok(p) => p,
        Err(why) => {
            eprintln!("skipped: no Python with numpy and numba ({why}); scripts/test installs it");
            return;
        }
    };
    let mut bad = Vec::new();
    let mut tally = [0usize; 3];
    for d in &suite() {
        bad.extend(check(&python, d, &mut tally));
    }
    let [moving, trades, folds] = tally;
    eprintln!(
        "checked {moving} combos with nonzero returns, {trades} trades, {folds} (fold, combo) pairs"
    );
    // Not vacuous: the suite trades, and its returns move.
    assert!(moving > 100 && trades > 10_000, "{tally:?}");
    assert!(
        bad.is_empty(),
        "bar returns or fold PnL differ from reference/returns_ref.py:\n{}",
        bad.join("\n")
    );
}
