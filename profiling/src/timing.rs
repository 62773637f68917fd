//! Interleaved A/B timing: every arm runs once per round (A B C A B C …), medians per arm.
//! Arms are in-process kernels, library variants, or long-lived worker processes (numba, other builds).

use crate::kernels::{Pass, WmaInto, identical, sweep_with};
use hullsweep_kernel::{Combo, SweepResult};
use hullsweep_variants::{Threads, Variant};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// A long-lived child speaking the line protocol `run ...` -> `<seconds> <trades_sum>`.
pub struct Worker {
    /// The name it was spawned under (e.g. `numba`), used in errors and to find it again.
    pub name: String,
    /// What the worker said about itself after `ready` (versions, CPU), quoted in the report.
    pub banner: String,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    /// Starts `cmd` and waits for its `ready ...` banner line.
    pub fn spawn(name: &str, mut cmd: Command) -> Result<Worker, String> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start worker {name}: {e}"))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut w = Worker {
            name: name.to_string(),
            banner: String::new(),
            child,
            stdin,
            stdout,
        };
        let banner = w.read_line()?;
        if !banner.starts_with("ready") {
            return Err(format!("worker {name} did not start: {banner:?}"));
        }
        w.banner = banner.trim_start_matches("ready").trim().to_string();
        Ok(w)
    }

    fn read_line(&mut self) -> Result<String, String> {
        let mut line = String::new();
        let n = self
            .stdout
            .read_line(&mut line)
            .map_err(|e| format!("worker {}: {e}", self.name))?;
        if n == 0 {
            return Err(format!("worker {} exited", self.name));
        }
        Ok(line.trim().to_string())
    }

    /// Sends one command line and returns the one reply line.
    pub fn call(&mut self, line: &str) -> Result<String, String> {
        writeln!(self.stdin, "{line}").map_err(|e| format!("worker {}: {e}", self.name))?;
        self.stdin
            .flush()
            .map_err(|e| format!("worker {}: {e}", self.name))?;
        self.read_line()
    }

    /// Asks for one timed run; returns the wall and process-CPU seconds the worker measured
    /// around its sweep, and the sum of trades (to check the answer).
    pub fn run(&mut self, line: &str) -> Result<(Sample, i64), String> {
        let reply = self.call(line)?;
        let mut it = reply.split_whitespace();
        let wall = it.next().and_then(|s| s.parse().ok());
        let trades = it.next().and_then(|s| s.parse().ok());
        let cpu = it.next().and_then(|s| s.parse().ok());
        match (wall, trades, cpu) {
            (Some(wall), Some(t), Some(cpu)) => Ok((Sample { wall, cpu }, t)),
            _ => Err(format!("worker {} replied {reply:?}", self.name)),
        }
    }

    /// The pid, for `callgrind_control`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

/// One side of an experiment.
pub enum Arm<'a> {
    /// A kernel and pass mode from [`crate::kernels`], in this process.
    Kernel(WmaInto, Pass),
    /// A library variant, in this process (single thread).
    Variant(Variant),
    /// A worker process (index into the worker list) and the line it is sent.
    Remote(usize, &'a str),
}

/// An arm with its label.
pub struct Labeled<'a> {
    /// The arm's name in the results and the report.
    pub label: String,
    /// What the arm runs.
    pub arm: Arm<'a>,
}

/// One timed run: wall-clock seconds and the process's CPU seconds over the same interval.
/// CPU time leaves out the time the process sat preempted by other load on a shared machine.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Wall-clock seconds.
    pub wall: f64,
    /// CPU seconds of the whole process (all threads); `NaN` if the clock could not be read.
    pub cpu: f64,
}

/// CPU seconds this process has used so far (all threads).
pub fn cpu_now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_PROCESS_CPUTIME_ID is always supported on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Times `f`, wall and CPU.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Sample) {
    let c0 = cpu_now();
    let t = Instant::now();
    let r = f();
    let wall = t.elapsed().as_secs_f64();
    let cpu = cpu_now() - c0;
    (r, Sample { wall, cpu })
}

/// Medians and samples per arm, in arm order.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The arms' labels, in the order the arms were given.
    pub labels: Vec<String>,
    /// Wall-clock seconds of each recorded run, per arm (warm-up excluded), in run order.
    pub samples: Vec<Vec<f64>>,
    /// CPU seconds of the same runs.
    pub cpu: Vec<Vec<f64>>,
}

impl Outcome {
    /// Median wall-clock seconds of arm `i`.
    ///
    /// # Panics
    ///
    /// If `i` is not an arm index.
    pub fn median(&self, i: usize) -> f64 {
        median(&self.samples[i])
    }

