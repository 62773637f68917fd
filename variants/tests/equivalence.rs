//! Every variant, rayon thread count and SIMD tier against the reference, bit for bit, on the
//! default sweep and on the edge datasets of the spec (NaNs, flat runs, tick grids, extreme windows).

mod common;

use common::assert_all_identical;
use hullsweep_kernel::{Combo, default_close, default_params, derive_windows, wma};
use hullsweep_variants::simd::{Tier, WmaKernel};
use hullsweep_variants::{Threads, Variant, prealloc};

/// Combos that exercise the paths the default grid never takes: windows of 1, windows that
/// differ between hma and hma3 (no shared passes), windows past the end of the series.
fn edge_params(n_bars: usize) -> Vec<Combo> {
    let long = n_bars as i64;
    let mut params: Vec<Combo> = [2, 3, 4, 5, 7, 9, 13, 20, 33].map(derive_windows).to_vec();
    params.extend([
        [1, 1, 1, 1, 1, 1],
        [2, 1, 1, 3, 1, 1],
        [9, 4, 3, 12, 7, 2],
        [16, 5, 2, 10, 6, 4],
        [31, 17, 5, 23, 11, 8],
        [long, 3, 2, 5, 2, 1],
        [long + 1, 2, 1, 4, 2, 1],
        [5, 2, 2, long + 7, 3, 1],
        [4, 2, long + 2, 4, 2, 1],
        [i64::MAX, 1, 1, 1, 1, 1],
    ]);
    params
}

fn noisy(n: usize, seed: u64) -> Vec<f64> {
    hullsweep_kernel::gbm(n, seed, 0.01).expect("gbm")
}

#[test]
fn default_sweep_is_identical_for_every_implementation() {
    let close = default_close();
    let params = default_params();
    let want = assert_all_identical("default", &close, &params, 0.09);
    assert!(
        want.trades.iter().all(|&t| t > 0),
        "the default sweep trades in every combo"
    );
}

#[test]
fn nan_single_bars_and_runs() {
    let mut close = noisy(3000, 7);
    for i in [0, 17, 500, 1001, 2999] {
        close[i] = f64::NAN;
    }
    for i in (1200..1260).chain(2000..2003) {
        close[i] = f64::NAN;
    }
    let want = assert_all_identical("nan", &close, &edge_params(close.len()), 0.09);
    assert!(want.trades.iter().any(|&t| t > 0));
}

#[test]
fn flat_runs_between_noisy_stretches() {
    let mut close = Vec::new();
    for (stretch, level) in [1.1, 0.3, 1.1, 0.3].into_iter().enumerate() {
        close.extend(noisy(400, stretch as u64).iter().map(|p| p / 100.0 * level));
        close.extend(std::iter::repeat_n(level, 300));
    }
    let want = assert_all_identical("flat", &close, &edge_params(close.len()), 0.09);
    assert!(want.trades.iter().any(|&t| t > 0));
}

#[test]
fn tick_grid_prices_with_many_repeats() {
    let close: Vec<f64> = noisy(4000, 3)
        .iter()
        .map(|p| (p / 10.0 * 100.0).round() / 100.0)
        .collect();
    let mut params = edge_params(close.len());
    params.extend(default_params().into_iter().step_by(7));
    let want = assert_all_identical("tick", &close, &params, 0.09);
    assert!(want.trades.iter().any(|&t| t > 0));
}

#[test]
fn tiny_series() {
    for close in [
        vec![1.0],
        vec![1.0, 2.0],
        vec![f64::NAN, 2.0],
        vec![2.0, 1.0, 3.0],
    ] {
        assert_all_identical("tiny", &close, &edge_params(close.len()), 0.09);
    }
    // A 2-bar series whose only crosses come from windows of 1.
    let close = [1.0, 2.0];
    assert_all_identical(
        "two-bar",
        &close,
        &[[1, 1, 1, 1, 1, 1], [1, 1, 1, 2, 1, 1]],
        0.0,
    );
}

