//! The lab's 2-core scaling section with its whole-process rows, one round on the default sweep,
//! so the section's shape cannot rot silently: `hullsweep sweep` on 1.5M bars runs as a child on
//! 1 and 2 threads, its own sweep time is read back, and every row has positive times.

use hullsweep_kernel as kernel;
use hullsweep_lab::scaling::{self, PROCESS_PAIRS, Processes};
use std::path::Path;

#[test]
fn the_scaling_section_times_whole_processes_beside_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let exe = Path::new(env!("CARGO_BIN_EXE_hullsweep"));
    let processes = Processes::new(exe, dir.path()).unwrap();
    let bytes = std::fs::metadata(&processes.data).unwrap().len();
    // 1.5M float64 bars and the .npy header.
    assert!(bytes > 8 * scaling::PROCESS_BARS, "{bytes} bytes");
    let (close, params) = (kernel::default_close(), kernel::default_params());
    let mut ticks = Vec::new();
    let rows = scaling::run(
        &close,
        &params,
        kernel::DEFAULT_FEE_PCT,
        1,
        Some(&processes),
        |t| ticks.push(t.to_string()),
    )
    .unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.workload).collect();
    assert_eq!(
        names,
        [
            "this sweep",
            "ceiling",
            "whole process",
            "its sweep, self-timed",
            "two 1-thread processes at once"
        ]
    );
    for r in &rows[2..] {
        assert_eq!(
            (r.one[0].len(), r.two[0].len()),
            (PROCESS_PAIRS, PROCESS_PAIRS)
        );
    }
    for (whole, inside) in rows[2].one[0].iter().zip(&rows[3].one[0]) {
        assert!(*inside > 0.0 && inside <= whole, "{inside} > {whole}");
    }
    assert!(
        ticks.iter().any(|t| t.contains("whole processes")),
        "{ticks:?}"
    );
    let md = scaling::to_markdown(&rows, close.len(), params.len(), ("0", "0"));
    // The smoke test's output: `cargo test --test lab_scaling -- --nocapture`.
    println!("{md}");
    assert!(md.contains("| whole process |") && md.contains("Target (issue 30)"));
    // A pair of processes takes at least as long as the slower of them alone would, so half
    // of it is more than a quarter of one alone; far less would mean the pair was not waited for.
    for (alone, half_pair) in rows[4].one[0].iter().zip(&rows[4].two[0]) {
        assert!(
            *half_pair > alone / 4.0,
            "{half_pair} s per job beside {alone} s alone"
        );
    }
    assert!(
        md.contains("two independent 1-thread processes at once"),
        "{md}"
    );
}
