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

use crate::{Backtest, Threads, Variant};
use hullsweep_kernel::{
    Combo, KernelError, SweepResult, ValidClose, validate_close, validate_params_and_fee, window,
};

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

/// The effective lookback of a combo: `d` at bar `i` reads bars `i + 1 - W ..= i` (the batch's
/// `Plan::route` calls it `weff`; a series shorter than it gives an all-NaN `d`).
pub fn effective_window(combo: &Combo) -> usize {
    let [n, h, s, m, h3, t] = combo.map(window);
    let hma = n.max(h).saturating_add(s) - 1;
    let hma3 = t.max(h3).max(m).saturating_add(m) - 1;
    hma.max(hma3)
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
        if chunk.is_empty() {
            return Ok(());
        }
        validate_close(chunk).map_err(|e| match e {
            KernelError::BadPrice { index, value } => KernelError::BadPrice {
                index: index + self.bars as usize,
                value,
            },
            e => e,
        })?;
        // A combo's states are replaced only when the whole push succeeded.
        let mut states = self.states.clone();
        let keep = self.lookback.min(self.tail.len() + chunk.len());
        if self.tail.is_empty() {
            // The first push (and the batch): no copy.
            let valid = ValidClose::new(chunk)?;
            let f = self.variant;
            f.sweep_from(
                valid,
                &self.params,
                self.fee_pct,
                self.threads,
                0,
                &mut states,
            )?;
            self.tail.extend_from_slice(&chunk[chunk.len() - keep..]);
        } else {
            self.buf.clear();
            self.buf.extend_from_slice(&self.tail);
            self.buf.extend_from_slice(chunk);
            let valid = ValidClose::new(&self.buf)?;
            let from = self.tail.len();
            let f = self.variant;
            f.sweep_from(
                valid,
                &self.params,
                self.fee_pct,
                self.threads,
                from,
                &mut states,
            )?;
            self.tail.clear();
            self.tail
                .extend_from_slice(&self.buf[self.buf.len() - keep..]);
        }
        self.states = states;
        self.bars += chunk.len() as u64;
        Ok(())
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