#[test]
fn every_tier_wma_matches_reference_bits() {
    let mut x = noisy(300, 11);
    x[150] = f64::NAN;
    for v in &mut x[40..60] {
        *v = 1.1;
    }
    for tier in Tier::available() {
        let kernel = tier.kernel().unwrap();
        assert_eq!(kernel.tier(), tier);
        for len in [1, 2, 3, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 300] {
            let x = &x[..len];
            let mut out = vec![0.0; len];
            for w in [
                1, 2, 3, 5, 8, 16, 17, 31, 32, 33, 64, 99, 299, 300, 301, 1000,
            ] {
                kernel.wma(x, w, &mut out);
                let want = wma(x, w);
                let same = out
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
                assert!(same, "{tier:?} len {len} w {w}");
                prealloc::wma_into(x, w, &mut out);
                assert!(
                    out.iter()
                        .zip(&want)
                        .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
                );
            }
        }
    }
}

#[test]
fn dispatch_and_tiers() {
    let available = Tier::available();
    assert_eq!(available.last(), Some(&Tier::Scalar));
    assert_eq!(available[0], Tier::best());
    assert_eq!(WmaKernel::best().tier(), Tier::best());
    #[cfg(target_arch = "x86_64")]
    {
        assert!(Tier::Sse2.is_available(), "SSE2 is baseline on x86-64");
        assert!(!Tier::Neon.is_available());
        assert_eq!(
            Tier::Avx2.is_available(),
            std::is_x86_feature_detected!("avx2")
        );
        assert_eq!(
            Tier::Avx512.is_available(),
            std::is_x86_feature_detected!("avx512f")
        );
    }
    #[cfg(target_arch = "aarch64")]
    {
        // NEON is baseline on aarch64: the hand-written tier must be the one dispatched.
        assert!(Tier::Neon.is_available(), "NEON is baseline on aarch64");
        assert_eq!(Tier::best(), Tier::Neon);
        assert_eq!(available, [Tier::Neon, Tier::Scalar]);
    }
    // The cached path (hullsweep_variants::simd::wma_into) agrees with the explicit best kernel.
    let x = noisy(200, 5);
    let (mut a, mut b) = (vec![0.0; 200], vec![0.0; 200]);
    for _ in 0..2 {
        hullsweep_variants::simd::wma_into(&x, 13, &mut a);
        WmaKernel::best().wma(&x, 13, &mut b);
        assert!(same_bits(&a, &b));
    }
}

/// Bitwise equality, except that any NaN equals any NaN (the spec only asks "is it NaN").
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

