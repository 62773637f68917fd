//! The built-in GBM series made fast: [`GbmStream`]'s growth factors shared among threads and
//! compiled for the best instruction set found at run time, with the kernel's bits.

use crate::Threads;
use crate::rayon::{team_map, thread_count};
use crate::simd::Tier;
use hullsweep_kernel::{GbmStream, KernelError, Pairs};

/// Fewer pairs than this per worker and a thread costs more than it saves.
const MIN_PAIRS_PER_WORKER: usize = 2_048;

/// `hullsweep_kernel::gbm(bars, seed, sigma)` bit for bit, on `threads` at the best tier.
pub fn gbm(bars: usize, seed: u64, sigma: f64, threads: Threads) -> Result<Vec<f64>, KernelError> {
    if bars == 0 {
        return Err(KernelError::BadGenerator {
            detail: "bars = 0: the series needs at least one bar".to_string(),
        });
    }
    let mut stream = GbmStream::new(seed, sigma)?;
    let mut close = vec![0.0; bars];
    fill(&mut stream, &mut close, threads)?;
    Ok(close)
}

/// `stream.fill(out)` bit for bit, on `threads` at the best tier.
pub fn fill(stream: &mut GbmStream, out: &mut [f64], threads: Threads) -> Result<(), KernelError> {
    // Found per call without a list: `hullsweep data` fills a file piece by piece.
    let best = Tier::ALL
        .into_iter()
        .find(|&t| factors_at(t).is_some())
        .unwrap_or(Tier::Scalar);
    fill_at(best, stream, out, threads)
}

/// The tiers the generator runs at on this CPU, best first (the AVX-512 one needs AVX-512DQ
/// too, for its vector float-to-integer conversions).
pub fn tiers() -> Vec<Tier> {
    Tier::ALL
        .into_iter()
        .filter(|&t| factors_at(t).is_some())
        .collect()
}

/// [`fill`] at a given tier; refused when this CPU cannot run it.
pub fn fill_at(
    tier: Tier,
    stream: &mut GbmStream,
    out: &mut [f64],
    threads: Threads,
) -> Result<(), KernelError> {
    let Some(factors) = factors_at(tier) else {
        return Err(KernelError::BadGenerator {
            detail: format!("the {} tier does not run on this CPU", tier.name()),
        });
    };
    let workers = thread_count(threads);
    stream.fill_with(out, |mut pairs| {
        let workers = workers.min(pairs.len() / MIN_PAIRS_PER_WORKER).max(1);
        if workers == 1 {
            return factors(pairs);
        }
        let mut parts = Vec::with_capacity(workers);
        for left in (1..=workers).rev() {
            let mid = pairs.len() / left;
            let (head, tail) = pairs.split_at(mid);
            parts.push(head);
            pairs = tail;
        }
        team_map(workers, parts, factors);
    })
}

/// The growth factors of `tier` ([`Pairs::factors`] compiled for it), if this CPU runs it.
fn factors_at(tier: Tier) -> Option<fn(Pairs<'_>)> {
    match tier {
        #[cfg(target_arch = "x86_64")]
        Tier::Avx512
            if std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512dq") =>
        {
            // SAFETY: avx512f and avx512dq were detected just above.
            Some(|p| unsafe { x86::avx512(p) })
        }
        #[cfg(target_arch = "x86_64")]
        Tier::Avx2 if std::is_x86_feature_detected!("avx2") => {
            // SAFETY: avx2 was detected just above.
            Some(|p| unsafe { x86::avx2(p) })
        }
        // The baseline of each target (SSE2, NEON) and the portable tier are the same code.
        Tier::Sse2 if cfg!(target_arch = "x86_64") => Some(|p| p.factors()),
        Tier::Neon if cfg!(target_arch = "aarch64") => Some(|p| p.factors()),
        Tier::Scalar => Some(|p| p.factors()),
        _ => None,
    }
}

/// The kernel's [`Pairs::factors`], inlined and vectorised at wider instruction sets.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use hullsweep_kernel::Pairs;

    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) fn avx512(pairs: Pairs<'_>) {
        pairs.factors();
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn avx2(pairs: Pairs<'_>) {
        pairs.factors();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(xs: &[f64]) -> Vec<u64> {
        xs.iter().map(|x| x.to_bits()).collect()
    }

    /// Every tier this CPU runs, on 1 to 3 threads, whole and in pieces, is the kernel's
    /// generator bit for bit.
    #[test]
    fn every_tier_and_thread_count_is_the_kernel() {
        let (bars, seed, sigma) = (40_001, 11, 0.003);
        let want = bits(&hullsweep_kernel::gbm(bars, seed, sigma).unwrap());
        assert!(tiers().contains(&Tier::Scalar));
        for tier in tiers() {
            for threads in [1, 2, 3] {
                let mut stream = GbmStream::new(seed, sigma).unwrap();
                let mut got = vec![0.0; bars];
                let (a, rest) = got.split_at_mut(9_999);
                let (b, c) = rest.split_at_mut(1);
                for piece in [a, b, c] {
                    fill_at(tier, &mut stream, piece, Threads::Fixed(threads)).unwrap();
                }
                assert_eq!(bits(&got), want, "{} on {threads} threads", tier.name());
            }
        }
        let fast = gbm(bars, seed, sigma, Threads::Auto).unwrap();
        assert_eq!(bits(&fast), want);
    }

    #[test]
    fn bad_arguments_are_the_kernels_errors() {
        assert_eq!(
            gbm(0, 1, 0.001, Threads::Auto).unwrap_err().to_string(),
            hullsweep_kernel::gbm(0, 1, 0.001).unwrap_err().to_string()
        );
        assert_eq!(
            gbm(10, 1, 2.0, Threads::Auto).unwrap_err().to_string(),
            hullsweep_kernel::gbm(10, 1, 2.0).unwrap_err().to_string()
        );
        let e = gbm(150_000, 1, 1.0, Threads::Fixed(2))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            hullsweep_kernel::gbm(150_000, 1, 1.0)
                .unwrap_err()
                .to_string()
        );
        let missing = Tier::ALL.into_iter().find(|t| !tiers().contains(t));
        if let Some(t) = missing {
            let mut stream = GbmStream::new(1, 0.001).unwrap();
            assert!(fill_at(t, &mut stream, &mut [0.0; 4], Threads::Auto).is_err());
        }
    }
}