    /// Median CPU seconds of arm `i`.
    pub fn cpu_median(&self, i: usize) -> f64 {
        median(&self.cpu[i])
    }

    /// Median of arm `i` over median of arm `j` (>1: `i` is slower).
    pub fn ratio(&self, i: usize, j: usize) -> f64 {
        self.median(i) / self.median(j)
    }

    /// Min and max of arm `i`.
    pub fn range(&self, i: usize) -> (f64, f64) {
        let s = &self.samples[i];
        let lo = s.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    }
}

/// The median of `v` (the mean of the middle two for an even count); `NaN` when `v` is empty.
/// Sorted with [`f64::total_cmp`], so a NaN reading (an unreadable clock) cannot panic the sort.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The data every arm sweeps, with the reference answer to check each arm against.
pub struct Workload {
    /// The close prices, one per bar.
    pub close: Vec<f64>,
    /// The window combos to sweep.
    pub params: Vec<Combo>,
    /// Round-trip fee per closed trade, in percentage points, as the kernel takes it.
    pub fee: f64,
    /// The reference kernel's answer on this data, which every arm must reproduce.
    pub want: SweepResult,
}

impl Workload {
    /// A workload with its reference answer computed by `hullsweep_kernel::sweep`.
    ///
    /// # Panics
    ///
    /// If the kernel refuses the inputs (a bad series, combo or fee): the lab builds its own
    /// workloads, so that is a bug in the lab, not a user error.
    pub fn new(close: Vec<f64>, params: Vec<Combo>, fee: f64) -> Workload {
        let want = hullsweep_kernel::sweep(&close, &params, fee).expect("valid workload");
        Workload {
            close,
            params,
            fee,
            want,
        }
    }

    fn trades_sum(&self) -> i64 {
        self.want.trades.iter().sum()
    }

    /// Writes the series and params as raw little-endian files for workers to read.
    pub fn write_raw(&self, dir: &Path) -> std::io::Result<(String, String)> {
        std::fs::create_dir_all(dir)?;
        let c = dir.join("close.f64");
        let p = dir.join("params.i64");
        let cb: Vec<u8> = self.close.iter().flat_map(|v| v.to_le_bytes()).collect();
        let pb: Vec<u8> = self
            .params
            .iter()
            .flatten()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        std::fs::write(&c, cb)?;
        std::fs::write(&p, pb)?;
        Ok((c.display().to_string(), p.display().to_string()))
    }
}

/// Runs one arm once and returns its times; checks the answer against the reference.
fn run_arm(arm: &Arm, wl: &Workload, workers: &mut [Worker]) -> Result<Sample, String> {
    match arm {
        Arm::Kernel(k, pass) => {
            let (r, t) = timed(|| sweep_with(*k, *pass, &wl.close, &wl.params, wl.fee));
            if !identical(&r, &wl.want) {
                return Err("an in-process kernel differs from the reference".into());
            }
            Ok(t)
        }
        Arm::Variant(v) => {
            let (r, t) = timed(|| v.sweep(&wl.close, &wl.params, wl.fee, Threads::Fixed(1)));
            let r = r.map_err(|e| e.to_string())?;
            // Variants that reorder sums may legitimately move a cross on data the gate never saw;
            // that is the gate's business, so warn and keep timing rather than abort the report.
            if r.trades != wl.want.trades {
                eprintln!(
                    "warning: variant {} trades differ from the reference on this workload",
                    v.name()
                );
            }
            Ok(t)
        }
        Arm::Remote(i, line) => {
            let (t, trades) = workers[*i].run(line)?;
            if trades != wl.trades_sum() {
                return Err(format!(
                    "worker {} `{line}` traded {trades}, reference {}",
                    workers[*i].name,
                    wl.trades_sum()
                ));
            }
            Ok(t)
        }
    }
}

/// Runs `rounds` rounds of every arm in turn, one warm-up round first (not recorded).
/// The order within a round rotates so no arm always follows the same neighbour.
pub fn interleave(
    arms: &[Labeled],
    rounds: usize,
    wl: &Workload,
    workers: &mut [Worker],
) -> Result<Outcome, String> {
    let mut samples = vec![Vec::with_capacity(rounds); arms.len()];
    let mut cpu = vec![Vec::with_capacity(rounds); arms.len()];
    for a in arms {
        run_arm(&a.arm, wl, workers)?;
    }
    for r in 0..rounds {
        for j in 0..arms.len() {
            let i = (j + r) % arms.len();
            let t = run_arm(&arms[i].arm, wl, workers)?;
            samples[i].push(t.wall);
            cpu[i].push(t.cpu);
        }
    }
    Ok(Outcome {
        labels: arms.iter().map(|a| a.label.clone()).collect(),
        samples,
        cpu,
    })
}
