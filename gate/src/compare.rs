//! The equivalence gate: compare an implementation's per-combo results with the numba reference's
//! (live, or the golden fixtures in `tests/golden/`) on every dataset of the suite, and report.
//!
//! The rule (docs/gate.md): every combo's trade count equal, and `|pnl - pnl_ref| <= 1e-6`.
//! Bit-identity is reported as well, because the reference-arithmetic variants must reach it.

use crate::SweepResult;
use crate::datasets::Dataset;
use anyhow::{Context, anyhow, bail};
use std::fmt;
use std::path::{Path, PathBuf};

/// The spec's PnL tolerance, in percentage points.
pub const PNL_TOLERANCE: f64 = 1e-6;

/// How one implementation's results compare with the reference's on one dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct GateReport {
    /// The suite dataset compared (its `Dataset::name`), or the contender's label in the lab.
    pub dataset: String,
    /// Combos compared (the reference's count; a missing or extra combo counts as a mismatch).
    pub combos: usize,
    /// Combos whose trade count differs.
    pub trade_mismatches: usize,
    /// Combos whose PnL differs by more than [`PNL_TOLERANCE`].
    pub pnl_mismatches: usize,
    /// The largest `|pnl - pnl_ref|` (infinite where a combo is missing or one side is NaN).
    pub max_abs_dpnl: f64,
    /// Combos whose PnL bits or trades differ at all.
    pub bit_mismatches: usize,
    /// The first combo that fails the gate, for a closer look.
    pub first_failure: Option<usize>,
}

impl GateReport {
    /// The spec's verdict: no trade difference and every PnL within tolerance.
    pub fn passes(&self) -> bool {
        self.trade_mismatches == 0 && self.max_abs_dpnl <= PNL_TOLERANCE
    }

    /// Every combo's trades and PnL bits equal.
    pub fn bit_identical(&self) -> bool {
        self.bit_mismatches == 0
    }

    /// The table header matching [`GateReport`]'s `Display` rows.
    pub fn header() -> String {
        format!(
            "{:<16} {:>6} {:>7} {:>7} {:>11} {:>5}  verdict",
            "dataset", "combos", "trades≠", "pnl≠", "max|ΔPnL|", "bits"
        )
    }
}

impl fmt::Display for GateReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.passes() {
            "PASS".to_string()
        } else {
            format!("FAIL (first at combo {})", self.first_failure.unwrap_or(0))
        };
        let dpnl = if self.max_abs_dpnl == 0.0 {
            "0".to_string()
        } else {
            format!("{:.3e}", self.max_abs_dpnl)
        };
        write!(
            f,
            "{:<16} {:>6} {:>7} {:>7} {dpnl:>11} {:>5}  {verdict}",
            self.dataset,
            self.combos,
            self.trade_mismatches,
            self.pnl_mismatches,
            if self.bit_identical() { "yes" } else { "no" },
        )
    }
}

/// Compares `got` with the reference's `want`, combo by combo.
pub fn compare(name: &str, got: &SweepResult, want: &SweepResult) -> GateReport {
    let combos = want.pnl.len().max(got.pnl.len());
    let mut report = GateReport {
        dataset: name.to_string(),
        combos,
        trade_mismatches: 0,
        pnl_mismatches: 0,
        max_abs_dpnl: 0.0,
        bit_mismatches: 0,
        first_failure: None,
    };
    for k in 0..combos {
        let pnl = (got.pnl.get(k), want.pnl.get(k));
        let trades = (got.trades.get(k), want.trades.get(k));
        let trades_equal = matches!(trades, (Some(a), Some(b)) if a == b);
        let (dpnl, bits_equal) = match pnl {
            (Some(a), Some(b)) if a.to_bits() == b.to_bits() => (0.0, true),
            // Both NaN: the same result (a NaN's payload is not part of the kernel's output, and
            // hardware differs in the one it makes, e.g. x86 and aarch64 for `inf - inf`).
            (Some(a), Some(b)) if a.is_nan() && b.is_nan() => (0.0, true),
            // NaN on one side is as far off as it gets.
            (Some(a), Some(b)) => ((a - b).abs(), false),
            _ => (f64::INFINITY, false),
        };
        let dpnl = if dpnl.is_nan() { f64::INFINITY } else { dpnl };
        if !trades_equal {
            report.trade_mismatches += 1;
        }
        if dpnl > PNL_TOLERANCE {
            report.pnl_mismatches += 1;
        }
        if !(trades_equal && bits_equal) {
            report.bit_mismatches += 1;
        }
        if (!trades_equal || dpnl > PNL_TOLERANCE) && report.first_failure.is_none() {
            report.first_failure = Some(k);
        }
        report.max_abs_dpnl = report.max_abs_dpnl.max(dpnl);
    }
    report
}

