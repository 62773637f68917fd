//! [`Variant`]: the enum of every implementation of the kernel and its dispatch, from a name to
//! the module whose [`SweepFn`] runs it (the reference's own resumed sweep is here too).

use crate::resume::{SweepFn, batch, check_resume};
use crate::{Backtest, Threads, checked, prealloc, rayon, rolling, simd, unchecked};
use hullsweep_kernel::{Combo, KernelError, SweepResult, ValidClose};

/// The reference resumed: the kernel's own indicators (`hullsweep_kernel::hma`, `hma3`) and the
/// spec's event loop bar by bar from `from`.
fn reference(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
    from: usize,
    states: &mut [Backtest],
) -> Result<(), KernelError> {
    check_resume(close, params, fee_pct, from, states)?;
    let close = close.bars();
    for (combo, bt) in params.iter().zip(states) {
        let [n, half, sqrt, m, half3, third] = combo.map(hullsweep_kernel::window);
        let h = hullsweep_kernel::hma(close, n, half, sqrt);
        let h3 = hullsweep_kernel::hma3(close, m, half3, third);
        for i in from..close.len() {
            bt.step(close[i], h[i] - h3[i], fee_pct);
        }
    }
    Ok(())
}

macro_rules! variants {
    ($($(#[$doc:meta])* $v:ident => $name:literal, $f:path;)*) => {
        /// Every implementation of the kernel.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Variant { $($(#[$doc])* $v,)* }

        impl Variant {
            /// All variants, in the order tables list them.
            pub const ALL: &'static [Variant] = &[$(Variant::$v,)*];

            /// The name used on the command line and in reports.
            pub fn name(self) -> &'static str {
                match self { $(Variant::$v => $name,)* }
            }

            fn func(self) -> SweepFn {
                match self { $(Variant::$v => $f,)* }
            }
        }
    };
}

variants! {
    /// The line-by-line port in `hullsweep-kernel`: the oracle.
    Reference => "reference", reference;
    /// Idiomatic safe Rust: slices, `windows`, `zip`, no bounds checks left in the hot loops.
    Checked => "checked", checked::sweep_from;
    /// The reference with `get_unchecked` in the hot loops, validated once at the entry.
    Unchecked => "unchecked", unchecked::sweep_from;
    /// No allocation per combo or pass: one scratch and caller-owned outputs.
    Prealloc => "prealloc", prealloc::sweep_from;
    /// Explicit SIMD WMA across consecutive outputs, run-time dispatched, on the prealloc pipeline.
    Simd => "simd", simd::sweep_from;
    /// SIMD + prealloc per worker, parallel over combos on a local rayon pool.
    Rayon => "rayon", rayon::sweep_from;
    /// Exact O(1)-per-bar WMAs with a proven error bound; uncertified bars get the reference's
    /// arithmetic, so every trade is the reference's. Single thread.
    Rolling => "rolling", rolling::sweep_from;
    /// `rolling` over combos on a local rayon pool of `threads` workers.
    RollingRayon => "rolling-rayon", rolling::sweep_par_from;
}

impl Variant {
    /// Looks a variant up by its [`name`](Variant::name); `"fastest"` resolves to
    /// [`Variant::fastest`].
    pub fn from_name(name: &str) -> Option<Variant> {
        if name == "fastest" {
            return Some(Variant::fastest());
        }
        Variant::ALL.iter().copied().find(|v| v.name() == name)
    }

    /// The best variant for this machine and any sweep: [`Variant::RollingRayon`] when the OS
    /// reports more than one core, otherwise [`Variant::Rolling`] (the same code without the
    /// pool). Run with [`Threads::Auto`], `rolling-rayon` takes as many cores as the sweep's size
    /// pays for (the cost model: [`rolling::MIN_POSITIONS_PER_WORKER`]), so on a small sweep it
    /// runs on one thread, instruction for instruction `rolling`; [`rolling::planned_workers`]
    /// says how many it will take. `rolling` does O(1) work per bar where the others do
    /// O(window); on data its bound cannot certify it falls back to the same SIMD arithmetic
    /// `simd` runs, so it is never far behind (the lab's rolling section measures both cases
    /// side by side, and its "fastest" table this rule against the best single variant).
    pub fn fastest() -> Variant {
        if rayon::thread_count(Threads::Auto) > 1 {
            Variant::RollingRayon
        } else {
            Variant::Rolling
        }
    }

    /// Runs the sweep. Inputs are validated at the entry; errors name the bad value.
    pub fn sweep(
        self,
        close: &[f64],
        params: &[Combo],
        fee_pct: f64,
        threads: Threads,
    ) -> Result<SweepResult, KernelError> {
        self.sweep_valid(ValidClose::new(close)?, params, fee_pct, threads)
    }

    /// Runs the sweep over a series validated earlier (a loaded series in a service is scanned
    /// once at load, not on every call); the params and fee are validated here.
    pub fn sweep_valid(
        self,
        close: ValidClose<'_>,
        params: &[Combo],
        fee_pct: f64,
        threads: Threads,
    ) -> Result<SweepResult, KernelError> {
        match self {
            // The oracle stays the kernel's line-by-line port, event loop included; every
            // other variant's batch is its resumable sweep from bar 0 ([`batch`]).
            Variant::Reference => hullsweep_kernel::sweep_valid(close, params, fee_pct),
            _ => batch(self.func(), close, params, fee_pct, threads),
        }
    }

    /// The resumable sweep ([`SweepFn`]): bars before `from` are lookback, `states` (one per
    /// combo, [`Backtest::new`] at the start of a series) continue from where they were.
    /// [`Sweeper`] is the convenient way to drive it.
    ///
    /// [`Sweeper`]: crate::Sweeper
    pub fn sweep_from(
        self,
        close: ValidClose<'_>,
        params: &[Combo],
        fee_pct: f64,
        threads: Threads,
        from: usize,
        states: &mut [Backtest],
    ) -> Result<(), KernelError> {
        (self.func())(close, params, fee_pct, threads, from, states)
    }
}
