//! One interleaved A/B experiment per hypothesis about the gap, each toggling exactly one thing.
//! `profiling ab KEY` runs one; the report runs them all and turns the medians into shares.

use crate::builds::{self, Flavor};
use crate::kernels::{self, Pass};
use crate::timing::{Arm, Labeled, Outcome, Worker, Workload, interleave};
use hullsweep_kernel::{GridSpec, gbm, grid};
use hullsweep_variants::Variant;
use std::path::PathBuf;
use std::process::Command;

/// The hypotheses, in report order: key and the question it answers.
pub const HYPOTHESES: &[(&str, &str)] = &[
    (
        "gap",
        "numba single-thread vs the Rust reference (the gap itself)",
    ),
    (
        "bounds",
        "do bounds checks cost anything? (`x[j]` vs `get_unchecked`)",
    ),
    (
        "weight",
        "the integer-to-float weight: `usize as f64` vs `i64 as f64` vs a float counter vs a table",
    ),
    ("alloc", "a fresh allocation per WMA pass vs reused buffers"),
    (
        "nanfill",
        "NaN-filling the whole output vs only its undefined head",
    ),
    (
        "shape",
        "loop shape: `i + 1 - w + k` index arithmetic vs a sub-slice",
    ),
    ("unroll", "manual unroll by 4 (same serial add chain)"),
    (
        "numba-shape",
        "numba's loop transcribed: int64 counters, wraparound select, no bounds check",
    ),
    (
        "interchange",
        "loop interchange (bars inner): same sums, vectorisable",
    ),
    (
        "native",
        "x86-64 baseline vs `-C target-cpu=native` (separate build)",
    ),
    (
        "lto",
        "16 codegen units, no LTO vs fat LTO + 1 codegen unit (separate build)",
    ),
    (
        "variants",
        "every library variant, single thread, against the reference",
    ),
    (
        "ladder",
        "the numba-like fixes stacked one by one, with numba in the same run",
    ),
];

/// Workload, workers and the data files workers read.
pub struct Lab {
    /// The series, combos and reference answer every arm sweeps and is checked against.
    pub wl: Workload,
    /// Length of the generated GBM series.
    pub bars: usize,
    /// The grid spec the combos came from, as given.
    pub grid: String,
    /// Recorded rounds per A/B experiment (each arm runs once per round, after a warm-up).
    pub rounds: usize,
    /// The worker processes started so far; arms refer to them by index.
    pub workers: Vec<Worker>,
    raw: (String, String),
    slots: Vec<(String, usize)>,
}

impl Lab {
    /// Generates a GBM series of `bars` (default seed and sigma), the combos of `grid_spec` and
    /// their reference answer, and writes the raw files workers read into `scratch`. No worker
    /// is started yet. Errors name the bad grid spec, the series problem or the unwritable path.
    ///
    /// # Panics
    ///
    /// If the reference kernel refuses the generated workload ([`Workload::new`]).
    pub fn new(
        bars: usize,
        grid_spec: &str,
        rounds: usize,
        scratch: &std::path::Path,
    ) -> Result<Lab, String> {
        let spec: GridSpec = grid_spec.parse().map_err(|e| format!("{e}"))?;
        let close = gbm(
            bars,
            hullsweep_kernel::DEFAULT_SEED,
            hullsweep_kernel::DEFAULT_SIGMA,
        )
        .map_err(|e| e.to_string())?;
        let params = grid(spec).map_err(|e| e.to_string())?;
        let wl = Workload::new(close, params, hullsweep_kernel::DEFAULT_FEE_PCT);
        let raw = wl
            .write_raw(scratch)
            .map_err(|e| format!("writing {}: {e}", scratch.display()))?;
        Ok(Lab {
            wl,
            bars,
            grid: grid_spec.to_string(),
            rounds,
            workers: Vec::new(),
            raw,
            slots: Vec::new(),
        })
    }

    /// The raw data files workers read: `(close, params)`.
    pub fn raw_files(&self) -> (String, String) {
        self.raw.clone()
    }

    fn slot(&self, name: &str) -> Option<usize> {
        self.slots.iter().find(|(n, _)| n == name).map(|&(_, i)| i)
    }

    fn add(&mut self, w: Worker) -> usize {
        self.slots.push((w.name.clone(), self.workers.len()));
        self.workers.push(w);
        self.workers.len() - 1
    }

    /// The numba worker (started on first use; JIT paid once, before any timing).
    pub fn numba(&mut self) -> Result<usize, String> {
        if let Some(i) = self.slot("numba") {
            return Ok(i);
        }
        let py = crate::python().ok_or("no .venv/bin/python (set HULLSWEEP_PYTHON)")?;
        let mut cmd = Command::new(py);
        cmd.arg(crate::numba_worker_script())
            .arg(&self.raw.0)
            .arg(&self.raw.1)
            .arg(self.wl.fee.to_string());
        let w = Worker::spawn("numba", cmd)?;
        Ok(self.add(w))
    }

