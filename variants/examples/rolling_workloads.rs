//! Times `rolling` (best tier) on the lab's rolling workloads: prints one line per workload,
//! `name median_seconds`. Built at two commits and run alternately, it compares them; run with
//! 1 and 2 threads, it measures scaling (`default_20k` is the default sweep cut to 20,000 bars,
//! whose buffers fit in L2, against the 150,000 of `default`).
//!
//! `THREADS` as `1,2` measures the scaling in one process, sweep by sweep in the order 1 2 2 1
//! (so a drift in the machine's speed falls on both alike), and prints `name median_1
//! median_2 ratio_of_medians median_of_paired_ratios`: on a VM whose speed drifts from minute
//! to minute, the pairs are what can be compared. `hullsweep lab` measures the default sweep
//! this way beside the machine's own ceiling (`hullsweep_lab::scaling`, the report's "2-core
//! scaling" section; docs/scaling.md explains the result).
//!
//! `cargo run --release -p hullsweep-variants --example rolling_workloads -- [REPS] [WORKLOAD] [THREADS]`

pub use hullsweep_kernel as kernel;

#[allow(dead_code)]
#[path = "../../data/src/datasets.rs"]
mod datasets;

use hullsweep_kernel::{GridSpec, ValidClose, default_close, default_params, grid};
use hullsweep_variants::Threads;
use hullsweep_variants::rolling::sweep_with_stats;
use hullsweep_variants::simd::{Tier, WmaKernel};
use std::time::Instant;

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let suite = datasets::suite();
    let by = |n: &str| suite.iter().find(|d| d.name == n).expect("dataset");
    let close = default_close();
    let long = grid(GridSpec {
        lo: 6,
        hi: 2000,
        k: 80,
    })
    .expect("grid");
    let sparse = datasets::sparse_ticks(150_000, 100.0, 0.01, 500);
    let mut work = vec![
        ("default", close.clone(), default_params(), 0.09),
        (
            "default_20k",
            close[..20_000].to_vec(),
            default_params(),
            0.09,
        ),
        ("grid_6_2000_80", close.clone(), long, 0.09),
    ];
    for n in ["flat_steps", "flat_in_noise", "tick_grid"] {
        let d = by(n);
        work.push((n, d.close.clone(), d.params.clone(), d.fee));
    }
    work.push(("sparse_ticks_150k", sparse, default_params(), 0.09));
    let only = std::env::args().nth(2).filter(|w| w != "all");
    let threads: Vec<usize> = std::env::args()
        .nth(3)
        .map(|s| s.split(',').map(|t| t.parse().expect("THREADS")).collect())
        .unwrap_or_else(|| vec![1]);
    for (name, close, params, fee) in &work {
        if only.as_deref().is_some_and(|o| o != *name) {
            continue;
        }
        let valid = ValidClose::new(close).expect("valid");
        let time = |threads: usize| {
            let s = Instant::now();
            sweep_with_stats(
                valid,
                params,
                *fee,
                Threads::Fixed(threads),
                Tier::best(),
                WmaKernel::best(),
            )
            .expect("sweep");
            s.elapsed().as_secs_f64()
        };
        report(name, reps, &threads, time);
    }
}

/// Times `time(threads)` `reps` times and prints the median, or with two thread counts, both
/// medians, their ratio and the median of the paired ratios (order 1 2 2 1).
fn report(name: &str, reps: usize, threads: &[usize], mut time: impl FnMut(usize) -> f64) {
    match *threads {
        [a, b] => {
            let (mut ta, mut tb) = (Vec::new(), Vec::new());
            for rep in 0..reps {
                if rep % 2 == 0 {
                    ta.push(time(a));
                    tb.push(time(b));
                } else {
                    tb.push(time(b));
                    ta.push(time(a));
                }
            }
            let mut paired: Vec<f64> = ta.iter().zip(&tb).map(|(a, b)| a / b).collect();
            let (ma, mb) = (median(&mut ta), median(&mut tb));
            println!(
                "{name} {ma:.6} {mb:.6} {:.3} {:.3}",
                ma / mb,
                median(&mut paired)
            );
        }
        [t] => {
            let mut ts: Vec<f64> = (0..reps).map(|_| time(t)).collect();
            println!("{name} {:.6}", median(&mut ts));
        }
        _ => panic!("THREADS is one count or two (`1,2`)"),
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
