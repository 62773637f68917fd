//! The `rolling` variant's own evidence: its error bound holds at every bar (and a bound missing
//! the fast path's term does not, so the check bites), every tier agrees, and property tests
//! built to make near-ties (flat prices, single ticks, tick grids, NaN runs) stay bit-identical.

mod common;

use hullsweep_kernel::{Combo, ValidClose, derive_windows, hma, hma3, window};
use hullsweep_variants::rolling::{
    self, Stats, UNDERFLOW_TERM, bound_parts, fast_d_with_bound, sweep_with_stats,
};
use hullsweep_variants::simd::{Tier, WmaKernel};
use hullsweep_variants::{Threads, Variant};
use proptest::prelude::*;

/// The reference's `d = hma - hma3` at every bar.
fn reference_d(close: &[f64], c: &Combo) -> Vec<f64> {
    let [n, h, s, m, h3, t] = c.map(window);
    let a = hma(close, n, h, s);
    let b = hma3(close, m, h3, t);
    a.iter().zip(&b).map(|(x, y)| x - y).collect()
}

/// Largest `|d_fast - d_ref| / bound` over the bars; panics if the NaN bars differ, or if a bar
/// with a finite bound (inside the theorem's range) has a reference `d` that is not finite.
fn worst_ratio(close: &[f64], c: &Combo, scale: f64) -> f64 {
    worst_ratio_with(close, c, |b| b * scale)
}

/// [`worst_ratio`] against `shrink(b)` for each bar's bound `b` (negative controls shrink it),
/// the worst over every tier: the tiers with fused multiply-adds round differently.
fn worst_ratio_with(close: &[f64], c: &Combo, shrink: impl Fn(f64) -> f64) -> f64 {
    let want = reference_d(close, c);
    Tier::available()
        .into_iter()
        .map(|tier| worst_ratio_on(tier, close, c, &want, &shrink))
        .fold(0.0, f64::max)
}

/// [`worst_ratio_with`] for the fast path at one tier, against the reference's `want`.
fn worst_ratio_on(
    tier: Tier,
    close: &[f64],
    c: &Combo,
    want: &[f64],
    shrink: impl Fn(f64) -> f64,
) -> f64 {
    let valid = ValidClose::new(close).expect("valid series");
    let Some((fast, bound)) = fast_d_with_bound(valid, c, tier).expect("valid combo") else {
        return 0.0;
    };
    let mut worst = 0.0f64;
    for i in 0..close.len() {
        if fast[i].is_nan() && bound[i].is_nan() {
            // The reference's NaN bars (fewer than the lookback since a NaN or the start).
            assert!(
                want[i].is_nan(),
                "bar {i} of {c:?} ({}): masked, reference {}",
                tier.name(),
                want[i]
            );
            continue;
        }
        if bound[i] == f64::INFINITY {
            // Past the overflow guard: the exact path decides these bars.
            continue;
        }
        assert!(
            want[i].is_finite() && fast[i].is_finite(),
            "bar {i} of {c:?}: inside the theorem's range (bound {:e}) but d is {} (fast {})",
            bound[i],
            want[i],
            fast[i]
        );
        let err = (fast[i] - want[i]).abs();
        let b = shrink(bound[i]);
        worst = worst.max(if b > 0.0 {
            err / b
        } else {
            err * f64::INFINITY
        });
    }
    worst
}

