//! The command's allocator: buffers of a quarter MiB and more on transparent huge pages, kept
//! for reuse when freed; smaller ones from the system allocator, told to keep what it frees.
//!
//! Why: on the VMs this project is measured on, a fresh 4 KiB page costs about 1.7 µs to fault
//! in and a fresh 2 MiB huge page about 240 µs (0.47 µs per 4 KiB), and a sweep's big buffers
//! (the series, each block's transposed copy, the workers' scratch) are fresh memory: with the
//! system allocator's defaults the default sweep took about 1,100 faults beyond an empty
//! process, and a 1.5M-bar sweep faulted each block's half-MiB buffers in afresh, block after
//! block. Big blocks here are whole huge-page mappings, and a few freed ones ([`CACHE_MAX`]
//! bytes at most) are kept and handed out again, so a buffer allocated block after block
//! faults in once.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::{Mutex, PoisonError};

/// Allocations from this size up are mapped on their own, in whole huge pages: a block used
/// once costs about what its 4 KiB pages would; one reused costs nothing after its first use.
const BIG: usize = 256 << 10;
/// A transparent huge page on x86-64 and aarch64 (with 4 KiB base pages).
const HUGE: usize = 2 << 20;
/// Most bytes of freed mappings kept for reuse; past it they go back to the OS at once.
const CACHE_MAX: usize = 64 << 20;
/// How many freed mappings are kept.
const CACHE_SLOTS: usize = 8;

/// Tells the system allocator (glibc) to serve every block below [`BIG`] from its heaps and to
/// keep up to [`TRIM_AT`] of freed memory at a heap's top rather than give it back.
///
/// Its defaults map a block of 128 KiB or more on its own and trim a heap's top past 128 KiB
/// free, adjusting both as blocks come and go, so a sweep that allocates and frees the same
/// buffers block after block can fault them in afresh every time. Call it first thing in
/// `main`, before any thread starts. Elsewhere than glibc it does nothing.
pub fn keep_small_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, BIG as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_AT as libc::c_int);
    }
}

/// Freed memory a glibc heap keeps at its top before it gives any back.
const TRIM_AT: usize = 32 << 20;

/// [`System`], except that an allocation of [`BIG`] bytes or more (alignment at most a page) is
/// an anonymous mapping of its own, aligned to and rounded up to [`HUGE`], advised to the kernel
/// as huge-page memory.
pub struct BigPages;

/// Freed mappings `(address, length)`, length 0 for an empty slot.
static CACHE: Mutex<[(usize, usize); CACHE_SLOTS]> = Mutex::new([(0, 0); CACHE_SLOTS]);

fn is_big(layout: Layout) -> bool {
    layout.size() >= BIG && layout.align() <= 4096
}

fn mapped_len(size: usize) -> usize {
    size.div_ceil(HUGE) * HUGE
}

/// A mapping of `mapped_len(size)` bytes: a cached one of that length (its old contents, or
/// its first `size` bytes zero when `zeroed`), else a fresh one, which is zero; null when the
/// OS refuses.
fn take(size: usize, zeroed: bool) -> *mut u8 {
    let len = mapped_len(size);
    let cached = {
        let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
        cache
            .iter_mut()
            .find(|slot| slot.1 == len)
            .map(|slot| std::mem::take(slot).0)
    };
    match cached {
        Some(addr) => {
            let ptr = addr as *mut u8;
            if zeroed {
                // Only the block's own bytes: the rest of the mapping may never have been
                // touched, and writing it would fault it in for nothing.
                // SAFETY: the mapping is `len >= size` bytes, writable, and no longer anyone's.
                unsafe { ptr.write_bytes(0, size) };
            }
            ptr
        }
        None => map(len),
    }
}

/// A fresh zeroed mapping of `len` bytes (a multiple of [`HUGE`]) aligned to [`HUGE`], advised
/// as huge-page memory; null when the OS refuses.
fn map(len: usize) -> *mut u8 {
    use rustix::mm::{Advice, MapFlags, ProtFlags, madvise, mmap_anonymous, munmap};
    let Some(over) = len.checked_add(HUGE) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a new private anonymous mapping at an address the kernel picks aliases nothing.
    let Ok(raw) = (unsafe {
        mmap_anonymous(
            std::ptr::null_mut(),
            over,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::PRIVATE,
        )
    }) else {
        return std::ptr::null_mut();
    };
    // Over-allocate by a huge page, then trim both ends, so the kept range starts on a huge-page
    // boundary (only whole aligned 2 MiB ranges can be huge pages).
    let start = raw as usize;
    let aligned = start.next_multiple_of(HUGE);
    let end = aligned + len;
    // SAFETY: both trimmed ranges lie inside the mapping just made and outside the `len` bytes
    // kept; nothing refers to them.
    unsafe {
        if aligned > start {
            let _ = munmap(raw, aligned - start);
        }
        if start + over > end {
            let _ = munmap(end as *mut _, start + over - end);
        }
    }
    // SAFETY: advice changes only how the kernel backs the range; it stays zero-filled memory.
    // Where transparent huge pages are off it is refused, and the range is ordinary pages.
    let _ = unsafe { madvise(aligned as *mut _, len, Advice::LinuxHugepage) };
    aligned as *mut u8
}

