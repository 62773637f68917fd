//! What the fold sweep costs beside the plain sweep, measured side by side: the default series
//! and grid (150,000 bars x 80 combos) or a given size, `fastest`, A B A B ... and the medians.
//!
//! `cargo run --release -p hullsweep-validate --example fold_cost -- [ROUNDS] [BARS] [COMBOS]
//! [THREADS]`; docs/research.md quotes a run. The CPU is named from /proc/cpuinfo.

use hullsweep_kernel::{DEFAULT_FEE_PCT, GridSpec, ValidClose, gbm, grid};
use hullsweep_research::Metric;
use hullsweep_validate::{FoldSpec, Plan, fold_sweep, validate};
use hullsweep_variants::{Threads, Variant};
use std::time::Instant;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

const USAGE: &str = "usage: fold_cost [ROUNDS (9)] [BARS (150000)] [COMBOS (80)] [THREADS (2)]";

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let arg = |i: usize, name: &str, default: usize| match std::env::args().nth(i) {
        None => Ok(default),
        Some(s) => match s.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{name} must be a whole number above 0, got {s:?}\n{USAGE}"
            )),
        },
    };
    let (rounds, bars, combos, threads) = (
        arg(1, "ROUNDS", 9)?,
        arg(2, "BARS", 150_000)?,
        arg(3, "COMBOS", 80)?,
        arg(4, "THREADS", 2)?,
    );
    let close = gbm(bars, 42, 0.01).expect("a valid series");
    let params = grid(GridSpec {
        lo: 6,
        hi: 6 + 3 * combos as i64,
        k: combos,
    })
    .expect("a valid grid");
    let valid = ValidClose::new(&close).expect("valid");
    let (v, t, fee) = (Variant::fastest(), Threads::Fixed(threads), DEFAULT_FEE_PCT);
    let spec = FoldSpec {
        folds: Some(16),
        walk: None,
    };
    let plan = Plan {
        folds: 16,
        metric: Metric::Sharpe,
        walk: None,
        oos_returns: false,
    };
    let (mut plain, mut folds, mut full) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let s = Instant::now();
        std::hint::black_box(v.sweep(&close, &params, fee, t).expect("sweep"));
        plain.push(s.elapsed().as_secs_f64());
        let s = Instant::now();
        std::hint::black_box(fold_sweep(v, valid, &params, fee, t, spec, None).expect("folds"));
        folds.push(s.elapsed().as_secs_f64());
        let s = Instant::now();
        std::hint::black_box(validate(v, valid, &params, fee, t, plan, None).expect("validate"));
        full.push(s.elapsed().as_secs_f64());
    }
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let (p, f, a) = (median(plain), median(folds), median(full));
    println!(
        "{cpu}; {bars} bars x {combos} combos, {} on {threads} threads, {rounds} rounds interleaved",
        v.name()
    );
    println!("plain sweep      median {:9.3} ms", p * 1e3);
    println!(
        "fold sweep (16)  median {:9.3} ms  {:.2}x plain",
        f * 1e3,
        f / p
    );
    println!(
        "validate (16)    median {:9.3} ms  {:.2}x plain",
        a * 1e3,
        a / p
    );
    Ok(())
}
