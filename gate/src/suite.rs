//! The gate against live numba on a suite of datasets: the reference's results and trade logs,
//! then each variant's verdict and every trade-log implementation's, naming what failed.

use crate::compare::{GateReport, gate};
use crate::numba::{Mode, Worker};
use crate::trades;
use anyhow::Context;
use hullsweep_data::Dataset;
use hullsweep_kernel::{SweepResult, Trade};
use hullsweep_variants::{Threads, Variant};
use std::time::Instant;

/// numba's answers on a suite, one entry per dataset in the suite's order.
pub struct Reference {
    /// Each dataset's per-combo results, from the sweep in the chosen [`Mode`].
    pub results: Vec<SweepResult>,
    /// Each dataset's trade log, every combo's closed trades, from `sweep_trades`.
    pub trades: Vec<Vec<Trade>>,
}

/// Loads each dataset of `suite` into `worker`, sweeps it in `mode` and logs its trades. `log`
/// gets one line per dataset: its size, its trade count and the time it took.
pub fn reference(
    worker: &mut Worker,
    suite: &[Dataset],
    mode: Mode,
    mut log: impl FnMut(&str),
) -> anyhow::Result<Reference> {
    let mut results = Vec::with_capacity(suite.len());
    let mut logs = Vec::with_capacity(suite.len());
    for d in suite {
        let start = Instant::now();
        let r = worker
            .sweep(&d.close, &d.params, d.fee, mode)
            .with_context(|| format!("numba on dataset {}", d.name))?;
        let trades = worker
            .trades(None)
            .with_context(|| format!("numba's trade log on dataset {}", d.name))?;
        log(&format!(
            "numba {}: {} ({} bars x {} combos), loaded, swept and logged {} trades in {:.2} s",
            mode.name(),
            d.name,
            d.close.len(),
            d.params.len(),
            trades.len(),
            start.elapsed().as_secs_f64()
        ));
        results.push(r);
        logs.push(trades);
    }
    Ok(Reference {
        results,
        trades: logs,
    })
}

/// Gates `variant` on `suite` against `reference` (numba's results, one per dataset in order):
/// one report per dataset.
pub fn variant(
    variant: Variant,
    suite: &[Dataset],
    reference: &[SweepResult],
    threads: Threads,
) -> anyhow::Result<Vec<GateReport>> {
    let mut next = reference.iter();
    gate(
        suite,
        |d| variant.sweep(&d.close, &d.params, d.fee, threads),
        |_| Ok(next.next().expect("one result per dataset").clone()),
    )
}

/// What failed the gate among `reports`, each as `<what> on <dataset>`.
pub fn failures(what: &str, reports: &[GateReport]) -> Vec<String> {
    reports
        .iter()
        .filter(|r| !r.passes())
        .map(|r| format!("{what} on {}", r.dataset))
        .collect()
}

/// Every implementation of the trade log ([`trades::IMPLEMENTATIONS`]) against numba's
/// `sweep_trades` (`wanted`, one log per dataset in order), every trade of every combo bit for
/// bit. `line` gets a title per implementation, then one report line per dataset; returns what
/// failed.
pub fn trade_logs(
    suite: &[Dataset],
    wanted: &[Vec<Trade>],
    mut line: impl FnMut(&str),
) -> anyhow::Result<Vec<String>> {
    let mut failed = Vec::new();
    for &(name, trades) in trades::IMPLEMENTATIONS {
        line(&format!(
            "\ntrade log ({name}) vs numba sweep_trades, every trade bit for bit"
        ));
        for (d, want) in suite.iter().zip(wanted) {
            let got = trades(&d.close, &d.params, d.fee, &trades::all(&d.params))
                .with_context(|| format!("trade log ({name}) on dataset {}", d.name))?;
            let report = trades::compare(&d.name, d.params.len(), &got, want);
            line(&report.to_string());
            if !report.bit_identical() {
                failed.push(format!("the trade log ({name}) on {}", d.name));
            }
        }
    }
    Ok(failed)
}
