//! The lab's section on what the metrics cost: each fast variant's `(pnl, trades)` sweep against
//! its metrics sweep on the lab's data, interleaved in one run, medians and their ratio.

use hullsweep_kernel::Combo;
use hullsweep_variants::{Threads, Variant};
use std::time::Instant;

/// One variant's medians, in seconds.
pub struct Row {
    /// The variant's name (with its threads).
    pub name: &'static str,
    /// Median of the `(pnl, trades)` sweeps.
    pub plain: f64,
    /// Median of the metrics sweeps.
    pub metrics: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times both sweeps of `rolling`, `rolling-rayon`, `simd` and `rayon`, alternating (plain,
/// metrics, plain, ...) after a warm-up that also checks the metrics sweep's PnL bits are the
/// plain sweep's.
pub fn run(
    close: &[f64],
    params: &[Combo],
    fee: f64,
    rounds: usize,
    mut tick: impl FnMut(&str),
) -> anyhow::Result<Vec<Row>> {
    let runs = [
        (Variant::Rolling, Threads::Fixed(1), "rolling"),
        (Variant::RollingRayon, Threads::Auto, "rolling-rayon"),
        (Variant::Simd, Threads::Fixed(1), "simd"),
        (Variant::Rayon, Threads::Auto, "rayon"),
    ];
    let mut rows = Vec::new();
    for (v, threads, name) in runs {
        tick(&format!("metrics' cost: {name}"));
        let want = v.sweep(close, params, fee, threads)?;
        let got = v.sweep_metrics(close, params, fee, threads)?;
        anyhow::ensure!(
            got.iter()
                .zip(&want.pnl)
                .all(|(m, p)| m.pnl.to_bits() == p.to_bits()),
            "{name}: the metrics sweep's pnl differs from the plain sweep's"
        );
        let (mut plain, mut metrics) = (Vec::new(), Vec::new());
        for _ in 0..rounds.max(1) {
            let t = Instant::now();
            std::hint::black_box(v.sweep(close, params, fee, threads)?);
            plain.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            std::hint::black_box(v.sweep_metrics(close, params, fee, threads)?);
            metrics.push(t.elapsed().as_secs_f64());
        }
        rows.push(Row {
            name,
            plain: median(plain),
            metrics: median(metrics),
        });
    }
    Ok(rows)
}

/// The section as Markdown.
pub fn to_markdown(rows: &[Row], bars: usize, combos: usize, rounds: usize) -> String {
    let mut s = String::from("## The metrics' cost\n\n");
    s += &format!(
        "`sweep_metrics` (every metric of docs/kernel.md, \"Metrics\") against the plain \
         `(pnl, trades)` sweep, {bars} bars × {combos} combos, median of {rounds} interleaved \
         rounds (plain, metrics, plain, ...). The fast variants keep the metrics only where the \
         position changes, so the event loop still runs at class changes only.\n\n"
    );
    s += "| variant | (pnl, trades) median (s) | metrics median (s) | metrics / plain |\n";
    s += "|---|---:|---:|---:|\n";
    for r in rows {
        s += &format!(
            "| {} | {:.4} | {:.4} | {:.2}× |\n",
            r.name,
            r.plain,
            r.metrics,
            r.metrics / r.plain
        );
    }
    s
}
