//! Criterion latency of one `Live::push` (one bar, every combo) after a warm-up of the 150,000
//! default bars, for the default 80 combos and for 10,000 (`grid2` of "6:200:100" x "6:200:100"):
//! each timed iteration pushes the next bar of the same generator's stream, so the state is the
//! live one, not a replay. Before it is timed, each setup's pushes are checked against the
//! reference's events on a prefix, so a fast wrong `Live` cannot post a number.
//!
//! `cargo bench --bench live` (about a minute once built; most of it the 10,000-combo warm-up).
//! The per-bar p50/p99/max and the adversarial datasets: `variants/examples/live_latency.rs`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hullsweep_kernel::{self as kernel, Combo, Event};
use hullsweep_variants::Live;
use std::hint::black_box;
use std::time::{Duration, Instant};

const FEE: f64 = kernel::DEFAULT_FEE_PCT;
const WARM: usize = 150_000;

/// `Live`'s events on `close` equal the kernel's, combo by combo in bar order.
fn check(close: &[f64], params: &[Combo]) {
    let mut live = Live::new(params, FEE).expect("valid params");
    let mut got = Vec::new();
    live.push_many(close, &mut got).expect("valid bars");
    let mut want = Vec::new();
    for (k, c) in params.iter().enumerate() {
        let [n, h, s, m, h3, t] = c.map(kernel::window);
        let (a, b) = (kernel::hma(close, n, h, s), kernel::hma3(close, m, h3, t));
        kernel::backtest_events(close, &a, &b, FEE, k, |e| want.push(e));
    }
    want.sort_by_key(|e: &Event| (e.bar(), e.combo()));
    assert!(
        got.len() == want.len() && got.iter().zip(&want).all(|(a, b)| a.same(b)),
        "Live differs from the reference"
    );
}

fn bench_push(c: &mut Criterion) {
    // The default series and what the same generator gives after it.
    let series = kernel::gbm(
        WARM + 1_000_000,
        kernel::DEFAULT_SEED,
        kernel::DEFAULT_SIGMA,
    )
    .expect("generator");
    let (history, next) = series.split_at(WARM);
    let grids: [(&str, Vec<Combo>); 2] = [
        ("80", kernel::default_params()),
        (
            "10000",
            kernel::grid2("6:200:100".parse().unwrap(), "6:200:100".parse().unwrap()).unwrap(),
        ),
    ];
    let mut group = c.benchmark_group("live_push_after_150k");
    group.throughput(Throughput::Elements(1));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(4));
    for (name, params) in &grids {
        // A checked prefix: the reference's cost grows with the windows, so a few thousand bars
        // and a slice of the combos.
        let sample: Vec<Combo> = params
            .iter()
            .step_by(params.len() / 20 + 1)
            .copied()
            .collect();
        check(&history[..4_000], &sample);
        let mut live = Live::new(params, FEE).expect("valid params");
        let mut events = Vec::new();
        live.push_many(history, &mut events).expect("valid bars");
        let mut at = 0;
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    events.clear();
                    live.push(next[at % next.len()], &mut events)
                        .expect("valid bar");
                    at += 1;
                }
                black_box(&events);
                start.elapsed()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_push);
criterion_main!(benches);
