//! The resumable sweep: every chunking of a series gives the batch sweep's results bit for bit,
//! for every variant (NaN runs and flat runs across chunk boundaries, windows longer than a
//! chunk, chunks of one bar), and a push refuses bad input without changing the state.

use hullsweep_kernel::{Combo, KernelError, derive_windows, gbm};
use hullsweep_variants::rolling::{Stats, sweep_from_timed, sweep_from_with_stats};
use hullsweep_variants::simd::{Tier, WmaKernel};
use hullsweep_variants::stream::effective_window;
use hullsweep_variants::{Backtest, Sweeper, Threads, Variant};
use proptest::prelude::*;

fn bits(r: &hullsweep_kernel::SweepResult) -> (Vec<u64>, Vec<i64>) {
    (
        r.pnl.iter().map(|p| p.to_bits()).collect(),
        r.trades.clone(),
    )
}

/// Pushes `close` cut at `sizes` (cycled) through a sweeper of `variant`.
fn streamed(
    variant: Variant,
    close: &[f64],
    params: &[Combo],
    sizes: &[usize],
    threads: Threads,
) -> hullsweep_kernel::SweepResult {
    let mut s = Sweeper::new(params, 0.09, variant, threads).unwrap();
    let mut at = 0;
    for &size in sizes.iter().cycle() {
        if at == close.len() {
            break;
        }
        let end = (at + size.max(1)).min(close.len());
        s.push(&close[at..end]).unwrap();
        at = end;
    }
    assert_eq!(s.bars(), close.len() as u64);
    s.finish().unwrap()
}

/// A series of noisy stretches, NaN runs and flat runs at 1.1 (where `rolling`'s bound
/// certifies nothing, so its fallback runs), from a recipe of `(kind, length)` pieces.
fn series(recipe: &[(u8, usize)], seed: u64) -> Vec<f64> {
    let mut close = Vec::new();
    for (j, &(kind, len)) in recipe.iter().enumerate() {
        match kind % 4 {
            0 | 1 => close.extend(
                gbm(len, seed.wrapping_add(j as u64), 0.01)
                    .unwrap()
                    .iter()
                    .map(|p| p / 100.0 * 1.1),
            ),
            2 => close.extend(std::iter::repeat_n(f64::NAN, len)),
            _ => close.extend(std::iter::repeat_n(1.1, len)),
        }
    }
    close
}

fn recipe() -> impl Strategy<Value = Vec<(u8, usize)>> {
    prop::collection::vec((0u8..4, 1usize..300), 1..8)
}

/// Chunk sizes: many single bars, short chunks and chunks longer than every window.
fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    let size = prop_oneof![Just(1usize), 1usize..40, 40usize..700];
    prop::collection::vec(size, 1..12)
}

fn combos() -> impl Strategy<Value = Vec<Combo>> {
    let grid = (2i64..120).prop_map(derive_windows);
    let free = [1i64..40, 1..40, 1..12, 1..60, 1..40, 1..30];
    let combo = prop_oneof![grid, free];
    prop::collection::vec(combo, 1..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every variant, any chunking: the batch sweep's bits (and so the reference's).
    #[test]
    fn every_chunking_gives_the_batch_bits(
        recipe in recipe(),
        seed in 0u64..1000,
        params in combos(),
        sizes in chunk_sizes(),
    ) {
        let close = series(&recipe, seed);
        let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
        for &v in Variant::ALL {
            let got = streamed(v, &close, &params, &sizes, Threads::Fixed(2));
            prop_assert_eq!(bits(&got), bits(&want), "{} cut at {:?}", v.name(), sizes);
        }
        let fastest = streamed(Variant::fastest(), &close, &params, &sizes, Threads::Auto);
        prop_assert_eq!(bits(&fastest), bits(&want), "fastest");
    }
}

