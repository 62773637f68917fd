//! Section 5b, the study's CPU: the WMA hot loops as Rust and numba compile them for an Apple core
//! (aarch64, `apple-m2`), side by side, with llvm-mca's throughput: a static prediction, no timing.
//!
//! Nothing here can run on an Apple core. Rust's side is the real kernel source built by Debian's
//! aarch64 rustc (`scripts/test-aarch64` installs it); numba's side is numba's own LLVM IR run
//! through numba's module pipelines with an aarch64 target machine by llvmlite
//! (`py/numba_aarch64.py`); llvm-mca estimates each loop's cycles with the Apple model it has.

use super::*;
use std::collections::HashMap;

/// The CPU names to try, best first: LLVM spells the M2 `apple-m2` (an alias of its A15 core).
const CPUS: &[&str] = &["apple-m2", "apple-a15", "apple-m1"];
const TRIPLE: &str = "aarch64-unknown-linux-gnu";
/// The study's measured Rust reference / numba ratio on its M2 Max.
const STUDY_RATIO: f64 = 1.13;

/// What this section measured (statically) and where its files are.
pub(super) struct AppleCodegen {
    cpu: String,
    rustc: Option<String>,
    numba: Option<String>,
    mca: Option<(String, String)>,
    loops: Vec<AppleLoop>,
    notes: Vec<String>,
}

/// One side's WMA hot loop for the Apple core.
struct AppleLoop {
    who: &'static str,
    file: String,
    insns: Vec<String>,
    /// Window elements per iteration: the adds into the running sum (a `.2d` add counts two).
    elements: usize,
    /// Of those, the adds that each wait for the previous one (one accumulator register).
    chain: usize,
    check_in_loop: bool,
    /// A bounds check elsewhere in the function (the remainder loop, the setup).
    check_in_function: bool,
    conversion: String,
    mca: Option<Mca>,
}

/// llvm-mca's reading of one loop body.
struct Mca {
    /// Resource-bound cycles per iteration (no dependencies).
    rthroughput: f64,
    /// Simulated cycles per iteration over many iterations (loop-carried dependencies included).
    cycles: f64,
    fadd: Option<u32>,
    fmul: Option<u32>,
}

impl AppleLoop {
    fn cycles_per_element(&self) -> Option<f64> {
        self.mca.as_ref().map(|m| m.cycles / self.elements as f64)
    }

    /// Whether the serial add chain, not the resources, sets the loop's pace in the model.
    fn chain_bound(&self) -> Option<bool> {
        let m = self.mca.as_ref()?;
        let chain = self.chain as f64 * f64::from(m.fadd?);
        Some(chain >= m.rthroughput && (m.cycles - chain).abs() <= 0.1 * chain)
    }
}

fn run(cmd: &mut Command) -> Result<(String, String), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    if out.status.success() {
        Ok((o, e))
    } else {
        Err(format!("{cmd:?} failed: {}", e.trim()))
    }
}

/// Debian's rustc (it carries an aarch64 standard library), or `HULLSWEEP_AARCH64_RUSTC`.
fn aarch64_rustc() -> Result<PathBuf, String> {
    let rustc = std::env::var_os("HULLSWEEP_AARCH64_RUSTC")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/rustc"));
    let (libdir, _) =
        run(Command::new(&rustc).args(["--print", "target-libdir", "--target", TRIPLE])).map_err(
            |e| format!("no aarch64 rustc ({e}); scripts/test-aarch64 installs Debian's"),
        )?;
    let has_core = std::fs::read_dir(libdir.trim())
        .map(|d| {
            d.flatten()
                .any(|f| f.file_name().to_string_lossy().starts_with("libcore-"))
        })
        .unwrap_or(false);
    if has_core {
        Ok(rustc)
    } else {
        Err(format!(
            "{} has no aarch64 standard library: install libstd-rust-web-dev:arm64 (scripts/test-aarch64 does)",
            rustc.display()
        ))
    }
}

