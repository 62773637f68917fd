//! `hullsweep validate`: the fold sweep, then CSCV over its folds, the deflated Sharpe ratio of
//! its best combo and walk-forward selection, as docs/research.md defines them.

use crate::error::ValidateError;
use crate::fold_sweep::{ColumnSink, FoldSpec, FoldSweep};
use crate::sweeper::fold_sweep;
use hullsweep_kernel::{Combo, ValidClose};
use hullsweep_research::{
    Cscv, DeflatedSharpe, Metric, OosSummary, Selection, WalkSpec, cscv, deflated_sharpe,
    oos_summary, select_best, walk_forward_select,
};
use hullsweep_variants::{ReturnScratch, Threads, Variant};

/// What a validation computes besides the sweep.
#[derive(Clone, Copy, Debug)]
pub struct Plan<'a> {
    /// S, the CSCV folds (even, at least 2).
    pub folds: usize,
    /// The metric CSCV and walk-forward rank combos by.
    pub metric: Metric,
    /// Walk-forward windows, when wanted.
    pub walk: Option<&'a WalkSpec>,
}

/// Walk-forward: each window's selection and the selected combos' out-of-sample returns.
#[derive(Clone, Debug)]
pub struct WalkForward {
    /// The windows asked for.
    pub spec: WalkSpec,
    /// Per window, in order: the train and test bars, the combo selected on the train bars and
    /// its train metric.
    pub selections: Vec<Selection>,
    /// Each window's test-bar returns of its selected combo, concatenated in window order.
    pub oos_returns: Vec<f64>,
    /// Where each window's test bars start in `oos_returns`.
    pub window_starts: Vec<usize>,
    /// `oos_pnl` (their sum in order from 0.0) and `oos_sharpe`.
    pub summary: OosSummary,
}

/// Everything `hullsweep validate` reports.
#[derive(Clone, Debug)]
pub struct Validation {
    /// The sweep: per-combo metrics and the per-fold report.
    pub sweep: FoldSweep,
    /// CSCV over the sweep's folds: PBO, logits, degradation, P(OOS loss).
    pub cscv: Cscv,
    /// The deflated Sharpe ratio of the combo with the best whole-series Sharpe.
    pub deflated: DeflatedSharpe,
    /// Walk-forward, when the plan asks for it.
    pub walk_forward: Option<WalkForward>,
}

/// Runs the fold sweep of `variant` (bar returns to `column` when given), then CSCV, the
/// deflated Sharpe ratio and walk-forward over it. The combos it selects are run again for
/// their bar returns, so nothing of size bars x combos is kept. At least 2 combos; inputs are checked and errors name the value.
pub fn validate(
    variant: Variant,
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    plan: Plan<'_>,
    column: Option<ColumnSink<'_>>,
) -> Result<Validation, ValidateError> {
    // Cheap checks first, so a bad walk-forward spec fails before the sweep runs.
    let bars = close.bars();
    if let Some(w) = plan.walk {
        w.windows(bars.len())?;
    }
    let spec = FoldSpec {
        folds: Some(plan.folds),
        walk: plan.walk,
    };
    let sweep = fold_sweep(variant, close, params, fee_pct, threads, spec, column)?;
    let workers = match threads {
        Threads::Fixed(n) => n.max(1),
        Threads::Auto => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let cscv = cscv(&sweep.fold_stats()?, plan.metric, workers)?;
    let sharpes: Vec<f64> = sweep.combos().iter().map(|c| c.sharpe).collect();
    let best = select_best(&sharpes);
    let rerun = |k: usize| returns_of(variant, close, &params[k], fee_pct);
    let deflated = deflated_sharpe(&sharpes, &rerun(best)?)?;
    let walk_forward = match (plan.walk, sweep.walk_stats()) {
        (Some(spec), Some(stats)) => {
            let selections = walk_forward_select(&stats?, spec, plan.metric)?;
            Some(out_of_sample(&rerun, spec, selections)?)
        }
        _ => None,
    };
    Ok(Validation {
        sweep,
        cscv,
        deflated,
        walk_forward,
    })
}

/// One combo's bar returns, run again with the same variant (every variant gives the kernel's
/// bits, `variants/tests/returns.rs`).
fn returns_of(
    variant: Variant,
    close: ValidClose<'_>,
    combo: &Combo,
    fee_pct: f64,
) -> Result<Vec<f64>, ValidateError> {
    let mut runs = variant.sweep_runs(close, &[*combo], fee_pct, Threads::Fixed(1), |run| {
        let (mut scratch, mut out) = (ReturnScratch::new(1 << 12), Vec::new());
        run.for_each_block(&mut scratch, |_, r| out.extend_from_slice(r));
        out
    })?;
    Ok(runs.pop().expect("one combo, one run"))
}

/// The selected combos' test-bar returns, each distinct combo run once.
fn out_of_sample(
    rerun: &dyn Fn(usize) -> Result<Vec<f64>, ValidateError>,
    spec: &WalkSpec,
    selections: Vec<Selection>,
) -> Result<WalkForward, ValidateError> {
    let mut window_starts = Vec::with_capacity(selections.len());
    let mut at = 0;
    for s in &selections {
        window_starts.push(at);
        at += s.window.test.len();
    }
    let mut oos_returns = vec![0.0; at];
    let mut combos: Vec<usize> = selections.iter().map(|s| s.selected).collect();
    combos.sort_unstable();
    combos.dedup();
    for k in combos {
        let returns = rerun(k)?;
        for (s, &start) in selections.iter().zip(&window_starts) {
            if s.selected == k {
                let test = s.window.test.clone();
                oos_returns[start..start + test.len()].copy_from_slice(&returns[test]);
            }
        }
    }
    Ok(WalkForward {
        spec: *spec,
        summary: oos_summary(&oos_returns),
        selections,
        oos_returns,
        window_starts,
    })
}
