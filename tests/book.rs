//! The manual (`book/`, an mdBook) cannot drift: its CLI chapter is the clap definitions'
//! output, every link in it resolves, every doc it promises is in it, and the built HTML has no
//! broken link. `mdbook build book` writes it to book/book/.
//!
//! The link rule is `book/repo_links.py`'s (the preprocessor `mdbook build` runs): a link from a
//! chapter, after its `{{#include}}`s are expanded, resolves relative to the chapter's place under
//! book/src/; it may land on a chapter of SUMMARY.md, on a file under book/src/ (an image), or on a
//! repository file the book does not hold (a source file), which the preprocessor renders as its
//! text. Anything else is broken, and so is an image outside book/src/.

use assert_cmd::Command;
use std::path::{Component, Path, PathBuf};

const REGENERATE: &str = "cargo run -- manual-cli > book/src/cli.md";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn src() -> PathBuf {
    root().join("book/src")
}

#[test]
fn the_cli_chapter_is_the_output_of_manual_cli() {
    let out = Command::cargo_bin("hullsweep")
        .unwrap()
        .arg("manual-cli")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let generated = String::from_utf8(out.stdout).unwrap();
    let page = std::fs::read_to_string(src().join("cli.md")).unwrap_or_default();
    if page != generated {
        let line = page
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(page.lines().count().min(generated.lines().count()));
        panic!(
            "book/src/cli.md differs from `hullsweep manual-cli` (a flag or a help text changed) from \
             line {}:\n  page:      {:?}\n  generated: {:?}\nregenerate it with `{REGENERATE}`",
            line + 1,
            page.lines().nth(line).unwrap_or("<end>"),
            generated.lines().nth(line).unwrap_or("<end>"),
        );
    }
    assert!(
        generated.contains("### `hullsweep sweep`")
            && !generated.contains("`hullsweep manual-cli`"),
        "the page should have a section per visible subcommand and none for the hidden one"
    );
    assert!(
        !generated.contains("on this machine)"),
        "the page must not depend on the machine it was generated on"
    );
}

/// The chapters SUMMARY.md lists, relative to book/src.
fn chapters() -> Vec<String> {
    let summary = std::fs::read_to_string(src().join("SUMMARY.md")).unwrap();
    let found: Vec<String> = summary
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- ["))
        .filter_map(|l| l.rsplit_once("]("))
        .map(|(_, t)| t.trim_end().trim_end_matches(')').to_string())
        .collect();
    assert!(found.len() >= 10, "SUMMARY.md lists only {found:?}");
    found
}

/// A chapter's text with its `{{#include PATH}}` lines expanded, each line with the file it came
/// from.
fn expand(chapter: &Path) -> Vec<(String, PathBuf)> {
    let text = std::fs::read_to_string(chapter)
        .unwrap_or_else(|e| panic!("{}: {e} (listed in SUMMARY.md)", chapter.display()));
    let mut lines = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("{{#include ") {
            let target = rest.trim_end_matches("}}").trim();
            assert!(
                !target.contains(':'),
                "{}: only whole-file includes are checked: {t}",
                chapter.display()
            );
            let included = chapter.parent().unwrap().join(target);
            let body = std::fs::read_to_string(&included)
                .unwrap_or_else(|e| panic!("{}: includes {target}: {e}", chapter.display()));
            let origin = normalize(&included);
            lines.extend(body.lines().map(|l| (l.to_string(), origin.clone())));
        } else {
            assert!(
                !t.contains("{{#"),
                "{}: unchecked directive {t}",
                chapter.display()
            );
            lines.push((line.to_string(), chapter.to_path_buf()));
        }
    }
    lines
}

