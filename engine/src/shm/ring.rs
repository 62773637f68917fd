//! A single-producer, single-consumer byte ring whose header and data may live in memory a
//! hostile process shares: the two ends, their index checks, and the memory-ordering argument.
//!
//! # Memory ordering
//!
//! Each end keeps its own index (`tail` for the producer: bytes ever written; `head` for the
//! consumer: bytes ever read) in a local field. That local copy is authoritative: an end only
//! ever *stores* it to the header, so whatever the peer writes there is never read back. Each
//! call loads the *peer's* index once into a local, checks it, and works only with that local.
//!
//! - Producer: copies bytes into the free part, then `tail.store(Release)`. The release orders
//!   the byte copies before the new tail: a consumer that sees the tail sees the bytes.
//! - Consumer: `tail.load(Acquire)` pairs with that release, so the bytes up to the loaded tail
//!   are visible; it copies them out, then `head.store(Release)`, which orders its reads of
//!   those cells before the slots are handed back.
//! - Producer: `head.load(Acquire)` pairs with the consumer's release, so the producer's next
//!   writes into freed cells happen after the consumer's reads of them (no write-after-read
//!   race). The producer keeps the last head it loaded and reloads it only when a write needs
//!   more room than that head leaves: an older head is a lower bound (the consumer's head only
//!   grows), so the cells it leaves free were released by an acquire that already happened. Nothing stronger is needed for the data: each index has one writer, and each cell
//!   is owned by exactly one side at a time, handed over by these release/acquire pairs.
//!
//! The sleep/wake protocol (`wait.rs`) adds `SeqCst` fences: a waiter stores its `*_waiting`
//! word, fences, then re-checks the ring; the other side stores its index, fences, then loads
//! the word. Two SeqCst fences are totally ordered, so at least one side sees the other's
//! store: either the waiter's re-check sees the new index and does not sleep, or the publisher
//! sees the word set and wakes it. The futex compares the word atomically with going to sleep,
//! so a wake that clears the word before the waiter sleeps makes the sleep return at once. No
//! wakeup is lost; loom checks this (`tests/loom_shm.rs`), and every sleep is bounded anyway.
//!
//! # A hostile peer
//!
//! The peer can write any value to any header field or data byte at any time. What it can do:
//! - Indices: the peer's index is accepted only if `tail - head <= cap` (wrapping arithmetic);
//!   anything else is [`RingError::Corrupt`]. A value that passes still keeps every copy inside
//!   the data area, because offsets are masked with the *local* capacity (never re-read).
//! - Data: bytes are copied out exactly once into the caller's buffer, which is all the caller
//!   parses, so bytes changed after the copy change nothing; changed before, they are just
//!   bytes the peer sent. Lengths in them are checked by the protocol layer like any socket's.
//! - Our own index, the waiting words, `closed`: forging them makes us see a full or empty ring,
//!   miss or get spurious wakes (each sleep is bounded, so we re-check), or see the end of the
//!   stream. Every outcome is an error, a delay or an EOF on *that* connection: no panic, no
//!   out-of-bounds access, nothing shared with other connections.

use crate::shm::bytes::{HeapBytes, RingBytes};
use crate::shm::sync::{AtomicU32, AtomicU64, ByteCell, Ordering, Park};
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

/// The largest ring capacity: indices stay far from overflowing `usize` offsets on 64-bit.
pub const MAX_RING_CAPACITY: u64 = 1 << 30;

/// A value on a cache line of its own, so the producer's and consumer's stores do not contend.
#[repr(C, align(64))]
pub(crate) struct Line<T>(pub(crate) T);

/// The futex words and the close flag, each written by one side and read by the other.
#[repr(C)]
pub(crate) struct Words {
    /// 1 while the consumer sleeps (or is about to) waiting for bytes.
    pub(crate) consumer_waiting: AtomicU32,
    /// 1 while the producer sleeps (or is about to) waiting for space.
    pub(crate) producer_waiting: AtomicU32,
    /// Nonzero once either side has dropped its end.
    pub(crate) closed: AtomicU32,
}

/// The shared header of one ring. All fields are atomics, so the peer writing them is a race
/// only in its own data, never undefined behaviour in ours; padding is implicit (no plain
/// bytes that a Rust reference would promise are unchanging).
#[repr(C)]
pub(crate) struct RingHeader {
    /// The producer's count of bytes written.
    pub(crate) tail: Line<AtomicU64>,
    /// The consumer's count of bytes read.
    pub(crate) head: Line<AtomicU64>,
    pub(crate) words: Line<Words>,
    /// Zero-sized with the kernel's futex; loom's stand-in for its wait queue otherwise.
    pub(crate) park: Park,
}

