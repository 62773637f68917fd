//! Implementations of the hullsweep kernel, all behind one signature and one [`Variant`] enum.
//! Tests, benches and the lab iterate over [`Variant::ALL`], so a new variant is one module and one line.

use hullsweep_kernel::{Combo, KernelError, SweepResult};

/// Worker threads for variants that parallelise over combos; single-thread variants ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// All available cores.
    Auto,
    /// Exactly this many (at least 1).
    Fixed(usize),
}

/// The one signature every variant implements.
pub type SweepFn = fn(
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
    threads: Threads,
) -> Result<SweepResult, KernelError>;

fn reference(
    close: &[f64],
    params: &[Combo],
    fee_pct: f64,
    _: Threads,
) -> Result<SweepResult, KernelError> {
    hullsweep_kernel::sweep(close, params, fee_pct)
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
}

impl Variant {
    /// Looks a variant up by its [`name`](Variant::name).
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.iter().copied().find(|v| v.name() == name)
    }

    /// Runs the sweep. Inputs are validated at the entry; errors name the bad value.
    pub fn sweep(
        self,
        close: &[f64],
        params: &[Combo],
        fee_pct: f64,
        threads: Threads,
    ) -> Result<SweepResult, KernelError> {
        (self.func())(close, params, fee_pct, threads)
    }
}