/// The newest llvm-mca on PATH that knows `cpu`, with its version line.
fn llvm_mca(cpu: &str) -> Option<(String, String)> {
    let names = (19..=30).rev().map(|v| format!("llvm-mca-{v}"));
    for name in names.chain(["llvm-mca".to_string()]) {
        let Ok((help, help_err)) =
            run(Command::new(&name).args(["-mtriple=aarch64", "-mcpu=help"]))
        else {
            continue;
        };
        if !format!("{help}{help_err}").contains(cpu) {
            continue;
        }
        let version = run(Command::new(&name).arg("--version"))
            .map(|(o, _)| {
                o.lines()
                    .find(|l| l.contains("version"))
                    .unwrap_or("")
                    .trim()
                    .to_string()
            })
            .unwrap_or_default();
        return Some((name, version));
    }
    None
}

/// One function of LLVM's aarch64 assembly text: its instructions, branch targets resolved, and
/// the blocks that end in a bounds-check panic (index out of range; asserts are not counted).
struct Func {
    insns: Vec<(String, Option<usize>)>,
    panic_blocks: Vec<(usize, usize)>,
}

/// The function whose symbol starts with `prefix`, from `llc`-style assembly.
fn function(text: &str, prefix: &str) -> Option<Func> {
    let mut lines = text
        .lines()
        .skip_while(|l| !(l.starts_with(prefix) && l.ends_with(':')));
    lines.next()?;
    let mut labels = HashMap::new();
    let mut raw: Vec<String> = Vec::new();
    let mut block_starts = vec![0];
    for line in lines {
        let t = line.trim();
        if t.starts_with(".Lfunc_end") || (!line.starts_with(['\t', ' ', '.']) && t.ends_with(':'))
        {
            break;
        }
        if let Some(l) = t.strip_suffix(':') {
            labels.insert(l.to_string(), raw.len());
            block_starts.push(raw.len());
            continue;
        }
        if t.is_empty() || t.starts_with('.') || t.starts_with("//") {
            continue;
        }
        raw.push(t.split("//").next().unwrap_or(t).trim().replace('\t', " "));
    }
    let is_branch =
        |m: &str| matches!(m, "b" | "cbz" | "cbnz" | "tbz" | "tbnz") || m.starts_with("b.");
    let insns: Vec<(String, Option<usize>)> = raw
        .iter()
        .map(|t| {
            let m = t.split_whitespace().next().unwrap_or("");
            let target = is_branch(m)
                .then(|| {
                    t.rsplit([' ', ','])
                        .next()
                        .and_then(|l| labels.get(l).copied())
                })
                .flatten();
            (t.clone(), target)
        })
        .collect();
    let panic_blocks = insns
        .iter()
        .enumerate()
        .filter(|(_, (t, _))| {
            t.starts_with("bl ") && (t.contains("panic_bounds_check") || t.contains("slice_index"))
        })
        .map(|(i, _)| {
            let start = block_starts
                .iter()
                .copied()
                .filter(|&s| s <= i)
                .max()
                .unwrap_or(0);
            (start, i)
        })
        .collect();
    Some(Func {
        insns,
        panic_blocks,
    })
}

impl Func {
    fn branches_to_panic(&self, range: std::ops::RangeInclusive<usize>) -> bool {
        self.insns[range].iter().any(|(_, t)| {
            t.is_some_and(|t| self.panic_blocks.iter().any(|&(a, b)| a <= t && t <= b))
        })
    }

    /// The innermost loop with the most FP adds (the unrolled WMA body).
    fn hot_loop(&self) -> Option<(usize, usize)> {
        let loops: Vec<(usize, usize)> = self
            .insns
            .iter()
            .enumerate()
            .filter_map(|(i, (_, t))| t.filter(|&t| t <= i).map(|t| (t, i)))
            .collect();
        loops
            .iter()
            .copied()
            .filter(|&(a, b)| {
                !loops
                    .iter()
                    .any(|&(c, d)| (c, d) != (a, b) && a <= c && d <= b)
            })
            .max_by_key(|&(a, b)| {
                self.insns[a..=b]
                    .iter()
                    .filter(|(t, _)| t.starts_with("fadd "))
                    .count()
            })
    }
}

fn operands(t: &str) -> Vec<&str> {
    t.split_once(' ')
        .map(|(_, ops)| ops.split(',').map(str::trim).collect())
        .unwrap_or_default()
}

