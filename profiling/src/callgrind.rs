//! Instruction counts under callgrind: every library variant and lab kernel on a reduced sweep,
//! the data setup subtracted, and numba's JIT-compiled sweep with instrumentation toggled around it.

use crate::timing::Worker;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Whether valgrind is on the PATH.
pub fn available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Total `Ir` from a callgrind output file (the `summary:` or `totals:` line).
pub fn total_ir(file: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    text.lines()
        .rev()
        .find_map(|l| {
            l.strip_prefix("summary:")
                .or_else(|| l.strip_prefix("totals:"))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("no totals in {}", file.display()))
}

/// Runs `bin args` under callgrind and returns its total instructions and the output file.
pub fn run(bin: &Path, args: &[String], out: &Path) -> Result<u64, String> {
    let st = Command::new("valgrind")
        .args(["--tool=callgrind", "-q"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(bin)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("valgrind: {e}"))?;
    if !st.success() {
        return Err(format!(
            "valgrind {} {} failed ({st})",
            bin.display(),
            args.join(" ")
        ));
    }
    total_ir(out)
}

/// The top functions of a callgrind file by inclusive instructions, via `callgrind_annotate`.
pub fn annotate(file: &Path, lines: usize) -> String {
    Command::new("callgrind_annotate")
        .args(["--inclusive=yes", "--threshold=99"])
        .arg(file)
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.contains("hullsweep") && l.contains('('))
                .take(lines)
                .map(|l| format!("{}\n", l.trim()))
                .collect()
        })
        .unwrap_or_default()
}

/// One counted configuration.
#[derive(Clone, Debug)]
pub struct Count {
    /// What ran, e.g. `variant rolling`, `kernel unchecked` or `kernel reference, pass head`.
    pub what: String,
    /// Instructions of the sweep alone (setup subtracted).
    pub ir: u64,
}

/// Counts for every variant and kernel (this binary) and numba, on `bars` x `grid`.
pub struct Counts {
    /// Length of the generated GBM series every count swept.
    pub bars: usize,
    /// The grid spec the combos came from, as given (`hullsweep_kernel::GridSpec` syntax).
    pub grid: String,
    /// Multiply-adds of one sweep of this workload ([`elements`]), to turn counts per sweep
    /// into instructions per element.
    pub elements: u64,
    /// Every variant, every lab kernel, the reference kernel per pass, and the haswell build
    /// when one was given, in that order.
    pub rust: Vec<Count>,
    /// numba's instructions for the same sweep, JIT compilation excluded; `Err` says why
    /// there is no count (no venv Python, valgrind or worker failure).
    pub numba: Result<u64, String>,
    /// The numba worker's banner under valgrind (its view of the CPU differs: no AVX-512).
    pub numba_banner: String,
    /// The reference variant's top functions by inclusive instructions ([`annotate`]), empty
    /// when `callgrind_annotate` is missing.
    pub reference_profile: String,
    /// The folder holding the `callgrind.*.out` files, for `callgrind_annotate` by hand.
    pub dir: PathBuf,
}

/// Multiply-adds in one sweep: the sum over passes of `(n - w + 1) * w`.
pub fn elements(bars: usize, params: &[hullsweep_kernel::Combo]) -> u64 {
    params
        .iter()
        .flat_map(|c| [c[1], c[0], c[2], c[5], c[4], c[3], c[3]])
        .map(|w| {
            let w = w as u64;
            if w as usize > bars {
                0
            } else {
                (bars as u64 - w + 1) * w
            }
        })
        .sum()
}

