//! What the metrics cost: each variant's `(pnl, trades)` sweep and its metrics sweep on the default
//! data, interleaved (A B A B ...) in one run, medians and their ratio as a Markdown table (the
//! same section `hullsweep lab` writes into reports/lab.md).
//!
//! `cargo run --release --example metrics_cost [ROUNDS]` (default 7).

use hullsweep_kernel as kernel;
use hullsweep_lab::machine::Machine;
use hullsweep_lab::metrics as metrics_lab;

fn main() -> anyhow::Result<()> {
    let rounds: usize = match std::env::args().nth(1) {
        Some(r) => r.parse()?,
        None => 7,
    };
    let close = kernel::default_close();
    let params = kernel::default_params();
    let rows = metrics_lab::run(&close, &params, kernel::DEFAULT_FEE_PCT, rounds, |_| {})?;
    println!(
        "{}",
        metrics_lab::to_markdown(&rows, close.len(), params.len(), rounds)
    );
    println!(
        "Machine: {}. Date: {}.",
        Machine::detect().summary(),
        hullsweep_lab::machine::today()
    );
    Ok(())
}
