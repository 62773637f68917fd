//! [`Sweeper`]: a sweep fed in chunks, for series of any length in bounded memory. It keeps the
//! last lookback bars and each combo's event-loop state; chunk boundaries do not change a bit.
//!
//! # Why this is exact for every chunking
//! A bar's `d` depends on the last `W` bars only, `W` being the combo's effective lookback
//! (`max(max(hma_half, hma_n) + hma_sqrt, max(hma3_third, hma3_half, hma3_m) + hma3_m) - 1`),
//! and the event loop carries only its state from one bar to the next. A push runs the variant
//! over `tail ++ chunk`, the tail being the last `min(Wmax - 1, bars so far)` bars, with the
//! event loop starting at the chunk's first bar from the saved state. Every output a chunk bar
//! needs sees exactly the windows the batch sweep's does: the tail holds all of them, and while
//! fewer than `Wmax - 1` bars have arrived the tail is the whole history, so even the NaN lead
//! is where the batch has it.

pub use crate::lookback::effective_window;
use crate::{Backtest, Threads, Variant};
use hullsweep_kernel::{Combo, KernelError, SweepResult, ValidClose, validate_params_and_fee};

/// A resumable sweep: [`push`](Sweeper::push) chunks of a series in order, then
/// [`finish`](Sweeper::finish). The result equals `variant.sweep(whole series)` bit for bit.
///
/// Memory: one chunk, the tail of `Wmax - 1` bars and one [`Backtest`] per combo, plus the
/// variant's working memory for one chunk, whatever the length of the series.
///
/// ```
/// use hullsweep_variants::{Sweeper, Threads, Variant};
/// let close = hullsweep_kernel::default_close();
/// let params = hullsweep_kernel::default_params();
/// let mut s = Sweeper::new(&params, 0.09, Variant::Rolling, Threads::Fixed(1)).unwrap();
/// for chunk in close[..20_000].chunks(7_000) {
///     s.push(chunk).unwrap();
/// }
/// let streamed = s.finish().unwrap();
/// let batch = Variant::Rolling.sweep(&close[..20_000], &params, 0.09, Threads::Fixed(1)).unwrap();
/// assert_eq!(streamed, batch);
/// ```
#[derive(Clone, Debug)]
pub struct Sweeper {
    variant: Variant,
    params: Vec<Combo>,
    fee_pct: f64,
    threads: Threads,
    /// `Wmax - 1`: the bars before a bar that any combo's `d` at that bar reads.
    lookback: usize,
    /// The last `min(lookback, bars)` bars.
    tail: Vec<f64>,
    /// `tail ++ chunk`, kept so its allocation is reused from push to push.
    buf: Vec<f64>,
    states: Vec<Backtest>,
    bars: u64,
}

/// The work, in bar·combos, of one block of [`Sweeper::push_observed`]: about a second of the
/// slowest variants' work on one core, a few milliseconds of the fastest's.
pub const OBSERVED_BLOCK_WORK: usize = 1 << 27;

/// Combos per block of an observed push over `bars` bars: about [`OBSERVED_BLOCK_WORK`]
/// bar·combos, a multiple of 64 (whole SIMD lanes and several per worker), all when fewer.
fn observed_block(combos: usize, bars: usize) -> usize {
    let per = OBSERVED_BLOCK_WORK
        .div_ceil(bars.max(1))
        .next_multiple_of(64);
    per.min(combos).max(1)
}

impl Sweeper {
    /// A sweep of `params` at `fee_pct` with `variant` on `threads`, before the first bar.
    /// The params and the fee are checked here; errors name the bad value.
    pub fn new(
        params: &[Combo],
        fee_pct: f64,
        variant: Variant,
        threads: Threads,
    ) -> Result<Self, KernelError> {
        validate_params_and_fee(params, fee_pct)?;
        let lookback = params.iter().map(effective_window).max().unwrap_or(1) - 1;
        Ok(Sweeper {
            variant,
            params: params.to_vec(),
            fee_pct,
            threads,
            lookback,
            tail: Vec::new(),
            buf: Vec::new(),
            states: vec![Backtest::new(); params.len()],
            bars: 0,
        })
    }

