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
