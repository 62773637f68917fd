//! The lab's breakdown section in a tiny configuration (the built-in series, 2 combos, 1 round,
//! short peaks, an 8 MiB bandwidth buffer), so its shape cannot rot silently: every phase is
//! there with a positive time, the shares and the remainder sum to 100%, every variant has a
//! roofline row, the roofline chart is written, and `--breakdown` replaces its section in place.

use assert_cmd::Command;
use hullsweep_kernel::GridSpec;
use hullsweep_lab::{breakdown, report};
use hullsweep_variants::Variant;
use std::path::PathBuf;

const GRID: GridSpec = GridSpec {
    lo: 6,
    hi: 12,
    k: 2,
};

fn tiny() -> breakdown::Config {
    breakdown::Config {
        exe: PathBuf::from(env!("CARGO_BIN_EXE_hullsweep")),
        grid: GRID,
        rounds: 1,
        roofline_rounds: 1,
        dram_bytes: Some(8 << 20),
        peak_secs: 0.002,
    }
}

/// The cells of the first table row of `section` whose first cell passes `first`.
fn row_where(section: &str, first: impl Fn(&str) -> bool) -> Vec<&str> {
    section
        .lines()
        .filter(|l| l.starts_with("| "))
        .map(|l| -> Vec<&str> { l.trim_matches('|').split(" | ").map(str::trim).collect() })
        .find(|cells| first(cells[0]))
        .unwrap_or_else(|| panic!("no such row in:\n{section}"))
}

/// The cells of the first table row of `section` whose first cell starts with `first`.
fn row<'a>(section: &'a str, first: &str) -> Vec<&'a str> {
    row_where(section, |c| c.starts_with(first))
}

fn number(cell: &str) -> f64 {
    cell.trim_end_matches('%')
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {cell:?}"))
}

#[test]
fn the_breakdown_has_every_phase_and_sums_to_the_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lab.md");
    let section = report::breakdown(&tiny(), Some(&out), None, |_| {}).unwrap();
    assert!(section.starts_with(breakdown::BEGIN), "{section}");
    assert!(section.trim_end().ends_with(breakdown::END), "{section}");
    let phases = [
        "process start",
        "series and grid",
        "input checks",
        "planning",
        "preparation",
        "rolling kernel",
        "fallback",
        "event loop",
        "workers",
        "output",
    ];
    let mut share = 0.0;
    for p in phases {
        let cells = row(&section, p);
        let (ms, pct) = (number(cells[1]), number(cells[2]));
        assert!(ms >= 0.0 && pct >= 0.0, "{p}: {cells:?}");
        share += pct;
    }
    for p in ["process start", "series and grid", "rolling kernel"] {
        assert!(number(row(&section, p)[1]) > 0.0, "{p} took no time");
    }
    let remainder = row(&section, "remainder");
    share += number(remainder[2]);
    let whole = row(&section, "**whole process");
    assert!(number(whole[1]) > 0.0);
    assert_eq!(whole[2], "100.0%");
    // 11 shares, each rounded to 0.1%.
    assert!((share - 100.0).abs() <= 0.6, "shares sum to {share}%");
    assert!(section.contains("Fallback: 0 of"), "{section}");
    for v in Variant::ALL {
        let cells = row_where(&section, |c| c == v.name());
        for c in &cells[1..] {
            assert!(number(c) > 0.0, "{}: {cells:?}", v.name());
        }
    }
    assert!(section.contains("**35 flops of indicator arithmetic**"));
    assert!(section.contains("Where the gap between `fastest` and the flop ceiling goes"));
    assert!(section.contains("Date: ") && section.contains("Load average"));
    let svg = std::fs::read_to_string(dir.path().join(breakdown::SVG)).unwrap();
    assert!(svg.contains("<svg") && svg.contains("rolling-rayon") && svg.contains("GFlop/s"));
}

#[test]
fn lab_breakdown_replaces_its_section_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lab.md");
    let old = format!(
        "# Lab\n\n{}\nold\n{}\n\n## After\n",
        breakdown::BEGIN,
        breakdown::END
    );
    std::fs::write(&out, &old).unwrap();
    let run = Command::cargo_bin("hullsweep")
        .unwrap()
        .args(["lab", "--breakdown", "--rounds", "1", "--grid", "6:12:2"])
        .args(["--bandwidth-mib", "8", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("# Lab\n\n<!-- breakdown"), "{text}");
    assert!(
        text.ends_with("<!-- /breakdown -->\n\n## After\n"),
        "{text}"
    );
    assert!(!text.contains("\nold\n") && text.contains("| **whole process"));
    assert!(dir.path().join(breakdown::SVG).is_file());
    let refused = Command::cargo_bin("hullsweep")
        .unwrap()
        .args(["lab", "--breakdown", "--data", "x.npy"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
}
