//! Assembly of the hot loops: objdump of this binary's `#[inline(never)]` kernels (baseline and
//! native builds), numba's `inspect_asm()`/`inspect_llvm()`, trimmed to the innermost loops, side by side.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One instruction of a disassembled function, jumps resolved to instruction indices.
#[derive(Clone, Debug)]
pub struct Insn {
    /// The instruction as objdump prints it (AT&T syntax, names demangled), without its address.
    pub text: String,
    /// For a jump into the same function, the index of its target instruction; `None` for
    /// anything else (including jumps out of the function).
    pub target: Option<usize>,
}

/// An innermost loop: the instructions from the jump target to the backward jump.
#[derive(Clone, Debug)]
pub struct Loop {
    /// The loop's instruction texts in address order, from the jump target to the back jump.
    pub insns: Vec<String>,
    /// Multiplies in the body (for the WMA loop: window elements per iteration).
    pub muls: usize,
    /// Instructions per multiply (per window element).
    /// `NaN` when the loop has no multiply.
    pub per_element: f64,
    /// Whether a jump in the loop leads to a bounds-check panic block: the check was not
    /// hoisted out of the loop, which costs a compare and branch per iteration.
    pub has_bounds_panic: bool,
}

fn mnemonic(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or("")
}

fn is_jump(m: &str) -> bool {
    m.starts_with('j')
}

/// Innermost loops of a function that contain an instruction whose mnemonic matches `hot`.
pub fn hot_loops(insns: &[Insn], hot: &[&str], panic_targets: &[usize]) -> Vec<Loop> {
    let mut loops: Vec<(usize, usize)> = insns
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.target.filter(|&t| t <= i).map(|t| (t, i)))
        .collect();
    loops.sort();
    loops.dedup();
    let inner: Vec<(usize, usize)> = loops
        .iter()
        .copied()
        .filter(|&(a, b)| {
            !loops
                .iter()
                .any(|&(c, d)| (c, d) != (a, b) && a <= c && d <= b)
        })
        .collect();
    inner
        .into_iter()
        .filter(|&(a, b)| {
            insns[a..=b]
                .iter()
                .any(|s| hot.contains(&mnemonic(&s.text)))
        })
        .map(|(a, b)| {
            let body = &insns[a..=b];
            let muls = body
                .iter()
                .filter(|s| {
                    let m = mnemonic(&s.text);
                    m.starts_with("mulsd")
                        || m.starts_with("vmulsd")
                        || m.starts_with("vmulpd")
                        || m.starts_with("mulpd")
                })
                .count();
            let has_bounds_panic = body
                .iter()
                .any(|s| s.target.is_some_and(|t| panic_targets.contains(&t)));
            Loop {
                insns: body.iter().map(|s| s.text.clone()).collect(),
                muls,
                per_element: if muls > 0 {
                    body.len() as f64 / muls as f64
                } else {
                    f64::NAN
                },
                has_bounds_panic,
            }
        })
        .collect()
}

/// A function's instructions and the indices of its bounds-check panic blocks.
pub type Disasm = (Vec<Insn>, Vec<usize>);

