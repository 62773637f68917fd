//! The binary run outside any checkout, as an installed one is: the numba side lives in a
//! per-user folder filled from the scripts compiled in, and nothing is written into the source
//! tree the binary was built from.

use assert_cmd::cargo::cargo_bin_cmd;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

/// The checkout this test was built in, and the Python that already has numba (the gate's own
/// `.venv`, created on first use), so this test does not build a second environment.
fn checkout_python() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::set_current_dir(root).unwrap();
    hullsweep_gate::numba::ensure_venv(true).unwrap()
}

/// Files in `dir` and below, as paths relative to it.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    out.sort();
    out
}

#[test]
fn outside_a_checkout_the_gate_runs_from_the_user_folder() {
    let python = checkout_python();
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("reference");
    let before = listing(&reference);
    let tmp = tempfile::tempdir().unwrap();
    let (work, home) = (tmp.path().join("work"), tmp.path().join("home"));
    std::fs::create_dir_all(&work).unwrap();
    let run = |args: &[&str]| {
        let mut cmd = cargo_bin_cmd!("hullsweep");
        cmd.current_dir(&work)
            .env("HOME", &home)
            .env_remove("XDG_DATA_HOME")
            .env_remove("HULLSWEEP_HOME")
            .env("HULLSWEEP_PYTHON", &python)
            .args(args);
        cmd
    };
    run(&["data", "--bars", "3000", "--out", "c.csv"])
        .assert()
        .success();
    run(&["gate", "--data", "c.csv", "--grid", "6:40:3"])
        .assert()
        .success()
        .stdout(predicate::str::contains("all passed"));
    let folder = home.join(".local/share/hullsweep/reference");
    for name in ["hullsweep_ref.py", "requirements.txt"] {
        assert!(
            folder.join(name).is_file(),
            "{name} in {}",
            folder.display()
        );
    }
    // The checkout's reference folder gained nothing (numba's cache included).
    assert_eq!(listing(&reference), before);
    // --write-golden has no checkout to write into here, and says so.
    run(&["gate", "--write-golden"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--golden-dir"));
}