/// Bytes a ring header takes in a mapping.
#[cfg(not(loom))]
pub(crate) const RING_HEADER_LEN: usize = 192;

// The layout is the wire format between two processes: pin it.
#[cfg(not(loom))]
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<RingHeader>() == RING_HEADER_LEN);
    assert!(offset_of!(RingHeader, tail) == 0);
    assert!(offset_of!(RingHeader, head) == 64);
    assert!(offset_of!(RingHeader, words) == 128);
};

impl RingHeader {
    fn new() -> RingHeader {
        RingHeader {
            tail: Line(AtomicU64::new(0)),
            head: Line(AtomicU64::new(0)),
            words: Line(Words {
                consumer_waiting: AtomicU32::new(0),
                producer_waiting: AtomicU32::new(0),
                closed: AtomicU32::new(0),
            }),
            park: Park::new(),
        }
    }
}

/// Why a ring operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RingError {
    /// The peer's index is impossible given ours: the peer is broken or hostile.
    #[error(
        "corrupt ring: the peer's {peer_index} {peer} is not within the capacity {cap} of our {local_index} {local}"
    )]
    Corrupt {
        /// `"head"` or `"tail"`: which of the peer's indices.
        peer_index: &'static str,
        /// The value the peer's index held.
        peer: u64,
        /// `"tail"` or `"head"`: our own index.
        local_index: &'static str,
        /// Our index's value.
        local: u64,
        /// The ring's capacity.
        cap: u64,
    },
    /// A capacity that is not a power of two in `1..=MAX_RING_CAPACITY`.
    #[error("ring capacity {0} is not a power of two between 1 and {MAX_RING_CAPACITY}")]
    Capacity(u64),
}

/// What one end holds: where the header and data are, the capacity, and what keeps them alive.
struct RingRef {
    header: NonNull<RingHeader>,
    bytes: RingBytes,
    /// Fixed at creation and never re-read from shared memory.
    cap: u64,
    _owner: Arc<dyn Send + Sync>,
}

// SAFETY: the header is only atomics, the data only crosses by the ring protocol's copies, and
// `_owner` (Send + Sync) keeps both alive wherever the end goes.
unsafe impl Send for RingRef {}

impl RingRef {
    /// # Safety
    ///
    /// `header` points to a valid, initialised `RingHeader` and `data` to `cap` cells, both
    /// alive while `owner` is, and at most one producer and one consumer are made per ring.
    unsafe fn new(
        header: NonNull<RingHeader>,
        data: NonNull<ByteCell>,
        cap: u64,
        owner: Arc<dyn Send + Sync>,
    ) -> RingRef {
        assert!(cap.is_power_of_two() && cap <= MAX_RING_CAPACITY);
        RingRef {
            header,
            // SAFETY: forwarded from this function's contract.
            bytes: unsafe { RingBytes::new(data) },
            cap,
            _owner: owner,
        }
    }

    fn header(&self) -> &RingHeader {
        // SAFETY: valid while `_owner` lives (constructor contract); all fields are atomics.
        unsafe { self.header.as_ref() }
    }
}

/// A ring's header without its data: enough to close the ring and wake its waiters from
/// outside the thread that owns the end (a server shutting a connection down).
#[derive(Clone)]
pub(crate) struct HeaderRef {
    header: NonNull<RingHeader>,
    _owner: Arc<dyn Send + Sync>,
}

// SAFETY: as for `RingRef`: only atomics are reached through it, kept alive by `_owner`.
unsafe impl Send for HeaderRef {}
// SAFETY: every field reached through `&HeaderRef` is an atomic.
unsafe impl Sync for HeaderRef {}

impl HeaderRef {
    pub(crate) fn header(&self) -> &RingHeader {
        // SAFETY: valid while `_owner` lives (RingRef's constructor contract); all atomics.
        unsafe { self.header.as_ref() }
    }
}

impl RingRef {
    fn header_ref(&self) -> HeaderRef {
        HeaderRef {
            header: self.header,
            _owner: Arc::clone(&self._owner),
        }
    }
}

/// The writing end of a ring.
pub struct Producer {
    ring: RingRef,
    /// Bytes written so far: authoritative, only ever stored to the header.
    tail: u64,
    /// The consumer's head as last loaded (and checked): a lower bound of the real one, so
    /// the space it leaves free is free. Reloaded only when a write needs more.
    head_seen: u64,
}

