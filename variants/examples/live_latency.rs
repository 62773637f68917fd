//! Per-bar latency of `Live::push`: p50, p99 and max over single pushes, for the default 80
//! combos and for 10,000 (grid2 "6:200:100" x "6:200:100"), after a warm-up of the 150,000
//! default bars, and on adversarial gate datasets; beside it, the batch sweep a user would
//! re-run on the history instead. A measurement to read, not a test.
//!
//! `cargo run --release -p hullsweep-variants --example live_latency [-- --quick]`

use hullsweep_variants::{
    Combo, DEFAULT_FEE_PCT, DEFAULT_SEED, DEFAULT_SIGMA, Live, Threads, Variant, default_params,
    gbm, grid2,
};
use std::time::Instant;

#[allow(dead_code)]
#[path = "../../data/src/datasets.rs"]
mod datasets;

/// Nanoseconds per single-bar push over `bars`, after `warm` pushed as one chunk: as it ran
/// (`wall`), and the least of `replays` pushes of the same bar into copies of the same state
/// (`best`), which removes what the shared machine's other work adds (preemption) and keeps
/// what the bar itself costs (restarts, exact bars).
fn per_bar(
    params: &[Combo],
    warm: &[f64],
    bars: &[f64],
    replays: usize,
) -> (Vec<f64>, Vec<f64>, Live) {
    let mut live = Live::new(params, DEFAULT_FEE_PCT).expect("valid params");
    let mut events = Vec::new();
    live.push_many(warm, &mut events).expect("valid bars");
    let (mut wall, mut best) = (
        Vec::with_capacity(bars.len()),
        Vec::with_capacity(bars.len()),
    );
    for &c in bars {
        let mut least = f64::INFINITY;
        for _ in 1..replays {
            let mut copy = live.clone();
            events.clear();
            let t = Instant::now();
            copy.push(c, &mut events).expect("valid bar");
            least = least.min(t.elapsed().as_nanos() as f64);
        }
        events.clear();
        let t = Instant::now();
        live.push(c, &mut events).expect("valid bar");
        let ns = t.elapsed().as_nanos() as f64;
        wall.push(ns);
        best.push(least.min(ns));
    }
    (wall, best, live)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn report(what: &str, wall: Vec<f64>, best: Vec<f64>, live: &Live) {
    let q = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        [
            quantile(&v, 0.5),
            quantile(&v, 0.99),
            v.last().copied().unwrap_or(0.0),
        ]
        .map(|x| x / 1e3)
    };
    let (w, b) = (q(wall), q(best));
    let s = live.stats();
    let certified = s.certified as f64 / (s.certified + s.recomputed).max(1) as f64;
    println!(
        "| {what} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.4} |",
        b[0], b[1], b[2], w[0], w[1], w[2], certified
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let quick = std::env::args().any(|a| a == "--quick");
    let warm = 150_000;
    let measured = if quick { 500 } else { 5_000 };
    let replays = 3;
    let series = gbm(warm + measured, DEFAULT_SEED, DEFAULT_SIGMA)?;
    let (history, next) = series.split_at(warm);
    let small = default_params();
    let big = grid2("6:200:100".parse()?, "6:200:100".parse()?)?;
    println!(
        "per-bar `Live::push` latency in µs, one thread; best of {replays} replays per bar, then as run once \
         (wall); certified: the fraction of defined (combo, bar) pairs the bound certified\n"
    );
    println!(
        "| series, combos, bars timed | p50 | p99 | max | wall p50 | wall p99 | wall max | certified |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut pushes = Vec::new();
    for (name, params) in [("80", &small), ("10,000", &big)] {
        let (wall, best, live) = per_bar(params, history, next, replays);
        let mut sorted = best.clone();
        sorted.sort_by(f64::total_cmp);
        pushes.push((name, params, quantile(&sorted, 0.5)));
        report(
            &format!("default after 150,000 bars, {name}, {}", next.len()),
            wall,
            best,
            &live,
        );
    }
    let suite = datasets::suite();
    for name in [
        "flat_steps",
        "nan_runs",
        "extreme_spikes",
        "subnormal_prices",
    ] {
        let d = suite.iter().find(|d| d.name == name).ok_or("dataset")?;
        let half = d.close.len() / 2;
        let end = if quick {
            (half + 500).min(d.close.len())
        } else {
            d.close.len()
        };
        for (label, params) in [("80", &small), ("10,000", &big)] {
            let (wall, best, live) =
                per_bar(params, &d.close[..half], &d.close[half..end], replays);
            report(
                &format!("{name} after {half} bars, {label}, {}", end - half),
                wall,
                best,
                &live,
            );
        }
    }
    // What a user does without it: the batch sweep of the whole history for each new bar.
    println!(
        "\nre-running the batch sweep (fastest, 1 thread) on the 150,000 bars instead, per bar:"
    );
    for (name, params, push_ns) in pushes {
        let runs = if params.len() > 100 || quick { 1 } else { 5 };
        let mut best = f64::INFINITY;
        for _ in 0..runs {
            let t = Instant::now();
            let r = Variant::fastest().sweep(
                &series[..warm],
                params,
                DEFAULT_FEE_PCT,
                Threads::Fixed(1),
            )?;
            best = best.min(t.elapsed().as_nanos() as f64);
            assert_eq!(r.len(), params.len());
        }
        println!(
            "  {name:>6} combos: batch {:>10.1} ms, push p50 {:>8.1} µs: {:>10.0}x",
            best / 1e6,
            push_ns / 1e3,
            best / push_ns
        );
    }
    Ok(())
}
