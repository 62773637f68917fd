//! `rolling` sweeps a long series a block of bars at a time (`rolling::BLOCK_BARS`); every
//! blocking must give the reference's bits: block boundaries anywhere (through NaN runs, flat
//! runs, fallback stretches), resumed sweeps, every tier, one worker or two.

mod common;

use hullsweep_kernel::{Combo, SweepResult, ValidClose, default_params, derive_windows, gbm};
use hullsweep_variants::rolling::{self, BLOCK_BARS, Stats};
use hullsweep_variants::simd::Tier;
use hullsweep_variants::{Backtest, Threads, Variant};
use proptest::prelude::*;

/// The sweep of `close` in blocks of `block` bars, resumed at `from` from the states the
/// reference-exact `simd` variant reached there.
fn blocked(
    close: &[f64],
    params: &[Combo],
    fee: f64,
    tier: Tier,
    threads: usize,
    from: usize,
    block: usize,
) -> (SweepResult, Stats) {
    let mut states = vec![Backtest::new(); params.len()];
    if from > 0 {
        Variant::Simd
            .sweep_from(
                ValidClose::new(&close[..from]).expect("valid"),
                params,
                fee,
                Threads::Fixed(1),
                0,
                &mut states,
            )
            .expect("the head");
    }
    let stats = rolling::sweep_from_in_blocks(
        ValidClose::new(close).expect("valid"),
        params,
        fee,
        Threads::Fixed(threads),
        tier,
        from,
        &mut states,
        block,
    )
    .expect("sweep");
    let result = SweepResult {
        pnl: states.iter().map(Backtest::pnl).collect(),
        trades: states.iter().map(Backtest::trades).collect(),
    };
    (result, stats)
}

/// Noise, flat runs at values not exact in binary (the fallback's ground) and NaN runs, each
/// piece a few hundred bars, so small blocks cut through all of them.
fn rough(n: usize) -> Vec<f64> {
    let noise = gbm(n, 7, 0.01).expect("gbm");
    (0..n)
        .map(|i| match (i / 150) % 7 {
            2 => 1.1,
            5 if i % 150 < 9 => f64::NAN,
            _ => noise[i],
        })
        .collect()
}

#[test]
fn block_boundaries_anywhere_give_the_reference_bits() {
    let close = rough(1500);
    let params: Vec<Combo> = [1, 2, 6, 17, 40].map(derive_windows).to_vec();
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).expect("reference");
    let whole = blocked(&close, &params, 0.09, Tier::best(), 1, 0, close.len()).1;
    assert!(
        whole.fallback_bars > 0,
        "the series must exercise the fallback"
    );
    for block in [1, 2, 7, 64, 149, 150, 151, 1000, 1499] {
        // Blocks of one or two bars are thousands of sweeps: the best tier is enough there.
        let tiers = if block < 3 {
            vec![Tier::best()]
        } else {
            Tier::available()
        };
        for tier in tiers {
            for threads in [1, 2] {
                let (got, stats) = blocked(&close, &params, 0.09, tier, threads, 0, block);
                let label = format!("blocks of {block}/{}/{threads}", tier.name());
                common::assert_identical("rough", &label, &params, &want, &got);
                // The defined bars do not depend on the blocking; which of them the bound
                // certifies may (the lanes restart at other bars), and so may the recomputed.
                assert_eq!(stats.bars, whole.bars, "{label}");
                assert_eq!(stats.all_nan_combos, whole.all_nan_combos, "{label}");
                assert_eq!(stats.direct_combos, whole.direct_combos, "{label}");
            }
        }
    }
}

#[test]
fn a_resumed_sweep_in_blocks_gives_the_reference_bits() {
    let close = rough(1000);
    let params: Vec<Combo> = [3, 11, 30].map(derive_windows).to_vec();
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).expect("reference");
    for from in [1, 150, 151, 999, 1000] {
        for block in [1, 33, 500] {
            let (got, _) = blocked(&close, &params, 0.09, Tier::best(), 2, from, block);
            let label = format!("from {from}, blocks of {block}");
            common::assert_identical("rough", &label, &params, &want, &got);
        }
    }
}