/// Elements per iteration, the serial part of the add chain, and the weight conversion.
fn shape(body: &[String]) -> (usize, usize, String) {
    let (mut elements, mut chain) = (0, 0);
    for t in body.iter().filter(|t| t.starts_with("fadd ")) {
        let ops = operands(t);
        let lanes = if ops.first().is_some_and(|o| o.ends_with(".2d")) {
            2
        } else {
            1
        };
        elements += lanes;
        // `fadd d6, d6, x`: the destination is a source, so each waits for the previous one.
        if ops.len() == 3 && (ops[0] == ops[1] || ops[0] == ops[2]) {
            chain += 1;
        }
    }
    let mut conv = Vec::new();
    for m in ["ucvtf", "scvtf"] {
        let (vector, scalar): (Vec<&String>, Vec<&String>) = body
            .iter()
            .filter(|t| t.starts_with(&format!("{m} ")))
            .partition(|t| t.contains(".2d"));
        if !vector.is_empty() {
            conv.push(format!("{}x `{m}` .2d (2 weights each)", vector.len()));
        }
        if !scalar.is_empty() {
            conv.push(format!("{}x `{m}` scalar", scalar.len()));
        }
    }
    if conv.is_empty() {
        conv.push("none in the loop (weights loaded or counted in FP)".into());
    }
    (elements, chain, conv.join(", "))
}

/// llvm-mca on one loop body: resource throughput, simulated cycles, FADD/FMUL latencies.
fn mca(tool: &str, cpu: &str, body: &[String], file: &Path) -> Result<(Mca, String), String> {
    std::fs::write(file, body.join("\n") + "\n").map_err(|e| e.to_string())?;
    let (out, _) = run(Command::new(tool)
        .args([
            "-mtriple=aarch64",
            &format!("-mcpu={cpu}"),
            "-iterations=1000",
            "-instruction-info",
        ])
        .arg(file))?;
    let field = |k: &str| {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(k))
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    let (Some(rthroughput), Some(total), Some(iterations)) = (
        field("Block RThroughput:"),
        field("Total Cycles:"),
        field("Iterations:"),
    ) else {
        return Err(format!("{tool}: unexpected output"));
    };
    // Instruction info rows: uops, latency, rthroughput, flags..., then the instruction.
    let latency = |mnemonic: &str, scalar: bool| {
        out.lines().find_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let at = cols.iter().position(|c| *c == mnemonic)?;
            let first_op = cols.get(at + 1)?;
            (at >= 3 && first_op.starts_with('d') == scalar).then(|| cols[1].parse().ok())?
        })
    };
    let m = Mca {
        rthroughput,
        cycles: total / iterations,
        fadd: latency("fadd", true),
        fmul: latency("fmul", false).or_else(|| latency("fmul", true)),
    };
    Ok((m, out))
}

