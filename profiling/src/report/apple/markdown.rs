//! Section 5b's Markdown: the side-by-side table of the Apple-core hot loops, the model's
//! latencies, the predicted Rust/numba ratio beside the study's, and the listings.

use super::model::{AppleCodegen, AppleLoop, STUDY_RATIO, TRIPLE};
use crate::report::format::{fmt2, pct};
use crate::timing::Outcome;
use std::fmt::Write as _;
use std::path::Path;

/// The resource names llvm-mca printed say which scheduling model it used.
fn model_name(a: &AppleCodegen, out: &Path) -> String {
    let listing = a
        .loops
        .first()
        .and_then(|l| std::fs::read_to_string(out.join(&l.file)).ok())
        .unwrap_or_default();
    if listing.contains("CyUnit") {
        "LLVM's Cyclone scheduling model (`CycloneModel`, written for the Apple A7; LLVM uses it for every \
         Apple core, the M2 included: its resources are named `CyUnit*`)"
            .into()
    } else {
        "the model LLVM has for this CPU (see the listings for its resources)".into()
    }
}

/// The section's Markdown; `results` are the run's A/B outcomes (empty when only this section is
/// regenerated, see [`splice`](super::splice)).
pub(super) fn section(
    a: &AppleCodegen,
    results: &[(&str, &str, Outcome)],
    out: &Path,
    s: &mut String,
) {
    let _ = writeln!(
        s,
        "## 5b. The study's CPU (Apple M2): a static prediction from Apple-core code generation\n\n\
         **This section is a static prediction, not a measurement**: no Apple core was available, so \
         nothing in it was timed. The x86 sections above remain the measured evidence. It compiles \
         both sides' WMA for `{TRIPLE}` with `target-cpu={}` and asks a public CPU model what the hot \
         loops cost.\n",
        a.cpu
    );
    let _ = writeln!(
        s,
        "- Rust: the kernel source as it stands (`kernel/src/reference.rs`, and the lab's `get_unchecked` loop \
         from `profiling/src/kernels.rs`), built by {} with `-C opt-level=3 -C target-cpu={}`.\n\
         - numba: numba's own LLVM IR for `wma` (the module numba hands to its optimiser), run through \
         numba's two module pipelines with an aarch64 `{}` target machine by llvmlite ({}), as numba would \
         compile it on that CPU (`profiling/py/numba_aarch64.py`).\n\
         - Throughput: {}, `-mcpu={}`; its model is {}.\n",
        a.rustc.as_deref().unwrap_or("(not built)"),
        a.cpu,
        a.cpu,
        a.numba.as_deref().unwrap_or("not built"),
        a.mca
            .as_ref()
            .map(|(t, v)| format!("`{t}` ({v})"))
            .unwrap_or_else(|| "no llvm-mca".into()),
        a.cpu,
        model_name(a, out)
    );
    if a.loops.is_empty() {
        let _ = writeln!(s, "Not generated in this run (see the notes below).\n");
    } else {
        s.push_str("| on the Apple core |");
        for l in &a.loops {
            let _ = write!(s, " {} |", l.who);
        }
        let _ = write!(s, "\n|---|");
        for _ in &a.loops {
            let _ = write!(s, "---|");
        }
        s.push('\n');
        type Row = (&'static str, fn(&AppleLoop) -> String);
        let rows: [Row; 10] = [
            ("instructions per element (hot loop)", |l| {
                fmt2(l.insns.len() as f64 / l.elements as f64)
            }),
            ("unroll: elements per iteration", |l| l.elements.to_string()),
            ("bounds check inside the hot loop", |l| {
                yes_no(l.check_in_loop)
            }),
            ("bounds check elsewhere in the function", |l| {
                if l.check_in_function && !l.check_in_loop {
                    "yes (remainder/setup, outside the hot loop)".into()
                } else {
                    yes_no(l.check_in_function)
                }
            }),
            ("weight `(k + 1)` to f64", |l| l.conversion.clone()),
            ("serial FP adds per iteration (one accumulator)", |l| {
                l.chain.to_string()
            }),
            ("llvm-mca resource bound (cycles/iteration)", |l| {
                l.mca
                    .as_ref()
                    .map(|m| format!("{:.2}", m.rthroughput))
                    .unwrap_or_else(|| "—".into())
            }),
            ("llvm-mca simulated (cycles/iteration)", |l| {
                l.mca
                    .as_ref()
                    .map(|m| format!("{:.2}", m.cycles))
                    .unwrap_or_else(|| "—".into())
            }),
            ("predicted cycles per element", |l| {
                l.cycles_per_element()
                    .map(|c| format!("{c:.2}"))
                    .unwrap_or_else(|| "—".into())
            }),
            ("FP-add chain is the critical path", |l| {
                match l.chain_bound() {
                    Some(true) => "**yes**".into(),
                    Some(false) => "no".into(),
                    None => "—".into(),
                }
            }),
        ];
        for (name, f) in rows {
            let _ = write!(s, "| {name} |");
            for l in &a.loops {
                let _ = write!(s, " {} |", f(l));
            }
            s.push('\n');
        }
        let m = a.loops.iter().find_map(|l| l.mca.as_ref());
        if let Some(m) = m {
            let lat = |x: Option<u32>| {
                x.map(|c| format!("{c} cycles"))
                    .unwrap_or_else(|| "?".into())
            };
            let _ = writeln!(
                s,
                "\nLatencies the model assumes: FADD {}, FMUL {}; the loop-carried chain is the running sum `s`, \
                 one FADD per element, so no loop that keeps one sum can beat one FADD latency per element \
                 ({} cycles per element in this model). Public microbenchmarks of Apple's big cores put FADD \
                 at 3 cycles rather than the model's {}; that scales every chain-bound loop alike and leaves \
                 the ratio below unchanged.\n",
                lat(m.fadd),
                lat(m.fmul),
                m.fadd.map(|c| c.to_string()).unwrap_or_else(|| "?".into()),
                lat(m.fadd)
            );
        }
        prediction(a, results, s);
        for l in &a.loops {
            let _ = writeln!(
                s,
                "{} ([{}]({})):\n\n```asm\n{}\n```\n",
                l.who,
                l.file,
                l.file,
                l.insns.join("\n")
            );
        }
    }
    for n in &a.notes {
        let _ = writeln!(s, "- note: {n}");
    }
    if !a.notes.is_empty() {
        s.push('\n');
    }
}

fn yes_no(b: bool) -> String {
    if b { "**yes**".into() } else { "no".into() }
}

/// The predicted Rust/numba ratio beside the study's, and what is left to explain.
fn prediction(a: &AppleCodegen, results: &[(&str, &str, Outcome)], s: &mut String) {
    let by = |w: &str| a.loops.iter().find(|l| l.who.contains(w));
    let (Some(r), Some(u), Some(n)) = (by("reference"), by("get_unchecked"), by("numba")) else {
        return;
    };
    let (Some(rc), Some(uc), Some(nc)) = (
        r.cycles_per_element(),
        u.cycles_per_element(),
        n.cycles_per_element(),
    ) else {
        return;
    };
    let ratio = rc / nc;
    let explained = (ratio - 1.0) / (STUDY_RATIO - 1.0);
    let same_body = r.insns.len().abs_diff(n.insns.len()) <= 2
        && r.elements == n.elements
        && r.chain == n.chain;
    let _ = writeln!(
        s,
        "**Prediction.** On the WMA loop, which is where the sweep spends its time, the model predicts \
         Rust reference / numba = **{ratio:.3}** on the {} (`get_unchecked` / numba = {:.3}). The study \
         measured **{STUDY_RATIO:.2}** on its M2 Max: the prediction explains **{:.0}%** of that 13%.{}\n",
        a.cpu,
        uc / nc,
        100.0 * explained,
        if same_body {
            " Built for the Apple core, the reference's unrolled body is the same loop as numba's: LLVM \
             computes per output how far the window can run without an out-of-range index and runs that \
             part with no check (the check stays in the scalar loop that finishes each window), converts \
             the weights as vectors, multiplies in pairs, and keeps one serial FADD per element, in the \
             reference's order, on both sides. So `get_unchecked` had nothing to remove from the hot loop \
             there. This corrects section 5's last bullet for the Apple core: its premise, that the check \
             stays in the loop, comes from the x86-64 assembly and does not carry over to this target with \
             today's LLVM (section 5's other reason, that a check off the FADD chain costs a wide core \
             nothing, would make the same prediction)."
        } else {
            ""
        }
    );
    if explained.abs() < 0.5 {
        let alloc = results
            .iter()
            .find(|(k, _, _)| *k == "alloc")
            .map(|(_, _, o)| {
                format!(
                    "On x86 in this run, reusing the buffers saved {} of the reference's time \
                     (section 6, `alloc`). ",
                    pct(1.0 - o.median(1) / o.median(0))
                )
            })
            .unwrap_or_else(|| {
                "On x86, section 6 (`alloc`) measures what reusing the buffers saves. ".into()
            });
        let _ = writeln!(
            s,
            "What the model cannot explain, and how plausible each remaining candidate is:\n\n\
             - **The study's toolchain.** This is today's rustc; an older LLVM may have left the bounds check in \
             the loop, as LLVM still does on x86-64 (section 3). Plausible as a cause of different code, but on \
             a chain-bound core a per-element check is integer work off the FADD chain, so even that loop would \
             be predicted at the same cycles per element unless the M2 could not issue it within one FADD \
             latency (about 10 instructions and one taken branch per 3-cycle FADD on an 8-wide core: it can). Not checkable here \
             without the study's exact rustc.\n\
             - **The rest of the sweep.** Allocation and NaN fill of a fresh array per pass, the `2*a-b` \
             passes and the event loop are not in this prediction. {alloc}On macOS the allocator returning \
             large blocks to the system (page faults per pass, section 6b) could cost more. Plausible, \
             unmeasured.\n\
             - **Per-output overhead outside the hot loop.** Rust recomputes the safe trip count and runs a \
             checked remainder per output; numba runs an unchecked remainder. A handful of instructions per \
             output against a window of tens to hundreds of elements: too small for 13%.\n\
             - **The measurement.** Scheduling on efficiency vs performance cores, frequency, a cold JIT or \
             process start inside the timed region: outside any code model. Plausible for a single-run \
             comparison; the study's harness is not available to check.\n\
             - **The model.** llvm-mca's Apple model is the A7's; it does not know the M2's real widths or \
             latencies. It would have to misjudge the two nearly identical loops differently to produce a 13% \
             gap, which is implausible.\n"
        );
    }
}
