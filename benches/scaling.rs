//! Criterion: `fastest` on exactly 1 and 2 threads on issue 30's 1.5M bars × 80 combos, in one
//! process (`in_process/N`) and as whole `hullsweep sweep` processes (`process/N`), per element.
//!
//! One element is one bar·combo, so criterion's `elem/s` compare across the two; the 2-thread
//! rate over the 1-thread rate is the scaling (issue 30's target: 1.9× as whole processes).
//! The lab's 2-core scaling section measures the same in interleaved pairs, which is what a
//! shared machine's drift needs; criterion runs each benchmark after the other.
//!
//! `cargo bench --bench scaling` (about a minute once built on an idle 2-core machine), or
//! `cargo bench --bench scaling -- --quick` (a few seconds a benchmark); a filter such as
//! `scaling/in_process` picks some.

mod common;

use common::{assert_same_bits, hullsweep, measurement_time};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hullsweep_kernel::{self as kernel, DEFAULT_SEED, DEFAULT_SIGMA};
use hullsweep_variants::{Threads, Variant};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Issue 30's series length.
const BARS: usize = 1_500_000;

/// `hullsweep sweep --data FILE --threads N` to exit, its results to /dev/null.
fn process(data: &std::path::Path, threads: usize) -> Duration {
    let threads = threads.to_string();
    let args = [
        "sweep",
        "--variant",
        "fastest",
        "--threads",
        &threads,
        "--data",
    ];
    let mut args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    args.push(data.as_os_str());
    hullsweep(&args)
}

fn scaling(c: &mut Criterion) {
    let close = kernel::gbm(BARS, DEFAULT_SEED, DEFAULT_SIGMA).expect("gbm");
    let params = kernel::default_params();
    let fee = kernel::DEFAULT_FEE_PCT;
    let variant = Variant::fastest();
    let mut group = c.benchmark_group("scaling");
    group.throughput(Throughput::Elements((BARS * params.len()) as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));

    // The two thread counts must give the same bits, or the ratio compares different work.
    let sweep = |threads| variant.sweep(&close, &params, fee, Threads::Fixed(threads));
    let one = sweep(1).expect("sweep");
    let two = sweep(2).expect("sweep");
    assert_same_bits(&format!("{} on 2 threads", variant.name()), &two, &one);

    for threads in [1, 2] {
        let start = Instant::now();
        sweep(threads).expect("sweep");
        group.measurement_time(measurement_time(start.elapsed()));
        group.bench_function(BenchmarkId::new("in_process", threads), |b| {
            b.iter(|| {
                variant.sweep(
                    black_box(&close),
                    black_box(&params),
                    fee,
                    Threads::Fixed(threads),
                )
            })
        });
    }

    // The processes sweep the same series from a file, as a user's `--data` run does.
    let dir = tempfile::tempdir().expect("temporary folder");
    let data = dir.path().join(format!("gbm-{BARS}.npy"));
    hullsweep_data::write_gbm(&data, BARS, DEFAULT_SEED, DEFAULT_SIGMA, Threads::Auto, &())
        .expect("write");
    for threads in [1, 2] {
        group.measurement_time(measurement_time(process(&data, threads)));
        group.bench_function(BenchmarkId::new("process", threads), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| process(&data, threads)).sum())
        });
    }
    group.finish();
}

criterion_group!(benches, scaling);
criterion_main!(benches);
