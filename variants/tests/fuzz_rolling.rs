//! A differential fuzzer of `rolling` against the reference: random series (any magnitude from
//! the smallest subnormal to near `f64::MAX`, flats, tick grids, NaN patterns, extreme bars) and
//! random combos, and every (pnl, trades) must be the reference's, bit for bit.
//!
//! `cargo test` runs it for 2 s. A long run, and a replay:
//! ```text
//! scripts/fuzz-rolling 600                                   # 600 s on every core, release build
//! HULLSWEEP_FUZZ_SECS=600 cargo test --release -p hullsweep-variants --test fuzz_rolling -- --nocapture
//! HULLSWEEP_FUZZ_SEED=N cargo test -p hullsweep-variants --test fuzz_rolling -- --nocapture
//! ```
//! A mismatch names the seed of its series; replaying that seed runs that series alone.

use hullsweep_kernel::{Combo, ValidClose, derive_windows};
use hullsweep_variants::Threads;
use hullsweep_variants::rolling::sweep_with_stats;
use hullsweep_variants::simd::Tier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// SplitMix64: the fuzzer's only randomness, so a seed replays its case exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.range(0, xs.len() as u64) as usize]
    }
}

/// `2^e` for `e` in `-1074..=1023`, exactly.
fn pow2(e: i64) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

const TINY: f64 = f64::from_bits(1);

/// One random series: a shape (walk, tick grid, flats, sparse ticks) at a random scale, with
/// NaN bars and isolated extreme bars. Every price is finite and `> 0`, or NaN.
fn series(rng: &mut Rng) -> Vec<f64> {
    let n = if rng.chance(10) {
        rng.range(1, 3000)
    } else {
        rng.range(2, 400)
    } as usize;
    // Exponent of the scale: anywhere, near the smallest normal, near the top, or ordinary.
    let e = match rng.range(0, 4) {
        0 => rng.range(0, 2091) as i64 - 1074,
        1 => rng.range(0, 80) as i64 - 1074 + 20,
        2 => rng.range(990, 1017) as i64,
        _ => rng.range(0, 20) as i64 - 10,
    };
    let scale = pow2(e);
    // A walk in units of about 100 (so a scale of 2^e gives prices near 2^(e+6.6)).
    let sigma = rng.pick(&[0.0, 1e-4, 1e-3, 1e-2, 5e-2]);
    let mut p = 100.0f64;
    let mut raw: Vec<f64> = (0..n)
        .map(|_| {
            p *= 1.0 + sigma * (2.0 * rng.unit() - 1.0);
            p = p.clamp(50.0, 200.0);
            p
        })
        .collect();
    match rng.range(0, 5) {
        // Tick grid: few distinct levels, many repeats.
        0 => {
            let tick = rng.pick(&[0.01, 0.5, 1.0, 7.0]);
            raw.iter_mut()
                .for_each(|v| *v = (*v / tick).round().max(1.0) * tick);
        }
        // Flat runs at values not exact in binary, between stretches of the walk.
        1 => {
            let mut i = 0;
            while i < n {
                let len = rng.range(1, 120) as usize;
                if rng.chance(50) {
                    let level = rng.pick(&[110.0, 30.0, 100.1, 77.7]);
                    raw[i..(i + len).min(n)].fill(level);
                }
                i += len;
            }
        }
        // A flat price with a single tick every few bars.
        2 => {
            let every = rng.range(2, 60) as usize;
            let mut level = 110.0;
            for (i, v) in raw.iter_mut().enumerate() {
                if i > 0 && i % every == 0 {
                    level += if rng.chance(50) { 0.01 } else { -0.01 };
                }
                *v = level;
            }
        }
        _ => {}
    }
    let mut close: Vec<f64> = raw.iter().map(|v| (v * scale).max(TINY)).collect();
    if rng.chance(30) {
        for _ in 0..rng.range(1, 4) {
            let at = rng.range(0, n as u64) as usize;
            let len = rng.range(1, 40) as usize;
            close[at..(at + len).min(n)].fill(f64::NAN);
        }
    }
    if rng.chance(25) {
        for _ in 0..rng.range(1, 4) {
            let at = rng.range(0, n as u64) as usize;
            close[at] = rng.pick(&[TINY, f64::MIN_POSITIVE, 1e300, 1e307, f64::MAX]);
        }
    }
    if close.iter().all(|v| v.is_nan()) {
        close[0] = 1.0;
    }
    close
}

