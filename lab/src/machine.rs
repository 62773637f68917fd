//! What every report must name: the date, the commit, the CPU and its SIMD features, the
//! toolchain and the load the machine was under. Measured numbers mean nothing without the
//! machine and the code that produced them.

/// The machine and toolchain a measurement ran on.
#[derive(Clone, Debug)]
pub struct Machine {
    /// The CPU model from `/proc/cpuinfo` with its family and model numbers (the model name
    /// can be masked by a hypervisor), or just the architecture where that file is absent.
    pub cpu: String,
    /// Logical cores this process may use (`available_parallelism`), 1 if unknown.
    pub cores: usize,
    /// The SIMD extensions detected at run time that the variants can use (e.g. `sse2`,
    /// `avx2`, `fma`, `avx512f` on x86_64; `neon` on aarch64).
    pub features: Vec<&'static str>,
    /// The `rustc` version string the binary was built with, captured by `build.rs`.
    pub rustc: &'static str,
    /// The LLVM version behind that `rustc`, captured by `build.rs`.
    pub llvm: &'static str,
    /// `release`, or `debug-assertions` when built with them (timings then mean little).
    pub profile: &'static str,
}

impl Machine {
    /// Reads the current machine: CPU from `/proc/cpuinfo`, cores, SIMD features, and the
    /// toolchain baked in at build time. Never fails; missing information degrades to the
    /// architecture name or an empty feature list.
    pub fn detect() -> Machine {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |key: &str| {
            info.lines()
                .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        // The model name can be masked by a hypervisor; family/model still tell the generation.
        let cpu = match (field("model name"), field("cpu family"), field("model")) {
            (Some(name), Some(fam), Some(model)) => format!("{name} (family {fam}, model {model})"),
            (Some(name), _, _) => name,
            _ => std::env::consts::ARCH.to_string(),
        };
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            features: simd_features(),
            rustc: env!("HULLSWEEP_RUSTC"),
            llvm: env!("HULLSWEEP_LLVM"),
            profile: if cfg!(debug_assertions) {
                "debug-assertions"
            } else {
                "release"
            },
        }
    }

    /// One line for report headers.
    pub fn summary(&self) -> String {
        format!(
            "{} ({} cores; {}), {} (LLVM {}), {} build for baseline {}",
            self.cpu,
            self.cores,
            if self.features.is_empty() {
                "no SIMD extensions detected".to_string()
            } else {
                self.features.join(", ")
            },
            self.rustc,
            self.llvm,
            self.profile,
            std::env::consts::ARCH,
        )
    }
}

#[cfg(target_arch = "x86_64")]
fn simd_features() -> Vec<&'static str> {
    let mut f = vec!["sse2"];
    if std::arch::is_x86_feature_detected!("avx2") {
        f.push("avx2");
    }
    if std::arch::is_x86_feature_detected!("fma") {
        f.push("fma");
    }
    if std::arch::is_x86_feature_detected!("avx512f") {
        f.push("avx512f");
    }
    f
}

#[cfg(target_arch = "aarch64")]
fn simd_features() -> Vec<&'static str> {
    vec!["neon"]
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn simd_features() -> Vec<&'static str> {
    Vec::new()
}

/// What a report was made under: the date and commit, the machine, and the load average when
/// its measurement started. [`Provenance::line`] renders it with the load at the end.
#[derive(Clone, Debug)]
pub struct Provenance {
    /// When the measurement started, UTC, `YYYY-MM-DD HH:MM`.
    pub started: String,
    /// The checkout's commit ([`commit`]).
    pub commit: String,
    /// The CPU and toolchain.
    pub machine: Machine,
    /// The load average when the measurement started ([`load_average`]).
    pub load_start: String,
}

impl Provenance {
    /// Reads it all now, at the start of a measurement.
    pub fn start() -> Provenance {
        Provenance {
            started: jiff::Timestamp::now()
                .strftime("%Y-%m-%d %H:%M")
                .to_string(),
            commit: commit(),
            machine: Machine::detect(),
            load_start: load_average(),
        }
    }

    /// The line every generated section states: date, commit, CPU and cores, toolchain, and
    /// the load average at the start and now, at the end.
    pub fn line(&self) -> String {
        let m = &self.machine;
        format!(
            "Date: {} UTC. Commit: {}. CPU: {} ({} cores; {}). Toolchain: {} (LLVM {}), {} \
             build for baseline {}. Load average (1, 5, 15 min): {} at the start, {} at the end.",
            self.started,
            self.commit,
            m.cpu,
            m.cores,
            if m.features.is_empty() {
                "no SIMD extensions detected".to_string()
            } else {
                m.features.join(", ")
            },
            m.rustc,
            m.llvm,
            m.profile,
            std::env::consts::ARCH,
            self.load_start,
            load_average(),
        )
    }
}

/// The commit of the checkout the process runs in ([`commit_in`] the current directory).
pub fn commit() -> String {
    commit_in(std::path::Path::new("."))
}

pub use hullsweep_profiling::sysinfo::commit_in;

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), or `unknown` where the OS has none.
pub fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let avg: Vec<&str> = text.split_whitespace().take(3).collect();
    if avg.len() == 3 {
        avg.join(" ")
    } else {
        "unknown".to_string()
    }
}

/// Today's date in UTC (YYYY-MM-DD), from the system clock.
pub fn today() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_is_plausible() {
        let d = today();
        assert_eq!(d.len(), 10);
        assert!(d.as_str() >= "2024-01-01", "{d}");
    }

    #[test]
    fn the_line_names_everything_a_report_needs() {
        let p = Provenance::start();
        let line = p.line();
        for part in [
            "Date: ",
            " UTC",
            "Commit: ",
            "CPU: ",
            "Toolchain: rustc",
            "Load average",
        ] {
            assert!(line.contains(part), "{part} missing: {line}");
        }
        assert!(!p.commit.is_empty());
        // A directory outside any checkout has no commit, and saying so is not an error.
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("git")
            .args(["rev-parse", "--short", "HEAD"])
            .current_dir(dir.path())
            .output();
        if out.is_ok_and(|o| !o.status.success()) {
            assert_eq!(commit_in(dir.path()), "not a git checkout");
        }
    }

    /// A changed report is not a dirty tree; a changed source file is.
    #[test]
    fn only_changes_outside_reports_make_the_commit_dirty() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(["-c", "user.name=lab", "-c", "user.email=lab@localhost"])
                .args(args)
                .current_dir(dir.path())
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !git(&["init", "-q"]) {
            return; // no git on this machine: nothing to check
        }
        std::fs::create_dir(dir.path().join("reports")).unwrap();
        std::fs::write(dir.path().join("reports/lab.md"), "old").unwrap();
        std::fs::write(dir.path().join("code.rs"), "old").unwrap();
        assert!(git(&["add", "."]) && git(&["commit", "-q", "-m", "x"]));
        let clean = commit_in(dir.path());
        assert!(
            !clean.ends_with("+dirty") && clean != "not a git checkout",
            "{clean}"
        );
        std::fs::write(dir.path().join("reports/lab.md"), "new").unwrap();
        assert_eq!(commit_in(dir.path()), clean);
        std::fs::write(dir.path().join("code.rs"), "new").unwrap();
        assert_eq!(commit_in(dir.path()), format!("{clean}+dirty"));
    }
}
