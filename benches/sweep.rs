//! Criterion throughput of every variant on the default sweep (150,000 bars x 80 combos) and on a
//! small one (10,000 bars x 8 combos), in combos per second (criterion prints `elem/s`: one
//! element is one combo swept over the whole series). Each variant's result is checked bit for
//! bit against the reference before it is timed, so a fast wrong variant cannot post a number.
//!
//! Full run: `cargo bench --bench sweep`, about 11 minutes on 2 cores. Quick mode, under 2
//! minutes once built on an idle 2-core machine:
//! `cargo bench --bench sweep -- --quick 'sweep_small|150k_x80/rolling'` (criterion's `--quick`
//! stops each benchmark once its estimate is within 5%, and the filter, a regex over
//! `group/variant`, picks the benchmarks; those it leaves out are not checked or run at all).

mod common;

use common::{assert_same_bits, measurement_time};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hullsweep_kernel::{self as kernel, Combo};
use hullsweep_variants::{Threads, Variant};
use std::hint::black_box;
use std::time::{Duration, Instant};

const FEE: f64 = kernel::DEFAULT_FEE_PCT;

/// Whether the command line's filter (criterion's positional argument, a regex) can select `id`.
/// Only a filter of plain alternatives (`a|b`, each matched as a substring, as the regex does) is
/// read; any other regex selects everything, so nothing the filter runs goes unchecked.
fn selected(id: &str) -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Criterion's options that take a value; the filter is the first argument that is neither
    // an option nor such a value.
    const VALUED: &[&str] = &[
        "--save-baseline",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--color",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--profile-time",
        "--plotting-backend",
        "--output-format",
        "--format",
        "--logfile",
    ];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if VALUED.contains(&a.as_str()) {
            it.next();
        } else if !a.starts_with('-') {
            return a.contains(|c: char| ".*+?()[]{}^$\\".contains(c))
                || a.split('|').any(|alt| id.contains(alt));
        }
    }
    true
}

fn bench_sweep(c: &mut Criterion, group_name: &str, close: &[f64], params: &[Combo]) {
    let wanted = |v: Variant| selected(&format!("{group_name}/{}", v.name()));
    if !Variant::ALL.iter().any(|&v| wanted(v)) {
        return;
    }
    let want = kernel::sweep(close, params, FEE).expect("reference");
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Elements(params.len() as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    for &variant in Variant::ALL.iter().filter(|&&v| wanted(v)) {
        let start = Instant::now();
        let got = variant
            .sweep(close, params, FEE, Threads::Auto)
            .expect("sweep");
        let once = start.elapsed();
        assert_same_bits(variant.name(), &got, &want);
        group.measurement_time(measurement_time(once));
        group.bench_function(BenchmarkId::from_parameter(variant.name()), |b| {
            b.iter(|| variant.sweep(black_box(close), black_box(params), FEE, Threads::Auto))
        });
    }
    group.finish();
}

fn sweeps(c: &mut Criterion) {
    let close = kernel::default_close();
    let params = kernel::default_params();
    bench_sweep(c, "sweep_default_150k_x80", &close, &params);
    let small_params: Vec<Combo> = params.iter().copied().step_by(10).collect();
    bench_sweep(c, "sweep_small_10k_x8", &close[..10_000], &small_params);
}

/// Cost against window length: the same 30,000 bars over the grids 6:200:80 and 6:2000:80, for
/// `simd` (work grows with the window) and `rolling` (O(1) per bar, so it should not).
fn window_length(c: &mut Criterion) {
    let close = &kernel::default_close()[..30_000];
    let mut group = c.benchmark_group("window_length_30k_x80");
    group.throughput(Throughput::Elements(80));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    for hi in [200, 2000] {
        let id = |v: Variant| format!("window_length_30k_x80/{}/6:{hi}:80", v.name());
        if !selected(&id(Variant::Simd)) && !selected(&id(Variant::Rolling)) {
            continue;
        }
        let params = kernel::grid(kernel::GridSpec { lo: 6, hi, k: 80 }).expect("grid");
        let want = kernel::sweep(close, &params, FEE).expect("reference");
        for variant in [Variant::Simd, Variant::Rolling] {
            if !selected(&id(variant)) {
                continue;
            }
            let got = variant
                .sweep(close, &params, FEE, Threads::Fixed(1))
                .expect("sweep");
            assert_same_bits(variant.name(), &got, &want);
            let id = BenchmarkId::new(variant.name(), format!("6:{hi}:80"));
            group.bench_with_input(id, &params, |b, params| {
                b.iter(|| {
                    variant.sweep(black_box(close), black_box(params), FEE, Threads::Fixed(1))
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, sweeps, window_length);
criterion_main!(benches);
