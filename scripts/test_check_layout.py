"""Tests for scripts/check-layout on small fake trees. Run: python3 -m pytest scripts/test_check_layout.py"""
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent / "check-layout"
_loader = importlib.machinery.SourceFileLoader("check_layout", str(SCRIPT))
_spec = importlib.util.spec_from_loader("check_layout", _loader)
cl = importlib.util.module_from_spec(_spec)
_loader.exec_module(cl)


def tree(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"))
    return sorted(files)


def cycles(root, files):
    found, errors = cl.find_cycles(str(root), files)
    assert errors == []
    return [(kind, comp, {(a, b): ex for a, b, ex in edges}) for kind, _, comp, edges in found]


def edges_of(root, files, crate="src/lib.rs"):
    return dict(cl.rust_graphs(str(root), files))[crate]


CARGO = {"Cargo.toml": '[package]\nname = "fake"\nversion = "0.1.0"\n'}


def test_two_file_cycle_via_use_super_and_child_call(tmp_path):
    files = tree(tmp_path, CARGO | {
        "src/lib.rs": """
            mod child;
            pub struct X;
            pub fn run() { child::go(); }
        """,
        "src/child.rs": """
            use super::X;
            pub fn go() -> Option<X> { None }
        """,
    })
    [(kind, comp, edges)] = cycles(tmp_path, files)
    assert kind == "rust"
    assert comp == ["src/child.rs", "src/lib.rs"]
    assert edges[("src/lib.rs", "src/child.rs")].startswith("child::go")
    assert edges[("src/child.rs", "src/lib.rs")].startswith("super::X")


def test_reexport_cycle_through_root_pub_use(tmp_path):
    # a and b never name each other's module: only following the root's re-exports finds the cycle.
    files = tree(tmp_path, CARGO | {
        "src/lib.rs": """
            mod a;
            mod b;
            pub use a::Foo;
            pub(crate) use b::*;
        """,
        "src/a.rs": """
            use crate::Bar;
            pub struct Foo(pub Bar);
        """,
        "src/b.rs": """
            pub struct Bar;
            pub fn make(f: crate::Foo) -> Bar { f.0 }
        """,
    })
    [(_, comp, edges)] = cycles(tmp_path, files)
    assert comp == ["src/a.rs", "src/b.rs"]   # lib.rs depends on both but nothing depends on it
    assert set(edges) == {("src/a.rs", "src/b.rs"), ("src/b.rs", "src/a.rs")}
    assert edges[("src/a.rs", "src/b.rs")].startswith("crate::Bar")


def test_acyclic_tree_ignores_comments_strings_macros_and_mod_decls(tmp_path):
    files = tree(tmp_path, CARGO | {
        "src/lib.rs": """
            pub mod a;
            pub mod b;
            pub mod c;
            pub use c::Z;
        """,
        "src/a.rs": """
            //! Docs may say `crate::c::Z` or use crate::c::Z; without it counting.
            /* crate::c::Z in a /* nested */ comment */
            pub struct X;
            pub const S: &str = "crate::c::Z";
            pub const R: &str = r#"use crate::b::Y; "quoted" crate::c::Z"#;
            pub const C: char = '"';
            pub fn f<'a>(s: &'a str) -> &'a str { s }
            macro_rules! m { ($t:ident) => { $t::new() }; }
        """,
        "src/b.rs": """
            use crate::a::{self, X};
            pub struct Y(pub X);
            pub fn g() -> &'static str { a::S }
        """,
        "src/c/mod.rs": """
            mod inner;
            pub struct Z(pub crate::b::Y);
            #[cfg(test)]
            mod tests {
                use super::*;
                #[test]
                fn t() { let _ = Z(crate::b::Y(crate::a::X)); }
            }
        """,
        "src/c/inner.rs": "pub fn h() -> crate::a::X { crate::a::X }\n",
    })
    assert cycles(tmp_path, files) == []
    edges = edges_of(tmp_path, files)
    assert set(edges) == {
        ("src/lib.rs", "src/c/mod.rs"), ("src/b.rs", "src/a.rs"),
        ("src/c/mod.rs", "src/b.rs"), ("src/c/mod.rs", "src/a.rs"), ("src/c/inner.rs", "src/a.rs"),
    }
    assert ("src/c/mod.rs", "src/c/inner.rs") not in edges   # `mod inner;` alone is no dependency


def test_glob_from_separate_file_counts_but_inline_test_module_does_not(tmp_path):
    files = tree(tmp_path, CARGO | {
        "src/lib.rs": "pub mod report;\n",
        "src/report/mod.rs": """
            mod counts;
            pub struct Inputs;
            pub fn render() { counts::render(&Inputs) }
            #[cfg(test)]
            mod tests { use super::*; fn t() { let _ = Inputs; } }
        """,
        "src/report/counts.rs": """
            use super::*;
            pub fn render(_: &Inputs) { let counts = 1; let _ = counts; }
        """,
    })
    [(_, comp, edges)] = cycles(tmp_path, files)
    assert comp == ["src/report/counts.rs", "src/report/mod.rs"]
    assert edges[("src/report/counts.rs", "src/report/mod.rs")].startswith("super::* (Inputs)")


def test_path_attribute_and_test_crate_roots(tmp_path):
    files = tree(tmp_path, CARGO | {
        "src/lib.rs": "pub fn lib() {}\n",
        "shared/data.rs": "pub fn load() -> crate::common::Helper { crate::common::Helper }\n",
        "tests/it.rs": """
            mod common;
            #[path = "../shared/data.rs"]
            mod data;
            fn t() { data::load(); }
        """,
        "tests/common/mod.rs": "pub struct Helper;\npub fn x() { crate::data::load(); }\n",
    })
    [(_, comp, _)] = cycles(tmp_path, files)
    assert comp == ["shared/data.rs", "tests/common/mod.rs"]
    assert ("tests/it.rs", "shared/data.rs") in edges_of(tmp_path, files, "tests/it.rs")


def test_python_cycles_in_package_and_sibling_scripts(tmp_path):
    files = tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from .b import f\n",
        "pkg/b.py": "def f():\n    from pkg import a\n",
        "tools/x.py": "import y\n",
        "tools/y.py": "from x import z\n",
        "tools/ok.py": "import os\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import ok2\n",
        "tools/ok2.py": "import ok\n",
    })
    found = cycles(tmp_path, files)
    assert [(k, c) for k, c, _ in found] == [("python", ["pkg/a.py", "pkg/b.py"]),
                                           ("python", ["tools/x.py", "tools/y.py"])]
    assert found[0][2][("pkg/a.py", "pkg/b.py")].startswith("from .b import f")