/// The reading end of a ring.
pub struct Consumer {
    ring: RingRef,
    /// Bytes read so far: authoritative, only ever stored to the header.
    head: u64,
}

/// A ring of `cap` bytes on the heap, for two threads of one process.
pub fn ring_pair(cap: u64) -> Result<(Producer, Consumer), RingError> {
    if !cap.is_power_of_two() || cap > MAX_RING_CAPACITY {
        return Err(RingError::Capacity(cap));
    }
    struct Heap {
        header: RingHeader,
        bytes: HeapBytes,
    }
    // SAFETY: `Heap` holds atomics and cells reached only through the ring protocol.
    unsafe impl Sync for Heap {}
    // SAFETY: as above; nothing in `Heap` is tied to a thread.
    unsafe impl Send for Heap {}
    let heap = Arc::new(Heap {
        header: RingHeader::new(),
        bytes: HeapBytes::new(cap as usize),
    });
    let header = NonNull::from(&heap.header);
    let data = heap.bytes.ptr();
    // SAFETY: both point into `heap`, which each end keeps alive; one producer, one consumer.
    unsafe {
        Ok((
            Producer::from_raw(header, data, cap, heap.clone()),
            Consumer::from_raw(header, data, cap, heap),
        ))
    }
}

impl Producer {
    /// The producer of the ring at `header`/`data`.
    ///
    /// # Safety
    ///
    /// As for the ring's other constructors: `header` is an initialised `RingHeader`, `data`
    /// is `cap` cells (a power of two), both alive while `owner` is, and this is the only
    /// producer of that ring in this process.
    pub(crate) unsafe fn from_raw(
        header: NonNull<RingHeader>,
        data: NonNull<ByteCell>,
        cap: u64,
        owner: Arc<dyn Send + Sync>,
    ) -> Producer {
        Producer {
            // SAFETY: forwarded from this function's contract.
            ring: unsafe { RingRef::new(header, data, cap, owner) },
            tail: 0,
            head_seen: 0,
        }
    }

    /// Free bytes now: reads the consumer's head once and checks it.
    pub fn free(&self) -> Result<u64, RingError> {
        let head = self.ring.header().head.0.load(Ordering::Acquire);
        self.free_after(head)
    }

    /// Free bytes if the consumer's head is `head`, which is checked.
    fn free_after(&self, head: u64) -> Result<u64, RingError> {
        let used = self.tail.wrapping_sub(head);
        if used > self.ring.cap {
            return Err(RingError::Corrupt {
                peer_index: "head",
                peer: head,
                local_index: "tail",
                local: self.tail,
                cap: self.ring.cap,
            });
        }
        Ok(self.ring.cap - used)
    }

    /// Copies as much of `src` as fits and publishes it; 0 when the ring is full.
    pub fn write(&mut self, src: &[u8]) -> Result<usize, RingError> {
        self.write_parts(&[src], 0)
    }

    /// Copies as much of `parts` as fits, in order and from byte `skip` of their concatenation
    /// on, and publishes it all with one index store, so a frame's head and body reach the
    /// consumer together; 0 when the ring is full.
    pub fn write_parts<P: Deref<Target = [u8]>>(
        &mut self,
        parts: &[P],
        mut skip: usize,
    ) -> Result<usize, RingError> {
        let want: usize = parts
            .iter()
            .map(|p| p.len())
            .sum::<usize>()
            .saturating_sub(skip);
        // The head seen last time often leaves room enough: then the consumer's line is not
        // touched (its head store need not cross to this core on every write).
        let mut free = self.free_after(self.head_seen).unwrap_or(0) as usize;
        if free < want {
            let head = self.ring.header().head.0.load(Ordering::Acquire);
            free = self.free_after(head)? as usize;
            self.head_seen = head;
        }
        let cap = self.ring.cap as usize;
        let mut tail = self.tail;
        let mut left = free;
        for part in parts {
            let part: &[u8] = part;
            if skip >= part.len() {
                skip -= part.len();
                continue;
            }
            let part = &part[skip..];
            skip = 0;
            let n = part.len().min(left);
            if n == 0 {
                break;
            }
            let at = (tail as usize) & (cap - 1);
            let first = n.min(cap - at);
            // SAFETY: `at + first <= cap` and `n - first <= at`; the `free` cells from the
            // published tail are free (the consumer released them with its head, acquired
            // above, and reads nothing past the tail we have published), and `tail` stays
            // within them: `left` counts what is still free of them.
            unsafe {
                self.ring.bytes.copy_in(at, &part[..first]);
                self.ring.bytes.copy_in(0, &part[first..n]);
            }
            tail = tail.wrapping_add(n as u64);
            left -= n;
        }
        let n = free - left;
        if n > 0 {
            self.tail = tail;
            self.ring
                .header()
                .tail
                .0
                .store(self.tail, Ordering::Release);
        }
        Ok(n)
    }

