"""mdBook preprocessor (book.toml): the book's links to repository files that are not part of it.

Chapters under src/ sit at the same relative path as the repository files they include
(src/docs/kernel.md includes docs/kernel.md), so a relative link in an included doc lands where
it lands in the repository. A link to a chapter or to a file under src/ (an image) is kept. A link
to a repository file the book does not hold (a source file, a report that is not a chapter)
cannot work in the HTML book, so it becomes its text, which names the file. A link that resolves
nowhere is an error: the build fails and names it. tests/book.rs applies the same rule to the
Markdown, so `cargo test` catches a broken link without mdBook.

Protocol: `repo_links.py supports RENDERER` exits 0; `repo_links.py` reads [context, book] as JSON
on stdin and writes the book back on stdout.
"""

import json
import os
import posixpath
import re
import sys

# [text](target) or ![alt](target): text may hold one level of brackets; the target has no spaces.
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^()\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def chapters(items):
    """Every chapter dict of the book, depth first."""
    for item in items:
        if isinstance(item, dict) and "Chapter" in item:
            yield item["Chapter"]
            yield from chapters(item["Chapter"].get("sub_items", []))


def classify(target, chapter_dir, src, repo, chapter_paths):
    """'keep', 'unlink' or 'broken' for one link target of a chapter in chapter_dir (under src)."""
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return "keep"
    path = target.split("#", 1)[0].split("?", 1)[0]
    rel = posixpath.normpath(posixpath.join(chapter_dir, path))
    if rel.endswith(".md"):
        if rel in chapter_paths:
            return "keep"
    elif not rel.startswith("..") and os.path.exists(os.path.join(src, rel)):
        return "keep"
    if not rel.startswith("..") and os.path.exists(os.path.join(repo, rel)):
        return "unlink"
    return "broken"


def rewrite(content, chapter_dir, src, repo, chapter_paths, broken, name):
    out, fenced = [], False
    for line in content.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        if not fenced:
            def one(m):
                kind = classify(m.group(3), chapter_dir, src, repo, chapter_paths)
                if kind == "broken" or (kind == "unlink" and m.group(1)):
                    broken.append(f"{name}: {m.group(0)}")
                    return m.group(0)
                return m.group(2) if kind == "unlink" else m.group(0)
            line = LINK.sub(one, line)
        out.append(line)
    return "\n".join(out)


def main():
    if len(sys.argv) > 1:
        sys.exit(0 if sys.argv[1] == "supports" else 2)
    context, book = json.load(sys.stdin)
    src = os.path.join(context["root"], context["config"]["book"].get("src", "src"))
    repo = os.path.dirname(os.path.abspath(context["root"]))
    found = list(chapters(book["items"]))
    chapter_paths = {c["source_path"] for c in found if c.get("source_path")}
    broken = []
    for c in found:
        if c.get("source_path"):
            c["content"] = rewrite(c["content"], posixpath.dirname(c["source_path"]), src, repo,
                                   chapter_paths, broken, c["source_path"])
    if broken:
        print("repo_links: links that resolve to no chapter, no file of the book and no file of "
              "the repository (an image must be under book/src/):", file=sys.stderr)
        for b in broken:
            print("  " + b, file=sys.stderr)
        sys.exit(1)
    json.dump(book, sys.stdout)


if __name__ == "__main__":
    main()
