//! `hullsweep lab`: the main job. numba and every Rust variant on the built-in default data,
//! gated against numba and timed side by side.

use anyhow::{Context, bail};
use hullsweep_gate::numba::{self, Mode, Worker};
use hullsweep_kernel::{DEFAULT_FEE_PCT, GridSpec};
use hullsweep_lab::fastest as fastest_lab;
use hullsweep_lab::table::{self as lab, Contender, LabConfig};
use hullsweep_variants::{Threads, Variant};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::time::Duration;

/// Run numba (1 thread and prange) and every Rust variant on the default sweep, side by side.
///
/// Each implementation is first checked against numba single-thread (the equivalence gate:
/// equal trade counts, |ΔPnL| <= 1e-6, and whether the PnL bits are identical), then timed in
/// interleaved rounds (the order rotates each round), and the medians are tabulated with the
/// speed-up over numba single-thread. Two sections follow: `rolling`'s certification and cost,
/// and `fastest` against the best single variant on this sweep and on 10,000 × 8, 1,000 × 80 and
/// 150,000 × 2 (without --variant). On first use the Python environment (.venv with numba) is
/// created. Exits non-zero if any implementation fails the gate.
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
    #[arg(long, value_name = "LO:HI:K", default_value = "6:200:80", value_parser = super::sweep::parse_grid)]
    grid: GridSpec,
    #[arg(long, value_name = "PCT", help = super::sweep::FEE_HELP, default_value_t = DEFAULT_FEE_PCT, allow_negative_numbers = true)]
    fee: f64,
    /// Threads for the parallel contenders (rayon and numba prange); default: all cores.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    #[arg(
        long = "variant",
        value_name = "NAME",
        help = super::sweep::variant_help("Only these Rust variants (repeatable; default: all)"),
        value_parser = super::sweep::parse_variant
    )]
    variants: Vec<Variant>,
    /// Also write the table as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Instead of the table: the scale study. `hullsweep sweep` on GBM series of each length in
    /// --scale-bars, streamed and in memory, wall time and peak RSS; written as the "scale"
    /// section of --out (replaced in place) with a log-log SVG beside it.
    #[arg(long)]
    scale: bool,
    /// Instead of the table: only the live section ("Live: cost per bar"): per-bar latency of
    /// `Live::push` for 80 and 10,000 combos after 150,000 default bars, beside re-running the
    /// batch and numba on the last window; written into --out in place of the old one. The full
    /// lab writes it too, on the default data and grid (about 3 minutes of its run); with --data
    /// or another --grid it keeps the section --out already has.
    #[arg(long, conflicts_with = "scale")]
    live: bool,
    /// Series lengths of the scale study (the data files go to --scale-dir; 8 bytes a bar).
    #[arg(
        long,
        value_name = "N,N,...",
        value_delimiter = ',',
        default_value = "100000,1000000,10000000,100000000,1000000000"
    )]
    scale_bars: Vec<u64>,
    /// Longest series the scale study also sweeps --in-memory (about 170 bytes a bar).
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    scale_in_memory_max: u64,
    /// Where the scale study keeps its data files (reused between runs).
    #[arg(long, value_name = "DIR", default_value = "target/scale")]
    scale_dir: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.scale {
        return super::scale::run(
            &args.scale_bars,
            args.scale_in_memory_max,
            &args.scale_dir,
            args.out.as_deref(),
        );
    }
    if args.rounds == 0 {
        bail!("--rounds 0: need at least one timed round");
    }
    if args.live {
        numba::ensure_venv(true)?;
        let mut worker = Worker::start().context("cannot start the numba reference")?;
        let section = live_section(&mut worker, args.rounds)?;
        println!("{section}");
        if let Some(path) = &args.out {
            let old = std::fs::read_to_string(path).unwrap_or_default();
            // A first live section goes where the full lab puts it: before the scale section.
            let new = match old.find(hullsweep_lab::scale::BEGIN) {
                Some(at) if hullsweep_lab::live::section(&old).is_none() => {
                    format!("{}{section}\n{}", &old[..at], &old[at..])
                }
                _ => hullsweep_lab::live::splice(&old, &section),
            };
            std::fs::write(path, new)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        return Ok(());
    }
    let close = super::sweep::load_close(args.data.as_deref(), args.column.as_deref())?;
    let params = super::sweep::load_params(None, args.grid)?;
    let threads = super::sweep::threads(args.threads)?;
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
    let mut contenders = vec![
        Contender::Numba(Mode::Single),
        Contender::Numba(Mode::Prange),
    ];
    for v in variants {
        contenders.push(Contender::Rust(v));
        // The parallel variant also runs on one thread, so the table shows how it scales.
        if matches!(v, Variant::Rayon | Variant::RollingRayon)
            && hullsweep_variants::rayon::thread_count(threads) > 1
        {
            contenders.push(Contender::RustPinned(v, 1));
        }
    }
    let cfg = LabConfig {
        close,
        params,
        fee: args.fee,
        threads,
        rounds: args.rounds,
        contenders,
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
    let report = lab::run(&cfg, &mut worker, |p| {
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

    let mut table = report.to_markdown();
    let mut file_table = table.clone();
    // The rolling variant's own section: certification, fallback cost, window length and
    // adversarial data, each against simd side by side.
    if cfg
        .contenders
        .iter()
        .any(|c| matches!(c, Contender::Rust(Variant::Rolling | Variant::RollingRayon)))
    {
        let workloads = hullsweep_lab::rolling::workloads(&cfg.close, &cfg.params, cfg.fee);
        let bar = ProgressBar::new_spinner();
        let rows = hullsweep_lab::rolling::run(&workloads, cfg.rounds, |msg| {
            bar.set_message(msg.to_string());
            bar.tick();
        })?;
        bar.finish_and_clear();
        // The terminal gets no link (there is no file beside it); the report links the
        // flamegraph only when one is there to open.
        let section = |linked| hullsweep_lab::rolling::to_markdown(&rows, cfg.rounds, linked);
        let beside = |p: &std::path::Path| {
            p.parent()
                .unwrap_or(std::path::Path::new("."))
                .join(hullsweep_lab::rolling::FLAMEGRAPH)
                .is_file()
        };
        file_table = format!(
            "{table}\n{}",
            section(args.out.as_deref().is_some_and(beside))
        );
        table += "\n";
        table += &section(false);
    }
    // `fastest` against the best single variant, on the lab's sweep and three small ones.
    if args.variants.is_empty() {
        let machine = hullsweep_lab::machine::Machine::detect();
        let contenders = fastest_lab::contenders(machine.cores);
        let workloads = fastest_lab::workloads(&cfg.close, &cfg.params, cfg.fee);
        let bar = ProgressBar::new_spinner();
        let rows = fastest_lab::run(&workloads, &contenders, cfg.rounds, |msg| {
            bar.set_message(msg.to_string());
            bar.tick();
        })?;
        bar.finish_and_clear();
        let section = fastest_lab::to_markdown(&rows, &contenders, cfg.rounds);
        table += "\n";
        table += &section;
        file_table += "\n";
        file_table += &section;
    }
    // What the metrics cost on the lab's sweep, for the variants a researcher would run them on.
    if args.variants.is_empty() {
        let bar = ProgressBar::new_spinner();
        let rows =
            hullsweep_lab::metrics::run(&cfg.close, &cfg.params, cfg.fee, cfg.rounds, |m| {
                bar.set_message(m.to_string());
                bar.tick();
            })?;
        bar.finish_and_clear();
        let section = hullsweep_lab::metrics::to_markdown(
            &rows,
            cfg.close.len(),
            cfg.params.len(),
            cfg.rounds,
        );
        table += "\n";
        table += &section;
        file_table += "\n";
        file_table += &section;
    }
    // What a live push costs, beside what a user would do without it. Its targets are set on
    // the default series and grid, so a lab on other data or another grid keeps the old section.
    let default_sweep = args.data.is_none() && args.grid == hullsweep_kernel::DEFAULT_GRID;
    if args.variants.is_empty() && default_sweep {
        let section = live_section(&mut worker, cfg.rounds)?;
        table += "\n";
        table += &section;
        file_table += "\n";
        file_table += &section;
    }
    println!("{table}");
    if let Some(path) = &args.out {
        // The scale section is written by `lab --scale`; a table run keeps it.
        let old = std::fs::read_to_string(path).unwrap_or_default();
        if !file_table.contains(hullsweep_lab::live::BEGIN)
            && let Some(live) = hullsweep_lab::live::section(&old)
        {
            file_table = hullsweep_lab::live::splice(&file_table, &format!("{live}\n"));
        }
        if let Some(scale) = hullsweep_lab::scale::section(&old) {
            file_table = hullsweep_lab::scale::splice(&file_table, &format!("{scale}\n"));
        }
        std::fs::write(path, &file_table)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !report.all_pass() {
        bail!("an implementation failed the equivalence gate (see the table)");
    }
    Ok(())
}

/// Measures and renders the live section, with a spinner; fails if a live result was not the
/// batch sweep's.
fn live_section(worker: &mut Worker, rounds: usize) -> anyhow::Result<String> {
    let cfg = hullsweep_lab::live::Config {
        rounds,
        ..Default::default()
    };
    let bar = ProgressBar::new_spinner();
    let plain = bar.is_hidden();
    let report = hullsweep_lab::live::run(&cfg, worker, |m| {
        if plain {
            eprintln!("lab: {m}");
        }
        bar.set_message(m.to_string());
        bar.tick();
    })?;
    bar.finish_and_clear();
    if !report.all_exact() {
        bail!(
            "a live run's result differs from the batch sweep:\n{}",
            report.to_markdown()
        );
    }
    Ok(report.to_markdown())
}