/// Builds both sides for the Apple core and reads each hot loop; what cannot be done is noted.
pub(super) fn collect(out: &Path, scratch: &Path) -> AppleCodegen {
    let mut a = AppleCodegen {
        cpu: CPUS[0].into(),
        rustc: None,
        numba: None,
        mca: None,
        loops: Vec::new(),
        notes: Vec::new(),
    };
    let dir = scratch.join("apple");
    let asm_dir = out.join("asm");
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|_| std::fs::create_dir_all(&asm_dir)) {
        a.notes.push(format!("no scratch folder: {e}"));
        return a;
    }
    let root = crate::workspace_root();
    let mut sources: Vec<(&'static str, String, &'static str)> = Vec::new();
    match aarch64_rustc() {
        Err(e) => a.notes.push(format!("the Rust side was not built: {e}")),
        Ok(rustc) => {
            // The first CPU name this rustc accepts without a warning.
            let cpus =
                run(Command::new(&rustc).args(["--print", "target-cpus", "--target", TRIPLE]))
                    .map(|(o, _)| o)
                    .unwrap_or_default();
            let accepted = |c: &str| {
                let probe = dir.join("probe.rs");
                std::fs::write(&probe, "").is_ok()
                    && run(Command::new(&rustc)
                        .args([
                            "--crate-type",
                            "lib",
                            "--emit",
                            "metadata",
                            "--target",
                            TRIPLE,
                        ])
                        .arg(format!("-Ctarget-cpu={c}"))
                        .arg("--out-dir")
                        .arg(&dir)
                        .arg(&probe))
                    .is_ok_and(|(_, err)| !err.contains("not a recognized"))
            };
            if let Some(c) = CPUS.iter().find(|c| cpus.contains(**c) || accepted(c)) {
                a.cpu = c.to_string();
            }
            a.rustc = run(Command::new(&rustc).arg("-vV")).ok().map(|(o, _)| {
                let get = |k: &str| {
                    o.lines()
                        .find_map(|l| l.strip_prefix(k))
                        .unwrap_or("?")
                        .trim()
                        .to_string()
                };
                format!("rustc {} (LLVM {})", get("release:"), get("LLVM version:"))
            });
            let common = |cmd: &mut Command| {
                cmd.args([
                    "--edition",
                    "2024",
                    "-C",
                    "opt-level=3",
                    "-C",
                    "debuginfo=0",
                    "--target",
                    TRIPLE,
                ])
                .arg(format!("-Ctarget-cpu={}", a.cpu));
            };
            let kernel = root.join("kernel/src/lib.rs");
            let lab = root.join("profiling/src/kernels.rs");
            let mut k = Command::new(&rustc);
            common(&mut k);
            k.args([
                "--crate-type",
                "lib",
                "--crate-name",
                "hullsweep_kernel",
                "--emit",
            ])
            .arg(format!(
                "asm={},link={}",
                dir.join("kernel.s").display(),
                dir.join("libhullsweep_kernel.rlib").display()
            ))
            .arg(&kernel);
            let mut l = Command::new(&rustc);
            common(&mut l);
            l.args([
                "--crate-type",
                "lib",
                "--crate-name",
                "lab_kernels",
                "--extern",
            ])
            .arg(format!(
                "hullsweep_kernel={}",
                dir.join("libhullsweep_kernel.rlib").display()
            ))
            .arg("--emit")
            .arg(format!("asm={}", dir.join("lab.s").display()))
            .arg(&lab);
            match run(&mut k).and_then(|_| run(&mut l)) {
                Ok(_) => {
                    sources.push((
                        "Rust reference `hullsweep_kernel::wma`",
                        "kernel.s".into(),
                        "_ZN16hullsweep_kernel3wma17h",
                    ));
                    sources.push((
                        "Rust `get_unchecked` (lab `wma_unchecked`)",
                        "lab.s".into(),
                        "_ZN11lab_kernels13wma_unchecked17h",
                    ));
                }
                Err(e) => a
                    .notes
                    .push(format!("the Rust side did not build for aarch64: {e}")),
            }
        }
    }
    match crate::python() {
        None => a
            .notes
            .push("numba's side was not built: no `.venv/bin/python`".into()),
        Some(py) => {
            let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("py/numba_aarch64.py");
            match run(Command::new(py).arg(script).arg(&dir).arg(&a.cpu)) {
                Ok((o, _)) => {
                    a.numba = o.lines().last().map(str::to_string);
                    sources.push((
                        "numba `wma`",
                        "numba-wma-aarch64.s".into(),
                        "_ZN13hullsweep_ref3wma",
                    ));
                }
                Err(e) => a.notes.push(format!("numba's side was not built: {e}")),
            }
        }
    }
    a.mca = llvm_mca(&a.cpu);
    if a.mca.is_none() {
        a.notes.push(format!(
            "no llvm-mca that knows {} (Debian's llvm-19 has one): the throughput columns are empty",
            a.cpu
        ));
    }
    for (who, file, prefix) in sources {
        let text = std::fs::read_to_string(dir.join(&file)).unwrap_or_default();
        let Some(f) = function(&text, prefix) else {
            a.notes
                .push(format!("{who}: function {prefix}… not found in {file}"));
            continue;
        };
        let Some((s, e)) = f.hot_loop() else {
            a.notes.push(format!("{who}: no loop with an FP add found"));
            continue;
        };
        let insns: Vec<String> = f.insns[s..=e].iter().map(|(t, _)| t.clone()).collect();
        let (elements, chain, conversion) = shape(&insns);
        let name = format!(
            "{}--{}-wma.s",
            a.cpu,
            match who.split_whitespace().nth(1) {
                Some("reference") => "rust-reference",
                Some("`get_unchecked`") => "rust-unchecked",
                _ => "numba",
            }
        );
        let mut lp = AppleLoop {
            who,
            file: format!("asm/{name}"),
            check_in_loop: f.branches_to_panic(s..=e),
            check_in_function: f.branches_to_panic(0..=f.insns.len() - 1),
            insns,
            elements: elements.max(1),
            chain,
            conversion,
            mca: None,
        };
        let mut listing = format!(
            "# {who}, built for {TRIPLE} -C target-cpu={}: the hot loop ({} instructions, {} elements per iteration)\n",
            a.cpu,
            lp.insns.len(),
            lp.elements
        );
        for t in &lp.insns {
            let _ = writeln!(listing, "    {t}");
        }
        if let Some((tool, _)) = &a.mca {
            match mca(tool, &a.cpu, &lp.insns, &dir.join(format!("{name}.mca.s"))) {
                Ok((m, report)) => {
                    lp.mca = Some(m);
                    let _ = write!(
                        listing,
                        "\n# {tool} -mtriple=aarch64 -mcpu={} -iterations=1000 -instruction-info\n{report}",
                        a.cpu
                    );
                }
                Err(e) => a.notes.push(format!("{who}: llvm-mca failed: {e}")),
            }
        }
        if let Err(e) = std::fs::write(asm_dir.join(&name), listing) {
            a.notes.push(format!("{name}: {e}"));
        }
        a.loops.push(lp);
    }
    a
}