/// Disassembles `bin` and returns each function (demangled name -> instructions), plus for each
/// function the indices of instructions that call a bounds-check panic.
pub fn objdump(bin: &Path) -> Result<HashMap<String, Disasm>, String> {
    let out = Command::new("objdump")
        .args(["-d", "-C", "--no-show-raw-insn", "-M", "att"])
        .arg(bin)
        .output()
        .map_err(|e| format!("objdump: {e}"))?;
    if !out.status.success() {
        return Err(format!("objdump failed on {}", bin.display()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let got = got_symbols(bin);
    let mut funcs = HashMap::new();
    let mut name: Option<String> = None;
    let mut lines: Vec<(u64, String)> = Vec::new();
    let mut flush = |name: &mut Option<String>, lines: &mut Vec<(u64, String)>| {
        if let Some(n) = name.take() {
            let index: HashMap<u64, usize> = lines
                .iter()
                .enumerate()
                .map(|(i, (a, _))| (*a, i))
                .collect();
            let mut insns = Vec::new();
            let mut panics = Vec::new();
            for (i, (_, t)) in lines.iter().enumerate() {
                let m = mnemonic(t);
                let target = if is_jump(m) {
                    t.split_whitespace()
                        .nth(1)
                        .and_then(|a| u64::from_str_radix(a, 16).ok())
                        .and_then(|a| index.get(&a).copied())
                } else {
                    None
                };
                // The panic blocks sit after the return; a bounds check is a jump to a block
                // that calls `panic_bounds_check` (or the indirect call through the GOT to it).
                if m == "call" && (t.contains("panic") || t.contains("slice_index_fail")) {
                    panics.push(i);
                }
                insns.push(Insn {
                    text: t.clone(),
                    target,
                });
            }
            // A jump "to a panic" is a jump to any instruction in the block right before a panic call.
            let mut panic_blocks = Vec::new();
            for &p in &panics {
                let mut s = p;
                while s > 0
                    && !matches!(
                        mnemonic(&insns[s - 1].text),
                        "ret" | "jmp" | "int3" | "call"
                    )
                {
                    s -= 1;
                }
                panic_blocks.extend(s..=p);
            }
            funcs.insert(n, (insns, panic_blocks));
        }
        lines.clear();
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_suffix(">:") {
            flush(&mut name, &mut lines);
            name = rest.split_once(" <").map(|(_, n)| n.to_string());
        } else if let Some((addr, insn)) = line.trim_start().split_once(":\t")
            && let Ok(a) = u64::from_str_radix(addr.trim(), 16)
        {
            // Indirect calls go through the GOT; name their callee so panics are visible.
            let callee = insn
                .split_once("# ")
                .and_then(|(_, c)| {
                    u64::from_str_radix(c.split_whitespace().next().unwrap_or(""), 16).ok()
                })
                .and_then(|slot| got.get(&slot));
            let mut insn = insn
                .split(" <")
                .next()
                .unwrap_or(insn)
                .split(" #")
                .next()
                .unwrap_or(insn)
                .trim()
                .to_string();
            if let (true, Some(c)) = (insn.starts_with("call"), callee) {
                insn = format!("{insn}  # -> {c}");
            }
            lines.push((a, insn));
        }
    }
    flush(&mut name, &mut lines);
    Ok(funcs)
}

/// GOT slot address -> demangled name of the function it points at (PIE `R_X86_64_RELATIVE`).
fn got_symbols(bin: &Path) -> HashMap<u64, String> {
    let run = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .arg(bin)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    let syms: HashMap<u64, String> = run("nm", &["-C"])
        .lines()
        .filter_map(|l| {
            let (addr, rest) = l.split_once(' ')?;
            let (_, name) = rest.split_once(' ')?;
            Some((u64::from_str_radix(addr, 16).ok()?, name.to_string()))
        })
        .collect();
    run("readelf", &["-rW"])
        .lines()
        .filter(|l| l.contains("R_X86_64_RELATIVE"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let slot = u64::from_str_radix(f.first()?, 16).ok()?;
            let target = u64::from_str_radix(f.last()?, 16).ok()?;
            Some((slot, syms.get(&target)?.clone()))
        })
        .collect()
}

/// Parses one function of LLVM's textual assembly (numba's `inspect_asm`) into instructions.
pub fn parse_llvm_asm(text: &str) -> Vec<Insn> {
    let mut labels = HashMap::new();
    let mut raw: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(l) = t.strip_suffix(':') {
            labels.insert(l.to_string(), raw.len());
            continue;
        }
        if t.starts_with('.') {
            continue;
        }
        raw.push(t.split('#').next().unwrap_or(t).trim().replace('\t', " "));
    }
    raw.iter()
        .map(|t| {
            let m = mnemonic(t);
            let target = if is_jump(m) {
                t.split_whitespace()
                    .nth(1)
                    .and_then(|l| labels.get(l).copied())
            } else {
                None
            };
            Insn {
                text: t.clone(),
                target,
            }
        })
        .collect()
}

/// The LLVM IR basic blocks that contain `fadd` (numba's inner WMA loop), verbatim.
pub fn ir_hot_blocks(ir: &str) -> String {
    let mut out = String::new();
    for block in ir.split("\n\n") {
        if block.contains("fadd double") && block.contains("phi ") {
            out.push_str(block.trim_matches('\n'));
            out.push_str("\n\n");
        }
    }
    out
}

/// Summary of one function's hot loops, for the report.
#[derive(Clone, Debug)]
pub struct FuncAsm {
    /// The build it came from, e.g. `rust x86-64 baseline`, `rust target-cpu=native` or `numba`.
    pub origin: String,
    /// The demangled function name (for numba, `numba <function>`).
    pub name: String,
    /// Its innermost hot loops, in address order; empty when none matched.
    pub loops: Vec<Loop>,
}

impl FuncAsm {
    /// The loop with the most multiplies (the unrolled main body), if any.
    pub fn main_loop(&self) -> Option<&Loop> {
        self.loops.iter().max_by_key(|l| (l.muls, l.insns.len()))
    }

    /// The loops as an annotated `.s` text: a header with the function's origin and name, then
    /// per loop its instruction and multiply counts, instructions per element and bounds check.
    pub fn render(&self) -> String {
        let mut s = format!("# {} — {}\n", self.origin, self.name);
        for (i, l) in self.loops.iter().enumerate() {
            let _ = writeln!(
                s,
                "# innermost loop {}: {} instructions, {} multiplies, {:.2} instructions/element, bounds-check branch in loop: {}",
                i + 1,
                l.insns.len(),
                l.muls,
                l.per_element,
                if l.has_bounds_panic { "YES" } else { "no" }
            );
            for t in &l.insns {
                let _ = writeln!(s, "    {t}");
            }
        }
        s
    }
}

/// The reference WMA's symbol in the disassembly: its module path, not the crate-root path the
/// kernel re-exports it under (`hullsweep_kernel::wma`).
pub const REFERENCE_WMA: &str = "hullsweep_kernel::reference::wma";

const FP_HOT: &[&str] = &["addsd", "vaddsd", "addpd", "vaddpd"];
const EVENT_HOT: &[&str] = &["ucomisd", "vucomisd"];

/// Rust functions of interest in a binary: every lab kernel, the kernel crate's `wma` and
/// `backtest`, and any variant function whose name mentions wma, backtest or sweep.
fn wanted(name: &str) -> Option<&'static [&'static str]> {
    let lname = name
        .split_once("::")
        .map(|(_, r)| r)
        .unwrap_or(name)
        .to_ascii_lowercase();
    let is_ours = name.starts_with("hullsweep_profiling::kernels::wma")
        || name.starts_with("hullsweep_kernel::")
        || name.starts_with("hullsweep_variants::");
    if !is_ours || name.contains("{{closure}}") && !name.starts_with("hullsweep_variants::") {
        return None;
    }
    if lname.contains("backtest") {
        Some(EVENT_HOT)
    } else if lname.contains("wma")
        || lname.contains("hma")
        || lname.contains("sweep")
        || lname.contains("combo")
    {
        Some(FP_HOT)
    } else {
        None
    }
}

/// Dumps and trims one Rust binary; full functions go to `full_dir`, trimmed loops are returned.
pub fn rust_functions(bin: &Path, origin: &str, full_dir: &Path) -> Result<Vec<FuncAsm>, String> {
    let funcs = objdump(bin)?;
    std::fs::create_dir_all(full_dir).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut names: Vec<&String> = funcs.keys().collect();
    names.sort();
    for name in names {
        let Some(hot) = wanted(name) else { continue };
        let (insns, panics) = &funcs[name];
        let full: String = insns.iter().map(|i| format!("{}\n", i.text)).collect();
        let file = sanitize(name);
        std::fs::write(full_dir.join(format!("{file}.s")), full).map_err(|e| e.to_string())?;
        let loops = hot_loops(insns, hot, panics);
        if !loops.is_empty() {
            out.push(FuncAsm {
                origin: origin.into(),
                name: name.clone(),
                loops,
            });
        }
    }
    Ok(out)
}

/// A file-name-safe form of a symbol.
pub fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.replace("__", "_")
        .trim_matches('_')
        .chars()
        .take(80)
        .collect()
}

