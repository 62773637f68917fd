use super::*;
use crate::data::{DEFAULT_BARS, default_close};
use crate::detmath::{det_exp, det_ln};
use crate::fnv1a64;

/// The definition, one value at a time: each normal from its polar pair as drawn (the pair's
/// second normal kept for the next bar), each price from the last by the scalar `exp`.
fn gbm_scalar(bars: usize, seed: u64, sigma: f64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    let drift = sigma * sigma / 2.0;
    let (mut spare, mut price) = (None, 100.0);
    let mut close = vec![price];
    while close.len() < bars {
        let z = spare.take().unwrap_or_else(|| {
            let (u, v, s) = rng.accepted();
            let f = (-2.0 * det_ln(s) / s).sqrt();
            spare = Some(v * f);
            u * f
        });
        price *= det_exp(sigma * z - drift);
        close.push(price);
    }
    close
}

fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn gbm_is_the_scalar_definition_bit_for_bit() {
    // Lengths around a block, odd and even, and another seed and sigma.
    for (bars, seed, sigma) in [
        (1, 1, 0.001),
        (2, 1, 0.001),
        (3, 5, 0.01),
        (64, 5, 0.01),
        (66, 5, 0.01),
        (32_769, 42, 0.001),
        (32_770, 42, 0.001),
        (70_001, 9, 0.05),
    ] {
        let want = gbm_scalar(bars, seed, sigma);
        assert_eq!(
            bits(&gbm(bars, seed, sigma).unwrap()),
            bits(&want),
            "{bars} bars"
        );
    }
}

#[test]
fn normals_look_normal() {
    let mut rng = Rng::new(7);
    let mut z = Vec::new();
    for _ in 0..100_000 {
        let (u, v, s) = rng.accepted();
        let f = (-2.0 * det_ln(s) / s).sqrt();
        z.extend([u * f, v * f]);
    }
    let n = z.len() as f64;
    let mean = z.iter().sum::<f64>() / n;
    let var = z.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    assert!(mean.abs() < 0.01, "mean {mean}");
    assert!((var - 1.0).abs() < 0.01, "var {var}");
}

/// The golden checksum: if this moves, every fixture and report built on the default data is stale.
#[test]
fn default_series_is_pinned() {
    let close = default_close();
    assert_eq!(close.len(), DEFAULT_BARS);
    assert_eq!(close[0], 100.0);
    assert_eq!(
        fnv1a64(&close),
        GOLDEN_DEFAULT_FNV,
        "default series drifted"
    );
    assert_eq!(close[1].to_bits(), GOLDEN_BAR1_BITS);
    assert_eq!(close[DEFAULT_BARS - 1].to_bits(), GOLDEN_LAST_BITS);
}

const GOLDEN_DEFAULT_FNV: u64 = 0x23d1_1bfd_93b8_b606;
const GOLDEN_BAR1_BITS: u64 = 0x4058_fb59_c6a1_1810;
const GOLDEN_LAST_BITS: u64 = 0x4052_b7b9_c80c_c955;

#[test]
fn generator_refuses_bad_arguments() {
    assert!(gbm(0, 1, 0.001).is_err());
    assert!(gbm(10, 1, -0.1).is_err());
    assert!(gbm(10, 1, f64::NAN).is_err());
    let e = gbm(150_000, 1, 1.0).unwrap_err().to_string();
    assert!(e.contains("too large") && e.contains("at bar"), "{e}");
    assert_eq!(gbm(5, 9, 0.0).unwrap(), vec![100.0; 5]);
}

#[test]
fn gbm_in_pieces_is_gbm() {
    let whole = gbm(39_000, 42, 0.01).unwrap();
    let mut g = GbmStream::new(42, 0.01).unwrap();
    let mut pieces = Vec::new();
    for len in [1, 2, 997, 0, 3000, 1, 1, 33_000, 1998] {
        let mut buf = vec![0.0; len];
        g.fill(&mut buf).unwrap();
        pieces.extend(buf);
    }
    assert_eq!(bits(&pieces), bits(&whole));
    assert!(GbmStream::new(1, 2.0).is_err());
}

/// What `fill_with` promises a caller: the factors computed in any split give `fill`'s bits.
#[test]
fn factors_in_parts_are_the_factors() {
    let whole = gbm(50_001, 3, 0.002).unwrap();
    for parts in [1, 2, 3, 7] {
        let mut g = GbmStream::new(3, 0.002).unwrap();
        let mut got = vec![0.0; whole.len()];
        g.fill_with(&mut got, |mut pairs| {
            for left in (1..=parts).rev() {
                let mid = pairs.len() / left;
                let (head, tail) = pairs.split_at(mid);
                head.factors();
                pairs = tail;
            }
        })
        .unwrap();
        assert_eq!(bits(&got), bits(&whole), "{parts} parts");
    }
}
