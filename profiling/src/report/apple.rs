//! Section 5b, the study's CPU: the WMA hot loops as Rust and numba compile them for an Apple core
//! (aarch64, `apple-m2`), side by side, with llvm-mca's throughput: a static prediction, no timing.
//!
//! Nothing here can run on an Apple core. Rust's side is the real kernel source built by Debian's
//! aarch64 rustc (`scripts/test-aarch64` installs it); numba's side is numba's own LLVM IR run
//! through numba's module pipelines with an aarch64 target machine by llvmlite
//! (`py/numba_aarch64.py`); llvm-mca estimates each loop's cycles with the Apple model it has.

mod listing;
mod markdown;
pub(super) mod model;
mod toolchain;

use super::charts::Chart;
use super::inputs::Inputs;
use listing::{function, shape};
use markdown::section;
use model::{AppleCodegen, AppleLoop, TRIPLE};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use toolchain::{aarch64_rustc, llvm_mca, mca, run};

/// The CPU names to try, best first: LLVM spells the M2 `apple-m2` (an alias of its A15 core).
const CPUS: &[&str] = &["apple-m2", "apple-a15", "apple-m1"];

/// Builds both sides for the Apple core and reads each hot loop; what cannot be done is noted.
pub(super) fn collect(out: &Path, scratch: &Path) -> AppleCodegen {
    let mut a = AppleCodegen {
        cpu: CPUS[0].into(),
        rustc: None,
        numba: None,
        mca: None,
        loops: Vec::new(),
        notes: Vec::new(),
    };
    let dir = scratch.join("apple");
    let asm_dir = out.join("asm");
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| std::fs::create_dir_all(&asm_dir)) {
        a.notes.push(format!("no scratch folder: {e}"));
        return a;
    }
    let root = crate::workspace_root();
    let mut sources: Vec<(&'static str, String, &'static str)> = Vec::new();
    match aarch64_rustc() {
        Err(e) => a.notes.push(format!("the Rust side was not built: {e}")),
        Ok(rustc) => {
            // The first CPU name this rustc accepts without a warning.
            let cpus =
                run(Command::new(&rustc).args(["--print", "target-cpus", "--target", TRIPLE]))
                    .map(|(o, _)| o)
                    .unwrap_or_default();
            let accepted = |c: &str| {
                let probe = dir.join("probe.rs");
                std::fs::write(&probe, "").is_ok()
                    && run(Command::new(&rustc)
                        .args([
                            "--crate-type",
                            "lib",
                            "--emit",
                            "metadata",
                            "--target",
                            TRIPLE,
                        ])
                        .arg(format!("-Ctarget-cpu={c}"))
                        .arg("--out-dir")
                        .arg(&dir)
                        .arg(&probe))
                    .is_ok_and(|(_, err)| !err.contains("not a recognized"))
            };
            if let Some(c) = CPUS.iter().find(|c| cpus.contains(**c) || accepted(c)) {
                a.cpu = c.to_string();
            }
            a.rustc = run(Command::new(&rustc).arg("-vV")).ok().map(|(o, _)| {
                let get = |k: &str| {
                    o.lines()
                        .find_map(|l| l.strip_prefix(k))
                        .unwrap_or("?")
                        .trim()
                        .to_string()
                };
                format!("rustc {} (LLVM {})", get("release:"), get("LLVM version:"))
            });
            let common = |cmd: &mut Command| {
                cmd.args([
                    "--edition",
                    "2024",
                    "-C",
                    "opt-level=3",
                    "-C",
                    "debuginfo=0",
                    "--target",
                    TRIPLE,
                ])
                .arg(format!("-Ctarget-cpu={}", a.cpu));
            };
            let kernel = root.join("kernel/src/lib.rs");
            let lab = root.join("profiling/src/kernels.rs");
            let mut k = Command::new(&rustc);
            common(&mut k);
            k.args([
                "--crate-type",
                "lib",
                "--crate-name",
                "hullsweep_kernel",
                "--emit",
            ])
            .arg(format!(
                "asm={},link={}",
                dir.join("kernel.s").display(),
                dir.join("libhullsweep_kernel.rlib").display()
            ))
            .arg(&kernel);
            let mut l = Command::new(&rustc);
            common(&mut l);
            l.args([
                "--crate-type",
                "lib",
                "--crate-name",
                "lab_kernels",
                "--extern",
            ])
            .arg(format!(
                "hullsweep_kernel={}",
                dir.join("libhullsweep_kernel.rlib").display()
            ))
            .arg("--emit")
            .arg(format!("asm={}", dir.join("lab.s").display()))
            .arg(&lab);
            match run(&mut k).and_then(|_| run(&mut l)) {
                Ok(_) => {
                    sources.push((
                        "Rust reference `hullsweep_kernel::wma`",
                        "kernel.s".into(),
                        // The loop lives in `reference.rs`; its symbol keeps that module in its path.
                        "_ZN16hullsweep_kernel9reference3wma17h",
                    ));
                    sources.push((
                        "Rust `get_unchecked` (lab `wma_unchecked`)",
                        "lab.s".into(),
                        "_ZN11lab_kernels13wma_unchecked17h",
                    ));
                }
                Err(e) => a
                    .notes
                    .push(format!("the Rust side did not build for aarch64: {e}")),
            }
        }
    }
    match crate::python() {
        None => a
            .notes
            .push("numba's side was not built: no `.venv/bin/python`".into()),
        Some(py) => {
            let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("py/numba_aarch64.py");
            match run(Command::new(py).arg(script).arg(&dir).arg(&a.cpu)) {
                Ok((o, _)) => {
                    a.numba = o.lines().last().map(str::to_string);
                    sources.push((
                        "numba `wma`",
                        "numba-wma-aarch64.s".into(),
                        "_ZN13hullsweep_ref3wma",
                    ));
                }
                Err(e) => a.notes.push(format!("numba's side was not built: {e}")),
            }
        }
    }
    a.mca = llvm_mca(&a.cpu);
    if a.mca.is_none() {
        a.notes.push(format!(
            "no llvm-mca that knows {} (Debian's llvm-22 has one): the throughput columns are empty",
            a.cpu
        ));
    }
    for (who, file, prefix) in sources {
        let text = std::fs::read_to_string(dir.join(&file)).unwrap_or_default();
        let Some(f) = function(&text, prefix) else {
            a.notes
                .push(format!("{who}: function {prefix}… not found in {file}"));
            continue;
        };
        let Some((s, e)) = f.hot_loop() else {
            a.notes.push(format!("{who}: no loop with an FP add found"));
            continue;
        };
        let insns: Vec<String> = f.insns[s..=e].iter().map(|(t, _)| t.clone()).collect();
        let (elements, chain, conversion) = shape(&insns);
        let name = format!(
            "{}--{}-wma.s",
            a.cpu,
            match who.split_whitespace().nth(1) {
                Some("reference") => "rust-reference",
                Some("`get_unchecked`") => "rust-unchecked",
                _ => "numba",
            }
        );
        let mut lp = AppleLoop {
            who,
            file: format!("asm/{name}"),
            check_in_loop: f.branches_to_panic(s..=e),
            check_in_function: f.branches_to_panic(0..=f.insns.len() - 1),
            insns,
            elements: elements.max(1),
            chain,
            conversion,
            mca: None,
        };
        let mut listing = format!(
            "# {who}, built for {TRIPLE} -C target-cpu={}: the hot loop ({} instructions, {} elements per iteration)\n",
            a.cpu,
            lp.insns.len(),
            lp.elements
        );
        for t in &lp.insns {
            let _ = writeln!(listing, "    {t}");
        }
        if let Some((tool, _)) = &a.mca {
            match mca(tool, &a.cpu, &lp.insns, &dir.join(format!("{name}.mca.s"))) {
                Ok((m, report)) => {
                    lp.mca = Some(m);
                    let _ = write!(
                        listing,
                        "\n# {tool} -mtriple=aarch64 -mcpu={} -iterations=1000 -instruction-info\n{report}",
                        a.cpu
                    );
                }
                Err(e) => a.notes.push(format!("{who}: llvm-mca failed: {e}")),
            }
        }
        if let Err(e) = std::fs::write(asm_dir.join(&name), listing) {
            a.notes.push(format!("{name}: {e}"));
        }
        a.loops.push(lp);
    }
    a
}

