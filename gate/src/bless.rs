//! Regenerating the fixtures from live numba: golden results, metrics and trade logs of every
//! suite dataset, each written only after numba's own sweeps agree with one another bit for bit.

use crate::compare::{GateReport, compare};
use crate::numba::{Mode, Worker};
use crate::{golden, metrics, trades};
use anyhow::{Context, bail};
use hullsweep_data::datasets::{self, Dataset};
use hullsweep_kernel::SweepResult;
use serde_json::{Map, Value};
use std::path::Path;

/// Writes the golden, metric and trade fixtures of every suite dataset into `dir` (metrics and
/// trades in its `metrics/` and `trades/`) from numba's single-thread sweep, after checking the
/// prange sweep gives the same bits: if it does not, that is a finding, not a fixture. `log`
/// gets one line per file written.
pub fn write_golden(dir: &Path, mut log: impl FnMut(&str)) -> anyhow::Result<()> {
    let mut worker = Worker::start()?;
    let versions = worker.versions()?;
    for d in datasets::suite() {
        worker
            .load(&d.close, &d.params, d.fee)
            .with_context(|| format!("numba on dataset {}", d.name))?;
        let (secs, single) = worker.time(Mode::Single)?;
        let (_, prange) = worker.time(Mode::Prange)?;
        let agree: GateReport = compare(&d.name, &prange, &single);
        if !agree.bit_identical() {
            bail!(
                "numba's prange sweep differs from its single-thread sweep on {}; not writing \
                 fixtures:\n{}\n{agree}",
                d.name,
                GateReport::header()
            );
        }
        let path = golden::write(dir, &golden::Fixture::new(&d, &single, versions.clone()))?;
        log(&format!(
            "wrote {} ({} combos, numba single {secs:.2} s)",
            path.display(),
            d.params.len()
        ));
        write_metric_fixture(&mut worker, &d, &single, dir, &versions, &mut log)?;
        write_trade_fixture(&mut worker, &d, &single, dir, &versions, &mut log)?;
    }
    Ok(())
}

/// Writes `d`'s trade fixture into `dir/trades` from numba's `sweep_trades`, after checking
/// that each combo's trades count and sum, in order, to `single`, the study's loop's `trades`
/// and `pnl` bits. `worker` must have `d` loaded; `log` gets the line naming the file.
pub fn write_trade_fixture(
    worker: &mut Worker,
    d: &Dataset,
    single: &SweepResult,
    dir: &Path,
    versions: &Map<String, Value>,
    mut log: impl FnMut(&str),
) -> anyhow::Result<()> {
    let numba_log = worker.trades(None)?;
    let per = trades::by_combo(&numba_log, d.params.len())
        .map_err(|t| anyhow::anyhow!("numba logged a trade of combo {} on {}", t.combo, d.name))?;
    let summed = SweepResult {
        pnl: per
            .iter()
            .map(|t| t.iter().fold(0.0, |s, t| s + t.pnl))
            .collect(),
        trades: per.iter().map(|t| t.len() as i64).collect(),
    };
    let agree = compare(&d.name, &summed, single);
    if !agree.bit_identical() {
        bail!(
            "numba's sweep_trades does not sum to its sweep on {}; not writing fixtures:\n{}\n{agree}",
            d.name,
            GateReport::header()
        );
    }
    let path = trades::write(
        &dir.join("trades"),
        &trades::Fixture::new(d, &numba_log, versions.clone())?,
    )?;
    log(&format!(
        "wrote {} ({} trades)",
        path.display(),
        numba_log.len()
    ));
    Ok(())
}

/// Writes `d`'s metric fixture into `dir/metrics` from numba's `sweep_metrics`, after checking
/// that its `pnl` and `trades` are `single`'s bits (the metric loop must be the study's loop).
/// `worker` must have `d` loaded; `log` gets the line naming the file.
pub fn write_metric_fixture(
    worker: &mut Worker,
    d: &Dataset,
    single: &SweepResult,
    dir: &Path,
    versions: &Map<String, Value>,
    mut log: impl FnMut(&str),
) -> anyhow::Result<()> {
    let rows = worker.metrics()?;
    let plain = SweepResult {
        pnl: rows.iter().map(|m| m.pnl).collect(),
        trades: rows.iter().map(|m| m.trades).collect(),
    };
    let agree = compare(&d.name, &plain, single);
    if !agree.bit_identical() {
        bail!(
            "numba's sweep_metrics disagrees with its sweep on {}; not writing fixtures:\n{}\n{agree}",
            d.name,
            GateReport::header()
        );
    }
    let path = metrics::write(
        &dir.join("metrics"),
        &metrics::Fixture::new(d, &rows, versions.clone()),
    )?;
    log(&format!("wrote {}", path.display()));
    Ok(())
}
