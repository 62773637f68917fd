//! Every variant's recorded runs (`Variant::sweep_runs`) against the kernel, bit for bit: each
//! bar return (`backtest_returns`), each trade (`trades`), the metrics; on the gate's suite and on
//! random series. And no look-ahead: a bar's events and return never depend on later bars.

mod common;

use common::series::{case, series};
use hullsweep_kernel::{Combo, Metrics, Trade, ValidClose, run_combo_returns, trades};
use hullsweep_variants::{ComboRun, ReturnScratch, Threads, Variant};
use proptest::prelude::*;

#[allow(dead_code)]
#[path = "../../data/src/datasets.rs"]
mod datasets;

/// What a run hands back: its returns, its `(exit_bar, pnl)` trades, its metrics.
type Seen = (Vec<f64>, Vec<(usize, f64)>, Metrics);

fn seen(run: &ComboRun<'_>) -> Seen {
    let mut returns = Vec::new();
    run.for_each_return(|t, r| {
        assert_eq!(t, returns.len(), "bars in order");
        returns.push(r);
    });
    // Every path (the widest this CPU runs, and the portable one where that is another), in
    // blocks of every shape: shorter than a step of either path, not a whole number of steps,
    // many steps.
    let wide = ReturnScratch::new(1).is_wide();
    for block in [1, 3, 13, 4096] {
        let scratches = [ReturnScratch::new(block), ReturnScratch::portable(block)];
        for mut scratch in scratches.into_iter().take(if wide { 2 } else { 1 }) {
            let mut filled = Vec::new();
            run.for_each_block(&mut scratch, |start, r| {
                assert_eq!(start, filled.len(), "blocks in order");
                filled.extend_from_slice(r);
            });
            let path = if scratch.is_wide() {
                "wide"
            } else {
                "portable"
            };
            assert_eq!(bits(&filled), bits(&returns), "blocks of {block}, {path}");
            if block == 13 {
                assert_flags(run, &mut scratch, &returns, path);
            }
        }
    }
    (returns, run.trades().collect(), *run.metrics())
}

/// Each block's flag from `for_each_block_within` says whether its returns are all within the
/// limit, and a flagged block (done again bar by bar) gives the same bits.
fn assert_flags(run: &ComboRun<'_>, scratch: &mut ReturnScratch, returns: &[f64], path: &str) {
    let typical = returns.iter().map(|r| r.abs()).fold(0.0, f64::max) / 2.0;
    for limit in [f64::INFINITY, typical, 0.0] {
        let mut filled = Vec::new();
        run.for_each_block_within(scratch, limit, |_, r, within| {
            let all = r.iter().all(|x| x.abs() <= limit);
            assert_eq!(within, all, "{path}, limit {limit}");
            filled.extend_from_slice(r);
        });
        assert_eq!(bits(&filled), bits(returns), "{path}, limit {limit}");
    }
}

fn runs(v: Variant, close: &[f64], params: &[Combo], fee: f64, threads: Threads) -> Vec<Seen> {
    let valid = ValidClose::new(close).unwrap();
    v.sweep_runs(valid, params, fee, threads, seen).unwrap()
}

fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

