//! Every variant's metrics sweep (docs/kernel.md, "Metrics"): the same pipeline as its batch
//! sweep, with the shared event loop (`prealloc::Backtest`) keeping the metric accumulators.
//!
//! Opt-in and separate from [`SweepFn`](crate::SweepFn), so the `(pnl, trades)` sweeps run the
//! plain loop; the gate checks every variant's metrics bit for bit against numba's.

use crate::prealloc::{self, Backtest, Scratch, run_combo_bt};
use crate::simd::WmaKernel;
use crate::{Threads, Variant, checked, rolling, unchecked};
use hullsweep_kernel::{Combo, KernelError, Metrics, ValidClose, validate_params_and_fee};
use std::ops::Range;

/// The metrics sweep signature: like [`SweepFn`](crate::SweepFn), one [`Metrics`] per combo.
pub type MetricsFn = fn(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
) -> Result<Vec<Metrics>, KernelError>;

impl Variant {
    /// Every combo's [`Metrics`] (their `pnl` and `trades` are [`Variant::sweep`]'s), after
    /// validating the inputs; errors name the bad value.
    pub fn sweep_metrics(
        self,
        close: &[f64],
        params: &[Combo],
        fee_pct: f64,
        threads: Threads,
    ) -> Result<Vec<Metrics>, KernelError> {
        self.sweep_metrics_valid(ValidClose::new(close)?, params, fee_pct, threads)
    }

    /// [`Variant::sweep_metrics`] over a series validated earlier.
    pub fn sweep_metrics_valid(
        self,
        close: ValidClose<'_>,
        params: &[Combo],
        fee_pct: f64,
        threads: Threads,
    ) -> Result<Vec<Metrics>, KernelError> {
        (self.metrics_func())(close, params, fee_pct, threads)
    }

    fn metrics_func(self) -> MetricsFn {
        match self {
            Variant::Reference => |c, p, f, _| hullsweep_kernel::sweep_metrics_valid(c, p, f),
            Variant::Checked => |c, p, f, _| own_indicators(c, p, f, checked::indicators),
            Variant::Unchecked => |c, p, f, _| own_indicators(c, p, f, unchecked::indicators),
            Variant::Prealloc => |c, p, f, _| pipeline(c, p, f, prealloc::wma_range_into),
            Variant::Simd => |c, p, f, _| {
                let kernel = WmaKernel::best();
                pipeline(c, p, f, move |x, w, o, r| kernel.wma_range(x, w, o, r))
            },
            Variant::Rayon => rayon,
            Variant::Rolling => |c, p, f, _| rolling::sweep_metrics(c, p, f, Threads::Fixed(1)),
            Variant::RollingRayon => rolling::sweep_metrics,
        }
    }
}

/// A variant's `(hma, hma3)` of one combo.
type Indicators = fn(&[f64], &Combo) -> (Vec<f64>, Vec<f64>);

/// `checked` and `unchecked`: the variant's own indicators, then the shared loop over every bar.
fn own_indicators(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    indicators: Indicators,
) -> Result<Vec<Metrics>, KernelError> {
    validate_params_and_fee(params, fee_pct)?;
    let close = close.bars();
    Ok(params
        .iter()
        .map(|combo| {
            let (h, h3) = indicators(close, combo);
            let mut bt = Backtest::tracking(true);
            for (i, ((&c, &h), &h3)) in close.iter().zip(&h).zip(&h3).enumerate() {
                bt.step_at(i, c, h - h3, fee_pct);
            }
            bt.metrics(close.len())
        })
        .collect())
}

/// `prealloc` and `simd`: the tiled pipeline with a tracking loop, one scratch for the sweep.
fn pipeline<F>(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    wma: F,
) -> Result<Vec<Metrics>, KernelError>
where
    F: Fn(&[f64], usize, &mut [f64], Range<usize>) + Copy,
{
    validate_params_and_fee(params, fee_pct)?;
    let close = close.bars();
    let mut scratch = Scratch::new(close.len());
    Ok(params
        .iter()
        .map(|combo| {
            let mut bt = Backtest::tracking(true);
            run_combo_bt(close, combo, fee_pct, scratch.as_mut_slice(), wma, &mut bt);
            bt.metrics(close.len())
        })
        .collect())
}

/// `rayon`: the SIMD pipeline per worker, combos handed out as [`crate::rayon`] does.
fn rayon(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
) -> Result<Vec<Metrics>, KernelError> {
    validate_params_and_fee(params, fee_pct)?;
    let kernel = WmaKernel::best();
    let close = close.bars();
    let wma =
        move |x: &[f64], w: usize, o: &mut [f64], r: Range<usize>| kernel.wma_range(x, w, o, r);
    let per_worker = crate::rayon::for_each_combo(params, close.len(), threads, |next| {
        let mut scratch = Scratch::new(close.len());
        let mut done = Vec::new();
        while let Some(k) = next() {
            let mut bt = Backtest::tracking(true);
            run_combo_bt(
                close,
                &params[k],
                fee_pct,
                scratch.as_mut_slice(),
                wma,
                &mut bt,
            );
            done.push((k, bt.metrics(close.len())));
        }
        done
    });
    let mut out = vec![Backtest::new().metrics(0); params.len()];
    for (k, m) in per_worker.into_iter().flatten() {
        out[k] = m;
    }
    Ok(out)
}