    /// The next bars of the series, in order (any length; an empty chunk is a no-op). A bad
    /// price is refused with its index in the whole series, and the sweeper is left as it was
    /// before this push, so a caller may skip or fix the chunk.
    pub fn push(&mut self, chunk: &[f64]) -> Result<(), KernelError> {
        self.run(chunk, self.params.len().max(1), None).map(|_| ())
    }

    /// [`push`](Sweeper::push), reporting as it goes: the combos are swept in blocks of about
    /// [`OBSERVED_BLOCK_WORK`] bar·combos each, and after each block `observe(n)` is told that
    /// `n` more combos have seen the whole chunk, so a big grid shows progress within one chunk.
    /// When `observe` returns `false` the push stops there, returns `Ok(false)` and leaves the
    /// sweeper as it was before the push. Combos are independent, so the blocks change no bit.
    pub fn push_observed(
        &mut self,
        chunk: &[f64],
        observe: &mut dyn FnMut(usize) -> bool,
    ) -> Result<bool, KernelError> {
        let block = observed_block(self.params.len(), self.tail.len() + chunk.len());
        self.run(chunk, block, Some(observe))
    }

    /// [`push_observed`](Sweeper::push_observed) of the chunk `buf[room..]`, swept where it
    /// lies: the sweeper writes the bars it carries over (at most [`lookback`](Sweeper::lookback))
    /// into the `room` slots before it, instead of copying the chunk behind them. Whatever
    /// `buf[..room]` held is overwritten; with less room than the carried bars it copies as a
    /// plain push does (a `room` past the end leaves an empty chunk). Same results, bit for
    /// bit.
    pub fn push_observed_in_place(
        &mut self,
        buf: &mut [f64],
        room: usize,
        observe: &mut dyn FnMut(usize) -> bool,
    ) -> Result<bool, KernelError> {
        let t = self.tail.len();
        let Some(start) = room.checked_sub(t).filter(|_| room <= buf.len()) else {
            return self.push_observed(buf.get(room..).unwrap_or_default(), observe);
        };
        let series = &mut buf[start..];
        if series.len() == t {
            return Ok(true);
        }
        series[..t].copy_from_slice(&self.tail);
        let block = observed_block(self.params.len(), series.len());
        self.sweep(series, t, block, Some(observe))
    }

