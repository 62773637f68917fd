//! The lab's 2-core scaling section: `fastest` (`rolling-rayon`) at 1 and 2 threads, sweep by
//! sweep in one process and as whole `hullsweep sweep` processes on 1.5M bars, beside the
//! machine's own ceilings: register-only work of the same shape, and two processes at once.
//! Why it scales so: `docs/scaling.md`.

use crate::breakdown::{process, reported_ms};
use crate::scale;
use anyhow::Context;
use hullsweep_kernel::Combo;
use hullsweep_profiling::timing::median;
use hullsweep_variants::{Threads, Variant};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Sweeps per thread count in each round, in pairs ordered 1 2, 2 1, 1 2, ...
pub const PAIRS: usize = 31;

/// The target of issue 17: on the default sweep, 2 threads at least this many times as fast as
/// one (the median of the paired ratios).
pub const TARGET: f64 = 1.85;

/// Units of work in the ceiling workload: as many as the default sweep has combos.
pub const CEILING_UNITS: usize = 80;

/// Bars of the series the whole processes sweep: issue 30's 1.5M bars × 80 combos.
pub const PROCESS_BARS: u64 = 1_500_000;

/// Process pairs per round, ordered 1 2, 2 1, 1 2: each process takes a few hundred ms, so a
/// few a round keep the full lab's run short.
pub const PROCESS_PAIRS: usize = 3;

/// The target of issue 30: as whole processes on [`PROCESS_BARS`] bars × 80 combos, `--threads
/// 2` at least this many times as fast as `--threads 1` (the median of the paired ratios).
pub const PROCESS_TARGET: f64 = 1.9;

/// The whole-process rows' command: `exe sweep --data data --threads N`, on the default grid
/// with `fastest`, its results to /dev/null.
#[derive(Clone, Debug)]
pub struct Processes {
    /// The `hullsweep` binary (the lab's own executable).
    pub exe: PathBuf,
    /// The series file it sweeps (see [`Processes::new`]).
    pub data: PathBuf,
}

impl Processes {
    /// `exe` on the default GBM series of [`PROCESS_BARS`] bars, written into `dir` by `exe
    /// data` unless it is there ([`scale::gbm_file`]). A file rather than the built-in series:
    /// `hullsweep sweep` has no flag for the built-in series' length.
    pub fn new(exe: &Path, dir: &Path) -> anyhow::Result<Processes> {
        Ok(Processes {
            exe: exe.to_path_buf(),
            data: scale::gbm_file(exe, dir, PROCESS_BARS)?,
        })
    }

    /// The arguments of one process on `threads` threads.
    pub fn args(&self, threads: usize) -> Vec<String> {
        let data = self.data.display().to_string();
        [
            "sweep",
            "--data",
            &data,
            "--variant",
            "fastest",
            "--threads",
            &threads.to_string(),
        ]
        .map(String::from)
        .to_vec()
    }

    /// One process on `threads` threads: seconds from spawn to exit, and the seconds its sweep
    /// took by its own clock (its `swept ... in X s` line).
    pub fn time(&self, threads: usize) -> anyhow::Result<(f64, f64)> {
        let (ms, stderr) = process(&self.exe, &self.args(threads))?;
        let inside = reported_ms(&stderr)
            .with_context(|| format!("the sweep did not report its time: {stderr}"))?;
        Ok((ms / 1e3, inside / 1e3))
    }

    /// Two processes on one thread each, started together: seconds from the first spawn until
    /// both have exited. Two independent jobs share nothing but the machine, so half this time
    /// against one such process alone is what two cores give this work, memory traffic, file
    /// reads and process start included: the ceiling of the `--threads 2` process.
    pub fn time_pair(&self) -> anyhow::Result<f64> {
        let spawn = || {
            Command::new(&self.exe)
                .args(self.args(1))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .with_context(|| format!("cannot run {}", self.exe.display()))
        };
        let start = Instant::now();
        let children = [spawn()?, spawn()?];
        for mut child in children {
            let status = child.wait().context("cannot wait for a sweep process")?;
            if !status.success() {
                anyhow::bail!("{} {} failed", self.exe.display(), self.args(1).join(" "));
            }
        }
        Ok(start.elapsed().as_secs_f64())
    }
}