    /// The ring's capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.ring.cap
    }

    /// True once either side has closed the ring.
    pub fn is_closed(&self) -> bool {
        self.ring.header().words.0.closed.load(Ordering::Acquire) != 0
    }

    /// Marks the ring closed (the consumer sees the end once it has read every byte). The
    /// sleeping peer must still be woken: `wait::close_producer` does both.
    pub fn close(&self) {
        self.ring.header().words.0.closed.store(1, Ordering::SeqCst);
    }

    pub(crate) fn header(&self) -> &RingHeader {
        self.ring.header()
    }

    pub(crate) fn header_ref(&self) -> HeaderRef {
        self.ring.header_ref()
    }
}

impl Consumer {
    /// The consumer of the ring at `header`/`data`.
    ///
    /// # Safety
    ///
    /// As for [`Producer::from_raw`], with "the only consumer".
    pub(crate) unsafe fn from_raw(
        header: NonNull<RingHeader>,
        data: NonNull<ByteCell>,
        cap: u64,
        owner: Arc<dyn Send + Sync>,
    ) -> Consumer {
        Consumer {
            // SAFETY: forwarded from this function's contract.
            ring: unsafe { RingRef::new(header, data, cap, owner) },
            head: 0,
        }
    }

    /// Hints the processor to fetch the two cache lines the next bytes will land in, so that a
    /// wait polling the tail has them on their way when the tail moves (see `wait_readable`).
    /// Reads nothing: no ordering or bounds question arises (offsets masked as in `read`).
    #[inline]
    pub(crate) fn prefetch_next(&self) {
        let mask = self.ring.cap as usize - 1;
        let at = self.head as usize;
        self.ring.bytes.prefetch(at & mask);
        self.ring.bytes.prefetch((at + 64) & mask);
    }

    /// Bytes ready now: reads the producer's tail once and checks it.
    pub fn available(&self) -> Result<u64, RingError> {
        self.checked_tail().map(|tail| tail.wrapping_sub(self.head))
    }

    fn checked_tail(&self) -> Result<u64, RingError> {
        let tail = self.ring.header().tail.0.load(Ordering::Acquire);
        if tail.wrapping_sub(self.head) > self.ring.cap {
            return Err(RingError::Corrupt {
                peer_index: "tail",
                peer: tail,
                local_index: "head",
                local: self.head,
                cap: self.ring.cap,
            });
        }
        Ok(tail)
    }

    /// Copies up to `dst.len()` ready bytes into `dst` and releases their space; 0 when empty.
    pub fn read(&mut self, dst: &mut [u8]) -> Result<usize, RingError> {
        let tail = self.checked_tail()?;
        let n = dst.len().min(tail.wrapping_sub(self.head) as usize);
        if n == 0 {
            return Ok(0);
        }
        let cap = self.ring.cap as usize;
        let at = (self.head as usize) & (cap - 1);
        let first = n.min(cap - at);
        // SAFETY: `at + first <= cap` and `n - first <= at`; the `n` cells from the head were
        // published by the tail acquired above, and the producer writes nothing until our head
        // releases them.
        unsafe {
            self.ring.bytes.copy_out(at, &mut dst[..first]);
            self.ring.bytes.copy_out(0, &mut dst[first..n]);
        }
        self.head = self.head.wrapping_add(n as u64);
        self.ring
            .header()
            .head
            .0
            .store(self.head, Ordering::Release);
        Ok(n)
    }

    /// The ring's capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.ring.cap
    }

    /// True once either side has closed the ring.
    pub fn is_closed(&self) -> bool {
        self.ring.header().words.0.closed.load(Ordering::Acquire) != 0
    }

    /// Marks the ring closed (the producer's writes fail from then on). The sleeping peer
    /// must still be woken: `wait::close_consumer` does both.
    pub fn close(&self) {
        self.ring.header().words.0.closed.store(1, Ordering::SeqCst);
    }

    pub(crate) fn header(&self) -> &RingHeader {
        self.ring.header()
    }

    pub(crate) fn header_ref(&self) -> HeaderRef {
        self.ring.header_ref()
    }
}

#[cfg(all(test, not(loom)))]
#[path = "ring_tests.rs"]
mod tests;