/// Every variant (and `rolling-rayon` on 1 and 3 threads) against the kernel, combo by combo.
fn assert_matches_kernel(name: &str, close: &[f64], params: &[Combo], fee: f64) {
    let metrics = hullsweep_kernel::sweep_metrics(close, params, fee).unwrap();
    let all: Vec<usize> = (0..params.len()).collect();
    let log: Vec<Trade> = trades(ValidClose::new(close).unwrap(), params, fee, &all).unwrap();
    let want: Vec<Vec<f64>> = params
        .iter()
        .map(|p| run_combo_returns(close, p, fee))
        .collect();
    let mut settings: Vec<(String, Variant, Threads)> = Variant::ALL
        .iter()
        .map(|&v| (v.name().to_string(), v, Threads::Auto))
        .collect();
    for t in [1, 3] {
        settings.push((
            format!("rolling-rayon/{t}"),
            Variant::RollingRayon,
            Threads::Fixed(t),
        ));
    }
    for (label, v, threads) in settings {
        for (k, (returns, got_trades, m)) in runs(v, close, params, fee, threads).iter().enumerate()
        {
            assert_eq!(
                bits(returns),
                bits(&want[k]),
                "{name}: {label}, combo {k}: returns"
            );
            let want_trades: Vec<(usize, f64)> = log
                .iter()
                .filter(|t| t.combo == k)
                .map(|t| (t.exit_bar as usize, t.pnl))
                .collect();
            assert_eq!(
                got_trades.len(),
                want_trades.len(),
                "{name}: {label}, combo {k}"
            );
            for (a, b) in got_trades.iter().zip(&want_trades) {
                assert!(
                    a.0 == b.0 && a.1.to_bits() == b.1.to_bits(),
                    "{name}: {label}, combo {k}: {a:?} != {b:?}"
                );
            }
            assert!(
                m.same_bits(&metrics[k]),
                "{name}: {label}, combo {k}: metrics"
            );
        }
    }
}

#[test]
fn every_variant_gives_the_kernels_returns_on_the_gate_suite() {
    for d in datasets::suite() {
        assert_matches_kernel(&d.name, &d.close, &d.params, d.fee);
    }
}

#[test]
fn a_hand_example_has_the_returns_of_its_definition() {
    // The kernel on given indicators (d = hma - hma3), fee 0.5: bar 0 sets prev = 0; bar 1
    // (d < 0 <= prev) opens short at 100; bar 2 (prev < 0 < d) closes it and opens long at 110;
    // bar 3 is missing (and its NaN d resets prev, so bar 4 cannot signal); bar 4 marks the
    // long at 99.
    let close = [100.0, 100.0, 110.0, f64::NAN, 99.0];
    let hma = [0.0, -1.0, 1.0, f64::NAN, -1.0];
    let r = hullsweep_kernel::backtest_returns(&close, &hma, &[0.0; 5], 0.5);
    // The loop's `pos as f64` of a short.
    let short = -1.0;
    let realized = 0.0 + short * (110.0 / 100.0 - 1.0) * 100.0 - 0.5;
    let e1 = 0.0 + short * (100.0 / 100.0 - 1.0) * 100.0;
    let e4 = realized + 1.0 * (99.0 / 110.0 - 1.0) * 100.0;
    let want = [0.0, e1 - 0.0, realized - e1, 0.0, e4 - realized];
    assert_eq!(bits(&r), bits(&want));
    assert!((realized - -10.5).abs() < 1e-12 && (e4 - realized - -10.0).abs() < 1e-12);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn every_variant_gives_the_kernels_returns_on_random_series((close, params, fee) in case()) {
        assert_matches_kernel("proptest", &close, &params, fee);
    }

    /// No look-ahead: replacing every bar after `t` (by other prices, NaN or nothing) changes
    /// no position change at or before `t` and no bar return at or before `t`, in any variant.
    #[test]
    fn later_bars_change_nothing_before_them(
        (close, params, fee) in case(),
        tail in series(),
        cut in 0.0f64..1.0,
    ) {
        let t = ((close.len() as f64 * cut) as usize).min(close.len() - 1);
        let mut other = close[..=t].to_vec();
        other.extend_from_slice(&tail);
        for &v in Variant::ALL {
            let a = runs(v, &close, &params, fee, Threads::Auto);
            let b = runs(v, &other, &params, fee, Threads::Auto);
            let changes = |c: &[f64]| v
                .sweep_runs(ValidClose::new(c).unwrap(), &params, fee, Threads::Auto, |r| {
                    r.changes().iter().filter(|c| c.bar <= t).copied().collect::<Vec<_>>()
                })
                .unwrap();
            prop_assert_eq!(changes(&close), changes(&other), "{}: changes up to bar {}", v.name(), t);
            for k in 0..params.len() {
                prop_assert_eq!(bits(&a[k].0[..=t]), bits(&b[k].0[..=t]), "{}: returns up to bar {}", v.name(), t);
            }
        }
    }
}