/// Random combos: derived from a length, or six independent windows (some past the series).
fn combos(rng: &mut Rng, n: usize) -> Vec<Combo> {
    let longest = (n as u64 + 10).min(120);
    (0..rng.range(1, 9))
        .map(|_| {
            if rng.chance(50) {
                derive_windows(rng.range(1, longest + 1) as i64)
            } else {
                std::array::from_fn(|_| {
                    if rng.chance(20) {
                        rng.range(1, 4) as i64
                    } else {
                        rng.range(1, longest + 1) as i64
                    }
                })
            }
        })
        .collect()
}

/// Runs the series of `seed` through `rolling` (on a random tier) and the reference; the
/// number of (series, combo) cases it checked, or a description of the first mismatch.
fn case(seed: u64) -> Result<u64, String> {
    let mut rng = Rng(seed);
    let close = series(&mut rng);
    let params = combos(&mut rng, close.len());
    let fee = rng.pick(&[0.09, 0.0, -0.05, 1.0]);
    let tiers = Tier::available();
    let tier = rng.pick(&tiers);
    let kernel = tier.kernel().expect("available tier");
    let want = hullsweep_kernel::sweep(&close, &params, fee).map_err(|e| e.to_string())?;
    let valid = ValidClose::new(&close).map_err(|e| e.to_string())?;
    let (got, _) = sweep_with_stats(valid, &params, fee, Threads::Fixed(1), tier, kernel)
        .map_err(|e| e.to_string())?;
    for (k, combo) in params.iter().enumerate() {
        let same_pnl = got.pnl[k].to_bits() == want.pnl[k].to_bits()
            || (got.pnl[k].is_nan() && want.pnl[k].is_nan());
        if !same_pnl || got.trades[k] != want.trades[k] {
            return Err(format!(
                "seed {seed}: {} bars, combo {:?}, tier {}: rolling ({}, {}), reference ({}, {})",
                close.len(),
                combo,
                tier.name(),
                got.pnl[k],
                got.trades[k],
                want.pnl[k],
                want.trades[k]
            ));
        }
    }
    Ok(params.len() as u64)
}

fn env(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, got {v:?}"))
    })
}

#[test]
fn rolling_matches_the_reference_on_random_cases() {
    if let Some(seed) = env("HULLSWEEP_FUZZ_SEED") {
        let cases = case(seed).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("seed {seed}: {cases} cases, all bit-identical");
        return;
    }
    let secs = env("HULLSWEEP_FUZZ_SECS").unwrap_or(2);
    let max_cases = env("HULLSWEEP_FUZZ_CASES").unwrap_or(u64::MAX);
    // A run's seeds start from the clock unless pinned, so every run explores new cases.
    let base = env("HULLSWEEP_FUZZ_BASE").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            << 20
    });
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (next, cases, series) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let failed = AtomicBool::new(false);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let started = Instant::now();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    while Instant::now() < deadline
                        && cases.load(Ordering::Relaxed) < max_cases
                        && !failed.load(Ordering::Relaxed)
                    {
                        let seed = base.wrapping_add(next.fetch_add(1, Ordering::Relaxed));
                        match case(seed) {
                            Ok(n) => {
                                cases.fetch_add(n, Ordering::Relaxed);
                                series.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => {
                                failed.store(true, Ordering::Relaxed);
                                return Some(e);
                            }
                        }
                    }
                    None
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().expect("worker"))
            .collect()
    });
    eprintln!(
        "rolling fuzz: {} (series, combo) cases over {} series in {:.1} s on {workers} threads \
         (seeds from {base}), {} mismatches",
        cases.load(Ordering::Relaxed),
        series.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
