//! The summary at the top of `gap.md`: the headline of every measured section, in five bullets.

use super::format::fmt2;
use super::lookup::{find, ir_per_element};
use crate::asm::{AsmSet, FuncAsm, REFERENCE_WMA};
use crate::callgrind::Counts;
use crate::timing::Outcome;
use std::fmt::Write as _;

/// Where the summary goes: it is written last, from the same measurements as the sections.
pub(super) const SUMMARY_MARK: &str = "<!-- summary -->";

/// The headline, computed from the same measurements as the sections below.
pub(super) fn summary(
    gap: Option<&Outcome>,
    ladder: &Outcome,
    per_elem: &[(String, f64)],
    counts: Option<&Counts>,
    set: &AsmSet,
) -> String {
    let mut s = String::from("## Summary\n\n");
    if let Some(g) = gap {
        let _ = writeln!(
            s,
            "- **Gap (full sweep)**: Rust reference / numba = {:.3} by wall-clock median, {:.3} by CPU-time median \
             ({}: Rust is {} here).",
            g.ratio(0, 1),
            g.cpu_median(0) / g.cpu_median(1),
            if g.median(0) > g.median(1) {
                "positive"
            } else {
                "negative"
            },
            if g.median(0) > g.median(1) {
                "slower"
            } else {
                "faster"
            }
        );
    }
    let last = ladder.labels.len() - 1;
    if ladder.labels[last] == "numba sweep" && last >= 1 {
        let ct = ladder.cpu_median(0) - ladder.cpu_median(last);
        let wt = ladder.median(0) - ladder.median(last);
        let mut parts = Vec::new();
        for i in 1..last {
            parts.push(format!(
                "{} {:.0}% (wall {:.0}%)",
                ladder.labels[i].trim_start_matches("+ "),
                100.0 * (ladder.cpu_median(i - 1) - ladder.cpu_median(i)) / ct,
                100.0 * (ladder.median(i - 1) - ladder.median(i)) / wt
            ));
        }
        let _ = writeln!(
            s,
            "- **Ladder (reduced sweep, numba in the same rounds)**, shares of the gap by CPU time: {}; \
             unexplained {:.0}% (wall {:.0}%). The last Rust step runs at {:.3}x numba's CPU time ({}).",
            parts.join(", "),
            100.0 * (ladder.cpu_median(last - 1) - ladder.cpu_median(last)) / ct,
            100.0 * (ladder.median(last - 1) - ladder.median(last)) / wt,
            ladder.cpu_median(last - 1) / ladder.cpu_median(last),
            if ladder.cpu_median(last - 1) < ladder.cpu_median(last) {
                "faster than numba: the listed changes more than close the gap"
            } else {
                "still slower than numba: the rest is unexplained"
            }
        );
    }
    let rl = find(set, "rust x86-64 baseline", REFERENCE_WMA).and_then(FuncAsm::main_loop);
    let nl = set
        .numba
        .iter()
        .find(|f| f.name == "numba wma")
        .and_then(FuncAsm::main_loop);
    if let (Some(r), Some(n)) = (rl, nl) {
        let _ = writeln!(
            s,
            "- **Assembly**: the reference WMA loop is {} instructions/element, {}, bounds check inside: {}; \
             numba's is {} instructions/element, unrolled ×{}, no bounds check{}.",
            fmt2(r.per_element),
            if r.muls > 1 { format!("unrolled ×{}", r.muls) } else { "not unrolled".to_string() },
            if r.has_bounds_panic { "yes" } else { "no" },
            fmt2(n.per_element),
            n.muls,
            find(set, "rust target-cpu=native", "hullsweep_profiling::kernels::wma_unchecked")
                .and_then(FuncAsm::main_loop)
                .map(|u| format!(
                    "; Rust with `get_unchecked` and target-cpu=native emits {} instructions/element, unrolled ×{}",
                    fmt2(u.per_element),
                    u.muls
                ))
                .unwrap_or_default()
        );
    }
    if let Some(c) = counts {
        let r = ir_per_element(c, "variant reference");
        let u = ir_per_element(c, "variant unchecked")
            .or_else(|| ir_per_element(c, "kernel unchecked"));
        let uh = ir_per_element(c, "variant unchecked (target-cpu=haswell build)")
            .or_else(|| ir_per_element(c, "kernel unchecked (target-cpu=haswell build)"));
        if let (Some(r), Ok(n)) = (r, &c.numba) {
            let _ = writeln!(
                s,
                "- **Instructions (callgrind)**: reference {} Ir/element, `get_unchecked` {}, `get_unchecked` built \
                 for numba's valgrind target (haswell) {}, numba {}.",
                fmt2(r),
                u.map(fmt2).unwrap_or_else(|| "—".into()),
                uh.map(fmt2).unwrap_or_else(|| "—".into()),
                fmt2(*n as f64 / c.elements as f64)
            );
        }
    }
    let get = |k: &str| per_elem.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    if let (Some(r), Some(u)) = (get("reference"), get("unchecked")) {
        let _ = writeln!(
            s,
            "- **Why `get_unchecked` did not help in the study**: the check is not hoisted, but it is integer \
             work off the FP-add chain; it only costs time where the core cannot hide it under that chain. \
             Here one pass costs {r:.3} ns/element checked vs {u:.3} unchecked (section 5).",
        );
    }
    s
}
