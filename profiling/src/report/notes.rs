//! Sections 9 and 10: how to reproduce each part, and the run's notes, limits and what stays unexplained.

use super::charts::Chart;
use super::inputs::Inputs;
use std::fmt::Write as _;

pub(super) fn render(r: &Inputs, s: &mut String, _: &mut Vec<Chart>) {
    let Inputs {
        plan,
        counts,
        faults,
        notes,
        ..
    } = *r;
    let _ = writeln!(
        s,
        "## 9. Reproduce\n\n\
         - everything: `scripts/gap-report` (= `cargo run -p hullsweep-profiling --release -- report`), \
         `--quick` for the smoke test that `cargo test -p hullsweep-profiling` runs\n\
         - one hypothesis: `cargo run -p hullsweep-profiling --release -- ab KEY --bars {} --grid {} --rounds {}` \
         with KEY one of {}\n\
         - assembly: `cargo run -p hullsweep-profiling --release -- asm --out reports/asm` (build \
         `target/prof-native` first for the native column: `ab native` does)\n\
         - instruction counts: `cargo run -p hullsweep-profiling --release -- count --bars {} --grid {}`\n\
         - ns per element: `cargo run -p hullsweep-profiling --release -- elements --bars {} --window {}`\n\
         - flamegraph of any variant or lab kernel: `scripts/flamegraph --variant NAME|--kernel NAME --bars N --grid LO:HI:K --out FILE.svg`\n\
         - the Apple-core section 5b alone (static, times nothing) into an existing report: `scripts/gap-report --only apple`\n",
        plan.bars,
        plan.hyp_grid,
        plan.rounds,
        crate::hypotheses::keys(),
        counts.map(|c| c.bars).unwrap_or(plan.cg_bars),
        plan.cg_grid,
        plan.elem_bars,
        plan.elem_window
    );
    let _ = writeln!(s, "## 10. Notes, limits, what was not explained\n");
    for n in notes {
        let _ = writeln!(s, "- {n}");
    }
    let fault = |p: &str| {
        faults
            .iter()
            .find(|(l, _)| l.starts_with(p))
            .map(|(_, n)| *n)
    };
    if let (Some(r), Some(n)) = (fault("rust reference"), fault("numba")) {
        let _ = writeln!(
            s,
            "- Allocation is {} numba advantage: numba's sweep takes {n} minor page faults, the Rust reference {r} \
             (section 6b). Both allocate and NaN-fill a fresh array per pass; reusing buffers (`alloc`) is a \
             Rust-side speedup beyond numba, not part of the gap.",
            if n >= r { "not a" } else { "possibly a" }
        );
    }
    let _ = writeln!(
        s,
        "- Shares from the separate A/B runs are measured on the reduced sweep and relative to their own \
         baseline arm; they are not additive (several toggles remove the same cost: the bounds check, the \
         unrolling it blocks, the conversion). The ladder in section 2 is the additive account.\n\
         - `interchange` is bit-identical but is not a numba behaviour: it shows what the same arithmetic \
         costs when the serial chain is spread across outputs, not part of the gap."
    );
}