    /// A `serve` worker of this binary built as `flavor` (`Base` is the running binary).
    pub fn flavor(&mut self, flavor: Flavor) -> Result<usize, String> {
        if let Some(i) = self.slot(flavor.name()) {
            return Ok(i);
        }
        let exe: PathBuf = match flavor {
            Flavor::Base => std::env::current_exe().map_err(|e| e.to_string())?,
            f => builds::build(f)?,
        };
        let mut cmd = Command::new(exe);
        cmd.args([
            "serve",
            "--bars",
            &self.bars.to_string(),
            "--grid",
            &self.grid,
        ]);
        let w = Worker::spawn(flavor.name(), cmd)?;
        Ok(self.add(w))
    }

    /// The ladder's arms: each step adds one change to the previous; numba (when given) last.
    /// Native steps need the native build, so they are left out when `native` is false.
    pub fn ladder_arms(
        &mut self,
        native: bool,
        numba: Option<usize>,
    ) -> Result<Vec<Labeled<'static>>, String> {
        let b = self.flavor(Flavor::Base)?;
        let remote = |label: &str, w: usize, line: &'static str| Labeled {
            label: label.to_string(),
            arm: Arm::Remote(w, line),
        };
        // With the library's `unchecked` variant (the study's get_unchecked build) every step is a
        // library variant; without it, the lab's copies stand in (same loops, see `kernels`).
        let (unchecked, lab) = if Variant::from_name("unchecked").is_some() {
            ("run variant unchecked", None)
        } else {
            (
                "run kernel unchecked fresh",
                Some("run kernel reference fresh"),
            )
        };
        let mut v = vec![remote(
            "rust reference (variant, baseline build)",
            b,
            "run variant reference",
        )];
        if let Some(line) = lab {
            v.push(remote("lab copy of the reference loop", b, line));
        }
        v.push(remote("+ get_unchecked (no bounds check)", b, unchecked));
        if native {
            let n = self.flavor(Flavor::Native)?;
            v.push(remote("+ target-cpu=native", n, unchecked));
        }
        if let Some(nb) = numba {
            v.push(remote("numba sweep", nb, "run"));
        }
        Ok(v)
    }

    /// Minor page faults of one sweep per configuration (each run twice, the second counted, so
    /// one-time warm-up faults are excluded). Evidence for the allocation hypothesis.
    pub fn faults(&mut self, numba: Option<usize>) -> Result<Vec<(String, u64)>, String> {
        let b = self.flavor(Flavor::Base)?;
        let mut v = Vec::new();
        for (label, line) in [
            (
                "rust reference (fresh vec per pass)",
                "faults variant reference",
            ),
            (
                "lab reference, reused buffers",
                "faults kernel reference reuse",
            ),
        ] {
            let mut n = 0;
            for _ in 0..2 {
                let r = self.workers[b].call(line)?;
                n = r
                    .split_whitespace()
                    .next()
                    .and_then(|x| x.parse().ok())
                    .ok_or(format!("faults reply {r:?}"))?;
            }
            v.push((label.to_string(), n));
        }
        if let Some(nb) = numba {
            let mut n = 0;
            for _ in 0..2 {
                let r = self.workers[nb].call("faults")?;
                n = r
                    .trim()
                    .parse()
                    .map_err(|_| format!("numba faults reply {r:?}"))?;
            }
            v.push(("numba sweep".to_string(), n));
        }
        Ok(v)
    }

    /// Runs hypothesis `key` and returns its outcome (arm 0 is always the baseline).
    pub fn run(&mut self, key: &str) -> Result<Outcome, String> {
        let arms = self.arms(key)?;
        interleave(&arms, self.rounds, &self.wl, &mut self.workers)
    }

    fn arms(&mut self, key: &str) -> Result<Vec<Labeled<'static>>, String> {
        use kernels::*;
        let k = |label: &str, f: WmaInto, p: Pass| Labeled {
            label: label.to_string(),
            arm: Arm::Kernel(f, p),
        };
        let fresh = Pass::FreshNanFill;
        Ok(match key {
            "gap" => {
                let nb = self.numba()?;
                vec![
                    Labeled {
                        label: "rust reference".into(),
                        arm: Arm::Variant(Variant::Reference),
                    },
                    Labeled {
                        label: "numba sweep".into(),
                        arm: Arm::Remote(nb, "run"),
                    },
                ]
            }
            "bounds" => vec![
                k("reference (checked)", wma_reference, fresh),
                k("get_unchecked", wma_unchecked, fresh),
            ],
            "weight" => vec![
                k("(k+1) as f64 from usize", wma_reference, fresh),
                k("(k as i64 + 1) as f64", wma_signed_weight, fresh),
                k("float counter", wma_float_counter, fresh),
                k("weight table", wma_weight_table, fresh),
            ],
            "alloc" => vec![
                k("fresh vec per pass", wma_reference, fresh),
                k("reused buffers", wma_reference, Pass::ReuseNanFill),
            ],
            "nanfill" => vec![
                k("full NaN fill", wma_reference, Pass::ReuseNanFill),
                k("NaN head only", wma_reference, Pass::ReuseNanHead),
            ],
            "shape" => vec![
                k("index arithmetic", wma_reference, fresh),
                k("sub-slice + enumerate", wma_subslice, fresh),
                k("sub-slice zip table", wma_subslice_table, fresh),
            ],
            "unroll" => vec![
                k("reference", wma_reference, fresh),
                k("float counter", wma_float_counter, fresh),
                k("unroll by 4", wma_unroll4, fresh),
            ],
            "numba-shape" => vec![
                k("reference", wma_reference, fresh),
                k("numba's loop in Rust", wma_numba_shape, fresh),
            ],
            "interchange" => vec![
                k("reference", wma_reference, fresh),
                k("interchanged (bars inner)", wma_interchange, fresh),
            ],
            "native" => {
                let b = self.flavor(Flavor::Base)?;
                let n = self.flavor(Flavor::Native)?;
                vec![
                    Labeled {
                        label: "x86-64 baseline".into(),
                        arm: Arm::Remote(b, "run variant reference"),
                    },
                    Labeled {
                        label: "target-cpu=native".into(),
                        arm: Arm::Remote(n, "run variant reference"),
                    },
                ]
            }
            "lto" => {
                let b = self.flavor(Flavor::Base)?;
                let l = self.flavor(Flavor::Lto)?;
                vec![
                    Labeled {
                        label: "cgu=16, no LTO".into(),
                        arm: Arm::Remote(b, "run variant reference"),
                    },
                    Labeled {
                        label: "fat LTO, cgu=1".into(),
                        arm: Arm::Remote(l, "run variant reference"),
                    },
                ]
            }
            "variants" => Variant::ALL
                .iter()
                .map(|&v| Labeled {
                    label: v.name().to_string(),
                    arm: Arm::Variant(v),
                })
                .collect(),
            "ladder" => {
                let nb = self.numba().ok();
                self.ladder_arms(true, nb)?
            }
            other => return Err(format!("unknown hypothesis {other:?}; one of {}", keys())),
        })
    }
}

