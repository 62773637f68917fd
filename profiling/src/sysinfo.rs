//! Machine and toolchain facts stamped on every report: CPU model and flags, rustc/LLVM,
//! numba/llvmlite, the date. All read at run time, nothing hard-coded.

use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The facts, as `(name, value)` lines.
pub fn collect(numba_banner: Option<&str>) -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into())
    };
    let flags = field("flags");
    let simd: Vec<&str> = flags
        .split_whitespace()
        .filter(|f| {
            f.starts_with("avx") || f.starts_with("fma") || f.starts_with("sse4") || *f == "bmi2"
        })
        .collect();
    let rustc = run("rustc", &["-vV"]).unwrap_or_default();
    let rv = |k: &str| {
        rustc
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|| "unknown".into())
    };
    let mut v = vec![
        (
            "date (UTC)".into(),
            run("date", &["-u", "+%Y-%m-%d %H:%M:%S"]).unwrap_or_default(),
        ),
        ("CPU model".into(), field("model name")),
        (
            "CPU family/model/stepping".into(),
            format!(
                "{}/{}/{}",
                field("cpu family"),
                field("model\t"),
                field("stepping")
            ),
        ),
        (
            "CPU family (decoded)".into(),
            decode_family(&field("vendor_id"), &field("cpu family")),
        ),
        (
            "logical CPUs".into(),
            std::thread::available_parallelism()
                .map(|n| n.to_string())
                .unwrap_or_default(),
        ),
        ("SIMD flags".into(), simd.join(" ")),
        ("rustc".into(), rv("release:")),
        ("LLVM (rustc)".into(), rv("LLVM version:")),
        ("host".into(), rv("host:")),
        ("rustc native target-cpu".into(), native_cpu()),
    ];
    if let Some(b) = numba_banner {
        for kv in b.split_whitespace() {
            if let Some((k, val)) = kv.split_once('=') {
                v.push((k.to_string(), val.to_string()));
            }
        }
    }
    v
}

/// What `-C target-cpu=native` resolves to (rustc's own host detection).
pub fn native_cpu() -> String {
    run(
        "rustc",
        &["--print", "target-cpus", "-C", "target-cpu=native"],
    )
    .and_then(|s| {
        s.lines()
            .find(|l| l.contains("native"))
            .map(|l| l.trim().to_string())
    })
    .unwrap_or_else(|| "unknown".into())
}

/// AMD's family number names the core generation (the model name is masked on some VMs).
fn decode_family(vendor: &str, family: &str) -> String {
    let generation = match (vendor, family.parse::<u32>().unwrap_or(0)) {
        ("AuthenticAMD", 0x17) => "AMD Zen / Zen 2",
        ("AuthenticAMD", 0x19) => "AMD Zen 3 / Zen 4",
        ("AuthenticAMD", 0x1a) => "AMD Zen 5",
        ("GenuineIntel", 6) => "Intel family 6",
        _ => "unknown",
    };
    format!("{vendor}, family {family}: {generation}")
}

/// The header every report opens with, right under its title: date (UTC), commit, CPU and core
/// count, toolchain and the load average at the start and the end of the run (the Python
/// generators write the same lines with `scripts/report_header.py`). `start` where the run
/// starts, `markdown` at its end.
pub struct Header {
    command: String,
    started: String,
    load_start: String,
}

impl Header {
    /// Reads the date and the load average now, for the report `command` writes.
    pub fn start(command: &str) -> Self {
        Header {
            command: command.to_string(),
            started: run("date", &["-u", "+%Y-%m-%d %H:%M"]).unwrap_or_else(|| "unknown".into()),
            load_start: loadavg(),
        }
    }

    /// The header as a Markdown list; `python` is what the Python side runs, if it runs
    /// (e.g. "Python 3.11.7, numpy 2.4.6, numba 0.68.1").
    pub fn markdown(&self, python: Option<&str>) -> String {
        let rustc = run("rustc", &["-vV"]).unwrap_or_default();
        let rv = |k: &str| {
            rustc
                .lines()
                .find_map(|l| l.strip_prefix(k))
                .map_or("?", str::trim)
                .to_string()
        };
        let mut toolchain = format!("rustc {} (LLVM {})", rv("release:"), rv("LLVM version:"));
        if let Some(p) = python {
            toolchain = format!("{toolchain}; {p}");
        }
        let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        format!(
            "- Generated by `{}` on {} UTC, commit `{}`\n- CPU: {}, {cores} cores\n\
             - Toolchain: {toolchain}\n- Load average (1/5/15 min): {} at start, {} at end\n",
            self.command,
            self.started,
            commit(),
            cpu_model(),
            self.load_start,
            loadavg()
        )
    }
}

/// The short HEAD hash of the workspace ([`commit_in`] its root).
pub fn commit() -> String {
    commit_in(&crate::workspace_root())
}

/// The short hash of `HEAD` of the checkout holding `dir` (`git rev-parse --short HEAD`), with
/// `+dirty` when tracked files outside `reports/` differ from it; `not a git checkout` when there
/// is none or no `git` to ask. Never fails.
///
/// `reports/` holds what the lab and the profiling tools write: a full lab run rewrites its
/// report and chart there before its later sections state their provenance, and those files do
/// not change what is measured.
pub fn commit_in(dir: &std::path::Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(hash) if !hash.is_empty() => {
            let dirty = git(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":(top,exclude)reports",
            ])
            .is_some_and(|s| !s.is_empty());
            if dirty { format!("{hash}+dirty") } else { hash }
        }
        _ => "not a git checkout".to_string(),
    }
}

/// `/proc/loadavg`'s 1, 5 and 15 minute averages as "a/b/c".
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join("/"))
        .unwrap_or_else(|_| "unknown".into())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|r| r.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}
