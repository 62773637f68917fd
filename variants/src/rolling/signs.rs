//! What each instruction-set tier gives the fast path: the second level's sign bytes (each lane's
//! `d < 0.0` as one comparison and mask move, spread to a byte per lane) and fused multiply-adds.

use super::layout::V;

/// How a tier turns the lanes' `d < 0.0` into a bit mask, bit `l` for lane `l` (false for NaN),
/// and whether its multiply-adds fuse.
///
/// Built lane by lane in plain Rust, the mask compiled to a chain of shuffles and ORs that cost
/// the second level more than its arithmetic; a comparison into a mask register (AVX-512) or a
/// `movmskpd` (AVX2, SSE2) is one or two instructions.
pub(super) trait TierOps {
    /// The tier has fused multiply-add instructions, so [`mul_sub`] is one instruction. Without
    /// them `f64::mul_add` is a library call, many times slower than the two operations.
    const FUSED: bool;

    /// # Safety
    /// The CPU has the tier's instruction set.
    unsafe fn neg_mask(d: &V) -> u64;

    /// The sign bytes of `d`: byte `l` is `u8::from(d[l] < 0.0)`.
    ///
    /// # Safety
    /// The CPU has the tier's instruction set.
    #[inline(always)]
    unsafe fn sign_bytes(d: &V) -> u64 {
        // SAFETY: the caller's contract.
        spread(unsafe { Self::neg_mask(d) })
    }
}

/// The baseline: SSE2 `movmskpd` on x86-64 (always present there), a lane loop elsewhere.
pub(super) struct Baseline;

impl TierOps for Baseline {
    // x86-64's baseline has no FMA; aarch64's has (`fmadd`, `fmla`).
    const FUSED: bool = cfg!(target_arch = "aarch64");

    #[inline(always)]
    unsafe fn neg_mask(d: &V) -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_cmplt_pd, _mm_loadu_pd, _mm_movemask_pd, _mm_setzero_pd};
            let mut bits = 0;
            for k in 0..d.len() / 2 {
                // SAFETY: lanes 2k and 2k + 1 are inside `d`; SSE2 is part of x86-64.
                let neg = unsafe {
                    let two = _mm_loadu_pd(d.as_ptr().add(2 * k));
                    _mm_movemask_pd(_mm_cmplt_pd(two, _mm_setzero_pd()))
                };
                bits |= (neg as u64) << (2 * k);
            }
            bits
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut bits = 0;
            for (l, &d) in d.iter().enumerate() {
                bits |= u64::from(d < 0.0) << l;
            }
            bits
        }
    }
}

/// AVX2 with FMA: two `vcmppd` and `vmovmskpd`.
#[cfg(target_arch = "x86_64")]
pub(super) struct Avx2;

#[cfg(target_arch = "x86_64")]
impl TierOps for Avx2 {
    const FUSED: bool = true;

    #[inline(always)]
    unsafe fn neg_mask(d: &V) -> u64 {
        use std::arch::x86_64::{
            _CMP_LT_OQ, _mm256_cmp_pd, _mm256_loadu_pd, _mm256_movemask_pd, _mm256_setzero_pd,
        };
        // SAFETY: both halves are inside `d`; the caller's CPU has AVX2 (so AVX).
        unsafe {
            let lo = _mm256_loadu_pd(d.as_ptr());
            let hi = _mm256_loadu_pd(d.as_ptr().add(4));
            let zero = _mm256_setzero_pd();
            let lo = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(lo, zero)) as u64;
            let hi = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_LT_OQ>(hi, zero)) as u64;
            lo | hi << 4
        }
    }
}

/// AVX-512F with FMA and BMI2: one comparison into a mask register, spread to bytes by `pdep`
/// (one instruction on every CPU with AVX-512, where [`spread`] takes six).
#[cfg(target_arch = "x86_64")]
pub(super) struct Avx512;

#[cfg(target_arch = "x86_64")]
impl TierOps for Avx512 {
    const FUSED: bool = true;

