//! The fixture files under `gate/tests/golden/` (golden, metric and trade fixtures alike): where
//! each dataset's file is, and reading and writing one as JSON with messages naming the file.

use anyhow::Context;
use std::path::{Path, PathBuf};

/// A dataset's fixture file in `dir`: `<dir>/<dataset>.json` (golden, metric and trade
/// fixtures alike).
pub fn fixture_path(dir: &Path, dataset: &str) -> PathBuf {
    dir.join(format!("{dataset}.json"))
}

/// Reads and parses `dataset`'s `kind` fixture (golden, metric, trade) from `dir`; a missing
/// file's message says how to generate it. Staleness is each fixture's own check.
pub(crate) fn read_fixture<T: serde::de::DeserializeOwned>(
    dir: &Path,
    dataset: &str,
    kind: &str,
) -> anyhow::Result<T> {
    let path = fixture_path(dir, dataset);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read {kind} fixture {} (generate it with `cargo run -- gate --write-golden`)",
            path.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("{}: malformed fixture", path.display()))
}

/// Writes `fixture` as pretty JSON to `<dir>/<dataset>.json`, creating `dir` if needed, and
/// returns the path written.
pub(crate) fn write_fixture<T: serde::Serialize>(
    dir: &Path,
    dataset: &str,
    fixture: &T,
) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = fixture_path(dir, dataset);
    let text = serde_json::to_string_pretty(fixture)? + "\n";
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}
