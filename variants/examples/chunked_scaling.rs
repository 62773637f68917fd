//! `fastest` on 1 and 2 threads over one long series, swept whole and pushed to a `Sweeper` in
//! pieces of 256 Ki bars (as a file is read): what the pieces cost the 2-thread speed-up.
//!
//! `cargo run --release -p hullsweep-variants --example chunked_scaling -- [BARS] [ROUNDS]`

use hullsweep_kernel::{DEFAULT_SEED, DEFAULT_SIGMA, default_params, gbm};
use hullsweep_variants::{Sweeper, Threads, Variant};
use std::time::Instant;

fn main() {
    let bars: usize = std::env::args()
        .nth(1)
        .map_or(1_500_000, |s| s.parse().unwrap());
    let rounds: usize = std::env::args().nth(2).map_or(7, |s| s.parse().unwrap());
    let close = gbm(bars, DEFAULT_SEED, DEFAULT_SIGMA).unwrap();
    let params = default_params();
    let v = Variant::fastest();
    let whole = |t: usize| {
        let s = Instant::now();
        let r = v.sweep(&close, &params, 0.09, Threads::Fixed(t)).unwrap();
        std::hint::black_box(r);
        s.elapsed().as_secs_f64() * 1e3
    };
    let chunked = |t: usize| {
        let s = Instant::now();
        let mut sw = Sweeper::new(&params, 0.09, v, Threads::Fixed(t)).unwrap();
        for c in close.chunks(1 << 18) {
            sw.push(c).unwrap();
        }
        std::hint::black_box(sw.finish().unwrap());
        s.elapsed().as_secs_f64() * 1e3
    };
    let mut m: [Vec<f64>; 4] = Default::default();
    for _ in 0..rounds {
        m[0].push(whole(1));
        m[1].push(whole(2));
        m[2].push(chunked(1));
        m[3].push(chunked(2));
    }
    for v in m.iter_mut() {
        v.sort_by(f64::total_cmp);
    }
    let med = |v: &Vec<f64>| v[v.len() / 2];
    println!(
        "whole 1T {:.1} 2T {:.1} ratio {:.3} | chunked 1T {:.1} 2T {:.1} ratio {:.3}",
        med(&m[0]),
        med(&m[1]),
        med(&m[0]) / med(&m[1]),
        med(&m[2]),
        med(&m[3]),
        med(&m[2]) / med(&m[3])
    );
}
