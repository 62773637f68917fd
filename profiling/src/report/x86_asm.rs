//! Section 3, the x86 hot loops from the assembly: instructions per element, unrolling, bounds checks,
//! the weight conversion and numba's vector width, with the loops quoted.

use super::charts::Chart;
use super::format::{fmt2, loop_line};
use super::inputs::Inputs;
use super::lookup::{BASE, NATIVE, find};
use crate::asm::{FuncAsm, REFERENCE_WMA};
use std::fmt::Write as _;

pub(super) fn render(r: &Inputs, s: &mut String, _: &mut Vec<Chart>) {
    let Inputs { set, .. } = *r;
    let _ = writeln!(s, "## 3. The hot loops, from the assembly\n");
    let rw = find(set, BASE, REFERENCE_WMA);
    let nw = set.numba.iter().find(|f| f.name == "numba wma");
    let _ = writeln!(
        s,
        "- Rust reference `hullsweep_kernel::wma` (x86-64 baseline): {}",
        loop_line(rw)
    );
    let _ = writeln!(
        s,
        "- Rust reference loop, target-cpu=native: {}",
        loop_line(find(set, NATIVE, REFERENCE_WMA))
    );
    let _ = writeln!(
        s,
        "- lab `wma_unchecked` (baseline): {}",
        loop_line(find(
            set,
            BASE,
            "hullsweep_profiling::kernels::wma_unchecked"
        ))
    );
    let _ = writeln!(
        s,
        "- lab `wma_unchecked`, target-cpu=native: {}",
        loop_line(find(
            set,
            NATIVE,
            "hullsweep_profiling::kernels::wma_unchecked"
        ))
    );
    let _ = writeln!(s, "- numba `wma` (host CPU): {}", loop_line(nw));
    // The weight conversion: which instruction each side uses for `(k + 1) as f64`.
    let conv = |l: Option<&crate::asm::Loop>| {
        l.map(|l| {
            let count = |p: &str| {
                l.insns
                    .iter()
                    .filter(|i| i.split_whitespace().next() == Some(p))
                    .count()
            };
            let mut parts = Vec::new();
            for p in ["cvtsi2sd", "vcvtsi2sd", "vcvtusi2sd", "punpckldq", "subpd"] {
                let c = count(p);
                if c > 0 {
                    parts.push(format!("{c}x `{p}`"));
                }
            }
            parts.join(", ")
        })
        .unwrap_or_default()
    };
    let ir_conv = set
        .numba_ir
        .iter()
        .find(|(n, _)| n == "wma")
        .map(|(_, ir)| {
            let u = ir.matches("uitofp").count();
            let si = ir.matches("sitofp").count();
            format!("{u}x `uitofp` and {si}x `sitofp` in numba's hot IR blocks")
        })
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "- The weight conversion `(k + 1)` to f64: Rust reference loop {}; numba loop {} ({ir_conv}). \
         Where both use a single signed `cvtsi2sd` per element, the conversion is the same work on both sides \
         (LLVM knows `k + 1` is non-negative), so it is not a cause of the gap by itself.",
        conv(rw.and_then(FuncAsm::main_loop)),
        conv(nw.and_then(FuncAsm::main_loop))
    );
    if let Some(n) = nw {
        let all: String = n
            .loops
            .iter()
            .flat_map(|l| l.insns.iter())
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        let zmm = all.matches("zmm").count();
        let ymm = all.matches("ymm").count();
        let vex = n
            .loops
            .iter()
            .flat_map(|l| l.insns.iter())
            .filter(|i| i.starts_with('v'))
            .count();
        let _ = writeln!(
            s,
            "- numba's hot WMA loops use {vex} VEX/EVEX-encoded instructions, {ymm} ymm and {zmm} zmm register mentions: \
             {}.",
            if zmm > 0 {
                "AVX-512 registers appear in the hot loop"
            } else {
                "no AVX-512 vectors in the hot loop (scalar `vmulsd`/`vaddsd`, AVX encoding only)"
            }
        );
        // Outside the hot loop (the NaN fill, the copy loops) numba may still use AVX-512.
        if let Ok(full) = std::fs::read_to_string(set.full_dir.join("numba/numba-wma.s")) {
            let _ = writeln!(
                s,
                "- numba's whole `wma` function mentions zmm registers {} times, ymm {} times: {}.",
                full.matches("%zmm").count(),
                full.matches("%ymm").count(),
                if full.contains("%zmm") && zmm == 0 {
                    "AVX-512 is used, but only outside the summation loop (fills and copies)"
                } else if full.contains("%zmm") {
                    "AVX-512 is used, the summation loop included"
                } else {
                    "no AVX-512 anywhere in it"
                }
            );
        }
    }
    let _ = writeln!(
        s,
        "\nThe full side-by-side listing is [asm/side-by-side--wma-reference-vs-numba.txt](asm/side-by-side--wma-reference-vs-numba.txt); \
         every trimmed loop is in [asm/](asm/) and numba's LLVM IR for the loop in \
         [asm/numba--wma-hot-blocks.ll](asm/numba--wma-hot-blocks.ll). `cargo run -p hullsweep-profiling --release -- asm` \
         regenerates them and writes the untrimmed functions under `target/prof-asm/`.\n"
    );
    let _ = writeln!(
        s,
        "Every Rust function with a hot loop (the largest innermost loop containing an FP add, or a \
         compare for the event loop), both builds, and numba:\n\n\
         | build | function | instructions per multiply (scalar: per element) | multiplies per iteration | bounds check in loop |\n|---|---|---:|---:|---|"
    );
    for f in set.rust.iter().chain(&set.numba) {
        if let Some(l) = f.main_loop().filter(|l| l.muls > 0) {
            let _ = writeln!(
                s,
                "| {} | `{}` | {} | {} | {} |",
                f.origin,
                f.name,
                fmt2(l.per_element),
                l.muls,
                if l.has_bounds_panic { "yes" } else { "no" }
            );
        }
    }
    let _ = writeln!(
        s,
        "\n(Packed `mulpd` counts once however many lanes it has; for the event loop, `backtest`, only the \
         presence of the bounds check is meaningful.)\n"
    );
    if let (Some(r), Some(n)) = (
        rw.and_then(FuncAsm::main_loop),
        nw.and_then(FuncAsm::main_loop),
    ) {
        let _ = writeln!(
            s,
            "Rust reference inner loop:\n\n```asm\n{}\n```\n",
            r.insns.join("\n")
        );
        let _ = writeln!(
            s,
            "numba inner loop (main unrolled body):\n\n```asm\n{}\n```\n",
            n.insns.join("\n")
        );
    }
}
