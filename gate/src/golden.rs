//! Golden numba outputs, one JSON file per suite dataset in `gate/tests/golden/`.
//!
//! Each fixture pins its inputs by FNV-1a checksums, so a generator change shows up as a stale
//! fixture rather than as a mysterious mismatch, and stores PnL as hex bits so it is exact.

use crate::fixture::{fixture_path, read_fixture, write_fixture};
use anyhow::{Context, anyhow, bail};
use hullsweep_data::Dataset;
use hullsweep_kernel::SweepResult;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where the fixtures live: `gate/tests/golden` in the source tree this crate was built from.
pub fn dir() -> PathBuf {
    dir_in(crate::numba::root())
}

/// `gate/tests/golden` in the checkout `root`.
pub fn dir_in(root: &Path) -> PathBuf {
    root.join("gate").join("tests").join("golden")
}

/// The fixture file for `dataset` in `dir`: `<dir>/<dataset>.json`.
pub fn path(dir: &Path, dataset: &str) -> PathBuf {
    fixture_path(dir, dataset)
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
    read_fixture(dir, dataset, "golden")
}

/// Writes `fixture` as pretty JSON to `<dir>/<dataset>.json`, creating `dir` if needed, and
/// returns the path written.
///
/// # Errors
///
/// The directory cannot be created or the file cannot be written (the message names it).
pub fn write(dir: &Path, fixture: &Fixture) -> anyhow::Result<PathBuf> {
    write_fixture(dir, &fixture.dataset, fixture)
}

/// The golden oracle: the checked-in reference output for `d`, refusing stale fixtures.
pub fn oracle(d: &Dataset) -> anyhow::Result<SweepResult> {
    let fixture = read(&dir(), &d.name)?;
    fixture.check_inputs(d)?;
    fixture.result()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::compare;

    #[test]
    fn fixtures_round_trip_exactly_and_refuse_other_inputs() {
        let d = Dataset {
            name: "t".into(),
            about: "test",
            close: vec![1.1, f64::NAN, 0.3],
            params: vec![[1, 1, 1, 1, 1, 1], [2, 1, 1, 2, 1, 1]],
            fee: 0.09,
        };
        let r = SweepResult {
            pnl: vec![-0.1 - 0.2, 5e-324],
            trades: vec![7, 0],
        };
        let dir = tempfile::tempdir().unwrap();
        let f = Fixture::new(&d, &r, Default::default());
        write(dir.path(), &f).unwrap();
        let back = read(dir.path(), "t").unwrap();
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
