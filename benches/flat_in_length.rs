//! Criterion: the streamed sweep's cost per bar·combo as the series grows, 1e5 to 1e7 bars × 80
//! combos, read from a file in chunks (`streamed/N`) and from memory in the same pieces
//! (`in_memory/N`), through the functions `hullsweep sweep` calls (`sweep_file`,
//! `sweep_series`).
//!
//! One element is one bar·combo, so a flat cost is the same `elem/s` at every length. The lab's
//! scale section runs the same to 1e9 bars as whole processes, with peak memory.
//!
//! `cargo bench --bench flat_in_length` (about two minutes once built on an idle 2-core machine:
//! the 1e7-bar sweeps take about a second each), or `cargo bench --bench flat_in_length --
//! --quick`; a filter such as `flat_in_length/streamed` picks some.

mod common;

use common::{assert_same_bits, measurement_time};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hullsweep_kernel::{self as kernel, DEFAULT_SEED, DEFAULT_SIGMA};
use hullsweep_variants::{Threads, Variant};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The lengths: each ten times the last, as far as a bench can afford (the 1e7 file is 80 MB).
const LENGTHS: [usize; 3] = [100_000, 1_000_000, 10_000_000];

fn flat_in_length(c: &mut Criterion) {
    let params = kernel::default_params();
    let (fee, variant, threads) = (kernel::DEFAULT_FEE_PCT, Variant::fastest(), Threads::Auto);
    let dir = tempfile::tempdir().expect("temporary folder");
    let mut group = c.benchmark_group("flat_in_length");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    for bars in LENGTHS {
        let close = kernel::gbm(bars, DEFAULT_SEED, DEFAULT_SIGMA).expect("gbm");
        let data = dir.path().join(format!("gbm-{bars}.npy"));
        hullsweep_data::write_gbm(&data, bars, DEFAULT_SEED, DEFAULT_SIGMA, Threads::Auto, &())
            .expect("write");
        group.throughput(Throughput::Elements((bars * params.len()) as u64));

        // Read back from the file, the streamed sweep must be the in-memory one bit for bit.
        let start = Instant::now();
        let (streamed, read, _) =
            hullsweep_data::sweep_file(&data, None, &params, fee, variant, threads, &())
                .expect("streamed sweep");
        let once = start.elapsed();
        let in_memory = hullsweep_data::sweep_series(&close, &params, fee, variant, threads, &())
            .expect("in-memory sweep");
        assert_eq!(
            read, bars as u64,
            "{bars} bars: the streamed sweep read {read}"
        );
        assert_same_bits(&format!("{bars} bars streamed"), &streamed, &in_memory);

        group.measurement_time(measurement_time(once));
        group.bench_function(BenchmarkId::new("streamed", bars), |b| {
            b.iter(|| {
                hullsweep_data::sweep_file(
                    black_box(&data),
                    None,
                    &params,
                    fee,
                    variant,
                    threads,
                    &(),
                )
            })
        });
        group.bench_function(BenchmarkId::new("in_memory", bars), |b| {
            b.iter(|| {
                hullsweep_data::sweep_series(black_box(&close), &params, fee, variant, threads, &())
            })
        });
        // The file is swept; the next is ten times its size.
        std::fs::remove_file(&data).expect("remove");
    }
    group.finish();
}

criterion_group!(benches, flat_in_length);
criterion_main!(benches);
