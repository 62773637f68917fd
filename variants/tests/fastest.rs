//! `fastest`'s cost model: how many threads `rolling-rayon` takes under `Threads::Auto`, and that
//! the choice changes only the speed, never a bit of the result.

use hullsweep_variants::rolling::{MIN_POSITIONS_PER_WORKER, planned_workers};
use hullsweep_variants::{Combo, Threads, Variant, default_close, default_params};

fn every(params: &[Combo], k: usize) -> Vec<Combo> {
    params.iter().copied().step_by(k).collect()
}

#[test]
fn small_sweeps_run_on_one_thread_and_the_default_sweep_on_every_core() {
    let (close, params) = (default_close(), default_params());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Sizes where one thread beats the pool (`MIN_POSITIONS_PER_WORKER` has the measurements),
    // and, since the caller works too, two of issue 20's three small sizes where it no longer does.
    assert_eq!(
        planned_workers(1_000, &every(&params, 10), Threads::Auto),
        1
    );
    assert_eq!(
        planned_workers(10_000, &every(&params, 10), Threads::Auto),
        1
    );
    assert_eq!(
        planned_workers(1_000, &params, Threads::Auto) > 1,
        cores > 1
    );
    assert_eq!(
        planned_workers(close.len(), &every(&params, 40), Threads::Auto),
        cores.min(2)
    );
    // 150,000 x 80 is about 12 million positions: every core of a small machine, a dozen of a
    // large one.
    let want = cores.min(close.len() * params.len() / MIN_POSITIONS_PER_WORKER);
    assert_eq!(planned_workers(close.len(), &params, Threads::Auto), want);
    assert!(want >= 1);
    // An explicit count is obeyed (at most one worker per combo), whatever the size.
    assert_eq!(planned_workers(1_000, &params, Threads::Fixed(3)), 3);
    assert_eq!(planned_workers(1_000, &params[..2], Threads::Fixed(3)), 2);
    assert_eq!(planned_workers(1_000, &params, Threads::Fixed(0)), 1);
    // Combos whose windows are longer than the series cost nothing: no pool for them.
    let long: Vec<Combo> = vec![[5_000, 2_500, 70, 5_000, 2_500, 1_666]; 64];
    assert_eq!(planned_workers(1_000, &long, Threads::Auto), 1);
}

#[test]
fn every_thread_count_gives_the_same_bits() {
    let close = &default_close()[..20_000];
    let params = every(&default_params(), 5);
    let want = Variant::Reference
        .sweep(close, &params, 0.09, Threads::Fixed(1))
        .unwrap();
    for threads in [
        Threads::Auto,
        Threads::Fixed(1),
        Threads::Fixed(2),
        Threads::Fixed(3),
    ] {
        let got = Variant::fastest()
            .sweep(close, &params, 0.09, threads)
            .unwrap();
        assert_eq!(got.trades, want.trades, "{threads:?}");
        assert!(
            got.pnl
                .iter()
                .zip(&want.pnl)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{threads:?}"
        );
    }
}
