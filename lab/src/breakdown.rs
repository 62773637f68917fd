//! The lab's "breakdown" section: where the time of the default sweep (`hullsweep sweep`, no
//! flags: the built-in series, the default grid, `fastest`) goes as a whole process, phase by
//! phase, and the roofline of every variant on one core ([`crate::roofline`]).
//!
//! The whole process and an empty one (`hullsweep --version`) are timed as child processes; the
//! phases are timed in this process with `Instant`, doing what the command does step by step
//! (the series, the `Sweeper`'s checks, `rolling`'s plan, preparation, fast path, fallback and
//! event loop from `rolling::sweep_from_timed`, then the CSV), interleaved with the processes
//! round by round. What the phases and the empty process do not account for is reported as the
//! remainder.

use crate::ceilings;
use crate::machine::Provenance;
use crate::roofline::{self, Ceilings, Rate, median};
use anyhow::{Context, bail};
use hullsweep_data::results;
use hullsweep_kernel::{self as kernel, GridSpec, SweepResult, ValidClose};
use hullsweep_variants::rolling::{self, Stats, Timings};
use hullsweep_variants::simd::{Tier, WmaKernel};
use hullsweep_variants::{Backtest, Sweeper, Threads, Variant};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Marks the section in `reports/lab.md`, so it can be replaced in place.
pub const BEGIN: &str =
    "<!-- breakdown: written by `hullsweep lab` and `hullsweep lab --breakdown` -->";
/// Closes the section [`BEGIN`] opens.
pub const END: &str = "<!-- /breakdown -->";
/// The roofline chart's file name, written beside the report.
pub const SVG: &str = "roofline.svg";

/// What to measure.
#[derive(Clone, Debug)]
pub struct Config {
    /// The `hullsweep` binary whose processes are timed.
    pub exe: PathBuf,
    /// The grid swept (the default sweep's is [`kernel::DEFAULT_GRID`]; a smaller one makes a
    /// quick run); the series is always the built-in one, as `hullsweep sweep` has it.
    pub grid: GridSpec,
    /// Interleaved rounds of the processes and the in-process phases.
    pub rounds: usize,
    /// Interleaved rounds of the roofline's variants (the slowest take seconds per sweep).
    pub roofline_rounds: usize,
    /// Bytes of the memory-bandwidth buffer; `None`: [`ceilings::dram_buffer_bytes`].
    pub dram_bytes: Option<usize>,
    /// Seconds per sample of each flop peak (the best of 5 samples is kept).
    pub peak_secs: f64,
}

impl Config {
    /// The default sweep with `rounds` roofline rounds and three times as many rounds of the
    /// processes and phases (each takes tens of milliseconds, and a VM's noise needs them).
    pub fn new(exe: PathBuf, rounds: usize) -> Config {
        Config {
            exe,
            grid: kernel::DEFAULT_GRID,
            rounds: 3 * rounds,
            roofline_rounds: rounds,
            dram_bytes: None,
            peak_secs: 0.05,
        }
    }
}

/// One phase measured in this process, milliseconds per round.
#[derive(Clone, Debug)]
pub struct Phase {
    /// What it is, as the table names it.
    pub name: &'static str,
    /// Milliseconds, one per round.
    pub ms: Vec<f64>,
}

/// Everything the section reports.
#[derive(Clone, Debug)]
pub struct Breakdown {
    /// Bars of the series.
    pub bars: usize,
    /// Combos of the grid.
    pub combos: usize,
    /// The variant `fastest` is here.
    pub variant: Variant,
    /// Workers its sweep ran on.
    pub workers: usize,
    /// An empty process (`hullsweep --version`), ms per round.
    pub start: Vec<f64>,
    /// The whole `hullsweep sweep` process, ms per round.
    pub whole: Vec<f64>,
    /// The sweep process's own timing of its sweep (its `swept ... in X s` line), ms per round.
    pub reported: Vec<f64>,
    /// The phases in this process, in the command's order.
    pub phases: Vec<Phase>,
    /// The certification counts of the sweep.
    pub stats: Stats,
    /// The workers' busy time in the fast path, summed, ms per round.
    pub fast_busy: Vec<f64>,
    /// Every variant's rate on one thread.
    pub rates: Vec<Rate>,
    /// `rolling`'s flops per bar·combo on this grid ([`roofline::mean_flops`]).
    pub kernel_flops: f64,
    /// The machine's ceilings.
    pub ceilings: Ceilings,
    /// Seconds per sample of each flop peak.
    pub peak_secs: f64,
    /// Date, commit, machine, load.
    pub provenance: Provenance,
}

