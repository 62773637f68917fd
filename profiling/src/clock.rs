//! Nanoseconds per window element (one multiply-add) of single WMA passes, kernels interleaved,
//! so each loop's cost can be set against the fastest loop that keeps one serial add chain.

use crate::kernels::WmaInto;
use crate::timing::median;
use std::time::Instant;

/// Median ns per element of one pass of each kernel over `x` with window `w` (`reps` rounds).
pub fn ns_per_element(
    kernels: &[(&str, WmaInto)],
    x: &[f64],
    w: usize,
    reps: usize,
) -> Vec<(String, f64)> {
    let elems = ((x.len() - w + 1) * w) as f64;
    let mut out = vec![0.0; x.len()];
    let mut samples = vec![Vec::new(); kernels.len()];
    for (_, k) in kernels {
        k(x, w, &mut out);
    }
    for r in 0..reps {
        for j in 0..kernels.len() {
            let i = (j + r) % kernels.len();
            let t = Instant::now();
            (kernels[i].1)(x, w, &mut out);
            let dt = t.elapsed().as_secs_f64();
            std::hint::black_box(&out);
            samples[i].push(dt / elems * 1e9);
        }
    }
    kernels
        .iter()
        .zip(samples)
        .map(|((n, _), s)| (n.to_string(), median(&s)))
        .collect()
}