/// Runs `implementation` and `oracle` on every dataset and compares them.
pub fn gate<F, O, E>(
    suite: &[Dataset],
    mut implementation: F,
    mut oracle: O,
) -> anyhow::Result<Vec<GateReport>>
where
    F: FnMut(&Dataset) -> Result<SweepResult, E>,
    E: Into<anyhow::Error>,
    O: FnMut(&Dataset) -> anyhow::Result<SweepResult>,
{
    suite
        .iter()
        .map(|d| {
            let want = oracle(d).with_context(|| format!("reference on dataset {}", d.name))?;
            let got = implementation(d)
                .map_err(Into::into)
                .with_context(|| format!("implementation on dataset {}", d.name))?;
            Ok(compare(&d.name, &got, &want))
        })
        .collect()
}

/// A table of reports under a title line.
pub fn table(title: &str, reports: &[GateReport]) -> String {
    let mut s = format!("{title}\n{}\n", GateReport::header());
    for r in reports {
        s += &format!("{r}\n");
    }
    s
}

/// A dataset's fixture file in `dir`: `<dir>/<dataset>.json` (golden, metric and trade
/// fixtures alike).
pub fn fixture_path(dir: &Path, dataset: &str) -> PathBuf {
    dir.join(format!("{dataset}.json"))
}

/// Reads and parses `dataset`'s `kind` fixture (golden, metric, trade) from `dir`; a missing
/// file's message says how to generate it. Staleness is each fixture's own check.
fn read_fixture<T: serde::de::DeserializeOwned>(
    dir: &Path,
    dataset: &str,
    kind: &str,
) -> anyhow::Result<T> {
    let path = fixture_path(dir, dataset);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read {kind} fixture {} (generate it with `cargo run -- gate --write-golden`)",
            path.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("{}: malformed fixture", path.display()))
}

/// Writes `fixture` as pretty JSON to `<dir>/<dataset>.json`, creating `dir` if needed, and
/// returns the path written.
fn write_fixture<T: serde::Serialize>(
    dir: &Path,
    dataset: &str,
    fixture: &T,
) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = fixture_path(dir, dataset);
    let text = serde_json::to_string_pretty(fixture)? + "\n";
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

pub mod metrics;
pub mod trades;

/// Golden numba outputs, one JSON file per suite dataset in `tests/golden/`.
///
/// Each fixture pins its inputs by FNV-1a checksums, so a generator change shows up as a stale
/// fixture rather than as a mysterious mismatch, and stores PnL as hex bits so it is exact.
pub mod golden {
    use super::*;
    use serde::{Deserialize, Serialize};

    /// Where the fixtures live.
    pub fn dir() -> PathBuf {
        crate::numba::root().join("tests").join("golden")
    }

    /// The fixture file for `dataset` in `dir`: `<dir>/<dataset>.json`.
    pub fn path(dir: &Path, dataset: &str) -> PathBuf {
        crate::gate::fixture_path(dir, dataset)
    }