/// A flat run at 1.1 across a chunk boundary: the bars after the boundary go through rolling's
/// fallback (the counts show it), and the result is still the reference's.
#[test]
fn rolling_fallback_across_a_boundary() {
    let mut close = series(&[(0, 900), (3, 500), (0, 900)], 5);
    close[300] = f64::NAN;
    let params: Vec<Combo> = [6, 11, 30, 57, 100].map(derive_windows).to_vec();
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
    assert!(want.trades.iter().all(|&t| t > 0));
    let cut = 1100; // inside the flat run (900..1400)
    let mut states = vec![Backtest::new(); params.len()];
    let (tier, kernel) = (Tier::best(), WmaKernel::best());
    let run = |buf: &[f64], from, states: &mut [Backtest]| -> Stats {
        let valid = hullsweep_kernel::ValidClose::new(buf).unwrap();
        sweep_from_with_stats(
            valid,
            &params,
            0.09,
            Threads::Fixed(1),
            tier,
            kernel,
            from,
            states,
        )
        .unwrap()
    };
    run(&close[..cut], 0, &mut states);
    let lookback = params.iter().map(effective_window).max().unwrap() - 1;
    let second = run(&close[cut - lookback..], lookback, &mut states);
    assert!(second.fallback_bars > 0, "{second:?}");
    let got: Vec<(u64, i64)> = states
        .iter()
        .map(|b| (b.pnl().to_bits(), b.trades()))
        .collect();
    let want: Vec<(u64, i64)> = want
        .pnl
        .iter()
        .zip(&want.trades)
        .map(|(p, &t)| (p.to_bits(), t))
        .collect();
    assert_eq!(got, want);
}

/// The tail must be the full lookback: one bar less changes the results (so the exactness
/// tests above can fail), shown by resuming a variant directly with a short tail.
#[test]
fn a_tail_one_bar_short_is_caught() {
    let close = gbm(4000, 9, 0.01).unwrap();
    let params: Vec<Combo> = [8, 20, 45].map(derive_windows).to_vec();
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
    let lookback = params.iter().map(effective_window).max().unwrap() - 1;
    let mut differs = false;
    for cut in (500..3500).step_by(97) {
        let mut states = vec![Backtest::new(); params.len()];
        let v = Variant::Simd;
        let t = Threads::Fixed(1);
        let valid = hullsweep_kernel::ValidClose::new(&close[..cut]).unwrap();
        v.sweep_from(valid, &params, 0.09, t, 0, &mut states)
            .unwrap();
        let short = lookback - 1;
        let valid = hullsweep_kernel::ValidClose::new(&close[cut - short..]).unwrap();
        v.sweep_from(valid, &params, 0.09, t, short, &mut states)
            .unwrap();
        let got: Vec<u64> = states.iter().map(|b| b.pnl().to_bits()).collect();
        let want: Vec<u64> = want.pnl.iter().map(|p| p.to_bits()).collect();
        differs |= got != want;
    }
    assert!(differs, "a short tail went unnoticed at every cut");
}

#[test]
fn the_default_sweep_in_uneven_chunks() {
    let close = hullsweep_kernel::default_close();
    let params = hullsweep_kernel::default_params();
    let want = Variant::fastest()
        .sweep(&close, &params, 0.09, Threads::Auto)
        .unwrap();
    let got = streamed(
        Variant::fastest(),
        &close,
        &params,
        &[1, 398, 399, 400, 7, 33_333, 1, 2],
        Threads::Auto,
    );
    assert_eq!(bits(&got), bits(&want));
}

#[test]
fn bad_input_names_the_series_index_and_keeps_the_state() {
    let params = vec![derive_windows(5)];
    assert!(matches!(
        Sweeper::new(&params, f64::NAN, Variant::Rolling, Threads::Fixed(1)),
        Err(KernelError::BadFee(_))
    ));
    let mut s = Sweeper::new(&params, 0.09, Variant::Rolling, Threads::Fixed(1)).unwrap();
    let close = gbm(300, 1, 0.01).unwrap();
    s.push(&close[..100]).unwrap();
    s.push(&[]).unwrap();
    let mut bad = close[100..200].to_vec();
    bad[42] = -3.0;
    assert_eq!(
        s.push(&bad),
        Err(KernelError::BadPrice {
            index: 142,
            value: -3.0
        })
    );
    assert_eq!(s.bars(), 100);
    s.push(&close[100..]).unwrap();
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
    assert_eq!(bits(&s.finish().unwrap()), bits(&want));
    let empty = Sweeper::new(&params, 0.09, Variant::Simd, Threads::Fixed(1)).unwrap();
    assert_eq!(empty.finish(), Err(KernelError::EmptySeries));
}