pub(super) fn render(r: &Inputs, s: &mut String, _: &mut Vec<Chart>) {
    let Inputs {
        apple,
        out,
        results,
        ..
    } = *r;
    section(apple, results, out, s);
}

/// `report --only apple`: regenerates this section alone (it times nothing) into an existing
/// `gap.md`, replacing the section or inserting it before section 6, and says so in the section.
/// For when the machine is too loaded for the measured sections to be rerun honestly.
pub(super) fn splice(out: &Path, scratch: &Path) -> Result<(), String> {
    let file = out.join("gap.md");
    let md = std::fs::read_to_string(&file).map_err(|e| {
        format!(
            "{}: {e} (--only apple updates an existing report)",
            file.display()
        )
    })?;
    let a = collect(out, scratch);
    let mut sec = String::new();
    section(&a, &[], out, &mut sec);
    let stamp = crate::sysinfo::collect(None)
        .into_iter()
        .find(|(k, _)| k.starts_with("date"))
        .map(|(_, v)| v)
        .unwrap_or_default();
    let sec = sec.replacen(
        "\n\n",
        &format!(
            "\n\n*Regenerated alone by `scripts/gap-report --only apple` on {stamp} (UTC); the measured \
             sections around it are from the run stamped under Machine and toolchain.*\n\n"
        ),
        1,
    );
    let start = md.find("## 5b. ");
    let end = md
        .find("## 6. ")
        .ok_or("gap.md has no section 6 to insert before")?;
    let spliced = format!("{}{sec}{}", &md[..start.unwrap_or(end)], &md[end..]);
    std::fs::write(&file, spliced).map_err(|e| e.to_string())?;
    println!("wrote section 5b into {}", file.display());
    Ok(())
}