    /// One dataset's reference output and the checksums of the inputs it came from.
    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
    pub struct Fixture {
        /// The suite dataset this fixture is for; also its file stem.
        pub dataset: String,
        /// The dataset's one-line description, copied from the suite for people reading the file.
        pub about: String,
        /// Length of the dataset's close series, in bars.
        pub bars: usize,
        /// Number of combos; `pnl_bits`, `pnl` and `trades` each hold this many entries.
        pub combos: usize,
        /// Round-trip fee per closed trade, in percentage points, the outputs were computed with.
        pub fee: f64,
        /// FNV-1a 64 of the close bits, `0x`-hex.
        pub close_fnv1a64: String,
        /// FNV-1a 64 of the params and the fee (see [`Dataset::params_fnv`]), `0x`-hex.
        pub params_fnv1a64: String,
        /// What produced the outputs (numba, llvmlite, numpy, python versions).
        pub reference: serde_json::Map<String, serde_json::Value>,
        /// PnL per combo as the `0x`-hex of its f64 bits: the exact value.
        pub pnl_bits: Vec<String>,
        /// PnL per combo in decimal, for people reading the file (not compared). JSON has no
        /// infinities or NaN, and an extreme price can give either (docs/kernel.md), so those are
        /// written as the strings `"inf"`, `"-inf"` and `"NaN"`.
        pub pnl: Vec<serde_json::Value>,
        /// Closed trades per combo, in params order.
        pub trades: Vec<i64>,
    }

    /// `p` as a JSON number, or as a string where JSON has no number for it.
    fn decimal(p: f64) -> serde_json::Value {
        serde_json::Number::from_f64(p)
            .map(serde_json::Value::Number)
            .unwrap_or_else(|| serde_json::Value::String(format!("{p}")))
    }

    fn hex(v: u64) -> String {
        format!("{v:#018x}")
    }

    fn unhex(s: &str) -> anyhow::Result<u64> {
        let digits = s
            .strip_prefix("0x")
            .ok_or_else(|| anyhow!("{s:?} is not 0x-hex"))?;
        u64::from_str_radix(digits, 16).map_err(|e| anyhow!("{s:?}: {e}"))
    }

    impl Fixture {
        /// Builds the fixture for `d` from the reference's `result` on it and the versions that
        /// produced it, computing the input checksums and the exact hex PnL.
        pub fn new(
            d: &Dataset,
            result: &SweepResult,
            reference: serde_json::Map<String, serde_json::Value>,
        ) -> Fixture {
            Fixture {
                dataset: d.name.clone(),
                about: d.about.to_string(),
                bars: d.close.len(),
                combos: d.params.len(),
                fee: d.fee,
                close_fnv1a64: hex(d.close_fnv()),
                params_fnv1a64: hex(d.params_fnv()),
                reference,
                pnl_bits: result.pnl.iter().map(|p| hex(p.to_bits())).collect(),
                pnl: result.pnl.iter().map(|&p| decimal(p)).collect(),
                trades: result.trades.clone(),
            }
        }

        /// Refuses a fixture generated from other inputs than `d` (a stale fixture).
        pub fn check_inputs(&self, d: &Dataset) -> anyhow::Result<()> {
            let (close, params) = (hex(d.close_fnv()), hex(d.params_fnv()));
            if self.close_fnv1a64 != close || self.params_fnv1a64 != params {
                bail!(
                    "golden fixture {} is stale: it pins close {} / params {}, the generator now \
                     makes close {close} / params {params}; regenerate with \
                     `cargo run -- gate --write-golden`",
                    self.dataset,
                    self.close_fnv1a64,
                    self.params_fnv1a64
                );
            }
            Ok(())
        }

