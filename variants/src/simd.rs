//! Explicit-SIMD WMA with run-time dispatch (AVX-512, AVX2, SSE2, NEON, portable scalar), plugged
//! into the allocation-free pipeline of [`prealloc`](crate::prealloc).
//!
//! Bit-identity with the reference comes from vectorising ACROSS outputs: lane `j` of a block
//! starting at bar `i` computes output `i + j` with exactly the scalar order (`s += x * (k+1)`,
//! oldest first, separate multiply and add, never an FMA), so no sum is reassociated. Several
//! independent vector accumulators per block hide the FP-add latency that bounds the reference.

use crate::Threads;
use crate::prealloc::{Backtest, Scratch, sweep_fresh_with, sweep_from_with, sweep_into_with};
use hullsweep_kernel::{Combo, KernelError, SweepResult, ValidClose};
use std::ops::Range;
use std::sync::atomic::{AtomicPtr, Ordering};

/// An instruction-set tier of the WMA kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tier {
    /// x86-64 AVX-512F, 8 lanes.
    Avx512,
    /// x86-64 AVX2, 4 lanes.
    Avx2,
    /// x86-64 SSE2, 2 lanes (baseline on x86-64).
    Sse2,
    /// aarch64 NEON, 2 lanes (baseline on aarch64).
    Neon,
    /// Plain Rust, several outputs in flight; runs everywhere.
    Scalar,
}

/// The signature of one tier's WMA: `out[i] = wma(x, w)[i]` for `i` in `from..to`, other elements
/// untouched; requires `out.len() == x.len()`, `w >= 1`, `from <= to <= x.len()`.
///
/// The tier functions are `unsafe` only because they are compiled for CPU features that must be
/// present; [`WmaKernel`] only hands them out after detection.
type RawWma = unsafe fn(x: &[f64], w: usize, out: &mut [f64], from: usize, to: usize);

impl Tier {
    /// Every tier, best first.
    pub const ALL: [Tier; 5] = [
        Tier::Avx512,
        Tier::Avx2,
        Tier::Sse2,
        Tier::Neon,
        Tier::Scalar,
    ];

    /// Lower-case name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Avx512 => "avx512",
            Tier::Avx2 => "avx2",
            Tier::Sse2 => "sse2",
            Tier::Neon => "neon",
            Tier::Scalar => "scalar",
        }
    }

    /// Whether this CPU can run the tier.
    pub fn is_available(self) -> bool {
        self.kernel().is_some()
    }

    /// The tiers this CPU can run, best first (always ends with [`Tier::Scalar`]).
    pub fn available() -> Vec<Tier> {
        Tier::ALL.into_iter().filter(|t| t.is_available()).collect()
    }

    /// The best tier this CPU can run.
    pub fn best() -> Tier {
        Tier::ALL
            .into_iter()
            .find(|t| t.is_available())
            .unwrap_or(Tier::Scalar)
    }

    /// The tier's kernel, or `None` when this CPU (or target) cannot run it.
    pub fn kernel(self) -> Option<WmaKernel> {
        let raw: RawWma = match self {
            #[cfg(target_arch = "x86_64")]
            Tier::Avx512 if std::is_x86_feature_detected!("avx512f") => x86::wma_avx512,
            #[cfg(target_arch = "x86_64")]
            Tier::Avx2
                if std::is_x86_feature_detected!("avx2")
                    && std::is_x86_feature_detected!("avx") =>
            {
                x86::wma_avx2
            }
            #[cfg(target_arch = "x86_64")]
            Tier::Sse2 if std::is_x86_feature_detected!("sse2") => x86::wma_sse2,
            #[cfg(target_arch = "aarch64")]
            Tier::Neon if std::arch::is_aarch64_feature_detected!("neon") => neon::wma_neon,
            Tier::Scalar => wma_scalar,
            _ => return None,
        };
        Some(WmaKernel { tier: self, raw })
    }
}

/// A WMA kernel the running CPU supports: only [`Tier::kernel`] and [`WmaKernel::best`] make one.
#[derive(Clone, Copy, Debug)]
pub struct WmaKernel {
    tier: Tier,
    // Invariant: the CPU supports every feature `raw` was compiled for.
    raw: RawWma,
}