#[test]
fn combos_are_counted_once_whatever_the_blocks() {
    // Length 120 needs 239 bars for hma3: every block of 100 bars alone is all-NaN for it,
    // but the series is not. A window too long for the bound runs whole on the SIMD pipeline.
    let close = gbm(1000, 3, 0.01).expect("gbm");
    let params = vec![
        derive_windows(120),
        derive_windows(5),
        [9000, 3, 2, 4, 3, 2],
    ];
    let (_, stats) = blocked(&close, &params, 0.09, Tier::best(), 1, 0, 100);
    let (_, whole) = blocked(&close, &params, 0.09, Tier::best(), 1, 0, 1000);
    assert_eq!(stats.all_nan_combos, whole.all_nan_combos, "{stats:?}");
    assert_eq!(stats.direct_combos, whole.direct_combos, "{stats:?}");
    assert_eq!(
        whole.all_nan_combos, 1,
        "{whole:?}: [9000, ..] is longer than the series"
    );
    assert_eq!(stats.bars, whole.bars);
}

#[test]
fn the_default_blocks_give_the_reference_bits_past_several_blocks() {
    // Past three real blocks, with flat and NaN runs through every boundary.
    let close = rough(3 * BLOCK_BARS + 1234);
    let params: Vec<Combo> = default_params().into_iter().step_by(10).collect();
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).expect("reference");
    for v in [Variant::Rolling, Variant::RollingRayon] {
        let got = v
            .sweep(&close, &params, 0.09, Threads::Fixed(2))
            .expect("sweep");
        common::assert_identical("rough, 4 blocks", v.name(), &params, &want, &got);
    }
}

#[test]
fn a_block_of_no_bars_is_refused() {
    let close = [1.0, 2.0];
    let mut states = vec![Backtest::new()];
    let err = rolling::sweep_from_in_blocks(
        ValidClose::new(&close).expect("valid"),
        &[derive_windows(1)],
        0.09,
        Threads::Fixed(1),
        Tier::best(),
        0,
        &mut states,
        0,
    )
    .expect_err("0 bars a block");
    assert!(err.to_string().contains("block_bars = 0"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random series (noise, flat runs, tick grids, NaN runs), combos and block lengths.
    #[test]
    fn random_blockings_give_the_reference_bits(
        (close, params, fee) in common::series::case(),
        block in 1usize..80,
        threads in 1usize..=2,
    ) {
        let want = hullsweep_kernel::sweep(&close, &params, fee).expect("reference");
        let (got, _) = blocked(&close, &params, fee, Tier::best(), threads, 0, block);
        common::assert_identical("random", &format!("blocks of {block}"), &params, &want, &got);
    }
}

#[test]
fn a_slow_combo_lets_the_other_worker_run_ahead_without_a_hang() {
    // On a flat price nothing certifies, so the long combo recomputes every bar with the
    // reference's O(w) arithmetic while the short ones fly: the worker with the short combos
    // reaches blocks whose slot still holds a block the slow one is in, and must wait for it.
    let mut close = vec![1.1; 6000];
    for (i, v) in gbm(600, 5, 0.01).expect("gbm").into_iter().enumerate() {
        close[2000 + i] = v;
    }
    let params = vec![
        derive_windows(300),
        derive_windows(2),
        derive_windows(3),
        derive_windows(4),
        derive_windows(5),
    ];
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).expect("reference");
    for block in [50, 97, 600] {
        let (got, stats) = blocked(&close, &params, 0.09, Tier::best(), 2, 0, block);
        assert!(stats.fallback_bars > 0, "{stats:?}");
        common::assert_identical("flat", &format!("blocks of {block}"), &params, &want, &got);
    }
}

#[test]
fn working_memory_stops_growing_past_a_block() {
    let params: Vec<Combo> = [6, 50, 200].map(derive_windows).to_vec();
    let memory = |bars: usize| {
        let close = gbm(bars, 1, 0.001).expect("gbm");
        let mut states = vec![Backtest::new(); params.len()];
        rolling::sweep_from_in_blocks(
            ValidClose::new(&close).expect("valid"),
            &params,
            0.09,
            Threads::Fixed(1),
            Tier::best(),
            0,
            &mut states,
            BLOCK_BARS,
        )
        .expect("sweep")
        .memory_bytes
    };
    let (one, six) = (memory(BLOCK_BARS), memory(6 * BLOCK_BARS));
    assert!(one > 0);
    // Six blocks hold a block's lookback more than one block alone, and nothing else.
    assert!(
        six <= one + one / 8,
        "{six} bytes for six blocks, {one} for one"
    );
}