/// The phases' names, in the order [`in_process`] returns them.
const PHASES: [&str; 9] = [
    "series and grid: the built-in GBM series generated (on the sweep's threads), the grid expanded",
    "input checks: the `Sweeper`'s and the variant's (params, fee, every price)",
    "planning: each combo's route, restart period and bound coefficient, the workers",
    "preparation: each block of the series transposed into 8 lanes, block maxima, NaN bars",
    "rolling kernel: the fast path (both levels' recurrences, the certification test)",
    "fallback: uncertified bars recomputed with the reference's arithmetic",
    "event loop: NaN masking, class changes, the stop-and-reverse loop at them",
    "workers: their scratch, the pool's start, the waits for each other",
    "output: the results as CSV, written",
];

/// One in-process run of the command's steps: ms per phase, the counts and the timings.
fn in_process(
    grid: GridSpec,
    variant: Variant,
    threads: Threads,
) -> anyhow::Result<([f64; 9], Stats, Timings)> {
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    let fee = kernel::DEFAULT_FEE_PCT;
    let t = Instant::now();
    let params = kernel::grid(grid)?;
    // As the command makes it: on the sweep's threads at the best tier (the kernel's bits).
    let (bars, seed, sigma) = (
        kernel::DEFAULT_BARS,
        kernel::DEFAULT_SEED,
        kernel::DEFAULT_SIGMA,
    );
    let close = hullsweep_variants::gbm::gbm(bars, seed, sigma, threads)?;
    let series = ms(t);
    let t = Instant::now();
    let sweeper = Sweeper::new(&params, fee, variant, threads)?;
    kernel::validate_close(&close)?;
    let valid = ValidClose::new(&close)?;
    let checks = ms(t);
    let mut states = vec![Backtest::new(); params.len()];
    let (tier, wma) = (Tier::best(), WmaKernel::best());
    let (stats, tm) =
        rolling::sweep_from_timed(valid, &params, fee, threads, tier, wma, 0, &mut states)?;
    let t = Instant::now();
    let result = SweepResult {
        pnl: states.iter().map(Backtest::pnl).collect(),
        trades: states.iter().map(Backtest::trades).collect(),
    };
    let text = results::sweep_csv(&params, &result);
    std::io::sink().write_all(text.as_bytes())?;
    let output = ms(t);
    drop(sweeper);
    let d = |x: std::time::Duration| x.as_secs_f64() * 1e3;
    let w = tm.workers.max(1) as f64;
    let (prepare, fast, fallback, events) = (
        d(tm.prepare) / w,
        d(tm.fast) / w,
        d(tm.fallback + tm.direct) / w,
        d(tm.events) / w,
    );
    let wait = (d(tm.combos) - prepare - fast - fallback - events).max(0.0);
    let phases = [
        series,
        checks + d(tm.checks),
        d(tm.plan),
        prepare,
        fast,
        fallback,
        events,
        wait,
        output,
    ];
    Ok((phases, stats, tm))
}

/// Runs `exe args` with its output to /dev/null (stderr captured): wall ms and stderr. The
/// scaling section's whole-process row times its processes with it too.
pub(crate) fn process(exe: &std::path::Path, args: &[String]) -> anyhow::Result<(f64, String)> {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let t = Instant::now();
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {}", exe.display()))?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        bail!("{} {} failed: {stderr}", exe.display(), args.join(" "));
    }
    Ok((ms, stderr))
}

