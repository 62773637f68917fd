//! Section 2, the ladder: one change per step from the Rust reference to numba, with shares of the gap.

use super::charts::Chart;
use super::format::{ms, table};
use super::inputs::Inputs;
use std::fmt::Write as _;

pub(super) fn render(r: &Inputs, s: &mut String, charts: &mut Vec<Chart>) {
    let Inputs { plan, ladder, .. } = *r;
    let _ = writeln!(s, "## 2. Attribution: the ladder\n");
    let _ = writeln!(
        s,
        "Reduced sweep: {} bars, grid `{}`. Each step adds one change to the previous one; numba runs in the same interleaved rounds, \
         so the steps telescope exactly: their shares plus the unexplained rest add up to 100% of \
         (first step − numba). Rust steps run in `serve` worker processes of the baseline and the \
         native builds (same data, same timing code as the numba worker).\n",
        plan.bars, plan.hyp_grid
    );
    s.push_str(&table(ladder));
    let last = ladder.labels.len() - 1;
    let has_numba = ladder.labels[last] == "numba sweep";
    if has_numba {
        let t0 = ladder.median(0);
        let tn = ladder.median(last);
        let total = t0 - tn;
        let c0 = ladder.cpu_median(0);
        let ctotal = c0 - ladder.cpu_median(last);
        let _ = writeln!(
            s,
            "\n| step | wall time saved | share of the gap (wall) | share of the gap (CPU time) |\n|---|---:|---:|---:|"
        );
        let mut explained = 0.0;
        for i in 1..last {
            let d = ladder.median(i - 1) - ladder.median(i);
            let cd = ladder.cpu_median(i - 1) - ladder.cpu_median(i);
            explained += d;
            let _ = writeln!(
                s,
                "| {} | {} | {:.1}% | {:.1}% |",
                ladder.labels[i],
                ms(d),
                100.0 * d / total,
                100.0 * cd / ctotal
            );
        }
        let rest = ladder.median(last - 1) - tn;
        let crest = ladder.cpu_median(last - 1) - ladder.cpu_median(last);
        let _ = writeln!(
            s,
            "| unexplained (last Rust step − numba) | {} | {:.1}% | {:.1}% |",
            ms(rest),
            100.0 * rest / total,
            100.0 * crest / ctotal
        );
        let _ = writeln!(
            s,
            "\nGap in this run: {} ({:.3}x). Explained by the steps: **{:.1}%**; unexplained: **{:.1}%**{}.\n",
            ms(total),
            t0 / tn,
            100.0 * explained / total,
            100.0 * rest / total,
            if rest < 0.0 {
                " (negative: the last Rust step is faster than numba)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            s,
            "Wall-clock and CPU-time shares differ where other load preempted a run; CPU time (the process's \
             own CPU seconds over the same interval) excludes that and is the steadier of the two on this \
             shared machine. By CPU time: gap {:.3}x, explained {:.1}%, unexplained {:.1}%.\n",
            c0 / ladder.cpu_median(last),
            100.0 * (ctotal - crest) / ctotal,
            100.0 * crest / ctotal
        );
        if ladder.labels.iter().any(|l| l.starts_with("lab copy")) {
            let _ = writeln!(
                s,
                "The \"lab copy\" step changes no instruction of the inner loop (section 3) and almost no \
                 instruction count (section 7): its share is the measurement's own floor (noise, code placement), \
                 not a cause.\n"
            );
        }
        charts.push(Chart {
            file: "ladder.svg".into(),
            title: format!(
                "Ladder: {} bars x grid {} (median of {} interleaved rounds)",
                plan.bars, plan.hyp_grid, plan.rounds
            ),
            xlabel: "seconds per sweep".into(),
            labels: ladder.labels.clone(),
            values: (0..ladder.labels.len()).map(|i| ladder.median(i)).collect(),
            reference: Some(tn),
        });
        let _ = writeln!(s, "![ladder](charts/ladder.svg)\n");
    }
}