    #[inline(always)]
    unsafe fn neg_mask(d: &V) -> u64 {
        use std::arch::x86_64::{
            _CMP_LT_OQ, _mm512_cmp_pd_mask, _mm512_loadu_pd, _mm512_setzero_pd,
        };
        // SAFETY: the 8 lanes are `d`; the caller's CPU has AVX-512F.
        unsafe {
            let v = _mm512_loadu_pd(d.as_ptr());
            u64::from(_mm512_cmp_pd_mask::<_CMP_LT_OQ>(v, _mm512_setzero_pd()))
        }
    }

    #[inline(always)]
    unsafe fn sign_bytes(d: &V) -> u64 {
        use std::arch::x86_64::_pdep_u64;
        // SAFETY: the caller's CPU has AVX-512F and BMI2.
        unsafe { _pdep_u64(Self::neg_mask(d), 0x0101_0101_0101_0101) }
    }
}

/// `a · b - c` for the fast path: one rounding where the tier fuses it, two where it does not.
/// Either is within the bound: a fused result is the unfused expression with the product's
/// rounding error zero, and `rolling.md` bounds every error of that size (its "Fused
/// multiply-adds").
#[inline(always)]
pub(super) fn mul_sub<T: TierOps>(a: f64, b: f64, c: f64) -> f64 {
    if T::FUSED {
        a.mul_add(b, -c)
    } else {
        a * b - c
    }
}

/// Bit `l` of `bits` (`bits < 256`) as byte `l` of the word, `0` or `1`: the sign bytes' layout
/// (lane `l` in bits `8 l ..`), in five integer operations.
#[inline(always)]
pub(super) fn spread(bits: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    debug_assert!(bits < 256);
    // Every byte a copy of `bits` (no carries: `bits < 256`), then byte `l` keeps only bit `l`.
    let own = bits.wrapping_mul(ONES) & 0x8040_2010_0804_0201;
    // A nonzero byte (at most 0x80) plus 0x7f sets its top bit and carries nothing out of it.
    ((own + 0x7f7f_7f7f_7f7f_7f7f) >> 7) & ONES
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rolling::layout::LANES;

    /// Every mask of 8 lanes gives the bytes the lanes' comparisons give one by one.
    #[test]
    fn spread_puts_bit_l_in_byte_l() {
        for bits in 0..256u64 {
            let want: [u8; LANES] = std::array::from_fn(|l| u8::from(bits >> l & 1 == 1));
            assert_eq!(spread(bits), u64::from_le_bytes(want), "{bits:#010b}");
        }
    }

    /// Every tier's mask is `d < 0.0` lane by lane, for every sign pattern and the values that
    /// differ from a sign bit: -0.0, NaNs of either sign, infinities, subnormals.
    #[test]
    fn every_tier_masks_and_spreads_d_below_zero() {
        let odd = [
            -0.0,
            0.0,
            f64::NAN,
            -f64::NAN,
            f64::NEG_INFINITY,
            f64::INFINITY,
            -f64::MIN_POSITIVE / 4.0,
            f64::MIN_POSITIVE / 4.0,
            -1.5,
            2.5,
        ];
        let mut cases = Vec::new();
        for bits in 0..256u32 {
            cases.push(std::array::from_fn(|l| {
                if bits >> l & 1 == 1 { -1.0 } else { 1.0 }
            }));
        }
        for k in 0..odd.len() {
            cases.push(std::array::from_fn(|l| odd[(k + l) % odd.len()]));
        }
        for d in &cases {
            let want: u64 = (0..LANES).map(|l| u64::from(d[l] < 0.0) << l).sum();
            // SAFETY: the baseline needs nothing beyond the target's baseline.
            assert_eq!(unsafe { Baseline::neg_mask(d) }, want, "baseline {d:?}");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: checked on the line above.
                assert_eq!(unsafe { Avx2::neg_mask(d) }, want, "avx2 {d:?}");
            }
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: checked on the line above.
                assert_eq!(unsafe { Avx512::neg_mask(d) }, want, "avx512 {d:?}");
            }
            let bytes = u64::from_le_bytes(std::array::from_fn(|l| u8::from(d[l] < 0.0)));
            // SAFETY: as above.
            assert_eq!(unsafe { Baseline::sign_bytes(d) }, bytes, "baseline {d:?}");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("bmi2") {
                // SAFETY: checked on the line above.
                assert_eq!(unsafe { Avx512::sign_bytes(d) }, bytes, "avx512 {d:?}");
            }
        }
    }
}