/// Two texts as two columns, for reading the Rust and numba loops side by side.
pub fn side_by_side(
    left_title: &str,
    left: &str,
    right_title: &str,
    right: &str,
    width: usize,
) -> String {
    let l: Vec<&str> = left.lines().collect();
    let r: Vec<&str> = right.lines().collect();
    let mut s = format!(
        "{:<width$} | {}\n{:-<width$}-+-{:-<width$}\n",
        left_title, right_title, "", ""
    );
    for i in 0..l.len().max(r.len()) {
        let a: String = l
            .get(i)
            .copied()
            .unwrap_or("")
            .chars()
            .take(width)
            .collect();
        let b = r.get(i).copied().unwrap_or("");
        let _ = writeln!(s, "{a:<width$} | {b}");
    }
    s
}

/// numba's dumps (written by the worker) for one function, trimmed.
pub fn numba_function(dir: &Path, name: &str) -> Result<(FuncAsm, String), String> {
    let asm = std::fs::read_to_string(dir.join(format!("numba-{name}.s")))
        .map_err(|e| format!("numba asm for {name}: {e}"))?;
    let ir = std::fs::read_to_string(dir.join(format!("numba-{name}.ll")))
        .map_err(|e| format!("numba IR for {name}: {e}"))?;
    let insns = parse_llvm_asm(&asm);
    let hot = if name == "backtest" {
        EVENT_HOT
    } else {
        FP_HOT
    };
    let loops = hot_loops(&insns, hot, &[]);
    Ok((
        FuncAsm {
            origin: "numba".into(),
            name: format!("numba {name}"),
            loops,
        },
        ir_hot_blocks(&ir),
    ))
}

