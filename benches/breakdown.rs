//! Criterion: the phases of the default sweep (`hullsweep sweep`, no flags) that public APIs
//! time alone, each on its own, beside the whole process and an empty one.
//!
//! The phases, in the command's order: `series` (the built-in 150,000-bar GBM series,
//! `kernel::default_close`), `grid` (the default grid expanded to 80 combos), `checks` (every
//! price checked, `kernel::validate_close`), `sweep` (`fastest` on all cores through
//! `sweep_series`, as the command runs it), `output` (the results as CSV); then `process/empty`
//! (`hullsweep --version`: exec, loading, exit) and `process/sweep` (the whole command, its
//! results to /dev/null). The lab's breakdown section splits the sweep further (planning,
//! preparation, fast path, fallback, event loop) and accounts for the remainder.
//!
//! `cargo bench --bench breakdown` (under a minute once built), or `cargo bench --bench
//! breakdown -- --quick`; a filter such as `breakdown/process` picks some.

mod common;

use common::{assert_same_bits, hullsweep};
use criterion::{Criterion, criterion_group, criterion_main};
use hullsweep_kernel as kernel;
use hullsweep_variants::{Threads, Variant};
use std::hint::black_box;
use std::time::Duration;

fn breakdown(c: &mut Criterion) {
    let close = kernel::default_close();
    let params = kernel::default_params();
    let fee = kernel::DEFAULT_FEE_PCT;
    let (variant, threads) = (Variant::fastest(), Threads::Auto);
    let mut group = c.benchmark_group("breakdown");
    // Every phase is milliseconds or less: 20 samples fit criterion's default times.
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));

    group.bench_function("series", |b| b.iter(kernel::default_close));
    group.bench_function("grid", |b| {
        b.iter(|| kernel::grid(black_box(kernel::DEFAULT_GRID)))
    });
    group.bench_function("checks", |b| {
        b.iter(|| kernel::validate_close(black_box(&close)))
    });
    let sweep = || hullsweep_data::sweep_series(&close, &params, fee, variant, threads, &());
    let result = sweep().expect("sweep");
    let reference = kernel::sweep(&close, &params, fee).expect("reference");
    assert_same_bits(variant.name(), &result, &reference);
    group.bench_function("sweep", |b| b.iter(&sweep));
    group.bench_function("output", |b| {
        b.iter(|| hullsweep_data::results::sweep_csv(black_box(&params), black_box(&result)))
    });
    group.bench_function("process/empty", |b| b.iter(|| hullsweep(&["--version"])));
    group.bench_function("process/sweep", |b| b.iter(|| hullsweep(&["sweep"])));
    group.finish();
}

criterion_group!(benches, breakdown);
criterion_main!(benches);
