//! Section 5, why `get_unchecked` did not help in the study: the bounds check against the add chain.

use super::charts::Chart;
use super::format::fmt2;
use super::inputs::Inputs;
use super::lookup::{BASE, find, ir_per_element};
use crate::asm::{FuncAsm, REFERENCE_WMA};
use std::fmt::Write as _;

pub(super) fn render(r: &Inputs, s: &mut String, _: &mut Vec<Chart>) {
    let Inputs {
        results,
        per_elem,
        counts,
        set,
        ..
    } = *r;
    let rw = find(set, BASE, REFERENCE_WMA);
    let (floor, refns, unns) = super::elements::floor_ref_unchecked(per_elem);
    let _ = writeln!(s, "## 5. Why `get_unchecked` did not help in the study\n");
    let rl = rw.and_then(FuncAsm::main_loop);
    let ul =
        find(set, BASE, "hullsweep_profiling::kernels::wma_unchecked").and_then(FuncAsm::main_loop);
    let bounds = results
        .iter()
        .find(|(k, _, _)| *k == "bounds")
        .map(|(_, _, o)| o);
    if let (Some(r), Some(u)) = (rl, ul) {
        let _ = writeln!(
            s,
            "- **The bounds check is not hoisted.** In the reference loop the check is {} the inner loop \
             (a `cmp`/`jae` to the panic block per element): LLVM does not prove `i + 1 - w + k < len` \
             from the loop bounds, because in a release build that index is wrapping `usize` arithmetic \
             (no no-wrap flags for SCEV to reason with). \
             And because the loop has an early exit to the panic, LLVM does not unroll it \
             ({} element per iteration, {} instructions per element).",
            if r.has_bounds_panic {
                "inside"
            } else {
                "not inside"
            },
            r.muls,
            fmt2(r.per_element)
        );
        let _ = writeln!(
            s,
            "- **With `get_unchecked`** the check goes, LLVM unrolls ×{} and the loop drops to {} \
             instructions/element. Whether that buys time depends on what bounds the loop. Every element's \
             `addsd` waits for the previous one, so the loop can never beat one FP-add latency per element; \
             the check is a perfectly predicted integer compare-and-branch *off* that chain. If the core can \
             issue the whole loop body within one add latency, the loop is latency-bound and the check is free; \
             only if it cannot (too many instructions or taken branches per element) does removing it help.",
            u.muls,
            fmt2(u.per_element)
        );
    }
    if let Some(c) = counts {
        let r = ir_per_element(c, "kernel reference");
        let u = ir_per_element(c, "kernel unchecked");
        if let (Some(r), Some(u)) = (r, u) {
            let _ = writeln!(
                s,
                "- **Instruction counts agree**: callgrind counts {} Ir/element for the reference loop and {} \
                 for `get_unchecked` ({:.0}% fewer instructions){}.",
                fmt2(r),
                fmt2(u),
                100.0 * (1.0 - u / r),
                match &c.numba {
                    Ok(n) => format!(
                        "; numba's sweep runs {} Ir/element",
                        fmt2(*n as f64 / c.elements as f64)
                    ),
                    Err(_) => String::new(),
                }
            );
        }
    }
    if let Some(b) = bounds {
        let _ = writeln!(
            s,
            "- **Here**, the A/B (`ab bounds`) measures `get_unchecked` at {:.3}x the checked time; per element \
             the reference runs at {:.2}x the chain floor, `get_unchecked` at {:.2}x. {}",
            b.ratio(1, 0),
            refns / floor,
            unns / floor,
            if refns / floor > 1.15 {
                "So on this CPU the reference loop is *not* latency-bound: its instructions and one taken branch \
                 per element (section 3) do not fit in one add latency here, and removing the check (which lets \
                 LLVM unroll) helps."
            } else {
                "So on this CPU the reference loop already runs at the latency floor, and removing the check cannot help."
            }
        );
    }
    let _ = writeln!(
        s,
        "- **In the study** (Apple M2 Max, not measurable here) `get_unchecked` gained nothing, which is what \
         a latency-bound loop predicts: the M2's very wide core can retire the reference \
         loop's extra integer instructions within one FP-add latency, so the check was real but never on the \
         critical path; removing it changes the instruction count, not the time. This is an inference from \
         this assembly and from the measurement here, not a measurement on the M2. What the assembly shows \
         for certain: the check was *not* eliminated by the compiler, so the study's hypothesis was a fair \
         one; it failed because of what bounds the loop, not because the check was already gone.\n"
    );
}
