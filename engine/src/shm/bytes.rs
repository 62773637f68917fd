//! The data area of one ring: a pointer to `cap` byte cells (in a mapping or on the heap) and
//! the two copies the ring makes through it, `ptr::copy_nonoverlapping` (per cell under loom).

use crate::shm::sync::ByteCell;
use std::ptr::NonNull;

/// A ring's data area: `cap` cells starting at `ptr`, kept alive by whoever built the ring.
///
/// Only a raw pointer: the peer process writes these bytes whenever it likes, so no Rust
/// reference to them is ever made; bytes cross only by `copy_in`/`copy_out`.
pub(crate) struct RingBytes {
    ptr: NonNull<ByteCell>,
}

// SAFETY: `RingBytes` is a pointer to cells accessed only through `copy_in`/`copy_out`, whose
// callers (the one producer, the one consumer) order their accesses through the ring indices.
unsafe impl Send for RingBytes {}
// SAFETY: as for `Send`; `&RingBytes` offers nothing beyond the same unsafe copies.
unsafe impl Sync for RingBytes {}

impl RingBytes {
    /// A data area at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must point to `cap` cells (the capacity the ring is built with) that stay valid,
    /// and are accessed only through this ring's two ends, while the ring exists.
    pub(crate) unsafe fn new(ptr: NonNull<ByteCell>) -> RingBytes {
        RingBytes { ptr }
    }

    /// Copies `src` into the cells from `at`.
    ///
    /// # Safety
    ///
    /// `at + src.len()` is within the area, and the consumer is not reading these cells: they
    /// lie in the free part the producer owns until it publishes a tail past them.
    pub(crate) unsafe fn copy_in(&self, at: usize, src: &[u8]) {
        #[cfg(not(loom))]
        // SAFETY: in bounds by the caller's contract; `ByteCell` is `u8`-sized, `src` is ours
        // and cannot overlap the ring's cells (the caller holds a `&[u8]` to it).
        unsafe {
            let dst = self.ptr.as_ptr().add(at).cast::<u8>();
            std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len());
        }
        #[cfg(loom)]
        for (i, &b) in src.iter().enumerate() {
            // SAFETY: in bounds by the caller's contract; loom checks the exclusivity claimed.
            unsafe { (*self.ptr.as_ptr().add(at + i)).with_mut(|p| *p = b) };
        }
    }

    /// Copies the cells from `at` into `dst`: the one read of these bytes, so a peer changing
    /// them afterwards cannot change what the caller parses.
    ///
    /// # Safety
    ///
    /// `at + dst.len()` is within the area, and the producer is not writing these cells: they
    /// lie in the filled part published by the tail the caller validated.
    pub(crate) unsafe fn copy_out(&self, at: usize, dst: &mut [u8]) {
        #[cfg(not(loom))]
        // SAFETY: as in `copy_in`, with the roles of source and destination swapped.
        unsafe {
            let src = self.ptr.as_ptr().add(at).cast::<u8>();
            std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len());
        }
        #[cfg(loom)]
        for (i, b) in dst.iter_mut().enumerate() {
            // SAFETY: in bounds by the caller's contract; loom checks the ordering claimed.
            *b = unsafe { (*self.ptr.as_ptr().add(at + i)).with(|p| *p) };
        }
    }
}

impl RingBytes {
    /// Asks the processor to bring the cache line holding cell `at` closer, without reading it:
    /// a hint with no effect on the program's meaning (a no-op off x86-64 and under loom).
    #[inline(always)]
    pub(crate) fn prefetch(&self, at: usize) {
        #[cfg(all(target_arch = "x86_64", not(loom)))]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let p = self.ptr.as_ptr().wrapping_add(at).cast::<i8>();
            // SAFETY: a prefetch never faults and reads nothing the program sees; `p` is only
            // computed (wrapping), never dereferenced.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p) };
        }
        #[cfg(not(all(target_arch = "x86_64", not(loom))))]
        let _ = at;
    }
}

/// A data area on the heap, for rings within one process (tests, loom models).
pub(crate) struct HeapBytes(Box<[ByteCell]>);

impl HeapBytes {
    /// `cap` zeroed cells.
    pub(crate) fn new(cap: usize) -> HeapBytes {
        HeapBytes((0..cap).map(|_| ByteCell::new(0)).collect())
    }

    /// The area's first cell, for [`RingBytes::new`]; valid while `self` is.
    pub(crate) fn ptr(&self) -> NonNull<ByteCell> {
        // A boxed slice's pointer is never null; for cap 0 it is dangling but never accessed.
        NonNull::from(&self.0[..]).cast()
    }
}
