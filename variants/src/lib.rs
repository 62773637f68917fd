//! Implementations of the hullsweep kernel, all behind one signature and one [`Variant`] enum.
//! Tests, benches and the lab iterate over [`Variant::ALL`], so a new variant is one module and one line.

use hullsweep_kernel::{Combo, KernelError, SweepResult, ValidClose};

pub mod checked;
pub mod metrics;
pub mod prealloc;
pub mod rayon;
pub mod rolling;
pub mod simd;
pub mod unchecked;

/// Worker threads for variants that parallelise over combos; single-thread variants ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// All available cores.
    Auto,
    /// Exactly this many (at least 1).
    Fixed(usize),
}

/// The one signature every variant implements. The series arrives validated (see
/// [`Variant::sweep_valid`]); each variant still checks the params and the fee.
pub type SweepFn = fn(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
) -> Result<SweepResult, KernelError>;

fn reference(
    close: ValidClose<'_>,
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
) -> Result<SweepResult, KernelError> {
    hullsweep_kernel::sweep_valid(close, params, fee_pct)
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
    Checked => "checked", checked::sweep;
    /// The reference with `get_unchecked` in the hot loops, validated once at the entry.
    Unchecked => "unchecked", unchecked::sweep;
    /// No allocation per combo or pass: one scratch and caller-owned outputs.
    Prealloc => "prealloc", prealloc::sweep;
    /// Explicit SIMD WMA across consecutive outputs, run-time dispatched, on the prealloc pipeline.
    Simd => "simd", simd::sweep;
    /// SIMD + prealloc per worker, parallel over combos on a local rayon pool.
    Rayon => "rayon", rayon::sweep;
    /// Exact O(1)-per-bar WMAs with a proven error bound; uncertified bars get the reference's
    /// arithmetic, so every trade is the reference's. Single thread.
    Rolling => "rolling", rolling::sweep;
    /// `rolling` over combos on a local rayon pool of `threads` workers.
    RollingRayon => "rolling-rayon", rolling::sweep_par;
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

    /// The best variant for this machine. Rule: [`Variant::RollingRayon`] when the OS reports
    /// more than one core, otherwise [`Variant::Rolling`] (the same work without the pool).
    /// `rolling` does O(1) work per bar where the others do O(window); on data its bound cannot
    /// certify it falls back to the same SIMD arithmetic `simd` runs, so it is never far behind
    /// (the lab's rolling section measures both cases side by side).
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
        (self.func())(close, params, fee_pct, threads)
    }
}
