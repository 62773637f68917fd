//! The gate for the trade log (docs/kernel.md, "Trades and events"): every trade of every combo
//! must equal the numba reference's bit for bit; golden digests in `gate/tests/golden/trades/`.

use anyhow::{Context, anyhow, bail};
use hullsweep_data::Dataset;
use hullsweep_data::trade_log::{CSV_HEADER, csv_row, parse_csv_row};
use hullsweep_kernel::{self as kernel, KernelError, Trade, ValidClose, fnv1a64};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// A way to compute the trade log of chosen combos: the reference, or a fast implementation.
pub type TradesFn = fn(&[f64], &[kernel::Combo], f64, &[usize]) -> Result<Vec<Trade>, KernelError>;

/// The reference's trade log, `kernel::trades`, after validating the series.
pub fn reference(
    close: &[f64],
    params: &[kernel::Combo],
    fee: f64,
    combos: &[usize],
) -> Result<Vec<Trade>, KernelError> {
    kernel::trades(ValidClose::new(close)?, params, fee, combos)
}

/// Every implementation of the trade log the gate checks, by name: the reference and the fast
/// batch log ([`hullsweep_variants::trades`], O(1) per bar per combo through the live state).
pub const IMPLEMENTATIONS: &[(&str, TradesFn)] = &[
    ("reference", reference),
    ("fast", hullsweep_variants::trades),
];

/// The implementation `hullsweep trades` runs: the last of [`IMPLEMENTATIONS`] (the fast
/// one), gated like the others.
pub fn best() -> (&'static str, TradesFn) {
    *IMPLEMENTATIONS
        .last()
        .expect("the reference is always there")
}

/// Every combo's index, for "the trades of all combos".
pub fn all(params: &[kernel::Combo]) -> Vec<usize> {
    (0..params.len()).collect()
}

/// The trade log of `d` split by combo: entry `k` holds combo `k`'s trades, in the log's order.
/// A trade naming a combo past `combos` is returned apart, as the error it is.
pub fn by_combo(trades: &[Trade], combos: usize) -> Result<Vec<Vec<Trade>>, Trade> {
    let mut out = vec![Vec::new(); combos];
    for t in trades {
        out.get_mut(t.combo).ok_or(*t)?.push(*t);
    }
    Ok(out)
}

/// FNV-1a 64 of every field's bits of every trade, in order (integers as their little-endian
/// bytes, floats as their bits): one number that changes when any bit of any trade does. A
/// trade's fields are never NaN (its prices are bars with a defined `d`, its PnL at worst
/// `±inf`), so the bits are the value, on every machine.
pub fn digest(trades: &[Trade]) -> u64 {
    let words: Vec<f64> = trades
        .iter()
        .flat_map(|t| {
            [
                f64::from_bits(t.combo as u64),
                f64::from_bits(t.side as u64),
                f64::from_bits(t.entry_bar),
                f64::from_bits(t.exit_bar),
                t.entry_price,
                t.exit_price,
                t.pnl,
            ]
        })
        .collect();
    fnv1a64(&words)
}

/// How one implementation's trade log compares with the reference's on one dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct TradesReport {
    /// The suite dataset compared, or the user's file.
    pub dataset: String,
    /// Combos compared.
    pub combos: usize,
    /// Closed trades in the reference's log, all combos together.
    pub trades: usize,
    /// Combos whose trades differ in number or in any bit of any field.
    pub mismatches: usize,
    /// The first difference: the combo and what differs.
    pub first: Option<(usize, String)>,
}

impl TradesReport {
    /// The verdict: not one trade differs (the trade log has no tolerance).
    pub fn bit_identical(&self) -> bool {
        self.mismatches == 0
    }

    fn differ(&mut self, combo: usize, what: String) {
        self.mismatches += 1;
        self.first.get_or_insert((combo, what));
    }
}

impl fmt::Display for TradesReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.bit_identical() { "PASS" } else { "FAIL" };
        write!(
            f,
            "{:<16} {:>6} combos {:>8} trades, {} combos differ  {verdict}",
            self.dataset, self.combos, self.trades, self.mismatches
        )?;
        if let Some((k, what)) = &self.first {
            write!(f, " (first: combo {k}, {what})")?;
        }
        Ok(())
    }
}

