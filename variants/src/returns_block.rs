//! The fast reading of a run's bar returns: a cache-sized block at a time, each bar's loop state
//! found without a branch per change, with the bits of [`ComboRun::for_each_return`].

use crate::returns::{ComboRun, RunState};

/// The working memory of [`ComboRun::for_each_block`], reused from combo to combo: the block of
/// returns and what locates each bar's loop state without a branch.
#[derive(Clone, Debug, Default)]
pub struct ReturnScratch {
    block: Vec<f64>,
    /// Per bar of the block: 1 where a change happens, else 0.
    step: Vec<u32>,
    /// The formula's `(side, entry, realized)` at the start, then after each change.
    states: Vec<[f64; 3]>,
}

impl ReturnScratch {
    /// Scratch for blocks of `bars` bars (at least 1).
    pub fn new(bars: usize) -> ReturnScratch {
        let bars = bars.max(1);
        ReturnScratch {
            block: vec![0.0; bars],
            step: vec![0; bars],
            states: Vec::new(),
        }
    }
}

impl ComboRun<'_> {
    /// Hands the bar returns of bars [`Self::from`].. to `f` a block at a time,
    /// `f(first_bar, returns)`, in bar order, each block as long as `scratch` was made for (so
    /// that it stays in cache while `f` reads it): the bits of [`Self::for_each_return`].
    /// Returns the run's state after its last bar, from which a run over the next piece of the
    /// series resumes.
    ///
    /// Written without a branch per change, because changes come every few bars (a short-window
    /// combo reverses about every four bars on the default series) and a branch taken at each
    /// would be mispredicted at each: per block the changes are marked in `step`, and each bar
    /// finds its state by a running count of them.
    pub fn for_each_block(
        &self,
        scratch: &mut ReturnScratch,
        mut f: impl FnMut(usize, &[f64]),
    ) -> RunState {
        let (close, changes) = (self.close, self.changes);
        let ReturnScratch {
            block,
            step,
            states,
        } = scratch;
        states.clear();
        // A flat start (before the first entry) returns 0.0 until the first change; its slot
        // holds a harmless formula that the select below never lets through.
        let flat = self.start.formula().is_none();
        states.push(self.start.formula().unwrap_or([0.0, 1.0, 0.0]));
        states.extend(changes.iter().map(|c| [c.pos as f64, c.entry, c.realized]));
        let (mut state, mut next) = (0usize, 0usize);
        let mut equity_before = self.start.equity;
        for start in (self.from..close.len()).step_by(block.len()) {
            let end = (start + block.len()).min(close.len());
            let len = end - start;
            step[..len].fill(0);
            while next < changes.len() && changes[next].bar < end {
                step[changes[next].bar - start] = 1;
                next += 1;
            }
            let bars = close[start..end].iter().zip(&step[..len]);
            for (r, (&c, &s)) in block[..len].iter_mut().zip(bars) {
                state += s as usize;
                let [side, entry, realized] = states[state];
                let equity = realized + side * (c / entry - 1.0) * 100.0;
                let keep = c.is_nan() || (flat && state == 0);
                *r = if keep { 0.0 } else { equity - equity_before };
                equity_before = if keep { equity_before } else { equity };
            }
            f(start, &block[..len]);
        }
        RunState {
            bt: *self.end,
            equity: equity_before,
        }
    }
}
