//! Section 1, the gap: the Rust reference against numba on the full sweep, interleaved.

use super::charts::Chart;
use super::format::{ms, pct, table};
use super::inputs::Inputs;
use std::fmt::Write as _;

pub(super) fn render(r: &Inputs, s: &mut String, _: &mut Vec<Chart>) {
    let Inputs { plan, gap, .. } = *r;
    let _ = writeln!(s, "## 1. The gap\n");
    let _ = writeln!(
        s,
        "Workload: {} bars (seed {}), grid `{}` ({} combos), fee {}. The numba worker is one long-lived \
         process (JIT compiled once, before timing; it times its own `sweep` call); the Rust reference \
         runs in the driver process.\n",
        plan.bars,
        hullsweep_kernel::DEFAULT_SEED,
        plan.grid,
        plan.grid.rsplit(':').next().unwrap_or(""),
        hullsweep_kernel::DEFAULT_FEE_PCT
    );
    match gap {
        Some(g) => {
            s.push_str(&table(g));
            let (r, n) = (g.median(0), g.median(1));
            let frac = 1.0 - n / r;
            let _ = writeln!(
                s,
                "\n**Gap: Rust reference {} vs numba {}: Rust is {} ({:.3}x numba's time).** \
                 As a share of the Rust reference's time, numba saves {}.\n",
                ms(r),
                ms(n),
                if r > n {
                    format!("{} slower", ms(r - n))
                } else {
                    format!("{} faster", ms(n - r))
                },
                r / n,
                pct(frac)
            );
            if r <= n {
                let _ = writeln!(
                    s,
                    "On this machine the sign is the opposite of the study's: Rust is not slower. \
                     The shares below are then shares of a negative gap and should be read as speedups.\n"
                );
            }
        }
        None => {
            let _ = writeln!(
                s,
                "numba was not measured in this run (see the notes at the end).\n"
            );
        }
    }
}
