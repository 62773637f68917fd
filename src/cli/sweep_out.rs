//! What `hullsweep sweep` writes without `--metrics` or `--plot`, run here or with `--connect`:
//! `(pnl, trades)` per combo as CSV or JSON, on standard output or all at once to `--out`.

use hullsweep_data::{results, write_atomic};
use hullsweep_kernel::{Combo, SweepResult};
use std::io::Write;
use std::path::Path;

/// `--format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Format {
    Csv,
    Json,
}

/// Prints the results, or writes them to `out` all at once (never a partial file).
pub fn write_results(
    format: Format,
    out: Option<&Path>,
    params: &[Combo],
    result: &SweepResult,
) -> anyhow::Result<()> {
    let text = match format {
        Format::Csv => results::sweep_csv(params, result),
        Format::Json => results::sweep_json(params, result),
    };
    match out {
        Some(path) => write_atomic(path, &super::progress::Bar::new("writing"), |f| {
            Ok(f.write_all(text.as_bytes())?)
        }),
        None => Ok(std::io::stdout().write_all(text.as_bytes())?),
    }
}
