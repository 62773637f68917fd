//! The combos a validation selects, run again over the series for their returns' moments: the
//! best combo's shape for the deflated Sharpe ratio, each walk-forward window's test bars.
//!
//! Each pass reads the series once more and keeps one chunk of returns at a time, so memory does
//! not grow with the series; the distinct selected combos (a handful against the sweep's
//! thousands) run together, on one thread, so each combo's returns arrive in bar order.

use crate::error::ValidateError;
use crate::fold_sweep::FoldSpec;
use crate::replay::Replay;
use crate::sweeper::FoldSweeper;
use hullsweep_kernel::Combo;
use hullsweep_research::{OosPasses, OosSummary, PASSES, Selection, Shape, ShapePasses};
use hullsweep_variants::{Threads, Variant};
use std::ops::Range;
use std::sync::Mutex;

/// What to run again.
pub(crate) struct Rerun<'a> {
    pub variant: Variant,
    pub params: &'a [Combo],
    pub fee_pct: f64,
    /// The combo whose shape the deflated Sharpe ratio needs.
    pub best: usize,
    /// The walk-forward windows and their selections, in window order (test bars consecutive).
    pub selections: &'a [Selection],
    /// Keep the out-of-sample returns, not only their summary.
    pub keep_oos: bool,
}

/// What the reruns give.
pub(crate) struct Reruns {
    pub shape: Shape,
    pub oos: OosSummary,
    /// The out-of-sample returns, when kept.
    pub oos_returns: Vec<f64>,
}

impl Rerun<'_> {
    pub(crate) fn run(&self, series: &mut dyn Replay) -> Result<Reruns, ValidateError> {
        let bars = series.bars();
        let mut combos: Vec<usize> = std::iter::once(self.best)
            .chain(self.selections.iter().map(|s| s.selected))
            .collect();
        combos.sort_unstable();
        combos.dedup();
        let params: Vec<Combo> = combos.iter().map(|&k| self.params[k]).collect();
        let slot = |k: usize| combos.binary_search(&k).expect("a selected combo");
        let best = slot(self.best);
        // Per window, its test bars and its combo's slot.
        let picks: Vec<(Range<usize>, usize)> = self
            .selections
            .iter()
            .map(|s| (s.window.test.clone(), slot(s.selected)))
            .collect();
        let oos_span = match (picks.first(), picks.last()) {
            (Some(first), Some(last)) => first.0.start..last.0.end,
            _ => 0..0,
        };
        let mut shape = ShapePasses::new();
        let mut oos = OosPasses::new();
        let mut kept = Vec::new();
        // The current chunk's returns of the best combo, and its out-of-sample bars.
        let chunk_returns = Mutex::new((Vec::new(), Vec::new()));
        for pass in 0..PASSES {
            let spec = FoldSpec {
                folds: None,
                walk: None,
            };
            let mut sweeper = FoldSweeper::new(
                self.variant,
                &params,
                self.fee_pct,
                Threads::Fixed(1),
                bars,
                spec,
            )?;
            let mut start = 0;
            series.replay(&mut |chunk| {
                let end = start + chunk.len();
                let span = start.max(oos_span.start)..end.min(oos_span.end).max(start);
                {
                    let (own, out) = &mut *chunk_returns.lock().expect("not poisoned");
                    own.clear();
                    own.resize(chunk.len(), 0.0);
                    out.clear();
                    out.resize(span.len(), 0.0);
                }
                let sink = |combo: usize, bar: usize, r: &[f64]| {
                    let (own, out) = &mut *chunk_returns.lock().expect("not poisoned");
                    if combo == best {
                        own[bar - start..bar - start + r.len()].copy_from_slice(r);
                    }
                    // The windows whose test bars meet [bar, bar + r.len()).
                    let first = picks.partition_point(|(test, _)| test.end <= bar);
                    for (test, _) in picks[first..]
                        .iter()
                        .take_while(|(test, _)| test.start < bar + r.len())
                        .filter(|(_, slot)| *slot == combo)
                    {
                        let (lo, hi) = (test.start.max(bar), test.end.min(bar + r.len()));
                        out[lo - span.start..hi - span.start]
                            .copy_from_slice(&r[lo - bar..hi - bar]);
                    }
                };
                sweeper.push(chunk, Some(&sink))?;
                let (own, out) = &*chunk_returns.lock().expect("not poisoned");
                shape.push(own);
                oos.push(out);
                if pass == 0 && self.keep_oos {
                    kept.extend_from_slice(out);
                }
                start = end;
                Ok(())
            })?;
            // Refuses a replay that gave fewer bars than the series has.
            sweeper.finish()?;
            shape.end_pass();
            oos.end_pass();
        }
        Ok(Reruns {
            shape: shape.finish()?,
            oos: oos.finish(),
            oos_returns: kept,
        })
    }
}
