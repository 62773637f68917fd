//! Load-balance model of the rayon variant: times each default combo alone (single thread, SIMD
//! pipeline), then replays the schedules on 2 workers. Where the machine cannot give a process two
//! free cores, this separates how well the work splits from how much CPU the process was lent.
//!
//! `cargo run --release -p hullsweep-variants --example balance -- [WORKERS]`

use hullsweep_kernel::{default_close, default_params};
use hullsweep_variants::rayon::combo_cost;
use hullsweep_variants::simd::{WmaKernel, sweep_with};
use std::time::Instant;

/// Finishing time of the last worker when jobs are taken in `order` by whichever worker is free.
fn dynamic_makespan(order: &[usize], t: &[f64], workers: usize) -> f64 {
    let mut free = vec![0.0f64; workers];
    for &k in order {
        let w = (0..workers)
            .min_by(|&a, &b| free[a].total_cmp(&free[b]))
            .unwrap();
        free[w] += t[k];
    }
    free.into_iter().fold(0.0, f64::max)
}

fn main() {
    let workers: usize = std::env::args()
        .nth(1)
        .map_or(2, |s| s.parse().expect("workers"));
    let close = default_close();
    let params = default_params();
    let kernel = WmaKernel::best();
    let t: Vec<f64> = params
        .iter()
        .map(|combo| {
            (0..5)
                .map(|_| {
                    let start = Instant::now();
                    sweep_with(kernel, &close, std::slice::from_ref(combo), 0.09).unwrap();
                    start.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min)
        })
        .collect();
    let total: f64 = t.iter().sum();
    let mut by_cost: Vec<usize> = (0..params.len()).collect();
    by_cost.sort_by_key(|&k| std::cmp::Reverse(combo_cost(&params[k], close.len())));
    let in_order: Vec<usize> = (0..params.len()).collect();
    let chunk = params.len().div_ceil(workers);
    let static_split = t
        .chunks(chunk)
        .map(|c| c.iter().sum::<f64>())
        .fold(0.0, f64::max);
    println!(
        "{} combos, single-thread sum {total:.4} s, ideal on {workers}: {:.4} s",
        t.len(),
        total / workers as f64
    );
    for (name, m) in [
        (
            "dynamic, largest cost first (the rayon variant)",
            dynamic_makespan(&by_cost, &t, workers),
        ),
        (
            "dynamic, grid order",
            dynamic_makespan(&in_order, &t, workers),
        ),
        ("static contiguous chunks", static_split),
    ] {
        println!("{name:>48}: makespan {m:.4} s, speedup {:.3}x", total / m);
    }
}