/// The tiers with fused multiply-adds do fuse: their fast `d` differs from the baseline's in
/// the last bits at some bars (so the bound tests above, run at every tier, cover both
/// roundings), and only there: never by more than the bound.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_fused_tiers_round_differently_within_the_bound() {
    if !std::is_x86_feature_detected!("fma") {
        return;
    }
    let close = gbm(20_000, 11, 0.002);
    let valid = ValidClose::new(&close).expect("valid");
    let c = derive_windows(40);
    let fd = |tier| {
        fast_d_with_bound(valid, &c, tier)
            .expect("combo")
            .expect("fast")
    };
    let (plain, bound) = fd(Tier::Sse2);
    for tier in [Tier::Avx2, Tier::Avx512]
        .into_iter()
        .filter(|t| t.is_available())
    {
        let (fused, _) = fd(tier);
        let mut differ = 0;
        for i in 0..close.len() {
            if plain[i].to_bits() != fused[i].to_bits() {
                differ += 1;
                assert!((plain[i] - fused[i]).abs() <= 2.0 * bound[i], "bar {i}");
            }
        }
        assert!(differ > 100, "{}: only {differ} bars differ", tier.name());
    }
}

/// Combos of every shape: the default derivation at several lengths, and windows that differ.
fn combos() -> Vec<Combo> {
    let mut out: Vec<Combo> = [1, 2, 3, 6, 11, 40, 120].map(derive_windows).to_vec();
    out.extend([
        [9, 4, 3, 12, 7, 2],
        [16, 5, 2, 10, 6, 4],
        [1, 3, 7, 2, 5, 1],
    ]);
    out
}

fn gbm(n: usize, seed: u64, sigma: f64) -> Vec<f64> {
    hullsweep_kernel::gbm(n, seed, sigma).expect("gbm")
}

/// A flat price with a one-tick step every `every` bars, up or down.
fn sparse_ticks(n: usize, level: f64, tick: f64, every: usize) -> Vec<f64> {
    let mut p = level;
    (0..n)
        .map(|i| {
            if i > 0 && i % every == 0 {
                p += if (i / every).is_multiple_of(3) {
                    -tick
                } else {
                    tick
                };
            }
            p
        })
        .collect()
}

/// The smallest positive subnormal, `2^-1074`.
const TINY: f64 = f64::from_bits(1);

/// `2^e` for `e` in `-1074..=1023`, exactly (subnormal below `-1022`).
fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// Series at both ends of the f64 range: deep subnormals, the smallest subnormals, a level that
/// crosses the smallest normal, sums that overflow for the longer windows only, and ordinary
/// prices with isolated extreme bars.
fn extreme() -> Vec<(&'static str, Vec<f64>)> {
    let g = gbm(2000, 21, 0.01);
    let mut level = 1e-303;
    let crossing: Vec<f64> = g
        .iter()
        .enumerate()
        .map(|(i, p)| {
            level *= if i < 1000 { 0.977 } else { 1.0 / 0.977 };
            p * level
        })
        .collect();
    let mut walk = 8.0f64;
    let smallest: Vec<f64> = (0..2000u64)
        .map(|i| {
            walk = (walk + (i * 7 % 3) as f64 - 1.0).clamp(1.0, 16.0);
            walk * TINY
        })
        .collect();
    let spiked = |spikes: [f64; 2]| -> Vec<f64> {
        let mut x = gbm(2000, 22, 0.01);
        for (k, i) in (90..x.len()).step_by(331).enumerate() {
            x[i] = spikes[k % 2];
        }
        x
    };
    vec![
        ("deep subnormal", g.iter().map(|p| p * 1e-322).collect()),
        ("smallest subnormals", smallest),
        ("across the smallest normal", crossing),
        ("overflowing sums", g.iter().map(|p| p * 1e304).collect()),
        ("huge spikes", spiked([1e307, f64::MAX])),
        ("tiny dips", spiked([TINY, f64::MIN_POSITIVE])),
    ]
}

