//! Finding one kernel's evidence among what the report measured: its disassembly by build and
//! name, its callgrind instructions per element, and the kernels each hypothesis involves.

use crate::asm::{AsmSet, FuncAsm};
use crate::callgrind::Counts;

/// The origins `asm` gives this binary's two builds.
pub(super) const BASE: &str = "rust x86-64 baseline";
pub(super) const NATIVE: &str = "rust target-cpu=native";

/// Kernels each hypothesis involves, for its asm and callgrind evidence.
pub(super) fn kernels_of(key: &str) -> &'static [&'static str] {
    match key {
        "bounds" => &["reference", "unchecked"],
        "weight" => &[
            "reference",
            "signed_weight",
            "float_counter",
            "weight_table",
        ],
        "alloc" | "nanfill" => &["reference"],
        "shape" => &["reference", "subslice", "subslice_table"],
        "unroll" => &["reference", "float_counter", "unroll4"],
        "numba-shape" => &["reference", "numba_shape"],
        "interchange" => &["reference", "interchange"],
        _ => &[],
    }
}

pub(super) fn find<'a>(set: &'a AsmSet, origin: &str, name: &str) -> Option<&'a FuncAsm> {
    set.rust
        .iter()
        .find(|f| f.origin == origin && f.name == name)
}

pub(super) fn ir_per_element(c: &Counts, what: &str) -> Option<f64> {
    c.rust
        .iter()
        .find(|r| r.what == what)
        .map(|r| r.ir as f64 / c.elements as f64)
}