        /// The stored reference output.
        pub fn result(&self) -> anyhow::Result<SweepResult> {
            if self.pnl_bits.len() != self.trades.len() || self.trades.len() != self.combos {
                bail!(
                    "golden fixture {}: {} combos but {} pnl and {} trades",
                    self.dataset,
                    self.combos,
                    self.pnl_bits.len(),
                    self.trades.len()
                );
            }
            let pnl = self
                .pnl_bits
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    unhex(s)
                        .map(f64::from_bits)
                        .with_context(|| format!("golden fixture {}, combo {k}", self.dataset))
                })
                .collect::<anyhow::Result<_>>()?;
            Ok(SweepResult {
                pnl,
                trades: self.trades.clone(),
            })
        }
    }

    /// Reads `dataset`'s fixture from `dir`.
    ///
    /// # Errors
    ///
    /// A missing file (the message says how to generate it) or JSON that does not parse as a
    /// [`Fixture`]. Staleness is not checked here; see [`Fixture::check_inputs`].
    pub fn read(dir: &Path, dataset: &str) -> anyhow::Result<Fixture> {
        crate::gate::read_fixture(dir, dataset, "golden")
    }

    /// Writes `fixture` as pretty JSON to `<dir>/<dataset>.json`, creating `dir` if needed, and
    /// returns the path written.
    ///
    /// # Errors
    ///
    /// The directory cannot be created or the file cannot be written (the message names it).
    pub fn write(dir: &Path, fixture: &Fixture) -> anyhow::Result<PathBuf> {
        crate::gate::write_fixture(dir, &fixture.dataset, fixture)
    }

    /// The golden oracle: the checked-in reference output for `d`, refusing stale fixtures.
    pub fn oracle(d: &Dataset) -> anyhow::Result<SweepResult> {
        let fixture = read(&dir(), &d.name)?;
        fixture.check_inputs(d)?;
        fixture.result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(pnl: &[f64], trades: &[i64]) -> SweepResult {
        SweepResult {
            pnl: pnl.to_vec(),
            trades: trades.to_vec(),
        }
    }

    #[test]
    fn identical_results_pass_bit_identically() {
        let r = result(&[1.5, -0.25, 0.0], &[3, 1, 0]);
        let rep = compare("x", &r, &r);
        assert!(rep.passes() && rep.bit_identical());
        assert_eq!(
            (rep.combos, rep.max_abs_dpnl, rep.first_failure),
            (3, 0.0, None)
        );
    }

    #[test]
    fn one_ulp_passes_but_is_not_bit_identical() {
        let want = result(&[1.5, 2.0], &[3, 1]);
        let got = result(&[1.5, f64::from_bits(2.0f64.to_bits() + 1)], &[3, 1]);
        let rep = compare("x", &got, &want);
        assert!(rep.passes());
        assert!(!rep.bit_identical());
        assert_eq!(rep.bit_mismatches, 1);
    }

    #[test]
    fn trade_or_pnl_differences_fail() {
        let want = result(&[1.5, 2.0, 3.0], &[3, 1, 2]);
        let rep = compare("x", &result(&[1.5, 2.0, 3.0], &[3, 2, 2]), &want);
        assert!(!rep.passes());
        assert_eq!((rep.trade_mismatches, rep.first_failure), (1, Some(1)));
        let rep = compare("x", &result(&[1.5, 2.0, 3.00001], &[3, 1, 2]), &want);
        assert!(!rep.passes());
        assert_eq!((rep.pnl_mismatches, rep.first_failure), (1, Some(2)));
        let rep = compare("x", &result(&[1.5, f64::NAN, 3.0], &[3, 1, 2]), &want);
        assert!(!rep.passes() && rep.max_abs_dpnl.is_infinite());
        let rep = compare("x", &result(&[1.5, 2.0], &[3, 1]), &want);
        assert!(!rep.passes());
        assert_eq!((rep.combos, rep.trade_mismatches), (3, 1));
        assert!(rep.to_string().contains("FAIL (first at combo 2)"));
    }

    #[test]
    fn fixtures_round_trip_exactly_and_refuse_other_inputs() {
        let d = Dataset {
            name: "t".into(),
            about: "test",
            close: vec![1.1, f64::NAN, 0.3],
            params: vec![[1, 1, 1, 1, 1, 1], [2, 1, 1, 2, 1, 1]],
            fee: 0.09,
        };
        let r = result(&[-0.1 - 0.2, 5e-324], &[7, 0]);
        let dir = tempfile::tempdir().unwrap();
        let f = golden::Fixture::new(&d, &r, Default::default());
        golden::write(dir.path(), &f).unwrap();
        let back = golden::read(dir.path(), "t").unwrap();
        back.check_inputs(&d).unwrap();
        assert!(compare("t", &back.result().unwrap(), &r).bit_identical());
        let mut other = d.clone();
        other.params[1][2] = 2;
        let e = back.check_inputs(&other).unwrap_err().to_string();
        assert!(e.contains("stale"), "{e}");
        let mut other = d.clone();
        other.close[0] = 1.1000000000000003;
        assert!(back.check_inputs(&other).is_err());
    }
}
