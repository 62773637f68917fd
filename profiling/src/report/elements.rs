//! Section 4, the cost per window element of one WMA pass for every lab kernel, and the FP-add chain floor.

use super::charts::Chart;
use super::format::fmt2;
use super::inputs::Inputs;
use super::lookup::{BASE, find};
use crate::asm::FuncAsm;
use std::fmt::Write as _;

pub(super) fn render(r: &Inputs, s: &mut String, charts: &mut Vec<Chart>) {
    let Inputs {
        plan,
        per_elem,
        set,
        ..
    } = *r;
    let _ = writeln!(
        s,
        "## 4. Cost per window element\n\nOne WMA pass, {} bars, window {}, kernels interleaved; \
         ns per multiply-add. Every kernel keeps one serial `addsd` chain per output except `interchange`.\n",
        plan.elem_bars, plan.elem_window
    );
    let _ = writeln!(
        s,
        "| kernel | ns/element | instructions/element (asm) | bounds check in loop |\n|---|---:|---:|---|"
    );
    for (k, ns) in per_elem {
        let f = find(set, BASE, &format!("hullsweep_profiling::kernels::wma_{k}"))
            .and_then(FuncAsm::main_loop);
        let _ = writeln!(
            s,
            "| {k} | {ns:.3} | {} | {} |",
            f.map(|l| fmt2(l.per_element)).unwrap_or_else(|| "?".into()),
            f.map(|l| if l.has_bounds_panic { "yes" } else { "no" })
                .unwrap_or("?")
        );
    }
    let (floor, refns, unns) = floor_ref_unchecked(per_elem);
    let _ = writeln!(
        s,
        "\nThe fastest serial-chain loop costs {floor:.3} ns/element: no loop that keeps one running sum \
         can beat one FP-add latency per element (each `addsd` waits for the previous), so this is the \
         best estimate of that floor measurable here without performance counters. The reference loop \
         costs {refns:.3} ns/element ({:.2}x the floor), `get_unchecked` {unns:.3} ({:.2}x).\n",
        refns / floor,
        unns / floor
    );
    charts.push(Chart {
        file: "ns-per-element.svg".into(),
        title: format!(
            "ns per multiply-add, one WMA pass ({} bars, w={})",
            plan.elem_bars, plan.elem_window
        ),
        xlabel: "ns per element".into(),
        labels: per_elem.iter().map(|(k, _)| k.clone()).collect(),
        values: per_elem.iter().map(|(_, v)| *v).collect(),
        reference: Some(floor),
    });
    let _ = writeln!(s, "![ns per element](charts/ns-per-element.svg)\n");
}

/// The fastest serial-chain kernel's ns/element (the FP-add latency floor), the reference's and
/// `get_unchecked`'s (NaN when not measured).
pub(super) fn floor_ref_unchecked(per_elem: &[(String, f64)]) -> (f64, f64, f64) {
    let floor = per_elem
        .iter()
        .filter(|(k, _)| k != "interchange")
        .map(|(_, v)| *v)
        .fold(f64::INFINITY, f64::min);
    let refns = per_elem
        .iter()
        .find(|(k, _)| k == "reference")
        .map(|(_, v)| *v)
        .unwrap_or(f64::NAN);
    let unns = per_elem
        .iter()
        .find(|(k, _)| k == "unchecked")
        .map(|(_, v)| *v)
        .unwrap_or(f64::NAN);
    (floor, refns, unns)
}
