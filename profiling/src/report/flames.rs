//! Section 8, the flamegraphs: links to the SVGs of the frame-pointer build.

use super::charts::Chart;
use super::inputs::Inputs;
use std::fmt::Write as _;

pub(super) fn render(r: &Inputs, s: &mut String, _: &mut Vec<Chart>) {
    let Inputs {
        plan, flames, out, ..
    } = *r;
    let _ = writeln!(s, "## 8. Flamegraphs\n");
    if flames.is_empty() {
        let _ = writeln!(
            s,
            "Not generated in this mode. `scripts/flamegraph --variant reference --bars 150000 --grid 6:200:80 --out reports/flame-reference.svg` makes one.\n"
        );
    }
    for (what, f) in flames {
        let rel = f.strip_prefix(out).unwrap_or(f);
        let _ = writeln!(
            s,
            "- [{what}]({}) — pprof at {} Hz, frame-pointer build, {} bars, grid `{}`",
            rel.display(),
            crate::FLAME_HZ,
            plan.bars,
            plan.grid
        );
    }
    if !flames.is_empty() {
        let _ = writeln!(
            s,
            "\nSIGPROF sampling runs on the kernel's timer tick, so the effective rate can be lower than \
             requested. LLVM inlines `wma` into `hma`/`hma3` in the kernel crate, so the WMA time appears under \
             those frames; the lab kernels are `#[inline(never)]` and appear by name."
        );
    }
    s.push('\n');
}
