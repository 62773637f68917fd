//! `hullsweep sweep --metrics` and `--plot`: the metrics sweep, its CSV and JSON columns (named as
//! docs/kernel.md names them) and the picture, kept apart from the plain `(pnl, trades)` path.

use anyhow::Context;
use hullsweep_data::results;
use hullsweep_kernel::{Combo, Grid, METRIC_NAMES, Metrics, SweepResult};
use hullsweep_variants::{Threads, Variant};
use std::path::Path;
use std::time::Instant;

/// What the user asked of a metrics or plot run.
pub struct Request<'a> {
    pub fee: f64,
    /// `--returns FILE`: also write the bars x combos bar returns.
    pub returns: Option<&'a Path>,
    pub variant: Variant,
    pub threads: Threads,
    pub table: Table<'a>,
}

/// What is written and drawn, however the rows were computed (here, or by an engine for
/// `sweep --connect --plot`).
pub struct Table<'a> {
    pub json: bool,
    /// Write every metric column (else only `pnl` and `trades`, as without `--metrics`).
    pub metrics: bool,
    pub out: Option<&'a Path>,
    /// `--plot FILE --metric NAME`.
    pub plot: Option<(&'a Path, &'static str)>,
    /// `--combo K,...`: only these rows (all when empty).
    pub combos: &'a [usize],
}

impl Table<'_> {
    /// Whether a column beyond `pnl` and `trades` is wanted (written or drawn).
    pub fn needs_metrics(&self) -> bool {
        self.metrics || self.plot.is_some_and(|(_, m)| m != "pnl" && m != "trades")
    }
}

/// Sweeps (the fold sweep when a metric beyond `pnl` and `trades` or the bar returns are
/// wanted, so a plot of PnL costs what the plain sweep costs), writes the table and draws the
/// plot.
pub fn run_metrics(
    series: &super::folds::Series<'_>,
    params: &[Combo],
    grid: &Grid,
    req: Request<'_>,
) -> anyhow::Result<()> {
    let (rows, extra) = if req.table.needs_metrics() || req.returns.is_some() {
        let swept = super::folds::sweep(
            series,
            params,
            req.fee,
            req.variant,
            req.threads,
            None,
            req.returns,
        )?;
        let c = swept.combos();
        let rows: Vec<Metrics> = c.iter().map(|c| c.metrics).collect();
        let extra = c
            .iter()
            .map(|c| [Some(c.sharpe), c.win_rate, c.profit_factor])
            .collect();
        (rows, extra)
    } else {
        let close: std::borrow::Cow<'_, [f64]> = match series {
            super::folds::Series::Memory(close) => (*close).into(),
            super::folds::Series::File { path, column } => {
                hullsweep_data::read_close(path, *column)?.into()
            }
        };
        let start = Instant::now();
        let rows = plain_rows(&req.variant.sweep(&close, params, req.fee, req.threads)?);
        eprintln!(
            "swept {} combos over {} bars with {} in {:.3} s",
            params.len(),
            close.len(),
            req.variant.name(),
            start.elapsed().as_secs_f64()
        );
        (rows, Vec::new())
    };
    write_table(params, &rows, &extra, &req.table)?;
    draw(params, grid, &rows, &req.table)
}

/// Rows of which only `pnl` and `trades` are meant to be written or drawn.
pub fn plain_rows(r: &SweepResult) -> Vec<Metrics> {
    (0..r.len())
        .map(|k| hullsweep_kernel::Tally::new().finish(r.pnl[k], r.trades[k], 0))
        .collect()
}

/// Writes the table to `--out` or standard output: every metric column with `--metrics` (and
/// the `extra` columns, one row per combo, when computed), else `pnl` and `trades`.
pub fn write_table(
    params: &[Combo],
    rows: &[Metrics],
    extra: &[[Option<f64>; 3]],
    table: &Table<'_>,
) -> anyhow::Result<()> {
    let (names, extra): (&[&str], _) = if table.metrics {
        (&METRIC_NAMES, extra)
    } else {
        (&METRIC_NAMES[..2], &[][..])
    };
    let text = if table.json {
        results::metrics_json(params, rows, names, extra)
    } else {
        results::metrics_csv(params, rows, names, extra)
    };
    let text = super::sweep_out::only(text, table.json, table.combos);
    match table.out {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => super::stdout::print_out(&text)?,
    }
    Ok(())
}

/// Draws `--plot` (when given) and says on stderr where, and which combo is best.
pub fn draw(
    params: &[Combo],
    grid: &Grid,
    rows: &[Metrics],
    table: &Table<'_>,
) -> anyhow::Result<()> {
    if let Some((path, metric)) = table.plot {
        let values: Vec<f64> = rows
            .iter()
            .map(|m| m.get(metric).expect("a known metric").as_f64())
            .collect();
        let best = hullsweep_data::plot::draw(path, grid, params, &values, metric)?;
        eprintln!("drew {metric} to {}; best: {best}", path.display());
    }
    Ok(())
}