/// One workload's times, in seconds, per round.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `this sweep`, `ceiling`, `whole process` or `its sweep, self-timed`.
    pub workload: &'static str,
    /// Per round, the 1-thread times, in the order run.
    pub one: Vec<Vec<f64>>,
    /// Per round, the 2-thread times; `two[r][i]` ran next to `one[r][i]`.
    pub two: Vec<Vec<f64>>,
}

/// What the table shows of a [`Row`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Median 1-thread time over every round, in seconds.
    pub one: f64,
    /// Median 2-thread time over every round, in seconds.
    pub two: f64,
    /// Median over every pair of its 1-thread time / its 2-thread time.
    pub paired: f64,
    /// The least and greatest ratio of one round's medians.
    pub rounds: (f64, f64),
}

impl Row {
    /// Its statistics ([`Stats`]).
    pub fn stats(&self) -> Stats {
        let all = |v: &[Vec<f64>]| median(&v.concat());
        let mut pairs = Vec::new();
        let mut rounds = (f64::INFINITY, 0.0f64);
        for (a, b) in self.one.iter().zip(&self.two) {
            pairs.extend(a.iter().zip(b).map(|(a, b)| a / b));
            let r = median(a) / median(b);
            rounds = (rounds.0.min(r), rounds.1.max(r));
        }
        Stats {
            one: all(&self.one),
            two: all(&self.two),
            paired: median(&pairs),
            rounds,
        }
    }
}

/// Measures `rounds` rounds: in each, [`PAIRS`] paired sweeps of `rolling-rayon` on exactly 1
/// and 2 threads, then as many of the ceiling ([`ceiling`]), then, with `processes`,
/// [`PROCESS_PAIRS`] paired whole processes (after one untimed pair: the binary and the file in
/// the page cache), then as many pairs of one 1-thread process alone and two at once
/// ([`Processes::time_pair`]). The rows: this sweep, the ceiling, and with `processes` the
/// processes, their sweeps as they timed them, and the two processes at once. `tick` says what
/// runs next.
pub fn run(
    close: &[f64],
    params: &[Combo],
    fee: f64,
    rounds: usize,
    processes: Option<&Processes>,
    mut tick: impl FnMut(&str),
) -> anyhow::Result<Vec<Row>> {
    let sweep = |threads: usize| -> anyhow::Result<f64> {
        let start = Instant::now();
        Variant::RollingRayon.sweep(close, params, fee, Threads::Fixed(threads))?;
        Ok(start.elapsed().as_secs_f64())
    };
    let row = |workload| Row {
        workload,
        one: vec![],
        two: vec![],
    };
    let mut rows = vec![row("this sweep"), row("ceiling")];
    if let Some(p) = processes {
        rows.extend([
            row("whole process"),
            row("its sweep, self-timed"),
            row("two 1-thread processes at once"),
        ]);
        tick("scaling: whole processes: warming up");
        p.time(1)?;
        p.time(2)?;
    }
    for round in 1..=rounds {
        tick(&format!("scaling: round {round}/{rounds}: this sweep"));
        let (one, two) = paired(PAIRS, sweep)?;
        rows[0].one.push(one);
        rows[0].two.push(two);
        tick(&format!("scaling: round {round}/{rounds}: ceiling"));
        let (one, two) = paired(PAIRS, |t| Ok(ceiling(t, CEILING_UNITS)))?;
        rows[1].one.push(one);
        rows[1].two.push(two);
        if let Some(p) = processes {
            tick(&format!("scaling: round {round}/{rounds}: whole processes"));
            // The self-timed sweeps, in the order run: paired() runs each thread count's
            // processes in order, so `inside[t][i]` is the sweep of the process `(one|two)[i]`.
            let mut inside = [vec![], vec![]];
            let (one, two) = paired(PROCESS_PAIRS, |t| {
                let (whole, sweep) = p.time(t)?;
                inside[t - 1].push(sweep);
                Ok(whole)
            })?;
            rows[2].one.push(one);
            rows[2].two.push(two);
            let [one, two] = inside;
            rows[3].one.push(one);
            rows[3].two.push(two);
            // One process alone against two at once, each pair's time halved: per job.
            let (one, two) = paired(PROCESS_PAIRS, |t| match t {
                1 => p.time(1).map(|(whole, _)| whole),
                _ => p.time_pair().map(|pair| pair / 2.0),
            })?;
            rows[4].one.push(one);
            rows[4].two.push(two);
        }
    }
    Ok(rows)
}