/// Series on which the fast path and the reference round the most differently: noise, long
/// flat runs at values that are not exact in binary, tick grids and huge and tiny prices, and
/// both ends of the f64 range ([`extreme`]).
fn adversarial() -> Vec<(&'static str, Vec<f64>)> {
    let noise = gbm(3000, 11, 0.01);
    let tick: Vec<f64> = noise.iter().map(|p| (p * 100.0).round() / 100.0).collect();
    let mut flats = Vec::new();
    for level in [1.1, 0.3, 1e-6, 1e6] {
        flats.extend(std::iter::repeat_n(level, 500));
        flats.extend(gbm(200, 5, 0.001).iter().map(|p| p / 100.0 * level));
    }
    vec![
        ("noise", noise),
        ("tick grid", tick),
        ("flat runs", flats),
        ("sparse ticks", sparse_ticks(3000, 1.1, 0.01, 97)),
        ("huge", gbm(2000, 3, 0.01).iter().map(|p| p * 1e6).collect()),
        (
            "tiny",
            gbm(2000, 4, 0.01).iter().map(|p| p * 1e-6).collect(),
        ),
    ]
    .into_iter()
    .chain(extreme())
    .collect()
}

#[test]
fn the_bound_holds_at_every_bar() {
    for (name, close) in adversarial() {
        for c in combos() {
            let r = worst_ratio(&close, &c, 1.0);
            assert!(
                r <= 1.0,
                "{name} {c:?}: |d_fast - d_ref| is {r} times the bound"
            );
        }
    }
}

/// The negative control: the bound test can fail. The reference's share of the bound alone is
/// too small for the fast path's rounding on noisy data, and the check says so.
#[test]
fn a_bound_without_the_fast_path_term_fails_the_check() {
    let close = gbm(3000, 11, 0.01);
    let c = derive_windows(40);
    let (fast, reference) = bound_parts(&c, close.len()).expect("fast path");
    let share = reference / (fast + reference);
    let r = worst_ratio(&close, &c, share / 16.0);
    assert!(
        r > 1.0,
        "a bound 16x below the reference's share still held ({r})"
    );
}

/// The second negative control: without its underflow term the bound fails on subnormal
/// prices, where `beta * M` rounds to (almost) nothing and the WMAs' quotients still round.
#[test]
fn a_bound_without_the_underflow_term_fails_on_subnormal_prices() {
    let close: Vec<f64> = gbm(3000, 11, 0.01).iter().map(|p| p * 1e-322).collect();
    let worst = combos()
        .iter()
        .map(|c| worst_ratio_with(&close, c, |b| b - UNDERFLOW_TERM))
        .fold(0.0, f64::max);
    assert!(
        worst > 1.0,
        "the bound held without its underflow term ({worst})"
    );
}

/// The overflow guard is exercised: on these series the reference's `d` is NaN or infinite at
/// bars no missing bar explains (a first-order bound there would certify a finite fast `d`
/// against it), and [`worst_ratio`] has checked that every such bar's bound is `+inf`.
#[test]
fn the_overflow_guard_meets_overflowed_bars() {
    for (name, close) in extreme() {
        if !["overflowing sums", "huge spikes"].contains(&name) {
            continue;
        }
        let overflowed: usize = combos()
            .iter()
            .map(|c| {
                let d = reference_d(&close, c);
                let valid = ValidClose::new(&close).expect("valid");
                let Some((fast, bound)) = fast_d_with_bound(valid, c, Tier::best()).expect("combo")
                else {
                    return 0;
                };
                (0..close.len())
                    .filter(|&i| {
                        let masked = fast[i].is_nan() && bound[i].is_nan();
                        !masked && !d[i].is_finite()
                    })
                    .inspect(|&i| assert_eq!(bound[i], f64::INFINITY, "{name} {c:?} bar {i}"))
                    .count()
            })
            .sum();
        assert!(
            overflowed > 100,
            "{name}: only {overflowed} overflowed bars"
        );
    }
}

#[test]
fn every_tier_and_thread_count_gives_the_same_bits_and_stats() {
    for (name, close) in adversarial() {
        let params = combos();
        let want = hullsweep_kernel::sweep(&close, &params, 0.09).expect("reference");
        let valid = ValidClose::new(&close).expect("valid");
        let mut first: Option<Stats> = None;
        for tier in Tier::available() {
            let kernel = tier.kernel().expect("available");
            for threads in [1, 2] {
                let (got, stats) =
                    sweep_with_stats(valid, &params, 0.09, Threads::Fixed(threads), tier, kernel)
                        .expect("sweep");
                let label = format!("rolling/{}/{threads}", tier.name());
                common::assert_identical(name, &label, &params, &want, &got);
                // Memory grows with the workers; every count must not.
                let counts = Stats {
                    memory_bytes: 0,
                    ..stats
                };
                assert_eq!(
                    *first.get_or_insert(counts),
                    counts,
                    "{name} {label}: stats"
                );
            }
        }
    }
}

