//! `profiling report [--quick]`: runs the gap, the ladder, every hypothesis, callgrind, the asm
//! dumps and a flamegraph, then writes `gap.md` and SVG charts; every number in it is measured here.
//!
//! This module measures and assembles; each section of `gap.md` is its own module below (named
//! after the section), which renders its Markdown from the measured `Inputs`.

mod apple;
mod charts;
mod counts;
mod elements;
mod flames;
mod format;
mod gap;
mod hypotheses;
mod inputs;
mod ladder;
mod lookup;
mod notes;
mod plan;
mod study;
mod summary;
mod x86_asm;

use crate::asm::{self, AsmSet};
use crate::builds::{self, Flavor};
use crate::callgrind::{self, Counts};
use crate::hypotheses::{HYPOTHESES, Lab};
use crate::kernels;
use crate::timing::{Outcome, interleave};
use charts::{Chart, charts_json};
use inputs::Inputs;
use plan::Plan;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs one step, printing progress to stderr (the report takes minutes in full mode).
fn step<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    eprintln!("report: {what} ...");
    let t = std::time::Instant::now();
    let r = f();
    eprintln!("report: {what} done in {:.1} s", t.elapsed().as_secs_f64());
    r
}

/// `profiling report`: everything, into `out/gap.md` (plus charts, asm and callgrind files).
/// `bars`/`rounds` override the mode's sizes (for dry runs of the full pipeline on small data).
/// `only == Some("apple")` regenerates section 5b alone into an existing `out/gap.md`.
pub fn command(
    quick: bool,
    out: &str,
    bars: Option<usize>,
    rounds: Option<usize>,
    only: Option<&str>,
) -> Result<(), String> {
    match only {
        None => {}
        Some("apple") => {
            let scratch =
                crate::workspace_root().join(format!("target/prof-scratch-{}", std::process::id()));
            let r = apple::splice(Path::new(out), &scratch);
            let _ = std::fs::remove_dir_all(&scratch);
            return r;
        }
        Some(other) => {
            return Err(format!(
                "--only {other:?}: the only section that can be regenerated alone is `apple`"
            ));
        }
    }
    let header = crate::sysinfo::Header::start(&format!(
        "scripts/gap-report{}",
        if quick { " --quick" } else { "" }
    ));
    let mut plan = Plan::new(quick);
    if let Some(b) = bars {
        plan.bars = b;
    }
    if let Some(r) = rounds {
        plan.rounds = r;
    }
    let out = PathBuf::from(out);
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let scratch =
        crate::workspace_root().join(format!("target/prof-scratch-{}", std::process::id()));
    let mut notes: Vec<String> = Vec::new();

    let mut lab = Lab::new(plan.bars, plan.grid, plan.rounds, &scratch.join("gap"))?;
    let numba = match crate::python() {
        Some(_) => match step("starting the numba worker (JIT compile)", || lab.numba()) {
            Ok(i) => Some(i),
            Err(e) => {
                notes.push(format!("numba was not measured: {e}"));
                None
            }
        },
        None => {
            notes.push(
                "numba was not measured: no `.venv/bin/python` (set HULLSWEEP_PYTHON)".into(),
            );
            None
        }
    };
    let banner = numba.map(|i| lab.workers[i].banner.clone());
    let facts = crate::sysinfo::collect(banner.as_deref());
    if plan.builds {
        for f in [Flavor::Native, Flavor::Lto] {
            step(&format!("building the {} flavour", f.name()), || {
                lab.flavor(f).map(|_| ())
            })?;
        }
    } else {
        notes.push("--quick: the separate builds (target-cpu=native, LTO, frame pointers) and the flamegraph are skipped".into());
    }

    // 1. The gap on the full workload.
    let gap = match numba {
        Some(_) => Some(step("gap (numba vs rust reference)", || lab.run("gap"))?),
        None => None,
    };

    // 2. The ladder (numba in the same rounds), page faults and one experiment per hypothesis,
    // on the reduced sweep so that ten interleaved rounds of every arm fit in minutes.
    let mut hlab = Lab::new(plan.bars, plan.hyp_grid, plan.rounds, &scratch.join("hyp"))?;
    let hnumba = numba.and_then(|_| hlab.numba().ok());
    let ladder = {
        let arms = hlab.ladder_arms(plan.builds, hnumba)?;
        step("ladder", || {
            interleave(&arms, plan.rounds, &hlab.wl, &mut hlab.workers)
        })?
    };
    let faults = step("page faults per sweep", || hlab.faults(hnumba))?;
    let mut results: Vec<(&str, &str, Outcome)> = Vec::new();
    for &(key, question) in HYPOTHESES {
        if matches!(key, "gap" | "ladder") || (!plan.builds && matches!(key, "native" | "lto")) {
            continue;
        }
        let o = step(&format!("hypothesis {key}"), || hlab.run(key))?;
        results.push((key, question, o));
    }
    drop(hlab);

    // 3. ns per element of one WMA pass, per kernel.
    let x = hullsweep_kernel::gbm(
        plan.elem_bars,
        hullsweep_kernel::DEFAULT_SEED,
        hullsweep_kernel::DEFAULT_SIGMA,
    )
    .map_err(|e| e.to_string())?;
    let per_elem = step("ns per element", || {
        Ok(crate::clock::ns_per_element(
            kernels::KERNELS,
            &x,
            plan.elem_window,
            plan.rounds.max(5) * 2,
        ))
    })?;

    // 4. Instruction counts.
    let counts = if !callgrind::available() {
        notes.push("valgrind is not installed: the instruction counts are skipped".into());
        None
    } else if plan.quick {
        let me = std::env::current_exe().map_err(|e| e.to_string())?;
        let dir = scratch.join("callgrind");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let args = |extra: &[&str]| -> Vec<String> {
            let mut v: Vec<String> = [
                "once",
                "--bars",
                &plan.cg_bars.to_string(),
                "--grid",
                plan.cg_grid,
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            v.extend(extra.iter().map(|s| s.to_string()));
            v
        };
        let setup = callgrind::run(&me, &args(&["--none", "x"]), &dir.join("setup.out"))?;
        let r = callgrind::run(
            &me,
            &args(&["--variant", "reference"]),
            &dir.join("ref.out"),
        )?;
        notes.push("--quick: callgrind counts only the reference variant (numba and the other kernels in the full report)".into());
        let spec: hullsweep_kernel::GridSpec = plan.cg_grid.parse().map_err(|e| format!("{e}"))?;
        let params = hullsweep_kernel::grid(spec).map_err(|e| e.to_string())?;
        Some(Counts {
            bars: plan.cg_bars,
            grid: plan.cg_grid.into(),
            elements: callgrind::elements(plan.cg_bars, &params),
            rust: vec![callgrind::Count {
                what: "variant reference".into(),
                ir: r.saturating_sub(setup),
            }],
            numba: Err("skipped in --quick".into()),
            numba_banner: String::new(),
            reference_profile: String::new(),
            dir,
        })
    } else {
        Some(step("callgrind", || {
            let hw = builds::build(Flavor::Haswell)?;
            callgrind::collect(
                plan.cg_bars,
                plan.cg_grid,
                &scratch.join("callgrind"),
                crate::python().as_deref(),
                Some(&hw),
            )
        })?)
    };

    // 5. Assembly (the native build exists by now in full mode).
    let asm_dir = out.join("asm");
    // Without binutils there is no disassembly; the timings and counts still stand on their own.
    let set = match step("assembly", || {
        asm::collect(&asm_dir, numba.map(|i| &mut lab.workers[i]))
    }) {
        Ok(set) => set,
        Err(e) => {
            notes.push(format!("the assembly was not collected: {e}"));
            AsmSet {
                rust: Vec::new(),
                numba: Vec::new(),
                numba_ir: Vec::new(),
                full_dir: PathBuf::new(),
            }
        }
    };

    // 6. Flamegraphs from the frame-pointer build.
    let mut flames = Vec::new();
    if plan.builds {
        let fp = step("building the frame-pointer flavour", || {
            builds::build(Flavor::FramePointers)
        })?;
        let mut targets: Vec<(String, Vec<&str>)> = hullsweep_variants::Variant::ALL
            .iter()
            .map(|v| (format!("variant-{}", v.name()), vec!["--variant", v.name()]))
            .collect();
        targets.push(("kernel-unchecked".into(), vec!["--kernel", "unchecked"]));
        for (what, arg) in targets {
            let file = out.join(format!("flame-{what}.svg"));
            let st = Command::new(&fp)
                .arg("flamegraph")
                .args(&arg)
                .args([
                    "--bars",
                    &plan.bars.to_string(),
                    "--grid",
                    plan.grid,
                    "--out",
                ])
                .arg(&file)
                .status()
                .map_err(|e| format!("flamegraph: {e}"))?;
            if st.success() {
                flames.push((what, file));
            } else {
                notes.push(format!("the {what} flamegraph failed ({st})"));
            }
        }
    }
    drop(lab);

    // 6b. The study's CPU: both sides compiled for an Apple core, read statically (no timing).
    let apple = step("Apple-core code generation (static)", || {
        Ok(apple::collect(&out, &scratch))
    })?;

    // 7. The report.
    let inputs = Inputs {
        plan: &plan,
        facts: &facts,
        gap: gap.as_ref(),
        ladder: &ladder,
        results: &results,
        per_elem: &per_elem,
        counts: counts.as_ref(),
        set: &set,
        apple: &apple,
        flames: &flames,
        faults: &faults,
        notes: &notes,
        out: &out,
    };
    let md = render(&inputs);
    // The header goes right under the title, with the load at the end of the measurements.
    let text = md.0.replacen(
        "\n\n",
        &format!(
            "\n\n{}\n",
            header.markdown(python_versions(&facts).as_deref())
        ),
        1,
    );
    std::fs::write(out.join("gap.md"), text).map_err(|e| e.to_string())?;
    let json = out.join("charts.json");
    std::fs::write(&json, charts_json(&md.1)?).map_err(|e| e.to_string())?;
    // Charts need matplotlib, which only `scripts/reports` installs (reference/requirements-lab.txt):
    // probe for it so a venv without it gets one plain line, not a Python traceback.
    let has_matplotlib = |py: &std::path::Path| {
        Command::new(py)
            .args(["-c", "import matplotlib"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|st| st.success())
    };
    match crate::python() {
        Some(py) if !has_matplotlib(&py) => eprintln!(
            "report: matplotlib is not in the venv: SVG charts skipped (charts.json has the data; \
             pip install -r reference/requirements-lab.txt adds it)"
        ),
        Some(py) => {
            let st = Command::new(py)
                .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("py/charts.py"))
                .arg(&json)
                .arg(out.join("charts"))
                .status();
            match st {
                Ok(st) if st.success() => {}
                Ok(st) => {
                    eprintln!("report: charts failed ({st}); gap.md is complete without them")
                }
                Err(e) => eprintln!("report: charts skipped ({e}); charts.json has the data"),
            }
        }
        None => eprintln!("report: no venv python: SVG charts skipped (charts.json has the data)"),
    }
    let _ = std::fs::remove_dir_all(&scratch);
    println!("wrote {}", out.join("gap.md").display());
    Ok(())
}

/// "Python X, numpy Y, numba Z" when the numba side ran (its versions are among the facts).
fn python_versions(facts: &[(String, String)]) -> Option<String> {
    let get = |k: &str| facts.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let numba = get("numba")?;
    let python = crate::python()
        .and_then(|p| std::process::Command::new(p).arg("--version").output().ok())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "Python ?".into());
    let numpy = get("numpy").unwrap_or_else(|| "?".into());
    Some(format!("{python}, numpy {numpy}, numba {numba}"))
}

