//! Shared helpers for the variant tests: run every implementation (every variant, every thread
//! setting of rayon, every SIMD tier this CPU has) and demand bit-identity with the reference.

#![allow(dead_code)]

pub mod series;

use hullsweep_kernel::{Combo, SweepResult, sweep};
use hullsweep_variants::simd::{Tier, sweep_with};
use hullsweep_variants::{Threads, Variant};

/// Every implementation to hold against the reference, by name.
pub fn implementations(
    close: &[f64],
    params: &[Combo],
    fee: f64,
) -> Vec<(String, Result<SweepResult, hullsweep_kernel::KernelError>)> {
    let mut out = Vec::new();
    for &v in Variant::ALL {
        out.push((
            v.name().to_string(),
            v.sweep(close, params, fee, Threads::Auto),
        ));
    }
    for t in [1, 2, 3] {
        out.push((
            format!("rayon/{t}"),
            Variant::Rayon.sweep(close, params, fee, Threads::Fixed(t)),
        ));
    }
    for tier in Tier::available() {
        let kernel = tier.kernel().expect("available tier has a kernel");
        out.push((
            format!("simd/{}", tier.name()),
            sweep_with(kernel, close, params, fee),
        ));
    }
    out
}

/// Asserts every implementation returns the reference's result bit for bit; returns it.
pub fn assert_all_identical(
    dataset: &str,
    close: &[f64],
    params: &[Combo],
    fee: f64,
) -> SweepResult {
    let want = sweep(close, params, fee).expect("reference accepts the dataset");
    for (name, got) in implementations(close, params, fee) {
        let got = got.unwrap_or_else(|e| panic!("{dataset}: {name} failed: {e}"));
        assert_identical(dataset, &name, params, &want, &got);
    }
    want
}

pub fn assert_identical(
    dataset: &str,
    name: &str,
    params: &[Combo],
    want: &SweepResult,
    got: &SweepResult,
) {
    assert_eq!(got.len(), want.len(), "{dataset}: {name} combo count");
    assert_eq!(want.len(), params.len(), "{dataset}: reference combo count");
    for (k, combo) in params.iter().enumerate() {
        assert!(
            got.trades[k] == want.trades[k] && got.pnl[k].to_bits() == want.pnl[k].to_bits(),
            "{dataset}: {name} combo {k} {combo:?}: got ({}, {}), reference ({}, {})",
            got.pnl[k],
            got.trades[k],
            want.pnl[k],
            want.trades[k],
        );
    }
}