/// The dispatched kernel, cached after the first call (memchr style): it starts as [`detect`],
/// which picks the best tier, stores that tier's function here and forwards the call.
static BEST: AtomicPtr<()> = AtomicPtr::new(detect as *mut ());

/// # Safety
/// Same contract as every [`RawWma`]; it has no feature requirement of its own.
unsafe fn detect(x: &[f64], w: usize, out: &mut [f64], from: usize, to: usize) {
    let kernel = WmaKernel::detect();
    BEST.store(kernel.raw as *mut (), Ordering::Relaxed);
    kernel.wma_range(x, w, out, from..to);
}

impl WmaKernel {
    fn detect() -> WmaKernel {
        Tier::best().kernel().unwrap_or(WmaKernel {
            tier: Tier::Scalar,
            raw: wma_scalar,
        })
    }

    /// The best kernel for this CPU, from the cached function pointer.
    pub fn best() -> WmaKernel {
        let ptr = BEST.load(Ordering::Relaxed);
        if ptr == detect as *mut () {
            let kernel = WmaKernel::detect();
            BEST.store(kernel.raw as *mut (), Ordering::Relaxed);
            return kernel;
        }
        // SAFETY: BEST only ever holds `detect` or the `raw` of a kernel `detect()` returned, all
        // of type RawWma; a fn pointer round-trips through `*mut ()` on every supported target.
        let raw = unsafe { std::mem::transmute::<*mut (), RawWma>(ptr) };
        WmaKernel {
            tier: Tier::best(),
            raw,
        }
    }

    /// The tier this kernel runs.
    pub fn tier(self) -> Tier {
        self.tier
    }

    /// `out = wma(x, w)`, bit-identical to the reference's `wma(x, w)`.
    ///
    /// # Panics
    /// If `w == 0` or `out.len() != x.len()`.
    pub fn wma(self, x: &[f64], w: usize, out: &mut [f64]) {
        self.wma_range(x, w, out, 0..x.len());
    }

    /// Only the outputs `range` of [`wma`](WmaKernel::wma); the rest of `out` is untouched.
    /// The pipeline works in tiles of bars with this, so its buffers stay in cache.
    ///
    /// # Panics
    /// If `w == 0`, `out.len() != x.len()` or `range` is not inside `0..x.len()`.
    #[inline]
    pub fn wma_range(self, x: &[f64], w: usize, out: &mut [f64], range: Range<usize>) {
        assert!(
            w >= 1 && out.len() == x.len() && range.start <= range.end && range.end <= x.len(),
            "wma: w >= 1, equal lengths, range inside"
        );
        // SAFETY: the invariant of WmaKernel: the CPU has the features `raw` needs; the length,
        // window and range preconditions were just checked.
        unsafe { (self.raw)(x, w, out, range.start, range.end) }
    }
}

/// `wma(x, w, out)` through the cached best tier.
pub fn wma_into(x: &[f64], w: usize, out: &mut [f64]) {
    assert!(
        w >= 1 && out.len() == x.len(),
        "wma: w >= 1 and equal lengths"
    );
    let ptr = BEST.load(Ordering::Relaxed);
    // SAFETY: see WmaKernel::best; `detect` and every stored kernel satisfy RawWma's contract
    // on this CPU, and the preconditions were just checked.
    unsafe { std::mem::transmute::<*mut (), RawWma>(ptr)(x, w, out, 0, x.len()) }
}

/// `WEIGHTS[k] = (k + 1) as f64`, the reference's weights converted once (exact integers).
static WEIGHTS: [f64; 4096] = {
    let mut t = [0.0; 4096];
    let mut k = 0;
    while k < t.len() {
        t[k] = (k + 1) as f64;
        k += 1;
    }
    t
};

/// Writes NaN to the outputs of `from..to` before the first full window and returns where full
/// windows start, with the denominator; `None` when none of `from..to` has a full window.
#[inline(always)]
fn lead(x: &[f64], w: usize, out: &mut [f64], from: usize, to: usize) -> Option<(usize, f64)> {
    debug_assert!(w >= 1 && out.len() == x.len() && from <= to && to <= x.len());
    let start = from.max(w - 1);
    out[from..to.min(start)].fill(f64::NAN);
    // start < to <= x.len() also means w <= x.len(), so the denominator cannot overflow.
    (start < to).then(|| (start, (w * (w + 1) / 2) as f64))
}

