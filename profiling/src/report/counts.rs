//! Section 7, instruction counts: callgrind per multiply-add, and the ladder counted.

use super::charts::Chart;
use super::format::fmt2;
use super::inputs::Inputs;
use super::lookup::ir_per_element;
use std::fmt::Write as _;

pub(super) fn render(r: &Inputs, s: &mut String, charts: &mut Vec<Chart>) {
    let Inputs { counts, .. } = *r;
    let _ = writeln!(s, "## 7. Instruction counts (callgrind)\n");
    match counts {
        Some(c) => {
            let _ = writeln!(
                s,
                "Reduced sweep: {} bars, grid `{}`: {} multiply-adds. Each count is the whole process minus a \
                 run that only builds the data; numba is counted with instrumentation switched on \
                 (`callgrind_control --instr=on`) only around one warm `sweep` call, so neither the interpreter \
                 start nor the JIT compile is counted.\n",
                c.bars, c.grid, c.elements
            );
            let _ = writeln!(s, "| what | instructions | Ir/element |\n|---|---:|---:|");
            let mut labels = Vec::new();
            let mut values = Vec::new();
            let mut notes_cg: Vec<String> = Vec::new();
            for r in &c.rust {
                let pe = r.ir as f64 / c.elements as f64;
                let _ = writeln!(s, "| {} | {} | {:.2} |", r.what, r.ir, pe);
                labels.push(r.what.clone());
                values.push(pe);
            }
            match &c.numba {
                Ok(ir) => {
                    let pe = *ir as f64 / c.elements as f64;
                    let _ = writeln!(s, "| numba sweep | {ir} | {pe:.2} |");
                    notes_cg.push(format!(
                        "Under valgrind numba sees a different CPU ({}): valgrind does not emulate AVX-512, \
                         and numba compiles for the CPU it sees, so this count is for numba's code built for that \
                         target, not for the host CPU that the timings use (the Rust counts are for the baseline \
                         build, which runs unchanged under valgrind).",
                        c.numba_banner
                    ));
                    labels.push("numba sweep".into());
                    values.push(pe);
                }
                Err(e) => {
                    let _ = writeln!(s, "\nnumba was not counted: {e}\n");
                }
            }
            // The instruction ladder: the same steps as the timing ladder, counted.
            let lib = hullsweep_variants::Variant::from_name("unchecked").is_some();
            let mut steps = vec![(
                "rust reference (variant, baseline build)",
                "variant reference",
            )];
            if lib {
                steps.push(("+ get_unchecked (no bounds check)", "variant unchecked"));
                steps.push((
                    "+ target-cpu=haswell (numba's target under valgrind)",
                    "variant unchecked (target-cpu=haswell build)",
                ));
            } else {
                steps.push(("lab copy of the reference loop", "kernel reference"));
                steps.push(("+ get_unchecked (no bounds check)", "kernel unchecked"));
                steps.push((
                    "+ target-cpu=haswell (numba's target under valgrind)",
                    "kernel unchecked (target-cpu=haswell build)",
                ));
            }
            let vals: Vec<Option<f64>> = steps.iter().map(|(_, w)| ir_per_element(c, w)).collect();
            if let (Ok(n), true) = (&c.numba, vals.iter().all(Option::is_some)) {
                let n = *n as f64 / c.elements as f64;
                let v: Vec<f64> = vals.into_iter().flatten().collect();
                let total = v[0] - n;
                let _ = writeln!(
                    s,
                    "\nThe ladder, counted (Ir/element; numba counted for the same haswell target):\n\n\
                     | step | Ir/element | Ir/element removed | share of the instruction gap |\n|---|---:|---:|---:|\n\
                     | {} | {} | | |",
                    steps[0].0,
                    fmt2(v[0])
                );
                for i in 1..v.len() {
                    let _ = writeln!(
                        s,
                        "| {} | {} | {} | {:.1}% |",
                        steps[i].0,
                        fmt2(v[i]),
                        fmt2(v[i - 1] - v[i]),
                        100.0 * (v[i - 1] - v[i]) / total
                    );
                }
                let last = v[v.len() - 1];
                let _ = writeln!(
                    s,
                    "| numba sweep | {} | unexplained {} | {:.1}% |",
                    fmt2(n),
                    fmt2(last - n),
                    100.0 * (last - n) / total
                );
            }
            for n in &notes_cg {
                let _ = writeln!(s, "\n{n}");
            }
            if !c.reference_profile.is_empty() {
                let _ = writeln!(
                    s,
                    "\nWhere the reference's instructions go (callgrind_annotate, inclusive):\n\n```\n{}```\n",
                    c.reference_profile
                );
            }
            charts.push(Chart {
                file: "instructions.svg".into(),
                title: format!(
                    "callgrind instructions per multiply-add ({} bars, grid {})",
                    c.bars, c.grid
                ),
                xlabel: "Ir per element".into(),
                labels,
                values,
                reference: None,
            });
            let _ = writeln!(s, "\n![instructions](charts/instructions.svg)\n");
        }
        None => {
            let _ = writeln!(s, "Skipped (see the notes).\n");
        }
    }
}