/// The resource names llvm-mca printed say which scheduling model it used.
fn model_name(a: &AppleCodegen, out: &Path) -> String {
    let listing = a
        .loops
        .first()
        .and_then(|l| std::fs::read_to_string(out.join(&l.file)).ok())
        .unwrap_or_default();
    if listing.contains("CyUnit") {
        "LLVM's Cyclone scheduling model (`CycloneModel`, written for the Apple A7; LLVM uses it for every \
         Apple core, the M2 included: its resources are named `CyUnit*`)"
            .into()
    } else {
        "the model LLVM has for this CPU (see the listings for its resources)".into()
    }
}

pub(super) fn render(r: &Inputs, s: &mut String, _: &mut Vec<Chart>) {
    let Inputs {
        apple,
        out,
        results,
        ..
    } = *r;
    section(apple, results, out, s);
}

/// The section's Markdown; `results` are the run's A/B outcomes (empty when only this section is
/// regenerated, see [`splice`]).
fn section(a: &AppleCodegen, results: &[(&str, &str, Outcome)], out: &Path, s: &mut String) {
    let _ = writeln!(
        s,
        "## 5b. The study's CPU (Apple M2): a static prediction from Apple-core code generation\n\n\
         **This section is a static prediction, not a measurement**: no Apple core was available, so \
         nothing in it was timed. The x86 sections above remain the measured evidence. It compiles \
         both sides' WMA for `{TRIPLE}` with `target-cpu={}` and asks a public CPU model what the hot \
         loops cost.\n",
        a.cpu
    );
    let _ = writeln!(
        s,
        "- Rust: the kernel source as it stands (`kernel/src/lib.rs`, and the lab's `get_unchecked` loop \
         from `profiling/src/kernels.rs`), built by {} with `-C opt-level=3 -C target-cpu={}`.\n\
         - numba: numba's own LLVM IR for `wma` (the module numba hands to its optimiser), run through \
         numba's two module pipelines with an aarch64 `{}` target machine by llvmlite ({}), as numba would \
         compile it on that CPU (`profiling/py/numba_aarch64.py`).\n\
         - Throughput: {}, `-mcpu={}`; its model is {}.\n",
        a.rustc.as_deref().unwrap_or("(not built)"),
        a.cpu,
        a.cpu,
        a.numba.as_deref().unwrap_or("not built"),
        a.mca
            .as_ref()
            .map(|(t, v)| format!("`{t}` ({v})"))
            .unwrap_or_else(|| "no llvm-mca".into()),
        a.cpu,
        model_name(a, out)
    );
    if a.loops.is_empty() {
        let _ = writeln!(s, "Not generated in this run (see the notes below).\n");
    } else {
        s.push_str("| on the Apple core |");
        for l in &a.loops {
            let _ = write!(s, " {} |", l.who);
        }
        let _ = write!(s, "\n|---|");
        for _ in &a.loops {
            let _ = write!(s, "---|");
        }
        s.push('\n');
        type Row = (&'static str, fn(&AppleLoop) -> String);
        let rows: [Row; 10] = [
            ("instructions per element (hot loop)", |l| {
                fmt2(l.insns.len() as f64 / l.elements as f64)
            }),
            ("unroll: elements per iteration", |l| l.elements.to_string()),
            ("bounds check inside the hot loop", |l| {
                yes_no(l.check_in_loop)
            }),
            ("bounds check elsewhere in the function", |l| {
                if l.check_in_function && !l.check_in_loop {
                    "yes (remainder/setup, outside the hot loop)".into()
                } else {
                    yes_no(l.check_in_function)
                }
            }),
            ("weight `(k + 1)` to f64", |l| l.conversion.clone()),
            ("serial FP adds per iteration (one accumulator)", |l| {
                l.chain.to_string()
            }),
            ("llvm-mca resource bound (cycles/iteration)", |l| {
                l.mca
                    .as_ref()
                    .map(|m| format!("{:.2}", m.rthroughput))
                    .unwrap_or_else(|| "—".into())
            }),
            ("llvm-mca simulated (cycles/iteration)", |l| {
                l.mca
                    .as_ref()
                    .map(|m| format!("{:.2}", m.cycles))
                    .unwrap_or_else(|| "—".into())
            }),
            ("predicted cycles per element", |l| {
                l.cycles_per_element()
                    .map(|c| format!("{c:.2}"))
                    .unwrap_or_else(|| "—".into())
            }),
            ("FP-add chain is the critical path", |l| {
                match l.chain_bound() {
                    Some(true) => "**yes**".into(),
                    Some(false) => "no".into(),
                    None => "—".into(),
                }
            }),
        ];
        for (name, f) in rows {
            let _ = write!(s, "| {name} |");
            for l in &a.loops {
                let _ = write!(s, " {} |", f(l));
            }
            s.push('\n');
        }
        let m = a.loops.iter().find_map(|l| l.mca.as_ref());
        if let Some(m) = m {
            let lat = |x: Option<u32>| {
                x.map(|c| format!("{c} cycles"))
                    .unwrap_or_else(|| "?".into())
            };
            let _ = writeln!(
                s,
                "\nLatencies the model assumes: FADD {}, FMUL {}; the loop-carried chain is the running sum `s`, \
                 one FADD per element, so no loop that keeps one sum can beat one FADD latency per element \
                 ({} cycles per element in this model). Public microbenchmarks of Apple's big cores put FADD \
                 at 3 cycles rather than the model's {}; that scales every chain-bound loop alike and leaves \
                 the ratio below unchanged.\n",
                lat(m.fadd),
                lat(m.fmul),
                m.fadd.map(|c| c.to_string()).unwrap_or_else(|| "?".into()),
                lat(m.fadd)
            );
        }
        prediction(a, results, s);
        for l in &a.loops {
            let _ = writeln!(
                s,
                "{} ([{}]({})):\n\n```asm\n{}\n```\n",
                l.who,
                l.file,
                l.file,
                l.insns.join("\n")
            );
        }
    }
    for n in &a.notes {
        let _ = writeln!(s, "- note: {n}");
    }
    if !a.notes.is_empty() {
        s.push('\n');
    }
}

fn yes_no(b: bool) -> String {
    if b { "**yes**".into() } else { "no".into() }
}

/// The predicted Rust/numba ratio beside the study's, and what is left to explain.
fn prediction(a: &AppleCodegen, results: &[(&str, &str, Outcome)], s: &mut String) {
    let by = |w: &str| a.loops.iter().find(|l| l.who.contains(w));
    let (Some(r), Some(u), Some(n)) = (by("reference"), by("get_unchecked"), by("numba")) else {
        return;
    };
    let (Some(rc), Some(uc), Some(nc)) = (
        r.cycles_per_element(),
        u.cycles_per_element(),
        n.cycles_per_element(),
    ) else {
        return;
    };
    let ratio = rc / nc;
    let explained = (ratio - 1.0) / (STUDY_RATIO - 1.0);
    let same_body = r.insns.len().abs_diff(n.insns.len()) <= 2
        && r.elements == n.elements
        && r.chain == n.chain;
    let _ = writeln!(
        s,
        "**Prediction.** On the WMA loop, which is where the sweep spends its time, the model predicts \
         Rust reference / numba = **{ratio:.3}** on the {} (`get_unchecked` / numba = {:.3}). The study \
         measured **{STUDY_RATIO:.2}** on its M2 Max: the prediction explains **{:.0}%** of that 13%.{}\n",
        a.cpu,
        uc / nc,
        100.0 * explained,
        if same_body {
            " Built for the Apple core, the reference's unrolled body is the same loop as numba's: LLVM \
             computes per output how far the window can run without an out-of-range index and runs that \
             part with no check (the check stays in the scalar loop that finishes each window), converts \
             the weights as vectors, multiplies in pairs, and keeps one serial FADD per element, in the \
             reference's order, on both sides. So `get_unchecked` had nothing to remove from the hot loop \
             there. This corrects section 5's last bullet for the Apple core: its premise, that the check \
             stays in the loop, comes from the x86-64 assembly and does not carry over to this target with \
             today's LLVM (section 5's other reason, that a check off the FADD chain costs a wide core \
             nothing, would make the same prediction)."
        } else {
            ""
        }
    );
    if explained.abs() < 0.5 {
        let alloc = results
            .iter()
            .find(|(k, _, _)| *k == "alloc")
            .map(|(_, _, o)| {
                format!(
                    "On x86 in this run, reusing the buffers saved {} of the reference's time \
                     (section 6, `alloc`). ",
                    pct(1.0 - o.median(1) / o.median(0))
                )
            })
            .unwrap_or_else(|| {
                "On x86, section 6 (`alloc`) measures what reusing the buffers saves. ".into()
            });
        let _ = writeln!(
            s,
            "What the model cannot explain, and how plausible each remaining candidate is:\n\n\
             - **The study's toolchain.** This is today's rustc; an older LLVM may have left the bounds check in \
             the loop, as LLVM still does on x86-64 (section 3). Plausible as a cause of different code, but on \
             a chain-bound core a per-element check is integer work off the FADD chain, so even that loop would \
             be predicted at the same cycles per element unless the M2 could not issue it within one FADD \
             latency (about 10 instructions and one taken branch per 3-cycle FADD on an 8-wide core: it can). Not checkable here \
             without the study's exact rustc.\n\
             - **The rest of the sweep.** Allocation and NaN fill of a fresh array per pass, the `2*a-b` \
             passes and the event loop are not in this prediction. {alloc}On macOS the allocator returning \
             large blocks to the system (page faults per pass, section 6b) could cost more. Plausible, \
             unmeasured.\n\
             - **Per-output overhead outside the hot loop.** Rust recomputes the safe trip count and runs a \
             checked remainder per output; numba runs an unchecked remainder. A handful of instructions per \
             output against a window of tens to hundreds of elements: too small for 13%.\n\
             - **The measurement.** Scheduling on efficiency vs performance cores, frequency, a cold JIT or \
             process start inside the timed region: outside any code model. Plausible for a single-run \
             comparison; the study's harness is not available to check.\n\
             - **The model.** llvm-mca's Apple model is the A7's; it does not know the M2's real widths or \
             latencies. It would have to misjudge the two nearly identical loops differently to produce a 13% \
             gap, which is implausible.\n"
        );
    }
}

/// `report --only apple`: regenerates this section alone (it times nothing) into an existing
/// `gap.md`, replacing the section or inserting it before section 6, and says so in the section.
/// For when the machine is too loaded for the measured sections to be rerun honestly.
pub(super) fn splice(out: &Path, scratch: &Path) -> Result<(), String> {
    let file = out.join("gap.md");
    let md = std::fs::read_to_string(&file).map_err(|e| {
        format!(
            "{}: {e} (--only apple updates an existing report)",
            file.display()
        )
    })?;
    let a = collect(out, scratch);
    let mut sec = String::new();
    section(&a, &[], out, &mut sec);
    let stamp = crate::sysinfo::collect(None)
        .into_iter()
        .find(|(k, _)| k.starts_with("date"))
        .map(|(_, v)| v)
        .unwrap_or_default();
    let sec = sec.replacen(
        "\n\n",
        &format!(
            "\n\n*Regenerated alone by `scripts/gap-report --only apple` on {stamp} (UTC); the measured \
             sections around it are from the run stamped under Machine and toolchain.*\n\n"
        ),
        1,
    );
    let start = md.find("## 5b. ");
    let end = md
        .find("## 6. ")
        .ok_or("gap.md has no section 6 to insert before")?;
    let spliced = format!("{}{sec}{}", &md[..start.unwrap_or(end)], &md[end..]);
    std::fs::write(&file, spliced).map_err(|e| e.to_string())?;
    println!("wrote section 5b into {}", file.display());
    Ok(())
}
