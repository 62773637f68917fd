//! `live`, the bars kept: a ring of the last closes (NaN kept as NaN), grown only as far as
//! the longest lookback needs, so memory follows the windows, not the length of the stream.

/// The last `len` closes pushed, indexed by their bar in the whole stream.
#[derive(Clone, Debug)]
pub(super) struct History {
    buf: Vec<f64>,
    /// `buf.len() - 1`; `buf.len()` is a power of two.
    mask: usize,
    /// The most bars ever needed at once (the longest lookback); the ring grows up to it.
    need: usize,
    /// Bars pushed so far.
    bars: u64,
}

impl History {
    /// A ring that will keep up to `need` bars (at least 1).
    pub(super) fn new(need: usize) -> Self {
        History {
            buf: vec![f64::NAN; 1],
            mask: 0,
            need: need.max(1),
            bars: 0,
        }
    }

    /// Appends bar `self.bars`.
    #[inline]
    pub(super) fn push(&mut self, close: f64) {
        let held = self.buf.len() as u64;
        if self.bars >= held && (held as usize) < self.need {
            self.grow();
        }
        let at = self.bars as usize & self.mask;
        self.buf[at] = close;
        self.bars += 1;
    }

    /// Doubles the ring (up to the power of two above `need`), keeping every bar it holds.
    fn grow(&mut self) {
        let old = self.buf.len();
        let new = (old * 2).min(self.need.next_power_of_two());
        let mut buf = vec![f64::NAN; new];
        let first = self.bars.saturating_sub(old as u64);
        for bar in first..self.bars {
            buf[bar as usize & (new - 1)] = self.buf[bar as usize & self.mask];
        }
        self.buf = buf;
        self.mask = new - 1;
    }

    /// Close at `bar`, which must be one of the bars held (the last `need`, at most).
    #[inline(always)]
    pub(super) fn at(&self, bar: u64) -> f64 {
        debug_assert!(bar < self.bars && self.bars - bar <= self.buf.len() as u64);
        self.buf[bar as usize & self.mask]
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        std::mem::size_of_val(&self.buf[..])
    }
}
