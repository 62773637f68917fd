//! Every variant's metrics sweep (docs/kernel.md, "Metrics"): the same pipeline as its batch
//! sweep, with the shared event loop (`prealloc::Backtest`) keeping the metric accumulators.
//!
//! Opt-in and separate from [`SweepFn`](crate::SweepFn), so the `(pnl, trades)` sweeps run the
//! plain loop; the gate checks every variant's metrics bit for bit against numba's. The
//! pipelines are generic over the event loop, so [`crate::returns`] runs the same ones with a
//! loop that also records each position change.

use crate::backtest::EventLoop;
use crate::prealloc::{self, Backtest, Scratch, run_combo_loop};
use crate::simd::WmaKernel;
use crate::threads::in_combo_order;
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
        if self == Variant::Reference {
            return hullsweep_kernel::sweep_metrics_valid(close, params, fee_pct);
        }
        let n = close.bars().len();
        self.run_loops(
            close,
            params,
            fee_pct,
            threads,
            0,
            |_| Backtest::tracking(true),
            |_, bt| bt.metrics(n),
        )
    }

    /// Runs every combo through this variant's pipeline into the loop `new(k)` from bar `from`
    /// on (the bars before it are lookback only, as in a [`SweepFn`](crate::SweepFn)), and hands
    /// each finished loop to `done` with its combo index on the worker that ran it; the results
    /// come back in combo order.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_loops<L, R, N, D>(
        self,
        close: ValidClose<'_>,
        params: &[Combo],
        fee_pct: f64,
        threads: Threads,
        from: usize,
        new: N,
        done: D,
    ) -> Result<Vec<R>, KernelError>
    where
        L: EventLoop,
        R: Send,
        N: Fn(usize) -> L + Sync,
        D: Fn(usize, L) -> R + Sync,
    {
        validate_params_and_fee(params, fee_pct)?;
        if from > close.bars().len() {
            return Err(KernelError::ParamsShape {
                detail: format!(
                    "resume at bar {from} of a {}-bar buffer",
                    close.bars().len()
                ),
            });
        }
        let (close, run) = (close.bars(), Run { new, done, from });
        Ok(match self {
            Variant::Reference => run.own_indicators(close, params, fee_pct, reference),
            Variant::Checked => run.own_indicators(close, params, fee_pct, checked::indicators),
            Variant::Unchecked => run.own_indicators(close, params, fee_pct, unchecked::indicators),
            Variant::Prealloc => run.pipeline(close, params, fee_pct, prealloc::wma_range_into),
            Variant::Simd => {
                let kernel = WmaKernel::best();
                run.pipeline(close, params, fee_pct, move |x, w, o, r| {
                    kernel.wma_range(x, w, o, r)
                })
            }
            Variant::Rayon => run.rayon(close, params, fee_pct, threads),
            Variant::Rolling => rolling::run_loops(
                close,
                params,
                fee_pct,
                Threads::Fixed(1),
                from,
                &run.new,
                &run.done,
            ),
            Variant::RollingRayon => {
                rolling::run_loops(close, params, fee_pct, threads, from, &run.new, &run.done)
            }
        })
    }
}

/// The kernel's own indicators (the reference's batch runs its own loop; this is the same loop
/// stepped bar by bar through an [`EventLoop`]).
fn reference(close: &[f64], combo: &Combo) -> (Vec<f64>, Vec<f64>) {
    let [n, half, sqrt, m, half3, third] = combo.map(hullsweep_kernel::window);
    (
        hullsweep_kernel::hma(close, n, half, sqrt),
        hullsweep_kernel::hma3(close, m, half3, third),
    )
}

/// A variant's `(hma, hma3)` of one combo.
type Indicators = fn(&[f64], &Combo) -> (Vec<f64>, Vec<f64>);

/// What to run each combo into (`new`), from which bar, and what to keep of it (`done`).
struct Run<N, D> {
    new: N,
    done: D,
    from: usize,
}

impl<L, R, N, D> Run<N, D>
where
    L: EventLoop,
    R: Send,
    N: Fn(usize) -> L + Sync,
    D: Fn(usize, L) -> R + Sync,
{
    /// `reference`, `checked` and `unchecked`: the variant's own indicators, then the shared
    /// loop over every bar.
    fn own_indicators(
        &self,
        close: &[f64],
        params: &[Combo],
        fee_pct: f64,
        indicators: Indicators,
    ) -> Vec<R> {
        params
            .iter()
            .enumerate()
            .map(|(k, combo)| {
                let (h, h3) = indicators(close, combo);
                let mut bt = (self.new)(k);
                let bars = close.iter().zip(&h).zip(&h3).enumerate();
                for (i, ((&c, &h), &h3)) in bars.skip(self.from) {
                    bt.step_at(i, c, h - h3, fee_pct);
                }
                (self.done)(k, bt)
            })
            .collect()
    }

    /// `prealloc` and `simd`: the tiled pipeline, one scratch for the sweep.
    fn pipeline<F>(&self, close: &[f64], params: &[Combo], fee_pct: f64, wma: F) -> Vec<R>
    where
        F: Fn(&[f64], usize, &mut [f64], Range<usize>) + Copy,
    {
        let mut scratch = Scratch::new(close.len());
        params
            .iter()
            .enumerate()
            .map(|(k, combo)| {
                let mut bt = (self.new)(k);
                let buf = scratch.as_mut_slice();
                run_combo_loop(close, combo, fee_pct, buf, wma, self.from, &mut bt);
                (self.done)(k, bt)
            })
            .collect()
    }

    /// `rayon`: the SIMD pipeline per worker, combos handed out as [`crate::rayon`] does.
    fn rayon(&self, close: &[f64], params: &[Combo], fee_pct: f64, threads: Threads) -> Vec<R> {
        let kernel = WmaKernel::best();
        let wma =
            move |x: &[f64], w: usize, o: &mut [f64], r: Range<usize>| kernel.wma_range(x, w, o, r);
        let per_worker = crate::rayon::for_each_combo(params, close.len(), threads, |next| {
            let mut scratch = Scratch::new(close.len());
            let mut done = Vec::new();
            while let Some(k) = next() {
                let mut bt = (self.new)(k);
                let buf = scratch.as_mut_slice();
                run_combo_loop(close, &params[k], fee_pct, buf, wma, self.from, &mut bt);
                done.push((k, (self.done)(k, bt)));
            }
            done
        });
        in_combo_order(params.len(), per_worker)
    }
}
