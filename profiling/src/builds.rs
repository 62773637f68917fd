//! Separate builds of this binary for the build-flag hypotheses (`target-cpu=native`, LTO).
//! Each flavour gets its own `--target-dir`, so the flags never leak into the default build.

use std::path::PathBuf;
use std::process::Command;

/// A build configuration of the `profiling` binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// Plain `--release` (x86-64 baseline, 16 codegen units, no LTO): the reference build.
    Base,
    /// `-C target-cpu=native`, as numba compiles for the host CPU.
    Native,
    /// `lto = "fat"`, `codegen-units = 1`.
    Lto,
    /// Frame pointers and the `flamegraph` feature, for pprof.
    FramePointers,
    /// `-C target-cpu=haswell`: the CPU numba sees under valgrind (no AVX-512, which valgrind
    /// cannot run), so callgrind can compare like with like.
    Haswell,
}

impl Flavor {
    /// The short name used in paths and the command line: its build goes to `target/prof-<name>`.
    pub fn name(self) -> &'static str {
        match self {
            Flavor::Base => "base",
            Flavor::Native => "native",
            Flavor::Lto => "lto",
            Flavor::FramePointers => "fp",
            Flavor::Haswell => "haswell",
        }
    }

    /// The flags, as a human-readable line for the report.
    pub fn describe(self) -> &'static str {
        match self {
            Flavor::Base => "cargo build --release (x86-64 baseline, codegen-units=16, no LTO)",
            Flavor::Native => "RUSTFLAGS='-C target-cpu=native' cargo build --release",
            Flavor::Lto => {
                "CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 cargo build --release"
            }
            Flavor::FramePointers => {
                "RUSTFLAGS='-C force-frame-pointers=yes' cargo build --release --features flamegraph"
            }
            Flavor::Haswell => "RUSTFLAGS='-C target-cpu=haswell' cargo build --release",
        }
    }
}

/// Builds `flavor` into `target/prof-<name>` and returns the binary's path.
pub fn build(flavor: Flavor) -> Result<PathBuf, String> {
    let root = crate::workspace_root();
    let dir = root.join("target").join(format!("prof-{}", flavor.name()));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args([
            "build",
            "--release",
            "-p",
            "hullsweep-profiling",
            "--bin",
            "profiling",
        ])
        .arg("--target-dir")
        .arg(&dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    match flavor {
        Flavor::Base => {}
        Flavor::Native => {
            cmd.env("RUSTFLAGS", "-C target-cpu=native");
        }
        Flavor::Lto => {
            cmd.env("CARGO_PROFILE_RELEASE_LTO", "fat")
                .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1");
        }
        Flavor::FramePointers => {
            cmd.env("RUSTFLAGS", "-C force-frame-pointers=yes")
                .args(["--features", "flamegraph"]);
        }
        Flavor::Haswell => {
            cmd.env("RUSTFLAGS", "-C target-cpu=haswell");
        }
    }
    let st = cmd
        .status()
        .map_err(|e| format!("cannot run cargo for the {} build: {e}", flavor.name()))?;
    if !st.success() {
        return Err(format!("the {} build failed ({st})", flavor.name()));
    }
    Ok(dir.join("release").join("profiling"))
}
