//! What every report must name: the CPU and its SIMD features, the toolchain, the date.
//! Measured numbers mean nothing without the machine that produced them.

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

/// Today's date in UTC (YYYY-MM-DD), from the system clock.
pub fn today() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn date_is_plausible() {
        let d = super::today();
        assert_eq!(d.len(), 10);
        assert!(d.as_str() >= "2024-01-01", "{d}");
    }
}