/// Gives back a mapping `take` or `map` made of `mapped_len(size)` bytes: kept for reuse if a
/// slot is free and the cache stays within [`CACHE_MAX`], else unmapped.
///
/// # Safety
/// `ptr` is such a mapping, for this `size`, and nothing uses it afterwards.
unsafe fn give_back(ptr: *mut u8, size: usize) {
    let len = mapped_len(size);
    {
        let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
        let kept: usize = cache.iter().map(|slot| slot.1).sum();
        if kept + len <= CACHE_MAX
            && let Some(slot) = cache.iter_mut().find(|slot| slot.1 == 0)
        {
            *slot = (ptr as usize, len);
            return;
        }
    }
    // SAFETY: the caller hands over the whole mapping.
    let _ = unsafe { rustix::mm::munmap(ptr.cast(), len) };
}

// SAFETY: a big block is a whole mapping of `mapped_len(size)` bytes, aligned to 2 MiB (so to
// any alignment `is_big` accepts), made by `take` and released by `give_back`; whether a block
// is big is a function of its layout, which the caller passes back unchanged to `dealloc` and
// `realloc`. Everything else is `System`'s, passed through unchanged.
unsafe impl GlobalAlloc for BigPages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_big(layout) {
            take(layout.size(), false)
        } else {
            // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_big(layout) {
            // A fresh mapping is zero without being written, so its pages fault in where they
            // are first used (the workers that fill them), not all here.
            take(layout.size(), true)
        } else {
            // SAFETY: as `alloc`.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if is_big(layout) {
            // SAFETY: `ptr` is the mapping made for this layout's size, and the caller is done
            // with it.
            unsafe { give_back(ptr, layout.size()) }
        } else {
            // SAFETY: `ptr` came from `System` with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees that `new_size`, rounded up to the alignment, fits an
        // isize, and the alignment is the block's own, valid.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (is_big(layout), is_big(new)) {
            // SAFETY: the block is `System`'s with this layout, and so is the answer.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            (true, true) if mapped_len(new_size) == mapped_len(layout.size()) => ptr,
            (true, true) => {
                use rustix::mm::{MremapFlags, mremap};
                let (old_len, new_len) = (mapped_len(layout.size()), mapped_len(new_size));
                // SAFETY: the block is a whole mapping of `old_len` bytes; the kernel moves or
                // resizes its pages without copying. The answer is page-aligned (enough for
                // `is_big`'s alignments) and a whole mapping of `new_len` bytes, as
                // `give_back` expects.
                match unsafe { mremap(ptr.cast(), old_len, new_len, MremapFlags::MAYMOVE) } {
                    Ok(p) => p.cast(),
                    Err(_) => std::ptr::null_mut(),
                }
            }
            _ => {
                // SAFETY: `alloc` with a valid layout; the copy stays within both blocks (the
                // smaller size), which do not overlap; then the old block is released as made.
                unsafe {
                    let to = self.alloc(new);
                    if !to.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    to
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Big blocks through every path: fresh, reused dirty (zeroed when asked), grown in place
    /// and by moving, shrunk to small and back, with their contents kept.
    #[test]
    fn big_blocks_keep_their_contents_and_come_back_zeroed() {
        let a = BigPages;
        let layout = Layout::from_size_align(3 << 20, 64).unwrap();
        // SAFETY: each block is used within its layout and freed with the layout it has.
        unsafe {
            let p = a.alloc_zeroed(layout);
            assert!(!p.is_null() && (p as usize).is_multiple_of(HUGE));
            assert!((0..layout.size()).step_by(4093).all(|i| *p.add(i) == 0));
            p.write_bytes(0xab, layout.size());
            a.dealloc(p, layout);
            // The same length again: from the cache, dirty unless zeroed is asked for.
            let z = a.alloc_zeroed(layout);
            assert!((0..layout.size()).step_by(4093).all(|i| *z.add(i) == 0));
            for i in 0..layout.size() {
                *z.add(i) = (i % 251) as u8;
            }
            let same = a.realloc(z, layout, (4 << 20) - 1);
            assert_eq!(same, z, "within its huge pages a block grows in place");
            let grown_layout = Layout::from_size_align((4 << 20) - 1, 64).unwrap();
            let g = a.realloc(same, grown_layout, 9 << 20);
            assert!((0..layout.size()).all(|i| *g.add(i) == (i % 251) as u8));
            let big = Layout::from_size_align(9 << 20, 64).unwrap();
            let s = a.realloc(g, big, 1000);
            assert!((0..1000).all(|i| *s.add(i) == (i % 251) as u8));
            let small = Layout::from_size_align(1000, 64).unwrap();
            let b = a.realloc(s, small, 2 << 20);
            assert!((0..1000).all(|i| *b.add(i) == (i % 251) as u8));
            a.dealloc(b, Layout::from_size_align(2 << 20, 64).unwrap());
        }
    }

    /// Small blocks, and big ones aligned beyond a page, are the system allocator's.
    #[test]
    fn small_and_overaligned_blocks_are_the_systems() {
        assert!(!is_big(Layout::from_size_align(BIG - 1, 8).unwrap()));
        assert!(!is_big(Layout::from_size_align(BIG, 8192).unwrap()));
        assert!(is_big(Layout::from_size_align(BIG, 4096).unwrap()));
        let v: Vec<u64> = (0..(3 << 17)).collect();
        assert_eq!(v.iter().sum::<u64>(), (3 << 17) * ((3 << 17) - 1) / 2);
    }
}
