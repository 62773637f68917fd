//! The deflated Sharpe ratio and walk-forward selection against the numpy reference
//! (reference/research_ref.py, the definitions taken literally), on random matrices.

use hullsweep_research::{
    ColumnSums, FoldStats, Metric, WalkSpec, deflated_sharpe, oos_summary, select_best,
    walk_forward_select,
};
use serde_json::Value;
use std::ops::Range;
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

/// A little-endian float64 C-order `.npy` (format 1.0) of the columns `cols`, written by hand.
fn write_npy(path: &Path, cols: &[Vec<f64>]) {
    let (bars, combos) = (cols[0].len(), cols.len());
    let mut header =
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({bars}, {combos}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for t in 0..bars {
        cols.iter()
            .for_each(|c| bytes.extend_from_slice(&c[t].to_le_bytes()));
    }
    std::fs::write(path, bytes).unwrap();
}

fn reference(python: &Path, cols: &[Vec<f64>], spec: &WalkSpec, metric: Metric) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.npy");
    write_npy(&path, cols);
    let out = Command::new(python)
        .arg(root().join("reference").join("research_ref.py"))
        .arg(&path)
        .args([
            "--walk-forward",
            &spec.to_string(),
            "--metric",
            metric.name(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `got` within 1e-9 relative of `want` (with a floor of 1e-12, for values that are 0 on one
/// side and a rounding away from it on the other).
fn near(got: f64, want: &Value, what: &str) {
    let want = want.as_f64().unwrap();
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1e-12),
        "{what}: {got} vs the reference's {want}"
    );
}

/// Fold statistics of the columns over `bounds`.
fn stats(cols: &[Vec<f64>], bounds: Vec<Range<usize>>) -> FoldStats {
    let ends: Vec<usize> = bounds.iter().map(|b| b.end).collect();
    let sums: Vec<ColumnSums> = cols
        .iter()
        .map(|c| {
            let mut s = ColumnSums::new(&ends);
            c.iter().for_each(|&x| s.push(x));
            s
        })
        .collect();
    FoldStats::from_columns(cols[0].len(), bounds, &sums).unwrap()
}

/// Each combo's full-series Sharpe ratio, from the statistics of one segment.
fn sharpes(cols: &[Vec<f64>]) -> Vec<f64> {
    let bars = cols[0].len();
    let st = stats(cols, std::iter::once(0..bars).collect());
    let (s, q) = st.sums(0);
    let n = bars as f64;
    (0..cols.len())
        .map(|k| Metric::Sharpe.eval(n, n * st.shifts()[k], s[k], q[k]))
        .collect()
}

fn compare(name: &str, cols: &[Vec<f64>], spec: &WalkSpec, metric: Metric, want: &Value) {
    let sr = sharpes(cols);
    let got = deflated_sharpe(&sr, &cols[select_best(&sr)]).unwrap();
    let d = &want["deflated_sharpe"];
    assert_eq!(Some(got.combo as u64), d["combo"].as_u64(), "{name}: combo");
    assert_eq!(Some(got.bars as u64), d["bars"].as_u64(), "{name}: bars");
    for (key, value) in [
        ("sharpe", got.sharpe),
        ("sr0", got.sr0),
        ("variance", got.variance),
        ("skew", got.skew),
        ("kurt", got.kurt),
    ] {
        near(value, &d[key], &format!("{name}: {key}"));
    }
    // NormalDist's Phi is 0.5 (1 + erf(x / sqrt 2)): in the lower tail its error is absolute,
    // half an ulp of 1 and erf's own, not relative (it gives 0 where the crate has 8e-43).
    let want_dsr = d["dsr"].as_f64().unwrap();
    assert!(
        (got.dsr - want_dsr).abs() <= (1e-9 * want_dsr).max(f64::EPSILON),
        "{name}: dsr {} vs the reference's {want_dsr}",
        got.dsr
    );

    let bars = cols[0].len();
    let st = stats(cols, spec.segments(bars).unwrap());
    let picks = walk_forward_select(&st, spec, metric).unwrap();
    let w = &want["walk_forward"];
    let windows: Vec<Value> = picks
        .iter()
        .map(|p| {
            let (tr, te) = (&p.window.train, &p.window.test);
            serde_json::json!([tr.start, tr.end, te.start, te.end])
        })
        .collect();
    assert_eq!(&Value::from(windows), &w["windows"], "{name}: windows");
    let selected: Vec<Value> = picks.iter().map(|p| p.selected.into()).collect();
    assert_eq!(&Value::from(selected), &w["selected"], "{name}: selected");
    for (i, p) in picks.iter().enumerate() {
        near(
            p.train_metric,
            &w["train_metric"][i],
            &format!("{name}: train metric {i}"),
        );
    }
    let oos: Vec<f64> = picks
        .iter()
        .flat_map(|p| cols[p.selected][p.window.test.clone()].iter().copied())
        .collect();
    let summary = oos_summary(&oos);
    assert_eq!(
        Some(summary.bars as u64),
        w["oos_bars"].as_u64(),
        "{name}: OOS bars"
    );
    near(summary.pnl, &w["oos_pnl"], &format!("{name}: OOS pnl"));
    near(
        summary.sharpe,
        &w["oos_sharpe"],
        &format!("{name}: OOS Sharpe"),
    );
}

struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Roughly normal: a sum of four uniforms, centred.
    fn normal(&mut self) -> f64 {
        (0..4).map(|_| self.uniform()).sum::<f64>() - 2.0
    }
    fn int(&mut self, k: u64) -> f64 {
        (self.uniform() * (2 * k + 1) as f64).floor() - k as f64
    }
}

/// `combos` columns of `bars` bars from `value(rng, bar, combo)`.
fn make(
    bars: usize,
    combos: usize,
    seed: u64,
    mut value: impl FnMut(&mut Rng, usize, usize) -> f64,
) -> Vec<Vec<f64>> {
    let mut rng = Rng(seed);
    let mut cols = vec![Vec::with_capacity(bars); combos];
    for t in 0..bars {
        for (k, c) in cols.iter_mut().enumerate() {
            c.push(value(&mut rng, t, k));
        }
    }
    cols
}

/// On matrices with ties (duplicated columns) and flat columns: the selected combo, every
/// window and every selection exactly; every number to 1e-9 relative. Not to the bit, because
/// the summation orders differ: the crate adds shifted segment sums (and takes moments on a
/// rescaled copy), numpy sums pairwise about the mean; and Python's Phi is 0.5 (1 + erf(x /
/// sqrt 2)) where the crate's is Cody's, so the DSR is held to 1e-9 relative or 2^-52 absolute
/// (that formula's resolution in the lower tail). Runs the project's `.venv` Python (or
/// `HULLSWEEP_PYTHON`); without Python and numpy it says so and passes.
#[test]
fn dsr_and_walk_forward_match_the_numpy_reference() {
    let python = match python() {
        Ok(p) => p,
        Err(why) => {
            println!("skipped: no Python with numpy ({why}); scripts/test installs it");
            return;
        }
    };
    let mut cases: Vec<(&str, Vec<Vec<f64>>, &str)> = Vec::new();
    // Floats with a drift per combo, skewed by squaring some of them.
    let floats = make(240, 9, 1, |r, _, k| {
        let x = r.normal();
        0.4 * x + 0.15 * if k % 3 == 0 { x * x } else { 0.0 } + 0.01 * k as f64
    });
    cases.push(("floats 240x9", floats.clone(), "40:20"));
    cases.push(("floats 240x9 anchored", floats, "30:25:anchored"));
    // Ties: duplicated columns, an all-zero column, a flat 0.5 column (Sharpe ratio exactly 0 on
    // both sides), 101 bars so that the last one fits no window.
    let mut ties = make(101, 8, 2, |r, _, k| r.normal() + 0.05 * k as f64 - 0.2);
    ties[5] = ties[1].clone();
    ties[7] = ties[6].clone();
    ties[2] = vec![0.0; 101];
    ties[3] = vec![0.5; 101];
    cases.push(("ties 101x8", ties, "20:9"));
    // The best full-series Sharpe ratio is the flat column's 0 (every other drifts down):
    // skew and kurt 0, denominator 1. The all-zero column ties it later.
    let mut flat = make(60, 5, 3, |r, _, _| 0.3 * r.normal() - 0.5);
    flat[1] = vec![0.5; 60];
    flat[4] = vec![0.0; 60];
    cases.push(("flat best 60x5", flat, "12:6:anchored"));
    // Integer returns with power-of-two train windows, where numpy's metrics are exact too:
    // ties between different columns everywhere, the first index decides.
    let mut ints = make(64, 12, 4, |r, _, _| r.int(2));
    ints[11] = ints[0].clone();
    cases.push(("integers 64x12", ints, "16:8"));
    for (name, cols, text) in &cases {
        let spec: WalkSpec = text.parse().unwrap();
        for metric in Metric::ALL {
            let want = reference(&python, cols, &spec, metric);
            assert_eq!(want["walk_forward"]["metric"].as_str(), Some(metric.name()));
            compare(
                &format!("{name} {text} {metric}"),
                cols,
                &spec,
                metric,
                &want,
            );
        }
    }
}
