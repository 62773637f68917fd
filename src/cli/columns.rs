//! `hullsweep sweep --metrics` and `--plot`: the metrics sweep, its CSV and JSON columns (named as
//! docs/kernel.md names them) and the picture, kept apart from the plain `(pnl, trades)` path.

use anyhow::Context;
use hullsweep_data::results;
use hullsweep_kernel::{Combo, Grid, METRIC_NAMES, Metrics};
use hullsweep_variants::{Threads, Variant};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// What the user asked of a metrics or plot run.
pub struct Request<'a> {
    pub fee: f64,
    pub variant: Variant,
    pub threads: Threads,
    pub json: bool,
    /// Write every metric column (else only `pnl` and `trades`, as without `--metrics`).
    pub metrics: bool,
    pub out: Option<&'a Path>,
    /// `--plot FILE --metric NAME`.
    pub plot: Option<(&'a Path, &'static str)>,
}

/// Sweeps (the metrics sweep only when a metric beyond `pnl` and `trades` is wanted, so a plot of
/// PnL costs what the plain sweep costs), writes the table and draws the plot.
pub fn run_metrics(
    close: &[f64],
    params: &[Combo],
    grid: &Grid,
    req: Request<'_>,
) -> anyhow::Result<()> {
    let plain = |name: &str| name == "pnl" || name == "trades";
    let need_metrics = req.metrics || req.plot.is_some_and(|(_, m)| !plain(m));
    let start = Instant::now();
    let rows: Vec<Metrics> = if need_metrics {
        req.variant
            .sweep_metrics(close, params, req.fee, req.threads)?
    } else {
        let r = req.variant.sweep(close, params, req.fee, req.threads)?;
        (0..r.len())
            // Only `pnl` and `trades` of these rows are written or drawn.
            .map(|k| hullsweep_kernel::Tally::new().finish(r.pnl[k], r.trades[k], 0))
            .collect()
    };
    let secs = start.elapsed().as_secs_f64();
    let names: &[&str] = if req.metrics {
        &METRIC_NAMES
    } else {
        &METRIC_NAMES[..2]
    };
    let text = if req.json {
        results::metrics_json(params, &rows, names)
    } else {
        results::metrics_csv(params, &rows, names)
    };
    match req.out {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    eprintln!(
        "swept {} combos over {} bars with {}{} in {secs:.3} s",
        params.len(),
        close.len(),
        req.variant.name(),
        if need_metrics { " (metrics)" } else { "" }
    );
    if let Some((path, metric)) = req.plot {
        let values: Vec<f64> = rows
            .iter()
            .map(|m| m.get(metric).expect("a known metric").as_f64())
            .collect();
        let best = hullsweep_data::plot::draw(path, grid, params, &values, metric)?;
        eprintln!("drew {metric} to {}; best: {best}", path.display());
    }
    Ok(())
}
