//! `hullsweep sweep --folds`, `--returns` and the extra `--metrics` columns: the fold sweep
//! (hullsweep-validate) run over the series in memory, and its per-(combo, fold) table.

use super::sweep_out::Format;
use anyhow::Context;
use hullsweep_data::{ReturnsWriter, count_bars, for_each_chunk, write_atomic};
use hullsweep_kernel::{Combo, ValidClose};
use hullsweep_validate::{ColumnSink, FoldRow, FoldSpec, FoldSweep, FoldSweeper, fold_sweep};
use hullsweep_variants::{Threads, Variant};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Where the series is: in memory, or in a file read a chunk at a time.
pub enum Series<'a> {
    Memory(&'a [f64]),
    File {
        path: &'a Path,
        column: Option<&'a str>,
    },
}

/// Runs the fold sweep: `folds` folds (or the whole series as one), every combo's bar returns
/// written to `returns` as they are produced when asked. A file is read in chunks, so memory
/// does not grow with its length (a CSV is read twice: once to count its bars, which the folds
/// are cut from).
pub fn sweep(
    series: &Series<'_>,
    params: &[Combo],
    fee: f64,
    variant: Variant,
    threads: Threads,
    folds: Option<usize>,
    returns: Option<&Path>,
) -> anyhow::Result<FoldSweep> {
    let bars = match series {
        Series::Memory(close) => close.len(),
        Series::File { path, column } => count_bars(path, *column)? as usize,
    };
    let writer = returns
        .map(|p| ReturnsWriter::create(p, bars, params.len()))
        .transpose()?;
    let sink = writer
        .as_ref()
        .map(|w| move |k: usize, at: usize, r: &[f64]| w.write_column(k, at, r));
    let sink: Option<ColumnSink<'_>> = sink.as_ref().map(|f| f as _);
    let start = Instant::now();
    let spec = FoldSpec { folds, walk: None };
    let swept = match series {
        Series::Memory(close) => {
            let valid = ValidClose::new(close)?;
            fold_sweep(variant, valid, params, fee, threads, spec, sink)?
        }
        Series::File { path, column } => {
            let mut sweeper = FoldSweeper::new(variant, params, fee, threads, bars, spec)
                .with_context(|| path.display().to_string())?;
            let bar = super::progress::Bar::new("sweeping");
            let read = for_each_chunk(path, *column, &bar, |chunk| Ok(sweeper.push(chunk, sink)?));
            bar.finish();
            read?;
            sweeper.finish()?
        }
    };
    let secs = start.elapsed().as_secs_f64();
    if let (Some(w), Some(path)) = (writer, returns) {
        w.finish()?;
        eprintln!(
            "wrote the {bars} x {} bar returns (float64, C order) to {}",
            params.len(),
            path.display()
        );
    }
    eprintln!(
        "swept {} combos over {bars} bars with {}{} in {secs:.3} s{}",
        params.len(),
        variant.name(),
        folds.map_or(String::new(), |s| format!(" in {s} folds")),
        match series {
            Series::Memory(_) => String::new(),
            Series::File { .. } => format!(" (read in chunks){}", super::progress::peak_rss_note()),
        }
    );
    Ok(swept)
}

/// The per-fold table's columns, in order.
pub const FOLD_COLUMNS: [&str; 10] = [
    "combo",
    "fold",
    "first_bar",
    "last_bar",
    "bars",
    "pnl",
    "trades",
    "mean",
    "std",
    "sharpe",
];

/// One row per (combo, fold), combo-major; floats in the shortest form that parses back to
/// the same bits.
pub fn fold_csv(rows: impl Iterator<Item = FoldRow>) -> String {
    let mut s = FOLD_COLUMNS.join(",") + "\n";
    for r in rows {
        s += &format!(
            "{},{},{},{},{},{},{},{},{},{}\n",
            r.combo,
            r.fold,
            r.first_bar,
            r.last_bar,
            r.bars,
            r.pnl,
            r.trades,
            r.mean,
            r.std,
            r.sharpe
        );
    }
    s
}

/// The same rows as a JSON array of objects with the same keys.
pub fn fold_json(rows: impl Iterator<Item = FoldRow>) -> String {
    let rows: Vec<serde_json::Value> = rows
        .map(|r| {
            serde_json::json!({
                "combo": r.combo, "fold": r.fold, "first_bar": r.first_bar,
                "last_bar": r.last_bar, "bars": r.bars, "pnl": r.pnl, "trades": r.trades,
                "mean": r.mean, "std": r.std, "sharpe": r.sharpe,
            })
        })
        .collect();
    serde_json::to_string_pretty(&rows).expect("plain values serialise") + "\n"
}

/// Writes the per-fold table to `out` (all at once) or standard output.
pub fn write_folds(
    format: Format,
    out: Option<&Path>,
    swept: &FoldSweep,
    combos: &[usize],
) -> anyhow::Result<()> {
    let rows = swept
        .rows()
        .filter(|r| combos.is_empty() || combos.contains(&r.combo));
    let text = match format {
        Format::Csv => fold_csv(rows),
        Format::Json => fold_json(rows),
    };
    match out {
        Some(path) => write_atomic(path, &super::progress::Bar::new("writing"), |f| {
            Ok(f.write_all(text.as_bytes())?)
        })
        .with_context(|| format!("cannot write {}", path.display())),
        None => super::stdout::print_out(&text),
    }
}