#[test]
fn stats_count_the_fallback_where_the_data_is_adversarial() {
    let params: Vec<Combo> = [6, 20, 60].map(derive_windows).to_vec();
    let run = |close: &[f64]| {
        let valid = ValidClose::new(close).expect("valid");
        let best = Tier::best();
        sweep_with_stats(
            valid,
            &params,
            0.09,
            Threads::Fixed(1),
            best,
            WmaKernel::best(),
        )
        .expect("sweep")
        .1
    };
    let noisy = run(&gbm(5000, 1, 0.001));
    assert_eq!(noisy.fallback_bars, 0, "noise is certified: {noisy:?}");
    assert!(noisy.bars > 0);
    // A flat 1.1 puts d a few ulps from zero (or at it): nothing there can be certified.
    let flat = run(&vec![1.1; 5000]);
    assert_eq!(flat.fallback_bars, flat.bars, "{flat:?}");
    assert!(flat.recomputed_bars >= flat.fallback_bars);
    let ticks = run(&sparse_ticks(5000, 100.0, 0.01, 250));
    assert!(
        ticks.fallback_bars > 0 && ticks.fallback_bars < ticks.bars,
        "{ticks:?}"
    );
    assert!(ticks.certified_fraction() > 0.0 && ticks.certified_fraction() < 1.0);
    // Windows longer than the series (L = 20 needs 20 + 20 - 1 bars for hma3): no work at all.
    let short = run(&gbm(30, 2, 0.01));
    assert_eq!(short.all_nan_combos, 2, "{short:?}");
}

fn assert_rolling_identical(close: &[f64], params: &[Combo], fee: f64) {
    let want = hullsweep_kernel::sweep(close, params, fee).expect("reference");
    for v in [Variant::Rolling, Variant::RollingRayon] {
        let got = v
            .sweep(close, params, fee, Threads::Fixed(2))
            .expect("sweep");
        common::assert_identical("near-tie", v.name(), params, &want, &got);
    }
}

/// A GBM (about 50 to 200) scaled by `2^e`, `e` anywhere from `-1074` (prices of a few dozen
/// units of the smallest subnormal) to `1016` (the largest bars near `f64::MAX`), with random NaN
/// bars and isolated bars set to 2^-1074, the smallest normal, 1e307 or `f64::MAX`.
fn across_the_range() -> impl Strategy<Value = Vec<f64>> {
    let extreme = prop::sample::select(vec![TINY, f64::MIN_POSITIVE, 1e307, f64::MAX, f64::NAN]);
    (
        -1074i32..=1016,
        0u64..1000,
        prop::sample::select(vec![0.001, 0.01, 0.05]),
        20usize..1200,
        prop::collection::vec((0usize..1200, extreme), 0..4),
    )
        .prop_map(|(e, seed, sigma, n, marks)| {
            let path = gbm(n, seed, sigma);
            // At the top of the range a GBM that wanders up would overflow: cap the scale so
            // the largest bar stays finite (halved, so the product cannot round up to inf).
            let top = path.iter().fold(0.0f64, |m, &p| m.max(p));
            let scale = pow2(e).min(f64::MAX / top / 2.0);
            let mut close: Vec<f64> = path.iter().map(|p| p * scale).collect();
            for (at, v) in marks {
                if at < n {
                    close[at] = v;
                }
            }
            if close.iter().all(|v| v.is_nan()) {
                close[0] = 1.0;
            }
            close
        })
}