/// Outputs `from..to` one at a time, in the reference's order (the blocks' remainder).
#[inline(always)]
fn tail(x: &[f64], w: usize, out: &mut [f64], from: usize, to: usize, denom: f64) {
    if from >= to {
        return;
    }
    for (o, win) in out[from..to].iter_mut().zip(x[from + 1 - w..to].windows(w)) {
        let mut s = 0.0;
        let mut wk = 1.0;
        for &v in win {
            s += v * wk;
            wk += 1.0;
        }
        *o = s / denom;
    }
}

/// The portable tier: `B` outputs per block in plain arrays, each its own accumulator chain.
///
/// # Safety
/// None needed (safe code); `unsafe` only to share the [`RawWma`] type.
unsafe fn wma_scalar(x: &[f64], w: usize, out: &mut [f64], from: usize, to: usize) {
    const B: usize = 8;
    let Some((mut i, denom)) = lead(x, w, out, from, to) else {
        return;
    };
    while i + B <= to {
        let mut acc = [0.0f64; B];
        // The window block for outputs i..i+B is x[i+1-w .. i+B].
        let span = &x[i + 1 - w..i + B];
        let mut wk = 1.0;
        for k in 0..w {
            let v: &[f64; B] = span[k..k + B].try_into().expect("B elements");
            for j in 0..B {
                acc[j] += v[j] * wk;
            }
            wk += 1.0;
        }
        for (o, a) in out[i..i + B].iter_mut().zip(acc) {
            *o = a / denom;
        }
        i += B;
    }
    tail(x, w, out, i, to, denom);
}