/// The first field in which two trades differ, as `field got vs want`.
fn first_field(got: &Trade, want: &Trade) -> String {
    let ints = [
        ("side", got.side, want.side),
        ("entry_bar", got.entry_bar as i64, want.entry_bar as i64),
        ("exit_bar", got.exit_bar as i64, want.exit_bar as i64),
    ];
    if let Some((name, g, w)) = ints.iter().find(|(_, g, w)| g != w) {
        return format!("{name} {g} vs {w}");
    }
    let floats = [
        ("entry_price", got.entry_price, want.entry_price),
        ("exit_price", got.exit_price, want.exit_price),
        ("pnl", got.pnl, want.pnl),
    ];
    match floats.iter().find(|(_, g, w)| g.to_bits() != w.to_bits()) {
        Some((name, g, w)) => format!(
            "{name} {g:?} ({:#018x}) vs {w:?} ({:#018x})",
            g.to_bits(),
            w.to_bits()
        ),
        None => "combo index".into(),
    }
}

/// Compares `got` with the reference's `want`, every trade of every one of `combos` combos,
/// field by field by bits ([`Trade::same`]).
pub fn compare(name: &str, combos: usize, got: &[Trade], want: &[Trade]) -> TradesReport {
    let mut report = TradesReport {
        dataset: name.to_string(),
        combos,
        trades: want.len(),
        mismatches: 0,
        first: None,
    };
    let (got, want) = match (by_combo(got, combos), by_combo(want, combos)) {
        (Ok(g), Ok(w)) => (g, w),
        (Err(t), _) | (_, Err(t)) => {
            report.differ(t.combo, format!("a trade of combo {} of {combos}", t.combo));
            return report;
        }
    };
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        if g.len() != w.len() {
            report.differ(k, format!("{} trades vs {}", g.len(), w.len()));
        } else if let Some(i) = (0..g.len()).find(|&i| !g[i].same(&w[i])) {
            report.differ(k, format!("trade {i}: {}", first_field(&g[i], &w[i])));
        }
    }
    report
}

/// Where the trade fixtures live.
pub fn dir() -> PathBuf {
    super::golden::dir().join("trades")
}

/// Trades per [`Sample`]: enough to read, small enough that a fixture stays a few KiB.
pub const SAMPLE_TRADES: usize = 50;

/// The first trades of one combo, for people reading a fixture; checked against the trade log
/// by the tests (and, when it is the combo's whole log, against its count and digest here).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// The combo's index in the params.
    pub combo: usize,
    /// Its first (at most [`SAMPLE_TRADES`]) trades as [`csv_row`]s under [`CSV_HEADER`], in
    /// bar order.
    pub trades: Vec<String>,
}

impl Sample {
    /// The sample's trades, parsed back exactly.
    pub fn parse(&self) -> anyhow::Result<Vec<Trade>> {
        self.trades
            .iter()
            .map(|r| parse_csv_row(r))
            .collect::<Result<Vec<_>, _>>()
            .with_context(|| format!("the sample of combo {}", self.combo))
    }
}

/// One dataset's reference trade log, as per-combo counts and digests, and the checksums of the
/// inputs it came from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Fixture {
    /// The suite dataset; also the fixture's file stem.
    pub dataset: String,
    /// Number of combos; `counts` and `digests` hold this many entries.
    pub combos: usize,
    /// FNV-1a 64 of the close bits, `0x`-hex: a changed generator makes the fixture stale.
    pub close_fnv1a64: String,
    /// FNV-1a 64 of the params and the fee (see [`Dataset::params_fnv`]), `0x`-hex.
    pub params_fnv1a64: String,
    /// What produced the log (numba, llvmlite, numpy, python versions).
    pub reference: serde_json::Map<String, serde_json::Value>,
    /// Closed trades per combo.
    pub counts: Vec<usize>,
    /// Per combo, [`digest`] of its trades, `0x`-hex.
    pub digests: Vec<String>,
    /// The columns of the sample rows.
    pub columns: String,
    /// The first trades of the first and the last combo, to read.
    pub samples: Vec<Sample>,
}

