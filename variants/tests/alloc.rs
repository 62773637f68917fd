//! The prealloc promise, held by a counting global allocator: with a scratch and an output sized
//! up front, `sweep_into` (scalar and SIMD) allocates nothing. Own binary, so no other test allocates.

use hullsweep_kernel::{SweepResult, default_params, gbm};
use hullsweep_variants::prealloc::{Scratch, scratch_len, sweep_into};
use hullsweep_variants::simd::{self, Tier};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    f();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn hot_path_allocates_nothing() {
    let mut close = gbm(20_000, 4, 0.002).unwrap();
    close[1000] = f64::NAN;
    let mut params = default_params();
    params.truncate(20);
    params.push([9, 4, 3, 12, 7, 2]);
    let want = hullsweep_kernel::sweep(&close, &params, 0.09).unwrap();

    let mut scratch = Scratch::new(close.len());
    assert!(scratch.as_mut_slice().len() >= scratch_len(close.len()));
    let mut out = SweepResult::zeroed(params.len());
    let kernels: Vec<_> = Tier::available()
        .into_iter()
        .filter_map(Tier::kernel)
        .collect();
    let _ = simd::WmaKernel::best();

    // The counter sees allocations at all: otherwise a zero below would prove nothing.
    assert!(allocations_during(|| drop(std::hint::black_box(vec![0u8; 64]))) >= 1);

    let n =
        allocations_during(|| sweep_into(&close, &params, 0.09, &mut scratch, &mut out).unwrap());
    assert_eq!(n, 0, "prealloc::sweep_into allocated {n} times");
    assert_eq!(out, want);

    for kernel in kernels {
        out.pnl.fill(0.0);
        let n = allocations_during(|| {
            simd::sweep_into(kernel, &close, &params, 0.09, &mut scratch, &mut out).unwrap()
        });
        assert_eq!(
            n,
            0,
            "simd::sweep_into ({:?}) allocated {n} times",
            kernel.tier()
        );
        assert_eq!(out, want);
    }
}
