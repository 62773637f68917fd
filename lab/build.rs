//! Records the toolchain that built the binary, so every report can name it.

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = std::process::Command::new(rustc)
        .arg("-vV")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    let field = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or("unknown")
            .trim()
            .to_string()
    };
    println!(
        "cargo:rustc-env=HULLSWEEP_RUSTC={}",
        out.lines().next().unwrap_or("unknown")
    );
    println!("cargo:rustc-env=HULLSWEEP_LLVM={}", field("LLVM version:"));
    println!("cargo:rerun-if-env-changed=RUSTC");
}
