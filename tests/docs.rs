//! The repository stands alone: every relative Markdown link in its docs resolves to a file or
//! folder inside the checkout, and none points outside it or at the unshipped spec folder.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every tracked-looking Markdown file: the checkout minus build outputs and environments.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The targets of `[text](target)` links, without `#anchors`; URLs are returned as they are.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            let target = rest[..end].split('#').next().unwrap_or("").trim();
            if !target.is_empty() {
                found.push(target.to_string());
            }
        }
    }
    found
}

#[test]
fn every_markdown_link_resolves_inside_the_repository() {
    let root = root().canonicalize().unwrap();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(files.len() > 5, "found only {files:?}");
    let mut bad = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                bad.push(format!(
                    "{}: {target} leaves the repository",
                    file.display()
                ));
                continue;
            }
            let resolved = file.parent().unwrap().join(&target);
            match resolved.canonicalize() {
                Ok(p) if p.starts_with(&root) => {}
                Ok(p) => bad.push(format!(
                    "{}: {target} resolves outside the repository ({})",
                    file.display(),
                    p.display()
                )),
                Err(e) => bad.push(format!("{}: {target}: {e}", file.display())),
            }
        }
        for (n, line) in text.lines().enumerate() {
            if line.contains("shared/spec") || line.contains("spec/PROTOCOL.md") {
                bad.push(format!(
                    "{}:{}: names the spec folder, which a clone does not have: {line}",
                    file.display(),
                    n + 1
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_docs_the_readme_promises_exist() {
    for doc in ["docs/kernel.md", "docs/protocol.md", "docs/gate.md"] {
        let text = std::fs::read_to_string(root().join(doc)).unwrap();
        assert!(text.len() > 1000, "{doc} is a stub");
    }
}
