//! The number and table formats every section of `gap.md` shares, so that one quantity reads
//! the same wherever it appears.

use crate::asm::FuncAsm;
use crate::timing::Outcome;
use std::fmt::Write as _;

pub(super) fn ms(s: f64) -> String {
    format!("{:.1} ms", s * 1e3)
}

pub(super) fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// Renders an outcome as a markdown table, ratios against arm 0, wall clock and process CPU time.
pub(super) fn table(o: &Outcome) -> String {
    let mut s = String::from(
        "| arm | wall median | wall min..max | wall ratio | CPU median | CPU ratio |\n|---|---:|---:|---:|---:|---:|\n",
    );
    for i in 0..o.labels.len() {
        let (lo, hi) = o.range(i);
        let _ = writeln!(
            s,
            "| {} | {} | {}..{} | {:.3} | {} | {:.3} |",
            o.labels[i],
            ms(o.median(i)),
            ms(lo),
            ms(hi),
            o.ratio(i, 0),
            ms(o.cpu_median(i)),
            o.cpu_median(i) / o.cpu_median(0)
        );
    }
    s
}

pub(super) fn loop_line(f: Option<&FuncAsm>) -> String {
    match f.and_then(FuncAsm::main_loop) {
        Some(l) => format!(
            "{} instructions/element, {} multiply(ies) per iteration, bounds-check branch inside the loop: {}",
            fmt2(l.per_element),
            l.muls,
            if l.has_bounds_panic { "**yes**" } else { "no" }
        ),
        None => "not found in the disassembly".into(),
    }
}

pub(super) fn fmt2(x: f64) -> String {
    format!("{x:.2}")
}