fn hex(v: u64) -> String {
    format!("{v:#018x}")
}

impl Fixture {
    /// Builds the fixture for `d` from the reference's trade log of all its combos.
    ///
    /// # Errors
    ///
    /// A trade naming a combo past `d`'s params.
    pub fn new(
        d: &Dataset,
        log: &[Trade],
        reference: serde_json::Map<String, serde_json::Value>,
    ) -> anyhow::Result<Fixture> {
        let per = by_combo(log, d.params.len()).map_err(|t| {
            anyhow!(
                "{}: a trade of combo {} of {}",
                d.name,
                t.combo,
                d.params.len()
            )
        })?;
        let mut chosen = vec![0, per.len().saturating_sub(1)];
        chosen.dedup();
        chosen.retain(|&k| k < per.len());
        Ok(Fixture {
            dataset: d.name.clone(),
            combos: d.params.len(),
            close_fnv1a64: hex(d.close_fnv()),
            params_fnv1a64: hex(d.params_fnv()),
            reference,
            counts: per.iter().map(Vec::len).collect(),
            digests: per.iter().map(|t| hex(digest(t))).collect(),
            columns: CSV_HEADER.into(),
            samples: chosen
                .into_iter()
                .map(|k| Sample {
                    combo: k,
                    trades: per[k].iter().take(SAMPLE_TRADES).map(csv_row).collect(),
                })
                .collect(),
        })
    }

    /// Refuses a fixture made from other inputs than `d` (stale) or that contradicts itself (a
    /// sample whose trades are not its combo's count and digest).
    pub fn check(&self, d: &Dataset) -> anyhow::Result<()> {
        let (close, params) = (hex(d.close_fnv()), hex(d.params_fnv()));
        if self.close_fnv1a64 != close || self.params_fnv1a64 != params {
            bail!(
                "trade fixture {} is stale: it pins close {} / params {}, the suite now has \
                 close {close} / params {params}; regenerate with `cargo run -- gate --write-golden`",
                self.dataset,
                self.close_fnv1a64,
                self.params_fnv1a64
            );
        }
        if self.counts.len() != self.combos || self.digests.len() != self.combos {
            bail!(
                "trade fixture {}: {} combos but {} counts and {} digests",
                self.dataset,
                self.combos,
                self.counts.len(),
                self.digests.len()
            );
        }
        for s in &self.samples {
            let trades = s
                .parse()
                .with_context(|| format!("trade fixture {}", self.dataset))?;
            let k = s.combo;
            let fits = k < self.combos
                && trades.iter().all(|t| t.combo == k)
                && trades.len() == self.counts[k].min(SAMPLE_TRADES)
                && (trades.len() < self.counts[k] || hex(digest(&trades)) == self.digests[k]);
            if !fits {
                bail!(
                    "trade fixture {}: the sample of combo {k} disagrees with its count and digest",
                    self.dataset
                );
            }
        }
        Ok(())
    }

    /// Compares a trade log with the fixture, combo by combo: the count, then the digest. Combos
    /// absent from `log` count as having no trades.
    pub fn compare(&self, name: &str, log: &[Trade]) -> TradesReport {
        let mut report = TradesReport {
            dataset: name.to_string(),
            combos: self.combos,
            trades: self.counts.iter().sum(),
            mismatches: 0,
            first: None,
        };
        let per = match by_combo(log, self.combos) {
            Ok(per) => per,
            Err(t) => {
                report.differ(
                    t.combo,
                    format!("a trade of combo {} of {}", t.combo, self.combos),
                );
                return report;
            }
        };
        for (k, trades) in per.iter().enumerate() {
            let (count, want) = (self.counts[k], &self.digests[k]);
            if trades.len() != count {
                report.differ(k, format!("{} trades vs {count}", trades.len()));
            } else if hex(digest(trades)) != *want {
                report.differ(k, format!("digest {} vs {want}", hex(digest(trades))));
            }
        }
        report
    }
}

/// The trade fixture file for `dataset` in `dir`: `<dir>/<dataset>.json`.
pub fn path(dir: &Path, dataset: &str) -> PathBuf {
    crate::fixture::fixture_path(dir, dataset)
}