/// `gap.md` and its charts, section by section in the report's order.
fn render(r: &Inputs) -> (String, Vec<Chart>) {
    let Inputs {
        plan,
        facts,
        gap,
        ladder,
        per_elem,
        counts,
        set,
        ..
    } = *r;
    let mut s = String::new();
    let mut charts = Vec::new();
    let _ = writeln!(s, "# The Rust-vs-numba gap, attributed\n");
    let _ = writeln!(
        s,
        "Mode: **{}**. Every number below is measured by the command above (`cargo run -p \
         hullsweep-profiling --release -- report`); nothing is typed in by hand.\n",
        if plan.quick {
            "quick smoke test: tiny data, 3 rounds: the numbers are NOT evidence"
        } else {
            "full"
        }
    );
    let _ = writeln!(s, "{}", summary::SUMMARY_MARK);
    let _ = writeln!(s, "## Machine and toolchain\n\n| | |\n|---|---|");
    for (k, v) in facts {
        let _ = writeln!(s, "| {k} | {v} |");
    }
    let _ = writeln!(
        s,
        "\nThe machine is shared: every timing is interleaved (arms alternate within each round, \
         order rotating), {} rounds after one warm-up round, medians reported with min..max.\n",
        plan.rounds
    );

    gap::render(r, &mut s, &mut charts);
    ladder::render(r, &mut s, &mut charts);
    x86_asm::render(r, &mut s, &mut charts);
    elements::render(r, &mut s, &mut charts);
    study::render(r, &mut s, &mut charts);
    apple::render(r, &mut s, &mut charts);
    hypotheses::render(r, &mut s, &mut charts);
    counts::render(r, &mut s, &mut charts);
    flames::render(r, &mut s, &mut charts);

    notes::render(r, &mut s, &mut charts);
    let summary = summary::summary(gap, ladder, per_elem, counts, set);
    (s.replacen(summary::SUMMARY_MARK, &summary, 1), charts)
}