fn params() -> impl Strategy<Value = Vec<Combo>> {
    let derived = (1i64..80).prop_map(derive_windows);
    let free = prop::array::uniform6(1i64..50);
    prop::collection::vec(prop_oneof![derived, free], 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A flat price with sparse single-tick changes: `d` is exactly zero or a few ulps from it
    /// on the flats, and small but real right after each tick.
    #[test]
    fn sparse_single_ticks_on_a_flat_price(
        level in prop::sample::select(vec![1.1, 0.3, 100.0, 1234.5]),
        every in 5usize..200,
        n in 50usize..1500,
        params in params(),
    ) {
        assert_rolling_identical(&sparse_ticks(n, level, 0.01, every), &params, 0.09);
    }

    /// Prices on a tick grid, so the same values repeat and windows tie.
    #[test]
    fn tick_grids(steps in prop::collection::vec(-3i64..=3, 20..1500), params in params()) {
        let mut ticks = 10_000i64;
        let close: Vec<f64> = steps
            .iter()
            .map(|s| {
                ticks = (ticks + s).max(1);
                ticks as f64 * 0.01
            })
            .collect();
        assert_rolling_identical(&close, &params, 0.09);
    }

    /// Long flat runs at values that are not exact in binary, and at extreme scales.
    #[test]
    fn long_flat_runs_at_awkward_values(
        runs in prop::collection::vec(
            (prop::sample::select(vec![1.1, 0.3, 1e-6, 1e6]), 1usize..400), 1..6),
        params in params(),
    ) {
        let close: Vec<f64> =
            runs.iter().flat_map(|&(v, n)| std::iter::repeat_n(v, n)).collect();
        assert_rolling_identical(&close, &params, 0.09);
    }

    /// NaN runs right next to flat runs and noise.
    #[test]
    fn nan_runs_next_to_flat_runs(
        pieces in prop::collection::vec((0u8..3, 1usize..120), 1..10),
        params in params(),
    ) {
        let noise = gbm(200, 9, 0.01);
        let mut close = Vec::new();
        for (kind, len) in pieces {
            match kind {
                0 => close.extend(std::iter::repeat_n(f64::NAN, len)),
                1 => close.extend(std::iter::repeat_n(1.1, len)),
                _ => close.extend(noise.iter().take(len)),
            }
        }
        if close.iter().all(|v| v.is_nan()) {
            close.push(1.1);
        }
        assert_rolling_identical(&close, &params, 0.09);
    }

    /// Any magnitude a price may have: a GBM scaled by `2^e` for `e` from the smallest subnormal
    /// to where the largest bar stays finite, with random NaN bars and isolated extreme bars.
    #[test]
    fn sweeps_are_exact_across_the_exponent_range(
        close in across_the_range(),
        params in params(),
    ) {
        assert_rolling_identical(&close, &params, 0.09);
    }

    /// The bound holds at every magnitude, and every bar past the overflow guard is left to the
    /// exact path.
    #[test]
    fn the_bound_holds_across_the_exponent_range(
        close in across_the_range(),
        l in 1i64..80,
    ) {
        let r = worst_ratio(&close, &derive_windows(l), 1.0);
        prop_assert!(r <= 1.0, "ratio {}", r);
    }

    /// The bound holds on random series and windows, not only on the fixed ones above.
    #[test]
    fn the_bound_holds_on_random_series(
        seed in 0u64..1000,
        sigma in prop::sample::select(vec![0.0001, 0.001, 0.01, 0.05]),
        n in 20usize..2000,
        l in 1i64..100,
    ) {
        let close = gbm(n, seed, sigma);
        let r = worst_ratio(&close, &derive_windows(l), 1.0);
        prop_assert!(r <= 1.0, "ratio {}", r);
    }
}

#[test]
fn the_module_exposes_its_stats_type() {
    // Stats default to an empty sweep that certified everything.
    assert_eq!(rolling::Stats::default().certified_fraction(), 1.0);
}
