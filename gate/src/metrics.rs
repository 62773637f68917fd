//! The gate for the metrics (docs/kernel.md, "Metrics"): every metric of every combo must equal
//! the numba reference's bit for bit; golden fixtures in `gate/tests/golden/metrics/`, one per dataset.

use anyhow::{Context, anyhow, bail};
use hullsweep_data::Dataset;
use hullsweep_kernel::{METRIC_NAMES, Metrics, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// How one implementation's metrics compare with the reference's on one dataset.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsReport {
    /// The suite dataset compared (its `Dataset::name`).
    pub dataset: String,
    /// Combos compared: the larger of the two sides' counts, so a missing combo is counted.
    pub combos: usize,
    /// Combos with any metric's bits different (or missing on one side).
    pub mismatches: usize,
    /// The first difference: combo, metric, got, want.
    pub first: Option<(usize, &'static str, String, String)>,
}

impl MetricsReport {
    /// The verdict: every metric of every combo has the reference's exact bits (the metrics
    /// have no tolerance).
    pub fn bit_identical(&self) -> bool {
        self.mismatches == 0
    }
}

impl fmt::Display for MetricsReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<16} {:>6} combos, {} with a metric differing",
            self.dataset, self.combos, self.mismatches
        )?;
        if let Some((k, name, got, want)) = &self.first {
            write!(f, " (first: combo {k} {name} = {got}, reference {want})")?;
        }
        Ok(())
    }
}

fn show(v: Value) -> String {
    match v {
        Value::F64(x) => format!("{x:?} ({:#018x})", x.to_bits()),
        Value::I64(x) => x.to_string(),
    }
}

/// Compares `got` with the reference's `want`, every metric of every combo, by bits.
pub fn compare(name: &str, got: &[Metrics], want: &[Metrics]) -> MetricsReport {
    let combos = got.len().max(want.len());
    let mut report = MetricsReport {
        dataset: name.to_string(),
        combos,
        mismatches: 0,
        first: None,
    };
    for k in 0..combos {
        let (Some(g), Some(w)) = (got.get(k), want.get(k)) else {
            report.mismatches += 1;
            report
                .first
                .get_or_insert((k, "combo", "missing".into(), "present".into()));
            continue;
        };
        if g.same_bits(w) {
            continue;
        }
        report.mismatches += 1;
        if report.first.is_none() {
            let (gv, wv) = (g.values(), w.values());
            let i = (0..METRIC_NAMES.len())
                .find(|&i| !gv[i].same(wv[i]))
                .unwrap_or(0);
            report.first = Some((k, METRIC_NAMES[i], show(gv[i]), show(wv[i])));
        }
    }
    report
}

/// Where the metric fixtures live.
pub fn dir() -> PathBuf {
    super::golden::dir().join("metrics")
}

/// One dataset's reference metrics and the checksums of the inputs they came from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Fixture {
    /// The suite dataset these metrics are for; also the fixture's file stem.
    pub dataset: String,
    /// Number of combos; every column in `float_bits` and `counts` holds this many values.
    pub combos: usize,
    /// FNV-1a 64 of the close bits, `0x`-hex: a changed generator makes the fixture stale.
    pub close_fnv1a64: String,
    /// FNV-1a 64 of the params and the fee (see [`Dataset::params_fnv`]), `0x`-hex.
    pub params_fnv1a64: String,
    /// What produced the metrics (numba, llvmlite, numpy, python versions).
    pub reference: serde_json::Map<String, serde_json::Value>,
    /// Float metrics per combo as the `0x`-hex of their f64 bits (exact; NaN without trades).
    pub float_bits: BTreeMap<String, Vec<String>>,
    /// Count metrics per combo.
    pub counts: BTreeMap<String, Vec<i64>>,
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
    /// Builds the fixture for `d` from the reference's per-combo `rows` and the versions that
    /// produced them: float metrics as exact hex bits, counts as integers, keyed by metric name
    /// ([`METRIC_NAMES`]).
    pub fn new(
        d: &Dataset,
        rows: &[Metrics],
        reference: serde_json::Map<String, serde_json::Value>,
    ) -> Fixture {
        let mut float_bits = BTreeMap::new();
        let mut counts = BTreeMap::new();
        for (i, name) in METRIC_NAMES.iter().enumerate() {
            let col = rows.iter().map(|m| m.values()[i]);
            if is_count(i) {
                let col = col.map(|v| v.as_f64() as i64).collect();
                counts.insert(name.to_string(), col);
            } else {
                let col = col.map(|v| hex(v.as_f64().to_bits())).collect();
                float_bits.insert(name.to_string(), col);
            }
        }
        Fixture {
            dataset: d.name.clone(),
            combos: rows.len(),
            close_fnv1a64: hex(d.close_fnv()),
            params_fnv1a64: hex(d.params_fnv()),
            reference,
            float_bits,
            counts,
        }
    }

    /// The stored metrics, refusing a fixture made from other inputs than `d` (stale).
    pub fn rows(&self, d: &Dataset) -> anyhow::Result<Vec<Metrics>> {
        let (close, params) = (hex(d.close_fnv()), hex(d.params_fnv()));
        if self.close_fnv1a64 != close || self.params_fnv1a64 != params {
            bail!(
                "metric fixture {} is stale: it pins close {} / params {}, the suite now has \
                 close {close} / params {params}; regenerate with `cargo run -- gate --write-golden`",
                self.dataset,
                self.close_fnv1a64,
                self.params_fnv1a64
            );
        }
        let mut rows = vec![Metrics::no_trades().values(); self.combos];
        for (i, name) in METRIC_NAMES.iter().enumerate() {
            let ctx = || format!("metric fixture {}, column {name}", self.dataset);
            let missing = || anyhow!("missing").context(ctx());
            let col: Vec<Value> = if is_count(i) {
                let col = self.counts.get(*name).ok_or_else(missing)?;
                col.iter().map(|&v| Value::I64(v)).collect()
            } else {
                let col = self.float_bits.get(*name).ok_or_else(missing)?;
                col.iter()
                    .map(|s| Ok(Value::F64(f64::from_bits(unhex(s)?))))
                    .collect::<anyhow::Result<_>>()
                    .with_context(ctx)?
            };
            if col.len() != self.combos {
                bail!("{}: {} values for {} combos", ctx(), col.len(), self.combos);
            }
            for (row, v) in rows.iter_mut().zip(col) {
                row[i] = v;
            }
        }
        Ok(rows
            .into_iter()
            .map(|v| Metrics::from_values(v).expect("each column has its metric's type"))
            .collect())
    }
}

/// Whether metric `i` of [`METRIC_NAMES`] is a count (else an f64).
fn is_count(i: usize) -> bool {
    Metrics::no_trades().values()[i].is_count()
}

/// The metric fixture file for `dataset` in `dir`: `<dir>/<dataset>.json`.
pub fn path(dir: &Path, dataset: &str) -> PathBuf {
    crate::fixture::fixture_path(dir, dataset)
}

/// Reads `dataset`'s metric fixture from `dir`.
///
/// # Errors
///
/// A missing file (the message says how to generate it) or JSON that does not parse as a
/// [`Fixture`]. Staleness is checked later, by [`Fixture::rows`].
pub fn read(dir: &Path, dataset: &str) -> anyhow::Result<Fixture> {
    crate::fixture::read_fixture(dir, dataset, "metric")
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

/// The golden oracle: the checked-in reference metrics for `d`, refusing stale fixtures.
pub fn oracle(d: &Dataset) -> anyhow::Result<Vec<Metrics>> {
    read(&dir(), &d.name)?.rows(d)
}