/// Reads `dataset`'s trade fixture from `dir`.
///
/// # Errors
///
/// A missing file (the message says how to generate it) or JSON that does not parse as a
/// [`Fixture`]. Staleness is checked by [`Fixture::check`].
pub fn read(dir: &Path, dataset: &str) -> anyhow::Result<Fixture> {
    crate::fixture::read_fixture(dir, dataset, "trade")
}

/// Writes `fixture` as pretty JSON to `<dir>/<dataset>.json`, creating `dir` if needed, and
/// returns the path written.
///
/// # Errors
///
/// The directory cannot be created or the file cannot be written (the message names it).
pub fn write(dir: &Path, fixture: &Fixture) -> anyhow::Result<PathBuf> {
    crate::fixture::write_fixture(dir, &fixture.dataset, fixture)
}

/// The golden oracle for `d`: its checked-in fixture, refusing a stale or inconsistent one.
pub fn oracle(d: &Dataset) -> anyhow::Result<Fixture> {
    let fixture = read(&dir(), &d.name)?;
    fixture.check(d)?;
    Ok(fixture)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trade(combo: usize, entry_bar: u64, pnl: f64) -> Trade {
        Trade {
            combo,
            side: 1,
            entry_bar,
            exit_bar: entry_bar + 3,
            entry_price: 1.1,
            exit_price: 1.2,
            pnl,
        }
    }

    #[test]
    fn one_bit_anywhere_changes_the_digest_and_fails_the_comparison() {
        let log = vec![
            trade(0, 1, 0.5),
            trade(0, 4, -0.25),
            trade(2, 9, f64::INFINITY),
        ];
        let mut other = log.clone();
        other[1].pnl = f64::from_bits(other[1].pnl.to_bits() ^ 1);
        assert_ne!(digest(&log), digest(&other));
        let report = compare("x", 3, &other, &log);
        assert_eq!(report.mismatches, 1);
        let (k, what) = report.first.unwrap();
        assert_eq!(k, 0);
        assert!(what.starts_with("trade 1: pnl"), "{what}");
        let mut other = log.clone();
        other[0].exit_bar += 1;
        assert!(!compare("x", 3, &other, &log).bit_identical());
        assert!(compare("x", 3, &log, &log).bit_identical());
        // A missing trade, and a trade of a combo that does not exist.
        assert!(!compare("x", 3, &log[1..], &log).bit_identical());
        assert!(!compare("x", 2, &log, &log).bit_identical());
    }

    #[test]
    fn fixtures_round_trip_and_check_their_samples() {
        let d = Dataset {
            name: "t".into(),
            about: "test",
            close: vec![1.1, f64::NAN, 0.3],
            params: vec![[1; 6], [2, 1, 1, 2, 1, 1], [3, 1, 1, 3, 1, 1]],
            fee: 0.09,
        };
        let log = vec![trade(0, 1, 0.5), trade(0, 4, -0.25), trade(2, 9, 1.0)];
        let f = Fixture::new(&d, &log, Default::default()).unwrap();
        assert_eq!(f.counts, [2, 0, 1]);
        assert_eq!(
            f.samples.iter().map(|s| s.combo).collect::<Vec<_>>(),
            [0, 2]
        );
        assert_eq!(f.samples[0].parse().unwrap(), log[..2]);
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &f).unwrap();
        let back = read(dir.path(), "t").unwrap();
        back.check(&d).unwrap();
        assert!(back.compare("t", &log).bit_identical());
        let mut other = log.clone();
        other[2].pnl = f64::from_bits(other[2].pnl.to_bits() ^ 1);
        let report = back.compare("t", &other);
        assert_eq!((report.mismatches, report.first.unwrap().0), (1, 2));
        // A sample edited by hand no longer matches its digest.
        let mut edited = back.clone();
        edited.samples[0].trades[0] = edited.samples[0].trades[0].replace(",0.5", ",0.6");
        let e = edited.check(&d).unwrap_err().to_string();
        assert!(e.contains("sample of combo 0"), "{e}");
        let mut stale = d.clone();
        stale.fee = 0.1;
        assert!(
            back.check(&stale)
                .unwrap_err()
                .to_string()
                .contains("stale")
        );
    }
}
