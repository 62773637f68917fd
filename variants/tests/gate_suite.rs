//! Every variant and every SIMD tier of this target against the reference, bit for bit, on the
//! gate's generated dataset suite (`data/src/datasets.rs`) cut to a size that runs under emulation.
//!
//! `scripts/test-aarch64` runs this under qemu, where the full suite took 100 s per implementation
//! on the 2-core development VM (about 20 minutes for all of them; the default dataset alone more).
//! The cuts, and why they keep every edge the suite is there for:
//! - a series of up to 20,000 bars is kept **whole**: its NaN positions (first and last bar,
//!   pairs, runs of 1 to 450 bars, leading and trailing runs), flat runs at 1.1 and 0.3, tick
//!   repeats and price scale stay exactly where the suite put them;
//! - the combos of a dataset with more than 5,000 bars are thinned from 32 to 9: every 8th one
//!   (grid and random windows), every combo whose windows are all <= 4 (windows of 1 and 2, the
//!   short cases that need care) and the combo with the longest window, so windows from 1 to the
//!   dataset's longest still meet NaN runs shorter and longer than themselves. What is lost is
//!   some exact coincidences (a NaN run of 200 bars against the grid's window of 200); the full
//!   suite, with them, runs natively in `gate/tests/gate_golden.rs`;
//! - smaller datasets (the short series, windows of 1, windows past the end, the 2-bar series)
//!   keep every combo;
//! - the default dataset (150,000 bars x 80 combos, the plain case, no edges) is cut to its
//!   first 10,000 bars and the same thinning (11 combos, windows 6 to 200).
//!
//! Natively this runs in seconds, so it also runs in `cargo test --workspace`.

// The suite's own source, so this test and the gate can never disagree on what the suite is.
// Its unit tests come with it; `scripts/test-aarch64` skips them (`--skip datasets::tests`: they
// are checks of the suite itself, which hullsweep-data runs natively).
#[allow(dead_code)]
#[path = "../../data/src/datasets.rs"]
mod datasets;

use datasets::Dataset;
use hullsweep_kernel::{Combo, SweepResult};
use hullsweep_variants::simd::{Tier, sweep_with};
use hullsweep_variants::{Threads, Variant};

mod common;

/// The largest window a combo asks for (windows past the series included).
fn longest(c: &Combo) -> i64 {
    c.iter().copied().max().unwrap_or(0)
}

/// The dataset as this test runs it (see the module docs for the rule).
fn sized(mut d: Dataset) -> Dataset {
    if d.name == "default" {
        d.close.truncate(10_000);
    }
    if d.close.len() > 5_000 {
        let longest_at = (0..d.params.len()).max_by_key(|&k| longest(&d.params[k]));
        d.params = d
            .params
            .iter()
            .enumerate()
            .filter(|&(k, c)| k % 8 == 0 || longest(c) <= 4 || Some(k) == longest_at)
            .map(|(_, c)| *c)
            .collect();
    }
    d
}

/// What runs against the reference: every variant (rayon on 2 threads), `fastest` by name, and
/// every SIMD tier this CPU has, forced.
fn implementations(
    d: &Dataset,
) -> Vec<(String, Result<SweepResult, hullsweep_kernel::KernelError>)> {
    let mut out = Vec::new();
    for &v in Variant::ALL {
        out.push((
            format!("{}/2 threads", v.name()),
            v.sweep(&d.close, &d.params, d.fee, Threads::Fixed(2)),
        ));
    }
    let fastest = Variant::from_name("fastest").expect("fastest resolves");
    out.push((
        format!("fastest ({})", fastest.name()),
        fastest.sweep(&d.close, &d.params, d.fee, Threads::Auto),
    ));
    for tier in Tier::available() {
        let kernel = tier.kernel().expect("available tier has a kernel");
        out.push((
            format!("simd/{}", tier.name()),
            sweep_with(kernel, &d.close, &d.params, d.fee),
        ));
    }
    out
}

#[test]
fn every_variant_and_tier_is_bit_identical_on_the_sized_gate_suite() {
    let suite: Vec<Dataset> = datasets::suite().into_iter().map(sized).collect();
    assert!(suite.len() >= 16, "the suite lost datasets");
    // One thread per dataset: the harness would run a single test on one core.
    std::thread::scope(|s| {
        for d in &suite {
            s.spawn(move || {
                let want = hullsweep_kernel::sweep(&d.close, &d.params, d.fee)
                    .unwrap_or_else(|e| panic!("{}: the reference failed: {e}", d.name));
                for (name, got) in implementations(d) {
                    let got = got.unwrap_or_else(|e| panic!("{}: {name} failed: {e}", d.name));
                    common::assert_identical(&d.name, &name, &d.params, &want, &got);
                }
                eprintln!(
                    "{}: {} bars x {} combos, every implementation bit-identical",
                    d.name,
                    d.close.len(),
                    d.params.len()
                );
            });
        }
    });
}

#[test]
fn the_sizing_keeps_the_edges() {
    let suite: Vec<Dataset> = datasets::suite().into_iter().map(sized).collect();
    for d in &suite {
        assert!(!d.params.is_empty(), "{}", d.name);
        if d.name != "default" {
            let full = datasets::suite()
                .into_iter()
                .find(|f| f.name == d.name)
                .expect("same suite");
            assert_eq!(d.close.len(), full.close.len(), "{}: series cut", d.name);
            let max = |p: &[Combo]| p.iter().map(longest).max();
            assert_eq!(max(&d.params), max(&full.params), "{}", d.name);
            let short = |p: &[Combo]| p.iter().filter(|c| longest(c) <= 4).count();
            assert_eq!(short(&d.params), short(&full.params), "{}", d.name);
        }
    }
}
