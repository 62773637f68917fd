//! The gate against the live numba reference. These tests create `.venv` with numba on first use
//! (about a minute), so `cargo test` on a fresh clone needs only Python 3.11 and PyPI.

use assert_cmd::cargo::cargo_bin_cmd;
use hullsweep_data::suite;
use hullsweep_gate::numba::{self, Mode, Worker};
use hullsweep_gate::{self as gate, GateReport, golden};
use hullsweep_kernel::{self as kernel, Combo};
use predicates::prelude::*;
use std::collections::BTreeSet;

/// (b) The fixtures are not stale: each pins the inputs the generator makes today, there is one
/// per dataset and no other, and live numba (single and prange) still gives their exact bits.
#[test]
fn golden_fixtures_are_fresh_and_live_numba_reproduces_them() {
    let suite = suite();
    let on_disk: BTreeSet<String> = std::fs::read_dir(golden::dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    let wanted: BTreeSet<String> = suite.iter().map(|d| format!("{}.json", d.name)).collect();
    assert_eq!(
        on_disk, wanted,
        "gate/tests/golden must hold one fixture per dataset"
    );

    let mut worker = Worker::start().unwrap();
    let mut reports: Vec<(Mode, GateReport)> = Vec::new();
    for d in &suite {
        let fixture = golden::read(&golden::dir(), &d.name).unwrap();
        fixture.check_inputs(d).unwrap();
        let want = fixture.result().unwrap();
        worker.load(&d.close, &d.params, d.fee).unwrap();
        for mode in Mode::ALL {
            let (_, got) = worker.time(mode).unwrap();
            reports.push((mode, gate::compare(&d.name, &got, &want)));
        }
    }
    let bad: Vec<String> = reports
        .iter()
        .filter(|(_, r)| !r.bit_identical())
        .map(|(mode, r)| format!("numba {}: {r}", mode.name()))
        .collect();
    assert!(
        bad.is_empty(),
        "live numba no longer reproduces the golden fixtures (regenerate with \
         `cargo run -- gate --write-golden` if the change is intended):\n{}\n{}",
        GateReport::header(),
        bad.join("\n")
    );
}

/// The metric fixtures are fresh (one per dataset, pinning today's inputs) and live numba's
/// `sweep_metrics` still gives their exact bits.
#[test]
fn metric_fixtures_are_fresh_and_live_numba_reproduces_them() {
    let suite = suite();
    let on_disk: BTreeSet<String> = std::fs::read_dir(gate::metrics::dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    let wanted: BTreeSet<String> = suite.iter().map(|d| format!("{}.json", d.name)).collect();
    assert_eq!(
        on_disk, wanted,
        "gate/tests/golden/metrics must hold one fixture per dataset"
    );
    let mut worker = Worker::start().unwrap();
    let mut bad = Vec::new();
    for d in &suite {
        let want = gate::metrics::oracle(d).unwrap();
        worker.load(&d.close, &d.params, d.fee).unwrap();
        let got = worker.metrics().unwrap();
        let report = gate::metrics::compare(&d.name, &got, &want);
        if !report.bit_identical() {
            bad.push(report.to_string());
        }
        // The Rust reference's second function, beside its port of the study's loop.
        let rust = kernel::sweep_metrics(&d.close, &d.params, d.fee).unwrap();
        assert!(
            gate::metrics::compare(&d.name, &rust, &want).bit_identical(),
            "{}",
            d.name
        );
    }
    assert!(
        bad.is_empty(),
        "live numba no longer reproduces the metric fixtures (regenerate with \
         `cargo run -- gate --write-golden` if the change is intended):\n{}",
        bad.join("\n")
    );
}

/// Every trade of every combo on every dataset: live numba's `sweep_trades` equals the Rust
/// reference's trade log (and every other implementation's) bit for bit ([`Trade::same`]), and
/// the trade fixtures are fresh (one per dataset, pinning today's inputs, with numba's digests).
#[test]
fn live_numba_trades_equal_every_implementation_and_the_fixtures_on_every_dataset() {
    let suite = suite();
    let on_disk: BTreeSet<String> = std::fs::read_dir(gate::trades::dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    let wanted: BTreeSet<String> = suite.iter().map(|d| format!("{}.json", d.name)).collect();
    assert_eq!(
        on_disk, wanted,
        "gate/tests/golden/trades must hold one fixture per dataset"
    );
    let mut worker = Worker::start().unwrap();
    let mut bad = Vec::new();
    let mut total = 0;
    for d in &suite {
        worker.load(&d.close, &d.params, d.fee).unwrap();
        let numba = worker.trades(None).unwrap();
        total += numba.len();
        let fixture = gate::trades::oracle(d).unwrap();
        let drift = fixture.compare(&d.name, &numba);
        if !drift.bit_identical() {
            bad.push(format!("numba vs fixture: {drift}"));
        }
        for &(name, log_of) in gate::trades::IMPLEMENTATIONS {
            let got = log_of(&d.close, &d.params, d.fee, &gate::trades::all(&d.params)).unwrap();
            let report = gate::trades::compare(&d.name, d.params.len(), &got, &numba);
            if !report.bit_identical() {
                bad.push(format!("{name} vs numba: {report}"));
            }
        }
    }
    assert!(total > 500_000, "the suite must trade: {total}");
    assert!(
        bad.is_empty(),
        "trade logs differ from live numba (regenerate the fixtures with \
         `cargo run -- gate --write-golden` only if a change is intended):\n{}",
        bad.join("\n")
    );
}

/// Chosen combos come back in the order asked for, and a combo past the params is refused by
/// the reference, named with the range, as the Rust reference refuses it.
#[test]
fn numba_trades_of_chosen_combos_and_a_bad_combo() {
    let d = suite()
        .into_iter()
        .find(|d| d.name == "flat_in_noise")
        .unwrap();
    let mut worker = Worker::start().unwrap();
    worker.load(&d.close, &d.params, d.fee).unwrap();
    let chosen = [5, 0, 31];
    let numba = worker.trades(Some(&chosen)).unwrap();
    let rust = gate::trades::reference(&d.close, &d.params, d.fee, &chosen).unwrap();
    assert_eq!(numba.first().map(|t| t.combo), Some(5));
    assert!(gate::trades::compare(&d.name, 32, &rust, &numba).bit_identical());
    let e = worker.trades(Some(&[3, 32])).unwrap_err().to_string();
    let rust = gate::trades::reference(&d.close, &d.params, d.fee, &[3, 32]).unwrap_err();
    assert!(e.contains(&rust.to_string()), "numba: {e}; rust: {rust}");
}

/// A user's series as numpy would hand it over: a random walk with gaps, through a .npy file.
fn user_npy(dir: &std::path::Path) -> (Vec<f64>, Vec<Combo>) {
    let mut close = kernel::gbm(3_000, 2024, 0.004).unwrap();
    for i in [0, 1, 500, 501, 502, 2_999] {
        close[i] = f64::NAN;
    }
    let path = dir.join("user.npy");
    hullsweep_data::write_f64_npy(&path, &close).unwrap();
    let close = hullsweep_data::read_close_npy(&path).unwrap();
    let mut params = kernel::grid("3:150:12".parse().unwrap()).unwrap();
    params.extend([
        [7, 3, 2, 40, 20, 13],
        [1, 1, 1, 9, 9, 9],
        [3_001, 1, 1, 2, 1, 1],
    ]);
    (close, params)
}

/// (c) The Rust reference against live numba (the one-shot `run` path, both sweeps) on user-style
/// data.
#[test]
fn rust_reference_matches_live_numba_on_a_user_npy() {
    let dir = tempfile::tempdir().unwrap();
    let (close, params) = user_npy(dir.path());
    let rust = kernel::sweep(&close, &params, 0.05).unwrap();
    assert!(rust.trades.iter().sum::<i64>() > 100, "the data must trade");
    for mode in Mode::ALL {
        let py = numba::run(&close, &params, 0.05, mode).unwrap();
        let report = gate::compare("user.npy", &rust, &py);
        assert!(report.bit_identical(), "numba {}: {report}", mode.name());
    }
}

/// (c) The same through the command line, on a CSV with empty cells (missing bars).
#[test]
fn gate_command_passes_on_a_csv_with_empty_cells() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prices.csv");
    let close = kernel::gbm(2_000, 77, 0.003).unwrap();
    let mut text = String::from("date,close\n");
    for (i, p) in close.iter().enumerate() {
        let cell = if i % 97 == 5 || (1_000..1_004).contains(&i) {
            String::new()
        } else {
            p.to_string()
        };
        text += &format!("{i},{cell}\n");
    }
    std::fs::write(&path, text).unwrap();
    cargo_bin_cmd!("hullsweep")
        .args([
            "gate",
            "--variant",
            "reference",
            "--grid",
            "4:80:8",
            "--data",
        ])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::contains("prices.csv"))
        .stdout(predicate::str::contains("PASS"))
        .stdout(predicate::str::contains(
            "trade log (reference) vs numba sweep_trades",
        ))
        .stdout(predicate::str::contains(
            "trade log (fast) vs numba sweep_trades",
        ))
        .stdout(
            predicate::str::is_match(r"prices\.csv +8 combos +\d+ trades, 0 combos differ  PASS")
                .unwrap(),
        )
        .stdout(predicate::str::contains("all passed"));
}

#[test]
fn gate_command_runs_user_npy_and_params_files() {
    let dir = tempfile::tempdir().unwrap();
    let (_, params) = user_npy(dir.path());
    let params_path = dir.path().join("params.npy");
    hullsweep_data::write_params_npy(&params_path, &params).unwrap();
    cargo_bin_cmd!("hullsweep")
        .args(["gate", "--oracle", "prange", "--fee", "-0.01", "--data"])
        .arg(dir.path().join("user.npy"))
        .arg("--params")
        .arg(&params_path)
        .assert()
        .success()
        .stdout(predicate::str::contains("vs numba prange"))
        .stdout(predicate::str::is_match(r"user\.npy +15 +0 +0 +0 +yes +PASS").unwrap());
}

#[test]
fn gate_command_names_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.csv");
    std::fs::write(&path, "close\n1.0\n1.1\n-1.5\n").unwrap();
    cargo_bin_cmd!("hullsweep")
        .args(["gate", "--data"])
        .arg(&path)
        .assert()
        .failure()
        .stderr(predicate::str::contains("bad price -1.5 at index 2"));
    cargo_bin_cmd!("hullsweep")
        .args(["gate", "--variant", "nope"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("unknown variant \"nope\""));
}

/// The numba reference refuses what the spec calls bad input, naming value and place, rather
/// than computing something.
#[test]
fn numba_reference_names_bad_input() {
    let close = [1.0, 1.1, 1.2];
    let e = numba::run(&close, &[[5, 2, 0, 5, 2, 1]], 0.09, Mode::Single).unwrap_err();
    assert!(e.to_string().contains("hma_sqrt = 0 in combo 0"), "{e:#}");
    let e = numba::run(&[1.0, -2.0], &[[1; 6]], 0.09, Mode::Single).unwrap_err();
    assert!(e.to_string().contains("bad price -2.0 at index 1"), "{e:#}");
}

#[test]
fn worker_protocol() {
    let mut w = Worker::start().unwrap();
    let v = w.versions().unwrap();
    assert_eq!(v["numba"], "0.68.1");
    assert_eq!(v["llvmlite"], "0.50.0");
    assert_eq!(v["numpy"], "2.4.6");
    assert!(v["python"].as_str().unwrap().starts_with("3."));
    let e = w.time(Mode::Single).unwrap_err().to_string();
    assert!(e.contains("no data loaded"), "{e}");
    assert_eq!(w.set_threads(1).unwrap(), 1);
    let close = kernel::gbm(500, 3, 0.01).unwrap();
    let params = kernel::grid("2:40:5".parse().unwrap()).unwrap();
    w.load(&close, &params, 0.09).unwrap();
    let (secs, r) = w.time(Mode::Prange).unwrap();
    assert!(secs > 0.0 && secs < 10.0, "{secs}");
    assert_eq!(r, kernel::sweep(&close, &params, 0.09).unwrap());
}