/// The sweep's own time from its `swept ... with V in X s` line, in ms.
pub(crate) fn reported_ms(stderr: &str) -> Option<f64> {
    let line = stderr.lines().find(|l| l.starts_with("swept "))?;
    let after = &line[line.find(" with ")?..];
    let secs: f64 = after
        .split(" in ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(secs * 1e3)
}

/// Measures everything the section reports; `tick` says what runs next.
pub fn run(cfg: &Config, mut tick: impl FnMut(&str)) -> anyhow::Result<Breakdown> {
    if cfg.rounds == 0 || cfg.roofline_rounds == 0 {
        bail!("the breakdown needs at least one round");
    }
    let provenance = Provenance::start();
    let variant = Variant::fastest();
    let threads = match variant {
        Variant::RollingRayon => Threads::Auto,
        _ => Threads::Fixed(1),
    };
    let version = vec!["--version".to_string()];
    let mut sweep = vec!["sweep".to_string()];
    if cfg.grid != kernel::DEFAULT_GRID {
        sweep.extend(["--grid".to_string(), cfg.grid.to_string()]);
    }
    // One untimed run of each: the binary in the page cache, the pool started.
    tick("breakdown: warming up");
    process(&cfg.exe, &version)?;
    process(&cfg.exe, &sweep)?;
    in_process(cfg.grid, variant, threads)?;
    let (mut start, mut whole, mut reported, mut fast_busy) = (vec![], vec![], vec![], vec![]);
    let mut phases: Vec<Phase> = PHASES
        .iter()
        .map(|&name| Phase { name, ms: vec![] })
        .collect();
    let (mut stats, mut workers) = (Stats::default(), 1);
    for round in 0..cfg.rounds {
        tick(&format!(
            "breakdown round {}/{}: processes and phases",
            round + 1,
            cfg.rounds
        ));
        for j in 0..3 {
            match (j + round) % 3 {
                0 => start.push(process(&cfg.exe, &version)?.0),
                1 => {
                    let (ms, stderr) = process(&cfg.exe, &sweep)?;
                    whole.push(ms);
                    reported.extend(reported_ms(&stderr));
                }
                _ => {
                    let (ms, s, tm) = in_process(cfg.grid, variant, threads)?;
                    for (p, v) in phases.iter_mut().zip(ms) {
                        p.ms.push(v);
                    }
                    (stats, workers) = (s, tm.workers);
                    fast_busy.push(tm.fast.as_secs_f64() * 1e3);
                }
            }
        }
    }
    let close = kernel::default_close();
    let params = kernel::grid(cfg.grid)?;
    tick("roofline: the peak flop rates of one core");
    let caches = ceilings::caches();
    let peaks = ceilings::peaks(cfg.peak_secs, 5);
    tick("roofline: memory bandwidth");
    let dram_bytes = cfg
        .dram_bytes
        .unwrap_or_else(|| ceilings::dram_buffer_bytes(&caches));
    let dram = (ceilings::stream_read(dram_bytes, 3), dram_bytes);
    let series_bytes = close.len() * 8;
    let series = (ceilings::stream_read(series_bytes, 50), series_bytes);
    let ceilings = Ceilings {
        peaks,
        dram,
        series,
        l2: ceilings::cache_bytes(&caches, 2),
        llc: caches
            .iter()
            .map(|c| c.level)
            .max()
            .and_then(|l| ceilings::cache_bytes(&caches, l)),
    };
    let rates = roofline::rates(
        &close,
        &params,
        kernel::DEFAULT_FEE_PCT,
        cfg.roofline_rounds,
        &mut tick,
    )?;
    Ok(Breakdown {
        bars: close.len(),
        combos: params.len(),
        variant,
        workers,
        start,
        whole,
        reported,
        phases,
        stats,
        fast_busy,
        rates,
        kernel_flops: roofline::mean_flops(Variant::Rolling, &params, close.len()),
        ceilings,
        peak_secs: cfg.peak_secs,
        provenance,
    })
}

/// A table row: the phase, its median in ms, its share of the whole process.
fn share_row(name: &str, ms: f64, whole: f64) -> String {
    format!("| {name} | {ms:.3} | {:.1}% |\n", 100.0 * ms / whole)
}

/// Issue 30's target for the whole process against numba single-thread on the default sweep.
pub const TARGET_VS_NUMBA: f64 = 250.0;

/// Issue 30's target line: the whole process (`whole_ms`, the table's last row) against numba
/// single-thread's median of the same run.
fn vs_numba(whole_ms: f64, numba_1t_s: Option<f64>) -> String {
    let Some(numba) = numba_1t_s else {
        return format!(
            "Against numba: this run did not time it; the full lab (`hullsweep lab`) states the \
             whole process's speed-up over numba single-thread, from the same run's table \
             (issue 30's target: at least {TARGET_VS_NUMBA:.0}×).\n\n"
        );
    };
    let x = numba * 1e3 / whole_ms;
    format!(
        "Target (issue 30): `fastest` on the default sweep as a whole process at least \
         {TARGET_VS_NUMBA:.0}× as fast as numba single-thread (timed inside its process, kernel \
         only): numba's median in this run's table {numba:.3} s over the whole process's \
         {whole_ms:.3} ms is {x:.0}×, {}.\n\n",
        if x >= TARGET_VS_NUMBA {
            "met"
        } else {
            "**not met**"
        }
    )
}

/// The section, linking the chart `svg_name` beside the report. `numba_1t_s`: numba
/// single-thread's median seconds on the default sweep in the same lab run (its table), for
/// the whole process's speed-up against it; `None` when this run did not time numba.
pub fn to_markdown(b: &Breakdown, svg_name: &str, numba_1t_s: Option<f64>) -> String {
    let whole = median(&b.whole);
    let start = median(&b.start);
    let sum: f64 = b.phases.iter().map(|p| median(&p.ms)).sum();
    let remainder = whole - start - sum;
    let mib = |x: usize| x as f64 / 1048576.0;
    let mut s = format!("{BEGIN}\n## Where the default sweep's time goes, and the roofline\n\n");
    s += &format!(
        "`hullsweep sweep` with no flags ({} bars of the built-in series × {} combos, `fastest` = \
         `{}` on {} worker{} here, CSV to /dev/null) as a whole process, beside an empty process \
         (`hullsweep --version`: exec, loading, argument parsing, exit), and the command's phases \
         timed in the lab's own process with `Instant`, doing what the command does step by step \
         (the rolling stages from `rolling::sweep_from_timed`; the preparation, fast path, \
         fallback and event loop are the workers' busy time divided by the number of workers, \
         and what is left of the combos' wall time is the \"workers\" row). Median ms over {} interleaved rounds (the \
         two processes and the in-process run, order rotating), after one untimed round of each. \
         The remainder is what the empty process and the phases do not account for: in the \
         sweep process, its memory fresh from the OS (page faults the warm in-process runs do not \
         pay), the pool's thread start, the progress bar and Ctrl-C handler, the summary line; \
         it is the whole minus the rows above it, so the shares sum to 100%.\n\n",
        b.bars,
        b.combos,
        b.variant.name(),
        b.workers,
        if b.workers == 1 { "" } else { "s" },
        b.whole.len(),
    );
    s += "| phase | median (ms) | share of the whole process |\n|---|---:|---:|\n";
    s += &share_row(
        "process start and exit (an empty process: `hullsweep --version`)",
        start,
        whole,
    );
    for p in &b.phases {
        s += &share_row(p.name, median(&p.ms), whole);
    }
    s += &share_row(
        "remainder (the whole minus the rows above)",
        remainder,
        whole,
    );
    s += &share_row("**whole process: `hullsweep sweep`**", whole, whole);
    let st = &b.stats;
    s += &format!(
        "\nFallback: {} of {} defined bar·combos uncertified ({:.4}% certified), {} bars \
         recomputed, {} combos on the SIMD pipeline, counted by the sweep itself (`Stats`) and \
         timed inside it.",
        st.fallback_bars,
        st.bars,
        100.0 * st.certified_fraction(),
        st.recomputed_bars,
        st.direct_combos,
    );
    let span: f64 = b.phases[1..8].iter().map(|p| median(&p.ms)).sum();
    if !b.reported.is_empty() {
        let inside = median(&b.reported) - span;
        s += &format!(
            " Cross-check: the sweep process timed its own sweep (its `swept ... in X s` line, \
             from the `Sweeper`'s checks to the event loop, to the millisecond) at a median of \
             {:.0} ms; the same span in the lab's warm process took {span:.1} ms. So about \
             {inside:.0} ms of the remainder is inside that span in a fresh process (what a first \
             sweep pays that a warm one does not), and about {:.0} ms outside it.",
            median(&b.reported),
            remainder - inside,
        );
    }
    s += "\n\n";
    s += &vs_numba(whole, numba_1t_s);
    s += &roofline_markdown(b, svg_name, mib);
    s += &format!(
        "\nWritten by `hullsweep lab --breakdown --out FILE` (and by the full lab on the default \
         sweep). {} The machine is shared: other jobs may have run during these runs, so times \
         are upper bounds and peaks lower bounds.\n{END}\n",
        b.provenance.line()
    );
    s
}

/// The roofline part of the section: ceilings, the table, the chart and the gap.
fn roofline_markdown(b: &Breakdown, svg_name: &str, mib: impl Fn(usize) -> f64) -> String {
    let c = &b.ceilings;
    let kernel = b.kernel_flops;
    let mut s = String::from("### Roofline: every variant on one core\n\n");
    let peaks: Vec<String> = c
        .peaks
        .iter()
        .map(|p| {
            let op = match p.op {
                ceilings::Op::MulAdd => "multiply + add",
                ceilings::Op::Fma => "FMA",
                ceilings::Op::Div => "divide",
            };
            format!("{} {op} {:.1} GFlop/s", p.isa.name(), p.flops / 1e9)
        })
        .collect();
    let cache =
        |x: Option<usize>| x.map_or("unknown".to_string(), |v| format!("{:.1} MiB", mib(v)));
    s += &format!(
        "Ceilings of one core, measured here. Flops: 12 independent chains of `x = x·m + a` (or \
         a fused multiply-add, or `x = x / m`: a division, one flop) per instruction set, the baseline as plain Rust auto-vectorised \
         to 2 lanes (SSE2 on x86-64), AVX2 and AVX-512 through `core::arch` at run time; the \
         best of 5 samples of {:.0} ms: {}. The kernels' ceiling is multiply + add at the \
         instruction set `rolling` runs its fast path at ({}): **{:.1} GFlop/s**. The direct \
         variants cannot fuse (a fused multiply-add rounds once where the reference rounds \
         twice, and would change their bits); `rolling` fuses its multiply-subtracts where the \
         CPU has FMA (its bound covers both roundings: `variants/src/rolling.md`, \"Fused \
         multiply-adds\"): on the default grid 16 of its 36 flops a position as 8 fused \
         instructions, so its own ceiling is up to 36/28, about 1.3 times this one. \
         Memory: one core's streaming read (32 accumulators, baseline) of {:.0} MiB (the \
         last-level cache: {}): **{:.1} GB/s**; of a buffer the size of the series each combo \
         re-reads ({:.2} MiB; L2: {}): {:.1} GB/s.\n\n",
        1e3 * b.peak_secs,
        peaks.join(", "),
        Ceilings::kernel_isa().name(),
        c.ceiling() / 1e9,
        mib(c.dram.1),
        cache(c.llc),
        c.dram.0 / 1e9,
        mib(c.series.1),
        cache(c.l2),
        c.series.0 / 1e9,
    );
    s += &format!(
        "Flops per bar·combo as each variant's code performs them (multiplies, adds, subtracts, \
         divides on data; `lab/src/roofline.rs` counts them from each combo's windows): the O(1) \
         kernel of `rolling` is 6 per rolling WMA per position (`q = w·x_new - S; T += q; S += \
         x_new - x_old`, then `T·(1/D)`), three first-level WMAs and two second-level ones plus \
         `2a - b` and `3c - dd - e`: **35 flops of indicator arithmetic**; then `d = hma - hma3` \
         (1: the certification keeps each lane's least `|d|` and compares it with the threshold \
         once a period), and the restarts and lanes' lookback: {kernel:.1} on this grid. The O(1) ceiling is the kernels' ceiling over that: \
         {:.3e} bar·combos/s. The direct variants compute every WMA as `2w + 1` flops a bar. \
         Bytes: each combo reads the series, 8 bytes a bar (intensity = flops / 8, the chart's \
         x axis); kept in cache across combos, it is 8 bytes a bar once per sweep, {:.2} bytes \
         per bar·combo (the last column).\n\n",
        c.ceiling() / kernel,
        roofline::SERIES_BYTES_PER_BAR / b.combos as f64,
    );
    s += "| variant (1 thread) | median sweep (s) | bar·combos / s | flops / bar·combo | GFlop/s | \
          % of the flop ceiling | bar·combos/s, % of the O(1) ceiling | flops / byte, series per combo | \
          flops / byte, series per sweep |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in &b.rates {
        let n = roofline::row(r, c, b.bars, b.combos, kernel);
        s += &format!(
            "| {} | {:.4} | {:.3e} | {:.1} | {:.2} | {:.1}% | {:.2}% | {:.1} | {:.0} |\n",
            r.variant.name(),
            median(&r.secs),
            n.rate,
            r.flops,
            n.flops / 1e9,
            100.0 * n.of_ceiling,
            100.0 * n.of_o1,
            n.ai_combo,
            n.ai_sweep,
        );
    }
    s += &format!(
        "\nMedian of {} interleaved rounds, one sweep per variant per round. \
         ![roofline: flops per byte against flops per second, the ceilings and every \
         variant]({svg_name})\n\n",
        b.rates.first().map_or(0, |r| r.secs.len())
    );
    s += &gap(b, kernel);
    s
}

