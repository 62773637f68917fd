//! `hullsweep validate`: the fold sweep, then CSCV over its folds, the deflated Sharpe ratio of
//! its best combo and walk-forward selection, as docs/research.md defines them.

use crate::error::ValidateError;
use crate::fold_sweep::{ColumnSink, FoldSpec, FoldSweep};
use crate::replay::{InMemory, Replay};
use crate::rerun::Rerun;
use crate::sweeper::FoldSweeper;
use hullsweep_kernel::{Combo, ValidClose};
use hullsweep_research::{
    Cscv, DeflatedSharpe, Metric, OosSummary, Selection, WalkSpec, cscv, deflated_sharpe_of_shape,
    select_best, walk_forward_select,
};
use hullsweep_variants::{Threads, Variant};

/// What a validation computes besides the sweep.
#[derive(Clone, Copy, Debug)]
pub struct Plan<'a> {
    /// S, the CSCV folds (even, at least 2).
    pub folds: usize,
    /// The metric CSCV and walk-forward rank combos by.
    pub metric: Metric,
    /// Walk-forward windows, when wanted.
    pub walk: Option<&'a WalkSpec>,
    /// Keep the selected combos' out-of-sample returns ([`WalkForward::oos_returns`]: 8 bytes
    /// per test bar, for a plot of the equity); without it only their summary is kept.
    pub oos_returns: bool,
}

/// Walk-forward: each window's selection and the selected combos' out-of-sample returns.
#[derive(Clone, Debug)]
pub struct WalkForward {
    /// The windows asked for.
    pub spec: WalkSpec,
    /// Per window, in order: the train and test bars, the combo selected on the train bars and
    /// its train metric.
    pub selections: Vec<Selection>,
    /// Each window's test-bar returns of its selected combo, concatenated in window order; empty
    /// unless [`Plan::oos_returns`] asked for them.
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
/// deflated Sharpe ratio and walk-forward over it: [`validate_replay`] of the series in memory.
/// At least 2 combos; inputs are checked and errors name the value.
pub fn validate(
    variant: Variant,
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    plan: Plan<'_>,
    column: Option<ColumnSink<'_>>,
) -> Result<Validation, ValidateError> {
    let mut series = InMemory(close);
    validate_replay(variant, &mut series, params, fee_pct, threads, plan, column)
}

/// [`validate`] of a series read in pieces, in memory that does not grow with it: the fold
/// sweep reads `series` once; then the combos it selects (the best for the deflated Sharpe
/// ratio, each walk-forward window's) are run again over it [`PASSES`](hullsweep_research::PASSES) times for the moments of
/// their returns, a piece at a time. A series that gives other bars on a later read is refused
/// or gives other selections: replay the same bars.
pub fn validate_replay(
    variant: Variant,
    series: &mut dyn Replay,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    plan: Plan<'_>,
    column: Option<ColumnSink<'_>>,
) -> Result<Validation, ValidateError> {
    // Cheap checks first, so a bad walk-forward spec fails before the sweep runs.
    let bars = series.bars();
    if let Some(w) = plan.walk {
        w.windows(bars)?;
    }
    let spec = FoldSpec {
        folds: Some(plan.folds),
        walk: plan.walk,
    };
    let mut sweeper = FoldSweeper::new(variant, params, fee_pct, threads, bars, spec)?;
    series.replay(&mut |chunk| sweeper.push(chunk, column))?;
    let sweep = sweeper.finish()?;
    let workers = match threads {
        Threads::Fixed(n) => n.max(1),
        Threads::Auto => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let cscv = cscv(&sweep.fold_stats()?, plan.metric, workers)?;
    let sharpes: Vec<f64> = sweep.combos().iter().map(|c| c.sharpe).collect();
    let best = select_best(&sharpes);
    let selections = match (plan.walk, sweep.walk_stats()) {
        (Some(spec), Some(stats)) => Some(walk_forward_select(&stats?, spec, plan.metric)?),
        _ => None,
    };
    let rerun = Rerun {
        variant,
        params,
        fee_pct,
        best,
        selections: selections.as_deref().unwrap_or(&[]),
        keep_oos: plan.oos_returns,
    }
    .run(series)?;
    let deflated = deflated_sharpe_of_shape(&sharpes, rerun.shape)?;
    let walk_forward = match (plan.walk, selections) {
        (Some(spec), Some(selections)) => Some(WalkForward {
            spec: *spec,
            window_starts: window_starts(&selections),
            summary: rerun.oos,
            selections,
            oos_returns: rerun.oos_returns,
        }),
        _ => None,
    };
    Ok(Validation {
        sweep,
        cscv,
        deflated,
        walk_forward,
    })
}

/// Where each window's test bars start in the concatenated out-of-sample returns.
fn window_starts(selections: &[Selection]) -> Vec<usize> {
    let mut at = 0;
    selections
        .iter()
        .map(|s| {
            let start = at;
            at += s.window.test.len();
            start
        })
        .collect()
}