/// `n` times of `time(1)` and of `time(2)`, each pair run in turn 1 2 then 2 1, so a drift in
/// the machine's speed falls on both alike.
fn paired(
    n: usize,
    mut time: impl FnMut(usize) -> anyhow::Result<f64>,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let (mut one, mut two) = (Vec::new(), Vec::new());
    for i in 0..n {
        if i % 2 == 0 {
            one.push(time(1)?);
            two.push(time(2)?);
        } else {
            two.push(time(2)?);
            one.push(time(1)?);
        }
    }
    Ok((one, two))
}

/// Seconds for `units` units of register-only work (about 0.4 ms each on a current x86-64 core)
/// on `threads` workers: the calling thread and a kept pool of `threads - 1`, each taking the
/// next unit until none is left, the caller spinning for the last, as the sweep's workers do
/// (`rayon::team` in `hullsweep-variants`). No memory traffic and no preparation: what the
/// machine allows a sweep of that shape.
pub fn ceiling(threads: usize, units: usize) -> f64 {
    static POOLS: Mutex<Vec<(usize, &'static rayon::ThreadPool)>> = Mutex::new(Vec::new());
    let unit = || {
        let mut a = [1.0f64; 8];
        for i in 0..120_000 {
            for (j, x) in a.iter_mut().enumerate() {
                *x = *x * 1.000_000_1 + i as f64 * 1e-12 + j as f64 * 1e-13;
            }
        }
        std::hint::black_box(a);
    };
    let next = AtomicUsize::new(0);
    let left = AtomicUsize::new(threads.saturating_sub(1));
    let work = || {
        while next.fetch_add(1, Ordering::Relaxed) < units {
            unit();
        }
    };
    let pool = (threads > 1).then(|| {
        let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
        match pools.iter().find(|(n, _)| *n == threads) {
            Some((_, p)) => Some(*p),
            None => {
                let p = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads - 1)
                    .build()
                    .ok()?;
                let p: &'static rayon::ThreadPool = Box::leak(Box::new(p));
                pools.push((threads, p));
                Some(p)
            }
        }
    });
    let start = Instant::now();
    match pool.flatten() {
        None => work(),
        Some(pool) => pool.in_place_scope(|scope| {
            for _ in 1..threads {
                scope.spawn(|_| {
                    work();
                    left.fetch_sub(1, Ordering::Release);
                });
            }
            work();
            while left.load(Ordering::Acquire) > 0 {
                std::hint::spin_loop();
            }
        }),
    }
    start.elapsed().as_secs_f64()
}

/// The section: what was run, the table, the targets and the load. The lab writes it for the
/// default sweep only, the one the targets are set on.
pub fn to_markdown(rows: &[Row], bars: usize, combos: usize, load: (&str, &str)) -> String {
    let rounds = rows.first().map_or(0, |r| r.one.len());
    let mut s = "## 2-core scaling of `fastest`\n\n".to_string();
    s += &format!(
        "`fastest` is `rolling-rayon`; here it runs on exactly 1 and 2 threads on this sweep \
         ({bars} bars × {combos} combos), in one process, sweep by sweep in pairs ordered 1 2, \
         2 1, ... (a drift in the machine's speed falls on both): {rounds} rounds of {PAIRS} \
         sweeps per thread count. `ceiling` is the machine's own limit for work of this shape: \
         {CEILING_UNITS} units of register-only arithmetic (about a combo's time each) taken in \
         turn by the calling thread and one pool thread, with no memory traffic and no \
         preparation, measured after the sweep in each round. Why the sweep scales as it does: \
         [docs/scaling.md](../docs/scaling.md).\n\n"
    );
    if rows.len() > 2 {
        s += &processes_prose(rounds);
    }
    s += "| workload | 1 thread (ms) | 2 threads (ms) | ratio of medians | per-pair ratio, median \
          | per-round ratio, range |\n|---|---:|---:|---:|---:|---:|\n";
    let stats: Vec<Stats> = rows.iter().map(Row::stats).collect();
    for (r, st) in rows.iter().zip(&stats) {
        s += &table_row(r.workload, st);
    }
    if let [sweep, ceiling, ..] = stats.as_slice() {
        s += &format!(
            "\nThe sweep's per-pair ratio is {:.0}% of the ceiling's.",
            100.0 * sweep.paired / ceiling.paired
        );
        s += &format!(
            " Target (issue 17): on the default sweep, 2 threads at least {TARGET:.2}× as fast \
             as 1: {:.2}× by the per-pair median, {}.\n",
            sweep.paired,
            if sweep.paired >= TARGET {
                "met"
            } else {
                "missed"
            }
        );
    }
    if let [_, ceiling, whole, inside, apart, ..] = stats.as_slice() {
        s += "\n";
        s += &process_verdict(whole, inside, ceiling, apart);
    }
    s += &format!(
        "\nLoad average (1, 5, 15 min): {} before this section, {} after it. On a machine whose \
         other jobs use a core, neither ratio says what the code allows.\n",
        load.0, load.1
    );
    s
}

