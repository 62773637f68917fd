//! Side-by-side A/B timing of the variants on the default sweep, for a noisy shared machine:
//! runs are interleaved (A B C ... A B C ...) and reported as medians and ratios to the reference.
//!
//! `cargo run --release -p hullsweep-variants --example ab -- [ROUNDS] [BARS] [NAMES...]`
//! where a name is a variant, `rayon1`/`rayon2` (fixed threads) or `simd-TIER`.

use hullsweep_kernel::{SweepResult, default_close, default_params, sweep};
use hullsweep_variants::simd::{Tier, sweep_with};
use hullsweep_variants::{Threads, Variant};
use std::time::Instant;

fn run(name: &str, close: &[f64], params: &[[i64; 6]]) -> SweepResult {
    let fee = 0.09;
    if let Some(t) = name.strip_prefix("rayon")
        && let Ok(n) = t.parse::<usize>()
    {
        return Variant::Rayon
            .sweep(close, params, fee, Threads::Fixed(n))
            .unwrap();
    }
    if let Some(t) = name.strip_prefix("simd-") {
        let tier = Tier::ALL
            .into_iter()
            .find(|x| x.name() == t)
            .expect("tier name");
        return sweep_with(tier.kernel().expect("tier available"), close, params, fee).unwrap();
    }
    Variant::from_name(name)
        .expect("variant name")
        .sweep(close, params, fee, Threads::Auto)
        .unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = args.first().map_or(5, |s| s.parse().expect("rounds"));
    let bars: usize = args.get(1).map_or(0, |s| s.parse().expect("bars"));
    let mut names: Vec<String> = args.iter().skip(2).cloned().collect();
    if names.is_empty() {
        names = [
            "reference",
            "checked",
            "unchecked",
            "prealloc",
            "simd",
            "rayon1",
            "rayon2",
        ]
        .map(String::from)
        .to_vec();
    }
    let mut close = default_close();
    if bars > 0 {
        close.truncate(bars);
    }
    let params = default_params();
    let want = sweep(&close, &params, 0.09).unwrap();
    let mut times = vec![Vec::new(); names.len()];
    for _ in 0..rounds {
        for (name, t) in names.iter().zip(&mut times) {
            let start = Instant::now();
            let got = run(name, &close, &params);
            t.push(start.elapsed().as_secs_f64());
            let same = got.trades == want.trades
                && got
                    .pnl
                    .iter()
                    .zip(&want.pnl)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{name} differs from the reference");
        }
    }
    let med = |t: &mut Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let medians: Vec<f64> = times.iter_mut().map(med).collect();
    println!(
        "{} bars x {} combos, {rounds} interleaved rounds, best tier {:?}",
        close.len(),
        params.len(),
        Tier::best()
    );
    for (name, m) in names.iter().zip(&medians) {
        println!(
            "{name:>12}  median {m:8.4} s  {:6.2}x vs {}",
            medians[0] / m,
            names[0]
        );
    }
}
