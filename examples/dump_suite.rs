//! Writes the gate's dataset suite as `.npy` files (`DIR/<name>.close.npy`, `DIR/<name>.params.npy`
//! and `DIR/<name>.fee`), so tools outside Rust (scripts/peers_vectorbt.py) sweep the same inputs.
//!
//! `cargo run --release --example dump_suite -- DIR`

use anyhow::Context;
use hullsweep_data::datasets::suite;
use hullsweep_data::{write_f64_npy, write_params_npy};
use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .context("usage: dump_suite DIR (where to write the suite's .npy files)")?,
    );
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for d in suite() {
        write_f64_npy(&dir.join(format!("{}.close.npy", d.name)), &d.close)?;
        write_params_npy(&dir.join(format!("{}.params.npy", d.name)), &d.params)?;
        std::fs::write(
            dir.join(format!("{}.fee", d.name)),
            format!("{:?}\n", d.fee),
        )?;
        println!(
            "{} ({} bars x {} combos)",
            d.name,
            d.close.len(),
            d.params.len()
        );
    }
    Ok(())
}
