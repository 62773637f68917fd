//! `live`, what is kept of the past: rings indexed by bar in the whole stream, grown only as far
//! as the longest window needs, so memory follows the windows (and the bars so far), not the stream.

use std::sync::atomic::{AtomicU64, Ordering};

/// Growths of any ring or cache of any `Live` in this process: counted in their (cold) growth
/// paths, so that a caller who accounts for a stream's memory rescans it only after a push that
/// may have grown it (see [`growths`]).
static GROWTHS: AtomicU64 = AtomicU64::new(0);

/// How many times the history rings and exact-value caches of every `Live` in this process have
/// grown so far. A push after which it reads the same, on the thread that pushed, allocated no
/// history: that stream's `memory_bytes` is what it was before.
pub(super) fn growths() -> u64 {
    GROWTHS.load(Ordering::Relaxed)
}

/// The power of two at or above `need` (the largest one for a need past it: a window longer
/// than any stream only ever holds the bars pushed).
fn ring_size(need: usize) -> usize {
    need.checked_next_power_of_two()
        .unwrap_or(1 << (usize::BITS - 1))
}

/// The last values of a per-bar series, by bar: up to `need` of them (fewer while fewer bars
/// have been pushed), in a power-of-two ring.
#[derive(Clone, Debug)]
pub(super) struct Series<T> {
    buf: Vec<T>,
    /// `buf.len() - 1`.
    mask: usize,
    need: usize,
    fill: T,
    /// Values pushed so far.
    len: u64,
}

impl<T: Copy> Series<T> {
    /// A ring that keeps up to `need` (at least 1) values; `fill` in slots never written.
    pub(super) fn new(need: usize, fill: T) -> Self {
        Series {
            buf: vec![fill; 1],
            mask: 0,
            need: need.max(1),
            fill,
            len: 0,
        }
    }

    /// Appends the value of bar `self.len()`.
    #[inline]
    pub(super) fn push(&mut self, v: T) {
        let held = self.buf.len() as u64;
        if self.len >= held && (held as usize) < self.need {
            self.grow();
        }
        let at = self.len as usize & self.mask;
        self.buf[at] = v;
        self.len += 1;
    }

    /// Doubles the ring (up to the power of two at or above `need`), keeping what it holds.
    #[cold]
    fn grow(&mut self) {
        GROWTHS.fetch_add(1, Ordering::Relaxed);
        let old = self.buf.len();
        let new = (old * 2).min(ring_size(self.need));
        let mut buf = vec![self.fill; new];
        for bar in self.len.saturating_sub(old as u64)..self.len {
            buf[bar as usize & (new - 1)] = self.buf[bar as usize & self.mask];
        }
        self.buf = buf;
        self.mask = new - 1;
    }

    /// The value of `bar`, which must be one of the last `need` pushed.
    #[inline(always)]
    pub(super) fn at(&self, bar: u64) -> T {
        debug_assert!(bar < self.len && self.len - bar <= self.buf.len() as u64);
        self.buf[bar as usize & self.mask]
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        std::mem::size_of_val(&self.buf[..])
    }
}

/// Exact values of one node, computed on demand and kept by bar: each is computed once, however
/// many bars and combos ask for it. `run` counts the bit-identical values ending at a bar (held
/// ones only), which lets a window over a flat stretch reuse its neighbour's sum.
#[derive(Clone, Debug)]
pub(super) struct Cache {
    /// `bar + 1` of the value in each slot (0: empty).
    tag: Vec<u64>,
    val: Vec<f64>,
    run: Vec<u32>,
    mask: usize,
    need: usize,
}

impl Cache {
    /// A cache that keeps the last `need` (at least 1) bars' values.
    pub(super) fn new(need: usize) -> Self {
        Cache {
            tag: vec![0; 1],
            val: vec![0.0; 1],
            run: vec![0; 1],
            mask: 0,
            need: need.max(1),
        }
    }

    /// The value at `bar`, if held.
    #[inline(always)]
    pub(super) fn get(&self, bar: u64) -> Option<f64> {
        let at = bar as usize & self.mask;
        (self.tag[at] == bar + 1).then(|| self.val[at])
    }

    /// The run of bit-identical held values ending at `bar` (0 if `bar` is not held).
    #[inline(always)]
    pub(super) fn run(&self, bar: u64) -> u32 {
        let at = bar as usize & self.mask;
        if self.tag[at] == bar + 1 {
            self.run[at]
        } else {
            0
        }
    }

    /// Keeps `v` as the value at `bar` (the latest bar asked for, or one of the `need` before).
    #[inline]
    pub(super) fn put(&mut self, bar: u64, v: f64) {
        if self.tag.len() < self.need && bar >= self.tag.len() as u64 {
            self.grow(bar);
        }
        let run = match bar.checked_sub(1).and_then(|p| self.get(p)) {
            Some(p) if p.to_bits() == v.to_bits() => self.run(bar - 1).saturating_add(1),
            _ => 1,
        };
        let at = bar as usize & self.mask;
        self.tag[at] = bar + 1;
        self.val[at] = v;
        self.run[at] = run;
    }

    /// Grows to hold bars up to `bar` (up to the power of two at or above `need`).
    #[cold]
    fn grow(&mut self, bar: u64) {
        GROWTHS.fetch_add(1, Ordering::Relaxed);
        let want = usize::try_from(bar + 1).unwrap_or(usize::MAX);
        let new = ring_size(want.max(self.tag.len() * 2).min(self.need));
        let mut next = Cache {
            tag: vec![0; new],
            val: vec![0.0; new],
            run: vec![0; new],
            mask: new - 1,
            need: self.need,
        };
        for at in 0..self.tag.len() {
            if self.tag[at] != 0 {
                let to = (self.tag[at] - 1) as usize & next.mask;
                next.tag[to] = self.tag[at];
                next.val[to] = self.val[at];
                next.run[to] = self.run[at];
            }
        }
        *self = next;
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        self.tag.len() * (8 + 8 + 4)
    }
}