/// `path` with `.` and `..` removed lexically (symlinks are not followed).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The `[text](target)` and `![alt](target)` links of one line: (is an image, target).
fn links(line: &str) -> Vec<(bool, String)> {
    let bytes = line.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = line[from..].find("](").map(|i| i + from) {
        from = at + 2;
        let Some(end) = line[from..].find(')').map(|i| i + from) else {
            break;
        };
        let target = &line[from..end];
        if target.is_empty() || target.contains(char::is_whitespace) {
            continue;
        }
        // The `[` that opens this link's text, and whether a `!` makes it an image.
        let mut depth = 0;
        let mut open = None;
        for i in (0..at).rev() {
            match bytes[i] {
                b']' => depth += 1,
                b'[' if depth == 0 => {
                    open = Some(i);
                    break;
                }
                b'[' => depth -= 1,
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        found.push((open > 0 && bytes[open - 1] == b'!', target.to_string()));
    }
    found
}

#[test]
fn every_link_in_the_book_resolves() {
    let src = normalize(&src());
    let root = normalize(&root());
    let chapters = chapters();
    let mut bad = Vec::new();
    for chapter in &chapters {
        let file = src.join(chapter);
        let dir = file.parent().unwrap().to_path_buf();
        let mut fenced = false;
        for (line, origin) in expand(&file) {
            if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
                fenced = !fenced;
            }
            if fenced {
                continue;
            }
            for (image, target) in links(&line) {
                if target.starts_with('#') {
                    continue; // checked in the built HTML
                }
                let from = if origin == file {
                    format!("book/src/{chapter}")
                } else {
                    let shown = origin.strip_prefix(&root).unwrap_or(&origin).display();
                    format!("book/src/{chapter} (from {shown})")
                };
                if target.contains("://") || target.starts_with("mailto:") {
                    bad.push(format!("{from}: {target} leaves the repository"));
                    continue;
                }
                let path = target.split('#').next().unwrap();
                let at = normalize(&dir.join(path));
                let in_book = at.strip_prefix(&src).ok().map(Path::to_path_buf);
                let ok = match &in_book {
                    Some(rel) if path.ends_with(".md") => {
                        chapters.iter().any(|c| Path::new(c) == rel)
                    }
                    Some(_) => at.exists(),
                    None => false,
                };
                if ok {
                    continue;
                }
                let in_repo = in_book.map(|rel| root.join(rel)).filter(|p| p.exists());
                match (in_repo, image) {
                    (Some(_), false) => {} // the preprocessor renders it as its text
                    (Some(p), true) => bad.push(format!(
                        "{from}: image {target} is not under book/src/: add a symlink there to {}",
                        p.strip_prefix(&root).unwrap().display()
                    )),
                    (None, _) => bad.push(format!(
                        "{from}: {target} resolves to {}, which is neither a chapter of \
                         SUMMARY.md, nor a file under book/src/, nor a repository file",
                        at.strip_prefix(&root).unwrap_or(&at).display()
                    )),
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "broken links in the book:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_book_includes_every_doc() {
    let src = src();
    let included: Vec<PathBuf> = chapters()
        .iter()
        .flat_map(|c| expand(&src.join(c)))
        .map(|(_, origin)| origin)
        .collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.push(root().join("engine/PROTOCOL-EXT.md"));
    docs.push(root().join("engine/README.md"));
    for doc in docs {
        let doc = normalize(&doc);
        assert!(
            included.contains(&doc),
            "{} is in no chapter of the book: add `{{{{#include}}}}` of it in a file at the same \
             relative path under book/src/ and list that in book/src/SUMMARY.md",
            doc.strip_prefix(normalize(&root())).unwrap().display()
        );
    }
}

/// Every `href="..."` and `src="..."` of an HTML page.
fn html_refs(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attr in [" href=\"", " src=\""] {
        let mut rest = html;
        while let Some(at) = rest.find(attr) {
            rest = &rest[at + attr.len()..];
            if let Some(end) = rest.find('"') {
                found.push(rest[..end].to_string());
            }
        }
    }
    found
}

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            html_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "html") {
            out.push(path);
        }
    }
}

#[test]
fn the_built_book_has_no_broken_links() {
    let mdbook = std::process::Command::new("mdbook")
        .arg("--version")
        .output();
    if !mdbook.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipped: mdbook is not on PATH (`cargo install mdbook --locked`; scripts/test installs it)"
        );
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let build = std::process::Command::new("mdbook")
        .arg("build")
        .arg(root().join("book"))
        .arg("--dest-dir")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "mdbook build book failed:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let mut pages = Vec::new();
    html_files(out.path(), &mut pages);
    assert!(pages.len() > 10, "mdbook wrote only {pages:?}");
    let mut bad = Vec::new();
    for page in &pages {
        let name = page.strip_prefix(out.path()).unwrap().display().to_string();
        if name == "404.html" {
            continue; // its links are relative to the site's root (a <base> element)
        }
        let html = std::fs::read_to_string(page).unwrap();
        for r in html_refs(&html) {
            if r.is_empty()
                || r.contains("://")
                || r.starts_with("mailto:")
                || r.starts_with("javascript:")
                || r.starts_with("data:")
                || r.contains("{{")
            {
                continue;
            }
            let (path, fragment) = r.split_once('#').unwrap_or((&r, ""));
            let target = if path.is_empty() {
                page.clone()
            } else {
                normalize(&page.parent().unwrap().join(path))
            };
            if !target.starts_with(out.path()) || !target.exists() {
                bad.push(format!("{name}: {r} (no such file)"));
                continue;
            }
            let checks_ids = target.extension().is_some_and(|x| x == "html")
                && !name.ends_with("print.html")
                && !fragment.is_empty();
            if checks_ids {
                let text = std::fs::read_to_string(&target).unwrap();
                if !text.contains(&format!("id=\"{fragment}\"")) {
                    bad.push(format!("{name}: {r} (no such anchor)"));
                }
            }
        }
    }
    bad.sort();
    bad.dedup();
    assert!(
        bad.is_empty(),
        "broken links in the built book:\n{}",
        bad.join("\n")
    );
}