/// Runs everything under callgrind into `dir`.
pub fn collect(
    bars: usize,
    grid: &str,
    dir: &Path,
    python: Option<&Path>,
    haswell: Option<&Path>,
) -> Result<Counts, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let base = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["once", "--bars", &bars.to_string(), "--grid", grid]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let setup = run(
        &me,
        &base(&["--none", "x"]),
        &dir.join("callgrind.setup.out"),
    )?;
    let mut rust = Vec::new();
    for v in hullsweep_variants::Variant::ALL {
        let f = dir.join(format!("callgrind.variant-{}.out", v.name()));
        let ir = run(&me, &base(&["--variant", v.name()]), &f)?;
        rust.push(Count {
            what: format!("variant {}", v.name()),
            ir: ir.saturating_sub(setup),
        });
    }
    for (k, _) in crate::kernels::KERNELS {
        let f = dir.join(format!("callgrind.kernel-{k}.out"));
        let ir = run(&me, &base(&["--kernel", k]), &f)?;
        rust.push(Count {
            what: format!("kernel {k}"),
            ir: ir.saturating_sub(setup),
        });
    }
    for pass in ["reuse", "head"] {
        let f = dir.join(format!("callgrind.kernel-reference-{pass}.out"));
        let ir = run(&me, &base(&["--kernel", "reference", "--pass", pass]), &f)?;
        rust.push(Count {
            what: format!("kernel reference, pass {pass}"),
            ir: ir.saturating_sub(setup),
        });
    }
    // The same code built for the CPU numba targets under valgrind, for a like-for-like count.
    if let Some(hw) = haswell {
        let f = dir.join("callgrind.haswell-setup.out");
        let hsetup = run(hw, &base(&["--none", "x"]), &f)?;
        let unchecked = if hullsweep_variants::Variant::from_name("unchecked").is_some() {
            ("variant unchecked", ["--variant", "unchecked"])
        } else {
            ("kernel unchecked", ["--kernel", "unchecked"])
        };
        for (what, extra) in [("variant reference", ["--variant", "reference"]), unchecked] {
            let f = dir.join(format!("callgrind.haswell-{}.out", what.replace(' ', "-")));
            let ir = run(hw, &base(&extra), &f)?;
            rust.push(Count {
                what: format!("{what} (target-cpu=haswell build)"),
                ir: ir.saturating_sub(hsetup),
            });
        }
    }
    let reference_profile = annotate(&dir.join("callgrind.variant-reference.out"), 8);
    let spec: hullsweep_kernel::GridSpec = grid.parse().map_err(|e| format!("{e}"))?;
    let params = hullsweep_kernel::grid(spec).map_err(|e| e.to_string())?;
    let (numba, numba_banner) = match python {
        Some(py) => match numba_count(py, bars, grid, dir) {
            Ok((ir, banner)) => (Ok(ir), banner),
            Err(e) => (Err(e), String::new()),
        },
        None => (Err("no venv python".into()), String::new()),
    };
    Ok(Counts {
        bars,
        grid: grid.to_string(),
        elements: elements(bars, &params),
        rust,
        numba,
        numba_banner,
        reference_profile,
        dir: dir.to_path_buf(),
    })
}

/// numba under callgrind: instrumentation starts off (so importing numba and compiling the JIT
/// run at valgrind's uninstrumented speed) and is switched on with `callgrind_control` only for
/// one `run` of the sweep, after the worker has compiled it.
fn numba_count(py: &Path, bars: usize, grid: &str, dir: &Path) -> Result<(u64, String), String> {
    let scratch = dir.join("numba-data");
    let lab = crate::hypotheses::Lab::new(bars, grid, 1, &scratch)?;
    let (c, p) = lab.raw_files();
    let out = dir.join("callgrind.numba.out");
    let mut cmd = Command::new("valgrind");
    cmd.args(["--tool=callgrind", "-q", "--instr-atstart=no"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(py)
        .arg(crate::numba_worker_script())
        .args([c, p, lab.wl.fee.to_string()]);
    let mut w = Worker::spawn("numba-under-callgrind", cmd)?;
    let banner = w.banner.clone();
    let pid = w.pid().to_string();
    let ctl = |arg: &str| {
        Command::new("callgrind_control")
            .args([arg, &pid])
            .output()
            .map_err(|e| format!("callgrind_control: {e}"))
            .and_then(|o| {
                if o.status.success() {
                    Ok(())
                } else {
                    Err(format!(
                        "callgrind_control {arg} failed: {}",
                        String::from_utf8_lossy(&o.stderr)
                    ))
                }
            })
    };
    ctl("--instr=on")?;
    let r = w.run("run");
    ctl("--instr=off")?;
    let (_, trades) = r?;
    let want: i64 = lab.wl.want.trades.iter().sum();
    if trades != want {
        return Err(format!(
            "numba under callgrind traded {trades}, reference {want}"
        ));
    }
    drop(w);
    // The file is written at exit; give the filesystem a moment on a loaded machine.
    std::thread::sleep(Duration::from_millis(200));
    Ok((total_ir(&out)?, banner))
}

/// `profiling count`: prints the counts.
pub fn command(bars: usize, grid: &str, out: &str) -> Result<(), String> {
    if !available() {
        println!("valgrind is not installed: instruction counts skipped");
        return Ok(());
    }
    let hw = crate::builds::build(crate::builds::Flavor::Haswell).ok();
    let c = collect(
        bars,
        grid,
        Path::new(out),
        crate::python().as_deref(),
        hw.as_deref(),
    )?;
    println!(
        "# callgrind, {} bars, grid {}, {} multiply-adds",
        c.bars, c.grid, c.elements
    );
    for r in &c.rust {
        println!(
            "{:<40} {:>14} Ir  {:>6.2} Ir/element",
            r.what,
            r.ir,
            r.ir as f64 / c.elements as f64
        );
    }
    match &c.numba {
        Ok(ir) => println!(
            "{:<40} {:>14} Ir  {:>6.2} Ir/element  ({})",
            "numba sweep",
            ir,
            *ir as f64 / c.elements as f64,
            c.numba_banner
        ),
        Err(e) => println!("numba: not counted: {e}"),
    }
    print!("{}", c.reference_profile);
    Ok(())
}