    /// The push, `block` combos at a time, `observe` told after each block.
    fn run(
        &mut self,
        chunk: &[f64],
        block: usize,
        observe: Option<&mut dyn FnMut(usize) -> bool>,
    ) -> Result<bool, KernelError> {
        if chunk.is_empty() {
            return Ok(true);
        }
        // The first push (and the batch) needs no copy.
        if self.tail.is_empty() {
            return self.sweep(chunk, 0, block, observe);
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.extend_from_slice(&self.tail);
        buf.extend_from_slice(chunk);
        let from = self.tail.len();
        let swept = self.sweep(&buf, from, block, observe);
        self.buf = buf;
        swept
    }

    /// Sweeps `series`, the carried tail (its first `from` bars) and then the chunk, `block`
    /// combos at a time.
    fn sweep(
        &mut self,
        series: &[f64],
        from: usize,
        block: usize,
        observe: Option<&mut dyn FnMut(usize) -> bool>,
    ) -> Result<bool, KernelError> {
        debug_assert!(
            series.len() > from
                && series[..from]
                    .iter()
                    .map(|x| x.to_bits())
                    .eq(self.tail.iter().map(|x| x.to_bits()))
        );
        let chunk_len = series.len() - from;
        let keep = self.lookback.min(series.len());
        // One pass over the bars, on the thread between two parallel sweeps: the tail passed
        // in an earlier push, so a bad price lies in the chunk, named by its index in the
        // whole series.
        let valid = ValidClose::new(series).map_err(|e| match e {
            KernelError::BadPrice { index, value } => KernelError::BadPrice {
                index: index - from + self.bars as usize,
                value,
            },
            e => e,
        })?;
        // A combo's states are replaced only when the whole push succeeded.
        let mut states = self.states.clone();
        let mut observe = observe;
        for (p, s) in self.params.chunks(block).zip(states.chunks_mut(block)) {
            let f = self.variant;
            f.sweep_from(valid, p, self.fee_pct, self.threads, from, s)?;
            if let Some(observe) = observe.as_mut()
                && !observe(p.len())
            {
                return Ok(false);
            }
        }
        self.tail.clear();
        self.tail.extend_from_slice(&series[series.len() - keep..]);
        self.states = states;
        self.bars += chunk_len as u64;
        Ok(true)
    }

    /// Bars pushed so far.
    pub fn bars(&self) -> u64 {
        self.bars
    }

    /// The params, in the order of the results.
    pub fn params(&self) -> &[Combo] {
        &self.params
    }

    /// The bars of lookback a push carries over (`Wmax - 1`).
    pub fn lookback(&self) -> usize {
        self.lookback
    }

    /// Each combo's event-loop state after the bars pushed so far (a live run reads these).
    pub fn states(&self) -> &[Backtest] {
        &self.states
    }

    /// The results so far: the batch sweep of the bars pushed up to now.
    pub fn result(&self) -> SweepResult {
        SweepResult {
            pnl: self.states.iter().map(Backtest::pnl).collect(),
            trades: self.states.iter().map(Backtest::trades).collect(),
        }
    }

    /// The results, or [`KernelError::EmptySeries`] when no bar was pushed (as the batch sweep
    /// refuses an empty series).
    pub fn finish(self) -> Result<SweepResult, KernelError> {
        if self.bars == 0 {
            return Err(KernelError::EmptySeries);
        }
        Ok(self.result())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(n: usize) -> Vec<f64> {
        hullsweep_kernel::default_close()[..n].to_vec()
    }

    #[test]
    fn blocks_change_no_bit_and_report_every_combo() {
        let close = series(6_000);
        let params = hullsweep_kernel::default_params();
        for variant in [Variant::Reference, Variant::Simd, Variant::Rolling] {
            let mut whole = Sweeper::new(&params, 0.09, variant, Threads::Fixed(1)).unwrap();
            let mut blocks = whole.clone();
            for chunk in close.chunks(2_500) {
                whole.push(chunk).unwrap();
                let mut seen = 0;
                let mut observe = |n: usize| {
                    seen += n;
                    true
                };
                assert!(blocks.run(chunk, 7, Some(&mut observe)).unwrap());
                assert_eq!(seen, params.len(), "{variant:?}");
                assert_eq!(blocks.result(), whole.result(), "{variant:?}");
            }
        }
    }

    #[test]
    fn a_stopped_push_leaves_the_sweeper_as_it_was() {
        let close = series(4_000);
        let params = hullsweep_kernel::default_params();
        let mut s = Sweeper::new(&params, 0.09, Variant::Simd, Threads::Fixed(1)).unwrap();
        s.push(&close[..1_000]).unwrap();
        let before = (s.result(), s.bars(), s.tail.clone());
        let mut calls = 0;
        let mut stop_second = |_: usize| {
            calls += 1;
            calls < 2
        };
        assert!(!s.run(&close[1_000..], 16, Some(&mut stop_second)).unwrap());
        assert_eq!(calls, 2);
        assert_eq!((s.result(), s.bars(), s.tail.clone()), before);
        // It then goes on as if the stopped push had never been made.
        s.push(&close[1_000..]).unwrap();
        let batch = Variant::Simd
            .sweep(&close, &params, 0.09, Threads::Fixed(1))
            .unwrap();
        assert_eq!(s.finish().unwrap(), batch);
    }

    #[test]
    fn observed_blocks_are_whole_lanes_and_cover_the_work() {
        assert_eq!(observed_block(80, 150_000), 80);
        assert_eq!(observed_block(10_000, 150_000), 896);
        assert_eq!(observed_block(10_000, 1), 10_000);
        assert_eq!(observed_block(0, 10), 1);
        assert_eq!(observed_block(100_000, 1 << 30), 64);
    }
}
