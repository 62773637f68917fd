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

/// Prints the results (only `combos`' rows when given), or writes them to `out` all at once
/// (never a partial file).
pub fn write_results(
    format: Format,
    out: Option<&Path>,
    params: &[Combo],
    result: &SweepResult,
    combos: &[usize],
) -> anyhow::Result<()> {
    let text = match format {
        Format::Csv => results::sweep_csv(params, result),
        Format::Json => results::sweep_json(params, result),
    };
    let text = only(text, matches!(format, Format::Json), combos);
    match out {
        Some(path) => write_atomic(path, &super::progress::Bar::new("writing"), |f| {
            Ok(f.write_all(text.as_bytes())?)
        }),
        None => super::stdout::print_out(&text),
    }
}

/// `--combo K,...`: the rows of a table (CSV with a leading `combo` column, or a JSON array of
/// objects with a `combo` key) whose combo is one of `combos`; the whole table when none.
pub fn only(text: String, json: bool, combos: &[usize]) -> String {
    if combos.is_empty() {
        return text;
    }
    if json {
        let rows: Vec<serde_json::Value> =
            serde_json::from_str(&text).expect("the table was just written as JSON");
        let kept: Vec<&serde_json::Value> = rows
            .iter()
            .filter(|r| {
                r["combo"]
                    .as_u64()
                    .is_some_and(|k| combos.contains(&(k as usize)))
            })
            .collect();
        return serde_json::to_string_pretty(&kept).expect("plain values serialise") + "\n";
    }
    let mut lines = text.lines();
    let mut out = lines.next().map_or(String::new(), |h| h.to_string() + "\n");
    for line in lines {
        let k = line.split(',').next().and_then(|c| c.parse::<usize>().ok());
        if k.is_some_and(|k| combos.contains(&k)) {
            out += line;
            out.push('\n');
        }
    }
    out
}
