//! `rolling`'s fast path compiled per instruction-set tier: [`fast_d_on`] runs
//! [`fast_d`](super::lanes::fast_d) at the tier asked for, if this CPU has it.

use super::certify::Plan;
use super::lanes::fast_d;
use super::prepare::Prepared;
use super::scratch::Scratch;
use super::signs::Baseline;
use crate::simd::Tier;

/// [`fast_d`] compiled for one instruction-set tier. The arithmetic is lane-wise; the tiers with
/// fused multiply-adds round some steps once where the others round twice, so their fast `d`
/// can differ in its last bits, each within the bound: every tier certifies only bars whose
/// class is the reference's, and every tier's results are the reference's bit for bit.
pub(super) fn fast_d_on(
    tier: Tier,
    prep: &Prepared<'_>,
    plan: &Plan,
    scratch: &mut Scratch,
    keep: Option<&mut [f64]>,
) {
    match tier {
        #[cfg(target_arch = "x86_64")]
        Tier::Avx512
            if std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("fma")
                && std::is_x86_feature_detected!("bmi2") =>
        {
            // SAFETY: the CPU has AVX-512F, FMA and BMI2, checked just above.
            unsafe { x86::fast_d_avx512(prep, plan, scratch, keep) }
        }
        #[cfg(target_arch = "x86_64")]
        Tier::Avx2
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") =>
        {
            // SAFETY: the CPU has AVX2 and FMA, checked on the line above.
            unsafe { x86::fast_d_avx2(prep, plan, scratch, keep) }
        }
        // SAFETY: the baseline needs nothing beyond the target's.
        _ => unsafe { fast_d::<Baseline>(prep, plan, scratch, keep) },
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::super::signs::{Avx2, Avx512};
    use super::{Plan, Prepared, Scratch, fast_d};

    /// # Safety
    /// The CPU must support AVX-512F, FMA and BMI2.
    #[target_feature(enable = "avx512f,fma,bmi2")]
    pub(super) unsafe fn fast_d_avx512(
        prep: &Prepared<'_>,
        plan: &Plan,
        scratch: &mut Scratch,
        keep: Option<&mut [f64]>,
    ) {
        // SAFETY: the caller's contract.
        unsafe { fast_d::<Avx512>(prep, plan, scratch, keep) }
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx,avx2,fma")]
    pub(super) unsafe fn fast_d_avx2(
        prep: &Prepared<'_>,
        plan: &Plan,
        scratch: &mut Scratch,
        keep: Option<&mut [f64]>,
    ) {
        // SAFETY: the caller's contract.
        unsafe { fast_d::<Avx2>(prep, plan, scratch, keep) }
    }
}