#[test]
fn variant_names_threads_and_fastest() {
    let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
    assert_eq!(
        names,
        [
            "reference",
            "checked",
            "unchecked",
            "prealloc",
            "simd",
            "rayon",
            "rolling",
            "rolling-rayon"
        ]
    );
    for &v in Variant::ALL {
        assert_eq!(Variant::from_name(v.name()), Some(v));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let want = if cores > 1 {
        Variant::RollingRayon
    } else {
        Variant::Rolling
    };
    assert_eq!(Variant::fastest(), want);
    assert_eq!(Variant::from_name("fastest"), Some(want));
    assert_eq!(Variant::from_name("nope"), None);
    // Zero threads is clamped to one rather than failing.
    let close = noisy(500, 2);
    let params = edge_params(500);
    let a = Variant::Rayon
        .sweep(&close, &params, 0.09, Threads::Fixed(0))
        .unwrap();
    let b = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_inputs_give_the_reference_error() {
    let good = noisy(50, 1);
    let mut bad_price = good.clone();
    bad_price[7] = -1.0;
    let mut inf = good.clone();
    inf[3] = f64::INFINITY;
    let cases: [(&[f64], Vec<Combo>, f64); 5] = [
        (&[], vec![[3, 2, 1, 3, 2, 1]], 0.09),
        (&bad_price, vec![[3, 2, 1, 3, 2, 1]], 0.09),
        (&inf, vec![[3, 2, 1, 3, 2, 1]], 0.09),
        (&good, vec![[3, 2, 1, 3, 2, 1], [3, 2, 1, 3, 0, 1]], 0.09),
        (&good, vec![[3, 2, 1, 3, 2, 1]], f64::NAN),
    ];
    for (close, params, fee) in cases {
        // Debug text, not `==`: a NaN fee inside the error never equals itself.
        let want = format!(
            "{:?}",
            hullsweep_kernel::sweep(close, &params, fee).unwrap_err()
        );
        for (name, got) in common::implementations(close, &params, fee) {
            let got = got.err().map(|e| format!("{e:?}"));
            assert_eq!(got.as_ref(), Some(&want), "{name}");
        }
        let mut scratch = prealloc::Scratch::new(close.len());
        let mut out = hullsweep_kernel::SweepResult::default();
        let got = prealloc::sweep_into(close, &params, fee, &mut scratch, &mut out);
        assert_eq!(got.err().map(|e| format!("{e:?}")), Some(want));
    }
}

#[test]
fn empty_params_give_empty_results() {
    let close = noisy(10, 1);
    for (name, got) in common::implementations(&close, &[], 0.09) {
        assert!(got.unwrap().is_empty(), "{name}");
    }
}

#[test]
fn sweep_into_reuses_a_larger_scratch_and_resizes_outputs() {
    let close = noisy(800, 9);
    let params = edge_params(800);
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();
    let mut scratch = prealloc::Scratch::new(2000);
    let mut out = hullsweep_kernel::SweepResult::zeroed(3);
    prealloc::sweep_into(&close, &params, 0.09, &mut scratch, &mut out).unwrap();
    assert_eq!(out, want);
    assert_eq!(scratch.n_bars(), 2000);
    // A scratch too small grows instead of failing.
    let mut small = prealloc::Scratch::new(10);
    let kernel = WmaKernel::best();
    hullsweep_variants::simd::sweep_into(kernel, &close, &params, 0.09, &mut small, &mut out)
        .unwrap();
    assert_eq!(out, want);
    assert!(small.n_bars() >= 800);
}

#[test]
fn tile_boundaries_with_nans_flats_and_long_windows() {
    // Three tiles and a bit, with NaN runs and flat runs straddling the tile edges, and windows
    // longer than a tile, so the second-level passes read back across tile boundaries.
    let tile = prealloc::TILE;
    let mut close = noisy(3 * tile + 123, 21);
    for i in (tile - 3..tile + 2).chain([2 * tile - 1, 2 * tile]) {
        close[i] = f64::NAN;
    }
    for v in &mut close[2 * tile + 500..2 * tile + 900] {
        *v = 1.1;
    }
    let mut params = edge_params(close.len());
    params.extend([
        [tile as i64 + 5, 40, 70, 300, 150, 100],
        [200, 100, 14, 200, 100, 66],
        [7, 3, 2, tile as i64 - 1, 9, 4],
    ]);
    let want = assert_all_identical("tiles", &close, &params, 0.09);
    assert!(want.trades.iter().any(|&t| t > 0));
}

#[test]
fn a_series_validated_once_sweeps_like_a_fresh_one_and_params_are_still_checked() {
    let close = noisy(600, 4);
    let series = hullsweep_kernel::ValidSeries::new(close.clone()).unwrap();
    let params = edge_params(close.len());
    let bad_params: Vec<Combo> = vec![[3, 2, 1, 3, 2, 1], [3, 2, 1, 3, 0, 1]];
    for &v in Variant::ALL {
        for threads in [Threads::Fixed(1), Threads::Fixed(2)] {
            let fresh = v.sweep(&close, &params, 0.09, threads).unwrap();
            let valid = v
                .sweep_valid(series.view(), &params, 0.09, threads)
                .unwrap();
            assert_eq!(fresh, valid, "{}", v.name());
            let want = v.sweep(&close, &bad_params, 0.09, threads).unwrap_err();
            let got = v.sweep_valid(series.view(), &bad_params, 0.09, threads);
            assert_eq!(got.unwrap_err(), want, "{}", v.name());
            assert!(
                v.sweep_valid(series.view(), &params, f64::NAN, threads)
                    .is_err()
            );
        }
    }
    let mut bad = close;
    bad[599] = 0.0;
    assert!(hullsweep_kernel::ValidSeries::new(bad).is_err());
}
