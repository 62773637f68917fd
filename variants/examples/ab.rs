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

/// CPU seconds (user + system, all threads, live and exited) this process has used so far, from
/// `/proc/self/stat` (clock ticks, assumed 100 Hz); `None` where there is no procfs.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
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
    let mut cpu = vec![Vec::new(); names.len()];
    for _ in 0..rounds {
        for ((name, t), c) in names.iter().zip(&mut times).zip(&mut cpu) {
            let cpu0 = cpu_seconds();
            let start = Instant::now();
            let got = run(name, &close, &params);
            t.push(start.elapsed().as_secs_f64());
            if let (Some(a), Some(b)) = (cpu0, cpu_seconds()) {
                c.push(b - a);
            }
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
    let cpu_total: Vec<f64> = cpu.iter().map(|c| c.iter().sum()).collect();
    let wall_total: Vec<f64> = times.iter().map(|t| t.iter().sum()).collect();
    println!(
        "{} bars x {} combos, {rounds} interleaved rounds, best tier {:?}",
        close.len(),
        params.len(),
        Tier::best()
    );
    println!("(cpu/wall: CPU seconds per wall second over all rounds; 2 means two busy cores)");
    for (k, (name, m)) in names.iter().zip(&medians).enumerate() {
        println!(
            "{name:>12}  median {m:8.4} s  {:6.2}x vs {}  cpu/wall {:.2}",
            medians[0] / m,
            names[0],
            cpu_total[k] / wall_total[k]
        );
    }
}