/// Generates one tier's WMA from its intrinsics: `U` vector accumulators of `L` lanes cover
/// `U * L` consecutive outputs; then single vectors, then the scalar tail.
macro_rules! simd_wma {
    (
        $(#[$attr:meta])* fn $name:ident; lanes $l:expr; unroll $u:expr;
        $vec:ty, $zero:path, $splat:path, $load:path, $store:path, $add:path, $mul:path, $div:path
    ) => {
        /// # Safety
        /// The CPU must support the features this function is compiled for; `w >= 1`,
        /// `out.len() == x.len()` and `from <= to <= x.len()`.
        $(#[$attr])*
        pub(super) unsafe fn $name(x: &[f64], w: usize, out: &mut [f64], from: usize, to: usize) {
            const L: usize = $l;
            const U: usize = $u;
            let Some((mut i, denom)) = crate::simd::lead(x, w, out, from, to) else {
                return;
            };
            // Blocks end at `to`, which is <= x.len(): every bound below is against it.
            let n = to;
            let xp = x.as_ptr();
            let op = out.as_mut_ptr();
            let one = $splat(1.0);
            let dv = $splat(denom);
            // The weights come from the table when it is long enough: a broadcast load per step
            // instead of a vector add, which would compete with the accumulators for the add
            // ports. The values are the same exact integers either way.
            let table = crate::simd::WEIGHTS.get(..w);
            while i + U * L <= n {
                let mut acc: [$vec; U] = [$zero(); U];
                macro_rules! step {
                    ($k:expr, $wk:expr) => {
                        for (u, a) in acc.iter_mut().enumerate() {
                            // SAFETY: the load covers x[i+1-w+k+u*L .. i+1-w+k+(u+1)*L]; its
                            // last index is at most i + U*L - 1 < n (k <= w-1, u <= U-1).
                            let v = unsafe { $load(xp.add(i + 1 - w + $k + u * L)) };
                            *a = $add(*a, $mul(v, $wk));
                        }
                    };
                }
                if let Some(weights) = table {
                    for (k, &wf) in weights.iter().enumerate() {
                        let wk = $splat(wf);
                        step!(k, wk);
                    }
                } else {
                    let mut wk = one;
                    for k in 0..w {
                        step!(k, wk);
                        wk = $add(wk, one);
                    }
                }
                for (u, a) in acc.iter().enumerate() {
                    // SAFETY: writes out[i+u*L .. i+(u+1)*L], inside out since i + U*L <= n.
                    unsafe { $store(op.add(i + u * L), $div(*a, dv)) };
                }
                i += U * L;
            }
            while i + L <= n {
                let mut a = $zero();
                let mut wk = one;
                for k in 0..w {
                    // SAFETY: last index read is i + 1 - w + k + L - 1 <= i + L - 1 < n.
                    let v = unsafe { $load(xp.add(i + 1 - w + k)) };
                    a = $add(a, $mul(v, wk));
                    wk = $add(wk, one);
                }
                // SAFETY: writes out[i .. i+L], inside out since i + L <= n.
                unsafe { $store(op.add(i), $div(a, dv)) };
                i += L;
            }
            crate::simd::tail(x, w, out, i, to, denom);
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    simd_wma! {
        #[target_feature(enable = "avx512f")]
        fn wma_avx512; lanes 8; unroll 8;
        __m512d, _mm512_setzero_pd, _mm512_set1_pd, _mm512_loadu_pd, _mm512_storeu_pd,
        _mm512_add_pd, _mm512_mul_pd, _mm512_div_pd
    }

    simd_wma! {
        #[target_feature(enable = "avx,avx2")]
        fn wma_avx2; lanes 4; unroll 8;
        __m256d, _mm256_setzero_pd, _mm256_set1_pd, _mm256_loadu_pd, _mm256_storeu_pd,
        _mm256_add_pd, _mm256_mul_pd, _mm256_div_pd
    }

    simd_wma! {
        #[target_feature(enable = "sse2")]
        fn wma_sse2; lanes 2; unroll 8;
        __m128d, _mm_setzero_pd, _mm_set1_pd, _mm_loadu_pd, _mm_storeu_pd,
        _mm_add_pd, _mm_mul_pd, _mm_div_pd
    }
}

#[cfg(target_arch = "aarch64")]
mod neon {
    use std::arch::aarch64::*;

    // Wrappers give the macro the same shapes as the x86 intrinsics (NEON is baseline on aarch64).
    #[inline]
    #[target_feature(enable = "neon")]
    fn zero() -> float64x2_t {
        vdupq_n_f64(0.0)
    }

    simd_wma! {
        #[target_feature(enable = "neon")]
        fn wma_neon; lanes 2; unroll 8;
        float64x2_t, zero, vdupq_n_f64, vld1q_f64, vst1q_f64, vaddq_f64, vmulq_f64, vdivq_f64
    }
}

/// Sweeps with a forced kernel (tests use it to exercise every tier), allocation-free per combo.
pub fn sweep_with(
    kernel: WmaKernel,
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
) -> Result<SweepResult, KernelError> {
    sweep_valid_with(kernel, ValidClose::new(close)?, params, fee_pct)
}

/// [`sweep_with`] over a series validated earlier.
pub fn sweep_valid_with(
    kernel: WmaKernel,
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
) -> Result<SweepResult, KernelError> {
    sweep_fresh_with(close, params, fee_pct, move |x, w, o, r| {
        kernel.wma_range(x, w, o, r)
    })
}

/// [`prealloc::sweep_into`](crate::prealloc::sweep_into) with this module's WMA kernel.
pub fn sweep_into(
    kernel: WmaKernel,
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
    scratch: &mut Scratch,
    out: &mut SweepResult,
) -> Result<(), KernelError> {
    let close = ValidClose::new(close)?;
    sweep_into_with(close, params, fee_pct, scratch, out, move |x, w, o, r| {
        kernel.wma_range(x, w, o, r)
    })
}

/// The [`SweepFn`](crate::SweepFn) entry: the best tier for this CPU, single thread, resumed
/// from `states` at bar `from`.
pub fn sweep_from(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
    from: usize,
    states: &mut [Backtest],
) -> Result<(), KernelError> {
    let kernel = WmaKernel::best();
    sweep_from_with(close, params, fee_pct, from, states, move |x, w, o, r| {
        kernel.wma_range(x, w, o, r)
    })
}

/// The batch sweep: the best tier for this CPU, single thread.
pub fn sweep(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
) -> Result<SweepResult, KernelError> {
    sweep_valid_with(WmaKernel::best(), close, params, fee_pct)
}
