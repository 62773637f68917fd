//! The tools section 5b runs: Debian's aarch64 rustc, the newest llvm-mca that knows the Apple
//! core, and llvm-mca's reading of one loop body (throughput, cycles, FADD/FMUL latencies).

use super::model::{Mca, TRIPLE};
use std::path::{Path, PathBuf};
use std::process::Command;

pub(super) fn run(cmd: &mut Command) -> Result<(String, String), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    if out.status.success() {
        Ok((o, e))
    } else {
        Err(format!("{cmd:?} failed: {}", e.trim()))
    }
}

/// Debian's rustc (it carries an aarch64 standard library), or `HULLSWEEP_AARCH64_RUSTC`.
pub(super) fn aarch64_rustc() -> Result<PathBuf, String> {
    let rustc = std::env::var_os("HULLSWEEP_AARCH64_RUSTC")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/rustc"));
    let (libdir, _) =
        run(Command::new(&rustc).args(["--print", "target-libdir", "--target", TRIPLE])).map_err(
            |e| format!("no aarch64 rustc ({e}); scripts/test-aarch64 installs Debian's"),
        )?;
    let has_core = std::fs::read_dir(libdir.trim())
        .map(|d| {
            d.flatten()
                .any(|f| f.file_name().to_string_lossy().starts_with("libcore-"))
        })
        .unwrap_or(false);
    if has_core {
        Ok(rustc)
    } else {
        Err(format!(
            "{} has no aarch64 standard library: install libstd-rust-web-dev:arm64 (scripts/test-aarch64 does)",
            rustc.display()
        ))
    }
}

/// The newest llvm-mca on PATH that knows `cpu`, with its version line.
pub(super) fn llvm_mca(cpu: &str) -> Option<(String, String)> {
    let names = (19..=30).rev().map(|v| format!("llvm-mca-{v}"));
    for name in names.chain(["llvm-mca".to_string()]) {
        let Ok((help, help_err)) =
            run(Command::new(&name).args(["-mtriple=aarch64", "-mcpu=help"]))
        else {
            continue;
        };
        if !format!("{help}{help_err}").contains(cpu) {
            continue;
        }
        let version = run(Command::new(&name).arg("--version"))
            .map(|(o, _)| {
                o.lines()
                    .find(|l| l.contains("version"))
                    .unwrap_or("")
                    .trim()
                    .to_string()
            })
            .unwrap_or_default();
        return Some((name, version));
    }
    None
}

/// llvm-mca on one loop body: resource throughput, simulated cycles, FADD/FMUL latencies.
pub(super) fn mca(
    tool: &str,
    cpu: &str,
    body: &[String],
    file: &Path,
) -> Result<(Mca, String), String> {
    std::fs::write(file, body.join("\n") + "\n").map_err(|e| e.to_string())?;
    let (out, _) = run(Command::new(tool)
        .args([
            "-mtriple=aarch64",
            &format!("-mcpu={cpu}"),
            "-iterations=1000",
            "-instruction-info",
        ])
        .arg(file))?;
    let field = |k: &str| {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(k))
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    let (Some(rthroughput), Some(total), Some(iterations)) = (
        field("Block RThroughput:"),
        field("Total Cycles:"),
        field("Iterations:"),
    ) else {
        return Err(format!("{tool}: unexpected output"));
    };
    // Instruction info rows: uops, latency, rthroughput, flags..., then the instruction.
    let latency = |mnemonic: &str, scalar: bool| {
        out.lines().find_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let at = cols.iter().position(|c| *c == mnemonic)?;
            let first_op = cols.get(at + 1)?;
            (at >= 3 && first_op.starts_with('d') == scalar).then(|| cols[1].parse().ok())?
        })
    };
    let m = Mca {
        rthroughput,
        cycles: total / iterations,
        fadd: latency("fadd", true),
        fmul: latency("fmul", false).or_else(|| latency("fmul", true)),
    };
    Ok((m, out))
}