/// The timed sweep (the lab's breakdown) is the same sweep: the same states and counts, on one
/// worker and two, with every stage it ran timed and the fallback's time where it had one.
#[test]
fn the_timed_sweep_is_the_sweep_with_its_stages_timed() {
    let mut close = series(&[(0, 900), (3, 500), (0, 900)], 5);
    close[300] = f64::NAN;
    let params: Vec<Combo> = [6, 11, 30, 57, 100].map(derive_windows).to_vec();
    let valid = hullsweep_kernel::ValidClose::new(&close).unwrap();
    let (tier, kernel) = (Tier::best(), WmaKernel::best());
    for workers in [1, 2] {
        let threads = Threads::Fixed(workers);
        let mut plain = vec![Backtest::new(); params.len()];
        let want =
            sweep_from_with_stats(valid, &params, 0.09, threads, tier, kernel, 0, &mut plain)
                .unwrap();
        let mut timed = vec![Backtest::new(); params.len()];
        let (stats, t) =
            sweep_from_timed(valid, &params, 0.09, threads, tier, kernel, 0, &mut timed).unwrap();
        // The peak memory depends on which worker took which combo; the counts do not.
        let counts = |s: Stats| Stats {
            memory_bytes: 0,
            ..s
        };
        assert_eq!(counts(stats), counts(want));
        let key = |b: &Backtest| (b.pnl().to_bits(), b.trades());
        assert_eq!(
            timed.iter().map(key).collect::<Vec<_>>(),
            plain.iter().map(key).collect::<Vec<_>>()
        );
        assert!(stats.fallback_bars > 0, "{stats:?}");
        assert_eq!(t.workers, workers);
        let zero = std::time::Duration::ZERO;
        assert!(
            t.plan > zero && t.prepare > zero && t.combos > zero,
            "{t:?}"
        );
        assert!(
            t.fast > zero && t.fallback > zero && t.events > zero,
            "{t:?}"
        );
        assert_eq!(t.direct, zero, "no combo runs on the SIMD pipeline: {t:?}");
        assert!(
            t.prepare + t.fast + t.fallback + t.events <= t.combos * workers as u32,
            "{t:?}"
        );
    }
}

/// A push in place (the chunk behind room for the carried bars) gives the copying push's bits
/// for every variant, with room to spare, exactly enough room, and too little (it then copies),
/// NaN runs across the cuts included; a bad price is named by its index in the whole series
/// and leaves the state as it was.
#[test]
fn a_push_in_place_is_the_copying_push() {
    let mut close = gbm(3_000, 5, 0.01).unwrap();
    for v in &mut close[990..1_010] {
        *v = f64::NAN;
    }
    let params: Vec<Combo> = [5, 9, 30, 64].into_iter().map(derive_windows).collect();
    let lookback = params.iter().map(effective_window).max().unwrap() - 1;
    for &variant in Variant::ALL {
        let want = variant
            .sweep(&close, &params, 0.09, Threads::Fixed(2))
            .unwrap();
        for room in [0, lookback / 2, lookback, lookback + 7] {
            let mut s = Sweeper::new(&params, 0.09, variant, Threads::Fixed(2)).unwrap();
            let mut observed = 0;
            for chunk in close.chunks(1_000) {
                let mut buf = vec![-1.0; room];
                buf.extend_from_slice(chunk);
                let done = s
                    .push_observed_in_place(&mut buf, room, &mut |n| {
                        observed += n;
                        true
                    })
                    .unwrap();
                assert!(done);
            }
            assert_eq!(observed, 3 * params.len(), "{variant:?} room {room}");
            assert_eq!(s.bars(), 3_000);
            assert_eq!(
                bits(&s.finish().unwrap()),
                bits(&want),
                "{variant:?} {room}"
            );
        }
    }
    let mut s = Sweeper::new(&params, 0.09, Variant::Rolling, Threads::Fixed(1)).unwrap();
    let mut buf = vec![0.0; lookback];
    buf.extend_from_slice(&close[..1_000]);
    s.push_observed_in_place(&mut buf, lookback, &mut |_| true)
        .unwrap();
    let mut bad = vec![0.0; lookback];
    bad.extend_from_slice(&close[1_000..2_000]);
    bad[lookback + 42] = -3.0;
    assert_eq!(
        s.push_observed_in_place(&mut bad, lookback, &mut |_| true),
        Err(KernelError::BadPrice {
            index: 1_042,
            value: -3.0
        })
    );
    assert_eq!(s.bars(), 1_000);
}
