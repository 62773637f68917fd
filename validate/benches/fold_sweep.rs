//! Criterion timings of the fold sweep beside the plain sweep it extends, on the default series
//! and grid (150,000 bars x 80 combos, `fastest`, 2 threads): the plain sweep, the fold sweep at
//! 16 folds, and `validate` (fold sweep, CSCV, deflated Sharpe). `cargo bench -p
//! hullsweep-validate --bench fold_sweep`; the interleaved ratios in docs/research.md come from
//! `examples/fold_cost.rs`.

use criterion::{Criterion, criterion_group, criterion_main};
use hullsweep_kernel::{DEFAULT_FEE_PCT, ValidClose, default_close, default_params};
use hullsweep_research::Metric;
use hullsweep_validate::{FoldSpec, Plan, fold_sweep, validate};
use hullsweep_variants::{Threads, Variant};
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let (close, params) = (default_close(), default_params());
    let valid = ValidClose::new(&close).expect("the default series is valid");
    let (v, t, fee) = (Variant::fastest(), Threads::Fixed(2), DEFAULT_FEE_PCT);
    let spec = FoldSpec {
        folds: Some(16),
        walk: None,
    };
    let plan = Plan {
        folds: 16,
        metric: Metric::Sharpe,
        walk: None,
        oos_returns: false,
    };
    let mut g = c.benchmark_group("fold_sweep/default");
    g.sample_size(20);
    g.bench_function("plain sweep", |b| {
        b.iter(|| black_box(v.sweep(&close, &params, fee, t).expect("sweep")))
    });
    g.bench_function("fold sweep, 16 folds", |b| {
        b.iter(|| black_box(fold_sweep(v, valid, &params, fee, t, spec, None).expect("folds")))
    });
    g.bench_function("validate, 16 folds", |b| {
        b.iter(|| black_box(validate(v, valid, &params, fee, t, plan, None).expect("validate")))
    });
    g.finish();
}

criterion_group!(fold, benches);
criterion_main!(fold);
