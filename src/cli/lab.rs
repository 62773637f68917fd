//! `hullsweep lab`: the main job. numba and every Rust variant on the built-in default data,
//! gated against numba and timed side by side.

use anyhow::{Context, bail};
use hullsweep_gate::numba::{self, Worker};
use hullsweep_kernel::{DEFAULT_FEE_PCT, GridSpec};
use hullsweep_lab::breakdown;
use hullsweep_lab::report::{self, Markdown, Section};
use hullsweep_lab::table::{self as lab, LabConfig};
use hullsweep_variants::{Threads, Variant};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::time::Duration;

/// Run numba (1 thread and prange) and every Rust variant on the default sweep, side by side.
///
/// Each implementation is first checked against numba single-thread (the equivalence gate:
/// equal trade counts, |ΔPnL| <= 1e-6, and whether the PnL bits are identical), then timed in
/// interleaved rounds (the order rotates each round), and the medians are tabulated with the
/// speed-up over numba single-thread. Sections follow: `rolling`'s certification and cost; without
/// --variant, `fastest` against the best single variant on this sweep and on 10,000 × 8, 1,000 ×
/// 80 and 150,000 × 2, the metrics' cost and, on the default data and grid, `fastest` on 1 and 2
/// threads beside the machine's ceiling (in-process, and as whole `hullsweep sweep` processes on
/// 1.5M bars), the breakdown of the default sweep's time with every variant's roofline, and the
/// live section. The report starts with the date,
/// commit, CPU, toolchain and load average it was made under. On first use the Python
/// environment (.venv with numba) is created where `hullsweep setup --help` says. Exits non-zero
/// if any implementation fails the gate.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Timed rounds per implementation (the table shows the median).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Close series (.npy or .csv); default: the built-in 150,000-bar series.
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
    /// CSV column holding the close.
    #[arg(long, value_name = "NAME")]
    column: Option<String>,
    /// Grid of HMA lengths LO:HI:K (K distinct lengths from LO to HI).
    #[arg(long, value_name = "LO:HI:K", default_value = "6:200:80", value_parser = super::args::parse_grid)]
    grid: GridSpec,
    #[arg(long, value_name = "PCT", help = super::args::FEE_HELP, default_value_t = DEFAULT_FEE_PCT, allow_negative_numbers = true)]
    fee: f64,
    /// Threads for the parallel contenders (rayon and numba prange); default: all cores.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    #[arg(
        long = "variant",
        value_name = "NAME",
        help = super::args::variant_help("Only these Rust variants (repeatable; default: all)"),
        value_parser = super::args::parse_variant
    )]
    variants: Vec<Variant>,
    /// Also write the table as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Instead of the table: the scale study. `hullsweep sweep` on GBM series of each length in
    /// --scale-bars, read in chunks as a user's run reads it, wall time and peak RSS; written as
    /// the "scale" section of --out (replaced in place) with a log-log SVG beside it.
    #[arg(long)]
    scale: bool,
    /// Instead of the table: only the live section ("Live: cost per bar"): per-bar latency of
    /// `Live::push` for 80 and 10,000 combos after 150,000 default bars, beside re-running the
    /// batch and numba on the last window; written into --out in place of the old one. The full
    /// lab writes it too, on the default data and grid (about 3 minutes of its run); with --data
    /// or another --grid it keeps the section --out already has.
    #[arg(long, conflicts_with = "scale")]
    live: bool,
    /// Instead of the table: only the breakdown section ("Where the default sweep's time goes,
    /// and the roofline"): `hullsweep sweep` as a whole process against an empty one and its
    /// phases timed in-process (series, checks, planning, preparation, kernel, fallback, event
    /// loop, output), 3 × --rounds interleaved rounds; then every variant on one thread, --rounds
    /// rounds, against this core's measured flop peaks and memory bandwidth. Written into --out
    /// in place of the old one, with roofline.svg beside it. The full lab writes it too, on the
    /// default data and grid; --grid makes a quick run (the series is always the built-in one).
    #[arg(long, conflicts_with_all = ["scale", "live", "data"])]
    breakdown: bool,
    /// The breakdown's memory-bandwidth buffer, in MiB (default: 4 × the last-level cache the
    /// OS reports, 256 to 2048 MiB).
    #[arg(long, value_name = "MIB", requires = "breakdown")]
    bandwidth_mib: Option<usize>,
    /// Series lengths of the scale study (the data files go to --scale-dir; 8 bytes a bar).
    #[arg(
        long,
        value_name = "N,N,...",
        value_delimiter = ',',
        default_value = "100000,1000000,10000000,100000000,1000000000"
    )]
    scale_bars: Vec<u64>,
    /// Where the scale study keeps its data files (reused between runs).
    #[arg(long, value_name = "DIR", default_value = "target/scale")]
    scale_dir: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.scale {
        return super::scale::run(&args.scale_bars, &args.scale_dir, args.out.as_deref());
    }
    if args.rounds == 0 {
        bail!("--rounds 0: need at least one timed round");
    }
    if args.breakdown {
        let exe = std::env::current_exe().context("cannot find this executable")?;
        let mut cfg = breakdown::Config::new(exe, args.rounds);
        cfg.grid = args.grid;
        cfg.dram_bytes = args.bandwidth_mib.map(|m| m.max(1) << 20);
        let out = args.out.as_deref();
        let section = spin(true, |tick| report::breakdown(&cfg, out, None, tick))?;
        println!("{section}");
        if let Some(path) = out {
            report::write_breakdown(path, &section)?;
        }
        return Ok(());
    }
    if args.live {
        numba::ensure_venv(true)?;
        let mut worker = Worker::start().context("cannot start the numba reference")?;
        let section = spin(true, |tick| report::live(&mut worker, args.rounds, tick))?;
        println!("{section}");
        if let Some(path) = &args.out {
            report::write_live(path, &section)?;
        }
        return Ok(());
    }
    let threads = super::args::threads(args.threads)?;
    let close = super::args::load_close(args.data.as_deref(), args.column.as_deref(), threads)?;
    let params = super::args::load_params(None, args.grid)?;
    hullsweep_kernel::validate_fee(args.fee)?;

    numba::ensure_venv(true)?;
    let mut worker = Worker::start().context("cannot start the numba reference")?;
    if let Threads::Fixed(n) = threads {
        worker.set_threads(n)?;
    }
    let variants = if args.variants.is_empty() {
        Variant::ALL.to_vec()
    } else {
        args.variants.clone()
    };
    let cfg = LabConfig {
        close,
        params,
        fee: args.fee,
        threads,
        rounds: args.rounds,
        contenders: lab::contenders(&variants, threads),
    };

    eprintln!(
        "lab: {} bars × {} combos; checking every implementation against numba, then {} timed rounds",
        cfg.close.len(),
        cfg.params.len(),
        cfg.rounds
    );
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:20}] {pos}/{len} {wide_msg}")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(250));
    // Without a terminal (a log, CI) the bar is hidden: say each gate run and each round instead.
    let plain = bar.is_hidden();
    let mut round = String::new();
    let lab_report = lab::run(&cfg, &mut worker, |p| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        bar.set_message(p.now.to_string());
        if plain && !p.now.is_empty() {
            match p.now.split_once(':') {
                Some((r, _)) if r.starts_with("round") => {
                    if r != round {
                        eprintln!("lab: {r} of the timed runs ({}/{} steps)", p.done, p.total);
                        round = r.to_string();
                    }
                }
                _ => eprintln!("lab: {} ({}/{} steps)", p.now, p.done, p.total),
            }
        }
    })?;
    bar.finish_and_clear();

    let mut text = Markdown::new(lab_report.to_markdown());
    let default_sweep = args.data.is_none() && args.grid == hullsweep_kernel::DEFAULT_GRID;
    let numba_1t = lab_report.numba_1t_median();
    for section in Section::planned(&cfg, args.variants.is_empty(), default_sweep) {
        // The live section runs for minutes: a log gets its steps.
        let out = args.out.as_deref();
        let echo = section == Section::Live;
        text.append(&spin(echo, |tick| {
            report::section(section, &cfg, &mut worker, out, numba_1t, tick)
        })?);
    }
    // The header last: it states the load average at the end of the run.
    let head = report::header(&lab_report);
    let text = Markdown {
        terminal: head.clone() + &text.terminal,
        file: head + &text.file,
    };
    println!("{}", text.terminal);
    if let Some(path) = &args.out {
        report::write(path, &text.file)?;
    }
    if !lab_report.all_pass() {
        bail!("an implementation failed the equivalence gate (see the table)");
    }
    Ok(())
}

/// Runs `f` under a spinner that shows what it says runs next; with `echo`, also printed when
/// there is no terminal to show the spinner.
fn spin<T>(
    echo: bool,
    f: impl FnOnce(&mut dyn FnMut(&str)) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let bar = ProgressBar::new_spinner();
    let plain = echo && bar.is_hidden();
    let out = f(&mut |m| {
        if plain {
            eprintln!("lab: {m}");
        }
        bar.set_message(m.to_string());
        bar.tick();
    })?;
    bar.finish_and_clear();
    Ok(out)
}
