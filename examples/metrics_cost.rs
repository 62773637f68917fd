//! What the metrics cost: each variant's `(pnl, trades)` sweep and its metrics sweep on the default
//! data, interleaved (A B A B ...) in one run, medians and their ratio as a Markdown table.
//!
//! `cargo run --release --example metrics_cost [ROUNDS]` (default 7); reports/lab.md quotes it.

use hullsweep::machine::Machine;
use hullsweep::{Threads, Variant, kernel};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let rounds: usize = match std::env::args().nth(1) {
        Some(r) => r.parse()?,
        None => 7,
    };
    let close = kernel::default_close();
    let params = kernel::default_params();
    let fee = kernel::DEFAULT_FEE_PCT;
    let runs = [
        (Variant::Rolling, Threads::Fixed(1), "rolling"),
        (Variant::RollingRayon, Threads::Auto, "rolling-rayon"),
        (Variant::Simd, Threads::Fixed(1), "simd"),
        (Variant::Rayon, Threads::Auto, "rayon"),
    ];
    println!(
        "{} bars x {} combos, median of {rounds} interleaved rounds (plain, metrics, plain, ...).\n",
        close.len(),
        params.len()
    );
    println!("| variant | (pnl, trades) median (s) | metrics median (s) | metrics / plain |");
    println!("|---|---:|---:|---:|");
    for (v, threads, name) in runs {
        // One warm-up each (pools, page faults), then the interleaved rounds.
        let want = v.sweep(&close, &params, fee, threads)?;
        let got = v.sweep_metrics(&close, &params, fee, threads)?;
        assert!(
            got.iter()
                .zip(&want.pnl)
                .all(|(m, p)| m.pnl.to_bits() == p.to_bits())
        );
        let (mut plain, mut metrics) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let t = Instant::now();
            std::hint::black_box(v.sweep(&close, &params, fee, threads)?);
            plain.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            std::hint::black_box(v.sweep_metrics(&close, &params, fee, threads)?);
            metrics.push(t.elapsed().as_secs_f64());
        }
        let (p, m) = (median(plain), median(metrics));
        println!("| {name} | {p:.4} | {m:.4} | {:.2}x |", m / p);
    }
    println!(
        "\nMachine: {}. Date: {}.",
        Machine::detect().summary(),
        hullsweep::machine::today()
    );
    Ok(())
}
