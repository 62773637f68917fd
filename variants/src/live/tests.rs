//! The negative control: with the certification threshold forced to 0 the live events differ
//! from the reference's on flat runs, so the tests that compare them can fail.

use super::*;
use hullsweep_kernel::{backtest_events, hma, hma3};

/// Noise with long flat runs at 1.1 and 0.3, where `d` is zero or a few ulps from it.
fn flat_runs() -> Vec<f64> {
    let mut close = hullsweep_kernel::gbm(4_000, 3, 0.002).unwrap();
    for (at, v) in [(500, 1.1), (1_500, 0.3), (2_600, 1.1)] {
        close[at..at + 400].fill(v);
    }
    close
}

/// The reference's events of every combo in `Live`'s order.
fn reference(close: &[f64], params: &[Combo], fee: f64) -> Vec<Event> {
    let mut all = Vec::new();
    for (k, c) in params.iter().enumerate() {
        let [n, h, s, m, h3, t] = c.map(window);
        let (a, b) = (hma(close, n, h, s), hma3(close, m, h3, t));
        backtest_events(close, &a, &b, fee, k, |e| all.push(e));
    }
    all.sort_by_key(|e| (e.bar(), e.combo()));
    all
}

fn live_events(close: &[f64], params: &[Combo], zero: bool) -> (Vec<Event>, LiveStats) {
    let mut live = Live::new(params, 0.09).unwrap();
    live.thresholds.zero = zero;
    let mut events = Vec::new();
    live.push_many(close, &mut events).unwrap();
    (events, live.stats())
}

fn same(a: &[Event], b: &[Event]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
}

#[test]
fn the_real_threshold_matches_and_a_zero_threshold_does_not() {
    let close = flat_runs();
    let params = hullsweep_kernel::default_params();
    let want = reference(&close, &params, 0.09);
    let (got, stats) = live_events(&close, &params, false);
    assert!(same(&got, &want), "the live events are the reference's");
    assert!(stats.certified > 0 && stats.recomputed > 0, "{stats:?}");
    let (broken, stats) = live_events(&close, &params, true);
    assert!(
        !same(&broken, &want),
        "a zero threshold must change some event on flat runs ({stats:?})"
    );
}

/// Every push that changes `memory_bytes` moves `Live::growths`: flat runs (exact-value caches
/// grown late, on demand), one-bar and long chunks, several grids.
#[test]
fn memory_moves_only_with_growths() {
    let close = flat_runs();
    let grids = [
        hullsweep_kernel::default_params(),
        vec![[200, 100, 14, 200, 100, 66], [6, 3, 2, 6, 3, 2]],
    ];
    for params in grids {
        let mut live = Live::new(&params, 0.09).unwrap();
        let mut events = Vec::new();
        let (mut at, mut k) = (0, 0usize);
        while at < close.len() {
            let n = [1, 1, 7, 1, 300, 1, 64][k % 7].min(close.len() - at);
            let (before, g) = (live.memory_bytes(), Live::growths());
            live.push_many(&close[at..at + n], &mut events).unwrap();
            if live.memory_bytes() != before {
                assert_ne!(
                    Live::growths(),
                    g,
                    "memory moved at bar {at} without a growth"
                );
            }
            at += n;
            k += 1;
        }
    }
}
