//! The report's quick mode end to end: small data, seconds; numba and valgrind parts are skipped
//! with a note when the venv or valgrind is missing, so this runs anywhere the workspace builds.

use std::process::Command;

#[test]
fn quick_report_writes_gap_md() {
    let out = std::env::temp_dir().join(format!("hullsweep-quick-report-{}", std::process::id()));
    let st = Command::new(env!("CARGO_BIN_EXE_profiling"))
        .args(["report", "--quick", "--out"])
        .arg(&out)
        .status()
        .expect("run the profiling binary");
    assert!(st.success(), "report --quick failed: {st}");
    let md = std::fs::read_to_string(out.join("gap.md")).expect("gap.md written");
    for needle in [
        "## Machine and toolchain",
        "rustc",
        "LLVM",
        "## 1. The gap",
        "## 2. Attribution: the ladder",
        "## 3. The hot loops",
        "## 5. Why `get_unchecked` did not help",
        "## 5b. The study's CPU (Apple M2): a static prediction",
        "## 7. Instruction counts",
        "### `bounds`",
    ] {
        assert!(md.contains(needle), "gap.md lacks {needle:?}");
    }
    // The reference's WMA loop must have been found and trimmed from this binary's disassembly.
    assert!(
        md.contains("instructions/element"),
        "no hot-loop statistics in gap.md"
    );
    let _ = std::fs::remove_dir_all(&out);
}
