//! Buffers of 8-lane rows, each row on one 64-byte cache line: the fast path loads and stores
//! whole rows, and a row that straddles two lines (as in a `Vec<f64>`, 16 bytes past a line
//! boundary as glibc hands it out) costs two lines per access.

use super::layout::LANES;
use std::alloc::{Layout, alloc_zeroed, handle_alloc_error};
use std::ops::{Deref, DerefMut};

#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Row([f64; LANES]);

// The cast in `Deref` needs rows without padding: exactly LANES f64 each.
const _: () = assert!(std::mem::size_of::<Row>() == LANES * std::mem::size_of::<f64>());

/// A `[f64]` of whole rows, aligned to 64 bytes; read and written as a slice.
#[derive(Debug, Default)]
pub(crate) struct Rows(Vec<Row>);

impl Rows {
    /// `rows` rows of zeros. Like `vec![0.0; n]`, memory fresh from the OS is not written here,
    /// so its pages fault in where the workers first write them, not all on this thread.
    pub(crate) fn zeroed(rows: usize) -> Self {
        if rows == 0 {
            return Rows::default();
        }
        let layout = Layout::array::<Row>(rows).expect("a buffer that fits in memory");
        // SAFETY: `layout` has a nonzero size (rows > 0, and a Row is 64 bytes).
        let ptr = unsafe { alloc_zeroed(layout) }.cast::<Row>();
        if ptr.is_null() {
            handle_alloc_error(layout);
        }
        // SAFETY: `ptr` comes from the global allocator with the layout of `rows` Rows (the
        // layout `Vec<Row>` frees with), and all-zero bits are a valid Row (f64 zeros).
        Rows(unsafe { Vec::from_raw_parts(ptr, rows, rows) })
    }

    /// Grows (or shrinks) to `len` f64, a whole number of rows, new rows zero.
    pub(crate) fn resize(&mut self, len: usize) {
        assert!(len.is_multiple_of(LANES), "whole rows");
        self.0.resize(len / LANES, Row::default());
    }

    /// The f64 this holds room for.
    pub(crate) fn capacity(&self) -> usize {
        self.0.capacity() * LANES
    }
}

impl Deref for Rows {
    type Target = [f64];

    fn deref(&self) -> &[f64] {
        // SAFETY: a Row is `repr(C)` around `[f64; LANES]` with no padding (asserted above), so
        // the vector's rows are `len * LANES` contiguous, initialised f64.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<f64>(), self.0.len() * LANES) }
    }
}

impl DerefMut for Rows {
    fn deref_mut(&mut self) -> &mut [f64] {
        // SAFETY: as in `deref`, and the slice borrows the vector mutably.
        unsafe {
            std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast::<f64>(), self.0.len() * LANES)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_aligned_zeroed_and_whole() {
        for rows in [0, 1, 3, 1000] {
            let mut r = Rows::zeroed(rows);
            assert_eq!(r.len(), rows * LANES);
            assert!(r.iter().all(|&v| v == 0.0));
            assert_eq!(r.as_ptr() as usize % 64, 0);
            r.resize((rows + 2) * LANES);
            r[(rows + 1) * LANES] = 1.0;
            assert_eq!(r.as_ptr() as usize % 64, 0);
            assert_eq!(r.iter().sum::<f64>(), 1.0);
        }
    }
}