/// One line of the table: the medians in ms, their ratio, the per-pair median and the range of
/// the per-round ratios.
fn table_row(workload: &str, st: &Stats) -> String {
    format!(
        "| {workload} | {:.2} | {:.2} | {:.2}× | {:.2}× | {:.2}–{:.2}× |\n",
        st.one * 1e3,
        st.two * 1e3,
        st.one / st.two,
        st.paired,
        st.rounds.0,
        st.rounds.1
    )
}

/// What the whole-process rows run, for the section's opening.
fn processes_prose(rounds: usize) -> String {
    format!(
        "`whole process` is `hullsweep sweep --data gbm-{PROCESS_BARS}.npy --variant fastest \
         --threads N` ({PROCESS_BARS} bars of the default GBM series, written once by `hullsweep \
         data`; the default grid, 80 combos; results to /dev/null), run as a child of the lab's \
         process and timed from spawn to exit, {PROCESS_PAIRS} pairs per round ordered as above \
         ({rounds} rounds, after one untimed pair), after the ceiling. Everything a user's run \
         pays is in it and runs serially beside the sweep: exec, loading and exit, the file read \
         and checked on a second thread one chunk ahead (so a `--threads 1` process uses a \
         little of the other core too), the `Sweeper` fed in pieces of 256 Ki bars with a join \
         after each, the CSV written. `its sweep, self-timed` is the same processes' own clock \
         of their sweep (the `swept ... in X s` line, to the millisecond): what is lost between \
         the two rows is outside the sweep. `two 1-thread processes at once` runs, in as many \
         pairs, one `--threads 1` process alone and two started together; its 2-thread column \
         is half the time the two took to finish, so its ratio is what two cores give two \
         independent copies of this work (memory traffic, file reads, process start and all): \
         the machine's ceiling for the `--threads 2` process, which shares no more than they \
         do.\n\n"
    )
}