def test_line_limit(tmp_path):
    files = tree(tmp_path, {
        "src/big.rs": "//\n" * 601,
        "src/ok.rs": "//\n" * 600,
        "tool": "#!/usr/bin/env python3\n" + "pass\n" * 700,
        "notes.md": "x\n" * 900,
    })
    assert cl.long_files(str(tmp_path), files) == [("src/big.rs", 601), ("tool", 701)]
    out = []
    assert cl.check(str(tmp_path), files, out=out.append) == 1
    assert out == ["src/big.rs: 601 lines (limit 600)", "tool: 701 lines (limit 600)"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_command_line(tmp_path):
    tree(tmp_path, CARGO | {"src/lib.rs": "mod a;\npub struct X;\n", "src/a.rs": "use crate::X;\n",
                            ".gitignore": "/target\n", "target/huge.rs": "//\n" * 700})
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts" / "check-layout")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    run = lambda: subprocess.run([sys.executable, str(tmp_path / "scripts" / "check-layout")],
                                 cwd="/", capture_output=True, text=True)
    ok = run()
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("layout: 3 source files, none over 600 lines, no import cycles")
    (tmp_path / "src/lib.rs").write_text("mod a;\npub struct X;\npub fn f() { a::g() }\n")
    (tmp_path / "src/a.rs").write_text("use crate::X;\npub fn g() {}\n")
    bad = run()
    assert bad.returncode == 1
    assert bad.stdout.strip().splitlines() == [
        "import cycle (crate src/lib.rs, 2 files: src/a.rs, src/lib.rs): "
        "src/a.rs -> src/lib.rs (crate::X at line 1); src/lib.rs -> src/a.rs (a::g at line 3)"]
