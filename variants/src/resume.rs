//! The resumable sweep every variant implements: its signature ([`SweepFn`]), the checks each
//! entry makes before it starts, and the batch sweep as a resumed one from bar 0.

use crate::{Backtest, Threads};
use hullsweep_kernel::{Combo, KernelError, SweepResult, ValidClose, validate_params_and_fee};

/// The one signature every variant implements: a sweep resumed at bar `from` of `close`, with
/// `states[k]` combo `k`'s event-loop state before that bar (updated in place). Bars before
/// `from` are lookback only: their WMAs feed later bars, the event loop does not see them. The
/// batch sweep is `from = 0` from fresh states; a [`Sweeper`] passes the last lookback bars
/// ahead of each new chunk. The series arrives validated (see [`Variant::sweep_valid`]); each
/// variant still checks the params, the fee, `from` and the number of states.
///
/// [`Sweeper`]: crate::Sweeper
/// [`Variant::sweep_valid`]: crate::Variant::sweep_valid
pub type SweepFn = fn(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
    from: usize,
    states: &mut [Backtest],
) -> Result<(), KernelError>;

/// What every [`SweepFn`] checks before it starts: params, fee, `from` inside the series and
/// one state per combo.
pub(crate) fn check_resume(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    from: usize,
    states: &[Backtest],
) -> Result<(), KernelError> {
    validate_params_and_fee(params, fee_pct)?;
    if states.len() != params.len() {
        return Err(KernelError::ParamsShape {
            detail: format!("{} combo states for {} combos", states.len(), params.len()),
        });
    }
    if from > close.bars().len() {
        return Err(KernelError::ParamsShape {
            detail: format!(
                "resume at bar {from} of a {}-bar buffer",
                close.bars().len()
            ),
        });
    }
    Ok(())
}

/// A batch sweep through a resumable one: `from = 0`, fresh states. The states are the only
/// extra work (one small struct per combo), so every batch entry is this thin wrapper.
pub(crate) fn batch(
    f: SweepFn,
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
) -> Result<SweepResult, KernelError> {
    let mut states = vec![Backtest::new(); params.len()];
    f(close, params, fee_pct, threads, 0, &mut states)?;
    Ok(SweepResult {
        pnl: states.iter().map(Backtest::pnl).collect(),
        trades: states.iter().map(Backtest::trades).collect(),
    })
}