/// The whole-process rows' closing sentence: the measured per-pair ratio against
/// [`PROCESS_TARGET`], beside the self-timed sweep's, the ceiling's and two independent
/// processes' (`apart`).
fn process_verdict(whole: &Stats, inside: &Stats, ceiling: &Stats, apart: &Stats) -> String {
    format!(
        "Target (issue 30): as whole processes on {PROCESS_BARS} bars × 80 combos, `--threads 2` \
         at least {PROCESS_TARGET:.2}× as fast as `--threads 1`: measured {:.2}× by the \
         per-pair median (per-round medians {:.2}–{:.2}×), {}. The same processes' sweeps by \
         their own clock: {:.2}×; the ceiling: {:.2}×; two independent 1-thread processes \
         at once: {:.2}× the throughput of one, so the 2-thread process reaches {:.0}% of what \
         two cores give this work here.\n",
        whole.paired,
        whole.rounds.0,
        whole.rounds.1,
        if whole.paired >= PROCESS_TARGET {
            "**PASS**"
        } else {
            "**not met**"
        },
        inside.paired,
        ceiling.paired,
        apart.paired,
        100.0 * whole.paired / apart.paired,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statistics_pair_the_sweeps_of_each_round() {
        let row = Row {
            workload: "this sweep",
            one: vec![vec![2.0, 2.0, 4.0], vec![3.0, 3.0, 3.0]],
            two: vec![vec![1.0, 1.0, 1.0], vec![2.0, 2.0, 2.0]],
        };
        let st = row.stats();
        assert_eq!(st.rounds, (1.5, 2.0));
        // Pairs: 2, 2, 4, 1.5, 1.5, 1.5.
        assert_eq!(st.paired, median(&[2.0, 2.0, 4.0, 1.5, 1.5, 1.5]));
        let md = to_markdown(&[row.clone(), row], 150_000, 80, ("1 1 1", "2 2 2"));
        assert!(md.contains("| this sweep |"), "{md}");
        assert!(md.contains("Target (issue 17)"), "{md}");
        assert!(md.contains("100% of the ceiling's"), "{md}");
        assert!(
            md.contains("1 1 1 before this section, 2 2 2 after it"),
            "{md}"
        );
    }

    #[test]
    fn the_whole_process_rows_are_judged_against_their_own_target() {
        let row = |workload, two: f64| Row {
            workload,
            one: vec![vec![2.0, 2.0, 2.0]],
            two: vec![vec![two; 3]],
        };
        let rows = |whole| {
            [
                row("this sweep", 1.0),
                row("ceiling", 1.0),
                row("whole process", whole),
                row("its sweep, self-timed", 1.0),
                // Two processes at once in 1.1x the time of one: 2 / 1.1 = 1.82x the throughput.
                row("two 1-thread processes at once", 1.1),
            ]
        };
        let met = to_markdown(&rows(1.0), 150_000, 80, ("0", "0"));
        assert!(met.contains("| whole process | 2000.00 | 1000.00 | 2.00× | 2.00× | 2.00–2.00× |"));
        assert!(
            met.contains("gbm-1500000.npy --variant fastest --threads N"),
            "{met}"
        );
        assert!(
            met.contains("`--threads 1`: measured 2.00× by the per-pair median"),
            "{met}"
        );
        assert!(met.contains("2.00–2.00×), **PASS**."), "{met}");
        assert!(
            met.contains(
                "at once: 1.82× the throughput of one, so the 2-thread process reaches 110%"
            ),
            "{met}"
        );
        // 2 / 1.06 = 1.89: below 1.9, and said so with the number.
        let missed = to_markdown(&rows(1.06), 150_000, 80, ("0", "0"));
        assert!(
            missed.contains("measured 1.89× by the per-pair median"),
            "{missed}"
        );
        assert!(
            missed.contains("**not met**") && !missed.contains("PASS"),
            "{missed}"
        );
        // Without the process rows (a lab given no executable), no process prose or verdict.
        let two = to_markdown(&rows(1.0)[..2], 150_000, 80, ("0", "0"));
        assert!(
            !two.contains("whole process") && !two.contains("issue 30"),
            "{two}"
        );
    }

    #[test]
    fn a_table_row_shows_milliseconds_and_ratios() {
        let st = Stats {
            one: 0.3,
            two: 0.16,
            paired: 1.9,
            rounds: (1.85, 1.95),
        };
        assert_eq!(
            table_row("whole process", &st),
            "| whole process | 300.00 | 160.00 | 1.88× | 1.90× | 1.85–1.95× |\n"
        );
    }

    #[test]
    fn a_process_sweeps_the_file_on_the_given_threads() {
        let p = Processes {
            exe: PathBuf::from("hullsweep"),
            data: PathBuf::from("/tmp/gbm-1500000.npy"),
        };
        assert_eq!(
            p.args(2).join(" "),
            "sweep --data /tmp/gbm-1500000.npy --variant fastest --threads 2"
        );
    }

    #[test]
    fn the_ceiling_runs_on_one_and_two_threads() {
        assert!(ceiling(1, 2) > 0.0);
        assert!(ceiling(2, 2) > 0.0);
        assert!(ceiling(2, 0) >= 0.0);
    }
}
