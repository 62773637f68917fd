//! Times `rolling` (best tier) on the lab's rolling workloads: prints one line per workload,
//! `name median_seconds`. Built at two commits and run alternately, it compares them; run with
//! 1 and 2 threads, it measures scaling (`default_20k` is the default sweep cut to 20,000 bars,
//! whose buffers fit in L2, against the 150,000 of `default`).
//!
//! `cargo run --release -p hullsweep-variants --example rolling_workloads -- [REPS] [WORKLOAD] [THREADS]`

pub use hullsweep_kernel as kernel;

#[allow(dead_code)]
#[path = "../../src/datasets.rs"]
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
    let threads: usize = std::env::args()
        .nth(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    for (name, close, params, fee) in &work {
        if only.as_deref().is_some_and(|o| o != *name) {
            continue;
        }
        let valid = ValidClose::new(close).expect("valid");
        let mut t: Vec<f64> = (0..reps)
            .map(|_| {
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
            })
            .collect();
        t.sort_by(f64::total_cmp);
        println!("{name} {:.6}", t[t.len() / 2]);
    }
}