/// All hypothesis keys, comma separated (for error messages and help).
pub fn keys() -> String {
    HYPOTHESES
        .iter()
        .map(|(k, _)| *k)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Serves timed sweeps over stdin/stdout for another process's interleaved runs.
/// `run kernel NAME fresh|reuse|head` or `run variant NAME` -> `<wall_s> <trades_sum> <cpu_s>`;
/// `faults ...` (same targets) -> `<minor_faults> <trades_sum>`.
pub fn serve(bars: usize, grid_spec: &str) -> Result<(), String> {
    use std::io::{BufRead, Write};
    let spec: GridSpec = grid_spec.parse().map_err(|e| format!("{e}"))?;
    let close = gbm(
        bars,
        hullsweep_kernel::DEFAULT_SEED,
        hullsweep_kernel::DEFAULT_SIGMA,
    )
    .map_err(|e| e.to_string())?;
    let params = grid(spec).map_err(|e| e.to_string())?;
    let fee = hullsweep_kernel::DEFAULT_FEE_PCT;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "ready rust").map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let reply = match words[..] {
            ["quit"] => break,
            ["faults", ref rest @ ..] => {
                let before = minor_faults();
                let r = run_line(rest, &close, &params, fee)?;
                format!("{} {}", minor_faults().saturating_sub(before), r.0)
            }
            ["run", ref rest @ ..] => {
                let (r, t) = crate::timing::timed(|| run_line(rest, &close, &params, fee));
                let (trades, _) = r?;
                format!("{:?} {trades} {:?}", t.wall, t.cpu)
            }
            _ => format!("error: unknown command {line:?}"),
        };
        writeln!(out, "{reply}").map_err(|e| e.to_string())?;
        out.flush().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Runs `kernel NAME fresh|reuse|head` or `variant NAME` once: `(trades_sum, ())`.
fn run_line(
    words: &[&str],
    close: &[f64],
    params: &[hullsweep_kernel::Combo],
    fee: f64,
) -> Result<(i64, ()), String> {
    let r = match *words {
        ["kernel", name, pass] => {
            let k = kernels::kernel(name).ok_or(format!("unknown kernel {name}"))?;
            let pass = match pass {
                "fresh" => Pass::FreshNanFill,
                "reuse" => Pass::ReuseNanFill,
                "head" => Pass::ReuseNanHead,
                p => return Err(format!("unknown pass {p}")),
            };
            kernels::sweep_with(k, pass, close, params, fee)
        }
        ["variant", name] => {
            let v = Variant::from_name(name).ok_or(format!("unknown variant {name}"))?;
            v.sweep(close, params, fee, hullsweep_variants::Threads::Fixed(1))
                .map_err(|e| e.to_string())?
        }
        _ => return Err(format!("unknown run target {words:?}")),
    };
    Ok((r.trades.iter().sum(), ()))
}

/// Minor page faults of this process so far (`/proc/self/stat` field 10): allocation that
/// returns memory to the kernel shows up here as fresh, zeroed pages on every reuse.
pub fn minor_faults() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // The command name (field 2) may hold spaces; count fields after its closing paren.
            let rest = s.rsplit_once(')')?.1.to_string();
            rest.split_whitespace().nth(7)?.parse().ok()
        })
        .unwrap_or(0)
}