/// Everything the `asm` command writes, for the report to quote.
pub struct AsmSet {
    /// The Rust kernels of the baseline build, then of the native build when it was built.
    pub rust: Vec<FuncAsm>,
    /// numba's `wma` and `backtest`; empty when no numba worker was given.
    pub numba: Vec<FuncAsm>,
    /// `(function, LLVM IR hot blocks)` of numba's `wma` and `backtest` (see [`ir_hot_blocks`]).
    pub numba_ir: Vec<(String, String)>,
    /// Where the untrimmed dumps went (`target/prof-asm`, one folder per build), too big to commit.
    pub full_dir: PathBuf,
}

/// Dumps the base build (this binary), the native build when it exists, and numba (through a
/// worker) into `out`; returns the trimmed loops.
pub fn collect(out: &Path, numba: Option<&mut crate::timing::Worker>) -> Result<AsmSet, String> {
    let full_dir = crate::workspace_root().join("target/prof-asm");
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut rust = rust_functions(&me, "rust x86-64 baseline", &full_dir.join("base"))?;
    let native = crate::workspace_root().join("target/prof-native/release/profiling");
    if native.exists() {
        rust.extend(rust_functions(
            &native,
            "rust target-cpu=native",
            &full_dir.join("native"),
        )?);
    }
    let mut numba_funcs = Vec::new();
    let mut numba_ir = Vec::new();
    if let Some(w) = numba {
        let nd = full_dir.join("numba");
        let reply = w.call(&format!("asm {}", nd.display()))?;
        if reply != "ok" {
            return Err(format!("numba asm dump: {reply}"));
        }
        for name in ["wma", "backtest"] {
            let (f, ir) = numba_function(&nd, name)?;
            numba_funcs.push(f);
            numba_ir.push((name.to_string(), ir));
        }
    }
    for f in rust.iter().chain(&numba_funcs) {
        let file = format!("{}--{}.s", sanitize(&f.origin), sanitize(&f.name));
        std::fs::write(out.join(file), f.render()).map_err(|e| e.to_string())?;
    }
    for (name, ir) in &numba_ir {
        std::fs::write(out.join(format!("numba--{name}-hot-blocks.ll")), ir)
            .map_err(|e| e.to_string())?;
    }
    // The headline comparison: the reference WMA loop next to numba's.
    let pick = |origin: &str, name: &str| {
        rust.iter()
            .find(|f| f.origin == origin && f.name == name)
            .map(FuncAsm::render)
            .unwrap_or_default()
    };
    if let Some(nw) = numba_funcs.iter().find(|f| f.name == "numba wma") {
        let r = pick("rust x86-64 baseline", REFERENCE_WMA);
        std::fs::write(
            out.join("side-by-side--wma-reference-vs-numba.txt"),
            side_by_side(
                "rust reference wma (x86-64 baseline)",
                &r,
                "numba wma (host CPU)",
                &nw.render(),
                78,
            ),
        )
        .map_err(|e| e.to_string())?;
        let u = pick(
            "rust x86-64 baseline",
            "hullsweep_profiling::kernels::wma_unchecked",
        );
        std::fs::write(
            out.join("side-by-side--wma-unchecked-vs-numba.txt"),
            side_by_side(
                "rust get_unchecked wma (x86-64 baseline)",
                &u,
                "numba wma (host CPU)",
                &nw.render(),
                78,
            ),
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(AsmSet {
        rust,
        numba: numba_funcs,
        numba_ir,
        full_dir,
    })
}

/// `profiling asm`: dump and trim, numba included when the venv is there.
pub fn command(out: &str) -> Result<(), String> {
    let scratch = std::env::temp_dir().join(format!("hullsweep-asm-{}", std::process::id()));
    let mut lab = crate::hypotheses::Lab::new(256, "6:20:2", 1, &scratch)?;
    let nb = match lab.numba() {
        Ok(i) => Some(i),
        Err(e) => {
            eprintln!("numba assembly skipped: {e}");
            None
        }
    };
    let set = collect(Path::new(out), nb.map(|i| &mut lab.workers[i]))?;
    for f in set.rust.iter().chain(&set.numba) {
        if let Some(l) = f.main_loop() {
            println!(
                "{:<26} {:<60} {:>3} insns {:>2} muls {:>5.2} insns/elem bounds-check {}",
                f.origin,
                f.name,
                l.insns.len(),
                l.muls,
                l.per_element,
                l.has_bounds_panic
            );
        }
    }
    println!("full dumps under {}", set.full_dir.display());
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
