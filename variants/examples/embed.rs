//! The smallest program embedding hullsweep: the built-in series, the default grid, `fastest`,
//! and the best combo printed. Depends on `hullsweep-variants` alone.
//!
//! `cargo run --release -p hullsweep-variants --example embed`

use hullsweep_variants::{DEFAULT_FEE_PCT, Threads, Variant, default_close, default_params};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let close = default_close(); // 150,000 bars; use your own f64 closes (NaN = missing bar)
    let params = default_params(); // 80 combos of six windows (grid 6:200:80)
    let variant = Variant::fastest();
    let start = std::time::Instant::now();
    let result = variant.sweep(&close, &params, DEFAULT_FEE_PCT, Threads::Auto)?;
    let elapsed = start.elapsed();
    let best = (0..result.len())
        .max_by(|&a, &b| result.pnl[a].total_cmp(&result.pnl[b]))
        .ok_or("no combos")?;
    println!(
        "{} bars x {} combos with {} in {:.1} ms; best combo {:?}: pnl {:.4}% over {} trades",
        close.len(),
        params.len(),
        variant.name(),
        elapsed.as_secs_f64() * 1e3,
        params[best],
        result.pnl[best],
        result.trades[best]
    );
    Ok(())
}
