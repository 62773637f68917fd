//! Certification stats and timing of the `rolling` variant on the default sweep or a grid.
//!
//! `cargo run --release -p hullsweep-variants --example rolling_stats -- [BARS] [LO:HI:K]`

use hullsweep_kernel::{GridSpec, ValidClose, default_close, grid};
use hullsweep_variants::Threads;
use hullsweep_variants::rolling::sweep_with_stats;
use hullsweep_variants::simd::{Tier, WmaKernel};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut close = default_close();
    if let Some(b) = args
        .first()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&b| b > 0)
    {
        close.truncate(b);
    }
    let spec: GridSpec = args
        .get(1)
        .map_or("6:200:80", String::as_str)
        .parse()
        .expect("grid");
    let params = grid(spec).expect("grid");
    let valid = ValidClose::new(&close).expect("valid");
    for _ in 0..3 {
        let t = Instant::now();
        let (_, stats) = sweep_with_stats(
            valid,
            &params,
            0.09,
            Threads::Fixed(1),
            Tier::best(),
            WmaKernel::best(),
        )
        .expect("sweep");
        println!("{:.4} s  {stats:?}", t.elapsed().as_secs_f64());
    }
}