/// The closing paragraph: where the gap between `fastest` and the flop ceiling goes, from the
/// measurements above (nothing here is not measured or counted).
fn gap(b: &Breakdown, kernel: f64) -> String {
    let c = &b.ceilings;
    let Some(r) = b.rates.iter().find(|r| r.variant == b.variant) else {
        return String::new();
    };
    let work = (b.bars * b.combos) as f64;
    let rate = r.bar_combos(b.bars, b.combos);
    let ceiling = c.ceiling() / kernel;
    let fast = work / (median(&b.fast_busy) / 1e3);
    // Seconds per bar·combo: the sweep, its fast path alone, and the ceiling.
    let (t_s, t_f, t_c) = (1.0 / rate, 1.0 / fast, 1.0 / ceiling);
    let gap = t_s - t_c;
    let mut s = format!(
        "Where the gap between `fastest` and the flop ceiling goes, from these measurements: on \
         one core `fastest`'s code (`{}`, 1 thread) sweeps {rate:.3e} bar·combos/s, {:.0}% of \
         the O(1) ceiling of {ceiling:.3e}. Its fast path alone (the workers' busy time in it, \
         in the breakdown's sweeps) runs at {fast:.3e} bar·combos/s, {:.0}% of the ceiling. So \
         of the gap, {:.0}% is spent outside the fast path (planning, preparation, checks, the \
         event loop and the workers' overhead, in the table above) and {:.0}% inside it, beyond \
         its counted flops.",
        b.variant.name(),
        100.0 * rate / ceiling,
        100.0 * fast / ceiling,
        100.0 * (t_s - t_f) / gap,
        100.0 * (t_f - t_c) / gap,
    );
    let done = rate * kernel;
    let ai = kernel / roofline::SERIES_BYTES_PER_BAR;
    let (dram, cached) = (c.dram.0 * ai, c.series.0 * ai);
    s += &if dram >= done {
        format!(
            " It is not memory bandwidth: even with the series read from memory once per combo \
             ({ai:.1} flops a byte), the memory roof is {:.1} GFlop/s, {:.1}× the {:.1} GFlop/s \
             the sweep performs, and a series-sized buffer's {:.1}×.",
            dram / 1e9,
            dram / done,
            done / 1e9,
            cached / done
        )
    } else {
        format!(
            " At {ai:.1} flops a byte (the series read once per combo) the memory roof would be \
             {:.1} GFlop/s, below the {:.1} GFlop/s the sweep performs: the series ({:.2} MiB) is \
             read from cache, whose measured roof at that intensity is {:.1}× the sweep's rate, \
             so the bandwidth is not the limit.",
            dram / 1e9,
            done / 1e9,
            c.series.1 as f64 / 1048576.0,
            cached / done
        )
    };
    s += " What inside the fast path takes its share (its loads and stores per position, the \
          loop-carried sums, the certification's select and sign bytes) these measurements do \
          not separate.\n";
    s
}

#[cfg(test)]
mod tests {
    use super::vs_numba;

    /// The target line says met at 250× and above, not met below, and, with no numba in the
    /// run, where the ratio is stated instead.
    #[test]
    fn the_whole_process_is_stated_against_numba() {
        let met = vs_numba(16.0, Some(4.0));
        assert!(
            met.contains("4.000 s over the whole process's 16.000 ms is 250×, met"),
            "{met}"
        );
        let short = vs_numba(16.1, Some(4.0));
        assert!(short.contains("is 248×, **not met**"), "{short}");
        let none = vs_numba(16.0, None);
        assert!(
            none.contains("did not time it") && none.contains("250×"),
            "{none}"
        );
    }
}
