//! The crate against the numpy reference (reference/pbo_ref.py, the definitions taken literally:
//! returns concatenated per split) on random matrices, ties included: PBO, the split count,
//! P(OOS loss) and every n* exactly; logits, the selected combos' metrics and the degradation
//! line to 1e-9. Runs the project's `.venv` Python (or `HULLSWEEP_PYTHON`); without Python and
//! numpy it says so and passes, and `scripts/test` always installs them.

use hullsweep_research::{Cscv, Metric, pbo};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// The Python with numpy: `HULLSWEEP_PYTHON`, else the project's `.venv`; None (and why) when
/// there is none.
fn python() -> Result<PathBuf, String> {
    let python = match std::env::var_os("HULLSWEEP_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => root().join(".venv").join("bin").join("python"),
    };
    let ok = Command::new(&python)
        .args(["-c", "import numpy"])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if ok.status.success() {
        Ok(python)
    } else {
        Err(format!("{} has no numpy", python.display()))
    }
}

/// A little-endian float64 C-order `.npy` (format 1.0), written by hand to need no crate.
fn write_npy(path: &Path, bars: usize, combos: usize, values: &[f64]) {
    let mut header =
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({bars}, {combos}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    values
        .iter()
        .for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
    std::fs::write(path, bytes).unwrap();
}

fn reference(
    python: &Path,
    m: &[f64],
    bars: usize,
    combos: usize,
    folds: usize,
    metric: Metric,
) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.npy");
    write_npy(&path, bars, combos, m);
    let out = Command::new(python)
        .arg(root().join("reference").join("pbo_ref.py"))
        .arg(&path)
        .args(["--folds", &folds.to_string(), "--metric", metric.name()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn near(got: f64, want: &Value, what: &str) {
    let want = want.as_f64().unwrap();
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: {got} vs the reference's {want}"
    );
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn compare(name: &str, got: &Cscv, want: &Value) {
    assert_eq!(got.pbo, want["pbo"].as_f64().unwrap(), "{name}: pbo");
    assert_eq!(
        got.splits.len() as u64,
        want["splits"].as_u64().unwrap(),
        "{name}"
    );
    assert_eq!(
        got.prob_oos_loss,
        want["prob_oos_loss"].as_f64().unwrap(),
        "{name}"
    );
    let selected: Vec<u64> = got.splits.iter().map(|s| s.selected as u64).collect();
    let want_selected: Vec<u64> = want["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(selected, want_selected, "{name}: n* per split");
    let (logits, is, oos) = (
        floats(&want["logits"]),
        floats(&want["is_perf"]),
        floats(&want["oos_perf"]),
    );
    for (i, s) in got.splits.iter().enumerate() {
        near(s.logit, &logits[i].into(), &format!("{name}: logit {i}"));
        near(s.is_perf, &is[i].into(), &format!("{name}: is_perf {i}"));
        near(s.oos_perf, &oos[i].into(), &format!("{name}: oos_perf {i}"));
    }
    let d = &want["degradation"];
    near(
        got.degradation.slope,
        &d["slope"],
        &format!("{name}: slope"),
    );
    near(
        got.degradation.intercept,
        &d["intercept"],
        &format!("{name}: intercept"),
    );
    near(got.degradation.r2, &d["r2"], &format!("{name}: r2"));
    for (key, value) in [
        ("folds", got.folds),
        ("combos", got.combos),
        ("bars", got.bars),
    ] {
        assert_eq!(want[key].as_u64(), Some(value as u64), "{name}: {key}");
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Roughly normal: a sum of four uniforms, centred.
    fn normal(&mut self) -> f64 {
        (0..4)
            .map(|_| (self.next() >> 11) as f64 / (1u64 << 53) as f64)
            .sum::<f64>()
            - 2.0
    }
    fn int(&mut self, k: u64) -> f64 {
        (self.next() % (2 * k + 1)) as f64 - k as f64
    }
}

/// A `bars x combos` matrix from `value(rng, row, column)`.
fn make(
    bars: usize,
    combos: usize,
    seed: u64,
    mut value: impl FnMut(&mut Rng, usize, usize) -> f64,
) -> Vec<f64> {
    let mut rng = Rng(seed);
    (0..bars * combos)
        .map(|i| value(&mut rng, i / combos, i % combos))
        .collect()
}

/// Copies column `from` onto column `to`.
fn duplicate(m: &mut [f64], combos: usize, from: usize, to: usize) {
    for row in m.chunks_exact_mut(combos) {
        row[to] = row[from];
    }
}

#[test]
fn cscv_matches_the_numpy_reference() {
    let python = match python() {
        Ok(p) => p,
        Err(why) => {
            println!("skipped: no Python with numpy ({why}); scripts/test installs it");
            return;
        }
    };
    let mut cases: Vec<(&str, Vec<f64>, usize, usize, usize)> = Vec::new();
    // Floats, folds of unequal length (203 = 6 * 33 + 5), a drift per column.
    let m = make(203, 40, 1, |r, _, k| {
        0.5 * r.normal() + 0.01 * (k as f64 - 20.0) / 20.0
    });
    cases.push(("floats 203x40 S6", m, 203, 40, 6));
    // The smallest split count, and an odd fold length.
    cases.push((
        "floats 9x3 S2",
        make(9, 3, 2, |r, _, _| r.normal()),
        9,
        3,
        2,
    ));
    // Duplicated columns (exact ties everywhere), an all-zero column, and a column of zeros
    // after a first bar whose long mantissa makes its shift inexact.
    let mut m = make(150, 25, 3, |r, _, k| r.normal() + 0.02 * k as f64 - 0.2);
    for to in [3, 7, 20] {
        duplicate(&mut m, 25, 1, to);
    }
    for row in 0..150 {
        m[row * 25 + 10] = if row == 0 { 0.3 } else { 0.0 };
        m[row * 25 + 11] = 0.0;
    }
    cases.push(("floats with ties 150x25 S8", m, 150, 25, 8));
    // Integer returns with power-of-two halves, where numpy's mean and std are exact too: ties
    // between different columns everywhere, the rank's tie rule decides.
    let mut m = make(64, 30, 4, |r, _, _| r.int(2));
    duplicate(&mut m, 30, 0, 29);
    duplicate(&mut m, 30, 5, 6);
    cases.push(("integers 64x30 S4", m, 64, 30, 4));
    cases.push((
        "integers 128x40 S8",
        make(128, 40, 5, |r, _, _| r.int(1)),
        128,
        40,
        8,
    ));
    // S = 16: all 12,870 splits.
    cases.push((
        "integers 256x12 S16",
        make(256, 12, 6, |r, _, _| r.int(3)),
        256,
        12,
        16,
    ));
    for (name, m, bars, combos, folds) in &cases {
        for metric in Metric::ALL {
            let name = format!("{name} {metric}");
            let got = pbo(m, *bars, *combos, *folds, metric, 2).unwrap();
            let want = reference(&python, m, *bars, *combos, *folds, metric);
            assert_eq!(want["metric"].as_str(), Some(metric.name()));
            compare(&name, &got, &want);
        }
    }
}
