//! Criterion timings of the two halves of `hullsweep pbo`: building fold statistics from rows
//! (elements per second: one element is one return), and CSCV itself at S = 16 (12,870 splits)
//! over N = 10,000 combos, on 1 and 2 threads. CSCV's cost does not depend on T: its input is
//! the fold statistics, here of a synthetic 150,000-bar matrix streamed once in the setup.
//!
//! `cargo bench -p hullsweep-research --bench cscv` (about 2 minutes on 2 cores; the setup
//! streams 1.5e9 returns first). docs/research.md quotes the medians.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hullsweep_research::{FoldStatsBuilder, Metric, cscv};
use std::hint::black_box;
use std::time::Duration;

const BARS: usize = 150_000;
const COMBOS: usize = 10_000;
const FOLDS: usize = 16;
/// Rows generated and pushed at a time.
const ROWS: usize = 500;

/// xorshift64*: a cheap deterministic stream; returns are uniform in [-1, 1) plus a small
/// per-combo drift, so combos differ in mean and the ranks are not all ties.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        bits as f64 / (1u64 << 52) as f64 - 1.0
    }
}

fn fill(rng: &mut Rng, rows: &mut [f64]) {
    for (i, x) in rows.iter_mut().enumerate() {
        *x = rng.next() + 1e-3 * ((i % COMBOS) as f64 / COMBOS as f64 - 0.5);
    }
}

fn benches(c: &mut Criterion) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut rows = vec![0.0; ROWS * COMBOS];

    let mut group = c.benchmark_group("fold_stats");
    group.throughput(Throughput::Elements((ROWS * COMBOS) as u64));
    fill(&mut rng, &mut rows);
    group.bench_function(format!("push_{ROWS}x{COMBOS}"), |b| {
        let mut builder = FoldStatsBuilder::new(BARS, COMBOS, FOLDS).unwrap();
        let mut at = 0;
        b.iter(|| {
            if at + ROWS > BARS {
                builder = FoldStatsBuilder::new(BARS, COMBOS, FOLDS).unwrap();
                at = 0;
            }
            builder.push_rows(at, black_box(&rows)).unwrap();
            at += ROWS;
        })
    });
    group.finish();

    let mut builder = FoldStatsBuilder::new(BARS, COMBOS, FOLDS).unwrap();
    for at in (0..BARS).step_by(ROWS) {
        fill(&mut rng, &mut rows);
        builder.push_rows(at, &rows).unwrap();
    }
    let stats = builder.finish().unwrap();

    let mut group = c.benchmark_group("cscv_S16_N10000");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for metric in Metric::ALL {
        for threads in [1, 2] {
            let id = BenchmarkId::new(metric.name(), format!("{threads}T"));
            group.bench_function(id, |b| {
                b.iter(|| cscv(black_box(&stats), metric, threads).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(cscv_benches, benches);
criterion_main!(cscv_benches);
